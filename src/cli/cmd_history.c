/* cli/cmd_history.c: `gpuprof history STORE`: one operation's figures over
 * the runs of a store, with the runs where it stepped; or, without --op, the
 * operations that changed most across the runs. */
#include "analysis/compare.h"
#include "cli/cli.h"
#include "core/error.h"
#include "report/history.h"
#include "store/store.h"
#include "trace/load.h"
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

typedef struct hopts {
    const char *op;
    long top, last;
    int json, wide;
} hopts;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: gpuprof history [options] [STORE]   (default gpuprof.db)\n"
            "  one operation's figures over the runs of a store (oldest first) and the runs\n"
            "  where its mean duration stepped; without --op, the operations that changed most\n"
            "  --op NAME          the operation (exact name; ProfilerStep#N = ProfilerStep#*)\n"
            "  --category C       only these categories (comma list): kernel, memory, cpu_op,\n"
            "                     runtime, annotation, python, sync, other\n"
            "  --threshold PCT    relative change of the mean a step needs (default 5)\n"
            "  --alpha A          significance level of a step's Mann-Whitney test (default 0.05)\n"
            "  --last N           only the latest N runs\n"
            "  --top N            operations listed without --op (default 10, 0 = all)\n"
            "  --json             machine-readable output (times in ns)\n"
            "  --wide             do not shorten long names\n"
            "exit status: 0 ok, 2 bad input (no store, no such run or operation)\n");
}

/* Loads the runs one batch (one per core) at a time into h, freeing each
 * trace once added. Returns 0 or prints the error and returns 2 (3: OOM). */
static int load_runs(const char *path, const gp_store_run_row *rows, size_t n, gp_history *h)
{
    long nc = sysconf(_SC_NPROCESSORS_ONLN);
    size_t batch = nc > 0 ? (size_t)nc : 1;
    char **specs = gp_xcalloc(batch, sizeof *specs);
    gp_trace **tr = gp_xcalloc(batch, sizeof *tr);
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i += batch) {
        size_t k = n - i < batch ? n - i : batch;
        for (size_t j = 0; j < k; j++) {
            size_t len = strlen(path) + 32;
            specs[j] = gp_xmalloc(len);
            snprintf(specs[j], len, "%s:%lld", path, (long long)rows[i + j].id);
        }
        gp_err err = {0};
        int lrc = gp_load_many(specs, k, 0, tr, &err);
        if (lrc) {
            fprintf(stderr, "gpuprof: %s\n", err.msg);
            rc = lrc == GP_ENOMEM ? 3 : 2;
        }
        for (size_t j = 0; j < k; j++) {
            if (!lrc && !rc && gp_history_add_run(h, tr[j])) {
                fprintf(stderr, "gpuprof: out of memory\n");
                rc = 3;
            }
            if (!lrc) gp_trace_destroy(tr[j]);
            free(specs[j]);
            specs[j] = NULL;
        }
    }
    free(specs);
    free(tr);
    return rc;
}

/* The operation named o->op: the one with the largest total time when the
 * name exists in several categories. NULL (message printed) when absent. */
static const gp_hist_op *find_op(const gp_history *h, const char *name, const char *path)
{
    size_t n, len = strlen(name);
    const gp_hist_op *ops = gp_history_ops(h, &n), *best = NULL;
    const char *want = gp_compare_op_name(name, &len);
    size_t matches = 0;
    for (size_t i = 0; i < n; i++)
        if (!strcmp(gp_history_name(h, ops[i].name), want)) {
            matches++;
            if (!best || ops[i].total_ns > best->total_ns) best = &ops[i];
        }
    if (matches > 1)
        fprintf(stderr,
                "gpuprof: note: '%s' exists in %zu categories; showing %s (use --category)\n", name,
                matches, gp_group_name(best->group));
    if (best) return best;
    fprintf(stderr, "gpuprof: %s: no operation '%s' in the runs", path, name);
    size_t shown = 0;
    for (size_t i = 0; i < n && shown < 5; i++)
        if (strstr(gp_history_name(h, ops[i].name), name))
            fprintf(stderr, "%s'%s'",
                    shown++ ? ", " : "; similar: ", gp_history_name(h, ops[i].name));
    fprintf(stderr, "\n");
    return NULL;
}

