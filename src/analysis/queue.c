/* analysis/queue.c: per-stream queue length time series summarised. */
#include "analysis/queue.h"
#include "analysis/launch.h"
#include "core/hash.h"
#include "core/stats.h"
#include <stdlib.h>
#include <string.h>

typedef struct qev {
    int64_t stream, ts;
    int delta;
    int tie; /* order at equal times: 0 first */
} qev;

/* At equal timestamps the default mode counts a completion before a launch
 * (the queue never looks longer than it was); HTA's queue length orders the
 * launch first (its launches come first in the frame it sorts), which
 * --compat hta follows. Returns the tie rank of an entry of sign delta. */
static int tie_rank(const gp_hview *v, int delta)
{
    return v->compat ? delta < 0 : delta > 0;
}

static int cmp_qev(const void *a, const void *b)
{
    const qev *x = a, *y = b;
    if (x->stream != y->stream) return x->stream < y->stream ? -1 : 1;
    if (x->ts != y->ts) return x->ts < y->ts ? -1 : 1;
    return (x->tie > y->tie) - (x->tie < y->tie);
}

/* HTA's get_runtime_launch_events_mask: both sets (compat: HTA's own). */
static int is_launch(const char *s, int compat)
{
    return gp_launch_name_in(s, GP_LAUNCH_HTA, compat) ||
           gp_launch_name_in(s, GP_LAUNCH_OTHER, compat);
}

/* One stream's summary from its changes in time order. */
static gp_queue_row summarize(int64_t stream, const int64_t *ts, const int8_t *delta, size_t n,
                              int64_t full_at)
{
    gp_queue_row r = {stream, 0, 0, 0, 0};
    int64_t len = 0, area = 0, full = 0;
    for (size_t i = 0; i < n; i++) {
        len += delta[i];
        if (delta[i] > 0) r.launches++;
        if (len > r.max) r.max = len;
        if (i + 1 < n) {
            int64_t dt = ts[i + 1] - ts[i];
            area += len * dt;
            if (len >= full_at) full += dt;
        }
    }
    int64_t span = ts[n - 1] - ts[0];
    r.mean = span > 0 ? (double)area / (double)span : (double)r.max;
    r.full_pct = span > 0 ? 100.0 * (double)full / (double)span : 0;
    return r;
}

/* Without duplicated correlation ids every launch has one GPU event: the
 * view's correlation peers give the pairs, radix sorts the order. */
