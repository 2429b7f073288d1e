/* record/memtrack.c: the memory tracker (seed 003 MemoryTracker): tracked
 * buffers with shape and dtype, current and peak totals, device pool facts,
 * the memory report and the leak report. */
#include "core/sbuf.h"
#include "core/table.h"
#include "record/recorder.h"
#include <stdlib.h>
#include <string.h>

/* A [memory] event of the trace model (allocation: bytes > 0, free: < 0)
 * with the tracked total after it, so that `gpuprof memory`, the report's
 * memory chart and the large-memory rule see the tracker's buffers in an
 * export. The device is not known to the tracker: device type and id stay
 * absent (views label it "tracked"). Caller holds p->mu; ec is the call's
 * context (gp_rec_entry_ctx). */
static void mem_event(gp_profiler *p, const void *ptr, int64_t bytes, int64_t ts,
                      const gp_entry_ctx *ec, int new_peak)
{
    /* beyond the sink's cap: counted, not kept, except an event that raises
     * the peak (so that views of the events show the tracker's peak; a
     * steady program makes none) */
    if (p->samples_max && p->tr->mem_events.n >= p->samples_max && !new_peak) {
        p->values_dropped++;
        return;
    }
    /* on the calling thread's track (the ranges it is made in enclose it),
     * the process's for a thread that never recorded a range */
    uint32_t trk = ec->thr ? ec->thr - 1 : ec->b ? gp_rec_thread_track(p, ec->b) : p->proc_track;
    if (trk == GP_NO_INDEX) trk = p->proc_track;
    gp_mem_event e = {ts,     (uint64_t)(uintptr_t)ptr, bytes, p->mem_cur, GP_NONE, trk, GP_NONE,
                      GP_NONE};
    if (GP_VEC_PUSH(p->tr->mem_events, e) == 0) {
        if (p->tr->slices.n == 0 && p->tr->counters.n == 0 && p->tr->mem_events.n == 1)
            p->tr->t_begin = p->tr->t_end = ts;
        if (ts < p->tr->t_begin) p->tr->t_begin = ts;
        if (ts > p->tr->t_end) p->tr->t_end = ts;
    }
}

static void mem_sample(gp_profiler *p, int new_peak)
{
    if (p->mem_series == UINT32_MAX)
        p->mem_series = gp_trace_str(p->tr, "memory.tracked_bytes", 20);
    gp_rec_counter_sample(p, p->mem_series, gp_rec_host_ns(p), (double)p->mem_cur, new_peak);
    /* the stream sink writes samples as the drain runs, and a program that
     * only tracks buffers (no range) has no drain: written here then */
    if (p->stream && p->tr->counters.n + p->tr->mem_events.n >= 8192) gp_stream_flush_(p);
}

/* A program that allocates at new addresses for hours would leave a
 * tombstone per address ever untracked in mem_of: once they outnumber the
 * live buffers, the index is built again from the live ones (caller holds
 * p->mu; out of memory: the old index stays). */
static void mem_index_compact(gp_profiler *p)
{
    if (p->mem_dead < 4096 || p->mem_dead < 4 * p->mem.n) return;
    gp_u64map m = {0};
    for (size_t i = 0; i < p->mem.n; i++)
        if (gp_u64map_put(&m, (uint64_t)(uintptr_t)p->mem.v[i].ptr, i)) {
            gp_u64map_free(&m);
            return;
        }
    gp_u64map_free(&p->mem_of);
    p->mem_of = m;
    p->mem_dead = 0;
}

