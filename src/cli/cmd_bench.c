/* cli/cmd_bench.c: `gpuprof bench` (built-in device benchmarks, stored in
 * the run store) and `gpuprof health --bench` (the quick set judged against
 * peaks and the recorded baseline). Options in, bench/ and render/ calls out. */
#include "bench/bench.h"
#include "cli/cli.h"
#include "core/sbuf.h"
#include "report/bench_out.h"
#include "core/redact.h"
#include "store/store.h"
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void list_tests(FILE *f)
{
    fprintf(f, "tests (--only NAME,...; --quick runs those marked q); figure key and unit:\n");
    for (int t = 0; t < GP_BT__COUNT; t++) {
        const gp_bench_info *in = gp_bench_info_of((gp_bench_test)t);
        fprintf(f, "  %-15s %s %-18s [%s, %s is better]\n      %s\n", in->name,
                in->quick ? "q" : " ", in->key, in->unit, in->higher_better ? "higher" : "lower",
                in->method);
    }
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: gpuprof bench [options]\n"
            "  built-in device benchmarks on every usable device (OpenCL; CUDA through the\n"
            "  driver API), each figure repeated until the 95%% confidence interval of its mean\n"
            "  is within --target-ci or the time cap; the run is kept in the store like any run\n"
            "  (gpuprof history --op bench:KEY, gpuprof compare STORE:A STORE:B)\n"
            "  --device SEL        all (default), opencl, cuda, or one device: cl0, cuda1, ...\n"
            "  --only LIST         comma list of tests (names or figure keys, see below)\n"
            "  --quick             the quick set, a shorter sweep (4 KiB x 16^k) and a 0.5 s cap\n"
            "  --json              machine-readable output (figure keys carry their units)\n"
            "  -o, --output FILE   store (default gpuprof.db; runs are appended)\n"
            "  --no-store          do not store the run\n"
            "  --target-ci PCT     half-width of the 95%% CI as %% of the mean (default 2)\n"
            "  --time-cap S        seconds per figure (sweep: per size; default 2, quick 0.5)\n"
            "  --max-size BYTES    largest size of the host<->device sweep (default 268435456)\n"
            "  --chains N          compute tests: independent FMA chains per work-item, 16, 32,\n"
            "                      64, 128 or 256 (default: OpenCL measures each and keeps the\n"
            "                      fastest; CUDA kernels have 32)\n"
            "Units: GB/s = 1e9 bytes/s; GFLOP/s, GIOP/s = 1e9 operations/s (an FMA or a\n"
            "multiply-add counts 2); us = microseconds. Device times come from device events\n"
            "(OpenCL profiling, CUDA events); latencies from the host clock. %% of peak: only\n"
            "where the peak is knowable (CUDA device attributes), else \"peak unknown\".\n"
            "Sweep tests report the largest size; the size where half of the best bandwidth\n"
            "is reached is printed with the sweep.\n"
            "exit status: 0 ok (a test that fails is reported in its row), 2 bad input,\n"
            "  1 no usable device or a test failed, 3 out of memory\n\n");
    list_tests(f);
}

static void on_progress(const char *what, void *arg)
{
    (void)arg;
    fprintf(stderr, "gpuprof bench: %s\n", what);
}

/* Parses --only into a test bit set; -1 on an unknown name. */
static int parse_only(const char *list, unsigned long long *mask)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s", list);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        int t = gp_bench_test_parse(tok);
        if (t < 0) {
            fprintf(stderr, "gpuprof: --only: unknown test '%s' (see gpuprof bench --help)\n", tok);
            return -1;
        }
        *mask |= 1ull << t;
    }
    return 0;
}

typedef struct bopts {
    const char *device, *store;
    int json, no_store, verbose;
    gp_bench_opts bo;
    /* health --bench */
    gp_bench_health_opts ho;
    int exit_code;
} bopts;

