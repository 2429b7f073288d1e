/* tests/test_monitor_logic.c: alert thresholds and hysteresis, the JSONL
 * event log, sessions (retention, snapshots, inference histogram, report,
 * suggestions) and the YAML configuration reader. */
#include "monitor/alerts.h"
#include "monitor/session.h"
#include "test.h"
#include <gpuprof/monitor.h>
#include <unistd.h>
#ifdef GP_HAVE_SQLITE
#include <sqlite3.h>
#endif

typedef struct rec {
    int n, raised, cleared;
    int type[64], level[64], kind[64];
} rec;

static void rec_cb(const gp_event *ev, void *user)
{
    rec *r = user;
    if (r->n < 64) {
        r->type[r->n] = ev->type;
        r->level[r->n] = ev->level;
        r->kind[r->n] = ev->kind;
    }
    r->n++;
    if (ev->type == GP_EV_ALERT) r->raised++;
    if (ev->type == GP_EV_ALERT_CLEARED) r->cleared++;
}

static gp_dev_sample temp_sample(double t)
{
    gp_dev_sample s;
    memset(&s, 0, sizeof s);
    s.v[GP_MF_TEMP] = t;
    s.valid = 1ull << GP_MF_TEMP;
    return s;
}

TEST(temperature_hysteresis)
{
    gp_mon_config c;
    gp_mon_config_defaults(&c); /* 80 / 90 C, hysteresis 3 */
    gp_alerts *a = gp_alerts_create(&c);
    rec r = {0};
    gp_alerts_on_event(a, rec_cb, &r);
    static const struct {
        double t;
        int level;
    } seq[] = {{79, 0},   {80, 1}, {79.9, 1},  {80.1, 1}, {78, 1},   {77.5, 1},
               {76.9, 0}, {80, 1}, {90, 2},    {88, 2},   {87.5, 2}, {86.9, 1},
               {91, 2},   {70, 0}, {79.99, 0}, {100, 2},  {50, 0}};
    for (size_t i = 0; i < sizeof seq / sizeof seq[0]; i++) {
        gp_dev_sample s = temp_sample(seq[i].t);
        gp_alerts_check(a, 0, "gpu0", "gpu", &s);
        if (gp_alerts_level(a, 0, GP_ALERT_TEMPERATURE) != seq[i].level)
            GP_FAIL_("step %zu (%.2f C): level %d, want %d", i, seq[i].t,
                     gp_alerts_level(a, 0, GP_ALERT_TEMPERATURE), seq[i].level);
    }
    /* raised: 80 (w), 80 (w), 90 (c), 91 (c), 100 (c) = 5; cleared events:
     * 76.9, 86.9, 70, 50 = 4 */
    ASSERT_EQ_INT(gp_alerts_count(a, GP_ALERT_TEMPERATURE), 5);
    ASSERT_EQ_INT(r.raised, 5);
    ASSERT_EQ_INT(r.cleared, 4);
    /* a value hovering at the threshold does not flap */
    int before = r.n;
    for (int i = 0; i < 1000; i++) {
        gp_dev_sample s = temp_sample(i % 2 ? 80.4 : 79.6);
        gp_alerts_check(a, 1, "gpu1", "gpu", &s);
    }
    ASSERT_EQ_INT(r.n - before, 1); /* one warning, never cleared */
    gp_alerts_destroy(a);
}

