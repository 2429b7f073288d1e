/* analysis/advise.c: the advice rules and the engine that runs them. Shared
 * facts (per-op summary, GPU work in time order, merged GPU busy intervals,
 * launch call of each GPU event) are computed once in a context. */
#include "analysis/advise.h"
#include "analysis/advise_compile.h"
#include "analysis/calltree.h"
#include "analysis/hta_prep.h"
#include "analysis/queue.h"
#include "analysis/summary.h"
#include "analysis/temporal.h"
#include "core/hash.h"
#include "core/table.h"
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct gp_adv_ctx {
    const gp_trace *t;
    int64_t span; /* traced span, >= 1 */
    gp_summary sum;
    uint32_t *gpu; /* GPU slices (kernel, memcpy, memset, CL command) by start time */
    size_t ngpu;
    uint32_t *launch; /* per gpu[i]: index of its launching runtime/driver slice or UINT32_MAX */
    int64_t *busy;    /* merged GPU busy intervals, (start, end) pairs */
    size_t nbusy;
    int64_t gpu_first, gpu_last, gpu_busy_ns;
    int64_t gpu_agg_ns; /* device time of GPU timings known only as rollover rows */
    uint64_t gpu_agg_n;
    uint32_t *steps; /* ProfilerStep#N slices by start time */
    size_t nsteps;
    gp_hview view; /* the analyze family's event view (ctx_view) */
    int view_ok;
    const gp_tlog *const *logs; /* torch-compile rules: TORCH_TRACE logs (t is NULL) */
    size_t nlogs;
} gp_adv_ctx;

static const char *const prio_names[] = {"critical", "high", "medium", "low"};

const char *gp_priority_name(gp_priority p)
{
    return (unsigned)p <= GP_PRIO_LOW ? prio_names[p] : "low";
}

/* ---- helpers ---------------------------------------------------------- */

static int starts(const char *s, const char *p)
{
    return strncmp(s, p, strlen(p)) == 0;
}

static int icontains(const char *s, const char *needle)
{
    size_t n = strlen(needle);
    for (; *s; s++) {
        size_t i = 0;
        while (i < n && s[i] && tolower((unsigned char)s[i]) == needle[i]) i++;
        if (i == n) return 1;
    }
    return 0;
}

static gp_priority prio_of_pct(double pct)
{
    return pct >= 25   ? GP_PRIO_CRITICAL
           : pct >= 10 ? GP_PRIO_HIGH
           : pct >= 3  ? GP_PRIO_MEDIUM
                       : GP_PRIO_LOW;
}

static double pct_of_span(const gp_adv_ctx *c, double ns)
{
    return 100.0 * ns / (double)c->span;
}

/* Sets the estimate and the priority from the saving as a share of the
 * span (or, when the saving cannot be estimated, from the time involved):
 * >= 25 % critical, >= 10 % high, >= 3 % medium, else low; cap is the
 * highest priority the rule may get (seed rules are capped). */
static void finish(gp_adv_ctx *c, gp_advice *a, int64_t time_ns, int64_t saving_ns, gp_priority cap,
                   const char *how)
{
    char d[64];
    a->time_ns = time_ns;
    a->saving_ns = saving_ns;
    a->saving_pct = saving_ns == GP_NONE ? NAN : pct_of_span(c, (double)saving_ns);
    double basis = saving_ns != GP_NONE ? (double)saving_ns
                   : time_ns != GP_NONE ? (double)time_ns
                                        : 0;
    gp_priority p = prio_of_pct(pct_of_span(c, basis));
    a->priority = p > cap ? p : cap;
    if (saving_ns != GP_NONE)
        snprintf(a->estimate, sizeof a->estimate, "up to %s (%.1f%% of the traced span)%s%s",
                 gp_fmt_dur_auto(d, sizeof d, (double)saving_ns), a->saving_pct, how ? ": " : "",
                 how ? how : "");
    else
        snprintf(a->estimate, sizeof a->estimate, "%s", how ? how : "not estimated");
}

/* Evidence accumulator: per name id, count / time / max value. */
typedef struct ev_item {
    uint32_t name;
    uint64_t count;
    int64_t time;
    double value;
} ev_item;

typedef struct ev_acc {
    gp_u64map map;
    GP_VEC(ev_item) v;
} ev_acc;

static int ev_add(ev_acc *e, uint32_t name, uint64_t count, int64_t time, double value)
{
    uint64_t *slot = gp_u64map_slot(&e->map, name, UINT64_MAX);
    if (!slot) return GP_ENOMEM;
    if (*slot == UINT64_MAX) {
        *slot = e->v.n;
        if (GP_VEC_PUSH(e->v, ((ev_item){name, 0, 0, NAN}))) return GP_ENOMEM;
    }
    ev_item *it = &e->v.v[*slot];
    it->count += count;
    it->time += time;
    if (!isnan(value) && (isnan(it->value) || value > it->value)) it->value = value;
    return 0;
}

static int cmp_ev(const void *a, const void *b)
{
    const ev_item *x = a, *y = b;
    if (x->time != y->time) return x->time < y->time ? 1 : -1;
    if (x->count != y->count) return x->count < y->count ? 1 : -1;
    return x->name < y->name ? -1 : x->name > y->name;
}

/* Moves the top items (by time, then count) into a->ev and frees e.
 * Returns the accumulated totals in *count / *time. */
static void ev_fill(gp_adv_ctx *c, ev_acc *e, gp_advice *a, uint64_t *count, int64_t *time,
                    gp_adv_unit unit)
{
    uint64_t n = 0;
    int64_t tm = 0;
    for (size_t i = 0; i < e->v.n; i++) {
        n += e->v.v[i].count;
        tm += e->v.v[i].time;
    }
    if (e->v.n) qsort(e->v.v, e->v.n, sizeof *e->v.v, cmp_ev);
    a->nev = 0;
    for (size_t i = 0; i < e->v.n && a->nev < GP_ADV_MAX_EVIDENCE; i++) {
        gp_adv_evidence *x = &a->ev[a->nev++];
        snprintf(x->name, sizeof x->name, "%s", gp_trace_s(c->t, e->v.v[i].name));
        x->count = e->v.v[i].count;
        x->time_ns = e->v.v[i].time;
        x->value = e->v.v[i].value;
        x->unit = unit;
    }
    if (count) *count = n;
    if (time) *time = tm;
    gp_u64map_free(&e->map);
    GP_VEC_FREE(e->v);
}

static void ev_free(ev_acc *e)
{
    gp_u64map_free(&e->map);
    GP_VEC_FREE(e->v);
}

static void ev_text(gp_advice *a, const char *name, uint64_t count, int64_t time, double value,
                    gp_adv_unit unit)
{
    if (a->nev >= GP_ADV_MAX_EVIDENCE) return;
    gp_adv_evidence *x = &a->ev[a->nev++];
    snprintf(x->name, sizeof x->name, "%s", name);
    x->count = count;
    x->time_ns = time;
    x->value = value;
    x->unit = unit;
}

const char *gp_adv_unit_name(gp_adv_unit u)
{
    static const char *const names[] = {NULL, "ns", "ms", "bytes", "pct", "count"};
    return (unsigned)u < sizeof names / sizeof names[0] ? names[u] : NULL;
}

const char *gp_adv_value_str(char *buf, size_t n, double value, gp_adv_unit u)
{
    if (isnan(value)) {
        snprintf(buf, n, "N/A");
        return buf;
    }
    switch (u) {
    case GP_ADV_U_NS:
        return gp_fmt_dur_auto(buf, n, value);
    case GP_ADV_U_MS:
        return gp_fmt_dur_auto(buf, n, value * 1e6);
    case GP_ADV_U_BYTES:
        return gp_fmt_bytes(buf, n, value);
    case GP_ADV_U_PCT:
        if (value != 0 && fabs(value) < 0.01)
            snprintf(buf, n, "%s0.01 %%", value > 0 ? "< " : "> -");
        else
            snprintf(buf, n, "%.2f %%", value);
        break;
    case GP_ADV_U_COUNT:
        snprintf(buf, n, "%.0f", value);
        break;
    default:
        snprintf(buf, n, "%.6g", value);
        break;
    }
    return buf;
}

/* libgpuprof ranges that named their device (gp_range_begin_ex): per name,
 * the calls, their total and the longest call, from the kept slices with
 * flag (GP_SLICE_DEV_CPU/GPU) and the aggregated rows of device dev
 * (GP_DEV_CPU/GPU, gpuprof.h's values 1/2). 0 or GP_ENOMEM. */
static int lib_ops(const gp_trace *t, uint16_t flag, uint8_t dev, ev_acc *e)
{
    for (size_t i = 0; i < t->slices.n; i++) {
        const gp_slice *s = &t->slices.v[i];
        if (!(s->flags & flag) || gp_slice_kind(t, s) != GP_K_RANGE) continue;
        if (ev_add(e, s->name, 1, s->dur, (double)s->dur)) return GP_ENOMEM;
    }
    for (size_t i = 0; i < t->aggs.n; i++) {
        const gp_agg_row *r = &t->aggs.v[i];
        if (r->device != dev || !r->count || t->cats.v[r->cat].kind != GP_K_RANGE) continue;
        if (ev_add(e, r->name, r->count, r->total_ns, (double)r->max_ns)) return GP_ENOMEM;
    }
    return 0;
}

/* ---- seed rules --------------------------------------------------------- */

