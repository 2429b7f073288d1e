/* tests/test_libgpuprof_sinks.c: libgpuprof's sinks for long runs: the
 * quantile sketch against exact sorting on 10 M samples, the summary merge
 * of aggregated rows against statistics of all values, the default sink's
 * per-thread keep cap with rollover (exact counts and totals in the results,
 * the export and `summary` of the export), the keep cap with drops, the
 * aggregate sink's bounded memory over 100 M ranges (getrusage: growth
 * under 16 MB, the process under 64 MB), the
 * stream sink's file read back by the importer, and self time on a clock
 * the test sets (a child with its parent's interval, a child aggregated
 * inline inside a kept range): the same in the results, the export, the
 * file stream and the store stream read back. */
#include "analysis/summary.h"
#include "core/sbuf.h"
#include "core/sketch.h"
#include "core/stats.h"
#include "record/recorder.h"
#include "store/store.h"
#include "stream_helpers.h"
#include "test.h"
#include "trace/import.h"
#include <gpuprof/gpuprof.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* A clock the test sets: libgpuprof.a, linked into this program, reads
 * CLOCK_MONOTONIC through clock_gettime, which this program defines: it
 * returns fake_ns while fake_on, else the kernel's clock. */
static atomic_int fake_on;
static _Atomic int64_t fake_ns;

int clock_gettime(clockid_t id, struct timespec *ts)
{
    if (id == CLOCK_MONOTONIC && atomic_load(&fake_on)) {
        int64_t v = atomic_load(&fake_ns);
        ts->tv_sec = v / 1000000000;
        ts->tv_nsec = v % 1000000000;
        return 0;
    }
    return (int)syscall(SYS_clock_gettime, id, ts);
}

static uint64_t rng = 88172645463325252ull;

static int64_t sample(void)
{
    return gp_test_log_duration(&rng);
}

TEST(sketch_quantiles_vs_sorting)
{
    size_t n = 10000000;
    int64_t *v = malloc(n * sizeof *v);
    uint64_t *bk = calloc(GP_SKETCH_BUCKETS, sizeof *bk);
    ASSERT(v && bk);
    int64_t mn = INT64_MAX, mx = INT64_MIN;
    for (size_t i = 0; i < n; i++) {
        v[i] = sample();
        bk[gp_sketch_index(v[i])]++;
        if (v[i] < mn) mn = v[i];
        if (v[i] > mx) mx = v[i];
    }
    gp_sort_i64(v, n);
    const double qs[] = {0.01, 0.25, 0.5, 0.9, 0.95, 0.99, 0.999};
    for (size_t k = 0; k < sizeof qs / sizeof *qs; k++) {
        double exact = gp_quantile_sorted_i64(v, n, qs[k]);
        double approx = gp_sketch_quantile(bk, n, mn, mx, qs[k]);
        ASSERT_NEAR(approx, exact, exact * GP_SKETCH_REL_ERR + 0.5);
    }
    /* every bucket's value lies within the stated error of every member */
    for (int64_t x = 0; x < 5000000; x += 7 + x / 3) {
        double r = gp_sketch_value(gp_sketch_index(x));
        ASSERT_NEAR(r, (double)x, (double)x * GP_SKETCH_REL_ERR + 0.5);
    }
    ASSERT_CMP_INT(gp_sketch_index(INT64_MAX), <, GP_SKETCH_BUCKETS);
    free(v);
    free(bk);
}

/* A trace with slices and aggregated rows of the same name summarizes like
 * one set of all the values (count, sum, min, max, mean, std exact;
 * percentiles within the sketch's error). */
TEST(summary_merges_aggregates)
{
    gp_trace *t = gp_trace_create();
    ASSERT(t);
    uint16_t cat = (uint16_t)gp_trace_category(t, "gpuprof_range", 13);
    uint32_t nm = gp_trace_str(t, "step", 4), tr = gp_trace_track(t, 1, 1, 0, 0);
    size_t ns = 1000, na = 200000;
    int64_t *all = malloc((ns + na) * sizeof *all);
    ASSERT(all);
    int64_t ts = 0;
    for (size_t i = 0; i < ns; i++) {
        int64_t d = sample();
        gp_slice s = {ts, d, GP_NONE, GP_NONE, nm, tr, GP_NO_INDEX, cat, 0};
        ASSERT_EQ_INT(GP_VEC_PUSH(t->slices, s), 0);
        all[i] = d;
        ts += d + 1;
    }
    for (int part = 0; part < 2; part++) { /* two threads' rows */
        gp_agg_row r = {0};
        r.name = nm;
        r.cat = cat;
        r.track = tr;
        r.min_ns = INT64_MAX;
        r.max_ns = INT64_MIN;
        r.bytes = -1;
        r.sketch = calloc(GP_SKETCH_BUCKETS, sizeof *r.sketch);
        ASSERT(r.sketch);
        long double sum = 0, sq = 0;
        for (size_t i = 0; i < na / 2; i++) {
            int64_t d = sample();
            all[ns + part * (na / 2) + i] = d;
            r.count++;
            r.total_ns += d;
            sum += d;
            sq += (long double)d * d;
            if (d < r.min_ns) r.min_ns = d;
            if (d > r.max_ns) r.max_ns = d;
            r.sketch[gp_sketch_index(d)]++;
        }
        r.m2 = (double)(sq - sum * sum / r.count);
        r.first_ns = ts;
        r.last_ns = ts + r.total_ns;
        ts = r.last_ns;
        ASSERT_EQ_INT(GP_VEC_PUSH(t->aggs, r), 0);
    }
    gp_trace_finish(t);
    gp_summary s;
    ASSERT_EQ_INT(gp_summary_compute(t, &s), 0);
    ASSERT_EQ_INT(s.n, 1);
    gp_stats ex;
    gp_stats_i64(all, ns + na, &ex);
    const gp_op_row *r = &s.rows[0];
    ASSERT_EQ_INT(r->st.count, ex.count);
    ASSERT_EQ_INT(r->st.sum, ex.sum);
    ASSERT_EQ_INT(r->st.min, ex.min);
    ASSERT_EQ_INT(r->st.max, ex.max);
    ASSERT_NEAR(r->st.mean, ex.mean, 1e-9 * ex.mean);
    ASSERT_NEAR(r->st.std, ex.std, 1e-6 * ex.std);
    ASSERT_NEAR(r->st.p50, ex.p50, ex.p50 * GP_SKETCH_REL_ERR + 0.5);
    ASSERT_NEAR(r->st.p95, ex.p95, ex.p95 * GP_SKETCH_REL_ERR + 0.5);
    ASSERT_NEAR(r->st.p99, ex.p99, ex.p99 * GP_SKETCH_REL_ERR + 0.5);
    ASSERT_EQ_INT(r->agg_count, na);
    ASSERT_EQ_INT(r->pct_approx, 1);
    /* the span covers the aggregated rows: shares stay <= 100 % */
    ASSERT_CMP_DBL(r->share_pct, <=, 100.0);
    gp_summary_free(&s);
    free(all);
    gp_trace_destroy(t);
}

static const gp_summary_row *row_named(const gp_summary_row *r, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(r[i].name, name)) return &r[i];
    return NULL;
}

typedef struct work {
    gp_profiler *p;
    long n;
} work;

static void *record(void *arg)
{
    work *w = arg;
    for (long i = 0; i < w->n; i++) {
        gp_range_begin(w->p, "outer");
        gp_range_begin_ex(w->p, "inner", GP_DEV_CPU, GP_BACKEND_CPU, 8);
        gp_range_end(w->p);
        gp_range_end(w->p);
    }
    return NULL;
}

static void run_threads(gp_profiler *p, int nt, long n)
{
    pthread_t th[4];
    work w = {p, n};
    for (int i = 0; i < nt; i++) ASSERT_EQ_INT(pthread_create(&th[i], NULL, record, &w), 0);
    for (int i = 0; i < nt; i++) pthread_join(th[i], NULL);
}

