/* analysis/compare.c: per-operation comparison of baseline and current runs.
 * Operations are matched by (summary group, name) across traces; each
 * verdict needs both a relative change over the threshold and a significant
 * two-sided Mann-Whitney U test. */
#include "analysis/compare.h"
#include "analysis/mannwhitney.h"
#include "bench/bench.h"
#include "core/hash.h"
#include "core/stats.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const verdict_names[GP_V__COUNT] = {
    "REGRESSION", "IMPROVEMENT", "NO_CHANGE", "~", "NEW", "REMOVED", "IGNORED"};

const char *gp_verdict_name(gp_verdict v)
{
    return (unsigned)v < GP_V__COUNT ? verdict_names[v] : "?";
}

void gp_compare_opts_default(gp_compare_opts *o)
{
    memset(o, 0, sizeof *o);
    o->alpha = 0.05;
    o->threshold_pct = 5.0;
    o->min_time_ns = 0;
    o->group_mask = (1u << GP_G__COUNT) - 1;
    o->mode = GP_CMP_AUTO;
    o->correction = GP_CORR_HOLM;
}

/* Work state shared by the passes. */
typedef struct cmp_work {
    gp_trace *const *tr; /* all traces: base first, then current */
    size_t ntr, nb;
    uint32_t **row_of; /* per trace, per slice: op index or UINT32_MAX */
    gp_u64map opmap;   /* (group << 32 | name id) -> op index */
    GP_VEC(uint64_t) opkey;
} cmp_work;

/* "ProfilerStep#N": steps are matched as one operation, "ProfilerStep#*",
 * so that step times are compared as samples. */
static int is_step_name(const char *s, size_t n)
{
    static const char pre[] = "ProfilerStep#";
    size_t k = sizeof pre - 1;
    if (n <= k || memcmp(s, pre, k)) return 0;
    for (size_t i = k; i < n; i++)
        if (s[i] < '0' || s[i] > '9') return 0;
    return 1;
}

const char *gp_compare_op_name(const char *name, size_t *len)
{
    if (!is_step_name(name, *len)) return name;
    *len = sizeof "ProfilerStep#*" - 1;
    return "ProfilerStep#*";
}

/* Pass 1 for one trace: assigns every slice of a compared group an op index. */
static int assign_ops(cmp_work *w, gp_comparison *c, size_t ti, const gp_compare_opts *o)
{
    const gp_trace *t = w->tr[ti];
    uint32_t nstr = gp_strtab_count(t->strings);
    uint32_t *cname = malloc((size_t)(nstr ? nstr : 1) * sizeof *cname);
    uint8_t *cgroup = malloc(t->cats.n ? t->cats.n : 1);
    uint32_t *row_of = malloc((t->slices.n ? t->slices.n : 1) * sizeof *row_of);
    if (!cname || !cgroup || !row_of) goto fail;
    memset(cname, 0xff, (size_t)(nstr ? nstr : 1) * sizeof *cname);
    for (size_t i = 0; i < t->cats.n; i++) {
        gp_group g = gp_group_of_kind((gp_kind)t->cats.v[i].kind);
        cgroup[i] = (uint8_t)(g != GP_G__COUNT && (o->group_mask & (1u << g)) ? g : GP_G__COUNT);
    }
    uint64_t last_key = UINT64_MAX;
    uint32_t last_op = 0;
    for (size_t i = 0; i < t->slices.n; i++) {
        const gp_slice *s = &t->slices.v[i];
        unsigned g = cgroup[s->cat];
        if (g == GP_G__COUNT) {
            row_of[i] = UINT32_MAX;
            continue;
        }
        uint32_t cn = cname[s->name];
        if (cn == UINT32_MAX) {
            const char *nm = gp_trace_s(t, s->name);
            size_t len = gp_strtab_len(t->strings, s->name);
            nm = gp_compare_op_name(nm, &len);
            cn = gp_strtab_intern(c->names, nm, len);
            if (cn == UINT32_MAX) goto fail;
            cname[s->name] = cn;
        }
        uint64_t key = (uint64_t)g << 32 | cn;
        if (key != last_key) {
            uint64_t *slot = gp_u64map_slot(&w->opmap, key, UINT64_MAX);
            if (!slot) goto fail;
            if (*slot == UINT64_MAX) {
                *slot = w->opkey.n;
                if (GP_VEC_PUSH(w->opkey, key)) goto fail;
            }
            last_key = key;
            last_op = (uint32_t)*slot;
        }
        row_of[i] = last_op;
    }
    free(cname);
    free(cgroup);
    w->row_of[ti] = row_of;
    return 0;
fail:
    free(cname);
    free(cgroup);
    free(row_of);
    return GP_ENOMEM;
}