static int r_small_gpu_op(gp_adv_ctx *c, const double *p, gp_advice *a)
{
    ev_acc e = {0}, g = {0};
    for (size_t i = 0; i < c->sum.n; i++) {
        const gp_op_row *r = &c->sum.rows[i];
        if (r->group != GP_G_KERNEL || r->st.mean >= p[0] * 1e3) continue;
        if (ev_add(&e, r->name, r->st.count, r->st.sum, r->st.mean)) return GP_ENOMEM;
    }
    size_t nk = e.v.n;
    /* libgpuprof ranges on the GPU (gp_range_begin_ex(..., GP_DEV_GPU, ...)) */
    if (lib_ops(c->t, GP_SLICE_DEV_GPU, 2, &g)) return ev_free(&e), ev_free(&g), GP_ENOMEM;
    for (size_t i = 0; i < g.v.n; i++) {
        const ev_item *x = &g.v.v[i];
        double mean = (double)x->time / (double)x->count;
        if (mean >= p[0] * 1e3) continue;
        if (ev_add(&e, x->name, x->count, x->time, mean))
            return ev_free(&e), ev_free(&g), GP_ENOMEM;
    }
    ev_free(&g);
    if (!e.v.n) return ev_free(&e), 0;
    uint64_t n;
    int64_t tm;
    size_t nops = e.v.n;
    ev_fill(c, &e, a, &n, &tm, GP_ADV_U_NS);
    snprintf(a->finding, sizeof a->finding,
             "%zu GPU operations (%zu kernels, %zu GPU ranges) average under %.0f us per call "
             "(%llu calls)",
             nops, nk, nops - nk, p[0], (unsigned long long)n);
    finish(c, a, tm, GP_NONE, GP_PRIO_LOW, "depends on the data size; measure the op on the CPU");
    return 1;
}

static int cmp_i64pair(const void *a, const void *b)
{
    const int64_t *x = a, *y = b;
    if (x[0] != y[0]) return x[0] < y[0] ? -1 : 1;
    return x[1] < y[1] ? -1 : x[1] > y[1];
}

static int r_large_cpu_op(gp_adv_ctx *c, const double *p, gp_advice *a)
{
    const gp_trace *t = c->t;
    /* (track, ts) of every call that launched GPU work */
    size_t nl = 0;
    int64_t *lt = malloc((c->ngpu ? c->ngpu : 1) * 2 * sizeof *lt);
    if (!lt) return GP_ENOMEM;
    for (size_t i = 0; i < c->ngpu; i++)
        if (c->launch[i] != UINT32_MAX) {
            const gp_slice *r = &t->slices.v[c->launch[i]];
            lt[2 * nl] = r->track;
            lt[2 * nl + 1] = r->ts;
            nl++;
        }
    qsort(lt, nl, 2 * sizeof *lt, cmp_i64pair);
    ev_acc e = {0};
    int64_t min = (int64_t)(p[0] * 1e6);
    for (size_t i = 0; i < t->slices.n; i++) {
        const gp_slice *s = &t->slices.v[i];
        if (s->dur <= min || gp_slice_kind(t, s) != GP_K_CPU_OP) continue;
        /* first launch at or after (track, ts) */
        size_t lo = 0, hi = nl;
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (lt[2 * mid] < s->track || (lt[2 * mid] == s->track && lt[2 * mid + 1] < s->ts))
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo < nl && lt[2 * lo] == s->track && lt[2 * lo + 1] <= s->ts + s->dur) continue;
        if (ev_add(&e, s->name, 1, s->dur, (double)s->dur)) {
            free(lt);
            ev_free(&e);
            return GP_ENOMEM;
        }
    }
    free(lt);
    /* libgpuprof ranges on the CPU (gp_range_begin_ex(..., GP_DEV_CPU, ...)):
     * kept calls over the threshold; of aggregated ones only the longest is
     * known, counted when it is over */
    for (size_t i = 0; i < t->slices.n; i++) {
        const gp_slice *s = &t->slices.v[i];
        if (!(s->flags & GP_SLICE_DEV_CPU) || s->dur <= min || gp_slice_kind(t, s) != GP_K_RANGE)
            continue;
        if (ev_add(&e, s->name, 1, s->dur, (double)s->dur)) return ev_free(&e), GP_ENOMEM;
    }
    for (size_t i = 0; i < t->aggs.n; i++) {
        const gp_agg_row *r = &t->aggs.v[i];
        if (r->device != 1 || r->max_ns <= min || t->cats.v[r->cat].kind != GP_K_RANGE) continue;
        if (ev_add(&e, r->name, 1, r->max_ns, (double)r->max_ns)) return ev_free(&e), GP_ENOMEM;
    }
    if (!e.v.n) return ev_free(&e), 0;
    uint64_t n;
    int64_t tm;
    ev_fill(c, &e, a, &n, &tm, GP_ADV_U_NS);
    snprintf(a->finding, sizeof a->finding,
             "%llu CPU operation calls (operators, CPU ranges) over %.0f ms launch no GPU work",
             (unsigned long long)n, p[0]);
    finish(c, a, tm, GP_NONE, GP_PRIO_MEDIUM, "up to the operators' time if the work suits a GPU");
    return 1;
}

/* Runs of >= minrun libgpuprof GPU ranges (gp_range_begin_ex(...,
 * GP_DEV_GPU, ...)) of one name back to back on one thread (kept slices:
 * the order of aggregated ranges is not known), into e; the idle gaps
 * before the repeated calls, each capped at 5 us (an unknown launch), are
 * added to *gaps. 0 or GP_ENOMEM. */
static int lib_gpu_runs(const gp_trace *t, size_t minrun, ev_acc *e, int64_t *gaps)
{
    size_t n = 0;
    for (size_t i = 0; i < t->slices.n; i++)
        if ((t->slices.v[i].flags & GP_SLICE_DEV_GPU) &&
            gp_slice_kind(t, &t->slices.v[i]) == GP_K_RANGE)
            n++;
    if (n < minrun || n == 0) return 0;
    int64_t *k = malloc(n * 3 * sizeof *k); /* (track, ts, index) */
    if (!k) return GP_ENOMEM;
    size_t m = 0;
    for (size_t i = 0; i < t->slices.n; i++) {
        const gp_slice *s = &t->slices.v[i];
        if (!(s->flags & GP_SLICE_DEV_GPU) || gp_slice_kind(t, s) != GP_K_RANGE) continue;
        k[3 * m] = s->track;
        k[3 * m + 1] = s->ts;
        k[3 * m + 2] = (int64_t)i;
        m++;
    }
    qsort(k, n, 3 * sizeof *k, cmp_i64pair);
    int rc = 0;
    for (size_t i = 0; i < n && !rc;) {
        const gp_slice *s0 = &t->slices.v[k[3 * i + 2]];
        size_t j = i + 1;
        int64_t time = s0->dur, gap = 0;
        while (j < n && k[3 * j] == k[3 * i]) {
            const gp_slice *q = &t->slices.v[k[3 * (j - 1) + 2]], *s = &t->slices.v[k[3 * j + 2]];
            if (s->name != s0->name) break;
            int64_t g = s->ts - (q->ts + q->dur);
            gap += g <= 0 ? 0 : g < 5000 ? g : 5000;
            time += s->dur;
            j++;
        }
        if (j - i >= minrun) {
            rc = ev_add(e, s0->name, j - i, time, (double)(j - i));
            *gaps += gap;
        }
        i = j;
    }
    free(k);
    return rc;
}

static int r_batch(gp_adv_ctx *c, const double *p, gp_advice *a)
{
    const gp_trace *t = c->t;
    /* runs of the same name back to back on one stream (track) */
    uint32_t *last = malloc((t->tracks.n ? t->tracks.n : 1) * sizeof *last); /* gpu[] index */
    uint32_t *runlen = malloc((t->tracks.n ? t->tracks.n : 1) * sizeof *runlen);
    int64_t *rungap = malloc((t->tracks.n ? t->tracks.n : 1) * sizeof *rungap);
    int64_t *runtime = malloc((t->tracks.n ? t->tracks.n : 1) * sizeof *runtime);
    ev_acc e = {0};
    int64_t gaps = 0;
    int rc = GP_ENOMEM;
    if (!last || !runlen || !rungap || !runtime) goto out;
    memset(last, 0xff, t->tracks.n * sizeof *last);
    size_t minrun = (size_t)p[0];
    for (size_t i = 0; i <= c->ngpu; i++) {
        const gp_slice *s = i < c->ngpu ? &t->slices.v[c->gpu[i]] : NULL;
        /* close the run of track tr when the name changes (or at the end) */
        for (size_t tr = s ? s->track : 0; tr < (s ? s->track + 1u : t->tracks.n); tr++) {
            if (last[tr] == UINT32_MAX) continue;
            const gp_slice *q = &t->slices.v[c->gpu[last[tr]]];
            if (s && q->name == s->name) continue;
            if (runlen[tr] >= minrun) {
                if (ev_add(&e, q->name, runlen[tr], runtime[tr], runlen[tr])) goto out;
                gaps += rungap[tr];
            }
            last[tr] = UINT32_MAX;
        }
        if (!s) break;
        if (last[s->track] != UINT32_MAX) {
            const gp_slice *q = &t->slices.v[c->gpu[last[s->track]]];
            runlen[s->track]++;
            runtime[s->track] += s->dur;
            int64_t g = s->ts - (q->ts + q->dur);
            /* batching saves at most one launch per call: the gap, capped by
             * the launch call's duration (5 us when unknown) */
            int64_t lc = c->launch[i] != UINT32_MAX ? t->slices.v[c->launch[i]].dur : 5000;
            rungap[s->track] += g <= 0 ? 0 : g < lc ? g : lc;
        } else {
            runlen[s->track] = 1;
            runtime[s->track] = s->dur;
            rungap[s->track] = 0;
        }
        last[s->track] = (uint32_t)i;
    }
    if (lib_gpu_runs(t, minrun, &e, &gaps)) goto out;
    rc = 0;
    if (e.v.n) {
        uint64_t n;
        int64_t tm;
        size_t names = e.v.n;
        ev_fill(c, &e, a, &n, &tm, GP_ADV_U_COUNT);
        snprintf(a->finding, sizeof a->finding,
                 "%zu GPU operations run >= %zu times back to back on one stream or thread (%llu "
                 "calls)",
                 names, minrun, (unsigned long long)n);
        finish(c, a, tm, gaps, GP_PRIO_MEDIUM,
               "per call the gap before it, at most its launch time");
        rc = 1;
    }
out:
    ev_free(&e);
    free(last);
    free(runlen);
    free(rungap);
    free(runtime);
    return rc;
}

