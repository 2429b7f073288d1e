/* report/summary.c: the result writers of `gpuprof summary` (text tables and
 * JSON), shared by the CLI and the server. */
#include "report/summary.h"
#include "core/table.h"
#include "report/fmt.h"
#include <gpuprof/common.h>
#include <math.h>
#include <stdlib.h>

static const char *const group_titles[GP_G__COUNT] = {
    "GPU kernels", "GPU memory (memcpy/memset)", "CPU operators",       "Runtime/driver API calls",
    "Annotations", "Python functions",           "GPU synchronization", "Other events"};

static void print_group(FILE *f, const gp_trace *t, const gp_summary *s, gp_group g,
                        const gp_summary_view *o)
{
    size_t first = 0;
    while (first < s->n && s->rows[first].group != g) first++;
    if (first == s->n) return;
    size_t n = 0;
    while (first + n < s->n && s->rows[first + n].group == g) n++;
    size_t show = (size_t)o->top < n ? (size_t)o->top : n;
    char tmp[64];
    fprintf(f, "\n%s: %llu calls, %zu distinct, total %s\n", group_titles[g],
            (unsigned long long)s->group_count[g], n,
            gp_fmt_dur_auto(tmp, sizeof tmp, (double)s->group_total_ns[g]));
    /* one unit per column, chosen from the column's largest shown value */
    double mx[8] = {0};
    for (size_t i = 0; i < show; i++) {
        const gp_stats *st = &s->rows[first + i].st;
        double v[8] = {(double)st->sum, st->mean, (double)st->min, (double)st->max,
                       st->std,         st->p50,  st->p95,         st->p99};
        for (int c = 0; c < 8; c++)
            if (v[c] > mx[c]) mx[c] = v[c];
    }
    gp_unit u[8];
    char hdr[8][32];
    static const char *const hn[8] = {"Total", "Mean", "Min", "Max", "Std", "P50", "P95", "P99"};
    for (int c = 0; c < 8; c++) {
        u[c] = gp_unit_pick(mx[c]);
        snprintf(hdr[c], sizeof hdr[c], "%s (%s)", hn[c], u[c].name);
    }
    const char *headers[] = {"Name", "Count", hdr[0], hdr[1], hdr[2],  hdr[3],
                             hdr[4], hdr[5],  hdr[6], hdr[7], "Span %"};
    gp_table *tb = gp_table_create(11, headers, "lrrrrrrrrrr");
    for (size_t i = 0; i < show; i++) {
        const gp_op_row *r = &s->rows[first + i];
        const gp_stats *st = &r->st;
        double v[8] = {(double)st->sum, st->mean, (double)st->min, (double)st->max,
                       st->std,         st->p50,  st->p95,         st->p99};
        char cells[11][64];
        const char *cp[11];
        snprintf(cells[1], 64, "%llu", (unsigned long long)st->count);
        for (int c = 0; c < 8; c++) gp_fmt_dur(cells[2 + c], 64, v[c], u[c]);
        snprintf(cells[10], 64, "%.2f", r->share_pct);
        cp[0] = gp_trace_s(t, r->name);
        for (int c = 1; c < 11; c++) cp[c] = cells[c];
        gp_table_row(tb, cp);
    }
    gp_table_print(tb, f, o->wide ? 0 : 70);
    if (show < n) fprintf(f, "(%zu more; --top N to show them)\n", n - show);
    gp_table_destroy(tb);
}

