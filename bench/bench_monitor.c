/* bench/bench_monitor.c: CPU time per full sample per device of the device
 * monitor with the NVML stand-in (every field, processes, alerts, an active
 * session), with the host backend, and with the sysfs backend when a root is
 * given. Usage: bench_monitor LIBFAKE_NVML SCENARIO [TICKS] */
#include "core/clock.h"
#include <gpuprof/monitor.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void run(const char *label, gp_mon_config *c, int ticks)
{
    gp_monitor *m = gp_monitor_create(c);
    size_t n = gp_monitor_device_count(m);
    if (!n) {
        printf("%-34s no device\n", label);
        gp_monitor_destroy(m);
        return;
    }
    gp_monitor_session_start(m, "bench", NULL);
    for (int i = 0; i < 50; i++) gp_monitor_sample_now(m); /* warm up */
    int64_t c0 = gp_clock_thread_cpu_ns(), w0 = gp_clock_mono_ns();
    for (int i = 0; i < ticks; i++) gp_monitor_sample_now(m);
    int64_t c1 = gp_clock_thread_cpu_ns(), w1 = gp_clock_mono_ns();
    double per = (double)(c1 - c0) / ticks / (double)n / 1000.0;
    printf("%-34s %zu device(s) %7d ticks  %8.2f us CPU per sample per device  (%.2f us wall "
           "per tick)\n",
           label, n, ticks, per, (double)(w1 - w0) / ticks / 1000.0);
    gp_monitor_destroy(m);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: bench_monitor LIBFAKE_NVML SCENARIO [TICKS]\n");
        return 2;
    }
    int ticks = argc > 3 ? atoi(argv[3]) : 20000;
    setenv("FAKE_NVML_SCENARIO", argv[2], 1);
    gp_mon_config c;
    gp_mon_config_defaults(&c);
    c.enable_event_log = 0;
    c.export_json_reports = 0;
    c.device_discovery_interval_seconds = 0;
    c.enable_opencl_monitoring = 0;
    c.enable_host_monitoring = 0;
    snprintf(c.nvml_library, sizeof c.nvml_library, "%s", argv[1]);
    snprintf(c.sysfs_root, sizeof c.sysfs_root, "/nonexistent");
    run("nvml (stand-in), interval 1 s", &c, ticks);
    c.monitoring_interval_seconds = 0.1; /* nvmlDeviceGetSamples path */
    run("nvml (stand-in), interval 0.1 s", &c, ticks);
    c.enable_process_monitoring = 0;
    run("nvml (stand-in), no processes", &c, ticks);
    gp_mon_config h;
    gp_mon_config_defaults(&h);
    h.enable_event_log = 0;
    h.export_json_reports = 0;
    h.enable_gpu_monitoring = 0;
    h.enable_opencl_monitoring = 0;
    run("host (/proc)", &h, ticks / 4);
    return 0;
}