/* Default sink: the first keep_max ranges per thread are slices, the rest
 * aggregated; counts and totals are exact in the results, and the export
 * read back by the importer gives the same per-name count and total. */
TEST(auto_sink_rollover_exact)
{
    gp_options o = {0};
    o.keep_max = 1000;
    gp_profiler *p = gp_profiler_create(&o);
    ASSERT(p);
    long n = 200000;
    run_threads(p, 2, n);
    gp_record_stats rs;
    gp_record_stats_get(p, &rs);
    ASSERT_EQ_INT(rs.kept, 2 * 1000);
    ASSERT_EQ_INT(rs.kept + rs.aggregated, 2 * 2 * n);
    ASSERT_EQ_INT(rs.dropped, 0);
    gp_summary_row *r;
    size_t nr;
    ASSERT_EQ_INT(gp_summary_rows(p, &r, &nr), 0);
    const gp_summary_row *outer = row_named(r, nr, "outer"), *inner = row_named(r, nr, "inner");
    ASSERT(outer && inner);
    ASSERT_EQ_INT(outer->count, 2 * n);
    ASSERT_EQ_INT(inner->count, 2 * n);
    ASSERT_EQ_INT(inner->bytes, 2 * n * 8);
    ASSERT_EQ_INT(outer->pct_approx, 1);
    /* outer's self excludes inner's time, whether kept or aggregated */
    ASSERT_EQ_INT(outer->self_ns + inner->total_ns, outer->total_ns);
    ASSERT_CMP_DBL(outer->min_ns, <=, outer->p50_ns);
    ASSERT_CMP_DBL(outer->p99_ns, <=, outer->max_ns);
    char path[128];
    snprintf(path, sizeof path, "/tmp/gp_test_sinks_%ld.json", (long)getpid());
    ASSERT_EQ_INT(gp_export_json(p, path), 0);
    gp_trace *t;
    gp_err err;
    ASSERT_EQ_INT(gp_import_json_file(path, NULL, &t, &err), 0);
    gp_summary s;
    ASSERT_EQ_INT(gp_summary_compute(t, &s), 0);
    int seen = 0;
    for (size_t i = 0; i < s.n; i++) {
        const char *name = gp_trace_s(t, s.rows[i].name);
        const gp_summary_row *lr = row_named(r, nr, name);
        ASSERT(lr);
        ASSERT_EQ_INT(s.rows[i].st.count, lr->count);
        ASSERT_EQ_INT(s.rows[i].st.sum, lr->total_ns);
        ASSERT_EQ_INT(s.rows[i].st.min, lr->min_ns);
        ASSERT_EQ_INT(s.rows[i].st.max, lr->max_ns);
        ASSERT_NEAR(s.rows[i].st.p50, lr->p50_ns, 1.0);
        /* self time of the export equals the library's (one rule) */
        ASSERT_EQ_INT(s.rows[i].self_ns, lr->self_ns);
        seen++;
    }
    ASSERT_EQ_INT(seen, 2);
    gp_summary_free(&s);
    gp_trace_destroy(t);
    unlink(path);
    gp_summary_rows_free(r, nr);
    gp_profiler_destroy(p);
}

/* Nested ranges of four names, one of them also opened with
 * gp_range_begin_ex on another device with bytes, on the TSC clock: the
 * hot path's cases (a level aggregated inline and found in the per-name
 * cache or not, an event, the rollover between them) keep every identity
 * exact: a parent's total is its self time plus its children's totals.
 * nm: A, B, C, D; A holds B { C }, B (ex) { C } and D. */
static void nested_names_case(int sink, int64_t keep_max, const char *const nm[4])
{
    gp_options o = {0};
    o.sink = sink;
    o.keep_max = keep_max;
    gp_profiler *p = gp_profiler_create(&o);
    ASSERT(p);
    long n = 50000;
    for (long i = 0; i < n; i++) {
        gp_range_begin(p, nm[0]);
        gp_range_begin(p, nm[1]);
        gp_range_begin(p, nm[2]);
        gp_range_end(p);
        gp_range_end(p);
        gp_range_begin_ex(p, nm[1], GP_DEV_GPU, GP_BACKEND_OPENCL, 16);
        gp_range_begin(p, nm[2]);
        gp_range_end(p);
        gp_range_end(p);
        gp_range_begin(p, nm[3]);
        gp_range_end(p);
        gp_range_end(p);
    }
    gp_record_stats rs;
    gp_record_stats_get(p, &rs);
    ASSERT_EQ_INT(rs.kept + rs.aggregated, 6 * n);
    ASSERT_EQ_INT(rs.dropped, 0);
    gp_summary_row *r;
    size_t nr;
    ASSERT_EQ_INT(gp_summary_rows(p, &r, &nr), 0);
    const gp_summary_row *a = row_named(r, nr, nm[0]), *c = row_named(r, nr, nm[2]),
                         *d = row_named(r, nr, nm[3]);
    int64_t b_total = 0, b_self = 0, b_bytes = 0;
    uint64_t b_count = 0;
    for (size_t i = 0; i < nr; i++)
        if (!strcmp(r[i].name, nm[1])) {
            b_total += r[i].total_ns;
            b_self += r[i].self_ns;
            b_count += r[i].count;
            if (r[i].bytes > 0) b_bytes += r[i].bytes;
        }
    ASSERT(a && c && d);
    ASSERT_EQ_INT(a->count, n);
    ASSERT_EQ_INT(b_count, 2 * n);
    ASSERT_EQ_INT(c->count, 2 * n);
    ASSERT_EQ_INT(d->count, n);
    ASSERT_EQ_INT(b_bytes, 16 * n);
    ASSERT_EQ_INT(a->total_ns, a->self_ns + b_total + d->total_ns);
    ASSERT_EQ_INT(b_total, b_self + c->total_ns);
    ASSERT_EQ_INT(c->self_ns, c->total_ns);
    ASSERT_EQ_INT(d->self_ns, d->total_ns);
    gp_summary_rows_free(r, nr);
    gp_profiler_destroy(p);
}

/* Names whose cache sets (gp_rec_agg_set, by address) are chosen: each
 * name in a set of its own (every end found in the cache), two names
 * sharing a set (both kept, 2 ways), and three sharing one (they evict each
 * other: those ends take the full path). */
static const char name_pool[64][4] = {
    "n00", "n01", "n02", "n03", "n04", "n05", "n06", "n07", "n08", "n09", "n10", "n11", "n12",
    "n13", "n14", "n15", "n16", "n17", "n18", "n19", "n20", "n21", "n22", "n23", "n24", "n25",
    "n26", "n27", "n28", "n29", "n30", "n31", "n32", "n33", "n34", "n35", "n36", "n37", "n38",
    "n39", "n40", "n41", "n42", "n43", "n44", "n45", "n46", "n47", "n48", "n49", "n50", "n51",
    "n52", "n53", "n54", "n55", "n56", "n57", "n58", "n59", "n60", "n61", "n62", "n63"};

/* Fills nm with 4 pool names: same[i] == same[j] asks for names i and j in
 * one set, different values for different sets. 0 when the pool has none. */
static int pick_names(const int same[4], const char *nm[4])
{
    int used[64] = {0};
    unsigned set_of[4] = {0};
    for (int i = 0; i < 4; i++) {
        nm[i] = NULL;
        for (int k = 0; k < 64 && !nm[i]; k++) {
            if (used[k]) continue;
            unsigned s = gp_rec_agg_set(name_pool[k]);
            int ok = 1;
            for (int j = 0; j < i; j++)
                if ((same[j] == same[i]) != (set_of[j] == s)) ok = 0;
            if (ok) {
                used[k] = 1;
                set_of[i] = s;
                nm[i] = name_pool[k];
            }
        }
        if (!nm[i]) return 0;
    }
    return 1;
}