int gp_mem_track(gp_profiler *p, const char *name, const void *ptr, size_t bytes,
                 const int64_t *shape, int ndim, const char *dtype)
{
    if (!p || !ptr || ndim < 0 || (ndim > 0 && !shape) || bytes > (size_t)INT64_MAX)
        return GP_EINVAL;
    int rc = 0;
    gp_entry_ctx ec; /* per-entry metrics: the ranges open on this thread */
    gp_rec_entry_ctx(p, &ec);
    pthread_mutex_lock(&p->mu);
    uint64_t idx;
    int was_dead = 0;
    if (gp_u64map_get(&p->mem_of, (uint64_t)(uintptr_t)ptr, &idx)) {
        if (idx != UINT64_MAX) {
            gp_rec_seterr(p, "gp_mem_track(%s): %p is already tracked as '%s'", name ? name : "",
                          ptr, p->mem.v[idx].name);
            rc = GP_EINVAL;
            goto out;
        }
        was_dead = 1; /* an address untracked before: its slot is reused */
    }
    gp_membuf m = {0};
    m.name = strdup(name ? name : "");
    m.dtype = strdup(dtype ? dtype : "");
    m.shape = malloc(((size_t)ndim + 1) * sizeof *m.shape);
    if (!m.name || !m.dtype || !m.shape) goto oom;
    if (ndim) memcpy(m.shape, shape, (size_t)ndim * sizeof *shape);
    m.ndim = ndim;
    m.bytes = (int64_t)bytes;
    m.ptr = ptr;
    m.ts = gp_rec_host_ns(p);
    if (GP_VEC_PUSH(p->mem, m)) goto oom;
    if (gp_u64map_put(&p->mem_of, (uint64_t)(uintptr_t)ptr, p->mem.n - 1)) {
        p->mem.n--;
        goto oom;
    }
    if (was_dead) p->mem_dead--;
    p->mem_cur += m.bytes;
    int new_peak = p->mem_cur > p->mem_peak;
    if (new_peak) p->mem_peak = p->mem_cur;
    if (p->mem_cur > p->mem_window_peak) p->mem_window_peak = p->mem_cur;
    for (gp_sess_peak *q = p->open_sessions; q; q = q->next) /* open sessions' peaks */
        if (p->mem_cur > q->peak) q->peak = p->mem_cur;
    mem_event(p, ptr, m.bytes, m.ts, &ec, new_peak);
    mem_sample(p, new_peak);
    gp_rec_entry_memop(p, &ec, m.bytes, p->mem_cur);
    goto out;
oom:
    free(m.name);
    free(m.dtype);
    free(m.shape);
    rc = GP_ENOMEM;
out:
    pthread_mutex_unlock(&p->mu);
    gp_rec_entry_ctx_free(&ec);
    return rc;
}

int gp_mem_untrack(gp_profiler *p, const void *ptr)
{
    if (!p || !ptr) return GP_EINVAL;
    int rc = 0;
    gp_entry_ctx ec;
    gp_rec_entry_ctx(p, &ec);
    pthread_mutex_lock(&p->mu);
    uint64_t idx;
    if (!gp_u64map_get(&p->mem_of, (uint64_t)(uintptr_t)ptr, &idx) || idx == UINT64_MAX) {
        gp_rec_seterr(p, "gp_mem_untrack: %p is not tracked", ptr);
        rc = GP_ENOTFOUND;
        goto out;
    }
    gp_membuf *m = &p->mem.v[idx];
    int64_t freed = m->bytes;
    p->mem_cur -= m->bytes;
    mem_event(p, ptr, -m->bytes, gp_rec_host_ns(p), &ec, 0);
    free(m->name);
    free(m->dtype);
    free(m->shape);
    gp_u64map_put(&p->mem_of, (uint64_t)(uintptr_t)ptr, UINT64_MAX); /* tombstone */
    p->mem_dead++;
    size_t last = p->mem.n - 1;
    if (idx != last) {
        p->mem.v[idx] = p->mem.v[last];
        gp_u64map_put(&p->mem_of, (uint64_t)(uintptr_t)p->mem.v[idx].ptr, idx);
    }
    p->mem.n--;
    mem_index_compact(p);
    mem_sample(p, 0);
    gp_rec_entry_memop(p, &ec, -freed, p->mem_cur);
out:
    pthread_mutex_unlock(&p->mu);
    gp_rec_entry_ctx_free(&ec);
    return rc;
}

int64_t gp_mem_current(gp_profiler *p)
{
    pthread_mutex_lock(&p->mu);
    int64_t v = p->mem_cur;
    pthread_mutex_unlock(&p->mu);
    return v;
}

