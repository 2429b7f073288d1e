/* render/memview.c: text, JSON and HTML views of the memory analysis. */
#include "render/memview.h"
#include "core/table.h"
#include "render/html.h"
#include <stdlib.h>
#include <string.h>

static const char *op_name(const gp_trace *t, uint32_t op)
{
    return op == GP_NO_INDEX ? "(no enclosing operation)" : gp_trace_s(t, op);
}

static const char *track_name(const gp_trace *t, uint32_t k, char *buf, size_t n)
{
    const gp_track *tk = &t->tracks.v[k];
    if (tk->name)
        snprintf(buf, n, "%s (tid %lld)", gp_trace_s(t, tk->name), (long long)tk->tid);
    else
        snprintf(buf, n, "tid %lld", (long long)tk->tid);
    return buf;
}

void gp_memview_text(const gp_trace *t, const gp_memory *m, size_t top, FILE *f)
{
    char a[64], b[64], c[64], e[64];
    fprintf(f, "== %s: %zu memory events on %zu device(s)\n", gp_trace_s(t, t->meta.source),
            m->events, m->n);
    if (!m->n) {
        fprintf(f, "no [memory] events in this trace (record with profile_memory=True)\n");
        return;
    }
    for (size_t i = 0; i < m->n; i++) {
        const gp_mem_device *d = &m->dev[i];
        fprintf(f, "\n[%s] %llu allocations (%s), %llu frees (%s)%s\n", d->label,
                (unsigned long long)d->allocs, gp_fmt_bytes(a, sizeof a, (double)d->alloc_bytes),
                (unsigned long long)d->frees, gp_fmt_bytes(b, sizeof b, (double)d->free_bytes),
                d->totals_from_trace ? "" : " (allocated: running sum of the events)");
        fprintf(f, "  peak allocated  %s at %s\n",
                gp_fmt_bytes(a, sizeof a, (double)d->peak_allocated),
                gp_fmt_dur_auto(b, sizeof b, (double)d->peak_ts));
        if (d->reserved_valid) {
            fprintf(f, "  peak reserved   %s at %s\n",
                    gp_fmt_bytes(a, sizeof a, (double)d->peak_reserved),
                    gp_fmt_dur_auto(b, sizeof b, (double)d->peak_reserved_ts));
            fprintf(f,
                    "  fragmentation   (reserved - allocated) %s at the peak, max %s at %s, %s "
                    "at the end\n",
                    gp_fmt_bytes(a, sizeof a, (double)d->frag_at_peak),
                    gp_fmt_bytes(b, sizeof b, (double)d->frag_max),
                    gp_fmt_dur_auto(c, sizeof c, (double)d->frag_max_ts),
                    gp_fmt_bytes(e, sizeof e, (double)d->frag_end));
        } else {
            fprintf(f, "  reserved        N/A (the events carry no \"Total Reserved\")\n");
        }
        fprintf(f, "  growth          %s -> %s (%+.0f bytes over the trace)\n",
                gp_fmt_bytes(a, sizeof a, (double)d->start_allocated),
                gp_fmt_bytes(b, sizeof b, (double)d->end_allocated),
                (double)(d->end_allocated - d->start_allocated));
        if (d->nlive) {
            fprintf(f, "  live at the peak:\n");
            for (size_t j = 0; j < d->nlive; j++)
                fprintf(f, "    %s: %s\n", track_name(t, d->live[j].track, a, sizeof a),
                        d->live[j].stack);
        }
        fprintf(f, "  never freed     %llu allocations, %s\n", (unsigned long long)d->leak_count,
                gp_fmt_bytes(a, sizeof a, (double)d->leak_bytes));
        if (d->nleaks) {
            const char *h[] = {"Allocating operation", "Count", "Bytes"};
            gp_table *tb = gp_table_create(3, h, "lrr");
            for (size_t j = 0; j < d->nleaks && j < top; j++) {
                char cnt[32];
                snprintf(cnt, sizeof cnt, "%llu", (unsigned long long)d->leaks[j].count);
                const char *cells[] = {op_name(t, d->leaks[j].op), cnt,
                                       gp_fmt_bytes(a, sizeof a, (double)d->leaks[j].bytes)};
                gp_table_row(tb, cells);
            }
            gp_table_print(tb, f, 70);
            gp_table_destroy(tb);
            if (d->nleaks > top) fprintf(f, "  (%zu more groups)\n", d->nleaks - top);
        }
    }
}

