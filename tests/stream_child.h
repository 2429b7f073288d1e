/* tests/stream_child.h: the child of the tests that kill a streaming
 * program: records "step" ranges with the stream sink into path (a trace
 * file or a store) until it is killed. spin: busy iterations inside each
 * range (0: none). */
#ifndef GP_TEST_STREAM_CHILD_H
#define GP_TEST_STREAM_CHILD_H
#include <gpuprof/gpuprof.h>
#include <unistd.h>

static void gp_test_stream_forever(const char *path, int spin)
{
    gp_options o = {0};
    o.sink = GP_SINK_STREAM;
    o.stream_path = path;
    gp_profiler *p = gp_profiler_create(&o);
    if (!p) _exit(3);
    for (;;) {
        gp_range_begin(p, "step");
        for (volatile int k = 0; k < spin; k++) {
        }
        gp_range_end(p);
    }
}
#endif
