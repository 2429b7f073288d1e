/* analysis/history.c: per-operation figures over a sequence of runs and step
 * detection: binary segmentation on the per-run means finds candidates, each
 * confirmed between its neighbours by compare's rule (relative threshold +
 * Mann-Whitney U test) on the per-run means, so that run-to-run variance is
 * what the test sees. */
#include "analysis/history.h"
#include "analysis/compare.h"
#include "analysis/mannwhitney.h"
#include "bench/bench.h"
#include "core/hash.h"
#include "core/stats.h"
#include "core/vec.h"
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Bench figures are kept with the durations as integers in millionths of
 * their unit (the step test works on ranks; figures are scaled back). */
#define METRIC_SCALE 1e6

/* One run's durations, grouped by operation, each group ascending. */
typedef struct hrun {
    size_t nops;  /* operations known when the run was added */
    size_t *off;  /* nops + 1 offsets into dur */
    int64_t *dur; /* durations in ns */
} hrun;

struct gp_history {
    gp_history_opts o;
    gp_strtab *names;
    gp_u64map opmap; /* (group << 32 | name id) -> op index */
    GP_VEC(uint64_t) opkey;
    GP_VEC(hrun) runs;
    gp_hist_op *ops;
    size_t nops;
};

void gp_history_opts_default(gp_history_opts *o)
{
    gp_compare_opts c;
    gp_compare_opts_default(&c);
    memset(o, 0, sizeof *o);
    o->alpha = c.alpha;
    o->threshold_pct = c.threshold_pct;
    o->group_mask = c.group_mask;
}

gp_history *gp_history_create(const gp_history_opts *o)
{
    gp_history *h = calloc(1, sizeof *h);
    if (!h) return NULL;
    h->o = *o;
    h->names = gp_strtab_create();
    if (!h->names) {
        free(h);
        return NULL;
    }
    return h;
}

static void free_ops(gp_history *h)
{
    for (size_t i = 0; i < h->nops; i++) {
        free(h->ops[i].pts);
        free(h->ops[i].steps);
    }
    free(h->ops);
    h->ops = NULL;
    h->nops = 0;
}

void gp_history_destroy(gp_history *h)
{
    if (!h) return;
    for (size_t i = 0; i < h->runs.n; i++) {
        free(h->runs.v[i].off);
        free(h->runs.v[i].dur);
    }
    GP_VEC_FREE(h->runs);
    GP_VEC_FREE(h->opkey);
    gp_u64map_free(&h->opmap);
    gp_strtab_destroy(h->names);
    free_ops(h);
    free(h);
}

size_t gp_history_runs(const gp_history *h)
{
    return h->runs.n;
}

const gp_hist_op *gp_history_ops(const gp_history *h, size_t *n)
{
    *n = h->nops;
    return h->ops;
}

const char *gp_history_name(const gp_history *h, uint32_t name)
{
    return gp_strtab_get(h->names, name);
}