int64_t gp_mem_peak(gp_profiler *p)
{
    pthread_mutex_lock(&p->mu);
    int64_t v = p->mem_peak;
    pthread_mutex_unlock(&p->mu);
    return v;
}

size_t gp_mem_count(gp_profiler *p)
{
    pthread_mutex_lock(&p->mu);
    size_t v = p->mem.n;
    pthread_mutex_unlock(&p->mu);
    return v;
}

int gp_mem_pool_info(gp_profiler *p, gp_mem_pool *out)
{
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&p->mu);
    int64_t f = 0, t = 0;
    int rc = GP_ENODEV;
    if (gp_cuda_meminfo_(p, &f, &t) == 0) {
        out->backend = GP_BACKEND_CUDA;
        out->total_valid = out->free_valid = 1;
        out->total_bytes = t;
        out->free_bytes = f;
        rc = 0;
    } else if (gp_cl_global_mem_(p, &t) == 0) {
        out->backend = GP_BACKEND_OPENCL;
        out->total_valid = 1;
        out->total_bytes = t;
        rc = 0;
    }
    pthread_mutex_unlock(&p->mu);
    return rc;
}

static void shape_str(char *buf, size_t n, const gp_membuf *m)
{
    gp_sbuf b = {0};
    gp_sbuf_putc(&b, '[');
    for (int i = 0; i < m->ndim; i++)
        gp_sbuf_printf(&b, "%s%lld", i ? ", " : "", (long long)m->shape[i]);
    gp_sbuf_putc(&b, ']');
    snprintf(buf, n, "%s", gp_sbuf_cstr(&b));
    gp_sbuf_free(&b);
}

/* Prints the tracked buffers as a table (caller holds p->mu). */
static void buffers_table(gp_profiler *p, FILE *f)
{
    const char *headers[] = {"Name", "Shape", "Dtype", "Size"};
    gp_table *tb = gp_table_create(4, headers, "lllr");
    if (!tb) return;
    for (size_t i = 0; i < p->mem.n; i++) {
        const gp_membuf *m = &p->mem.v[i];
        char shp[256], sz[64];
        shape_str(shp, sizeof shp, m);
        gp_fmt_bytes(sz, sizeof sz, (double)m->bytes);
        const char *cells[] = {m->name, shp, m->dtype[0] ? m->dtype : "-", sz};
        gp_table_row(tb, cells);
    }
    gp_table_print(tb, f, 60);
    gp_table_destroy(tb);
}

void gp_print_memory(gp_profiler *p, FILE *f)
{
    gp_mem_pool pool;
    int have_pool = gp_mem_pool_info(p, &pool) == 0;
    pthread_mutex_lock(&p->mu);
    char c[64], pk[64];
    fprintf(f, "Memory tracker: current %s, peak %s, %zu buffer(s)\n",
            gp_fmt_bytes(c, sizeof c, (double)p->mem_cur),
            gp_fmt_bytes(pk, sizeof pk, (double)p->mem_peak), p->mem.n);
    if (p->mem.n) buffers_table(p, f);
    if (have_pool) {
        char t[64], fr[64];
        fprintf(f, "Device memory (%s): total %s, free %s\n",
                pool.backend == GP_BACKEND_CUDA ? "CUDA" : "OpenCL",
                gp_fmt_bytes(t, sizeof t, (double)pool.total_bytes),
                pool.free_valid ? gp_fmt_bytes(fr, sizeof fr, (double)pool.free_bytes) : "N/A");
    } else {
        fprintf(f, "Device memory: N/A (no CUDA device; no OpenCL device set)\n");
    }
    pthread_mutex_unlock(&p->mu);
}

size_t gp_print_leaks(gp_profiler *p, FILE *f)
{
    pthread_mutex_lock(&p->mu);
    size_t n = p->mem.n;
    if (n) {
        char c[64];
        fprintf(f, "gpuprof: %zu tracked buffer(s) never untracked (%s):\n", n,
                gp_fmt_bytes(c, sizeof c, (double)p->mem_cur));
        buffers_table(p, f);
    }
    pthread_mutex_unlock(&p->mu);
    return n;
}
