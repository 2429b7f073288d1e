/* bench/bench_sustained.c: libgpuprof in sustained use, one configuration per
 * process (so that the peak RSS is this configuration's): PAIRS begin/end
 * pairs per thread with a literal name on NT threads, cold (no warm-up, no
 * reset: buffers are allocated, drained and recycled as in a long run), and
 * the floor measured the same way: two TSC reads per pair.
 *   bench_sustained MODE NT PAIRS [STREAM_FILE]
 * MODE: floor | default (gp_default(), nothing configured) | aggregate |
 * keep (no cap: today's full buffer) | stream (to FILE, a Chrome trace) |
 * store (stream to FILE, a run store: give a .db path; it is replaced) |
 * busy (the control for the stream sinks: the aggregate sink while one
 * more thread, not libgpuprof's, runs a chain of dependent adds from
 * before the first pair to after the last; it shares no data with the
 * recording threads, and its CPU is left out of "all CPU").
 * Prints: mode, threads, ns per pair (wall time of the slowest thread /
 * PAIRS), CPU ns per pair of the recording threads (their own CPU time, so
 * that other programs on a shared machine do not count), CPU ns per pair of
 * the whole process during the run (recording threads + drain thread) /
 * (NT * PAIRS), the drain's CPU time (the drain thread, and for store the
 * store's writer thread too) and events drained per second of it, peak RSS
 * in MB, and the ranges kept / aggregated / dropped.
 *   bench_sustained clock
 * prints the core's speed now: a chain of 2e8 dependent adds (one core cycle
 * each on x86) timed on the thread's CPU clock, as GHz. The floor (two TSC
 * reads) takes the same nanoseconds at any core clock on this VM while
 * every other instruction does not, so the ratios move with it
 * (docs/api.md, "Sustained cost"). */
#include "core/clock.h"
#include <gpuprof/gpuprof.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static volatile uint64_t sink;
static long pairs;
static gp_profiler *prof;
static int floor_mode;

typedef struct wres {
    double ns, cpu_ns;
} wres;

static int64_t thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t process_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* CPU ns of the threads libgpuprof starts, all named gpuprof-*: the drain,
 * and for the store stream the store's writer (gpuprof-store) and its
 * checkpointer (gpuprof-ckpt) (/proc/self/task/T/schedstat), 0 when none. */
static int64_t drain_cpu_ns(void)
{
    DIR *d = opendir("/proc/self/task");
    if (!d) return 0;
    int64_t r = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.') continue;
        char path[300], comm[64] = "";
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", de->d_name);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        if (!fgets(comm, sizeof comm, f)) comm[0] = 0;
        fclose(f);
        if (strncmp(comm, "gpuprof-", 8) != 0) continue;
        snprintf(path, sizeof path, "/proc/self/task/%s/schedstat", de->d_name);
        f = fopen(path, "r");
        long long v = 0;
        if (f && fscanf(f, "%lld", &v) == 1) r += v;
        if (f) fclose(f);
    }
    closedir(d);
    return r;
}

static volatile int busy_stop;
static int64_t busy_cpu;

/* The busy mode's extra thread: register adds only (no memory traffic),
 * the load a drain thread puts on the other core without touching what
 * the recording threads touch. */
static void *busy(void *arg)
{
    (void)arg;
    int64_t c0 = thread_cpu_ns();
    uint64_t x = 1;
    while (!__atomic_load_n(&busy_stop, __ATOMIC_RELAXED))
        for (int i = 0; i < 100000; i++) __asm__ volatile("add $1, %0" : "+r"(x));
    sink = x;
    busy_cpu = thread_cpu_ns() - c0;
    return NULL;
}

static void *worker(void *arg)
{
    wres *w = arg;
    int64_t c0 = thread_cpu_ns();
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
    w->ns = (double)(gp_clock_mono_ns() - t0) / (double)pairs;
    w->cpu_ns = (double)(thread_cpu_ns() - c0) / (double)pairs;
    return NULL;
}

/* Dependent adds per nanosecond of this thread's CPU time (GHz when an add
 * takes one cycle). */