static int cmp_rows(const void *a, const void *b)
{
    const gp_cmp_row *x = a, *y = b;
    if (x->group != y->group) return (int)x->group - (int)y->group;
    double ax = isnan(x->change_ns) ? fmax(x->base.total_ns, x->cur.total_ns) : fabs(x->change_ns);
    double ay = isnan(y->change_ns) ? fmax(y->base.total_ns, y->cur.total_ns) : fabs(y->change_ns);
    if (ax != ay) return ax < ay ? 1 : -1;
    return x->name < y->name ? -1 : x->name > y->name;
}

/* Peak, live-at-end and allocation count of [memory] events per device. */
typedef struct mem_acc {
    int dtype, did;
    int64_t running, peak, live_end;
    uint64_t allocs;
} mem_acc;

static int mem_of_trace(const gp_trace *t, mem_acc **out, size_t *nout)
{
    mem_acc *m = NULL;
    size_t n = 0;
    gp_u64map live = {0}; /* (device index << 56) ^ addr -> bytes */
    for (size_t i = 0; i < t->mem_events.n; i++) {
        const gp_mem_event *e = &t->mem_events.v[i];
        size_t d = 0;
        while (d < n && (m[d].dtype != e->device_type || m[d].did != e->device_id)) d++;
        if (d == n) {
            mem_acc *nm = realloc(m, (n + 1) * sizeof *m);
            if (!nm) goto fail;
            m = nm;
            memset(&m[n], 0, sizeof m[n]);
            m[n].dtype = e->device_type;
            m[n].did = e->device_id;
            n++;
        }
        mem_acc *a = &m[d];
        a->running += e->bytes;
        int64_t level = e->total_allocated != GP_NONE ? e->total_allocated : a->running;
        if (level > a->peak) a->peak = level;
        uint64_t key = gp_hash_u64(e->addr) ^ ((uint64_t)d << 56);
        if (e->bytes > 0) {
            a->allocs++;
            if (gp_u64map_put(&live, key, (uint64_t)e->bytes)) goto fail;
        } else if (e->bytes < 0) {
            uint64_t *slot = gp_u64map_slot(&live, key, 0);
            if (!slot) goto fail;
            *slot = 0; /* freed (or freed before it was seen: nothing live) */
        }
    }
    /* Sum live bytes per device: walk the events again (the map loses the
     * device for hashed keys), counting an allocation as live when its slot
     * still holds its size at the end. */
    for (size_t i = 0; i < t->mem_events.n; i++) {
        const gp_mem_event *e = &t->mem_events.v[i];
        if (e->bytes <= 0) continue;
        size_t d = 0;
        while (d < n && (m[d].dtype != e->device_type || m[d].did != e->device_id)) d++;
        uint64_t key = gp_hash_u64(e->addr) ^ ((uint64_t)d << 56), v;
        if (gp_u64map_get(&live, key, &v) && v == (uint64_t)e->bytes) {
            m[d].live_end += e->bytes;
            gp_u64map_put(&live, key, 0); /* count a reused address once */
        }
    }
    gp_u64map_free(&live);
    *out = m;
    *nout = n;
    return 0;
fail:
    gp_u64map_free(&live);
    free(m);
    return GP_ENOMEM;
}

