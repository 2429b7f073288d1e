/* analysis/kernel_breakdown.c: kernel type time with overlaps and the top
 * kernels per type. */
#include "analysis/kernel_breakdown.h"
#include "core/hash.h"
#include "core/stats.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct kev {
    int64_t t;
    int delta; /* +bit at a start, -bit at an end */
} kev;

static int cmp_kev(const void *a, const void *b)
{
    const kev *x = a, *y = b;
    if (x->t != y->t) return x->t < y->t ? -1 : 1;
    return (y->delta > x->delta) - (y->delta < x->delta); /* starts first */
}

/* The sweep of gp_ktype_time_add over the three merged lists without
 * sorting: each list, read start, end, start, end..., is already in the
 * (time, starts first) order when no interval is reversed, so a 3-way merge
 * yields the order the sort would. */
static void sweep_merge(const gp_hview *v, gp_ktype_time *acc)
{
    const int64_t *iv[3];
    size_t m[3], p[3] = {0, 0, 0};
    for (int k = 0; k < 3; k++) {
        iv[k] = gp_hview_merged(v, 1u << k, &m[k]);
        m[k] *= 2;
    }
    int run = 0, have = 0;
    int64_t prev = 0;
    for (;;) {
        int best = -1, bd = 0;
        int64_t bt = 0;
        for (int k = 0; k < 3; k++) {
            if (p[k] >= m[k]) continue;
            int64_t t = iv[k][p[k]];
            int d = p[k] % 2 ? -(1 << k) : 1 << k;
            if (best < 0 || t < bt || (t == bt && d > bd)) {
                best = k;
                bt = t;
                bd = d;
            }
        }
        if (best < 0) break;
        p[best]++;
        if (have && run > 0 && run < GP_KSTATES) {
            acc->seen[run] = 1;
            acc->ns[run] += bt - prev;
        }
        run += bd;
        prev = bt;
        have = 1;
    }
}

int gp_ktype_time_add(const gp_hview *v, gp_ktype_time *acc)
{
    if (!v->reversed && v->merged[0]) {
        sweep_merge(v, acc);
        return 0;
    }
    kev *ev = NULL;
    size_t n = 0, cap = 0;
    for (int k = 0; k < 3; k++) {
        size_t m;
        const int64_t *iv = gp_hview_merged(v, 1u << k, &m);
        if (n + 2 * m > cap) {
            cap = n + 2 * m;
            kev *nv = realloc(ev, (cap ? cap : 1) * sizeof *ev);
            if (!nv) {
                free(ev);
                return GP_ENOMEM;
            }
            ev = nv;
        }
        for (size_t i = 0; i < m; i++) {
            ev[n++] = (kev){iv[2 * i], 1 << k};
            ev[n++] = (kev){iv[2 * i + 1], -(1 << k)};
        }
    }
    if (n) qsort(ev, n, sizeof *ev, cmp_kev);
    int run = 0;
    for (size_t i = 0; i + 1 < n; i++) {
        run += ev[i].delta;
        if (run > 0 && run < GP_KSTATES) {
            acc->seen[run] = 1;
            acc->ns[run] += ev[i + 1].t - ev[i].t;
        }
    }
    free(ev);
    return 0;
}

void gp_kstate_label(unsigned s, char *buf, size_t n)
{
    size_t k = 0;
    buf[0] = 0;
    for (int b = 0; b < 3; b++) {
        if (!(s >> b & 1u)) continue;
        int w =
            snprintf(buf + k, n - k, "%s%s", k ? " overlapping " : "", gp_ktype_name((gp_ktype)b));
        if (w < 0 || (size_t)w >= n - k) return;
        k += (size_t)w;
    }
}

typedef struct agg {
    uint32_t name;
    uint64_t count;
    int64_t sum, min, max;
    double m2, mean; /* Welford */
} agg;

typedef GP_VEC(agg) agg_vec;

static int cmp_agg(const void *a, const void *b)
{
    const agg *x = a, *y = b;
    if (x->sum != y->sum) return x->sum > y->sum ? -1 : 1;
    return (x->name > y->name) - (x->name < y->name);
}

static void fill(gp_topk *r, const agg *a, uint8_t type)
{
    r->name = a->name;
    r->type = type;
    r->count = a->count;
    r->sum = a->sum;
    r->min = a->min;
    r->max = a->max;
    r->mean = a->mean;
    r->std = a->count > 1 ? sqrt(a->m2 / (double)(a->count - 1)) : 0;
}