static void abs_us(gp_sbuf *b, const gp_trace *t, int64_t ts)
{
    int64_t v = t->meta.t0_abs_ns + ts;
    gp_sbuf_printf(b, "\"%s%lld.%03lld\"", v < 0 ? "-" : "", (long long)llabs(v / 1000),
                   (long long)llabs(v % 1000));
}

static void points_json(const gp_mem_device *d, size_t max_points, gp_sbuf *b)
{
    size_t cap = max_points && max_points < d->n ? max_points : d->n;
    gp_mem_point *p = malloc((cap ? cap : 1) * sizeof *p);
    if (!p) return;
    size_t k = gp_memory_downsample(d, p, cap);
    gp_sbuf_putc(b, '[');
    for (size_t i = 0; i < k; i++) {
        gp_sbuf_printf(b, "%s[%lld,%lld,", i ? "," : "", (long long)p[i].ts,
                       (long long)p[i].allocated);
        if (p[i].reserved == GP_NONE)
            gp_sbuf_puts(b, "null]");
        else
            gp_sbuf_printf(b, "%lld]", (long long)p[i].reserved);
    }
    gp_sbuf_putc(b, ']');
    free(p);
}

void gp_memview_json(const gp_trace *t, const gp_memory *m, size_t max_points, gp_sbuf *b)
{
    gp_sbuf_puts(b, "{\"file\":");
    gp_json_str(b, gp_trace_s(t, t->meta.source));
    gp_sbuf_printf(b, ",\"events\":%zu,\"devices\":[", m->events);
    for (size_t i = 0; i < m->n; i++) {
        const gp_mem_device *d = &m->dev[i];
        if (i) gp_sbuf_putc(b, ',');
        gp_sbuf_puts(b, "{\"device\":");
        gp_json_str(b, d->label);
        gp_sbuf_printf(
            b,
            ",\"device_type\":%d,\"device_id\":%d,\"allocated_from_trace_totals\":%s,"
            "\"allocations\":%llu,\"frees\":%llu,\"allocated_bytes\":%lld,\"freed_bytes\":"
            "%lld,\"peak_allocated_bytes\":%lld,\"peak_ts_ns\":%lld,\"peak_time_abs_us\":",
            d->device_type, d->device_id, d->totals_from_trace ? "true" : "false",
            (unsigned long long)d->allocs, (unsigned long long)d->frees, (long long)d->alloc_bytes,
            (long long)d->free_bytes, (long long)d->peak_allocated, (long long)d->peak_ts);
        abs_us(b, t, d->peak_ts);
        if (d->reserved_valid)
            gp_sbuf_printf(b,
                           ",\"peak_reserved_bytes\":%lld,\"peak_reserved_ts_ns\":%lld,"
                           "\"fragmentation_at_peak_bytes\":%lld,\"fragmentation_max_bytes\":%lld,"
                           "\"fragmentation_max_ts_ns\":%lld,\"fragmentation_end_bytes\":%lld",
                           (long long)d->peak_reserved, (long long)d->peak_reserved_ts,
                           (long long)d->frag_at_peak, (long long)d->frag_max,
                           (long long)d->frag_max_ts, (long long)d->frag_end);
        else
            gp_sbuf_puts(b, ",\"peak_reserved_bytes\":null,\"fragmentation_at_peak_bytes\":null");
        gp_sbuf_printf(b,
                       ",\"start_allocated_bytes\":%lld,\"end_allocated_bytes\":%lld,"
                       "\"growth_bytes\":%lld,\"leaked_allocations\":%llu,\"leaked_bytes\":%lld",
                       (long long)d->start_allocated, (long long)d->end_allocated,
                       (long long)(d->end_allocated - d->start_allocated),
                       (unsigned long long)d->leak_count, (long long)d->leak_bytes);
        gp_sbuf_puts(b, ",\"live_at_peak\":[");
        for (size_t j = 0; j < d->nlive; j++) {
            char tn[256];
            gp_sbuf_puts(b, j ? ",{\"thread\":" : "{\"thread\":");
            gp_json_str(b, track_name(t, d->live[j].track, tn, sizeof tn));
            gp_sbuf_puts(b, ",\"stack\":");
            gp_json_str(b, d->live[j].stack);
            gp_sbuf_putc(b, '}');
        }
        gp_sbuf_puts(b, "],\"leaks_by_op\":[");
        for (size_t j = 0; j < d->nleaks; j++) {
            gp_sbuf_puts(b, j ? ",{\"op\":" : "{\"op\":");
            if (d->leaks[j].op == GP_NO_INDEX)
                gp_sbuf_puts(b, "null");
            else
                gp_json_str(b, gp_trace_s(t, d->leaks[j].op));
            gp_sbuf_printf(b, ",\"count\":%llu,\"bytes\":%lld}",
                           (unsigned long long)d->leaks[j].count, (long long)d->leaks[j].bytes);
        }
        gp_sbuf_puts(b, "],\"timeline\":");
        points_json(d, max_points, b);
        gp_sbuf_putc(b, '}');
    }
    gp_sbuf_puts(b, "]}");
}