TEST(nested_names_exact_identities)
{
    static const int layouts[3][4] = {{0, 1, 2, 3}, {0, 0, 1, 2}, {0, 0, 1, 0}};
    for (int l = 0; l < 3; l++) {
        const char *nm[4];
        if (!pick_names(layouts[l], nm)) {
            printf("# layout %d: no such names in the pool (skipped)\n", l);
            continue;
        }
        nested_names_case(GP_SINK_AGGREGATE, 0, nm);
        nested_names_case(GP_SINK_AUTO, 5000, nm); /* kept, then rolled over */
        nested_names_case(GP_SINK_KEEP, 0, nm);
    }
}

/* A name buffer reused with other text after a results call (the names'
 * contract: valid until the next results call) names the later ranges: the
 * drain's cache by pointer checks the text. Also a second buffer of the
 * same text: one row. */
TEST(reused_name_buffer_renamed)
{
    gp_profiler *p = gp_profiler_create(NULL);
    ASSERT(p);
    char buf[16], other[16];
    strcpy(buf, "alpha");
    for (int i = 0; i < 10; i++) {
        gp_range_begin(p, buf);
        gp_range_end(p);
    }
    gp_record_stats rs;
    gp_record_stats_get(p, &rs);
    strcpy(buf, "beta"); /* shorter: the old text's tail is still in the buffer */
    strcpy(other, "alpha");
    for (int i = 0; i < 7; i++) {
        gp_range_begin(p, buf);
        gp_range_end(p);
        gp_range_begin(p, other);
        gp_range_end(p);
    }
    gp_record_stats_get(p, &rs);
    strcpy(buf, "alphabet"); /* longer, with the old text as its prefix */
    for (int i = 0; i < 3; i++) {
        gp_range_begin(p, buf);
        gp_range_end(p);
    }
    gp_summary_row *r;
    size_t nr;
    ASSERT_EQ_INT(gp_summary_rows(p, &r, &nr), 0);
    ASSERT(row_named(r, nr, "alpha") && row_named(r, nr, "beta") && row_named(r, nr, "alphabet"));
    ASSERT_EQ_INT(row_named(r, nr, "alpha")->count, 17);
    ASSERT_EQ_INT(row_named(r, nr, "beta")->count, 7);
    ASSERT_EQ_INT(row_named(r, nr, "alphabet")->count, 3);
    gp_summary_rows_free(r, nr);
    gp_profiler_destroy(p);
}

/* Keep with a cap: ranges beyond it are dropped and counted. */
TEST(keep_cap_counts_drops)
{
    gp_options o = {0};
    o.sink = GP_SINK_KEEP;
    o.keep_max = 500;
    gp_profiler *p = gp_profiler_create(&o);
    ASSERT(p);
    run_threads(p, 1, 10000);
    gp_record_stats rs;
    gp_record_stats_get(p, &rs);
    ASSERT_EQ_INT(rs.kept, 500);
    ASSERT_EQ_INT(rs.aggregated, 0);
    ASSERT_EQ_INT(rs.dropped, 20000 - 500);
    /* the export says how many were dropped (gpuprof summary notes it) */
    char path[128];
    snprintf(path, sizeof path, "/tmp/gp_test_sinks_dropped_%ld.json", (long)getpid());
    ASSERT_EQ_INT(gp_export_json(p, path), 0);
    gp_profiler_destroy(p);
    gp_trace *t;
    gp_err err;
    ASSERT_EQ_INT(gp_import_json_file(path, NULL, &t, &err), 0);
    ASSERT_EQ_INT(t->meta.lib_dropped, rs.dropped);
    gp_trace_destroy(t);
    unlink(path);
}

static long max_rss_kb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

/* Aggregate sink: 100 M ranges in bounded memory (the growth of the peak
 * RSS stays under 16 MB); every range is counted. */
TEST(aggregate_sink_bounded_100m)
{
    gp_options o = {0};
    o.sink = GP_SINK_AGGREGATE;
    gp_profiler *p = gp_profiler_create(&o);
    ASSERT(p);
    long before = max_rss_kb();
    /* 2 threads x 25 M x 2 ranges; a sanitizer build (10x slower hot path)
     * runs a tenth of it */
    long per = GP_TEST_SANITIZED ? 2500000 : 25000000;
    run_threads(p, 2, per);
    long grown = max_rss_kb() - before;
    printf("# aggregate sink: %ld M ranges, peak RSS grew by %ld kB\n", 4 * per / 1000000, grown);
    ASSERT_CMP_INT(grown, <, 16 * 1024);
    /* the bound for the whole process (a sanitizer's shadow memory
     * is not the library's) */
    if (!GP_TEST_SANITIZED) ASSERT_CMP_INT(max_rss_kb(), <, 64 * 1024);
    gp_summary_row *r;
    size_t nr;
    ASSERT_EQ_INT(gp_summary_rows(p, &r, &nr), 0);
    const gp_summary_row *outer = row_named(r, nr, "outer");
    ASSERT(outer);
    ASSERT_EQ_INT(outer->count, 2 * per);
    ASSERT_EQ_INT(outer->aggregated, 2 * per);
    gp_summary_rows_free(r, nr);
    gp_profiler_destroy(p);
}

/* Stream sink: every range reaches the file (as an event, or as a rollover
 * row when the backlog was full), and the file reads back to the counts. */
TEST(stream_sink_file)
{
    char path[128];
    snprintf(path, sizeof path, "/tmp/gp_test_stream_%ld.json", (long)getpid());
    gp_profiler *p = gp_test_stream_create(path);
    ASSERT(p);
    run_threads(p, 2, 100000);
    gp_summary_row *r;
    size_t nr;
    ASSERT_EQ_INT(gp_summary_rows(p, &r, &nr), 0);
    const gp_summary_row *outer = row_named(r, nr, "outer");
    ASSERT(outer);
    ASSERT_EQ_INT(outer->count, 200000);
    int64_t lib_total = outer->total_ns;
    gp_summary_rows_free(r, nr);
    gp_profiler_destroy(p); /* finishes the file */
    gp_trace *t;
    gp_err err;
    ASSERT_EQ_INT(gp_import_json_file(path, NULL, &t, &err), 0);
    gp_summary s;
    ASSERT_EQ_INT(gp_summary_compute(t, &s), 0);
    int found = 0;
    for (size_t i = 0; i < s.n; i++)
        if (!strcmp(gp_trace_s(t, s.rows[i].name), "outer")) {
            ASSERT_EQ_INT(s.rows[i].st.count, 200000);
            ASSERT_EQ_INT(s.rows[i].st.sum, lib_total);
            found = 1;
        }
    ASSERT(found);
    gp_summary_free(&s);
    gp_trace_destroy(t);
    unlink(path);
}

/* Stream sink, nested ranges: an end that finds the backlog full takes a
 * chunk beyond the cap and new begins roll over; once the drain has given
 * chunks back, begins record events again (they stopped for good before:
 * the kept count froze at the first overflow). Every range is counted once
 * (kept + aggregated, none dropped), and the per-name counts and totals of
 * the results are those of the file read back. */
static void nested_loop(gp_profiler *p, long n)
{
    for (long i = 0; i < n; i++) {
        gp_range_begin(p, "outer");
        gp_range_begin(p, "inner");
        gp_range_end(p);
        if (i % 3 == 0) { /* an odd number of events per outer range now and then */
            gp_range_begin(p, "odd");
            gp_range_end(p);
        }
        gp_range_end(p);
    }
}

