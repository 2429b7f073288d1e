/* analysis/mannwhitney.c: the two-sided Mann-Whitney U test (scipy's
 * mannwhitneyu, use_continuity=True): average ranks for ties, exact null
 * distribution or normal approximation with tie correction. */
#include "analysis/mannwhitney.h"
#include <gpuprof/common.h>
#include <math.h>
#include <stdlib.h>

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

typedef struct tagged {
    double v;
    int from_x;
} tagged;

static int cmp_tagged(const void *a, const void *b)
{
    double x = ((const tagged *)a)->v, y = ((const tagged *)b)->v;
    return x < y ? -1 : x > y;
}

int gp_mwu_test(const double *x, size_t n1, const double *y, size_t n2, gp_mwu_method method,
                gp_mwu *out)
{
    out->valid = 0;
    out->exact = 0;
    out->u1 = out->z = out->p = out->effect = NAN;
    if (n1 == 0 || n2 == 0) return 0;
    size_t n = n1 + n2;
    tagged *a = malloc(n * sizeof *a);
    if (!a) return GP_ENOMEM;
    for (size_t i = 0; i < n1; i++) a[i] = (tagged){x[i], 1};
    for (size_t i = 0; i < n2; i++) a[n1 + i] = (tagged){y[i], 0};
    qsort(a, n, sizeof *a, cmp_tagged);
    /* average ranks over runs of equal values; tie term sum(t^3 - t) */
    double r1 = 0, tie_term = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        while (j < n && a[j].v == a[i].v) j++;
        double t = (double)(j - i);
        double rank = ((double)i + 1 + (double)j) / 2.0; /* mean of ranks i+1..j */
        for (size_t k = i; k < j; k++)
            if (a[k].from_x) r1 += rank;
        if (j - i > 1) tie_term += t * t * t - t;
        i = j;
    }
    free(a);
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
    return 0;
}
