/* analysis/idle.c: per-stream idle time breakdown. */
#include "analysis/idle.h"
#include "core/hash.h"
#include <stdlib.h>
#include <string.h>

typedef struct item {
    int64_t stream, ts, end, host_ts; /* host_ts: start of the launching host event, or INT64_MIN */
    size_t order;
} item;

static int cmp_item(const void *a, const void *b)
{
    const item *x = a, *y = b;
    if (x->stream != y->stream) return x->stream < y->stream ? -1 : 1;
    if (x->ts != y->ts) return x->ts < y->ts ? -1 : 1;
    return (x->order > y->order) - (x->order < y->order);
}

int gp_idle_breakdown(const gp_hview *v, int64_t thr, gp_idle_row **rows, size_t *nrows)
{
    gp_u64map host = {0}; /* correlation -> index of the (last) host event */
    for (size_t i = 0; i < v->n; i++) {
        const gp_hev *e = &v->ev[i];
        if (e->stream == -1 && e->corr != -1)
            if (gp_u64map_put(&host, (uint64_t)e->corr, i)) goto oom0;
    }
    item *it = malloc((v->n ? v->n : 1) * sizeof *it);
    if (!it) goto oom0;
    size_t m = 0;
    for (size_t i = 0; i < v->n; i++) {
        const gp_hev *e = &v->ev[i];
        if (e->stream == -1 || e->ktype == GP_KT_OTHER) continue;
        uint64_t h;
        int64_t hts = INT64_MIN;
        if (e->corr != -1 && gp_u64map_get(&host, (uint64_t)e->corr, &h)) hts = v->ev[h].ts;
        it[m++] = (item){e->stream, e->ts, e->ts + e->dur, hts, i};
    }
    gp_u64map_free(&host);
    if (m) qsort(it, m, sizeof *it, cmp_item);
    GP_VEC(gp_idle_row) out = {0};
    for (size_t a = 0; a < m;) {
        size_t b = a;
        int linked = 0;
        while (b < m && it[b].stream == it[a].stream) linked |= it[b++].host_ts != INT64_MIN;
        if (v->compat && !linked) {
            a = b;
            continue;
        }
        gp_idle_row r = {it[a].stream, 0, 0, 0, 0};
        for (size_t i = a + 1; i < b; i++) {
            int64_t prev_end = it[i - 1].end, gap = it[i].ts - prev_end;
            r.gaps++;
            if (it[i].host_ts != INT64_MIN && it[i].host_ts > prev_end)
                r.host_wait_ns += gap;
            else if (gap < thr)
                r.kernel_wait_ns += gap;
            else
                r.other_ns += gap;
        }
        if (GP_VEC_PUSH(out, r)) {
            free(it);
            GP_VEC_FREE(out);
            return GP_ENOMEM;
        }
        a = b;
    }
    free(it);
    *rows = out.v;
    *nrows = out.n;
    return 0;
oom0:
    gp_u64map_free(&host);
    return GP_ENOMEM;
}
