/* record/ktimer.c: kernel-timer results shared by the CUDA and OpenCL
 * back-ends (per-kernel statistics, the seed's kernel report), and the
 * "unsupported" answers of back-ends this build was made without. */
#include "analysis/summary.h"
#include "core/sketch.h"
#include "core/stats.h"
#include "core/table.h"
#include "record/recorder.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int gp_kernels_resolve(gp_profiler *p, int wait)
{
    pthread_mutex_lock(&p->mu);
    int n = gp_cuda_resolve_(p, wait) + gp_cl_resolve_(p, wait);
    pthread_mutex_unlock(&p->mu);
    return n;
}

int gp_rec_agg_init(gp_agg_row *r, uint32_t name, uint16_t cat, uint32_t track, int64_t ts,
                    const gp_slice_ext *x)
{
    memset(r, 0, sizeof *r);
    r->name = name;
    r->cat = cat;
    r->track = track;
    r->bytes = -1;
    r->min_ns = INT64_MAX;
    r->max_ns = INT64_MIN;
    r->first_ns = r->last_ns = ts;
    r->device = x->device;
    r->backend = x->backend;
    r->sketch = calloc(GP_SKETCH_BUCKETS, sizeof *r->sketch);
    return r->sketch ? 0 : GP_ENOMEM;
}

void gp_rec_agg_add(gp_agg_row *r, int64_t ts, int64_t dur, const gp_slice_ext *x)
{
    /* Welford's update of the squared deviations */
    double old_mean = r->count ? (double)r->total_ns / (double)r->count : 0;
    r->count++;
    r->total_ns += dur;
    double new_mean = (double)r->total_ns / (double)r->count;
    r->m2 += ((double)dur - old_mean) * ((double)dur - new_mean);
    r->self_ns += x->self_ns;
    if (dur < r->min_ns) r->min_ns = dur;
    if (dur > r->max_ns) r->max_ns = dur;
    if (x->bytes >= 0) r->bytes = (r->bytes < 0 ? 0 : r->bytes) + x->bytes;
    if (ts < r->first_ns) r->first_ns = ts;
    if (ts + dur > r->last_ns) r->last_ns = ts + dur;
    r->sketch[gp_sketch_index(dur)]++;
}

int gp_rec_agg_cmp(const void *a, const void *b)
{
    const gp_agg_row *x = a, *y = b;
    if (x->name != y->name) return x->name < y->name ? -1 : 1;
    if (x->cat != y->cat) return x->cat < y->cat ? -1 : 1;
    if (x->track != y->track) return x->track < y->track ? -1 : 1;
    if (x->device != y->device) return x->device < y->device ? -1 : 1;
    return x->backend < y->backend ? -1 : x->backend > y->backend;
}

void gp_rec_agg_merge(gp_agg_row *a, const gp_agg_row *b)
{
    if (!b->count) return;
    if (a->count) {
        double na = (double)a->count, nb = (double)b->count;
        double d = (double)b->total_ns / nb - (double)a->total_ns / na;
        a->m2 += b->m2 + d * d * na * nb / (na + nb);
        if (b->min_ns < a->min_ns) a->min_ns = b->min_ns;
        if (b->max_ns > a->max_ns) a->max_ns = b->max_ns;
        if (b->first_ns < a->first_ns) a->first_ns = b->first_ns;
        if (b->last_ns > a->last_ns) a->last_ns = b->last_ns;
    } else {
        a->m2 = b->m2;
        a->min_ns = b->min_ns;
        a->max_ns = b->max_ns;
        a->first_ns = b->first_ns;
        a->last_ns = b->last_ns;
    }
    a->count += b->count;
    a->total_ns = gp_sat_add_i64(a->total_ns, b->total_ns);
    a->self_ns = gp_sat_add_i64(a->self_ns, b->self_ns);
    if (a->bytes < 0)
        a->bytes = b->bytes;
    else if (b->bytes >= 0)
        a->bytes = gp_sat_add_i64(a->bytes, b->bytes);
    gp_entry_sum_add(&a->em, &b->em);
    if (a->sketch && b->sketch)
        for (unsigned k = 0; k < GP_SKETCH_BUCKETS; k++) a->sketch[k] += b->sketch[k];
}

