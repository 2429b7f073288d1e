/* bench/bench_metrics.c: CPU cost of the Prometheus exposition with the NVML
 * stand-in (8 GPUs x every field): one full render, the cached path a scrape
 * takes when nothing changed, and, as the baseline of the same run, copying
 * the rendered bytes once. Usage: bench_metrics LIBFAKE_NVML SCENARIO N */
#include "serve/metrics.h"
#include <gpuprof/monitor.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: bench_metrics LIBFAKE_NVML SCENARIO N\n");
        return 2;
    }
    int n = atoi(argv[3]);
    setenv("FAKE_NVML_SCENARIO", argv[2], 1);
    gp_mon_config c;
    gp_mon_config_defaults(&c);
    snprintf(c.nvml_library, sizeof c.nvml_library, "%s", argv[1]);
    snprintf(c.nvidia_smi, sizeof c.nvidia_smi, "/nonexistent");
    c.enable_opencl_monitoring = c.enable_host_monitoring = 0;
    c.enable_event_log = 0;
    gp_monitor *m = gp_monitor_create(&c);
    gp_monitor_sample_now(m);
    gp_monitor_sample_now(m);
    gp_mon_view v = {0};
    gp_monitor_view(m, &v);
    printf("devices: %zu (GPUs %zu)\n", v.ndev, v.gpus);
    for (int dcgm = 0; dcgm <= 1; dcgm++) {
        gp_metrics_opts o = {0};
        o.dcgm = dcgm;
        snprintf(o.hostname, sizeof o.hostname, "bench-node");
        gp_sbuf b = {0};
        gp_metrics_render(&v, &o, &b); /* warm-up, and the size */
        size_t bytes = b.n;
        int series = 0;
        for (size_t i = 0; i < b.n; i++)
            series += b.s[i] == '\n' && i + 1 < b.n && b.s[i + 1] != '#';
        double t0 = cpu_s();
        for (int i = 0; i < n; i++) {
            gp_sbuf_reset(&b);
            gp_metrics_render(&v, &o, &b);
        }
        double render = (cpu_s() - t0) / n;
        char *copy = malloc(bytes);
        volatile char sink = 0;
        t0 = cpu_s();
        for (int i = 0; i < n; i++) {
            memcpy(copy, b.s, bytes);
            sink = (char)(sink + copy[i % bytes]);
        }
        double cp = (cpu_s() - t0) / n;
        gp_metrics *x = gp_metrics_create(m, &o);
        gp_metrics_release(gp_metrics_acquire(x));
        t0 = cpu_s();
        for (int i = 0; i < n; i++) gp_metrics_release(gp_metrics_acquire(x));
        double cached = (cpu_s() - t0) / n;
        printf("%-22s %6zu bytes %4d series: render %7.2f us CPU; cached scrape path %5.3f us; "
               "memcpy of the bytes (baseline) %5.3f us; render/memcpy %.0fx\n",
               dcgm ? "gpuprof + dcgm names" : "gpuprof names", bytes, series, render * 1e6,
               cached * 1e6, cp * 1e6, render / cp);
        gp_metrics_destroy(x);
        free(copy);
        gp_sbuf_free(&b);
    }
    gp_mon_view_free(&v);
    gp_monitor_destroy(m);
    return 0;
}
