/* record/results.c: in-process results of a profiler: per-operation rows
 * (via analysis/summary), bottlenecks by self time, observations, counters
 * and the text reports. */
#include "analysis/summary.h"
#include "core/stats.h"
#include "core/table.h"
#include "report/summary.h"
#include "record/recorder.h"
#include <stdlib.h>
#include <string.h>

/* Brings p's trace up to date (caller holds p->mu). */
static void refresh(gp_profiler *p)
{
    gp_rec_drain(p);
    gp_cuda_resolve_(p, 0);
    gp_cl_resolve_(p, 0);
    gp_rec_collect_aggs(p, 1);
    gp_rec_entry_metrics(p);
}

int gp_record_stats_get(gp_profiler *p, gp_record_stats *out)
{
    pthread_mutex_lock(&p->mu);
    gp_rec_drain(p);
    gp_stream_settle_(p); /* a store's queued ranges: kept or dropped, not yet known */
    out->aggregated = gp_rec_count(p, 1);
    out->dropped = gp_rec_count(p, 0);
    out->kept = p->streamed_ranges - p->streamed_base; /* since the last reset */
    for (size_t i = 0; i < p->tr->slices.n; i++)
        if (p->tr->slices.v[i].cat == p->cat_range) out->kept++;
    /* ranges the stream sink could not write are dropped, not kept (their
     * statistics stay in the results) */
    uint64_t lost = p->stream_lost - p->lost_base;
    if (lost > out->kept) lost = out->kept;
    out->kept -= lost;
    out->dropped += lost;
    pthread_mutex_unlock(&p->mu);
    return 0;
}

void gp_summary_rows_free(gp_summary_row *rows, size_t n)
{
    if (!rows) return;
    for (size_t i = 0; i < n; i++) free(rows[i].name);
    free(rows);
}

typedef struct extra {
    int64_t self, bytes;
    int has_bytes;
} extra;

/* Computes all rows sorted by total descending (caller holds p->mu). */
static int rows_locked(gp_profiler *p, gp_summary_row **out, size_t *nout)
{
    gp_summary s;
    gp_u64map m = {0};
    extra *ex = NULL;
    gp_summary_row *rows = NULL;
    int rc = GP_ENOMEM;
    *out = NULL;
    *nout = 0;
    if (gp_summary_compute(p->tr, &s)) return GP_ENOMEM;
    ex = calloc(s.n + 1, sizeof *ex);
    rows = calloc(s.n + 1, sizeof *rows);
    if (!ex || !rows) goto done;
    for (size_t r = 0; r < s.n; r++)
        if (gp_u64map_put(&m, (uint64_t)s.rows[r].group << 32 | s.rows[r].name, r)) goto done;
    for (size_t i = 0; i < p->tr->slices.n; i++) {
        const gp_slice *sl = &p->tr->slices.v[i];
        gp_group g = gp_group_of_kind(gp_slice_kind(p->tr, sl));
        uint64_t r;
        if (!gp_u64map_get(&m, (uint64_t)g << 32 | sl->name, &r)) continue;
        ex[r].self += p->ext.v[i].self_ns;
        if (p->ext.v[i].bytes >= 0) {
            ex[r].bytes += p->ext.v[i].bytes;
            ex[r].has_bytes = 1;
        }
    }
    for (size_t i = 0; i < p->tr->aggs.n; i++) {
        const gp_agg_row *a = &p->tr->aggs.v[i];
        gp_group g = gp_group_of_kind((gp_kind)p->tr->cats.v[a->cat].kind);
        uint64_t r;
        if (!gp_u64map_get(&m, (uint64_t)g << 32 | a->name, &r)) continue;
        ex[r].self += a->self_ns;
        if (a->bytes >= 0) {
            ex[r].bytes += a->bytes;
            ex[r].has_bytes = 1;
        }
    }
    for (size_t r = 0; r < s.n; r++) {
        gp_summary_row *w = &rows[r];
        if (gp_summary_row_of(p->tr, &s.rows[r], w)) {
            gp_summary_rows_free(rows, r);
            rows = NULL;
            goto done;
        }
        /* the recorder's own self times and bytes (slice extras, aggregates) */
        w->self_ns = ex[r].self;
        w->bytes = ex[r].has_bytes ? ex[r].bytes : -1;
    }
    *out = rows;
    *nout = s.n;
    rows = NULL;
    rc = 0;
done:
    free(rows);
    free(ex);
    gp_u64map_free(&m);
    gp_summary_free(&s);
    return rc;
}

static int cmp_total(const void *a, const void *b)
{
    const gp_summary_row *x = a, *y = b;
    if (x->total_ns != y->total_ns) return x->total_ns < y->total_ns ? 1 : -1;
    return strcmp(x->name, y->name);
}

