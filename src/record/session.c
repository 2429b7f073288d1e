/* record/session.c: gp_session_begin/end (the seed's ProfileSession): one
 * result for a stretch of a program: wall, CPU and GPU time, tracked memory
 * and the device pool, top kernels and bottlenecks of the session (deltas of
 * the profiler's per-operation statistics), and the advice engine's
 * recommendations; printing, JSON and gp_session_compare. */
#include "analysis/advise.h"
#include "core/clock.h"
#include "core/sbuf.h"
#include "core/stats.h"
#include "core/table.h"
#include "record/recorder.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#define TOP 10

struct gp_session {
    gp_profiler *p;
    char name[128];
    int64_t t0, cpu0, gpu0;
    uint64_t kc0;
    gp_summary_row *rows; /* statistics at the begin */
    size_t nrows;
    gp_kernel_row *krows;
    size_t nk;
};

static int64_t cpu_ns(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ((int64_t)ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000 +
           ((int64_t)ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000;
}

gp_session *gp_session_begin(gp_profiler *p, const char *name)
{
    if (!p) return NULL;
    gp_session *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->p = p;
    snprintf(s->name, sizeof s->name, "%s", name ? name : "session");
    if (gp_summary_rows(p, &s->rows, &s->nrows) || gp_kernel_stats(p, &s->krows, &s->nk)) {
        gp_summary_rows_free(s->rows, s->nrows);
        free(s);
        return NULL;
    }
    pthread_mutex_lock(&p->mu);
    gp_cuda_resolve_(p, 1);
    gp_cl_resolve_(p, 1);
    s->gpu0 = p->kernel_ns_total;
    s->kc0 = p->kernel_count;
    p->mem_session_peak = p->mem_cur;
    pthread_mutex_unlock(&p->mu);
    s->cpu0 = cpu_ns();
    s->t0 = gp_clock_mono_ns();
    return s;
}

static const gp_summary_row *find_row(const gp_summary_row *r, size_t n, const gp_summary_row *k)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(r[i].name, k->name) && !strcmp(r[i].group, k->group)) return &r[i];
    return NULL;
}

static const gp_kernel_row *find_krow(const gp_kernel_row *r, size_t n, const gp_kernel_row *k)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(r[i].name, k->name) && r[i].backend == k->backend) return &r[i];
    return NULL;
}

static int cmp_self(const void *a, const void *b)
{
    const gp_summary_row *x = a, *y = b;
    if (x->self_ns != y->self_ns) return x->self_ns < y->self_ns ? 1 : -1;
    return strcmp(x->name, y->name);
}

static int cmp_ktotal(const void *a, const void *b)
{
    const gp_kernel_row *x = a, *y = b;
    if (x->total_ns != y->total_ns) return x->total_ns < y->total_ns ? 1 : -1;
    return strcmp(x->name, y->name);
}

/* Turns end-of-session rows into the session's share: counts and times
 * minus those at the begin. Min, max, std and percentiles are the row's own
 * only when the operation had not run before the session; otherwise they
 * are unknown (min/max -1, the others NaN). Rows without calls in the
 * session are removed. Returns the new count. */
static size_t rows_delta(gp_summary_row *r, size_t n, const gp_summary_row *r0, size_t n0)
{
    size_t w = 0;
    for (size_t i = 0; i < n; i++) {
        const gp_summary_row *b = find_row(r0, n0, &r[i]);
        if (b) {
            r[i].count -= b->count;
            r[i].total_ns -= b->total_ns;
            r[i].self_ns -= b->self_ns;
            r[i].aggregated -= b->aggregated < r[i].aggregated ? b->aggregated : r[i].aggregated;
            if (r[i].bytes >= 0 && b->bytes >= 0) r[i].bytes -= b->bytes;
            if (b->count) {
                r[i].min_ns = r[i].max_ns = -1;
                r[i].std_ns = r[i].p50_ns = r[i].p95_ns = r[i].p99_ns = NAN;
            }
        }
        if (r[i].count == 0) {
            free(r[i].name);
            continue;
        }
        r[i].mean_ns = (double)r[i].total_ns / (double)r[i].count;
        r[w++] = r[i];
    }
    return w;
}

static size_t krows_delta(gp_kernel_row *r, size_t n, const gp_kernel_row *r0, size_t n0)
{
    size_t w = 0;
    for (size_t i = 0; i < n; i++) {
        const gp_kernel_row *b = find_krow(r0, n0, &r[i]);
        if (b) {
            r[i].count -= b->count;
            r[i].total_ns -= b->total_ns;
            if (b->count) {
                r[i].min_ns = r[i].max_ns = -1;
                r[i].std_ns = NAN;
            }
        }
        if (r[i].count == 0) {
            free(r[i].name);
            continue;
        }
        r[i].mean_ns = (double)r[i].total_ns / (double)r[i].count;
        r[w++] = r[i];
    }
    return w;
}

/* Advice engine findings on the profiler's data (caller holds p->mu). */
static int recommend(gp_profiler *p, gp_session_result *out)
{
    gp_advice_list l;
    if (gp_advise(p->tr, NULL, &l)) return GP_ENOMEM;
    out->recommendations = calloc(l.n + 1, sizeof *out->recommendations);
    if (!out->recommendations) {
        gp_advice_list_free(&l);
        return GP_ENOMEM;
    }
    for (size_t i = 0; i < l.n; i++) {
        const gp_advice *a = &l.v[i];
        gp_sbuf b = {0};
        gp_sbuf_printf(&b, "[%s] %s: %s; %s", gp_priority_name(a->priority), a->rule->id,
                       a->finding, a->rule->hint);
        out->recommendations[out->nrecommendations++] = strdup(gp_sbuf_cstr(&b));
        gp_sbuf_free(&b);
    }
    gp_advice_list_free(&l);
    return 0;
}