int gp_cmd_history(int argc, char **argv)
{
    gp_history_opts ho;
    gp_history_opts_default(&ho);
    hopts o = {NULL, 10, 0, 0, 0};
    unsigned cat_mask = 0;
    static const struct option lo[] = {{"op", required_argument, 0, 'o'},
                                       {"category", required_argument, 0, 'c'},
                                       {"threshold", required_argument, 0, 't'},
                                       {"alpha", required_argument, 0, 'a'},
                                       {"last", required_argument, 0, 'l'},
                                       {"top", required_argument, 0, 'n'},
                                       {"json", no_argument, 0, 'j'},
                                       {"wide", no_argument, 0, 'w'},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "o:c:n:jwh", lo, NULL)) != -1) {
        switch (c) {
        case 'o':
            o.op = optarg;
            break;
        case 'c':
            if (gp_cli_parse_groups(optarg, &cat_mask)) return 2;
            break;
        case 't':
            if (gp_cli_parse_double("--threshold", optarg, 0, 1e9, &ho.threshold_pct)) return 2;
            break;
        case 'a':
            if (gp_cli_parse_double("--alpha", optarg, 0, 1, &ho.alpha)) return 2;
            break;
        case 'l':
            if ((o.last = gp_cli_parse_count("--last", optarg)) < 0) return 2;
            break;
        case 'n':
            if ((o.top = gp_cli_parse_count("--top", optarg)) < 0) return 2;
            break;
        case 'j':
            o.json = 1;
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
    if (cat_mask) ho.group_mask = cat_mask;
    if (argc - optind > 1) {
        fprintf(stderr, "gpuprof: history takes one store\n");
        usage(stderr);
        return 2;
    }
    const char *path = optind < argc ? argv[optind] : "gpuprof.db";
    struct stat sb;
    if (stat(path, &sb) != 0) {
        fprintf(stderr, "gpuprof: %s: no such file\n", path);
        return 2;
    }
    gp_store_run_row *rows = NULL;
    size_t nr = 0;
    gp_err err = {0};
    if (gp_store_runs(path, &rows, &nr, &err)) {
        fprintf(stderr, "gpuprof: %s\n", err.msg);
        return 2;
    }
    if (!nr) {
        fprintf(stderr, "gpuprof: %s: the store holds no run\n", path);
        gp_store_runs_free(rows, nr);
        return 2;
    }
    size_t skip = o.last > 0 && (size_t)o.last < nr ? nr - (size_t)o.last : 0;
    const gp_store_run_row *rv = rows + skip;
    size_t n = nr - skip;
    gp_history *h = gp_history_create(&ho);
    int rc = h ? load_runs(path, rv, n, h) : 3;
    if (!rc && gp_history_finish(h)) rc = 3;
    if (rc == 3) fprintf(stderr, "gpuprof: out of memory\n");
    const gp_hist_op *x = NULL;
    if (!rc && o.op && !(x = find_op(h, o.op, path))) rc = 2;
    if (!rc) {
        if (o.json) {
            gp_sbuf b = {0};
            gp_report_history_json(&b, h, x, rv, n, path, o.top, &ho);
            gp_sbuf_write(&b, stdout);
            gp_sbuf_free(&b);
        } else if (x) {
            gp_report_history_op_text(stdout, h, x, rv, n, path, &ho);
        } else {
            gp_report_history_list_text(stdout, h, rv, n, path, o.top, o.wide, &ho);
        }
    }
    gp_history_destroy(h);
    gp_store_runs_free(rows, nr);
    return rc;
}
