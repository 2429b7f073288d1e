/* tests/test_store.c: the SQLite run store: writer thread, reader into the
 * trace model, runs bookkeeping, redaction, crash safety under SIGKILL. */
#include "core/clock.h"
#include "store/store.h"
#include "core/redact.h"
#include "test.h"
#include "trace/load.h"
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static void tmp_path(char *buf, size_t n, const char *tag)
{
    snprintf(buf, n, "/tmp/gp_test_store_%s_%d.db", tag, (int)getpid());
    gp_test_rm_db(buf);
}

static int64_t new_run(const char *path)
{
    gp_store *s;
    gp_err err = {0};
    if (gp_store_open(path, &s, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return -1;
    }
    gp_store_run_info ri = {"prog --flag", "host", gp_clock_wall_ns(), gp_clock_mono_ns(), 1};
    int64_t run = gp_store_run_begin(s, &ri, &err);
    gp_store_close(s);
    return run;
}

typedef struct thr_arg {
    gp_store_writer *w;
    int idx, n;
} thr_arg;

static void *producer(void *a_)
{
    thr_arg *a = a_;
    uint32_t th = gp_store_writer_track(a->w, GP_STORE_TRACK_THREAD, 100 + a->idx, GP_NONE, NULL);
    uint32_t q = gp_store_writer_track(a->w, GP_STORE_TRACK_QUEUE, 7, 0, "queue 7");
    uint32_t cat = gp_store_writer_str(a->w, "runtime");
    uint32_t launch = gp_store_writer_str(a->w, "clEnqueueNDRangeKernel");
    char kn[32];
    snprintf(kn, sizeof kn, "kern%d", a->idx);
    uint32_t kname = gp_store_writer_str(a->w, kn);
    for (int i = 0; i < a->n; i++) {
        gp_store_ev ev[2];
        int64_t corr = (int64_t)a->idx * 1000000 + i;
        gp_store_ev_init(&ev[0], GP_ST_API);
        ev[0].track = th;
        ev[0].cat = cat;
        ev[0].name = launch;
        ev[0].ts = 1000000 + i * 1000;
        ev[0].dur = 100;
        ev[0].corr = corr;
        gp_store_ev_init(&ev[1], GP_ST_KERNEL);
        ev[1].track = q;
        ev[1].name = kname;
        ev[1].ts = 1000000 + i * 1000 + 200;
        ev[1].dur = 500;
        ev[1].corr = corr;
        ev[1].grid[0] = 64;
        ev[1].block[0] = 32;
        ev[1].device = 0;
        ev[1].stream = 7;
        gp_store_writer_put(a->w, ev, 2);
    }
    return NULL;
}

TEST(store_write_read)
{
    char path[256];
    tmp_path(path, sizeof path, "rw");
    int64_t run = new_run(path);
    ASSERT(run > 0);
    gp_err err = {0};
    gp_store_writer_opts o = {50, 0, "test"};
    gp_store_writer *w = gp_store_writer_start(path, run, &o, &err);
    ASSERT(w != NULL);
    gp_store_writer_device(w, "opencl", "cpu-device");
    enum { T = 4, N = 5000 };
    pthread_t th[T];
    thr_arg a[T];
    for (int i = 0; i < T; i++) {
        a[i] = (thr_arg){w, i, N};
        pthread_create(&th[i], NULL, producer, &a[i]);
    }
    for (int i = 0; i < T; i++) pthread_join(th[i], NULL);
    gp_store_ev m;
    gp_store_ev_init(&m, GP_ST_MEM);
    m.track = gp_store_writer_track(w, GP_STORE_TRACK_THREAD, 100, GP_NONE, NULL);
    m.ts = 2000000;
    m.bytes = 4096;
    m.addr = 0x1000;
    gp_store_writer_put(w, &m, 1);
    gp_store_writer_add_dropped(w, 3);
    ASSERT_EQ_INT(gp_store_writer_stop(w), 0);
    gp_store *s;
    ASSERT_EQ_INT(gp_store_open(path, &s, &err), 0);
    ASSERT_EQ_INT(gp_store_run_end(s, run, 0, 12345, 0, &err), 0);
    gp_store_close(s);

    gp_trace *t = NULL;
    int rc = gp_store_load(path, 0, &t, &err);
    if (rc) fprintf(stderr, "%s\n", err.msg);
    ASSERT_EQ_INT(rc, 0);
    ASSERT_EQ_INT((long long)t->slices.n, 2LL * T * N);
    ASSERT_EQ_INT((long long)t->flows.n, 2LL * T * N);
    ASSERT_EQ_INT((long long)t->mem_events.n, 1);
    size_t kernels = 0, launches = 0;
    for (size_t i = 0; i < t->slices.n; i++) {
        const gp_slice *sl = &t->slices.v[i];
        gp_kind k = gp_slice_kind(t, sl);
        if (k == GP_K_KERNEL) {
            kernels++;
            ASSERT(sl->gpu != GP_NO_INDEX);
            ASSERT_EQ_INT(t->gpu_info.v[sl->gpu].grid[0], 64);
            ASSERT_EQ_INT(t->tracks.v[sl->track].type, GP_TRACK_GPU);
            ASSERT_EQ_INT((int)t->tracks.v[sl->track].stream, 7);
            ASSERT_EQ_INT(sl->dur, 500);
            ASSERT(!strncmp(gp_trace_s(t, sl->name), "kern", 4));
        } else if (k == GP_K_RUNTIME) {
            launches++;
            ASSERT_EQ_STR(gp_trace_s(t, sl->name), "clEnqueueNDRangeKernel");
        }
    }
    ASSERT_EQ_INT((long long)kernels, (long long)T * N);
    ASSERT_EQ_INT((long long)launches, (long long)T * N);
    ASSERT_EQ_INT(t->t_begin, 0);
    gp_trace_destroy(t);

    gp_store_run_row *rows;
    size_t nr;
    ASSERT_EQ_INT(gp_store_runs(path, &rows, &nr, &err), 0);
    ASSERT_EQ_INT((long long)nr, 1);
    ASSERT_EQ_INT(rows[0].exit_status, 0);
    ASSERT_EQ_INT(rows[0].duration_ns, 12345);
    ASSERT_EQ_INT(rows[0].dropped, 3);
    ASSERT_EQ_INT(rows[0].events, 2LL * T * N + 1);
    ASSERT_EQ_STR(rows[0].devices, "opencl: cpu-device");
    gp_store_runs_free(rows, nr);

    /* the path loader takes FILE and FILE:ID; a missing run is an error */
    char spec[300];
    snprintf(spec, sizeof spec, "%s:%lld", path, (long long)run);
    char *p2[] = {spec};
    size_t cnt = 0;
    char **files = gp_paths_expand(p2, 1, &cnt, &err);
    ASSERT(files != NULL);
    ASSERT_EQ_INT((long long)cnt, 1);
    gp_trace *tr[1];
    ASSERT_EQ_INT(gp_load_many(files, 1, 1, tr, &err), 0);
    ASSERT_EQ_INT((long long)tr[0]->slices.n, 2LL * T * N);
    gp_trace_destroy(tr[0]);
    gp_paths_free(files);
    ASSERT(gp_store_load(path, run + 5, &t, &err) == GP_ENOTFOUND);
    ASSERT_CONTAINS(err.msg, "no run");
    unlink(path);
}

TEST(store_redact)
{
    char *argv[] = {"train.py",
                    "--password",
                    "hunter2",
                    "--api-key=abc",
                    "TOKEN=xyz",
                    "--lr",
                    "0.1",
                    "https://bob:pw1@example.com/x",
                    "ghp_abcdefgh12345678",
                    "aB3dE5gH7jK9mN1pQ3rS5tU7",
                    "plain words"};
    char *s = gp_redact_argv(argv, 11);
    ASSERT_EQ_STR(s, "train.py --password '<redacted>' '--api-key=<redacted>' 'TOKEN=<redacted>' "
                     "--lr 0.1 'https://bob:<redacted>@example.com/x' '<redacted>' '<redacted>' "
                     "'plain words'");
    ASSERT(!strstr(s, "hunter2") && !strstr(s, "pw1") && !strstr(s, "xyz"));
    free(s);
}

/* Runs sql (one integer result) on the store; GP_NONE on failure. */
static int64_t sql_int(const char *path, const char *sql)
{
    FILE *f = tmpfile();
    gp_err err = {0};
    if (!f) return GP_NONE;
    int64_t v = GP_NONE;
    if (gp_store_sql(path, sql, 0, f, &err) == 0) {
        char line[256];
        rewind(f);
        while (fgets(line, sizeof line, f)) /* header, then the value */
            if (line[0] >= '0' && line[0] <= '9') v = strtoll(line, NULL, 10);
    }
    fclose(f);
    return v;
}

/* Runs sql on the store; its text output ("a|b" lines after a header) in
 * out. Returns gp_store_sql's result. */
static int sql_text(const char *path, const char *sql, char *out, size_t n)
{
    FILE *f = tmpfile();
    gp_err err = {0};
    out[0] = 0;
    if (!f) return -1;
    int rc = gp_store_sql(path, sql, 0, f, &err);
    rewind(f);
    out[fread(out, 1, n - 1, f)] = 0;
    fclose(f);
    return rc;
}

#define KILL_CAP ((size_t)4 << 20)

/* A child writes events with ts = 0, 1, 2, ... as fast as it can; it is
 * killed with SIGKILL. The store must open and hold exactly ts 0..n-1, and
 * (the promise itself) every event queued before the newest commit's
 * taken_mono_ns: the child notes in shared memory when each put returned,
 * so event n, the first one missing, must have been queued after it. */
TEST(store_sigkill_prefix)
{
    char path[256];
    tmp_path(path, sizeof path, "kill");
    int64_t run = new_run(path);
    ASSERT(run > 0);
    int64_t *after = mmap(NULL, KILL_CAP * sizeof *after, PROT_READ | PROT_WRITE,
                          MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    ASSERT(after != MAP_FAILED);
    pid_t pid = fork();
    if (pid == 0) {
        gp_err err = {0};
        gp_store_writer_opts o = {100, 0, "test"};
        gp_store_writer *w = gp_store_writer_start(path, run, &o, &err);
        if (!w) _exit(3);
        uint32_t tr = gp_store_writer_track(w, GP_STORE_TRACK_QUEUE, 1, 0, "q");
        uint32_t nm = gp_store_writer_str(w, "k");
        for (int64_t i = 0;; i++) {
            gp_store_ev e;
            gp_store_ev_init(&e, GP_ST_KERNEL);
            e.track = tr;
            e.name = nm;
            e.ts = i;
            e.dur = 1;
            gp_store_writer_put(w, &e, 1);
            if ((size_t)i < KILL_CAP) after[i] = gp_clock_mono_ns();
            if ((i & 1023) == 0) usleep(2000); /* ~0.5 M events/s: below the writer's rate */
        }
    }
    ASSERT(pid > 0);
    /* kill it once it has committed something (a loaded machine may start it slowly) */
    for (int i = 0; i < 200; i++) {
        gp_store_run_row *rows = NULL;
        size_t nr = 0;
        gp_err e2 = {0};
        int64_t ev = 0;
        if (gp_store_runs(path, &rows, &nr, &e2) == 0 && nr == 1) ev = rows[0].events;
        gp_store_runs_free(rows, nr);
        if (ev > 1000) break;
        usleep(50 * 1000);
    }
    usleep(300 * 1000);
    int64_t killed_at = gp_clock_mono_ns();
    kill(pid, SIGKILL);
    int status;
    waitpid(pid, &status, 0);
    ASSERT(WIFSIGNALED(status));
    (void)killed_at;
    gp_trace *t = NULL;
    gp_err err = {0};
    int rc = gp_store_load(path, run, &t, &err);
    if (rc) fprintf(stderr, "%s\n", err.msg);
    ASSERT_EQ_INT(rc, 0);
    ASSERT(t->slices.n > 1000); /* ~0.6 s of commits every 100 ms */
    int64_t t0 = t->slices.v[0].ts;
    for (size_t i = 0; i < t->slices.n; i++) ASSERT_EQ_INT(t->slices.v[i].ts - t0, (int64_t)i);
    size_t n = t->slices.n;
    int64_t taken = sql_int(path, "SELECT max(taken_mono_ns) FROM commits");
    ASSERT(taken != GP_NONE && taken < killed_at);
    printf("  %zu events readable after SIGKILL; newest commit took the queue %.1f ms before the "
           "kill\n",
           n, (double)(killed_at - taken) / 1e6);
    if (n < KILL_CAP && after[n] != 0) /* 0: killed between its put and the note (inconclusive) */
        ASSERT(after[n] >= taken);
    ASSERT_EQ_INT(sql_int(path, "SELECT events FROM commits"), (int64_t)n);
    munmap(after, KILL_CAP * sizeof *after);
    gp_trace_destroy(t);
    unlink(path);
}

static void put_kernels(gp_store_writer *w, int64_t ts0, int n)
{
    uint32_t tr = gp_store_writer_track(w, GP_STORE_TRACK_QUEUE, 1, 0, "q");
    uint32_t nm = gp_store_writer_str(w, "k");
    for (int i = 0; i < n; i++) {
        gp_store_ev e;
        gp_store_ev_init(&e, GP_ST_KERNEL);
        e.track = tr;
        e.name = nm;
        e.ts = ts0 + i;
        e.dur = 1;
        gp_store_writer_put(w, &e, 1);
    }
}

/* fork without exec: the parent keeps its processes row and what it queued
 * before the fork; the child gets a row of its own under the same run, with
 * its own strings and tracks, and none of the parent's events. */
TEST(store_fork)
{
    char path[256];
    tmp_path(path, sizeof path, "fork");
    int64_t run = new_run(path);
    ASSERT(run > 0);
    gp_err err = {0};
    gp_store_writer_opts o = {50, 0, "test"};
    gp_store_writer *w = gp_store_writer_start(path, run, &o, &err);
    ASSERT(w != NULL);
    put_kernels(w, 0, 100); /* queued, not yet committed: the parent's */
    uint32_t t555 = gp_store_writer_track(w, GP_STORE_TRACK_THREAD, 555, GP_NONE, NULL);
    for (int round = 0; round < 2; round++) {
        gp_store_writer_fork_prepare(w);
        pid_t pid = fork();
        if (pid == 0) {
            gp_store_writer_fork_child(w);
            put_kernels(w, 1000 * (round + 1), 50 + round);
            /* a parent's thread track is written in the child only when used there */
            if (round == 0 &&
                gp_store_writer_track(w, GP_STORE_TRACK_THREAD, 555, GP_NONE, NULL) != t555)
                _exit(4);
            _exit(gp_store_writer_stop(w) ? 3 : 0);
        }
        gp_store_writer_fork_parent(w);
        ASSERT(pid > 0);
        put_kernels(w, 100 + 30 * round, 30);
        int status = 0;
        ASSERT(waitpid(pid, &status, 0) == pid);
        ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    ASSERT_EQ_INT(gp_store_writer_stop(w), 0);
    char out[1024];
    ASSERT_EQ_INT(sql_text(path,
                           "SELECT p.id, p.run, p.ppid = (SELECT pid FROM processes WHERE id = 1), "
                           "count(k.ts), min(k.ts), max(k.ts), p.events, p.dropped, p.end_mono_ns "
                           "> p.start_mono_ns, (SELECT count(*) FROM strings s WHERE s.proc = p.id "
                           "AND s.s = 'k') FROM processes p LEFT JOIN kernels k ON k.proc = p.id "
                           "GROUP BY p.id ORDER BY p.id",
                           out, sizeof out),
                  0);
    char want[512];
    snprintf(want, sizeof want,
             "1|%lld|0|160|0|159|160|0|1|1\n2|%lld|1|50|1000|1049|50|0|1|1\n"
             "3|%lld|1|51|2000|2050|51|0|1|1\n",
             (long long)run, (long long)run, (long long)run);
    ASSERT_CONTAINS(out, want);
    ASSERT_EQ_INT(sql_int(path, "SELECT count(*) FROM tracks WHERE type = 0 AND tid = 555"), 2);
    ASSERT_EQ_INT(sql_int(path, "SELECT count(*) FROM tracks WHERE proc = 3 AND type = 0"), 0);
    unlink(path);
}

/* sql (no result) on the store through SQLite directly, as another tool would. */
static int sql_exec(const char *path, const char *sql)
{
    sqlite3 *db;
    if (sqlite3_open(path, &db) != SQLITE_OK) return -1;
    sqlite3_busy_timeout(db, 5000);
    int rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
    sqlite3_close(db);
    return rc;
}

/* The kernels' ts of a run as the loader reads them, in order, as text. */
static void run_kernel_ts(const char *path, int64_t run, char *out, size_t n)
{
    gp_trace *t = NULL;
    gp_err err = {0};
    out[0] = 0;
    if (gp_store_load(path, run, &t, &err)) {
        snprintf(out, n, "error: %s", err.msg);
        return;
    }
    size_t at = 0;
    for (size_t i = 0; i < t->slices.n && at + 24 < n; i++)
        if (gp_slice_kind(t, &t->slices.v[i]) == GP_K_KERNEL)
            at += (size_t)snprintf(out + at, n - at, "%lld ", (long long)t->slices.v[i].ts);
    gp_trace_destroy(t);
}

/* The writer binds a statement parameter only when its value changed since
 * the statement's previous step: every column of every row reads back as
 * written when values repeat, change, and go from NULL to a value and back,
 * in the 64-row statements and the one-row one (the remainder), across
 * commits, and for a counter's double (NaN, -0.0 and 0.0 included). */
/* A writer (commit period commit_ms) on a new store at a temporary path
 * named after tag, holding one run, with a queue track; *q is the track. */
static gp_store_writer *writer_on_new_store(char *path, size_t n, const char *tag, int commit_ms,
                                            uint32_t *q)
{
    tmp_path(path, n, tag);
    int64_t run = new_run(path);
    ASSERT(run > 0);
    gp_err err = {0};
    gp_store_writer_opts o = {commit_ms, 0, "test"};
    gp_store_writer *w = gp_store_writer_start(path, run, &o, &err);
    ASSERT(w != NULL);
    *q = gp_store_writer_track(w, GP_STORE_TRACK_QUEUE, 1, 0, "q");
    return w;
}

/* Queues kernels first .. first + n - 1 named kn on track q, B at a time:
 * ts = i, corr = i, dur = 1000 + i % 977. */
static void queue_kernels(gp_store_writer *w, uint32_t q, uint32_t kn, int64_t first, int64_t n)
{
    enum { B = 1000 };
    gp_store_ev ev[B];
    for (int64_t i = first; i < first + n;) {
        int k = 0;
        for (; k < B && i < first + n; k++, i++) {
            gp_store_ev_init(&ev[k], GP_ST_KERNEL);
            ev[k].track = q;
            ev[k].name = kn;
            ev[k].ts = i;
            ev[k].dur = 1000 + i % 977;
            ev[k].corr = i;
        }
        gp_store_writer_put(w, ev, (size_t)k);
    }
}

TEST(store_bind_changes)
{
    char path[256];
    uint32_t q;
    gp_store_writer *w = writer_on_new_store(path, sizeof path, "bind", 60000, &q);
    uint32_t cn = gp_store_writer_str(w, "c");
    uint32_t names[3] = {gp_store_writer_str(w, "k0"), gp_store_writer_str(w, "k1"),
                         gp_store_writer_str(w, "k2")};
    enum { N = 300 };
    static const double vals[] = {1.5, 1.5, -0.0, 0.0, NAN, NAN, 2.0};
    for (int i = 0; i < N; i++) {
        gp_store_ev e;
        gp_store_ev_init(&e, GP_ST_KERNEL);
        e.track = q;
        e.name = names[(i / 50) % 3];
        e.ts = 1000 + i;
        e.dur = i % 7 ? 5 : 9;
        e.corr = i % 3 ? i : GP_NONE;
        e.device = (i / 70) % 2 ? GP_NONE : 1;
        e.stream = i / 64;
        e.grid[0] = i / 64 + 1;
        e.block[1] = i % 2;
        e.registers = i % 5 == 0 ? GP_NONE : 32;
        gp_store_writer_put(w, &e, 1);
        gp_store_ev c;
        gp_store_ev_init(&c, GP_ST_COUNTER);
        c.track = q;
        c.name = cn;
        c.ts = 1000 + i;
        c.value = vals[i % 7];
        gp_store_writer_put(w, &c, 1);
        if (i == 130 || i == 131) gp_store_writer_flush(w); /* commits of 131 and 1 events */
    }
    ASSERT_EQ_INT(gp_store_writer_stop(w), 0);
    sqlite3 *db;
    ASSERT_EQ_INT(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    sqlite3_stmt *st;
    ASSERT_EQ_INT(sqlite3_prepare_v2(db,
                                     "SELECT k.ts, s.s, k.dur, k.corr, k.device, k.stream, "
                                     "k.grid_x, k.block_y, k.registers, c.value FROM kernels k "
                                     "JOIN strings s ON s.proc = k.proc AND s.id = k.name JOIN "
                                     "counters c ON c.proc = k.proc AND c.ts = k.ts ORDER BY k.ts",
                                     -1, &st, NULL),
                  SQLITE_OK);
    int i = 0;
    for (; sqlite3_step(st) == SQLITE_ROW; i++) {
        char want[8];
        snprintf(want, sizeof want, "k%d", (i / 50) % 3);
        ASSERT_EQ_INT(sqlite3_column_int64(st, 0), 1000 + i);
        ASSERT_EQ_STR((const char *)sqlite3_column_text(st, 1), want);
        ASSERT_EQ_INT(sqlite3_column_int(st, 2), i % 7 ? 5 : 9);
        if (i % 3)
            ASSERT_EQ_INT(sqlite3_column_int64(st, 3), i);
        else
            ASSERT(sqlite3_column_type(st, 3) == SQLITE_NULL);
        if ((i / 70) % 2)
            ASSERT(sqlite3_column_type(st, 4) == SQLITE_NULL);
        else
            ASSERT_EQ_INT(sqlite3_column_int(st, 4), 1);
        ASSERT_EQ_INT(sqlite3_column_int(st, 5), i / 64);
        ASSERT_EQ_INT(sqlite3_column_int(st, 6), i / 64 + 1);
        ASSERT_EQ_INT(sqlite3_column_int(st, 7), i % 2);
        if (i % 5 == 0)
            ASSERT(sqlite3_column_type(st, 8) == SQLITE_NULL);
        else
            ASSERT_EQ_INT(sqlite3_column_int(st, 8), 32);
        double v = vals[i % 7];
        if (isnan(v)) /* SQLite stores a NaN as NULL */
            ASSERT(sqlite3_column_type(st, 9) == SQLITE_NULL);
        else
            ASSERT(sqlite3_column_double(st, 9) == v); /* -0.0 reads as 0.0 */
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    ASSERT_EQ_INT(i, N);
    unlink(path);
}

/* Schema 5 (docs/store.md, "Which rows are a process's"): each commit
 * records the rowid stretch it appended in event_rows; a commit that
 * follows its process's previous one directly grows that range, one after
 * another writer's (or another tool's) rows starts a new one; a run reads
 * exactly its rows, in order; a commit whose rows are not one stretch (a
 * trigger adding a row after each) or cannot be appended (a row at the
 * largest rowid) fails, counted, with nothing recorded before lost. */
TEST(store_event_rows)
{
    char path[256];
    tmp_path(path, sizeof path, "rows");
    int64_t ra = new_run(path), rb = new_run(path);
    ASSERT(ra > 0 && rb > ra);
    gp_err err = {0};
    gp_store_writer_opts o = {60000, 0, "test"}; /* commits only on flush */
    gp_store_writer *a = gp_store_writer_start(path, ra, &o, &err);
    gp_store_writer *b = gp_store_writer_start(path, rb, &o, &err);
    ASSERT(a != NULL && b != NULL);
    int64_t pa = gp_store_writer_proc(a), pb = gp_store_writer_proc(b);
    put_kernels(a, 0, 10); /* kernels rowids 1..10 */
    gp_store_writer_flush(a);
    put_kernels(b, 100, 7); /* 11..17 */
    gp_store_ev ev;
    gp_store_ev_init(&ev, GP_ST_API);
    ev.track = gp_store_writer_track(b, GP_STORE_TRACK_THREAD, 1, GP_NONE, NULL);
    ev.name = gp_store_writer_str(b, "call");
    for (int i = 0; i < 3; i++) {
        ev.ts = 200 + i;
        gp_store_writer_put(b, &ev, 1);
    }
    gp_store_writer_flush(b);
    put_kernels(a, 10, 5); /* 18..22: a new range of a */
    gp_store_writer_flush(a);
    put_kernels(a, 15, 4); /* 23..26: follows directly, the range grows */
    gp_store_writer_flush(a);
    /* another tool's row (27), then a again: a new range */
    ASSERT_EQ_INT(sql_exec(path, "INSERT INTO kernels(proc, name, ts, dur) VALUES(999, 0, 5, 1)"),
                  SQLITE_OK);
    put_kernels(a, 19, 2); /* 28..29 */
    gp_store_writer_flush(a);
    char out[1024];
    ASSERT_EQ_INT(sql_text(path,
                           "SELECT tbl, proc, first_rowid, last_rowid FROM event_rows ORDER BY "
                           "tbl, first_rowid",
                           out, sizeof out),
                  0);
    char want[512];
    snprintf(want, sizeof want,
             "1|%lld|1|3\n2|%lld|1|10\n2|%lld|11|17\n2|%lld|18|26\n2|%lld|28|29\n", (long long)pb,
             (long long)pa, (long long)pb, (long long)pa, (long long)pa);
    ASSERT_CONTAINS(out, want);
    /* each run reads its own kernels, in the order they were put */
    char ts[2048];
    run_kernel_ts(path, ra, ts, sizeof ts);
    ASSERT_EQ_STR(ts, "0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 ");
    run_kernel_ts(path, rb, ts, sizeof ts);
    ASSERT_EQ_STR(ts, "100 101 102 103 104 105 106 ");
    ASSERT_EQ_INT(sql_int(path, "SELECT count(*) FROM v_kernels WHERE proc = 999"), 0);
    ASSERT_EQ_INT(gp_store_writer_stop(b), 0);
    /* another tool's trigger adding a row after each of ours: the commit's
     * rows are not one stretch; it fails, counted, and writes no range */
    gp_store_writer *c = gp_store_writer_start(path, rb, &o, &err);
    ASSERT(c != NULL);
    ASSERT_EQ_INT(sql_exec(path, "CREATE TRIGGER other AFTER INSERT ON kernels WHEN new.proc != "
                                 "999 BEGIN INSERT INTO kernels(proc, name, ts, dur) "
                                 "VALUES(999, 0, 7, 1); END"),
                  SQLITE_OK);
    put_kernels(c, 300, 4);
    gp_store_writer_flush(c);
    ASSERT(gp_store_writer_dropped(c) == 4);
    ASSERT(gp_store_writer_stop(c) != 0);
    ASSERT_EQ_INT(sql_exec(path, "DROP TRIGGER other"), SQLITE_OK);
    ASSERT_EQ_INT(sql_int(path, "SELECT count(*) FROM kernels WHERE ts BETWEEN 300 AND 303"), 0);
    ASSERT_EQ_INT(sql_int(path, "SELECT count(*) FROM event_rows"), 5);
    /* a row at the largest rowid: SQLite would place new rows at random
     * rowids, which no range can describe; the write fails and is counted */
    ASSERT_EQ_INT(sql_exec(path, "INSERT INTO kernels(rowid, proc, name, ts, dur) "
                                 "VALUES(9223372036854775807, 999, 0, 6, 1)"),
                  SQLITE_OK);
    put_kernels(a, 50, 3);
    gp_store_writer_flush(a);
    ASSERT(gp_store_writer_dropped(a) == 3);
    ASSERT(gp_store_writer_stop(a) != 0);
    run_kernel_ts(path, ra, ts, sizeof ts); /* what was recorded before is all there */
    ASSERT_EQ_STR(ts, "0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 ");
    ASSERT_EQ_INT(sql_int(path, "SELECT count(*) FROM kernels WHERE ts BETWEEN 50 AND 52"), 0);
    unlink(path);
}

/* The environment kept with a run: only CUDA_/OPENCL_/GPUPROF_/NVTX_
 * variables, values redacted like the command line. */
TEST(store_env)
{
    char *v = gp_redact_env("GPUPROF_API_TOKEN", "hunter2");
    ASSERT_EQ_STR(v, "<redacted>");
    free(v);
    v = gp_redact_env("CUDA_CACHE_PATH", "ghp_abcdefgh12345678");
    ASSERT_EQ_STR(v, "<redacted>");
    free(v);
    v = gp_redact_env("OPENCL_URL", "https://bob:pw1@example.com/x");
    ASSERT_EQ_STR(v, "https://bob:<redacted>@example.com/x");
    free(v);
    v = gp_redact_env("CUDA_VISIBLE_DEVICES", "0,1");
    ASSERT_EQ_STR(v, "0,1");
    free(v);
    ASSERT(gp_store_env_kept("OPENCL_LAYERS") && gp_store_env_kept("NVTX_INJECTION64_PATH"));
    ASSERT(!gp_store_env_kept("HOME") && !gp_store_env_kept("AWS_SECRET_ACCESS_KEY"));
    char path[256];
    tmp_path(path, sizeof path, "env");
    int64_t run = new_run(path);
    ASSERT(run > 0);
    gp_store *st;
    gp_err err = {0};
    ASSERT_EQ_INT(gp_store_open(path, &st, &err), 0);
    char *envp[] = {"HOME=/root",
                    "CUDA_VISIBLE_DEVICES=1",
                    "GPUPROF_DB_PASSWORD=s3cr3t",
                    "AWS_SECRET_ACCESS_KEY=abc",
                    "OPENCL_LAYERS=/x/l.so",
                    "=odd",
                    "NOEQUALS",
                    NULL};
    ASSERT_EQ_INT(gp_store_run_env(st, run, envp, &err), 0);
    gp_store_close(st);
    FILE *f = tmpfile();
    ASSERT(f != NULL);
    ASSERT_EQ_INT(
        gp_store_sql(path, "SELECT run, name, value FROM run_env ORDER BY name", 0, f, &err), 0);
    char out[1024] = "";
    rewind(f);
    size_t n = fread(out, 1, sizeof out - 1, f);
    out[n] = 0;
    fclose(f);
    char want[512];
    snprintf(want, sizeof want,
             "%lld|CUDA_VISIBLE_DEVICES|1\n%lld|GPUPROF_DB_PASSWORD|<redacted>\n"
             "%lld|OPENCL_LAYERS|/x/l.so\n",
             (long long)run, (long long)run, (long long)run);
    ASSERT_CONTAINS(out, want);
    ASSERT(!strstr(out, "s3cr3t") && !strstr(out, "HOME") && !strstr(out, "AWS"));
    unlink(path);
}

TEST(store_spec)
{
    char *f;
    int64_t run;
    ASSERT_EQ_INT(gp_store_spec("/nonexistent.db:3", &f, &run), 0);
    ASSERT_EQ_INT(gp_store_spec(GP_TEST_DATA, &f, &run), 0);
    char path[256];
    tmp_path(path, sizeof path, "spec");
    ASSERT(new_run(path) > 0);
    ASSERT_EQ_INT(gp_store_spec(path, &f, &run), 1);
    ASSERT_EQ_STR(f, path);
    ASSERT_EQ_INT(run, 0);
    free(f);
    char spec[300];
    snprintf(spec, sizeof spec, "%s:12", path);
    ASSERT_EQ_INT(gp_store_spec(spec, &f, &run), 1);
    ASSERT_EQ_STR(f, path);
    ASSERT_EQ_INT(run, 12);
    free(f);
    unlink(path);
}

/* api_calls.kind (schema 3): the api_kinds row matching the writer's source
 * and the call's category string, else 0; categories interned after the
 * first commit too. */
TEST(store_api_kinds)
{
    char path[256];
    tmp_path(path, sizeof path, "kinds");
    int64_t run = new_run(path);
    ASSERT(run > 0);
    static const struct {
        const char *source, *cat;
        int kind;
    } want[] = {
        {"cuda", "cuda_runtime", 1}, {"cuda", "cuda_driver", 2}, {"cuda", "runtime", 0},
        {"cuda", "nvtx", 0},         {"opencl", "runtime", 3},   {"opencl", "cuda_runtime", 0},
        {"sampler", "runtime", 0},
    };
    enum { NW = sizeof want / sizeof want[0] };
    static const char *const sources[] = {"cuda", "opencl", "sampler"};
    for (int src = 0; src < 3; src++) {
        gp_err err = {0};
        gp_store_writer_opts o = {50, 0, sources[src]};
        gp_store_writer *w = gp_store_writer_start(path, run, &o, &err);
        ASSERT(w != NULL);
        uint32_t th = gp_store_writer_track(w, GP_STORE_TRACK_THREAD, 1, GP_NONE, NULL);
        for (int i = 0; i < NW; i++) {
            if (strcmp(want[i].source, sources[src])) continue;
            gp_store_ev ev;
            gp_store_ev_init(&ev, GP_ST_API);
            ev.track = th;
            ev.cat = gp_store_writer_str(w, want[i].cat);
            ev.name = gp_store_writer_str(w, want[i].cat); /* the name tells the row */
            ev.ts = 1000 + i;
            ev.dur = 10;
            gp_store_writer_put(w, &ev, 1);
            gp_store_writer_flush(w); /* each category in its own commit */
        }
        ASSERT_EQ_INT(gp_store_writer_stop(w), 0);
    }
    sqlite3 *db;
    ASSERT_EQ_INT(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    sqlite3_stmt *st;
    ASSERT_EQ_INT(sqlite3_prepare_v2(db,
                                     "SELECT p.source, s.s, a.kind, k.name FROM api_calls a JOIN "
                                     "processes p ON p.id = a.proc JOIN strings s ON s.proc = "
                                     "a.proc AND s.id = a.cat LEFT JOIN api_kinds k ON k.id = "
                                     "a.kind ORDER BY a.ts",
                                     -1, &st, NULL),
                  SQLITE_OK);
    int n = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *source = (const char *)sqlite3_column_text(st, 0);
        const char *cat = (const char *)sqlite3_column_text(st, 1);
        int kind = sqlite3_column_int(st, 2);
        int found = 0;
        for (int i = 0; i < NW; i++)
            if (!strcmp(want[i].source, source) && !strcmp(want[i].cat, cat)) {
                ASSERT_EQ_INT(kind, want[i].kind);
                ASSERT(sqlite3_column_type(st, 2) == SQLITE_INTEGER);
                ASSERT(sqlite3_column_text(st, 3) != NULL); /* resolved, "unknown" for 0 */
                found = 1;
            }
        ASSERT(found);
        n++;
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    ASSERT_EQ_INT(n, NW);
    unlink(path);
}

/* A writer with a transaction's worth of events waiting (200,000, the
 * writer's CHUNK) writes them without waiting out its commit period: a
 * producer faster than the writer must not leave it idle for a period after
 * each batch. The period here is 10 minutes; at least CHUNK rows must be
 * committed long before (the 60 s bound is liveness, not a timing claim). */
TEST(store_backlog_commits_early)
{
    char path[256];
    uint32_t q;
    gp_store_writer *w = writer_on_new_store(path, sizeof path, "backlog", 600000, &q);
    enum { N = 250000 };
    queue_kernels(w, q, gp_store_writer_str(w, "k"), 0, N);
    int64_t t0 = gp_clock_mono_ns(), rows = 0;
    while ((rows = sql_int(path, "SELECT count(*) FROM kernels")) < 200000 &&
           gp_clock_mono_ns() - t0 < 60000000000LL)
        gp_test_sleep_ms(20);
    ASSERT(rows >= 200000); /* the rest (under CHUNK) waits for the period or the stop */
    ASSERT_EQ_INT(gp_store_writer_stop(w), 0);
    ASSERT_EQ_INT(sql_int(path, "SELECT count(*) FROM kernels"), N);
    gp_test_rm_db(path);
}

/* The WAL is copied into the store while the writer goes on (the
 * checkpointer thread, docs/recording.md), not in the writer's own commits
 * once it reaches 1 GiB nor only at close: the store file grows during the
 * run with at most a few tens of MB of WAL, and every row is there after. */
TEST(store_checkpoints_while_writing)
{
    char path[256];
    uint32_t q;
    struct stat st0, st1;
    gp_store_writer *w = writer_on_new_store(path, sizeof path, "ckpt", 50, &q);
    ASSERT_EQ_INT(stat(path, &st0), 0);
    uint32_t kn = gp_store_writer_str(w, "k");
    enum { ROUND = 100000, ROUNDS = 60 };
    int64_t n = 0;
    char wal[300];
    snprintf(wal, sizeof wal, "%s-wal", path);
    /* rows until the store file grows: the checkpointer wakes once the WAL
     * holds 32 MB, ~1.3 M of these rows; 6 M rows make ~150 MB of WAL */
    int grew = 0;
    for (int r = 0; r < ROUNDS && !grew; r++, n += ROUND) {
        queue_kernels(w, q, kn, n, ROUND);
        gp_store_writer_flush(w);
        ASSERT_EQ_INT(stat(path, &st1), 0);
        grew = st1.st_size > st0.st_size + (16 << 20);
    }
    /* the checkpointer runs on its own time: up to 20 s more (liveness only) */
    for (int t = 0; t < 2000 && !grew; t++) {
        gp_test_sleep_ms(10);
        ASSERT_EQ_INT(stat(path, &st1), 0);
        grew = st1.st_size > st0.st_size + (16 << 20);
    }
    ASSERT(grew); /* before the checkpointer: not until 1 GiB of WAL or the close */
    ASSERT_EQ_INT(stat(wal, &st1), 0);
    ASSERT(st1.st_size < (int64_t)256 << 20);
    ASSERT_EQ_INT(gp_store_writer_stop(w), 0);
    ASSERT_EQ_INT(sql_int(path, "SELECT count(*) FROM kernels"), n);
    ASSERT_EQ_INT(sql_int(path, "SELECT count(*) FROM kernels WHERE corr = ts"), n);
    gp_test_rm_db(path);
}

TEST_MAIN(store_write_read, store_api_kinds, store_redact, store_sigkill_prefix, store_fork,
          store_event_rows, store_bind_changes, store_env, store_spec, store_backlog_commits_early,
          store_checkpoints_while_writing)
