/* tests/test_libgpuprof_exact.c: the sinks' statistics against known
 * durations. This program defines clock_gettime: on a thread that turned the
 * fake clock on, CLOCK_MONOTONIC returns the time the test set (profilers
 * created with clock = 1 read it for every begin and end), so each range has
 * a duration chosen by the test and the library's count, total, self, min,
 * max and std must equal the exact figures, its percentiles be within the
 * sketch's stated error of exact sorting (10 M ranges, not a multiple of the
 * sketch's batch of pending durations), and the default profiler's export
 * read back by the importer give the same exact per-name counts and totals
 * for all ranges, kept and rolled over. Other clocks and threads pass through
 * to the kernel. */
#include "analysis/summary.h"
#include "core/sketch.h"
#include "core/sbuf.h"
#include "core/stats.h"
#include "report/summary.h"
#include "test.h"
#include "trace/import.h"
#include <gpuprof/gpuprof.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static __thread int fake_on;
static __thread int64_t fake_now;

int clock_gettime(clockid_t clk, struct timespec *ts)
{
    if (fake_on && clk == CLOCK_MONOTONIC) {
        ts->tv_sec = (time_t)(fake_now / 1000000000);
        ts->tv_nsec = (long)(fake_now % 1000000000);
        return 0;
    }
    return (int)syscall(SYS_clock_gettime, clk, ts);
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static int64_t sample(void)
{
    return gp_test_log_duration(&rng);
}

static const gp_summary_row *row_named(const gp_summary_row *r, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(r[i].name, name)) return &r[i];
    return NULL;
}

/* Records n ranges "a" with durations from sample() into p (fake clock),
 * every 1000th also wrapping a nested "b" of known duration; returns the
 * durations of "a" in *out (caller frees), the total of "b" in *b_total and
 * its count in *b_count. */
static int64_t *record_known(gp_profiler *p, size_t n, int64_t *b_total, uint64_t *b_count)
{
    int64_t *d = malloc(n * sizeof *d);
    if (!d) return NULL;
    *b_total = 0;
    *b_count = 0;
    int64_t t = gp_test_real_mono_ns() + 1000000000;
    fake_on = 1;
    for (size_t i = 0; i < n; i++) {
        d[i] = sample();
        fake_now = t;
        gp_range_begin(p, "a");
        if (i % 1000 == 0 && d[i] >= 3) { /* b inside a: [t+1, t+d-1] */
            fake_now = t + 1;
            gp_range_begin(p, "b");
            fake_now = t + d[i] - 1;
            gp_range_end(p);
            *b_total += d[i] - 2;
            ++*b_count;
        }
        fake_now = t + d[i];
        gp_range_end(p);
        t += d[i] + 3;
    }
    fake_on = 0;
    return d;
}

/* Checks the row of "a" against the exact statistics of d (sorts d). */
static void check_row(const gp_summary_row *a, int64_t *d, size_t n, int64_t b_total)
{
    gp_stats ex;
    gp_stats_i64(d, n, &ex);
    ASSERT_EQ_INT(a->count, ex.count);
    ASSERT_EQ_INT(a->total_ns, ex.sum);
    ASSERT_EQ_INT(a->self_ns, ex.sum - b_total);
    ASSERT_EQ_INT(a->min_ns, ex.min);
    ASSERT_EQ_INT(a->max_ns, ex.max);
    ASSERT_NEAR(a->mean_ns, ex.mean, 1e-9 * ex.mean);
    ASSERT_NEAR(a->std_ns, ex.std, 1e-6 * ex.std);
    ASSERT_NEAR(a->p50_ns, ex.p50, ex.p50 * GP_SKETCH_REL_ERR + 0.5);
    ASSERT_NEAR(a->p95_ns, ex.p95, ex.p95 * GP_SKETCH_REL_ERR + 0.5);
    ASSERT_NEAR(a->p99_ns, ex.p99, ex.p99 * GP_SKETCH_REL_ERR + 0.5);
}

/* Aggregate sink, 10 M ranges of known durations: count, total, self, min,
 * max exact; mean and std to rounding; p50/p95/p99 within the sketch's
 * stated error of exact sorting. */
