/* cli/cmd_analyze.c: `gpuprof analyze PATH...`: the Holistic Trace Analysis
 * family (temporal / kernel / idle breakdowns, overlap, launch statistics,
 * queue length, memory bandwidth, CPU/GPU timeline, steps, stragglers) per
 * rank, as a text report or JSON; --compat hta gives HTA 0.6.1's numbers. */
#include "cli/cli.h"
#include "core/afile.h"
#include "core/clock.h"
#include "core/error.h"
#include "report/analyze.h"
#include "report/analyze_part.h"
#include "trace/load.h"
#include <errno.h>
#include <getopt.h>
#include <math.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void usage(FILE *f)
{
    fprintf(f, "usage: gpuprof analyze [options] PATH...\n"
               "  PATH: trace file (.json/.json.gz) or folder of rank files\n"
               "  --compat hta            reproduce HTA 0.6.1's preprocessing and numbers\n"
               "  --json                  machine-readable output (keys of expected.hta.json)\n"
               "  --top N                 kernels per type before folding into 'others' (10)\n"
               "  --duration-ratio R      cumulative share kept before folding (0.8)\n"
               "  --kernel-wait-us US     gap below which idle time is kernel_wait (30)\n"
               "  --runtime-cutoff-us US  launch call duration outlier threshold (50)\n"
               "  --delay-cutoff-us US    launch delay outlier threshold (100)\n"
               "  --queue-full N          queue length counted as full (1024)\n"
               "  --straggler-z Z         robust z-score above which a rank is an outlier (3.5)\n"
               "  --wide                  do not shorten kernel names in tables\n"
               "  --workers N             ranks analyzed at once (0: one per core)\n"
               "  --shard I/N             analyze share I (0 .. N-1) of the files and write a\n"
               "                          part for `gpuprof merge` (JSON, docs/analyze.md)\n"
               "  -o, --output FILE       write the part (or report) to FILE, not stdout\n");
}

static int parse_us(const char *opt, const char *val, int64_t *ns)
{
    char *end;
    double v = strtod(val, &end);
    if (*end || !(v >= 0) || v > 9e12) {
        fprintf(stderr, "gpuprof: %s expects a non-negative number of microseconds, got '%s'\n",
                opt, val);
        return -1;
    }
    *ns = (int64_t)llround(v * 1000.0);
    return 0;
}

/* Output to path (replaced whole or not at all: core/afile.h; a device or
 * a FIFO such as /dev/null is written in place), or stdout for NULL. NULL
 * when the file cannot be created (out_close reports it). */
static FILE *out_open(const char *path, gp_afile *af)
{
    if (!path) return stdout;
    return gp_afile_open(af, path) ? NULL : af->f;
}

/* Closes what out_open gave (bad: a write failed) and puts the file in
 * place. Returns 0 or 1, with the message printed for a file; a failed
 * stdout is reported once, by main (close_stdout). */
static int out_close(FILE *f, const char *path, gp_afile *af, int bad)
{
    if (!f) bad = 1;
    if (!path) {
        if (f && fflush(f) != 0) bad = 1;
        return bad;
    }
    if (f && gp_afile_close(af, bad) != 0) bad = 1;
    if (bad) fprintf(stderr, "gpuprof: %s: cannot write: %s\n", path, strerror(errno));
    return bad;
}

/* Writes b to path as out_open/out_close do. */
static int write_out(const gp_sbuf *b, const char *path)
{
    gp_afile af;
    FILE *f = out_open(path, &af);
    return out_close(f, path, &af, f && gp_sbuf_write(b, f));
}

/* A rank number given to several files is said on stderr (each file stays
 * a rank of its own in the report); path(i) names input file i. */
static void note_dup_ranks(const gp_analyze_result *r, const char *a, const char *b)
{
    if (!r->ndup) return;
    fprintf(stderr,
            "gpuprof: note: rank %d is given to more than one file (%s, %s)%s; each file is "
            "reported as a rank of its own\n",
            r->dup_rank, a, b, r->ndup > 1 ? " and other ranks too" : "");
}

