/* bench/bench_sustained.c: libgpuprof in sustained use, one configuration per
 * process (so that the peak RSS is this configuration's): PAIRS begin/end
 * pairs per thread with a literal name on NT threads, cold (no warm-up, no
 * reset: buffers are allocated, drained and recycled as in a long run), and
 * the floor measured the same way: two TSC reads per pair.
 *   bench_sustained MODE NT PAIRS [STREAM_FILE]
 * MODE: floor | default (gp_default(), nothing configured) | aggregate |
 * keep (no cap: today's full buffer) | stream.
 * Prints: mode, threads, ns per pair (wall time of the slowest thread /
 * PAIRS), peak RSS in MB, and the ranges kept / aggregated / dropped. */
#include "core/clock.h"
#include <gpuprof/gpuprof.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

static volatile uint64_t sink;
static long pairs;
static gp_profiler *prof;
static int floor_mode;

static void *worker(void *arg)
{
    double *ns = arg;
    int64_t t0 = gp_clock_mono_ns();
    if (floor_mode) {
        uint64_t acc = 0;
        for (long i = 0; i < pairs; i++) {
            acc += __builtin_ia32_rdtsc();
            acc ^= __builtin_ia32_rdtsc();
        }
        sink = acc;
    } else {
        for (long i = 0; i < pairs; i++) {
            gp_range_begin(prof, "step");
            gp_range_end(prof);
        }
    }
    *ns = (double)(gp_clock_mono_ns() - t0) / (double)pairs;
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr,
                "usage: bench_sustained floor|default|aggregate|keep|stream NT PAIRS [FILE]\n");
        return 2;
    }
    const char *mode = argv[1];
    int nt = atoi(argv[2]);
    pairs = atol(argv[3]);
    if (nt < 1 || nt > 64 || pairs < 1) return 2;
    floor_mode = !strcmp(mode, "floor");
    gp_options o = {0};
    if (!strcmp(mode, "default")) {
        prof = gp_default();
    } else if (!floor_mode) {
        if (!strcmp(mode, "aggregate"))
            o.sink = GP_SINK_AGGREGATE;
        else if (!strcmp(mode, "keep"))
            o.sink = GP_SINK_KEEP;
        else if (!strcmp(mode, "stream")) {
            o.sink = GP_SINK_STREAM;
            o.stream_path = argc > 4 ? argv[4] : "/dev/null";
        } else
            return 2;
        prof = gp_profiler_create(&o);
        if (!prof) return 1;
    }
    pthread_t th[64];
    double ns[64];
    for (int i = 0; i < nt; i++) pthread_create(&th[i], NULL, worker, &ns[i]);
    double worst = 0;
    for (int i = 0; i < nt; i++) {
        pthread_join(th[i], NULL);
        if (ns[i] > worst) worst = ns[i];
    }
    gp_record_stats rs = {0, 0, 0};
    if (prof) gp_record_stats_get(prof, &rs);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("%s threads=%d pairs_per_thread=%ld ns_per_pair=%.2f peak_rss_mb=%.1f kept=%llu "
           "aggregated=%llu dropped=%llu\n",
           mode, nt, pairs, worst, (double)ru.ru_maxrss / 1024.0, (unsigned long long)rs.kept,
           (unsigned long long)rs.aggregated, (unsigned long long)rs.dropped);
    if (prof && prof != gp_default()) gp_profiler_destroy(prof);
    return 0;
}
