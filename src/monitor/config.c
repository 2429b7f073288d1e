/* monitor/config.c: the monitor's configuration: defaults, a reader for the
 * YAML subset we need (flat `key: value` lines, # comments, optional quotes),
 * environment overrides (GPUPROF_<KEY>) and single KEY=VALUE settings. */
#include "core/error.h"
#include <ctype.h>
#include <errno.h>
#include <gpuprof/monitor.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { T_STR, T_ENUM, T_DBL, T_INT, T_BOOL };
typedef struct key_def {
    const char *key;
    int type;
    size_t off, size;
    double min, max;     /* T_DBL / T_INT */
    const char *choices; /* T_ENUM: '|'-separated */
} key_def;

#define K_STR(k)                                                                                   \
    {                                                                                              \
#k, T_STR, offsetof(gp_mon_config, k), sizeof(((gp_mon_config *)0)->k), 0, 0, NULL         \
    }
#define K_ENUM(k, ch)                                                                              \
    {                                                                                              \
#k, T_ENUM, offsetof(gp_mon_config, k), sizeof(((gp_mon_config *)0)->k), 0, 0, ch          \
    }
#define K_DBL(k, lo, hi)                                                                           \
    {                                                                                              \
#k, T_DBL, offsetof(gp_mon_config, k), sizeof(double), lo, hi, NULL                        \
    }
#define K_INT(k, lo, hi)                                                                           \
    {                                                                                              \
#k, T_INT, offsetof(gp_mon_config, k), sizeof(int), lo, hi, NULL                           \
    }
#define K_BOOL(k)                                                                                  \
    {                                                                                              \
#k, T_BOOL, offsetof(gp_mon_config, k), sizeof(int), 0, 1, NULL                            \
    }

static const key_def keys[] = {
    K_ENUM(mode, "development|production|benchmark"),
    K_ENUM(level, "basic|detailed|comprehensive"),
    K_DBL(monitoring_interval_seconds, 0.01, 3600),
    K_DBL(metrics_update_interval_seconds, 0.01, 3600),
    K_DBL(device_discovery_interval_seconds, 0, 86400),
    K_BOOL(enable_gpu_monitoring),
    K_BOOL(enable_opencl_monitoring),
    K_BOOL(enable_host_monitoring),
    K_BOOL(enable_process_monitoring),
    K_BOOL(enable_alerts),
    K_BOOL(enable_event_log),
    K_BOOL(enable_snapshot_on_alert),
    K_DBL(temperature_warning_threshold, -50, 200),
    K_DBL(temperature_critical_threshold, -50, 200),
    K_DBL(memory_warning_threshold, 0, 100),
    K_DBL(memory_critical_threshold, 0, 100),
    K_DBL(utilization_high_threshold, 0, 100),
    K_DBL(temperature_hysteresis, 0, 50),
    K_DBL(memory_hysteresis, 0, 50),
    K_DBL(utilization_hysteresis, 0, 50),
    K_DBL(slow_inference_ms, 0, 1e9),
    K_INT(max_snapshots, 1, 1000000),
    K_INT(max_profiling_sessions, 1, 100000),
    K_INT(history_size, 2, 1000000),
    K_STR(output_dir),
    K_BOOL(export_json_reports),
    K_STR(store_path),
    K_STR(nvml_library),
    K_STR(nvidia_smi),
    K_STR(sysfs_root),
    K_STR(audit_file),
    K_BOOL(redact),
    K_STR(redact_keep),
    K_BOOL(share_group),
};
#define NKEYS (sizeof keys / sizeof keys[0])

void gp_mon_config_defaults(gp_mon_config *c)
{
    memset(c, 0, sizeof *c);
    snprintf(c->mode, sizeof c->mode, "development");
    snprintf(c->level, sizeof c->level, "detailed");
    c->monitoring_interval_seconds = 1.0;
    c->metrics_update_interval_seconds = 1.0;
    c->device_discovery_interval_seconds = 60.0;
    c->enable_gpu_monitoring = c->enable_opencl_monitoring = c->enable_host_monitoring = 1;
    c->enable_process_monitoring = c->enable_alerts = c->enable_event_log = 1;
    c->enable_snapshot_on_alert = 0;
    c->temperature_warning_threshold = 80;
    c->temperature_critical_threshold = 90;
    c->memory_warning_threshold = 80;
    c->memory_critical_threshold = 95;
    c->utilization_high_threshold = 90;
    c->temperature_hysteresis = 3;
    c->memory_hysteresis = 3;
    c->utilization_hysteresis = 5;
    c->slow_inference_ms = 100;
    c->max_snapshots = 100;
    c->max_profiling_sessions = 10;
    c->history_size = 600;
    snprintf(c->output_dir, sizeof c->output_dir, "gpuprof-output");
    c->export_json_reports = 1;
}

static int parse_bool(const char *v, int *out)
{
    static const char *const t[] = {"true", "yes", "on", "1"}, *const f[] = {"false", "no", "off",
                                                                             "0"};
    for (int i = 0; i < 4; i++) {
        if (!strcasecmp(v, t[i])) return *out = 1, 1;
        if (!strcasecmp(v, f[i])) return *out = 0, 1;
    }
    return 0;
}

