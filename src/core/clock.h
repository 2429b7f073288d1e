/* core/clock.h: monotonic and wall clocks in integer nanoseconds. */
#ifndef GP_CORE_CLOCK_H
#define GP_CORE_CLOCK_H
#include <stdint.h>
#include <time.h>

/* CLOCK_MONOTONIC in ns. */
static inline int64_t gp_clock_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* CLOCK_REALTIME (Unix epoch) in ns. */
static inline int64_t gp_clock_wall_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Thread CPU time in ns. */
static inline int64_t gp_clock_thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Process CPU time in ns. */
static inline int64_t gp_clock_process_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

#if defined(__x86_64__) || defined(__i386__)
/* A (CLOCK_MONOTONIC, TSC) pair: the clock read between two TSC reads, the
 * tightest of 8 tries, the TSC at their middle. A thread preempted between
 * the reads (a busy machine) gives a wide bracket, which is not taken: one
 * 20 us preemption in a bare pair was a 0.1 % error of a rate measured over
 * 20 ms, and microseconds of error in the times converted near such a pair.
 * Used by the recorder's calibration and the NVTX injection's anchors. */
static inline void gp_clock_tsc_pair(int64_t *mono, uint64_t *tsc)
{
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 8; i++) {
        uint64_t x = __builtin_ia32_rdtsc();
        int64_t mm = gp_clock_mono_ns();
        uint64_t y = __builtin_ia32_rdtsc();
        if (y >= x && y - x < best) {
            best = y - x;
            *mono = mm;
            *tsc = x + (y - x) / 2;
        }
    }
    if (best == UINT64_MAX) { /* the TSC went backwards 8 times: take the last read */
        *mono = gp_clock_mono_ns();
        *tsc = __builtin_ia32_rdtsc();
    }
}
#endif

#endif