TEST(stream_sink_resumes_after_overflow)
{
    char path[128];
    snprintf(path, sizeof path, "/tmp/gp_test_stream_resume_%ld.json", (long)getpid());
    gp_profiler *p = gp_test_stream_create(path);
    ASSERT(p);
    const long n1 = 300000, n2 = 40000;
    nested_loop(p, n1);
    gp_record_stats s1, s2;
    /* drains everything: every chunk but the current one goes back */
    ASSERT_EQ_INT(gp_record_stats_get(p, &s1), 0);
    ASSERT_CMP_INT(s1.aggregated, >, 0); /* the backlog was full: rollover */
    nested_loop(p, n2);
    ASSERT_EQ_INT(gp_record_stats_get(p, &s2), 0);
    /* the drain gave back all chunks but the current one: at least half
     * the backlog (32 chunks of 2048 events, 2 per range) is filled with
     * events again */
    ASSERT_CMP_INT(s2.kept - s1.kept, >=, 32 * 2048 / 2);
    const uint64_t n_odd = (uint64_t)((n1 + 2) / 3 + (n2 + 2) / 3);
    const uint64_t total = (uint64_t)(2 * (n1 + n2)) + n_odd;
    ASSERT_EQ_INT(s2.dropped, 0);
    ASSERT_EQ_INT(s2.kept + s2.aggregated, total);
    gp_summary_row *r;
    size_t nr;
    ASSERT_EQ_INT(gp_summary_rows(p, &r, &nr), 0);
    const char *names[3] = {"outer", "inner", "odd"};
    const uint64_t want[3] = {(uint64_t)(n1 + n2), (uint64_t)(n1 + n2), n_odd};
    int64_t lib_total[3];
    for (int k = 0; k < 3; k++) {
        const gp_summary_row *x = row_named(r, nr, names[k]);
        ASSERT(x);
        ASSERT_EQ_INT(x->count, want[k]);
        lib_total[k] = x->total_ns;
    }
    gp_summary_rows_free(r, nr);
    gp_profiler_destroy(p); /* finishes the file */
    gp_trace *t;
    gp_err err;
    ASSERT_EQ_INT(gp_import_json_file(path, NULL, &t, &err), 0);
    gp_summary sm;
    ASSERT_EQ_INT(gp_summary_compute(t, &sm), 0);
    int found = 0;
    for (size_t i = 0; i < sm.n; i++)
        for (int k = 0; k < 3; k++)
            if (!strcmp(gp_trace_s(t, sm.rows[i].name), names[k])) {
                ASSERT_EQ_INT(sm.rows[i].st.count, want[k]);
                ASSERT_EQ_INT(sm.rows[i].st.sum, lib_total[k]);
                found++;
            }
    ASSERT_EQ_INT(found, 3);
    gp_summary_free(&sm);
    gp_trace_destroy(t);
    unlink(path);
}

static void spin_ns(int64_t ns)
{
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    do {
        clock_gettime(CLOCK_MONOTONIC, &b);
    } while ((b.tv_sec - a.tv_sec) * 1000000000LL + (b.tv_nsec - a.tv_nsec) < ns);
}

/* A session's result holds the session's share only: calls before it are
 * not counted, bottlenecks are by self time, memory is the tracked peak in
 * the session; compare gives the speedup and memory difference. */
TEST(session_result_and_compare)
{
    gp_profiler *p = gp_profiler_create(NULL);
    ASSERT(p);
    for (int i = 0; i < 5; i++) { /* before the session */
        gp_range_begin(p, "load");
        gp_range_end(p);
    }
    static char buf_a[1], buf_b[1];
    gp_session *s = gp_session_begin(p, "train");
    ASSERT(s);
    gp_mem_track(p, "weights", buf_a, 4096, NULL, 0, "f32");
    gp_mem_track(p, "act", buf_b, 1 << 20, NULL, 0, "f32");
    gp_mem_untrack(p, buf_b);
    for (int i = 0; i < 3; i++) {
        gp_range_begin(p, "load");
        spin_ns(200000);
        gp_range_end(p);
        gp_range_begin(p, "step");
        spin_ns(1000000);
        gp_range_begin(p, "inner");
        spin_ns(3000000);
        gp_range_end(p);
        gp_range_end(p);
    }
    gp_session_result r;
    ASSERT_EQ_INT(gp_session_end(s, &r), 0);
    ASSERT_EQ_STR(r.name, "train");
    ASSERT_CMP_INT(r.total_ns, >=, 3 * 4200000 * 98 / 100);
    ASSERT_CMP_INT(r.cpu_ns, >, 0);
    ASSERT_EQ_INT(r.gpu_valid, 0);
    ASSERT_EQ_INT(r.mem_valid, 1);
    ASSERT_EQ_INT(r.mem_peak_bytes, 4096 + (1 << 20));
    ASSERT_EQ_INT(r.mem_allocated_bytes, 4096);
    ASSERT_EQ_INT(r.nbottlenecks, 3);
    /* sorted by self time; each at least its spin less 2 % (a loaded
     * machine only adds time; the TSC calibration may be off by a little),
     * the 5 calls of "load" before the session not counted */
    const gp_summary_row *ld = NULL, *stp = NULL, *inr = NULL;
    for (size_t i = 0; i < r.nbottlenecks; i++) {
        if (i) ASSERT_CMP_INT(r.bottlenecks[i - 1].self_ns, >=, r.bottlenecks[i].self_ns);
        if (!strcmp(r.bottlenecks[i].name, "load")) ld = &r.bottlenecks[i];
        if (!strcmp(r.bottlenecks[i].name, "step")) stp = &r.bottlenecks[i];
        if (!strcmp(r.bottlenecks[i].name, "inner")) inr = &r.bottlenecks[i];
    }
    ASSERT(ld && stp && inr);
    ASSERT_EQ_INT(ld->count, 3);
    ASSERT_EQ_INT(ld->min_ns, -1); /* unknown: "load" ran before the session too */
    ASSERT_CMP_INT(ld->self_ns, >=, 3 * 196000);
    ASSERT_EQ_INT(inr->count, 3);
    ASSERT_CMP_INT(inr->min_ns, >=, 2940000); /* only ran in the session: its own */
    ASSERT_CMP_INT(inr->self_ns, >=, 8820000);
    ASSERT_CMP_INT(stp->self_ns, >=, 2940000);
    /* step's inclusive time holds inner's */
    ASSERT_EQ_INT(stp->total_ns - stp->self_ns, inr->total_ns);
    char path[128];
    snprintf(path, sizeof path, "/tmp/gp_test_session_%ld.json", (long)getpid());
    ASSERT_EQ_INT(gp_session_result_json(&r, path), 0);
    FILE *f = fopen(path, "r");
    ASSERT(f);
    char text[8192];
    size_t got = fread(text, 1, sizeof text - 1, f);
    text[got] = 0;
    fclose(f);
    unlink(path);
    ASSERT_CONTAINS(text, "\"schema\":\"gpuprof-session-1\"");
    ASSERT_CONTAINS(text, "\"mem_peak_bytes\":1052672");
    ASSERT_CONTAINS(text, "\"gpu_ns\":null");
    gp_session *s2 = gp_session_begin(p, "faster");
    gp_range_begin(p, "step");
    spin_ns(1000000);
    gp_range_end(p);
    gp_session_result r2;
    ASSERT_EQ_INT(gp_session_end(s2, &r2), 0);
    gp_session_cmp c;
    ASSERT_EQ_INT(gp_session_compare(&r, &r2, &c), 0);
    ASSERT_NEAR(c.speedup, (double)r.total_ns / (double)r2.total_ns, 1e-12);
    /* the direction follows the two measured totals (the second session
     * spins less, but a loaded machine may stretch either one) */
    ASSERT_EQ_INT(c.speedup > 1.0, r.total_ns > r2.total_ns);
    ASSERT_EQ_INT(c.gpu_valid, 0);
    /* gp_export_json holds both results, in order, as the session JSON */
    ASSERT_EQ_INT(gp_export_json(p, path), 0);
    f = fopen(path, "r");
    ASSERT(f);
    static char big[1 << 16];
    got = fread(big, 1, sizeof big - 1, f);
    big[got] = 0;
    fclose(f);
    unlink(path);
    const char *ss =
        strstr(big, "\"sessions\":[{\"schema\":\"gpuprof-session-1\",\"name\":\"train\"");
    ASSERT(ss);
    ASSERT(strstr(ss, "\"mem_peak_bytes\":1052672"));
    ASSERT(strstr(ss, "{\"schema\":\"gpuprof-session-1\",\"name\":\"faster\""));
    gp_session_result_free(&r);
    gp_session_result_free(&r2);
    gp_mem_untrack(p, buf_a);
    /* nested sessions keep their own peaks: the outer one's 8 MiB came
     * before the inner began (it was lost: the inner one's began again) */
    static char big_a[1], small_b[1];
    gp_session *outer = gp_session_begin(p, "outer"), *inner;
    ASSERT(outer);
    gp_mem_track(p, "big", big_a, 8 << 20, NULL, 0, "u8");
    gp_mem_untrack(p, big_a);
    inner = gp_session_begin(p, "inner");
    ASSERT(inner);
    gp_mem_track(p, "small", small_b, 4096, NULL, 0, "u8");
    gp_session_result ri, ro;
    ASSERT_EQ_INT(gp_session_end(inner, &ri), 0);
    ASSERT_EQ_INT(gp_session_end(outer, &ro), 0);
    ASSERT_EQ_INT(ri.mem_peak_bytes, 4096);
    ASSERT_EQ_INT(ro.mem_peak_bytes, 8 << 20);
    ASSERT_EQ_INT(ro.mem_allocated_bytes, 4096);
    gp_session_result_free(&ri);
    gp_session_result_free(&ro);
    gp_mem_untrack(p, small_b);
    gp_profiler_destroy(p);
}

