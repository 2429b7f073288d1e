/* report/history.c: the result writers of `gpuprof history` (text tables and
 * JSON), shared by the CLI and the server. */
#include "report/history.h"
#include "report/bench_out.h"
#include "core/table.h"
#include "report/fmt.h"
#include <gpuprof/common.h>
#include <math.h>
#include <stdio.h>

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
                         gp_fmt_pct(pc, sizeof pc, x->steps[i].change_pct));
        if (w < 0) break;
        k += (size_t)w;
    }
}

void gp_report_history_op_text(FILE *f, const gp_history *h, const gp_hist_op *x,
                               const gp_store_run_row *rows, size_t nr, const char *path,
                               const gp_history_opts *ho)
{
    if (x->metric) { /* a bench figure: in its own unit, with its direction */
        gp_bench_write_history_text(f, h, x, rows, nr, path, ho);
        return;
    }
    char a[64], b[64];
    fprintf(f, "== gpuprof history %s: %s %s\n", path, gp_group_name(x->group),
            gp_history_name(h, x->name));
    fprintf(f,
            "runs: %zu (the operation in %zu); step: the mean of the per-run means changes by >= "
            "%g%% and the two-sided Mann-Whitney U test of the per-run means before/after gives "
            "p < %g (Bonferroni over the candidate splits)\n",
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
        gp_fmt_wall_utc(st, sizeof st, rows[r].start_wall_ns);
        snprintf(cnt, sizeof cnt, "%llu", (unsigned long long)p->count);
        step[0] = 0;
        for (size_t k = 0; k < x->nsteps; k++)
            if (x->steps[k].at == r) {
                char pc[32], pv[32];
                snprintf(step, sizeof step, "<- step %s (p %s)",
                         gp_fmt_pct(pc, sizeof pc, x->steps[k].change_pct),
                         gp_fmt_p(pv, sizeof pv, x->steps[k].p));
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
            gp_fmt_pct(vs, sizeof vs,
                       !isnan(prev) && prev > 0 ? 100 * (p->mean_ns / prev - 1) : NAN);
            prev = p->mean_ns;
        }
        const char *cells[] = {id, st, cnt, tot, mean, p50, p95, vs, step};
        gp_table_row(tb, cells);
    }
    gp_table_print(tb, f, 0);
    gp_table_destroy(tb);
    /* no step is not "no change": a change may lack the runs to be significant */
    fprintf(f, "\nSteps (%zu)%s\n", x->nsteps,
            x->nsteps ? ":" : ": none passed the test (a change needs enough runs on each side)");
    for (size_t k = 0; k < x->nsteps; k++) {
        const gp_hist_step *s = &x->steps[k];
        char pc[32], pv[32];
        fprintf(f, "  from run %lld: mean %s -> %s (%s), p %s, effect %.3f (runs %lld..%lld)\n",
                (long long)rows[s->at].id, gp_fmt_dur_auto(a, sizeof a, s->before_ns),
                gp_fmt_dur_auto(b, sizeof b, s->after_ns), gp_fmt_pct(pc, sizeof pc, s->change_pct),
                gp_fmt_p(pv, sizeof pv, s->p), s->effect, (long long)rows[s->seg_begin].id,
                (long long)rows[s->seg_end - 1].id);
    }
}

void gp_report_history_list_text(FILE *f, const gp_history *h, const gp_store_run_row *rows,
                                 size_t nr, const char *path, long top, int wide,
                                 const gp_history_opts *ho)
{
    size_t n;
    const gp_hist_op *ops = gp_history_ops(h, &n);
    size_t withsteps = 0;
    for (size_t i = 0; i < n; i++) withsteps += ops[i].nsteps > 0;
    fprintf(f, "== gpuprof history %s: %zu runs (%lld..%lld), %zu operations, %zu with a step\n",
            path, nr, nr ? (long long)rows[0].id : 0LL, nr ? (long long)rows[nr - 1].id : 0LL, n,
            withsteps);
    fprintf(f,
            "step: the mean of the per-run means changes by >= %g%% and the Mann-Whitney U test of "
            "the per-run means gives p < %g; `gpuprof history --op NAME` shows one operation run "
            "by run\n",
            ho->threshold_pct, ho->alpha);
    size_t k = top > 0 && (size_t)top < n ? (size_t)top : n;
    if (!k) return;
    fprintf(f, "\nOperations that changed most%s:\n",
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
        gp_fmt_pct(ch, sizeof ch, x->change_pct);
        if (isnan(x->spread_pct))
            snprintf(sp, sizeof sp, "N/A");
        else
            snprintf(sp, sizeof sp, "%.1f%%", x->spread_pct);
        steps_text(st, sizeof st, x, rows);
        const char *cells[] = {
            gp_group_name(x->group), gp_history_name(h, x->name), runs, fm, lm, ch, sp, st};
        gp_table_row(tb, cells);
    }
    gp_table_print(tb, f, wide ? 0 : 60);
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
        gp_json_num(b, s->change_pct);
        gp_json_key(b, "p_value", 1);
        gp_json_num(b, s->p);
        gp_json_key(b, "effect", 1);
        gp_json_num(b, s->effect);
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
    gp_json_num(b, x->change_pct);
    gp_json_key(b, "spread_pct", 1);
    gp_json_num(b, x->spread_pct);
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
            gp_json_num(b, p->mean_ns);
            gp_json_key(b, "p50_ns", 1);
            gp_json_num(b, p->p50_ns);
            gp_json_key(b, "p95_ns", 1);
            gp_json_num(b, p->p95_ns);
            gp_sbuf_putc(b, '}');
        }
        gp_sbuf_putc(b, ']');
    } else {
        gp_json_key(b, "mean_ns", 1);
        gp_sbuf_putc(b, '[');
        for (size_t r = 0; r < nr; r++) {
            if (r) gp_sbuf_putc(b, ',');
            gp_json_num(b, x->pts[r].mean_ns);
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
    gp_sbuf_puts(
        b, "{\"figure\":\"mean_ns_per_instance\",\"segmentation\":\"binary\","
           "\"test\":\"mann-whitney-u-on-run-means\",\"correction\":\"bonferroni-over-splits\"");
    gp_json_key(b, "alpha", 1);
    gp_json_num(b, ho->alpha);
    gp_json_key(b, "threshold_pct", 1);
    gp_json_num(b, ho->threshold_pct);
    gp_sbuf_putc(b, '}');
}

void gp_report_history_json(gp_sbuf *b, const gp_history *h, const gp_hist_op *x,
                            const gp_store_run_row *rows, size_t nr, const char *path, long top,
                            const gp_history_opts *ho)
{
    json_head(b, path, rows, nr, ho);
    if (x) {
        gp_json_key(b, "operation", 1);
        json_op(b, h, x, rows, nr, 1);
    } else {
        size_t nops;
        const gp_hist_op *ops = gp_history_ops(h, &nops);
        size_t k = top > 0 && (size_t)top < nops ? (size_t)top : nops;
        gp_sbuf_printf(b, ",\"operation_count\":%zu", nops);
        gp_json_key(b, "operations", 1);
        gp_sbuf_putc(b, '[');
        for (size_t i = 0; i < k; i++) {
            if (i) gp_sbuf_putc(b, ',');
            json_op(b, h, &ops[i], rows, nr, 0);
        }
        gp_sbuf_putc(b, ']');
    }
    gp_sbuf_puts(b, "}\n");
}