/* Memory level over time per device, from [memory] events in time order. */
typedef struct mem_dev {
    int dtype, did;
    int64_t peak, level;
    int64_t not_freed_early; /* allocated before `early` and never freed */
    uint64_t not_freed_n;
} mem_dev;

/* Returns 1 when the memory events are already in time order (the usual
 * case), so no sort (and no shared state) is needed. */
static int mem_in_order(const gp_trace *t)
{
    for (size_t i = 1; i < t->mem_events.n; i++)
        if (t->mem_events.v[i].ts < t->mem_events.v[i - 1].ts) return 0;
    return 1;
}

/* Sorts ix[0..n) by ts_of(ix[i]) (ties: by index); pairs is scratch for 2n. */
static void sort_by_ts(uint32_t *ix, size_t n, int64_t *pairs, const gp_trace *t, int mem)
{
    for (size_t i = 0; i < n; i++) {
        pairs[2 * i] = mem ? t->mem_events.v[ix[i]].ts : t->slices.v[ix[i]].ts;
        pairs[2 * i + 1] = ix[i];
    }
    qsort(pairs, n, 2 * sizeof *pairs, cmp_i64pair);
    for (size_t i = 0; i < n; i++) ix[i] = (uint32_t)pairs[2 * i + 1];
}

/* Event indices in time order (caller frees); NULL on out of memory. */
static uint32_t *mem_sorted(const gp_trace *t)
{
    uint32_t *ix = malloc((t->mem_events.n ? t->mem_events.n : 1) * sizeof *ix);
    if (!ix) return NULL;
    for (size_t i = 0; i < t->mem_events.n; i++) ix[i] = (uint32_t)i;
    if (!mem_in_order(t)) {
        int64_t *pairs = malloc(t->mem_events.n * 2 * sizeof *pairs);
        if (!pairs) {
            free(ix);
            return NULL;
        }
        sort_by_ts(ix, t->mem_events.n, pairs, t, 1);
        free(pairs);
    }
    return ix;
}

static size_t mem_dev_of(mem_dev **d, size_t *n, const gp_mem_event *e)
{
    for (size_t k = 0; k < *n; k++)
        if ((*d)[k].dtype == e->device_type && (*d)[k].did == e->device_id) return k;
    mem_dev *nd = realloc(*d, (*n + 1) * sizeof *nd);
    if (!nd) return SIZE_MAX;
    *d = nd;
    memset(&nd[*n], 0, sizeof nd[*n]);
    nd[*n].dtype = e->device_type;
    nd[*n].did = e->device_id;
    return (*n)++;
}

static const char *dev_label(char *buf, size_t n, int dtype, int did)
{
    if (dtype == GP_NONE) /* libgpuprof's tracker: no device */
        snprintf(buf, n, "tracked");
    else
        snprintf(buf, n, "%s:%d", dtype == 0 ? "cpu" : dtype == 1 ? "cuda" : "device", did);
    return buf;
}

static int r_large_memory(gp_adv_ctx *c, const double *p, gp_advice *a)
{
    const gp_trace *t = c->t;
    uint32_t *ix = mem_sorted(t);
    mem_dev *d = NULL;
    size_t nd = 0;
    if (!ix) return GP_ENOMEM;
    for (size_t i = 0; i < t->mem_events.n; i++) {
        const gp_mem_event *e = &t->mem_events.v[ix[i]];
        size_t k = mem_dev_of(&d, &nd, e);
        if (k == SIZE_MAX) {
            free(ix);
            free(d);
            return GP_ENOMEM;
        }
        d[k].level += e->bytes;
        int64_t lv = e->total_allocated != GP_NONE ? e->total_allocated : d[k].level;
        if (lv > d[k].peak) d[k].peak = lv;
    }
    free(ix);
    int fired = 0;
    double limit = p[0] * 1024 * 1024;
    for (size_t k = 0; k < nd; k++) {
        if ((double)d[k].peak <= limit) continue;
        char lab[32], b[32];
        ev_text(a, dev_label(lab, sizeof lab, d[k].dtype, d[k].did), 1, GP_NONE, (double)d[k].peak,
                GP_ADV_U_BYTES);
        if (!fired)
            snprintf(a->finding, sizeof a->finding,
                     "peak allocated memory %s on %s exceeds %.0f MiB",
                     gp_fmt_bytes(b, sizeof b, (double)d[k].peak), lab, p[0]);
        fired = 1;
    }
    free(d);
    if (!fired) return 0;
    finish(c, a, GP_NONE, GP_NONE, GP_PRIO_MEDIUM,
           "memory headroom (larger batches, fewer out-of-memory failures), not time");
    a->priority = GP_PRIO_MEDIUM;
    return 1;
}

static int r_cache(gp_adv_ctx *c, const double *p, gp_advice *a)
{
    ev_acc e = {0}, g = {0};
    for (size_t i = 0; i < c->sum.n; i++) {
        const gp_op_row *r = &c->sum.rows[i];
        if (r->group != GP_G_CPU_OP || (double)r->st.count < p[0] || r->st.mean >= p[1] * 1e3)
            continue;
        if (ev_add(&e, r->name, r->st.count, r->st.sum, r->st.mean)) return GP_ENOMEM;
    }
    /* libgpuprof ranges on the CPU */
    if (lib_ops(c->t, GP_SLICE_DEV_CPU, 1, &g)) return ev_free(&e), ev_free(&g), GP_ENOMEM;
    for (size_t i = 0; i < g.v.n; i++) {
        const ev_item *x = &g.v.v[i];
        double mean = (double)x->time / (double)x->count;
        if ((double)x->count < p[0] || mean >= p[1] * 1e3) continue;
        if (ev_add(&e, x->name, x->count, x->time, mean))
            return ev_free(&e), ev_free(&g), GP_ENOMEM;
    }
    ev_free(&g);
    if (!e.v.n) return ev_free(&e), 0;
    uint64_t n;
    int64_t tm;
    size_t names = e.v.n;
    ev_fill(c, &e, a, &n, &tm, GP_ADV_U_NS);
    snprintf(a->finding, sizeof a->finding,
             "%zu CPU operations (operators, CPU ranges) are called >= %.0f times at under %.0f us "
             "each (%llu calls)",
             names, p[0], p[1], (unsigned long long)n);
    finish(c, a, tm, GP_NONE, GP_PRIO_LOW, "part of the calls' time when results can be reused");
    return 1;
}

static int r_low_util(gp_adv_ctx *c, const double *p, gp_advice *a)
{
    if (!c->ngpu && !c->gpu_agg_n) return 0;
    /* timings known only as rollover rows count with their summed time (at
     * least their union), so that the rule never fires on a long run
     * because most of its timings have no interval; before, a run past
     * libgpuprof's kernel cap read as the GPU idle */
    int64_t busy = c->gpu_busy_ns + c->gpu_agg_ns;
    if (busy > c->span) busy = c->span;
    double util = 100.0 * (double)busy / (double)c->span;
    if (util >= p[0]) return 0;
    char b[64];
    snprintf(a->finding, sizeof a->finding,
             "the GPU is busy %.1f%% of the traced span (%s busy of %s)", util,
             gp_fmt_dur_auto(b, sizeof b, (double)busy),
             gp_fmt_dur_auto(b + 32, 32, (double)c->span));
    ev_text(a, "GPU busy time", c->ngpu + c->gpu_agg_n, busy, util, GP_ADV_U_PCT);
    finish(c, a, c->span - busy, GP_NONE, GP_PRIO_MEDIUM,
           "depends on how much CPU work can overlap; see gpu-gaps and low-utilization-spans");
    return 1;
}

/* Monitor-style counter series: kind 0 temperature (max >= p0), 1
 * utilization (mean < p0), 2 inference latency (p95 > p0 ms). */
