/* tests/test_nvsmi_faults.c: the nvidia-smi fallback against a misbehaving
 * nvidia-smi (tests/data/monitor/misbehaving-nvidia-smi): lines that are no
 * rows of the query on the -lms stream (warnings, over-long lines) never
 * make a GPU lost, in either mode, and show in health once they recur; a
 * warning line after the process rows of the compute-apps query leaves the
 * process list alone, in either mode, and a compute-apps stream that ends
 * after each iteration does not empty it when it ends; a GPU that appears
 * (re-discovery lists it) is sampled although the running stream started
 * without it; a GPU that re-discovery no longer lists is lost with one
 * device_lost alert and no stale sample; the
 * driver's own error reaches health and the devices' status; a hung
 * --help-query-gpu is reported as no answer, and hung field probes stop at
 * the first. */
#include "test.h"
#include "monitor_helpers.h"
#include <gpuprof/monitor.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static char logpath[64];

/* A monitor on the nvidia-smi fallback (NVML missing) with the stand-in in
 * mode `mode`, sampling every 50 ms. */
static gp_monitor *smi_monitor(const char *mode, const char *per_tick)
{
    char smi[256];
    snprintf(smi, sizeof smi, "%s/monitor/misbehaving-nvidia-smi", GP_TEST_DATA);
    gp_mon_config c = gp_test_mon_config("/nonexistent/libnvidia-ml.so.1", smi);
    c.monitoring_interval_seconds = 0.05;
    snprintf(logpath, sizeof logpath, "/tmp/gp_nvsmi_faults_%d.log", (int)getpid());
    unlink(logpath);
    setenv("MISB_SMI_MODE", mode, 1);
    setenv("MISB_SMI_LOG", logpath, 1);
    if (per_tick)
        setenv("GPUPROF_NVIDIA_SMI_MODE", per_tick, 1);
    else
        unsetenv("GPUPROF_NVIDIA_SMI_MODE");
    return gp_monitor_create(&c); /* the variables stay for the streams it starts */
}

static void smi_done(gp_monitor *m)
{
    gp_monitor_destroy(m);
    unsetenv("MISB_SMI_MODE");
    unsetenv("MISB_SMI_LOG");
    unsetenv("GPUPROF_NVIDIA_SMI_MODE");
    unlink(logpath);
}

static gp_health_entry smi_health(gp_monitor *m)
{
    gp_health_entry h[8], none;
    size_t n = 0;
    memset(&none, 0, sizeof none);
    gp_monitor_health(m, h, 8, &n);
    for (size_t i = 0; i < n && i < 8; i++)
        if (!strcmp(h[i].backend, "nvidia-smi")) return h[i];
    return none;
}

/* Lines of the stand-in's start log that contain needle. */
static int count_starts(const char *needle)
{
    FILE *f = fopen(logpath, "r");
    if (!f) return 0;
    char line[4096];
    int n = 0;
    while (fgets(line, sizeof line, f))
        if (strstr(line, needle)) n++;
    fclose(f);
    return n;
}

/* Samples until health mentions ignored lines (at most 400 ticks), checking
 * at every tick that both GPUs are present and no device_lost alert came. */
static void check_no_gpu_lost(const char *mode, const char *per_tick, const char *last)
{
    gp_monitor *m = smi_monitor(mode, per_tick);
    ASSERT(m);
    ASSERT_EQ_INT(gp_monitor_device_count(m), 2);
    gp_health_entry h;
    int shown = 0;
    for (int i = 0; i < 400 && !shown; i++) {
        gp_monitor_sample_now(m);
        for (int d = 0; d < 2; d++) {
            gp_dev_info di;
            ASSERT_EQ_INT(gp_monitor_device_info(m, (size_t)d, &di), 0);
            if (!di.present) fprintf(stderr, "mode %s: GPU %d: %s\n", mode, d, di.status);
            ASSERT_EQ_INT(di.present, 1);
        }
        ASSERT_EQ_INT(gp_monitor_alert_count(m, GP_ALERT_DEVICE_LOST), 0);
        h = smi_health(m);
        shown = strstr(h.reason, "lines not rows of the query ignored") != NULL;
        gp_test_sleep_ms(20);
    }
    ASSERT(shown);
    ASSERT_CONTAINS(h.reason, last);
    ASSERT_CONTAINS(h.reason, "using nvidia-smi: 15 of 16 fields known"); /* kept */
    gp_dev_sample s;
    ASSERT_EQ_INT(gp_monitor_get_status(m, 1, &s), 0);
    ASSERT_NEAR(s.v[GP_MF_TEMP], 38, 0);
    smi_done(m);
}

