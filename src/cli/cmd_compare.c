/* cli/cmd_compare.c: `gpuprof compare BASE CURRENT`: per-operation
 * comparison of baseline and current runs with a Mann-Whitney U test, as
 * tables or JSON, and a CI gate (--fail-on-regression). */
#include "cli/cli.h"
#include "core/error.h"
#include "report/compare.h"
#include "trace/load.h"
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static void usage(FILE *f)
{
    fprintf(f, "usage: gpuprof compare [options] BASE CURRENT\n"
               "  BASE, CURRENT: a trace (.json/.json.gz, Kineto/Chrome or gp_export_json), a run\n"
               "                 of a store (gpuprof.db = latest, gpuprof.db:ID), or a folder of\n"
               "                 traces = repeated runs of the same program\n"
               "  (gp_export_json files: their tracked buffers are compared by name too;\n"
               "  one operation over all the runs of a store: gpuprof history)\n"
               "  --alpha A          significance level of the Mann-Whitney U test (default 0.05)\n"
               "  --threshold PCT    relative change needed for a verdict (default 5)\n"
               "  --min-time T       ignore operations whose total per run is below T on both\n"
               "                     sides (T with unit ns/us/ms/s; bare number = ns; default 0)\n"
               "  --mode M           auto (default), instances (per-instance durations) or runs\n"
               "                     (per-run totals; needs >= 2 runs per side)\n"
               "  --correction C     holm (default: Holm-Bonferroni over all tested operations,\n"
               "                     so alpha bounds the chance of any false alarm) or none\n"
               "  --category C       only these categories (comma list): kernel, memory, cpu_op,\n"
               "                     runtime, annotation, python, sync, other\n"
               "  --top N            regressions/improvements/other changes shown (default 10)\n"
               "  --all              also print every operation with its verdict\n"
               "  --json             machine-readable output (times in ns)\n"
               "  --fail-on-regression  exit 1 when any operation is a REGRESSION\n"
               "  --wide             do not shorten long names\n"
               "exit status: 0 ok, 1 regression with --fail-on-regression, 2 bad input\n");
}

/* In a folder of runs, files without any event (e.g. a JSON side file that
 * is not a trace) are not runs: they are left out with a note (unless every
 * file is empty). */
static void drop_empty(gp_trace **t, size_t *n, const char *path)
{
    size_t nonempty = 0;
    for (size_t i = 0; i < *n; i++)
        nonempty += t[i]->slices.n || t[i]->mem_events.n || t[i]->counters.n;
    if (*n < 2 || nonempty == 0 || nonempty == *n) return;
    size_t k = 0;
    for (size_t i = 0; i < *n; i++) {
        if (t[i]->slices.n || t[i]->mem_events.n || t[i]->counters.n) {
            t[k++] = t[i];
            continue;
        }
        fprintf(stderr, "gpuprof: note: %s has no events; not counted as a run of %s\n",
                gp_trace_s(t[i], t[i]->meta.source), path);
        gp_trace_destroy(t[i]);
    }
    *n = k;
}

/* Frees the traces left on both sides (drop_empty may have destroyed some)
 * and the array that held them all. */
static void free_sides(gp_trace **all, gp_trace **bt, size_t nb, gp_trace **ct, size_t nc)
{
    for (size_t i = 0; i < nb; i++) gp_trace_destroy(bt[i]);
    for (size_t i = 0; i < nc; i++) gp_trace_destroy(ct[i]);
    free(all);
}

