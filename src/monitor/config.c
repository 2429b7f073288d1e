/* monitor/config.c: the monitor's configuration: defaults, the YAML file
 * (parsed by libyaml: flat keys or sections, the seed's `gpu_profiler:`
 * root, errors with line and column, duplicate keys refused, cross-field
 * checks), environment overrides (GPUPROF_<KEY>) and KEY=VALUE settings. */
#include "core/error.h"
#include <ctype.h>
#include <errno.h>
#include <gpuprof/monitor.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

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

/* A decimal number: [+-]digits[.digits][(e|E)[+-]digits]. Hex (0x10),
 * inf, nan and white space are refused rather than read silently. */
static int is_decimal(const char *v)
{
    const char *p = v;
    if (*p == '+' || *p == '-') p++;
    int digits = 0;
    while (isdigit((unsigned char)*p)) p++, digits++;
    if (*p == '.') {
        p++;
        while (isdigit((unsigned char)*p)) p++, digits++;
    }
    if (!digits) return 0;
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-') p++;
        if (!isdigit((unsigned char)*p)) return 0;
        while (isdigit((unsigned char)*p)) p++;
    }
    if (p - v > 1 && v[0] == '0' && isdigit((unsigned char)v[1])) return 0; /* octal-looking 010 */
    return *p == 0;
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
        if (!is_decimal(v) || end == v || *end || errno || !isfinite(d))
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

/* Keys of the seed that gpuprof does not have: accepted and ignored they
 * would promise an effect that never happens (issue 15 item 15). */
static const char *removed_key(const char *key)
{
    if (!strcmp(key, "mode"))
        return "'mode' is not supported (it changed nothing); set what it stood for with "
               "monitoring_interval_seconds, enable_alerts and enable_event_log";
    if (!strcmp(key, "level"))
        return "'level' is not supported (it changed nothing); choose what is sampled and kept "
               "with enable_process_monitoring, history_size, max_snapshots and "
               "enable_snapshot_on_alert";
    return NULL;
}

/* An error is one line: control characters of the file's keys and values
 * (a multi-line plain scalar, a tab) are written as escapes (\n, \t,
 * \xNN) in place, within n bytes. */
static void one_line(char *s, size_t n)
{
    if (!s || !n) return;
    char out[1024];
    size_t o = 0, cap = n < sizeof out ? n : sizeof out;
    for (const unsigned char *p = (const unsigned char *)s; *p && o + 5 < cap; p++) {
        if (*p >= 0x20 && *p != 0x7f)
            out[o++] = (char)*p;
        else if (*p == '\n' || *p == '\t' || *p == '\r') {
            out[o++] = '\\';
            out[o++] = *p == '\n' ? 'n' : *p == '\t' ? 't' : 'r';
        } else
            o += (size_t)snprintf(out + o, cap - o, "\\x%02x", *p);
    }
    out[o] = 0;
    memcpy(s, out, o + 1);
}

static int config_set(gp_mon_config *c, const char *key, const char *value, char *errbuf, size_t n)
{
    const char *why = removed_key(key);
    if (why) {
        snprintf(errbuf, n, "%s", why);
        return GP_ENOTFOUND;
    }
    for (size_t i = 0; i < NKEYS; i++)
        if (!strcmp(keys[i].key, key)) return set_key(c, &keys[i], value, errbuf, n);
    snprintf(errbuf, n, "unknown key '%s'", key);
    return GP_ENOTFOUND;
}

int gp_mon_config_set(gp_mon_config *c, const char *key, const char *value, char *errbuf, size_t n)
{
    int rc = config_set(c, key, value, errbuf, n);
    if (rc) one_line(errbuf, n);
    return rc;
}

/* ---- the YAML file (libyaml) ---- */

typedef struct yctx {
    const char *path;
    char *err;
    size_t n;
    gp_mon_config *c;
    yaml_document_t *doc;
    yaml_mark_t mark[NKEYS]; /* where each key was set (for cross-field errors) */
    unsigned char seen[NKEYS];
    int pairs; /* key/value pairs visited: bounds alias-expanded documents */
} yctx;

