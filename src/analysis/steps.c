/* analysis/steps.c: per-ProfilerStep figures; GPU events are attributed to
 * steps through their launches (the view's correlation index). */
#include "analysis/steps.h"
#include <stdlib.h>
#include <string.h>

static int cmp_step(const void *a, const void *b)
{
    const gp_step_row *x = a, *y = b;
    if (x->ts != y->ts) return x->ts < y->ts ? -1 : 1;
    return (x->step > y->step) - (x->step < y->step);
}

/* running merge of one step's intervals (taken by start) */
typedef struct run {
    int64_t a, b, busy;
    int64_t first, last_end; /* earliest start and latest end seen */
    int open;
} run;

static void run_add(run *r, int64_t a, int64_t b)
{
    if (r->open && a <= r->b) {
        if (b > r->b) r->b = b;
        return;
    }
    if (r->open) r->busy += r->b - r->a;
    r->a = a;
    r->b = b;
    r->open = 1;
}

static int64_t run_end(const run *r)
{
    return r->busy + (r->open ? r->b - r->a : 0);
}

int gp_steps_compute(const gp_hview *v, gp_step_row **rows, size_t *nrows)
{
    *rows = NULL;
    *nrows = 0;
    const gp_trace *t = v->t;
    /* step annotations: decide per distinct name id (names are interned) */
    uint32_t nstr = gp_strtab_count(t->strings);
    int64_t *num = malloc((nstr ? nstr : 1) * sizeof *num); /* N, -1: not a step, -2: unknown */
    if (!num) return GP_ENOMEM;
    for (uint32_t i = 0; i < nstr; i++) num[i] = -2;
    size_t ns = 0;
    for (size_t i = 0; i < v->n; i++) {
        const gp_hev *e = &v->ev[i];
        /* the GPU-side copy of the annotation (gpu_user_annotation) is no step */
        if (e->stream != -1 || e->kind == GP_K_GPU_ANNOTATION) continue;
        uint32_t nm = gp_hev_name(v, e);
        if (num[nm] == -2) {
            const char *s = gp_trace_s(t, nm), *p = s + 13;
            num[nm] = -1;
            if (!strncmp(s, "ProfilerStep#", 13) && *p >= '0' && *p <= '9') {
                char *end;
                long long x = strtoll(p, &end, 10);
                if (!*end) num[nm] = x;
            }
        }
        if (num[nm] >= 0) ns++;
    }
    if (!ns) {
        free(num);
        return 0;
    }
    gp_step_row *st = calloc(ns, sizeof *st);
    run *ra = calloc(ns, sizeof *ra), *rc = calloc(ns, sizeof *rc);
    if (!st || !ra || !rc) {
        free(num);
        free(st);
        free(ra);
        free(rc);
        return GP_ENOMEM;
    }
    size_t k = 0;
    for (size_t i = 0; i < v->n; i++) {
        const gp_hev *e = &v->ev[i];
        if (e->stream != -1 || e->kind == GP_K_GPU_ANNOTATION) continue;
        int64_t step = num[gp_hev_name(v, e)];
        if (step < 0) continue;
        st[k].step = step;
        st[k].ts = e->ts;
        st[k].span_ns = e->dur;
        k++;
    }
    free(num);
    qsort(st, ns, sizeof *st, cmp_step);
    /* GPU events in start order, so each step's intervals merge as they come */
    for (size_t g = 0; g < v->ngpu; g++) {
        const gp_hev *e = &v->ev[v->gpu[g]];
        uint32_t h = v->peer[v->gpu[g]];
        int64_t at = h != GP_NO_INDEX ? v->ev[h].ts : e->ts;
        /* last step starting at or before `at` */
        size_t lo = 0, hi = ns;
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (st[mid].ts <= at)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (!lo || at >= st[lo - 1].ts + st[lo - 1].span_ns) continue;
        size_t s = lo - 1;
        gp_step_row *r = &st[s];
        int64_t a = e->ts, b = e->ts + e->dur;
        if (!r->gpu_events) {
            ra[s].first = a; /* events come by start: the first is the earliest */
            ra[s].last_end = b;
        }
        if (b > ra[s].last_end) ra[s].last_end = b;
        r->gpu_events++;
        if (e->kind == GP_K_KERNEL) r->kernels++;
        run_add(&ra[s], a, b);
        if (e->ktype == GP_KT_COMPUTATION) run_add(&rc[s], a, b);
    }
    for (size_t s = 0; s < ns; s++) {
        gp_step_row *r = &st[s];
        if (!r->gpu_events) continue;
        r->gpu_valid = 1;
        r->gpu_span_ns = ra[s].last_end - ra[s].first;
        r->gpu_busy_ns = run_end(&ra[s]);
        r->gpu_idle_ns = r->gpu_span_ns - r->gpu_busy_ns;
        r->compute_ns = run_end(&rc[s]);
    }
    free(ra);
    free(rc);
    *rows = st;
    *nrows = ns;
    return 0;
}