/* A program that resets its profiler every so often and gives its kept
 * ranges distinct string attributes (request ids) stays in bounded memory:
 * each value is a copy owned by its range, freed by the reset (before,
 * values were interned for the profiler's life: RSS grew by ~13 MB per
 * round of 131,072 kept ranges, 80 MB over the 6 rounds measured here).
 * The values of the kept ranges are still exported. */
TEST(attr_values_freed_by_reset)
{
    gp_profiler *p = gp_profiler_create(NULL); /* auto sink: 131,072 kept per thread */
    ASSERT(p);
    char v[64];
    long rss2 = 0;
    for (int round = 0; round < 8; round++) {
        for (long i = 0; i < 200000; i++) {
            gp_range_begin(p, "req");
            snprintf(v, sizeof v, "request-%d-%ld-abcdefghijklmnopqrstuvwx", round, i);
            gp_range_attr_str(p, "id", v);
            gp_range_end(p);
        }
        gp_record_stats st;
        gp_record_stats_get(p, &st); /* drains: the values reach the kept slices */
        ASSERT_EQ_INT(st.kept, 131072);
        if (round == 7) break;
        gp_profiler_reset(p);
        if (round == 1) rss2 = gp_test_rss_kb();
    }
    long rss8 = gp_test_rss_kb();
    printf("  RSS after 2 rounds %ld kB, after 8 %ld kB\n", rss2, rss8);
    ASSERT_CMP_INT(rss2, >, 0);
    /* ASan's quarantine holds freed memory: no bound there (LeakSanitizer
     * checks the frees instead) */
    if (!GP_TEST_SANITIZED) ASSERT_CMP_INT(rss8 - rss2, <, 16 * 1024);
    char path[128];
    snprintf(path, sizeof path, "/tmp/gp_test_attr_reset_%ld.json", (long)getpid());
    ASSERT_EQ_INT(gp_export_json(p, path), 0);
    char *text = gp_test_slurp(path);
    unlink(path);
    ASSERT(text);
    ASSERT_CONTAINS(text, "\"id\":\"request-7-0-abcdefghijklmnopqrstuvwx\"");
    ASSERT(!strstr(text, "request-6-"));
    free(text);
    gp_profiler_destroy(p);
}

/* The recommendation of rule `id` in r, or NULL. */
static const char *session_rec(const gp_session_result *r, const char *id)
{
    char key[64];
    snprintf(key, sizeof key, "] %s:", id);
    for (size_t i = 0; i < r->nrecommendations; i++)
        if (strstr(r->recommendations[i], key)) return r->recommendations[i];
    return NULL;
}

/* One sink's case of session_advice_is_the_sessions. */
static void session_advice_case(gp_sink sink)
{
    gp_options o = {0};
    o.sink = sink;
    char path[128];
    snprintf(path, sizeof path, "/tmp/gp_test_session_advice_%ld.json", (long)getpid());
    if (sink == GP_SINK_STREAM) o.stream_path = path;
    if (sink != GP_SINK_KEEP) o.keep_max = 8;
    printf("  sink %d\n", (int)sink);
    gp_profiler *p = gp_profiler_create(&o);
    ASSERT(p);
    for (int i = 0; i < 200; i++) { /* before any session: small GPU ops */
        gp_range_begin_ex(p, "tiny_gpu", GP_DEV_GPU, GP_BACKEND_OPENCL, 0);
        spin_ns(2000);
        gp_range_end(p);
    }
    gp_session *a = gp_session_begin(p, "cpu");
    ASSERT(a);
    gp_range_begin_ex(p, "big_cpu", GP_DEV_CPU, GP_BACKEND_CPU, 0);
    spin_ns(15000000); /* large-cpu-op: over 10 ms */
    gp_range_end(p);
    gp_session_result ra;
    ASSERT_EQ_INT(gp_session_end(a, &ra), 0);
    gp_session *b = gp_session_begin(p, "gpu");
    ASSERT(b);
    for (int i = 0; i < 150; i++) {
        gp_range_begin_ex(p, "tiny_gpu", GP_DEV_GPU, GP_BACKEND_OPENCL, 0);
        spin_ns(2000);
        gp_range_end(p);
    }
    gp_session_result rb;
    ASSERT_EQ_INT(gp_session_end(b, &rb), 0);
    for (size_t i = 0; i < ra.nrecommendations; i++) printf("  cpu: %s\n", ra.recommendations[i]);
    for (size_t i = 0; i < rb.nrecommendations; i++) printf("  gpu: %s\n", rb.recommendations[i]);
    const char *x = session_rec(&ra, "large-cpu-op");
    ASSERT(x);
    ASSERT_CONTAINS(x, "1 CPU operation calls");
    /* its share of the session's span (~100 %): the rule's cap, medium */
    ASSERT(!strncmp(x, "[medium]", 8));
    ASSERT(!session_rec(&ra, "small-gpu-op"));
    ASSERT(!session_rec(&ra, "cache-calls"));
    x = session_rec(&rb, "small-gpu-op");
    ASSERT(x);
    ASSERT_CONTAINS(x, "(150 calls)");
    ASSERT(!session_rec(&rb, "large-cpu-op"));
    /* the whole profiler's advice still sees both (gp_export_json's file,
     * `gpuprof advise`): nothing is taken from the trace */
    gp_session *w = gp_session_begin(p, "whole");
    ASSERT(w);
    gp_profiler_reset(p); /* a reset in a session: the session is all there is */
    gp_range_begin_ex(p, "big_cpu", GP_DEV_CPU, GP_BACKEND_CPU, 0);
    spin_ns(12000000);
    gp_range_end(p);
    gp_session_result rw;
    ASSERT_EQ_INT(gp_session_end(w, &rw), 0);
    ASSERT(session_rec(&rw, "large-cpu-op"));
    ASSERT(!session_rec(&rw, "small-gpu-op"));
    gp_session_result_free(&ra);
    gp_session_result_free(&rb);
    gp_session_result_free(&rw);
    gp_profiler_destroy(p);
    unlink(path);
}

