/* analysis/mannwhitney.h: the two-sided Mann-Whitney U (Wilcoxon rank-sum)
 * test, as scipy.stats.mannwhitneyu computes it: exact null distribution for
 * small samples without ties, else the normal approximation with tie and
 * continuity corrections. */
#ifndef GP_ANALYSIS_MANNWHITNEY_H
#define GP_ANALYSIS_MANNWHITNEY_H
#include <stddef.h>
#include <stdint.h>

typedef enum gp_mwu_method {
    GP_MWU_AUTO = 0,   /* exact when a side has <= 8 values and there are no ties */
    GP_MWU_EXACT,      /* exact (falls back to asymptotic when ties exist) */
    GP_MWU_ASYMPTOTIC, /* normal approximation */
} gp_mwu_method;

typedef struct gp_mwu {
    int valid;     /* 0 when a sample is empty (then u1/p are NaN) */
    int exact;     /* 1 when p comes from the exact distribution */
    double u1;     /* U of the first sample: R1 - n1(n1+1)/2 (scipy's statistic) */
    double z;      /* normal-approximation z of max(U1,U2) (NaN when exact) */
    double p;      /* two-sided p-value in [0, 1] */
    double effect; /* U1 / (n1 n2): P(x > y) + P(x = y)/2, 0.5 = no shift */
} gp_mwu;

/* Runs the test on x[0..n1) and y[0..n2) (left unmodified; NaNs must be
 * removed by the caller). The exact method is used only when n1*n2 <= 40000
 * (cost O(min(n1,n2) * n1 * n2)); beyond that it is asymptotic. Returns 0,
 * or GP_ENOMEM with *out invalid. */
int gp_mwu_test(const double *x, size_t n1, const double *y, size_t n2, gp_mwu_method method,
                gp_mwu *out);

/* The same test on samples already sorted ascending (O(n1 + n2): one merge,
 * no copy). Returns 0 (it allocates nothing). */
int gp_mwu_test_sorted(const double *x, size_t n1, const double *y, size_t n2, gp_mwu_method method,
                       gp_mwu *out);
/* The same on ascending integer samples (durations in ns). Returns 0. */
int gp_mwu_test_sorted_i64(const int64_t *x, size_t n1, const int64_t *y, size_t n2,
                           gp_mwu_method method, gp_mwu *out);

/* P(U >= u) under the null hypothesis for sample sizes m and n without ties,
 * computed exactly (frequencies of the Gaussian binomial coefficient).
 * Returns NaN when m*n > 40000 or on out of memory. */
double gp_mwu_exact_sf(size_t m, size_t n, double u);

#endif