static int add_memory(gp_comparison *c, gp_trace *const *tr, size_t nt, int is_cur)
{
    for (size_t ti = 0; ti < nt; ti++) {
        mem_acc *m;
        size_t n;
        if (mem_of_trace(tr[ti], &m, &n)) return GP_ENOMEM;
        for (size_t d = 0; d < n; d++) {
            size_t k = 0;
            while (k < c->nmem &&
                   (c->mem[k].device_type != m[d].dtype || c->mem[k].device_id != m[d].did))
                k++;
            if (k == c->nmem) {
                gp_cmp_mem *nm = realloc(c->mem, (c->nmem + 1) * sizeof *nm);
                if (!nm) {
                    free(m);
                    return GP_ENOMEM;
                }
                c->mem = nm;
                memset(&c->mem[k], 0, sizeof c->mem[k]);
                c->mem[k].device_type = m[d].dtype;
                c->mem[k].device_id = m[d].did;
                c->nmem++;
            }
            gp_cmp_mem *x = &c->mem[k];
            int *valid = is_cur ? &x->cur_valid : &x->base_valid;
            int64_t *peak = is_cur ? &x->cur_peak : &x->base_peak;
            int64_t *live = is_cur ? &x->cur_live_end : &x->base_live_end;
            uint64_t *allocs = is_cur ? &x->cur_allocs : &x->base_allocs;
            if (!*valid || m[d].peak > *peak) *peak = m[d].peak;
            if (!*valid || m[d].live_end > *live) *live = m[d].live_end;
            if (!*valid || m[d].allocs > *allocs) *allocs = m[d].allocs;
            *valid = 1;
        }
        free(m);
    }
    return 0;
}

/* Adds the tracked buffers of one side's runs (summed per name within a
 * run, max over runs). */
static int add_tracked(gp_comparison *c, gp_trace *const *tr, size_t nt, int is_cur)
{
    gp_cmp_tracked *side = is_cur ? &c->cur_tracked : &c->base_tracked;
    for (size_t ti = 0; ti < nt; ti++) {
        const gp_trace *t = tr[ti];
        if (!t->meta.has_tracked_memory) continue;
        if (!side->valid || t->meta.tracked_peak_bytes > side->peak_bytes)
            side->peak_bytes = t->meta.tracked_peak_bytes;
        if (!side->valid || t->meta.tracked_current_bytes > side->current_bytes)
            side->current_bytes = t->meta.tracked_current_bytes;
        side->valid = 1;
        /* this run's sums per name, in slots of c->bufs */
        size_t nb = t->tracked_buffers.n;
        int64_t *sum = calloc(c->nbufs + nb + 1, sizeof *sum);
        uint32_t *cnt = calloc(c->nbufs + nb + 1, sizeof *cnt);
        if (!sum || !cnt) {
            free(sum);
            free(cnt);
            return GP_ENOMEM;
        }
        for (size_t i = 0; i < nb; i++) {
            const gp_tracked_buffer *b = &t->tracked_buffers.v[i];
            const char *nm = gp_trace_s(t, b->name);
            uint32_t id = gp_strtab_intern(c->names, nm, strlen(nm));
            if (id == UINT32_MAX) {
                free(sum);
                free(cnt);
                return GP_ENOMEM;
            }
            size_t k = 0;
            while (k < c->nbufs && c->bufs[k].name != id) k++;
            if (k == c->nbufs) {
                gp_cmp_buffer *nbuf = realloc(c->bufs, (c->nbufs + 1) * sizeof *nbuf);
                if (!nbuf) {
                    free(sum);
                    free(cnt);
                    return GP_ENOMEM;
                }
                c->bufs = nbuf;
                memset(&c->bufs[k], 0, sizeof c->bufs[k]);
                c->bufs[k].name = id;
                c->nbufs++;
            }
            sum[k] += b->bytes;
            cnt[k]++;
        }
        for (size_t k = 0; k < c->nbufs; k++) {
            if (!cnt[k]) continue;
            gp_cmp_buffer *x = &c->bufs[k];
            int *valid = is_cur ? &x->cur_valid : &x->base_valid;
            int64_t *bytes = is_cur ? &x->cur_bytes : &x->base_bytes;
            uint32_t *count = is_cur ? &x->cur_count : &x->base_count;
            if (!*valid || sum[k] > *bytes) *bytes = sum[k];
            if (!*valid || cnt[k] > *count) *count = cnt[k];
            *valid = 1;
        }
        free(sum);
        free(cnt);
    }
    return 0;
}

static int cmp_bufs(const void *a, const void *b)
{
    const gp_cmp_buffer *x = a, *y = b;
    int64_t dx = (x->cur_valid ? x->cur_bytes : 0) - (x->base_valid ? x->base_bytes : 0);
    int64_t dy = (y->cur_valid ? y->cur_bytes : 0) - (y->base_valid ? y->base_bytes : 0);
    if (dx < 0) dx = -dx;
    if (dy < 0) dy = -dy;
    if (dx != dy) return dx > dy ? -1 : 1;
    return x->name < y->name ? -1 : x->name > y->name;
}

static int cmp_pidx(const void *a, const void *b)
{
    double x = ((const double *)a)[0], y = ((const double *)b)[0];
    return x < y ? -1 : x > y;
}

