/* render/timeline.c: the HTML timeline viewer (canvas tracks per CPU thread
 * and GPU stream, zoom/pan, hover, launch->kernel links, memory counters,
 * CPU/GPU activity figures). The JSON and .pftrace exports are
 * render/chrome.c and render/perfetto.c. */
#include "render/timeline.h"
#include "analysis/activity.h"
#include "analysis/calltree.h"
#include "analysis/memory.h"
#include "core/hash.h"
#include "core/table.h"
#include "render/html.h"
#include <gpuprof/common.h>
#include <stdlib.h>
#include <string.h>

#define ALL_KINDS ((1u << GP_K__COUNT) - 1)

static void track_names(const gp_trace *t, size_t k, char *proc, size_t pn, char *thr, size_t tn)
{
    const gp_track *tk = &t->tracks.v[k];
    char pidbuf[64];
    if (tk->pid_str)
        snprintf(pidbuf, sizeof pidbuf, "%s", gp_trace_s(t, tk->pid_str));
    else
        snprintf(pidbuf, sizeof pidbuf, "%lld", (long long)tk->pid);
    if (tk->type == GP_TRACK_GPU) {
        snprintf(proc, pn, "GPU %d", tk->device);
        snprintf(thr, tn, "stream %lld", gp_stream_shown(tk->stream));
    } else {
        if (tk->process_name)
            snprintf(proc, pn, "%s (pid %s)", gp_trace_s(t, tk->process_name), pidbuf);
        else
            snprintf(proc, pn, "pid %s", pidbuf);
        if (tk->name)
            snprintf(thr, tn, "%s", gp_trace_s(t, tk->name));
        else if (tk->tid_str)
            snprintf(thr, tn, "%s", gp_trace_s(t, tk->tid_str));
        else
            snprintf(thr, tn, "thread %lld", (long long)tk->tid);
    }
}

/* ---- HTML viewer ------------------------------------------------------ */

#define MAX_LEVEL 31

typedef struct binacc {
    uint32_t track, level;
    int64_t bin;
    uint64_t count;
    int64_t busy;
} binacc;

static int cmp_bin(const void *a, const void *b)
{
    const binacc *x = a, *y = b;
    if (x->track != y->track) return x->track < y->track ? -1 : 1;
    if (x->bin != y->bin) return x->bin < y->bin ? -1 : 1;
    return (x->level > y->level) - (x->level < y->level);
}

static int kind_code(gp_kind k)
{
    if (k == GP_K_RUNTIME || k == GP_K_DRIVER) return 3;
    if (gp_kind_is_gpu(k)) return 4;
    return 2;
}

static void fig(gp_sbuf *b, const char *id, const char *v, const char *k)
{
    gp_sbuf_printf(b, "<div class=\"fig\"><div class=\"v\" id=\"%s\">", id);
    gp_html_escape(b, v);
    gp_sbuf_puts(b, "</div><div class=\"k\">");
    gp_html_escape(b, k);
    gp_sbuf_puts(b, "</div></div>");
}

