/* tests/test_memory_series.c: gp_memory_series (the writer's cheap path) gives
 * the same devices, series and figures as gp_memory_compute, without leaks or
 * live stacks, on random [memory] events over several devices (with and
 * without reserved totals, out of time order). */
#include "analysis/memory.h"
#include "core/sbuf.h"
#include "test.h"
#include "trace/import.h"

TEST(series_equals_compute)
{
    uint64_t rng = 0x3e3017;
    for (int round = 0; round < 20; round++) {
        gp_sbuf b = {0};
        gp_sbuf_puts(&b, "{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"op\","
                         "\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":100000}");
        int n = 1 + (int)(gp_test_xorshift(&rng) % 400);
        long long alloc[3] = {0, 0, 0};
        for (int i = 0; i < n; i++) {
            int dev = (int)(gp_test_xorshift(&rng) % 3); /* cuda:0, cuda:1, cpu */
            long long bytes = (long long)(gp_test_xorshift(&rng) % 4096) + 1;
            if (alloc[dev] >= bytes && gp_test_xorshift(&rng) % 2) bytes = -bytes;
            alloc[dev] += bytes;
            long long ts = (long long)(gp_test_xorshift(&rng) % 90000); /* any order */
            gp_sbuf_printf(&b,
                           ",{\"ph\":\"i\",\"s\":\"t\",\"name\":\"[memory]\",\"pid\":1,\"tid\":1,"
                           "\"ts\":%lld,\"args\":{\"Addr\":%d,\"Bytes\":%lld,"
                           "\"Total Allocated\":%lld,\"Total Reserved\":%lld,"
                           "\"Device Type\":%d,\"Device Id\":%d}}",
                           ts, 4096 * (i % 50), bytes, alloc[dev],
                           dev == 2 ? 0LL : alloc[dev] + 8192, dev == 2 ? 0 : 1,
                           dev == 2 ? -1 : dev);
        }
        gp_sbuf_puts(&b, "]}");
        gp_trace *t = NULL;
        gp_err err = {0};
        ASSERT_EQ_INT(gp_import_json_mem(b.s, b.n, "mem", &t, &err), 0);
        gp_sbuf_free(&b);
        gp_memory full, ser;
        ASSERT_EQ_INT(gp_memory_compute(t, &full), 0);
        ASSERT_EQ_INT(gp_memory_series(t, &ser), 0);
        ASSERT_EQ_INT((long long)ser.n, (long long)full.n);
        ASSERT_EQ_INT((long long)ser.events, (long long)full.events);
        for (size_t d = 0; d < full.n; d++) {
            const gp_mem_device *x = &full.dev[d], *y = &ser.dev[d];
            ASSERT_EQ_STR(y->label, x->label);
            ASSERT_EQ_INT((long long)y->n, (long long)x->n);
            ASSERT(!memcmp(y->pts, x->pts, x->n * sizeof *x->pts));
            ASSERT_EQ_INT(y->reserved_valid, x->reserved_valid);
            ASSERT_EQ_INT(y->peak_allocated, x->peak_allocated);
            ASSERT_EQ_INT(y->peak_ts, x->peak_ts);
            ASSERT_EQ_INT((long long)y->allocs, (long long)x->allocs);
            ASSERT_EQ_INT((long long)y->frees, (long long)x->frees);
            ASSERT_EQ_INT(y->end_allocated, x->end_allocated);
            ASSERT_EQ_INT((long long)y->nleaks, 0);
            ASSERT_EQ_INT((long long)y->nlive, 0);
        }
        ASSERT(full.n >= 1);
        gp_memory_free(&full);
        gp_memory_free(&ser);
        gp_trace_destroy(t);
    }
}

TEST_MAIN(series_equals_compute)
