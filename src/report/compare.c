/* report/compare.c: the result writers of `gpuprof compare` (text tables and
 * JSON), shared by the CLI and the server. */
#include "report/compare.h"
#include "report/bench_out.h"
#include "core/error.h"
#include "core/table.h"
#include "report/fmt.h"
#include <gpuprof/common.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *fmt_count(char *buf, size_t n, double c)
{
    if (c == floor(c))
        snprintf(buf, n, "%.0f", c);
    else
        snprintf(buf, n, "%.1f", c);
    return buf;
}

/* Prints rows idx[0..k) as one table. */
static void print_rows(FILE *f, const gp_comparison *c, const size_t *idx, size_t k, int wide,
                       int with_verdict)
{
    if (!k) return;
    double mx_fig = 0, mx_ch = 0;
    for (size_t i = 0; i < k; i++) {
        const gp_cmp_row *r = &c->rows[idx[i]];
        mx_fig = fmax(
            mx_fig, fmax(isnan(r->base_fig) ? 0 : r->base_fig, isnan(r->cur_fig) ? 0 : r->cur_fig));
        if (!isnan(r->change_ns)) mx_ch = fmax(mx_ch, fabs(r->change_ns));
    }
    gp_unit uf = gp_unit_pick(mx_fig), uc = gp_unit_pick(mx_ch);
    const char *fig = c->by_runs ? "Total/run" : "Mean";
    char h_b[48], h_c[48], h_ch[48];
    snprintf(h_b, sizeof h_b, "Base %s (%s)", fig, uf.name);
    snprintf(h_c, sizeof h_c, "Cur %s (%s)", fig, uf.name);
    snprintf(h_ch, sizeof h_ch, "Change (%s)", uc.name);
    const char *headers[] = {"Category", "Name", "Base n",   "Cur n", h_b,
                             h_c,        h_ch,   "Change %", "p",     "Verdict"};
    int ncol = with_verdict ? 10 : 9;
    gp_table *tb = gp_table_create(ncol, headers, "llrrrrrrrl");
    for (size_t i = 0; i < k; i++) {
        const gp_cmp_row *r = &c->rows[idx[i]];
        char bn[32], cn[32], bf[32], cf[32], ch[32], pc[32], pv[32];
        fmt_count(bn, sizeof bn, r->base.count);
        fmt_count(cn, sizeof cn, r->cur.count);
        if (isnan(r->base_fig) || r->base.count == 0)
            snprintf(bf, sizeof bf, "-");
        else
            gp_fmt_dur(bf, sizeof bf, r->base_fig, uf);
        if (isnan(r->cur_fig) || r->cur.count == 0)
            snprintf(cf, sizeof cf, "-");
        else
            gp_fmt_dur(cf, sizeof cf, r->cur_fig, uf);
        if (isnan(r->change_ns))
            snprintf(ch, sizeof ch, "-");
        else {
            gp_fmt_dur(ch + 1, sizeof ch - 1, fabs(r->change_ns), uc);
            ch[0] = r->change_ns < 0 ? '-' : '+';
        }
        gp_fmt_pct(pc, sizeof pc, r->change_pct);
        gp_fmt_p(pv, sizeof pv, r->p_adj);
        char verdict[32];
        snprintf(verdict, sizeof verdict, "%s%s", gp_verdict_name(r->verdict),
                 r->few_samples ? " (few)" : "");
        const char *cells[] = {gp_group_name(r->group),
                               gp_strtab_get(c->names, r->name),
                               bn,
                               cn,
                               bf,
                               cf,
                               ch,
                               pc,
                               pv,
                               verdict};
        gp_table_row(tb, cells);
    }
    gp_table_print(tb, f, wide ? 0 : 60);
    gp_table_destroy(tb);
}

/* Bytes of buffer x on a side: its bytes, 0 when the side's exports had a
 * memory section without it, NaN when they had none. */
