/* tests/test_libgpuprof_nesting.c: libgpuprof nesting across gp_disable /
 * gp_enable: an end always closes its own begin (counted while off), the
 * inline wrappers' state returns to "off, nothing open", deep counted levels,
 * GP_SCOPE, attributes on counted levels, and another thread's open range. */
#include "test.h"
#include <gpuprof/gpuprof.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

static const gp_summary_row *find_row(const gp_summary_row *r, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(r[i].name, name)) return &r[i];
    return NULL;
}

/* Summary rows of p (caller frees). */
static gp_summary_row *rows_of(gp_profiler *p, size_t *n)
{
    gp_summary_row *r = NULL;
    if (gp_summary_rows(p, &r, n)) return NULL;
    return r;
}

TEST(end_after_disable_closes_inner)
{
    gp_profiler *p = gp_profiler_create(NULL);
    gp_range_begin(p, "outer");
    gp_disable(p);
    ASSERT_EQ_INT(gp_enabled(p), 0);
    ASSERT_EQ_INT(gp_state_(p), GP_STATE_OFF_OPEN_); /* "outer" is open */
    gp_range_begin(p, "inner");                      /* counted, not recorded */
    gp_range_end(p);                                 /* closes "inner", not "outer" */
    gp_test_sleep_ms(30);
    gp_range_end(p);                            /* closes "outer" */
    ASSERT_EQ_INT(gp_state_(p), GP_STATE_OFF_); /* nothing open: inline skip again */
    size_t n;
    gp_summary_row *r = rows_of(p, &n);
    ASSERT(r);
    ASSERT_EQ_INT(n, 1);
    ASSERT_EQ_STR(r[0].name, "outer");
    /* closed by its own end, after the sleep (the old behaviour closed it at
     * the inner end, before the sleep) */
    ASSERT_CMP_INT(r[0].total_ns, >=, 25000000);
    gp_summary_rows_free(r, n);
    gp_profiler_destroy(p);
}

TEST(reenable_inside_counted_level)
{
    gp_profiler *p = gp_profiler_create(NULL);
    gp_range_begin(p, "a");
    gp_disable(p);
    gp_range_begin(p, "b_off"); /* counted */
    gp_enable(p);
    gp_range_begin(p, "c");
    gp_range_attr_int(p, "on_c", 1); /* recorded on "c" */
    gp_range_end(p);                 /* closes "c" */
    gp_range_attr_int(p, "lost", 2); /* innermost is the counted "b_off": ignored */
    gp_range_end(p);                 /* closes "b_off" (nothing recorded) */
    gp_test_sleep_ms(20);
    gp_range_end(p); /* closes "a" */
    gp_range_end(p); /* nothing open: ignored */
    size_t n;
    gp_summary_row *r = rows_of(p, &n);
    ASSERT(r);
    ASSERT_EQ_INT(n, 2);
    ASSERT(find_row(r, n, "a") && find_row(r, n, "c"));
    ASSERT(!find_row(r, n, "b_off"));
    ASSERT_CMP_INT(find_row(r, n, "a")->total_ns, >=, 15000000);
    ASSERT_CMP_INT(find_row(r, n, "c")->total_ns, <, 15000000);
    gp_summary_rows_free(r, n);
    /* the attribute went to "c" only */
    char path[128];
    snprintf(path, sizeof path, "/tmp/gp_test_nesting_%ld.json", (long)getpid());
    ASSERT_EQ_INT(gp_export_trace(p, path), 0);
    FILE *f = fopen(path, "rb");
    ASSERT(f);
    char buf[65536];
    size_t k = fread(buf, 1, sizeof buf - 1, f);
    buf[k] = 0;
    fclose(f);
    remove(path);
    ASSERT_CONTAINS(buf, "\"on_c\"");
    ASSERT(!strstr(buf, "\"lost\""));
    gp_profiler_destroy(p);
}

TEST(scope_macro_while_off_open)
{
    gp_profiler *p = gp_profiler_create(NULL);
    gp_range_begin(p, "outer");
    gp_disable(p);
    for (int i = 0; i < 3; i++) {
        GP_SCOPE(p, "scoped"); /* counted: its end pops its own level */
    }
    gp_test_sleep_ms(20);
    gp_range_end(p);
    ASSERT_EQ_INT(gp_state_(p), GP_STATE_OFF_);
    /* off with nothing open: the macros do not call the library at all */
    for (int i = 0; i < 3; i++) {
        GP_SCOPE(p, "skipped");
    }
    size_t n;
    gp_summary_row *r = rows_of(p, &n);
    ASSERT(r);
    ASSERT_EQ_INT(n, 1);
    ASSERT_EQ_STR(r[0].name, "outer");
    ASSERT_CMP_INT(r[0].total_ns, >=, 15000000);
    gp_summary_rows_free(r, n);
    gp_profiler_destroy(p);
}

