/* cli/cmd_compare.c: `gpuprof compare BASE CURRENT`: per-operation
 * comparison of baseline and current runs with a Mann-Whitney U test, as
 * tables or JSON, and a CI gate (--fail-on-regression). */
#include "analysis/compare.h"
#include "cli/cli.h"
#include "core/error.h"
#include "core/sbuf.h"
#include "core/table.h"
#include "render/bench_out.h"
#include "trace/load.h"
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct copts {
    long top;
    int json, wide, all, fail_on_regression;
} copts;

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

static const char *fmt_count(char *buf, size_t n, double c)
{
    if (c == floor(c))
        snprintf(buf, n, "%.0f", c);
    else
        snprintf(buf, n, "%.1f", c);
    return buf;
}

/* Prints rows idx[0..k) as one table. */
static void print_rows(const gp_comparison *c, const size_t *idx, size_t k, int wide,
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
        gp_cli_fmt_pct(pc, sizeof pc, r->change_pct);
        gp_cli_fmt_p(pv, sizeof pv, r->p_adj);
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
    gp_table_print(tb, stdout, wide ? 0 : 60);
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
static void print_tracked(const gp_comparison *c, const copts *o)
{
    const gp_cmp_tracked *bt = &c->base_tracked, *ct = &c->cur_tracked;
    if (!bt->valid && !ct->valid) return;
    char a[64], b[64], a2[64], b2[64], p[32];
    printf("  tracked memory (libgpuprof gp_mem_track): peak %s -> %s (%s); tracked at export %s "
           "-> %s\n",
           fmt_bytes_or(a, sizeof a, bt->valid ? (double)bt->peak_bytes : NAN, "N/A"),
           fmt_bytes_or(b, sizeof b, ct->valid ? (double)ct->peak_bytes : NAN, "N/A"),
           gp_cli_fmt_pct(p, sizeof p,
                          bt->valid && ct->valid && bt->peak_bytes > 0
                              ? 100.0 * ((double)ct->peak_bytes / (double)bt->peak_bytes - 1)
                              : NAN),
           fmt_bytes_or(a2, sizeof a2, bt->valid ? (double)bt->current_bytes : NAN, "N/A"),
           fmt_bytes_or(b2, sizeof b2, ct->valid ? (double)ct->current_bytes : NAN, "N/A"));
    if (!c->nbufs) return;
    size_t k = o->all || (size_t)o->top >= c->nbufs ? c->nbufs : (size_t)o->top;
    printf("\nTracked buffers (%zu", c->nbufs);
    if (k < c->nbufs) printf(", top %zu by size changed", k);
    printf("):\n");
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
        gp_cli_fmt_pct(sp, sizeof sp,
                       !isnan(vb) && !isnan(vc) && vb > 0 ? 100.0 * (vc / vb - 1) : NAN);
        snprintf(sn, sizeof sn, "%u -> %u", x->base_count, x->cur_count);
        const char *cells[] = {gp_strtab_get(c->names, x->name), sb, sc, sd, sp, sn};
        gp_table_row(tb, cells);
    }
    gp_table_print(tb, stdout, o->wide ? 0 : 60);
    gp_table_destroy(tb);
}

