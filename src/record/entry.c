/* record/entry.c: per-entry metrics of libgpuprof ranges (docs/api.md
 * "Per-entry metrics"): the device time of the CUDA/OpenCL timings, the
 * transfers (timings given a byte count) and the memory tracker calls made
 * by a range's own thread while the range was open.
 *
 * All of it is worked out off the recording path. A timer or tracker call
 * notes its thread and host time (gp_rec_entry_ctx); ranges kept as events
 * get their metrics by time on their thread when results are asked for
 * (gp_rec_entry_metrics: a call belongs to every range of its thread whose
 * [begin, end] holds the call's time), and ranges aggregated inline get
 * them at the call, from the thread's open levels, into per-name sums that
 * gp_rec_collect_aggs puts on the aggregate rows. Begin and end are untouched. */
#include "analysis/summary.h"
#include "record/recorder.h"
#include <stdlib.h>
#include <string.h>

static uint64_t inl_hash(const gp_tbuf *b, const void *key, uint32_t dev, uint8_t type)
{
    return gp_hash_u64((uint64_t)(uintptr_t)key ^ gp_hash_u64((uint64_t)(uintptr_t)b) ^
                       (uint64_t)dev << 48 ^ (uint64_t)type << 40);
}

static int inl_is(const gp_inl_metric *m, const gp_tbuf *b, const void *key, uint32_t dev,
                  uint8_t type)
{
    return m->b == b && m->key == key && m->dev == dev && m->type == type;
}

/* Index of the inline entry of (b, key, dev, type) in p->inl, created when
 * new (caller holds p->mu); -1 when out of memory. The map holds the first
 * entry of a hash (UINT64_MAX: an entry freed by gp_rec_entry_retire); another
 * one of the same hash is found by a scan. A new entry takes a slot freed by
 * an exited thread first. */
static long inl_index(gp_profiler *p, const gp_tbuf *b, const void *key, uint32_t dev, uint8_t type,
                      int create)
{
    uint64_t h = inl_hash(b, key, dev, type), ix;
    int in_map = gp_u64map_get(&p->inl_of, h, &ix) && ix != UINT64_MAX;
    if (in_map && inl_is(&p->inl.v[ix], b, key, dev, type)) return (long)ix;
    if (in_map)
        for (size_t i = 0; i < p->inl.n; i++)
            if (inl_is(&p->inl.v[i], b, key, dev, type)) return (long)i;
    if (!create) return -1;
    gp_inl_metric m = {b, key, dev, type, {0}};
    int reused = p->inl_free.n > 0;
    size_t at = reused ? p->inl_free.v[p->inl_free.n - 1] : p->inl.n;
    if (!reused && GP_VEC_PUSH(p->inl, m)) return -1;
    if (!in_map && gp_u64map_put(&p->inl_of, h, at)) {
        if (!reused) p->inl.n--;
        return -1;
    }
    if (reused) {
        p->inl_free.n--;
        p->inl.v[at] = m;
    }
    return (long)at;
}

int gp_rec_entry_ctx(gp_profiler *p, gp_entry_ctx *c)
{
    memset(c, 0, sizeof *c);
    c->host_ns = gp_rec_host_ns(p);
    gp_tbuf *b = gp_rec_tbuf_find(p); /* the owner: its frames are ours to read */
    if (!b) return 0;
    int d = atomic_load_explicit(&b->depth, memory_order_relaxed);
    uint32_t ninl = 0;
    uint64_t sig = 0x6a09e667f3bcc909ull;
    for (int i = 0; i < d; i++) {
        ninl += b->fr[i].mode == GP_FR_INLINE;
        if (b->fr[i].mode != GP_FR_EVENT) continue;
        /* a kept range is told apart by its depth and begin time (a later
         * range at the same depth begins later) */
        c->in_event = 1;
        sig = gp_hash_u64(sig ^ gp_hash_u64(b->fr[i].t0 ^ (uint64_t)i << 56));
    }
    c->sig = sig;
    if (ninl && !(c->ix = malloc(ninl * sizeof *c->ix))) return GP_ENOMEM;
    pthread_mutex_lock(&p->mu);
    /* the thread's track, made on first use: only for a call noted for the
     * kept ranges (a thread whose ranges all roll over inline, in a program
     * that keeps starting threads, would hold one track per thread for
     * good); the tracker's [memory] event makes it when it keeps one */
    c->b = b;
    if (c->in_event) {
        uint32_t trk = gp_rec_thread_track(p, b);
        c->thr = trk == GP_NO_INDEX ? 0 : trk + 1;
    }
    for (int i = 0; i < d; i++) {
        const gp_frame *f = &b->fr[i];
        if (f->mode != GP_FR_INLINE) continue;
        long ix = inl_index(p, b, f->name, f->dev, f->type, 1);
        if (ix < 0) break;
        c->ix[c->n++] = (uint32_t)ix;
    }
    pthread_mutex_unlock(&p->mu);
    return c->n == ninl ? 0 : GP_ENOMEM;
}

