/* record/measure.c: gp_measure (the seed's profile_function: warm-up plus
 * timed iterations with wall, CPU and kernel time) and gp_result_compare
 * (the seed's compare_sessions: speedup and memory difference). */
#include "core/clock.h"
#include "core/stats.h"
#include "record/recorder.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void fill(gp_time_stats *o, double *v, size_t n)
{
    gp_dstats st;
    gp_stats_f64(v, n, &st);
    o->valid = n > 0;
    o->mean_ns = st.mean;
    o->std_ns = st.std;
    o->min_ns = st.min;
    o->max_ns = st.max;
    o->p50_ns = st.p50;
    o->p95_ns = st.p95;
    o->p99_ns = st.p99;
}

static int64_t kernel_total(gp_profiler *p, uint64_t *count)
{
    pthread_mutex_lock(&p->mu);
    gp_cuda_resolve_(p, 1);
    gp_cl_resolve_(p, 1);
    int64_t v = p->kernel_ns_total;
    *count = p->kernel_count;
    pthread_mutex_unlock(&p->mu);
    return v;
}

_Thread_local int gp_rec_warmup;

int gp_measure(gp_profiler *p, const char *name, void (*fn)(void *), void *arg, int warmup,
               int iterations, gp_result *out)
{
    if (!p || !name || !fn || !out || warmup < 0 || iterations <= 0) return GP_EINVAL;
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "%s", name);
    out->iterations = iterations;
    double *wall = malloc((size_t)iterations * sizeof *wall);
    double *cpu = malloc((size_t)iterations * sizeof *cpu);
    double *gpu = malloc((size_t)iterations * sizeof *gpu);
    if (!wall || !cpu || !gpu) {
        free(wall);
        free(cpu);
        free(gpu);
        return GP_ENOMEM;
    }
    const char *rname = gp_intern(p, name);
    gp_rec_warmup++;
    for (int i = 0; i < warmup; i++) fn(arg);
    gp_rec_warmup--;
    uint64_t kc0, kc;
    kernel_total(p, &kc0);
    pthread_mutex_lock(&p->mu);
    p->mem_window_peak = p->mem_cur;
    int64_t mem_before = p->mem_cur;
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < iterations; i++) {
        uint64_t c0;
        int64_t k0 = kernel_total(p, &c0);
        int64_t t0 = gp_clock_mono_ns(), u0 = gp_clock_thread_cpu_ns();
        if (rname) gp_range_begin(p, rname);
        fn(arg);
        if (rname) gp_range_end(p);
        int64_t u1 = gp_clock_thread_cpu_ns(), t1 = gp_clock_mono_ns();
        int64_t k1 = kernel_total(p, &kc);
        wall[i] = (double)(t1 - t0);
        cpu[i] = (double)(u1 - u0);
        gpu[i] = (double)(k1 - k0);
    }
    fill(&out->wall, wall, (size_t)iterations);
    fill(&out->cpu, cpu, (size_t)iterations);
    if (kc > kc0) fill(&out->gpu, gpu, (size_t)iterations);
    pthread_mutex_lock(&p->mu);
    /* valid when the tracker saw buffers during the run */
    out->mem_peak_valid = p->mem_window_peak > 0 || mem_before > 0;
    out->mem_peak_bytes = out->mem_peak_valid ? p->mem_window_peak : 0;
    pthread_mutex_unlock(&p->mu);
    free(wall);
    free(cpu);
    free(gpu);
    return 0;
}

int gp_result_compare(const gp_result *base, const gp_result *cur, gp_comparison *out)
{
    memset(out, 0, sizeof *out);
    if (!base || !cur || !base->wall.valid || !cur->wall.valid || cur->wall.mean_ns <= 0)
        return GP_EINVAL;
    out->speedup = base->wall.mean_ns / cur->wall.mean_ns;
    if (base->gpu.valid && cur->gpu.valid && cur->gpu.mean_ns > 0) {
        out->gpu_valid = 1;
        out->gpu_speedup = base->gpu.mean_ns / cur->gpu.mean_ns;
    }
    if (base->mem_peak_valid && cur->mem_peak_valid) {
        out->mem_valid = 1;
        out->mem_diff_bytes = cur->mem_peak_bytes - base->mem_peak_bytes;
    }
    return 0;
}
