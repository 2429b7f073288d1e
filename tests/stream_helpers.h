/* tests/stream_helpers.h: the stream sink in the libgpuprof tests. */
#ifndef GP_TEST_STREAM_HELPERS_H
#define GP_TEST_STREAM_HELPERS_H
#include <gpuprof/gpuprof.h>
#include <unistd.h>

/* A profiler with the stream sink into path (a trace file or a store), or
 * NULL. */
static inline gp_profiler *gp_test_stream_create(const char *path)
{
    gp_options o = {0};
    o.sink = GP_SINK_STREAM;
    o.stream_path = path;
    return gp_profiler_create(&o);
}

/* The child of the tests that kill a streaming program: records "step"
 * ranges into path until it is killed. spin: busy iterations inside each
 * range (0: none). */
static inline void gp_test_stream_forever(const char *path, int spin)
{
    gp_profiler *p = gp_test_stream_create(path);
    if (!p) _exit(3);
    for (;;) {
        gp_range_begin(p, "step");
        for (volatile int k = 0; k < spin; k++) {
        }
        gp_range_end(p);
    }
}
#endif
