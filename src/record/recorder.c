/* record/recorder.c: profiler lifetime, the lock-free per-thread recording
 * hot path (ranges, attributes, counters, observations) and the drain that
 * moves buffered events into the trace model. */
/* This file defines the exported out-of-line versions of the header's inline
 * hot-path wrappers (gp_range_begin, ...), so it sees them as declarations. */
#define GP_NO_INLINE 1
#include "record/recorder.h"
#include "core/clock.h"
#include "core/strtab.h"
#include <dlfcn.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#if defined(__linux__) && defined(__has_include)
#if __has_include(<linux/membarrier.h>)
#include <linux/membarrier.h>
#define GP_HAVE_MEMBARRIER 1
#endif
#endif

/* Process-wide facts: the TSC calibration (a property of the machine), the
 * profiler id counter and the per-thread cache of the last profiler used. */
static pthread_once_t tsc_once = PTHREAD_ONCE_INIT;
static int tsc_ok;
static double tsc_ns_per_tick;
static atomic_uint_fast64_t next_profiler_id = 1;
static atomic_uint_fast64_t next_thread_serial = 1;

typedef struct tl_cache {
    gp_profiler *p;
    uint64_t id;
    gp_tbuf *b;
    uint64_t serial;
} tl_cache;
static __thread tl_cache tl __attribute__((tls_model("initial-exec")));

static void live_add(gp_profiler *p);
static void live_remove(gp_profiler *p);
static int retired_make(gp_profiler *p);
static int drain_thread(gp_profiler *p, gp_tbuf *b, int max_chunks, int *rc);
static int retire_at(gp_profiler *p, gp_tbuf **pb, int rest);

/* membarrier(PRIVATE_EXPEDITED) is a full memory barrier on every running
 * thread of the process: gp_disable uses it so that the recording threads need
 * no fence of their own (see gp_disable). Registered once per process. */
static pthread_once_t mb_once = PTHREAD_ONCE_INIT;
static int mb_ok;

static void mb_register(void)
{
#ifdef GP_HAVE_MEMBARRIER
    mb_ok = syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
#endif
}

/* 1 when a barrier ran on all threads of the process, 0 when unavailable. */
static int mb_all_threads(void)
{
    pthread_once(&mb_once, mb_register);
#ifdef GP_HAVE_MEMBARRIER
    return mb_ok && syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0;
#else
    return 0;
#endif
}

static void tsc_calibrate(void)
{
#if defined(__x86_64__) || defined(__i386__)
    unsigned a, b, c, d;
    /* invariant TSC: CPUID.80000007H:EDX[8] */
    if (!__get_cpuid(0x80000007u, &a, &b, &c, &d) || !(d & (1u << 8))) return;
    int64_t m0, m1;
    uint64_t t0, t1;
    gp_clock_tsc_pair(&m0, &t0);
    do gp_clock_tsc_pair(&m1, &t1);
    while (m1 - m0 < 20000000);
    if (t1 <= t0) return;
    tsc_ns_per_tick = (double)(m1 - m0) / (double)(t1 - t0);
    tsc_ok = tsc_ns_per_tick > 0.01 && tsc_ns_per_tick < 100;
#endif
}

void gp_rec_seterr(gp_profiler *p, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->err, sizeof p->err, fmt, ap);
    va_end(ap);
}

int64_t gp_rec_host_ns(const gp_profiler *p)
{
    return gp_rec_ns(p, gp_rec_now(p));
}

/* why this thread's last gp_profiler_create failed (its profiler is gone) */
static __thread char create_err[256];

gp_profiler *gp_profiler_create(const gp_options *opts)
{
    create_err[0] = 0;
    gp_profiler *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    if (opts) p->opts = *opts;
    snprintf(p->name, sizeof p->name, "%s", opts && opts->name ? opts->name : "gpuprof");
    p->opts.name = NULL; /* not kept: the copy in p->name is used */
    pthread_once(&tsc_once, tsc_calibrate);
    p->use_tsc = tsc_ok && p->opts.clock == 0;
    p->ns_per_tick = tsc_ns_per_tick;
    p->id = atomic_fetch_add(&next_profiler_id, 1);
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->drain_cv, NULL);
    p->sink = p->opts.sink;
    if (p->sink < GP_SINK_AUTO || p->sink > GP_SINK_STREAM) p->sink = GP_SINK_AUTO;
    p->keep_max = p->opts.keep_max < 0    ? 0
                  : p->opts.keep_max == 0 ? (p->sink == GP_SINK_KEEP ? 0 : GP_KEEP_DEFAULT)
                                          : (uint64_t)p->opts.keep_max;
    if (p->sink == GP_SINK_STREAM) p->keep_max = 0;
    /* the default sink also caps what all threads keep together, so that a
     * program that keeps starting threads stays bounded (docs/api.md) */
    p->keep_total = p->sink == GP_SINK_AUTO ? p->keep_max * GP_KEEP_TOTAL_MUL : 0;
    p->samples_max = p->sink == GP_SINK_AUTO        ? p->keep_total
                     : p->sink == GP_SINK_AGGREGATE ? p->keep_max * GP_KEEP_TOTAL_MUL
                                                    : 0;
    atomic_init(&p->keep_pool, (int64_t)p->keep_total);
    p->tr = gp_trace_create();
    p->interned = gp_strtab_create();
    if (!p->tr || !p->interned) goto fail;
    p->cat_range = (uint16_t)gp_trace_category(p->tr, "gpuprof_range", 13);
    p->cat_cuda = (uint16_t)gp_trace_category(p->tr, "kernel", 6);
    p->cat_cl = (uint16_t)gp_trace_category(p->tr, "opencl", 6);
    p->cat_warmup = (uint16_t)gp_trace_category(p->tr, "gpuprof_warmup", 14);
    p->proc_track = gp_trace_track(p->tr, getpid(), 0, 0, 0);
    if (p->proc_track == GP_NO_INDEX) goto fail;
    p->tr->tracks.v[p->proc_track].name = gp_trace_str(p->tr, "counters", 8);
    p->tr->tracks.v[p->proc_track].process_name = gp_trace_str(p->tr, p->name, strlen(p->name));
    p->mem_series = UINT32_MAX;
    p->pid = getpid();
    p->mono0 = gp_clock_mono_ns();
#if defined(__x86_64__) || defined(__i386__)
    p->tsc0 = __builtin_ia32_rdtsc();
    if (p->use_tsc) gp_clock_tsc_pair(&p->mono0, &p->tsc0); /* model time 0 on both clocks */
#endif
    p->wall0 = gp_clock_wall_ns();
    p->tr->meta.has_base_time = 1;
    p->tr->meta.base_time_ns = p->wall0;
    if (p->sink == GP_SINK_STREAM && gp_stream_open_(p, p->opts.stream_path)) goto fail;
    p->opts.stream_path = NULL; /* not kept (the stream has its own copy) */
    atomic_init(&p->state, p->opts.start_disabled ? GP_STATE_OFF_ : GP_STATE_ON_);
    live_add(p);
    return p;
fail:
    snprintf(create_err, sizeof create_err, "%s", p->err); /* for default_create */
    if (p->tr) gp_trace_destroy(p->tr);
    if (p->interned) gp_strtab_destroy(p->interned);
    pthread_cond_destroy(&p->drain_cv);
    pthread_mutex_destroy(&p->mu);
    free(p);
    return NULL;
}

static void chunk_list_free(gp_chunk *c)
{
    while (c) {
        gp_chunk *cn = c->free_next;
        free(c);
        c = cn;
    }
}

/* Frees b and everything it holds. */
static void tbuf_free(gp_tbuf *b)
{
    gp_chunk *c = b->head;
    while (c) {
        gp_chunk *cn = atomic_load_explicit(&c->next, memory_order_acquire);
        free(c);
        c = cn;
    }
    chunk_list_free(b->spare);
    chunk_list_free(atomic_load_explicit(&b->freed, memory_order_acquire));
    uint32_t na = atomic_load_explicit(&b->nagg, memory_order_acquire);
    for (uint32_t i = 0; i < na; i++)
        free((void *)b->agg_blk[i / GP_AGG_BLOCK][i % GP_AGG_BLOCK].bk);
    for (uint32_t i = 0; i < GP_AGG_BLOCKS && b->agg_blk[i]; i++) free(b->agg_blk[i]);
    free(b->agg_idx);
    GP_VEC_FREE(b->stack);
    gp_rec_attrs_release(b->pattrs.v, 0, b->pattrs.n);
    GP_VEC_FREE(b->pattrs);
    free(b->fr);
    free(b);
}

void gp_rec_free_threads(gp_profiler *p)
{
    gp_tbuf *b = p->threads;
    while (b) {
        gp_tbuf *nx = b->next_all;
        tbuf_free(b);
        b = nx;
    }
    p->threads = NULL;
    p->retired = NULL;
}

void gp_profiler_destroy(gp_profiler *p)
{
    if (!p) return;
    gp_rec_drain_stop(p);
    live_remove(p);
    pthread_mutex_lock(&p->mu);
    gp_rec_drain(p);
    gp_stream_close_(p);
    gp_cuda_resolve_(p, 0);
    gp_cl_resolve_(p, 0);
    pthread_mutex_unlock(&p->mu);
    if (!p->opts.leak_report && p->mem.n > 0)
        gp_print_leaks(p, p->opts.report_stream ? p->opts.report_stream : stderr);
    gp_cuda_fini_(p);
    gp_cl_fini_(p);
    if (tl.p == p) memset(&tl, 0, sizeof tl);
    gp_rec_free_threads(p);
    for (size_t i = 0; i < p->obs.n; i++) GP_VEC_FREE(p->obs.v[i].v);
    GP_VEC_FREE(p->obs);
    for (size_t i = 0; i < p->mem.n; i++) {
        free(p->mem.v[i].name);
        free(p->mem.v[i].dtype);
        free(p->mem.v[i].shape);
    }
    GP_VEC_FREE(p->mem);
    for (size_t i = 0; i < p->sessions.n; i++) free(p->sessions.v[i]);
    GP_VEC_FREE(p->sessions);
    GP_VEC_FREE(p->sstat);
    GP_VEC_FREE(p->ext);
    gp_rec_attrs_release(p->attrs.v, 0, p->attrs.n);
    GP_VEC_FREE(p->attrs);
    gp_rec_entry_free(p);
    gp_rec_kagg_free(p);
    gp_u64map_free(&p->obs_of);
    gp_u64map_free(&p->series_of);
    gp_u64map_free(&p->func_name);
    gp_u64map_free(&p->mem_of);
    gp_strtab_destroy(p->interned);
    gp_trace_destroy(p->tr);
    pthread_cond_destroy(&p->drain_cv);
    pthread_mutex_destroy(&p->mu);
    free(p);
}

static pthread_once_t default_once = PTHREAD_ONCE_INIT;
static gp_profiler *default_profiler;

/* GPUPROF_LEAK_REPORT=1: at exit, the default profiler's buffers still
 * tracked are listed on stderr (gp_default is never destroyed, so it has no
 * report at destroy). */
static void default_leak_report(void)
{
    if (default_profiler && gp_mem_count(default_profiler) > 0)
        gp_print_leaks(default_profiler, stderr);
}

/* GPUPROF_SINK=stream: gp_default is never destroyed, so its stream is
 * finished at exit (the file completed, the store's run ended). */
