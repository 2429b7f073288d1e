/* tests/test_libgpuprof_churn.c: a program that keeps starting new threads
 * (a thread per request or per task) stays in bounded memory, in every sink,
 * and every range is still counted exactly.
 *
 * Each case runs in a child process (its own peak RSS): 2,000 short threads
 * (4 at a time, each 50 x an "outer" range holding an "inner" _ex range with
 * bytes), then 18,000 more (the store stream: 1,000 then 4,000). Over the
 * second part the peak RSS may grow by at most 2 MB with the default and
 * aggregate sinks, and by 2 MB + 1.5 KB per thread with a stream (the
 * thread's track stays: the file's or store's thread table; the store's
 * writer may also fill its 8 MiB SQLite page cache meanwhile). Before exited
 * threads were retired it grew by about 30 KB per thread (over 500 MB). Durations come from a clock
 * this program sets per thread, so the rows are checked against values worked out here: count,
 * total, self, min, max and bytes of both names, in the library's rows and
 * in the export read back by the importer; kept + aggregated = recorded and
 * nothing dropped; the default sink keeps at most 2 x keep_max in all. */
#include "analysis/summary.h"
#include "store/store.h"
#include "test.h"
#include "trace/import.h"
#include <gpuprof/gpuprof.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* CLOCK_MONOTONIC as the recording thread sets it (vt_on), else the kernel's. */
static __thread int vt_on;
static __thread int64_t vt_ns;

int clock_gettime(clockid_t id, struct timespec *ts)
{
    if (id == CLOCK_MONOTONIC && vt_on) {
        ts->tv_sec = vt_ns / 1000000000;
        ts->tv_nsec = vt_ns % 1000000000;
        return 0;
    }
    return (int)syscall(SYS_clock_gettime, id, ts);
}

#define RANGES 50 /* outer ranges per thread (each with one inner) */

/* The durations of thread i's j-th outer and inner range (ns). */
static int64_t d_outer(long i, int j)
{
    return 2000 + (i * 131 + j * 17) % 5000;
}
static int64_t d_inner(long i, int j)
{
    return 100 + (i * 29 + j * 7) % 1500;
}

typedef struct job {
    gp_profiler *p;
    long i;
    int64_t t0;
} job;

static void *worker(void *arg)
{
    job *w = arg;
    vt_on = 1;
    int64_t t = w->t0 + 1000000;
    for (int j = 0; j < RANGES; j++) {
        int64_t o = d_outer(w->i, j), n = d_inner(w->i, j);
        vt_ns = t;
        gp_range_begin(w->p, "outer");
        vt_ns = t + 500;
        gp_range_begin_ex(w->p, "inner", GP_DEV_CPU, GP_BACKEND_CPU, 64);
        vt_ns = t + 500 + n;
        gp_range_end(w->p);
        vt_ns = t + o + 1000; /* outer lasts o + 1000 > 500 + n */
        gp_range_end(w->p);
        t += o + 2000;
    }
    return NULL;
}

typedef struct want {
    uint64_t count;
    int64_t total, self, min, max, bytes;
} want;

static void want_add(want *w, int64_t d, int64_t self, int64_t bytes)
{
    if (!w->count || d < w->min) w->min = d;
    if (!w->count || d > w->max) w->max = d;
    w->count++;
    w->total += d;
    w->self += self;
    w->bytes += bytes;
}

/* Runs threads [from, to), 4 at a time. */
static int run(gp_profiler *p, long from, long to, int64_t t0, want *wo, want *wi)
{
    for (long i = from; i < to; i += 4) {
        pthread_t th[4];
        job jb[4];
        int n = 0;
        for (long k = i; k < to && k < i + 4; k++, n++) {
            jb[n] = (job){p, k, t0};
            if (pthread_create(&th[n], NULL, worker, &jb[n])) return -1;
            for (int j = 0; j < RANGES; j++) {
                int64_t o = d_outer(k, j) + 1000, in = d_inner(k, j);
                want_add(wo, o, o - in, 0);
                want_add(wi, in, in, 64);
            }
        }
        for (int k = 0; k < n; k++) pthread_join(th[k], NULL);
    }
    return 0;
}