void gp_report_entry_table(FILE *f, const gp_entry_row *rows, size_t n, int width)
{
    if (!n) return;
    double mx[2] = {0};
    for (size_t i = 0; i < n; i++) {
        const gp_entry_sum *e = &rows[i].em;
        if ((double)e->gpu_ns > mx[0]) mx[0] = (double)e->gpu_ns;
        if ((double)e->xfer_ns > mx[1]) mx[1] = (double)e->xfer_ns;
    }
    gp_unit u0 = gp_unit_pick(mx[0]), u1 = gp_unit_pick(mx[1]);
    char h0[32], h1[32];
    snprintf(h0, sizeof h0, "GPU (%s)", u0.name);
    snprintf(h1, sizeof h1, "Xfer (%s)", u1.name);
    const char *headers[] = {"Name",       "Count",     "Timers", h0,      "Xfers", h1,
                             "Xfer bytes", "Xfer GB/s", "Allocs", "Alloc", "Freed", "Peak"};
    gp_table *tb = gp_table_create(12, headers, "lrrrrrrrrrrr");
    if (!tb) return;
    fprintf(f, "\nPer-entry metrics (libgpuprof ranges: device timings, transfers and tracked "
               "memory inside each range, summed over its calls; peak = highest):\n");
    for (size_t i = 0; i < n; i++) {
        const gp_entry_sum *e = &rows[i].em;
        char c[12][64];
        snprintf(c[1], 64, "%llu", (unsigned long long)rows[i].count);
        snprintf(c[2], 64, "%llu", (unsigned long long)e->timers);
        gp_fmt_dur(c[3], 64, (double)e->gpu_ns, u0);
        snprintf(c[4], 64, "%llu", (unsigned long long)e->xfers);
        gp_fmt_dur(c[5], 64, (double)e->xfer_ns, u1);
        gp_fmt_bytes(c[6], 64, (double)e->xfer_bytes);
        double bw = gp_entry_bandwidth(e);
        if (isnan(bw))
            snprintf(c[7], 64, "-");
        else
            snprintf(c[7], 64, "%.3f", bw / 1e9);
        snprintf(c[8], 64, "%llu", (unsigned long long)e->allocs);
        gp_fmt_bytes(c[9], 64, (double)e->alloc_bytes);
        gp_fmt_bytes(c[10], 64, (double)e->freed_bytes);
        if (e->allocs)
            gp_fmt_bytes(c[11], 64, (double)e->peak_bytes);
        else
            snprintf(c[11], 64, "-");
        const char *cp[12] = {rows[i].name, c[1], c[2], c[3], c[4],  c[5],
                              c[6],         c[7], c[8], c[9], c[10], c[11]};
        gp_table_row(tb, cp);
    }
    gp_table_print(tb, f, width);
    gp_table_destroy(tb);
}

/* The per-entry metrics of libgpuprof ranges (docs/api.md "Per-entry
 * metrics"), one line per (group, name) that has any, in the groups shown. */
static void print_entry_metrics(FILE *f, const gp_trace *t, const gp_summary *s,
                                const gp_summary_view *o)
{
    size_t k = 0;
    for (size_t i = 0; i < s->n; i++)
        k += (o->mask & (1u << s->rows[i].group)) && gp_entry_sum_any(&s->rows[i].em);
    if (!k) return;
    gp_entry_row *er = malloc(k * sizeof *er);
    if (!er) return;
    k = 0;
    for (size_t i = 0; i < s->n; i++) {
        const gp_op_row *r = &s->rows[i];
        if (!(o->mask & (1u << r->group)) || !gp_entry_sum_any(&r->em)) continue;
        er[k++] = (gp_entry_row){gp_trace_s(t, r->name), r->st.count, r->em};
    }
    gp_report_entry_table(f, er, k, o->wide ? 0 : 70);
    free(er);
}