/* Folds one timing into p->kagg. 0 or GP_ENOMEM. */
static int kagg_add(gp_profiler *p, uint32_t track, uint16_t cat, uint32_t name, int64_t ts,
                    int64_t dur, const gp_slice_ext *x)
{
    if (track >= (1u << 31)) return GP_ENOMEM; /* no key for it (never: one per queue) */
    uint64_t key = (uint64_t)name << 32 | (uint64_t)track << 1 | (cat == p->cat_cl);
    uint64_t *slot = gp_u64map_slot(&p->kagg_of, key, UINT64_MAX);
    if (!slot) return GP_ENOMEM;
    if (*slot == UINT64_MAX) {
        gp_agg_row r;
        if (gp_rec_agg_init(&r, name, cat, track, ts, x) || GP_VEC_PUSH(p->kagg, r)) {
            free(r.sketch); /* the slot stays unset: tried again next time */
            return GP_ENOMEM;
        }
        *slot = p->kagg.n - 1;
    }
    gp_rec_agg_add(&p->kagg.v[*slot], ts, dur, x);
    return 0;
}

int gp_rec_kernel_timing(gp_profiler *p, uint32_t track, uint16_t cat, uint32_t name, int64_t ts,
                         int64_t dur, const gp_slice_ext *x, int warmup)
{
    if (!p->samples_max || p->kslices < p->samples_max) {
        /* a warm-up timing is no kernel of the program's work: its own
         * category, so that the summary rows (live, an export's, a
         * stream's) leave it out of the kernels as gp_kernel_stats does */
        long si = gp_rec_add_slice(p, track, warmup ? p->cat_warmup : cat, name, ts, dur, x);
        if (si < 0) return -1;
        p->kslices++;
        if (warmup) p->tr->slices.v[si].flags |= GP_SLICE_WARMUP;
        /* the stream writes its timings out every GP_KSTREAM_BLOCK: the
         * drain thread when it runs (woken: the timer call does no I/O),
         * else, or when the drain is 8 blocks behind (a store's writer
         * holding it back), this call (a program that only times kernels
         * has no drain thread; memory stays bounded either way) */
        if (p->stream && p->kslices >= GP_KSTREAM_BLOCK) {
            int drain = atomic_load_explicit(&p->drain_state, memory_order_relaxed) == 1 &&
                        p->drain_pid == getpid();
            if (drain && p->kslices < 8 * GP_KSTREAM_BLOCK)
                gp_rec_drain_wake(p);
            else
                gp_stream_flush_(p);
        }
        return 0;
    }
    if (warmup) { /* left out of every statistic anyway: counted, not kept */
        p->kwarm_dropped++;
        return 0;
    }
    if (kagg_add(p, track, cat, name, ts, dur, x)) return -1;
    if (ts < p->tr->t_begin) p->tr->t_begin = ts;
    if (ts + dur > p->tr->t_end) p->tr->t_end = ts + dur;
    return 0;
}

int gp_rec_kagg_stream(gp_profiler *p, size_t i)
{
    const gp_slice *s = &p->tr->slices.v[i];
    if (s->flags & GP_SLICE_WARMUP) return 0; /* in the stream, out of the statistics */
    return kagg_add(p, s->track, s->cat, s->name, s->ts, s->dur, &p->ext.v[i]);
}

int gp_rec_aggs_append(gp_profiler *p, const gp_agg_row *rows, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        gp_agg_row r = rows[i];
        r.sketch = malloc(GP_SKETCH_BUCKETS * sizeof *r.sketch);
        if (!r.sketch) return GP_ENOMEM;
        memcpy(r.sketch, rows[i].sketch, GP_SKETCH_BUCKETS * sizeof *r.sketch);
        if (GP_VEC_PUSH(p->tr->aggs, r)) {
            free(r.sketch);
            return GP_ENOMEM;
        }
    }
    return 0;
}

int gp_rec_kagg_collect(gp_profiler *p, int with_streamed)
{
    /* the stream sink's rows are timings its output already holds */
    if (p->sink == GP_SINK_STREAM && !with_streamed) return 0;
    return gp_rec_aggs_append(p, p->kagg.v, p->kagg.n);
}