static void default_stream_end(void)
{
    gp_profiler *p = default_profiler;
    if (!p) return;
    gp_rec_drain_stop(p);
    pthread_mutex_lock(&p->mu);
    gp_rec_drain(p);
    const char *path = getenv("GPUPROF_STREAM");
    /* nobody reads gp_last_error at exit: a stream that could not be
     * written whole is said in one line */
    if (gp_stream_close_(p)) {
        fprintf(stderr, "gpuprof: GPUPROF_STREAM=%s: %s", path ? path : "", p->err);
        if (p->stream_lost)
            fprintf(stderr, " (%llu events not written)", (unsigned long long)p->stream_lost);
        fputc('\n', stderr);
    }
    pthread_mutex_unlock(&p->mu);
}

static void default_create(void)
{
    gp_options o = {0};
    const char *c = getenv("GPUPROF_CLOCK");
    if (c && !strcmp(c, "monotonic")) o.clock = 1;
    const char *d = getenv("GPUPROF_DISABLE");
    if (d && *d && strcmp(d, "0") != 0) o.start_disabled = 1;
    o.leak_report = 1; /* never destroyed */
    /* A configuration that cannot be followed is said in one line on stderr
     * and the default sink records instead: a program is never left
     * without its profiler (a NULL here would crash its first range). */
    const char *sk = getenv("GPUPROF_SINK");
    const char *sp = getenv("GPUPROF_STREAM");
    if (sk && !strcmp(sk, "keep"))
        o.sink = GP_SINK_KEEP;
    else if (sk && !strcmp(sk, "aggregate"))
        o.sink = GP_SINK_AGGREGATE;
    else if (sk && !strcmp(sk, "stream") && sp && *sp) {
        o.sink = GP_SINK_STREAM;
        o.stream_path = sp;
    } else if (sk && !strcmp(sk, "stream"))
        fprintf(stderr, "gpuprof: GPUPROF_SINK=stream needs GPUPROF_STREAM=FILE (a trace file or "
                        "a run store): recording with the default sink\n");
    else if (sk && *sk && strcmp(sk, "auto") != 0)
        fprintf(stderr,
                "gpuprof: GPUPROF_SINK=%s is not keep, aggregate, stream or auto: "
                "recording with the default sink\n",
                sk);
    const char *km = getenv("GPUPROF_KEEP_MAX");
    if (km && *km) {
        char *end;
        errno = 0;
        long long v = strtoll(km, &end, 10);
        if (errno || *end || end == km)
            fprintf(stderr,
                    "gpuprof: GPUPROF_KEEP_MAX=%s is not an integer: the sink's default "
                    "cap applies\n",
                    km);
        else
            o.keep_max = v;
    }
    default_profiler = gp_profiler_create(&o);
    if (!default_profiler && o.sink == GP_SINK_STREAM) {
        if (create_err[0])
            fprintf(stderr, "gpuprof: GPUPROF_STREAM: %s: recording with the default sink\n",
                    create_err);
        else
            fprintf(stderr,
                    "gpuprof: GPUPROF_STREAM=%s cannot be written: recording with the "
                    "default sink\n",
                    sp);
        o.sink = GP_SINK_AUTO;
        o.stream_path = NULL;
        default_profiler = gp_profiler_create(&o);
    }
    if (default_profiler && o.sink == GP_SINK_STREAM) atexit(default_stream_end);
    const char *lr = getenv("GPUPROF_LEAK_REPORT");
    if (default_profiler && lr && *lr && strcmp(lr, "0") != 0) atexit(default_leak_report);
}

gp_profiler *gp_default(void)
{
    pthread_once(&default_once, default_create);
    return default_profiler;
}

void gp_enable(gp_profiler *p)
{
    atomic_store_explicit(&p->state, GP_STATE_ON_, memory_order_relaxed);
}

/* 1 when some live thread of p has an open level (caller holds p->mu; an
 * exited thread's levels never close). */
static int any_open(gp_profiler *p)
{
    for (gp_tbuf *b = p->threads; b; b = b->next_all)
        if (!b->dead && atomic_load_explicit(&b->depth, memory_order_relaxed) > 0) return 1;
    return 0;
}

/* Off with levels open, and no live thread has one open any more (or never
 * had, when turning off): fully off, so that the disabled calls return
 * inline again. Caller holds p->mu; not while off_sticky (no membarrier). */
static void settle_off(gp_profiler *p)
{
    int expect = GP_STATE_OFF_OPEN_;
    if (atomic_load_explicit(&p->state, memory_order_relaxed) == expect && !p->off_sticky &&
        !any_open(p))
        atomic_compare_exchange_strong(&p->state, &expect, GP_STATE_OFF_);
}

/* Turning off. The inline wrappers skip every call while the state is
 * GP_STATE_OFF_, so that state is allowed only while no thread has an open
 * level; otherwise the state is GP_STATE_OFF_OPEN_ (begins and ends go out of
 * line and keep nesting). The scan of the threads' depths races with a begin
 * that read "on" just before: that begin stores its depth, then re-reads the
 * state with no fence (recorder hot path). Dekker's argument needs a full
 * barrier on both sides; membarrier() gives the recording side's barrier from
 * here, so either the scan sees the new depth, or the begin sees the new state
 * and marks the profiler GP_STATE_OFF_OPEN_ itself (state_raced). Without
 * membarrier the state stays GP_STATE_OFF_OPEN_ until gp_enable once any
 * thread has recorded (correct, only the disabled calls go out of line). */
void gp_disable(gp_profiler *p)
{
    pthread_mutex_lock(&p->mu);
    if (atomic_load_explicit(&p->state, memory_order_relaxed) != GP_STATE_OFF_) {
        atomic_store_explicit(&p->state, GP_STATE_OFF_OPEN_, memory_order_seq_cst);
        int fenced = p->threads == NULL || mb_all_threads();
        p->off_sticky = !fenced;
        settle_off(p);
    }
    pthread_mutex_unlock(&p->mu);
}

/* A recorded begin saw the state change after storing its depth: make sure
 * the state is not GP_STATE_OFF_ while its level is open. */
__attribute__((noinline, cold)) static void state_raced(gp_profiler *p)
{
    pthread_mutex_lock(&p->mu);
    int expect = GP_STATE_OFF_;
    atomic_compare_exchange_strong(&p->state, &expect, GP_STATE_OFF_OPEN_);
    pthread_mutex_unlock(&p->mu);
}

/* The calling thread closed its last open level while off: when no thread
 * has one left, switch to GP_STATE_OFF_ (disabled calls inline again). */
__attribute__((noinline)) static void state_quiesce(gp_profiler *p)
{
    pthread_mutex_lock(&p->mu);
    settle_off(p);
    pthread_mutex_unlock(&p->mu);
}

int gp_enabled(const gp_profiler *p)
{
    return atomic_load_explicit(&((gp_profiler *)p)->state, memory_order_relaxed) == GP_STATE_ON_;
}

const char *gp_last_error(const gp_profiler *p)
{
    return p ? p->err : "";
}

const char *gp_intern(gp_profiler *p, const char *s)
{
    if (!s) return NULL;
    pthread_mutex_lock(&p->mu);
    uint32_t id = gp_strtab_intern(p->interned, s, strlen(s));
    const char *r = id == UINT32_MAX ? NULL : gp_strtab_get(p->interned, id);
    pthread_mutex_unlock(&p->mu);
    return r;
}

/* ---- live profilers and fork -------------------------------------------- */

/* Every live profiler, so that fork can hold their locks: a child must not
 * inherit a lock held by the drain thread (which does not exist there). */
static pthread_mutex_t live_mu = PTHREAD_MUTEX_INITIALIZER;
static gp_profiler *live_head;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

static void fork_prepare(void)
{
    pthread_mutex_lock(&live_mu);
    for (gp_profiler *q = live_head; q; q = q->next_live) {
        pthread_mutex_lock(&q->mu);
        gp_stream_fork_(q, 0);
    }
}

static void fork_parent(void)
{
    for (gp_profiler *q = live_head; q; q = q->next_live) {
        gp_stream_fork_(q, 1);
        pthread_mutex_unlock(&q->mu);
    }
    pthread_mutex_unlock(&live_mu);
}

/* The child has no drain thread: it is started again on the next chunk. */
static void fork_child(void)
{
    for (gp_profiler *q = live_head; q; q = q->next_live) {
        atomic_store_explicit(&q->drain_state, 0, memory_order_relaxed);
        /* the parent's drain thread may have been waiting on it: the child's
         * copy would make pthread_cond_destroy wait for it forever */
        pthread_cond_init(&q->drain_cv, NULL);
        /* the child's full backlog must reach chunk_next, which starts its drain */
        for (gp_tbuf *t = q->threads; t; t = t->next_all) {
            t->woke = 0;
            /* only the forking thread lives on in the child: the others'
             * buffers are retired once drained */
            if (t->tid && (uint64_t)t->tid != tl.serial) t->dead = q->any_dead = 1;
        }
        q->pid = getpid();
        settle_off(q); /* off with levels open only on the threads gone: off */
        gp_stream_fork_(q, 2);
        pthread_mutex_unlock(&q->mu);
    }
    pthread_mutex_unlock(&live_mu);
}

static void atfork_register(void)
{
    pthread_atfork(fork_prepare, fork_parent, fork_child);
}

static void live_add(gp_profiler *p)
{
    pthread_once(&atfork_once, atfork_register);
    pthread_mutex_lock(&live_mu);
    p->next_live = live_head;
    live_head = p;
    pthread_mutex_unlock(&live_mu);
}

static void live_remove(gp_profiler *p)
{
    pthread_mutex_lock(&live_mu);
    for (gp_profiler **q = &live_head; *q; q = &(*q)->next_live)
        if (*q == p) {
            *q = p->next_live;
            break;
        }
    pthread_mutex_unlock(&live_mu);
}

/* ---- drain thread ---------------------------------------------------------- */

/* How often the drain thread empties the thread buffers (ns): every 2 ms
 * while there is something to drain, backing off to 64 ms when idle (a
 * thread short of chunks wakes it at once). */
#define GP_DRAIN_PERIOD_NS     2000000
#define GP_DRAIN_PERIOD_MAX_NS 64000000

static int drain_pass(gp_profiler *p, int max_chunks);

