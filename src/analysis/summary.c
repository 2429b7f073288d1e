/* analysis/summary.c: per-operation statistics (count, total, mean, min,
 * max, stddev, p50/p95/p99) by (group, name), in two passes over slices. */
#include "analysis/summary.h"
#include "core/stats.h"
#include "analysis/calltree.h"
#include "core/sketch.h"
#include <math.h>
#include "core/hash.h"
#include "core/sbuf.h"
#include <gpuprof/gpuprof.h>
#include <stdlib.h>
#include <string.h>

static const char *const group_names[GP_G__COUNT] = {"kernel",     "memory", "cpu_op", "runtime",
                                                     "annotation", "python", "sync",   "other"};

const char *gp_group_name(gp_group g)
{
    if (g == GP_G_BENCH) return "bench";
    return (unsigned)g < GP_G__COUNT ? group_names[g] : "other";
}

int gp_is_bench_series(const char *name)
{
    return !strncmp(name, "bench:", 6);
}

int gp_group_parse(const char *s)
{
    for (int i = 0; i < GP_G__COUNT; i++)
        if (!strcmp(s, group_names[i])) return i;
    if (!strcmp(s, "kernels") || !strcmp(s, "gpu")) return GP_G_KERNEL;
    if (!strcmp(s, "memcpy") || !strcmp(s, "memset")) return GP_G_MEMORY;
    if (!strcmp(s, "cpu") || !strcmp(s, "ops")) return GP_G_CPU_OP;
    if (!strcmp(s, "driver")) return GP_G_RUNTIME;
    if (!strcmp(s, "annotations") || !strcmp(s, "ranges")) return GP_G_ANNOTATION;
    return -1;
}

gp_group gp_group_of_kind(gp_kind k)
{
    switch (k) {
    case GP_K_KERNEL:
    case GP_K_CL_COMMAND:
        return GP_G_KERNEL;
    case GP_K_MEMCPY:
    case GP_K_MEMSET:
        return GP_G_MEMORY;
    case GP_K_CPU_OP:
        return GP_G_CPU_OP;
    case GP_K_RUNTIME:
    case GP_K_DRIVER:
        return GP_G_RUNTIME;
    case GP_K_USER_ANNOTATION:
    case GP_K_GPU_ANNOTATION:
    case GP_K_RANGE:
        return GP_G_ANNOTATION;
    case GP_K_PYTHON:
        return GP_G_PYTHON;
    case GP_K_SYNC:
        return GP_G_SYNC;
    case GP_K_TRACE_SPAN:
        return GP_G__COUNT;
    default:
        return GP_G_OTHER;
    }
}

void gp_entry_sum_add(gp_entry_sum *dst, const gp_entry_sum *src)
{
    if (src->allocs && (!dst->allocs || src->peak_bytes > dst->peak_bytes))
        dst->peak_bytes = src->peak_bytes;
    dst->timers += src->timers;
    dst->gpu_ns += src->gpu_ns;
    dst->xfers += src->xfers;
    dst->xfer_ns += src->xfer_ns;
    dst->xfer_bytes += src->xfer_bytes;
    dst->allocs += src->allocs;
    dst->alloc_bytes += src->alloc_bytes;
    dst->frees += src->frees;
    dst->freed_bytes += src->freed_bytes;
}

int gp_entry_sum_any(const gp_entry_sum *e)
{
    return e->timers || e->allocs || e->frees;
}

double gp_entry_bandwidth(const gp_entry_sum *e)
{
    return e->xfer_ns > 0 ? (double)e->xfer_bytes * 1e9 / (double)e->xfer_ns : NAN;
}

void gp_entry_sum_json(gp_sbuf *b, const gp_entry_sum *e, int *comma)
{
    static const char *const k[] = {"gpu_timers",  "gpu_ns",     "xfers",
                                    "xfer_ns",     "xfer_bytes", "allocs",
                                    "alloc_bytes", "frees",      "freed_bytes"};
    int64_t v[] = {(int64_t)e->timers, e->gpu_ns,         (int64_t)e->xfers,
                   e->xfer_ns,         e->xfer_bytes,     (int64_t)e->allocs,
                   e->alloc_bytes,     (int64_t)e->frees, e->freed_bytes};
    for (int i = 0; i < 9; i++) {
        gp_json_key(b, k[i], (*comma)++);
        gp_json_int(b, v[i]);
        if (i == 4 && e->xfer_ns > 0) {
            gp_json_key(b, "bandwidth_Bps", (*comma)++);
            gp_json_num(b, gp_entry_bandwidth(e));
        }
    }
    if (e->allocs) {
        gp_json_key(b, "peak_bytes", (*comma)++);
        gp_json_int(b, e->peak_bytes);
    }
}