int gp_summary_rows(gp_profiler *p, gp_summary_row **rows, size_t *n)
{
    pthread_mutex_lock(&p->mu);
    refresh(p);
    int rc = rows_locked(p, rows, n);
    pthread_mutex_unlock(&p->mu);
    if (!rc) qsort(*rows, *n, sizeof **rows, cmp_total);
    return rc;
}

int gp_bottlenecks(gp_profiler *p, size_t n, gp_summary_row **rows, size_t *nout)
{
    int rc = gp_summary_rows(p, rows, nout);
    if (rc) return rc;
    gp_summary_rows_by_self(*rows, *nout);
    if (*nout > n) {
        for (size_t i = n; i < *nout; i++) free((*rows)[i].name);
        *nout = n;
    }
    return 0;
}

/* Prints rows as a table with one unit per time column. */
static void print_rows(const gp_summary_row *rows, size_t n, FILE *f, int bottleneck, int64_t span)
{
    enum { NT = 9 };
    double mx[NT] = {0};
    for (size_t i = 0; i < n; i++) {
        const gp_summary_row *r = &rows[i];
        double v[NT] = {(double)r->total_ns, (double)r->self_ns, r->mean_ns,
                        (double)r->min_ns,   (double)r->max_ns,  r->std_ns,
                        r->p50_ns,           r->p95_ns,          r->p99_ns};
        for (int c = 0; c < NT; c++)
            if (v[c] > mx[c]) mx[c] = v[c];
    }
    gp_unit u[NT];
    char hdr[NT][32];
    static const char *const hn[NT] = {"Total", "Self", "Mean", "Min", "Max",
                                       "Std",   "P50",  "P95",  "P99"};
    for (int c = 0; c < NT; c++) {
        u[c] = gp_unit_pick(mx[c]);
        snprintf(hdr[c], sizeof hdr[c], "%s (%s)", hn[c], u[c].name);
    }
    const char *headers[] = {"Name",
                             "Kind",
                             "Calls",
                             hdr[0],
                             hdr[1],
                             hdr[2],
                             hdr[3],
                             hdr[4],
                             hdr[5],
                             hdr[6],
                             hdr[7],
                             hdr[8],
                             bottleneck ? "Self %" : "Bytes"};
    gp_table *tb = gp_table_create(13, headers, "llrrrrrrrrrrr");
    if (!tb) return;
    for (size_t i = 0; i < n; i++) {
        const gp_summary_row *r = &rows[i];
        double v[NT] = {(double)r->total_ns, (double)r->self_ns, r->mean_ns,
                        (double)r->min_ns,   (double)r->max_ns,  r->std_ns,
                        r->p50_ns,           r->p95_ns,          r->p99_ns};
        char cells[13][64];
        const char *cp[13];
        cp[0] = r->name;
        cp[1] = strcmp(r->group, "annotation") == 0 ? "range" : r->group;
        snprintf(cells[2], 64, "%llu", (unsigned long long)r->count);
        for (int c = 0; c < NT; c++) gp_fmt_dur(cells[3 + c], 64, v[c], u[c]);
        if (bottleneck)
            snprintf(cells[12], 64, "%.1f",
                     span > 0 ? 100.0 * (double)r->self_ns / (double)span : 0);
        else if (r->bytes >= 0)
            gp_fmt_bytes(cells[12], 64, (double)r->bytes);
        else
            snprintf(cells[12], 64, "-");
        for (int c = 2; c < 13; c++) cp[c] = cells[c];
        gp_table_row(tb, cp);
    }
    gp_table_print(tb, f, 48);
    gp_table_destroy(tb);
}

/* The per-entry metrics of the rows that have any, in the table of
 * `gpuprof summary` (one writer: report/summary.c). */
static void print_entry_rows(const gp_summary_row *rows, size_t n, FILE *f)
{
    gp_entry_row *er = malloc((n ? n : 1) * sizeof *er);
    if (!er) return;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const gp_summary_row *r = &rows[i];
        gp_entry_sum e = {r->gpu_timers, r->gpu_ns,      r->xfers, r->xfer_ns,     r->xfer_bytes,
                          r->allocs,     r->alloc_bytes, r->frees, r->freed_bytes, r->peak_bytes};
        if (gp_entry_sum_any(&e)) er[k++] = (gp_entry_row){r->name, r->count, e};
    }
    gp_report_entry_table(f, er, k, 48);
    free(er);
}

static int64_t span_ns(gp_profiler *p)
{
    pthread_mutex_lock(&p->mu);
    int64_t s = p->tr->t_end - p->tr->t_begin;
    pthread_mutex_unlock(&p->mu);
    return s;
}

