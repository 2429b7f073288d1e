/* tests/test_monitor.c: the device monitor against the NVML stand-in
 * (tests/fake_nvml): fields and validity, missing symbols, init faults and
 * the nvidia-smi fallback (its -lms stream: one process read across ticks,
 * restarted when it dies, bounded when it never answers), lost GPUs, XID
 * events, the sampler thread, and a 10,000-tick fault soak. */
#include "core/clock.h"
#include "test.h"
#include "monitor_helpers.h"
#include <gpuprof/monitor.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifndef GP_FAKE_NVML
#define GP_FAKE_NVML     ""
#define GP_FAKE_NVML_OLD ""
#endif

static gp_mon_config base_cfg(const char *lib, const char *scenario)
{
    gp_mon_config c = gp_test_mon_config(lib, "/nonexistent/nvidia-smi");
    if (scenario) {
        char path[1024];
        snprintf(path, sizeof path, "%s/monitor/%s", GP_TEST_DATA, scenario);
        setenv("FAKE_NVML_SCENARIO", path, 1);
    }
    return c;
}

static const gp_health_entry *health_of(const gp_health_entry *h, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(h[i].backend, name)) return &h[i];
    return NULL;
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f) return;
    fputs(text, f);
    fclose(f);
}

static const char *read_text(const char *path)
{
    static char buf[8192];
    buf[0] = 0;
    FILE *f = fopen(path, "r");
    if (!f) return buf;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    return buf;
}

static int count_lines(const char *path, const char *needle)
{
    const char *t = read_text(path);
    int n = 0;
    for (const char *l = t; *l;) {
        const char *e = strchr(l, '\n');
        size_t len = e ? (size_t)(e - l) : strlen(l);
        char line[1024];
        snprintf(line, sizeof line, "%.*s", (int)(len < sizeof line ? len : sizeof line - 1), l);
        if (strstr(line, needle)) n++;
        l += len + (e ? 1 : 0);
    }
    return n;
}