void gp_rec_kagg_clear(gp_profiler *p)
{
    for (size_t i = 0; i < p->kagg.n; i++) free(p->kagg.v[i].sketch);
    p->kagg.n = 0;
    gp_u64map_free(&p->kagg_of);
    memset(&p->kagg_of, 0, sizeof p->kagg_of);
    p->kwarm_dropped = 0;
}

void gp_rec_kagg_free(gp_profiler *p)
{
    gp_rec_kagg_clear(p);
    GP_VEC_FREE(p->kagg);
}

static int cmp_krow(const void *a, const void *b)
{
    const gp_kernel_row *x = a, *y = b;
    if (x->total_ns != y->total_ns) return x->total_ns < y->total_ns ? 1 : -1;
    return strcmp(x->name, y->name);
}

void gp_kernel_rows_free(gp_kernel_row *rows, size_t n)
{
    if (!rows) return;
    for (size_t i = 0; i < n; i++) free(rows[i].name);
    free(rows);
}

/* The row of kernel (name, cat) in rows[0, *nrows), appended (name and
 * backend set) when new; m maps (name, backend) to rows. -1 when out of
 * memory. */
static long krow_index(gp_profiler *p, gp_u64map *m, gp_kernel_row *rows, size_t *nrows,
                       uint32_t name, uint16_t cat)
{
    uint64_t *slot = gp_u64map_slot(m, (uint64_t)name << 1 | (cat == p->cat_cl), UINT64_MAX);
    if (!slot) return -1;
    if (*slot == UINT64_MAX) {
        rows[*nrows].name = strdup(gp_trace_s(p->tr, name));
        if (!rows[*nrows].name) return -1;
        rows[*nrows].backend = cat == p->cat_cl ? GP_BACKEND_OPENCL : GP_BACKEND_CUDA;
        *slot = (*nrows)++;
    }
    return (long)*slot;
}

