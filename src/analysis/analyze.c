/* analysis/analyze.c: runs the Holistic Trace Analysis family on the ranks
 * of a job (the computation behind `gpuprof analyze` and the server's
 * /api/profiler/hta). A pool of workers takes one file (rank) at a time:
 * import, view, analyses, timeline statistics; only the rank's results are
 * kept (gp_analyze_file), the trace and the view are freed at once.
 * gp_analyze_assemble then decides, over all the files, which are ranks,
 * their numbers and order, and the cross-rank tables (kernel types,
 * stragglers); `gpuprof merge` runs the same assembly on --shard parts. */
#include "analysis/analyze.h"
#include "core/clock.h"
#include "core/error.h"
#include "trace/load.h"
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static size_t ncores(void)
{
    long c = sysconf(_SC_NPROCESSORS_ONLN);
    return c > 0 ? (size_t)c : 1;
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

/* ---- one rank ---------------------------------------------------------------------------- */

/* The analyses of one view in NGROUPS independent groups (each writes its
 * own fields of gp_analyze_rank), so that one rank can keep every core busy. */
#define NGROUPS 3

typedef struct rank_job {
    const gp_hview *v;
    gp_analyze_rank *x;
    const gp_analyze_opts *o;
    atomic_int next;
    int failed[NGROUPS];
} rank_job;

static void analyze_group(rank_job *j, int g)
{
    const gp_hview *v = j->v;
    gp_analyze_rank *x = j->x;
    const gp_analyze_opts *o = j->o;
    int bad = 0;
    switch (g) {
    case 0:
        memset(&x->kt, 0, sizeof x->kt);
        bad = gp_temporal_compute(v, &x->tb) || gp_comm_comp_overlap(v, &x->ov_pct, &x->ov_valid) ||
              gp_ktype_time_add(v, &x->kt) ||
              gp_top_kernels(v, (int)o->top, o->ratio, &x->top, &x->ntop) ||
              gp_idle_breakdown(v, o->kernel_wait_ns, &x->idle, &x->nidle) ||
              gp_bandwidth_compute(v, &x->bw, &x->nbw);
        break;
    case 1:
        bad = gp_launch_compute(v, GP_LAUNCH_HTA, &o->lo, &x->ls[0]) ||
              gp_launch_compute(v, GP_LAUNCH_OTHER, &o->lo, &x->ls[1]);
        break;
    default:
        bad = gp_queue_length(v, o->queue_full, &x->queue, &x->nqueue) ||
              gp_steps_compute(v, &x->steps, &x->nsteps);
        break;
    }
    j->failed[g] = bad;
}

static void *group_main(void *arg)
{
    rank_job *j = arg;
    for (int g; (g = atomic_fetch_add(&j->next, 1)) < NGROUPS;) analyze_group(j, g);
    return NULL;
}

/* The names of the top kernels are copied out of the trace; the row's
 * string id then only says whether it is the "others" row. */
static int detach_names(gp_analyze_rank *x, const gp_trace *t)
{
    x->top_name = calloc(x->ntop ? x->ntop : 1, sizeof *x->top_name);
    if (!x->top_name) return GP_ENOMEM;
    for (size_t k = 0; k < x->ntop; k++) {
        if (x->top[k].name == GP_NO_INDEX) continue;
        if (!(x->top_name[k] = strdup(gp_trace_s(t, x->top[k].name)))) return GP_ENOMEM;
        x->top[k].name = 0;
    }
    return 0;
}

/* Analyzes a finished view into x with up to `threads` threads. */
static int analyze_view(const gp_hview *v, const gp_analyze_opts *o, int threads,
                        gp_analyze_rank *x)
{
    rank_job j = {.v = v, .x = x, .o = o};
    atomic_init(&j.next, 0);
    pthread_t th[NGROUPS];
    int started[NGROUPS] = {0};
    for (int k = 1; k < threads && k < NGROUPS; k++)
        started[k] = pthread_create(&th[k], NULL, group_main, &j) == 0;
    group_main(&j); /* the groups of threads that failed to start are left to this one */
    for (int k = 1; k < NGROUPS; k++)
        if (started[k]) pthread_join(th[k], NULL);
    x->step_filtered = v->step_filtered;
    if (j.failed[0] || j.failed[1] || j.failed[2]) return GP_ENOMEM;
    return detach_names(x, v->t);
}

typedef struct tl_job {
    const gp_trace *t;
    gp_timeline_stats tl;
    int failed;
    int64_t cpu_ns;
} tl_job;

static void *tl_main(void *arg)
{
    tl_job *j = arg;
    int64_t c0 = gp_clock_thread_cpu_ns();
    j->failed = gp_timeline_stats_compute(j->t, &j->tl) != 0;
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

/* Everything one trace contributes (see gp_analyze_file), with up to
 * `threads` threads: the timeline statistics (which read the trace, not the
 * view) beside the view and its analyses. */
static int analyze_trace(const gp_trace *t, int is_trace, int alone, const gp_analyze_opts *o,
                         int threads, gp_analyze_file *f)
{
    memset(f, 0, sizeof *f);
    f->is_trace = is_trace;
    f->has_events = t->meta.events_read != 0;
    f->rank_hint = rank_of(t);
    if (!is_trace) return 0;
    tl_job tj = {t, {0}, 0, 0};
    pthread_t tl_th;
    int tl_started = threads > 1 && pthread_create(&tl_th, NULL, tl_main, &tj) == 0;
    if (!tl_started) tl_main(&tj);
    gp_hta_opts ho = {o->compat};
    int rc = 0;
    /* not compat: one result; compat: the step filter's result when this
     * rank decides it (two or more names, or the job's only file), else
     * both (the assembly picks one) */
    int filters[2] = {0, 1}, nf = 1;
    for (int k = 0; k < 2 && !rc; k++) {
        if (k == 1 && nf < 2) break;
        int64_t c0 = gp_clock_thread_cpu_ns();
        gp_hview v;
        if (gp_hta_build(t, 0, &ho, &v)) {
            rc = GP_ENOMEM;
            break;
        }
        if (k == 0 && o->compat) {
            const char *nm[2];
            f->nstep = gp_hta_step_names(&v, nm, 2);
            for (size_t s = 0; s < f->nstep; s++)
                if (!(f->step[s] = strdup(nm[s]))) rc = GP_ENOMEM;
            if (f->nstep >= 2)
                filters[0] = 1;
            else if (!alone)
                nf = 2;
        }
        if (rc || gp_hta_finish(&v, filters[k])) {
            gp_hview_free(&v);
            rc = GP_ENOMEM;
            break;
        }
        int64_t c1 = gp_clock_thread_cpu_ns();
        gp_analyze_rank *x = &f->var[f->nvar++];
        if (!(x->source = strdup(gp_trace_s(t, t->meta.source)))) rc = GP_ENOMEM;
        if (!rc) rc = analyze_view(&v, o, threads, x);
        gp_hview_free(&v);
        f->cpu_ns[1] += c1 - c0;
        f->cpu_ns[2] += gp_clock_thread_cpu_ns() - c1;
    }
    if (tl_started) pthread_join(tl_th, NULL);
    f->cpu_ns[3] = tj.cpu_ns;
    if (tj.failed) rc = GP_ENOMEM;
    for (size_t k = 0; k < f->nvar; k++) f->var[k].tl = tj.tl;
    if (rc) gp_analyze_file_free(f);
    return rc;
}

/* ---- the worker pool ----------------------------------------------------------------------- */

typedef struct pool {
    char *const *paths;      /* files, or NULL with traces */
    gp_trace *const *traces; /* traces in memory, or NULL */
    size_t total;            /* files of the job */
    size_t first, end;
    int threads; /* per rank */
    const gp_analyze_opts *o;
    gp_analyze_accept_fn accept;
    void *ctx;
    gp_analyze_file *out;
    int *rcs;
    gp_err *errs;
    atomic_size_t next;
    atomic_int failed;
} pool;

/* The analyses never read a trace's flows or memory events; HTA's
 * preprocessing (hta_prep.c, has_fraction) only asks whether some timestamp
 * has a fraction of a microsecond. When none of theirs has, the answer does
 * not depend on them, so a trace loaded here (owned) drops them before its
 * views are built: a lower peak RSS for a large rank (issue 19). */
static void drop_unread(gp_trace *t)
{
    for (size_t i = 0; i < t->flows.n; i++)
        if (t->flows.v[i].ts % 1000) return;
    for (size_t i = 0; i < t->mem_events.n; i++)
        if (t->mem_events.v[i].ts % 1000) return;
    GP_VEC_FREE(t->flows);
    GP_VEC_FREE(t->mem_events);
}

static void *pool_main(void *arg)
{
    pool *p = arg;
    for (size_t i; !atomic_load(&p->failed) && (i = atomic_fetch_add(&p->next, 1)) < p->end;) {
        size_t k = i - p->first;
        int rc;
        if (p->traces) {
            rc = analyze_trace(p->traces[i], 1, p->total == 1, p->o, p->threads, &p->out[k]);
            if (rc) gp_err_set(&p->errs[k], rc, "out of memory during the analysis");
        } else {
            gp_trace *t = NULL;
            int64_t c0 = gp_clock_thread_cpu_ns();
            int single = p->end - p->first == 1;
            rc = gp_load_one(p->paths[i], single ? 0 : p->threads, 0, single ? -1 : 0, &t,
                             &p->errs[k]);
            int64_t load_ns = gp_clock_thread_cpu_ns() - c0;
            int is_trace = !rc && t->meta.has_trace_events;
            if (!rc && p->accept) rc = p->accept(t, p->paths[i], i, p->ctx, &is_trace, &p->errs[k]);
            if (!rc) {
                drop_unread(t);
                rc = analyze_trace(t, is_trace, p->total == 1, p->o, p->threads, &p->out[k]);
                if (rc) gp_err_set(&p->errs[k], rc, "out of memory during the analysis");
                p->out[k].cpu_ns[0] = load_ns;
            }
            gp_trace_destroy(t);
        }
        p->rcs[k] = rc;
        if (rc) atomic_store(&p->failed, 1);
    }
    return NULL;
}

static int run_pool(char *const *paths, gp_trace *const *traces, size_t total, size_t first,
                    size_t end, int workers, const gp_analyze_opts *o, gp_analyze_accept_fn accept,
                    void *ctx, gp_analyze_file *out, gp_err *err)
{
    size_t n = end > first ? end - first : 0, cores = ncores();
    size_t nw = workers > 0 ? (size_t)workers : cores;
    if (nw > n) nw = n ? n : 1;
    pool p = {.paths = paths,
              .traces = traces,
              .total = total,
              .first = first,
              .end = end,
              .threads = (int)(cores / nw > 0 ? cores / nw : 1),
              .o = o,
              .accept = accept,
              .ctx = ctx,
              .out = out,
              .rcs = gp_xcalloc(n ? n : 1, sizeof(int)),
              .errs = gp_xcalloc(n ? n : 1, sizeof(gp_err))};
    memset(out, 0, n * sizeof *out);
    atomic_init(&p.next, first);
    atomic_init(&p.failed, 0);
    pthread_t *th = gp_xcalloc(nw, sizeof *th);
    int *started = gp_xcalloc(nw, sizeof *started);
    for (size_t k = 1; k < nw; k++) started[k] = pthread_create(&th[k], NULL, pool_main, &p) == 0;
    pool_main(&p); /* the files of threads that failed to start are left to this one */
    for (size_t k = 1; k < nw; k++)
        if (started[k]) pthread_join(th[k], NULL);
    /* files are taken in order: every file before a failing one was taken,
     * so the first failure in path order is known */
    int rc = 0;
    for (size_t k = 0; k < n && !rc; k++)
        if (p.rcs[k]) {
            rc = p.rcs[k];
            *err = p.errs[k];
        }
    if (rc)
        for (size_t k = 0; k < n; k++) gp_analyze_file_free(&out[k]);
    free(th);
    free(started);
    free(p.rcs);
    free(p.errs);
    return rc;
}

int gp_analyze_files(char *const *paths, size_t n, size_t first, size_t end, int workers,
                     const gp_analyze_opts *o, gp_analyze_accept_fn accept, void *ctx,
                     gp_analyze_file *out, gp_err *err)
{
    return run_pool(paths, NULL, n, first, end, workers, o, accept, ctx, out, err);
}

/* ---- the job: assembly of the files' results ---------------------------------------------- */

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
            rk[k] = r->r[i].rank;
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

int gp_analyze_assemble(gp_analyze_file *files, size_t nin, const gp_analyze_opts *o,
                        gp_analyze_result *out, gp_err *err)
{
    memset(out, 0, sizeof *out);
    /* a folder may hold other JSON files (expected results, configs): a
     * file without an event array, and (of several) a trace without any
     * event, is no rank */
    size_t ntr = 0, n = 0;
    for (size_t i = 0; i < nin; i++) ntr += files[i].is_trace;
    if (!ntr) return gp_err_set(err, GP_ENOTFOUND, "no trace with a \"traceEvents\" array found");
    size_t *idx = gp_xcalloc(ntr, sizeof *idx);
    int *ranks = gp_xcalloc(ntr, sizeof *ranks);
    for (size_t i = 0; i < nin; i++)
        if (files[i].is_trace && (ntr == 1 || files[i].has_events)) {
            ranks[n] = files[i].rank_hint >= 0 ? files[i].rank_hint : (int)n;
            idx[n++] = i;
        }
    /* order by rank (HTA's dictionary of ranks is sorted) */
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && ranks[j] < ranks[j - 1]; j--) {
            int x = ranks[j];
            ranks[j] = ranks[j - 1];
            ranks[j - 1] = x;
            size_t y = idx[j];
            idx[j] = idx[j - 1];
            idx[j - 1] = y;
        }
    for (size_t i = 1; i < n; i++) /* sorted: a rank claimed twice is adjacent */
        if (ranks[i] == ranks[i - 1]) {
            if (!out->ndup) {
                out->dup_rank = ranks[i];
                out->dup_file[0] = idx[i - 1] < idx[i] ? idx[i - 1] : idx[i];
                out->dup_file[1] = idx[i - 1] < idx[i] ? idx[i] : idx[i - 1];
            }
            out->ndup++;
        }
    /* compat: HTA's step filter looks at the ProfilerStep names of all ranks */
    int filter = 0;
    if (o->compat) {
        const char *seen = NULL;
        for (size_t i = 0; i < n && !filter; i++) {
            const gp_analyze_file *f = &files[idx[i]];
            for (size_t s = 0; s < f->nstep && !filter; s++) {
                if (!seen)
                    seen = f->step[s];
                else if (strcmp(seen, f->step[s]))
                    filter = 1;
            }
        }
    }
    int rc = 0;
    out->r = gp_xcalloc(n ? n : 1, sizeof *out->r);
    for (size_t i = 0; i < n; i++) {
        gp_analyze_file *f = &files[idx[i]];
        size_t v = f->nvar == 2 ? (size_t)filter : 0;
        if (v >= f->nvar) { /* a part is checked when read: cannot happen */
            rc = gp_err_set(err, GP_EINVAL, "internal error: file without results");
            break;
        }
        out->r[out->n] = f->var[v];
        memset(&f->var[v], 0, sizeof f->var[v]);
        out->r[out->n++].rank = ranks[i];
    }
    for (size_t i = 0; i < out->n && !rc; i++)
        for (unsigned s = 0; s < GP_KSTATES; s++) {
            out->kt.ns[s] += out->r[i].kt.ns[s];
            out->kt.seen[s] |= out->r[i].kt.seen[s];
        }
    if (!rc && stragglers(out, o))
        rc = gp_err_set(err, GP_ENOMEM, "out of memory during the analysis");
    if (rc) gp_analyze_free(out);
    free(idx);
    free(ranks);
    return rc;
}

int gp_analyze_run(gp_trace *const *traces, size_t n, const gp_analyze_opts *o,
                   gp_analyze_result *out, gp_err *err)
{
    memset(out, 0, sizeof *out);
    gp_analyze_file *files = gp_xcalloc(n ? n : 1, sizeof *files);
    int rc = run_pool(NULL, traces, n, 0, n, 0, o, NULL, NULL, files, err);
    if (!rc) rc = gp_analyze_assemble(files, n, o, out, err);
    for (size_t i = 0; i < n; i++) gp_analyze_file_free(&files[i]);
    free(files);
    return rc;
}

void gp_analyze_rank_free(gp_analyze_rank *x)
{
    for (size_t k = 0; x->top_name && k < x->ntop; k++) free(x->top_name[k]);
    free(x->top_name);
    free(x->source);
    free(x->top);
    free(x->idle);
    free(x->queue);
    free(x->bw);
    free(x->steps);
    memset(x, 0, sizeof *x);
}

void gp_analyze_file_free(gp_analyze_file *f)
{
    for (size_t k = 0; k < 2; k++) {
        gp_analyze_rank_free(&f->var[k]);
        free(f->step[k]);
    }
    memset(f, 0, sizeof *f);
}

void gp_analyze_free(gp_analyze_result *r)
{
    for (size_t i = 0; i < r->n; i++) gp_analyze_rank_free(&r->r[i]);
    free(r->r);
    free(r->sg);
    memset(r, 0, sizeof *r);
}
