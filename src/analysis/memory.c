/* analysis/memory.c: the memory timeline per device, peak, growth, leaks
 * and fragmentation from the trace's [memory] events. */
#include "analysis/memory.h"
#include "analysis/calltree.h"
#include "core/hash.h"
#include "core/sbuf.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct ev_ref {
    int64_t ts;
    uint32_t idx;
} ev_ref;

static int cmp_ref(const void *a, const void *b)
{
    const ev_ref *x = a, *y = b;
    if (x->ts != y->ts) return x->ts < y->ts ? -1 : 1;
    return (x->idx > y->idx) - (x->idx < y->idx);
}

static int dev_key(const gp_mem_event *e)
{
    return (int)e->device_type * 65536 + (int)(uint16_t)e->device_id;
}

/* Innermost nest item on `track` that contains ts, or GP_NO_INDEX. */
static uint32_t enclosing(const gp_trace *t, const gp_nesting *ns, uint32_t track, int64_t ts)
{
    if (track >= ns->ntracks) return GP_NO_INDEX;
    size_t lo = ns->track_first[track], hi = ns->track_first[track + 1];
    /* last item starting at or before ts */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->slices.v[ns->items[mid].slice].ts <= ts)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == ns->track_first[track]) return GP_NO_INDEX;
    uint32_t i = (uint32_t)(lo - 1);
    while (i != GP_NO_INDEX && ns->items[i].end <= ts) i = ns->items[i].parent;
    return i;
}

/* The allocating operation: the innermost enclosing slice that is not a
 * runtime/driver call (allocations happen inside operators). */
static uint32_t alloc_op(const gp_trace *t, const gp_nesting *ns, uint32_t track, int64_t ts)
{
    uint32_t i = enclosing(t, ns, track, ts);
    while (i != GP_NO_INDEX) {
        gp_kind k = gp_slice_kind(t, &t->slices.v[ns->items[i].slice]);
        if (k != GP_K_RUNTIME && k != GP_K_DRIVER) return t->slices.v[ns->items[i].slice].name;
        i = ns->items[i].parent;
    }
    return GP_NO_INDEX;
}

static int cmp_leak(const void *a, const void *b)
{
    const gp_mem_leak *x = a, *y = b;
    if (x->bytes != y->bytes) return x->bytes > y->bytes ? -1 : 1;
    return (x->count < y->count) - (x->count > y->count);
}

static int live_at(const gp_trace *t, const gp_nesting *ns, gp_mem_device *d)
{
    GP_VEC(gp_mem_live) live = {0};
    GP_VEC(uint32_t) chain = {0};
    for (size_t k = 0; k < ns->ntracks; k++) {
        uint32_t i = enclosing(t, ns, (uint32_t)k, d->peak_ts);
        if (i == GP_NO_INDEX) continue;
        chain.n = 0;
        for (; i != GP_NO_INDEX; i = ns->items[i].parent)
            if (GP_VEC_PUSH(chain, i)) goto oom;
        gp_sbuf b = {0};
        for (size_t j = chain.n; j-- > 0;) {
            gp_sbuf_puts(&b, gp_trace_s(t, t->slices.v[ns->items[chain.v[j]].slice].name));
            if (j) gp_sbuf_puts(&b, " > ");
        }
        gp_sbuf_cstr(&b); /* NUL-terminates */
        gp_mem_live l = {(uint32_t)k, b.s};
        if (!l.stack || GP_VEC_PUSH(live, l)) {
            free(l.stack);
            goto oom;
        }
    }
    GP_VEC_FREE(chain);
    d->live = live.v;
    d->nlive = live.n;
    return 0;
oom:
    for (size_t j = 0; j < live.n; j++) free(live.v[j].stack);
    GP_VEC_FREE(live);
    GP_VEC_FREE(chain);
    return GP_ENOMEM;
}