static int monitor_rule(gp_adv_ctx *c, const double *p, gp_advice *a, int kind)
{
    const gp_trace *t = c->t;
    int fired = 0;
    for (size_t s = 0; s < t->series.n; s++) {
        const char *nm = gp_trace_s(t, t->series.v[s].name);
        int match = kind == 0   ? icontains(nm, "temp")
                    : kind == 1 ? icontains(nm, "util") && !icontains(nm, "mem")
                                : icontains(nm, "latency") || icontains(nm, "inference");
        if (!match) continue;
        size_t n = 0;
        double mx = -INFINITY, sum = 0;
        for (size_t i = 0; i < t->counters.n; i++)
            if (t->counters.v[i].series == s) n++;
        if (!n) continue;
        double *v = malloc(n * sizeof *v);
        if (!v) return GP_ENOMEM;
        n = 0;
        for (size_t i = 0; i < t->counters.n; i++)
            if (t->counters.v[i].series == s && !isnan(t->counters.v[i].value)) {
                v[n++] = t->counters.v[i].value;
                sum += v[n - 1];
                if (v[n - 1] > mx) mx = v[n - 1];
            }
        if (!n) {
            free(v);
            continue;
        }
        double fig;
        int hit;
        if (kind == 0)
            hit = (fig = mx) >= p[0];
        else if (kind == 1)
            hit = (fig = sum / (double)n) < p[0];
        else {
            gp_sort_f64(v, n);
            hit = (fig = gp_quantile_sorted_f64(v, n, 0.95)) > p[0];
        }
        free(v);
        if (!hit) continue;
        if (!fired) {
            static const char *const what[] = {"maximum %.1f reaches the %.0f limit",
                                               "mean %.1f%% is below %.0f%%",
                                               "p95 %.1f ms is above %.0f ms"};
            char f[128];
            snprintf(f, sizeof f, what[kind], fig, p[0]);
            snprintf(a->finding, sizeof a->finding, "counter \"%.80s\": %s", nm, f);
        }
        ev_text(a, nm, n, GP_NONE, fig,
                kind == 1   ? GP_ADV_U_PCT
                : kind == 2 ? GP_ADV_U_MS
                            : GP_ADV_U_NONE);
        fired = 1;
    }
    if (!fired) return 0;
    finish(c, a, GP_NONE, GP_NONE, kind == 0 ? GP_PRIO_HIGH : GP_PRIO_MEDIUM,
           kind == 0 ? "avoids thermal throttling (clocks drop when hot)" : "not estimated");
    a->priority = kind == 0 ? GP_PRIO_HIGH : GP_PRIO_MEDIUM;
    return 1;
}

static int r_mon_temp(gp_adv_ctx *c, const double *p, gp_advice *a)
{
    return monitor_rule(c, p, a, 0);
}
static int r_mon_util(gp_adv_ctx *c, const double *p, gp_advice *a)
{
    return monitor_rule(c, p, a, 1);
}
static int r_mon_latency(gp_adv_ctx *c, const double *p, gp_advice *a)
{
    return monitor_rule(c, p, a, 2);
}

/* ---- trace rules -------------------------------------------------------- */

static int is_sync_copy_call(const char *n)
{
    if (strstr(n, "Async")) return 0;
    return starts(n, "cudaMemcpy") || starts(n, "cudaMemset") || starts(n, "cuMemcpy") ||
           starts(n, "cuMemset") || starts(n, "hipMemcpy") || starts(n, "hipMemset");
}

static int r_sync_memcpy(gp_adv_ctx *c, const double *p, gp_advice *a)
{
    const gp_trace *t = c->t;
    ev_acc e = {0};
    for (size_t i = 0; i < t->slices.n; i++) {
        const gp_slice *s = &t->slices.v[i];
        gp_kind k = gp_slice_kind(t, s);
        if ((k != GP_K_RUNTIME && k != GP_K_DRIVER) || !is_sync_copy_call(gp_trace_s(t, s->name)))
            continue;
        if (ev_add(&e, s->name, 1, s->dur, NAN)) return ev_free(&e), GP_ENOMEM;
    }
    if (!e.v.n) return ev_free(&e), 0;
    uint64_t n;
    int64_t tm;
    ev_fill(c, &e, a, &n, &tm, GP_ADV_U_NONE);
    if ((double)n < p[0]) return 0;
    snprintf(a->finding, sizeof a->finding, "%llu synchronous memcpy/memset calls block the CPU",
             (unsigned long long)n);
    finish(c, a, tm, tm, GP_PRIO_CRITICAL, "the CPU time blocked in these calls");
    return 1;
}

static int r_pageable(gp_adv_ctx *c, const double *p, gp_advice *a)
{
    const gp_trace *t = c->t;
    ev_acc e = {0};
    int64_t copy = 0;
    for (size_t i = 0; i < c->ngpu; i++) {
        const gp_slice *s = &t->slices.v[c->gpu[i]];
        if (gp_slice_kind(t, s) != GP_K_MEMCPY || s->gpu == GP_NO_INDEX) continue;
        const gp_gpu_info *g = &t->gpu_info.v[s->gpu];
        if (g->src_kind != 1 && g->dst_kind != 1) continue;
        if (c->launch[i] == UINT32_MAX) continue;
        const gp_slice *r = &t->slices.v[c->launch[i]];
        if (!strstr(gp_trace_s(t, r->name), "Async")) continue;
        copy += s->dur;
        if (ev_add(&e, s->name, 1, s->dur, g->bytes != GP_NONE ? (double)g->bytes : NAN))
            return ev_free(&e), GP_ENOMEM;
    }
    if (!e.v.n) return ev_free(&e), 0;
    uint64_t n;
    ev_fill(c, &e, a, &n, NULL, GP_ADV_U_BYTES);
    if ((double)n < p[0]) return 0;
    snprintf(a->finding, sizeof a->finding,
             "%llu asynchronous copies use pageable host memory (they run synchronously)",
             (unsigned long long)n);
    finish(c, a, copy, copy / 2, GP_PRIO_CRITICAL,
           "about half the copy time (pinned copies are faster and overlap)");
    return 1;
}

static int r_sync_loop(gp_adv_ctx *c, const double *p, gp_advice *a)
{
    const gp_trace *t = c->t;
    ev_acc e = {0};
    for (size_t i = 0; i < t->slices.n; i++) {
        const gp_slice *s = &t->slices.v[i];
        gp_kind k = gp_slice_kind(t, s);
        if ((k != GP_K_RUNTIME && k != GP_K_DRIVER) ||
            !strstr(gp_trace_s(t, s->name), "Synchronize"))
            continue;
        if (ev_add(&e, s->name, 1, s->dur, NAN)) return ev_free(&e), GP_ENOMEM;
    }
    uint64_t n = 0;
    for (size_t i = 0; i < e.v.n; i++) n += e.v.v[i].count;
    double per_step = c->nsteps ? (double)n / (double)c->nsteps : NAN;
    if ((double)n < p[0] || (c->nsteps && per_step < p[1])) return ev_free(&e), 0;
    int64_t tm;
    ev_fill(c, &e, a, &n, &tm, GP_ADV_U_NONE);
    if (c->nsteps)
        snprintf(a->finding, sizeof a->finding,
                 "%llu synchronize calls, %.1f per step: synchronization inside a loop",
                 (unsigned long long)n, per_step);
    else
        snprintf(a->finding, sizeof a->finding,
                 "%llu synchronize calls: synchronization inside a loop", (unsigned long long)n);
    finish(c, a, tm, tm, GP_PRIO_CRITICAL, "the time the CPU waits in them");
    return 1;
}

static int r_gaps(gp_adv_ctx *c, const double *p, gp_advice *a)
{
    if (c->nbusy < 2) return 0;
    int64_t min = (int64_t)(p[0] * 1e3), total = 0;
    uint64_t n = 0;
    int64_t best[GP_ADV_MAX_EVIDENCE][2] = {{0}}; /* (length, start) of the longest gaps */
    for (size_t i = 1; i < c->nbusy; i++) {
        int64_t g = c->busy[2 * i] - c->busy[2 * i - 1];
        if (g < min) continue;
        total += g;
        n++;
        for (int k = 0; k < GP_ADV_MAX_EVIDENCE; k++)
            if (g > best[k][0]) {
                memmove(best[k + 1], best[k],
                        (size_t)(GP_ADV_MAX_EVIDENCE - 1 - k) * sizeof best[0]);
                best[k][0] = g;
                best[k][1] = c->busy[2 * i - 1];
                break;
            }
    }
    int64_t gspan = c->gpu_last - c->gpu_first;
    if (!n || 100.0 * (double)total / (double)gspan < p[1]) return 0;
    for (int k = 0; k < GP_ADV_MAX_EVIDENCE && best[k][0]; k++) {
        char nm[64], d[32];
        snprintf(nm, sizeof nm, "gap at %s", gp_fmt_dur_auto(d, sizeof d, (double)best[k][1]));
        ev_text(a, nm, 1, best[k][0], NAN, GP_ADV_U_NONE);
    }
    snprintf(a->finding, sizeof a->finding,
             "%llu GPU idle gaps of >= %.0f us add up to %.1f%% of the GPU's active span",
             (unsigned long long)n, p[0], 100.0 * (double)total / (double)gspan);
    finish(c, a, total, total, GP_PRIO_CRITICAL, "the idle time, if the CPU keeps the GPU fed");
    return 1;
}