static void *drain_main(void *arg)
{
    gp_profiler *p = arg;
    long period = GP_DRAIN_PERIOD_NS;
    pthread_mutex_lock(&p->mu);
    while (atomic_load_explicit(&p->drain_state, memory_order_relaxed) == 1) {
        uint64_t before = p->drained;
        if (drain_pass(p, GP_MAX_CHUNKS / 4) == 1) { /* more waiting: let others take the lock */
            pthread_mutex_unlock(&p->mu);
            sched_yield();
            pthread_mutex_lock(&p->mu);
            period = GP_DRAIN_PERIOD_NS;
            continue;
        }
        if (p->drained != before)
            period = GP_DRAIN_PERIOD_NS;
        else if (period < GP_DRAIN_PERIOD_MAX_NS)
            period *= 2;
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += period;
        if (ts.tv_nsec >= 1000000000) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000;
        }
        pthread_cond_timedwait(&p->drain_cv, &p->mu, &ts);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

void gp_rec_drain_start(gp_profiler *p)
{
    int st = atomic_load_explicit(&p->drain_state, memory_order_relaxed);
    if (st == 1 && p->drain_pid == getpid()) return;
    if (st == 2) return;
    /* signals go to the program's threads, not to this one */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    atomic_store_explicit(&p->drain_state, 1, memory_order_relaxed);
    p->drain_pid = getpid();
    if (pthread_create(&p->drain_thr, NULL, drain_main, p) != 0)
        atomic_store_explicit(&p->drain_state, 0, memory_order_relaxed);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
#ifdef __linux__
    if (atomic_load_explicit(&p->drain_state, memory_order_relaxed) == 1)
        pthread_setname_np(p->drain_thr, "gpuprof-drain");
#endif
}

void gp_rec_drain_wake(gp_profiler *p)
{
    pthread_cond_signal(&p->drain_cv);
}

void gp_rec_drain_stop(gp_profiler *p)
{
    pthread_mutex_lock(&p->mu);
    int running = atomic_load_explicit(&p->drain_state, memory_order_relaxed) == 1 &&
                  p->drain_pid == getpid();
    if (running) atomic_store_explicit(&p->drain_state, 2, memory_order_relaxed);
    pthread_cond_signal(&p->drain_cv);
    pthread_mutex_unlock(&p->mu);
    if (running) pthread_join(p->drain_thr, NULL);
    atomic_store_explicit(&p->drain_state, 0, memory_order_relaxed);
}

/* ---- thread buffers ---------------------------------------------------- */

static gp_chunk *chunk_new(void)
{
    gp_chunk *c = aligned_alloc(64, sizeof *c);
    if (!c) return NULL;
    atomic_init(&c->next, NULL);
    atomic_init(&c->n, 0);
    c->free_next = NULL;
    return c;
}

/* Gives the part of b's keep grant that it did not use back to p's pool. */
static void keep_return(gp_profiler *p, gp_tbuf *b)
{
    uint64_t lim = atomic_load_explicit(&b->keep_lim, memory_order_relaxed);
    uint64_t em = atomic_load_explicit(&b->emitted, memory_order_relaxed);
    if (!p->keep_total || lim == UINT64_MAX || em >= lim) return;
    atomic_fetch_add_explicit(&p->keep_pool, (int64_t)(lim - em), memory_order_relaxed);
    atomic_store_explicit(&b->keep_lim, em, memory_order_relaxed);
}

/* Thread exit: a key whose destructor marks the exiting thread's buffers in
 * every live profiler dead, so that the drain retires them once it has read
 * their events (retire_thread). */
static pthread_once_t exit_once = PTHREAD_ONCE_INIT;
static pthread_key_t exit_key;
static int exit_key_ok;
static __thread int exit_watched;

static void thread_exited(void *v)
{
    (void)v;
    uint64_t serial = tl.serial;
    if (serial) {
        pthread_mutex_lock(&live_mu);
        for (gp_profiler *q = live_head; q; q = q->next_live) {
            pthread_mutex_lock(&q->mu);
            /* the buffer goes now: a program that starts threads faster than
             * the drain passes would otherwise hold every exited one until
             * the next pass (measured: ~1,000 buffers, 100 MB) */
            if (!q->retired) retired_make(q);
            for (gp_tbuf **pb = &q->threads; *pb;) {
                gp_tbuf *b = *pb;
                if ((uint64_t)b->tid != serial) {
                    pb = &b->next_all;
                    continue;
                }
                b->dead = q->any_dead = 1;
                keep_return(q, b);
                int rc = 0, rest = drain_thread(q, b, GP_MAX_CHUNKS * 4, &rc);
                if (!retire_at(q, pb, rest)) pb = &b->next_all; /* the drain retires it later */
            }
            /* turned off while this thread had a level open, which it never
             * closes: the last open level may have gone with it */
            settle_off(q);
            pthread_mutex_unlock(&q->mu);
        }
        pthread_mutex_unlock(&live_mu);
    }
    /* a range recorded later on this thread (another key's destructor) goes
     * to a new buffer under a new serial, which is watched again */
    memset(&tl, 0, sizeof tl);
    exit_watched = 0;
}

static void exit_key_make(void)
{
    exit_key_ok = pthread_key_create(&exit_key, thread_exited) == 0;
}

static void thread_watch(void)
{
    if (exit_watched) return;
    pthread_once(&exit_once, exit_key_make);
    if (exit_key_ok && pthread_setspecific(exit_key, (void *)1) == 0) exit_watched = 1;
}

uint32_t gp_rec_thread_track(gp_profiler *p, gp_tbuf *b)
{
    if (b->track != GP_NO_INDEX) return b->track;
    if (!b->tid) { /* p->retired */
        b->track = gp_trace_track(p->tr, p->pid, -1, 0, 0);
        if (b->track != GP_NO_INDEX)
            p->tr->tracks.v[b->track].name = gp_trace_str(p->tr, "exited threads", 14);
    } else {
        b->track = gp_trace_track(p->tr, b->os_pid, b->os_tid, 0, 0);
        if (b->track != GP_NO_INDEX && b->tname[0])
            p->tr->tracks.v[b->track].name = gp_trace_str(p->tr, b->tname, strlen(b->tname));
    }
    return b->track;
}

/* Finds (create=1: creating) the calling thread's buffer in p and caches it. */
static gp_tbuf *tbuf_slow(gp_profiler *p, int create)
{
    if (!tl.serial) tl.serial = atomic_fetch_add(&next_thread_serial, 1);
    uint64_t serial = tl.serial;
    gp_tbuf *b;
    pthread_mutex_lock(&p->mu);
    for (b = p->threads; b; b = b->next_all)
        if ((uint64_t)b->tid == serial) break;
    if (!b && create) {
        b = calloc(1, sizeof *b);
        if (b) {
            b->cur = b->head = chunk_new();
            b->fcap = 64;
            b->fr = malloc(b->fcap * sizeof *b->fr);
            b->nchunks = 1;
        }
        if (b && (!b->cur || !b->fr)) {
            free(b->cur);
            free(b->fr);
            free(b);
            b = NULL;
        }
        if (b) {
            b->tid = (int64_t)serial;
            b->os_pid = getpid();
            b->os_tid = (int64_t)syscall(SYS_gettid);
            b->track = GP_NO_INDEX;
            pthread_getname_np(pthread_self(), b->tname, sizeof b->tname);
            /* KEEP: its cap (no pool); AUTO: grants from the pool; else none */
            atomic_init(&b->keep_lim, p->keep_max == 0 ? UINT64_MAX
                                      : p->keep_total  ? 0
                                                       : p->keep_max);
            b->next_all = p->threads;
            p->threads = b;
            gp_rec_drain_start(p);
        }
    }
    pthread_mutex_unlock(&p->mu);
    if (b) thread_watch();
    tl.p = p;
    tl.id = p->id;
    tl.b = b;
    return b;
}

static inline gp_tbuf *tbuf_get(gp_profiler *p)
{
    if (tl.p == p && tl.id == p->id && tl.b) return tl.b;
    return tbuf_slow(p, 1);
}

static inline gp_tbuf *tbuf_find(gp_profiler *p)
{
    if (tl.p == p && tl.id == p->id) return tl.b;
    return tbuf_slow(p, 0);
}

gp_tbuf *gp_rec_tbuf_find(gp_profiler *p)
{
    return tbuf_find(p);
}

/* A new chunk for b: a recycled one, else a new one while b has fewer than
 * GP_MAX_CHUNKS (always when force: an end must find room so that nesting
 * holds). NULL when none may be had. */
__attribute__((noinline)) static gp_chunk *chunk_next(gp_profiler *p, gp_tbuf *b, int force)
{
    gp_chunk *c = b->spare;
    /* a plain load first: while the backlog is full this runs on every begin */
    if (!c && atomic_load_explicit(&b->freed, memory_order_relaxed))
        c = atomic_exchange_explicit(&b->freed, NULL, memory_order_acquire);
    /* chunks taken beyond the cap by ends go back to the allocator */
    while (c && b->nchunks > GP_MAX_CHUNKS && p->sink != GP_SINK_KEEP) {
        gp_chunk *nx = c->free_next;
        free(c);
        b->nchunks--;
        c = nx;
    }
    if (c) {
        b->woke = 0;
        b->over = 0;
        b->spare = c->free_next;
        atomic_store_explicit(&c->n, 0, memory_order_relaxed);
        atomic_store_explicit(&c->next, NULL, memory_order_relaxed);
    } else {
        if (atomic_load_explicit(&p->drain_state, memory_order_relaxed) == 0) {
            /* a forked child has no drain thread yet */
            pthread_mutex_lock(&p->mu);
            gp_rec_drain_start(p);
            pthread_mutex_unlock(&p->mu);
        }
        if (b->nchunks >= GP_MAX_CHUNKS / 2 && !b->woke) {
            /* once until a recycled chunk comes back (a signal per begin
             * would be a system call per begin while the drain works) */
            b->woke = b->nchunks >= GP_MAX_CHUNKS;
            gp_rec_drain_wake(p);
        }
        if (b->nchunks >= GP_MAX_CHUNKS && !force) return NULL;
        c = chunk_new();
        if (!c) return NULL;
        b->nchunks++;
        if (b->nchunks > GP_MAX_CHUNKS && p->sink != GP_SINK_KEEP) b->over = 1;
    }
    return c;
}

/* b's current slot (the chunk has room). */
static inline gp_rev *slot_here(gp_tbuf *b)
{
    /* the line a few events ahead: a recycled chunk was last read by the
     * drain on another core, so its lines are fetched for writing early */
    __builtin_prefetch(&b->cur->ev[(b->pos + 16) & (GP_CHUNK_EVENTS - 1)], 1, 3);
    return &b->cur->ev[b->pos];
}

/* Returns the next free event slot of b (NULL when none: out of memory, or
 * the backlog is full and force is 0). */
static inline gp_rev *rec_slot(gp_profiler *p, gp_tbuf *b, int force)
{
    if (__builtin_expect(b->pos == GP_CHUNK_EVENTS, 0)) {
        /* backlog full, the drain already woken, nothing back yet: no call
         * (a begin then rolls over inline; in a loop that outruns the drain
         * this is most begins) */
        if (!force && b->woke && !b->spare &&
            !atomic_load_explicit(&b->freed, memory_order_relaxed))
            return NULL;
        gp_chunk *c = chunk_next(p, b, force);
        if (!c) return NULL;
        atomic_store_explicit(&b->cur->next, c, memory_order_release);
        b->cur = c;
        b->pos = 0;
    }
    return slot_here(b);
}

static inline void rec_publish(gp_tbuf *b)
{
    atomic_store_explicit(&b->cur->n, ++b->pos, memory_order_release);
}

/* Writes a begin event into e (b's slot) and publishes it; em: b's emitted
 * count before it. */
static inline void event_begin(gp_tbuf *b, gp_rev *e, uint64_t em, uint64_t t, uint32_t type,
                               const void *name, uint32_t a, uint64_t v)
{
    e->t = t;
    e->p = name;
    e->type = type;
    e->a = a;
    e->v = v;
    rec_publish(b);
    atomic_store_explicit(&b->emitted, em + 1, memory_order_relaxed);
}

/* Writes the end event of level f into e (b's slot) and publishes it. */
static inline void event_end(gp_tbuf *b, gp_rev *e, const gp_frame *f, uint64_t t)
{
    e->t = t;
    e->type = GP_EV_END;
    e->v = (uint64_t)f->child_ns; /* inline children, for the drain's self time */
    rec_publish(b);
}

static inline int depth_of(gp_tbuf *b)
{
    return atomic_load_explicit(&b->depth, memory_order_relaxed);
}

/* Only the owning thread writes its depth: a plain store, no atomic RMW. */
static inline void depth_set(gp_tbuf *b, int d)
{
    atomic_store_explicit(&b->depth, d, memory_order_relaxed);
}

/* Owner-only counters: relaxed load + store (no atomic RMW on the hot path). */
static inline void bump(_Atomic uint64_t *c, uint64_t by)
{
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + by,
                          memory_order_relaxed);
}