gp_entry_sum gp_rec_entry_inline_of(gp_profiler *p, const gp_tbuf *b, const void *key, uint32_t dev,
                                    uint8_t type)
{
    gp_entry_sum z = {0};
    if (b == p->retired) { /* one entry per exited thread (gp_rec_entry_retire): their sum */
        for (size_t i = 0; i < p->inl.n; i++)
            if (inl_is(&p->inl.v[i], b, key, dev, type)) gp_entry_sum_add(&z, &p->inl.v[i].em);
        return z;
    }
    long ix = p->inl.n ? inl_index(p, b, key, dev, type, 0) : -1;
    return ix < 0 ? z : p->inl.v[ix].em;
}

/* Points the indices of c at their entries' new places (to[old]). */
void gp_rec_entry_ctx_remap(gp_entry_ctx *c, const uint32_t *to, size_t n)
{
    for (uint32_t i = 0; i < c->n; i++)
        if (c->ix[i] < n) c->ix[i] = to[c->ix[i]];
}

/* Rebuilds p->inl_of from the live entries (those freed leave dead keys). */
static void inl_rebuild_map(gp_profiler *p)
{
    gp_u64map_free(&p->inl_of);
    memset(&p->inl_of, 0, sizeof p->inl_of);
    p->inl_dead = 0;
    for (size_t i = 0; i < p->inl.n; i++) {
        const gp_inl_metric *m = &p->inl.v[i];
        if (!m->b) continue; /* free */
        uint64_t h = inl_hash(m->b, m->key, m->dev, m->type);
        if (!gp_u64map_get(&p->inl_of, h, NULL)) gp_u64map_put(&p->inl_of, h, i);
    }
}

void gp_rec_entry_retire(gp_profiler *p, const gp_tbuf *b, const gp_tbuf *r)
{
    /* b's entries are added into r's, one per (name, device, kind) for all
     * exited threads, and their slots freed for reuse: a program that keeps
     * starting threads holds one entry per name, not one per thread (before,
     * ~140 B per exited thread for good, and a new thread whose buffer had
     * b's address, hence its hashes, found its entries by a scan of all).
     * Timings of b still pending hold indices: moved to r's entries. An
     * entry that cannot be added (out of memory) is moved in place, as
     * gp_rec_entry_inline_of sums r's entries. */
    size_t n = p->inl.n, nfree = 0;
    uint32_t *to = NULL;
    for (size_t i = 0; i < n && !to; i++)
        if (p->inl.v[i].b == b && !(to = malloc(n * sizeof *to))) break;
    for (size_t i = 0; i < n; i++) {
        if (to) to[i] = (uint32_t)i;
        if (p->inl.v[i].b != b) continue;
        gp_inl_metric m = p->inl.v[i];
        long ix = to ? inl_index(p, r, m.key, m.dev, m.type, 1) : -1;
        if (ix < 0 || GP_VEC_PUSH(p->inl_free, (uint32_t)i)) {
            p->inl.v[i].b = r;
            continue;
        }
        gp_entry_sum_add(&p->inl.v[ix].em, &m.em);
        to[i] = (uint32_t)ix;
        memset(&p->inl.v[i], 0, sizeof p->inl.v[i]); /* b NULL: free */
        uint64_t *slot = gp_u64map_slot(&p->inl_of, inl_hash(b, m.key, m.dev, m.type), UINT64_MAX);
        if (slot && *slot == i) *slot = UINT64_MAX;
        nfree++;
    }
    if (nfree) {
        gp_cuda_entry_remap_(p, to, n);
        gp_cl_entry_remap_(p, to, n);
        /* dead keys: rebuilt once they outnumber the live entries */
        p->inl_dead += nfree;
        if (p->inl_dead > p->inl.n - p->inl_free.n) inl_rebuild_map(p);
    }
    free(to);
}

void gp_rec_entry_ctx_free(gp_entry_ctx *c)
{
    free(c->ix);
    c->ix = NULL;
    c->n = 0;
}

void gp_rec_entry_inline_add(gp_profiler *p, const gp_entry_ctx *c, const gp_entry_sum *d)
{
    for (uint32_t i = 0; i < c->n; i++)
        if (c->ix[i] < p->inl.n) gp_entry_sum_add(&p->inl.v[c->ix[i]].em, d);
}

