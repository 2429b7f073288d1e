/* core/sketch.c: bucket bounds and quantiles of the log-linear sketch. */
#include "core/sketch.h"

void gp_sketch_bounds(unsigned i, int64_t *lo, int64_t *width)
{
    if (i < GP_SKETCH_SUB) {
        *lo = i;
        *width = 1;
        return;
    }
    unsigned e = (i - GP_SKETCH_SUB) / GP_SKETCH_SUB + 5; /* msb */
    unsigned sub = (i - GP_SKETCH_SUB) % GP_SKETCH_SUB;
    int64_t w = (int64_t)1 << (e - 5);
    *lo = ((int64_t)1 << e) + (int64_t)sub * w;
    *width = w;
}

double gp_sketch_value(unsigned i)
{
    int64_t lo, w;
    gp_sketch_bounds(i, &lo, &w);
    return w == 1 ? (double)lo : (double)lo + (double)(w - 1) / 2.0;
}

/* Value of the sample of rank r (0-based) among the counted ones. */
static double rank_value(const uint64_t *b, uint64_t r)
{
    uint64_t acc = 0;
    for (unsigned i = 0; i < GP_SKETCH_BUCKETS; i++) {
        acc += b[i];
        if (acc > r) return gp_sketch_value(i);
    }
    return 0;
}

static double clamp(double v, int64_t min, int64_t max)
{
    if (v < (double)min) return (double)min;
    if (v > (double)max) return (double)max;
    return v;
}

double gp_sketch_quantile(const uint64_t *b, uint64_t n, int64_t min, int64_t max, double q)
{
    if (n == 0) return 0;
    if (q <= 0) return (double)min;
    if (q >= 1) return (double)max;
    double pos = q * (double)(n - 1);
    uint64_t lo = (uint64_t)pos;
    double frac = pos - (double)lo;
    double a = clamp(rank_value(b, lo), min, max);
    if (frac == 0 || lo + 1 >= n) return a;
    double c = clamp(rank_value(b, lo + 1), min, max);
    return a + (c - a) * frac;
}
