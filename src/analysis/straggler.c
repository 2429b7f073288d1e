/* analysis/straggler.c: per-rank robust z-scores of compute and idle time,
 * rank orderings and straggler flags. */
#include "analysis/straggler.h"
#include "core/error.h"
#include "core/stats.h"
#include <math.h>
#include <stdlib.h>

double gp_robust_z(double x, double med, double mad, double meanad)
{
    if (mad > 0) return 0.6745 * (x - med) / mad;
    if (meanad > 0) return (x - med) / (1.253314 * meanad);
    return 0;
}

/* z-scores of v[0..n) into z */
static int score(const int64_t *v, size_t n, double *z)
{
    double *s = malloc((n ? n : 1) * sizeof *s);
    if (!s) return GP_ENOMEM;
    for (size_t i = 0; i < n; i++) s[i] = (double)v[i];
    gp_sort_f64(s, n);
    double med = gp_quantile_sorted_f64(s, n, 0.5), meanad = 0;
    for (size_t i = 0; i < n; i++) {
        s[i] = fabs((double)v[i] - med);
        meanad += s[i];
    }
    meanad = n ? meanad / (double)n : 0;
    gp_sort_f64(s, n);
    double mad = gp_quantile_sorted_f64(s, n, 0.5);
    for (size_t i = 0; i < n; i++) z[i] = gp_robust_z((double)v[i], med, mad, meanad);
    free(s);
    return 0;
}

int gp_stragglers(const int *ranks, const int64_t *compute_ns, const int64_t *idle_ns, size_t n,
                  double thr, gp_straggler_row *rows)
{
    double *zc = malloc((n ? n : 1) * sizeof *zc), *zi = malloc((n ? n : 1) * sizeof *zi);
    if (!zc || !zi || score(compute_ns, n, zc) || score(idle_ns, n, zi)) {
        free(zc);
        free(zi);
        return GP_ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        gp_straggler_row *r = &rows[i];
        r->rank = ranks[i];
        r->compute_ns = compute_ns[i];
        r->idle_ns = idle_ns[i];
        r->compute_z = zc[i];
        r->idle_z = zi[i];
        r->outlier = fabs(zc[i]) > thr || fabs(zi[i]) > thr;
        r->straggler = zc[i] > thr || zi[i] < -thr;
        /* positions: 1 + ranks ahead (equal values: the lower rank id first) */
        int bc = 1, bi = 1;
        for (size_t j = 0; j < n; j++) {
            if (j == i) continue;
            if (compute_ns[j] > compute_ns[i] ||
                (compute_ns[j] == compute_ns[i] && ranks[j] < ranks[i]))
                bc++;
            if (idle_ns[j] < idle_ns[i] || (idle_ns[j] == idle_ns[i] && ranks[j] < ranks[i])) bi++;
        }
        r->by_compute = bc;
        r->by_idle = bi;
    }
    free(zc);
    free(zi);
    return 0;
}