TEST(nvml_fields)
{
    gp_mon_config c = base_cfg(GP_FAKE_NVML, "nvml_basic.scn");
    gp_monitor *m = gp_monitor_create(&c);
    ASSERT(m);
    ASSERT_EQ_INT(gp_monitor_device_count(m), 2);
    gp_dev_info d;
    ASSERT_EQ_INT(gp_monitor_device_info(m, 0, &d), 0);
    ASSERT_EQ_STR(d.backend, "nvml");
    ASSERT_EQ_STR(d.name, "NVIDIA H100 80GB HBM3");
    ASSERT_EQ_STR(d.uuid, "GPU-11111111-2222-3333-4444-555555555555");
    ASSERT_EQ_STR(d.pci_bus_id, "00000000:18:00.0"); /* v3 layout: busId */
    ASSERT_EQ_STR(d.driver_version, "550.54.15");
    ASSERT_EQ_STR(d.cuda_version, "12.4");
    gp_dev_sample s;
    ASSERT_EQ_INT(gp_monitor_get_status(m, 0, &s), GP_ENODEV); /* nothing sampled yet */
    gp_monitor_sample_now(m);
    ASSERT_EQ_INT(gp_monitor_get_status(m, 0, &s), 0);
    ASSERT(gp_sample_has(&s, GP_MF_UTIL));
    ASSERT_NEAR(s.v[GP_MF_UTIL], 10, 0);
    ASSERT_NEAR(s.v[GP_MF_MEM_UTIL], 5, 0);
    ASSERT_NEAR(s.v[GP_MF_MEM_TOTAL], 85899345920.0, 0);
    ASSERT_NEAR(s.v[GP_MF_MEM_USED], 1073741824.0, 0);
    /* v2 memory info: free excludes the reserved 1 % */
    ASSERT_NEAR(s.v[GP_MF_MEM_FREE], 85899345920.0 - 1073741824.0 - 858993459.0, 1);
    ASSERT_NEAR(s.v[GP_MF_TEMP], 45, 0);
    ASSERT_NEAR(s.v[GP_MF_TEMP_SLOWDOWN], 87, 0);
    ASSERT_NEAR(s.v[GP_MF_TEMP_SHUTDOWN], 92, 0);
    ASSERT_NEAR(s.v[GP_MF_POWER], 70.0, 1e-9);
    ASSERT_NEAR(s.v[GP_MF_POWER_LIMIT], 700.0, 1e-9);
    ASSERT_NEAR(s.v[GP_MF_ENERGY], 1000.0, 1e-9);
    ASSERT_NEAR(s.v[GP_MF_CLOCK_SM], 345, 0);
    ASSERT_NEAR(s.v[GP_MF_CLOCK_MEM], 2619, 0);
    ASSERT_NEAR(s.v[GP_MF_PSTATE], 0, 0);
    ASSERT_NEAR(s.v[GP_MF_THROTTLE], 1, 0);
    ASSERT_NEAR(s.v[GP_MF_PCIE_TX], 1000 * 1024.0, 0);
    ASSERT_NEAR(s.v[GP_MF_PCIE_RX], 2000 * 1024.0, 0);
    ASSERT(gp_sample_has(&s, GP_MF_ECC_CORR));
    ASSERT(gp_sample_has(&s, GP_MF_MIG));
    ASSERT(!gp_sample_has(&s, GP_MF_FAN)); /* NOT_SUPPORTED -> N/A, not 0 */
    ASSERT(!gp_sample_has(&s, GP_MF_LOAD1));
    gp_dev_proc p[8];
    size_t np = gp_monitor_processes(m, 0, p, 8);
    ASSERT_EQ_INT(np, 2);
    ASSERT_EQ_INT(p[0].pid, 1);
    ASSERT_EQ_INT(p[0].mem_bytes, 1073741824LL);
    ASSERT(p[0].valid & GP_PROC_UTIL);
    ASSERT_NEAR(p[0].util_pct, 50, 0);
    ASSERT_EQ_STR(p[1].name, "?"); /* PID 999999 does not exist here */
    /* second device: NO_PERMISSION and NOT_SUPPORTED fields are N/A */
    ASSERT_EQ_INT(gp_monitor_get_status(m, 1, &s), 0);
    ASSERT(gp_sample_has(&s, GP_MF_POWER));
    ASSERT(!gp_sample_has(&s, GP_MF_POWER_LIMIT));
    ASSERT(!gp_sample_has(&s, GP_MF_ENERGY));
    ASSERT(!gp_sample_has(&s, GP_MF_ECC_CORR));
    ASSERT_EQ_INT(gp_monitor_processes(m, 1, p, 8), 0);
    /* values move with the ticks; the throttle mask decodes */
    gp_monitor_sample_now(m);
    gp_monitor_sample_now(m);
    gp_monitor_get_status(m, 0, &s);
    ASSERT_NEAR(s.v[GP_MF_UTIL], 95, 0);
    ASSERT_NEAR(s.v[GP_MF_TEMP], 85, 0);
    char buf[128];
    ASSERT_EQ_STR(gp_throttle_decode((uint64_t)s.v[GP_MF_THROTTLE], buf, sizeof buf),
                  "sw_power_cap,sw_thermal");
    gp_dev_sample h[8];
    ASSERT_EQ_INT(gp_monitor_history(m, 0, h, 8), 3);
    ASSERT_NEAR(h[0].v[GP_MF_UTIL], 10, 0);
    ASSERT_NEAR(h[2].v[GP_MF_UTIL], 95, 0);
    gp_monitor_destroy(m);
}

TEST(nvml_sub_second_uses_samples)
{
    /* below 1 s the loader averages nvmlDeviceGetSamples; the stand-in gives
     * one sample per tick with the tick's value, so the values must agree */
    gp_mon_config c = base_cfg(GP_FAKE_NVML, "nvml_basic.scn");
    c.monitoring_interval_seconds = 0.1;
    gp_monitor *m = gp_monitor_create(&c);
    for (int i = 0; i < 2; i++) gp_monitor_sample_now(m);
    gp_dev_sample s;
    ASSERT_EQ_INT(gp_monitor_get_status(m, 0, &s), 0);
    ASSERT_NEAR(s.v[GP_MF_UTIL], 50, 0);
    ASSERT_NEAR(s.v[GP_MF_MEM_UTIL], 20, 0);
    gp_monitor_destroy(m);
}