/* Holm-Bonferroni step-down adjustment over the tested rows[0..n). */
static int holm(gp_cmp_row *rows, size_t n)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (!isnan(rows[i].p)) m++;
    if (!m) return 0;
    double *pi = malloc(m * 2 * sizeof *pi); /* pairs (p, row index) */
    if (!pi) return GP_ENOMEM;
    for (size_t i = 0, k = 0; i < n; i++)
        if (!isnan(rows[i].p)) {
            pi[2 * k] = rows[i].p;
            pi[2 * k + 1] = (double)i;
            k++;
        }
    qsort(pi, m, 2 * sizeof *pi, cmp_pidx);
    double run = 0;
    for (size_t k = 0; k < m; k++) {
        double adj = fmin(1.0, (double)(m - k) * pi[2 * k]);
        if (adj > run) run = adj;
        rows[(size_t)pi[2 * k + 1]].p_adj = run;
    }
    free(pi);
    return 0;
}

static void decide(gp_comparison *c, gp_cmp_row *r, const gp_compare_opts *o)
{
    if (r->base.count == 0) {
        r->verdict = GP_V_NEW;
    } else if (r->cur.count == 0) {
        r->verdict = GP_V_REMOVED;
    } else if (r->base.total_ns < (double)o->min_time_ns &&
               r->cur.total_ns < (double)o->min_time_ns) {
        r->verdict = GP_V_IGNORED;
    } else {
        int large = r->base_fig > 0 ? fabs(r->change_pct) >= o->threshold_pct : r->cur_fig > 0;
        /* the test must agree with the direction of the change */
        int agrees = r->change_ns > 0 ? r->effect < 0.5 : r->effect > 0.5;
        int sig = !isnan(r->p_adj) && r->p_adj < o->alpha && agrees;
        if (!large)
            r->verdict = GP_V_NO_CHANGE;
        else if (!sig)
            r->verdict = GP_V_UNSURE;
        else
            r->verdict =
                (r->change_ns > 0) != (r->higher_better != 0) ? GP_V_REGRESSION : GP_V_IMPROVEMENT;
        if (r->few_samples) c->few_sample_rows++;
    }
    if (r->verdict == GP_V_NEW || r->verdict == GP_V_REMOVED) {
        r->change_ns = NAN;
        r->change_pct = NAN;
    }
}

/* One side's samples of one bench figure. */
typedef struct msamp {
    GP_VEC(double) v;   /* every repetition, pooled over the side's runs */
    GP_VEC(double) run; /* per-run means */
} msamp;

static int cmp_metric_rows(const void *a, const void *b)
{
    const gp_cmp_row *x = a, *y = b;
    return x->name < y->name ? -1 : x->name > y->name;
}

/* The bench figures of both sides as rows of c->metrics: the mean per side
 * (of the repetitions, or of the per-run means when comparing by runs),
 * the same test and threshold as the operations, and a verdict whose
 * direction follows the figure (higher is better for GB/s, GFLOP/s, GIOP/s). */
