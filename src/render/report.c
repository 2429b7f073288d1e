/* render/report.c: the HTML dashboard (`gpuprof report`): one section per
 * trace with figures, advice, SVG charts drawn by the page's own JS, the
 * sortable statistics table and the analyze breakdowns. */
#include "render/report.h"
#include "analysis/activity.h"
#include "analysis/advise.h"
#include "analysis/calltree.h"
#include "analysis/hta_prep.h"
#include "analysis/idle.h"
#include "analysis/kernel_breakdown.h"
#include "analysis/launch.h"
#include "analysis/memory.h"
#include "analysis/summary.h"
#include "analysis/temporal.h"
#include "core/hash.h"
#include "core/table.h"
#include "render/html.h"
#include "render/memview.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct acc3 {
    int64_t gpu, transfer;
} acc3;

static int cmp_opgpu(const void *a, const void *b)
{
    const gp_op_gpu *x = a, *y = b;
    int64_t sx = x->cpu_ns + x->gpu_ns + x->transfer_ns,
            sy = y->cpu_ns + y->gpu_ns + y->transfer_ns;
    return (sx < sy) - (sx > sy);
}

int gp_report_op_gpu(const gp_trace *t, gp_op_gpu **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    gp_u64map by_corr = {0}, by_name = {0};
    gp_nesting ns = {0};
    GP_VEC(acc3) work = {0};
    GP_VEC(gp_op_gpu) rows = {0};
    acc3 *item_acc = NULL;
    int rc = GP_ENOMEM;
    /* GPU and transfer time per correlation id */
    for (size_t i = 0; i < t->slices.n; i++) {
        const gp_slice *s = &t->slices.v[i];
        gp_kind k = gp_slice_kind(t, s);
        if (!(gp_kind_mask_gpu_work() & GP_KIND_BIT(k)) || s->correlation == GP_NONE) continue;
        uint64_t *slot = gp_u64map_slot(&by_corr, (uint64_t)s->correlation, UINT64_MAX);
        if (!slot) goto done;
        if (*slot == UINT64_MAX) {
            acc3 z = {0, 0};
            *slot = work.n;
            if (GP_VEC_PUSH(work, z)) goto done;
        }
        if (k == GP_K_MEMCPY || k == GP_K_MEMSET)
            work.v[*slot].transfer += s->dur;
        else
            work.v[*slot].gpu += s->dur;
    }
    if (gp_nesting_build(t, gp_kind_mask_cpu(), &ns)) goto done;
    item_acc = calloc(ns.n ? ns.n : 1, sizeof *item_acc);
    if (!item_acc) goto done;
    for (size_t i = 0; i < ns.n; i++) {
        const gp_slice *s = &t->slices.v[ns.items[i].slice];
        gp_kind k = gp_slice_kind(t, s);
        uint64_t w;
        if ((k != GP_K_RUNTIME && k != GP_K_DRIVER) || s->correlation == GP_NONE ||
            !gp_u64map_get(&by_corr, (uint64_t)s->correlation, &w))
            continue;
        for (uint32_t p = ns.items[i].parent; p != GP_NO_INDEX; p = ns.items[p].parent) {
            item_acc[p].gpu += work.v[w].gpu;
            item_acc[p].transfer += work.v[w].transfer;
        }
    }
    int had_ops = 0;
    for (size_t i = 0; i < ns.n; i++) {
        const gp_slice *s = &t->slices.v[ns.items[i].slice];
        if (gp_slice_kind(t, s) != GP_K_CPU_OP) continue;
        had_ops = 1;
        uint64_t *slot = gp_u64map_slot(&by_name, s->name, UINT64_MAX);
        if (!slot) goto done;
        if (*slot == UINT64_MAX) {
            gp_op_gpu r = {s->name, 0, 0, 0, 0};
            *slot = rows.n;
            if (GP_VEC_PUSH(rows, r)) goto done;
        }
        gp_op_gpu *r = &rows.v[*slot];
        r->count++;
        r->cpu_ns += s->dur;
        r->gpu_ns += item_acc[i].gpu;
        r->transfer_ns += item_acc[i].transfer;
    }
    /* a trace without CPU operators (a libgpuprof export): each range, kept
     * or aggregated, whose CUDA/OpenCL timings inside it were measured (its
     * per-entry metrics, docs/api.md): its host time as CPU time, the
     * timings' device time as GPU kernel and transfer time; a range without
     * timings that named its device (gp_range_begin_ex): its time as CPU
     * or GPU time */
    size_t emi = 0; /* t->entry_metrics ascends by slice */
    for (size_t i = 0; !had_ops && i < t->slices.n + t->aggs.n; i++) {
        uint32_t name;
        uint64_t cnt;
        int64_t dur;
        int gpu;
        const gp_entry_sum *em = NULL;
        if (i < t->slices.n) {
            const gp_slice *s = &t->slices.v[i];
            while (emi < t->entry_metrics.n && t->entry_metrics.v[emi].slice < i) emi++;
            if (emi < t->entry_metrics.n && t->entry_metrics.v[emi].slice == i)
                em = &t->entry_metrics.v[emi].m;
            if (gp_slice_kind(t, s) != GP_K_RANGE) continue;
            if (!(s->flags & (GP_SLICE_DEV_CPU | GP_SLICE_DEV_GPU)) && !(em && em->timers))
                continue;
            name = s->name, cnt = 1, dur = s->dur, gpu = (s->flags & GP_SLICE_DEV_GPU) != 0;
        } else {
            const gp_agg_row *a = &t->aggs.v[i - t->slices.n];
            if (t->cats.v[a->cat].kind != GP_K_RANGE) continue;
            em = &a->em;
            if (a->device != 1 && a->device != 2 && !em->timers) continue;
            name = a->name, cnt = a->count, dur = a->total_ns, gpu = a->device == 2;
        }
        uint64_t *slot = gp_u64map_slot(&by_name, name, UINT64_MAX);
        if (!slot) goto done;
        if (*slot == UINT64_MAX) {
            gp_op_gpu r = {name, 0, 0, 0, 0};
            *slot = rows.n;
            if (GP_VEC_PUSH(rows, r)) goto done;
        }
        gp_op_gpu *r = &rows.v[*slot];
        r->count += cnt;
        if (em && em->timers) {
            r->cpu_ns += dur;
            r->gpu_ns += em->gpu_ns - em->xfer_ns;
            r->transfer_ns += em->xfer_ns;
        } else if (gpu) {
            r->gpu_ns += dur;
        } else {
            r->cpu_ns += dur;
        }
    }
    if (rows.n > 1) qsort(rows.v, rows.n, sizeof *rows.v, cmp_opgpu);
    *out = rows.v;
    *n = rows.n;
    rows.v = NULL;
    rc = 0;
done:
    free(item_acc);
    GP_VEC_FREE(rows);
    GP_VEC_FREE(work);
    gp_u64map_free(&by_corr);
    gp_u64map_free(&by_name);
    gp_nesting_free(&ns);
    return rc;
}

