/* analysis/analyze.c: runs the Holistic Trace Analysis family on the ranks
 * of a job (the computation behind `gpuprof analyze` and the server's
 * /api/profiler/hta): one thread per core over (rank, group of analyses)
 * tasks, the timeline statistics in a thread of their own. */
#include "analysis/analyze.h"
#include "core/clock.h"
#include "core/error.h"
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The analyses of one rank in NGROUPS independent groups (each writes its
 * own fields of gp_analyze_rank), so that even one rank keeps every core
 * busy; sets x->failed[g] on out of memory. */
#define NGROUPS 3

static void analyze_group(gp_analyze_rank *x, int g, const gp_analyze_opts *o)
{
    int bad = 0;
    switch (g) {
    case 0:
        memset(&x->kt, 0, sizeof x->kt);
        bad = gp_temporal_compute(&x->v, &x->tb) ||
              gp_comm_comp_overlap(&x->v, &x->ov_pct, &x->ov_valid) ||
              gp_ktype_time_add(&x->v, &x->kt) ||
              gp_top_kernels(&x->v, (int)o->top, o->ratio, &x->top, &x->ntop) ||
              gp_idle_breakdown(&x->v, o->kernel_wait_ns, &x->idle, &x->nidle) ||
              gp_bandwidth_compute(&x->v, &x->bw, &x->nbw);
        break;
    case 1:
        bad = gp_launch_compute(&x->v, GP_LAUNCH_HTA, &o->lo, &x->ls[0]) ||
              gp_launch_compute(&x->v, GP_LAUNCH_OTHER, &o->lo, &x->ls[1]);
        break;
    default:
        bad = gp_queue_length(&x->v, o->queue_full, &x->queue, &x->nqueue) ||
              gp_steps_compute(&x->v, &x->steps, &x->nsteps);
        break;
    }
    x->failed[g] = bad;
}

typedef struct worker {
    gp_analyze_rank *res;
    size_t ntasks; /* ranks x NGROUPS */
    atomic_size_t *next;
    const gp_analyze_opts *o;
} worker;

static void *worker_main(void *arg)
{
    worker *w = arg;
    for (size_t k; (k = atomic_fetch_add(w->next, 1)) < w->ntasks;)
        analyze_group(&w->res[k / NGROUPS], (int)(k % NGROUPS), w->o);
    return NULL;
}

/* Analyzes the ranks, one thread per core taking (rank, group) tasks. */
static void analyze_all(gp_analyze_rank *res, size_t n, const gp_analyze_opts *o)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    size_t nth = cores > 0 ? (size_t)cores : 1, ntasks = n * NGROUPS;
    if (nth > ntasks) nth = ntasks;
    atomic_size_t next;
    atomic_init(&next, 0);
    worker w = {res, ntasks, &next, o};
    if (nth <= 1) {
        worker_main(&w);
        return;
    }
    pthread_t *th = gp_xcalloc(nth, sizeof *th);
    int *started = gp_xcalloc(nth, sizeof *started);
    for (size_t k = 1; k < nth; k++)
        started[k] = pthread_create(&th[k], NULL, worker_main, &w) == 0;
    worker_main(&w); /* the tasks of threads that failed to start are left to this one */
    for (size_t k = 1; k < nth; k++)
        if (started[k]) pthread_join(th[k], NULL);
    free(th);
    free(started);
}

/* The timeline statistics read the traces, not the views: they run in a
 * thread of their own while the views are built and analyzed. */
typedef struct tl_job {
    gp_analyze_rank *res;
    gp_trace *const *traces;
    size_t n;
    int failed;
    int64_t ns, cpu_ns; /* wall and CPU time the thread took */
} tl_job;

static void *tl_main(void *arg)
{
    tl_job *j = arg;
    int64_t t0 = gp_clock_mono_ns(), c0 = gp_clock_thread_cpu_ns();
    for (size_t i = 0; i < j->n; i++)
        if (gp_timeline_stats_compute(j->traces[i], &j->res[i].tl)) j->failed = 1;
    j->ns = gp_clock_mono_ns() - t0;
    j->cpu_ns = gp_clock_thread_cpu_ns() - c0;
    return NULL;
}

/* rank: distributedInfo.rank, else a number after "rank" in the file name,
 * else -1 (the caller then uses the position). */
static int rank_of(const gp_trace *t)
{
    if (t->meta.rank != GP_NONE) return t->meta.rank;
    const char *src = gp_trace_s(t, t->meta.source), *base = strrchr(src, '/');
    base = base ? base + 1 : src;
    for (const char *p = strstr(base, "rank"); p; p = strstr(p + 1, "rank")) {
        const char *d = p + 4;
        while (*d == '-' || *d == '_' || *d == '.') d++;
        if (*d >= '0' && *d <= '9') return atoi(d);
    }
    return -1;
}

void gp_analyze_opts_default(gp_analyze_opts *o)
{
    memset(o, 0, sizeof *o);
    o->top = 10;
    o->ratio = 0.8;
    o->kernel_wait_ns = 30000;
    o->queue_full = 1024;
    o->straggler_z = 3.5;
    o->lo.runtime_cutoff_ns = 50000;
    o->lo.launch_delay_cutoff_ns = 100000;
}