TEST(memory_and_utilization_alerts)
{
    gp_mon_config c;
    gp_mon_config_defaults(&c);
    gp_alerts *a = gp_alerts_create(&c);
    rec r = {0};
    gp_alerts_on_event(a, rec_cb, &r);
    gp_dev_sample s;
    memset(&s, 0, sizeof s);
    s.valid = (1ull << GP_MF_MEM_TOTAL) | (1ull << GP_MF_MEM_USED) | (1ull << GP_MF_UTIL);
    s.v[GP_MF_MEM_TOTAL] = 1000;
    s.v[GP_MF_MEM_USED] = 960; /* 96 %: critical */
    s.v[GP_MF_UTIL] = 95;      /* > 90 %: high */
    ASSERT_EQ_INT(gp_alerts_check(a, 0, "gpu0", "gpu", &s), 2);
    ASSERT_EQ_INT(gp_alerts_level(a, 0, GP_ALERT_MEMORY), 2);
    ASSERT_EQ_INT(gp_alerts_level(a, 0, GP_ALERT_UTILIZATION), 1); /* one level only */
    s.v[GP_MF_UTIL] = 86;                                          /* within hysteresis 5 */
    s.v[GP_MF_MEM_USED] = 930;                                     /* 93 % > 95 - 3 */
    ASSERT_EQ_INT(gp_alerts_check(a, 0, "gpu0", "gpu", &s), 0);
    ASSERT_EQ_INT(gp_alerts_level(a, 0, GP_ALERT_UTILIZATION), 1);
    ASSERT_EQ_INT(gp_alerts_level(a, 0, GP_ALERT_MEMORY), 2);
    s.v[GP_MF_UTIL] = 84.9;
    s.v[GP_MF_MEM_USED] = 700; /* straight down two levels */
    gp_alerts_check(a, 0, "gpu0", "gpu", &s);
    ASSERT_EQ_INT(gp_alerts_level(a, 0, GP_ALERT_UTILIZATION), 0);
    ASSERT_EQ_INT(gp_alerts_level(a, 0, GP_ALERT_MEMORY), 0);
    ASSERT_EQ_INT(gp_alerts_count(a, GP_ALERT_MEMORY), 1);
    ASSERT_EQ_INT(gp_alerts_count(a, GP_ALERT_UTILIZATION), 1);
    /* invalid fields raise nothing */
    memset(&s, 0, sizeof s);
    ASSERT_EQ_INT(gp_alerts_check(a, 0, "gpu0", "gpu", &s), 0);
    /* disabled alerts */
    c.enable_alerts = 0;
    gp_alerts *off = gp_alerts_create(&c);
    s = temp_sample(99);
    ASSERT_EQ_INT(gp_alerts_check(off, 0, "gpu0", "gpu", &s), 0);
    gp_alerts_destroy(off);
    gp_alerts_destroy(a);
}

/* Issue 15 item 17: the host's CPU load is not a GPU utilization alert;
 * XID 79 is a device-lost alert, another new XID code an xid alert. */
TEST(host_utilization_and_xid_alerts)
{
    gp_mon_config c;
    gp_mon_config_defaults(&c);
    gp_alerts *a = gp_alerts_create(&c);
    rec r = {0};
    gp_alerts_on_event(a, rec_cb, &r);
    gp_dev_sample s;
    memset(&s, 0, sizeof s);
    s.valid = 1ull << GP_MF_UTIL;
    s.v[GP_MF_UTIL] = 100;
    ASSERT_EQ_INT(gp_alerts_check(a, 0, "host", "host", &s), 0);
    ASSERT_EQ_INT(gp_alerts_check(a, 1, "CPU (OpenCL)", "cpu", &s), 0);
    ASSERT_EQ_INT(gp_alerts_count(a, GP_ALERT_UTILIZATION), 0);
    ASSERT_EQ_INT(gp_alerts_check(a, 2, "MI250", "accelerator", &s), 1);
    ASSERT_EQ_INT(gp_alerts_count(a, GP_ALERT_UTILIZATION), 1);
    /* XID: 0 is none; 79 raises device_lost once; 13 raises xid once */
    memset(&s, 0, sizeof s);
    s.valid = 1ull << GP_MF_XID;
    s.v[GP_MF_XID] = 0;
    ASSERT_EQ_INT(gp_alerts_check(a, 3, "gpu3", "gpu", &s), 0);
    s.v[GP_MF_XID] = 79;
    int before = r.raised;
    ASSERT_EQ_INT(gp_alerts_check(a, 3, "gpu3", "gpu", &s), 1);
    ASSERT_EQ_INT(gp_alerts_check(a, 3, "gpu3", "gpu", &s), 0); /* the same XID again */
    ASSERT_EQ_INT(gp_alerts_level(a, 3, GP_ALERT_DEVICE_LOST), 2);
    ASSERT_EQ_INT(gp_alerts_count(a, GP_ALERT_DEVICE_LOST), 1);
    ASSERT_EQ_INT(r.raised - before, 1);
    s.v[GP_MF_XID] = 13;
    ASSERT_EQ_INT(gp_alerts_check(a, 4, "gpu4", "gpu", &s), 1);
    ASSERT_EQ_INT(gp_alerts_count(a, GP_ALERT_XID), 1);
    ASSERT_EQ_INT(gp_alerts_level(a, 4, GP_ALERT_XID), 1);
    ASSERT_EQ_STR(gp_alert_kind_name(GP_ALERT_XID), "xid");
    gp_alerts_destroy(a);
}