static void print_text(const gp_comparison *c, const char *bpath, const char *cpath, const copts *o)
{
    char a[64], b[64], p[32];
    const gp_compare_opts *op = &c->opts;
    printf("== gpuprof compare\nbaseline: %s (%zu run%s)\ncurrent:  %s (%zu run%s)\n", bpath,
           c->base_runs, c->base_runs == 1 ? "" : "s", cpath, c->cur_runs,
           c->cur_runs == 1 ? "" : "s");
    printf("test: two-sided Mann-Whitney U on %s, alpha %g%s, threshold %g%%",
           c->by_runs ? "per-run totals" : "per-instance durations", op->alpha,
           op->correction == GP_CORR_HOLM ? " (Holm-corrected)" : "", op->threshold_pct);
    if (op->min_time_ns > 0)
        printf(", min time %s", gp_fmt_dur_auto(a, sizeof a, (double)op->min_time_ns));
    printf("\n");

    printf("\nSummary\n");
    size_t compared = c->n - c->verdicts[GP_V_IGNORED];
    printf("  operations: %zu compared", compared);
    if (c->verdicts[GP_V_IGNORED])
        printf(", %zu ignored (below --min-time)", c->verdicts[GP_V_IGNORED]);
    printf("\n  regressions: %zu   improvements: %zu   no change: %zu   ~ (large, not "
           "significant): %zu"
           "   new: %zu   removed: %zu\n",
           c->verdicts[GP_V_REGRESSION], c->verdicts[GP_V_IMPROVEMENT], c->verdicts[GP_V_NO_CHANGE],
           c->verdicts[GP_V_UNSURE], c->verdicts[GP_V_NEW], c->verdicts[GP_V_REMOVED]);
    if (c->geomean_n)
        printf("  overall change: geometric mean of ratios x%.4f (%s) over %zu operations\n",
               c->geomean_ratio, gp_cli_fmt_pct(p, sizeof p, 100 * (c->geomean_ratio - 1)),
               c->geomean_n);
    printf(
        "  traced span per run: %s -> %s (%s)\n", gp_fmt_dur_auto(a, sizeof a, c->base_span_ns),
        gp_fmt_dur_auto(b, sizeof b, c->cur_span_ns),
        gp_cli_fmt_pct(p, sizeof p,
                       c->base_span_ns > 0 ? 100 * (c->cur_span_ns / c->base_span_ns - 1) : NAN));
    if (c->base_gpu_ns > 0 || c->cur_gpu_ns > 0)
        printf(
            "  GPU time per run (kernels + memcpy/memset): %s -> %s (%s)\n",
            gp_fmt_dur_auto(a, sizeof a, c->base_gpu_ns),
            gp_fmt_dur_auto(b, sizeof b, c->cur_gpu_ns),
            gp_cli_fmt_pct(p, sizeof p,
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
        printf("  memory peak %s: %s -> %s (%s)", dev, a, b, gp_cli_fmt_pct(p, sizeof p, pct));
        if (m->base_valid && m->cur_valid) {
            printf("; allocated and not freed: %s -> %s",
                   gp_fmt_bytes(a, sizeof a, (double)m->base_live_end),
                   gp_fmt_bytes(b, sizeof b, (double)m->cur_live_end));
        }
        printf("\n");
    }
    print_tracked(c, o);
    if (c->by_runs && (c->base_runs < GP_CMP_FEW_SAMPLES || c->cur_runs < GP_CMP_FEW_SAMPLES))
        printf(
            "warning: fewer than %d runs on a side: the test has little power; record more runs\n",
            GP_CMP_FEW_SAMPLES);
    else if (c->few_sample_rows)
        printf("warning: %zu operations have fewer than %d samples on a side (marked \"(few)\"): "
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
            printf("\n%s (%zu", sec[s].title, total);
            if (k < total) printf(", top %zu by time changed", k);
            printf(")%s\n", total ? ":" : "");
        }
        print_rows(c, idx, k, o->wide, 0);
    }
    if (o->all && c->n) {
        printf("\nAll operations:\n");
        for (size_t i = 0; i < c->n; i++) idx[i] = i;
        print_rows(c, idx, c->n, o->wide, 1);
    }
    free(idx);
}

static void json_num_or_null(gp_sbuf *b, double v)
{
    if (isnan(v))
        gp_sbuf_puts(b, "null");
    else
        gp_json_num(b, v);
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
        json_num_or_null(b, sd[s]->mean_ns);
        gp_json_key(b, "samples", 1);
        gp_json_int(b, (int64_t)sd[s]->samples);
        gp_sbuf_putc(b, '}');
    }
    gp_json_key(b, "change_ns", 1);
    json_num_or_null(b, r->change_ns);
    gp_json_key(b, "change_pct", 1);
    json_num_or_null(b, r->change_pct);
    gp_json_key(b, "p_value", 1);
    json_num_or_null(b, r->p);
    gp_json_key(b, "p_adjusted", 1);
    json_num_or_null(b, r->p_adj);
    gp_json_key(b, "effect", 1);
    json_num_or_null(b, r->effect);
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
        json_num_or_null(b, x->base_valid ? vb : NAN);
        gp_json_key(b, "current_bytes", 1);
        json_num_or_null(b, x->cur_valid ? vc : NAN);
        gp_json_key(b, "difference_bytes", 1);
        json_num_or_null(b, vc - vb);
        gp_json_key(b, "change_pct", 1);
        json_num_or_null(b, !isnan(vb) && !isnan(vc) && vb > 0 ? 100.0 * (vc / vb - 1) : NAN);
        gp_sbuf_printf(b, ",\"baseline_count\":%u,\"current_count\":%u}", x->base_count,
                       x->cur_count);
    }
    gp_sbuf_puts(b, "]}");
}

static void print_json(gp_sbuf *b, const gp_comparison *c, const char *bpath, const char *cpath,
                       const copts *o)
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
    json_num_or_null(b, c->geomean_ratio);
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
    copts o = {10, 0, 0, 0, 0};
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
            o.json = 1;
            break;
        case 'F':
            o.fail_on_regression = 1;
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
    if (o.json) {
        gp_sbuf b = {0};
        print_json(&b, &cmp, argv[optind], argv[optind + 1], &o);
        gp_sbuf_write(&b, stdout);
        gp_sbuf_free(&b);
    } else {
        print_text(&cmp, argv[optind], argv[optind + 1], &o);
        gp_bench_write_compare_text(stdout, &cmp, o.wide);
    }
    int regressed = cmp.verdicts[GP_V_REGRESSION] + cmp.metric_verdicts[GP_V_REGRESSION] > 0;
    gp_comparison_free(&cmp);
    if (fflush(stdout) != 0) return 2;
    return o.fail_on_regression && regressed ? 1 : 0;
}