TEST(nvml_old_library_missing_symbols)
{
    gp_mon_config c = base_cfg(GP_FAKE_NVML_OLD, "nvml_basic.scn");
    c.monitoring_interval_seconds = 0.1; /* would use GetSamples if present */
    gp_monitor *m = gp_monitor_create(&c);
    ASSERT_EQ_INT(gp_monitor_device_count(m), 2);
    gp_dev_info d;
    gp_monitor_device_info(m, 0, &d);
    ASSERT_EQ_STR(d.pci_bus_id, "0000:18:00.0"); /* v1 layout: the legacy id */
    gp_monitor_sample_now(m);
    gp_dev_sample s;
    ASSERT_EQ_INT(gp_monitor_get_status(m, 0, &s), 0);
    ASSERT_NEAR(s.v[GP_MF_UTIL], 10, 0); /* from nvmlDeviceGetUtilizationRates */
    ASSERT_NEAR(s.v[GP_MF_MEM_FREE], 85899345920.0 - 1073741824.0, 0); /* v1 memory */
    ASSERT_NEAR(s.v[GP_MF_THROTTLE], 1, 0); /* ThrottleReasons, the old name */
    gp_dev_proc p[8];
    ASSERT_EQ_INT(gp_monitor_processes(m, 0, p, 8), 2); /* v1 process struct stride */
    ASSERT_EQ_INT(p[1].pid, 999999);
    ASSERT_EQ_INT(p[1].mem_bytes, 2147483648LL);
    ASSERT(!(p[0].valid & GP_PROC_UTIL));  /* no nvmlDeviceGetProcessUtilization */
    ASSERT(!gp_sample_has(&s, GP_MF_XID)); /* no event API */
    gp_monitor_destroy(m);
}

TEST(nvml_library_absent)
{
    gp_mon_config c = base_cfg("/nonexistent/libnvidia-ml.so.1", "nvml_basic.scn");
    gp_monitor *m = gp_monitor_create(&c);
    ASSERT_EQ_INT(gp_monitor_device_count(m), 0);
    gp_health_entry h[8];
    size_t n = 0;
    ASSERT_EQ_INT(gp_monitor_health(m, h, 8, &n), GP_HEALTH_UNAVAILABLE);
    const gp_health_entry *e = health_of(h, n, "nvml");
    ASSERT(e);
    ASSERT_EQ_INT(e->state, GP_HEALTH_UNAVAILABLE);
    ASSERT_CONTAINS(e->reason, "cannot load");
    e = health_of(h, n, "nvidia-smi");
    ASSERT(e);
    ASSERT_CONTAINS(e->reason, "not found");
    gp_monitor_sample_now(m); /* no device: a tick is harmless */
    gp_monitor_destroy(m);
}

