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
    const char *trace_path = NULL;
    gp_compile_logs cl = {0};
    gp_trace *trace = NULL, *etrace = NULL;
    gp_compiled_trace ct = {0};
    gp_compile_speedup sp = {0};
    int have_ct = 0, have_sp = 0;
    gp_sbuf b = {0};
    gp_err err = {0};
    for (int i = optind; i < argc; i++) {
        if (is_trace_path(argv[i])) {
            struct stat st;
            if (stat(argv[i], &st)) {
                fprintf(stderr, "gpuprof: %s: %s\n", argv[i], strerror(errno));
                goto out;
            }
            if (!S_ISDIR(st.st_mode)) {
                if (trace_path) {
                    fprintf(stderr,
                            "gpuprof: one Kineto trace of the compiled model at a time (%s, "
                            "%s)\n",
                            trace_path, argv[i]);
                    goto out;
                }
                trace_path = argv[i];
                continue;
            }
        }
        if (gp_compile_logs_add(&cl, argv[i], &err)) {
            fprintf(stderr, "gpuprof: %s\n", err.msg);
            goto out;
        }
    }
    if (eager && !trace_path) {
        fprintf(stderr, "gpuprof: --eager needs a Kineto trace of the compiled model beside it\n");
        goto out;
    }
    gp_tt_opts to = {payloads};
    int e = gp_compile_logs_read(&cl, &to, &err);
    if (e) {
        fprintf(stderr, "gpuprof: %s\n", err.msg);
        rc = e == GP_ENOMEM ? 3 : 2;
        goto out;
    }
    for (size_t i = 0; i < cl.nlogs; i++) {
        for (size_t k = 0; k < cl.logs[i]->bad.n && k < 20; k++)
            fprintf(stderr, "gpuprof: %s:%llu: skipped: %s\n", cl.files[i],
                    (unsigned long long)cl.logs[i]->bad.v[k].line, cl.logs[i]->bad.v[k].what);
        if (cl.logs[i]->corrupt > 20)
            fprintf(stderr, "gpuprof: %s: %llu corrupt lines skipped in all\n", cl.files[i],
                    (unsigned long long)cl.logs[i]->corrupt);
    }
    if (trace_path) {
        if (load_trace(trace_path, &trace)) goto out;
        if (gp_compiled_trace_of(trace, &ct)) goto oom;
        have_ct = 1;
        if (eager) {
            if (load_trace(eager, &etrace)) goto out;
            e = gp_compile_speedup_of(etrace, trace, &sp);
            if (e) {
                fprintf(stderr, "gpuprof: comparing %s with %s: %s\n", eager, trace_path,
                        gp_strerror(e));
                goto out;
            }
            have_sp = 1;
        }
    }
    gp_compile_result res = {(const gp_tlog *const *)cl.logs,
                             cl.nlogs,
                             cl.have_adv ? &cl.adv : NULL,
                             cl.have_div ? &cl.div : NULL,
                             trace,
                             have_ct ? &ct : NULL,
                             have_sp ? &sp : NULL,
                             eager};
    if (timeline) {
        FILE *f = strcmp(timeline, "-") ? fopen(timeline, "w") : stdout;
        if (!f) {
            fprintf(stderr, "gpuprof: %s: %s\n", timeline, strerror(errno));
            goto out;
        }
        e = gp_compile_timeline(res.logs, cl.nlogs, f);
        if (f != stdout && fclose(f)) e = e ? e : GP_EIO;
        if (e) {
            fprintf(stderr, "gpuprof: %s: %s\n", timeline, gp_strerror(e));
            goto out;
        }
    }
    if (html) {
        err = (gp_err){0};
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
    gp_compile_logs_free(&cl);
    if (have_ct) gp_compiled_trace_free(&ct);
    if (have_sp) gp_compile_speedup_free(&sp);
    gp_trace_destroy(trace);
    gp_trace_destroy(etrace);
    return rc;
}
