/* tests/test_libgpuprof_store.c: libgpuprof's stream sink into the SQLite
 * run store (stream_path naming a store): bounded memory over millions of
 * ranges (getrusage), the run listed by gp_store_runs, per-name counts and
 * totals of the loaded run equal to the library's own results (ranges
 * streamed as events and ranges rolled over into range_stats while the drain
 * was held back), kernel-less counters and tracked memory in the store, and a
 * recording child killed with SIGKILL: the store opens, the run reads as
 * interrupted and holds exactly what its last commit counted; a stream
 * (file or store) past the file size limit: the program is not ended and
 * the ranges not written are counted as dropped. */
#include "analysis/summary.h"
#include "record/recorder.h"
#include "store/store.h"
#include "stream_helpers.h"
#include "test.h"
#include "trace/import.h"
#include <gpuprof/gpuprof.h>
#include <pthread.h>
#include <signal.h>
#include <sqlite3.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long max_rss_kb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

static void store_path(char *buf, size_t n, const char *tag)
{
    snprintf(buf, n, "/tmp/gp_test_store_%s_%ld.db", tag, (long)getpid());
    gp_test_rm_db(buf);
}

/* A stream's path for the tests that run on a file and a store: the store
 * (removed) when store, else the file FILE_TAG.json (removed). */
static void stream_path(char *buf, size_t n, int store, const char *tag)
{
    if (store) {
        store_path(buf, n, tag);
    } else {
        snprintf(buf, n, "/tmp/gp_test_store_%s_%ld.json", tag, (long)getpid());
        unlink(buf);
    }
}

/* Forks a child that reports to its parent through a pipe: returns the
 * pid; *fd is the pipe's write end in the child, its read end in the
 * parent (stdout flushed first, so the child does not print it again). */
static pid_t fork_reporting(int *fd)
{
    int fds[2];
    ASSERT_EQ_INT(pipe(fds), 0);
    fflush(stdout);
    pid_t pid = fork();
    ASSERT(pid >= 0);
    close(fds[pid == 0 ? 0 : 1]);
    *fd = fds[pid == 0 ? 1 : 0];
    return pid;
}

typedef struct work {
    gp_profiler *p;
    long n;
    pthread_mutex_t *hold; /* locked before the second half (drain held back) */
    volatile int *ready;
} work;

static void *record(void *arg)
{
    work *w = arg;
    for (long i = 0; i < w->n; i++) {
        if (w->ready && i == w->n / 2) {
            *w->ready = 1;
            /* wait until the test holds the profiler's lock */
            while (*w->ready != 2) {
                struct timespec ts = {0, 1000000};
                nanosleep(&ts, NULL);
            }
        }
        gp_range_begin(w->p, "outer");
        gp_range_begin_ex(w->p, "inner", GP_DEV_CPU, GP_BACKEND_CPU, 8);
        gp_range_end(w->p);
        gp_range_end(w->p);
    }
    return NULL;
}

/* The summary row `name` of trace t (NULL when absent). */
static const gp_op_row *op_named(const gp_trace *t, const gp_summary *s, const char *name)
{
    for (size_t i = 0; i < s->n; i++)
        if (!strcmp(gp_trace_s(t, s->rows[i].name), name)) return &s->rows[i];
    return NULL;
}

/* Stream into a store: 10 M nested ranges on one thread in bounded memory; the
 * drain keeps up or the recording thread rolls over (never waits). */