void gp_report_summary_text(FILE *f, const gp_trace *t, const gp_summary *s,
                            const gp_summary_view *o)
{
    char tmp[64];
    fprintf(f, "== %s", gp_trace_s(t, t->meta.source));
    if (t->meta.rank != GP_NONE) fprintf(f, " (rank %d)", t->meta.rank);
    fprintf(f, "\n%zu slices, %zu flows, %zu memory events, %zu counters; traced span %s\n",
            t->slices.n, t->flows.n, t->mem_events.n, t->counters.n,
            gp_fmt_dur_auto(tmp, sizeof tmp, (double)s->span_ns));
    if (t->meta.events_dropped_no_dur)
        fprintf(f, "note: %llu complete events without \"dur\" were ignored\n",
                (unsigned long long)t->meta.events_dropped_no_dur);
    if (t->meta.unterminated && t->meta.gp_stream)
        fprintf(f, "note: this libgpuprof stream was cut short (its program ended without "
                   "finishing it): the events written before the cut are read; the ranges "
                   "aggregated inline, kernel timings, counters and memory events, written when "
                   "the profiler ends, are missing\n");
    else if (t->meta.unterminated)
        fprintf(f, "note: the trace's event array was not closed (crashed writer?)\n");
    if (t->meta.lib_dropped)
        fprintf(f,
                "note: libgpuprof dropped %llu event(s) while recording (keep cap, counter "
                "samples or memory events past the sink's cap, or out of memory): they are in "
                "no figure here\n",
                (unsigned long long)t->meta.lib_dropped);
    uint64_t agg = 0;
    size_t agg_ops = 0;
    for (size_t i = 0; i < s->n; i++)
        if (s->rows[i].agg_count) {
            agg += s->rows[i].agg_count;
            agg_ops++;
        }
    if (agg)
        fprintf(f,
                "note: %llu calls of %zu operations are known only as per-name statistics "
                "(libgpuprof rollover): counts, totals, min, max and std are exact, their "
                "percentiles come from a sketch (within 1.6 %%)\n",
                (unsigned long long)agg, agg_ops);
    for (int g = 0; g < GP_G__COUNT; g++)
        if (o->mask & (1u << g)) print_group(f, t, s, (gp_group)g, o);
    print_entry_metrics(f, t, s, o);
    size_t *idx = malloc(((size_t)o->bottlenecks + 1) * sizeof *idx);
    size_t k =
        gp_summary_top(s, o->mask & gp_summary_bottleneck_mask(s), idx, (size_t)o->bottlenecks);
    if (k) {
        double mx = 0;
        for (size_t i = 0; i < k; i++)
            if ((double)s->rows[idx[i]].st.sum > mx) mx = (double)s->rows[idx[i]].st.sum;
        gp_unit u = gp_unit_pick(mx);
        char th[32], ts[32];
        snprintf(th, sizeof th, "Total (%s)", u.name);
        snprintf(ts, sizeof ts, "Self (%s)", u.name);
        const char *headers[] = {"#", "Category", "Name", "Count", ts, "Self %", th};
        gp_table *tb = gp_table_create(7, headers, "rllrrrr");
        fprintf(f,
                "\nTop %zu bottlenecks by self time (share of the traced span; total includes "
                "nested operations):\n",
                k);
        for (size_t i = 0; i < k; i++) {
            const gp_op_row *r = &s->rows[idx[i]];
            char c0[32], c3[32], c4[32], c5[32], c6[32];
            snprintf(c0, sizeof c0, "%zu", i + 1);
            snprintf(c3, sizeof c3, "%llu", (unsigned long long)r->st.count);
            gp_fmt_dur(c4, sizeof c4, (double)r->self_ns, u);
            snprintf(c5, sizeof c5, "%.2f", r->self_pct);
            gp_fmt_dur(c6, sizeof c6, (double)r->st.sum, u);
            const char *cells[] = {c0, gp_group_name(r->group), gp_trace_s(t, r->name), c3, c4, c5,
                                   c6};
            gp_table_row(tb, cells);
        }
        gp_table_print(tb, f, o->wide ? 0 : 70);
        gp_table_destroy(tb);
    }
    free(idx);
}

static void json_row(gp_sbuf *b, const gp_trace *t, const gp_op_row *r, int with_group)
{
    const gp_stats *st = &r->st;
    gp_sbuf_putc(b, '{');
    if (with_group) {
        gp_json_key(b, "category", 0);
        gp_json_str(b, gp_group_name(r->group));
        gp_sbuf_putc(b, ',');
    }
    gp_json_key(b, "name", 0);
    gp_json_str(b, gp_trace_s(t, r->name));
    gp_json_key(b, "count", 1);
    gp_json_int(b, (int64_t)st->count);
    gp_json_key(b, "total_ns", 1);
    gp_json_int(b, st->sum);
    gp_json_key(b, "mean_ns", 1);
    gp_json_num(b, st->mean);
    gp_json_key(b, "min_ns", 1);
    gp_json_int(b, st->min);
    gp_json_key(b, "max_ns", 1);
    gp_json_int(b, st->max);
    gp_json_key(b, "std_ns", 1);
    gp_json_num(b, st->std);
    gp_json_key(b, "p50_ns", 1);
    gp_json_num(b, st->p50);
    gp_json_key(b, "p95_ns", 1);
    gp_json_num(b, st->p95);
    gp_json_key(b, "p99_ns", 1);
    gp_json_num(b, st->p99);
    if (r->agg_count) { /* libgpuprof rollover: calls known only as statistics */
        gp_json_key(b, "aggregated", 1);
        gp_json_int(b, (int64_t)r->agg_count);
        gp_json_key(b, "percentiles_approx", 1);
        gp_sbuf_puts(b, "true");
    }
    gp_json_key(b, "span_pct", 1);
    gp_json_num(b, r->share_pct);
    gp_json_key(b, "self_ns", 1);
    gp_json_int(b, r->self_ns);
    gp_json_key(b, "self_pct", 1);
    gp_json_num(b, r->self_pct);
    if (gp_entry_sum_any(&r->em)) { /* libgpuprof per-entry metrics */
        int c = 0;
        gp_json_key(b, "entry", 1);
        gp_sbuf_putc(b, '{');
        gp_entry_sum_json(b, &r->em, &c);
        gp_sbuf_putc(b, '}');
    }
    gp_sbuf_putc(b, '}');
}