TEST(event_log_jsonl)
{
    char path[] = "/tmp/gpuprof-events-XXXXXX";
    int fd = mkstemp(path);
    ASSERT(fd >= 0);
    close(fd);
    gp_mon_config c;
    gp_mon_config_defaults(&c);
    gp_alerts *a = gp_alerts_create(&c);
    gp_err err = {0};
    ASSERT_EQ_INT(gp_alerts_open_log(a, path, &err), 0);
    gp_dev_sample s = temp_sample(95);
    gp_alerts_check(a, 3, "H100 #3", "gpu", &s);
    gp_alerts_device_lost(a, 2, "GPU is lost");
    gp_alerts_device_lost(a, 2, "GPU is lost"); /* once per loss */
    gp_event ev = {0};
    ev.type = GP_EV_DATA_GENERATED;
    ev.device = -1;
    snprintf(ev.message, sizeof ev.message, "report written");
    gp_alerts_emit(a, &ev);
    gp_alerts_destroy(a);
    FILE *f = fopen(path, "r");
    ASSERT(f);
    char line[1024];
    int n = 0;
    char all[4096] = "";
    while (fgets(line, sizeof line, f)) {
        ASSERT(line[0] == '{');
        ASSERT(strstr(line, "}\n"));
        strncat(all, line, sizeof all - strlen(all) - 1);
        n++;
    }
    fclose(f);
    unlink(path);
    ASSERT_EQ_INT(n, 3);
    ASSERT_CONTAINS(all, "\"type\":\"alert\",\"kind\":\"temperature\",\"level\":\"critical\","
                         "\"value\":95,\"threshold\":90,\"device\":3");
    ASSERT_CONTAINS(all, "\"kind\":\"device_lost\"");
    ASSERT_CONTAINS(all, "\"type\":\"data_generated\"");
}

static gp_dev_info gpu_info(const char *name)
{
    gp_dev_info d;
    memset(&d, 0, sizeof d);
    snprintf(d.name, sizeof d.name, "%s", name);
    snprintf(d.backend, sizeof d.backend, "nvml");
    snprintf(d.kind, sizeof d.kind, "gpu");
    d.present = 1;
    return d;
}