int gp_history_add_run(gp_history *h, const gp_trace *t)
{
    uint32_t nstr = gp_strtab_count(t->strings);
    uint32_t *cname = malloc((size_t)(nstr ? nstr : 1) * sizeof *cname);
    uint8_t *cgroup = malloc(t->cats.n ? t->cats.n : 1);
    uint32_t *row_of = malloc((t->slices.n ? t->slices.n : 1) * sizeof *row_of);
    hrun r = {0};
    if (!cname || !cgroup || !row_of) goto fail;
    memset(cname, 0xff, (size_t)(nstr ? nstr : 1) * sizeof *cname);
    for (size_t i = 0; i < t->cats.n; i++) {
        gp_group g = gp_group_of_kind((gp_kind)t->cats.v[i].kind);
        cgroup[i] = (uint8_t)(g != GP_G__COUNT && (h->o.group_mask & (1u << g)) ? g : GP_G__COUNT);
    }
    for (size_t i = 0; i < t->slices.n; i++) {
        const gp_slice *s = &t->slices.v[i];
        unsigned g = cgroup[s->cat];
        row_of[i] = UINT32_MAX;
        if (g == GP_G__COUNT) continue;
        uint32_t cn = cname[s->name];
        if (cn == UINT32_MAX) {
            size_t len = gp_strtab_len(t->strings, s->name);
            const char *nm = gp_compare_op_name(gp_trace_s(t, s->name), &len);
            cn = gp_strtab_intern(h->names, nm, len);
            if (cn == UINT32_MAX) goto fail;
            cname[s->name] = cn;
        }
        uint64_t *slot = gp_u64map_slot(&h->opmap, (uint64_t)g << 32 | cn, UINT64_MAX);
        if (!slot) goto fail;
        if (*slot == UINT64_MAX) {
            *slot = h->opkey.n;
            if (GP_VEC_PUSH(h->opkey, (uint64_t)g << 32 | cn)) goto fail;
        }
        row_of[i] = (uint32_t)*slot;
    }
    /* bench figures: the samples of counter series named "bench:..." */
    uint32_t *srow = calloc(t->series.n ? t->series.n : 1, sizeof *srow);
    if (!srow) goto fail;
    for (size_t i = 0; i < t->series.n; i++) {
        const char *nm = gp_trace_s(t, t->series.v[i].name);
        srow[i] = UINT32_MAX;
        if (!gp_is_bench_series(nm)) continue;
        uint32_t cn = gp_strtab_intern(h->names, nm, strlen(nm));
        uint64_t key = (uint64_t)GP_G_BENCH << 32 | cn, *slot;
        if (cn == UINT32_MAX || !(slot = gp_u64map_slot(&h->opmap, key, UINT64_MAX))) {
            free(srow);
            goto fail;
        }
        if (*slot == UINT64_MAX) {
            *slot = h->opkey.n;
            if (GP_VEC_PUSH(h->opkey, key)) {
                free(srow);
                goto fail;
            }
        }
        srow[i] = (uint32_t)*slot;
    }
    r.nops = h->opkey.n;
    r.off = calloc(r.nops + 1, sizeof *r.off);
    if (!r.off) {
        free(srow);
        goto fail;
    }
    size_t total = 0;
    for (size_t i = 0; i < t->slices.n; i++)
        if (row_of[i] != UINT32_MAX) r.off[row_of[i] + 1]++, total++;
    for (size_t i = 0; i < t->counters.n; i++)
        if (srow[t->counters.v[i].series] != UINT32_MAX)
            r.off[srow[t->counters.v[i].series] + 1]++, total++;
    for (size_t k = 0; k < r.nops; k++) r.off[k + 1] += r.off[k];
    r.dur = malloc((total ? total : 1) * sizeof *r.dur);
    size_t *fill = malloc((r.nops + 1) * sizeof *fill);
    if (!r.dur || !fill) {
        free(fill);
        free(srow);
        goto fail;
    }
    memcpy(fill, r.off, (r.nops + 1) * sizeof *fill);
    for (size_t i = 0; i < t->slices.n; i++)
        if (row_of[i] != UINT32_MAX) r.dur[fill[row_of[i]]++] = t->slices.v[i].dur;
    for (size_t i = 0; i < t->counters.n; i++) {
        uint32_t op = srow[t->counters.v[i].series];
        if (op != UINT32_MAX) r.dur[fill[op]++] = llround(t->counters.v[i].value * METRIC_SCALE);
    }
    free(fill);
    free(srow);
    for (size_t k = 0; k < r.nops; k++) gp_sort_i64(r.dur + r.off[k], r.off[k + 1] - r.off[k]);
    if (GP_VEC_PUSH(h->runs, r)) goto fail;
    free(cname);
    free(cgroup);
    free(row_of);
    return 0;
fail:
    free(r.off);
    free(r.dur);
    free(cname);
    free(cgroup);
    free(row_of);
    return GP_ENOMEM;
}

/* Step search state for one operation. */
typedef struct seg_work {
    const size_t *present; /* indices of the runs with samples */
    const double *mean;    /* per-run mean of each present run */
    const double *msum;    /* prefix sums of mean */
    int64_t *buf;          /* room for one figure per present run */
    const gp_history_opts *o;
    GP_VEC(gp_hist_step) steps;
} seg_work;

/* Figures of a step at present index k between present runs [a, b), all
 * from the per-run means (each run one value, so that run-to-run variance is
 * what the test sees): mean of the run means before and after, change,
 * Mann-Whitney p on the run means (Bonferroni over the b - a - 1 possible
 * splits) and effect. */
static void restate(seg_work *w, size_t a, size_t k, size_t b, gp_hist_step *st)
{
    size_t n1 = k - a, n2 = b - k;
    /* ranked in 1/1024 ns, so that rounding makes no ties (which would turn
     * the exact test into the normal approximation) */
    for (size_t i = a; i < b; i++) w->buf[i - a] = llround(w->mean[i] * 1024);
    gp_sort_i64(w->buf, n1);
    gp_sort_i64(w->buf + n1, n2);
    gp_mwu mw;
    gp_mwu_test_sorted_i64(w->buf, n1, w->buf + n1, n2, GP_MWU_AUTO, &mw);
    st->at = w->present[k];
    st->seg_begin = w->present[a];
    st->seg_end = w->present[b - 1] + 1;
    st->before_ns = (w->msum[k] - w->msum[a]) / (double)n1;
    st->after_ns = (w->msum[b] - w->msum[k]) / (double)n2;
    st->change_pct =
        st->before_ns > 0 ? 100.0 * (st->after_ns - st->before_ns) / st->before_ns : NAN;
    st->p = fmin(1.0, mw.p * (double)(b - a - 1));
    st->effect = mw.effect;
}