/* Collects kernel rows; caller holds p->mu. */
static int kernel_rows_locked(gp_profiler *p, gp_kernel_row **out, size_t *nout)
{
    const gp_trace *t = p->tr;
    gp_u64map m = {0};
    size_t nrows = 0;
    gp_kernel_row *rows = NULL;
    size_t *cnt = NULL, *off = NULL;
    int64_t *durs = NULL;
    uint32_t *row_of = NULL, *krow = NULL;
    int rc = GP_ENOMEM;
    *out = NULL;
    *nout = 0;
    row_of = malloc((t->slices.n + 1) * sizeof *row_of);
    rows = calloc(t->slices.n + p->kagg.n + 1, sizeof *rows);
    if (!row_of || !rows) goto done;
    for (size_t i = 0; i < t->slices.n; i++) {
        const gp_slice *s = &t->slices.v[i];
        row_of[i] = UINT32_MAX;
        if (s->cat != p->cat_cuda && s->cat != p->cat_cl) continue;
        if (s->flags & GP_SLICE_WARMUP) continue; /* as the measured ranges: no warm-up */
        long r = krow_index(p, &m, rows, &nrows, s->name, s->cat);
        if (r < 0) goto done;
        row_of[i] = (uint32_t)r;
    }
    /* the timings folded past the cap or streamed (p->kagg): their rows'
     * statistics merge with the slices' below */
    krow = p->kagg.n ? malloc(p->kagg.n * sizeof *krow) : NULL;
    if (p->kagg.n && !krow) goto done;
    for (size_t i = 0; i < p->kagg.n; i++) {
        long r = krow_index(p, &m, rows, &nrows, p->kagg.v[i].name, p->kagg.v[i].cat);
        if (r < 0) goto done;
        krow[i] = (uint32_t)r;
    }
    cnt = calloc(nrows + 1, sizeof *cnt);
    off = calloc(nrows + 1, sizeof *off);
    durs = malloc((t->slices.n + 1) * sizeof *durs);
    if (!cnt || !off || !durs) goto done;
    for (size_t i = 0; i < t->slices.n; i++)
        if (row_of[i] != UINT32_MAX) cnt[row_of[i]]++;
    for (size_t r = 0, acc = 0; r < nrows; r++) {
        off[r] = acc;
        acc += cnt[r];
    }
    for (size_t i = 0; i < t->slices.n; i++)
        if (row_of[i] != UINT32_MAX) durs[off[row_of[i]]++] = t->slices.v[i].dur;
    for (size_t r = 0, acc = 0; r < nrows; r++) {
        gp_stats st;
        gp_stats_i64(durs + acc, cnt[r], &st);
        acc += cnt[r];
        rows[r].count = st.count;
        rows[r].total_ns = st.sum;
        rows[r].min_ns = st.min;
        rows[r].max_ns = st.max;
        rows[r].mean_ns = st.mean;
        rows[r].std_ns = st.std;
    }
    /* Chan et al.'s merge of (count, mean, m2) with the folded rows */
    double *m2 = calloc(nrows + 1, sizeof *m2);
    if (!m2) goto done;
    for (size_t r = 0; r < nrows; r++)
        m2[r] =
            rows[r].count > 1 ? rows[r].std_ns * rows[r].std_ns * (double)(rows[r].count - 1) : 0;
    for (size_t i = 0; i < p->kagg.n; i++) {
        const gp_agg_row *a = &p->kagg.v[i];
        gp_kernel_row *w = &rows[krow[i]];
        if (!a->count) continue;
        double na = (double)w->count, nb = (double)a->count;
        double mb = (double)a->total_ns / nb, delta = mb - w->mean_ns;
        m2[krow[i]] += a->m2 + (w->count ? delta * delta * na * nb / (na + nb) : 0);
        if (!w->count || a->min_ns < w->min_ns) w->min_ns = a->min_ns;
        if (!w->count || a->max_ns > w->max_ns) w->max_ns = a->max_ns;
        w->count += a->count;
        w->total_ns += a->total_ns;
        w->mean_ns = (double)w->total_ns / (double)w->count;
    }
    for (size_t r = 0; r < nrows; r++)
        if (rows[r].count > 1) rows[r].std_ns = sqrt(m2[r] / (double)(rows[r].count - 1));
    free(m2);
    qsort(rows, nrows, sizeof *rows, cmp_krow);
    *out = rows;
    *nout = nrows;
    rows = NULL;
    rc = 0;
done:
    if (rows) gp_kernel_rows_free(rows, nrows);
    free(row_of);
    free(krow);
    free(cnt);
    free(off);
    free(durs);
    gp_u64map_free(&m);
    return rc;
}

int gp_kernel_stats(gp_profiler *p, gp_kernel_row **rows, size_t *n)
{
    pthread_mutex_lock(&p->mu);
    gp_cuda_resolve_(p, 0);
    gp_cl_resolve_(p, 0);
    int rc = kernel_rows_locked(p, rows, n);
    pthread_mutex_unlock(&p->mu);
    return rc;
}