TEST(nvml_mismatch_falls_back_to_nvidia_smi)
{
    gp_mon_config c = base_cfg(GP_FAKE_NVML, "nvml_mismatch.scn");
    snprintf(c.nvidia_smi, sizeof c.nvidia_smi, "%s/monitor/fake-nvidia-smi", GP_TEST_DATA);
    char dir[] = "/tmp/gp_smi_XXXXXX", ctl[64];
    ASSERT(mkdtemp(dir));
    snprintf(ctl, sizeof ctl, "%s/ctl", dir);
    write_file(ctl, "\n");
    setenv("FAKE_SMI_CTL", ctl, 1);
    gp_monitor *m = gp_monitor_create(&c);
    gp_health_entry h[8];
    size_t n = 0;
    ASSERT_EQ_INT(gp_monitor_health(m, h, 8, &n), GP_HEALTH_DEGRADED);
    const gp_health_entry *e = health_of(h, n, "nvml");
    ASSERT(e);
    ASSERT_CONTAINS(e->reason, "driver/library version mismatch");
    e = health_of(h, n, "nvidia-smi");
    ASSERT(e);
    ASSERT_EQ_INT(e->state, GP_HEALTH_DEGRADED);
    ASSERT_CONTAINS(e->reason, "NVML: driver/library version mismatch, using nvidia-smi");
    ASSERT_EQ_INT(e->devices, 2);
    gp_dev_info d;
    gp_monitor_device_info(m, 1, &d);
    ASSERT_EQ_STR(d.backend, "nvidia-smi");
    ASSERT_EQ_STR(d.name, "Tesla T4");
    ASSERT_EQ_STR(d.driver_version, "535.104.05");
    gp_monitor_sample_now(m);
    gp_dev_sample s;
    ASSERT_EQ_INT(gp_monitor_get_status(m, 0, &s), 0);
    ASSERT_NEAR(s.v[GP_MF_UTIL], 87, 0);
    ASSERT_NEAR(s.v[GP_MF_MEM_TOTAL], 40960.0 * 1048576, 0);
    ASSERT_NEAR(s.v[GP_MF_POWER], 312.45, 1e-9);
    ASSERT_NEAR(s.v[GP_MF_POWER_LIMIT], 400, 0); /* probed: power.limit */
    ASSERT_NEAR(s.v[GP_MF_PSTATE], 0, 0);
    ASSERT_NEAR(s.v[GP_MF_THROTTLE], 4, 0);
    ASSERT_NEAR(s.v[GP_MF_MIG], 0, 0);
    ASSERT(!gp_sample_has(&s, GP_MF_FAN));        /* [N/A] */
    ASSERT(!gp_sample_has(&s, GP_MF_ECC_UNCORR)); /* not known to this driver */
    ASSERT_EQ_INT(gp_monitor_get_status(m, 1, &s), 0);
    ASSERT(!gp_sample_has(&s, GP_MF_POWER));    /* [N/A] */
    ASSERT(!gp_sample_has(&s, GP_MF_ECC_CORR)); /* [Not Supported] */
    ASSERT(!gp_sample_has(&s, GP_MF_MIG));
    ASSERT_NEAR(s.v[GP_MF_PSTATE], 8, 0);
    ASSERT_NEAR(s.v[GP_MF_FAN], 31, 0);
    gp_dev_proc p[4];
    ASSERT_EQ_INT(gp_monitor_processes(m, 1, p, 4), 1);
    ASSERT_EQ_INT(p[0].pid, 999999);
    ASSERT(!(p[0].valid & GP_PROC_MEM)); /* [N/A] */
    /* a GPU that the running nvidia-smi stream starts reporting lost */
    write_file(ctl, "lost\n");
    for (int i = 0; i < 200; i++) { /* the stream's next iteration (1 s period) */
        gp_monitor_sample_now(m);
        gp_monitor_device_info(m, 1, &d);
        if (!d.present) break;
        gp_test_sleep_ms(25);
    }
    ASSERT_EQ_INT(d.present, 0);
    ASSERT_CONTAINS(d.status, "no longer reported");
    gp_monitor_device_info(m, 0, &d);
    ASSERT_EQ_INT(d.present, 1);
    ASSERT_EQ_INT(gp_monitor_alert_count(m, GP_ALERT_DEVICE_LOST), 1);
    gp_monitor_destroy(m);
    unsetenv("FAKE_SMI_CTL");
    unlink(ctl);
    rmdir(dir);
}

/* The fallback's monitor with a control file and a start log for the fake
 * nvidia-smi, sampling at `interval` seconds. */
static gp_monitor *smi_monitor(char *dir, char *ctl, char *log, double interval)
{
    gp_mon_config c = base_cfg(GP_FAKE_NVML, "nvml_mismatch.scn");
    snprintf(c.nvidia_smi, sizeof c.nvidia_smi, "%s/monitor/fake-nvidia-smi", GP_TEST_DATA);
    c.monitoring_interval_seconds = interval;
    if (!mkdtemp(dir)) return NULL;
    sprintf(ctl, "%s/ctl", dir);
    sprintf(log, "%s/log", dir);
    write_file(ctl, "\n");
    setenv("FAKE_SMI_CTL", ctl, 1);
    setenv("FAKE_SMI_LOG", log, 1);
    return gp_monitor_create(&c); /* the variables stay for the streams it starts */
}