/* The rule a step must pass (compare's): the change over the threshold, p
 * under alpha and the test's direction agreeing with the change. */
static int passes(const seg_work *w, const gp_hist_step *st)
{
    int agrees = st->after_ns > st->before_ns ? st->effect < 0.5 : st->effect > 0.5;
    return fabs(st->change_pct) >= w->o->threshold_pct && st->p < w->o->alpha && agrees;
}

static int search(seg_work *w, size_t a, size_t b)
{
    if (b - a < 2) return 0;
    /* the split maximising the between-segment sum of squares of run means */
    size_t best = 0;
    double best_ss = -1;
    for (size_t k = a + 1; k < b; k++) {
        double l = (w->msum[k] - w->msum[a]) / (double)(k - a);
        double r = (w->msum[b] - w->msum[k]) / (double)(b - k);
        double ss = (double)(k - a) * (double)(b - k) / (double)(b - a) * (l - r) * (l - r);
        if (ss > best_ss) {
            best_ss = ss;
            best = k;
        }
    }
    /* a candidate when the change reaches the threshold; whether it is a step
     * is decided between its neighbouring candidates (gp_history_steps) */
    gp_hist_step st;
    restate(w, a, best, b, &st);
    if (!(fabs(st.change_pct) >= w->o->threshold_pct)) return 0;
    if (GP_VEC_PUSH(w->steps, st)) return GP_ENOMEM;
    if (search(w, a, best) || search(w, best, b)) return GP_ENOMEM;
    return 0;
}

static int cmp_step(const void *a, const void *b)
{
    size_t x = ((const gp_hist_step *)a)->at, y = ((const gp_hist_step *)b)->at;
    return x < y ? -1 : x > y;
}

/* Present index of run r. */
static size_t present_index(const size_t *present, size_t r)
{
    size_t i = 0;
    while (present[i] != r) i++;
    return i;
}

int gp_history_steps(const int64_t *const *runs, const size_t *cnt, size_t nruns,
                     const gp_history_opts *o, gp_hist_step **steps, size_t *nsteps)
{
    *steps = NULL;
    *nsteps = 0;
    size_t *present = malloc((nruns ? nruns : 1) * sizeof *present);
    double *mean = malloc((nruns ? nruns : 1) * sizeof *mean);
    double *msum = malloc((nruns + 1) * sizeof *msum);
    size_t m = 0;
    int rc = GP_ENOMEM;
    seg_work w = {present, mean, msum, NULL, o, {0}};
    if (!present || !mean || !msum) goto done;
    msum[0] = 0;
    for (size_t r = 0; r < nruns; r++) {
        if (!cnt[r]) continue;
        double s = 0;
        for (size_t i = 0; i < cnt[r]; i++) s += (double)runs[r][i];
        present[m] = r;
        mean[m] = s / (double)cnt[r];
        msum[m + 1] = msum[m] + mean[m];
        m++;
    }
    w.buf = malloc((m ? m : 1) * sizeof *w.buf);
    if (!w.buf || search(&w, 0, m)) goto done;
    if (w.steps.n > 1) qsort(w.steps.v, w.steps.n, sizeof *w.steps.v, cmp_step);
    /* each candidate is described and tested between its neighbouring
     * candidates (the final segments); while some fail, the weakest (largest
     * p, then smallest change) is dropped and its neighbours are restated and
     * tested again, so that every step reported passes where it is shown */
    for (;;) {
        size_t worst = SIZE_MAX;
        for (size_t i = 0; i < w.steps.n; i++) {
            size_t a = 0, b = m, at = present_index(present, w.steps.v[i].at);
            if (i > 0) a = present_index(present, w.steps.v[i - 1].at);
            if (i + 1 < w.steps.n) b = present_index(present, w.steps.v[i + 1].at);
            restate(&w, a, at, b, &w.steps.v[i]);
            if (passes(&w, &w.steps.v[i])) continue;
            const gp_hist_step *s = &w.steps.v[i],
                               *x = worst == SIZE_MAX ? NULL : &w.steps.v[worst];
            if (!x || s->p > x->p || (s->p == x->p && fabs(s->change_pct) < fabs(x->change_pct)))
                worst = i;
        }
        if (worst == SIZE_MAX) break;
        memmove(w.steps.v + worst, w.steps.v + worst + 1,
                (w.steps.n - worst - 1) * sizeof *w.steps.v);
        w.steps.n--;
    }
    *steps = w.steps.v;
    *nsteps = w.steps.n;
    w.steps.v = NULL;
    rc = 0;
done:
    GP_VEC_FREE(w.steps);
    free(w.buf);
    free(present);
    free(mean);
    free(msum);
    return rc;
}