TEST(stream_warning_before_each_iteration)
{
    check_no_gpu_lost("garbage", NULL, "WARNING: infoROM is corrupted");
}

TEST(stream_warning_after_each_iteration)
{
    check_no_gpu_lost("garbageafter", NULL, "WARNING: infoROM is corrupted");
}

TEST(stream_over_long_lines)
{
    /* a 20000-byte line and one of 20000 commas (more than the 16 KB read
     * buffer: their rests must not count as lines either) */
    check_no_gpu_lost("huge", NULL, "a line longer than");
}

TEST(per_tick_warning_lines)
{
    check_no_gpu_lost("garbage", "per-tick", "WARNING: infoROM is corrupted");
}

/* A warning after each iteration's process rows (appsgarbage): every GPU's
 * process is listed, streamed as per tick (the stream emptied the list at
 * every such line, so it never listed any). */
static void check_procs_listed(const char *per_tick)
{
    gp_monitor *m = smi_monitor("appsgarbage", per_tick);
    ASSERT(m);
    ASSERT_EQ_INT(gp_monitor_device_count(m), 2);
    gp_dev_proc p0[4], p1[4];
    size_t n0 = 0, n1 = 0;
    for (int i = 0; i < 300 && !(n0 == 1 && n1 == 1); i++) {
        gp_monitor_sample_now(m);
        n0 = gp_monitor_processes(m, 0, p0, 4);
        n1 = gp_monitor_processes(m, 1, p1, 4);
        if (!(n0 == 1 && n1 == 1)) gp_test_sleep_ms(20);
    }
    if (n0 != 1 || n1 != 1) fprintf(stderr, "processes: GPU 0 %zu, GPU 1 %zu\n", n0, n1);
    ASSERT_EQ_INT((int)n0, 1);
    ASSERT_EQ_INT((int)n1, 1);
    ASSERT_EQ_INT(p1[0].pid, 999999);
    smi_done(m);
}

TEST(stream_apps_warning_after_rows)
{
    check_procs_listed(NULL);
}

TEST(per_tick_apps_warning_after_rows)
{
    check_procs_listed("per-tick");
}

TEST(stream_apps_that_end)
{
    /* appsdie: the compute-apps stream prints one iteration and exits, so
     * it is restarted at most once a second, each time at a tick that read
     * its group and its end together (which emptied the list for that
     * tick); the list is read until two restarts were seen */
    gp_monitor *m = smi_monitor("appsdie", NULL);
    ASSERT(m);
    ASSERT_EQ_INT(gp_monitor_device_count(m), 2);
    gp_dev_proc p[4];
    int listed = 0, empty_after = 0, starts0 = -1;
    for (int i = 0; i < 600; i++) {
        gp_monitor_sample_now(m);
        size_t n0 = gp_monitor_processes(m, 0, p, 4), n1 = gp_monitor_processes(m, 1, p, 4);
        int starts = count_starts("--query-compute-apps=timestamp");
        if (n0 == 1 && n1 == 1 && !listed) {
            listed = 1;
            starts0 = starts;
        } else if (listed && (n0 != 1 || n1 != 1)) {
            fprintf(stderr, "tick %d: GPU 0 %zu, GPU 1 %zu processes (stream %d)\n", i, n0, n1,
                    starts);
            empty_after++;
        }
        if (listed && starts >= starts0 + 2) break;
        gp_test_sleep_ms(20);
    }
    ASSERT(listed);
    ASSERT_CMP_INT(count_starts("--query-compute-apps=timestamp"), >=, starts0 + 2);
    ASSERT_EQ_INT(empty_after, 0);
    smi_done(m);
}