static int cmp_rows(const void *a, const void *b)
{
    const gp_op_row *x = a, *y = b;
    if (x->group != y->group) return (int)x->group - (int)y->group;
    if (x->st.sum != y->st.sum) return x->st.sum < y->st.sum ? 1 : -1;
    return x->name < y->name ? -1 : x->name > y->name;
}

/* Merges the aggregated rows mapped to row r (agg_row[i] == r) into its
 * statistics, whose slice part st already holds (v: those slices'
 * durations, sorted). Count, sum, min, max, mean and std stay exact (std by
 * the pairwise-combination formula); percentiles come from one sketch of
 * both parts. 0 or GP_ENOMEM. */
static int merge_aggs(const gp_trace *t, const uint32_t *agg_row, uint32_t r, const int64_t *v,
                      size_t nv, gp_op_row *row)
{
    gp_stats *st = &row->st;
    uint64_t *bk = NULL;
    double n = (double)st->count, mean = st->mean;
    double m2 = st->count > 1 ? st->std * st->std * (n - 1) : 0;
    for (size_t i = 0; i < t->aggs.n; i++) {
        if (agg_row[i] != r) continue;
        const gp_agg_row *a = &t->aggs.v[i];
        if (!bk) {
            bk = calloc(GP_SKETCH_BUCKETS, sizeof *bk);
            if (!bk) return GP_ENOMEM;
            for (size_t k = 0; k < nv; k++) bk[gp_sketch_index(v[k])]++;
        }
        if (a->sketch)
            for (unsigned k = 0; k < GP_SKETCH_BUCKETS; k++) bk[k] += a->sketch[k];
        double na = (double)a->count, ma = (double)a->total_ns / na;
        double nn = n + na, delta = ma - mean;
        m2 += a->m2 + delta * delta * n * na / nn;
        mean += delta * na / nn;
        n = nn;
        if (st->count == 0 || a->min_ns < st->min) st->min = a->min_ns;
        if (st->count == 0 || a->max_ns > st->max) st->max = a->max_ns;
        if (__builtin_add_overflow(st->sum, a->total_ns, &st->sum)) {
            st->sum = INT64_MAX;
            st->sum_overflow = 1;
        }
        st->count += a->count;
        row->agg_count += a->count;
        gp_entry_sum_add(&row->em, &a->em);
    }
    if (!bk) return 0;
    st->mean = (double)st->sum / (double)st->count;
    st->std = st->count > 1 ? sqrt(m2 / (double)(st->count - 1)) : 0;
    st->p50 = gp_sketch_quantile(bk, st->count, st->min, st->max, 0.50);
    st->p95 = gp_sketch_quantile(bk, st->count, st->min, st->max, 0.95);
    st->p99 = gp_sketch_quantile(bk, st->count, st->min, st->max, 0.99);
    row->pct_approx = 1;
    free(bk);
    return 0;
}

/* Index of the row of (g, name), appended when new; UINT32_MAX when out of
 * memory. */
static uint32_t row_for(gp_u64map *rowmap, gp_op_row **rows, size_t *nrows, size_t *rcap,
                        gp_group g, uint32_t name)
{
    uint64_t *slot = gp_u64map_slot(rowmap, (uint64_t)g << 32 | name, UINT64_MAX);
    if (!slot) return UINT32_MAX;
    if (*slot == UINT64_MAX) {
        if (*nrows == *rcap) {
            size_t nc = *rcap ? *rcap * 2 : 256;
            gp_op_row *nr = realloc(*rows, nc * sizeof *nr);
            if (!nr) return UINT32_MAX;
            *rows = nr;
            *rcap = nc;
        }
        memset(&(*rows)[*nrows], 0, sizeof **rows);
        (*rows)[*nrows].group = g;
        (*rows)[*nrows].name = name;
        *slot = (*nrows)++;
    }
    return (uint32_t)*slot;
}

