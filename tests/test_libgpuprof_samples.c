/* tests/test_libgpuprof_samples.c: a long run that tracks buffers and
 * samples counters stays in bounded memory outside the keep sink
 * (docs/api.md "Sinks"): each gp_mem_track/gp_mem_untrack pair left a
 * [memory] event, two memory.tracked_bytes samples, an index entry per
 * address ever tracked and two per-entry records in memory (about 180 B per
 * pair, in every sink: 100 M pairs, 18 GB). Now the default and aggregate
 * sinks keep the first 2 x keep_max samples and events and count the rest
 * as dropped, the stream sink writes them out as it drains, the index
 * forgets untracked addresses, and gp_counter_last still counts every
 * sample. Each sink runs in a child process (its own RSS): 140,000
 * iterations (a range holding a track, a counter sample and an untrack, at
 * a new address each time), then 200,000 more over which the RSS may grow
 * by at most 8 MB (it grew by about 40 MB). Likewise string attributes:
 * the value of each gp_range_attr_str was interned for the profiler's life
 * even when its range was aggregated inline (past keep_max, the aggregate
 * sink), where attributes are not kept (55 B per range). */
#include "test.h"
#include <gpuprof/gpuprof.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define WARM 140000
#define MORE 200000

static void iterate(gp_profiler *p, long from, long to)
{
    for (long i = from; i < to; i++) {
        const char *a = (const char *)(uintptr_t)(0x100000 + i * 64); /* a new address */
        gp_range_begin(p, "step");
        gp_mem_track(p, "act", a, 4096, NULL, 0, "f32");
        gp_counter(p, "loss", (double)i);
        gp_mem_untrack(p, a);
        gp_range_end(p);
    }
}

/* The child: exit status 0 when every check holds, else the failing line
 * (mod 256, at least 1). */
#define CHECK(c)                                                                                   \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            fprintf(stderr, "  child check failed line %d: %s\n", __LINE__, #c);                   \
            _exit(__LINE__ % 255 + 1);                                                             \
        }                                                                                          \
    } while (0)

static void child(int sink, const char *path)
{
    gp_options o = {0};
    o.sink = sink;
    o.stream_path = path;
    gp_profiler *p = gp_profiler_create(&o);
    CHECK(p);
    iterate(p, 0, WARM);
    gp_record_stats st;
    gp_record_stats_get(p, &st); /* drains */
    long r0 = gp_test_rss_kb();
    iterate(p, WARM, WARM + MORE);
    gp_record_stats_get(p, &st);
    long r1 = gp_test_rss_kb();
    fprintf(stderr, "  sink %d: RSS %ld -> %ld kB over %d more iterations\n", sink, r0, r1, MORE);
    /* the bound holds in the normal build; under ASan its quarantine keeps
     * freed memory (up to 256 MB), which reads as growth */
    CHECK(r0 > 0 && (GP_TEST_SANITIZED || r1 - r0 < 8 * 1024));
    double last = -1;
    uint64_t n = 0;
    /* every sample recorded counts, kept or not; a stream whose drain falls
     * behind (a busy machine: the store's writer holds it back) drops, and
     * counts, the samples that find the thread's backlog full (its ranges
     * roll over inline instead) */
    uint64_t lost = sink == GP_SINK_STREAM ? st.dropped : 0;
    CHECK(gp_counter_last(p, "loss", &last, &n) == 0);
    CHECK(n <= WARM + MORE && n + lost >= WARM + MORE);
    CHECK(lost || last == (double)(WARM + MORE - 1));
    CHECK(gp_counter_last(p, "memory.tracked_bytes", &last, &n) == 0);
    CHECK(n <= 2 * (WARM + MORE) && n + lost >= 2 * (WARM + MORE));
    CHECK(lost || last == 0);
    CHECK(gp_mem_current(p) == 0 && gp_mem_peak(p) == 4096 && gp_mem_count(p) == 0);
    if (sink != GP_SINK_STREAM) {
        /* the first 2 x keep_max (262,144) counter samples and [memory]
         * events are kept, the others counted as dropped */
        uint64_t samples = 3 * (uint64_t)(WARM + MORE), events = 2 * (uint64_t)(WARM + MORE);
        CHECK(st.dropped == samples + events - 2 * 262144);
    } else if (st.dropped) {
        fprintf(stderr, "  (stream: %llu samples dropped while the drain was behind)\n",
                (unsigned long long)st.dropped);
    }
    CHECK(st.kept + st.aggregated == WARM + MORE);
    if (sink != GP_SINK_STREAM) {
        /* an event that raises the peak is kept beyond the cap: the views
         * of the export's events show the tracker's peak */
        static char big[1];
        CHECK(gp_mem_track(p, "big", big, 8192, NULL, 0, NULL) == 0);
        char xpath[128];
        snprintf(xpath, sizeof xpath, "/tmp/gp_test_samples_peak_%ld.json", (long)getpid());
        CHECK(gp_export_json(p, xpath) == 0);
        FILE *f = fopen(xpath, "r");
        CHECK(f);
        char line[1024];
        int found = 0;
        while (fgets(line, sizeof line, f))
            found |= strstr(line, "\"name\":\"[memory]\"") && strstr(line, "\"Bytes\":8192");
        fclose(f);
        unlink(xpath);
        CHECK(found);
        CHECK(gp_mem_untrack(p, big) == 0);
    }
    gp_profiler_destroy(p);
    _exit(0);
}

