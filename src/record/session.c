/* record/session.c: gp_session_begin/end (the seed's ProfileSession): one
 * result for a stretch of a program: wall, CPU and GPU time, tracked memory
 * and the device pool, top kernels and bottlenecks of the session (deltas of
 * the profiler's per-operation statistics), and the advice engine's
 * recommendations; printing, JSON and gp_session_compare. */
#include "analysis/session_result.h"
#include "report/session_result.h"
#include "core/afile.h"
#include "core/clock.h"
#include "core/sbuf.h"
#include "core/stats.h"
#include "core/table.h"
#include "record/recorder.h"
#include "store/store.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

struct gp_session {
    gp_profiler *p;
    char name[128];
    int64_t t0, cpu0, gpu0;
    uint64_t kc0;
    uint64_t clears0;     /* p->clears at the begin: a reset since voids the snapshot */
    gp_summary_row *rows; /* statistics at the begin */
    size_t nrows;
    gp_kernel_row *krows;
    size_t nk;
    gp_sess_peak mem; /* tracked bytes' peak since the begin, in p->open_sessions */
    int64_t win0;     /* the window of its advice: from here (ns since p->mono0) */
    gp_agg_row *aggs; /* p->tr->aggs at the begin (sketches not copied), by gp_rec_agg_cmp */
    size_t naggs;
};

/* p->tr->aggs, sorted, without sketches (caller holds p->mu); NULL with
 * *n = 0 when there are none, or on out of memory (-1 in *n). */
static gp_agg_row *aggs_copy(gp_profiler *p, size_t *n)
{
    *n = p->tr->aggs.n;
    if (!*n) return NULL;
    gp_agg_row *v = malloc(*n * sizeof *v);
    if (!v) {
        *n = (size_t)-1;
        return NULL;
    }
    memcpy(v, p->tr->aggs.v, *n * sizeof *v);
    for (size_t i = 0; i < *n; i++) v[i].sketch = NULL;
    qsort(v, *n, sizeof *v, gp_rec_agg_cmp);
    return v;
}

/* The session's share of the aggregated rows: the rows now (a, sorted,
 * modified in place) less those at the begin (b), as rows_delta does for
 * the summary rows: counts and times subtracted; the longest call is the
 * row's when it rose in the session (or the row is new), else unknown and
 * taken as the session's mean, a lower bound of it (the advice rules read
 * it as "at least"); percentiles and per-entry sums are not kept. Returns
 * the number of rows with calls in the session, moved to the front. */
static size_t aggs_delta(gp_agg_row *a, size_t n, const gp_agg_row *b, size_t nb)
{
    size_t w = 0, j = 0;
    for (size_t i = 0; i < n; i++) {
        gp_agg_row r = a[i];
        while (j < nb && gp_rec_agg_cmp(&b[j], &r) < 0) j++;
        const gp_agg_row *o = j < nb && gp_rec_agg_cmp(&b[j], &r) == 0 ? &b[j] : NULL;
        memset(&r.em, 0, sizeof r.em);
        r.m2 = 0;
        if (o && o->count <= r.count) {
            r.count -= o->count;
            r.total_ns -= o->total_ns;
            r.self_ns -= o->self_ns;
            if (r.bytes >= 0 && o->bytes >= 0) r.bytes -= o->bytes;
            if (r.count && o->count) {
                int64_t mean = r.total_ns / (int64_t)r.count;
                if (r.max_ns <= o->max_ns) r.max_ns = mean;
                if (r.min_ns >= o->min_ns) r.min_ns = mean;
            }
        }
        if (r.count) a[w++] = r;
    }
    return w;
}

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
    /* read before the snapshot: a reset between the two then counts as one
     * in the session (the session counts from it), never the other way */
    pthread_mutex_lock(&p->mu);
    s->clears0 = p->clears;
    pthread_mutex_unlock(&p->mu);
    /* timings still pending complete before the snapshot, as they do before
     * kernel_count is read below: a timing of before the session is then
     * out of both its kernels and its launches (before, one that completed
     * in the wait below counted in the session's kernels and not in its
     * launches) */
    gp_kernels_resolve(p, 1);
    s->win0 = gp_clock_mono_ns() - p->mono0;
    if (gp_summary_rows(p, &s->rows, &s->nrows) || gp_kernel_stats(p, &s->krows, &s->nk)) {
        gp_summary_rows_free(s->rows, s->nrows);
        free(s);
        return NULL;
    }
    pthread_mutex_lock(&p->mu);
    s->aggs = aggs_copy(p, &s->naggs); /* as the rows above left them */
    if (s->naggs == (size_t)-1) {
        pthread_mutex_unlock(&p->mu);
        gp_summary_rows_free(s->rows, s->nrows);
        gp_kernel_rows_free(s->krows, s->nk);
        free(s);
        return NULL;
    }
    gp_cuda_resolve_(p, 1);
    gp_cl_resolve_(p, 1);
    s->gpu0 = p->kernel_ns_total;
    s->kc0 = p->kernel_count;
    s->mem.peak = p->mem_cur;
    s->mem.next = p->open_sessions; /* sessions may nest: each has its own peak */
    p->open_sessions = &s->mem;
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

