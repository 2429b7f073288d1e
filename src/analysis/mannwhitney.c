/* analysis/mannwhitney.c: the two-sided Mann-Whitney U test (scipy's
 * mannwhitneyu, use_continuity=True): average ranks for ties, exact null
 * distribution or normal approximation with tie correction. */
#include "analysis/mannwhitney.h"
#include <gpuprof/common.h>
#include <math.h>
#include "core/stats.h"
#include <stdlib.h>
#include <string.h>

#define EXACT_MAX_CELLS 40000u

double gp_mwu_exact_sf(size_t m, size_t n, double u)
{
    if (m > n) {
        size_t tmp = m;
        m = n;
        n = tmp;
    }
    if (m == 0) return u <= 0 ? 1.0 : 0.0;
    if (m * n > EXACT_MAX_CELLS) return NAN;
    size_t deg = m * n;
    /* The counts of U for sizes (m, n) are the coefficients of the Gaussian
     * binomial [m+n choose m]_q = prod_{i=1..m} (1 - q^(n+i)) / (1 - q^i).
     * After each factor the polynomial is again a Gaussian binomial, so its
     * coefficients stay positive; long double keeps them exact far enough. */
    long double *c = calloc(deg + 1, sizeof *c);
    if (!c) return NAN;
    c[0] = 1;
    size_t cur = 0; /* current degree */
    for (size_t i = 1; i <= m; i++) {
        size_t step = n + i;
        size_t nd = cur + n; /* degree after multiplying by (1-q^(n+i))/(1-q^i) */
        /* multiply by (1 - q^step): from the top down */
        for (size_t k = nd + 1; k-- > step;) c[k] -= c[k - step];
        /* divide by (1 - q^i): running sum with stride i */
        for (size_t k = i; k <= nd; k++) c[k] += c[k - i];
        cur = nd;
    }
    long double total = 0, tail = 0;
    double uc = ceil(u);
    for (size_t k = 0; k <= deg; k++) {
        total += c[k];
        if ((double)k >= uc) tail += c[k];
    }
    free(c);
    double p = (double)(tail / total);
    return p > 1 ? 1 : p < 0 ? 0 : p;
}

/* Rank sum of x and tie term sum(t^3 - t) from two ascending arrays, by one
 * merge: each run of equal values (from either side) gets the mean of its
 * ranks. Generated for double and int64 samples. */
#define GP_MWU_RANKS(NAME, T)                                                                      \
    static void NAME(const T *x, size_t n1, const T *y, size_t n2, double *r1_out,                 \
                     double *tie_out)                                                              \
    {                                                                                              \
        double r1 = 0, tie_term = 0;                                                               \
        size_t i = 0, j = 0, pos = 0;                                                              \
        while (i < n1 || j < n2) {                                                                 \
            T v = i < n1 && (j >= n2 || x[i] <= y[j]) ? x[i] : y[j];                               \
            size_t tx = 0, ty = 0;                                                                 \
            while (i < n1 && x[i] == v) i++, tx++;                                                 \
            while (j < n2 && y[j] == v) j++, ty++;                                                 \
            double t = (double)(tx + ty);                                                          \
            r1 += (double)tx * ((double)pos + (t + 1) / 2.0); /* mean of ranks pos+1..pos+t */     \
            if (tx + ty > 1) tie_term += t * t * t - t;                                            \
            pos += tx + ty;                                                                        \
        }                                                                                          \
        *r1_out = r1;                                                                              \
        *tie_out = tie_term;                                                                       \
    }
GP_MWU_RANKS(ranks_f64, double)
GP_MWU_RANKS(ranks_i64, int64_t)

/* p-value and effect from the rank sum of the first sample. */
static void mwu_finish(size_t n1, size_t n2, double r1, double tie_term, gp_mwu_method method,
                       gp_mwu *out)
{
    size_t n = n1 + n2;
    double dn1 = (double)n1, dn2 = (double)n2, dn = (double)n;
    double u1 = r1 - dn1 * (dn1 + 1) / 2;
    double u2 = dn1 * dn2 - u1;
    double u = u1 > u2 ? u1 : u2;
    out->valid = 1;
    out->u1 = u1;
    out->effect = u1 / (dn1 * dn2);
    int exact = 0;
    if (method != GP_MWU_ASYMPTOTIC && tie_term == 0 && n1 * n2 <= EXACT_MAX_CELLS)
        exact = method == GP_MWU_EXACT || n1 <= 8 || n2 <= 8;
    double p;
    if (exact) {
        p = 2 * gp_mwu_exact_sf(n1, n2, u);
        out->exact = 1;
    } else {
        double mu = dn1 * dn2 / 2;
        double var = dn1 * dn2 / 12 * ((dn + 1) - tie_term / (dn * (dn - 1)));
        double s = var > 0 ? sqrt(var) : 0;
        if (s > 0) {
            double z = (u - mu - 0.5) / s;
            out->z = z;
            p = erfc(z / sqrt(2.0)); /* 2 * sf(z) */
        } else {
            p = 1; /* every value equal: no evidence of a shift */
        }
    }
    out->p = p > 1 ? 1 : p < 0 ? 0 : p;
}

static void mwu_reset(gp_mwu *out)
{
    out->valid = 0;
    out->exact = 0;
    out->u1 = out->z = out->p = out->effect = NAN;
}

int gp_mwu_test_sorted(const double *x, size_t n1, const double *y, size_t n2, gp_mwu_method method,
                       gp_mwu *out)
{
    mwu_reset(out);
    if (n1 == 0 || n2 == 0) return 0;
    double r1, tie;
    ranks_f64(x, n1, y, n2, &r1, &tie);
    mwu_finish(n1, n2, r1, tie, method, out);
    return 0;
}

int gp_mwu_test_sorted_i64(const int64_t *x, size_t n1, const int64_t *y, size_t n2,
                           gp_mwu_method method, gp_mwu *out)
{
    mwu_reset(out);
    if (n1 == 0 || n2 == 0) return 0;
    double r1, tie;
    ranks_i64(x, n1, y, n2, &r1, &tie);
    mwu_finish(n1, n2, r1, tie, method, out);
    return 0;
}

int gp_mwu_test(const double *x, size_t n1, const double *y, size_t n2, gp_mwu_method method,
                gp_mwu *out)
{
    mwu_reset(out);
    if (n1 == 0 || n2 == 0) return 0;
    double *a = malloc((n1 + n2) * sizeof *a);
    if (!a) return GP_ENOMEM;
    memcpy(a, x, n1 * sizeof *a);
    memcpy(a + n1, y, n2 * sizeof *a);
    gp_sort_f64(a, n1);
    gp_sort_f64(a + n1, n2);
    int rc = gp_mwu_test_sorted(a, n1, a + n1, n2, method, out);
    free(a);
    return rc;
}
