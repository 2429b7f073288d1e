/* bench/bench_tsc_overlap.c: how much work this CPU hides under two TSC
 * reads. The sustained benchmark's floor is two rdtsc per pair; a recorder
 * that does W ns of other work per pair costs max(floor, ~floor + W - H),
 * where H is the work the CPU overlaps with the reads. H depends on the
 * processor: where rdtsc is long microcode that leaves the core little room
 * beside it, H is small and every instruction of the recording path shows.
 * Prints, for N independent memory increments between the two reads: the
 * pair's CPU ns, the same work alone, and the excess over floor, in
 * interleaved rounds (medians).
 *   bench_tsc_overlap [PAIRS] [ROUNDS] */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#if defined(__x86_64__) || defined(__i386__)
static double cpu_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static volatile uint64_t sink;
static volatile uint64_t cells[64];

/* n independent read-modify-writes of memory: the kind of work a recording
 * path does (counters, totals, an event's fields) */
__attribute__((noinline)) static void work(int n)
{
    for (int i = 0; i < n; i++) cells[i & 63] += (uint64_t)i;
}

static double pairs_with(long pairs, int n)
{
    uint64_t acc = 0;
    double t0 = cpu_ns();
    for (long i = 0; i < pairs; i++) {
        acc += __builtin_ia32_rdtsc();
        work(n);
        acc ^= __builtin_ia32_rdtsc();
    }
    sink = acc;
    return (cpu_ns() - t0) / (double)pairs;
}

static double work_alone(long pairs, int n)
{
    double t0 = cpu_ns();
    for (long i = 0; i < pairs; i++) work(n);
    return (cpu_ns() - t0) / (double)pairs;
}

static int cmpd(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

enum { NSTEPS = 7, MAXR = 64 };

int main(int argc, char **argv)
{
    long pairs = argc > 1 ? atol(argv[1]) : 2000000;
    int rounds = argc > 2 ? atoi(argv[2]) : 5;
    if (pairs <= 0 || rounds <= 0 || rounds > MAXR) {
        fprintf(stderr, "usage: bench_tsc_overlap [PAIRS] [ROUNDS<=%d]\n", MAXR);
        return 2;
    }
    static const int steps[NSTEPS] = {0, 5, 10, 20, 30, 40, 60};
    double with[NSTEPS][MAXR], alone[NSTEPS][MAXR];
    for (int r = 0; r < rounds; r++)
        for (int s = 0; s < NSTEPS; s++) {
            with[s][r] = pairs_with(pairs, steps[s]);
            alone[s][r] = work_alone(pairs, steps[s]);
        }
    for (int s = 0; s < NSTEPS; s++) {
        qsort(with[s], (size_t)rounds, sizeof(double), cmpd);
        qsort(alone[s], (size_t)rounds, sizeof(double), cmpd);
    }
    double floor = with[0][rounds / 2];
    printf("two TSC reads per pair (floor): %.2f ns (CPU time, median of %d rounds of %ld)\n",
           floor, rounds, pairs);
    for (int s = 1; s < NSTEPS; s++) {
        double w = with[s][rounds / 2], a = alone[s][rounds / 2];
        printf(
            "%2d increments between the reads: pair %6.2f ns = %.2fx floor | work alone %6.2f ns "
            "| hidden %6.2f ns\n",
            steps[s], w, w / floor, a, a - (w - floor));
    }
    return 0;
}
#else
int main(void)
{
    puts("bench_tsc_overlap: x86 only (rdtsc)");
    return 0;
}
#endif
