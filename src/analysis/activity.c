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

/* The unions of the slices of the kinds in two masks (dur > 0), collected
 * in one pass over the slices and merged chunk by chunk as they are
 * collected (the union of the chunks' unions is the union): memory stays at
 * a chunk per mask plus the merged intervals instead of every slice, and
 * the small sorts stay in cache. */
typedef struct merged_acc {
    int64_t *ch, *acc; /* the chunk being filled; the merged chunks so far */
    size_t nch, nacc, cap;
    uint64_t count; /* slices collected */
} merged_acc;

enum { CHUNK = 1 << 16 };

/* merges m's chunk into its accumulated intervals; 0 or GP_ENOMEM */
static int acc_flush(merged_acc *m)
{
    if (!m->nch) return 0;
    size_t k = gp_intervals_merge(m->ch, m->nch);
    if (m->nacc + k > m->cap) {
        size_t cap = 2 * (m->nacc + k);
        int64_t *a = realloc(m->acc, 2 * cap * sizeof *a);
        if (!a) return GP_ENOMEM;
        m->acc = a;
        m->cap = cap;
    }
    memcpy(m->acc + 2 * m->nacc, m->ch, 2 * k * sizeof *m->ch);
    m->nacc += k;
    m->nch = 0;
    return 0;
}

static int acc_add(merged_acc *m, const gp_slice *s)
{
    m->ch[2 * m->nch] = s->ts;
    m->ch[2 * m->nch + 1] = s->ts + s->dur;
    m->nch++;
    m->count++;
    return m->nch == CHUNK ? acc_flush(m) : 0;
}

static int collect_merged2(const gp_trace *t, const unsigned mask[2], merged_acc m[2])
{
    memset(m, 0, 2 * sizeof *m);
    for (int k = 0; k < 2; k++)
        if (!(m[k].ch = malloc(2 * CHUNK * sizeof *m[k].ch))) return GP_ENOMEM;
    for (size_t i = 0; i < t->slices.n; i++) {
        const gp_slice *s = &t->slices.v[i];
        if (s->dur <= 0) continue;
        unsigned bit = GP_KIND_BIT(gp_slice_kind(t, s));
        for (int k = 0; k < 2; k++)
            if ((mask[k] & bit) && acc_add(&m[k], s)) return GP_ENOMEM;
    }
    for (int k = 0; k < 2; k++) {
        if (acc_flush(&m[k])) return GP_ENOMEM;
        free(m[k].ch);
        m[k].ch = NULL;
        if (!m[k].acc && !(m[k].acc = malloc(2 * sizeof *m[k].acc))) return GP_ENOMEM;
        m[k].nacc = gp_intervals_merge(m[k].acc, m[k].nacc);
    }
    return 0;
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
    const unsigned masks[2] = {cpu_mask, gpu_mask};
    merged_acc m[2];
    if (collect_merged2(t, masks, m)) {
        for (int k = 0; k < 2; k++) {
            free(m[k].ch);
            free(m[k].acc);
        }
        return GP_ENOMEM;
    }
    int64_t *c = m[0].acc, *g = m[1].acc;
    size_t nc = m[0].nacc, ng = m[1].nacc;
    out->cpu_slices = m[0].count;
    out->gpu_slices = m[1].count;
    out->gpu_valid = out->gpu_slices > 0;
    for (size_t i = 0; i < nc; i++) out->cpu_active_ns += c[2 * i + 1] - c[2 * i];
    for (size_t i = 0; i < ng; i++) out->gpu_active_ns += g[2 * i + 1] - g[2 * i];
    out->overlap_ns = gp_intervals_overlap(c, nc, g, ng);
    free(c);
    free(g);
    return 0;
}
