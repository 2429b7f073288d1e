/* cli/cmd_history.c: `gpuprof history STORE`: one operation's figures over
 * the runs of a store, with the runs where it stepped; or, without --op, the
 * operations that changed most across the runs. */
#include "analysis/compare.h"
#include "analysis/history.h"
#include "cli/cli.h"
#include "core/error.h"
#include "core/sbuf.h"
#include "core/table.h"
#include "render/bench_out.h"
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

static const char *fmt_wall(char *buf, size_t n, int64_t ns)
{
    if (ns == GP_NONE || ns <= 0) {
        snprintf(buf, n, "N/A");
        return buf;
    }
    time_t s = (time_t)(ns / 1000000000);
    struct tm tm;
    gmtime_r(&s, &tm);
    strftime(buf, n, "%Y-%m-%d %H:%M:%S", &tm);
    return buf;
}

static void json_num_or_null(gp_sbuf *b, double v)
{
    if (isnan(v))
        gp_sbuf_puts(b, "null");
    else
        gp_json_num(b, v);
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

/* "run 4 (+20.1%), run 9 (-6.0%)" or "none". */
static void steps_text(char *buf, size_t n, const gp_hist_op *x, const gp_store_run_row *rows)
{
    size_t k = 0;
    buf[0] = 0;
    if (!x->nsteps) {
        snprintf(buf, n, "none");
        return;
    }
    for (size_t i = 0; i < x->nsteps && k < n; i++) {
        char pc[32];
        int w = snprintf(buf + k, n - k, "%srun %lld (%s)", i ? ", " : "",
                         (long long)rows[x->steps[i].at].id,
                         gp_cli_fmt_pct(pc, sizeof pc, x->steps[i].change_pct));
        if (w < 0) break;
        k += (size_t)w;
    }
}

static void print_op_text(const gp_history *h, const gp_hist_op *x, const gp_store_run_row *rows,
                          size_t nr, const char *path, const gp_history_opts *ho)
{
    char a[64], b[64];
    printf("== gpuprof history %s: %s %s\n", path, gp_group_name(x->group),
           gp_history_name(h, x->name));
    printf(
        "runs: %zu (the operation in %zu); step: the mean per instance changes by >= %g%% and the "
        "two-sided Mann-Whitney U test of the instances before/after gives p < %g "
        "(Bonferroni over the candidate splits)\n",
        nr, x->runs_present, ho->threshold_pct, ho->alpha);
    double mx = 0;
    for (size_t r = 0; r < nr; r++)
        if (x->pts[r].count) mx = fmax(mx, fmax(x->pts[r].p95_ns, x->pts[r].mean_ns));
    double mt = 0;
    for (size_t r = 0; r < nr; r++) mt = fmax(mt, x->pts[r].total_ns);
    gp_unit u = gp_unit_pick(mx), ut = gp_unit_pick(mt);
    char hm[48], h50[48], h95[48], ht[48];
    snprintf(ht, sizeof ht, "Total (%s)", ut.name);
    snprintf(hm, sizeof hm, "Mean (%s)", u.name);
    snprintf(h50, sizeof h50, "p50 (%s)", u.name);
    snprintf(h95, sizeof h95, "p95 (%s)", u.name);
    const char *headers[] = {"Run", "Started (UTC)", "Count", ht, hm, h50, h95, "vs prev", "Step"};
    gp_table *tb = gp_table_create(9, headers, "rlrrrrrrl");
    double prev = NAN;
    for (size_t r = 0; r < nr; r++) {
        const gp_hist_point *p = &x->pts[r];
        char id[32], st[32], cnt[32], tot[32], mean[32], p50[32], p95[32], vs[32], step[96];
        snprintf(id, sizeof id, "%lld", (long long)rows[r].id);
        fmt_wall(st, sizeof st, rows[r].start_wall_ns);
        snprintf(cnt, sizeof cnt, "%llu", (unsigned long long)p->count);
        step[0] = 0;
        for (size_t k = 0; k < x->nsteps; k++)
            if (x->steps[k].at == r) {
                char pc[32], pv[32];
                snprintf(step, sizeof step, "<- step %s (p %s)",
                         gp_cli_fmt_pct(pc, sizeof pc, x->steps[k].change_pct),
                         gp_cli_fmt_p(pv, sizeof pv, x->steps[k].p));
            }
        if (!p->count) {
            snprintf(tot, sizeof tot, "-");
            snprintf(mean, sizeof mean, "-");
            snprintf(p50, sizeof p50, "-");
            snprintf(p95, sizeof p95, "-");
            snprintf(vs, sizeof vs, "-");
        } else {
            gp_fmt_dur(tot, sizeof tot, p->total_ns, ut);
            gp_fmt_dur(mean, sizeof mean, p->mean_ns, u);
            gp_fmt_dur(p50, sizeof p50, p->p50_ns, u);
            gp_fmt_dur(p95, sizeof p95, p->p95_ns, u);
            gp_cli_fmt_pct(vs, sizeof vs,
                           !isnan(prev) && prev > 0 ? 100 * (p->mean_ns / prev - 1) : NAN);
            prev = p->mean_ns;
        }
        const char *cells[] = {id, st, cnt, tot, mean, p50, p95, vs, step};
        gp_table_row(tb, cells);
    }
    gp_table_print(tb, stdout, 0);
    gp_table_destroy(tb);
    printf("\nSteps (%zu)%s\n", x->nsteps, x->nsteps ? ":" : ": none, the mean did not change");
    for (size_t k = 0; k < x->nsteps; k++) {
        const gp_hist_step *s = &x->steps[k];
        char pc[32], pv[32];
        printf("  from run %lld: mean %s -> %s (%s), p %s, effect %.3f (runs %lld..%lld)\n",
               (long long)rows[s->at].id, gp_fmt_dur_auto(a, sizeof a, s->before_ns),
               gp_fmt_dur_auto(b, sizeof b, s->after_ns),
               gp_cli_fmt_pct(pc, sizeof pc, s->change_pct), gp_cli_fmt_p(pv, sizeof pv, s->p),
               s->effect, (long long)rows[s->seg_begin].id, (long long)rows[s->seg_end - 1].id);
    }
}

static void print_list_text(const gp_history *h, const gp_store_run_row *rows, size_t nr,
                            const char *path, const hopts *o, const gp_history_opts *ho)
{
    size_t n;
    const gp_hist_op *ops = gp_history_ops(h, &n);
    size_t withsteps = 0;
    for (size_t i = 0; i < n; i++) withsteps += ops[i].nsteps > 0;
    printf("== gpuprof history %s: %zu runs (%lld..%lld), %zu operations, %zu with a step\n", path,
           nr, nr ? (long long)rows[0].id : 0LL, nr ? (long long)rows[nr - 1].id : 0LL, n,
           withsteps);
    printf("step: the mean per instance changes by >= %g%% and the Mann-Whitney U test gives p < "
           "%g; `gpuprof history --op NAME` shows one operation run by run\n",
           ho->threshold_pct, ho->alpha);
    size_t k = o->top > 0 && (size_t)o->top < n ? (size_t)o->top : n;
    if (!k) return;
    printf("\nOperations that changed most%s:\n",
           k < n ? " (top by largest step, then spread)" : "");
    double mx = 0;
    for (size_t i = 0; i < k; i++)
        for (size_t r = 0; r < nr; r++)
            if (ops[i].pts[r].count && !ops[i].metric) mx = fmax(mx, ops[i].pts[r].mean_ns);
    gp_unit u = gp_unit_pick(mx);
    char hf[48], hl[48];
    snprintf(hf, sizeof hf, "First mean (%s)", u.name);
    snprintf(hl, sizeof hl, "Last mean (%s)", u.name);
    const char *headers[] = {"Category", "Name", "Runs", hf, hl, "Change %", "Spread %", "Steps"};
    gp_table *tb = gp_table_create(8, headers, "llrrrrrl");
    for (size_t i = 0; i < k; i++) {
        const gp_hist_op *x = &ops[i];
        char runs[32], fm[32], lm[32], ch[32], sp[32], st[256];
        double first = NAN, last = NAN;
        for (size_t r = 0; r < nr; r++)
            if (x->pts[r].count) {
                if (isnan(first)) first = x->pts[r].mean_ns;
                last = x->pts[r].mean_ns;
            }
        snprintf(runs, sizeof runs, "%zu", x->runs_present);
        if (x->metric) { /* bench figures: in their own unit */
            gp_bench_fmt_value(fm, sizeof fm, first, gp_history_name(h, x->name));
            gp_bench_fmt_value(lm, sizeof lm, last, gp_history_name(h, x->name));
        } else {
            gp_fmt_dur(fm, sizeof fm, first, u);
            gp_fmt_dur(lm, sizeof lm, last, u);
        }
        gp_cli_fmt_pct(ch, sizeof ch, x->change_pct);
        if (isnan(x->spread_pct))
            snprintf(sp, sizeof sp, "N/A");
        else
            snprintf(sp, sizeof sp, "%.1f%%", x->spread_pct);
        steps_text(st, sizeof st, x, rows);
        const char *cells[] = {
            gp_group_name(x->group), gp_history_name(h, x->name), runs, fm, lm, ch, sp, st};
        gp_table_row(tb, cells);
    }
    gp_table_print(tb, stdout, o->wide ? 0 : 60);
    gp_table_destroy(tb);
}

static void json_steps(gp_sbuf *b, const gp_hist_op *x, const gp_store_run_row *rows)
{
    gp_sbuf_putc(b, '[');
    for (size_t k = 0; k < x->nsteps; k++) {
        const gp_hist_step *s = &x->steps[k];
        if (k) gp_sbuf_putc(b, ',');
        gp_sbuf_printf(b, "{\"run\":%lld,\"run_index\":%zu", (long long)rows[s->at].id, s->at);
        gp_json_key(b, "before_mean_ns", 1);
        gp_json_num(b, s->before_ns);
        gp_json_key(b, "after_mean_ns", 1);
        gp_json_num(b, s->after_ns);
        gp_json_key(b, "change_pct", 1);
        json_num_or_null(b, s->change_pct);
        gp_json_key(b, "p_value", 1);
        json_num_or_null(b, s->p);
        gp_json_key(b, "effect", 1);
        json_num_or_null(b, s->effect);
        gp_sbuf_printf(b, ",\"segment_first_run\":%lld,\"segment_last_run\":%lld}",
                       (long long)rows[s->seg_begin].id, (long long)rows[s->seg_end - 1].id);
    }
    gp_sbuf_putc(b, ']');
}

static void json_op(gp_sbuf *b, const gp_history *h, const gp_hist_op *x,
                    const gp_store_run_row *rows, size_t nr, int points)
{
    gp_sbuf_putc(b, '{');
    gp_json_key(b, "category", 0);
    gp_json_str(b, gp_group_name(x->group));
    gp_json_key(b, "name", 1);
    gp_json_str(b, gp_history_name(h, x->name));
    gp_sbuf_printf(b, ",\"runs_present\":%zu", x->runs_present);
    if (x->metric) { /* a bench figure: the *_ns figures below are in this unit */
        gp_json_key(b, "unit", 1);
        gp_json_str(b, gp_bench_series_unit(gp_history_name(h, x->name)));
        gp_json_key(b, "higher_is_better", 1);
        gp_sbuf_puts(b, x->higher_better ? "true" : "false");
    }
    gp_json_key(b, "total_ns", 1);
    gp_json_num(b, x->total_ns);
    gp_json_key(b, "change_pct", 1);
    json_num_or_null(b, x->change_pct);
    gp_json_key(b, "spread_pct", 1);
    json_num_or_null(b, x->spread_pct);
    gp_json_key(b, "steps", 1);
    json_steps(b, x, rows);
    if (points) {
        gp_json_key(b, "runs", 1);
        gp_sbuf_putc(b, '[');
        for (size_t r = 0; r < nr; r++) {
            const gp_hist_point *p = &x->pts[r];
            if (r) gp_sbuf_putc(b, ',');
            gp_sbuf_printf(b, "{\"run\":%lld,\"count\":%llu", (long long)rows[r].id,
                           (unsigned long long)p->count);
            gp_json_key(b, "start_unix_ns", 1);
            if (rows[r].start_wall_ns == GP_NONE)
                gp_sbuf_puts(b, "null");
            else
                gp_json_int(b, rows[r].start_wall_ns);
            gp_json_key(b, "total_ns", 1);
            gp_json_num(b, p->total_ns);
            gp_json_key(b, "mean_ns", 1);
            json_num_or_null(b, p->mean_ns);
            gp_json_key(b, "p50_ns", 1);
            json_num_or_null(b, p->p50_ns);
            gp_json_key(b, "p95_ns", 1);
            json_num_or_null(b, p->p95_ns);
            gp_sbuf_putc(b, '}');
        }
        gp_sbuf_putc(b, ']');
    } else {
        gp_json_key(b, "mean_ns", 1);
        gp_sbuf_putc(b, '[');
        for (size_t r = 0; r < nr; r++) {
            if (r) gp_sbuf_putc(b, ',');
            json_num_or_null(b, x->pts[r].mean_ns);
        }
        gp_sbuf_putc(b, ']');
    }
    gp_sbuf_putc(b, '}');
}

static void json_head(gp_sbuf *b, const char *path, const gp_store_run_row *rows, size_t nr,
                      const gp_history_opts *ho)
{
    gp_sbuf_puts(b, "{\"gpuprof_version\":");
    gp_json_str(b, gp_version());
    gp_json_key(b, "store", 1);
    gp_json_str(b, path);
    gp_json_key(b, "run_ids", 1);
    gp_sbuf_putc(b, '[');
    for (size_t r = 0; r < nr; r++)
        gp_sbuf_printf(b, "%s%lld", r ? "," : "", (long long)rows[r].id);
    gp_sbuf_putc(b, ']');
    gp_json_key(b, "method", 1);
    gp_sbuf_puts(b, "{\"figure\":\"mean_ns_per_instance\",\"segmentation\":\"binary\","
                    "\"test\":\"mann-whitney-u\",\"correction\":\"bonferroni-over-splits\"");
    gp_json_key(b, "alpha", 1);
    gp_json_num(b, ho->alpha);
    gp_json_key(b, "threshold_pct", 1);
    gp_json_num(b, ho->threshold_pct);
    gp_sbuf_putc(b, '}');
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
            json_head(&b, path, rv, n, &ho);
            if (x) {
                gp_json_key(&b, "operation", 1);
                json_op(&b, h, x, rv, n, 1);
            } else {
                size_t nops;
                const gp_hist_op *ops = gp_history_ops(h, &nops);
                size_t k = o.top > 0 && (size_t)o.top < nops ? (size_t)o.top : nops;
                gp_sbuf_printf(&b, ",\"operation_count\":%zu", nops);
                gp_json_key(&b, "operations", 1);
                gp_sbuf_putc(&b, '[');
                for (size_t i = 0; i < k; i++) {
                    if (i) gp_sbuf_putc(&b, ',');
                    json_op(&b, h, &ops[i], rv, n, 0);
                }
                gp_sbuf_putc(&b, ']');
            }
            gp_sbuf_puts(&b, "}\n");
            gp_sbuf_write(&b, stdout);
            gp_sbuf_free(&b);
        } else if (x && x->metric) {
            gp_bench_write_history_text(stdout, h, x, rv, n, path, &ho);
        } else if (x) {
            print_op_text(h, x, rv, n, path, &ho);
        } else {
            print_list_text(h, rv, n, path, &o, &ho);
        }
        if (fflush(stdout) != 0) rc = 2;
    }
    gp_history_destroy(h);
    gp_store_runs_free(rows, nr);
    return rc;
}