TEST(sessions_retention_and_report)
{
    gp_mon_config c;
    gp_mon_config_defaults(&c);
    c.max_snapshots = 3;
    c.max_profiling_sessions = 2;
    c.slow_inference_ms = 20;
    gp_sessions *s = gp_sessions_create(&c);
    gp_err err = {0};
    ASSERT_EQ_INT(gp_sessions_start(s, "bad name", NULL, 1, &err), GP_EINVAL);
    ASSERT_EQ_INT(gp_sessions_start(s, "a", "first", 1000, &err), 0);
    ASSERT_EQ_INT(gp_sessions_start(s, "a", NULL, 1000, &err), GP_ESTATE);
    ASSERT_EQ_INT(gp_sessions_start(s, "b", NULL, 1000, &err), 0);
    ASSERT_EQ_INT(gp_sessions_start(s, "c", NULL, 1000, &err), GP_ERANGE); /* 2 active */
    ASSERT_EQ_INT(gp_sessions_stop(s, "a", 2000, &err), 0);
    ASSERT_EQ_INT(gp_sessions_stop(s, "a", 2000, &err), GP_ESTATE);
    ASSERT_EQ_INT(gp_sessions_stop(s, "zz", 2000, &err), GP_ENOTFOUND);
    ASSERT_EQ_INT(gp_sessions_start(s, "c", "third", 3000, &err), 0); /* "a" goes */
    gp_session_info si[4];
    ASSERT_EQ_INT(gp_sessions_list(s, si, 4), 2);
    ASSERT_EQ_STR(si[0].name, "b");
    ASSERT_EQ_STR(si[1].name, "c");
    /* samples: GPU at low utilization, hot, memory nearly full, throttled */
    gp_dev_info info[2] = {gpu_info("H100"), gpu_info("OpenCL CPU")};
    snprintf(info[1].backend, sizeof info[1].backend, "opencl");
    snprintf(info[1].kind, sizeof info[1].kind, "cpu");
    gp_dev_sample smp[2];
    int have[2] = {1, 1};
    for (int i = 0; i < 10; i++) {
        memset(smp, 0, sizeof smp);
        smp[0].valid = (1ull << GP_MF_UTIL) | (1ull << GP_MF_TEMP) | (1ull << GP_MF_MEM_TOTAL) |
                       (1ull << GP_MF_MEM_USED) | (1ull << GP_MF_ENERGY) | (1ull << GP_MF_THROTTLE);
        smp[0].v[GP_MF_UTIL] = 10 + i;     /* mean 14.5 */
        smp[0].v[GP_MF_TEMP] = 70 + 2 * i; /* max 88 */
        smp[0].v[GP_MF_MEM_TOTAL] = 100;
        smp[0].v[GP_MF_MEM_USED] = 50 + 4 * i; /* peak 86 % */
        smp[0].v[GP_MF_ENERGY] = 1000 + 10 * i;
        smp[0].v[GP_MF_THROTTLE] = i == 5 ? 0x20 : 0x1;
        smp[1].valid = 1ull << GP_MF_MEM_TOTAL;
        smp[1].v[GP_MF_MEM_TOTAL] = 1e9;
        gp_sessions_observe(s, 2, info, smp, have);
        gp_sessions_snapshot(s, "c", i == 9 ? "last" : NULL, 4000 + i, 2, info, smp, have);
    }
    for (int i = 1; i <= 100; i++) gp_sessions_track(s, "c", (double)i); /* 1..100 ms */
    ASSERT_EQ_INT(gp_sessions_track(s, "nope", 1), GP_ENOTFOUND);
    ASSERT_EQ_INT(gp_sessions_track(s, "c", -1), GP_EINVAL);
    ASSERT_EQ_INT(gp_sessions_stop(s, "c", 3000 + 2500000000LL, &err), 0);
    gp_sessions_list(s, si, 4);
    ASSERT_EQ_INT(si[1].snapshots, 3); /* retention */
    ASSERT_EQ_INT(si[1].inferences, 100);
    gp_sbuf b = {0};
    ASSERT_EQ_INT(gp_sessions_report(s, "nope", NULL, &b), GP_ENOTFOUND);
    ASSERT_EQ_INT(gp_sessions_report(s, "c", NULL, &b), 0);
    const char *j = gp_sbuf_cstr(&b);
    ASSERT_CONTAINS(j, "\"session\":\"c\",\"description\":\"third\",\"active\":false");
    ASSERT_CONTAINS(j, "\"duration_s\":2.5");
    ASSERT_CONTAINS(j, "\"totals\":{\"samples\":20,\"gpus\":1,\"snapshots\":3,"
                       "\"snapshots_dropped\":7,\"inference_count\":100,\"energy_j\":90,"
                       "\"peak_memory_used_bytes\":86}");
    ASSERT_CONTAINS(j, "\"averages\":{\"gpu_util_pct\":14.5}");
    ASSERT_CONTAINS(j, "\"max_temperature_c\":88");
    ASSERT_CONTAINS(j, "\"util_pct\":{\"avg\":14.5,\"min\":10,\"max\":19}");
    ASSERT_CONTAINS(j, "\"mean_ms\":50.5");
    ASSERT_CONTAINS(j, "\"p50_ms\":50.5");
    ASSERT_CONTAINS(j, "\"p95_ms\":95.05");
    /* histogram: 1 ms in (0.5, 1], 2 in (1, 2.5], ..., 50 in (50, 100] */
    ASSERT_CONTAINS(j, "{\"le_ms\":1,\"count\":1}");
    ASSERT_CONTAINS(j, "{\"le_ms\":2.5,\"count\":1}");
    ASSERT_CONTAINS(j, "{\"le_ms\":100,\"count\":50}");
    ASSERT_CONTAINS(j, "\"reason\":\"last\"");
    ASSERT_CONTAINS(j, "\"kind\":\"low_utilization\",\"device\":0");
    ASSERT_CONTAINS(j, "\"kind\":\"high_memory\",\"device\":0");
    ASSERT_CONTAINS(j, "\"kind\":\"high_temperature\",\"device\":0");
    ASSERT_CONTAINS(j, "\"kind\":\"throttling\",\"device\":0");
    ASSERT_CONTAINS(j, "(sw_thermal)");
    ASSERT_CONTAINS(j, "\"kind\":\"slow_inference\"");
    ASSERT(!strstr(j, "\"device\":1,\"message\"")); /* no suggestion for the OpenCL CPU */
    gp_sbuf_free(&b);
    /* written report */
    char dir[] = "/tmp/gpuprof-rep-XXXXXX";
    ASSERT(mkdtemp(dir));
    char sub[128];
    snprintf(sub, sizeof sub, "%s/nested/out", dir);
    ASSERT_EQ_INT(gp_sessions_write_report(s, "c", sub, NULL, &err), 0);
    gp_sessions_list(s, si, 4);
    ASSERT_CONTAINS(si[1].report_path, "/nested/out/c.json");
    FILE *f = fopen(si[1].report_path, "r");
    ASSERT(f);
    fclose(f);
    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ASSERT_EQ_INT(system(cmd), 0);
    gp_sessions_destroy(s);
}