static double core_ghz(void)
{
    uint64_t x = 1;
    const long n = 200000000;
    int64_t c0 = thread_cpu_ns();
    for (long i = 0; i < n; i++) __asm__ volatile("add $1, %0" : "+r"(x));
    int64_t c1 = thread_cpu_ns();
    sink = x;
    return (double)n / (double)(c1 - c0);
}

int main(int argc, char **argv)
{
    if (argc == 2 && !strcmp(argv[1], "clock")) {
        printf("clock ghz=%.2f\n", core_ghz());
        return 0;
    }
    if (argc < 4) {
        fprintf(stderr, "usage: bench_sustained floor|default|aggregate|busy|keep|stream|store NT "
                        "PAIRS [FILE]\n"
                        "       bench_sustained clock\n");
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
        if (!strcmp(mode, "aggregate") || !strcmp(mode, "busy"))
            o.sink = GP_SINK_AGGREGATE;
        else if (!strcmp(mode, "keep"))
            o.sink = GP_SINK_KEEP;
        else if (!strcmp(mode, "stream")) {
            o.sink = GP_SINK_STREAM;
            o.stream_path = argc > 4 ? argv[4] : "/dev/null";
        } else if (!strcmp(mode, "store") && argc > 4) {
            o.sink = GP_SINK_STREAM;
            o.stream_path = argv[4];
            char x[4200];
            unlink(argv[4]);
            snprintf(x, sizeof x, "%s-wal", argv[4]);
            unlink(x);
            snprintf(x, sizeof x, "%s-shm", argv[4]);
            unlink(x);
        } else
            return 2;
        prof = gp_profiler_create(&o);
        if (!prof) return 1;
    }
    pthread_t th[64];
    wres w[64];
    int64_t pc0 = process_cpu_ns(), dc0 = drain_cpu_ns();
    pthread_t bt;
    int with_busy = !strcmp(mode, "busy");
    if (with_busy) {
        pthread_create(&bt, NULL, busy, NULL);
        struct timespec nap = {0, 20000000}; /* running before the first pair */
        nanosleep(&nap, NULL);
    }
    for (int i = 0; i < nt; i++) pthread_create(&th[i], NULL, worker, &w[i]);
    double worst = 0, cpu = 0;
    for (int i = 0; i < nt; i++) {
        pthread_join(th[i], NULL);
        if (w[i].ns > worst) worst = w[i].ns;
        cpu += w[i].cpu_ns;
    }
    if (with_busy) {
        __atomic_store_n(&busy_stop, 1, __ATOMIC_RELAXED);
        pthread_join(bt, NULL);
        pc0 += busy_cpu;
    }
    /* let the drain thread finish the backlog (sleeping costs no CPU), so
     * that the events it moved are the kept ones; the results call below
     * then finds (almost) nothing left */
    for (int k = 0; prof && k < 100; k++) {
        int64_t d1 = drain_cpu_ns();
        struct timespec nap = {0, 100000000};
        nanosleep(&nap, NULL);
        if (drain_cpu_ns() - d1 < 500000) break;
    }
    gp_record_stats rs = {0, 0, 0};
    /* the results call drains what is left: counted with the run */
    if (prof) gp_record_stats_get(prof, &rs);
    double all_cpu = (double)(process_cpu_ns() - pc0) / ((double)nt * (double)pairs);
    int64_t dcpu = drain_cpu_ns() - dc0;
    /* events the drain thread moved out of the buffers: two per kept range
     * (after the wait above, the drain of the results call is at most a
     * partial chunk; it is in all_cpu) */
    double drain_rate = dcpu > 0 ? 2.0 * (double)rs.kept / ((double)dcpu / 1e9) : 0;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("%s threads=%d pairs_per_thread=%ld ns_per_pair=%.2f cpu_ns_per_pair=%.2f "
           "all_cpu_ns_per_pair=%.2f drain_cpu_ms=%.1f drain_events_per_s=%.3g peak_rss_mb=%.1f "
           "kept=%llu aggregated=%llu dropped=%llu\n",
           mode, nt, pairs, worst, cpu / nt, all_cpu, (double)dcpu / 1e6, drain_rate,
           (double)ru.ru_maxrss / 1024.0, (unsigned long long)rs.kept,
           (unsigned long long)rs.aggregated, (unsigned long long)rs.dropped);
    if (prof && prof != gp_default()) gp_profiler_destroy(prof);
    return 0;
}