static void fig(gp_sbuf *b, const char *id, const char *v, const char *k)
{
    gp_sbuf_printf(b, "<div class=\"fig\"><div class=\"v\" id=\"%s\">", id);
    gp_html_escape(b, v);
    gp_sbuf_puts(b, "</div><div class=\"k\">");
    gp_html_escape(b, k);
    gp_sbuf_puts(b, "</div></div>");
}

static void td_dur(gp_sbuf *b, double ns)
{
    char tmp[64];
    gp_sbuf_printf(b, "<td data-v=\"%.0f\">", ns);
    gp_html_escape(b, gp_fmt_dur_auto(tmp, sizeof tmp, ns));
    gp_sbuf_puts(b, "</td>");
}

static void td_bytes(gp_sbuf *b, int64_t v)
{
    char tmp[64];
    gp_sbuf_printf(b, "<td data-v=\"%lld\">", (long long)v);
    gp_html_escape(b, gp_fmt_bytes(tmp, sizeof tmp, (double)v));
    gp_sbuf_puts(b, "</td>");
}

/* The per-entry metrics of libgpuprof ranges (docs/api.md "Per-entry
 * metrics"): a card when some row has any. */
static void entry_table(const gp_trace *t, const gp_summary *s, gp_sbuf *b)
{
    size_t k = 0;
    for (size_t i = 0; i < s->n; i++) k += gp_entry_sum_any(&s->rows[i].em);
    if (!k) return;
    gp_sbuf_puts(b, "<div class=\"card\"><h3>Per-entry metrics (libgpuprof ranges: device "
                    "timings, transfers and tracked memory inside each range, summed over its "
                    "calls)</h3><div class=\"tblwrap\"><table class=\"sortable stats entry\">"
                    "<thead><tr><th class=\"l\">Name</th><th>Count</th><th>Timers</th><th>GPU "
                    "time</th><th>Transfers</th><th>Transfer time</th><th>Transfer bytes</th>"
                    "<th>Bandwidth (GB/s)</th><th>Allocs</th><th>Allocated</th><th>Freed</th>"
                    "<th>Peak</th></tr></thead><tbody>");
    for (size_t i = 0; i < s->n; i++) {
        const gp_op_row *r = &s->rows[i];
        const gp_entry_sum *e = &r->em;
        if (!gp_entry_sum_any(e)) continue;
        gp_sbuf_puts(b, "<tr><td class=\"l\">");
        gp_html_escape(b, gp_trace_s(t, r->name));
        gp_sbuf_printf(b, "</td><td data-v=\"%llu\">%llu</td><td data-v=\"%llu\">%llu</td>",
                       (unsigned long long)r->st.count, (unsigned long long)r->st.count,
                       (unsigned long long)e->timers, (unsigned long long)e->timers);
        td_dur(b, (double)e->gpu_ns);
        gp_sbuf_printf(b, "<td data-v=\"%llu\">%llu</td>", (unsigned long long)e->xfers,
                       (unsigned long long)e->xfers);
        td_dur(b, (double)e->xfer_ns);
        td_bytes(b, e->xfer_bytes);
        double bw = gp_entry_bandwidth(e);
        if (isnan(bw))
            gp_sbuf_puts(b, "<td data-v=\"0\">-</td>");
        else
            gp_sbuf_printf(b, "<td data-v=\"%.17g\">%.3f</td>", bw, bw / 1e9);
        gp_sbuf_printf(b, "<td data-v=\"%llu\">%llu</td>", (unsigned long long)e->allocs,
                       (unsigned long long)e->allocs);
        td_bytes(b, e->alloc_bytes);
        td_bytes(b, e->freed_bytes);
        if (e->allocs)
            td_bytes(b, e->peak_bytes);
        else
            gp_sbuf_puts(b, "<td data-v=\"0\">-</td>");
        gp_sbuf_puts(b, "</tr>");
    }
    gp_sbuf_puts(b, "</tbody></table></div></div>\n");
}