TEST(deep_counted_levels)
{
    gp_profiler *p = gp_profiler_create(NULL);
    gp_range_begin(p, "outer");
    gp_disable(p);
    for (int i = 0; i < 300; i++) gp_range_begin(p, "deep"); /* > 64: the bit stack grows */
    gp_enable(p);
    gp_range_begin(p, "recorded_deep"); /* level 301 */
    gp_range_end(p);
    for (int i = 0; i < 300; i++) gp_range_end(p);
    gp_test_sleep_ms(20);
    gp_range_end(p); /* "outer" */
    size_t n;
    gp_summary_row *r = rows_of(p, &n);
    ASSERT(r);
    ASSERT_EQ_INT(n, 2);
    ASSERT(find_row(r, n, "outer") && find_row(r, n, "recorded_deep"));
    ASSERT_CMP_INT(find_row(r, n, "outer")->total_ns, >=, 15000000);
    ASSERT_EQ_INT(find_row(r, n, "recorded_deep")->count, 1);
    gp_summary_rows_free(r, n);
    gp_profiler_destroy(p);
}

TEST(counters_skip_while_off_open)
{
    gp_profiler *p = gp_profiler_create(NULL);
    gp_range_begin(p, "outer");
    gp_disable(p);
    gp_counter(p, "c", 1);
    gp_observe(p, "o", 1);
    gp_range_end(p);
    gp_enable(p);
    gp_counter(p, "c", 2);
    double last;
    uint64_t cnt;
    ASSERT_EQ_INT(gp_counter_last(p, "c", &last, &cnt), 0);
    ASSERT_EQ_INT(cnt, 1);
    ASSERT_NEAR(last, 2.0, 0);
    gp_observation o;
    ASSERT_EQ_INT(gp_observation_stats(p, "o", &o), GP_ENOTFOUND);
    gp_profiler_destroy(p);
}

typedef struct other_arg {
    gp_profiler *p;
    pthread_barrier_t *bar;
} other_arg;

static void *other_thread(void *a_)
{
    other_arg *a = a_;
    gp_range_begin(a->p, "t_outer");
    pthread_barrier_wait(a->bar); /* 1: open */
    pthread_barrier_wait(a->bar); /* 2: main has disabled */
    gp_range_begin(a->p, "t_inner");
    gp_range_end(a->p);
    gp_test_sleep_ms(20);
    gp_range_end(a->p); /* closes "t_outer"; the profiler can go fully off */
    return NULL;
}

TEST(other_thread_open_range)
{
    gp_profiler *p = gp_profiler_create(NULL);
    pthread_barrier_t bar;
    pthread_barrier_init(&bar, NULL, 2);
    other_arg a = {p, &bar};
    pthread_t th;
    pthread_create(&th, NULL, other_thread, &a);
    pthread_barrier_wait(&bar);
    gp_disable(p);
    /* this thread has nothing open, the other one has */
    ASSERT_EQ_INT(gp_state_(p), GP_STATE_OFF_OPEN_);
    gp_range_begin(p, "main_off"); /* nothing open here: not counted */
    gp_range_end(p);
    pthread_barrier_wait(&bar);
    pthread_join(th, NULL);
    pthread_barrier_destroy(&bar);
    ASSERT_EQ_INT(gp_state_(p), GP_STATE_OFF_);
    size_t n;
    gp_summary_row *r = rows_of(p, &n);
    ASSERT(r);
    ASSERT_EQ_INT(n, 1);
    ASSERT_EQ_STR(r[0].name, "t_outer");
    ASSERT_CMP_INT(r[0].total_ns, >=, 15000000);
    gp_summary_rows_free(r, n);
    /* turning off again with nothing open goes straight to the inline state */
    gp_enable(p);
    gp_disable(p);
    ASSERT_EQ_INT(gp_state_(p), GP_STATE_OFF_);
    gp_profiler_destroy(p);
}

TEST(start_disabled_is_inline_off)
{
    gp_options o = {0};
    o.start_disabled = 1;
    gp_profiler *p = gp_profiler_create(&o);
    ASSERT_EQ_INT(gp_state_(p), GP_STATE_OFF_);
    gp_range_begin(p, "x");
    gp_range_end(p);
    gp_enable(p);
    ASSERT_EQ_INT(gp_state_(p), GP_STATE_ON_);
    ASSERT_EQ_INT(gp_enabled(p), 1);
    size_t n;
    gp_summary_row *r = rows_of(p, &n);
    ASSERT_EQ_INT(n, 0);
    gp_summary_rows_free(r, n);
    gp_profiler_destroy(p);
}

TEST_MAIN(end_after_disable_closes_inner, reenable_inside_counted_level, scope_macro_while_off_open,
          deep_counted_levels, counters_skip_while_off_open, other_thread_open_range,
          start_disabled_is_inline_off)