static long max_rss_kb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

static const gp_summary_row *row_named(const gp_summary_row *r, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(r[i].name, name)) return &r[i];
    return NULL;
}

#define CHECK(c)                                                                                   \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            printf("# %s:%d: %s\n", __FILE__, __LINE__, #c);                                       \
            fflush(stdout);                                                                        \
            _exit(1);                                                                              \
        }                                                                                          \
    } while (0)

static void check_row(const gp_summary_row *r, const want *w)
{
    CHECK(r != NULL);
    CHECK(r->count == w->count);
    CHECK(r->total_ns == w->total);
    CHECK(r->self_ns == w->self);
    CHECK(r->min_ns == w->min);
    CHECK(r->max_ns == w->max);
    CHECK(r->min_ns <= r->p50_ns && r->p50_ns <= r->max_ns);
}

/* The child: records with sink (stream: to path), checks, exits 0 on success. */
static void child(int sink, const char *path, int with_rss)
{
    gp_options o = {0};
    o.clock = 1;
    o.sink = sink;
    o.stream_path = path;
    o.keep_max = 1000;
    gp_profiler *p = gp_profiler_create(&o);
    CHECK(p != NULL);
    int64_t t0 = gp_test_real_mono_ns();
    want wo = {0}, wi = {0};
    /* the store stream: fewer threads (this program's clock gives every
     * thread the same times, so the store's time index takes the rows out of
     * order: 2 M rows took 47 s here, against 6 s with a real clock) */
    int store = path && strstr(path, ".db");
    long n1 = GP_TEST_SANITIZED ? 200 : store ? 1000 : 2000;
    long n2 = GP_TEST_SANITIZED ? 1000 : store ? 5000 : 20000;
    CHECK(run(p, 0, n1, t0, &wo, &wi) == 0);
    gp_record_stats rs;
    gp_record_stats_get(p, &rs);
    long rss1 = max_rss_kb();
    CHECK(run(p, n1, n2, t0, &wo, &wi) == 0);
    gp_record_stats_get(p, &rs);
    long rss2 = max_rss_kb();
    printf("# sink %d: %ld threads, peak RSS %ld kB after %ld, %ld kB after %ld (+%ld kB); "
           "kept %llu aggregated %llu\n",
           sink, n2, rss1, n1, rss2, n2, rss2 - rss1, (unsigned long long)rs.kept,
           (unsigned long long)rs.aggregated);
    fflush(stdout);
    /* default and aggregate: nothing per exited thread. Streams: its track
     * (the file's or store's thread table), under 1.5 KB a thread */
    /* (the store stream also fills its writer's SQLite page cache, up to
     * 8 MiB, while this runs) */
    if (with_rss)
        CHECK(rss2 - rss1 <
              (sink == GP_SINK_STREAM ? 1536 * (n2 - n1) / 1024 : 0) + (store ? 8192 : 0) + 2048);
    CHECK(rs.kept + rs.aggregated == wo.count + wi.count);
    CHECK(rs.dropped == 0);
    if (sink == GP_SINK_AUTO) CHECK(rs.kept > 0 && rs.kept <= 2 * 1000);
    if (sink == GP_SINK_AGGREGATE) CHECK(rs.kept == 0);
    gp_summary_row *r;
    size_t nr;
    CHECK(gp_summary_rows(p, &r, &nr) == 0);
    check_row(row_named(r, nr, "outer"), &wo);
    check_row(row_named(r, nr, "inner"), &wi);
    CHECK(row_named(r, nr, "inner")->bytes == wi.bytes);
    gp_summary_rows_free(r, nr);
    /* the export (or the file stream) read back: the same figures */
    char jp[128];
    snprintf(jp, sizeof jp, "/tmp/gp_test_churn_%ld.json", (long)getpid());
    const char *read = jp;
    if (sink == GP_SINK_STREAM) {
        gp_profiler_destroy(p); /* finishes the stream */
        p = NULL;
        read = path;
    } else {
        CHECK(gp_export_json(p, jp) == 0);
    }
    {
        gp_trace *t;
        gp_err err;
        if (store)
            CHECK(gp_store_load(read, 0, &t, &err) == 0);
        else
            CHECK(gp_import_json_file(read, NULL, &t, &err) == 0);
        gp_summary s;
        CHECK(gp_summary_compute(t, &s) == 0);
        int seen = 0;
        for (size_t i = 0; i < s.n; i++) {
            const char *name = gp_trace_s(t, s.rows[i].name);
            const want *w = !strcmp(name, "outer") ? &wo : !strcmp(name, "inner") ? &wi : NULL;
            if (!w) continue;
            seen++;
            CHECK(s.rows[i].st.count == w->count);
            CHECK(s.rows[i].st.sum == w->total);
            CHECK(s.rows[i].self_ns == w->self);
            CHECK(s.rows[i].st.min == w->min);
            CHECK(s.rows[i].st.max == w->max);
        }
        CHECK(seen == 2);
        gp_summary_free(&s);
        gp_trace_destroy(t);
    }
    unlink(jp);
    if (p) gp_profiler_destroy(p);
    _exit(0);
}