void gp_report_summary_json(gp_sbuf *b, const gp_trace *t, const gp_summary *s,
                            const gp_summary_view *o)
{
    gp_sbuf_putc(b, '{');
    gp_json_key(b, "file", 0);
    gp_json_str(b, gp_trace_s(t, t->meta.source));
    gp_json_key(b, "rank", 1);
    if (t->meta.rank == GP_NONE)
        gp_sbuf_puts(b, "null");
    else
        gp_json_int(b, t->meta.rank);
    gp_json_key(b, "span_ns", 1);
    gp_json_int(b, s->span_ns);
    gp_json_key(b, "slices", 1);
    gp_json_int(b, (int64_t)t->slices.n);
    gp_json_key(b, "events_without_dur", 1);
    gp_json_int(b, (int64_t)t->meta.events_dropped_no_dur);
    gp_json_key(b, "unterminated", 1);
    gp_sbuf_puts(b, t->meta.unterminated ? "true" : "false");
    gp_json_key(b, "recorder_dropped", 1);
    gp_json_int(b, (int64_t)t->meta.lib_dropped);
    gp_json_key(b, "categories", 1);
    gp_sbuf_putc(b, '[');
    int firstg = 1;
    for (int g = 0; g < GP_G__COUNT; g++) {
        if (!(o->mask & (1u << g)) || !s->group_count[g]) continue;
        if (!firstg) gp_sbuf_putc(b, ',');
        firstg = 0;
        gp_sbuf_putc(b, '{');
        gp_json_key(b, "category", 0);
        gp_json_str(b, gp_group_name((gp_group)g));
        gp_json_key(b, "count", 1);
        gp_json_int(b, (int64_t)s->group_count[g]);
        gp_json_key(b, "total_ns", 1);
        gp_json_int(b, s->group_total_ns[g]);
        gp_json_key(b, "ops", 1);
        gp_sbuf_putc(b, '[');
        long shown = 0;
        for (size_t i = 0; i < s->n; i++) {
            if (s->rows[i].group != (gp_group)g) continue;
            if (o->top >= 0 && shown >= o->top) break;
            if (shown++) gp_sbuf_putc(b, ',');
            json_row(b, t, &s->rows[i], 0);
        }
        gp_sbuf_puts(b, "]}");
    }
    gp_sbuf_putc(b, ']');
    gp_json_key(b, "bottlenecks", 1);
    gp_sbuf_putc(b, '[');
    size_t *idx = malloc(((size_t)o->bottlenecks + 1) * sizeof *idx);
    size_t k =
        gp_summary_top(s, o->mask & gp_summary_bottleneck_mask(s), idx, (size_t)o->bottlenecks);
    for (size_t i = 0; i < k; i++) {
        if (i) gp_sbuf_putc(b, ',');
        json_row(b, t, &s->rows[idx[i]], 1);
    }
    free(idx);
    gp_sbuf_puts(b, "]}");
}

void gp_summary_view_default(gp_summary_view *v, int json)
{
    v->top = json ? -1 : 15;
    v->bottlenecks = 10;
    v->mask = (1u << GP_G__COUNT) - 1;
    v->wide = 0;
}

void gp_report_summary_json_doc(gp_sbuf *b, gp_trace *const *t, const gp_summary *s, size_t n,
                                const gp_summary_view *o)
{
    gp_report_doc_begin(b);
    for (size_t i = 0; i < n; i++) {
        if (i) gp_sbuf_putc(b, ',');
        gp_report_summary_json(b, t[i], &s[i], o);
    }
    gp_report_doc_end(b);
}

void gp_report_summary_text_doc(FILE *f, gp_trace *const *t, const gp_summary *s, size_t n,
                                const gp_summary_view *o)
{
    for (size_t i = 0; i < n; i++) {
        if (i) fputc('\n', f);
        gp_report_summary_text(f, t[i], &s[i], o);
    }
}
