/* bench/bench_import.c: import throughput of one JSON trace file on one thread
 * for every stage-1 scanning path this CPU has (GPUPROF_SIMD), interleaved
 * round by round so that the machine's load hits every path alike. Prints,
 * per path, the best wall and CPU time over the rounds and MB/s.
 * Usage: bench_import FILE [ROUNDS] [THREADS] [PATHS]
 * (PATHS: a comma-separated list of paths to run, e.g. off,avx512) */
#include "trace/import.h"
#include "trace/jscan.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

static double now(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* 1 when name is one of the comma-separated items of list */
static int listed(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; *p;) {
        const char *e = strchr(p, ',');
        size_t k = e ? (size_t)(e - p) : strlen(p);
        if (k == n && strncmp(p, name, n) == 0) return 1;
        p += k + (e ? 1 : 0);
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--best-path") == 0) {
        puts(gp_jscan_name(gp_jscan_best()));
        return 0;
    }
    if (argc < 2) {
        fprintf(stderr, "usage: bench_import FILE [ROUNDS] [THREADS]\n");
        return 2;
    }
    const char *path = argv[1];
    int rounds = argc > 2 ? atoi(argv[2]) : 3;
    int threads = argc > 3 ? atoi(argv[3]) : 1;
    const char *only = argc > 4 ? argv[4] : NULL;
    struct stat st;
    if (stat(path, &st)) {
        perror(path);
        return 2;
    }
    double best_wall[GP_JSCAN_COUNT], best_cpu[GP_JSCAN_COUNT];
    size_t events[GP_JSCAN_COUNT];
    for (int i = 0; i < GP_JSCAN_COUNT; i++) best_wall[i] = best_cpu[i] = 1e30, events[i] = 0;
    for (int r = 0; r < rounds; r++)
        for (int i = 0; i < GP_JSCAN_COUNT; i++) {
            if (!gp_jscan_supported((gp_jscan_isa)i)) continue;
            if (only && !listed(only, gp_jscan_name((gp_jscan_isa)i))) continue;
            setenv("GPUPROF_SIMD", gp_jscan_name((gp_jscan_isa)i), 1);
            gp_import_opts o = {0, threads, 0};
            gp_trace *t = NULL;
            gp_err err;
            double w0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_PROCESS_CPUTIME_ID);
            int rc = gp_import_json_file(path, &o, &t, &err);
            double w = now(CLOCK_MONOTONIC) - w0, c = now(CLOCK_PROCESS_CPUTIME_ID) - c0;
            if (rc) {
                fprintf(stderr, "bench_import: %s\n", err.msg);
                return 1;
            }
            events[i] = t->meta.events_read;
            gp_trace_destroy(t);
            if (w < best_wall[i]) best_wall[i] = w;
            if (c < best_cpu[i]) best_cpu[i] = c;
        }
    double mb = (double)st.st_size / 1e6;
    printf("file %.1f MB, %d thread(s), best of %d interleaved rounds\n", mb, threads, rounds);
    for (int i = 0; i < GP_JSCAN_COUNT; i++) {
        if (!gp_jscan_supported((gp_jscan_isa)i) || !events[i]) continue;
        printf("  %-7s wall %6.3f s %6.0f MB/s   cpu %6.3f s %6.0f MB/s   %.2fx off (wall)  "
               "%zu events\n",
               gp_jscan_name((gp_jscan_isa)i), best_wall[i], mb / best_wall[i], best_cpu[i],
               mb / best_cpu[i],
               events[GP_JSCAN_OFF] ? best_wall[GP_JSCAN_OFF] / best_wall[i] : 0.0, events[i]);
    }
    return 0;
}