static void session_json(const gp_session_result *r, gp_sbuf *bp);

int gp_session_end(gp_session *s, gp_session_result *out)
{
    if (!s || !out) return GP_EINVAL;
    gp_profiler *p = s->p;
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "%s", s->name);
    out->total_ns = gp_clock_mono_ns() - s->t0;
    out->cpu_ns = cpu_ns() - s->cpu0;
    int rc = gp_summary_rows(p, &out->bottlenecks, &out->nbottlenecks);
    if (!rc) rc = gp_kernel_stats(p, &out->kernels, &out->nkernels);
    if (!rc) {
        out->nbottlenecks = rows_delta(out->bottlenecks, out->nbottlenecks, s->rows, s->nrows);
        qsort(out->bottlenecks, out->nbottlenecks, sizeof *out->bottlenecks, cmp_self);
        for (size_t i = TOP; i < out->nbottlenecks; i++) free(out->bottlenecks[i].name);
        if (out->nbottlenecks > TOP) out->nbottlenecks = TOP;
        out->nkernels = krows_delta(out->kernels, out->nkernels, s->krows, s->nk);
        qsort(out->kernels, out->nkernels, sizeof *out->kernels, cmp_ktotal);
        for (size_t i = TOP; i < out->nkernels; i++) free(out->kernels[i].name);
        if (out->nkernels > TOP) out->nkernels = TOP;
    }
    pthread_mutex_lock(&p->mu);
    gp_cuda_resolve_(p, 1);
    gp_cl_resolve_(p, 1);
    out->kernel_launches = p->kernel_count - s->kc0;
    out->gpu_valid = out->kernel_launches > 0;
    out->gpu_ns = out->gpu_valid ? p->kernel_ns_total - s->gpu0 : 0;
    out->mem_valid = p->mem.n > 0 || p->mem_session_peak > 0;
    out->mem_peak_bytes = out->mem_valid ? p->mem_session_peak : 0;
    out->mem_allocated_bytes = out->mem_valid ? p->mem_cur : 0;
    if (!rc) rc = recommend(p, out);
    pthread_mutex_unlock(&p->mu);
    gp_mem_pool pool;
    if (gp_mem_pool_info(p, &pool) == 0 && pool.total_valid && pool.free_valid) {
        out->reserved_valid = 1;
        out->mem_reserved_bytes = pool.total_bytes - pool.free_bytes;
    }
    if (!rc) { /* kept for the "sessions" of gp_export_json */
        gp_sbuf b = {0};
        session_json(out, &b);
        char *txt = strdup(gp_sbuf_cstr(&b));
        gp_sbuf_free(&b);
        pthread_mutex_lock(&p->mu);
        if (!txt || GP_VEC_PUSH(p->sessions, txt)) {
            free(txt);
            rc = GP_ENOMEM;
        }
        pthread_mutex_unlock(&p->mu);
    }
    gp_summary_rows_free(s->rows, s->nrows);
    gp_kernel_rows_free(s->krows, s->nk);
    free(s);
    if (rc) gp_session_result_free(out);
    return rc;
}

void gp_session_result_free(gp_session_result *r)
{
    if (!r) return;
    gp_summary_rows_free(r->bottlenecks, r->nbottlenecks);
    gp_kernel_rows_free(r->kernels, r->nkernels);
    for (size_t i = 0; i < r->nrecommendations; i++) free(r->recommendations[i]);
    free(r->recommendations);
    memset(r, 0, sizeof *r);
}

static const char *dur(char *buf, size_t n, double ns)
{
    return isnan(ns) || ns < 0 ? "n/a" : gp_fmt_dur_auto(buf, n, ns);
}

void gp_session_result_print(const gp_session_result *r, FILE *f)
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
        fprintf(f, "  tracked memory: peak %s, allocated at end %s", a, b);
    } else {
        fprintf(f, "  tracked memory: n/a (no gp_mem_track)");
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

/* The result as one JSON object (no newline), for gp_session_result_json and
 * the "sessions" of gp_export_json. */
static void session_json(const gp_session_result *r, gp_sbuf *bp)
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

int gp_session_result_json(const gp_session_result *r, const char *path)
{
    gp_sbuf b = {0};
    session_json(r, &b);
    gp_sbuf_putc(&b, '\n');
    FILE *f = fopen(path, "w");
    int rc = 0;
    if (!f || gp_sbuf_write(&b, f) != 0) rc = GP_EIO;
    if (f && fclose(f) != 0) rc = GP_EIO;
    gp_sbuf_free(&b);
    return rc;
}

int gp_session_compare(const gp_session_result *base, const gp_session_result *cur,
                       gp_session_cmp *out)
{
    memset(out, 0, sizeof *out);
    if (!base || !cur || base->total_ns <= 0 || cur->total_ns <= 0) return GP_EINVAL;
    out->speedup = (double)base->total_ns / (double)cur->total_ns;
    if (base->cpu_ns > 0 && cur->cpu_ns > 0) {
        out->cpu_valid = 1;
        out->cpu_speedup = (double)base->cpu_ns / (double)cur->cpu_ns;
    }
    if (base->gpu_valid && cur->gpu_valid && base->gpu_ns > 0 && cur->gpu_ns > 0) {
        out->gpu_valid = 1;
        out->gpu_speedup = (double)base->gpu_ns / (double)cur->gpu_ns;
    }
    if (base->mem_valid && cur->mem_valid) {
        out->mem_valid = 1;
        out->mem_peak_diff_bytes = cur->mem_peak_bytes - base->mem_peak_bytes;
    }
    return 0;
}