static int compare_metrics(gp_comparison *c, gp_trace *const *tr, size_t nb, size_t nc,
                           const gp_compare_opts *o)
{
    GP_VEC(uint32_t) names = {0};
    GP_VEC(msamp) side[2] = {{0}, {0}};
    int rc = GP_ENOMEM;
    for (size_t ti = 0; ti < nb + nc; ti++) {
        const gp_trace *t = tr[ti];
        int s = ti >= nb;
        for (size_t si = 0; si < t->series.n; si++) {
            const char *nm = gp_trace_s(t, t->series.v[si].name);
            if (!gp_is_bench_series(nm)) continue;
            uint32_t id = gp_strtab_intern(c->names, nm, strlen(nm));
            if (id == UINT32_MAX) goto done;
            size_t k = 0;
            while (k < names.n && names.v[k] != id) k++;
            if (k == names.n) {
                msamp z = {{0}, {0}};
                if (GP_VEC_PUSH(names, id) || GP_VEC_PUSH(side[0], z) || GP_VEC_PUSH(side[1], z))
                    goto done;
            }
            msamp *m = &side[s].v[k];
            double sum = 0;
            size_t n = 0;
            for (size_t i = 0; i < t->counters.n; i++)
                if (t->counters.v[i].series == si) {
                    if (GP_VEC_PUSH(m->v, t->counters.v[i].value)) goto done;
                    sum += t->counters.v[i].value;
                    n++;
                }
            if (n && GP_VEC_PUSH(m->run, sum / (double)n)) goto done;
        }
    }
    c->nmetrics = names.n;
    c->metrics = calloc(names.n ? names.n : 1, sizeof *c->metrics);
    if (!c->metrics) goto done;
    size_t runs[2] = {nb, nc};
    for (size_t k = 0; k < names.n; k++) {
        gp_cmp_row *r = &c->metrics[k];
        r->group = GP_G_BENCH;
        r->name = names.v[k];
        r->higher_better = gp_bench_key_higher_better(gp_strtab_get(c->names, r->name) + 6) == 1;
        gp_cmp_side *sd[2] = {&r->base, &r->cur};
        double fig[2];
        for (int s = 0; s < 2; s++) {
            msamp *m = &side[s].v[k];
            const double *x = c->by_runs ? m->run.v : m->v.v;
            size_t n = c->by_runs ? m->run.n : m->v.n;
            double sum = 0;
            for (size_t i = 0; i < n; i++) sum += x[i];
            sd[s]->count = (double)m->v.n / (double)runs[s];
            sd[s]->mean_ns = n ? sum / (double)n : NAN;
            sd[s]->total_ns = sd[s]->mean_ns;
            sd[s]->samples = n;
            fig[s] = sd[s]->mean_ns;
        }
        r->base_fig = fig[0];
        r->cur_fig = fig[1];
        r->change_ns = r->cur_fig - r->base_fig;
        r->change_pct = r->base_fig > 0 ? 100.0 * r->change_ns / r->base_fig : NAN;
        r->p = r->p_adj = r->effect = NAN;
        if (!r->base.samples || !r->cur.samples) continue;
        msamp *mb = &side[0].v[k], *mc = &side[1].v[k];
        gp_mwu mw;
        if (c->by_runs ? gp_mwu_test(mb->run.v, mb->run.n, mc->run.v, mc->run.n, GP_MWU_AUTO, &mw)
                       : gp_mwu_test(mb->v.v, mb->v.n, mc->v.v, mc->v.n, GP_MWU_AUTO, &mw))
            goto done;
        r->p = r->p_adj = mw.p;
        r->effect = mw.effect;
        r->exact = mw.exact;
        r->few_samples =
            r->base.samples < GP_CMP_FEW_SAMPLES || r->cur.samples < GP_CMP_FEW_SAMPLES;
    }
    if (o->correction == GP_CORR_HOLM && holm(c->metrics, c->nmetrics)) goto done;
    gp_compare_opts mo = *o;
    mo.min_time_ns = 0;              /* figures, not times */
    size_t few = c->few_sample_rows; /* counted for the operations only */
    for (size_t k = 0; k < c->nmetrics; k++) {
        gp_cmp_row *r = &c->metrics[k];
        r->base.count = r->base.samples ? r->base.count : 0;
        r->cur.count = r->cur.samples ? r->cur.count : 0;
        decide(c, r, &mo);
        c->metric_verdicts[r->verdict]++;
    }
    c->few_sample_rows = few;
    if (c->nmetrics > 1) qsort(c->metrics, c->nmetrics, sizeof *c->metrics, cmp_metric_rows);
    rc = 0;
done:
    for (int s = 0; s < 2; s++) {
        for (size_t k = 0; k < side[s].n; k++) {
            GP_VEC_FREE(side[s].v[k].v);
            GP_VEC_FREE(side[s].v[k].run);
        }
        GP_VEC_FREE(side[s]);
    }
    GP_VEC_FREE(names);
    return rc;
}