static void item(gp_sbuf *d, int *first, const char *label, double v)
{
    gp_sbuf_puts(d, *first ? "{\"label\":" : ",{\"label\":");
    *first = 0;
    gp_json_str(d, label);
    gp_sbuf_puts(d, ",\"parts\":[");
    gp_json_num(d, v);
    gp_sbuf_puts(d, "],\"value\":");
    gp_json_num(d, v);
    gp_sbuf_putc(d, '}');
}

static int cmp_mean(const void *a, const void *b, void *ctx)
{
    const gp_op_row *r = ctx;
    double x = r[*(const size_t *)a].st.mean, y = r[*(const size_t *)b].st.mean;
    return (x < y) - (x > y);
}

static int cmp_count(const void *a, const void *b, void *ctx)
{
    const gp_op_row *r = ctx;
    uint64_t x = r[*(const size_t *)a].st.count, y = r[*(const size_t *)b].st.count;
    return (x < y) - (x > y);
}

/* The operation timeline: top-level slices per track, those narrower than
 * span/3000 left out, at most 6000 per page section. */
static void op_timeline_data(const gp_trace *t, gp_sbuf *d)
{
    gp_nesting ns;
    gp_sbuf_puts(d, "{\"span\":");
    gp_json_int(d, t->t_end);
    gp_sbuf_puts(d, ",\"rows\":[");
    if (gp_nesting_build(t, ((1u << GP_K__COUNT) - 1) & ~GP_KIND_BIT(GP_K_TRACE_SPAN), &ns)) {
        gp_sbuf_puts(d, "]}");
        return;
    }
    int64_t minw = t->t_end / 3000;
    int firstr = 1, budget = 6000;
    for (size_t k = 0; k < ns.ntracks; k++) {
        size_t a = ns.track_first[k], e = ns.track_first[k + 1];
        if (a == e) continue;
        const gp_track *tk = &t->tracks.v[k];
        char lbl[256];
        if (tk->type == GP_TRACK_GPU)
            snprintf(lbl, sizeof lbl, "GPU %d stream %lld", tk->device,
                     gp_stream_shown(tk->stream));
        else if (tk->name)
            snprintf(lbl, sizeof lbl, "%s", gp_trace_s(t, tk->name));
        else
            snprintf(lbl, sizeof lbl, "thread %lld", (long long)tk->tid);
        gp_sbuf_puts(d, firstr ? "{\"label\":" : ",{\"label\":");
        firstr = 0;
        gp_json_str(d, lbl);
        gp_sbuf_puts(d, ",\"s\":[");
        int firsts = 1;
        for (size_t i = a; i < e && budget > 0; i++) {
            const gp_nest_item *it = &ns.items[i];
            const gp_slice *s = &t->slices.v[it->slice];
            unsigned depth_ok = tk->type == GP_TRACK_GPU ? 1 : 0;
            if (it->depth > depth_ok || it->end - s->ts < minw) continue;
            gp_sbuf_printf(d, "%s[%lld,%lld,%d,", firsts ? "" : ",", (long long)s->ts,
                           (long long)(it->end - s->ts),
                           gp_kind_is_gpu(gp_slice_kind(t, s)) ? 4 : 2);
            gp_json_str(d, gp_trace_s(t, s->name));
            gp_sbuf_putc(d, ']');
            firsts = 0;
            budget--;
        }
        gp_sbuf_puts(d, "]}");
    }
    gp_sbuf_puts(d, "]}");
    gp_nesting_free(&ns);
}

