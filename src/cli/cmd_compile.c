/* cli/cmd_compile.c: `gpuprof compile LOG|DIR|TRACE... [--eager TRACE]`:
 * torch.compile analysis of TORCH_TRACE logs and of a Kineto trace of the
 * compiled model. Parses options, reads, calls the analyses and the writers
 * of report/compile.h and render/compile_page.h. */
#include "analysis/advise.h"
#include "analysis/compile.h"
#include "cli/cli.h"
#include "core/error.h"
#include "core/sbuf.h"
#include "render/html.h"
#include "render/compile_page.h"
#include "report/compile.h"
#include "trace/load.h"
#include "trace/torch_trace.h"
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static void usage(FILE *f)
{
    fprintf(f, "usage: gpuprof compile [options] INPUT...\n"
               "  INPUT: a TORCH_TRACE log (.log, .log.gz), a TORCH_TRACE folder (its *.log\n"
               "         files, one per rank), or a Kineto trace (.json, .json.gz) of the\n"
               "         compiled model\n"
               "  --eager TRACE      Kineto trace of the same model run eagerly: speedup per step\n"
               "                     and per op group\n"
               "  --json             machine-readable output\n"
               "  -o FILE.html       self-contained HTML page (compile timeline per rank, tables)\n"
               "  --timeline FILE    Perfetto JSON of the compile phases\n"
               "  --no-payloads      skip the payloads the kernel table needs (faster)\n");
}

static int is_trace_path(const char *p)
{
    return gp_path_has_suffix(p, ".json") || gp_path_has_suffix(p, ".json.gz");
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Appends the TORCH_TRACE logs of folder dir (*.log, *.log.gz, name order).
 * Returns 0, or 2 with the error printed. */
static int add_dir(const char *dir, char ***files, size_t *n)
{
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "gpuprof: %s: %s\n", dir, strerror(errno));
        return 2;
    }
    size_t first = *n;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        if (!gp_path_has_suffix(e->d_name, ".log") && !gp_path_has_suffix(e->d_name, ".log.gz"))
            continue;
        size_t len = strlen(dir) + strlen(e->d_name) + 2;
        char *p = gp_xmalloc(len);
        snprintf(p, len, "%s/%s", dir, e->d_name);
        struct stat st;
        if (stat(p, &st) || !S_ISREG(st.st_mode)) {
            free(p);
            continue;
        }
        *files = gp_xrealloc(*files, (*n + 1) * sizeof **files);
        (*files)[(*n)++] = p;
    }
    closedir(d);
    if (*n == first) {
        fprintf(stderr, "gpuprof: %s: no TORCH_TRACE logs (*.log, *.log.gz) in this folder\n", dir);
        return 2;
    }
    qsort(*files + first, *n - first, sizeof **files, cmp_str);
    return 0;
}

static int load_trace(const char *path, gp_trace **out)
{
    gp_err err = {0};
    char *p = (char *)path;
    int rc = gp_load_many(&p, 1, 1, out, &err);
    if (rc) {
        fprintf(stderr, "gpuprof: %s\n", err.msg);
        return 2;
    }
    if (gp_cli_check_events(*out, path)) { /* a named file without events is an error */
        gp_trace_destroy(*out);
        *out = NULL;
        return 2;
    }
    return 0;
}