int gp_cmd_compare(int argc, char **argv)
{
    gp_compare_opts co;
    gp_compare_opts_default(&co);
    gp_compare_view o = {10, 0, 0};
    int json = 0, fail_on_regression = 0;
    unsigned cat_mask = 0;
    static const struct option lo[] = {{"alpha", required_argument, 0, 'a'},
                                       {"threshold", required_argument, 0, 't'},
                                       {"min-time", required_argument, 0, 'm'},
                                       {"mode", required_argument, 0, 'M'},
                                       {"correction", required_argument, 0, 'C'},
                                       {"category", required_argument, 0, 'c'},
                                       {"top", required_argument, 0, 'n'},
                                       {"all", no_argument, 0, 'A'},
                                       {"json", no_argument, 0, 'j'},
                                       {"fail-on-regression", no_argument, 0, 'F'},
                                       {"wide", no_argument, 0, 'w'},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "n:c:jwh", lo, NULL)) != -1) {
        switch (c) {
        case 'a':
            if (gp_cli_parse_double("--alpha", optarg, 0, 1, &co.alpha)) return 2;
            break;
        case 't':
            if (gp_cli_parse_double("--threshold", optarg, 0, 1e9, &co.threshold_pct)) return 2;
            break;
        case 'm':
            if ((co.min_time_ns = gp_cli_parse_dur("--min-time", optarg)) < 0) return 2;
            break;
        case 'M':
            if (!strcmp(optarg, "auto"))
                co.mode = GP_CMP_AUTO;
            else if (!strcmp(optarg, "instances"))
                co.mode = GP_CMP_INSTANCES;
            else if (!strcmp(optarg, "runs"))
                co.mode = GP_CMP_RUNS;
            else {
                fprintf(stderr, "gpuprof: --mode expects auto, instances or runs, got '%s'\n",
                        optarg);
                return 2;
            }
            break;
        case 'C':
            if (!strcmp(optarg, "none"))
                co.correction = GP_CORR_NONE;
            else if (!strcmp(optarg, "holm"))
                co.correction = GP_CORR_HOLM;
            else {
                fprintf(stderr, "gpuprof: --correction expects none or holm, got '%s'\n", optarg);
                return 2;
            }
            break;
        case 'c':
            if (gp_cli_parse_groups(optarg, &cat_mask)) return 2;
            break;
        case 'n':
            if ((o.top = gp_cli_parse_count("--top", optarg)) < 0) return 2;
            break;
        case 'A':
            o.all = 1;
            break;
        case 'j':
            json = 1;
            break;
        case 'F':
            fail_on_regression = 1;
            break;
        case 'w':
            o.wide = 1;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (cat_mask) co.group_mask = cat_mask;
    if (argc - optind != 2) {
        fprintf(stderr, "gpuprof: compare needs exactly two paths, BASE and CURRENT\n");
        usage(stderr);
        return 2;
    }
    /* both sides in one parallel load; the base's file count splits them
     * (files without events, such as expected.hta.json in a folder of runs,
     * are left out per side by drop_empty below) */
    gp_err perr = {0};
    size_t nb = 0, nc = 0;
    char **bfiles = gp_paths_expand(argv + optind, 1, &nb, &perr);
    char **cfiles = bfiles ? gp_paths_expand(argv + optind + 1, 1, &nc, &perr) : NULL;
    if (!bfiles || !cfiles) {
        fprintf(stderr, "gpuprof: %s\n", perr.msg);
        gp_paths_free(bfiles);
        return 2;
    }
    char **files = gp_xmalloc((nb + nc + 1) * sizeof *files);
    memcpy(files, bfiles, nb * sizeof *files);
    memcpy(files + nb, cfiles, nc * sizeof *files);
    gp_trace **all = gp_xcalloc(nb + nc + 1, sizeof *all);
    int rc = gp_load_many(files, nb + nc, 0, all, &perr);
    free(files);
    gp_paths_free(bfiles);
    gp_paths_free(cfiles);
    if (rc) {
        fprintf(stderr, "gpuprof: %s\n", perr.msg);
        free(all);
        return rc == GP_ENOMEM ? 3 : 2;
    }
    gp_trace **bt = all, **ct = all + nb;
    /* a side named as one file must hold events (a folder may hold others) */
    for (int side = 0; side < 2; side++) {
        gp_trace **t = side ? ct : bt;
        size_t k = side ? nc : nb;
        struct stat sb;
        if (k == 1 && stat(argv[optind + side], &sb) == 0 && S_ISREG(sb.st_mode) &&
            gp_cli_check_events(t[0], argv[optind + side])) {
            free_sides(all, bt, nb, ct, nc);
            return 2;
        }
    }
    drop_empty(bt, &nb, argv[optind]);
    drop_empty(ct, &nc, argv[optind + 1]);
    if (co.mode == GP_CMP_RUNS && (nb < 2 || nc < 2)) {
        fprintf(stderr,
                "gpuprof: --mode runs needs at least 2 runs on each side (got %zu and %zu)\n", nb,
                nc);
        free_sides(all, bt, nb, ct, nc);
        return 2;
    }
    gp_comparison cmp;
    rc = gp_compare_runs(bt, nb, ct, nc, &co, &cmp);
    free_sides(all, bt, nb, ct, nc);
    if (rc) {
        fprintf(stderr, "gpuprof: compare: %s\n", gp_strerror(rc));
        return rc == GP_ENOMEM ? 3 : 2;
    }
    if (json) {
        gp_sbuf b = {0};
        gp_report_compare_json(&b, &cmp, argv[optind], argv[optind + 1], &o);
        gp_sbuf_write(&b, stdout);
        gp_sbuf_free(&b);
    } else {
        gp_report_compare_text(stdout, &cmp, argv[optind], argv[optind + 1], &o);
    }
    int regressed = cmp.verdicts[GP_V_REGRESSION] + cmp.metric_verdicts[GP_V_REGRESSION] > 0;
    /* a side without operations never passes the gate: everything would be
     * REMOVED (or NEW) and nothing compared */
    size_t ops[2] = {0, 0};
    for (size_t i = 0; i < cmp.n; i++) {
        if (cmp.rows[i].base.count > 0) ops[0]++;
        if (cmp.rows[i].cur.count > 0) ops[1]++;
    }
    /* (runs of gpuprof bench have figures instead of operations) */
    size_t figs[2] = {0, 0};
    for (size_t i = 0; i < cmp.nmetrics; i++) {
        if (cmp.metrics[i].base.samples > 0) figs[0]++;
        if (cmp.metrics[i].cur.samples > 0) figs[1]++;
    }
    int empty_side = (!ops[0] && !figs[0]) || (!ops[1] && !figs[1]);
    if (empty_side)
        fprintf(stderr, "gpuprof: compare: %s has no operations%s\n",
                argv[optind + (ops[0] || figs[0] ? 1 : 0)],
                fail_on_regression ? ": the regression gate fails" : "");
    gp_comparison_free(&cmp);
    return fail_on_regression && (regressed || empty_side) ? 1 : 0;
}