static void analyze_section(const gp_hview *v, gp_sbuf *b, gp_sbuf *d)
{
    gp_temporal tp;
    char tmp[64];
    if (gp_temporal_compute(v, &tp) || !tp.valid) {
        gp_sbuf_puts(b, "<p class=\"mut\">No GPU events: no GPU breakdowns.</p>");
        return;
    }
    gp_sbuf_printf(d, ",\"temporal\":[{\"label\":\"rank %d\",\"parts\":[%lld,%lld,%lld]}]", v->rank,
                   (long long)tp.compute_ns, (long long)tp.non_compute_ns, (long long)tp.idle_ns);
    gp_sbuf_puts(b, "<div class=\"grid\"><div class=\"card\"><h3>GPU time: compute, "
                    "non-compute, idle</h3>");
    gp_sbuf_printf(b, "<div class=\"temporal\" id=\"%s-temporal\"></div>", "@P@");
    gp_sbuf_printf(b, "<p>GPU span %s: compute %.1f%%, non-compute %.1f%%, idle %.1f%%.</p>",
                   gp_fmt_dur_auto(tmp, sizeof tmp, (double)tp.span_ns),
                   tp.span_ns ? 100.0 * (double)tp.compute_ns / (double)tp.span_ns : 0.0,
                   tp.span_ns ? 100.0 * (double)tp.non_compute_ns / (double)tp.span_ns : 0.0,
                   tp.span_ns ? 100.0 * (double)tp.idle_ns / (double)tp.span_ns : 0.0);
    gp_sbuf_puts(b, "</div><div class=\"card\"><h3>Kernel time by type (and overlaps)</h3>"
                    "<table class=\"ktype\"><thead><tr><th class=\"l\">Type</th><th>Time</th>"
                    "</tr></thead><tbody>");
    gp_ktype_time kt;
    memset(&kt, 0, sizeof kt);
    if (!gp_ktype_time_add(v, &kt))
        for (unsigned s = 1; s < GP_KSTATES; s++) {
            if (!kt.seen[s]) continue;
            char lbl[128];
            gp_kstate_label(s, lbl, sizeof lbl);
            gp_sbuf_puts(b, "<tr><td class=\"l\">");
            gp_html_escape(b, lbl);
            gp_sbuf_puts(b, "</td>");
            td_dur(b, (double)kt.ns[s]);
            gp_sbuf_puts(b, "</tr>");
        }
    gp_sbuf_puts(b,
                 "</tbody></table></div></div>\n<div class=\"grid\"><div class=\"card\">"
                 "<h3>GPU idle time by stream</h3><table class=\"idle\"><thead><tr><th>Stream</th>"
                 "<th>Host wait</th><th>Kernel wait</th><th>Other</th></tr></thead><tbody>");
    gp_idle_row *ir = NULL;
    size_t ni = 0;
    if (!gp_idle_breakdown(v, 30000, &ir, &ni))
        for (size_t i = 0; i < ni; i++) {
            gp_sbuf_printf(b, "<tr><td>%lld</td>", gp_stream_shown(ir[i].stream));
            td_dur(b, (double)ir[i].host_wait_ns);
            td_dur(b, (double)ir[i].kernel_wait_ns);
            td_dur(b, (double)ir[i].other_ns);
            gp_sbuf_puts(b, "</tr>");
        }
    free(ir);
    gp_sbuf_puts(b, "</tbody></table></div><div class=\"card\"><h3>Kernel launches</h3>");
    gp_launch_opts lo = {50000, 100000};
    gp_launch_stats ls;
    if (!gp_launch_compute(v, GP_LAUNCH_HTA, &lo, &ls) && !ls.launches)
        gp_launch_compute(v, GP_LAUNCH_OTHER, &lo, &ls);
    if (ls.launches) {
        char a[64], c[64], e[64];
        gp_sbuf_printf(
            b,
            "<p class=\"launch\">%llu launches; mean CPU launch time %s, mean GPU "
            "duration %s, mean launch delay %s; %llu short kernels (GPU shorter than "
            "the launch), %llu runtime outliers (&gt; 50 us), %llu launch-delay "
            "outliers (&gt; 100 us).</p>",
            (unsigned long long)ls.launches, gp_fmt_dur_auto(a, sizeof a, ls.cpu_ns.mean),
            gp_fmt_dur_auto(c, sizeof c, ls.gpu_ns.mean),
            gp_fmt_dur_auto(e, sizeof e, ls.delay_ns.mean), (unsigned long long)ls.short_kernels,
            (unsigned long long)ls.runtime_outliers, (unsigned long long)ls.launch_delay_outliers);
    } else {
        gp_sbuf_puts(b, "<p class=\"mut\">No launch / GPU event pairs.</p>");
    }
    gp_sbuf_puts(b, "</div></div>\n");
}