/* Makes room for open level d of b. 0 or GP_ENOMEM. */
static int frame_room(gp_tbuf *b, int d)
{
    if ((uint32_t)d < b->fcap) return 0;
    uint32_t nc = b->fcap * 2;
    while (nc <= (uint32_t)d) nc *= 2;
    gp_frame *nf = realloc(b->fr, nc * sizeof *nf);
    if (!nf) return GP_ENOMEM;
    b->fr = nf;
    b->fcap = nc;
    return 0;
}

/* ---- inline aggregates --------------------------------------------------- */

static inline uint64_t agg_hash(const void *key, uint32_t dev, uint8_t type)
{
    return gp_hash_u64((uint64_t)(uintptr_t)key ^ (uint64_t)dev << 48 ^ (uint64_t)type << 40);
}

/* Creates the entry of (key, dev, type) in b; NULL when out of memory or
 * when b already has GP_AGG_BLOCKS * GP_AGG_BLOCK names. */
__attribute__((noinline)) static gp_agg *agg_create(gp_tbuf *b, const void *key, uint32_t dev,
                                                    uint8_t type)
{
    uint32_t n = atomic_load_explicit(&b->nagg, memory_order_relaxed);
    if ((n + 1) * 2 > b->agg_cap) { /* grow the index (owner-only) */
        uint32_t nc = b->agg_cap ? b->agg_cap * 2 : 64;
        uint32_t *ni = calloc(nc, sizeof *ni);
        if (!ni) return NULL;
        for (uint32_t i = 0; i < n; i++) {
            gp_agg *e = &b->agg_blk[i / GP_AGG_BLOCK][i % GP_AGG_BLOCK];
            uint64_t h = agg_hash(e->key, e->dev, e->type) & (nc - 1);
            while (ni[h]) h = (h + 1) & (nc - 1);
            ni[h] = i + 1;
        }
        free(b->agg_idx);
        b->agg_idx = ni;
        b->agg_cap = nc;
    }
    uint32_t blk = n / GP_AGG_BLOCK;
    if (blk >= GP_AGG_BLOCKS) return NULL;
    if (!b->agg_blk[blk] && !(b->agg_blk[blk] = calloc(GP_AGG_BLOCK, sizeof(gp_agg)))) return NULL;
    gp_agg *e = &b->agg_blk[blk][n % GP_AGG_BLOCK];
    _Atomic uint64_t *bk = calloc(GP_SKETCH_BUCKETS, sizeof *bk);
    if (!bk) return NULL;
    e->key = key;
    e->dev = dev;
    e->type = type;
    atomic_init(&e->min_ns, INT64_MAX);
    atomic_init(&e->max_ns, INT64_MIN);
    atomic_init(&e->bytes, -1);
    e->bk = bk; /* published by nagg (release) */
    uint64_t h = agg_hash(key, dev, type) & (b->agg_cap - 1);
    while (b->agg_idx[h]) h = (h + 1) & (b->agg_cap - 1);
    b->agg_idx[h] = n + 1;
    atomic_store_explicit(&b->nagg, n + 1, memory_order_release);
    return e;
}

/* The existing entry of (key, dev, type) in b's index, or NULL (no call:
 * gp_range_end_slow_'s fast path uses it). */
static inline gp_agg *agg_probe(gp_tbuf *b, const void *key, uint32_t dev, uint8_t type)
{
    if (!b->agg_cap) return NULL;
    uint64_t h = agg_hash(key, dev, type) & (b->agg_cap - 1);
    for (uint32_t ix; (ix = b->agg_idx[h]) != 0; h = (h + 1) & (b->agg_cap - 1)) {
        gp_agg *e = &b->agg_blk[(ix - 1) / GP_AGG_BLOCK][(ix - 1) % GP_AGG_BLOCK];
        if (e->key == key && e->dev == dev && e->type == type) return e;
    }
    return NULL;
}

static inline int agg_is(const gp_agg *e, const void *key, uint32_t dev, uint8_t type)
{
    return e && e->key == key && e->dev == dev && e->type == type;
}

/* The cached entry of (key, dev, type) in b, or NULL (no call). */
static inline gp_agg *agg_cached(gp_tbuf *b, const void *key, uint32_t dev, uint8_t type)
{
    gp_agg **w = b->agg_cache[gp_rec_agg_set(key)];
    if (__builtin_expect(agg_is(w[0], key, dev, type), 1)) return w[0];
    if (agg_is(w[1], key, dev, type)) return w[1];
    return NULL;
}

static inline gp_agg *agg_find(gp_tbuf *b, const void *key, uint32_t dev, uint8_t type)
{
    gp_agg *e = agg_cached(b, key, dev, type);
    if (__builtin_expect(e != NULL, 1)) return e;
    e = agg_probe(b, key, dev, type);
    if (!e) e = agg_create(b, key, dev, type);
    if (e) { /* the set's older entry goes */
        gp_agg **w = b->agg_cache[gp_rec_agg_set(key)];
        w[1] = w[0];
        w[0] = e;
    }
    return e;
}

/* Counts e's GP_AGG_PEND pending durations in its sketch. */
__attribute__((noinline)) static void agg_flush(gp_agg *e)
{
    _Atomic uint64_t *bk = e->bk;
    for (unsigned i = 0; i < GP_AGG_PEND; i++)
        bump(&bk[gp_sketch_index(atomic_load_explicit(&e->pend[i], memory_order_relaxed))], 1);
    atomic_store_explicit(&e->npend, 0, memory_order_relaxed);
}

/* Adds e's statistics to r, an entry of the same key (caller holds p->mu;
 * r belongs to p->retired, which no thread records into). */
static void agg_fold(gp_agg *r, const gp_agg *e)
{
#define LD(x)    atomic_load_explicit(&(x), memory_order_relaxed)
#define ST(x, v) atomic_store_explicit(&(x), (v), memory_order_relaxed)
    uint64_t c = LD(e->count), rc = LD(r->count);
    if (!c) return;
    if (!rc || LD(e->first_t) < LD(r->first_t)) ST(r->first_t, LD(e->first_t));
    if (!rc || LD(e->last_t) > LD(r->last_t)) ST(r->last_t, LD(e->last_t));
    ST(r->count, rc + c);
    ST(r->total_ns, LD(r->total_ns) + LD(e->total_ns));
    ST(r->self_ns, LD(r->self_ns) + LD(e->self_ns));
    if (LD(e->min_ns) < LD(r->min_ns)) ST(r->min_ns, LD(e->min_ns));
    if (LD(e->max_ns) > LD(r->max_ns)) ST(r->max_ns, LD(e->max_ns));
    unsigned __int128 sq = ((unsigned __int128)LD(r->sq_hi) << 64 | LD(r->sq_lo)) +
                           ((unsigned __int128)LD(e->sq_hi) << 64 | LD(e->sq_lo));
    ST(r->sq_lo, (uint64_t)sq);
    ST(r->sq_hi, (uint64_t)(sq >> 64));
    if (LD(e->bytes) >= 0) ST(r->bytes, (LD(r->bytes) < 0 ? 0 : LD(r->bytes)) + LD(e->bytes));
    for (unsigned k = 0; k < GP_SKETCH_BUCKETS; k++)
        if (LD(e->bk[k])) ST(r->bk[k], LD(r->bk[k]) + LD(e->bk[k]));
    uint32_t np = LD(e->npend);
    for (uint32_t k = 0; k < np && k < GP_AGG_PEND; k++) {
        unsigned ix = gp_sketch_index(LD(e->pend[k]));
        ST(r->bk[ix], LD(r->bk[ix]) + 1);
    }
#undef LD
#undef ST
}

/* Makes p->retired, first in p->threads (caller holds p->mu, outside any
 * walk of the list). 0 or GP_ENOMEM. */
static int retired_make(gp_profiler *p)
{
    if (p->retired) return 0;
    gp_tbuf *r = calloc(1, sizeof *r);
    if (!r) return GP_ENOMEM;
    r->track = GP_NO_INDEX;
    atomic_init(&r->keep_lim, UINT64_MAX);
    r->next_all = p->threads;
    p->threads = r;
    p->retired = r;
    return 0;
}

/* Folds the exited thread b (its events all drained) into p->retired: its
 * inline aggregates by (name, device, kind), its counts, its inline metric
 * entries, and its unused keep grant back to the pool (caller holds p->mu).
 * 0, or GP_ENOMEM with nothing changed but empty entries in p->retired. */
static int retire_thread(gp_profiler *p, gp_tbuf *b)
{
    gp_tbuf *r = p->retired;
    if (!r) return GP_ENOMEM;
    uint32_t na = atomic_load_explicit(&b->nagg, memory_order_acquire);
    for (int fold = 0; fold < 2; fold++)
        for (uint32_t i = 0; i < na; i++) {
            const gp_agg *e = &b->agg_blk[i / GP_AGG_BLOCK][i % GP_AGG_BLOCK];
            if (!atomic_load_explicit(&e->count, memory_order_relaxed)) continue;
            gp_agg *d = agg_find(r, e->key, e->dev, e->type);
            if (!d) return GP_ENOMEM; /* only in the first pass: the second finds them */
            if (fold) agg_fold(d, e);
        }
    bump(&r->rolled, atomic_load_explicit(&b->rolled, memory_order_relaxed));
    bump(&r->dropped, atomic_load_explicit(&b->dropped, memory_order_relaxed));
    keep_return(p, b); /* a forked child's other threads (the exit key did the rest) */
    gp_rec_entry_retire(p, b, r);
    p->retired_threads++;
    return 0;
}

/* Adds one range of duration dur (self: self, raw end time t) to e. Returns
 * 1 when e's pending durations are full (the caller then calls agg_flush;
 * npend is stored as GP_AGG_PEND until it does). */