static int yerr(yctx *y, yaml_mark_t m, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int yerr(yctx *y, yaml_mark_t m, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(y->err, y->n, "%s:%zu:%zu: %s", y->path, m.line + 1, m.column + 1, msg);
    one_line(y->err, y->n);
    return GP_EPARSE;
}

static const char *scalar(yaml_node_t *nd)
{
    return nd && nd->type == YAML_SCALAR_NODE ? (const char *)nd->data.scalar.value : NULL;
}

static int find_key(const char *k)
{
    for (size_t i = 0; i < NKEYS; i++)
        if (!strcmp(keys[i].key, k)) return (int)i;
    return -1;
}

/* The key a leaf at path (prefix sections ..., section, name) sets: the
 * name itself, else section_name, else the whole path joined with '_', each
 * also with "_threshold" appended (docs/monitoring.md). -1: none. */
static int resolve_key(const char *prefix, const char *section, const char *name)
{
    char cand[3][256];
    snprintf(cand[0], sizeof cand[0], "%s", name);
    snprintf(cand[1], sizeof cand[1], "%s%s%s", section ? section : "", section ? "_" : "", name);
    snprintf(cand[2], sizeof cand[2], "%s%s%s", prefix, *prefix ? "_" : "", name);
    for (int i = 0; i < 3; i++) {
        int k = find_key(cand[i]);
        if (k >= 0) return k;
        char t[800];
        snprintf(t, sizeof t, "%s_threshold", cand[i]);
        if ((k = find_key(t)) >= 0) return k;
    }
    return -1;
}

static int load_map(yctx *y, yaml_node_t *map, const char *prefix, const char *section, int depth)
{
    if (map->type != YAML_MAPPING_NODE)
        return yerr(y, map->start_mark, "expected a mapping of 'key: value' lines");
    if (depth > 8) return yerr(y, map->start_mark, "sections nested too deeply");
    yaml_node_pair_t *p0 = map->data.mapping.pairs.start, *pe = map->data.mapping.pairs.top;
    for (yaml_node_pair_t *p = p0; p < pe; p++) {
        yaml_node_t *kn = yaml_document_get_node(y->doc, p->key);
        yaml_node_t *vn = yaml_document_get_node(y->doc, p->value);
        const char *k = scalar(kn);
        if (!k || !*k) return yerr(y, kn ? kn->start_mark : map->start_mark, "expected a key name");
        if (++y->pairs > 100000) return yerr(y, kn->start_mark, "too many keys (aliases?)");
        for (yaml_node_pair_t *q = p0; q < p; q++) { /* YAML forbids duplicate keys */
            const char *k2 = scalar(yaml_document_get_node(y->doc, q->key));
            if (k2 && !strcmp(k, k2))
                return yerr(y, kn->start_mark, "duplicate key '%s' (first at line %zu)", k,
                            yaml_document_get_node(y->doc, q->key)->start_mark.line + 1);
        }
        if (!vn) return yerr(y, kn->start_mark, "%s: missing value", k);
        if (vn->type == YAML_MAPPING_NODE) {
            /* a section: the seed's `gpu_profiler:` root, or a group of keys */
            char sub[256];
            if (depth == 0 && !*prefix && !strcmp(k, "gpu_profiler"))
                sub[0] = 0;
            else
                snprintf(sub, sizeof sub, "%s%s%s", prefix, *prefix ? "_" : "", k);
            int rc = load_map(y, vn, sub, *sub ? k : NULL, depth + 1);
            if (rc) return rc;
            continue;
        }
        if (vn->type != YAML_SCALAR_NODE)
            return yerr(y, vn->start_mark, "%s: a list is not a valid value", k);
        int ki = resolve_key(prefix, section, k);
        if (ki < 0 && removed_key(k)) return yerr(y, kn->start_mark, "%s", removed_key(k));
        if (ki < 0) {
            if (*prefix)
                return yerr(y, kn->start_mark, "unknown key '%s' in section '%s'", k, prefix);
            return yerr(y, kn->start_mark, "unknown key '%s'", k);
        }
        const char *v = scalar(vn);
        int plain = vn->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
        if (!*v || (plain && (!strcmp(v, "~") || !strcasecmp(v, "null"))))
            return yerr(y, vn->start_mark, "%s: missing value", keys[ki].key);
        if (y->seen[ki])
            return yerr(y, kn->start_mark, "%s set twice (first at line %zu)", keys[ki].key,
                        y->mark[ki].line + 1);
        char msg[400];
        if (set_key(y->c, &keys[ki], v, msg, sizeof msg)) return yerr(y, vn->start_mark, "%s", msg);
        y->seen[ki] = 1;
        y->mark[ki] = vn->start_mark;
    }
    return 0;
}

/* Cross-field rules: a warning threshold may not exceed its critical one. */
static int check_pairs(const gp_mon_config *c, int *bad_key, char *msg, size_t n)
{
    static const struct {
        const char *w, *cr;
    } pairs[] = {{"temperature_warning_threshold", "temperature_critical_threshold"},
                 {"memory_warning_threshold", "memory_critical_threshold"}};
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        int wi = find_key(pairs[i].w), ci = find_key(pairs[i].cr);
        double w = *(const double *)(const void *)((const char *)c + keys[wi].off);
        double cr = *(const double *)(const void *)((const char *)c + keys[ci].off);
        if (w > cr) {
            if (bad_key) *bad_key = wi;
            snprintf(msg, n, "%s (%g) is above %s (%g)", pairs[i].w, w, pairs[i].cr, cr);
            return GP_EINVAL;
        }
    }
    return 0;
}