static int cmp_ops(const void *a, const void *b)
{
    const gp_hist_op *x = a, *y = b;
    if ((x->nsteps > 0) != (y->nsteps > 0)) return x->nsteps > 0 ? -1 : 1;
    if (x->score != y->score) return x->score > y->score ? -1 : 1;
    if (x->total_ns != y->total_ns) return x->total_ns > y->total_ns ? -1 : 1;
    return x->name < y->name ? -1 : x->name > y->name;
}

int gp_history_finish(gp_history *h)
{
    free_ops(h);
    size_t nr = h->runs.n, nops = h->opkey.n;
    const int64_t **rp = malloc((nr ? nr : 1) * sizeof *rp);
    size_t *cnt = malloc((nr ? nr : 1) * sizeof *cnt);
    h->ops = calloc(nops ? nops : 1, sizeof *h->ops);
    if (!rp || !cnt || !h->ops) goto fail;
    h->nops = nops;
    for (size_t op = 0; op < nops; op++) {
        gp_hist_op *x = &h->ops[op];
        x->group = (gp_group)(h->opkey.v[op] >> 32);
        x->name = (uint32_t)h->opkey.v[op];
        x->pts = calloc(nr ? nr : 1, sizeof *x->pts);
        if (!x->pts) goto fail;
        double first = NAN, last = NAN, lo = INFINITY, hi = -INFINITY;
        for (size_t r = 0; r < nr; r++) {
            const hrun *run = &h->runs.v[r];
            size_t n = op < run->nops ? run->off[op + 1] - run->off[op] : 0;
            const int64_t *v = n ? run->dur + run->off[op] : NULL;
            gp_hist_point *p = &x->pts[r];
            rp[r] = v;
            cnt[r] = n;
            p->count = n;
            if (!n) {
                p->total_ns = 0;
                p->mean_ns = p->p50_ns = p->p95_ns = NAN;
                continue;
            }
            double s = 0;
            for (size_t i = 0; i < n; i++) s += (double)v[i];
            p->total_ns = s;
            p->mean_ns = s / (double)n;
            p->p50_ns = gp_quantile_sorted_i64(v, n, 0.50);
            p->p95_ns = gp_quantile_sorted_i64(v, n, 0.95);
            x->total_ns += s;
            x->runs_present++;
            if (isnan(first)) first = p->mean_ns;
            last = p->mean_ns;
            lo = fmin(lo, p->mean_ns);
            hi = fmax(hi, p->mean_ns);
        }
        x->change_pct = x->spread_pct = NAN;
        if (x->runs_present >= 2) {
            if (first > 0) x->change_pct = 100.0 * (last - first) / first;
            if (lo > 0) x->spread_pct = 100.0 * (hi - lo) / lo;
        }
        if (gp_history_steps(rp, cnt, nr, &h->o, &x->steps, &x->nsteps)) goto fail;
        if (x->group == GP_G_BENCH) {
            const char *nm = gp_strtab_get(h->names, x->name);
            x->metric = 1;
            x->higher_better = gp_bench_key_higher_better(nm + 6) == 1;
            for (size_t r = 0; r < nr; r++) {
                gp_hist_point *p = &x->pts[r];
                p->total_ns /= METRIC_SCALE;
                p->mean_ns /= METRIC_SCALE;
                p->p50_ns /= METRIC_SCALE;
                p->p95_ns /= METRIC_SCALE;
            }
            x->total_ns /= METRIC_SCALE;
            for (size_t k = 0; k < x->nsteps; k++) {
                x->steps[k].before_ns /= METRIC_SCALE;
                x->steps[k].after_ns /= METRIC_SCALE;
            }
        }
        x->score = isnan(x->spread_pct) ? -1 : x->spread_pct;
        if (x->nsteps) {
            x->score = 0;
            for (size_t k = 0; k < x->nsteps; k++)
                x->score = fmax(x->score, fabs(x->steps[k].change_pct));
        }
    }
    qsort(h->ops, h->nops, sizeof *h->ops, cmp_ops);
    free(rp);
    free(cnt);
    return 0;
fail:
    free(rp);
    free(cnt);
    free_ops(h);
    return GP_ENOMEM;
}