int gp_cmd_compile(int argc, char **argv)
{
    static const struct option opts[] = {{"eager", required_argument, 0, 'e'},
                                         {"json", no_argument, 0, 'j'},
                                         {"output", required_argument, 0, 'o'},
                                         {"timeline", required_argument, 0, 't'},
                                         {"no-payloads", no_argument, 0, 'P'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    const char *eager = NULL, *html = NULL, *timeline = NULL;
    int json = 0, payloads = 1, c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
        switch (c) {
        case 'e':
            eager = optarg;
            break;
        case 'j':
            json = 1;
            break;
        case 'o':
            html = optarg;
            break;
        case 't':
            timeline = optarg;
            break;
        case 'P':
            payloads = 0;
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
    int rc = 2;
    char **files = NULL;
    size_t nfiles = 0;
    const char *trace_path = NULL;
    gp_tlog **logs = NULL;
    size_t nlogs = 0;
    gp_trace *trace = NULL, *etrace = NULL;
    gp_compiled_trace ct = {0};
    gp_compile_speedup sp = {0};
    gp_advice_list adv = {0};
    gp_rank_divergence div = {0};
    int have_ct = 0, have_sp = 0, have_adv = 0, have_div = 0;
    gp_sbuf b = {0};
    for (int i = optind; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st)) {
            fprintf(stderr, "gpuprof: %s: %s\n", argv[i], strerror(errno));
            goto out;
        }
        if (S_ISDIR(st.st_mode)) {
            if (add_dir(argv[i], &files, &nfiles)) goto out;
        } else if (is_trace_path(argv[i])) {
            if (trace_path) {
                fprintf(stderr,
                        "gpuprof: one Kineto trace of the compiled model at a time (%s, "
                        "%s)\n",
                        trace_path, argv[i]);
                goto out;
            }
            trace_path = argv[i];
        } else {
            files = gp_xrealloc(files, (nfiles + 1) * sizeof *files);
            files[nfiles++] = gp_xstrdup(argv[i]);
        }
    }
    if (eager && !trace_path) {
        fprintf(stderr, "gpuprof: --eager needs a Kineto trace of the compiled model beside it\n");
        goto out;
    }
    logs = gp_xcalloc(nfiles ? nfiles : 1, sizeof *logs);
    gp_tt_opts to = {payloads};
    for (size_t i = 0; i < nfiles; i++) {
        gp_err err = {0};
        if (gp_tlog_read_file(files[i], &to, &logs[i], &err)) {
            fprintf(stderr, "gpuprof: %s\n", err.msg);
            goto out;
        }
        nlogs++;
        for (size_t k = 0; k < logs[i]->bad.n && k < 20; k++)
            fprintf(stderr, "gpuprof: %s:%llu: skipped: %s\n", files[i],
                    (unsigned long long)logs[i]->bad.v[k].line, logs[i]->bad.v[k].what);
        if (logs[i]->corrupt > 20)
            fprintf(stderr, "gpuprof: %s: %llu corrupt lines skipped in all\n", files[i],
                    (unsigned long long)logs[i]->corrupt);
    }
    if (nlogs) {
        if (gp_advise_compile((const gp_tlog *const *)logs, nlogs, NULL, &adv)) goto oom;
        have_adv = 1;
    }
    if (nlogs >= 2) {
        if (gp_rank_divergence_of((const gp_tlog *const *)logs, nlogs, &div)) goto oom;
        have_div = 1;
    }
    if (trace_path) {
        if (load_trace(trace_path, &trace)) goto out;
        if (gp_compiled_trace_of(trace, &ct)) goto oom;
        have_ct = 1;
        if (eager) {
            if (load_trace(eager, &etrace)) goto out;
            int e = gp_compile_speedup_of(etrace, trace, &sp);
            if (e) {
                fprintf(stderr, "gpuprof: comparing %s with %s: %s\n", eager, trace_path,
                        gp_strerror(e));
                goto out;
            }
            have_sp = 1;
        }
    }
    gp_compile_result res = {(const gp_tlog *const *)logs, nlogs, have_adv ? &adv : NULL,
                             have_div ? &div : NULL,       trace, have_ct ? &ct : NULL,
                             have_sp ? &sp : NULL,         eager};
    if (timeline) {
        FILE *f = strcmp(timeline, "-") ? fopen(timeline, "w") : stdout;
        if (!f) {
            fprintf(stderr, "gpuprof: %s: %s\n", timeline, strerror(errno));
            goto out;
        }
        int e = gp_compile_timeline(res.logs, nlogs, f);
        if (f != stdout && fclose(f)) e = e ? e : GP_EIO;
        if (e) {
            fprintf(stderr, "gpuprof: %s: %s\n", timeline, gp_strerror(e));
            goto out;
        }
    }
    if (html) {
        gp_err err = {0};
        gp_compile_page(&res, &b);
        if (gp_write_file(html, &b, &err)) {
            fprintf(stderr, "gpuprof: %s\n", err.msg);
            goto out;
        }
        gp_sbuf_reset(&b);
    }
    if (json) {
        gp_compile_json(&res, &b);
        if (gp_sbuf_write(&b, stdout)) goto out;
    } else if (!html && !timeline) {
        gp_compile_text(&res, stdout);
    }
    rc = 0;
    goto out;
oom:
    fprintf(stderr, "gpuprof: out of memory\n");
    rc = 3;
out:
    gp_sbuf_free(&b);
    if (have_adv) gp_advice_list_free(&adv);
    if (have_div) gp_rank_divergence_free(&div);
    if (have_ct) gp_compiled_trace_free(&ct);
    if (have_sp) gp_compile_speedup_free(&sp);
    gp_trace_destroy(trace);
    gp_trace_destroy(etrace);
    for (size_t i = 0; i < nlogs; i++) gp_tlog_destroy(logs[i]);
    free(logs);
    for (size_t i = 0; i < nfiles; i++) free(files[i]);
    free(files);
    return rc;
}