static int r_low_spans(gp_adv_ctx *c, const double *p, gp_advice *a)
{
    int64_t gspan = c->gpu_last - c->gpu_first;
    if (!c->nbusy || gspan <= 0) return 0;
    int64_t w = p[0] > 0 ? (int64_t)(p[0] * 1e3) : gspan / 50;
    if (w < 10000) w = 10000;
    int64_t low_total = 0, cur_start = -1, cur_busy = 0;
    uint64_t nspans = 0;
    int64_t best[GP_ADV_MAX_EVIDENCE][3] = {{0}}; /* length, start, busy */
    size_t j = 0;
    /* the next window starts where this one ended: ws + w overflowed for
     * GPU times near the int64 limit, wrapped negative and never reached
     * gpu_last (advise hung) */
    for (int64_t ws = c->gpu_first, we; ws < c->gpu_last; ws = we) {
        int64_t busy = 0;
        we = c->gpu_last - ws > w ? ws + w : c->gpu_last;
        while (j < c->nbusy && c->busy[2 * j + 1] <= ws) j++;
        for (size_t k = j; k < c->nbusy && c->busy[2 * k] < we; k++) {
            int64_t s = c->busy[2 * k] > ws ? c->busy[2 * k] : ws;
            int64_t e = c->busy[2 * k + 1] < we ? c->busy[2 * k + 1] : we;
            if (e > s) busy += e - s;
        }
        int low = 100.0 * (double)busy / (double)(we - ws) < p[1];
        if (low) {
            if (cur_start < 0) {
                cur_start = ws;
                cur_busy = 0;
            }
            cur_busy += busy;
            low_total += we - ws;
        }
        if ((!low || we >= c->gpu_last) && cur_start >= 0) {
            int64_t len = (low ? we : ws) - cur_start;
            nspans++;
            for (int k = 0; k < GP_ADV_MAX_EVIDENCE; k++)
                if (len > best[k][0]) {
                    memmove(best[k + 1], best[k],
                            (size_t)(GP_ADV_MAX_EVIDENCE - 1 - k) * sizeof best[0]);
                    best[k][0] = len;
                    best[k][1] = cur_start;
                    best[k][2] = cur_busy;
                    break;
                }
            cur_start = -1;
        }
    }
    if (100.0 * (double)low_total / (double)gspan < p[2]) return 0;
    for (int k = 0; k < GP_ADV_MAX_EVIDENCE && best[k][0]; k++) {
        char nm[64], d[32];
        snprintf(nm, sizeof nm, "span at %s", gp_fmt_dur_auto(d, sizeof d, (double)best[k][1]));
        ev_text(a, nm, 1, best[k][0], 100.0 * (double)best[k][2] / (double)best[k][0],
                GP_ADV_U_PCT);
    }
    char d[32];
    snprintf(
        a->finding, sizeof a->finding,
        "%llu spans with GPU utilization under %.0f%% (windows of %s) cover %.1f%% of the GPU's "
        "active span",
        (unsigned long long)nspans, p[1], gp_fmt_dur_auto(d, sizeof d, (double)w),
        100.0 * (double)low_total / (double)gspan);
    finish(c, a, low_total, GP_NONE, GP_PRIO_CRITICAL,
           "depends on what the CPU does in these spans");
    return 1;
}

static int r_launch_bound(gp_adv_ctx *c, const double *p, gp_advice *a)
{
    const gp_trace *t = c->t;
    ev_acc e = {0};
    uint64_t launches = 0;
    int64_t overhead = 0;
    for (size_t i = 0; i < c->ngpu; i++) {
        const gp_slice *s = &t->slices.v[c->gpu[i]];
        if (c->launch[i] == UINT32_MAX || gp_slice_kind(t, s) != GP_K_KERNEL) continue;
        const gp_slice *r = &t->slices.v[c->launch[i]];
        launches++;
        if (s->dur >= r->dur) continue;
        overhead += r->dur - s->dur;
        if (ev_add(&e, s->name, 1, s->dur, (double)r->dur)) return ev_free(&e), GP_ENOMEM;
    }
    uint64_t n = 0;
    for (size_t i = 0; i < e.v.n; i++) n += e.v.v[i].count;
    if (!n || (double)n < p[0] || 100.0 * (double)n / (double)launches < p[1])
        return ev_free(&e), 0;
    int64_t tm;
    ev_fill(c, &e, a, &n, &tm, GP_ADV_U_NS);
    snprintf(a->finding, sizeof a->finding,
             "%llu of %llu kernels (%.1f%%) run shorter than their launch call",
             (unsigned long long)n, (unsigned long long)launches,
             100.0 * (double)n / (double)launches);
    finish(c, a, tm, overhead, GP_PRIO_CRITICAL,
           "launch time above kernel time (CUDA graphs, fusion)");
    return 1;
}

static int r_launch_delay(gp_adv_ctx *c, const double *p, gp_advice *a)
{
    const gp_trace *t = c->t;
    int64_t *stream_end = malloc((t->tracks.n ? t->tracks.n : 1) * sizeof *stream_end);
    if (!stream_end) return GP_ENOMEM;
    for (size_t i = 0; i < t->tracks.n; i++) stream_end[i] = INT64_MIN;
    ev_acc e = {0};
    int64_t cut = (int64_t)(p[0] * 1e3), total = 0;
    for (size_t i = 0; i < c->ngpu; i++) {
        const gp_slice *s = &t->slices.v[c->gpu[i]];
        int64_t prev_end = stream_end[s->track];
        if (s->ts + s->dur > stream_end[s->track]) stream_end[s->track] = s->ts + s->dur;
        if (c->launch[i] == UINT32_MAX) continue;
        const gp_slice *r = &t->slices.v[c->launch[i]];
        int64_t call_end = r->ts + r->dur, delay = s->ts - call_end;
        /* only delays while the stream was idle: queueing behind earlier work is not a delay */
        if (delay <= cut || prev_end > call_end) continue;
        total += delay;
        if (ev_add(&e, s->name, 1, delay, (double)delay)) {
            free(stream_end);
            return ev_free(&e), GP_ENOMEM;
        }
    }
    free(stream_end);
    uint64_t n = 0;
    for (size_t i = 0; i < e.v.n; i++) n += e.v.v[i].count;
    if (!n || (double)n < p[1]) return ev_free(&e), 0;
    ev_fill(c, &e, a, &n, NULL, GP_ADV_U_NS);
    snprintf(
        a->finding, sizeof a->finding,
        "%llu GPU operations started more than %.0f us after their launch call ended, on an idle "
        "stream",
        (unsigned long long)n, p[0]);
    finish(c, a, total, total, GP_PRIO_CRITICAL, "the delays (driver/launch queue contention)");
    return 1;
}

/* The HTA-style view of the analyze family, built on first use. */
static const gp_hview *ctx_view(gp_adv_ctx *c)
{
    if (c->view_ok) return &c->view;
    gp_trace *tr = (gp_trace *)c->t; /* gp_hta_prepare does not modify the trace */
    int rank = c->t->meta.rank;
    gp_hta_opts ho = {0};
    gp_err err = {0};
    if (gp_hta_prepare(&tr, &rank, 1, &ho, &c->view, &err)) return NULL;
    c->view_ok = 1;
    return &c->view;
}

static int r_queue(gp_adv_ctx *c, const double *p, gp_advice *a)
{
    const gp_hview *v = ctx_view(c);
    gp_queue_row *rows = NULL;
    size_t n = 0;
    if (!v || gp_queue_length(v, (int64_t)p[0], &rows, &n)) return GP_ENOMEM;
    int fired = 0;
    for (size_t i = 0; i < n; i++) {
        if ((double)rows[i].max < p[0]) continue;
        char nm[64];
        snprintf(nm, sizeof nm, "stream %lld", gp_stream_shown(rows[i].stream));
        ev_text(a, nm, rows[i].launches, GP_NONE, (double)rows[i].max, GP_ADV_U_COUNT);
        if (!fired)
            snprintf(
                a->finding, sizeof a->finding,
                "the launch queue of %s reaches %lld outstanding operations (limit %.0f), full "
                "%.1f%% of the time",
                nm, (long long)rows[i].max, p[0], rows[i].full_pct);
        fired = 1;
    }
    free(rows);
    if (!fired) return 0;
    finish(c, a, GP_NONE, GP_NONE, GP_PRIO_MEDIUM,
           "the CPU blocks in launch calls while the queue is full: it cannot run ahead");
    a->priority = GP_PRIO_MEDIUM;
    return 1;
}

static int r_comm_overlap(gp_adv_ctx *c, const double *p, gp_advice *a)
{
    const gp_hview *v = ctx_view(c);
    if (!v) return GP_ENOMEM;
    double pct;
    int valid;
    if (gp_comm_comp_overlap(v, &pct, &valid)) return GP_ENOMEM;
    if (!valid) return 0;
    int64_t *iv = NULL;
    size_t niv = gp_hta_merged(v, 1u << GP_KT_COMMUNICATION, &iv);
    int64_t comm = 0;
    for (size_t i = 0; i < niv; i++) comm += iv[2 * i + 1] - iv[2 * i];
    free(iv);
    int64_t exposed = (int64_t)llround((double)comm * (1 - pct / 100));
    if (comm <= 0 || pct >= p[0] || pct_of_span(c, (double)exposed) < p[1]) return 0;
    ev_acc e = {0};
    for (size_t i = 0; i < v->n; i++) {
        const gp_hev *h = &v->ev[i];
        if (h->stream < 0 || h->ktype != GP_KT_COMMUNICATION) continue;
        if (ev_add(&e, gp_hev_name(v, h), 1, h->dur, NAN)) return ev_free(&e), GP_ENOMEM;
    }
    ev_fill(c, &e, a, NULL, NULL, GP_ADV_U_NONE);
    char d[32];
    snprintf(a->finding, sizeof a->finding,
             "only %.1f%% of the communication time overlaps computation; %s of communication is "
             "exposed",
             pct, gp_fmt_dur_auto(d, sizeof d, (double)exposed));
    finish(c, a, comm, exposed, GP_PRIO_CRITICAL, "the exposed communication time");
    return 1;
}

static const gp_device_prop *device_prop(const gp_trace *t, int32_t id)
{
    for (size_t i = 0; i < t->devices.n; i++)
        if (t->devices.v[i].id == id) return &t->devices.v[i];
    return NULL;
}