static void run_case(int sink, const char *ext)
{
    char path[128] = "";
    if (ext) snprintf(path, sizeof path, "/tmp/gp_test_churn_%ld.%s", (long)getpid(), ext);
    fflush(stdout);
    pid_t pid = fork();
    ASSERT(pid >= 0);
    if (pid == 0) child(sink, ext ? path : NULL, !GP_TEST_SANITIZED);
    int st = 0;
    ASSERT_EQ_INT(waitpid(pid, &st, 0), pid);
    if (ext && !strcmp(ext, "db"))
        gp_test_rm_db(path);
    else if (ext)
        unlink(path);
    ASSERT(WIFEXITED(st));
    ASSERT_EQ_INT(WEXITSTATUS(st), 0);
}

TEST(churn_default_sink)
{
    run_case(GP_SINK_AUTO, NULL);
}

TEST(churn_aggregate_sink)
{
    run_case(GP_SINK_AGGREGATE, NULL);
}

TEST(churn_file_stream)
{
    run_case(GP_SINK_STREAM, "json");
}

TEST(churn_store_stream)
{
    run_case(GP_SINK_STREAM, "db");
}

/* fork while another thread has recorded and waits inside an open range
 * (and the drain thread waits for work): that thread does not exist in the
 * child, whose first drain retires its buffer (its ranges stay counted);
 * the child records, reads its results and destroys the profiler, which
 * must return (it used to wait forever in pthread_cond_destroy on the drain
 * thread's condition, copied with the parent's waiter). */
static pthread_mutex_t fk_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t fk_cv = PTHREAD_COND_INITIALIZER;
static int fk_ready, fk_go;

/* In a worker: tells fk_start it is ready, then waits for fk_release. */
static void fk_hold(void)
{
    pthread_mutex_lock(&fk_mu);
    fk_ready = 1;
    pthread_cond_broadcast(&fk_cv);
    while (!fk_go) pthread_cond_wait(&fk_cv, &fk_mu);
    pthread_mutex_unlock(&fk_mu);
}

/* Starts fn(p) on *th and returns once it called fk_hold (0), or the
 * pthread_create error. */
