/* bench/nvtx_pair.c: the cost of an NVTX push/pop pair recorded by
 * `gpuprof run --nvtx` (the injection library) against libgpuprof's own
 * recorded gp_range_begin/gp_range_end pair, in the same process: rounds of
 * PAIRS pairs alternate between the two, each timed in CPU time of the
 * calling thread (CLOCK_THREAD_CPUTIME_ID, robust to a shared machine); the
 * minimum and the median over ROUNDS are printed with their ratio. Both
 * recorders hand the events to a background thread, whose work is not in
 * the figure (the process's whole CPU time is printed beside it). Two more
 * rows: a name in a writable buffer (compared with the cached copy) and a
 * registered string of a named domain.
 * Run it under `gpuprof run --nvtx` (bench/nvtx.sh); it exits 2 when NVTX is
 * not injected. Usage: nvtx_pair [ROUNDS [PAIRS]]. */
#include "core/clock.h"
#include <gpuprof/gpuprof.h>
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 31;
    int pairs = argc > 2 ? atoi(argv[2]) : 20000;
    if (rounds < 1 || pairs < 1) {
        fprintf(stderr, "nvtx_pair: usage: nvtx_pair [ROUNDS [PAIRS]]\n");
        return 2;
    }
    if (nvtxRangePushA("probe") != 0 || nvtxRangePop() != 0) {
        fprintf(stderr, "nvtx_pair: NVTX is not injected (run under gpuprof run --nvtx)\n");
        return 2;
    }
    gp_profiler *p = gp_profiler_create(NULL);
    if (!p) {
        fprintf(stderr, "nvtx_pair: gp_profiler_create failed\n");
        return 1;
    }
    double *g = calloc((size_t)rounds, sizeof *g), *n = calloc((size_t)rounds, sizeof *n);
    double *b = calloc((size_t)rounds, sizeof *b), *x = calloc((size_t)rounds, sizeof *x);
    if (!g || !n || !b || !x) return 1;
    char buf[32]; /* a name in writable memory: checked against the cached copy */
    strcpy(buf, "bench buffer");
    nvtxDomainHandle_t dom = nvtxDomainCreateA("benchdom");
    nvtxEventAttributes_t a = {0};
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    a.message.registered = nvtxDomainRegisterStringA(dom, "bench registered");
    for (int i = 0; i < pairs; i++) { /* warm-up: first chunks, caches */
        gp_range_begin(p, "bench");
        gp_range_end(p);
        nvtxRangePushA("bench");
        nvtxRangePop();
    }
    gp_profiler_reset(p);
    int64_t proc0 = gp_clock_process_cpu_ns();
    for (int r = 0; r < rounds; r++) {
        int64_t t0 = gp_clock_thread_cpu_ns();
        for (int i = 0; i < pairs; i++) {
            gp_range_begin(p, "bench");
            gp_range_end(p);
        }
        int64_t t1 = gp_clock_thread_cpu_ns();
        gp_profiler_reset(p); /* drains and frees the buffers, outside the timing */
        int64_t t2 = gp_clock_thread_cpu_ns();
        for (int i = 0; i < pairs; i++) {
            nvtxRangePushA("bench");
            nvtxRangePop();
        }
        int64_t t3 = gp_clock_thread_cpu_ns();
        for (int i = 0; i < pairs; i++) {
            nvtxRangePushA(buf);
            nvtxRangePop();
        }
        int64_t t4 = gp_clock_thread_cpu_ns();
        for (int i = 0; i < pairs; i++) {
            nvtxDomainRangePushEx(dom, &a);
            nvtxDomainRangePop(dom);
        }
        int64_t t5 = gp_clock_thread_cpu_ns();
        g[r] = (double)(t1 - t0) / pairs;
        n[r] = (double)(t3 - t2) / pairs;
        b[r] = (double)(t4 - t3) / pairs;
        x[r] = (double)(t5 - t4) / pairs;
    }
    int64_t proc = gp_clock_process_cpu_ns() - proc0;
    qsort(g, (size_t)rounds, sizeof *g, cmp_d);
    qsort(n, (size_t)rounds, sizeof *n, cmp_d);
    qsort(b, (size_t)rounds, sizeof *b, cmp_d);
    qsort(x, (size_t)rounds, sizeof *x, cmp_d);
    double gm = g[0], nm = n[0], gd = g[rounds / 2], nd = n[rounds / 2];
    printf("NVTX push/pop under gpuprof run --nvtx vs libgpuprof's recorded pair, same process\n");
    printf("%d rounds x %d pairs each, CPU time of the calling thread, ns per pair\n", rounds,
           pairs);
    printf("%-52s %8s %8s\n", "", "min", "median");
    printf("%-52s %8.2f %8.2f\n", "libgpuprof gp_range_begin + gp_range_end", gm, gd);
    printf("%-52s %8.2f %8.2f\n", "nvtxRangePushA + nvtxRangePop (injection)", nm, nd);
    printf("%-52s %8.3f %8.3f\n", "ratio NVTX / libgpuprof", nm / gm, nd / gd);
    printf("%-52s %8.2f %8.2f\n", "nvtxRangePushA(name in a writable buffer) + Pop", b[0],
           b[rounds / 2]);
    printf("%-52s %8.2f %8.2f\n", "nvtxDomainRangePushEx(registered string) + Pop", x[0],
           x[rounds / 2]);
    printf("process CPU time over the rounds, all threads (drain, store writer, SQLite): %.1f ns "
           "per pair of any kind\n",
           (double)proc / (4.0 * rounds * pairs));
    printf("goal (min): NVTX pair <= 1.5x libgpuprof's pair: %s\n",
           nm <= 1.5 * gm ? "met" : "not met");
    gp_profiler_destroy(p);
    free(g);
    free(n);
    free(b);
    free(x);
    return 0;
}