int gp_summary_compute(const gp_trace *t, gp_summary *out)
{
    memset(out, 0, sizeof *out);
    out->span_ns = t->t_end - t->t_begin;
    size_t ncat = t->cats.n;
    uint8_t *cat_group = malloc(ncat ? ncat : 1);
    gp_u64map rowmap = {0};
    uint32_t *row_of = malloc((t->slices.n ? t->slices.n : 1) * sizeof *row_of);
    size_t *counts = NULL, *offs = NULL;
    int64_t *durs = NULL;
    uint32_t *agg_row = NULL;
    int rc = GP_ENOMEM;
    if (!cat_group || !row_of) goto fail;
    for (size_t i = 0; i < ncat; i++) cat_group[i] = (uint8_t)gp_group_of_kind(t->cats.v[i].kind);

    /* pass 1: assign each slice a row */
    size_t nrows = 0, rcap = 0;
    gp_op_row *rows = NULL;
    for (size_t i = 0; i < t->slices.n; i++) {
        const gp_slice *s = &t->slices.v[i];
        gp_group g = (gp_group)cat_group[s->cat];
        if (g == GP_G__COUNT) {
            row_of[i] = UINT32_MAX;
            continue;
        }
        if ((row_of[i] = row_for(&rowmap, &rows, &nrows, &rcap, g, s->name)) == UINT32_MAX)
            goto fail_rows;
    }
    /* aggregated rows join the row of their (group, name) */
    if (t->aggs.n) {
        agg_row = malloc(t->aggs.n * sizeof *agg_row);
        if (!agg_row) goto fail_rows;
        for (size_t i = 0; i < t->aggs.n; i++) {
            const gp_agg_row *a = &t->aggs.v[i];
            gp_group g = a->cat < ncat ? (gp_group)cat_group[a->cat] : GP_G__COUNT;
            agg_row[i] = UINT32_MAX;
            if (g == GP_G__COUNT || a->count == 0) continue;
            if ((agg_row[i] = row_for(&rowmap, &rows, &nrows, &rcap, g, a->name)) == UINT32_MAX)
                goto fail_rows;
        }
    }
    /* pass 2: gather durations per row contiguously, then statistics */
    counts = calloc(nrows + 1, sizeof *counts);
    offs = calloc(nrows + 1, sizeof *offs);
    durs = malloc((t->slices.n ? t->slices.n : 1) * sizeof *durs);
    if (!counts || !offs || !durs) goto fail_rows;
    for (size_t i = 0; i < t->slices.n; i++)
        if (row_of[i] != UINT32_MAX) counts[row_of[i]]++;
    for (size_t r = 0, acc = 0; r < nrows; r++) {
        offs[r] = acc;
        acc += counts[r];
    }
    for (size_t i = 0; i < t->slices.n; i++)
        if (row_of[i] != UINT32_MAX) durs[offs[row_of[i]]++] = t->slices.v[i].dur;
    for (size_t r = 0, acc = 0; r < nrows; r++) {
        gp_stats_i64(durs + acc, counts[r], &rows[r].st);
        if (agg_row && merge_aggs(t, agg_row, (uint32_t)r, durs + acc, counts[r], &rows[r]))
            goto fail_rows;
        acc += counts[r];
        rows[r].share_pct =
            out->span_ns > 0 ? 100.0 * (double)rows[r].st.sum / (double)out->span_ns : 0;
        out->group_total_ns[rows[r].group] =
            gp_sat_add_i64(out->group_total_ns[rows[r].group], rows[r].st.sum);
        out->group_count[rows[r].group] += rows[r].st.count;
    }
    /* per-entry metrics of the slices (the aggregated ones: merge_aggs) */
    for (size_t i = 0; i < t->entry_metrics.n; i++) {
        const gp_entry_metrics *m = &t->entry_metrics.v[i];
        if (m->slice < t->slices.n && row_of[m->slice] != UINT32_MAX)
            gp_entry_sum_add(&rows[row_of[m->slice]].em, &m->m);
    }
    /* self time: nesting per track over every summarized kind */
    {
        unsigned mask = 0;
        for (int k = 0; k < GP_K__COUNT; k++)
            if (gp_group_of_kind((gp_kind)k) != GP_G__COUNT) mask |= GP_KIND_BIT(k);
        gp_nesting nest;
        if (gp_nesting_build(t, mask, &nest)) goto fail_rows;
        /* each slice's own self time first (its nested length less its
         * children's, which fit in it: no overflow), then summed per row,
         * saturated (a row of many century-long slices of a hostile trace
         * would wrap; subtracting from a saturated sum would be wrong) */
        int64_t *own = calloc(nest.n ? nest.n : 1, sizeof *own);
        if (!own) {
            gp_nesting_free(&nest);
            goto fail_rows;
        }
        for (size_t i = 0; i < nest.n; i++) {
            int64_t d = nest.items[i].end - t->slices.v[nest.items[i].slice].ts;
            own[i] += d;
            if (nest.items[i].parent != GP_NO_INDEX) own[nest.items[i].parent] -= d;
        }
        for (size_t i = 0; i < nest.n; i++) {
            uint32_t r = row_of[nest.items[i].slice];
            if (r != UINT32_MAX) rows[r].self_ns = gp_sat_add_i64(rows[r].self_ns, own[i]);
        }
        free(own);
        gp_nesting_free(&nest);
        /* less the time of children aggregated inline (no slices of their own) */
        for (size_t i = 0; i < t->inline_children.n; i++) {
            const gp_inline_child *c = &t->inline_children.v[i];
            if (c->slice < t->slices.n && row_of[c->slice] != UINT32_MAX)
                rows[row_of[c->slice]].self_ns -= c->ns;
        }
        /* aggregated ranges carry their own self time */
        for (size_t i = 0; agg_row && i < t->aggs.n; i++)
            if (agg_row[i] != UINT32_MAX)
                rows[agg_row[i]].self_ns =
                    gp_sat_add_i64(rows[agg_row[i]].self_ns, t->aggs.v[i].self_ns);
        for (size_t r = 0; r < nrows; r++) {
            rows[r].self_pct =
                out->span_ns > 0 ? 100.0 * (double)rows[r].self_ns / (double)out->span_ns : 0;
            out->group_self_ns[rows[r].group] =
                gp_sat_add_i64(out->group_self_ns[rows[r].group], rows[r].self_ns);
            out->self_total_ns = gp_sat_add_i64(out->self_total_ns, rows[r].self_ns);
        }
    }
    if (nrows) qsort(rows, nrows, sizeof *rows, cmp_rows);
    out->rows = rows;
    out->n = nrows;
    rc = 0;
    goto done;
fail_rows:
    free(rows);
fail:
done:
    free(agg_row);
    free(cat_group);
    free(row_of);
    free(counts);
    free(offs);
    free(durs);
    gp_u64map_free(&rowmap);
    return rc;
}