static void smi_cleanup(const char *dir, const char *ctl, const char *log)
{
    unsetenv("FAKE_SMI_CTL");
    unsetenv("FAKE_SMI_LOG");
    unlink(ctl);
    unlink(log);
    rmdir(dir);
}

TEST(nvsmi_stream_one_process)
{
    char dir[] = "/tmp/gp_smi_XXXXXX", ctl[64], log[64];
    gp_monitor *m = smi_monitor(dir, ctl, log, 0.05);
    ASSERT(m);
    ASSERT_EQ_INT(gp_monitor_device_count(m), 2);
    gp_dev_sample s;
    for (int i = 0; i < 20; i++) {
        gp_monitor_sample_now(m);
        ASSERT_EQ_INT(gp_monitor_get_status(m, 0, &s), 0);
        ASSERT_NEAR(s.v[GP_MF_UTIL], 87, 0);
        ASSERT_NEAR(s.v[GP_MF_MEM_USED], 30000.0 * 1048576, 0);
        ASSERT(!gp_sample_has(&s, GP_MF_FAN)); /* [N/A] stays unknown */
        ASSERT_EQ_INT(gp_monitor_get_status(m, 1, &s), 0);
        ASSERT(!gp_sample_has(&s, GP_MF_POWER));    /* [N/A] */
        ASSERT(!gp_sample_has(&s, GP_MF_ECC_CORR)); /* [Not Supported] */
        ASSERT_NEAR(s.v[GP_MF_FAN], 31, 0);
        gp_dev_proc p[4];
        ASSERT_EQ_INT(gp_monitor_processes(m, 0, p, 4), 1);
        ASSERT_EQ_INT(gp_monitor_processes(m, 1, p, 4), 1);
        ASSERT_EQ_INT(p[0].pid, 999999);
        ASSERT(!(p[0].valid & GP_PROC_MEM)); /* [N/A] */
        gp_test_sleep_ms(30);
    }
    /* 20 ticks over ~1 s: one --query-gpu and one --query-compute-apps
     * process, each started once and read as a stream */
    ASSERT_EQ_INT(count_lines(log, "--query-gpu="), 1);
    ASSERT_EQ_INT(count_lines(log, "--query-compute-apps="), 1);
    ASSERT_CONTAINS(read_text(log), "-lms 50");
    /* the processes end: iterations without a line empty the list */
    write_file(ctl, "noapps\n");
    gp_dev_proc p[4];
    int np = -1;
    for (int i = 0; i < 200 && np != 0; i++) {
        gp_test_sleep_ms(25);
        gp_monitor_sample_now(m);
        np = gp_monitor_processes(m, 0, p, 4) + gp_monitor_processes(m, 1, p, 4);
    }
    ASSERT_EQ_INT(np, 0);
    ASSERT_EQ_INT(gp_monitor_get_status(m, 0, &s), 0); /* the GPU stream goes on */
    ASSERT_EQ_INT(count_lines(log, "--query-compute-apps="), 1);
    gp_monitor_destroy(m);
    smi_cleanup(dir, ctl, log);
}

/* A monitor on the fake's streams (every 50 ms), sampled once, whose
 * streams then die ("die": both exit at their next iteration) and a tick
 * that sees them end; ctl then says `next`. */
static gp_monitor *smi_streams_died(char *dir, char *ctl, char *log, const char *next)
{
    gp_monitor *m = smi_monitor(dir, ctl, log, 0.05);
    ASSERT(m);
    gp_monitor_sample_now(m);
    gp_dev_sample s;
    ASSERT_EQ_INT(gp_monitor_get_status(m, 0, &s), 0);
    ASSERT_EQ_INT(count_lines(log, "first iteration: --query-gpu"), 1);
    ASSERT_EQ_INT(count_lines(log, "first iteration: --query-compute-apps"), 1);
    write_file(ctl, "die\n");
    gp_test_sleep_ms(300);
    gp_monitor_sample_now(m); /* sees the end of the streams */
    write_file(ctl, next);
    return m;
}