/* ns NULL: the series and its figures only (no leaks, no live stacks). */
static int device_compute(const gp_trace *t, const gp_nesting *ns, const ev_ref *refs, size_t n,
                          gp_mem_device *d)
{
    const gp_mem_event *e0 = &t->mem_events.v[refs[0].idx];
    d->device_type = e0->device_type;
    d->device_id = e0->device_id;
    if (e0->device_type == 1)
        snprintf(d->label, sizeof d->label, "cuda:%d", e0->device_id);
    else if (e0->device_type == 0)
        snprintf(d->label, sizeof d->label, "cpu");
    else if (e0->device_type == GP_NONE) /* libgpuprof's tracker: no device */
        snprintf(d->label, sizeof d->label, "tracked");
    else
        snprintf(d->label, sizeof d->label, "type%d:%d", e0->device_type, e0->device_id);
    d->pts = malloc(n * sizeof *d->pts);
    if (!d->pts) return GP_ENOMEM;
    d->n = n;
    d->totals_from_trace = 1;
    d->reserved_valid = 1;
    int any_reserved = 0;
    for (size_t i = 0; i < n; i++) {
        const gp_mem_event *e = &t->mem_events.v[refs[i].idx];
        if (e->total_allocated == GP_NONE) d->totals_from_trace = 0;
        if (e->total_reserved == GP_NONE) d->reserved_valid = 0;
        if (e->total_reserved > 0) any_reserved = 1;
    }
    /* devices without a caching allocator (Kineto writes "Total Reserved": 0
     * for CPU memory) have no reserved figure: unknown, never a negative
     * fragmentation of reserved - allocated */
    if (!any_reserved) d->reserved_valid = 0;
    int64_t run = 0;
    gp_u64map live = {0}; /* addr -> event index of the allocation */
    int rc = GP_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        const gp_mem_event *e = &t->mem_events.v[refs[i].idx];
        run += e->bytes;
        int64_t alloc = d->totals_from_trace ? e->total_allocated : run;
        if (i == 0) d->start_allocated = alloc - e->bytes;
        d->pts[i] = (gp_mem_point){e->ts, alloc, d->reserved_valid ? e->total_reserved : GP_NONE};
        if (e->bytes > 0) {
            d->allocs++;
            d->alloc_bytes += e->bytes;
            if (ns && gp_u64map_put(&live, e->addr, refs[i].idx)) goto done;
        } else if (e->bytes < 0) {
            d->frees++;
            d->free_bytes += -e->bytes;
            uint64_t *slot = ns ? gp_u64map_slot(&live, e->addr, UINT64_MAX) : NULL;
            if (ns && !slot) goto done;
            if (slot) *slot = UINT64_MAX; /* freed (a tombstone value; the map has no delete) */
        }
        if (i == 0 || alloc > d->peak_allocated) {
            d->peak_allocated = alloc;
            d->peak_ts = e->ts;
        }
        if (d->reserved_valid) {
            int64_t frag = e->total_reserved - alloc;
            if (i == 0 || e->total_reserved > d->peak_reserved) {
                d->peak_reserved = e->total_reserved;
                d->peak_reserved_ts = e->ts;
            }
            if (i == 0 || frag > d->frag_max) {
                d->frag_max = frag;
                d->frag_max_ts = e->ts;
            }
            d->frag_end = frag;
        }
    }
    d->end_allocated = d->pts[n - 1].allocated;
    if (d->reserved_valid) {
        for (size_t i = 0; i < n; i++)
            if (d->pts[i].ts == d->peak_ts && d->pts[i].allocated == d->peak_allocated) {
                d->frag_at_peak = d->pts[i].reserved - d->pts[i].allocated;
                break;
            }
    }
    if (!ns) { /* the series only */
        rc = 0;
        goto done;
    }
    /* leaks: allocations still live at the end, grouped by allocating op */
    gp_u64map by_op = {0}; /* op string id (or UINT32_MAX) -> index into leaks */
    GP_VEC(gp_mem_leak) leaks = {0};
    for (size_t s = 0; s < live.cap; s++) {
        if (!live.used[s] || live.vals[s] == UINT64_MAX) continue;
        const gp_mem_event *e = &t->mem_events.v[live.vals[s]];
        uint32_t op = alloc_op(t, ns, e->track, e->ts);
        uint64_t *slot = gp_u64map_slot(&by_op, op, UINT64_MAX);
        if (!slot) {
            gp_u64map_free(&by_op);
            GP_VEC_FREE(leaks);
            goto done;
        }
        if (*slot == UINT64_MAX) {
            gp_mem_leak l = {op, 0, 0};
            *slot = leaks.n;
            if (GP_VEC_PUSH(leaks, l)) {
                gp_u64map_free(&by_op);
                GP_VEC_FREE(leaks);
                goto done;
            }
        }
        leaks.v[*slot].count++;
        leaks.v[*slot].bytes += e->bytes;
        d->leak_count++;
        d->leak_bytes += e->bytes;
    }
    gp_u64map_free(&by_op);
    if (leaks.n > 1) qsort(leaks.v, leaks.n, sizeof *leaks.v, cmp_leak);
    d->leaks = leaks.v;
    d->nleaks = leaks.n;
    rc = live_at(t, ns, d);