static inline int agg_update(gp_agg *e, const gp_frame *f, int64_t dur, int64_t self, uint64_t t)
{
    if (__builtin_expect(atomic_load_explicit(&e->count, memory_order_relaxed) == 0, 0))
        atomic_store_explicit(&e->first_t, f->t0, memory_order_relaxed);
    atomic_store_explicit(&e->last_t, t, memory_order_relaxed);
    uint64_t c = atomic_load_explicit(&e->count, memory_order_relaxed);
    atomic_store_explicit(&e->count, c + 1, memory_order_relaxed);
    atomic_store_explicit(&e->total_ns,
                          atomic_load_explicit(&e->total_ns, memory_order_relaxed) + dur,
                          memory_order_relaxed);
    atomic_store_explicit(&e->self_ns,
                          atomic_load_explicit(&e->self_ns, memory_order_relaxed) + self,
                          memory_order_relaxed);
    if (dur < atomic_load_explicit(&e->min_ns, memory_order_relaxed))
        atomic_store_explicit(&e->min_ns, dur, memory_order_relaxed);
    if (dur > atomic_load_explicit(&e->max_ns, memory_order_relaxed))
        atomic_store_explicit(&e->max_ns, dur, memory_order_relaxed);
    unsigned __int128 sq = (unsigned __int128)atomic_load_explicit(&e->sq_hi, memory_order_relaxed)
                               << 64 |
                           atomic_load_explicit(&e->sq_lo, memory_order_relaxed);
    sq += (unsigned __int128)((uint64_t)dur * (unsigned __int128)(uint64_t)dur);
    atomic_store_explicit(&e->sq_lo, (uint64_t)sq, memory_order_relaxed);
    atomic_store_explicit(&e->sq_hi, (uint64_t)(sq >> 64), memory_order_relaxed);
    if (f->bytes >= 0) {
        int64_t bb = atomic_load_explicit(&e->bytes, memory_order_relaxed);
        atomic_store_explicit(&e->bytes, (bb < 0 ? 0 : bb) + f->bytes, memory_order_relaxed);
    }
    uint32_t k = atomic_load_explicit(&e->npend, memory_order_relaxed);
    atomic_store_explicit(&e->pend[k], dur, memory_order_relaxed);
    atomic_store_explicit(&e->npend, k + 1, memory_order_relaxed);
    return k + 1 == GP_AGG_PEND;
}

/* Adds one range of duration dur (self: self) to b's inline aggregate. */
static inline void agg_add(gp_tbuf *b, const gp_frame *f, int64_t dur, int64_t self, uint64_t t)
{
    gp_agg *e = agg_find(b, f->name, f->dev, f->type);
    if (__builtin_expect(!e, 0)) {
        bump(&b->dropped, 1);
        return;
    }
    bump(&b->rolled, 1);
    if (__builtin_expect(agg_update(e, f, dur, self, t), 0)) agg_flush(e);
}

/* ---- begin / end ----------------------------------------------------------- */

/* b has recorded keep_lim ranges as events: raises keep_lim by a grant from
 * p's pool (GP_SINK_AUTO) up to the per-thread cap. 0 when none is left
 * (keep_dry then spares later begins the call, until a reset). */
__attribute__((noinline)) static int keep_more(gp_profiler *p, gp_tbuf *b)
{
    uint64_t lim = atomic_load_explicit(&b->keep_lim, memory_order_relaxed);
    if (!p->keep_total || lim >= p->keep_max) {
        atomic_store_explicit(&b->keep_dry, 1, memory_order_relaxed);
        return 0;
    }
    int64_t want = (int64_t)(p->keep_max - lim < GP_KEEP_GRANT ? p->keep_max - lim : GP_KEEP_GRANT);
    int64_t left = atomic_load_explicit(&p->keep_pool, memory_order_relaxed), got;
    do {
        got = left < want ? left : want;
        if (got <= 0) {
            atomic_store_explicit(&b->keep_dry, 1, memory_order_relaxed);
            return 0;
        }
    } while (!atomic_compare_exchange_weak_explicit(&p->keep_pool, &left, left - got,
                                                    memory_order_relaxed, memory_order_relaxed));
    /* emitted may be below lim after a reset: the grant counts from it */
    uint64_t em = atomic_load_explicit(&b->emitted, memory_order_relaxed);
    atomic_store_explicit(&b->keep_lim, (em > lim ? em : lim) + (uint64_t)got,
                          memory_order_relaxed);
    return 1;
}

/* Opens level f (its mode is set by the caller). */
static inline void frame_open(gp_frame *f, uint32_t type, const void *name, uint32_t a, uint64_t v)
{
    f->name = name;
    f->child_ns = 0;
    f->dev = a;
    f->type = (uint8_t)type;
    f->bytes = type == GP_EV_BEGIN_EX && (int64_t)v >= 0 ? (int64_t)v : -1;
}

/* Duration in ns of inline level f ended at raw time t (tsc: p's clock is
 * the TSC), at least 0. */
static inline int64_t frame_dur(const gp_profiler *p, const gp_frame *f, uint64_t t, int tsc)
{
    int64_t dur =
        tsc ? (int64_t)((double)(int64_t)(t - f->t0) * p->ns_per_tick) : (int64_t)(t - f->t0);
    return dur < 0 ? 0 : dur;
}

/* Level d (recorded as events) ended at raw time t inside level d - 1,
 * which is aggregated inline (a begin that found the backlog full, whose
 * child found a chunk back): the parent's self time excludes the child's
 * duration as it would an inline child's. */
__attribute__((noinline)) static void event_child_end(gp_profiler *p, gp_tbuf *b, int d, uint64_t t)
{
    /* the duration the drain gives the child's slice (ns of each end) */
    int64_t dur = gp_rec_ns(p, t) - gp_rec_ns(p, b->fr[d].t0);
    b->fr[d - 1].child_ns += dur < 0 ? 0 : dur;
}

/* Records a begin on the calling thread; returns 1 when a level was opened
 * (recorded as an event, aggregated inline, or counted when out of memory so
 * that nesting holds). */
static inline int rec_begin(gp_profiler *p, uint32_t type, const void *name, uint32_t a, uint64_t v)
{
    gp_tbuf *b = tbuf_get(p);
    if (!b) return 0;
    int d = depth_of(b);
    if (__builtin_expect((uint32_t)d >= b->fcap, 0) && frame_room(b, d)) return 0;
    gp_frame *f = &b->fr[d];
    frame_open(f, type, name, a, v);
    uint64_t em = atomic_load_explicit(&b->emitted, memory_order_relaxed);
    gp_rev *e = NULL;
    /* over: a begin records again once chunks are back (it then fills the
     * extra chunk, and the next chunk_next gives the extra one back) */
    if (p->sink != GP_SINK_AGGREGATE &&
        (em < atomic_load_explicit(&b->keep_lim, memory_order_relaxed) ||
         (!atomic_load_explicit(&b->keep_dry, memory_order_relaxed) && keep_more(p, b))) &&
        (!b->over || atomic_load_explicit(&b->freed, memory_order_relaxed)))
        e = rec_slot(p, b, p->sink == GP_SINK_KEEP); /* keep: the buffer grows */
    uint64_t t = gp_rec_now(p);
    if (e) {
        event_begin(b, e, em, t, type, name, a, v);
        f->t0 = t; /* for an inline parent's child time (event_child_end) */
        f->mode = GP_FR_EVENT;
    } else if (p->sink == GP_SINK_KEEP && p->keep_max && em >= p->keep_max) {
        bump(&b->dropped, 1); /* keep: beyond the cap, counted */
        f->mode = GP_FR_SKIP;
    } else {
        f->t0 = t;
        f->mode = GP_FR_INLINE;
    }
    depth_set(b, d + 1);
    /* re-read the state after publishing the depth (see gp_disable) */
    atomic_signal_fence(memory_order_seq_cst);
    if (__builtin_expect(atomic_load_explicit(&p->state, memory_order_relaxed) != GP_STATE_ON_, 0))
        state_raced(p);
    return 1;
}

/* A begin while off: counted as an open level when this thread has one open
 * (so that its end closes it, not the outer range); else nothing. */
static int count_begin(gp_profiler *p)
{
    gp_tbuf *b = tbuf_find(p);
    if (!b) return 0;
    int d = depth_of(b);
    if (d == 0 || frame_room(b, d)) return 0;
    b->fr[d].mode = GP_FR_SKIP;
    depth_set(b, d + 1);
    return 1;
}

static inline int begin_any(gp_profiler *p, uint32_t type, const void *name, uint32_t a, uint64_t v)
{
    int st = atomic_load_explicit(&p->state, memory_order_relaxed);
    if (__builtin_expect(st == GP_STATE_ON_, 1)) return rec_begin(p, type, name, a, v);
    return st == GP_STATE_OFF_OPEN_ ? count_begin(p) : 0;
}

/* The TSC, for the fast paths below, which run only when p->use_tsc (never
 * set where there is no TSC): read directly, so that no clock_gettime call
 * path is compiled into them. */
static inline uint64_t tsc_now(void)
{
#if defined(__x86_64__) || defined(__i386__)
    return __builtin_ia32_rdtsc();
#else
    return 0;
#endif
}

__attribute__((noinline)) static void begin_full(gp_profiler *p, uint32_t type, const char *name,
                                                 uint32_t a, uint64_t v)
{
    begin_any(p, type, name, a, v);
}

/* The calling thread's cached buffer in p when the fast paths below apply
 * (recording on, the TSC clock), else NULL. */
static inline gp_tbuf *fast_tbuf(gp_profiler *p)
{
    gp_tbuf *b = tl.b;
    if (__builtin_expect(atomic_load_explicit(&p->state, memory_order_relaxed) != GP_STATE_ON_ ||
                             tl.p != p || tl.id != p->id || !p->use_tsc,
                         0))
        return NULL;
    return b;
}

/* gp_range_begin's common cases, with no call but tail calls (so that this
 * path saves and restores no registers): recording on, the TSC clock, the
 * thread's buffer cached, and the level either aggregated inline (aggregate
 * sink, or the default sink past its keep budget) or recorded as an event
 * into room the current chunk has. Anything else is begin_full, which is
 * rec_begin from the start (nothing here has been published). */
static inline void begin_fast(gp_profiler *p, uint32_t type, const char *name, uint32_t a,
                              uint64_t v)
{
    gp_tbuf *b = fast_tbuf(p);
    if (__builtin_expect(!b, 0)) return begin_full(p, type, name, a, v);
    int d = depth_of(b);
    if (__builtin_expect((uint32_t)d >= b->fcap, 0)) return begin_full(p, type, name, a, v);
    gp_frame *f = &b->fr[d];
    uint64_t em = atomic_load_explicit(&b->emitted, memory_order_relaxed);
    uint64_t lim = atomic_load_explicit(&b->keep_lim, memory_order_relaxed);
    /* inline as rec_begin decides it: the aggregate sink; the default sink
     * past its keep budget; or (not KEEP) a backlog that is full, with the
     * drain already woken and no chunk back yet (rec_slot's NULL) */
    int inl = p->sink == GP_SINK_AGGREGATE;
    if (!inl && p->sink != GP_SINK_KEEP) {
        if (em >= lim)
            inl = atomic_load_explicit(&b->keep_dry, memory_order_relaxed) != 0;
        else if (__builtin_expect(b->over || b->pos == GP_CHUNK_EVENTS, 0))
            inl = !b->spare && !atomic_load_explicit(&b->freed, memory_order_relaxed) &&
                  (b->over || b->woke);
    }
    if (inl) {
        frame_open(f, type, name, a, v);
        f->mode = GP_FR_INLINE;
        f->t0 = tsc_now();
    } else if (em < lim && !b->over && b->pos != GP_CHUNK_EVENTS) {
        gp_rev *e = slot_here(b);
        frame_open(f, type, name, a, v);
        f->mode = GP_FR_EVENT;
        uint64_t t = tsc_now();
        f->t0 = t;
        event_begin(b, e, em, t, type, name, a, v);
    } else {
        return begin_full(p, type, name, a, v);
    }
    depth_set(b, d + 1);
    /* re-read the state after publishing the depth (see gp_disable) */
    atomic_signal_fence(memory_order_seq_cst);
    if (__builtin_expect(atomic_load_explicit(&p->state, memory_order_relaxed) != GP_STATE_ON_, 0))
        state_raced(p);
}