TEST(aggregate_sink_exact_vs_sorting)
{
    gp_options o = {0};
    o.sink = GP_SINK_AGGREGATE;
    o.clock = 1;
    gp_profiler *p = gp_profiler_create(&o);
    ASSERT(p);
    size_t n = GP_TEST_SANITIZED ? 1000003 : 10000019; /* not a multiple of 32 */
    int64_t b_total;
    uint64_t b_count;
    int64_t *d = record_known(p, n, &b_total, &b_count);
    ASSERT(d);
    gp_summary_row *r;
    size_t nr;
    ASSERT_EQ_INT(gp_summary_rows(p, &r, &nr), 0);
    const gp_summary_row *a = row_named(r, nr, "a"), *b = row_named(r, nr, "b");
    ASSERT(a && b);
    ASSERT_EQ_INT(a->aggregated, n);
    ASSERT_EQ_INT(a->pct_approx, 1);
    ASSERT_EQ_INT(b->count, b_count);
    ASSERT_EQ_INT(b->total_ns, b_total);
    check_row(a, d, n, b_total);
    gp_summary_rows_free(r, nr);
    free(d);
    gp_profiler_destroy(p);
}

/* The default profiler (gp_default(), nothing configured but the clock):
 * the first ranges are kept as events, the rest roll over; the library's
 * rows and the gp_export_json file read back by the importer (what `gpuprof
 * summary` reads) both give the exact count and total of all ranges. */
TEST(default_profiler_rollover_exact_export)
{
    setenv("GPUPROF_CLOCK", "monotonic", 1);
    gp_profiler *p = gp_default();
    ASSERT(p);
    size_t n = GP_TEST_SANITIZED ? 400009 : 10000019;
    int64_t b_total;
    uint64_t b_count;
    int64_t *d = record_known(p, n, &b_total, &b_count);
    ASSERT(d);
    gp_record_stats rs;
    ASSERT_EQ_INT(gp_record_stats_get(p, &rs), 0);
    ASSERT_CMP_INT(rs.kept, >, 0);
    ASSERT_CMP_INT(rs.aggregated, >, 0);
    ASSERT_EQ_INT(rs.kept + rs.aggregated, n + b_count);
    ASSERT_EQ_INT(rs.dropped, 0);
    gp_summary_row *r;
    size_t nr;
    ASSERT_EQ_INT(gp_summary_rows(p, &r, &nr), 0);
    const gp_summary_row *a = row_named(r, nr, "a");
    ASSERT(a);
    ASSERT_CMP_INT(a->aggregated, <, n);
    char path[128];
    snprintf(path, sizeof path, "/tmp/gp_test_exact_%ld.json", (long)getpid());
    ASSERT_EQ_INT(gp_export_json(p, path), 0);
    gp_trace *t;
    gp_err err;
    ASSERT_EQ_INT(gp_import_json_file(path, NULL, &t, &err), 0);
    unlink(path);
    gp_summary s;
    ASSERT_EQ_INT(gp_summary_compute(t, &s), 0);
    int found = 0;
    for (size_t i = 0; i < s.n; i++) {
        const char *name = gp_trace_s(t, s.rows[i].name);
        if (strcmp(name, "a") != 0) continue;
        found = 1;
        ASSERT_EQ_INT(s.rows[i].st.count, n);
        ASSERT_EQ_INT(s.rows[i].st.sum, a->total_ns);
        ASSERT_EQ_INT(s.rows[i].st.min, a->min_ns);
        ASSERT_EQ_INT(s.rows[i].st.max, a->max_ns);
        ASSERT_EQ_INT(s.rows[i].self_ns, a->self_ns);
    }
    ASSERT(found);
    /* `gpuprof summary --json` says how many calls of "a" rolled over */
    gp_summary_view v;
    gp_summary_view_default(&v, 1);
    gp_sbuf jb = {0};
    gp_report_summary_json(&jb, t, &s, &v);
    char want[96];
    snprintf(want, sizeof want, "\"aggregated\":%llu,\"percentiles_approx\":true",
             (unsigned long long)a->aggregated);
    ASSERT(strstr(gp_sbuf_cstr(&jb), want));
    gp_sbuf_free(&jb);
    gp_summary_free(&s);
    gp_trace_destroy(t);
    check_row(a, d, n, b_total);
    gp_summary_rows_free(r, nr);
    free(d);
}

TEST_MAIN(aggregate_sink_exact_vs_sorting, default_profiler_rollover_exact_export)