static double buf_side(const gp_cmp_tracked *side, int valid, int64_t bytes)
{
    if (!side->valid) return NAN;
    return valid ? (double)bytes : 0;
}

static const char *fmt_bytes_or(char *buf, size_t n, double v, const char *none)
{
    if (isnan(v))
        snprintf(buf, n, "%s", none);
    else
        gp_fmt_bytes(buf, n, v);
    return buf;
}

/* The memory tracker's buffers of gp_export_json files, per name. */
static void print_tracked(FILE *f, const gp_comparison *c, const gp_compare_view *o)
{
    const gp_cmp_tracked *bt = &c->base_tracked, *ct = &c->cur_tracked;
    if (!bt->valid && !ct->valid) return;
    char a[64], b[64], a2[64], b2[64], p[32];
    fprintf(f,
            "  tracked memory (libgpuprof gp_mem_track): peak %s -> %s (%s); tracked at export %s "
            "-> %s\n",
            fmt_bytes_or(a, sizeof a, bt->valid ? (double)bt->peak_bytes : NAN, "N/A"),
            fmt_bytes_or(b, sizeof b, ct->valid ? (double)ct->peak_bytes : NAN, "N/A"),
            gp_fmt_pct(p, sizeof p,
                       bt->valid && ct->valid && bt->peak_bytes > 0
                           ? 100.0 * ((double)ct->peak_bytes / (double)bt->peak_bytes - 1)
                           : NAN),
            fmt_bytes_or(a2, sizeof a2, bt->valid ? (double)bt->current_bytes : NAN, "N/A"),
            fmt_bytes_or(b2, sizeof b2, ct->valid ? (double)ct->current_bytes : NAN, "N/A"));
    if (!c->nbufs) return;
    size_t k = o->all || (size_t)o->top >= c->nbufs ? c->nbufs : (size_t)o->top;
    fprintf(f, "\nTracked buffers (%zu", c->nbufs);
    if (k < c->nbufs) fprintf(f, ", top %zu by size changed", k);
    fprintf(f, "):\n");
    const char *headers[] = {"Name", "Base", "Current", "Difference", "Change %", "Buffers"};
    gp_table *tb = gp_table_create(6, headers, "lrrrrr");
    for (size_t i = 0; i < k; i++) {
        const gp_cmp_buffer *x = &c->bufs[i];
        double vb = buf_side(bt, x->base_valid, x->base_bytes);
        double vc = buf_side(ct, x->cur_valid, x->cur_bytes);
        char sb[32], sc[32], sd[40], sp[32], sn[32];
        fmt_bytes_or(sb, sizeof sb, x->base_valid ? vb : NAN, isnan(vb) ? "N/A" : "-");
        fmt_bytes_or(sc, sizeof sc, x->cur_valid ? vc : NAN, isnan(vc) ? "N/A" : "-");
        if (isnan(vb) || isnan(vc)) {
            snprintf(sd, sizeof sd, "N/A");
        } else {
            gp_fmt_bytes(sd + 1, sizeof sd - 1, fabs(vc - vb));
            sd[0] = vc < vb ? '-' : '+';
        }
        gp_fmt_pct(sp, sizeof sp, !isnan(vb) && !isnan(vc) && vb > 0 ? 100.0 * (vc / vb - 1) : NAN);
        snprintf(sn, sizeof sn, "%u -> %u", x->base_count, x->cur_count);
        const char *cells[] = {gp_strtab_get(c->names, x->name), sb, sc, sd, sp, sn};
        gp_table_row(tb, cells);
    }
    gp_table_print(tb, f, o->wide ? 0 : 60);
    gp_table_destroy(tb);
}