/* A session's recommendations come from what ran in it: the events that
 * ended in it and its share of the aggregated (and streamed) rows, not
 * everything the profiler holds (before, both sessions below gave both
 * findings, and the GPU session counted the 200 calls made before it too).
 * In the default sink with a cap of 8 kept ranges (almost every range
 * aggregated), the keep sink (every range a slice) and a file stream
 * (ranges written out, their statistics kept). */
TEST(session_advice_is_the_sessions)
{
    session_advice_case(GP_SINK_AUTO);
    session_advice_case(GP_SINK_KEEP);
    session_advice_case(GP_SINK_STREAM);
}

/* 1 when a thread of this process is named gpuprof-drain. */
static int has_drain_thread(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "grep -qx gpuprof-drain /proc/%ld/task/*/comm", (long)getpid());
    return system(cmd) == 0;
}

/* After fork the child has no drain thread: it is started again when the
 * child needs chunks, and every range of the child is accounted for. */
TEST(fork_child_records)
{
    gp_options o = {0};
    o.keep_max = 50000;
    gp_profiler *p = gp_profiler_create(&o);
    ASSERT(p);
    run_threads(p, 1, 1000);
    ASSERT(has_drain_thread());
    fflush(stdout);
    pid_t pid = fork();
    ASSERT(pid >= 0);
    if (pid == 0) {
        gp_profiler_reset(p);
        work w = {p, 300000};
        record(&w);
        gp_record_stats rs;
        gp_record_stats_get(p, &rs);
        if (rs.kept + rs.aggregated != 600000 || rs.dropped != 0) _exit(1);
        _exit(has_drain_thread() ? 0 : 2);
    }
    int st = 0;
    ASSERT_EQ_INT(waitpid(pid, &st, 0), pid);
    ASSERT(WIFEXITED(st));
    ASSERT_EQ_INT(WEXITSTATUS(st), 0);
    gp_profiler_destroy(p);
}

/* Records, on the clock of the test with keep_max 3 (sink: default, or a
 * stream to `stream`):
 *   [1000, 5000] outer, [1000, 5000] inner: same interval (kept, kept)
 *   [6000, 10000] outer (kept), [7000, 9000] inner (aggregated inline)
 * so outer: count 2, total 8000, self 0 + 2000; inner: count 2, total 6000,
 * self 4000 + 2000. Checks the library's rows against those values and
 * returns the profiler (not destroyed). */
static gp_profiler *record_fixed(const char *stream)
{
    gp_options o = {0};
    o.clock = 1;
    o.keep_max = 3;
    o.sink = stream ? GP_SINK_STREAM : GP_SINK_AUTO;
    o.stream_path = stream;
    /* created on the kernel's clock (see self_time_event_child_of_inline);
     * the profiler's start is before t0, as every time recorded */
    gp_profiler *p = gp_profiler_create(&o);
    if (!p) return NULL;
    int64_t t0 = gp_test_real_mono_ns();
    atomic_store(&fake_ns, t0);
    atomic_store(&fake_on, 1);
    static const int64_t at[] = {1000, 1000, 5000, 5000, 6000, 7000, 9000, 10000};
    static const int begin[] = {1, 1, 0, 0, 1, 1, 0, 0};
    static const char *const name[] = {"outer", "inner", 0, 0, "outer", "inner", 0, 0};
    for (int i = 0; i < 8; i++) {
        atomic_store(&fake_ns, t0 + at[i]);
        if (begin[i])
            gp_range_begin(p, name[i]);
        else
            gp_range_end(p);
    }
    atomic_store(&fake_on, 0);
    return p;
}

/* The summary of trace t has outer and inner with the values above. */
static void check_fixed_summary(const gp_trace *t, const char *what)
{
    gp_summary s;
    ASSERT_EQ_INT(gp_summary_compute(t, &s), 0);
    int seen = 0;
    for (size_t i = 0; i < s.n; i++) {
        const char *n = gp_trace_s(t, s.rows[i].name);
        int outer = !strcmp(n, "outer");
        if (!outer && strcmp(n, "inner")) continue;
        seen++;
        if (s.rows[i].st.count != 2 || s.rows[i].st.sum != (outer ? 8000 : 6000) ||
            s.rows[i].self_ns != (outer ? 2000 : 6000))
            fprintf(stderr, "  %s: %s: count %llu total %lld self %lld\n", what, n,
                    (unsigned long long)s.rows[i].st.count, (long long)s.rows[i].st.sum,
                    (long long)s.rows[i].self_ns);
        ASSERT_EQ_INT(s.rows[i].st.count, 2);
        ASSERT_EQ_INT(s.rows[i].st.sum, outer ? 8000 : 6000);
        ASSERT_EQ_INT(s.rows[i].self_ns, outer ? 2000 : 6000);
    }
    ASSERT_EQ_INT(seen, 2);
    gp_summary_free(&s);
}

static void check_fixed_rows(gp_profiler *p)
{
    gp_summary_row *r;
    size_t nr;
    ASSERT_EQ_INT(gp_summary_rows(p, &r, &nr), 0);
    const gp_summary_row *outer = row_named(r, nr, "outer"), *inner = row_named(r, nr, "inner");
    ASSERT(outer && inner);
    ASSERT_EQ_INT(outer->count, 2);
    ASSERT_EQ_INT(outer->total_ns, 8000);
    ASSERT_EQ_INT(outer->self_ns, 2000);
    ASSERT_EQ_INT(inner->count, 2);
    ASSERT_EQ_INT(inner->total_ns, 6000);
    ASSERT_EQ_INT(inner->self_ns, 6000);
    gp_summary_rows_free(r, nr);
}

/* Self time has one rule (docs/api.md "Self time"): a child slice with its
 * parent's exact interval stays the child, and a kept range's children
 * aggregated inline are subtracted, in the export and both streams. */
TEST(self_time_fixed_clock)
{
    char path[128];
    gp_trace *t;
    gp_err err;
    /* default sink, then gp_export_json read back */
    gp_profiler *p = record_fixed(NULL);
    ASSERT(p);
    check_fixed_rows(p);
    snprintf(path, sizeof path, "/tmp/gp_test_sinks_fixed_%ld.json", (long)getpid());
    ASSERT_EQ_INT(gp_export_json(p, path), 0);
    gp_profiler_destroy(p);
    char *text = gp_test_slurp(path);
    ASSERT(text);
    /* the parent comes first, and the kept outer carries its inline child */
    char *o1 = strstr(text, "\"name\":\"outer\",\"pid\""),
         *i1 = strstr(text, "\"name\":\"inner\",\"pid\"");
    ASSERT(o1 && i1 && o1 < i1);
    ASSERT(strstr(text, "\"inline_child_ns\":2000"));
    free(text);
    ASSERT_EQ_INT(gp_import_json_file(path, NULL, &t, &err), 0);
    check_fixed_summary(t, "export");
    gp_trace_destroy(t);
    unlink(path);
    /* file stream */
    snprintf(path, sizeof path, "/tmp/gp_test_sinks_fixed_%ld.stream.json", (long)getpid());
    p = record_fixed(path);
    ASSERT(p);
    check_fixed_rows(p);
    gp_profiler_destroy(p);
    int irc = gp_import_json_file(path, NULL, &t, &err);
    if (irc) fprintf(stderr, "  %s\n", err.msg);
    ASSERT_EQ_INT(irc, 0);
    check_fixed_summary(t, "file stream");
    gp_trace_destroy(t);
    unlink(path);
    /* store stream */
    snprintf(path, sizeof path, "/tmp/gp_test_sinks_fixed_%ld.db", (long)getpid());
    gp_test_rm_db(path);
    p = record_fixed(path);
    ASSERT(p);
    check_fixed_rows(p);
    gp_profiler_destroy(p);
    ASSERT_EQ_INT(gp_store_load(path, 0, &t, &err), 0);
    check_fixed_summary(t, "store stream");
    gp_trace_destroy(t);
    gp_test_rm_db(path);
}