/* The rules of `gpuprof advise` that fire on t (default thresholds), most
 * urgent first: priority, rule, finding, time, estimate, hint, evidence.
 * Returns 0 or GP_ENOMEM. */
static int advice_section(const gp_trace *t, gp_sbuf *b)
{
    gp_advice_list l;
    size_t nrules = 0;
    char tmp[64];
    gp_adv_rules(&nrules);
    if (gp_advise(t, NULL, &l)) return GP_ENOMEM;
    gp_sbuf_printf(b,
                   "<div class=\"card advice\" id=\"@P@-advice\"><h3>Advice (gpuprof advise): "
                   "<span id=\"@P@-advice-n\">%zu</span> of %zu rules fired</h3>\n",
                   l.n, nrules);
    if (!l.n)
        gp_sbuf_puts(b, "<p class=\"mut\">No rule fired with the default thresholds "
                        "(<code>gpuprof advise --list-rules</code> shows them).</p>\n");
    for (size_t i = 0; i < l.n; i++) {
        const gp_advice *a = &l.v[i];
        const char *pn = gp_priority_name(a->priority);
        gp_sbuf_printf(b, "<div class=\"adv p-%s\" data-rule=\"", pn);
        gp_html_escape(b, a->rule->id);
        gp_sbuf_printf(b,
                       "\" data-priority=\"%s\"><div class=\"advh\"><span class=\"prio\">%s</span>",
                       pn, pn);
        gp_sbuf_puts(b, "<b class=\"rule\">");
        gp_html_escape(b, a->rule->id);
        gp_sbuf_puts(b, "</b> <span class=\"mut\">");
        gp_html_escape(b, a->rule->type);
        gp_sbuf_puts(b, "</span>");
        if (a->time_ns != GP_NONE) {
            gp_sbuf_puts(b, "<span class=\"advt\">");
            gp_html_escape(b, gp_fmt_dur_auto(tmp, sizeof tmp, (double)a->time_ns));
            gp_sbuf_printf(b, " (%.1f%% of the span)</span>",
                           l.span_ns > 0 ? 100.0 * (double)a->time_ns / (double)l.span_ns : 0.0);
        }
        gp_sbuf_puts(b, "</div><div class=\"finding\">");
        gp_html_escape(b, a->finding);
        gp_sbuf_puts(b, "</div><div class=\"est\"><b>Estimate:</b> ");
        gp_html_escape(b, a->estimate);
        gp_sbuf_puts(b, "</div><div class=\"hint\"><b>Hint:</b> ");
        gp_html_escape(b, a->rule->hint);
        gp_sbuf_puts(b, "</div>");
        if (a->nev) {
            gp_sbuf_puts(b, "<table class=\"ev\"><thead><tr><th class=\"l\">Evidence</th>"
                            "<th>Count</th><th>Time</th><th>Value</th></tr></thead><tbody>");
            for (size_t k = 0; k < a->nev; k++) {
                const gp_adv_evidence *e = &a->ev[k];
                gp_sbuf_puts(b, "<tr><td class=\"l\">");
                gp_html_escape(b, e->name);
                gp_sbuf_printf(b, "</td><td>%llu</td>", (unsigned long long)e->count);
                if (e->time_ns != GP_NONE)
                    td_dur(b, (double)e->time_ns);
                else
                    gp_sbuf_puts(b, "<td>N/A</td>");
                char v[64];
                gp_sbuf_puts(b, "<td>");
                gp_html_escape(b, gp_adv_value_str(v, sizeof v, e->value, e->unit));
                gp_sbuf_puts(b, "</td>");
                gp_sbuf_puts(b, "</tr>");
            }
            gp_sbuf_puts(b, "</tbody></table>");
        }
        gp_sbuf_puts(b, "</div>\n");
    }
    gp_sbuf_puts(b, "</div>\n");
    gp_advice_list_free(&l);
    return 0;
}