TEST(nvsmi_stream_restarted_when_it_dies)
{
    char dir[] = "/tmp/gp_smi_XXXXXX", ctl[64], log[64];
    gp_monitor *m = smi_streams_died(dir, ctl, log, "\n");
    gp_dev_sample s;
    int starts = 1;
    for (int i = 0; i < 200 && starts < 2; i++) {
        gp_test_sleep_ms(25);
        gp_monitor_sample_now(m);
        starts = count_lines(log, "--query-gpu=");
    }
    ASSERT_EQ_INT(starts, 2); /* restarted once (at most one start a second) */
    gp_monitor_sample_now(m);
    gp_dev_info d;
    gp_monitor_device_info(m, 0, &d);
    ASSERT_EQ_INT(d.present, 1); /* the gap was bridged: no GPU reported lost */
    ASSERT_EQ_INT(gp_monitor_alert_count(m, GP_ALERT_DEVICE_LOST), 0);
    ASSERT_EQ_INT(gp_monitor_get_status(m, 0, &s), 0);
    ASSERT_NEAR(s.v[GP_MF_TEMP], 64, 0);
    gp_monitor_destroy(m);
    smi_cleanup(dir, ctl, log);
}

/* Streams that die are restarted without stalling the sampler: while the
 * last snapshot is young enough to stand for this tick
 * (max(3 s, 3 periods)), the ticks that restart the
 * streams do not wait for the new instances' first iterations (it used
 * to, up to 3 s: every back-end's sampling stalled meanwhile). The new
 * instances wait 1.5 s before they print ("slow"); the tick that started
 * them returned before that. */
TEST(nvsmi_stream_restart_does_not_stall)
{
    char dir[] = "/tmp/gp_smi_XXXXXX", ctl[64], log[64];
    gp_monitor *m = smi_streams_died(dir, ctl, log, "slow\n");
    int starts = 1, astarts = 1;
    for (int i = 0; i < 200 && (starts < 2 || astarts < 2); i++) {
        gp_test_sleep_ms(10);
        gp_monitor_sample_now(m);
        starts = count_lines(log, "--query-gpu=");
        astarts = count_lines(log, "--query-compute-apps=");
    }
    ASSERT_EQ_INT(starts, 2);
    /* the ticks that restarted them have returned: the new instances have
     * not begun to print (they log that first), and the last snapshot
     * stands for the GPUs */
    ASSERT_EQ_INT(count_lines(log, "first iteration: --query-gpu"), 1);
    ASSERT_EQ_INT(astarts, 2);
    ASSERT_EQ_INT(count_lines(log, "first iteration: --query-compute-apps"), 1);
    gp_dev_info d;
    gp_monitor_device_info(m, 0, &d);
    ASSERT_EQ_INT(d.present, 1);
    ASSERT_EQ_INT(gp_monitor_alert_count(m, GP_ALERT_DEVICE_LOST), 0);
    write_file(ctl, "\n");
    gp_monitor_destroy(m);
    smi_cleanup(dir, ctl, log);
}

TEST(nvsmi_stream_that_never_answers)
{
    char dir[] = "/tmp/gp_smi_XXXXXX", ctl[64], log[64];
    gp_monitor *m = smi_monitor(dir, ctl, log, 0.05);
    ASSERT(m);
    ASSERT_EQ_INT(gp_monitor_device_count(m), 2);
    write_file(ctl, "hang\n"); /* the streams start but print nothing, ever */
    gp_monitor_sample_now(m);  /* returns: the first snapshot is waited for, bounded */
    gp_dev_info d;
    gp_monitor_device_info(m, 0, &d);
    ASSERT_EQ_INT(d.present, 0);
    ASSERT_CONTAINS(d.status, "nvidia-smi: no output for");
    for (int i = 0; i < 3; i++) gp_monitor_sample_now(m); /* later ticks do not wait again */
    /* it answers again: the restarted stream brings the GPUs back */
    write_file(ctl, "\n");
    int ok = 0;
    for (int i = 0; i < 200 && !ok; i++) {
        gp_test_sleep_ms(25);
        gp_monitor_rediscover(m);
        gp_monitor_sample_now(m);
        gp_monitor_device_info(m, 0, &d);
        ok = d.present;
    }
    ASSERT_EQ_INT(ok, 1);
    ASSERT_CMP_INT(count_lines(log, "--query-gpu="), >=, 2);
    gp_monitor_destroy(m);
    smi_cleanup(dir, ctl, log);
}

