/* report/session_result.c: see session_result.h. */
#include "report/session_result.h"
#include "core/table.h"
#include <math.h>

static const char *dur(char *buf, size_t n, double ns)
{
    return isnan(ns) || ns < 0 ? "n/a" : gp_fmt_dur_auto(buf, n, ns);
}

void gp_report_session_result_text(FILE *f, const gp_session_result *r)
{
    char a[64], b[64], c[64];
    fprintf(f, "Session %s\n", r->name);
    fprintf(f, "  total time %s, CPU time %s, GPU time %s", dur(a, sizeof a, (double)r->total_ns),
            dur(b, sizeof b, (double)r->cpu_ns),
            r->gpu_valid ? dur(c, sizeof c, (double)r->gpu_ns) : "n/a (no kernel timings)");
    if (r->gpu_valid)
        fprintf(f, " over %llu kernel timings", (unsigned long long)r->kernel_launches);
    fprintf(f, "\n");
    if (r->mem_valid) {
        gp_fmt_bytes(a, sizeof a, (double)r->mem_peak_bytes);
        gp_fmt_bytes(b, sizeof b, (double)r->mem_allocated_bytes);
        fprintf(f, "  memory: peak %s, allocated at end %s", a, b);
    } else {
        fprintf(f, "  memory: n/a (no tracked buffer, no device allocation recorded)");
    }
    if (r->reserved_valid) {
        gp_fmt_bytes(a, sizeof a, (double)r->mem_reserved_bytes);
        fprintf(f, ", device memory in use %s", a);
    }
    fprintf(f, "\n");
    if (r->nkernels) fprintf(f, "  top kernels (device time):\n");
    for (size_t i = 0; i < r->nkernels; i++)
        fprintf(f, "    %-40s %8llu calls %12s\n", r->kernels[i].name,
                (unsigned long long)r->kernels[i].count,
                dur(a, sizeof a, (double)r->kernels[i].total_ns));
    if (r->nbottlenecks) fprintf(f, "  bottlenecks (self time, inclusive beside):\n");
    for (size_t i = 0; i < r->nbottlenecks; i++) {
        const gp_summary_row *w = &r->bottlenecks[i];
        fprintf(f, "    %-40s %8llu calls self %12s total %12s\n", w->name,
                (unsigned long long)w->count, dur(a, sizeof a, (double)w->self_ns),
                dur(b, sizeof b, (double)w->total_ns));
    }
    if (r->nrecommendations) fprintf(f, "  recommendations:\n");
    for (size_t i = 0; i < r->nrecommendations; i++)
        fprintf(f, "    - %s\n", r->recommendations[i]);
}

static void num_or_null(gp_sbuf *b, const char *key, double v)
{
    gp_json_key(b, key, 1);
    if (isnan(v) || v < 0)
        gp_sbuf_puts(b, "null");
    else
        gp_json_num(b, v);
}

void gp_report_session_result_json(gp_sbuf *bp, const gp_session_result *r)
{
    gp_sbuf b = *bp;
    gp_sbuf_puts(&b, "{\"schema\":\"gpuprof-session-1\",\"name\":");
    gp_json_str(&b, r->name);
    gp_sbuf_printf(&b, ",\"total_ns\":%lld,\"cpu_ns\":%lld", (long long)r->total_ns,
                   (long long)r->cpu_ns);
    gp_sbuf_puts(&b, ",\"gpu_ns\":");
    if (r->gpu_valid)
        gp_json_int(&b, r->gpu_ns);
    else
        gp_sbuf_puts(&b, "null");
    gp_sbuf_printf(&b, ",\"kernel_launches\":%llu", (unsigned long long)r->kernel_launches);
    gp_sbuf_puts(&b, ",\"mem_peak_bytes\":");
    if (r->mem_valid)
        gp_sbuf_printf(&b, "%lld,\"mem_allocated_bytes\":%lld", (long long)r->mem_peak_bytes,
                       (long long)r->mem_allocated_bytes);
    else
        gp_sbuf_puts(&b, "null,\"mem_allocated_bytes\":null");
    gp_sbuf_puts(&b, ",\"mem_reserved_bytes\":");
    if (r->reserved_valid)
        gp_json_int(&b, r->mem_reserved_bytes);
    else
        gp_sbuf_puts(&b, "null");
    gp_sbuf_puts(&b, ",\"kernels\":[");
    for (size_t i = 0; i < r->nkernels; i++) {
        const gp_kernel_row *k = &r->kernels[i];
        gp_sbuf_puts(&b, i ? ",{\"name\":" : "{\"name\":");
        gp_json_str(&b, k->name);
        gp_sbuf_printf(&b, ",\"count\":%llu,\"total_ns\":%lld", (unsigned long long)k->count,
                       (long long)k->total_ns);
        num_or_null(&b, "mean_ns", k->mean_ns);
        num_or_null(&b, "min_ns", (double)k->min_ns);
        num_or_null(&b, "max_ns", (double)k->max_ns);
        gp_sbuf_putc(&b, '}');
    }
    gp_sbuf_puts(&b, "],\"bottlenecks\":[");
    for (size_t i = 0; i < r->nbottlenecks; i++) {
        const gp_summary_row *w = &r->bottlenecks[i];
        gp_sbuf_puts(&b, i ? ",{\"name\":" : "{\"name\":");
        gp_json_str(&b, w->name);
        gp_sbuf_printf(&b, ",\"count\":%llu,\"self_ns\":%lld,\"total_ns\":%lld",
                       (unsigned long long)w->count, (long long)w->self_ns, (long long)w->total_ns);
        num_or_null(&b, "mean_ns", w->mean_ns);
        num_or_null(&b, "min_ns", (double)w->min_ns);
        num_or_null(&b, "max_ns", (double)w->max_ns);
        num_or_null(&b, "p50_ns", w->p50_ns);
        num_or_null(&b, "p95_ns", w->p95_ns);
        num_or_null(&b, "p99_ns", w->p99_ns);
        if (w->bytes >= 0) gp_sbuf_printf(&b, ",\"bytes\":%lld", (long long)w->bytes);
        gp_sbuf_putc(&b, '}');
    }
    gp_sbuf_puts(&b, "],\"recommendations\":[");
    for (size_t i = 0; i < r->nrecommendations; i++) {
        if (i) gp_sbuf_putc(&b, ',');
        gp_json_str(&b, r->recommendations[i]);
    }
    gp_sbuf_puts(&b, "]}");
    *bp = b;
}