static int fk_start(pthread_t *th, void *(*fn)(void *), gp_profiler *p)
{
    fk_ready = fk_go = 0;
    int rc = pthread_create(th, NULL, fn, p);
    if (rc) return rc;
    pthread_mutex_lock(&fk_mu);
    while (!fk_ready) pthread_cond_wait(&fk_cv, &fk_mu);
    pthread_mutex_unlock(&fk_mu);
    return 0;
}

/* Lets the worker held in fk_hold go on. */
static void fk_release(void)
{
    pthread_mutex_lock(&fk_mu);
    fk_go = 1;
    pthread_cond_broadcast(&fk_cv);
    pthread_mutex_unlock(&fk_mu);
}

static void *fork_worker(void *arg)
{
    gp_profiler *p = arg;
    for (int i = 0; i < 1000; i++) {
        gp_range_begin(p, "parent");
        gp_range_end(p);
    }
    gp_range_begin(p, "open");
    fk_hold();
    gp_range_end(p);
    return NULL;
}

static void fork_case(int sink)
{
    gp_options o = {0};
    o.sink = sink;
    o.keep_max = 100;
    gp_profiler *p = gp_profiler_create(&o);
    ASSERT(p);
    pthread_t th;
    ASSERT_EQ_INT(fk_start(&th, fork_worker, p), 0);
    usleep(100000); /* the drain thread drains, then waits */
    fflush(stdout);
    pid_t pid = fork();
    ASSERT(pid >= 0);
    if (pid == 0) {
        alarm(30); /* a hang fails the test instead of stopping it */
        for (int i = 0; i < 500; i++) {
            gp_range_begin(p, "child");
            gp_range_end(p);
        }
        gp_record_stats rs;
        CHECK(gp_record_stats_get(p, &rs) == 0);
        CHECK(rs.kept + rs.aggregated == 1500 && rs.dropped == 0);
        gp_summary_row *r;
        size_t nr;
        CHECK(gp_summary_rows(p, &r, &nr) == 0);
        CHECK(row_named(r, nr, "parent") && row_named(r, nr, "parent")->count == 1000);
        CHECK(row_named(r, nr, "child") && row_named(r, nr, "child")->count == 500);
        gp_summary_rows_free(r, nr);
        gp_profiler_destroy(p);
        _exit(0);
    }
    int st = 0;
    ASSERT_EQ_INT(waitpid(pid, &st, 0), pid);
    fk_release();
    pthread_join(th, NULL);
    ASSERT(WIFEXITED(st));
    ASSERT_EQ_INT(WEXITSTATUS(st), 0);
    gp_record_stats rs;
    ASSERT_EQ_INT(gp_record_stats_get(p, &rs), 0);
    ASSERT_EQ_INT(rs.kept + rs.aggregated, 1001);
    gp_profiler_destroy(p);
}

TEST(fork_retires_other_threads)
{
    fork_case(GP_SINK_AUTO);
    fork_case(GP_SINK_AGGREGATE);
}

/* Turned off while a thread had a range open, which that thread then never
 * closes (it exits): once it has exited, no live thread has a level open,
 * so the profiler is fully off again (GP_STATE_OFF_: the disabled calls
 * return inline) instead of staying "off with levels open" until the next
 * gp_enable (every disabled begin and end a call). */
static void *open_and_exit(void *arg)
{
    gp_profiler *p = arg;
    gp_range_begin(p, "closed");
    gp_range_end(p);
    gp_range_begin(p, "left open");
    fk_hold();
    return NULL; /* exits with "left open" open */
}