TEST(gpu_lost_mid_run)
{
    /* without device 0's XID 79: delivered by the XID thread whenever it
     * polls, it made device 0 lost too (one device_lost more) in some runs */
    gp_mon_config c = base_cfg(GP_FAKE_NVML, "nvml_lost.scn");
    gp_monitor *m = gp_monitor_create(&c);
    gp_monitor_sample_now(m);
    gp_monitor_sample_now(m);
    gp_dev_info d;
    gp_monitor_device_info(m, 1, &d);
    ASSERT_EQ_INT(d.present, 1);
    gp_monitor_sample_now(m); /* tick 2: device 1 is lost */
    gp_monitor_device_info(m, 1, &d);
    ASSERT_EQ_INT(d.present, 0);
    ASSERT_CONTAINS(d.status, "GPU is lost");
    gp_dev_sample s;
    ASSERT_EQ_INT(gp_monitor_get_status(m, 1, &s), GP_ENODEV);
    ASSERT_EQ_INT(gp_monitor_get_status(m, 0, &s), 0);
    gp_monitor_sample_now(m); /* a lost device is not sampled again */
    ASSERT_EQ_INT(gp_monitor_alert_count(m, GP_ALERT_DEVICE_LOST), 1);
    gp_health_entry h[8];
    size_t n = 0;
    ASSERT_EQ_INT(gp_monitor_health(m, h, 8, &n), GP_HEALTH_DEGRADED);
    const gp_health_entry *e = health_of(h, n, "nvml");
    ASSERT_CONTAINS(e->reason, "GPU is lost");
    ASSERT_EQ_INT(e->devices, 1);
    /* re-discovery finds it again, and its next sample loses it again */
    gp_monitor_rediscover(m);
    gp_monitor_device_info(m, 1, &d);
    ASSERT_EQ_INT(d.present, 1);
    ASSERT_EQ_INT(gp_monitor_device_count(m), 2);
    gp_monitor_sample_now(m);
    gp_monitor_device_info(m, 1, &d);
    ASSERT_EQ_INT(d.present, 0);
    ASSERT_EQ_INT(gp_monitor_alert_count(m, GP_ALERT_DEVICE_LOST), 2);
    gp_monitor_destroy(m);
}

TEST(xid_events)
{
    gp_mon_config c = base_cfg(GP_FAKE_NVML, "nvml_basic.scn");
    gp_monitor *m = gp_monitor_create(&c);
    gp_dev_sample s;
    int seen = 0;
    for (int i = 0; i < 100 && !seen; i++) {
        gp_monitor_sample_now(m);
        gp_monitor_get_status(m, 0, &s);
        seen = gp_sample_has(&s, GP_MF_XID);
        if (!seen) gp_test_sleep_ms(20);
    }
    ASSERT(seen);
    ASSERT_NEAR(s.v[GP_MF_XID], 79, 0);
    gp_monitor_destroy(m);
}

static void count_cb(const gp_event *ev, void *user)
{
    int *n = user;
    if (ev->type == GP_EV_PROFILER_STARTED || ev->type == GP_EV_PROFILER_STOPPED) n[ev->type]++;
}