enum {
    O_DEVICE = 256,
    O_ONLY,
    O_QUICK,
    O_JSON,
    O_NOSTORE,
    O_CI,
    O_CAP,
    O_MAXSZ,
    O_MINPEAK,
    O_MINBASE,
    O_BRUNS,
    O_STORE,
    O_EXITCODE,
    O_BENCH,
    O_SAVE,
    O_CHAINS
};

/* Shared option parser of both commands; health adds its own. Returns 0,
 * 1 (help printed) or 2 (bad input, message printed). */
static int parse(int argc, char **argv, bopts *o, int health, void (*use)(FILE *))
{
    static const struct option lo[] = {{"device", required_argument, 0, O_DEVICE},
                                       {"only", required_argument, 0, O_ONLY},
                                       {"quick", no_argument, 0, O_QUICK},
                                       {"json", no_argument, 0, O_JSON},
                                       {"output", required_argument, 0, 'o'},
                                       {"no-store", no_argument, 0, O_NOSTORE},
                                       {"target-ci", required_argument, 0, O_CI},
                                       {"time-cap", required_argument, 0, O_CAP},
                                       {"max-size", required_argument, 0, O_MAXSZ},
                                       {"chains", required_argument, 0, O_CHAINS},
                                       {"min-peak", required_argument, 0, O_MINPEAK},
                                       {"min-baseline", required_argument, 0, O_MINBASE},
                                       {"baseline-runs", required_argument, 0, O_BRUNS},
                                       {"store", required_argument, 0, O_STORE},
                                       {"exit-code", no_argument, 0, O_EXITCODE},
                                       {"bench", no_argument, 0, O_BENCH},
                                       {"save", no_argument, 0, O_SAVE},
                                       {"verbose", no_argument, 0, 'v'},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
    int cap_set = 0, c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "o:vh", lo, NULL)) != -1) {
        int for_bench = c == O_ONLY || c == O_NOSTORE || c == O_CHAINS || c == 'o';
        int for_health = c == O_MINPEAK || c == O_MINBASE || c == O_BRUNS || c == O_STORE ||
                         c == O_EXITCODE || c == O_BENCH || c == O_SAVE;
        if ((health && for_bench) || (!health && for_health) || c == '?') {
            fprintf(stderr, "gpuprof: unknown option '%s'\n", argv[optind - 1]);
            use(stderr);
            return 2;
        }
        double v;
        switch (c) {
        case O_DEVICE:
            o->device = optarg;
            break;
        case O_ONLY:
            if (parse_only(optarg, &o->bo.only)) return 2;
            break;
        case O_QUICK:
            o->bo.quick = 1;
            break;
        case O_JSON:
            o->json = 1;
            break;
        case 'o':
            o->store = optarg;
            break;
        case O_STORE:
            o->ho.store = optarg;
            break;
        case O_NOSTORE:
            o->no_store = 1;
            break;
        case O_SAVE:
            o->no_store = 0;
            break;
        case O_CI:
            if (gp_cli_parse_double("--target-ci", optarg, 0.01, 100, &o->bo.target_ci_pct))
                return 2;
            break;
        case O_CAP:
            if (gp_cli_parse_double("--time-cap", optarg, 0.001, 3600, &o->bo.cap_s)) return 2;
            cap_set = 1;
            break;
        case O_MAXSZ:
            if (gp_cli_parse_double("--max-size", optarg, 4096, 1ull << 34, &v)) return 2;
            o->bo.sweep_max = (int64_t)v;
            break;
        case O_CHAINS: {
            long n = gp_cli_parse_count("--chains", optarg);
            if (n < 0) return 2;
            if (!gp_bench_chains_valid((int)(n > 4096 ? 0 : n))) {
                fprintf(stderr, "gpuprof: --chains must be 16, 32, 64, 128 or 256 (got %s)\n",
                        optarg);
                return 2;
            }
            o->bo.chains = (int)n;
            break;
        }
        case O_MINPEAK:
            if (gp_cli_parse_double("--min-peak", optarg, 0, 1, &o->ho.min_peak_share)) return 2;
            break;
        case O_MINBASE:
            if (gp_cli_parse_double("--min-baseline", optarg, 0.01, 1, &o->ho.min_baseline_share))
                return 2;
            break;
        case O_BRUNS: {
            long n = gp_cli_parse_count("--baseline-runs", optarg);
            if (n < 0) return 2;
            o->ho.baseline_runs = (size_t)n;
            break;
        }
        case O_EXITCODE:
            o->exit_code = 1;
            break;
        case O_BENCH:
            break;
        case 'v':
            o->verbose = 1;
            break;
        case 'h':
            use(stdout);
            return 1;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "gpuprof: unexpected argument '%s'\n", argv[optind]);
        use(stderr);
        return 2;
    }
    if (o->bo.quick && !cap_set) o->bo.cap_s = 0.5;
    if (o->verbose) o->bo.progress = on_progress;
    return 0;
}