gp_entry_sum gp_rec_entry_timing(int64_t dur, int64_t bytes)
{
    gp_entry_sum d = {0};
    d.timers = 1;
    d.gpu_ns = dur;
    if (bytes >= 0) {
        d.xfers = 1;
        d.xfer_ns = dur;
        d.xfer_bytes = bytes;
    }
    return d;
}

/* Adds d to the item of c's thread and set of open kept ranges (made when
 * new), for gp_rec_entry_metrics (caller holds p->mu). Only while a kept
 * range is open on the thread, and not for the stream sink, which writes
 * its ranges out (with no metrics) before their timings resolve. */
static void eitem_add(gp_profiler *p, const gp_entry_ctx *c, const gp_entry_sum *d)
{
    if (!c->thr || !c->in_event || p->stream) return;
    uint64_t *slot = gp_u64map_slot(&p->eitem_of, gp_hash_u64(c->sig ^ c->thr), UINT64_MAX);
    if (slot && *slot != UINT64_MAX && p->eitems.v[*slot].thr == c->thr) {
        gp_eitem *e = &p->eitems.v[*slot];
        gp_entry_sum_add(&e->d, d);
        if (c->host_ns < e->ts) e->ts = c->host_ns; /* the set was open then too */
        return;
    }
    gp_eitem e = {c->thr, c->host_ns, *d};
    if (!slot || GP_VEC_PUSH(p->eitems, e)) {
        gp_rec_seterr(p, "per-entry metrics: out of memory");
        return;
    }
    *slot = p->eitems.n - 1;
}

void gp_rec_entry_timing_done(gp_profiler *p, const gp_entry_ctx *c, int64_t dur, int64_t bytes)
{
    gp_entry_sum d = gp_rec_entry_timing(dur, bytes);
    eitem_add(p, c, &d);
    gp_rec_entry_inline_add(p, c, &d);
}

void gp_rec_entry_memop(gp_profiler *p, const gp_entry_ctx *c, int64_t bytes, int64_t total)
{
    gp_entry_sum d = {0};
    if (bytes >= 0) {
        d.allocs = 1;
        d.alloc_bytes = bytes;
        d.peak_bytes = total;
    } else {
        d.frees = 1;
        d.freed_bytes = -bytes;
    }
    eitem_add(p, c, &d);
    gp_rec_entry_inline_add(p, c, &d);
}

static int cmp_item(const void *a, const void *b)
{
    const gp_eitem *x = a, *y = b;
    if (x->thr != y->thr) return x->thr < y->thr ? -1 : 1;
    return (x->ts > y->ts) - (x->ts < y->ts);
}

int gp_rec_entry_metrics(gp_profiler *p)
{
    gp_trace *t = p->tr;
    t->entry_metrics.n = 0;
    /* the kept ranges: calls by time on their own thread */
    size_t n = p->eitems.n;
    if (!n) return 0;
    gp_eitem *it = malloc(n * sizeof *it);
    if (!it) return GP_ENOMEM;
    memcpy(it, p->eitems.v, n * sizeof *it);
    qsort(it, n, sizeof *it, cmp_item);
    int rc = 0;
    for (size_t i = 0; i < t->slices.n && !rc; i++) {
        const gp_slice *s = &t->slices.v[i];
        if (s->cat != p->cat_range) continue;
        uint32_t thr = s->track + 1;
        /* first item of thr at or after s->ts */
        size_t lo = 0, hi = n;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (it[mid].thr < thr || (it[mid].thr == thr && it[mid].ts < s->ts))
                lo = mid + 1;
            else
                hi = mid;
        }
        gp_entry_metrics em = {(uint32_t)i, {0}};
        for (size_t j = lo; j < n && it[j].thr == thr && it[j].ts <= s->ts + s->dur; j++)
            gp_entry_sum_add(&em.m, &it[j].d);
        if (gp_entry_sum_any(&em.m) && GP_VEC_PUSH(t->entry_metrics, em)) rc = GP_ENOMEM;
    }
    free(it);
    return rc;
}

void gp_rec_entry_reset(gp_profiler *p)
{
    p->eitems.n = 0;
    gp_u64map_free(&p->eitem_of);
    memset(&p->eitem_of, 0, sizeof p->eitem_of);
    p->tr->entry_metrics.n = 0;
    for (size_t i = 0; i < p->inl.n; i++) memset(&p->inl.v[i].em, 0, sizeof p->inl.v[i].em);
}

void gp_rec_entry_free(gp_profiler *p)
{
    GP_VEC_FREE(p->eitems);
    gp_u64map_free(&p->eitem_of);
    GP_VEC_FREE(p->inl);
    GP_VEC_FREE(p->inl_free);
    gp_u64map_free(&p->inl_of);
}
