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

/* first index in p[a..b) whose key is > k (upper) or >= k (!upper) */
static size_t pairs_bound(const int64_t *p, size_t a, size_t b, int64_t k, int upper)
{
    while (a < b) {
        size_t m = a + (b - a) / 2;
        if (upper ? p[2 * m] <= k : p[2 * m] < k)
            a = m + 1;
        else
            b = m;
    }
    return a;
}

/* Stable merge of the sorted runs p[a..m) and p[m..b). Only the overlap
 * moves: the head of the left run whose keys are <= the right run's first
 * key and the tail of the right run whose keys are >= the left run's last
 * key are already in place; the smaller of the two remaining parts is
 * copied out. Returns nonzero on OOM (p unchanged). */
static int pairs_merge(int64_t *p, size_t a, size_t m, size_t b)
{
    if (p[2 * (m - 1)] <= p[2 * m]) return 0;
    a = pairs_bound(p, a, m, p[2 * m], 1);
    b = pairs_bound(p, m, b, p[2 * (m - 1)], 0);
    size_t nl = m - a, nr = b - m;
    int64_t *t = malloc(2 * (nl < nr ? nl : nr) * sizeof *t);
    if (!t) return GP_ENOMEM;
    if (nl <= nr) { /* forward: left part from t, right part in place */
        memcpy(t, p + 2 * a, 2 * nl * sizeof *t);
        size_t i = 0, j = m, o = a;
        while (i < nl && j < b) {
            if (p[2 * j] < t[2 * i]) {
                p[2 * o] = p[2 * j];
                p[2 * o + 1] = p[2 * j + 1];
                j++;
            } else {
                p[2 * o] = t[2 * i];
                p[2 * o + 1] = t[2 * i + 1];
                i++;
            }
            o++;
        }
        memcpy(p + 2 * o, t + 2 * i, 2 * (nl - i) * sizeof *t);
    } else { /* backward: right part from t, left part in place */
        memcpy(t, p + 2 * m, 2 * nr * sizeof *t);
        size_t i = m, j = nr, o = b;
        while (i > a && j > 0) {
            o--;
            if (t[2 * (j - 1)] < p[2 * (i - 1)]) {
                p[2 * o] = p[2 * (i - 1)];
                p[2 * o + 1] = p[2 * (i - 1) + 1];
                i--;
            } else {
                p[2 * o] = t[2 * (j - 1)];
                p[2 * o + 1] = t[2 * (j - 1) + 1];
                j--;
            }
        }
        memcpy(p + 2 * a, t, 2 * j * sizeof *t);
    }
    free(t);
    return 0;
}

/* The elements pairs_merge would move merging the nr ascending runs that
 * start at runs[0..nr) (runs[nr] == n) level by level: for two groups of
 * runs A and B merged, the elements of A above B's smallest key and those
 * of B below A's largest, found by binary search in each run (a group's
 * runs need not be merged first: its smallest key is the least of its
 * runs' first keys, its largest the greatest of their last keys). */
static size_t merge_moves(const int64_t *p, size_t *runs, size_t nr, size_t n)
{
    size_t moved = 0;
    runs[nr] = n;
    for (size_t g = 1; g < nr; g *= 2)
        for (size_t a = 0; a + g < nr; a += 2 * g) {
            size_t m = a + g, b = m + g < nr ? m + g : nr; /* A: runs a..m-1, B: m..b-1 */
            int64_t minb = INT64_MAX, maxa = INT64_MIN;
            for (size_t r = m; r < b; r++)
                if (p[2 * runs[r]] < minb) minb = p[2 * runs[r]];
            for (size_t r = a; r < m; r++)
                if (p[2 * (runs[r + 1] - 1)] > maxa) maxa = p[2 * (runs[r + 1] - 1)];
            if (maxa <= minb) continue;
            for (size_t r = a; r < m; r++)
                moved += runs[r + 1] - pairs_bound(p, runs[r], runs[r + 1], minb, 1);
            for (size_t r = m; r < b; r++)
                moved += pairs_bound(p, runs[r], runs[r + 1], maxa, 0) - runs[r];
        }
    return moved;
}