/* Runs the benchmarks; 0, or 3 on out of memory (message printed). */
static int run_bench(const bopts *o, gp_bench_result *res)
{
    gp_bench_dev devs[16];
    char why[256] = "";
    size_t n = gp_bench_open_devices(o->device, devs, 16, why, sizeof why);
    if (gp_bench_run(devs, n, &o->bo, res)) {
        fprintf(stderr, "gpuprof: out of memory\n");
        gp_bench_result_free(res);
        return 3;
    }
    if (!n) snprintf(res->none_why, sizeof res->none_why, "%s", why);
    return 0;
}

/* Tests that failed (not counting those the device cannot run); *first
 * is the first of them. */
static int any_failed(const gp_bench_result *r, const gp_bench_fig **first, size_t *first_dev)
{
    int n = 0;
    for (size_t d = 0; d < r->ndev; d++)
        for (int t = 0; t < GP_BT__COUNT; t++)
            if (r->devs[d].figs[t].selected && !r->devs[d].figs[t].valid &&
                strncmp(r->devs[d].figs[t].why, "unsupported", 11)) {
                if (!n++) *first = &r->devs[d].figs[t], *first_dev = d;
            }
    return n;
}

/* Stores the run; prints the error and returns 2 on failure. */
static int save(const bopts *o, const gp_bench_result *res, int argc, char **argv)
{
    char **av = calloc((size_t)argc + 2, sizeof *av);
    if (!av) return 3;
    av[0] = "gpuprof";
    for (int i = 0; i < argc; i++) av[i + 1] = argv[i];
    char *cmd = gp_redact_argv(av, argc + 1);
    free(av);
    if (o->no_store || !res->ndev) { /* audited all the same (the audit file) */
        char result[600];
        if (!res->ndev)
            snprintf(result, sizeof result, "no usable device: %.500s", res->none_why);
        else
            snprintf(result, sizeof result, "%zu device(s), not stored", res->ndev);
        gp_cli_audit(NULL, "bench", cmd, result);
        free(cmd);
        return 0;
    }
    gp_err err = {0};
    int64_t run = gp_bench_store_save(o->store, res, cmd, &err);
    char result[600];
    if (run < 0)
        snprintf(result, sizeof result, "%s", err.msg);
    else
        snprintf(result, sizeof result, "%zu device(s), run %lld", res->ndev, (long long)run);
    gp_cli_audit(run < 0 ? NULL : o->store, "bench", cmd, result);
    free(cmd);
    if (run < 0) {
        fprintf(stderr, "gpuprof: %s\n", err.msg);
        return 2;
    }
    if (!o->json) printf("\nstored as run %lld of %s\n", (long long)run, o->store);
    return 0;
}