void gp_report_compare_text(FILE *f, const gp_comparison *c, const char *bpath, const char *cpath,
                            const gp_compare_view *o)
{
    char a[64], b[64], p[32];
    const gp_compare_opts *op = &c->opts;
    fprintf(f, "== gpuprof compare\nbaseline: %s (%zu run%s)\ncurrent:  %s (%zu run%s)\n", bpath,
            c->base_runs, c->base_runs == 1 ? "" : "s", cpath, c->cur_runs,
            c->cur_runs == 1 ? "" : "s");
    fprintf(f, "test: two-sided Mann-Whitney U on %s, alpha %g%s, threshold %g%%",
            c->by_runs ? "per-run totals" : "per-instance durations", op->alpha,
            op->correction == GP_CORR_HOLM ? " (Holm-corrected)" : "", op->threshold_pct);
    if (op->min_time_ns > 0)
        fprintf(f, ", min time %s", gp_fmt_dur_auto(a, sizeof a, (double)op->min_time_ns));
    fprintf(f, "\n");

    fprintf(f, "\nSummary\n");
    size_t compared = c->n - c->verdicts[GP_V_IGNORED];
    fprintf(f, "  operations: %zu compared", compared);
    if (c->verdicts[GP_V_IGNORED])
        fprintf(f, ", %zu ignored (below --min-time)", c->verdicts[GP_V_IGNORED]);
    fprintf(f,
            "\n  regressions: %zu   improvements: %zu   no change: %zu   ~ (large, not "
            "significant): %zu"
            "   new: %zu   removed: %zu\n",
            c->verdicts[GP_V_REGRESSION], c->verdicts[GP_V_IMPROVEMENT],
            c->verdicts[GP_V_NO_CHANGE], c->verdicts[GP_V_UNSURE], c->verdicts[GP_V_NEW],
            c->verdicts[GP_V_REMOVED]);
    if (c->geomean_n)
        fprintf(f, "  overall change: geometric mean of ratios x%.4f (%s) over %zu operations\n",
                c->geomean_ratio, gp_fmt_pct(p, sizeof p, 100 * (c->geomean_ratio - 1)),
                c->geomean_n);
    fprintf(f, "  traced span per run: %s -> %s (%s)\n",
            gp_fmt_dur_auto(a, sizeof a, c->base_span_ns),
            gp_fmt_dur_auto(b, sizeof b, c->cur_span_ns),
            gp_fmt_pct(p, sizeof p,
                       c->base_span_ns > 0 ? 100 * (c->cur_span_ns / c->base_span_ns - 1) : NAN));
    if (c->base_gpu_ns > 0 || c->cur_gpu_ns > 0)
        fprintf(f, "  GPU time per run (kernels + memcpy/memset): %s -> %s (%s)\n",
                gp_fmt_dur_auto(a, sizeof a, c->base_gpu_ns),
                gp_fmt_dur_auto(b, sizeof b, c->cur_gpu_ns),
                gp_fmt_pct(p, sizeof p,
                           c->base_gpu_ns > 0 ? 100 * (c->cur_gpu_ns / c->base_gpu_ns - 1) : NAN));
    for (size_t i = 0; i < c->nmem; i++) {
        const gp_cmp_mem *m = &c->mem[i];
        char dev[32];
        snprintf(dev, sizeof dev, "%s:%d",
                 m->device_type == 0   ? "cpu"
                 : m->device_type == 1 ? "cuda"
                                       : "dev",
                 m->device_id);
        if (m->base_valid)
            gp_fmt_bytes(a, sizeof a, (double)m->base_peak);
        else
            snprintf(a, sizeof a, "N/A");
        if (m->cur_valid)
            gp_fmt_bytes(b, sizeof b, (double)m->cur_peak);
        else
            snprintf(b, sizeof b, "N/A");
        double pct = m->base_valid && m->cur_valid && m->base_peak > 0
                         ? 100.0 * ((double)m->cur_peak / (double)m->base_peak - 1)
                         : NAN;
        fprintf(f, "  memory peak %s: %s -> %s (%s)", dev, a, b, gp_fmt_pct(p, sizeof p, pct));
        if (m->base_valid && m->cur_valid) {
            fprintf(f, "; allocated and not freed: %s -> %s",
                    gp_fmt_bytes(a, sizeof a, (double)m->base_live_end),
                    gp_fmt_bytes(b, sizeof b, (double)m->cur_live_end));
        }
        fprintf(f, "\n");
    }
    print_tracked(f, c, o);
    if (c->by_runs && (c->base_runs < GP_CMP_FEW_SAMPLES || c->cur_runs < GP_CMP_FEW_SAMPLES))
        fprintf(
            f,
            "warning: fewer than %d runs on a side: the test has little power; record more runs\n",
            GP_CMP_FEW_SAMPLES);
    else if (c->few_sample_rows)
        fprintf(f,
                "warning: %zu operations have fewer than %d samples on a side (marked \"(few)\"): "
                "their verdicts rest on weak evidence\n",
                c->few_sample_rows, GP_CMP_FEW_SAMPLES);

    size_t max = (size_t)o->top;
    size_t *idx = gp_xmalloc((c->n + 1) * sizeof *idx);
    static const struct {
        gp_verdict v;
        const char *title;
    } sec[] = {{GP_V_REGRESSION, "Regressions"},
               {GP_V_IMPROVEMENT, "Improvements"},
               {GP_V_UNSURE, "Large changes that are not significant (~)"},
               {GP_V_NEW, "New operations"},
               {GP_V_REMOVED, "Removed operations"}};
    for (size_t s = 0; s < sizeof sec / sizeof sec[0]; s++) {
        size_t k = gp_comparison_top(c, sec[s].v, idx, max);
        size_t total = c->verdicts[sec[s].v];
        if (sec[s].v <= GP_V_IMPROVEMENT || k) {
            fprintf(f, "\n%s (%zu", sec[s].title, total);
            if (k < total) fprintf(f, ", top %zu by time changed", k);
            fprintf(f, ")%s\n", total ? ":" : "");
        }
        print_rows(f, c, idx, k, o->wide, 0);
    }
    if (o->all && c->n) {
        fprintf(f, "\nAll operations:\n");
        for (size_t i = 0; i < c->n; i++) idx[i] = i;
        print_rows(f, c, idx, c->n, o->wide, 1);
    }
    free(idx);
    gp_bench_write_compare_text(f, c, o->wide); /* bench figures, in their units */
}

