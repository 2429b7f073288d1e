/* tests/test_libgpuprof_noinline.c: with GP_NO_INLINE the hot-path names are
 * the library's exported out-of-line functions (for FFI and binaries built
 * against older headers); they keep the same semantics, incl. nesting across
 * gp_disable, counters and attributes. */
#define GP_NO_INLINE 1
#include "test.h"
#include <gpuprof/gpuprof.h>
#include <time.h>

TEST(exported_functions_same_semantics)
{
    /* these are real functions here: their addresses are the library's */
    void (*begin)(gp_profiler *, const char *) = gp_range_begin;
    void (*end)(gp_profiler *) = gp_range_end;
    gp_profiler *p = gp_profiler_create(NULL);
    begin(p, "outer");
    gp_range_attr_int(p, "k", 7);
    gp_disable(p);
    begin(p, "inner_off");
    gp_range_attr_int(p, "lost", 1);
    gp_counter(p, "c_off", 1);
    end(p); /* closes "inner_off" */
    gp_test_sleep_ms(20);
    end(p); /* closes "outer" */
    ASSERT_EQ_INT(gp_state_(p), GP_STATE_OFF_);
    end(p); /* nothing open, state off: ignored by the exported function too */
    gp_enable(p);
    gp_range_begin_ex(p, "ex", GP_DEV_CPU, GP_BACKEND_CPU, 64);
    gp_range_attr_str(p, "s", "v");
    gp_range_end(p);
    gp_counter(p, "c", 3);
    gp_observe(p, "o", 5);
    gp_summary_row *r;
    size_t n;
    ASSERT_EQ_INT(gp_summary_rows(p, &r, &n), 0);
    ASSERT_EQ_INT(n, 2);
    int seen_outer = 0, seen_ex = 0;
    for (size_t i = 0; i < n; i++) {
        if (!strcmp(r[i].name, "outer")) {
            seen_outer = 1;
            ASSERT_CMP_INT(r[i].total_ns, >=, 15000000);
        }
        if (!strcmp(r[i].name, "ex")) {
            seen_ex = 1;
            ASSERT_EQ_INT(r[i].bytes, 64);
        }
    }
    ASSERT(seen_outer && seen_ex);
    gp_summary_rows_free(r, n);
    double last;
    uint64_t cnt;
    ASSERT_EQ_INT(gp_counter_last(p, "c_off", &last, &cnt), GP_ENOTFOUND);
    ASSERT_EQ_INT(gp_counter_last(p, "c", &last, &cnt), 0);
    ASSERT_EQ_INT(cnt, 1);
    gp_observation o;
    ASSERT_EQ_INT(gp_observation_stats(p, "o", &o), 0);
    ASSERT_EQ_INT(o.count, 1);
    gp_profiler_destroy(p);
}

TEST_MAIN(exported_functions_same_semantics)