static void run_case(int sink, const char *ext)
{
    char path[256] = "";
    if (ext) {
        snprintf(path, sizeof path, "/tmp/gp_test_samples_%ld.%s", (long)getpid(), ext);
        unlink(path);
    }
    fflush(stdout);
    pid_t pid = fork();
    ASSERT(pid >= 0);
    if (pid == 0) child(sink, ext ? path : NULL);
    int ws = 0;
    ASSERT_EQ_INT(waitpid(pid, &ws, 0), pid);
    ASSERT(WIFEXITED(ws));
    ASSERT_EQ_INT(WEXITSTATUS(ws), 0);
    if (ext && !strcmp(ext, "json")) {
        /* the file holds every sample and event: counted by their heads */
        FILE *f = fopen(path, "r");
        ASSERT(f);
        char line[512];
        uint64_t c = 0, m = 0;
        while (fgets(line, sizeof line, f)) {
            c += strstr(line, "{\"ph\":\"C\"") != NULL;
            m += strstr(line, "\"name\":\"[memory]\"") != NULL;
        }
        fclose(f);
        ASSERT_EQ_INT(c, 3 * (uint64_t)(WARM + MORE));
        ASSERT_EQ_INT(m, 2 * (uint64_t)(WARM + MORE));
    }
    if (ext) {
        char aux[300];
        unlink(path);
        snprintf(aux, sizeof aux, "%s-wal", path);
        unlink(aux);
        snprintf(aux, sizeof aux, "%s-shm", path);
        unlink(aux);
    }
}

TEST(samples_default_sink)
{
    run_case(GP_SINK_AUTO, NULL);
}

TEST(samples_aggregate_sink)
{
    run_case(GP_SINK_AGGREGATE, NULL);
}

TEST(samples_file_stream)
{
    run_case(GP_SINK_STREAM, "json");
}

TEST(samples_store_stream)
{
    run_case(GP_SINK_STREAM, "db");
}