static int queue_fast(const gp_hview *v, int64_t full_at, gp_queue_row **rows, size_t *nrows)
{
    const gp_trace *t = v->t;
    uint32_t nstr = gp_strtab_count(t->strings);
    uint8_t *isl = malloc(nstr ? nstr : 1); /* per name id: 0/1, 0xff unknown */
    int64_t *pairs = NULL, *ts = NULL, *order = NULL;
    int8_t *dl = NULL;
    size_t *start = NULL;
    gp_u64map sid = {0};
    GP_VEC(int64_t) streams = {0};
    GP_VEC(gp_queue_row) out = {0};
    int rc = GP_ENOMEM;
    if (!isl) goto done;
    memset(isl, 0xff, nstr);
    /* (time, dense stream << 1 | plus): entries inserted in tie order (see
     * tie_rank) so that the stable sort keeps that order at equal times */
    size_t np = 0;
    for (size_t i = 0; i < v->n; i++) {
        const gp_hev *e = &v->ev[i];
        if (e->stream != -1 || v->peer[i] == GP_NO_INDEX || gp_hev_corr(v, e) == -1) continue;
        uint32_t nm = gp_hev_name(v, e);
        if (isl[nm] == 0xff) isl[nm] = (uint8_t)is_launch(gp_trace_s(t, nm), v->compat);
        if (isl[nm]) np++;
    }
    pairs = malloc((np ? np : 1) * 4 * sizeof *pairs);
    if (!pairs) goto done;
    size_t m = 0;
    int64_t last_stream = INT64_MIN;
    uint64_t last_id = 0;
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0, plus = tie_rank(v, +1) == pass; i < v->n; i++) {
            const gp_hev *e = &v->ev[i];
            if (e->stream != -1 || v->peer[i] == GP_NO_INDEX || gp_hev_corr(v, e) == -1 ||
                !isl[gp_hev_name(v, e)])
                continue;
            const gp_hev *g = &v->ev[v->peer[i]];
            if (g->stream != last_stream) {
                uint64_t *p = gp_u64map_slot(&sid, (uint64_t)g->stream, streams.n);
                if (!p) goto done;
                if (*p == streams.n && GP_VEC_PUSH(streams, g->stream)) goto done;
                last_stream = g->stream;
                last_id = *p;
            }
            pairs[2 * m] = plus ? e->ts : g->ts;
            pairs[2 * m + 1] = (int64_t)(last_id << 1 | (uint64_t)plus);
            m++;
        }
    gp_sort_pairs_i64(pairs, m);
    size_t ns = streams.n;
    start = calloc(ns + 1, sizeof *start);
    ts = malloc((m ? m : 1) * sizeof *ts);
    dl = malloc(m ? m : 1);
    order = malloc((ns ? ns : 1) * 2 * sizeof *order);
    if (!start || !ts || !dl || !order) goto done;
    for (size_t i = 0; i < m; i++) start[(pairs[2 * i + 1] >> 1) + 1]++;
    for (size_t s = 0; s < ns; s++) start[s + 1] += start[s];
    for (size_t i = 0; i < m; i++) { /* stable partition by stream, reusing start as cursor */
        size_t s = (size_t)(pairs[2 * i + 1] >> 1), k = start[s]++;
        ts[k] = pairs[2 * i];
        dl[k] = (pairs[2 * i + 1] & 1) ? 1 : -1;
    }
    for (size_t s = ns; s > 0; s--) start[s] = start[s - 1]; /* back to the first of each */
    start[0] = 0;
    for (size_t s = 0; s < ns; s++) {
        order[2 * s] = streams.v[s];
        order[2 * s + 1] = (int64_t)s;
    }
    gp_sort_pairs_i64(order, ns);
    for (size_t k = 0; k < ns; k++) {
        size_t s = (size_t)order[2 * k + 1];
        gp_queue_row r =
            summarize(streams.v[s], ts + start[s], dl + start[s], start[s + 1] - start[s], full_at);
        if (GP_VEC_PUSH(out, r)) goto done;
    }
    *rows = out.v;
    *nrows = out.n;
    out.v = NULL;
    rc = 0;
done:
    free(isl);
    free(pairs);
    free(ts);
    free(dl);
    free(order);
    free(start);
    gp_u64map_free(&sid);
    GP_VEC_FREE(streams);
    GP_VEC_FREE(out);
    return rc;
}

int gp_queue_length(const gp_hview *v, int64_t full_at, gp_queue_row **rows, size_t *nrows)
{
    *rows = NULL;
    *nrows = 0;
    if (!v->corr_multi && v->peer) return queue_fast(v, full_at, rows, nrows);
    gp_u64map gpu = {0}, launch = {0}, isl = {0};
    qev *q = NULL;
    GP_VEC(gp_queue_row) out = {0};
    int rc = GP_ENOMEM;
    for (size_t i = 0; i < v->n; i++) /* correlation -> (last) GPU event */
        if (v->ev[i].stream != -1 && gp_u64map_put(&gpu, (uint64_t)gp_hev_corr(v, &v->ev[i]), i))
            goto done;
    q = malloc((2 * v->n + 1) * sizeof *q);
    if (!q) goto done;
    size_t m = 0;
    for (size_t i = 0; i < v->n; i++) {
        const gp_hev *e = &v->ev[i];
        int64_t corr = gp_hev_corr(v, e);
        if (e->stream != -1 || corr == -1) continue;
        uint64_t yes, g;
        uint32_t nm = gp_hev_name(v, e);
        if (!gp_u64map_get(&isl, nm, &yes)) {
            yes = (uint64_t)is_launch(gp_trace_s(v->t, nm), v->compat);
            if (gp_u64map_put(&isl, nm, yes)) goto done;
        }
        if (!yes || !gp_u64map_get(&gpu, (uint64_t)corr, &g)) continue;
        q[m++] = (qev){v->ev[g].stream, e->ts, +1, tie_rank(v, +1)};
        if (gp_u64map_put(&launch, (uint64_t)corr, 1)) goto done;
    }
    for (size_t i = 0; i < v->n; i++) {
        const gp_hev *e = &v->ev[i];
        uint64_t x;
        if (e->stream != -1 && gp_u64map_get(&launch, (uint64_t)gp_hev_corr(v, e), &x))
            q[m++] = (qev){e->stream, e->ts, -1, tie_rank(v, -1)};
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
