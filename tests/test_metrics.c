/* tests/test_metrics.c: the Prometheus exposition (src/serve/metrics.c) over
 * the NVML stand-in: values in base units, absent unknown fields, label
 * escaping, the seed's metrics (inference histogram, sessions, thermal
 * alerts), the per-generation cache, the textfile, and the listener's
 * address rules and token comparison. */
#include "serve/metrics.h"
#include "serve/promhttp.h"
#include "test.h"
#include "monitor_helpers.h"
#include <gpuprof/monitor.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef GP_FAKE_NVML
#define GP_FAKE_NVML ""
#endif

static gp_monitor *make_monitor(const char *scenario)
{
    if (!GP_FAKE_NVML[0]) return NULL;
    gp_mon_config c = gp_test_mon_config(GP_FAKE_NVML, "/nonexistent/nvidia-smi");
    char path[1024];
    snprintf(path, sizeof path, "%s/monitor/%s", GP_TEST_DATA, scenario);
    setenv("FAKE_NVML_SCENARIO", path, 1);
    return gp_monitor_create(&c);
}

/* The value of the series whose line starts with prefix (name{labels}). */
static double value_of(const char *text, const char *prefix)
{
    for (const char *p = text; p && *p;) {
        if (!strncmp(p, prefix, strlen(prefix)) && p[strlen(prefix)] == ' ')
            return strtod(p + strlen(prefix) + 1, NULL);
        p = strchr(p, '\n');
        if (p) p++;
    }
    return -12345;
}

#define L0                                                                                         \
    "{gpu=\"0\",uuid=\"GPU-aaaaaaaa-1111-2222-3333-444444444444\",model=\"NVIDIA "                 \
    "A100-SXM4-80GB\",hostname=\"node-7\",backend=\"nvml\"}"