int gp_cmd_bench(int argc, char **argv)
{
    bopts o = {0};
    o.device = "all";
    o.store = "gpuprof.db";
    gp_bench_opts_default(&o.bo);
    int rc = parse(argc, argv, &o, 0, usage);
    if (rc) return rc == 1 ? 0 : rc;
    gp_bench_result res;
    if ((rc = run_bench(&o, &res))) return rc;
    if (o.json) {
        gp_sbuf b = {0};
        gp_bench_write_json(&b, &res);
        gp_sbuf_write(&b, stdout);
        gp_sbuf_free(&b);
    } else {
        gp_bench_write_text(stdout, &res);
    }
    fflush(stdout);
    rc = save(&o, &res, argc, argv);
    const gp_bench_fig *ff = NULL;
    size_t fd = 0;
    int nfail = any_failed(&res, &ff, &fd);
    if (!rc && (!res.ndev || nfail)) rc = 1;
    if (!res.ndev) fprintf(stderr, "gpuprof: %s\n", res.none_why);
    if (nfail)
        fprintf(stderr, "gpuprof: bench: %d test(s) failed (first: %s on %s: %s)\n", nfail,
                gp_bench_info_of(ff->test)->key, res.devs[fd].sel, ff->why);
    gp_bench_result_free(&res);
    return rc;
}

static void health_usage(FILE *f)
{
    fprintf(f,
            "usage: gpuprof health --bench [options]\n"
            "  runs the quick benchmark set (see gpuprof bench --help) and flags a figure below\n"
            "  a share of its device's peak (where known) or of its own recorded baseline (the\n"
            "  mean of its latest runs in the store; latencies: above baseline / share)\n"
            "  --device SEL          all (default), opencl, cuda, cl0, cuda1, ...\n"
            "  --store FILE          baseline store (default gpuprof.db when it exists)\n"
            "  --min-peak SHARE      flag below this share of the peak (default 0.6)\n"
            "  --min-baseline SHARE  flag below this share of the baseline (default 0.8)\n"
            "  --baseline-runs N     latest runs in the baseline (default 5, 0 = all)\n"
            "  --max-size BYTES      largest size of the host<->device sweep (default\n"
            "                        268435456; the baseline is the same size's)\n"
            "  --save                also store this run in the store (becomes baseline)\n"
            "  --time-cap S          seconds per figure (default 0.5)\n"
            "  --json                machine-readable output\n"
            "  --exit-code           exit 1 when a figure is flagged or failed\n");
}

int gp_cmd_bench_health(int argc, char **argv)
{
    bopts o = {0};
    o.device = "all";
    o.no_store = 1;
    gp_bench_opts_default(&o.bo);
    o.bo.quick = 1;
    gp_bench_health_opts_default(&o.ho);
    int rc = parse(argc, argv, &o, 1, health_usage);
    if (rc) return rc == 1 ? 0 : rc;
    o.bo.quick = 1;
    if (!o.ho.store && access("gpuprof.db", R_OK) == 0) o.ho.store = "gpuprof.db";
    o.store = o.ho.store ? o.ho.store : "gpuprof.db";
    gp_bench_result res;
    if ((rc = run_bench(&o, &res))) return rc;
    gp_bench_health h;
    gp_err err = {0};
    if (gp_bench_health_check(&res, &o.ho, &h, &err)) {
        fprintf(stderr, "gpuprof: %s\n", err.msg);
        gp_bench_result_free(&res);
        return 2;
    }
    if (o.json) {
        gp_sbuf b = {0};
        gp_bench_write_health_json(&b, &res, &h);
        gp_sbuf_write(&b, stdout);
        gp_sbuf_free(&b);
    } else {
        gp_bench_write_health_text(stdout, &res, &h);
    }
    fflush(stdout);
    rc = save(&o, &res, argc, argv);
    if (!rc && o.exit_code && (h.flagged || !res.ndev)) rc = 1;
    gp_bench_health_free(&h);
    gp_bench_result_free(&res);
    return rc;
}