void gp_print_kernels(gp_profiler *p, FILE *f)
{
    gp_kernel_row *rows;
    size_t n;
    if (gp_kernel_stats(p, &rows, &n)) {
        fprintf(f, "kernel timings: out of memory\n");
        return;
    }
    int pending = gp_kernels_resolve(p, 0);
    if (n == 0) {
        fprintf(f, "No kernel timings recorded%s.\n", pending ? " yet (still pending)" : "");
        return;
    }
    int64_t tot = 0;
    uint64_t calls = 0;
    double mx[4] = {0};
    for (size_t i = 0; i < n; i++) {
        tot += rows[i].total_ns;
        calls += rows[i].count;
        if (rows[i].mean_ns > mx[1]) mx[1] = rows[i].mean_ns;
        if ((double)rows[i].min_ns > mx[2]) mx[2] = (double)rows[i].min_ns;
        if ((double)rows[i].max_ns > mx[3]) mx[3] = (double)rows[i].max_ns;
    }
    mx[0] = (double)tot;
    gp_unit u[4];
    char hdr[4][32];
    static const char *const hn[4] = {"Total", "Mean", "Min", "Max"};
    for (int c = 0; c < 4; c++) {
        u[c] = gp_unit_pick(mx[c]);
        snprintf(hdr[c], sizeof hdr[c], "%s (%s)", hn[c], u[c].name);
    }
    const char *headers[] = {"Kernel", "Backend", "Calls", hdr[0], hdr[1], hdr[2], hdr[3]};
    gp_table *tb = gp_table_create(7, headers, "llrrrrr");
    if (!tb) goto out;
    for (size_t i = 0; i < n; i++) {
        char c[7][64];
        const char *cp[7] = {rows[i].name, rows[i].backend == GP_BACKEND_OPENCL ? "opencl" : "cuda",
                             c[2],         c[3],
                             c[4],         c[5],
                             c[6]};
        snprintf(c[2], 64, "%llu", (unsigned long long)rows[i].count);
        gp_fmt_dur(c[3], 64, (double)rows[i].total_ns, u[0]);
        gp_fmt_dur(c[4], 64, rows[i].mean_ns, u[1]);
        gp_fmt_dur(c[5], 64, (double)rows[i].min_ns, u[2]);
        gp_fmt_dur(c[6], 64, (double)rows[i].max_ns, u[3]);
        gp_table_row(tb, cp);
    }
    char c3[64], c2[64], c4[64];
    snprintf(c2, sizeof c2, "%llu", (unsigned long long)calls);
    gp_fmt_dur(c3, sizeof c3, (double)tot, u[0]);
    gp_fmt_dur(c4, sizeof c4, calls ? (double)tot / (double)calls : 0, u[1]);
    const char *total[] = {"TOTAL", "", c2, c3, c4, "", ""};
    gp_table_row(tb, total);
    fprintf(f, "Kernel timings (%zu kernels, %llu calls%s):\n", n, (unsigned long long)calls,
            pending ? ", some still pending" : "");
    gp_table_print(tb, f, 60);
    gp_table_destroy(tb);
out:
    gp_kernel_rows_free(rows, n);
}

#ifndef GP_HAVE_CUDA
int gp_cuda_begin(gp_profiler *p, const char *name, void *stream)
{
    pthread_mutex_lock(&p->mu);
    gp_rec_seterr(p, "CUDA kernel timers: this libgpuprof was built without the CUDA toolkit");
    pthread_mutex_unlock(&p->mu);
    return GP_EUNSUPPORTED;
}

int gp_cuda_end(gp_profiler *p, const char *name, void *stream)
{
    return gp_cuda_begin(p, name, stream);
}

int gp_cuda_end_ex(gp_profiler *p, const char *name, void *stream, int64_t bytes)
{
    return gp_cuda_begin(p, name, stream);
}

int gp_cuda_resolve_(gp_profiler *p, int wait)
{
    return 0;
}

void gp_cuda_fini_(gp_profiler *p) {}

void gp_cuda_entry_remap_(gp_profiler *p, const uint32_t *to, size_t n) {}

int gp_cuda_meminfo_(gp_profiler *p, int64_t *free_b, int64_t *total_b)
{
    return GP_EUNSUPPORTED;
}
#endif

#ifndef GP_HAVE_OPENCL
int gp_cl_event(gp_profiler *p, const char *name, struct _cl_event *ev)
{
    pthread_mutex_lock(&p->mu);
    gp_rec_seterr(p, "OpenCL kernel timers: this libgpuprof was built without OpenCL");
    pthread_mutex_unlock(&p->mu);
    return GP_EUNSUPPORTED;
}

int gp_cl_event_ex(gp_profiler *p, const char *name, struct _cl_event *ev, int64_t bytes)
{
    return gp_cl_event(p, name, ev);
}

int gp_mem_set_cl_device(gp_profiler *p, void *dev)
{
    return GP_EUNSUPPORTED;
}

int gp_cl_resolve_(gp_profiler *p, int wait)
{
    return 0;
}

void gp_cl_fini_(gp_profiler *p) {}

void gp_cl_entry_remap_(gp_profiler *p, const uint32_t *to, size_t n) {}

int gp_cl_global_mem_(gp_profiler *p, int64_t *total_b)
{
    return GP_EUNSUPPORTED;
}
#endif