/* The result's text report or JSON document to out (NULL: stdout). */
static int write_result(const gp_analyze_result *res, const gp_analyze_opts *o, int json,
                        const char *out)
{
    gp_afile af;
    FILE *f = out_open(out, &af);
    int bad = 0;
    if (f && json) { /* written in 1 MiB pieces: hundreds of ranks' JSON is never whole in memory */
        gp_sbuf b = {0};
        gp_sbuf_spill_to(&b, f);
        gp_report_analyze_json(&b, res, o);
        bad = gp_sbuf_spill_end(&b) != 0;
        gp_sbuf_free(&b);
    } else if (f) {
        gp_report_analyze_text(f, res, o);
        bad = ferror(f) != 0;
    }
    return out_close(f, out, &af, bad); /* stdout: reported by main */
}

/* a file named on the command line must be a trace holding events */
static int accept_named(const gp_trace *t, const char *path, size_t i, void *ctx, int *is_trace,
                        gp_err *err)
{
    const unsigned char *named = ctx;
    if (!named[i]) return 0;
    *is_trace = 1;
    return gp_cli_events_error(t, path, err);
}

static int parse_shard(const char *v, size_t *shard, size_t *nshards)
{
    char *end;
    errno = 0;
    /* digits only on both sides: strtoull alone would take " 1/3" and "+1/3" */
    int ok = v[0] >= '0' && v[0] <= '9';
    unsigned long long i = ok ? strtoull(v, &end, 10) : 0, n = 0;
    ok = ok && !errno && *end == '/';
    if (ok) {
        const char *d = end + 1;
        ok = *d >= '0' && *d <= '9';
        n = ok ? strtoull(d, &end, 10) : 0;
        ok = ok && !errno && !*end && n >= 1 && n <= 1000000 && i < n;
    }
    if (!ok) {
        fprintf(stderr, "gpuprof: --shard expects I/N with 0 <= I < N (e.g. 0/8), got '%s'\n", v);
        return -1;
    }
    *shard = (size_t)i;
    *nshards = (size_t)n;
    return 0;
}

static void print_times(const gp_analyze_file *files, size_t n, int64_t out_ns, int64_t out_cpu)
{
    static const char *const ph[4] = {"load", "views", "analyses", "timeline"};
    int64_t c[4] = {0, 0, 0, 0};
    for (size_t i = 0; i < n; i++)
        for (int k = 0; k < 4; k++) c[k] += files[i].cpu_ns[k];
    fprintf(stderr, "analyze times, CPU summed over %zu file(s) (ms):", n);
    for (int k = 0; k < 4; k++) fprintf(stderr, " %s %.1f,", ph[k], (double)c[k] / 1e6);
    fprintf(stderr, " output wall / CPU %.1f / %.1f\n", (double)out_ns / 1e6,
            (double)out_cpu / 1e6);
}