static int set_key(gp_mon_config *c, const key_def *k, const char *v, char *msg, size_t n)
{
    char *field = (char *)c + k->off;
    char *end;
    switch (k->type) {
    case T_STR:
        if (strlen(v) >= k->size) return snprintf(msg, n, "%s: value too long", k->key), GP_EINVAL;
        memcpy(field, v, strlen(v) + 1);
        return 0;
    case T_ENUM: {
        size_t len = strlen(v);
        for (const char *p = k->choices; *p;) {
            size_t w = strcspn(p, "|");
            if (w == len && !strncmp(p, v, w)) {
                memcpy(field, v, len + 1);
                return 0;
            }
            p += w + (p[w] == '|');
        }
        snprintf(msg, n, "%s: '%s' is not one of %s", k->key, v, k->choices);
        return GP_EINVAL;
    }
    case T_BOOL: {
        int b;
        if (!parse_bool(v, &b))
            return snprintf(msg, n, "%s: expected true or false, got '%s'", k->key, v), GP_EINVAL;
        *(int *)(void *)field = b;
        return 0;
    }
    default: {
        errno = 0;
        double d = strtod(v, &end);
        if (end == v || *end || errno || !isfinite(d))
            return snprintf(msg, n, "%s: expected a number, got '%s'", k->key, v), GP_EINVAL;
        if (d < k->min || d > k->max)
            return snprintf(msg, n, "%s: %s is out of range [%g, %g]", k->key, v, k->min, k->max),
                   GP_EINVAL;
        if (k->type == T_INT) {
            if (d != floor(d))
                return snprintf(msg, n, "%s: expected an integer, got '%s'", k->key, v), GP_EINVAL;
            *(int *)(void *)field = (int)d;
        } else
            *(double *)(void *)field = d;
        return 0;
    }
    }
}

int gp_mon_config_set(gp_mon_config *c, const char *key, const char *value, char *errbuf, size_t n)
{
    for (size_t i = 0; i < NKEYS; i++)
        if (!strcmp(keys[i].key, key)) return set_key(c, &keys[i], value, errbuf, n);
    snprintf(errbuf, n, "unknown key '%s'", key);
    return GP_ENOTFOUND;
}

static char *trim(char *s)
{
    while (isspace((unsigned char)*s)) s++;
    size_t k = strlen(s);
    while (k && isspace((unsigned char)s[k - 1])) s[--k] = 0;
    return s;
}

int gp_mon_config_load(gp_mon_config *c, const char *path, char *errbuf, size_t n)
{
    FILE *f = fopen(path, "re");
    if (!f) {
        snprintf(errbuf, n, "%s: cannot open: %s", path, strerror(errno));
        return GP_EIO;
    }
    char line[4096];
    int lineno = 0, rc = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        if (!strchr(line, '\n') && !feof(f)) {
            snprintf(errbuf, n, "%s:%d: line too long", path, lineno);
            rc = GP_EPARSE;
            break;
        }
        /* strip a comment: '#' at the start or after white space, outside quotes */
        char q = 0;
        for (char *p = line; *p; p++) {
            if (q) {
                if (*p == q) q = 0;
            } else if (*p == '"' || *p == '\'')
                q = *p;
            else if (*p == '#' && (p == line || isspace((unsigned char)p[-1]))) {
                *p = 0;
                break;
            }
        }
        char *s = trim(line);
        if (!*s || !strcmp(s, "---")) continue;
        char *colon = strchr(s, ':');
        if (!colon) {
            snprintf(errbuf, n, "%s:%d: expected 'key: value'", path, lineno);
            rc = GP_EPARSE;
            break;
        }
        *colon = 0;
        char *key = trim(s), *val = trim(colon + 1);
        size_t vl = strlen(val);
        if (vl >= 2 && (val[0] == '"' || val[0] == '\'') && val[vl - 1] == val[0]) {
            val[vl - 1] = 0;
            val++;
        }
        if (!*val) {
            snprintf(errbuf, n, "%s:%d: %s: missing value (nested sections are not supported)",
                     path, lineno, key);
            rc = GP_EPARSE;
            break;
        }
        char msg[400];
        if (gp_mon_config_set(c, key, val, msg, sizeof msg)) {
            snprintf(errbuf, n, "%s:%d: %s", path, lineno, msg);
            rc = GP_EPARSE;
            break;
        }
    }
    fclose(f);
    return rc;
}

int gp_mon_config_env(gp_mon_config *c, char *errbuf, size_t n)
{
    static const struct {
        const char *env, *key;
    } alias[] = {{"GPUPROF_NVML_LIB", "nvml_library"},
                 {"GPUPROF_NVIDIA_SMI", "nvidia_smi"},
                 {"GPUPROF_SYSFS_ROOT", "sysfs_root"}};
    for (size_t i = 0; i < NKEYS + sizeof alias / sizeof alias[0]; i++) {
        char name[96];
        const char *key;
        if (i < NKEYS) {
            key = keys[i].key;
            snprintf(name, sizeof name, "GPUPROF_%s", key);
            for (char *p = name; *p; p++) *p = (char)toupper((unsigned char)*p);
        } else {
            key = alias[i - NKEYS].key;
            snprintf(name, sizeof name, "%s", alias[i - NKEYS].env);
        }
        const char *v = getenv(name);
        if (!v) continue;
        char msg[400];
        if (gp_mon_config_set(c, key, v, msg, sizeof msg)) {
            snprintf(errbuf, n, "$%s: %s", name, msg);
            return GP_EINVAL;
        }
    }
    return 0;
}

int gp_mon_config_auto(gp_mon_config *c, char *errbuf, size_t n)
{
    gp_mon_config_defaults(c);
    const char *path = getenv("GPUPROF_CONFIG");
    if (path && *path) {
        int rc = gp_mon_config_load(c, path, errbuf, n);
        if (rc) return rc;
    }
    return gp_mon_config_env(c, errbuf, n);
}