static void json_row(gp_sbuf *b, const gp_comparison *c, const gp_cmp_row *r)
{
    gp_sbuf_putc(b, '{');
    gp_json_key(b, "category", 0);
    gp_json_str(b, gp_group_name(r->group));
    gp_json_key(b, "name", 1);
    gp_json_str(b, gp_strtab_get(c->names, r->name));
    gp_json_key(b, "verdict", 1);
    gp_json_str(b, gp_verdict_name(r->verdict));
    const gp_cmp_side *sd[2] = {&r->base, &r->cur};
    static const char *const key[2] = {"baseline", "current"};
    for (int s = 0; s < 2; s++) {
        gp_json_key(b, key[s], 1);
        gp_sbuf_putc(b, '{');
        gp_json_key(b, "count_per_run", 0);
        gp_json_num(b, sd[s]->count);
        gp_json_key(b, "total_ns_per_run", 1);
        gp_json_num(b, sd[s]->total_ns);
        gp_json_key(b, "mean_ns", 1);
        gp_json_num(b, sd[s]->mean_ns);
        gp_json_key(b, "samples", 1);
        gp_json_int(b, (int64_t)sd[s]->samples);
        gp_sbuf_putc(b, '}');
    }
    gp_json_key(b, "change_ns", 1);
    gp_json_num(b, r->change_ns);
    gp_json_key(b, "change_pct", 1);
    gp_json_num(b, r->change_pct);
    gp_json_key(b, "p_value", 1);
    gp_json_num(b, r->p);
    gp_json_key(b, "p_adjusted", 1);
    gp_json_num(b, r->p_adj);
    gp_json_key(b, "effect", 1);
    gp_json_num(b, r->effect);
    gp_json_key(b, "exact", 1);
    gp_sbuf_puts(b, r->exact ? "true" : "false");
    gp_json_key(b, "few_samples", 1);
    gp_sbuf_puts(b, r->few_samples ? "true" : "false");
    gp_sbuf_putc(b, '}');
}