int gp_top_kernels(const gp_hview *v, int num_kernels, double ratio, gp_topk **rows, size_t *nrows)
{
    GP_VEC(gp_topk) out = {0};
    /* one pass groups the three types by name id (ids are dense): slot[k][name]
     * is the row + 1 of that name in groups[k] */
    uint32_t nstr = gp_strtab_count(v->t->strings);
    uint32_t *slot = calloc(3 * (size_t)(nstr ? nstr : 1), sizeof *slot);
    agg_vec groups[3] = {{0}, {0}, {0}};
    if (!slot) return GP_ENOMEM;
    for (size_t i = 0; i < v->n; i++) {
        const gp_hev *e = &v->ev[i];
        if (e->stream == -1 || e->ktype > 2) continue;
        uint32_t nm = gp_hev_name(v, e);
        uint32_t *sl = &slot[(size_t)e->ktype * nstr + nm];
        if (!*sl) {
            agg a = {nm, 0, 0, INT64_MAX, INT64_MIN, 0, 0};
            if (GP_VEC_PUSH(groups[e->ktype], a)) {
                for (int k = 0; k < 3; k++) GP_VEC_FREE(groups[k]);
                free(slot);
                return GP_ENOMEM;
            }
            *sl = (uint32_t)groups[e->ktype].n;
        }
        agg *a = &groups[e->ktype].v[*sl - 1];
        a->count++;
        a->sum = gp_sat_add_i64(a->sum, e->dur);
        if (e->dur < a->min) a->min = e->dur;
        if (e->dur > a->max) a->max = e->dur;
        double d = (double)e->dur - a->mean;
        a->mean += d / (double)a->count;
        a->m2 += d * ((double)e->dur - a->mean);
    }
    free(slot);
    for (int k = 0; k < 3; k++) {
        agg_vec g = groups[k];
        groups[k].v = NULL;
        if (g.n) qsort(g.v, g.n, sizeof *g.v, cmp_agg);
        if (g.n <= (size_t)num_kernels) {
            for (size_t i = 0; i < g.n; i++) {
                gp_topk r;
                fill(&r, &g.v[i], (uint8_t)k);
                if (GP_VEC_PUSH(out, r)) goto oom2;
            }
        } else {
            /* pandas: cumsum, its linear-interpolated quantile, fold */
            double *cs = malloc(g.n * sizeof *cs);
            if (!cs) goto oom2;
            double c = 0;
            for (size_t i = 0; i < g.n; i++) cs[i] = c += (double)g.v[i].sum;
            double q = gp_quantile_sorted_f64(cs, g.n, ratio); /* cumsum is non-decreasing */
            agg oth = {GP_NO_INDEX, 0, 0, INT64_MAX, INT64_MIN, 0, 0};
            agg ohta = oth; /* statistics over the folded per-name sums */
            for (size_t i = 0; i < g.n; i++) {
                const agg *a = &g.v[i];
                if (cs[i] > q || i >= (size_t)num_kernels) {
                    /* merge a into oth (Chan et al.) */
                    double n1 = (double)oth.count, n2 = (double)a->count, d = a->mean - oth.mean;
                    oth.m2 += a->m2 + d * d * n1 * n2 / (n1 + n2);
                    oth.mean = (n1 * oth.mean + n2 * a->mean) / (n1 + n2);
                    oth.count += a->count;
                    oth.sum += a->sum;
                    if (a->min < oth.min) oth.min = a->min;
                    if (a->max > oth.max) oth.max = a->max;
                    double x = (double)a->sum, dd = x - ohta.mean;
                    ohta.count++;
                    ohta.mean += dd / (double)ohta.count;
                    ohta.m2 += dd * (x - ohta.mean);
                    ohta.sum += a->sum;
                    if (a->sum < ohta.min) ohta.min = a->sum;
                    if (a->sum > ohta.max) ohta.max = a->sum;
                    continue;
                }
                gp_topk r;
                fill(&r, a, (uint8_t)k);
                if (v->compat) {
                    r.mean = (double)a->sum;
                    r.min = r.max = a->sum;
                    r.std = 0;
                }
                if (GP_VEC_PUSH(out, r)) {
                    free(cs);
                    goto oom2;
                }
            }
            free(cs);
            if (oth.count) {
                gp_topk r;
                fill(&r, &oth, (uint8_t)k);
                if (v->compat) {
                    r.min = ohta.min;
                    r.max = ohta.max;
                    r.mean = ohta.mean;
                    r.std = ohta.count > 1 ? sqrt(ohta.m2 / (double)(ohta.count - 1)) : 0;
                }
                if (GP_VEC_PUSH(out, r)) goto oom2;
            }
        }
        GP_VEC_FREE(g);
        continue;
    oom2:
        GP_VEC_FREE(g);
        for (int j = k + 1; j < 3; j++) GP_VEC_FREE(groups[j]);
        GP_VEC_FREE(out);
        return GP_ENOMEM;
    }
    *rows = out.v;
    *nrows = out.n;
    return 0;
}