void gp_range_begin_slow_(gp_profiler *p, const char *name)
{
    begin_fast(p, GP_EV_BEGIN, name, 0, 0);
}

void gp_range_begin(gp_profiler *p, const char *name)
{
    gp_range_begin_slow_(p, name);
}

static inline uint32_t dev_bits(gp_device_kind device, gp_backend backend)
{
    return ((uint32_t)device & 0xff) | ((uint32_t)backend & 0xff) << 8;
}

void gp_range_begin_ex_slow_(gp_profiler *p, const char *name, gp_device_kind device,
                             gp_backend backend, int64_t bytes)
{
    begin_fast(p, GP_EV_BEGIN_EX, name, dev_bits(device, backend), (uint64_t)bytes);
}

void gp_range_begin_ex(gp_profiler *p, const char *name, gp_device_kind device, gp_backend backend,
                       int64_t bytes)
{
    gp_range_begin_ex_slow_(p, name, device, backend, bytes);
}

gp_profiler *gp_scope_begin_(gp_profiler *p, const char *name)
{
    return begin_any(p, GP_EV_BEGIN, name, 0, 0) ? p : NULL;
}

__attribute__((noinline)) static void end_full(gp_profiler *p)
{
    /* off with nothing open on any thread (the header's inline check, again
     * for direct callers) */
    if (atomic_load_explicit(&p->state, memory_order_relaxed) == GP_STATE_OFF_) return;
    gp_tbuf *b = tbuf_find(p);
    if (!b) return;
    int d = depth_of(b);
    if (d == 0) return;
    d--;
    gp_frame *f = &b->fr[d];
    if (f->mode == GP_FR_INLINE) {
        uint64_t t = gp_rec_now(p);
        int64_t dur = frame_dur(p, f, t, p->use_tsc);
        int64_t self = dur - f->child_ns;
        agg_add(b, f, dur, self < 0 ? 0 : self, t);
        if (d > 0) b->fr[d - 1].child_ns += dur;
    } else if (f->mode == GP_FR_EVENT) {
        gp_rev *e = rec_slot(p, b, 1); /* NULL (out of memory): the end is lost, nesting holds */
        uint64_t t = gp_rec_now(p);
        if (e)
            event_end(b, e, f, t);
        else
            bump(&b->dropped, 1);
        if (d > 0 && b->fr[d - 1].mode == GP_FR_INLINE) event_child_end(p, b, d, t);
    }
    depth_set(b, d);
    if (d == 0 && atomic_load_explicit(&p->state, memory_order_relaxed) == GP_STATE_OFF_OPEN_)
        state_quiesce(p);
}

/* The end of what end_full found when the pending durations of e are full
 * or the last level closed while turning off (a tail call of
 * gp_range_end_slow_). */
__attribute__((noinline)) static void end_tail(gp_profiler *p, gp_agg *e, int flush, int d)
{
    if (flush) agg_flush(e);
    if (d == 0 && atomic_load_explicit(&p->state, memory_order_relaxed) == GP_STATE_OFF_OPEN_)
        state_quiesce(p);
}

/* gp_range_end's common cases, with no call but tail calls (see
 * gp_range_begin_slow_): recording on, the TSC clock, the thread's buffer
 * cached, and the level either aggregated inline into an entry the
 * thread's cache holds, or an event with room in the current chunk. Anything else is
 * end_full, from the start (nothing here has been written). */
void gp_range_end_slow_(gp_profiler *p)
{
    gp_tbuf *b = fast_tbuf(p);
    if (__builtin_expect(!b, 0)) return end_full(p);
    int d = depth_of(b);
    if (__builtin_expect(d == 0, 0)) return end_full(p);
    d--;
    gp_frame *f = &b->fr[d];
    if (f->mode == GP_FR_INLINE) {
        gp_agg *e = agg_cached(b, f->name, f->dev, f->type);
        if (__builtin_expect(!e, 0))
            return end_full(p); /* which finds or makes it, and caches it */
        uint64_t t = tsc_now();
        int64_t dur = frame_dur(p, f, t, 1);
        int64_t self = dur - f->child_ns;
        bump(&b->rolled, 1);
        int flush = agg_update(e, f, dur, self < 0 ? 0 : self, t);
        if (d > 0) b->fr[d - 1].child_ns += dur;
        depth_set(b, d);
        if (__builtin_expect(flush ||
                                 (d == 0 && atomic_load_explicit(&p->state, memory_order_relaxed) !=
                                                GP_STATE_ON_),
                             0))
            return end_tail(p, e, flush, d);
        return;
    }
    if (f->mode != GP_FR_EVENT || b->pos == GP_CHUNK_EVENTS) return end_full(p);
    uint64_t t = tsc_now();
    event_end(b, slot_here(b), f, t);
    if (__builtin_expect(d > 0 && b->fr[d - 1].mode == GP_FR_INLINE, 0))
        event_child_end(p, b, d, t);
    depth_set(b, d);
    if (__builtin_expect(d == 0 && atomic_load_explicit(&p->state, memory_order_relaxed) ==
                                       GP_STATE_OFF_OPEN_,
                         0))
        return state_quiesce(p);
}

void gp_range_end(gp_profiler *p)
{
    gp_range_end_slow_(p);
}

int gp_func_enter_(gp_profiler *p, const void *fn)
{
    if (atomic_load_explicit(&p->state, memory_order_relaxed) != GP_STATE_ON_) return 0;
    return rec_begin(p, GP_EV_FUNC, fn, 0, 0);
}

/* Records a value event; 1 when recorded, 0 when not (off, no buffer, no
 * open event level for an attribute, no room: counted as dropped). */
static int rec_value(gp_profiler *p, uint32_t type, const void *key, uint64_t v, int need_open)
{
    if (atomic_load_explicit(&p->state, memory_order_relaxed) != GP_STATE_ON_) return 0;
    gp_tbuf *b = tbuf_get(p);
    if (!b) return 0;
    /* an attribute needs an innermost level recorded as an event */
    if (need_open && (depth_of(b) == 0 || b->fr[depth_of(b) - 1].mode != GP_FR_EVENT)) return 0;
    gp_rev *e = rec_slot(p, b, 0);
    if (!e) {
        bump(&b->dropped, 1);
        return 0;
    }
    e->t = gp_rec_now(p);
    e->p = key;
    e->v = v;
    e->type = type;
    rec_publish(b);
    return 1;
}

void gp_range_attr_int_slow_(gp_profiler *p, const char *key, int64_t value)
{
    if (p->no_attrs) return;
    rec_value(p, GP_EV_ATTR_INT, key, (uint64_t)value, 1);
}

void gp_range_attr_int(gp_profiler *p, const char *key, int64_t value)
{
    gp_range_attr_int_slow_(p, key, value);
}

void gp_range_attr_str_slow_(gp_profiler *p, const char *key, const char *value)
{
    if (atomic_load_explicit(&p->state, memory_order_relaxed) != GP_STATE_ON_ || !value ||
        p->no_attrs)
        return;
    /* only when the range keeps it (an innermost level recorded as an
     * event; rec_value checks again), so that the attributes of ranges
     * aggregated inline (past keep_max, the aggregate sink) cost nothing;
     * a copy of its own, owned by the range's record and freed with it
     * (written by a file stream, or the slice discarded by a reset or the
     * end): before, values were interned for the profiler's life, in two
     * string tables, so that a program that resets its profiler kept every
     * distinct value it ever recorded (8 M ranges with distinct values,
     * reset every 1 M: 163 MB) */
    gp_tbuf *b = tbuf_find(p);
    if (!b || depth_of(b) == 0 || b->fr[depth_of(b) - 1].mode != GP_FR_EVENT) return;
    char *v = strdup(value);
    if (v && !rec_value(p, GP_EV_ATTR_STR, key, (uint64_t)(uintptr_t)v, 1)) free(v);
}

void gp_range_attr_str(gp_profiler *p, const char *key, const char *value)
{
    gp_range_attr_str_slow_(p, key, value);
}

static uint64_t dbits(double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u;
}