/* A parent aggregated inline (its begin found the stream's backlog full)
 * whose child finds a chunk back and is recorded as events: the parent's
 * self time excludes that child as it does an inline child (the child's
 * time was counted as the parent's self time before). On the test's clock:
 * each "outer" lasts 14 ns with four 2 ns "inner" children, so outer's
 * self time is exactly 6 ns per range, in the library's rows and in the
 * stream read back, however the ranges were split between events and
 * inline aggregation (both happen: the loop outruns the stream's drain). */
TEST(self_time_event_child_of_inline)
{
    char path[128];
    snprintf(path, sizeof path, "/tmp/gp_test_sinks_evchild_%ld.json", (long)getpid());
    gp_options o = {0};
    o.clock = 1;
    o.sink = GP_SINK_STREAM;
    o.stream_path = path;
    /* created on the kernel's clock: the first profiler calibrates the
     * TSC against CLOCK_MONOTONIC, which must advance */
    gp_profiler *p = gp_profiler_create(&o);
    ASSERT(p);
    int64_t t = gp_test_real_mono_ns();
    atomic_store(&fake_ns, t);
    atomic_store(&fake_on, 1);
    const long n = 1500000;
    for (long i = 0; i < n; i++) {
        atomic_store(&fake_ns, t);
        gp_range_begin(p, "outer");
        for (int k = 0; k < 4; k++) {
            atomic_store(&fake_ns, t + 1 + 3 * k);
            gp_range_begin(p, "inner");
            atomic_store(&fake_ns, t + 3 + 3 * k);
            gp_range_end(p);
        }
        atomic_store(&fake_ns, t + 14);
        gp_range_end(p);
        t += 20;
    }
    atomic_store(&fake_on, 0);
    gp_record_stats rs;
    ASSERT_EQ_INT(gp_record_stats_get(p, &rs), 0);
    ASSERT_EQ_INT(rs.dropped, 0);
    ASSERT_EQ_INT(rs.kept + rs.aggregated, (uint64_t)(5 * n));
    ASSERT_CMP_INT(rs.kept, >, 0);
    ASSERT_CMP_INT(rs.aggregated, >, 0);
    gp_summary_row *r;
    size_t nr;
    ASSERT_EQ_INT(gp_summary_rows(p, &r, &nr), 0);
    const gp_summary_row *outer = row_named(r, nr, "outer"), *inner = row_named(r, nr, "inner");
    ASSERT(outer && inner);
    ASSERT_EQ_INT(outer->count, (uint64_t)n);
    ASSERT_EQ_INT(outer->total_ns, 14 * n);
    ASSERT_EQ_INT(outer->self_ns, 6 * n);
    ASSERT_EQ_INT(inner->count, (uint64_t)(4 * n));
    ASSERT_EQ_INT(inner->total_ns, 8 * n);
    ASSERT_EQ_INT(inner->self_ns, 8 * n);
    gp_summary_rows_free(r, nr);
    gp_profiler_destroy(p);
    gp_trace *tr;
    gp_err err;
    ASSERT_EQ_INT(gp_import_json_file(path, NULL, &tr, &err), 0);
    gp_summary sm;
    ASSERT_EQ_INT(gp_summary_compute(tr, &sm), 0);
    int seen = 0;
    for (size_t i = 0; i < sm.n; i++) {
        const char *nm = gp_trace_s(tr, sm.rows[i].name);
        if (!strcmp(nm, "outer")) {
            ASSERT_EQ_INT(sm.rows[i].st.sum, 14 * n);
            ASSERT_EQ_INT(sm.rows[i].self_ns, 6 * n);
            seen++;
        } else if (!strcmp(nm, "inner")) {
            ASSERT_EQ_INT(sm.rows[i].st.sum, 8 * n);
            ASSERT_EQ_INT(sm.rows[i].self_ns, 8 * n);
            seen++;
        }
    }
    ASSERT_EQ_INT(seen, 2);
    gp_summary_free(&sm);
    gp_trace_destroy(tr);
    unlink(path);
}

/* count of slices named nm in the trace file at path (-1: it does not
 * import) */
static long file_count(const char *path, const char *nm)
{
    gp_trace *t;
    gp_err err;
    if (gp_import_json_file(path, NULL, &t, &err)) {
        fprintf(stderr, "  %s\n", err.msg);
        return -1;
    }
    long c = 0;
    for (size_t i = 0; i < t->slices.n; i++) c += !strcmp(gp_trace_s(t, t->slices.v[i].name), nm);
    gp_trace_destroy(t);
    return c;
}

/* A file stream across fork: the parent's file holds the parent's ranges
 * only and stays a valid trace whatever the child does (it wrote its own
 * end into the parent's file before); the child's ranges recorded after the
 * fork are in its own file, PATH with ".<pid>" before ".json", created at
 * its first output (none for a child that records nothing). */
TEST(file_stream_fork_child)
{
    char path[128], cpath[160];
    snprintf(path, sizeof path, "/tmp/gp_test_sinks_forkfile_%ld.json", (long)getpid());
    gp_profiler *p = gp_test_stream_create(path);
    ASSERT(p);
    for (int i = 0; i < 1000; i++) {
        gp_range_begin(p, "parent");
        gp_range_end(p);
    }
    gp_range_begin(p, "open_at_fork"); /* the parent's: ends in the parent */
    pid_t pid = fork();
    ASSERT(pid >= 0);
    if (pid == 0) {
        for (int i = 0; i < 10; i++) {
            gp_range_begin(p, "child");
            gp_range_end(p);
        }
        gp_record_stats rs;
        if (gp_record_stats_get(p, &rs) || rs.kept + rs.aggregated != 10) _exit(3);
        gp_profiler_destroy(p); /* finishes the child's file */
        _exit(0);
    }
    int st = 0;
    ASSERT_EQ_INT(waitpid(pid, &st, 0), pid);
    ASSERT(WIFEXITED(st));
    ASSERT_EQ_INT(WEXITSTATUS(st), 0);
    gp_range_end(p);
    pid_t quiet = fork(); /* a child that records nothing leaves no file */
    ASSERT(quiet >= 0);
    if (quiet == 0) {
        gp_profiler_destroy(p);
        _exit(0);
    }
    ASSERT_EQ_INT(waitpid(quiet, &st, 0), quiet);
    ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    snprintf(cpath, sizeof cpath, "/tmp/gp_test_sinks_forkfile_%ld.%ld.json", (long)getpid(),
             (long)quiet);
    ASSERT(access(cpath, F_OK) != 0);
    for (int i = 0; i < 300; i++) {
        gp_range_begin(p, "parent");
        gp_range_end(p);
    }
    gp_profiler_destroy(p);
    ASSERT_EQ_INT(file_count(path, "parent"), 1300);
    ASSERT_EQ_INT(file_count(path, "open_at_fork"), 1);
    ASSERT_EQ_INT(file_count(path, "child"), 0);
    snprintf(cpath, sizeof cpath, "/tmp/gp_test_sinks_forkfile_%ld.%ld.json", (long)getpid(),
             (long)pid);
    ASSERT_EQ_INT(file_count(cpath, "child"), 10);
    ASSERT_EQ_INT(file_count(cpath, "parent"), 0);
    unlink(path);
    unlink(cpath);
}

/* complete "step" events in text[0..n): lines that hold one and end
 * with its closing braces (the writer puts one event on a line; a step's
 * args are flat, so "}}" ends only a whole event, the last line too) */
static size_t complete_steps(const char *text, size_t n)
{
    size_t c = 0;
    for (size_t i = 0; i < n;) {
        const char *nl = memchr(text + i, '\n', n - i);
        size_t e = nl ? (size_t)(nl - text) : n;
        size_t len = e - i;
        while (len && text[i + len - 1] == ',') len--;
        if (len >= 2 && text[i] == '{' && text[i + len - 1] == '}' && text[i + len - 2] == '}' &&
            memmem(text + i, len, "\"name\":\"step\"", 13))
            c++;
        i = e + 1;
    }
    return c;
}