int gp_cmd_analyze(int argc, char **argv)
{
    gp_analyze_opts o;
    gp_analyze_opts_default(&o);
    int json = 0, workers = 0, sharded = 0;
    size_t shard = 0, nshards = 1;
    const char *out = NULL;
    static const struct option lopts[] = {{"compat", required_argument, 0, 'c'},
                                          {"json", no_argument, 0, 'j'},
                                          {"top", required_argument, 0, 't'},
                                          {"duration-ratio", required_argument, 0, 'r'},
                                          {"kernel-wait-us", required_argument, 0, 'k'},
                                          {"runtime-cutoff-us", required_argument, 0, 'R'},
                                          {"delay-cutoff-us", required_argument, 0, 'D'},
                                          {"queue-full", required_argument, 0, 'q'},
                                          {"straggler-z", required_argument, 0, 'z'},
                                          {"wide", no_argument, 0, 'w'},
                                          {"workers", required_argument, 0, 'W'},
                                          {"shard", required_argument, 0, 'S'},
                                          {"output", required_argument, 0, 'o'},
                                          {"help", no_argument, 0, 'h'},
                                          {0, 0, 0, 0}};
    int ch;
    optind = 1;
    while ((ch = getopt_long(argc, argv, "ho:", lopts, NULL)) != -1) {
        long lv;
        char *end;
        switch (ch) {
        case 'c':
            if (strcmp(optarg, "hta")) {
                fprintf(stderr, "gpuprof: --compat: only 'hta' is known, got '%s'\n", optarg);
                return 2;
            }
            o.compat = 1;
            break;
        case 'j':
            json = 1;
            break;
        case 'w':
            o.wide = 1;
            break;
        case 'o':
            out = optarg;
            break;
        case 'S':
            if (parse_shard(optarg, &shard, &nshards)) return 2;
            sharded = 1;
            break;
        case 'W':
            if ((lv = gp_cli_parse_count("--workers", optarg)) < 0) return 2;
            if (lv > 4096) {
                fprintf(stderr, "gpuprof: --workers expects at most 4096, got '%s'\n", optarg);
                return 2;
            }
            workers = (int)lv;
            break;
        case 't':
            if ((lv = gp_cli_parse_count("--top", optarg)) < 0) return 2;
            if (lv > 2147483647L) {
                fprintf(stderr, "gpuprof: --top expects at most 2147483647, got '%s'\n", optarg);
                return 2;
            }
            o.top = lv;
            break;
        case 'q':
            if ((lv = gp_cli_parse_count("--queue-full", optarg)) < 0) return 2;
            o.queue_full = lv;
            break;
        case 'r':
            o.ratio = strtod(optarg, &end);
            if (*end || !(o.ratio >= 0 && o.ratio <= 1)) {
                fprintf(stderr, "gpuprof: --duration-ratio expects a number in [0, 1], got '%s'\n",
                        optarg);
                return 2;
            }
            break;
        case 'z':
            o.straggler_z = strtod(optarg, &end);
            if (*end || !(o.straggler_z > 0 && o.straggler_z < 1e9)) {
                fprintf(stderr, "gpuprof: --straggler-z expects a positive number, got '%s'\n",
                        optarg);
                return 2;
            }
            break;
        case 'k':
            if (parse_us("--kernel-wait-us", optarg, &o.kernel_wait_ns)) return 2;
            break;
        case 'R':
            if (parse_us("--runtime-cutoff-us", optarg, &o.lo.runtime_cutoff_ns)) return 2;
            break;
        case 'D':
            if (parse_us("--delay-cutoff-us", optarg, &o.lo.launch_delay_cutoff_ns)) return 2;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (optind >= argc) {
        usage(stderr);
        return 2;
    }
    char **paths = argv + optind;
    int npaths = argc - optind;
    gp_err err = {0};
    size_t n = 0;
    char **files = gp_paths_expand(paths, npaths, &n, &err);
    if (!files) {
        fprintf(stderr, "gpuprof: %s\n", err.msg);
        return 2;
    }
    /* which files were named on the command line (the rest came from folders) */
    unsigned char *named = gp_xcalloc(n + 1, 1);
    for (size_t i = 0; i < n; i++)
        for (int j = 0; j < npaths; j++)
            if (!strcmp(files[i], paths[j])) named[i] = 1;
    size_t first = 0, end = n;
    if (sharded) gp_analyze_shard_range(n, shard, nshards, &first, &end);
#ifdef __GLIBC__
    /* One malloc arena for every thread (the import's parts, the rank
     * workers, the analysis groups, the timeline statistics): with one arena
     * per thread (glibc's default) the blocks one thread frees are reused by
     * that thread only, so the peak is the sum of each arena's high-water
     * mark rather than what is live at once (issue 19: analyze peak RSS).
     * Must precede the first thread. */
    mallopt(M_ARENA_MAX, 1);
#endif
    gp_analyze_file *fr = gp_xcalloc(end - first + 1, sizeof *fr);
    int rc = gp_analyze_files(files, n, first, end, workers, &o, accept_named, named, fr, &err);
    free(named);
    if (rc) {
        fprintf(stderr, "gpuprof: %s\n", err.msg);
        rc = rc == GP_ENOMEM ? 3 : 2;
    } else if (sharded) {
        gp_analyze_part part = {.o = o,
                                .shard = shard,
                                .nshards = nshards,
                                .ninputs = n,
                                .inputs = files,
                                .first = first,
                                .end = end,
                                .files = fr};
        gp_analyze_part_inputs(&part);
        gp_sbuf b = {0};
        gp_analyze_part_write(&b, &part);
        rc = write_out(&b, out);
        gp_sbuf_free(&b);
        gp_analyze_part_inputs_free(&part);
    } else {
        int64_t t2 = gp_clock_mono_ns(), c2 = gp_clock_thread_cpu_ns();
        gp_analyze_result res;
        int e = gp_analyze_assemble(fr, n, &o, &res, &err);
        if (e == GP_ENOTFOUND) {
            fprintf(stderr, "gpuprof: %s: %s\n", paths[0], err.msg);
            rc = 2;
        } else if (e) {
            fprintf(stderr, "gpuprof: %s\n", err.msg);
            rc = 3;
        } else {
            note_dup_ranks(&res, files[res.dup_file[0]], files[res.dup_file[1]]);
            rc = write_result(&res, &o, json, out);
            gp_analyze_free(&res);
        }
        if (getenv("GPUPROF_ANALYZE_TIMES")) /* for bench/: where the time goes */
            print_times(fr, n, gp_clock_mono_ns() - t2, gp_clock_thread_cpu_ns() - c2);
    }
    for (size_t i = 0; i < end - first; i++) gp_analyze_file_free(&fr[i]);
    free(fr);
    gp_paths_free(files);
    return rc;
}

static void merge_usage(FILE *f)
{
    fprintf(f, "usage: gpuprof merge [--json] [--wide] [-o FILE] PART...\n"
               "  combines the parts written by `gpuprof analyze --shard I/N` (one per shard)\n"
               "  into the report one `gpuprof analyze` of all the files would print\n"
               "  --json                  machine-readable output (as analyze --json)\n"
               "  --wide                  do not shorten kernel names in tables\n"
               "  -o, --output FILE       write to FILE, not stdout\n");
}

int gp_cmd_merge(int argc, char **argv)
{
    int json = 0, wide = 0;
    const char *out = NULL;
    static const struct option lopts[] = {{"json", no_argument, 0, 'j'},
                                          {"wide", no_argument, 0, 'w'},
                                          {"output", required_argument, 0, 'o'},
                                          {"help", no_argument, 0, 'h'},
                                          {0, 0, 0, 0}};
    int ch;
    optind = 1;
    while ((ch = getopt_long(argc, argv, "ho:", lopts, NULL)) != -1) {
        switch (ch) {
        case 'j':
            json = 1;
            break;
        case 'w':
            wide = 1;
            break;
        case 'o':
            out = optarg;
            break;
        case 'h':
            merge_usage(stdout);
            return 0;
        default:
            merge_usage(stderr);
            return 2;
        }
    }
    if (optind >= argc) {
        merge_usage(stderr);
        return 2;
    }
    size_t np = (size_t)(argc - optind);
    const char *const *names = (const char *const *)(argv + optind);
    gp_analyze_part *parts = gp_xcalloc(np, sizeof *parts);
    gp_err err = {0};
    int rc = 0;
    size_t nread = 0;
    for (; nread < np && !rc; nread++)
        if ((rc = gp_analyze_part_read(names[nread], &parts[nread], &err))) break;
    gp_analyze_opts o;
    gp_analyze_file *files = NULL;
    size_t n = 0;
    if (!rc) rc = gp_analyze_parts_join(parts, names, np, &o, &files, &n, &err);
    if (rc) {
        fprintf(stderr, "gpuprof: %s\n", err.msg);
        rc = rc == GP_ENOMEM ? 3 : 2;
    } else {
        o.wide = wide;
        gp_analyze_result res;
        int e = gp_analyze_assemble(files, n, &o, &res, &err);
        if (e) {
            fprintf(stderr, "gpuprof: %s\n", err.msg);
            rc = e == GP_ENOMEM ? 3 : 2;
        } else {
            note_dup_ranks(&res, parts[0].inputs[res.dup_file[0]],
                           parts[0].inputs[res.dup_file[1]]);
            rc = write_result(&res, &o, json, out);
            gp_analyze_free(&res);
        }
    }
    for (size_t i = 0; i < n; i++) gp_analyze_file_free(&files[i]);
    free(files);
    for (size_t i = 0; i < np; i++) gp_analyze_part_free(&parts[i]);
    free(parts);
    return rc;
}