TEST(stream_gpu_appears)
{
    /* fixedset: one GPU at first; the stream started then never prints the
     * second, so re-discovery listing it must restart the stream (else the
     * new GPU is "no longer reported" at every tick) */
    char one[64];
    snprintf(one, sizeof one, "/tmp/gp_nvsmi_one_%d", (int)getpid());
    FILE *f = fopen(one, "w");
    ASSERT(f);
    fclose(f);
    setenv("MISB_SMI_ONE", one, 1);
    gp_monitor *m = smi_monitor("fixedset", NULL);
    ASSERT(m);
    ASSERT_EQ_INT(gp_monitor_device_count(m), 1);
    for (int i = 0; i < 5; i++) { /* the stream runs with one GPU */
        gp_monitor_sample_now(m);
        gp_test_sleep_ms(20);
    }
    unlink(one);
    ASSERT_EQ_INT(gp_monitor_rediscover(m), 2);
    for (int i = 0; i < 20; i++) {
        gp_monitor_sample_now(m);
        for (int d = 0; d < 2; d++) {
            gp_dev_info di;
            ASSERT_EQ_INT(gp_monitor_device_info(m, (size_t)d, &di), 0);
            if (!di.present) fprintf(stderr, "tick %d: GPU %d: %s\n", i, d, di.status);
            ASSERT_EQ_INT(di.present, 1);
        }
        gp_test_sleep_ms(20);
    }
    gp_dev_sample s;
    ASSERT_EQ_INT(gp_monitor_get_status(m, 1, &s), 0);
    ASSERT_NEAR(s.v[GP_MF_TEMP], 38, 0);
    ASSERT_EQ_INT(gp_monitor_alert_count(m, GP_ALERT_DEVICE_LOST), 0);
    unsetenv("MISB_SMI_ONE");
    smi_done(m);
}

TEST(stream_gpu_goes)
{
    /* fixedset: two GPUs, then re-discovery lists one (the running stream
     * still prints both): the GPU that went is lost as the docs say for a
     * GPU nvidia-smi stops listing, with one device_lost alert and no
     * sample (its last one was still returned, and no alert came); when it
     * is listed again it is back and sampled */
    char one[64];
    snprintf(one, sizeof one, "/tmp/gp_nvsmi_one_%d", (int)getpid());
    unlink(one);
    setenv("MISB_SMI_ONE", one, 1);
    gp_monitor *m = smi_monitor("fixedset", NULL);
    ASSERT(m);
    ASSERT_EQ_INT(gp_monitor_device_count(m), 2);
    gp_dev_sample s;
    for (int i = 0; i < 5; i++) {
        gp_monitor_sample_now(m);
        gp_test_sleep_ms(20);
    }
    ASSERT_EQ_INT(gp_monitor_get_status(m, 1, &s), 0);
    FILE *f = fopen(one, "w");
    ASSERT(f);
    fclose(f);
    gp_monitor_rediscover(m);
    gp_monitor_rediscover(m); /* still gone: no second alert */
    gp_dev_info di;
    ASSERT_EQ_INT(gp_monitor_device_info(m, 1, &di), 0);
    ASSERT_EQ_INT(di.present, 0);
    ASSERT_CONTAINS(di.status, "no longer found");
    ASSERT_EQ_INT(gp_monitor_alert_count(m, GP_ALERT_DEVICE_LOST), 1);
    ASSERT_EQ_INT(gp_monitor_get_status(m, 1, &s), GP_ENODEV);
    for (int i = 0; i < 5; i++) {
        gp_monitor_sample_now(m);
        ASSERT_EQ_INT(gp_monitor_get_status(m, 1, &s), GP_ENODEV);
        ASSERT_EQ_INT(gp_monitor_device_info(m, 0, &di), 0);
        ASSERT_EQ_INT(di.present, 1);
        gp_test_sleep_ms(20);
    }
    unlink(one);
    gp_monitor_rediscover(m);
    for (int i = 0; i < 5; i++) {
        gp_monitor_sample_now(m);
        gp_test_sleep_ms(20);
    }
    ASSERT_EQ_INT(gp_monitor_device_info(m, 1, &di), 0);
    ASSERT_EQ_INT(di.present, 1);
    ASSERT_EQ_INT(gp_monitor_get_status(m, 1, &s), 0);
    ASSERT_NEAR(s.v[GP_MF_TEMP], 38, 0);
    ASSERT_EQ_INT(gp_monitor_alert_count(m, GP_ALERT_DEVICE_LOST), 1);
    unsetenv("MISB_SMI_ONE");
    smi_done(m);
}