/* Turns end-of-session rows into the session's share: counts, times and
 * per-entry metrics minus those at the begin. Min, max, std, percentiles
 * and the memory peak are the row's own only when the operation had not run
 * before the session; otherwise they are unknown (min/max/peak -1, the
 * others NaN). Rows without calls in the session are removed. A row with
 * fewer calls than at the begin (results cleared since) is taken whole.
 * Returns the new count. */
static size_t rows_delta(gp_summary_row *r, size_t n, const gp_summary_row *r0, size_t n0)
{
    size_t w = 0;
    for (size_t i = 0; i < n; i++) {
        const gp_summary_row *b = find_row(r0, n0, &r[i]);
        if (b && b->count <= r[i].count) {
            r[i].count -= b->count;
            r[i].total_ns -= b->total_ns;
            r[i].self_ns -= b->self_ns;
            r[i].aggregated -= b->aggregated < r[i].aggregated ? b->aggregated : r[i].aggregated;
            if (r[i].bytes >= 0 && b->bytes >= 0) r[i].bytes -= b->bytes;
            r[i].gpu_timers -= b->gpu_timers;
            r[i].gpu_ns -= b->gpu_ns;
            r[i].xfers -= b->xfers;
            r[i].xfer_ns -= b->xfer_ns;
            r[i].xfer_bytes -= b->xfer_bytes;
            r[i].bandwidth_Bps =
                r[i].xfer_ns > 0 ? (double)r[i].xfer_bytes * 1e9 / (double)r[i].xfer_ns : NAN;
            r[i].allocs -= b->allocs;
            r[i].frees -= b->frees;
            r[i].alloc_bytes -= b->alloc_bytes;
            r[i].freed_bytes -= b->freed_bytes;
            /* the peak is the highest over all the row's ranges: the
             * session's own only when none before it allocated */
            if (!r[i].allocs || b->allocs) r[i].peak_bytes = -1;
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
        if (b && b->count <= r[i].count) {
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

int gp_session_end(gp_session *s, gp_session_result *out)
{
    if (!s || !out) return GP_EINVAL;
    gp_profiler *p = s->p;
    memset(out, 0, sizeof *out);
    gp_session_facts f = {0};
    f.name = s->name;
    f.total_ns = gp_clock_mono_ns() - s->t0;
    f.cpu_ns = cpu_ns() - s->cpu0;
    gp_summary_row *rows = NULL;
    gp_kernel_row *krows = NULL;
    size_t nrows = 0, nk = 0;
    /* as at the begin: the timings of the session all complete before its
     * rows are taken, so that its kernels hold what its launches count */
    gp_kernels_resolve(p, 1);
    int rc = gp_summary_rows(p, &rows, &nrows);
    if (!rc) rc = gp_kernel_stats(p, &krows, &nk);
    pthread_mutex_lock(&p->mu);
    int cleared = p->clears != s->clears0; /* gp_profiler_reset in the session */
    pthread_mutex_unlock(&p->mu);
    if (!rc) { /* after a reset everything left was recorded in the session */
        nrows = rows_delta(rows, nrows, s->rows, cleared ? 0 : s->nrows);
        nk = krows_delta(krows, nk, s->krows, cleared ? 0 : s->nk);
    }
    gp_mem_pool pool;
    if (gp_mem_pool_info(p, &pool) == 0 && pool.total_valid && pool.free_valid) {
        f.reserved_valid = 1;
        f.mem_reserved_bytes = pool.total_bytes - pool.free_bytes;
    }
    pthread_mutex_lock(&p->mu);
    gp_cuda_resolve_(p, 1);
    gp_cl_resolve_(p, 1);
    cleared |= p->clears != s->clears0 || p->kernel_count < s->kc0;
    f.kernel_launches = p->kernel_count - (cleared ? 0 : s->kc0);
    f.gpu_valid = f.kernel_launches > 0;
    f.gpu_ns = p->kernel_ns_total - (cleared ? 0 : s->gpu0);
    for (gp_sess_peak **q = &p->open_sessions; *q; q = &(*q)->next)
        if (*q == &s->mem) {
            *q = s->mem.next;
            break;
        }
    f.mem_valid = p->mem.n > 0 || s->mem.peak > 0;
    f.mem_peak_bytes = s->mem.peak;
    f.mem_allocated_bytes = p->mem_cur;
    /* the one computation of a result (analysis/session_result.c, also
     * `gpuprof run`'s): ranking, top rows, and recommendations on the
     * session's part of p's trace: the events that ended in it and its
     * share of the aggregated rows (before, the advice covered everything
     * the profiler held, what ran before the session too) */
    gp_trace view;
    size_t nd = 0;
    gp_agg_row *delta = NULL;
    if (!rc) {
        delta = aggs_copy(p, &nd);
        if (nd == (size_t)-1) rc = GP_ENOMEM;
    }
    /* the window: from the begin's snapshot to now (a reset in the session
     * left only events of after it: in the window too); its length is the
     * span the rules' shares are of */
    if (!rc && gp_trace_view_window(p->tr, s->win0, gp_clock_mono_ns() - p->mono0, &view))
        rc = GP_ENOMEM;
    if (!rc) {
        view.aggs.v = delta;
        view.aggs.n = aggs_delta(delta, nd, s->aggs, cleared ? 0 : s->naggs);
        rc = gp_session_build(out, &f, rows, nrows, krows, nk, &view);
        memset(&view.aggs, 0, sizeof view.aggs);
        gp_trace_view_free(&view);
    } else {
        gp_summary_rows_free(rows, nrows);
        gp_kernel_rows_free(krows, nk);
    }
    pthread_mutex_unlock(&p->mu);
    if (!rc) { /* kept for the "sessions" of gp_export_json */
        gp_sbuf b = {0};
        gp_report_session_result_json(&b, out);
        char *txt = strdup(gp_sbuf_cstr(&b));
        gp_sbuf_free(&b);
        pthread_mutex_lock(&p->mu);
        if (!txt || GP_VEC_PUSH(p->sessions, txt)) {
            free(txt);
            rc = GP_ENOMEM;
        }
        pthread_mutex_unlock(&p->mu);
    }
    free(delta);
    gp_summary_rows_free(s->rows, s->nrows);
    gp_kernel_rows_free(s->krows, s->nk);
    free(s->aggs);
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

void gp_session_result_print(const gp_session_result *r, FILE *f)
{
    gp_report_session_result_text(f, r);
}

int gp_session_result_json(const gp_session_result *r, const char *path)
{
    gp_sbuf b = {0};
    gp_report_session_result_json(&b, r);
    gp_sbuf_putc(&b, '\n');
    gp_xfsz_guard g; /* a write past ulimit -f fails instead of ending the program */
    gp_xfsz_block(&g);
    gp_afile af; /* replaced whole or not at all */
    int rc = 0;
    if (gp_afile_open(&af, path))
        rc = GP_EIO;
    else if (gp_afile_close(&af, gp_sbuf_write(&b, af.f) != 0))
        rc = GP_EIO;
    gp_xfsz_unblock(&g);
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