/* kind 0: occupancy below p0 %; kind 1: grid (blocks) smaller than the SM count. */
static int kernel_shape_rule(gp_adv_ctx *c, const double *p, gp_advice *a, int kind)
{
    const gp_trace *t = c->t;
    ev_acc e = {0};
    int64_t ktime = 0;
    for (size_t i = 0; i < c->ngpu; i++) {
        const gp_slice *s = &t->slices.v[c->gpu[i]];
        if (gp_slice_kind(t, s) != GP_K_KERNEL) continue;
        ktime += s->dur;
        if (s->gpu == GP_NO_INDEX) continue;
        const gp_gpu_info *g = &t->gpu_info.v[s->gpu];
        double v;
        if (kind == 0) {
            if (isnan(g->occupancy_pct) || g->occupancy_pct >= p[0]) continue;
            v = g->occupancy_pct;
        } else {
            const gp_device_prop *d = device_prop(t, g->device);
            int64_t blocks =
                (int64_t)g->grid[0] * (g->grid[1] ? g->grid[1] : 1) * (g->grid[2] ? g->grid[2] : 1);
            if (!d || d->num_sms <= 0 || g->grid[0] <= 0 || blocks >= d->num_sms) continue;
            v = (double)blocks;
        }
        /* evidence value: the lowest occupancy / smallest grid seen, stored negated for max */
        if (ev_add(&e, s->name, 1, s->dur, -v)) return ev_free(&e), GP_ENOMEM;
    }
    int64_t tm = 0;
    for (size_t i = 0; i < e.v.n; i++) tm += e.v.v[i].time;
    if (!e.v.n || ktime <= 0 || 100.0 * (double)tm / (double)ktime < p[1]) return ev_free(&e), 0;
    uint64_t n;
    size_t names = e.v.n;
    ev_fill(c, &e, a, &n, &tm, kind == 0 ? GP_ADV_U_PCT : GP_ADV_U_COUNT);
    for (size_t i = 0; i < a->nev; i++) a->ev[i].value = -a->ev[i].value;
    if (kind == 0)
        snprintf(a->finding, sizeof a->finding,
                 "%zu kernels (%.1f%% of kernel time) have an achieved occupancy under %.0f%%",
                 names, 100.0 * (double)tm / (double)ktime, p[0]);
    else
        snprintf(a->finding, sizeof a->finding,
                 "%zu kernels (%.1f%% of kernel time) launch fewer blocks than the GPU has SMs",
                 names, 100.0 * (double)tm / (double)ktime);
    finish(c, a, tm, GP_NONE, GP_PRIO_MEDIUM,
           kind == 0 ? "kernel-specific; occupancy limits latency hiding"
                     : "idle SMs during these kernels: up to (1 - blocks/SMs) of their time");
    return 1;
}

static int r_occupancy(gp_adv_ctx *c, const double *p, gp_advice *a)
{
    return kernel_shape_rule(c, p, a, 0);
}
static int r_small_grid(gp_adv_ctx *c, const double *p, gp_advice *a)
{
    return kernel_shape_rule(c, p, a, 1);
}

/* kind 0: never freed (allocated before the last step / the trace's middle);
 * kind 1: memory allocated at each step end grows step after step. */
static int memory_rule(gp_adv_ctx *c, const double *p, gp_advice *a, int kind)
{
    const gp_trace *t = c->t;
    if (!t->mem_events.n) return 0;
    uint32_t *ix = mem_sorted(t);
    gp_u64map live = {0};
    mem_dev *d = NULL;
    size_t nd = 0;
    int rc = GP_ENOMEM;
    if (!ix) return GP_ENOMEM;
    int64_t early = c->nsteps >= 2 ? t->slices.v[c->steps[c->nsteps - 1]].ts
                                   : t->t_begin + (t->t_end - t->t_begin) / 2;
    /* kind 1: level at the end of each step, per device (first device with events) */
    size_t si = 0, nlev = 0;
    int64_t *lev = malloc((c->nsteps + 1) * sizeof *lev);
    if (!lev) goto out;
    int64_t level = 0;
    int have = 0;
    for (size_t i = 0; i < t->mem_events.n; i++) {
        const gp_mem_event *e = &t->mem_events.v[ix[i]];
        size_t k = mem_dev_of(&d, &nd, e);
        if (k == SIZE_MAX) goto out;
        d[k].level += e->bytes;
        if (k == 0) {
            while (si < c->nsteps) {
                const gp_slice *st = &t->slices.v[c->steps[si]];
                if (e->ts < st->ts + st->dur) break;
                if (have) lev[nlev++] = level;
                si++;
            }
            level = e->total_allocated != GP_NONE ? e->total_allocated : d[0].level;
            have = 1;
        }
        uint64_t key = gp_hash_u64(e->addr) ^ ((uint64_t)k << 56);
        if (e->bytes > 0) {
            if (gp_u64map_put(&live, key, ix[i] + 1)) goto out;
        } else if (e->bytes < 0) {
            uint64_t *slot = gp_u64map_slot(&live, key, 0);
            if (!slot) goto out;
            *slot = 0;
        }
    }
    while (si < c->nsteps && have) {
        lev[nlev++] = level;
        si++;
    }
    rc = 0;
    if (kind == 0) {
        for (size_t s = 0; s < live.cap; s++) {
            if (!live.used[s] || !live.vals[s]) continue;
            const gp_mem_event *m = &t->mem_events.v[live.vals[s] - 1];
            if (m->ts >= early) continue;
            size_t k = mem_dev_of(&d, &nd, m); /* exists: seen above */
            d[k].not_freed_early += m->bytes;
            d[k].not_freed_n++;
        }
        double limit = p[0] * 1024 * 1024;
        for (size_t k = 0; k < nd; k++) {
            if ((double)d[k].not_freed_early < limit) continue;
            char lab[32], b[32];
            dev_label(lab, sizeof lab, d[k].dtype, d[k].did);
            ev_text(a, lab, d[k].not_freed_n, GP_NONE, (double)d[k].not_freed_early,
                    GP_ADV_U_BYTES);
            if (rc == 0)
                snprintf(a->finding, sizeof a->finding,
                         "%llu allocations (%s) on %s made before the %s are never freed",
                         (unsigned long long)d[k].not_freed_n,
                         gp_fmt_bytes(b, sizeof b, (double)d[k].not_freed_early), lab,
                         c->nsteps >= 2 ? "last step" : "middle of the trace");
            rc = 1;
        }
        if (rc) {
            finish(c, a, GP_NONE, GP_NONE, GP_PRIO_MEDIUM,
                   "memory, not time: a leak grows until out of memory");
            a->priority = GP_PRIO_MEDIUM;
        }
    } else if (nlev >= (size_t)p[0]) {
        int grows = 1;
        for (size_t i = 1; i < nlev; i++)
            if (lev[i] <= lev[i - 1]) grows = 0;
        double growth = (double)(lev[nlev - 1] - lev[0]);
        if (grows && growth >= p[1] * 1024 * 1024) {
            char b[32], lab[32];
            snprintf(a->finding, sizeof a->finding,
                     "allocated memory on %s grows at every one of %zu step ends (+%s in total)",
                     dev_label(lab, sizeof lab, d[0].dtype, d[0].did), nlev,
                     gp_fmt_bytes(b, sizeof b, growth));
            for (size_t i = 0; i < nlev && a->nev < GP_ADV_MAX_EVIDENCE; i++) {
                char nm[64];
                snprintf(nm, sizeof nm, "after step %zu", i + 1);
                ev_text(a, nm, 1, GP_NONE, (double)lev[i], GP_ADV_U_BYTES);
            }
            finish(c, a, GP_NONE, GP_NONE, GP_PRIO_HIGH,
                   "memory, not time: growth ends in out of memory");
            a->priority = GP_PRIO_HIGH;
            rc = 1;
        }
    }
out:
    free(lev);
    free(ix);
    free(d);
    gp_u64map_free(&live);
    return rc;
}

static int r_not_freed(gp_adv_ctx *c, const double *p, gp_advice *a)
{
    return memory_rule(c, p, a, 0);
}
static int r_growth(gp_adv_ctx *c, const double *p, gp_advice *a)
{
    return memory_rule(c, p, a, 1);
}

/* torch-compile rules: the checks live in advise_compile.c */
#define COMPILE_RULE(fn, impl)                                                                     \
    static int fn(gp_adv_ctx *c, const double *p, gp_advice *a)                                    \
    {                                                                                              \
        return impl(c->logs, c->nlogs, p, a);                                                      \
    }
COMPILE_RULE(r_cc_data_dep, gp_advc_data_dependent)
COMPILE_RULE(r_cc_unsupported, gp_advc_unsupported)
COMPILE_RULE(r_cc_skipped, gp_advc_skipped)
COMPILE_RULE(r_cc_other_break, gp_advc_other_break)
COMPILE_RULE(r_cc_dyn_shapes, gp_advc_dynamic_shapes)
COMPILE_RULE(r_cc_guards, gp_advc_guard_recompiles)
COMPILE_RULE(r_cc_limit, gp_advc_recompile_limit)
COMPILE_RULE(r_cc_failure, gp_advc_failure)
COMPILE_RULE(r_cc_cache_miss, gp_advc_cache_miss)
#undef COMPILE_RULE

/* ---- the table ---------------------------------------------------------- */