/* Replaces every "@P@" in b from `from` on with prefix p. */
static void fill_prefix(gp_sbuf *b, size_t from, const char *p)
{
    gp_sbuf out = {0};
    gp_sbuf_add(&out, b->s, from);
    size_t i = from;
    while (i < b->n) {
        if (i + 3 <= b->n && !memcmp(b->s + i, "@P@", 3)) {
            gp_sbuf_puts(&out, p);
            i += 3;
        } else {
            gp_sbuf_putc(&out, b->s[i++]);
        }
    }
    gp_sbuf_free(b);
    *b = out;
}

static int trace_section(const gp_trace *t, const gp_hview *v, size_t idx, gp_sbuf *b)
{
    gp_summary s;
    gp_activity act;
    gp_memory mem;
    gp_op_gpu *og = NULL;
    size_t nog = 0;
    if (gp_summary_compute(t, &s)) return GP_ENOMEM;
    if (gp_activity_compute(t, &act) || gp_memory_compute(t, &mem)) {
        gp_summary_free(&s);
        return GP_ENOMEM;
    }
    if (gp_report_op_gpu(t, &og, &nog)) {
        gp_summary_free(&s);
        gp_memory_free(&mem);
        return GP_ENOMEM;
    }
    char p[32], tmp[64], k[128];
    snprintf(p, sizeof p, "r%zu", idx);
    size_t mark = b->n;
    const char *src = gp_trace_s(t, t->meta.source);
    gp_sbuf_printf(b, "<section class=\"sect\" id=\"%s\"><h2>", p);
    gp_html_escape(b, src);
    if (t->meta.rank != GP_NONE) gp_sbuf_printf(b, " (rank %d)", t->meta.rank);
    gp_sbuf_puts(b, "</h2>\n<div class=\"figs\">");
    uint64_t ops = 0;
    int64_t total = 0; /* inclusive: nested operations counted once per level */
    for (size_t i = 0; i < s.n; i++) {
        ops += s.rows[i].st.count;
        total += s.rows[i].st.sum;
    }
    snprintf(tmp, sizeof tmp, "%llu", (unsigned long long)ops);
    fig(b, "@P@-ops", tmp, "operations");
    snprintf(tmp, sizeof tmp, "%zu", s.n);
    fig(b, "@P@-unique", tmp, "unique operations");
    fig(b, "@P@-total", gp_fmt_dur_auto(tmp, sizeof tmp, (double)s.self_total_ns),
        "self time (all ops, all threads and streams)");
    fig(b, "@P@-avgop", ops ? gp_fmt_dur_auto(tmp, sizeof tmp, (double)total / (double)ops) : "N/A",
        "average time per op");
    fig(b, "@P@-span", gp_fmt_dur_auto(tmp, sizeof tmp, (double)act.span_ns), "traced span");
    fig(b, "@P@-cpu", gp_fmt_dur_auto(tmp, sizeof tmp, (double)act.cpu_active_ns), "CPU active");
    if (act.gpu_valid) {
        snprintf(k, sizeof k, "GPU active (%.1f%% of span)",
                 act.span_ns ? 100.0 * (double)act.gpu_active_ns / (double)act.span_ns : 0.0);
        fig(b, "@P@-gpu", gp_fmt_dur_auto(tmp, sizeof tmp, (double)act.gpu_active_ns), k);
        fig(b, "@P@-overlap", gp_fmt_dur_auto(tmp, sizeof tmp, (double)act.overlap_ns),
            "CPU/GPU overlap");
    } else {
        fig(b, "@P@-gpu", "N/A", "GPU active (no GPU work)");
    }
    if (mem.n) {
        const gp_mem_device *pk = &mem.dev[0];
        for (size_t i = 1; i < mem.n; i++)
            if (mem.dev[i].peak_allocated > pk->peak_allocated) pk = &mem.dev[i];
        snprintf(k, sizeof k, "peak memory (%s)", pk->label);
        fig(b, "@P@-mempeak", gp_fmt_bytes(tmp, sizeof tmp, (double)pk->peak_allocated), k);
    }
    gp_sbuf_puts(b, "</div>\n");
    if (advice_section(t, b)) {
        free(og);
        gp_summary_free(&s);
        gp_memory_free(&mem);
        return GP_ENOMEM;
    }
    /* data for the charts */
    gp_sbuf d = {0};
    int first = 1;
    gp_sbuf_puts(&d, "{\"pie\":[");
    for (int g = 0; g < GP_G__COUNT; g++)
        if (s.group_self_ns[g] > 0) /* self time: nested operations are not counted twice */
            item(&d, &first, gp_group_name((gp_group)g), (double)s.group_self_ns[g]);
    size_t *idx_v = malloc((s.n ? s.n : 1) * sizeof *idx_v);
    if (!idx_v) {
        gp_sbuf_free(&d);
        free(og);
        gp_summary_free(&s);
        gp_memory_free(&mem);
        return GP_ENOMEM;
    }
    size_t nsel = 0;
    unsigned opmask = gp_summary_bottleneck_mask(&s); /* the operations, as for bottlenecks */
    for (size_t i = 0; i < s.n; i++)
        if (opmask & (1u << s.rows[i].group)) idx_v[nsel++] = i;
    char lbl[600];
    for (int pass = 0; pass < 2; pass++) {
        qsort_r(idx_v, nsel, sizeof *idx_v, pass ? cmp_count : cmp_mean, s.rows);
        gp_sbuf_puts(&d, pass ? "],\"calls\":[" : "],\"avg\":[");
        first = 1;
        for (size_t i = 0; i < nsel && i < 15; i++) {
            const gp_op_row *r = &s.rows[idx_v[i]];
            snprintf(lbl, sizeof lbl, "%s [%s]", gp_trace_s(t, r->name), gp_group_name(r->group));
            item(&d, &first, lbl, pass ? (double)r->st.count : r->st.mean);
        }
    }
    free(idx_v);
    gp_sbuf_puts(&d, "],\"stack\":[");
    for (size_t i = 0; i < nog && i < 15; i++) {
        gp_sbuf_puts(&d, i ? ",{\"label\":" : "{\"label\":");
        gp_json_str(&d, gp_trace_s(t, og[i].name));
        gp_sbuf_printf(&d, ",\"parts\":[%lld,%lld,%lld]}", (long long)og[i].cpu_ns,
                       (long long)og[i].gpu_ns, (long long)og[i].transfer_ns);
    }
    gp_sbuf_puts(&d, "],\"tl\":");
    op_timeline_data(t, &d);
    /* charts */
    gp_sbuf_puts(b, "<div class=\"grid\"><div class=\"card\"><h3>Time distribution by "
                    "category (self time)</h3><div id=\"@P@-pie\"></div></div><div "
                    "class=\"card\"><h3>Top bottlenecks (self time)</h3><table "
                    "class=\"bottlenecks\"><thead><tr><th>#</th><th class=\"l\">Category</th><th "
                    "class=\"l\">Name</th><th>Count</th><th>Self</th><th>Self % of span</th>"
                    "<th>Total (inclusive)</th></tr></thead><tbody>");
    size_t top[10];
    size_t ntop = gp_summary_top(&s, gp_summary_bottleneck_mask(&s), top, 10);
    for (size_t i = 0; i < ntop; i++) {
        const gp_op_row *r = &s.rows[top[i]];
        gp_sbuf_printf(b, "<tr><td>%zu</td><td class=\"l\">%s</td><td class=\"l\">", i + 1,
                       gp_group_name(r->group));
        gp_html_escape(b, gp_trace_s(t, r->name));
        gp_sbuf_printf(b, "</td><td>%llu</td>", (unsigned long long)r->st.count);
        td_dur(b, (double)r->self_ns);
        gp_sbuf_printf(b, "<td>%.2f</td>", r->self_pct);
        td_dur(b, (double)r->st.sum);
        gp_sbuf_puts(b, "</tr>");
    }
    gp_sbuf_puts(b, "</tbody></table></div></div>\n<div class=\"grid\"><div class=\"card\"><h3>"
                    "Average time per call (top 15)</h3><div id=\"@P@-avg\"></div></div><div "
                    "class=\"card\"><h3>Call count (top 15)</h3><div id=\"@P@-calls\"></div></div>"
                    "</div>\n<div class=\"card\"><h3>CPU operators: CPU time vs GPU kernel and "
                    "transfer time they launched (top 15)</h3><div id=\"@P@-gpucpu\"></div></div>\n"
                    "<div class=\"card\"><h3>Operation timeline (top-level slices per thread and "
                    "stream)</h3><div id=\"@P@-optl\"></div></div>\n");
    if (mem.n)
        gp_sbuf_puts(b, "<div class=\"card\"><h3>Memory over time</h3><div "
                        "id=\"@P@-mem\"></div></div>\n");
    if (v) {
        gp_sbuf_puts(b, "<h3>GPU breakdowns (gpuprof analyze)</h3>\n");
        analyze_section(v, b, &d);
    }
    gp_sbuf_puts(&d, "}");
    /* the full table */
    gp_sbuf_puts(b, "<div class=\"card\"><h3>All operations (click a header to sort)</h3><div "
                    "class=\"tblwrap\"><table class=\"sortable stats\"><thead><tr><th "
                    "class=\"l\">Category</th><th class=\"l\">Name</th><th>Count</th><th>Self</th>"
                    "<th>Self % of span</th><th>Total</th><th>Mean</th><th>Min</th><th>Max</th>"
                    "<th>P50</th><th>P95</th><th>P99</th></tr></thead><tbody>");
    for (size_t i = 0; i < s.n; i++) {
        const gp_op_row *r = &s.rows[i];
        gp_sbuf_printf(b, "<tr><td class=\"l\">%s</td><td class=\"l\">", gp_group_name(r->group));
        gp_html_escape(b, gp_trace_s(t, r->name));
        gp_sbuf_printf(b, "</td><td data-v=\"%llu\">%llu</td>", (unsigned long long)r->st.count,
                       (unsigned long long)r->st.count);
        td_dur(b, (double)r->self_ns);
        gp_sbuf_printf(b, "<td data-v=\"%.4f\">%.2f</td>", r->self_pct, r->self_pct);
        td_dur(b, (double)r->st.sum);
        td_dur(b, r->st.mean);
        td_dur(b, (double)r->st.min);
        td_dur(b, (double)r->st.max);
        td_dur(b, r->st.p50);
        td_dur(b, r->st.p95);
        td_dur(b, r->st.p99);
        gp_sbuf_puts(b, "</tr>");
    }
    gp_sbuf_puts(b, "</tbody></table></div></div>\n");
    entry_table(t, &s, b);
    fill_prefix(b, mark, p);
    /* data scripts */
    char id[64];
    snprintf(id, sizeof id, "%s-data", p);
    char attrs[96];
    snprintf(attrs, sizeof attrs, "class=\"rdata\" data-p=\"%s\"", p);
    gp_html_json_attrs(b, id, attrs, d.s, d.n);
    if (mem.n) {
        gp_sbuf md = {0};
        gp_memview_chart_data(&mem, 3000, &md);
        snprintf(id, sizeof id, "%s-memdata", p);
        snprintf(attrs, sizeof attrs, "class=\"mdata\" data-p=\"%s\"", p);
        gp_html_json_attrs(b, id, attrs, md.s, md.n);
        gp_sbuf_free(&md);
    }
    gp_sbuf_puts(b, "</section>\n");
    gp_sbuf_free(&d);
    free(og);
    gp_summary_free(&s);
    gp_memory_free(&mem);
    return 0;
}