/* The child of attr_values_of_aggregated_ranges (exit status as child). */
static void attr_child(int sink, int to_file)
{
    gp_options o = {0};
    o.sink = sink;
    o.keep_max = 1000; /* the default sink: the first 1,000 kept, with their attributes */
    char db[128];
    snprintf(db, sizeof db, "/tmp/gp_test_samples_attr_%ld.db", (long)getpid());
    char js[128];
    snprintf(js, sizeof js, "/tmp/gp_test_samples_attr_%ld.json", (long)getpid());
    if (sink == GP_SINK_STREAM && to_file) { /* a file: every value written, then freed */
        o.stream_path = js;
    } else if (sink == GP_SINK_STREAM) { /* into a run store, which holds no attributes */
        unlink(db);
        o.stream_path = db;
    }
    gp_profiler *p = gp_profiler_create(&o);
    CHECK(p);
    char v[64];
    long r0 = 0;
    /* the stream's buffers reach their size and the store's writer fills
     * its page cache (8 MiB) first */
    long warm = sink != GP_SINK_STREAM ? 20000 : to_file ? 300000 : 800000;
    for (long i = 0; i < warm + 400000; i++) {
        if (i == warm) {
            gp_record_stats st;
            gp_record_stats_get(p, &st);
            r0 = gp_test_rss_kb();
        }
        gp_range_begin(p, "req");
        snprintf(v, sizeof v, "user-%ld-session-abcdefgh", i); /* a new value each time */
        gp_range_attr_str(p, "user", v);
        gp_range_end(p);
    }
    gp_record_stats st;
    gp_record_stats_get(p, &st);
    long r1 = gp_test_rss_kb();
    fprintf(stderr,
            "  sink %d: RSS %ld -> %ld kB over 400,000 more ranges (kept %llu aggregated %llu "
            "dropped %llu)\n",
            sink, r0, r1, (unsigned long long)st.kept, (unsigned long long)st.aggregated,
            (unsigned long long)st.dropped);
    CHECK(r0 > 0);
    /* the store's writer and page cache move by a few MB: 8 MB (the values
     * cost 44 MB before) */
    if (sink != GP_SINK_STREAM)
        CHECK(r1 - r0 < 4 * 1024);
    else if (!GP_TEST_SANITIZED) /* ASan's quarantine holds the freed copies */
        CHECK(r1 - r0 < (to_file ? 4 : 8) * 1024);
    CHECK(st.kept + st.aggregated == (uint64_t)warm + 400000);
    /* a file stream may drop (and count) an attribute's event while the
     * drain is behind, never a range */
    CHECK(st.dropped == 0 || (sink == GP_SINK_STREAM && to_file));
    if (sink == GP_SINK_AUTO) { /* kept ranges keep their attributes */
        char path[128];
        snprintf(path, sizeof path, "/tmp/gp_test_samples_attr_%ld.json", (long)getpid());
        CHECK(gp_export_trace(p, path) == 0);
        FILE *f = fopen(path, "r");
        CHECK(f);
        static char buf[1 << 20];
        size_t got = fread(buf, 1, sizeof buf - 1, f);
        buf[got] = 0;
        fclose(f);
        unlink(path);
        CHECK(strstr(buf, "\"user\":\"user-0-session-abcdefgh\""));
        CHECK(strstr(buf, "\"user\":\"user-999-session-abcdefgh\""));
        CHECK(!strstr(buf, "\"user\":\"user-1000-session-abcdefgh\""));
    }
    gp_profiler_destroy(p);
    if (sink == GP_SINK_STREAM && to_file) {
        /* line by line (one event per line): a strstr over the whole text
         * per match is quadratic under ASan, which measures the text each
         * time */
        FILE *f = fopen(js, "r");
        CHECK(f);
        static char line[4096];
        size_t nv = 0;
        int first = 0;
        while (fgets(line, sizeof line, f)) {
            nv += strstr(line, "\"user\":\"user-") != NULL;
            first |= strstr(line, "\"user\":\"user-0-session-abcdefgh\"") != NULL;
        }
        fclose(f);
        CHECK(first);
        /* each range written with its value, but for attributes dropped */
        CHECK(nv <= st.kept && nv + st.dropped >= st.kept);
        unlink(js);
    } else if (sink == GP_SINK_STREAM) {
        unlink(db);
        char side[160];
        snprintf(side, sizeof side, "%s-wal", db);
        unlink(side);
        snprintf(side, sizeof side, "%s-shm", db);
        unlink(side);
    }
    _exit(0);
}

/* The attribute values of ranges that do not keep them cost no memory: the
 * default sink past keep_max, the aggregate sink, and a stream into the run
 * store (which has no place for them; their values were interned for the
 * profiler's life before, about 110 B each) */
TEST(attr_values_of_aggregated_ranges)
{
    static const int sinks[] = {GP_SINK_AUTO, GP_SINK_AGGREGATE, GP_SINK_STREAM, GP_SINK_STREAM};
    for (int k = 0; k < 4; k++) {
        fflush(stdout);
        pid_t pid = fork();
        ASSERT(pid >= 0);
        if (pid == 0) attr_child(sinks[k], k == 3);
        int ws = 0;
        ASSERT_EQ_INT(waitpid(pid, &ws, 0), pid);
        ASSERT(WIFEXITED(ws));
        ASSERT_EQ_INT(WEXITSTATUS(ws), 0);
    }
}

TEST_MAIN(samples_default_sink, samples_aggregate_sink, samples_file_stream, samples_store_stream,
          attr_values_of_aggregated_ranges)