static const gp_adv_rule rules[] = {
    {"small-gpu-op",
     "placement",
     "GPU kernels shorter than a threshold (seed rule)",
     "tiny GPU operations may run faster on the CPU, or batched into one larger kernel",
     {{"max_us", 1000, "kernels whose mean duration is below this"}},
     r_small_gpu_op},
    {"large-cpu-op",
     "placement",
     "long CPU operators that launch no GPU work (seed rule)",
     "move the computation to the GPU (a tensor op / kernel) or parallelize it on the CPU",
     {{"min_ms", 10, "CPU operator calls longer than this"}},
     r_large_cpu_op},
    {"batch-calls",
     "batching",
     "the same GPU operation run many times back to back (seed rule)",
     "batch the calls (one larger kernel, foreach/multi-tensor ops, torch.compile)",
     {{"min_run", 10, "consecutive calls of one name on one stream"}},
     r_batch},
    {"large-memory",
     "memory",
     "peak allocated memory above a threshold (seed rule)",
     "reduce memory: smaller batches, activation checkpointing, lower precision, free early",
     {{"min_mb", 100, "peak allocated MiB per device"}},
     r_large_memory},
    {"cache-calls",
     "caching",
     "many small, frequent CPU operator calls (seed rule)",
     "cache or hoist the results; avoid re-creating tensors in the loop",
     {{"min_calls", 100, "calls of one operator"}, {"max_us", 100, "mean duration below this"}},
     r_cache},
    {"low-gpu-utilization",
     "utilization",
     "GPU busy for a small share of the traced span (seed rule)",
     "parallelize the input pipeline, overlap CPU work with the GPU, increase the batch size",
     {{"max_pct", 50, "GPU busy time as % of the traced span"}},
     r_low_util},
    {"high-temperature",
     "monitor",
     "a temperature counter reaching a limit (seed rule)",
     "check cooling and power limits; throttled clocks slow every kernel",
     {{"max_c", 85, "maximum temperature"}},
     r_mon_temp},
    {"monitor-low-utilization",
     "monitor",
     "a utilization counter with a low mean (seed rule)",
     "the device is underused: feed it more work or share it",
     {{"min_pct", 50, "mean utilization"}},
     r_mon_util},
    {"slow-inference",
     "monitor",
     "an inference/latency counter with a high p95 (seed rule)",
     "profile one slow request; batch requests; use a compiled/TensorRT model",
     {{"max_ms", 100, "p95 of the latency counter, in ms"}},
     r_mon_latency},
    {"sync-memcpy",
     "memory-transfer",
     "synchronous cudaMemcpy/cudaMemset calls",
     "use cudaMemcpyAsync / cudaMemsetAsync on a stream (non_blocking=True in PyTorch)",
     {{"min_calls", 1, "calls needed to fire"}},
     r_sync_memcpy},
    {"pageable-memcpy",
     "memory-transfer",
     "asynchronous copies from or to pageable host memory",
     "pin the host buffers (pin_memory=True, cudaHostAlloc) so copies are truly asynchronous",
     {{"min_calls", 1, "copies needed to fire"}},
     r_pageable},
    {"sync-in-loop",
     "synchronization",
     "device/stream/event synchronize calls repeated in a loop",
     "remove the synchronizations from the loop (.item(), .cpu(), print of GPU tensors); use "
     "events",
     {{"min_calls", 10, "synchronize calls in the trace"},
      {"min_per_step", 2, "per ProfilerStep, when the trace has steps"}},
     r_sync_loop},
    {"gpu-gaps",
     "utilization",
     "GPU idle gaps longer than a threshold",
     "find what the CPU does in the gaps (data loading, Python overhead, syncs) and overlap it",
     {{"min_gap_us", 100, "gap length"}, {"min_pct", 5, "gaps as % of the GPU's active span"}},
     r_gaps},
    {"low-utilization-spans",
     "utilization",
     "time windows where the GPU is mostly idle",
     "look at the CPU timeline in these spans; prefetch data, use CUDA graphs for small kernels",
     {{"window_us", 0, "window length (0: GPU active span / 50, at least 10 us)"},
      {"max_util_pct", 20, "busy share of a low window"},
      {"min_pct", 10, "low windows as % of the GPU's active span"}},
     r_low_spans},
    {"launch-bound-kernels",
     "launch-overhead",
     "kernels shorter than their launch call",
     "capture the sequence in a CUDA graph, fuse kernels (torch.compile), or batch the work",
     {{"min_count", 100, "short kernels needed"},
      {"min_pct", 20, "short kernels as % of launches"}},
     r_launch_bound},
    {"launch-delay-outliers",
     "launch-overhead",
     "long delays between a launch call and its GPU start",
     "check for CPU contention, too many streams, or driver locks (e.g. concurrent allocations)",
     {{"max_delay_us", 100, "delay above this is an outlier"},
      {"min_count", 10, "outliers needed"}},
     r_launch_delay},
    {"queue-full",
     "launch-overhead",
     "a stream's launch queue reaching the driver limit",
     "the GPU is the bottleneck: make kernels faster or fewer; the CPU stalls in launch calls",
     {{"full_at", 1024, "outstanding operations per stream"}},
     r_queue},
    {"comm-not-overlapped",
     "communication",
     "collective communication not overlapped with computation",
     "overlap communication with computation (DDP bucketing, FSDP prefetch, separate streams)",
     {{"max_overlap_pct", 50, "overlapped share of communication time"},
      {"min_pct", 1, "exposed communication as % of the traced span"}},
     r_comm_overlap},
    {"low-occupancy",
     "kernel-efficiency",
     "kernels with low achieved occupancy",
     "tune block size, registers and shared memory per block (launch bounds, occupancy calculator)",
     {{"max_pct", 25, "achieved occupancy below this"},
      {"min_pct", 1, "their share of kernel time"}},
     r_occupancy},
    {"small-grid",
     "kernel-efficiency",
     "kernels whose grid has fewer blocks than the GPU has SMs",
     "launch more, smaller blocks or batch work so every SM is used",
     {{"unused", 0, "(no threshold: the SM count comes from the trace)"},
      {"min_pct", 1, "their share of kernel time"}},
     r_small_grid},
    {"memory-not-freed",
     "memory",
     "allocations made early in the trace and never freed",
     "look for tensors kept alive across steps (lists of losses, caches, graphs kept by "
     "references)",
     {{"min_mb", 16, "MiB never freed per device"}},
     r_not_freed},
    {"memory-growth",
     "memory",
     "allocated memory growing at the end of every step",
     "a leak across iterations: detach/free what each step keeps (e.g. loss history with graphs)",
     {{"min_steps", 3, "step ends needed"}, {"min_mb", 1, "total growth in MiB"}},
     r_growth},
    /* torch.compile (TORCH_TRACE logs; gpuprof compile) */
    {"compile-data-dependent",
     GP_ADV_COMPILE_TYPE,
     "graph breaks on data-dependent control flow or .item()",
     "keep tensor values out of Python control flow: torch.where / torch.cond instead of if on a "
     "tensor; for .item() set torch._dynamo.config.capture_scalar_outputs = True",
     {{"min_breaks", 1, "graph breaks of this class needed"}},
     r_cc_data_dep},
    {"compile-unsupported",
     GP_ADV_COMPILE_TYPE,
     "graph breaks on builtins, calls or objects Dynamo does not support",
     "replace the call at the user frame with a torch op, move it out of the compiled function, "
     "or wrap it as a custom op (torch.library.custom_op)",
     {{"min_breaks", 1, "graph breaks of this class needed"}},
     r_cc_unsupported},
    {"compile-skipped-function",
     GP_ADV_COMPILE_TYPE,
     "graph breaks at skipped functions or explicit torch._dynamo.graph_break()",
     "remove graph_break()/disable() calls that are no longer needed; a skipped library function "
     "can often be allowed (torch._dynamo.allow_in_graph) or replaced",
     {{"min_breaks", 1, "graph breaks of this class needed"}},
     r_cc_skipped},
    {"compile-graph-break",
     GP_ADV_COMPILE_TYPE,
     "other graph breaks",
     "read the reason at the user frame (TORCH_LOGS=graph_breaks); rewrite that code path",
     {{"min_breaks", 1, "graph breaks of this class needed"}},
     r_cc_other_break},
    {"compile-dynamic-shapes",
     GP_ADV_COMPILE_TYPE,
     "recompiles caused by changing input sizes or strides",
     "mark the changing dimension dynamic (torch._dynamo.mark_dynamic) or compile with "
     "dynamic=True; pad or bucket the input shapes",
     {{"min_recompiles", 1, "recompiles of this class needed"}},
     r_cc_dyn_shapes},
    {"compile-guard-recompiles",
     GP_ADV_COMPILE_TYPE,
     "recompiles caused by guards on Python values or object identity",
     "pass changing Python numbers as tensors, keep module/attribute identity stable, avoid "
     "globals that change between calls",
     {{"min_recompiles", 1, "recompiles of this class needed"}},
     r_cc_guards},
    {"compile-recompile-limit",
     GP_ADV_COMPILE_TYPE,
     "frames recompiled up to the cache size / recompile limit",
     "remove the cause of the recompiles (see the reasons) or raise "
     "torch._dynamo.config.cache_size_limit (recompile_limit in newer PyTorch)",
     {{"limit", 8, "compiles of one frame (torch._dynamo.config.cache_size_limit)"}},
     r_cc_limit},
    {"compile-failure",
     GP_ADV_COMPILE_TYPE,
     "compilations that failed (fail_type)",
     "fix the error in fail_reason (backend or tracing); meanwhile "
     "torch._dynamo.config.suppress_errors = True falls back to eager",
     {{"min_failures", 1, "failed compilations needed"}},
     r_cc_failure},
    {"compile-cache-cold",
     GP_ADV_COMPILE_TYPE,
     "FX graph cache misses and no hit with long compile times",
     "keep the Inductor caches between runs (TORCHINDUCTOR_CACHE_DIR on persistent storage, "
     "TORCHINDUCTOR_FX_GRAPH_CACHE=1, remote cache or torch.compiler.save_cache_artifacts)",
     {{"min_s", 10, "total compile time in seconds"}},
     r_cc_cache_miss},
};

const gp_adv_rule *gp_adv_rules(size_t *n)
{
    *n = sizeof rules / sizeof rules[0];
    return rules;
}

int gp_adv_rule_find(const char *id)
{
    for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++)
        if (!strcmp(rules[i].id, id)) return (int)i;
    return -1;
}

int gp_adv_param_find(const gp_adv_rule *r, const char *name)
{
    for (int i = 0; i < GP_ADV_MAX_PARAMS && r->params[i].name; i++)
        if (!strcmp(r->params[i].name, name)) return i;
    return -1;
}