/* stragglers: ranks with GPU work, scored against each other */
static int stragglers(gp_analyze_result *r, const gp_analyze_opts *o)
{
    size_t nsg = 0;
    for (size_t i = 0; i < r->n; i++) nsg += r->r[i].tb.valid;
    if (nsg < 2) return 0;
    int *rk = gp_xcalloc(nsg, sizeof *rk);
    int64_t *cm = gp_xcalloc(nsg, sizeof *cm), *id = gp_xcalloc(nsg, sizeof *id);
    r->sg = gp_xcalloc(nsg, sizeof *r->sg);
    size_t k = 0;
    for (size_t i = 0; i < r->n; i++)
        if (r->r[i].tb.valid) {
            rk[k] = r->r[i].v.rank;
            cm[k] = r->r[i].tb.compute_ns;
            id[k++] = r->r[i].tb.idle_ns;
        }
    int e = gp_stragglers(rk, cm, id, nsg, o->straggler_z, r->sg);
    free(rk);
    free(cm);
    free(id);
    if (!e) r->nsg = nsg;
    return e;
}

int gp_analyze_run(gp_trace *const *in, size_t nin, const gp_analyze_opts *o,
                   gp_analyze_result *out, gp_err *err)
{
    memset(out, 0, sizeof *out);
    int64_t t0 = gp_clock_mono_ns(), c0 = gp_clock_thread_cpu_ns();
    /* a folder may hold other JSON files (expected results, configs): a
     * file without any trace event is no rank */
    gp_trace **traces = gp_xcalloc(nin ? nin : 1, sizeof *traces);
    size_t n = 0;
    for (size_t i = 0; i < nin; i++)
        if (nin == 1 || in[i]->meta.events_read != 0) traces[n++] = in[i];
    /* order by rank (HTA's dictionary of ranks is sorted) */
    int *ranks = gp_xcalloc(n ? n : 1, sizeof *ranks);
    for (size_t i = 0; i < n; i++) {
        int rk = rank_of(traces[i]);
        ranks[i] = rk >= 0 ? rk : (int)i;
    }
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && ranks[j] < ranks[j - 1]; j--) {
            int x = ranks[j];
            ranks[j] = ranks[j - 1];
            ranks[j - 1] = x;
            gp_trace *y = traces[j];
            traces[j] = traces[j - 1];
            traces[j - 1] = y;
        }
    gp_hview *views = gp_xcalloc(n ? n : 1, sizeof *views);
    gp_analyze_rank *res = gp_xcalloc(n ? n : 1, sizeof *res);
    out->r = res;
    gp_hta_opts ho = {o->compat};
    int rc = 0;
    tl_job tj = {res, traces, n, 0, 0, 0};
    pthread_t tl_th;
    int tl_started =
        sysconf(_SC_NPROCESSORS_ONLN) > 1 && pthread_create(&tl_th, NULL, tl_main, &tj) == 0;
    if (!tl_started) tl_main(&tj);
    if (gp_hta_prepare(traces, ranks, n, &ho, views, err)) {
        if (tl_started) pthread_join(tl_th, NULL);
        for (size_t i = 0; i < n; i++) gp_hview_free(&views[i]);
        rc = GP_EINVAL;
        goto done;
    }
    int64_t t1 = gp_clock_mono_ns(), c1 = gp_clock_thread_cpu_ns();
    for (size_t i = 0; i < n; i++) res[i].v = views[i];
    out->n = n; /* the views are the result's from here on */
    analyze_all(res, n, o);
    int64_t t2 = gp_clock_mono_ns(), c2 = gp_clock_thread_cpu_ns();
    if (tl_started) pthread_join(tl_th, NULL);
    int64_t t3 = gp_clock_mono_ns(), c3 = gp_clock_thread_cpu_ns();
    out->phase_ns[0] = t1 - t0;
    out->phase_ns[1] = t2 - t1;
    out->phase_ns[2] = t3 - t2;
    out->phase_cpu_ns[0] = c1 - c0;
    out->phase_cpu_ns[1] = c2 - c1;
    out->phase_cpu_ns[2] = c3 - c2;
    out->tl_ns = tj.ns;
    out->tl_cpu_ns = tj.cpu_ns;
    for (size_t i = 0; i < n; i++) {
        if (res[i].failed[0] || res[i].failed[1] || res[i].failed[2] || tj.failed) {
            rc = GP_ENOMEM;
            goto done;
        }
        for (unsigned s = 0; s < GP_KSTATES; s++) {
            out->kt.ns[s] += res[i].kt.ns[s];
            out->kt.seen[s] |= res[i].kt.seen[s];
        }
    }
    if (stragglers(out, o)) rc = GP_ENOMEM;
done:
    if (rc == GP_ENOMEM) gp_err_set(err, GP_ENOMEM, "out of memory during the analysis");
    if (rc) gp_analyze_free(out);
    free(views);
    free(ranks);
    free(traces);
    return rc;
}

void gp_analyze_free(gp_analyze_result *r)
{
    for (size_t i = 0; i < r->n; i++) {
        gp_hview_free(&r->r[i].v);
        free(r->r[i].top);
        free(r->r[i].idle);
        free(r->r[i].queue);
        free(r->r[i].bw);
        free(r->r[i].steps);
    }
    free(r->r);
    free(r->sg);
    memset(r, 0, sizeof *r);
}