static void json_side_tracked(gp_sbuf *b, const gp_cmp_tracked *t)
{
    if (!t->valid) {
        gp_sbuf_puts(b, "null");
        return;
    }
    gp_sbuf_printf(b, "{\"peak_bytes\":%lld,\"current_bytes\":%lld}", (long long)t->peak_bytes,
                   (long long)t->current_bytes);
}

/* "tracked_memory": the memory tracker's section of gp_export_json files. */
static void json_tracked(gp_sbuf *b, const gp_comparison *c)
{
    const gp_cmp_tracked *bt = &c->base_tracked, *ct = &c->cur_tracked;
    gp_json_key(b, "tracked_memory", 1);
    gp_sbuf_puts(b, "{\"baseline\":");
    json_side_tracked(b, bt);
    gp_sbuf_puts(b, ",\"current\":");
    json_side_tracked(b, ct);
    gp_sbuf_puts(b, ",\"buffers\":[");
    for (size_t i = 0; i < c->nbufs; i++) {
        const gp_cmp_buffer *x = &c->bufs[i];
        double vb = buf_side(bt, x->base_valid, x->base_bytes);
        double vc = buf_side(ct, x->cur_valid, x->cur_bytes);
        if (i) gp_sbuf_putc(b, ',');
        gp_sbuf_putc(b, '{');
        gp_json_key(b, "name", 0);
        gp_json_str(b, gp_strtab_get(c->names, x->name));
        gp_json_key(b, "baseline_bytes", 1);
        gp_json_num(b, x->base_valid ? vb : NAN);
        gp_json_key(b, "current_bytes", 1);
        gp_json_num(b, x->cur_valid ? vc : NAN);
        gp_json_key(b, "difference_bytes", 1);
        gp_json_num(b, vc - vb);
        gp_json_key(b, "change_pct", 1);
        gp_json_num(b, !isnan(vb) && !isnan(vc) && vb > 0 ? 100.0 * (vc / vb - 1) : NAN);
        gp_sbuf_printf(b, ",\"baseline_count\":%u,\"current_count\":%u}", x->base_count,
                       x->cur_count);
    }
    gp_sbuf_puts(b, "]}");
}