int gp_adv_parse_rules(const char *list, unsigned char *mark, unsigned char val, char *msg,
                       size_t mn)
{
    const char *p = list;
    for (;;) {
        const char *e = strchr(p, ',');
        size_t k = e ? (size_t)(e - p) : strlen(p);
        char id[64];
        if (k && k < sizeof id) {
            memcpy(id, p, k);
            id[k] = 0;
            int r = gp_adv_rule_find(id);
            if (r < 0) {
                snprintf(msg, mn, "unknown rule '%s' (see --list-rules)", id);
                return -1;
            }
            mark[r] = val;
        } else if (k) {
            snprintf(msg, mn, "unknown rule '%.*s...' (see --list-rules)", 40, p);
            return -1;
        }
        if (!e) return 0;
        p = e + 1;
    }
}

int gp_adv_parse_set(const char *arg, double (*values)[GP_ADV_MAX_PARAMS],
                     unsigned char (*set)[GP_ADV_MAX_PARAMS], char *msg, size_t mn)
{
    const char *dot = strchr(arg, '.'), *eq = strchr(arg, '=');
    if (!dot || !eq || eq < dot) {
        snprintf(msg, mn, "--set expects RULE.PARAM=VALUE, got '%.200s'", arg);
        return -1;
    }
    char rule[64], param[64];
    snprintf(rule, sizeof rule, "%.*s", (int)(dot - arg), arg);
    snprintf(param, sizeof param, "%.*s", (int)(eq - dot - 1), dot + 1);
    int r = gp_adv_rule_find(rule);
    if (r < 0) {
        snprintf(msg, mn, "unknown rule '%s' (see --list-rules)", rule);
        return -1;
    }
    size_t nr;
    const gp_adv_rule *all = gp_adv_rules(&nr);
    int p = gp_adv_param_find(&all[r], param);
    if (p < 0) {
        snprintf(msg, mn, "rule '%s' has no parameter '%s' (see --list-rules)", rule, param);
        return -1;
    }
    char *end;
    errno = 0;
    double v = strtod(eq + 1, &end);
    if (errno || end == eq + 1 || *end || !isfinite(v) || v < 0) {
        snprintf(msg, mn, "--set %s.%s expects a non-negative number, got '%.100s'", rule, param,
                 eq + 1);
        return -1;
    }
    values[r][p] = v;
    set[r][p] = 1;
    return 0;
}

/* ---- the engine --------------------------------------------------------- */

static void ctx_free(gp_adv_ctx *c)
{
    gp_summary_free(&c->sum);
    free(c->gpu);
    free(c->launch);
    free(c->busy);
    free(c->steps);
    if (c->view_ok) gp_hview_free(&c->view);
}

static int sorted_by_ts(const gp_trace *t, const uint32_t *ix, size_t n)
{
    for (size_t i = 1; i < n; i++)
        if (t->slices.v[ix[i]].ts < t->slices.v[ix[i - 1]].ts) return 0;
    return 1;
}

static int ctx_init(gp_adv_ctx *c, const gp_trace *t)
{
    memset(c, 0, sizeof *c);
    c->t = t;
    c->span = t->t_end - t->t_begin > 0 ? t->t_end - t->t_begin : 1;
    if (gp_summary_compute(t, &c->sum)) return GP_ENOMEM;
    size_t n = t->slices.n;
    c->gpu = malloc((n ? n : 1) * sizeof *c->gpu);
    c->steps = malloc((n ? n : 1) * sizeof *c->steps);
    gp_u64map corr = {0};
    if (!c->gpu || !c->steps) goto fail;
    for (size_t i = 0; i < n; i++) {
        const gp_slice *s = &t->slices.v[i];
        gp_kind k = gp_slice_kind(t, s);
        if (k == GP_K_KERNEL || k == GP_K_MEMCPY || k == GP_K_MEMSET || k == GP_K_CL_COMMAND)
            c->gpu[c->ngpu++] = (uint32_t)i;
        else if ((k == GP_K_RUNTIME || k == GP_K_DRIVER) && s->correlation != GP_NONE) {
            if (gp_u64map_put(&corr, (uint64_t)s->correlation, i)) goto fail;
        } else if ((k == GP_K_USER_ANNOTATION || k == GP_K_CPU_OP) &&
                   starts(gp_trace_s(t, s->name), "ProfilerStep#"))
            c->steps[c->nsteps++] = (uint32_t)i;
    }
    /* sorting is skipped when the slices are already in order (common) */
    if (!sorted_by_ts(t, c->gpu, c->ngpu) || !sorted_by_ts(t, c->steps, c->nsteps)) {
        int64_t *pairs =
            malloc((c->ngpu > c->nsteps ? c->ngpu : c->nsteps) * 2 * sizeof *pairs + 1);
        if (!pairs) goto fail;
        sort_by_ts(c->gpu, c->ngpu, pairs, t, 0);
        sort_by_ts(c->steps, c->nsteps, pairs, t, 0);
        free(pairs);
    }
    c->launch = malloc((c->ngpu ? c->ngpu : 1) * sizeof *c->launch);
    c->busy = malloc((c->ngpu ? c->ngpu : 1) * 2 * sizeof *c->busy);
    if (!c->launch || !c->busy) goto fail;
    for (size_t i = 0; i < c->ngpu; i++) {
        const gp_slice *s = &t->slices.v[c->gpu[i]];
        uint64_t r;
        c->launch[i] =
            s->correlation != GP_NONE && gp_u64map_get(&corr, (uint64_t)s->correlation, &r)
                ? (uint32_t)r
                : UINT32_MAX;
        c->busy[2 * i] = s->ts;
        c->busy[2 * i + 1] = s->ts + s->dur;
    }
    c->nbusy = gp_hta_merge(c->busy, c->ngpu);
    for (size_t i = 0; i < c->nbusy; i++) c->gpu_busy_ns += c->busy[2 * i + 1] - c->busy[2 * i];
    if (c->nbusy) {
        c->gpu_first = c->busy[0];
        c->gpu_last = c->busy[2 * c->nbusy - 1];
    }
    /* libgpuprof folds kernel timings past its cap into rollover rows
     * (docs/api.md "Kernel timers"): their time has no intervals */
    for (size_t i = 0; i < t->aggs.n; i++) {
        const gp_agg_row *r = &t->aggs.v[i];
        if (!r->count || !(gp_kind_mask_gpu_work() & GP_KIND_BIT(t->cats.v[r->cat].kind))) continue;
        c->gpu_agg_ns += r->total_ns;
        c->gpu_agg_n += r->count;
    }
    gp_u64map_free(&corr);
    return 0;
fail:
    gp_u64map_free(&corr);
    ctx_free(c);
    return GP_ENOMEM;
}

static int cmp_advice(const void *a, const void *b)
{
    const gp_advice *x = a, *y = b;
    if (x->priority != y->priority) return (int)x->priority - (int)y->priority;
    int64_t kx = x->saving_ns != GP_NONE ? x->saving_ns : x->time_ns != GP_NONE ? x->time_ns : 0;
    int64_t ky = y->saving_ns != GP_NONE ? y->saving_ns : y->time_ns != GP_NONE ? y->time_ns : 0;
    if (kx != ky) return kx < ky ? 1 : -1;
    return strcmp(x->rule->id, y->rule->id);
}

static int run_rules(gp_adv_ctx *cp, const gp_advise_opts *o, gp_advice_list *out);

int gp_advise(const gp_trace *t, const gp_advise_opts *o, gp_advice_list *out)
{
    memset(out, 0, sizeof *out);
    gp_adv_ctx c;
    if (ctx_init(&c, t)) return GP_ENOMEM;
    out->span_ns = t->t_end - t->t_begin;
    return run_rules(&c, o, out);
}

int gp_advise_compile(const struct gp_tlog *const *logs, size_t n, const gp_advise_opts *o,
                      gp_advice_list *out)
{
    memset(out, 0, sizeof *out);
    gp_adv_ctx c;
    memset(&c, 0, sizeof c);
    c.logs = logs;
    c.nlogs = n;
    return run_rules(&c, o, out);
}

/* Runs the rules that fit the context (trace rules when cp->t is set, else
 * the torch-compile rules) and frees the context. */
static int run_rules(gp_adv_ctx *cp, const gp_advise_opts *o, gp_advice_list *out)
{
    gp_adv_ctx c = *cp;
    size_t nr = sizeof rules / sizeof rules[0];
    out->v = calloc(nr, sizeof *out->v);
    if (!out->v) {
        ctx_free(&c);
        return GP_ENOMEM;
    }
    for (size_t r = 0; r < nr; r++) {
        if (o && o->enabled && !o->enabled[r]) continue;
        if ((c.t == NULL) != !strcmp(rules[r].type, GP_ADV_COMPILE_TYPE)) continue;
        double p[GP_ADV_MAX_PARAMS];
        for (int i = 0; i < GP_ADV_MAX_PARAMS; i++)
            p[i] = o && o->set && o->set[r][i] ? o->values[r][i] : rules[r].params[i].def;
        gp_advice *a = &out->v[out->n];
        memset(a, 0, sizeof *a);
        a->rule = &rules[r];
        int rc = rules[r].check(&c, p, a);
        if (rc < 0) {
            ctx_free(&c);
            gp_advice_list_free(out);
            return rc;
        }
        if (rc == 1) out->n++;
    }
    ctx_free(&c);
    qsort(out->v, out->n, sizeof *out->v, cmp_advice);
    return 0;
}

void gp_advice_list_free(gp_advice_list *l)
{
    free(l->v);
    memset(l, 0, sizeof *l);
}