TEST(values_units_and_absent_fields)
{
    gp_monitor *m = make_monitor("nvml_prom.scn");
    if (!m) SKIP("the NVML stand-in was not built");
    ASSERT_EQ_INT(gp_monitor_sample_now(m), 0);
    gp_metrics_opts o = {0};
    snprintf(o.hostname, sizeof o.hostname, "node-7");
    gp_metrics *x = gp_metrics_create(m, &o);
    gp_metrics_text *t = gp_metrics_acquire(x);
    ASSERT(t);
    const char *s = t->data;
    ASSERT_EQ_INT(strlen(s), t->len);
    ASSERT_NEAR(value_of(s, "gpu_device_count"), 2, 0);
    ASSERT_NEAR(value_of(s, "gpuprof_gpu_utilization_ratio" L0), 0.37, 1e-12);
    ASSERT_NEAR(value_of(s, "gpuprof_gpu_memory_used_bytes" L0), 21474836480.0, 0);
    ASSERT_NEAR(value_of(s, "gpuprof_gpu_power_watts" L0), 250.5, 1e-9);
    ASSERT_NEAR(value_of(s, "gpuprof_gpu_sm_clock_hertz" L0), 1410e6, 0);
    ASSERT_NEAR(value_of(s, "gpuprof_gpu_energy_joules_total" L0), 123456.789, 1e-6);
    ASSERT_NEAR(value_of(s, "gpuprof_gpu_pcie_transmit_bytes_per_second" L0), 4096.0 * 1024, 0);
    ASSERT_NEAR(value_of(s, "gpuprof_gpu_fan_speed_ratio" L0), 0.55, 1e-12);
    ASSERT_CONTAINS(s, "gpuprof_gpu_utilization_ratio" L0 " 0.37\n"); /* shortest form */
    /* the seed's aggregates over both GPUs: temperature only from GPU 0 */
    ASSERT_NEAR(value_of(s, "gpu_total_memory_mb"), (85899345920.0 + 42949672960.0) / 1048576, 0);
    ASSERT_NEAR(value_of(s, "gpu_average_utilization_percent"), (37 + 5) / 2.0, 1e-12);
    ASSERT_NEAR(value_of(s, "gpu_max_temperature_celsius"), 40, 0);
    /* GPU 1: escaped name; unsupported and forbidden fields are absent */
    const char *l1 = "{gpu=\"1\",uuid=\"GPU-bbbbbbbb-1111-2222-3333-444444444444\","
                     "model=\"Odd \\\"GPU\\\" \\\\ name\",hostname=\"node-7\",backend=\"nvml\"}";
    char key[512];
    snprintf(key, sizeof key, "gpuprof_gpu_memory_used_bytes%s", l1);
    ASSERT_NEAR(value_of(s, key), 1073741824.0, 0);
    ASSERT(!strstr(s, "gpuprof_gpu_temperature_celsius{gpu=\"1\""));
    ASSERT(!strstr(s, "gpuprof_gpu_power_watts{gpu=\"1\""));
    ASSERT(!strstr(s, "gpuprof_gpu_process_memory_used_bytes{gpu=\"1\""));
    ASSERT(!strstr(s, "gpuprof_gpu_clock_throttled{gpu=\"1\""));
    /* every family has HELP and TYPE, also when it has no series */
    ASSERT_CONTAINS(s, "# HELP gpuprof_gpu_temperature_celsius ");
    ASSERT_CONTAINS(s, "# TYPE gpuprof_gpu_ecc_corrected_errors_total counter\n");
    ASSERT_CONTAINS(s, "# TYPE gpu_inference_time_ms histogram\n");
    /* throttle reasons decoded: 0x4 = sw_power_cap */
    ASSERT_CONTAINS(s, "gpuprof_gpu_clock_throttled{gpu=\"0\",uuid=\"GPU-aaaaaaaa-1111-2222-3333-"
                       "444444444444\",model=\"NVIDIA A100-SXM4-80GB\",hostname=\"node-7\","
                       "backend=\"nvml\",reason=\"sw_power_cap\"} 1\n");
    /* no dcgm names unless asked */
    ASSERT(!strstr(s, "DCGM_FI_"));
    gp_metrics_release(t);
    gp_metrics_destroy(x);

    o.dcgm = 1;
    x = gp_metrics_create(m, &o);
    t = gp_metrics_acquire(x);
    const char *d0 =
        "{gpu=\"0\",UUID=\"GPU-aaaaaaaa-1111-2222-3333-444444444444\",device=\"nvidia0\","
        "modelName=\"NVIDIA A100-SXM4-80GB\",Hostname=\"node-7\","
        "DCGM_FI_DRIVER_VERSION=\"550.54.15\"}";
    snprintf(key, sizeof key, "DCGM_FI_DEV_FB_USED%s", d0);
    ASSERT_NEAR(value_of(t->data, key), 20480, 0);
    snprintf(key, sizeof key, "DCGM_FI_DEV_GPU_UTIL%s", d0);
    ASSERT_NEAR(value_of(t->data, key), 37, 0);
    snprintf(key, sizeof key, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION%s", d0);
    ASSERT_NEAR(value_of(t->data, key), 123456789, 0);
    ASSERT(!strstr(t->data, "DCGM_FI_DEV_GPU_TEMP{gpu=\"1\""));
    gp_metrics_release(t);
    gp_metrics_destroy(x);
    gp_monitor_destroy(m);
}

TEST(seed_counters_histogram_and_cache)
{
    gp_monitor *m = make_monitor("nvml_prom.scn");
    if (!m) SKIP("the NVML stand-in was not built");
    gp_monitor_sample_now(m);
    gp_metrics_opts o = {0};
    snprintf(o.hostname, sizeof o.hostname, "node-7");
    gp_metrics *x = gp_metrics_create(m, &o);
    gp_metrics_text *a = gp_metrics_acquire(x), *b = gp_metrics_acquire(x);
    ASSERT(a == b); /* nothing changed: the same text, rendered once */
    ASSERT_EQ_INT(gp_metrics_renders(x), 1);
    ASSERT_NEAR(value_of(a->data, "gpu_inference_time_ms_count"), 0, 0);
    ASSERT_NEAR(value_of(a->data, "gpu_profiling_sessions_total"), 0, 0);
    ASSERT_NEAR(value_of(a->data, "gpu_thermal_alerts_total"), 0, 0);
    ASSERT_EQ_INT(gp_monitor_session_start(m, "s1", NULL), 0);
    ASSERT_EQ_INT(gp_monitor_track_inference(m, NULL, 0.3), 0);
    ASSERT_EQ_INT(gp_monitor_track_inference(m, NULL, 7), 0);
    ASSERT_EQ_INT(gp_monitor_track_inference(m, NULL, 99999), 0);
    gp_metrics_text *c = gp_metrics_acquire(x);
    ASSERT(c != a);
    ASSERT_EQ_INT(gp_metrics_renders(x), 2);
    /* a still holds the old text: released texts stay valid for their holders */
    ASSERT_NEAR(value_of(a->data, "gpu_inference_time_ms_count"), 0, 0);
    gp_metrics_release(a);
    gp_metrics_release(b);
    ASSERT_NEAR(value_of(c->data, "gpu_inference_time_ms_count"), 3, 0);
    ASSERT_NEAR(value_of(c->data, "gpu_inference_time_ms_sum"), 0.3 + 7 + 99999, 1e-9);
    ASSERT_NEAR(value_of(c->data, "gpu_inference_time_ms_bucket{le=\"0.25\"}"), 0, 0);
    ASSERT_NEAR(value_of(c->data, "gpu_inference_time_ms_bucket{le=\"0.5\"}"), 1, 0);
    ASSERT_NEAR(value_of(c->data, "gpu_inference_time_ms_bucket{le=\"10\"}"), 2, 0);
    ASSERT_NEAR(value_of(c->data, "gpu_inference_time_ms_bucket{le=\"5000\"}"), 2, 0);
    ASSERT_NEAR(value_of(c->data, "gpu_inference_time_ms_bucket{le=\"+Inf\"}"), 3, 0);
    ASSERT_NEAR(value_of(c->data, "gpu_profiling_sessions_total"), 1, 0);
    gp_metrics_release(c);
    /* 31 ticks: GPU 0 reaches 95 C on the last: warning and critical at once */
    for (int i = 0; i < 30; i++) gp_monitor_sample_now(m);
    c = gp_metrics_acquire(x);
    ASSERT_NEAR(value_of(c->data, "gpu_thermal_alerts_total"), 1, 0);
    ASSERT_NEAR(value_of(c->data, "gpuprof_alerts_total{kind=\"temperature\",level=\"critical\","
                                  "hostname=\"node-7\"}"),
                1, 0);
    ASSERT_NEAR(value_of(c->data, "gpu_max_temperature_celsius"), 95, 0);
    ASSERT_CONTAINS(c->data, "backend=\"nvml\",kind=\"temperature\"} 2\n"); /* active level */
    ASSERT_NEAR(value_of(c->data, "gpuprof_monitor_ticks_total"), 31, 0);
    gp_metrics_release(c);
    ASSERT_EQ_INT(gp_monitor_session_stop(m, "s1"), 0);
    gp_metrics_destroy(x);
    gp_monitor_destroy(m);
}

TEST(textfile_atomic)
{
    gp_monitor *m = make_monitor("nvml_prom.scn");
    if (!m) SKIP("the NVML stand-in was not built");
    gp_monitor_sample_now(m);
    gp_metrics_opts o = {0};
    gp_metrics *x = gp_metrics_create(m, &o);
    char dir[] = "/tmp/gp_textfile_XXXXXX";
    ASSERT(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/gpuprof.prom", dir);
    gp_err err = {0};
    ASSERT_EQ_INT(gp_metrics_write_textfile(x, path, &err), 0);
    struct stat st1, st2;
    ASSERT_EQ_INT(stat(path, &st1), 0);
    gp_monitor_sample_now(m);
    ASSERT_EQ_INT(gp_metrics_write_textfile(x, path, &err), 0);
    ASSERT_EQ_INT(stat(path, &st2), 0);
    ASSERT(st1.st_ino != st2.st_ino); /* replaced by rename, not rewritten in place */
    gp_metrics_text *t = gp_metrics_acquire(x);
    FILE *f = fopen(path, "rb");
    ASSERT(f);
    char *buf = malloc(t->len + 2);
    size_t n = fread(buf, 1, t->len + 1, f);
    fclose(f);
    ASSERT_EQ_INT(n, t->len);
    ASSERT(!memcmp(buf, t->data, n));
    free(buf);
    gp_metrics_release(t);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "test $(ls -A '%s' | wc -l) -eq 1", dir); /* no temporary left */
    ASSERT_EQ_INT(system(cmd), 0);
    snprintf(path, sizeof path, "%s/missing/gpuprof.prom", dir);
    ASSERT_EQ_INT(gp_metrics_write_textfile(x, path, &err), GP_EIO);
    ASSERT_CONTAINS(err.msg, "missing");
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ASSERT_EQ_INT(system(cmd), 0);
    gp_metrics_destroy(x);
    gp_monitor_destroy(m);
}

TEST(listen_rules_and_token)
{
    struct sockaddr_storage ss;
    int lo = -1;
    gp_err err = {0};
    ASSERT_EQ_INT(gp_promhttp_parse_listen("127.0.0.1:9400", &ss, &lo, &err), 0);
    ASSERT_EQ_INT(lo, 1);
    ASSERT_EQ_INT(gp_promhttp_parse_listen("9400", &ss, &lo, &err), 0);
    ASSERT_EQ_INT(lo, 1);
    ASSERT_EQ_INT(gp_promhttp_parse_listen("[::1]:9400", &ss, &lo, &err), 0);
    ASSERT_EQ_INT(lo, 1);
    ASSERT_EQ_INT(gp_promhttp_parse_listen("0.0.0.0:9400", &ss, &lo, &err), 0);
    ASSERT_EQ_INT(lo, 0);
    ASSERT_EQ_INT(gp_promhttp_parse_listen(":9400", &ss, &lo, &err), 0);
    ASSERT_EQ_INT(lo, 0);
    ASSERT_EQ_INT(gp_promhttp_parse_listen("10.1.2.3:70000", &ss, &lo, &err), GP_EINVAL);
    ASSERT_EQ_INT(gp_promhttp_parse_listen("example.org:80", &ss, &lo, &err), GP_EINVAL);
    ASSERT_EQ_INT(gp_promhttp_parse_listen("[::1", &ss, &lo, &err), GP_EINVAL);
    /* a non-loopback address without a token is refused before binding */
    gp_promhttp_opts ho = {NULL, 0};
    ASSERT(!gp_promhttp_start("0.0.0.0:0", NULL, &ho, &err));
    ASSERT_CONTAINS(err.msg, "not a loopback address");
    ASSERT_EQ_INT(gp_promhttp_token_eq("s3cret-token-0123", "s3cret-token-0123"), 1);
    ASSERT_EQ_INT(gp_promhttp_token_eq("s3cret-token-0124", "s3cret-token-0123"), 0);
    ASSERT_EQ_INT(gp_promhttp_token_eq("s3cret", "s3cret-token-0123"), 0);
    ASSERT_EQ_INT(gp_promhttp_token_eq("s3cret-token-0123-and-more", "s3cret-token-0123"), 0);
    ASSERT_EQ_INT(gp_promhttp_token_eq("", "s3cret-token-0123"), 0);
}

/* A file of the fake sysfs tree (parents made). */
static void put_file(const char *root, const char *rel, const char *text)
{
    char path[1024];
    snprintf(path, sizeof path, "%s%s", root, rel);
    for (char *p = path + strlen(root) + 1; *p; p++)
        if (*p == '/') {
            *p = 0;
            mkdir(path, 0755);
            *p = '/';
        }
    FILE *f = fopen(path, "w");
    if (!f) abort();
    fputs(text, f);
    fclose(f);
}

/* An AMD GPU through the sysfs back-end: the same per-device families with
 * backend="sysfs", base units, and no dcgm-exporter name (NVIDIA only). */
TEST(sysfs_backend_devices)
{
    char root[64];
    snprintf(root, sizeof root, "/tmp/gpuprof-metrics-sysfs-XXXXXX");
    if (!mkdtemp(root)) abort();
    const char *d = "/sys/class/drm/card0/device/";
    char rel[256];
#define F(file, text) (snprintf(rel, sizeof rel, "%s%s", d, file), put_file(root, rel, text))
    F("vendor", "0x1002\n");
    F("device", "0x740f\n");
    F("product_name", "AMD Instinct MI210\n");
    F("unique_id", "ab12cd34ef56\n");
    F("uevent", "DRIVER=amdgpu\nPCI_SLOT_NAME=0000:03:00.0\n");
    F("gpu_busy_percent", "73\n");
    F("mem_info_vram_total", "68702699520\n");
    F("mem_info_vram_used", "17179869184\n");
    F("hwmon/hwmon3/temp1_input", "54000\n");
    F("hwmon/hwmon3/power1_average", "243000000\n");
#undef F
    put_file(root, "/proc/stat", "cpu  100 0 100 800 0 0 0 0 0 0\n");
    gp_mon_config c;
    gp_mon_config_defaults(&c);
    snprintf(c.nvml_library, sizeof c.nvml_library, "/nonexistent/libnvidia-ml.so.1");
    snprintf(c.nvidia_smi, sizeof c.nvidia_smi, "/nonexistent/nvidia-smi");
    snprintf(c.sysfs_root, sizeof c.sysfs_root, "%s", root);
    c.enable_opencl_monitoring = 0;
    c.enable_host_monitoring = 0;
    c.enable_event_log = 0;
    c.export_json_reports = 0;
    c.device_discovery_interval_seconds = 0;
    gp_monitor *m = gp_monitor_create(&c);
    ASSERT(m != NULL);
    ASSERT_EQ_INT(gp_monitor_sample_now(m), 0);
    gp_metrics_opts o = {0};
    o.dcgm = 1;
    snprintf(o.hostname, sizeof o.hostname, "node-7");
    gp_metrics *x = gp_metrics_create(m, &o);
    gp_metrics_text *t = gp_metrics_acquire(x);
    ASSERT(t != NULL);
    char key[512];
    const char *lab = "{gpu=\"0\",uuid=\"ab12cd34ef56\",model=\"AMD Instinct "
                      "MI210\",hostname=\"node-7\",backend=\"sysfs\"}";
    snprintf(key, sizeof key, "gpuprof_gpu_utilization_ratio%s", lab);
    ASSERT_NEAR(value_of(t->data, key), 0.73, 1e-12);
    snprintf(key, sizeof key, "gpuprof_gpu_memory_used_bytes%s", lab);
    ASSERT_NEAR(value_of(t->data, key), 17179869184.0, 0);
    snprintf(key, sizeof key, "gpuprof_gpu_temperature_celsius%s", lab);
    ASSERT_NEAR(value_of(t->data, key), 54, 0);
    snprintf(key, sizeof key, "gpuprof_gpu_power_watts%s", lab);
    ASSERT_NEAR(value_of(t->data, key), 243, 1e-9);
    ASSERT_NEAR(value_of(t->data, "gpu_device_count"), 1, 0);
    /* unknown to this card: absent, not 0 */
    ASSERT(!strstr(t->data, "gpuprof_gpu_fan_speed_ratio{"));
    ASSERT(!strstr(t->data, "gpuprof_gpu_ecc_corrected_errors_total{"));
    /* dcgm-exporter names are for NVIDIA devices only */
    ASSERT(!strstr(t->data, "DCGM_FI_DEV_GPU_UTIL{"));
    gp_metrics_release(t);
    gp_metrics_destroy(x);
    gp_monitor_destroy(m);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    if (system(cmd)) fprintf(stderr, "could not remove %s\n", root);
}

/* A program that embeds the monitor exports what only it knows through the
 * public API (gpuprof/monitor.h): the inference histogram and its sessions,
 * the same text as the exporter's cache renders. */
TEST(public_api_exports_tracked_inferences)
{
    gp_monitor *m = make_monitor("nvml_prom.scn");
    if (!m) SKIP("the NVML stand-in was not built");
    gp_monitor_sample_now(m);
    ASSERT_EQ_INT(gp_monitor_session_start(m, "serving", NULL), 0);
    const double lat[] = {3, 12, 12, 480};
    for (size_t i = 0; i < sizeof lat / sizeof *lat; i++)
        ASSERT_EQ_INT(gp_monitor_track_inference(m, "serving", lat[i]), 0);
    char *text = gp_monitor_metrics(m, 0);
    ASSERT(text);
    ASSERT_NEAR(value_of(text, "gpu_inference_time_ms_count"), 4, 0);
    ASSERT_NEAR(value_of(text, "gpu_inference_time_ms_sum"), 507, 1e-9);
    ASSERT_NEAR(value_of(text, "gpu_inference_time_ms_bucket{le=\"10\"}"), 1, 0);
    ASSERT_NEAR(value_of(text, "gpu_inference_time_ms_bucket{le=\"+Inf\"}"), 4, 0);
    ASSERT_NEAR(value_of(text, "gpu_profiling_sessions_total"), 1, 0);
    ASSERT_NEAR(value_of(text, "gpu_device_count"), 2, 0);
    ASSERT(!strstr(text, "DCGM_FI_DEV_GPU_UTIL"));
    /* equal to the exporter's own rendering of the same monitor */
    gp_metrics_opts o = {0};
    gp_metrics *x = gp_metrics_create(m, &o);
    gp_metrics_text *t = gp_metrics_acquire(x);
    ASSERT_EQ_INT(strlen(text), t->len);
    ASSERT(!memcmp(text, t->data, t->len));
    gp_metrics_release(t);
    gp_metrics_destroy(x);
    free(text);
    text = gp_monitor_metrics(m, GP_METRICS_DCGM);
    ASSERT(text && strstr(text, "DCGM_FI_DEV_GPU_UTIL"));
    free(text);
    char dir[] = "/tmp/gp_pubmetrics_XXXXXX";
    ASSERT(mkdtemp(dir));
    char path[256], errbuf[256] = "";
    snprintf(path, sizeof path, "%s/app.prom", dir);
    ASSERT_EQ_INT(gp_monitor_write_metrics(m, path, 0, errbuf, sizeof errbuf), 0);
    FILE *f = fopen(path, "rb");
    ASSERT(f);
    char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    ASSERT_NEAR(value_of(buf, "gpu_inference_time_ms_count"), 4, 0);
    snprintf(path, sizeof path, "%s/missing/app.prom", dir);
    ASSERT(gp_monitor_write_metrics(m, path, 0, errbuf, sizeof errbuf) != 0);
    ASSERT_CONTAINS(errbuf, "missing");
    ASSERT(gp_monitor_write_metrics(m, NULL, 0, errbuf, sizeof errbuf) != 0);
    ASSERT(gp_monitor_metrics(NULL, 0) == NULL);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ASSERT_EQ_INT(system(cmd), 0);
    ASSERT_EQ_INT(gp_monitor_session_stop(m, "serving"), 0);
    gp_monitor_destroy(m);
}

TEST_MAIN(values_units_and_absent_fields, sysfs_backend_devices, seed_counters_histogram_and_cache,
          textfile_atomic, listen_rules_and_token, public_api_exports_tracked_inferences)