void gp_report_compare_json(gp_sbuf *b, const gp_comparison *c, const char *bpath,
                            const char *cpath, const gp_compare_view *o)
{
    const gp_compare_opts *op = &c->opts;
    gp_sbuf_puts(b, "{\"gpuprof_version\":");
    gp_json_str(b, gp_version());
    gp_json_key(b, "baseline", 1);
    gp_sbuf_puts(b, "{\"path\":");
    gp_json_str(b, bpath);
    gp_sbuf_printf(b, ",\"runs\":%zu}", c->base_runs);
    gp_json_key(b, "current", 1);
    gp_sbuf_puts(b, "{\"path\":");
    gp_json_str(b, cpath);
    gp_sbuf_printf(b, ",\"runs\":%zu}", c->cur_runs);
    gp_json_key(b, "test", 1);
    gp_sbuf_puts(b, "{\"name\":\"mann-whitney-u\",\"samples\":");
    gp_json_str(b, c->by_runs ? "per_run_totals" : "per_instance_durations");
    gp_json_key(b, "compared_figure", 1);
    gp_json_str(b, c->by_runs ? "total_ns_per_run" : "mean_ns");
    gp_json_key(b, "alpha", 1);
    gp_json_num(b, op->alpha);
    gp_json_key(b, "threshold_pct", 1);
    gp_json_num(b, op->threshold_pct);
    gp_json_key(b, "min_time_ns", 1);
    gp_json_int(b, op->min_time_ns);
    gp_json_key(b, "correction", 1);
    gp_json_str(b, op->correction == GP_CORR_HOLM ? "holm" : "none");
    gp_sbuf_putc(b, '}');
    gp_json_key(b, "summary", 1);
    gp_sbuf_putc(b, '{');
    static const char *const vk[GP_V__COUNT] = {
        "regressions", "improvements", "no_change", "not_significant", "new", "removed", "ignored"};
    for (int v = 0; v < GP_V__COUNT; v++) {
        gp_json_key(b, vk[v], v > 0);
        gp_json_int(b, (int64_t)c->verdicts[v]);
    }
    gp_json_key(b, "few_sample_operations", 1);
    gp_json_int(b, (int64_t)c->few_sample_rows);
    gp_json_key(b, "geomean_ratio", 1);
    gp_json_num(b, c->geomean_ratio);
    gp_json_key(b, "geomean_operations", 1);
    gp_json_int(b, (int64_t)c->geomean_n);
    gp_json_key(b, "baseline_span_ns_per_run", 1);
    gp_json_num(b, c->base_span_ns);
    gp_json_key(b, "current_span_ns_per_run", 1);
    gp_json_num(b, c->cur_span_ns);
    gp_json_key(b, "baseline_gpu_ns_per_run", 1);
    gp_json_num(b, c->base_gpu_ns);
    gp_json_key(b, "current_gpu_ns_per_run", 1);
    gp_json_num(b, c->cur_gpu_ns);
    gp_sbuf_putc(b, '}');
    gp_json_key(b, "memory", 1);
    gp_sbuf_putc(b, '[');
    for (size_t i = 0; i < c->nmem; i++) {
        const gp_cmp_mem *m = &c->mem[i];
        if (i) gp_sbuf_putc(b, ',');
        gp_sbuf_printf(b, "{\"device_type\":%d,\"device_id\":%d", m->device_type, m->device_id);
        gp_json_key(b, "baseline_peak_bytes", 1);
        if (m->base_valid)
            gp_json_int(b, m->base_peak);
        else
            gp_sbuf_puts(b, "null");
        gp_json_key(b, "current_peak_bytes", 1);
        if (m->cur_valid)
            gp_json_int(b, m->cur_peak);
        else
            gp_sbuf_puts(b, "null");
        gp_json_key(b, "baseline_not_freed_bytes", 1);
        if (m->base_valid)
            gp_json_int(b, m->base_live_end);
        else
            gp_sbuf_puts(b, "null");
        gp_json_key(b, "current_not_freed_bytes", 1);
        if (m->cur_valid)
            gp_json_int(b, m->cur_live_end);
        else
            gp_sbuf_puts(b, "null");
        gp_sbuf_putc(b, '}');
    }
    gp_sbuf_putc(b, ']');
    json_tracked(b, c);
    size_t *idx = gp_xmalloc((c->n + 1) * sizeof *idx);
    static const struct {
        gp_verdict v;
        const char *key;
    } top[] = {{GP_V_REGRESSION, "top_regressions"}, {GP_V_IMPROVEMENT, "top_improvements"}};
    for (int s = 0; s < 2; s++) {
        gp_json_key(b, top[s].key, 1);
        gp_sbuf_putc(b, '[');
        size_t k = gp_comparison_top(c, top[s].v, idx, (size_t)o->top);
        for (size_t i = 0; i < k; i++) {
            if (i) gp_sbuf_putc(b, ',');
            json_row(b, c, &c->rows[idx[i]]);
        }
        gp_sbuf_putc(b, ']');
    }
    free(idx);
    gp_json_key(b, "operations", 1);
    gp_sbuf_putc(b, '[');
    for (size_t i = 0; i < c->n; i++) {
        if (i) gp_sbuf_putc(b, ',');
        json_row(b, c, &c->rows[i]);
    }
    gp_sbuf_putc(b, ']');
    gp_bench_write_compare_json(b, c);
    gp_sbuf_puts(b, "}\n");
}