static uint64_t step_count(gp_trace *t)
{
    uint64_t n = 0;
    for (size_t i = 0; i < t->slices.n; i++)
        n += !strcmp(gp_trace_s(t, t->slices.v[i].name), "step");
    return n;
}

/* A program streaming to a file and killed (SIGKILL) leaves a file without
 * its end: it reads back up to the cut, every complete event of it, on the
 * mapped and read paths, with 1 and 2 threads; cut at any byte after the
 * events began it still does (a partly written event is dropped); cut in
 * its header, or an ordinary trace cut the same way, is an error. */
TEST(file_stream_survives_kill)
{
    char path[128];
    snprintf(path, sizeof path, "/tmp/gp_test_killed_%ld.json", (long)getpid());
    fflush(stdout);
    pid_t pid = fork();
    ASSERT(pid >= 0);
    if (pid == 0) gp_test_stream_forever(path, 300);
    struct stat sb = {0};
    for (int i = 0; i < 3000 && (stat(path, &sb) != 0 || sb.st_size < 3 << 20); i++) {
        struct timespec ts = {0, 10000000};
        nanosleep(&ts, NULL);
    }
    kill(pid, SIGKILL);
    int st = 0;
    ASSERT_EQ_INT(waitpid(pid, &st, 0), pid);
    ASSERT(WIFSIGNALED(st));
    ASSERT_EQ_INT(stat(path, &sb), 0);
    ASSERT_CMP_INT(sb.st_size, >=, 3 << 20);
    char *text = gp_test_slurp(path);
    ASSERT(text);
    size_t n = strlen(text);
    ASSERT_EQ_INT(n, (size_t)sb.st_size);
    size_t want = complete_steps(text, n);
    ASSERT_CMP_INT(want, >, 10000);
    static const char *modes[] = {"0", "always"};
    for (int m = 0; m < 2; m++)
        for (int th = 1; th <= 2; th++) {
            setenv("GPUPROF_IMPORT_MMAP", modes[m], 1);
            setenv("GPUPROF_SPLIT_MIN_BYTES", "1000000", 1); /* 2 threads: a split import */
            gp_import_opts io = {0};
            io.threads = th;
            gp_trace *t;
            gp_err err = {0};
            ASSERT_EQ_INT(gp_import_json_file(path, &io, &t, &err), 0);
            ASSERT_EQ_INT(t->meta.unterminated, 1);
            ASSERT_EQ_INT(t->meta.gp_stream, 1);
            ASSERT_EQ_INT(step_count(t), want);
            gp_trace_destroy(t);
        }
    unsetenv("GPUPROF_IMPORT_MMAP");
    unsetenv("GPUPROF_SPLIT_MIN_BYTES");
    /* cuts: the last 3 events byte by byte, then offsets across the file */
    const char *ev0 = strstr(text, "\"traceEvents\":[");
    ASSERT(ev0);
    size_t first = (size_t)(ev0 - text) + 15;
    size_t cuts[400], nc = 0;
    for (size_t c = n > 700 ? n - 700 : first; c <= n && nc < 300; c += 3) cuts[nc++] = c;
    for (int k = 1; k < 100; k++) cuts[nc++] = first + (n - first) / 100 * (size_t)k + (size_t)k;
    for (size_t i = 0; i < nc; i++) {
        gp_trace *t;
        gp_err err = {0};
        ASSERT_EQ_INT(gp_import_json_mem(text, cuts[i], "cut.json", &t, &err), 0);
        ASSERT_EQ_INT(step_count(t), complete_steps(text, cuts[i]));
        gp_trace_destroy(t);
    }
    /* cut in the header: an error */
    gp_trace *t = NULL;
    gp_err err = {0};
    ASSERT_CMP_INT(gp_import_json_mem(text, first - 20, "cut.json", &t, &err), !=, 0);
    /* an ordinary trace (no "gpuprofStream") cut inside its events: an error */
    const char *lead = "{\"gpuprofStream\":1,";
    ASSERT(!strncmp(text, lead, strlen(lead)));
    size_t m = cuts[nc / 2];
    char *plain = malloc(m);
    ASSERT(plain);
    plain[0] = '{';
    memcpy(plain + 1, text + strlen(lead), m - strlen(lead));
    size_t pm = 1 + m - strlen(lead);
    ASSERT_CMP_INT(gp_import_json_mem(plain, pm, "plain.json", &t, &err), !=, 0);
    ASSERT(strstr(err.msg, "truncated"));
    free(plain);
    free(text);
    unlink(path);
}

/* Only a document whose first key is "gpuprofStream" is read up to a cut
 * in its events, the same on every path (in memory, a file read whole, a
 * file split over 2 threads), whitespace around the key allowed; the key
 * in second place changes nothing (the cut is an error). */
TEST(stream_marker_first_key_only)
{
    static const char *heads[] = {"{\"gpuprofStream\":1,\"traceEvents\":[\n",
                                  " \n{ \"gpuprofStream\" : 1 , \"traceEvents\":[\n",
                                  "{\"traceName\":\"x\",\"gpuprofStream\":1,\"traceEvents\":[\n"};
    char path[128];
    snprintf(path, sizeof path, "/tmp/gp_test_marker_%ld.json", (long)getpid());
    setenv("GPUPROF_SPLIT_MIN_BYTES", "100000", 1);
    for (int h = 0; h < 3; h++) {
        gp_sbuf b = {0};
        gp_sbuf_puts(&b, heads[h]);
        for (int i = 0; i < 20000; i++)
            gp_sbuf_printf(&b,
                           "%s{\"ph\":\"X\",\"cat\":\"c\",\"name\":\"step\",\"pid\":1,\"tid\":%d,"
                           "\"ts\":%d,\"dur\":3,\"args\":{\"k\":1}}",
                           i ? ",\n" : "", 1 + i % 3, 10 * i);
        size_t cut = b.n - 1000 - 17; /* inside an event near the end */
        size_t want = complete_steps(b.s, cut);
        ASSERT_CMP_INT(want, >, 19000);
        FILE *f = fopen(path, "wb");
        ASSERT(f);
        ASSERT_EQ_INT(fwrite(b.s, 1, cut, f), cut);
        fclose(f);
        for (int way = 0; way < 3; way++) {
            gp_trace *t = NULL;
            gp_err err = {0};
            gp_import_opts io = {0};
            io.threads = way == 2 ? 2 : 1;
            int rc = way == 0 ? gp_import_json_mem(b.s, cut, "m.json", &t, &err)
                              : gp_import_json_file(path, &io, &t, &err);
            if (h < 2) {
                ASSERT_EQ_INT(rc, 0);
                ASSERT_EQ_INT(t->meta.unterminated, 1);
                ASSERT_EQ_INT(step_count(t), want);
                gp_trace_destroy(t);
            } else {
                ASSERT_CMP_INT(rc, !=, 0);
                ASSERT(strstr(err.msg, "truncated"));
            }
        }
        gp_sbuf_free(&b);
    }
    unsetenv("GPUPROF_SPLIT_MIN_BYTES");
    unlink(path);
}

/* the RSS test runs first: later tests raise the process's peak */
TEST_MAIN(aggregate_sink_bounded_100m, sketch_quantiles_vs_sorting, summary_merges_aggregates,
          auto_sink_rollover_exact, keep_cap_counts_drops, stream_sink_file,
          stream_sink_resumes_after_overflow, session_result_and_compare,
          session_advice_is_the_sessions, attr_values_freed_by_reset, fork_child_records,
          self_time_fixed_clock, file_stream_survives_kill, stream_marker_first_key_only,
          nested_names_exact_identities, reused_name_buffer_renamed,
          self_time_event_child_of_inline, file_stream_fork_child)
