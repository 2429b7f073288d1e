/* analysis/idle.c: per-stream idle time breakdown, from the view's GPU
 * events by start and their correlation peers (no sorting or hashing here). */
#include "analysis/idle.h"
#include "core/hash.h"
#include "core/stats.h"
#include <stdlib.h>
#include <string.h>

/* HTA 0.6.1's idle breakdown takes the events of these categories (stream
 * != -1): get_idle_time_breakdown's kernel_cats. */
static int hta_idle_cat(const char *c)
{
    static const char *const cats[] = {"kernel",     "Kernel", "gpu_memset",      "Memset",
                                       "gpu_memcpy", "Memcpy", "mtia_ccp_events", NULL};
    for (const char *const *k = cats; *k; k++)
        if (!strcmp(c, *k)) return 1;
    return 0;
}

int gp_idle_breakdown(const gp_hview *v, int64_t thr, gp_idle_row **rows, size_t *nrows)
{
    *rows = NULL;
    *nrows = 0;
    /* dense stream numbers (first seen first) */
    gp_u64map sid = {0};
    GP_VEC(int64_t) streams = {0};
    uint32_t *dense = malloc((v->ngpu ? v->ngpu : 1) * sizeof *dense);
    size_t *start = NULL, *fill = NULL;
    uint32_t *by = NULL;
    GP_VEC(gp_idle_row) out = {0};
    int rc = GP_ENOMEM;
    uint8_t *catok = NULL; /* compat: per category, one of HTA's idle categories */
    if (!dense) goto done;
    if (v->compat) {
        catok = malloc(v->t->cats.n ? v->t->cats.n : 1);
        if (!catok) goto done;
        for (size_t c = 0; c < v->t->cats.n; c++)
            catok[c] = (uint8_t)hta_idle_cat(gp_trace_s(v->t, v->t->cats.v[c].name));
    }
    int64_t last_stream = INT64_MIN;
    uint64_t last_id = 0;
    size_t m = 0;
    for (size_t g = 0; g < v->ngpu; g++) {
        const gp_hev *e = &v->ev[v->gpu[g]];
        if (catok ? !catok[v->t->slices.v[e->slice].cat] : e->ktype == GP_KT_OTHER) {
            dense[g] = UINT32_MAX;
            continue;
        }
        if (e->stream != last_stream) { /* consecutive events share streams often */
            uint64_t *p = gp_u64map_slot(&sid, (uint64_t)e->stream, streams.n);
            if (!p) goto done;
            if (*p == streams.n && GP_VEC_PUSH(streams, e->stream)) goto done;
            last_stream = e->stream;
            last_id = *p;
        }
        dense[g] = (uint32_t)last_id;
        m++;
    }
    size_t ns = streams.n;
    /* events of each stream in start order (a stable counting partition) */
    start = calloc(ns + 1, sizeof *start);
    fill = malloc((ns ? ns : 1) * sizeof *fill);
    by = malloc((m ? m : 1) * sizeof *by);
    if (!start || !fill || !by) goto done;
    for (size_t g = 0; g < v->ngpu; g++)
        if (dense[g] != UINT32_MAX) start[dense[g] + 1]++;
    for (size_t s = 0; s < ns; s++) start[s + 1] += start[s];
    memcpy(fill, start, ns * sizeof *fill);
    for (size_t g = 0; g < v->ngpu; g++)
        if (dense[g] != UINT32_MAX) by[fill[dense[g]]++] = v->gpu[g];
    /* streams in ascending id order: (id, dense) pairs sorted by id */
    int64_t *order = malloc((ns ? ns : 1) * 2 * sizeof *order);
    if (!order) goto done;
    for (size_t s = 0; s < ns; s++) {
        order[2 * s] = streams.v[s];
        order[2 * s + 1] = (int64_t)s;
    }
    gp_sort_pairs_i64(order, ns);
    for (size_t k = 0; k < ns; k++) {
        size_t s = (size_t)order[2 * k + 1], a = start[s], b = start[s + 1];
        gp_idle_row r = {streams.v[s], 0, 0, 0, 0};
        for (size_t i = a + 1; i < b; i++) {
            const gp_hev *p = &v->ev[by[i - 1]], *e = &v->ev[by[i]];
            int64_t prev_end = p->ts + p->dur, gap = e->ts - prev_end;
            uint32_t h = v->peer[by[i]];
            r.gaps++;
            if (h != GP_NO_INDEX && v->ev[h].ts > prev_end)
                r.host_wait_ns += gap;
            else if (gap < thr)
                r.kernel_wait_ns += gap;
            else
                r.other_ns += gap;
        }
        if (GP_VEC_PUSH(out, r)) {
            free(order);
            goto done;
        }
    }
    free(order);
    *rows = out.v;
    *nrows = out.n;
    out.v = NULL;
    rc = 0;
done:
    gp_u64map_free(&sid);
    GP_VEC_FREE(streams);
    GP_VEC_FREE(out);
    free(dense);
    free(catok);
    free(start);
    free(fill);
    free(by);
    return rc;
}