static double bitsd(uint64_t u)
{
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

void gp_counter_slow_(gp_profiler *p, const char *name, double value)
{
    rec_value(p, GP_EV_COUNTER, name, dbits(value), 0);
}

void gp_counter(gp_profiler *p, const char *name, double value)
{
    rec_value(p, GP_EV_COUNTER, name, dbits(value), 0);
}

void gp_observe_slow_(gp_profiler *p, const char *name, double value)
{
    rec_value(p, GP_EV_OBSERVE, name, dbits(value), 0);
}

void gp_observe(gp_profiler *p, const char *name, double value)
{
    rec_value(p, GP_EV_OBSERVE, name, dbits(value), 0);
}

/* ---- drain ------------------------------------------------------------- */

static long add_slice_grow(gp_profiler *p, uint32_t track, uint16_t cat, uint32_t name, int64_t ts,
                           int64_t dur, const gp_slice_ext *ext);

/* Appends a slice and its ext record. The common case (room in both
 * arrays) makes no call, so that it saves no registers (the drain adds
 * one per kept range); growing is add_slice_grow, a tail call. */
long gp_rec_add_slice(gp_profiler *p, uint32_t track, uint16_t cat, uint32_t name, int64_t ts,
                      int64_t dur, const gp_slice_ext *ext)
{
    gp_trace *t = p->tr;
    if (__builtin_expect(t->slices.n >= t->slices.cap || p->ext.n >= p->ext.cap, 0))
        return add_slice_grow(p, track, cat, name, ts, dur, ext);
    uint16_t fl = ext->device == GP_DEV_GPU   ? GP_SLICE_DEV_GPU
                  : ext->device == GP_DEV_CPU ? GP_SLICE_DEV_CPU
                                              : 0;
    gp_slice s = {ts, dur, GP_NONE, GP_NONE, name, track, GP_NO_INDEX, cat, fl};
    t->slices.v[t->slices.n++] = s;
    p->ext.v[p->ext.n++] = *ext;
    if (t->slices.n == 1 && t->counters.n == 0) {
        t->t_begin = ts;
        t->t_end = ts + dur;
    }
    if (ts < t->t_begin) t->t_begin = ts;
    if (ts + dur > t->t_end) t->t_end = ts + dur;
    return (long)(t->slices.n - 1);
}

__attribute__((noinline)) static long add_slice_grow(gp_profiler *p, uint32_t track, uint16_t cat,
                                                     uint32_t name, int64_t ts, int64_t dur,
                                                     const gp_slice_ext *ext)
{
    if (GP_VEC_RESERVE(p->tr->slices, 1) || GP_VEC_RESERVE(p->ext, 1)) return -1;
    return gp_rec_add_slice(p, track, cat, name, ts, dur, ext);
}

uint32_t gp_rec_gpu_track(gp_profiler *p, uint64_t key, const char *label)
{
    /* GPU streams/queues get synthetic thread ids far from real ones. */
    int64_t tid = (int64_t)(0x40000000u + (gp_hash_u64(key) & 0x3fffffffu));
    size_t before = p->tr->tracks.n;
    uint32_t tr = gp_trace_track(p->tr, getpid(), tid, 0, 0);
    if (tr != GP_NO_INDEX && p->tr->tracks.n > before) {
        p->tr->tracks.v[tr].type = GP_TRACK_GPU;
        p->tr->tracks.v[tr].name = gp_trace_str(p->tr, label, strlen(label));
        p->tr->tracks.v[tr].stream = (int64_t)key;
    }
    return tr;
}

int gp_rec_counter_sample(gp_profiler *p, uint32_t name, int64_t ts, double v, int force)
{
    uint64_t *slot = gp_u64map_slot(&p->series_of, name, UINT64_MAX);
    if (!slot) return GP_ENOMEM;
    if (*slot == UINT64_MAX) {
        gp_series s = {name, p->proc_track};
        if (GP_VEC_PUSH(p->tr->series, s)) return GP_ENOMEM;
        *slot = p->tr->series.n - 1;
    }
    uint32_t si = (uint32_t)*slot;
    while (p->sstat.n <= si) {
        gp_series_stat z = {0, INT64_MIN, 0};
        if (GP_VEC_PUSH(p->sstat, z)) return GP_ENOMEM;
    }
    gp_series_stat *st = &p->sstat.v[si];
    st->n++;
    if (ts >= st->last_ts) {
        st->last_ts = ts;
        st->last = v;
    }
    if (p->samples_max && p->tr->counters.n >= p->samples_max && !force) { /* counted */
        p->values_dropped++;
        return 0;
    }
    gp_counter_sample c = {ts, v, si};
    if (GP_VEC_PUSH(p->tr->counters, c)) return GP_ENOMEM;
    if (p->tr->slices.n == 0 && p->tr->counters.n == 1) p->tr->t_begin = p->tr->t_end = ts;
    if (ts < p->tr->t_begin) p->tr->t_begin = ts;
    if (ts > p->tr->t_end) p->tr->t_end = ts;
    return 0;
}

void gp_rec_attrs_release(gp_attr *v, size_t from, size_t to)
{
    for (size_t i = from; i < to; i++)
        if (v[i].is_str == GP_ATTR_OWNED) {
            free((void *)(uintptr_t)v[i].ival);
            v[i].is_str = 0; /* released: an int 0 if read again */
            v[i].ival = 0;
        }
}

/* The id of name s in p's trace (caller holds p->mu). Most events name
 * one of a few pointers: a cache by pointer spares hashing the text, and a
 * hit is taken only when the text is still the one interned. */
static uint32_t str_id(gp_profiler *p, const char *s)
{
    if (!s) return 0;
    size_t h = (size_t)((uint64_t)(uintptr_t)s * 0x9E3779B97F4A7C15ull >> 56);
    if (p->name_cache[h].s == s) {
        uint32_t n = p->name_cache[h].len;
        if (memcmp(s, p->name_cache[h].text, n) == 0 && s[n] == '\0') return p->name_cache[h].id;
    }
    size_t n = strlen(s);
    uint32_t id = gp_trace_str(p->tr, s, n);
    if (id != UINT32_MAX && n < UINT32_MAX) {
        p->name_cache[h].s = s;
        p->name_cache[h].text = gp_strtab_get(p->tr->strings, id);
        p->name_cache[h].id = id;
        p->name_cache[h].len = (uint32_t)n;
    }
    return id;
}

static uint32_t func_id(gp_profiler *p, const void *fn)
{
    uint64_t v;
    if (gp_u64map_get(&p->func_name, (uint64_t)(uintptr_t)fn, &v)) return (uint32_t)v;
    Dl_info di;
    char buf[64];
    const char *s = NULL;
    if (dladdr(fn, &di) && di.dli_sname && di.dli_saddr == fn) s = di.dli_sname;
    if (!s) {
        snprintf(buf, sizeof buf, "0x%" PRIxPTR, (uintptr_t)fn);
        s = buf;
    }
    uint32_t id = str_id(p, s);
    if (id != GP_NO_INDEX) gp_u64map_put(&p->func_name, (uint64_t)(uintptr_t)fn, id);
    return id;
}

/* Slices are added as they end, so a child comes before its parent. Where
 * the two have the same start and duration (timestamps in the same clock
 * tick at both ends, e.g. a child preempted inside a parent that does
 * nothing else), every reader's nesting (analysis/calltree.c: same start,
 * same duration -> the lower index is the parent) would make the child the
 * parent and move the self time between them. So when range slice s ends
 * with the same interval as its last child slice c (track `track`), s takes
 * c's place and the chain of same-interval descendants from c on moves one
 * step down (their ext records and inline_children with them; kernel
 * timings and other tracks' slices keep their places). Returns s's new
 * index. A child already written out by the stream sink is left where it
 * was (c then names a later slice, which does not match). */
static size_t order_identical(gp_profiler *p, uint32_t track, size_t c, size_t s)
{
    gp_trace *t = p->tr;
    if (c >= s || s >= t->slices.n) return s;
    const gp_slice S = t->slices.v[s];
    const gp_slice *C = &t->slices.v[c];
    if (S.dur <= 0 || C->track != track || C->cat != p->cat_range || C->ts != S.ts ||
        C->dur != S.dur)
        return s;
    /* the chain: c, the same-interval slices of this track after it, s */
    /* walk the chain down from s: each member moves to the next one's place
     * (moved inline_children entries are marked until the end) */
    gp_slice_ext sx = p->ext.v[s];
    size_t prev = s;
    for (size_t j = s; j-- > c;) {
        const gp_slice *m = &t->slices.v[j];
        if (j != c &&
            (m->track != track || m->cat != p->cat_range || m->ts != S.ts || m->dur != S.dur))
            continue;
        t->slices.v[prev] = t->slices.v[j];
        p->ext.v[prev] = p->ext.v[j];
        for (size_t k = t->inline_children.n; k-- > 0 && t->inline_children.v[k].slice >= c;)
            if (t->inline_children.v[k].slice == j)
                t->inline_children.v[k].slice = (uint32_t)prev | 0x80000000u;
        prev = j;
    }
    t->slices.v[c] = S;
    p->ext.v[c] = sx;
    /* inline_children from c on: s's entry (the last one) moves to c; the
     * moved ones were marked; keep the vector ascending by slice */
    size_t k0 = t->inline_children.n;
    while (k0 > 0 && (t->inline_children.v[k0 - 1].slice & 0x7fffffffu) >= c) k0--;
    for (size_t k = k0; k < t->inline_children.n; k++) {
        gp_inline_child *ic = &t->inline_children.v[k];
        if (ic->slice & 0x80000000u)
            ic->slice &= 0x7fffffffu;
        else if (ic->slice == s)
            ic->slice = (uint32_t)c;
    }
    for (size_t k = k0 + 1; k < t->inline_children.n; k++) { /* few entries: insertion sort */
        gp_inline_child x = t->inline_children.v[k];
        size_t j = k;
        while (j > k0 && t->inline_children.v[j - 1].slice > x.slice) {
            t->inline_children.v[j] = t->inline_children.v[j - 1];
            j--;
        }
        t->inline_children.v[j] = x;
    }
    return c;
}

static int drain_event(gp_profiler *p, gp_tbuf *b, const gp_rev *e)
{
    switch (e->type) {
    case GP_EV_BEGIN:
    case GP_EV_BEGIN_EX:
    case GP_EV_FUNC: {
        gp_open o = {gp_rec_ns(p, e->t), 0, -1, 0, 0, 0, b->pattrs.n, UINT32_MAX};
        o.name = e->type == GP_EV_FUNC ? func_id(p, e->p) : str_id(p, e->p);
        if (e->type == GP_EV_BEGIN_EX) {
            o.device = (uint8_t)(e->a & 0xff);
            o.backend = (uint8_t)(e->a >> 8 & 0xff);
            o.bytes = (int64_t)e->v;
            if (o.bytes < 0) o.bytes = -1;
        }
        return GP_VEC_PUSH(b->stack, o);
    }
    case GP_EV_END: {
        if (b->stack.n == 0) {
            p->unmatched_end++;
            return 0;
        }
        gp_open o = b->stack.v[--b->stack.n];
        int64_t dur = gp_rec_ns(p, e->t) - o.ts;
        if (dur < 0) dur = 0;
        /* children aggregated inline by the thread (no slices of their own):
         * kept with the slice so that every reader's self time (the nesting
         * of slices less this) equals the recorder's; at most what the child
         * slices left of the duration, as self time stops at 0 */
        int64_t inl = (int64_t)e->v, room = dur - o.child_ns;
        if (inl > room) inl = room;
        if (inl < 0) inl = 0;
        o.child_ns += (int64_t)e->v;
        gp_slice_ext x = {dur - o.child_ns,
                          o.bytes,
                          (uint32_t)p->attrs.n,
                          (uint32_t)(b->pattrs.n - o.attr_first),
                          o.device,
                          o.backend};
        if (x.self_ns < 0) x.self_ns = 0;
        for (size_t i = o.attr_first; i < b->pattrs.n; i++)
            if (GP_VEC_PUSH(p->attrs, b->pattrs.v[i])) { /* those left go */
                gp_rec_attrs_release(b->pattrs.v, i, b->pattrs.n);
                b->pattrs.n = o.attr_first;
                return GP_ENOMEM;
            }
        b->pattrs.n = o.attr_first;
        uint32_t trk = gp_rec_thread_track(p, b);
        if (trk == GP_NO_INDEX) return GP_ENOMEM;
        long si = gp_rec_add_slice(p, trk, p->cat_range, o.name, o.ts, dur, &x);
        if (si < 0) return GP_ENOMEM;
        if (inl > 0) {
            gp_inline_child ic = {(uint32_t)si, inl};
            if (GP_VEC_PUSH(p->tr->inline_children, ic)) return GP_ENOMEM;
        }
        if (o.last_child != UINT32_MAX)
            si = (long)order_identical(p, trk, o.last_child, (size_t)si);
        if (b->stack.n) {
            b->stack.v[b->stack.n - 1].child_ns += dur;
            b->stack.v[b->stack.n - 1].last_child = (uint32_t)si;
        }
        return 0;
    }
    case GP_EV_ATTR_INT:
    case GP_EV_ATTR_STR: {
        int owned = e->type == GP_EV_ATTR_STR;
        if (b->stack.n == 0) { /* no range to hold it */
            if (owned) free((void *)(uintptr_t)e->v);
            return 0;
        }
        gp_attr a = {str_id(p, e->p), e->type == GP_EV_ATTR_STR, 0, 0};
        if (owned) {
            a.is_str = GP_ATTR_OWNED;
            a.ival = (int64_t)e->v; /* the record takes the copy */
        } else if (a.is_str) {
            a.sval = str_id(p, (const char *)(uintptr_t)e->v);
        } else {
            a.ival = (int64_t)e->v;
        }
        if (GP_VEC_PUSH(b->pattrs, a)) {
            if (owned) free((void *)(uintptr_t)e->v);
            return GP_ENOMEM;
        }
        return 0;
    }
    case GP_EV_COUNTER:
        return gp_rec_counter_sample(p, str_id(p, e->p), gp_rec_ns(p, e->t), bitsd(e->v), 0);
    case GP_EV_OBSERVE: {
        uint32_t name = str_id(p, e->p);
        uint64_t *slot = gp_u64map_slot(&p->obs_of, name, UINT64_MAX);
        if (!slot) return GP_ENOMEM;
        if (*slot == UINT64_MAX) {
            gp_obs o = {name, {0}};
            if (GP_VEC_PUSH(p->obs, o)) return GP_ENOMEM;
            *slot = p->obs.n - 1;
        }
        return GP_VEC_PUSH(p->obs.v[*slot].v, bitsd(e->v));
    }
    default:
        return 0;
    }
}

/* One pass over the thread buffers, at most max_chunks full chunks per
 * thread (a thread that recycles chunks as fast as they are drained would
 * otherwise keep one pass going, and its slices in memory, forever).
 * Returns 1 when some thread had more, 0 when all were drained, or
 * GP_ENOMEM. */
/* Drains b's events, at most max_chunks full chunks. Returns 1 when b has
 * more, else 0; *rc = GP_ENOMEM when an event could not be stored. */
static int drain_thread(gp_profiler *p, gp_tbuf *b, int max_chunks, int *rc)
{
    for (int k = 0; b->head; k++) {
        gp_chunk *c = b->head;
        uint32_t n = atomic_load_explicit(&c->n, memory_order_acquire);
        for (uint32_t i = b->head_pos; i < n; i++)
            if (drain_event(p, b, &c->ev[i])) *rc = GP_ENOMEM;
        p->drained += n - b->head_pos;
        b->head_pos = n;
        if (n < GP_CHUNK_EVENTS) break;
        gp_chunk *nx = atomic_load_explicit(&c->next, memory_order_acquire);
        if (!nx) break;
        b->head = nx;
        b->head_pos = 0;
        /* recycle: the owner takes it back in chunk_next */
        gp_chunk *top = atomic_load_explicit(&b->freed, memory_order_relaxed);
        do {
            c->free_next = top;
        } while (!atomic_compare_exchange_weak_explicit(&b->freed, &top, c, memory_order_release,
                                                        memory_order_relaxed));
        if (k + 1 >= max_chunks) return 1;
    }
    return 0;
}

/* Retires *pb (an exited thread) when its events are all drained: unlinks
 * and frees it. 1 when done. */
static int retire_at(gp_profiler *p, gp_tbuf **pb, int rest)
{
    gp_tbuf *b = *pb;
    if (!b->dead || rest || retire_thread(p, b)) return 0;
    *pb = b->next_all;
    tbuf_free(b);
    return 1;
}

/* One pass over the thread buffers, at most max_chunks full chunks per
 * thread (a thread that recycles chunks as fast as they are drained would
 * otherwise keep one pass going, and its slices in memory, forever).
 * Exited threads whose events are all read are retired. Returns 1 when
 * some thread had more, 0 when all were drained, or GP_ENOMEM. */
static int drain_pass(gp_profiler *p, int max_chunks)
{
    int rc = 0, more = 0;
    if (p->any_dead && !p->retired) retired_make(p); /* else retire_thread waits */
    for (gp_tbuf **pb = &p->threads; *pb;) {
        int rest = drain_thread(p, *pb, max_chunks, &rc);
        more |= rest;
        if (!retire_at(p, pb, rest)) pb = &(*pb)->next_all;
    }
    if (p->stream && gp_stream_flush_(p) && !rc) rc = GP_EIO;
    return rc ? rc : more;
}

int gp_rec_drain(gp_profiler *p)
{
    /* bounded passes: what was recorded before the call is drained (threads
     * recording meanwhile may leave newer events for the next drain) */
    int rc = 0;
    for (int pass = 0; pass < 64; pass++) {
        int r = drain_pass(p, GP_MAX_CHUNKS);
        if (r < 0) rc = r;
        if (r <= 0) break;
    }
    return rc;
}

int gp_rec_collect_aggs(gp_profiler *p, int with_streamed)
{
    gp_trace_aggs_clear(p->tr);
    if (with_streamed && gp_stream_stats_(p)) return GP_ENOMEM;
    if (gp_rec_kagg_collect(p, with_streamed)) return GP_ENOMEM;
    for (gp_tbuf *b = p->threads; b; b = b->next_all) {
        uint32_t na = atomic_load_explicit(&b->nagg, memory_order_acquire);
        for (uint32_t i = 0; i < na; i++) {
            gp_agg *e = &b->agg_blk[i / GP_AGG_BLOCK][i % GP_AGG_BLOCK];
            uint64_t c = atomic_load_explicit(&e->count, memory_order_relaxed);
            if (!c) continue;
            gp_agg_row r = {0};
            r.name = e->type == GP_EV_FUNC ? func_id(p, e->key) : str_id(p, e->key);
            r.cat = p->cat_range;
            r.track = gp_rec_thread_track(p, b);
            if (r.track == GP_NO_INDEX) return GP_ENOMEM;
            r.device = (uint8_t)(e->dev & 0xff);
            r.backend = (uint8_t)(e->dev >> 8 & 0xff);
            r.count = c;
            r.total_ns = atomic_load_explicit(&e->total_ns, memory_order_relaxed);
            r.self_ns = atomic_load_explicit(&e->self_ns, memory_order_relaxed);
            r.min_ns = atomic_load_explicit(&e->min_ns, memory_order_relaxed);
            r.max_ns = atomic_load_explicit(&e->max_ns, memory_order_relaxed);
            r.bytes = atomic_load_explicit(&e->bytes, memory_order_relaxed);
            r.em = gp_rec_entry_inline_of(p, b, e->key, e->dev, e->type);
            unsigned __int128 sq =
                (unsigned __int128)atomic_load_explicit(&e->sq_hi, memory_order_relaxed) << 64 |
                atomic_load_explicit(&e->sq_lo, memory_order_relaxed);
            long double tot = (long double)r.total_ns;
            long double m2 = (long double)sq - tot * tot / (long double)c;
            r.m2 = m2 > 0 ? (double)m2 : 0;
            r.first_ns = gp_rec_ns(p, atomic_load_explicit(&e->first_t, memory_order_relaxed));
            r.last_ns = gp_rec_ns(p, atomic_load_explicit(&e->last_t, memory_order_relaxed));
            r.sketch = malloc(GP_SKETCH_BUCKETS * sizeof *r.sketch);
            if (!r.sketch) return GP_ENOMEM;
            _Atomic uint64_t *bk = e->bk;
            for (unsigned k = 0; k < GP_SKETCH_BUCKETS; k++)
                r.sketch[k] = atomic_load_explicit(&bk[k], memory_order_relaxed);
            uint32_t np = atomic_load_explicit(&e->npend, memory_order_relaxed);
            for (uint32_t k = 0; k < np && k < GP_AGG_PEND; k++)
                r.sketch[gp_sketch_index(
                    atomic_load_explicit(&e->pend[k], memory_order_relaxed))]++;
            if (GP_VEC_PUSH(p->tr->aggs, r)) {
                free(r.sketch);
                return GP_ENOMEM;
            }
            if (p->tr->slices.n == 0 && p->tr->counters.n == 0 && p->tr->aggs.n == 1) {
                p->tr->t_begin = r.first_ns;
                p->tr->t_end = r.last_ns;
            }
            if (r.first_ns < p->tr->t_begin) p->tr->t_begin = r.first_ns;
            if (r.last_ns > p->tr->t_end) p->tr->t_end = r.last_ns;
        }
    }
    return 0;
}

/* Zeroes b's inline aggregates (entries stay, so the owner's pointers hold). */
void gp_rec_aggs_zero(gp_tbuf *b)
{
    uint32_t na = atomic_load_explicit(&b->nagg, memory_order_acquire);
    for (uint32_t i = 0; i < na; i++) {
        gp_agg *e = &b->agg_blk[i / GP_AGG_BLOCK][i % GP_AGG_BLOCK];
        atomic_store_explicit(&e->count, 0, memory_order_relaxed);
        atomic_store_explicit(&e->total_ns, 0, memory_order_relaxed);
        atomic_store_explicit(&e->self_ns, 0, memory_order_relaxed);
        atomic_store_explicit(&e->min_ns, INT64_MAX, memory_order_relaxed);
        atomic_store_explicit(&e->max_ns, INT64_MIN, memory_order_relaxed);
        atomic_store_explicit(&e->bytes, -1, memory_order_relaxed);
        atomic_store_explicit(&e->sq_lo, 0, memory_order_relaxed);
        atomic_store_explicit(&e->sq_hi, 0, memory_order_relaxed);
        _Atomic uint64_t *bk = e->bk;
        for (unsigned k = 0; k < GP_SKETCH_BUCKETS; k++)
            atomic_store_explicit(&bk[k], 0, memory_order_relaxed);
        atomic_store_explicit(&e->npend, 0, memory_order_relaxed);
    }
    atomic_store_explicit(&b->emitted, 0, memory_order_relaxed);
    atomic_store_explicit(&b->rolled, 0, memory_order_relaxed);
    atomic_store_explicit(&b->dropped, 0, memory_order_relaxed);
}

uint64_t gp_rec_count(gp_profiler *p, int which)
{
    uint64_t n = which ? 0 : p->values_dropped + p->kwarm_dropped;
    for (gp_tbuf *b = p->threads; b; b = b->next_all)
        n += atomic_load_explicit(which ? &b->rolled : &b->dropped, memory_order_relaxed);
    return n;
}

int gp_profiler_reset(gp_profiler *p)
{
    pthread_mutex_lock(&p->mu);
    gp_rec_drain(p);
    gp_cuda_resolve_(p, 0);
    gp_cl_resolve_(p, 0);
    /* a stream's output keeps what was recorded (its events are written;
     * its rollover rows and dropped count are carried to its end): before,
     * the ranges aggregated inline before a reset were missing from it */
    gp_stream_reset_(p);
    for (gp_tbuf *b = p->threads; b; b = b->next_all) {
        gp_rec_attrs_release(b->pattrs.v, 0, b->pattrs.n);
        b->stack.n = b->pattrs.n = 0;
        gp_rec_aggs_zero(b);
        /* the keep budget starts again (owner fields: a thread recording
         * meanwhile may keep up to one grant more) */
        if (p->keep_total && b->tid) {
            atomic_store_explicit(&b->keep_lim, 0, memory_order_relaxed);
            atomic_store_explicit(&b->keep_dry, 0, memory_order_relaxed);
        }
    }
    atomic_store_explicit(&p->keep_pool, (int64_t)p->keep_total, memory_order_relaxed);
    gp_trace_aggs_clear(p->tr);
    p->tr->slices.n = 0;
    p->tr->inline_children.n = 0;
    p->tr->counters.n = 0;
    p->tr->t_begin = p->tr->t_end = 0;
    p->ext.n = 0;
    gp_rec_attrs_release(p->attrs.v, 0, p->attrs.n);
    p->attrs.n = 0;
    gp_rec_entry_reset(p);
    for (size_t i = 0; i < p->obs.n; i++) p->obs.v[i].v.n = 0;
    p->unmatched_end = 0;
    for (size_t i = 0; i < p->sessions.n; i++) free(p->sessions.v[i]);
    p->sessions.n = 0;
    p->kernel_ns_total = 0;
    p->kernel_count = 0;
    p->kslices = 0;
    gp_rec_kagg_clear(p);
    p->clears++;
    p->sstat.n = 0;
    p->values_dropped = 0;
    p->mem_peak = p->mem_window_peak = p->mem_cur;
    pthread_mutex_unlock(&p->mu);
    return 0;
}