void gp_memview_chart_data(const gp_memory *m, size_t max_points, gp_sbuf *b)
{
    gp_sbuf_puts(b, "{\"devices\":[");
    for (size_t i = 0; i < m->n; i++) {
        const gp_mem_device *d = &m->dev[i];
        if (i) gp_sbuf_putc(b, ',');
        gp_sbuf_puts(b, "{\"label\":");
        gp_json_str(b, d->label);
        gp_sbuf_printf(b, ",\"peak\":%lld,\"peak_ts\":%lld,\"pts\":", (long long)d->peak_allocated,
                       (long long)d->peak_ts);
        points_json(d, max_points, b);
        gp_sbuf_putc(b, '}');
    }
    gp_sbuf_puts(b, "]}");
}

void gp_memview_html(const gp_trace *t, const gp_memory *m, gp_sbuf *b)
{
    char title[512], a[64], c[64];
    const char *src = gp_trace_s(t, t->meta.source);
    const char *base = strrchr(src, '/');
    snprintf(title, sizeof title, "Memory: %s", base ? base + 1 : src);
    gp_html_page_begin(b, title, "memview.css");
    gp_sbuf_printf(b,
                   "<p class=\"mut\">%zu [memory] events on %zu device(s); times since the "
                   "trace start.</p>\n",
                   m->events, m->n);
    if (!m->n)
        gp_sbuf_puts(b, "<p id=\"mem-none\">No [memory] events in this trace (the PyTorch "
                        "profiler writes them with profile_memory=True).</p>\n");
    for (size_t i = 0; i < m->n; i++) {
        const gp_mem_device *d = &m->dev[i];
        gp_sbuf_puts(b, "<h2>Device ");
        gp_html_escape(b, d->label);
        gp_sbuf_printf(b,
                       "</h2>\n<div class=\"figs\"><div class=\"fig\"><div class=\"v\" "
                       "id=\"mem-peak-%zu\">",
                       i);
        gp_html_escape(b, gp_fmt_bytes(a, sizeof a, (double)d->peak_allocated));
        gp_sbuf_puts(b, "</div><div class=\"k\">peak allocated at ");
        gp_html_escape(b, gp_fmt_dur_auto(c, sizeof c, (double)d->peak_ts));
        gp_sbuf_puts(b, "</div></div><div class=\"fig\"><div class=\"v\">");
        gp_html_escape(b, d->reserved_valid ? gp_fmt_bytes(a, sizeof a, (double)d->peak_reserved)
                                            : "N/A");
        gp_sbuf_puts(b, "</div><div class=\"k\">peak reserved</div></div><div class=\"fig\"><div "
                        "class=\"v\">");
        gp_html_escape(b, d->reserved_valid ? gp_fmt_bytes(a, sizeof a, (double)d->frag_at_peak)
                                            : "N/A");
        gp_sbuf_puts(b, "</div><div class=\"k\">fragmentation at peak</div></div><div "
                        "class=\"fig\"><div class=\"v\">");
        gp_html_escape(b,
                       gp_fmt_bytes(a, sizeof a, (double)(d->end_allocated - d->start_allocated)));
        gp_sbuf_puts(b, "</div><div class=\"k\">growth start to end</div></div><div "
                        "class=\"fig\"><div class=\"v\">");
        gp_html_escape(b, gp_fmt_bytes(a, sizeof a, (double)d->leak_bytes));
        gp_sbuf_printf(b,
                       "</div><div class=\"k\">never freed (%llu allocations)</div></div>"
                       "</div>\n",
                       (unsigned long long)d->leak_count);
        if (d->nlive) {
            gp_sbuf_puts(b, "<p><b>Live at the peak:</b></p><ul class=\"live\">");
            for (size_t j = 0; j < d->nlive; j++) {
                char tn[256];
                gp_sbuf_puts(b, "<li>");
                gp_html_escape(b, track_name(t, d->live[j].track, tn, sizeof tn));
                gp_sbuf_puts(b, ": ");
                gp_html_escape(b, d->live[j].stack);
                gp_sbuf_puts(b, "</li>");
            }
            gp_sbuf_puts(b, "</ul>\n");
        }
        if (d->nleaks) {
            gp_sbuf_puts(b, "<table class=\"leaks sortable\"><thead><tr><th class=\"l\">Allocating "
                            "operation</th><th>Allocations never freed</th><th>Bytes</th></tr>"
                            "</thead><tbody>");
            for (size_t j = 0; j < d->nleaks && j < 50; j++) {
                gp_sbuf_puts(b, "<tr><td class=\"l\">");
                gp_html_escape(b, op_name(t, d->leaks[j].op));
                gp_sbuf_printf(b, "</td><td data-v=\"%llu\">%llu</td><td data-v=\"%lld\">",
                               (unsigned long long)d->leaks[j].count,
                               (unsigned long long)d->leaks[j].count, (long long)d->leaks[j].bytes);
                gp_html_escape(b, gp_fmt_bytes(a, sizeof a, (double)d->leaks[j].bytes));
                gp_sbuf_puts(b, "</td></tr>");
            }
            gp_sbuf_puts(b, "</tbody></table>\n");
        }
    }
    gp_sbuf_puts(b, "<h2>Memory over time</h2><div id=\"mem-charts\"></div>\n");
    gp_sbuf d = {0};
    gp_memview_chart_data(m, 4000, &d);
    gp_html_json(b, "mem-data", d.s ? d.s : "{}", d.n ? d.n : 2);
    gp_sbuf_free(&d);
    static const char *const js[] = {"memview.js", "memview_page.js", NULL};
    gp_html_page_end(b, js);
}

void gp_memview_json_doc(gp_trace *const *t, const gp_memory *m, size_t n, size_t max_points,
                         gp_sbuf *b)
{
    gp_sbuf_puts(b, "{\"traces\":[");
    for (size_t i = 0; i < n; i++) {
        if (i) gp_sbuf_putc(b, ',');
        gp_memview_json(t[i], &m[i], max_points, b);
    }
    gp_sbuf_puts(b, "]}\n");
}

void gp_memview_text_doc(gp_trace *const *t, const gp_memory *m, size_t n, size_t top, FILE *f)
{
    for (size_t i = 0; i < n; i++) {
        if (i) fputc('\n', f);
        gp_memview_text(t[i], &m[i], top, f);
    }
}