TEST(sampler_thread_and_ring)
{
    gp_mon_config c = base_cfg(GP_FAKE_NVML, "nvml_basic.scn");
    c.monitoring_interval_seconds = 0.01;
    c.history_size = 8;
    gp_monitor *m = gp_monitor_create(&c);
    int counts[8] = {0};
    ASSERT_EQ_INT(gp_monitor_on_event(m, count_cb, counts), 0);
    ASSERT_EQ_INT(gp_monitor_start(m), 0);
    ASSERT_EQ_INT(gp_monitor_start(m), GP_ESTATE);
    int64_t t0 = gp_clock_mono_ns();
    while (gp_monitor_ticks(m) < 12 && gp_clock_mono_ns() - t0 < 5000000000LL) gp_test_sleep_ms(10);
    ASSERT_EQ_INT(gp_monitor_stop(m), 0);
    uint64_t t = gp_monitor_ticks(m);
    ASSERT_CMP_INT(t, >=, 12);
    gp_test_sleep_ms(30);
    ASSERT_EQ_INT(gp_monitor_ticks(m), t); /* stopped means stopped */
    gp_dev_sample h[32];
    ASSERT_EQ_INT(gp_monitor_history(m, 0, h, 32), 8); /* the ring keeps the newest 8 */
    for (int i = 1; i < 8; i++) ASSERT_CMP_INT(h[i].wall_ns, >=, h[i - 1].wall_ns);
    ASSERT_EQ_INT(counts[GP_EV_PROFILER_STARTED], 1);
    ASSERT_EQ_INT(counts[GP_EV_PROFILER_STOPPED], 1);
    gp_monitor_destroy(m);
}

/* 10,000 ticks of the fault scenario with sessions, snapshots, alerts and
 * re-discovery running: no crash; ASan/LSan builds check for leaks. */
TEST(fault_soak_10000_ticks)
{
    char dir[] = "/tmp/gpuprof-soak-XXXXXX";
    ASSERT(mkdtemp(dir));
    gp_mon_config c = base_cfg(GP_FAKE_NVML, "nvml_soak.scn");
    c.enable_event_log = 1;
    c.export_json_reports = 1;
    c.enable_snapshot_on_alert = 1;
    c.max_snapshots = 5;
    c.max_profiling_sessions = 3;
    snprintf(c.output_dir, sizeof c.output_dir, "%s", dir);
    gp_monitor *m = gp_monitor_create(&c);
    ASSERT_EQ_INT(gp_monitor_session_start(m, "soak", "fault soak"), 0);
    for (int i = 0; i < 10000; i++) {
        gp_monitor_sample_now(m);
        if (i % 1000 == 999) {
            gp_monitor_rediscover(m);
            char name[32];
            snprintf(name, sizeof name, "s%d", i / 1000);
            ASSERT_EQ_INT(gp_monitor_session_start(m, name, NULL), 0);
            gp_monitor_track_inference(m, NULL, (double)(i % 300));
            ASSERT_EQ_INT(gp_monitor_session_stop(m, name), 0);
        }
        if (i % 97 == 0) gp_monitor_snapshot(m, "soak", "periodic");
    }
    ASSERT_EQ_INT(gp_monitor_ticks(m), 10000);
    ASSERT_CMP_INT(gp_monitor_alert_count(m, GP_ALERT_TEMPERATURE), >=, 1);
    ASSERT_CMP_INT(gp_monitor_alert_count(m, GP_ALERT_DEVICE_LOST), >=, 1);
    gp_session_info si[8];
    size_t n = gp_monitor_sessions(m, si, 8);
    ASSERT_EQ_INT(n, 3); /* soak (active) + the two newest finished */
    ASSERT_EQ_STR(si[0].name, "soak");
    ASSERT_EQ_INT(si[0].snapshots, 5);
    ASSERT_EQ_INT(gp_monitor_session_stop(m, "soak"), 0);
    gp_monitor_destroy(m);
    char path[256], cmd[300];
    snprintf(path, sizeof path, "%s/soak.json", dir);
    FILE *f = fopen(path, "r");
    ASSERT(f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ASSERT_EQ_INT(system(cmd), 0);
}

TEST_MAIN(nvml_fields, nvsmi_stream_one_process, nvsmi_stream_restarted_when_it_dies,
          nvsmi_stream_restart_does_not_stall, nvsmi_stream_that_never_answers,
          nvml_sub_second_uses_samples, nvml_old_library_missing_symbols, nvml_library_absent,
          nvml_mismatch_falls_back_to_nvidia_smi, gpu_lost_mid_run, xid_events,
          sampler_thread_and_ring, fault_soak_10000_ticks)