int gp_compare_runs(gp_trace *const *base, size_t nb, gp_trace *const *cur, size_t nc,
                    const gp_compare_opts *o, gp_comparison *out)
{
    memset(out, 0, sizeof *out);
    out->opts = *o;
    out->geomean_ratio = NAN;
    if (!nb || !nc) return GP_EINVAL;
    if (o->mode == GP_CMP_RUNS && (nb < 2 || nc < 2)) return GP_EINVAL;
    out->base_runs = nb;
    out->cur_runs = nc;
    out->by_runs = o->mode == GP_CMP_RUNS || (o->mode == GP_CMP_AUTO && nb >= 2 && nc >= 2);
    int rc = GP_ENOMEM;
    size_t ntr = nb + nc;
    gp_trace **tr = malloc(ntr * sizeof *tr);
    cmp_work w = {0};
    double *run_tot = NULL, *xs = NULL;
    int64_t *samples = NULL;
    uint64_t *cnt = NULL;
    size_t *off = NULL;
    out->names = gp_strtab_create();
    w.row_of = calloc(ntr, sizeof *w.row_of);
    if (!tr || !out->names || !w.row_of) goto fail;
    memcpy(tr, base, nb * sizeof *tr);
    memcpy(tr + nb, cur, nc * sizeof *tr);
    w.tr = tr;
    w.ntr = ntr;
    w.nb = nb;

    /* pass 1: op index of every slice */
    for (size_t ti = 0; ti < ntr; ti++)
        if (assign_ops(&w, out, ti, o)) goto fail;
    size_t nops = w.opkey.n;
    /* pass 2: counts per (side, op) and totals per (run, op) */
    run_tot = calloc(ntr * (nops ? nops : 1), sizeof *run_tot);
    cnt = calloc(2 * (nops ? nops : 1), sizeof *cnt);
    off = calloc(2 * (nops ? nops : 1) + 1, sizeof *off);
    if (!run_tot || !cnt || !off) goto fail;
    for (size_t ti = 0; ti < ntr; ti++) {
        const gp_trace *t = tr[ti];
        size_t side = ti >= nb;
        double *rt = run_tot + ti * nops;
        const uint32_t *ro = w.row_of[ti];
        for (size_t i = 0; i < t->slices.n; i++) {
            uint32_t op = ro[i];
            if (op == UINT32_MAX) continue;
            rt[op] += (double)t->slices.v[i].dur;
            cnt[side * nops + op]++;
        }
        double span = (double)(t->t_end - t->t_begin);
        if (side)
            out->cur_span_ns += span / (double)nc;
        else
            out->base_span_ns += span / (double)nb;
    }
    /* pass 3: per-instance durations, gathered once, contiguous per (side,
     * op), each segment sorted once (radix) for the rank test */
    if (!out->by_runs) {
        size_t total = 0;
        for (size_t k = 0; k < 2 * nops; k++) {
            off[k] = total;
            total += cnt[k];
        }
        off[2 * nops] = total;
        samples = malloc((total ? total : 1) * sizeof *samples);
        size_t *fill = malloc((2 * nops + 1) * sizeof *fill);
        if (!samples || !fill) {
            free(fill);
            goto fail;
        }
        memcpy(fill, off, (2 * nops + 1) * sizeof *fill);
        for (size_t ti = 0; ti < ntr; ti++) {
            const gp_trace *t = tr[ti];
            size_t base_k = (ti >= nb) * nops;
            const uint32_t *ro = w.row_of[ti];
            for (size_t i = 0; i < t->slices.n; i++)
                if (ro[i] != UINT32_MAX) samples[fill[base_k + ro[i]]++] = t->slices.v[i].dur;
        }
        free(fill);
        for (size_t k = 0; k < 2 * nops; k++) gp_sort_i64(samples + off[k], off[k + 1] - off[k]);
    } else {
        xs = malloc(ntr * sizeof *xs);
        if (!xs) goto fail;
    }
    for (size_t ti = 0; ti < ntr; ti++) {
        free(w.row_of[ti]);
        w.row_of[ti] = NULL;
    }

    out->rows = calloc(nops ? nops : 1, sizeof *out->rows);
    if (!out->rows) goto fail;
    out->n = nops;
    double logsum = 0;
    for (size_t op = 0; op < nops; op++) {
        gp_cmp_row *r = &out->rows[op];
        r->group = (gp_group)(w.opkey.v[op] >> 32);
        r->name = (uint32_t)w.opkey.v[op];
        double sum[2] = {0, 0};
        for (size_t ti = 0; ti < ntr; ti++) sum[ti >= nb] += run_tot[ti * nops + op];
        gp_cmp_side *sd[2] = {&r->base, &r->cur};
        size_t runs[2] = {nb, nc};
        for (int s = 0; s < 2; s++) {
            uint64_t n = cnt[s * nops + op];
            sd[s]->count = (double)n / (double)runs[s];
            sd[s]->total_ns = sum[s] / (double)runs[s];
            sd[s]->mean_ns = n ? sum[s] / (double)n : NAN;
            sd[s]->samples = out->by_runs ? runs[s] : n;
        }
        if (r->group == GP_G_KERNEL || r->group == GP_G_MEMORY) {
            out->base_gpu_ns += r->base.total_ns;
            out->cur_gpu_ns += r->cur.total_ns;
        }
        r->base_fig = out->by_runs ? r->base.total_ns : r->base.mean_ns;
        r->cur_fig = out->by_runs ? r->cur.total_ns : r->cur.mean_ns;
        r->change_ns = r->cur_fig - r->base_fig;
        r->change_pct = r->base_fig > 0 ? 100.0 * r->change_ns / r->base_fig : NAN;
        r->p = r->p_adj = r->effect = NAN;
        if (!cnt[op] || !cnt[nops + op]) continue; /* NEW or REMOVED: nothing to test */
        gp_mwu mw;
        int trc;
        if (out->by_runs) {
            for (size_t ti = 0; ti < ntr; ti++) xs[ti] = run_tot[ti * nops + op];
            trc = gp_mwu_test(xs, nb, xs + nb, nc, GP_MWU_AUTO, &mw);
        } else {
            trc = gp_mwu_test_sorted_i64(samples + off[op], cnt[op], samples + off[nops + op],
                                         cnt[nops + op], GP_MWU_AUTO, &mw);
        }
        if (trc) goto fail;
        r->p = r->p_adj = mw.p;
        r->effect = mw.effect;
        r->exact = mw.exact;
        r->few_samples =
            r->base.samples < GP_CMP_FEW_SAMPLES || r->cur.samples < GP_CMP_FEW_SAMPLES;
    }
    if (o->correction == GP_CORR_HOLM && holm(out->rows, out->n)) goto fail;
    for (size_t op = 0; op < nops; op++) {
        gp_cmp_row *r = &out->rows[op];
        decide(out, r, o);
        out->verdicts[r->verdict]++;
        if (r->verdict != GP_V_NEW && r->verdict != GP_V_REMOVED && r->verdict != GP_V_IGNORED &&
            r->base_fig > 0 && r->cur_fig > 0) {
            logsum += log(r->cur_fig / r->base_fig);
            out->geomean_n++;
        }
    }
    if (out->geomean_n) out->geomean_ratio = exp(logsum / (double)out->geomean_n);
    qsort(out->rows, out->n, sizeof *out->rows, cmp_rows);
    if (add_memory(out, base, nb, 0) || add_memory(out, cur, nc, 1)) goto fail;
    if (add_tracked(out, base, nb, 0) || add_tracked(out, cur, nc, 1)) goto fail;
    if (out->nbufs > 1) qsort(out->bufs, out->nbufs, sizeof *out->bufs, cmp_bufs);
    if (compare_metrics(out, tr, nb, nc, o)) goto fail;
    rc = 0;
    goto done;
fail:
    gp_comparison_free(out);
done:
    if (w.row_of)
        for (size_t ti = 0; ti < ntr; ti++) free(w.row_of[ti]);
    free(w.row_of);
    gp_u64map_free(&w.opmap);
    GP_VEC_FREE(w.opkey);
    free(tr);
    free(run_tot);
    free(cnt);
    free(off);
    free(samples);
    free(xs);
    return rc;
}

void gp_comparison_free(gp_comparison *c)
{
    if (c->names) gp_strtab_destroy(c->names);
    free(c->metrics);
    free(c->rows);
    free(c->mem);
    free(c->bufs);
    memset(c, 0, sizeof *c);
    c->geomean_ratio = NAN;
}

size_t gp_comparison_top(const gp_comparison *c, gp_verdict v, size_t *idx, size_t max)
{
    size_t k = 0;
    for (size_t i = 0; i < c->n; i++) {
        if (c->rows[i].verdict != v) continue;
        double key = fabs(c->rows[i].change_ns);
        if (isnan(key)) key = fmax(c->rows[i].base.total_ns, c->rows[i].cur.total_ns);
        size_t j = k < max ? k++ : max;
        /* insertion into a list sorted by key descending */
        while (j > 0) {
            const gp_cmp_row *p = &c->rows[idx[j - 1]];
            double pk = fabs(p->change_ns);
            if (isnan(pk)) pk = fmax(p->base.total_ns, p->cur.total_ns);
            if (pk >= key) break;
            if (j < max) idx[j] = idx[j - 1];
            j--;
        }
        if (j < max) idx[j] = i;
    }
    return k;
}