int gp_report_html(gp_trace *const *traces, size_t n, gp_sbuf *b)
{
    char title[512];
    const char *src = n ? gp_trace_s(traces[0], traces[0]->meta.source) : "";
    const char *base = strrchr(src, '/');
    if (n == 1)
        snprintf(title, sizeof title, "gpuprof report: %s", base ? base + 1 : src);
    else
        snprintf(title, sizeof title, "gpuprof report: %zu traces", n);
    gp_html_page_begin(b, title, "report.css");
    gp_hview *views = calloc(n ? n : 1, sizeof *views);
    int *ranks = calloc(n ? n : 1, sizeof *ranks);
    int have_views = 0;
    if (views && ranks) {
        for (size_t i = 0; i < n; i++)
            ranks[i] = traces[i]->meta.rank != GP_NONE ? traces[i]->meta.rank : (int)i;
        gp_hta_opts ho = {0};
        gp_err err = {0};
        have_views = gp_hta_prepare(traces, ranks, n, &ho, views, &err) == 0;
    }
    if (n > 1) {
        gp_sbuf_puts(b, "<p>Traces: ");
        for (size_t i = 0; i < n; i++) {
            gp_sbuf_printf(b, "%s<a href=\"#r%zu\">", i ? ", " : "", i);
            gp_html_escape(b, gp_trace_s(traces[i], traces[i]->meta.source));
            gp_sbuf_puts(b, "</a>");
        }
        gp_sbuf_puts(b, "</p>\n");
    }
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++)
        rc = trace_section(traces[i], have_views ? &views[i] : NULL, i, b);
    if (have_views)
        for (size_t i = 0; i < n; i++) gp_hview_free(&views[i]);
    free(views);
    free(ranks);
    static const char *const js[] = {"memview.js", "report.js", NULL};
    gp_html_page_end(b, js);
    return rc;
}
