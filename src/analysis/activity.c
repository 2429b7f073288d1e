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

/* The union of the slices of the kinds in mask (dur > 0), merged chunk by
 * chunk as they are collected (the union of the chunks' unions is the
 * union): memory stays at one chunk plus the merged intervals instead of
 * every slice, and the small sorts stay in cache. *count: slices counted.
 * Returns the merged pairs (caller frees; *n of them) or NULL on OOM. */
static int64_t *collect_merged(const gp_trace *t, unsigned mask, size_t *n, uint64_t *count)
{
    enum { CHUNK = 1 << 16 };
    int64_t *ch = malloc(2 * CHUNK * sizeof *ch), *acc = NULL;
    size_t nch = 0, nacc = 0, cap = 0;
    *count = 0;
    if (!ch) return NULL;
    for (size_t i = 0;; i++) {
        int end = i == t->slices.n;
        if (!end) {
            const gp_slice *s = &t->slices.v[i];
            if (!(mask & GP_KIND_BIT(gp_slice_kind(t, s))) || s->dur <= 0) continue;
            ch[2 * nch] = s->ts;
            ch[2 * nch + 1] = s->ts + s->dur;
            nch++;
            (*count)++;
        }
        if (nch == CHUNK || (end && nch)) {
            size_t m = gp_intervals_merge(ch, nch);
            if (nacc + m > cap) {
                cap = 2 * (nacc + m);
                int64_t *a = realloc(acc, 2 * cap * sizeof *a);
                if (!a) {
                    free(acc);
                    free(ch);
                    return NULL;
                }
                acc = a;
            }
            memcpy(acc + 2 * nacc, ch, 2 * m * sizeof *ch);
            nacc += m;
            nch = 0;
        }
        if (end) break;
    }
    free(ch);
    if (!acc && !(acc = malloc(2 * sizeof *acc))) return NULL;
    *n = gp_intervals_merge(acc, nacc);
    return acc;
}

unsigned gp_kind_mask_cpu_work(void)
{
    /* the work a host thread does: operators and runtime/driver calls;
     * annotations (ProfilerStep#N spans a whole step), ranges and Python
     * frames enclose that work and would make every step "CPU active" */
    return GP_KIND_BIT(GP_K_CPU_OP) | GP_KIND_BIT(GP_K_RUNTIME) | GP_KIND_BIT(GP_K_DRIVER);
}

int gp_activity_compute(const gp_trace *t, gp_activity *out)
{
    return gp_activity_compute_masks(t, gp_kind_mask_cpu_work(), gp_kind_mask_gpu_work(), out);
}

int gp_activity_compute_masks(const gp_trace *t, unsigned cpu_mask, unsigned gpu_mask,
                              gp_activity *out)
{
    memset(out, 0, sizeof *out);
    out->span_ns = t->t_end - t->t_begin;
    size_t nc = 0, ng = 0;
    int64_t *c = collect_merged(t, cpu_mask, &nc, &out->cpu_slices);
    int64_t *g = c ? collect_merged(t, gpu_mask, &ng, &out->gpu_slices) : NULL;
    if (!c || !g) {
        free(c);
        return GP_ENOMEM;
    }
    out->gpu_valid = out->gpu_slices > 0;
    for (size_t i = 0; i < nc; i++) out->cpu_active_ns += c[2 * i + 1] - c[2 * i];
    for (size_t i = 0; i < ng; i++) out->gpu_active_ns += g[2 * i + 1] - g[2 * i];
    out->overlap_ns = gp_intervals_overlap(c, nc, g, ng);
    free(c);
    free(g);
    return 0;
}