void gp_summary_free(gp_summary *s)
{
    free(s->rows);
    memset(s, 0, sizeof *s);
}

/* 1 when row a ranks before row b as a bottleneck: more self time, then
 * more inclusive time. */
static int ranks_before(const gp_op_row *a, const gp_op_row *b)
{
    if (a->self_ns != b->self_ns) return a->self_ns > b->self_ns;
    return a->st.sum > b->st.sum;
}

size_t gp_summary_top(const gp_summary *s, unsigned mask, size_t *idx, size_t max)
{
    size_t k = 0;
    for (size_t i = 0; i < s->n; i++) {
        if (!(mask & (1u << s->rows[i].group))) continue;
        /* insertion into a descending top list */
        size_t j = k < max ? k++ : max;
        if (j == max && (max == 0 || !ranks_before(&s->rows[i], &s->rows[idx[max - 1]]))) continue;
        if (j == max) j = max - 1;
        while (j > 0 && ranks_before(&s->rows[i], &s->rows[idx[j - 1]])) {
            idx[j] = idx[j - 1];
            j--;
        }
        idx[j] = i;
    }
    return k;
}

unsigned gp_summary_bottleneck_mask(const gp_summary *s)
{
    unsigned all = (1u << GP_G__COUNT) - 1, ops = 0;
    for (size_t i = 0; i < s->n; i++)
        if (s->rows[i].group == GP_G_CPU_OP || s->rows[i].group == GP_G_PYTHON) ops = 1;
    return ops ? all & ~(1u << GP_G_ANNOTATION) : all;
}

int gp_summary_row_of(const gp_trace *t, const gp_op_row *o, gp_summary_row *w)
{
    memset(w, 0, sizeof *w);
    w->name = strdup(gp_trace_s(t, o->name));
    if (!w->name) return GP_ENOMEM;
    w->group = gp_group_name(o->group);
    w->count = o->st.count;
    w->total_ns = (int64_t)o->st.sum;
    w->self_ns = o->self_ns;
    w->min_ns = (int64_t)o->st.min;
    w->max_ns = (int64_t)o->st.max;
    w->mean_ns = o->st.mean;
    w->std_ns = o->st.std;
    w->p50_ns = o->st.p50;
    w->p95_ns = o->st.p95;
    w->p99_ns = o->st.p99;
    w->bytes = -1;
    w->aggregated = o->agg_count;
    w->pct_approx = o->pct_approx;
    w->gpu_timers = o->em.timers;
    w->gpu_ns = o->em.gpu_ns;
    w->xfers = o->em.xfers;
    w->xfer_ns = o->em.xfer_ns;
    w->xfer_bytes = o->em.xfer_bytes;
    w->bandwidth_Bps = gp_entry_bandwidth(&o->em);
    w->allocs = o->em.allocs;
    w->frees = o->em.frees;
    w->alloc_bytes = o->em.alloc_bytes;
    w->freed_bytes = o->em.freed_bytes;
    w->peak_bytes = o->em.allocs ? o->em.peak_bytes : -1;
    return 0;
}

static int cmp_row_self(const void *a, const void *b)
{
    const gp_summary_row *x = a, *y = b;
    if (x->self_ns != y->self_ns) return x->self_ns < y->self_ns ? 1 : -1;
    return strcmp(x->name, y->name);
}

void gp_summary_rows_by_self(gp_summary_row *rows, size_t n)
{
    if (rows && n) qsort(rows, n, sizeof *rows, cmp_row_self);
}
