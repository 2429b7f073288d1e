/* core/sketch.h: a fixed-size log-linear quantile sketch of non-negative
 * integer durations (ns). Values below 32 have their own bucket (exact);
 * above, each power of two is split into 32 buckets, so the value reported
 * for a quantile (its bucket's midpoint, clamped to the exact min/max) is
 * within 1/64 (1.6 %) of a sample of that rank. 1,920 buckets cover every
 * int64; counts are 64-bit. Sketches of the same kind merge by adding
 * buckets, so per-thread sketches combine exactly. */
#ifndef GP_CORE_SKETCH_H
#define GP_CORE_SKETCH_H
#include <stddef.h>
#include <stdint.h>

#define GP_SKETCH_SUB     32 /* buckets per power of two */
#define GP_SKETCH_BUCKETS (GP_SKETCH_SUB + 59 * GP_SKETCH_SUB)
/* relative error bound of a reported quantile (half a bucket's width) */
#define GP_SKETCH_REL_ERR (1.0 / 64.0)

/* Bucket index of value v (negative values count as 0). */
static inline unsigned gp_sketch_index(int64_t v)
{
    if (v < GP_SKETCH_SUB) return v < 0 ? 0u : (unsigned)v;
    unsigned msb = 63u - (unsigned)__builtin_clzll((uint64_t)v);
    unsigned sub = (unsigned)((uint64_t)v >> (msb - 5)) & (GP_SKETCH_SUB - 1);
    return GP_SKETCH_SUB + (msb - 5) * GP_SKETCH_SUB + sub;
}

/* Lowest value of bucket i and its width. */
void gp_sketch_bounds(unsigned i, int64_t *lo, int64_t *width);

/* The value reported for bucket i: its midpoint (exact below 32). */
double gp_sketch_value(unsigned i);

/* q-quantile (0..1) of the n values counted in buckets b (an array of
 * GP_SKETCH_BUCKETS counts), by the same rank rule as gp_quantile_sorted_i64
 * (linear interpolation between the ranks floor and ceil of q*(n-1), each
 * rank's value taken as its bucket's value), clamped to [min, max]. 0 when
 * n is 0. */
double gp_sketch_quantile(const uint64_t *b, uint64_t n, int64_t min, int64_t max, double q);

#endif
