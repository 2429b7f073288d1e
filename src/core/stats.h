/* core/stats.h: descriptive statistics shared by every report: count, sum,
 * mean, min, max, sample standard deviation and linear-interpolated
 * percentiles (numpy's default method). */
#ifndef GP_CORE_STATS_H
#define GP_CORE_STATS_H
#include <stddef.h>
#include <stdint.h>

typedef struct gp_stats {
    uint64_t count;
    int64_t sum, min, max; /* exact integer figures (e.g. ns) */
    int sum_overflow;      /* 1 when sum saturated at INT64_MAX */
    double mean, std;      /* std: sample (n-1); 0 for count < 2 */
    double p50, p95, p99;
} gp_stats;

typedef struct gp_dstats {
    uint64_t count;
    double sum, min, max, mean, std, p50, p95, p99;
} gp_dstats;

/* Computes statistics of v[0..n); sorts v in place. n == 0 gives zeros. */
void gp_stats_i64(int64_t *v, size_t n, gp_stats *out);
/* Same for doubles (NaNs must be removed by the caller); sorts in place. */
void gp_stats_f64(double *v, size_t n, gp_dstats *out);
/* Linear-interpolated q-quantile (0..1) of a sorted array. */
double gp_quantile_sorted_i64(const int64_t *v, size_t n, double q);
double gp_quantile_sorted_f64(const double *v, size_t n, double q);
/* In-place ascending sorts (radix for i64, introsort for f64). */
void gp_sort_i64(int64_t *v, size_t n);
void gp_sort_f64(double *v, size_t n);
/* Stable ascending sort of n (key, value) pairs stored as p[2i], p[2i+1], by
 * key only (pairs with equal keys keep their order): LSD radix for large n.
 * Used for (start, end) intervals and (time, index) rows. */
void gp_sort_pairs_i64(int64_t *p, size_t n);

/* a + b saturated at INT64_MIN / INT64_MAX: totals of times and bytes over
 * hostile traces (events each over a century long) never wrap (as
 * gp_stats' sum, which flags it) */
static inline int64_t gp_sat_add_i64(int64_t a, int64_t b)
{
    int64_t r;
    if (__builtin_add_overflow(a, b, &r)) return b > 0 ? INT64_MAX : INT64_MIN;
    return r;
}

/* a - b saturated the same way */
static inline int64_t gp_sat_sub_i64(int64_t a, int64_t b)
{
    int64_t r;
    if (__builtin_sub_overflow(a, b, &r)) return b < 0 ? INT64_MAX : INT64_MIN;
    return r;
}

#endif