/* Inputs here are mostly nearly in order (slices in file order, each
 * thread's and stream's events by time): up to MAX_RUNS ascending runs are
 * merged pairwise, moving only where runs overlap; other inputs take the
 * radix sort below. Both are stable, so the result is the same. */
enum { MAX_RUNS = 256 };

void gp_sort_pairs_i64(int64_t *p, size_t n)
{
    size_t runs[MAX_RUNS + 1], nr = 0;
    runs[nr++] = 0;
    for (size_t i = 1; i < n && nr <= MAX_RUNS; i++)
        if (p[2 * (i - 1)] > p[2 * i]) runs[nr++] = i;
    if (nr == 1) return; /* already in order (common: one thread's events) */
    if (n < 64) {
        pairs_insertion(p, n);
        return;
    }
    if (nr <= MAX_RUNS && merge_moves(p, runs, nr, n) <= 3 * n) {
        size_t k = nr;
        while (k > 1) { /* one level: neighbours merged */
            size_t w = 0;
            for (size_t r = 0; r < k; r += 2) {
                if (r + 1 < k && pairs_merge(p, runs[r], runs[r + 1], runs[r + 2])) goto radix;
                runs[w++] = runs[r];
            }
            runs[w] = n;
            k = w;
        }
        return;
    }
radix:;
    /* LSD radix sort of the keys' offsets from their minimum: as many
     * digits as the keys' range needs (at most 11 bits each, so a digit's
     * counts, 8 KiB, stay in L1 and the scatter writes to at most 2048
     * places), every digit's counts taken in one read of the input, digits
     * that are equal in every key skipped. Stable, like every LSD radix
     * sort. */
    uint64_t lo = UINT64_MAX, hi = 0; /* range of the biased keys */
    for (size_t i = 0; i < n; i++) {
        uint64_t k = (uint64_t)p[2 * i] ^ (1ull << 63);
        if (k < lo) lo = k;
        if (k > hi) hi = k;
    }
    int bits = 64 - __builtin_clzll(hi - lo); /* hi > lo: the keys are not in order */
    int passes = (bits + 10) / 11, width = (bits + passes - 1) / passes;
    size_t nb = (size_t)1 << width, mask = nb - 1;
    uint64_t *tmp = malloc(2 * n * sizeof *tmp);
    uint32_t *cnt = n < UINT32_MAX ? calloc((size_t)passes * nb, sizeof *cnt) : NULL;
    if (!tmp || !cnt) { /* glibc's qsort is a merge sort: stable when it can allocate */
        free(tmp);
        free(cnt);
        qsort(p, n, 2 * sizeof *p, cmp_pair_key);
        return;
    }
    uint64_t *src = (uint64_t *)p, *dst = tmp;
    for (size_t i = 0; i < n; i++) {
        uint64_t k = (src[2 * i] ^ (1ull << 63)) - lo;
        for (int d = 0; d < passes; d++) cnt[(size_t)d * nb + ((k >> (d * width)) & mask)]++;
    }
    for (int d = 0; d < passes; d++) {
        uint32_t *c = cnt + (size_t)d * nb;
        int shift = d * width;
        if (c[((src[0] ^ (1ull << 63)) - lo) >> shift & mask] == n) continue; /* one value */
        uint32_t sum = 0;
        for (size_t b = 0; b < nb; b++) {
            uint32_t x = c[b];
            c[b] = sum;
            sum += x;
        }
        for (size_t i = 0; i < n; i++) {
            uint64_t k = src[2 * i], v = src[2 * i + 1];
            size_t j = c[((k ^ (1ull << 63)) - lo) >> shift & mask]++;
            dst[2 * j] = k;
            dst[2 * j + 1] = v;
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