TEST(driver_error_at_start)
{
    gp_monitor *m = smi_monitor("failstart", NULL);
    ASSERT(m);
    gp_health_entry h = smi_health(m);
    ASSERT_EQ_INT(h.state, GP_HEALTH_UNAVAILABLE);
    ASSERT_CONTAINS(h.reason, "nvidia-smi exited with status 9: NVIDIA-SMI has failed because it "
                              "couldn't communicate with the NVIDIA driver");
    ASSERT_EQ_INT(gp_monitor_device_count(m), 0);
    /* the first failed probe stops the probing: no query per field */
    ASSERT_CMP_INT(count_starts("--query-gpu="), <=, 1);
    gp_monitor_sample_now(m);
    smi_done(m);
}

TEST(driver_error_on_the_stream)
{
    gp_monitor *m = smi_monitor("failstream", NULL);
    ASSERT(m);
    ASSERT_EQ_INT(gp_monitor_device_count(m), 2);
    gp_dev_info d;
    d.present = 1;
    for (int i = 0; i < 400 && d.present; i++) { /* lost once no snapshot came for 3 s */
        gp_monitor_sample_now(m);
        gp_monitor_device_info(m, 0, &d);
        if (d.present) gp_test_sleep_ms(20);
    }
    ASSERT_EQ_INT(d.present, 0);
    ASSERT_CONTAINS(d.status, "nvidia-smi exited with status 9 (stream restarted ");
    ASSERT_CONTAINS(d.status, "times): NVIDIA-SMI has failed because it couldn't communicate");
    smi_done(m);
}

TEST(help_query_that_hangs)
{
    gp_monitor *m = smi_monitor("hanghelp", NULL); /* 10 s */
    ASSERT(m);
    gp_health_entry h = smi_health(m);
    ASSERT_EQ_INT(h.state, GP_HEALTH_UNAVAILABLE);
    ASSERT_CONTAINS(h.reason, "nvidia-smi: no answer within 10000 ms (--help-query-gpu)");
    ASSERT_EQ_INT(gp_monitor_device_count(m), 0);
    smi_done(m);
}

TEST(field_probes_that_hang)
{
    gp_monitor *m = smi_monitor("hangprobe", NULL); /* one probe: 10 s */
    ASSERT(m);
    /* one probe was run, not one per field */
    ASSERT_EQ_INT(count_starts("--query-gpu=timestamp --format"), 1);
    ASSERT_EQ_INT(count_starts("--query-gpu=utilization.gpu"), 0);
    gp_health_entry h = smi_health(m);
    ASSERT_CONTAINS(h.reason, "0 of 16 fields known (probed one by one; no answer within 10000 "
                              "ms: the rest not probed)");
    ASSERT_EQ_INT(gp_monitor_device_count(m), 2); /* listed; no field known */
    smi_done(m);
}

/* A sampling stream that prints, but never a row of the query (onlygarbage):
 * the tick fails saying what it printed, not "no output". */
TEST(stream_only_garbage)
{
    gp_monitor *m = smi_monitor("onlygarbage", NULL);
    ASSERT(m);
    ASSERT_EQ_INT(gp_monitor_device_count(m), 2);
    gp_monitor_sample_now(m); /* the first snapshot is waited for, bounded */
    gp_dev_info d;
    ASSERT_EQ_INT(gp_monitor_device_info(m, 0, &d), 0);
    ASSERT_EQ_INT(d.present, 0);
    ASSERT_CONTAINS(d.status, "nvidia-smi: no rows of the query for");
    ASSERT_CONTAINS(d.status, "other lines ignored (the last: WARNING: infoROM is corrupted");
    smi_done(m);
}

TEST_MAIN(stream_warning_before_each_iteration, stream_warning_after_each_iteration,
          stream_over_long_lines, per_tick_warning_lines, stream_apps_warning_after_rows,
          per_tick_apps_warning_after_rows, stream_apps_that_end, stream_gpu_appears,
          stream_gpu_goes, driver_error_at_start, driver_error_on_the_stream, help_query_that_hangs,
          field_probes_that_hang, stream_only_garbage)