void gp_print_summary(gp_profiler *p, FILE *f)
{
    gp_summary_row *rows;
    size_t n;
    if (gp_summary_rows(p, &rows, &n)) {
        fprintf(f, "gpuprof: out of memory\n");
        return;
    }
    char sp[64];
    int64_t span = span_ns(p);
    fprintf(f, "gpuprof summary (%s): %zu operations over %s\n", p->name, n,
            gp_fmt_dur_auto(sp, sizeof sp, (double)span));
    if (n) print_rows(rows, n, f, 0, span);
    print_entry_rows(rows, n, f);
    pthread_mutex_lock(&p->mu);
    for (size_t i = 0; i < p->obs.n; i++) {
        const gp_obs *o = &p->obs.v[i];
        if (!o->v.n) continue;
        double *tmp = malloc(o->v.n * sizeof *tmp);
        if (!tmp) break;
        memcpy(tmp, o->v.v, o->v.n * sizeof *tmp);
        gp_dstats st;
        gp_stats_f64(tmp, o->v.n, &st);
        free(tmp);
        fprintf(
            f,
            "observe %s: n=%llu mean=%.6g std=%.6g min=%.6g p50=%.6g p95=%.6g p99=%.6g max=%.6g\n",
            gp_trace_s(p->tr, o->name), (unsigned long long)st.count, st.mean, st.std, st.min,
            st.p50, st.p95, st.p99, st.max);
    }
    if (p->unmatched_end)
        fprintf(f, "note: %llu range end(s) without a matching begin were ignored\n",
                (unsigned long long)p->unmatched_end);
    uint64_t agg = gp_rec_count(p, 1), drop = gp_rec_count(p, 0) + p->stream_lost;
    if (agg)
        fprintf(f,
                "note: %llu range(s) kept as statistics only (sink; p50/p95/p99 of those rows "
                "from the quantile sketch, within 1.6%%)\n",
                (unsigned long long)agg);
    if (drop)
        fprintf(f,
                "note: %llu event(s) dropped (keep cap, counter samples or memory events past "
                "the sink's cap, a stream that could not be written, or out of memory)\n",
                (unsigned long long)drop);
    pthread_mutex_unlock(&p->mu);
    gp_summary_rows_free(rows, n);
}

void gp_print_bottlenecks(gp_profiler *p, size_t n, FILE *f)
{
    gp_summary_row *rows;
    size_t k;
    if (gp_bottlenecks(p, n, &rows, &k)) {
        fprintf(f, "gpuprof: out of memory\n");
        return;
    }
    fprintf(f, "Top %zu bottlenecks by self time:\n", k);
    if (k) print_rows(rows, k, f, 1, span_ns(p));
    gp_summary_rows_free(rows, k);
}

int gp_observation_stats(gp_profiler *p, const char *name, gp_observation *out)
{
    if (!p || !out) return GP_EINVAL;
    memset(out, 0, sizeof *out);
    if (!name) name = ""; /* as gp_observe records a NULL name */
    int rc = GP_ENOTFOUND;
    pthread_mutex_lock(&p->mu);
    refresh(p);
    uint32_t id = gp_strtab_find(p->tr->strings, name, strlen(name));
    uint64_t idx;
    if (id != UINT32_MAX && gp_u64map_get(&p->obs_of, id, &idx) && p->obs.v[idx].v.n) {
        const gp_obs *o = &p->obs.v[idx];
        double *tmp = malloc(o->v.n * sizeof *tmp);
        if (!tmp) {
            rc = GP_ENOMEM;
        } else {
            memcpy(tmp, o->v.v, o->v.n * sizeof *tmp);
            gp_dstats st;
            gp_stats_f64(tmp, o->v.n, &st);
            free(tmp);
            out->count = st.count;
            out->sum = st.sum;
            out->mean = st.mean;
            out->std = st.std;
            out->min = st.min;
            out->max = st.max;
            out->p50 = st.p50;
            out->p95 = st.p95;
            out->p99 = st.p99;
            rc = 0;
        }
    }
    pthread_mutex_unlock(&p->mu);
    return rc;
}

int gp_counter_last(gp_profiler *p, const char *name, double *last, uint64_t *n)
{
    if (!p || !last || !n) return GP_EINVAL;
    int rc = GP_ENOTFOUND;
    *n = 0;
    if (!name) name = ""; /* as gp_counter records a NULL name */
    pthread_mutex_lock(&p->mu);
    refresh(p);
    uint32_t id = gp_strtab_find(p->tr->strings, name, strlen(name));
    uint64_t si;
    /* every sample counts, also those streamed or not kept (samples_max) */
    if (id != UINT32_MAX && gp_u64map_get(&p->series_of, id, &si) && si < p->sstat.n &&
        p->sstat.v[si].n) {
        *n = p->sstat.v[si].n;
        *last = p->sstat.v[si].last;
        rc = 0;
    }
    pthread_mutex_unlock(&p->mu);
    return rc;
}