int gp_timeline_html(const gp_trace *t, uint64_t max_slices, gp_sbuf *b, gp_timeline_stats *st)
{
    memset(st, 0, sizeof *st);
    if (!max_slices) max_slices = 300000;
    gp_nesting ns = {0};
    gp_memory mem = {0};
    gp_activity act;
    gp_u64map nameidx = {0}, binidx = {0};
    GP_VEC(binacc) bins = {0};
    gp_sbuf d = {0}, names = {0};
    uint32_t nnames = 0;
    int rc = GP_ENOMEM;
    unsigned mask = ALL_KINDS & ~GP_KIND_BIT(GP_K_TRACE_SPAN);
    if (gp_nesting_build(t, mask, &ns) || gp_memory_compute(t, &mem) ||
        gp_activity_compute(t, &act))
        goto done;
    st->clipped = ns.clipped;
    int64_t span = t->t_end > 0 ? t->t_end : 1;
    /* the aggregation width: none when everything fits, else grow from span/20000 */
    int64_t bin_ns = 0;
    if (ns.n > max_slices) {
        bin_ns = span / 20000 > 0 ? span / 20000 : 1;
        for (;;) {
            uint64_t big = 0;
            for (size_t i = 0; i < ns.n; i++)
                if (ns.items[i].end - t->slices.v[ns.items[i].slice].ts >= bin_ns) big++;
            if (big <= max_slices) break;
            bin_ns *= 2;
        }
    }
    st->bin_ns = bin_ns;
    gp_sbuf_printf(&d, "{\"span\":%lld,\"bin_ns\":%lld,\"tracks\":[", (long long)span,
                   (long long)(bin_ns ? bin_ns : 1));
    int firstt = 1;
    for (size_t k = 0; k < ns.ntracks; k++) {
        size_t a = ns.track_first[k], e = ns.track_first[k + 1];
        if (a == e) continue;
        char proc[256], thr[256], label[600];
        track_names(t, k, proc, sizeof proc, thr, sizeof thr);
        snprintf(label, sizeof label, "%s, %s", thr, proc);
        uint32_t levels = 0;
        bins.n = 0;
        gp_u64map_free(&binidx);
        gp_sbuf cols[6] = {{0}};
        int firsti = 1;
        for (size_t i = a; i < e; i++) {
            const gp_nest_item *it = &ns.items[i];
            const gp_slice *s = &t->slices.v[it->slice];
            uint32_t lv = it->depth > MAX_LEVEL ? MAX_LEVEL : it->depth;
            if (lv > levels) levels = lv;
            int64_t dur = it->end - s->ts;
            if (bin_ns && dur < bin_ns) {
                int64_t bi = s->ts / bin_ns;
                uint64_t key = gp_hash_u64(((uint64_t)bi << 6) | lv);
                for (;;) {
                    uint64_t *slot = gp_u64map_slot(&binidx, key, UINT64_MAX);
                    if (!slot) goto done;
                    if (*slot == UINT64_MAX) {
                        binacc ba = {(uint32_t)k, lv, bi, 0, 0};
                        *slot = bins.n;
                        if (GP_VEC_PUSH(bins, ba)) goto done;
                    } else if (bins.v[*slot].bin != bi || bins.v[*slot].level != lv) {
                        key++;
                        continue;
                    }
                    bins.v[*slot].count++;
                    bins.v[*slot].busy += dur;
                    break;
                }
                st->aggregated++;
                continue;
            }
            uint64_t *ni = gp_u64map_slot(&nameidx, s->name, UINT64_MAX);
            if (!ni) goto done;
            if (*ni == UINT64_MAX) {
                *ni = nnames++;
                if (nnames > 1) gp_sbuf_putc(&names, ',');
                gp_json_str(&names, gp_trace_s(t, s->name));
            }
            const char *sep = firsti ? "" : ",";
            firsti = 0;
            gp_sbuf_printf(&cols[0], "%s%lld", sep, (long long)s->ts);
            gp_sbuf_printf(&cols[1], "%s%lld", sep, (long long)dur);
            gp_sbuf_printf(&cols[2], "%s%u", sep, lv);
            gp_sbuf_printf(&cols[3], "%s%llu", sep, (unsigned long long)*ni);
            gp_kind kd = gp_slice_kind(t, s);
            int kc = kind_code(kd);
            long long corr = (kc == 3 || (gp_kind_mask_gpu_work() & GP_KIND_BIT(kd)))
                                 ? (long long)s->correlation
                                 : -1;
            gp_sbuf_printf(&cols[4], "%s%d", sep, kc);
            gp_sbuf_printf(&cols[5], "%s%lld", sep, corr < 0 ? -1 : corr);
            st->slices++;
        }
        if (!firstt) gp_sbuf_putc(&d, ',');
        firstt = 0;
        gp_sbuf_puts(&d, "{\"name\":");
        gp_json_str(&d, label);
        gp_sbuf_printf(&d, ",\"type\":\"%s\",\"levels\":%u,\"s\":[",
                       t->tracks.v[k].type == GP_TRACK_GPU ? "gpu" : "cpu", levels);
        if (cols[0].n) gp_sbuf_add(&d, cols[0].s, cols[0].n);
        gp_sbuf_puts(&d, "],\"d\":[");
        if (cols[1].n) gp_sbuf_add(&d, cols[1].s, cols[1].n);
        gp_sbuf_puts(&d, "],\"l\":[");
        if (cols[2].n) gp_sbuf_add(&d, cols[2].s, cols[2].n);
        gp_sbuf_puts(&d, "],\"n\":[");
        if (cols[3].n) gp_sbuf_add(&d, cols[3].s, cols[3].n);
        gp_sbuf_puts(&d, "],\"k\":[");
        if (cols[4].n) gp_sbuf_add(&d, cols[4].s, cols[4].n);
        gp_sbuf_puts(&d, "],\"c\":[");
        if (cols[5].n) gp_sbuf_add(&d, cols[5].s, cols[5].n);
        for (int c = 0; c < 6; c++) gp_sbuf_free(&cols[c]);
        gp_sbuf_puts(&d, "],\"b\":[");
        if (bins.n > 1) qsort(bins.v, bins.n, sizeof *bins.v, cmp_bin);
        for (size_t j = 0; j < bins.n; j++)
            gp_sbuf_printf(&d, "%s%u,%lld,%llu,%lld", j ? "," : "", bins.v[j].level,
                           (long long)bins.v[j].bin, (unsigned long long)bins.v[j].count,
                           (long long)bins.v[j].busy);
        st->bins += bins.n;
        gp_sbuf_puts(&d, "]}");
    }
    gp_sbuf_puts(&d, "],\"mem\":[");
    for (size_t i = 0; i < mem.n; i++) {
        const gp_mem_device *dv = &mem.dev[i];
        gp_mem_point *pts = malloc(4000 * sizeof *pts);
        if (!pts) goto done;
        size_t k = gp_memory_downsample(dv, pts, 4000);
        gp_sbuf_printf(&d, "%s{\"label\":", i ? "," : "");
        gp_json_str(&d, dv->label);
        gp_sbuf_printf(&d, ",\"max\":%lld,\"pts\":[", (long long)dv->peak_allocated);
        for (size_t j = 0; j < k; j++)
            gp_sbuf_printf(&d, "%s[%lld,%lld]", j ? "," : "", (long long)pts[j].ts,
                           (long long)pts[j].allocated);
        gp_sbuf_puts(&d, "]}");
        free(pts);
    }
    gp_sbuf_puts(&d, "],\"names\":[");
    if (names.n) gp_sbuf_add(&d, names.s, names.n);
    gp_sbuf_puts(&d, "]}");

    /* the page */
    const char *src = gp_trace_s(t, t->meta.source);
    const char *base = strrchr(src, '/');
    char title[512], v[64];
    snprintf(title, sizeof title, "Timeline: %s", base ? base + 1 : src);
    gp_html_page_begin(b, title, "timeline.css");
    gp_sbuf_puts(b, "<div class=\"figs\">");
    fig(b, "tl-span", gp_fmt_dur_auto(v, sizeof v, (double)act.span_ns), "traced span");
    char k1[64];
    fig(b, "tl-cpu", gp_fmt_dur_auto(v, sizeof v, (double)act.cpu_active_ns), "CPU active");
    if (act.gpu_valid) {
        snprintf(k1, sizeof k1, "GPU active (%.1f%% of span)",
                 act.span_ns ? 100.0 * (double)act.gpu_active_ns / (double)act.span_ns : 0.0);
        fig(b, "tl-gpu", gp_fmt_dur_auto(v, sizeof v, (double)act.gpu_active_ns), k1);
        fig(b, "tl-overlap", gp_fmt_dur_auto(v, sizeof v, (double)act.overlap_ns),
            "CPU and GPU both active");
    } else {
        fig(b, "tl-gpu", "N/A", "GPU active (no GPU work in trace)");
        fig(b, "tl-overlap", "N/A", "CPU and GPU both active");
    }
    snprintf(v, sizeof v, "%llu", (unsigned long long)st->slices);
    fig(b, "tl-slices", v, "slices drawn");
    if (bin_ns) {
        char w[64], kk[160];
        snprintf(kk, sizeof kk, "slices shorter than %s aggregated",
                 gp_fmt_dur_auto(w, sizeof w, (double)bin_ns));
        snprintf(v, sizeof v, "%llu", (unsigned long long)st->aggregated);
        fig(b, "tl-aggregated", v, kk);
    }
    gp_sbuf_puts(b,
                 "</div>\n<div class=\"ctl\"><button id=\"tl-in\">Zoom in</button><button "
                 "id=\"tl-out\">Zoom out</button><button id=\"tl-reset\">Reset</button><span "
                 "class=\"mut\">Wheel: zoom at the cursor; drag or shift+wheel: pan; hover: "
                 "details and the launch&#8594;kernel link. <span id=\"tl-range\"></span></span>"
                 "</div>\n<div id=\"tlwrap\"><canvas id=\"tl\" height=\"200\"></canvas></div>\n");
    gp_html_json(b, "tl-data", d.s, d.n);
    static const char *const js[] = {"timeline.js", NULL};
    gp_html_page_end(b, js);
    rc = 0;
done:
    gp_sbuf_free(&d);
    gp_sbuf_free(&names);
    GP_VEC_FREE(bins);
    gp_u64map_free(&binidx);
    gp_u64map_free(&nameidx);
    gp_nesting_free(&ns);
    gp_memory_free(&mem);
    return rc;
}