done:
    gp_u64map_free(&live);
    return rc;
}

/* full: with leaks and live stacks (they need the CPU slices' nesting). */
static int compute(const gp_trace *t, gp_memory *out, int full)
{
    memset(out, 0, sizeof *out);
    size_t n = t->mem_events.n;
    out->events = n;
    if (!n) return 0;
    ev_ref *refs = malloc(n * sizeof *refs);
    if (!refs) return GP_ENOMEM;
    /* group by device, then time */
    for (size_t i = 0; i < n; i++) refs[i] = (ev_ref){t->mem_events.v[i].ts, (uint32_t)i};
    qsort(refs, n, sizeof *refs, cmp_ref);
    int keys[64];
    size_t nk = 0;
    for (size_t i = 0; i < n; i++) {
        int k = dev_key(&t->mem_events.v[refs[i].idx]);
        size_t j = 0;
        while (j < nk && keys[j] != k) j++;
        if (j == nk && nk < 64) keys[nk++] = k;
    }
    for (size_t a = 1; a < nk; a++)
        for (size_t b = a; b > 0 && keys[b - 1] > keys[b]; b--) {
            int tmp = keys[b];
            keys[b] = keys[b - 1];
            keys[b - 1] = tmp;
        }
    gp_nesting ns = {0};
    if (full && gp_nesting_build(t, gp_kind_mask_cpu(), &ns)) {
        free(refs);
        return GP_ENOMEM;
    }
    out->dev = calloc(nk, sizeof *out->dev);
    ev_ref *sub = malloc(n * sizeof *sub);
    int rc = out->dev && sub ? 0 : GP_ENOMEM;
    for (size_t j = 0; j < nk && !rc; j++) {
        size_t m = 0;
        for (size_t i = 0; i < n; i++)
            if (dev_key(&t->mem_events.v[refs[i].idx]) == keys[j]) sub[m++] = refs[i];
        if (!m) continue;
        rc = device_compute(t, full ? &ns : NULL, sub, m, &out->dev[out->n]);
        out->n++;
    }
    free(sub);
    free(refs);
    gp_nesting_free(&ns);
    if (rc) gp_memory_free(out);
    return rc;
}

int gp_memory_compute(const gp_trace *t, gp_memory *out)
{
    return compute(t, out, 1);
}

int gp_memory_series(const gp_trace *t, gp_memory *out)
{
    return compute(t, out, 0);
}

void gp_memory_free(gp_memory *m)
{
    for (size_t i = 0; i < m->n; i++) {
        gp_mem_device *d = &m->dev[i];
        free(d->pts);
        free(d->leaks);
        for (size_t j = 0; j < d->nlive; j++) free(d->live[j].stack);
        free(d->live);
    }
    free(m->dev);
    memset(m, 0, sizeof *m);
}

size_t gp_memory_downsample(const gp_mem_device *d, gp_mem_point *out, size_t max)
{
    if (d->n <= max || max < 4) {
        size_t k = d->n < max ? d->n : max;
        memcpy(out, d->pts, k * sizeof *out);
        return k;
    }
    int64_t t0 = d->pts[0].ts, t1 = d->pts[d->n - 1].ts;
    size_t buckets = max - 1, k = 0, i = 0;
    for (size_t b = 0; b < buckets && i < d->n; b++) {
        int64_t lim = t0 + (int64_t)((double)(t1 - t0) * (double)(b + 1) / (double)buckets);
        size_t best = i, start = i;
        for (; i < d->n && (d->pts[i].ts <= lim || b + 1 == buckets); i++)
            if (d->pts[i].allocated > d->pts[best].allocated) best = i;
        if (i > start) out[k++] = d->pts[best];
    }
    if (k && out[k - 1].ts != d->pts[d->n - 1].ts) out[k++] = d->pts[d->n - 1];
    return k;
}
