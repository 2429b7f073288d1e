/* analysis/queue.c: per-stream queue length time series summarised. */
#include "analysis/queue.h"
#include "analysis/launch.h"
#include "core/hash.h"
#include <stdlib.h>
#include <string.h>

typedef struct qev {
    int64_t stream, ts;
    int delta;
} qev;

static int cmp_qev(const void *a, const void *b)
{
    const qev *x = a, *y = b;
    if (x->stream != y->stream) return x->stream < y->stream ? -1 : 1;
    if (x->ts != y->ts) return x->ts < y->ts ? -1 : 1;
    return (x->delta > y->delta) - (x->delta < y->delta); /* -1 first */
}

static int is_launch(const char *s)
{
    return gp_launch_name_in(s, GP_LAUNCH_HTA) || gp_launch_name_in(s, GP_LAUNCH_OTHER);
}

int gp_queue_length(const gp_hview *v, int64_t full_at, gp_queue_row **rows, size_t *nrows)
{
    gp_u64map gpu = {0}, launch = {0}, isl = {0};
    qev *q = NULL;
    GP_VEC(gp_queue_row) out = {0};
    int rc = GP_ENOMEM;
    for (size_t i = 0; i < v->n; i++) /* correlation -> (last) GPU event */
        if (v->ev[i].stream != -1 && gp_u64map_put(&gpu, (uint64_t)v->ev[i].corr, i)) goto done;
    q = malloc((2 * v->n + 1) * sizeof *q);
    if (!q) goto done;
    size_t m = 0;
    for (size_t i = 0; i < v->n; i++) {
        const gp_hev *e = &v->ev[i];
        if (e->stream != -1 || e->corr == -1) continue;
        uint64_t yes, g;
        if (!gp_u64map_get(&isl, e->name, &yes)) {
            yes = (uint64_t)is_launch(gp_trace_s(v->t, e->name));
            if (gp_u64map_put(&isl, e->name, yes)) goto done;
        }
        if (!yes || !gp_u64map_get(&gpu, (uint64_t)e->corr, &g)) continue;
        q[m++] = (qev){v->ev[g].stream, e->ts, +1};
        if (gp_u64map_put(&launch, (uint64_t)e->corr, 1)) goto done;
    }
    for (size_t i = 0; i < v->n; i++) {
        const gp_hev *e = &v->ev[i];
        uint64_t x;
        if (e->stream != -1 && gp_u64map_get(&launch, (uint64_t)e->corr, &x))
            q[m++] = (qev){e->stream, e->ts, -1};
    }
    if (m) qsort(q, m, sizeof *q, cmp_qev);
    for (size_t a = 0; a < m;) {
        size_t b = a;
        while (b < m && q[b].stream == q[a].stream) b++;
        gp_queue_row r = {q[a].stream, 0, 0, 0, 0};
        int64_t len = 0, area = 0, full = 0;
        for (size_t i = a; i < b; i++) {
            len += q[i].delta;
            if (q[i].delta > 0) r.launches++;
            if (len > r.max) r.max = len;
            if (i + 1 < b) {
                int64_t dt = q[i + 1].ts - q[i].ts;
                area += len * dt;
                if (len >= full_at) full += dt;
            }
        }
        int64_t span = q[b - 1].ts - q[a].ts;
        r.mean = span > 0 ? (double)area / (double)span : (double)r.max;
        r.full_pct = span > 0 ? 100.0 * (double)full / (double)span : 0;
        if (GP_VEC_PUSH(out, r)) goto done;
        a = b;
    }
    rc = 0;
done:
    free(q);
    gp_u64map_free(&gpu);
    gp_u64map_free(&launch);
    gp_u64map_free(&isl);
    if (rc) {
        GP_VEC_FREE(out);
        return rc;
    }
    *rows = out.v;
    *nrows = out.n;
    return 0;
}