TEST(off_after_thread_exits_inside_a_range)
{
    /* the precondition: gp_disable can tell that no level is open (it needs
     * membarrier; without it the state stays "off with levels open") */
    gp_profiler *q = gp_profiler_create(NULL);
    ASSERT(q);
    gp_range_begin(q, "x");
    gp_range_end(q);
    gp_disable(q);
    int fenced = gp_state_(q) == GP_STATE_OFF_;
    gp_profiler_destroy(q);
    if (!fenced) {
        printf("# SKIP off_after_thread_exits_inside_a_range: membarrier not available\n");
        return;
    }
    for (int sink = 0; sink < 2; sink++) {
        gp_options o = {0};
        o.sink = sink ? GP_SINK_AGGREGATE : GP_SINK_AUTO;
        gp_profiler *p = gp_profiler_create(&o);
        ASSERT(p);
        pthread_t th;
        ASSERT_EQ_INT(fk_start(&th, open_and_exit, p), 0);
        gp_disable(p);
        ASSERT_EQ_INT(gp_state_(p), GP_STATE_OFF_OPEN_); /* "left open" is open */
        fk_release();
        ASSERT_EQ_INT(pthread_join(th, NULL), 0);
        ASSERT_EQ_INT(gp_state_(p), GP_STATE_OFF_);
        /* on again: recording works and the counts are exact (the range left
         * open is lost, as documented) */
        gp_enable(p);
        for (int i = 0; i < 10; i++) {
            gp_range_begin(p, "closed");
            gp_range_end(p);
        }
        gp_summary_row *r;
        size_t nr;
        ASSERT_EQ_INT(gp_summary_rows(p, &r, &nr), 0);
        ASSERT(row_named(r, nr, "closed"));
        ASSERT_EQ_INT((int)row_named(r, nr, "closed")->count, 11);
        ASSERT(!row_named(r, nr, "left open"));
        gp_summary_rows_free(r, nr);
        gp_profiler_destroy(p);
    }
}

/* The same across fork: turned off in the parent while another thread had a
 * range open; in the child that thread does not exist, so the child's
 * profiler is fully off at once; on again, it records. */
TEST(off_in_child_when_only_gone_threads_were_open)
{
    gp_profiler *p = gp_profiler_create(NULL);
    ASSERT(p);
    gp_range_begin(p, "x");
    gp_range_end(p);
    gp_disable(p);
    if (gp_state_(p) != GP_STATE_OFF_) {
        printf("# SKIP off_in_child_when_only_gone_threads_were_open: membarrier not available\n");
        gp_profiler_destroy(p);
        return;
    }
    gp_enable(p);
    pthread_t th;
    ASSERT_EQ_INT(fk_start(&th, open_and_exit, p), 0);
    gp_disable(p);
    ASSERT_EQ_INT(gp_state_(p), GP_STATE_OFF_OPEN_);
    fflush(stdout);
    pid_t pid = fork();
    ASSERT(pid >= 0);
    if (pid == 0) {
        alarm(30);
        int ok = gp_state_(p) == GP_STATE_OFF_;
        gp_enable(p);
        for (int i = 0; i < 5; i++) {
            gp_range_begin(p, "in child");
            gp_range_end(p);
        }
        gp_summary_row *r;
        size_t nr;
        ok = ok && gp_summary_rows(p, &r, &nr) == 0;
        if (ok) {
            const gp_summary_row *c = row_named(r, nr, "in child");
            ok = c && c->count == 5 && row_named(r, nr, "closed") &&
                 row_named(r, nr, "closed")->count == 1;
            gp_summary_rows_free(r, nr);
        }
        gp_profiler_destroy(p);
        _exit(ok ? 0 : 1);
    }
    int st = 0;
    ASSERT_EQ_INT(waitpid(pid, &st, 0), pid);
    fk_release();
    ASSERT_EQ_INT(pthread_join(th, NULL), 0);
    ASSERT(WIFEXITED(st));
    ASSERT_EQ_INT(WEXITSTATUS(st), 0);
    ASSERT_EQ_INT(gp_state_(p), GP_STATE_OFF_); /* and in the parent once the thread exited */
    gp_profiler_destroy(p);
}

TEST_MAIN(churn_default_sink, churn_aggregate_sink, churn_file_stream, churn_store_stream,
          fork_retires_other_threads, off_after_thread_exits_inside_a_range,
          off_in_child_when_only_gone_threads_were_open)