int gp_mon_config_check(const gp_mon_config *c, char *errbuf, size_t n)
{
    return check_pairs(c, NULL, errbuf, n);
}

int gp_mon_config_load(gp_mon_config *c, const char *path, char *errbuf, size_t n)
{
    FILE *f = fopen(path, "re");
    if (!f) {
        snprintf(errbuf, n, "%s: cannot open: %s", path, strerror(errno));
        return GP_EIO;
    }
    yaml_parser_t parser;
    yaml_document_t doc, next;
    int rc = 0, have_doc = 0, have_next = 0;
    if (!yaml_parser_initialize(&parser)) {
        fclose(f);
        snprintf(errbuf, n, "%s: out of memory", path);
        return GP_ENOMEM;
    }
    yaml_parser_set_input_file(&parser, f);
    yctx *y = calloc(1, sizeof *y);
    if (!y) {
        rc = GP_ENOMEM;
        snprintf(errbuf, n, "%s: out of memory", path);
        goto done;
    }
    y->path = path;
    y->err = errbuf;
    y->n = n;
    y->doc = &doc;
    if (!yaml_parser_load(&parser, &doc)) {
    syntax:
        snprintf(errbuf, n, "%s:%zu:%zu: %s%s%s", path, parser.problem_mark.line + 1,
                 parser.problem_mark.column + 1, parser.problem ? parser.problem : "syntax error",
                 parser.context ? " " : "", parser.context ? parser.context : "");
        rc = GP_EPARSE;
        goto done;
    }
    have_doc = 1;
    yaml_node_t *root = yaml_document_get_root_node(&doc);
    if (root) {
        /* one document: a second one (after another `---`) is refused */
        if (!yaml_parser_load(&parser, &next)) goto syntax;
        have_next = 1;
        yaml_node_t *r2 = yaml_document_get_root_node(&next);
        if (r2) {
            rc =
                yerr(y, r2->start_mark, "only one YAML document is read; a second one starts here");
            goto done;
        }
        y->c = c;
        gp_mon_config tmp = *c; /* c is changed only when the whole file is good */
        y->c = &tmp;
        if (!(rc = load_map(y, root, "", NULL, 0))) {
            char msg[300];
            int bad = -1;
            if (check_pairs(&tmp, &bad, msg, sizeof msg)) {
                yaml_mark_t m = bad >= 0 && y->seen[bad] ? y->mark[bad] : root->start_mark;
                rc = yerr(y, m, "%s", msg);
            } else {
                *c = tmp;
            }
        }
    }
done:
    if (have_next) yaml_document_delete(&next);
    if (have_doc) yaml_document_delete(&doc);
    yaml_parser_delete(&parser);
    free(y);
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
    static const char *const gone[] = {"GPUPROF_MODE", "GPUPROF_LEVEL"};
    for (int g = 0; g < 2; g++) /* the removed keys' variables are refused too */
        if (getenv(gone[g])) {
            snprintf(errbuf, n, "$%s: %s", gone[g], removed_key(g ? "level" : "mode"));
            return GP_EINVAL;
        }
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