TEST(store_stream_bounded_memory)
{
    char path[256];
    store_path(path, sizeof path, "rss");
    gp_profiler *p = gp_test_stream_create(path);
    ASSERT(p);
    long before = max_rss_kb();
    long per = GP_TEST_SANITIZED ? 500000 : 5000000; /* pairs: 2 ranges each */
    work w = {p, per, NULL, NULL};
    record(&w);
    gp_record_stats rs;
    ASSERT_EQ_INT(gp_record_stats_get(p, &rs), 0);
    long grown = max_rss_kb() - before;
    printf("# store stream: %ld ranges, kept %llu, aggregated %llu, peak RSS grew by %ld kB\n",
           2 * per, (unsigned long long)rs.kept, (unsigned long long)rs.aggregated, grown);
    ASSERT_EQ_INT(rs.kept + rs.aggregated, 2 * per);
    ASSERT_EQ_INT(rs.dropped, 0);
    /* the bound holds in the normal build (10 M ranges); under ASan its
     * quarantine keeps freed chunks (up to 256 MB), which reads as growth */
    if (!GP_TEST_SANITIZED) {
        ASSERT_CMP_INT(grown, <, 40 * 1024);
        ASSERT_CMP_INT(max_rss_kb(), <, 64 * 1024);
    }
    gp_profiler_destroy(p);
    gp_trace *t;
    gp_err err = {0};
    ASSERT_EQ_INT(gp_store_load(path, 0, &t, &err), 0);
    gp_summary s;
    ASSERT_EQ_INT(gp_summary_compute(t, &s), 0);
    const gp_op_row *outer = op_named(t, &s, "outer");
    ASSERT(outer);
    ASSERT_EQ_INT(outer->st.count, per);
    gp_summary_free(&s);
    gp_trace_destroy(t);
    gp_test_rm_db(path);
}

/* Two threads into a store, the second half of each recorded while the test
 * holds the profiler's lock (the drain cannot run: ranges roll over into the
 * inline aggregates and reach the store's range_stats at the end). The run
 * is listed complete; the loaded run's per-name counts, totals, min and max
 * equal the library's own results; counters and tracked memory are there. */
TEST(store_stream_exact_with_rollover)
{
    char path[256];
    store_path(path, sizeof path, "exact");
    gp_options o = {0};
    o.sink = GP_SINK_STREAM;
    o.stream_path = path;
    o.leak_report = 1;
    gp_profiler *p = gp_profiler_create(&o);
    ASSERT(p);
    volatile int ready[2] = {0, 0};
    pthread_t th[2];
    work w[2];
    /* the half recorded while the drain is held back (2 events per range,
     * 2 ranges per pair) must overflow the 64 x 2048-event backlog even
     * where sanitizers make the loop slow: >= 32768 pairs */
    long per = GP_TEST_SANITIZED ? 100000 : 200000;
    for (int i = 0; i < 2; i++) {
        w[i] = (work){p, per, NULL, &ready[i]};
        ASSERT_EQ_INT(pthread_create(&th[i], NULL, record, &w[i]), 0);
    }
    while (!ready[0] || !ready[1]) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    pthread_mutex_lock(&p->mu); /* holds the drain back */
    ready[0] = ready[1] = 2;
    struct timespec ts = {0, 300000000};
    nanosleep(&ts, NULL);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
    gp_counter(p, "queue depth", 3);
    gp_counter(p, "queue depth", 5);
    static char buf[64];
    ASSERT_EQ_INT(gp_mem_track(p, "buf", buf, 4096, NULL, 0, "f32"), 0);
    ASSERT_EQ_INT(gp_mem_untrack(p, buf), 0);
    gp_record_stats rs;
    ASSERT_EQ_INT(gp_record_stats_get(p, &rs), 0);
    printf("# kept %llu aggregated %llu dropped %llu\n", (unsigned long long)rs.kept,
           (unsigned long long)rs.aggregated, (unsigned long long)rs.dropped);
    ASSERT_CMP_INT(rs.aggregated, >, 0); /* the rollover was exercised */
    ASSERT_CMP_INT(rs.kept, >, 0);
    ASSERT_EQ_INT(rs.kept + rs.aggregated, 4 * per);
    gp_summary_row *r;
    size_t nr;
    ASSERT_EQ_INT(gp_summary_rows(p, &r, &nr), 0);
    int64_t want_total[2] = {0, 0}, want_min[2] = {0, 0}, want_max[2] = {0, 0};
    for (size_t i = 0; i < nr; i++)
        for (int k = 0; k < 2; k++)
            if (!strcmp(r[i].name, k ? "inner" : "outer")) {
                ASSERT_EQ_INT(r[i].count, 2 * per);
                want_total[k] = r[i].total_ns;
                want_min[k] = r[i].min_ns;
                want_max[k] = r[i].max_ns;
            }
    gp_summary_rows_free(r, nr);
    ASSERT_CMP_INT(want_total[0], >, 0);
    gp_profiler_destroy(p);

    gp_store_run_row *runs;
    size_t nruns;
    gp_err err = {0};
    ASSERT_EQ_INT(gp_store_runs(path, &runs, &nruns, &err), 0);
    ASSERT_EQ_INT(nruns, 1);
    ASSERT_EQ_INT(gp_store_run_state(&runs[0]), GP_RUN_COMPLETE);
    ASSERT_EQ_INT(runs[0].exit_status, 0);
    ASSERT_CMP_INT(runs[0].events, >=, (int64_t)rs.kept);
    ASSERT(strstr(runs[0].devices, "gpuprof") || strstr(runs[0].command, "test_libgpuprof_store"));
    gp_store_runs_free(runs, nruns);

    gp_trace *t;
    ASSERT_EQ_INT(gp_store_load(path, 0, &t, &err), 0);
    ASSERT_CMP_INT(t->aggs.n, >, 0);
    gp_summary s;
    ASSERT_EQ_INT(gp_summary_compute(t, &s), 0);
    for (int k = 0; k < 2; k++) {
        const gp_op_row *row = op_named(t, &s, k ? "inner" : "outer");
        ASSERT(row);
        ASSERT_EQ_INT(row->st.count, 2 * per);
        ASSERT_EQ_INT((int64_t)row->st.sum, want_total[k]);
        ASSERT_EQ_INT((int64_t)row->st.min, want_min[k]);
        ASSERT_EQ_INT((int64_t)row->st.max, want_max[k]);
        ASSERT_CMP_INT(row->agg_count, >, 0);
    }
    gp_summary_free(&s);
    /* "queue depth" 3, 5 and the tracker's memory.tracked_bytes 4096, 0 */
    ASSERT_EQ_INT(t->counters.n, 4);
    double sum = 0;
    for (size_t i = 0; i < t->counters.n; i++) sum += t->counters.v[i].value;
    ASSERT(sum == 3 + 5 + 4096);
    ASSERT_EQ_INT(t->mem_events.n, 2);
    ASSERT_EQ_INT(t->mem_events.v[0].bytes, 4096);
    ASSERT_EQ_INT(t->mem_events.v[1].bytes, -4096);
    gp_trace_destroy(t);
    gp_test_rm_db(path);
}