static const char *write_tmp(const char *text)
{
    static char path[64];
    snprintf(path, sizeof path, "/tmp/gpuprof-cfg-XXXXXX");
    int fd = mkstemp(path);
    if (fd < 0) abort();
    if (write(fd, text, strlen(text)) != (ssize_t)strlen(text)) abort();
    close(fd);
    return path;
}

TEST(config_yaml)
{
    gp_mon_config c;
    gp_mon_config_defaults(&c);
    ASSERT_NEAR(c.temperature_warning_threshold, 80, 0);
    ASSERT_NEAR(c.memory_critical_threshold, 95, 0);
    ASSERT_NEAR(c.monitoring_interval_seconds, 1, 0);
    char err[512];
    const char *p = write_tmp("# gpuprof monitor settings\n"
                              "---\n"
                              "store_path: \"/tmp/q.db\"   # quoted\n"
                              "monitoring_interval_seconds: 0.25\n"
                              "metrics_update_interval_seconds: 2\n"
                              "device_discovery_interval_seconds: 30\n"
                              "enable_gpu_monitoring: true\n"
                              "enable_alerts: no\n"
                              "temperature_warning_threshold: 75\n"
                              "temperature_critical_threshold: 85\n"
                              "memory_warning_threshold: 70\n"
                              "memory_critical_threshold: 90\n"
                              "max_snapshots: 50\n"
                              "max_profiling_sessions: 5\n"
                              "output_dir: '/tmp/out # not a comment'\n"
                              "export_json_reports: false\n");
    ASSERT_EQ_INT(gp_mon_config_load(&c, p, err, sizeof err), 0);
    unlink(p);
    ASSERT_EQ_STR(c.store_path, "/tmp/q.db");
    ASSERT_NEAR(c.monitoring_interval_seconds, 0.25, 0);
    ASSERT_NEAR(c.device_discovery_interval_seconds, 30, 0);
    ASSERT_EQ_INT(c.enable_alerts, 0);
    ASSERT_NEAR(c.temperature_critical_threshold, 85, 0);
    ASSERT_EQ_INT(c.max_snapshots, 50);
    ASSERT_EQ_STR(c.output_dir, "/tmp/out # not a comment");
    ASSERT_EQ_INT(c.export_json_reports, 0);
    /* errors name the line */
    static const struct {
        const char *text, *msg;
    } bad[] = {
        {"max_snapshots: 3\nfoo: 1\n", ":2:1: unknown key 'foo'"},
        {"\n\nmonitoring_interval_seconds: 0.001\n",
         ":3:30: monitoring_interval_seconds: 0.001 is out"},
        {"max_snapshots: 2.5\n", ":1:16: max_snapshots: expected an integer"},
        {"enable_alerts: maybe\n", ":1:16: enable_alerts: expected true or false"},
        /* item 15: the seed's mode and level did nothing: refused, saying why */
        {"mode: production\n", ":1:1: 'mode' is not supported (it changed nothing)"},
        {"gpu_profiler:\n  level: basic\n", ":2:3: 'level' is not supported (it changed nothing)"},
        {"# c\nlevel\n", ":2:1: expected a mapping of 'key: value' lines"},
        {"alerts:\n  temperature: 3\n", ":2:3: unknown key 'temperature' in section 'alerts'"},
        {"temperature_warning_threshold: hot\n",
         ":1:32: temperature_warning_threshold: expected a number"},
        /* issue 15 item 16: what the hand-written reader accepted silently */
        {"max_snapshots: 5\nmax_snapshots: 6\n",
         ":2:1: duplicate key 'max_snapshots' (first at line 1)"},
        {"max_snapshots: 0x10\n", ":1:16: max_snapshots: expected a number, got '0x10'"},
        {"history_size: 010\n", ":1:15: history_size: expected a number"},
        {"max_snapshots: 3\n---\nhistory_size: 9\n", ":3:1: only one YAML document is read"},
        {"temperature_warning_threshold: 95\n", ":1:32: temperature_warning_threshold (95) is "
                                                "above temperature_critical_threshold (90)"},
        {"memory_warning_threshold: 90\nmemory_critical_threshold: 85\n",
         ":1:27: memory_warning_threshold (90) is above memory_critical_threshold (85)"},
        {"gpu_profiler:\n  output_dir: a\n  output_dir: b\n", ":3:3: duplicate key 'output_dir'"},
        {"gpu_profiler:\n  thresholds:\n    temperature_warning: 70\n    bogus: 1\n",
         ":4:5: unknown key 'bogus' in section 'thresholds'"},
        {"output_dir: [a, b]\n", ":1:13: output_dir: a list is not a valid value"},
        {"max_snapshots:\n", ":1:15: max_snapshots: missing value"},
        {"output_dir: 'production\n", ":2:1: found unexpected end of stream"},
        {"a: &x 1\nmax_snapshots: *y\n", ": found undefined alias"},
        /* a key or value spanning lines stays one line (fuzz_config found it) */
        {"?  ve\n \n  nvec", ":1:4: unknown key 've\\nnvec'"},
        {"max_snapshots: \"1\t2\"\n", "expected a number, got '1\\t2'"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        gp_mon_config_defaults(&c);
        p = write_tmp(bad[i].text);
        int rc = gp_mon_config_load(&c, p, err, sizeof err);
        unlink(p);
        ASSERT_EQ_INT(rc, GP_EPARSE);
        ASSERT_CONTAINS(err, bad[i].msg);
        ASSERT(!strncmp(err, p, strlen(p))); /* FILE:LINE:COLUMN: */
        ASSERT(!strchr(err, '\n') && !strchr(err, '\t'));
        /* c unchanged by a file with an error */
        ASSERT_NEAR(c.temperature_warning_threshold, 80, 0);
        ASSERT_EQ_INT(c.max_snapshots, 100);
    }
    /* the seed's nested form: a `gpu_profiler:` root with sections; a leaf
     * is its own key, SECTION_KEY, or either with "_threshold" */
    gp_mon_config_defaults(&c);
    p = write_tmp("---\n"
                  "gpu_profiler:\n"
                  "  output_dir: /tmp/seed\n"
                  "  monitoring:\n"
                  "    interval_seconds: 0.5\n"
                  "    enable_alerts: false\n"
                  "  thresholds:\n"
                  "    temperature_warning: 70\n"
                  "    temperature_critical: 88\n"
                  "  memory_warning_threshold: 60\n"
                  "  max_snapshots: 7   # comment\n"
                  "...\n");
    ASSERT_EQ_INT(gp_mon_config_load(&c, p, err, sizeof err), 0);
    unlink(p);
    ASSERT_EQ_STR(c.output_dir, "/tmp/seed");
    ASSERT_NEAR(c.monitoring_interval_seconds, 0.5, 0);
    ASSERT_EQ_INT(c.enable_alerts, 0);
    ASSERT_NEAR(c.temperature_warning_threshold, 70, 0);
    ASSERT_NEAR(c.temperature_critical_threshold, 88, 0);
    ASSERT_NEAR(c.memory_warning_threshold, 60, 0);
    ASSERT_EQ_INT(c.max_snapshots, 7);
    /* cross-field check over all layers (file, environment, --set) */
    gp_mon_config_defaults(&c);
    ASSERT_EQ_INT(gp_mon_config_check(&c, err, sizeof err), 0);
    c.memory_warning_threshold = 99;
    ASSERT_EQ_INT(gp_mon_config_check(&c, err, sizeof err), GP_EINVAL);
    ASSERT_CONTAINS(err, "memory_warning_threshold (99) is above memory_critical_threshold (95)");
    /* --set and the environment refuse hexadecimal numbers too */
    ASSERT_EQ_INT(gp_mon_config_set(&c, "history_size", "0x10", err, sizeof err), GP_EINVAL);
    ASSERT_EQ_INT(gp_mon_config_set(&c, "history_size", "16", err, sizeof err), 0);
    ASSERT_EQ_INT(c.history_size, 16);
    ASSERT_EQ_INT(gp_mon_config_load(&c, "/nonexistent/gpuprof.yaml", err, sizeof err), GP_EIO);
    /* environment overrides */
    gp_mon_config_defaults(&c);
    setenv("GPUPROF_TEMPERATURE_WARNING_THRESHOLD", "70", 1);
    setenv("GPUPROF_NVML_LIB", "/opt/libnvidia-ml.so.1", 1);
    ASSERT_EQ_INT(gp_mon_config_env(&c, err, sizeof err), 0);
    ASSERT_NEAR(c.temperature_warning_threshold, 70, 0);
    ASSERT_EQ_STR(c.nvml_library, "/opt/libnvidia-ml.so.1");
    setenv("GPUPROF_MAX_SNAPSHOTS", "lots", 1);
    ASSERT_EQ_INT(gp_mon_config_env(&c, err, sizeof err), GP_EINVAL);
    ASSERT_CONTAINS(err, "$GPUPROF_MAX_SNAPSHOTS: max_snapshots: expected a number");
    unsetenv("GPUPROF_MAX_SNAPSHOTS");
    unsetenv("GPUPROF_TEMPERATURE_WARNING_THRESHOLD");
    unsetenv("GPUPROF_NVML_LIB");
    ASSERT_EQ_INT(gp_mon_config_set(&c, "nope", "1", err, sizeof err), GP_ENOTFOUND);
}

TEST(session_report_in_sqlite)
{
#ifndef GP_HAVE_SQLITE
    SKIP("built without SQLite");
#else
    char dir[] = "/tmp/gpuprof-db-XXXXXX";
    ASSERT(mkdtemp(dir));
    gp_mon_config c;
    gp_mon_config_defaults(&c);
    c.enable_gpu_monitoring = c.enable_opencl_monitoring = 0; /* host only */
    snprintf(c.output_dir, sizeof c.output_dir, "%s/out", dir);
    snprintf(c.store_path, sizeof c.store_path, "%s/runs.db", dir);
    gp_monitor *m = gp_monitor_create(&c);
    ASSERT_EQ_INT(gp_monitor_session_start(m, "s1", "stored"), 0);
    gp_monitor_sample_now(m);
    ASSERT_EQ_INT(gp_monitor_track_inference(m, "s1", 12.5), 0);
    ASSERT_EQ_INT(gp_monitor_session_stop(m, "s1"), 0);
    char *rep = gp_monitor_session_report(m, "s1");
    ASSERT(rep);
    gp_monitor_destroy(m);
    sqlite3 *db;
    ASSERT_EQ_INT(sqlite3_open(c.store_path, &db), SQLITE_OK);
    sqlite3_stmt *st;
    ASSERT_EQ_INT(sqlite3_prepare_v2(db,
                                     "SELECT name, description, stop_wall_ns > start_wall_ns, "
                                     "report FROM monitor_sessions",
                                     -1, &st, NULL),
                  SQLITE_OK);
    ASSERT_EQ_INT(sqlite3_step(st), SQLITE_ROW);
    ASSERT_EQ_STR((const char *)sqlite3_column_text(st, 0), "s1");
    ASSERT_EQ_STR((const char *)sqlite3_column_text(st, 1), "stored");
    ASSERT_EQ_INT(sqlite3_column_int(st, 2), 1);
    ASSERT_EQ_STR((const char *)sqlite3_column_text(st, 3), rep);
    ASSERT_CONTAINS(rep, "\"inference_count\":1");
    ASSERT_EQ_INT(sqlite3_step(st), SQLITE_DONE);
    sqlite3_finalize(st);
    sqlite3_close(db);
    free(rep);
    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ASSERT_EQ_INT(system(cmd), 0);
#endif
}

TEST_MAIN(temperature_hysteresis, memory_and_utilization_alerts, host_utilization_and_xid_alerts,
          event_log_jsonl, sessions_retention_and_report, config_yaml, session_report_in_sqlite)
