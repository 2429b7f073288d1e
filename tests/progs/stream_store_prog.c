/* tests/progs/stream_store_prog.c: a libgpuprof program for
 * t_stream_store.py: nested ranges on two threads (enough that some roll
 * over while the drain is busy), slow ranges, a counter and a tracked
 * buffer, recorded with the stream sink into STREAM (a trace file or a run
 * store), and the same profiler's results exported with gp_export_json, so
 * that the test compares the views of the stream with the export's.
 * usage: stream_store_prog STREAM|- EXPORT.json PAIRS [ranges-only]
 * STREAM "-": the default profiler, configured by GPUPROF_SINK/GPUPROF_STREAM
 * (finished at exit). ranges-only: no counter and no tracked buffer (with
 * GPUPROF_SINK=aggregate the export then holds statistics only). */
#include <gpuprof/gpuprof.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static gp_profiler *p;
static long pairs;

static void *work(void *arg)
{
    (void)arg;
    for (long i = 0; i < pairs; i++) {
        gp_range_begin(p, "outer");
        gp_range_begin_ex(p, "inner", GP_DEV_CPU, GP_BACKEND_CPU, 64);
        gp_range_end(p);
        gp_range_end(p);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: stream_store_prog STREAM|- EXPORT.json PAIRS\n");
        return 2;
    }
    pairs = atol(argv[3]);
    int ranges_only = argc > 4 && !strcmp(argv[4], "ranges-only");
    if (!strcmp(argv[1], "-")) {
        p = gp_default();
    } else {
        gp_options o = {0};
        o.sink = GP_SINK_STREAM;
        o.stream_path = argv[1];
        o.leak_report = 1;
        p = gp_profiler_create(&o);
    }
    if (!p) {
        fprintf(stderr, "stream_store_prog: cannot create the profiler\n");
        return 1;
    }
    pthread_t th[2];
    for (int i = 0; i < 2; i++) pthread_create(&th[i], NULL, work, NULL);
    for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
    for (int i = 0; i < 5; i++) {
        gp_range_begin(p, "slow");
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL);
        gp_range_end(p);
        if (!ranges_only) gp_counter(p, "progress", i);
    }
    static char buf[16];
    if (!ranges_only) {
        gp_mem_track(p, "scratch", buf, 1 << 20, NULL, 0, "uint8");
        gp_mem_untrack(p, buf);
    }
    if (gp_export_json(p, argv[2]) != 0) {
        fprintf(stderr, "stream_store_prog: %s\n", gp_last_error(p));
        return 1;
    }
    if (strcmp(argv[1], "-")) {
        gp_profiler_destroy(p);
    }
    return 0;
}