/* Events committed for the newest run (sum of processes.events), or -1. */
static int64_t committed(const char *path)
{
    sqlite3 *db = NULL;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        sqlite3_close(db);
        return -1;
    }
    sqlite3_busy_timeout(db, 5000);
    sqlite3_stmt *st = NULL;
    int64_t v = -1;
    if (sqlite3_prepare_v2(db, "SELECT sum(events) FROM processes", -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
        v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return v;
}

/* A child streams ranges into a store without end and is killed with
 * SIGKILL once some commits are in: the store opens, the run is listed as
 * interrupted, and the loaded run holds exactly the ranges of the last
 * commit (processes.events), each a whole "step" range. */
TEST(store_stream_survives_kill)
{
    char path[256];
    store_path(path, sizeof path, "kill");
    fflush(stdout);
    pid_t pid = fork();
    ASSERT(pid >= 0);
    if (pid == 0) gp_test_stream_forever(path, 0);
    int64_t seen = -1;
    for (int i = 0; i < 3000 && seen < 200000; i++) {
        struct timespec ts = {0, 10000000};
        nanosleep(&ts, NULL);
        seen = committed(path);
    }
    kill(pid, SIGKILL);
    int st = 0;
    ASSERT_EQ_INT(waitpid(pid, &st, 0), pid);
    ASSERT(WIFSIGNALED(st));
    ASSERT_CMP_INT(seen, >=, 200000);
    int64_t events = committed(path);
    ASSERT_CMP_INT(events, >=, seen);

    gp_store_run_row *runs;
    size_t nruns;
    gp_err err = {0};
    ASSERT_EQ_INT(gp_store_runs(path, &runs, &nruns, &err), 0);
    ASSERT_EQ_INT(nruns, 1);
    ASSERT_EQ_INT(gp_store_run_state(&runs[0]), GP_RUN_INTERRUPTED);
    gp_store_runs_free(runs, nruns);
    gp_trace *t;
    ASSERT_EQ_INT(gp_store_load(path, 0, &t, &err), 0);
    gp_summary s;
    ASSERT_EQ_INT(gp_summary_compute(t, &s), 0);
    const gp_op_row *step = op_named(t, &s, "step");
    ASSERT(step);
    ASSERT_EQ_INT(step->st.count, events);
    ASSERT_CMP_INT(step->st.min, >=, 0);
    gp_summary_free(&s);
    gp_trace_destroy(t);
    gp_test_rm_db(path);
}

/* A forked child streams into the same run under its own processes row,
 * with only what it recorded after the fork (the parent writes the rest,
 * nothing twice); the parent ends the run. */
TEST(store_stream_fork)
{
    char path[256];
    store_path(path, sizeof path, "fork");
    gp_profiler *p = gp_test_stream_create(path);
    ASSERT(p);
    for (int i = 0; i < 1000; i++) {
        gp_range_begin(p, "pre");
        gp_range_end(p);
    }
    fflush(stdout);
    pid_t pid = fork();
    ASSERT(pid >= 0);
    if (pid == 0) {
        for (int i = 0; i < 3000; i++) {
            gp_range_begin(p, "child");
            gp_range_end(p);
        }
        gp_profiler_destroy(p);
        _exit(0);
    }
    for (int i = 0; i < 2000; i++) {
        gp_range_begin(p, "post");
        gp_range_end(p);
    }
    int st = 0;
    ASSERT_EQ_INT(waitpid(pid, &st, 0), pid);
    ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    gp_profiler_destroy(p);
    gp_store_run_row *runs;
    size_t nruns;
    gp_err err = {0};
    ASSERT_EQ_INT(gp_store_runs(path, &runs, &nruns, &err), 0);
    ASSERT_EQ_INT(nruns, 1);
    ASSERT_EQ_INT(runs[0].processes, 2);
    ASSERT_EQ_INT(runs[0].events, 6000);
    ASSERT_EQ_INT(gp_store_run_state(&runs[0]), GP_RUN_COMPLETE);
    gp_store_runs_free(runs, nruns);
    gp_trace *t;
    ASSERT_EQ_INT(gp_store_load(path, 0, &t, &err), 0);
    gp_summary s;
    ASSERT_EQ_INT(gp_summary_compute(t, &s), 0);
    const char *names[3] = {"pre", "child", "post"};
    const uint64_t want[3] = {1000, 3000, 2000};
    for (int k = 0; k < 3; k++) {
        const gp_op_row *r = op_named(t, &s, names[k]);
        ASSERT(r);
        ASSERT_EQ_INT(r->st.count, want[k]);
    }
    gp_summary_free(&s);
    gp_trace_destroy(t);
    gp_test_rm_db(path);
}

/* the RSS test runs first: later tests raise the process's peak */
/* The child of stream_write_fails_counted: records 400,000 ranges and
 * 4,000 counter samples into a
 * stream at path under a file size limit of `limit` bytes, with a results
 * call (which drains in this thread) every 1,000, and sends its record
 * stats and last error to fd. */
static void limited_child(const char *path, rlim_t limit, int fd)
{
    signal(SIGXFSZ, SIG_DFL); /* a write past the limit would end the process */
    struct rlimit rl = {limit, limit};
    if (setrlimit(RLIMIT_FSIZE, &rl)) _exit(2);
    gp_profiler *p = gp_test_stream_create(path);
    if (!p) _exit(3);
    for (int r = 0; r < 400; r++) {
        for (int i = 0; i < 1000; i++) {
            gp_range_begin(p, "step");
            gp_range_end(p);
            if (i % 100 == 0) gp_counter(p, "queue", i); /* 10 samples a round */
        }
        gp_summary_row *rows;
        size_t n;
        if (gp_summary_rows(p, &rows, &n)) _exit(4);
        if (n != 1 || rows[0].count != (uint64_t)(r + 1) * 1000) _exit(5); /* stats stay exact */
        gp_summary_rows_free(rows, n);
    }
    gp_record_stats st;
    gp_record_stats_get(p, &st);
    uint64_t v[3] = {st.kept, st.dropped, st.aggregated};
    char e[256];
    snprintf(e, sizeof e, "%s", gp_last_error(p));
    if (write(fd, v, sizeof v) != (ssize_t)sizeof v || write(fd, e, sizeof e) != (ssize_t)sizeof e)
        _exit(6);
    gp_profiler_destroy(p);
    _exit(0);
}

/* A stream that reaches the file size limit (as a full disk: the write
 * fails) neither ends the program (SIGXFSZ; before, the store's close
 * checkpoint in the program's thread raised it) nor hides the loss: the
 * ranges not written are dropped in gp_record_stats (before: counted as
 * kept, and nothing in gp_last_error for the store), kept + dropped +
 * aggregated is every range, and a file holds exactly the kept ones. */
TEST(stream_write_fails_counted)
{
    for (int store = 0; store < 2; store++) {
        char path[256];
        stream_path(path, sizeof path, store, "fsize");
        int fd;
        pid_t pid = fork_reporting(&fd);
        if (pid == 0) limited_child(path, store ? 2 << 20 : 64 << 10, fd);
        uint64_t v[3] = {0, 0, 0};
        char e[256] = "";
        ssize_t got = read(fd, v, sizeof v);
        ssize_t got2 = read(fd, e, sizeof e);
        close(fd);
        int ws = 0;
        ASSERT_EQ_INT(waitpid(pid, &ws, 0), pid);
        if (WIFSIGNALED(ws)) printf("  child ended by signal %d\n", WTERMSIG(ws));
        ASSERT(WIFEXITED(ws));
        ASSERT_EQ_INT(WEXITSTATUS(ws), 0);
        ASSERT_EQ_INT(got, (ssize_t)sizeof v);
        ASSERT_EQ_INT(got2, (ssize_t)sizeof e);
        e[sizeof e - 1] = 0;
        ASSERT_CMP_INT(v[1], >, 0);
        ASSERT_CMP_INT(v[0], >, 0);
        if (store) {
            ASSERT_CONTAINS(e, "cannot be written");
            /* the store holds exactly the kept ranges, and the counter
             * samples not in it are the dropped values: the writer's
             * drops are counted by kind (before, every event it dropped,
             * counter samples too, was taken off the kept ranges) */
            gp_trace *t = NULL;
            gp_err err = {0};
            ASSERT_EQ_INT(gp_store_load(path, 0, &t, &err), 0);
            gp_summary s;
            ASSERT_EQ_INT(gp_summary_compute(t, &s), 0);
            const gp_op_row *step = op_named(t, &s, "step");
            ASSERT(step);
            ASSERT_EQ_INT(step->st.count, v[0]);
            ASSERT_CMP_INT(t->counters.n, <, 4000);
            ASSERT_EQ_INT(v[0] + v[1] + v[2], 400000 + (4000 - t->counters.n));
            gp_summary_free(&s);
            gp_trace_destroy(t);
            gp_test_rm_db(path);
            continue;
        }
        ASSERT_CONTAINS(e, "File too large");
        gp_trace *t = NULL;
        gp_err err = {0};
        gp_import_opts io = {0};
        ASSERT_EQ_INT(gp_import_json_file(path, &io, &t, &err), 0);
        ASSERT_EQ_INT(t->meta.unterminated, 1);
        gp_summary s;
        ASSERT_EQ_INT(gp_summary_compute(t, &s), 0);
        const gp_op_row *step = op_named(t, &s, "step");
        ASSERT(step);
        ASSERT_EQ_INT(step->st.count, v[0]); /* the file holds exactly the kept ranges */
        ASSERT_CMP_INT(t->counters.n, <=, 4000);
        ASSERT_EQ_INT(v[0] + v[1] + v[2], 400000 + (4000 - t->counters.n));
        gp_summary_free(&s);
        gp_trace_destroy(t);
        unlink(path);
    }
}

/* gp_profiler_reset on a stream restarts the results, not the output: the
 * file or store holds every range recorded, those of before each reset
 * included (their events, and the ranges aggregated inline as rollover
 * rows, merged per name across resets), while gp_summary_rows and
 * gp_record_stats count from the last reset. Before, the ranges
 * aggregated inline before a reset were missing from the output (of
 * 1,000,010 ranges the file held 245,770), and the results after a reset
 * still counted the ranges streamed before it. */
TEST(stream_reset_keeps_output)
{
    for (int store = 0; store < 2; store++) {
        char path[256];
        stream_path(path, sizeof path, store, "reset");
        gp_profiler *p = gp_test_stream_create(path);
        ASSERT(p);
        for (int round = 0; round < 3; round++) {
            for (int i = 0; i < 400000; i++) { /* faster than the drain: most aggregated */
                gp_range_begin(p, "a");
                gp_range_end(p);
            }
            gp_record_stats st;
            gp_record_stats_get(p, &st);
            ASSERT_EQ_INT(st.kept + st.aggregated + st.dropped, 400000);
            if (round == 0) ASSERT_CMP_INT(st.aggregated, >, 0);
            gp_profiler_reset(p);
        }
        for (int i = 0; i < 10; i++) {
            gp_range_begin(p, "b");
            gp_range_end(p);
        }
        gp_summary_row *rows;
        size_t n;
        ASSERT_EQ_INT(gp_summary_rows(p, &rows, &n), 0);
        ASSERT_EQ_INT(n, 1); /* "a" was reset */
        ASSERT_EQ_STR(rows[0].name, "b");
        ASSERT_EQ_INT(rows[0].count, 10);
        gp_summary_rows_free(rows, n);
        gp_record_stats st;
        gp_record_stats_get(p, &st);
        ASSERT_EQ_INT(st.kept + st.aggregated + st.dropped, 10);
        gp_profiler_destroy(p);
        gp_trace *t = NULL;
        gp_err err = {0};
        if (store) {
            ASSERT_EQ_INT(gp_store_load(path, 0, &t, &err), 0);
        } else {
            gp_import_opts io = {0};
            ASSERT_EQ_INT(gp_import_json_file(path, &io, &t, &err), 0);
        }
        gp_summary s;
        ASSERT_EQ_INT(gp_summary_compute(t, &s), 0);
        const gp_op_row *a = op_named(t, &s, "a"), *b = op_named(t, &s, "b");
        ASSERT(a && b);
        printf("  %s: a %llu (%llu as rollover rows), b %llu\n", store ? "store" : "file",
               (unsigned long long)a->st.count, (unsigned long long)a->agg_count,
               (unsigned long long)b->st.count);
        ASSERT_EQ_INT(a->st.count, 1200000);
        ASSERT_EQ_INT(b->st.count, 10);
        gp_summary_free(&s);
        gp_trace_destroy(t);
        if (store)
            gp_test_rm_db(path);
        else
            unlink(path);
    }
}

/* One case of store_stream_full_disk: a child streams 3 M ranges into a
 * store on a tmpfs of `size` (faster than the drain: most are aggregated);
 * fill: once the run has begun, another file fills the disk to the last
 * page (every later write of the store fails), else the events fill it. */
static void full_disk_case(const char *size, int fill)
{
    char dir[] = "/tmp/gp_test_fulldisk_XXXXXX";
    ASSERT(mkdtemp(dir));
    char opts[64];
    snprintf(opts, sizeof opts, "size=%s,mode=0700", size);
    if (mount("tmpfs", dir, "tmpfs", 0, opts) != 0) {
        int e = errno;
        rmdir(dir);
        SKIP(e == EPERM ? "cannot mount a tmpfs here (no CAP_SYS_ADMIN)" : "cannot mount a tmpfs");
    }
    char path[256];
    snprintf(path, sizeof path, "%s/run.db", dir);
    int rfd;
    pid_t pid = fork_reporting(&rfd);
    if (pid == 0) {
        gp_profiler *p = gp_test_stream_create(path);
        if (!p) _exit(3);
        char filler[300];
        snprintf(filler, sizeof filler, "%s/filler", dir);
        int fd = fill ? open(filler, O_WRONLY | O_CREAT | O_TRUNC, 0600) : -1;
        static char block[4096];
        while (fd >= 0 && write(fd, block, sizeof block) > 0) {
        }
        if (fd >= 0) close(fd);
        for (long i = 0; i < 3000000; i++) {
            gp_range_begin(p, "step");
            gp_range_end(p);
        }
        gp_record_stats st;
        gp_record_stats_get(p, &st);
        uint64_t v[3] = {st.kept, st.dropped, st.aggregated};
        gp_profiler_destroy(p);
        _exit(write(rfd, v, sizeof v) == (ssize_t)sizeof v ? 0 : 4);
    }
    uint64_t v[3] = {0, 0, 0};
    ssize_t got = read(rfd, v, sizeof v);
    close(rfd);
    int ws = 0;
    ASSERT_EQ_INT(waitpid(pid, &ws, 0), pid);
    gp_store_run_row *runs = NULL;
    size_t nruns = 0;
    gp_err err = {0};
    int rc = gp_store_runs(path, &runs, &nruns, &err);
    char ls[600];
    snprintf(ls, sizeof ls, "ls %s | grep -c reserve", dir);
    FILE *f = popen(ls, "r");
    int reserves = -1;
    if (f && fscanf(f, "%d", &reserves) != 1) reserves = -1;
    if (f) pclose(f);
    gp_run_state state = nruns ? gp_store_run_state(&runs[0]) : GP_RUN_RUNNING;
    int64_t exit_status = nruns ? runs[0].exit_status : -99, dropped = nruns ? runs[0].dropped : -1;
    int64_t events = nruns ? runs[0].events : -1;
    gp_store_runs_free(runs, nruns);
    /* what the store holds of "step": the kept ranges as events, the
     * aggregated ones as statistics written at the end (in the room) */
    int64_t in_store = -1;
    gp_trace *t = NULL;
    if (gp_store_load(path, 0, &t, &err) == 0) {
        gp_summary s;
        if (gp_summary_compute(t, &s) == 0) {
            const gp_op_row *step = op_named(t, &s, "step");
            in_store = step ? (int64_t)step->st.count : 0;
            gp_summary_free(&s);
        }
        gp_trace_destroy(t);
    }
    umount(dir);
    rmdir(dir);
    printf("  %s, %s: kept %llu dropped %llu aggregated %llu; run: exit %lld dropped %lld events "
           "%lld, \"step\" in the store %lld\n",
           size, fill ? "filled by another file" : "filled by the events", (unsigned long long)v[0],
           (unsigned long long)v[1], (unsigned long long)v[2], (long long)exit_status,
           (long long)dropped, (long long)events, (long long)in_store);
    ASSERT(WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
    ASSERT_EQ_INT(got, (ssize_t)sizeof v);
    ASSERT_EQ_INT(v[0] + v[1] + v[2], 3000000);
    ASSERT_CMP_INT(v[1], >, 0); /* the disk did fill */
    ASSERT_CMP_INT(v[2], >, 0);
    ASSERT_EQ_INT(rc, 0);
    ASSERT_EQ_INT(nruns, 1);
    ASSERT_EQ_INT(exit_status, 0);
    ASSERT_EQ_INT(state, GP_RUN_INCOMPLETE);
    ASSERT_EQ_INT(dropped, (int64_t)v[1]);
    ASSERT_EQ_INT(events, (int64_t)v[0]);
    ASSERT_EQ_INT(reserves, 0);
    ASSERT_EQ_INT(in_store, (int64_t)(v[0] + v[2]));
}

/* A store stream on a full disk still records how the run ended: finished
 * with exit status 0 and every dropped range counted (INCOMPLETE), the
 * aggregated ranges' statistics in the store under their name. Before:
 * when the events filled the disk the run stayed "interrupted" with
 * nothing dropped (its last writes found no space), and when another file
 * did, the statistics were stored without their name (the writer's batch
 * that held the name had failed; shown as a nameless GPU kernel). The
 * run's 1 MiB reserve beside the store (made at its begin, removed before
 * its last writes) makes the room, and the statistics carry their texts;
 * no reserve is left behind. Needs tmpfs mounts of its own: skipped where
 * mount(2) is not allowed. */
TEST(store_stream_full_disk)
{
    full_disk_case("8m", 0);
    full_disk_case("16m", 1);
}

TEST_MAIN(store_stream_bounded_memory, store_stream_exact_with_rollover, store_stream_survives_kill,
          store_stream_fork, stream_write_fails_counted, store_stream_full_disk,
          stream_reset_keeps_output)
