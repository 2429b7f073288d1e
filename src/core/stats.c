/* core/stats.c: statistics and sorting helpers. */
#include "core/stats.h"
#include "core/error.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_f64(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* LSD radix sort on 16-bit digits for large arrays; qsort for small ones. */
void gp_sort_i64(int64_t *v, size_t n)
{
    if (n < 4096) {
        qsort(v, n, sizeof *v, cmp_i64);
        return;
    }
    uint64_t *a = (uint64_t *)v;
    uint64_t *tmp = malloc(n * sizeof *tmp);
    if (!tmp) {
        qsort(v, n, sizeof *v, cmp_i64);
        return;
    }
    uint64_t *src = a, *dst = tmp;
    for (int pass = 0; pass < 4; pass++) {
        int shift = pass * 16;
        size_t cnt[65536];
        memset(cnt, 0, sizeof cnt);
        uint64_t diff = 0, first = (src[0] ^ (1ull << 63)) >> shift;
        for (size_t i = 0; i < n; i++) {
            uint64_t d = ((src[i] ^ (1ull << 63)) >> shift) & 0xffff;
            cnt[d]++;
            diff |= d ^ (first & 0xffff);
        }
        if (!diff) continue; /* all equal in this digit */
        size_t sum = 0;
        for (size_t i = 0; i < 65536; i++) {
            size_t c = cnt[i];
            cnt[i] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++) {
            uint64_t d = ((src[i] ^ (1ull << 63)) >> shift) & 0xffff;
            dst[cnt[d]++] = src[i];
        }
        uint64_t *t = src;
        src = dst;
        dst = t;
    }
    if (src != a) memcpy(a, src, n * sizeof *a);
    free(tmp);
}

static int cmp_pair_key(const void *a, const void *b)
{
    const int64_t *x = a, *y = b;
    return (x[0] > y[0]) - (x[0] < y[0]);
}

/* insertion sort: stable, for small inputs */
static void pairs_insertion(int64_t *p, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        int64_t k = p[2 * i], v = p[2 * i + 1];
        size_t j = i;
        while (j > 0 && p[2 * (j - 1)] > k) {
            p[2 * j] = p[2 * (j - 1)];
            p[2 * j + 1] = p[2 * (j - 1) + 1];
            j--;
        }
        p[2 * j] = k;
        p[2 * j + 1] = v;
    }
}

void gp_sort_pairs_i64(int64_t *p, size_t n)
{
    size_t run = 1;
    while (run < n && p[2 * (run - 1)] <= p[2 * run]) run++;
    if (run >= n) return; /* already in order (common: one thread's events) */
    if (n < 64) {
        pairs_insertion(p, n);
        return;
    }
    uint64_t *tmp = malloc(2 * n * sizeof *tmp);
    size_t *cnt = malloc(65536 * sizeof *cnt);
    if (!tmp || !cnt) { /* glibc's qsort is a merge sort: stable when it can allocate */
        free(tmp);
        free(cnt);
        qsort(p, n, 2 * sizeof *p, cmp_pair_key);
        return;
    }
    uint64_t *src = (uint64_t *)p, *dst = tmp;
    uint64_t lo = UINT64_MAX, hi = 0; /* range of the biased keys: skip constant digits */
    for (size_t i = 0; i < n; i++) {
        uint64_t k = src[2 * i] ^ (1ull << 63);
        if (k < lo) lo = k;
        if (k > hi) hi = k;
    }
    for (int shift = 0; shift < 64; shift += 16) {
        if (((lo ^ hi) >> shift) == 0) break; /* higher digits equal for all keys */
        memset(cnt, 0, 65536 * sizeof *cnt);
        for (size_t i = 0; i < n; i++) cnt[((src[2 * i] ^ (1ull << 63)) >> shift) & 0xffff]++;
        size_t sum = 0;
        for (size_t i = 0; i < 65536; i++) {
            size_t c = cnt[i];
            cnt[i] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++) {
            size_t d = cnt[((src[2 * i] ^ (1ull << 63)) >> shift) & 0xffff]++;
            dst[2 * d] = src[2 * i];
            dst[2 * d + 1] = src[2 * i + 1];
        }
        uint64_t *t = src;
        src = dst;
        dst = t;
    }
    if (src != (uint64_t *)p) memcpy(p, src, 2 * n * sizeof *p);
    free(tmp);
    free(cnt);
}

void gp_sort_f64(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_f64);
}

double gp_quantile_sorted_i64(const int64_t *v, size_t n, double q)
{
    if (!n) return 0;
    double pos = q * (double)(n - 1);
    size_t lo = (size_t)pos;
    if (lo >= n - 1) return (double)v[n - 1];
    double frac = pos - (double)lo;
    return (double)v[lo] + ((double)v[lo + 1] - (double)v[lo]) * frac;
}

double gp_quantile_sorted_f64(const double *v, size_t n, double q)
{
    if (!n) return 0;
    double pos = q * (double)(n - 1);
    size_t lo = (size_t)pos;
    if (lo >= n - 1) return v[n - 1];
    double frac = pos - (double)lo;
    return v[lo] + (v[lo + 1] - v[lo]) * frac;
}

void gp_stats_i64(int64_t *v, size_t n, gp_stats *o)
{
    memset(o, 0, sizeof *o);
    if (!n) return;
    gp_sort_i64(v, n);
    o->count = n;
    o->min = v[0];
    o->max = v[n - 1];
    int64_t s = 0;
    for (size_t i = 0; i < n; i++) {
        if (__builtin_add_overflow(s, v[i], &s)) {
            s = INT64_MAX;
            o->sum_overflow = 1;
            break;
        }
    }
    o->sum = s;
    /* mean from the exact sum when possible, else compensated double sum */
    double mean;
    if (!o->sum_overflow) {
        mean = (double)s / (double)n;
    } else {
        double m = 0;
        for (size_t i = 0; i < n; i++) m += ((double)v[i] - m) / (double)(i + 1);
        mean = m;
    }
    o->mean = mean;
    if (n > 1) {
        double acc = 0;
        for (size_t i = 0; i < n; i++) {
            double d = (double)v[i] - mean;
            acc += d * d;
        }
        o->std = sqrt(acc / (double)(n - 1));
    }
    o->p50 = gp_quantile_sorted_i64(v, n, 0.50);
    o->p95 = gp_quantile_sorted_i64(v, n, 0.95);
    o->p99 = gp_quantile_sorted_i64(v, n, 0.99);
}

void gp_stats_f64(double *v, size_t n, gp_dstats *o)
{
    memset(o, 0, sizeof *o);
    if (!n) return;
    gp_sort_f64(v, n);
    o->count = n;
    o->min = v[0];
    o->max = v[n - 1];
    double s = 0, c = 0;
    for (size_t i = 0; i < n; i++) { /* Kahan */
        double y = v[i] - c, t = s + y;
        c = (t - s) - y;
        s = t;
    }
    o->sum = s;
    o->mean = s / (double)n;
    if (n > 1) {
        double acc = 0;
        for (size_t i = 0; i < n; i++) {
            double d = v[i] - o->mean;
            acc += d * d;
        }
        o->std = sqrt(acc / (double)(n - 1));
    }
    o->p50 = gp_quantile_sorted_f64(v, n, 0.50);
    o->p95 = gp_quantile_sorted_f64(v, n, 0.95);
    o->p99 = gp_quantile_sorted_f64(v, n, 0.99);
}
