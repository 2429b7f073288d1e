/* analysis/activity.c: CPU-active, GPU-active and overlap time by merging
 * slice intervals. */
#include "analysis/activity.h"
#include "analysis/calltree.h"
#include "core/stats.h"
#include <stdlib.h>
#include <string.h>

static int cmp_pair(const void *a, const void *b)
{
    const int64_t *x = a, *y = b;
    if (x[0] != y[0]) return x[0] < y[0] ? -1 : 1;
    return (x[1] > y[1]) - (x[1] < y[1]);
}

size_t gp_intervals_merge(int64_t *iv, size_t n)
{
    if (!n) return 0;
    int reversed = 0; /* an interval ending before it starts (HTA-rounded, < 1 us) */
    for (size_t i = 0; i < n && !reversed; i++) reversed = iv[2 * i + 1] < iv[2 * i];
    /* Without reversed intervals the order of equal starts does not change
     * the result: a stable radix sort by start. With them it does, so they
     * are ordered by (start, end) as before. */
    if (reversed)
        qsort(iv, n, 2 * sizeof *iv, cmp_pair);
    else
        gp_sort_pairs_i64(iv, n);
    size_t k = 0;
    for (size_t i = 1; i < n; i++) {
        if (iv[2 * i] <= iv[2 * k + 1]) {
            if (iv[2 * i + 1] > iv[2 * k + 1]) iv[2 * k + 1] = iv[2 * i + 1];
        } else {
            k++;
            iv[2 * k] = iv[2 * i];
            iv[2 * k + 1] = iv[2 * i + 1];
        }
    }
    return k + 1;
}

int64_t gp_intervals_overlap(const int64_t *a, size_t na, const int64_t *b, size_t nb)
{
    int64_t sum = 0;
    size_t i = 0, j = 0;
    while (i < na && j < nb) {
        int64_t lo = a[2 * i] > b[2 * j] ? a[2 * i] : b[2 * j];
        int64_t hi = a[2 * i + 1] < b[2 * j + 1] ? a[2 * i + 1] : b[2 * j + 1];
        if (hi > lo) sum += hi - lo;
        if (a[2 * i + 1] < b[2 * j + 1])
            i++;
        else
            j++;
    }
    return sum;
}

static int64_t *collect(const gp_trace *t, unsigned mask, size_t *n)
{
    size_t cnt = 0;
    for (size_t i = 0; i < t->slices.n; i++)
        if ((mask & GP_KIND_BIT(gp_slice_kind(t, &t->slices.v[i]))) && t->slices.v[i].dur > 0)
            cnt++;
    int64_t *iv = malloc((cnt ? cnt : 1) * 2 * sizeof *iv);
    if (!iv) return NULL;
    size_t k = 0;
    for (size_t i = 0; i < t->slices.n; i++) {
        const gp_slice *s = &t->slices.v[i];
        if (!(mask & GP_KIND_BIT(gp_slice_kind(t, s))) || s->dur <= 0) continue;
        iv[2 * k] = s->ts;
        iv[2 * k + 1] = s->ts + s->dur;
        k++;
    }
    *n = cnt;
    return iv;
}

int gp_activity_compute(const gp_trace *t, gp_activity *out)
{
    return gp_activity_compute_masks(t, gp_kind_mask_cpu(), gp_kind_mask_gpu_work(), out);
}

int gp_activity_compute_masks(const gp_trace *t, unsigned cpu_mask, unsigned gpu_mask,
                              gp_activity *out)
{
    memset(out, 0, sizeof *out);
    out->span_ns = t->t_end - t->t_begin;
    size_t nc, ng;
    int64_t *c = collect(t, cpu_mask, &nc);
    int64_t *g = c ? collect(t, gpu_mask, &ng) : NULL;
    if (!c || !g) {
        free(c);
        return GP_ENOMEM;
    }
    out->cpu_slices = nc;
    out->gpu_slices = ng;
    out->gpu_valid = ng > 0;
    nc = gp_intervals_merge(c, nc);
    ng = gp_intervals_merge(g, ng);
    for (size_t i = 0; i < nc; i++) out->cpu_active_ns += c[2 * i + 1] - c[2 * i];
    for (size_t i = 0; i < ng; i++) out->gpu_active_ns += g[2 * i + 1] - g[2 * i];
    out->overlap_ns = gp_intervals_overlap(c, nc, g, ng);
    free(c);
    free(g);
    return 0;
}
