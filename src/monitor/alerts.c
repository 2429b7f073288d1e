/* monitor/alerts.c: threshold alerts. A level is raised as soon as a value
 * reaches its threshold and lowered only once the value has fallen below
 * threshold - hysteresis, so that a value hovering at a threshold does not
 * flap. Events go to registered callbacks and to a JSONL event log. */
#include "monitor/alerts.h"
#include "core/clock.h"
#include "core/sbuf.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_CB  16
#define MAX_DEV 256

typedef struct rule {
    double warn, crit, hyst; /* crit = INFINITY when the kind has one level */
} rule;

struct gp_alerts {
    rule rules[GP_ALERT__COUNT];
    int enabled;
    unsigned char level[MAX_DEV][GP_ALERT__COUNT];
    int last_xid[MAX_DEV]; /* the XID code last alerted on, 0 none */
    uint64_t count[GP_ALERT__COUNT];
    uint64_t count_lv[GP_ALERT__COUNT][3]; /* by the level raised to */
    struct {
        gp_event_cb cb;
        void *user;
    } cbs[MAX_CB];
    int ncb;
    FILE *log;
};

gp_alerts *gp_alerts_create(const gp_mon_config *c)
{
    gp_alerts *a = gp_xcalloc(1, sizeof *a);
    a->enabled = c->enable_alerts;
    a->rules[GP_ALERT_TEMPERATURE] =
        (rule){c->temperature_warning_threshold, c->temperature_critical_threshold,
               c->temperature_hysteresis};
    a->rules[GP_ALERT_MEMORY] =
        (rule){c->memory_warning_threshold, c->memory_critical_threshold, c->memory_hysteresis};
    a->rules[GP_ALERT_UTILIZATION] =
        (rule){c->utilization_high_threshold, INFINITY, c->utilization_hysteresis};
    return a;
}

void gp_alerts_destroy(gp_alerts *a)
{
    if (!a) return;
    if (a->log) fclose(a->log);
    free(a);
}

int gp_alerts_open_log(gp_alerts *a, const char *path, gp_err *err)
{
    FILE *f = fopen(path, "ae");
    if (!f) return gp_err_set(err, GP_EIO, "%s: cannot open the event log", path);
    if (a->log) fclose(a->log);
    a->log = f;
    return 0;
}

int gp_alerts_on_event(gp_alerts *a, gp_event_cb cb, void *user)
{
    if (!cb) return GP_EINVAL;
    if (a->ncb == MAX_CB) return GP_ERANGE;
    a->cbs[a->ncb].cb = cb;
    a->cbs[a->ncb].user = user;
    a->ncb++;
    return 0;
}

void gp_event_json(gp_sbuf *b, const gp_event *ev)
{
    char ts[64];
    time_t sec = (time_t)(ev->wall_ns / 1000000000);
    struct tm tm;
    gmtime_r(&sec, &tm);
    strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%S", &tm);
    gp_sbuf_printf(b, "{\"time\":\"%s.%03dZ\",\"wall_ns\":%lld,\"type\":", ts,
                   (int)(ev->wall_ns / 1000000 % 1000), (long long)ev->wall_ns);
    gp_json_str(b, gp_event_type_name(ev->type));
    if (ev->type == GP_EV_ALERT || ev->type == GP_EV_ALERT_CLEARED) {
        gp_json_key(b, "kind", 1);
        gp_json_str(b, gp_alert_kind_name(ev->kind));
        gp_json_key(b, "level", 1);
        gp_json_str(b, gp_alert_level_name(ev->level));
        gp_json_key(b, "value", 1);
        gp_json_num(b, ev->value);
        gp_json_key(b, "threshold", 1);
        gp_json_num(b, ev->threshold);
    }
    if (ev->device >= 0) {
        gp_json_key(b, "device", 1);
        gp_json_int(b, ev->device);
    }
    gp_json_key(b, "message", 1);
    gp_json_str(b, ev->message);
    gp_sbuf_putc(b, '}');
}

void gp_alerts_emit(gp_alerts *a, gp_event *ev)
{
    if (!ev->wall_ns) ev->wall_ns = gp_clock_wall_ns();
    for (int i = 0; i < a->ncb; i++) a->cbs[i].cb(ev, a->cbs[i].user);
    if (!a->log) return;
    gp_sbuf b = {0};
    gp_event_json(&b, ev);
    gp_sbuf_putc(&b, '\n');
    gp_sbuf_write(&b, a->log);
    fflush(a->log);
    gp_sbuf_free(&b);
}

static const char *unit_of(int kind)
{
    return kind == GP_ALERT_TEMPERATURE ? " C" : " %";
}

/* Applies one value to the state machine of (dev, kind). */
static int step(gp_alerts *a, int dev, const char *name, int kind, double v)
{
    const rule *r = &a->rules[kind];
    int cur = a->level[dev][kind];
    int target = v >= r->crit ? 2 : v >= r->warn ? 1 : 0;
    int next = cur;
    if (target > cur)
        next = target;
    else if (target < cur) {
        /* lower one level at a time, each only below its threshold - hysteresis */
        next = cur;
        if (next == 2 && v < r->crit - r->hyst) next = 1;
        if (next == 1 && v < r->warn - r->hyst) next = 0;
    }
    if (next == cur) return 0;
    a->level[dev][kind] = (unsigned char)next;
    gp_event ev = {0};
    ev.kind = kind;
    ev.level = next;
    ev.device = dev;
    ev.value = v;
    static const char *const lv[] = {"normal", "warning", "critical"};
    if (next > cur) {
        a->count[kind]++;
        a->count_lv[kind][next]++;
        ev.type = GP_EV_ALERT;
        ev.threshold = next == 2 ? r->crit : r->warn;
        snprintf(ev.message, sizeof ev.message, "%s: %s %s: %.1f%s >= %.1f%s", name,
                 gp_alert_kind_name(kind), lv[next], v, unit_of(kind), ev.threshold, unit_of(kind));
    } else {
        ev.type = GP_EV_ALERT_CLEARED;
        ev.threshold = cur == 2 ? r->crit - r->hyst : r->warn - r->hyst;
        snprintf(ev.message, sizeof ev.message, "%s: %s back to %s: %.1f%s < %.1f%s", name,
                 gp_alert_kind_name(kind), lv[next], v, unit_of(kind), ev.threshold, unit_of(kind));
    }
    gp_alerts_emit(a, &ev);
    return next > cur;
}

/* XID 79: "GPU has fallen off the bus" (NVIDIA's XID catalogue). */
#define XID_FELL_OFF_BUS 79

static int check_xid(gp_alerts *a, int dev, const char *name, double v)
{
    int code = (int)v;
    if (code <= 0 || code == a->last_xid[dev]) return 0;
    a->last_xid[dev] = code;
    if (code == XID_FELL_OFF_BUS) {
        if (a->level[dev][GP_ALERT_DEVICE_LOST]) return 0;
        char why[96];
        snprintf(why, sizeof why, "XID %d: the GPU has fallen off the bus", code);
        gp_alerts_device_lost(a, dev, why);
        return 1;
    }
    a->level[dev][GP_ALERT_XID] = 1;
    a->count[GP_ALERT_XID]++;
    gp_event ev = {0};
    ev.type = GP_EV_ALERT;
    ev.kind = GP_ALERT_XID;
    ev.level = 1;
    ev.device = dev;
    ev.value = code;
    ev.threshold = NAN;
    snprintf(ev.message, sizeof ev.message, "%s: XID %d error reported by the driver", name, code);
    gp_alerts_emit(a, &ev);
    return 1;
}

int gp_alerts_check(gp_alerts *a, int dev, const char *dev_name, const char *dev_kind,
                    const gp_dev_sample *s)
{
    if (!a->enabled || dev < 0 || dev >= MAX_DEV) return 0;
    int raised = 0;
    int gpu = dev_kind && (!strcmp(dev_kind, "gpu") || !strcmp(dev_kind, "accelerator"));
    if (gp_sample_has(s, GP_MF_XID)) raised += check_xid(a, dev, dev_name, s->v[GP_MF_XID]);
    if (gp_sample_has(s, GP_MF_TEMP))
        raised += step(a, dev, dev_name, GP_ALERT_TEMPERATURE, s->v[GP_MF_TEMP]);
    if (gp_sample_has(s, GP_MF_MEM_USED) && gp_sample_has(s, GP_MF_MEM_TOTAL) &&
        s->v[GP_MF_MEM_TOTAL] > 0)
        raised += step(a, dev, dev_name, GP_ALERT_MEMORY,
                       100.0 * s->v[GP_MF_MEM_USED] / s->v[GP_MF_MEM_TOTAL]);
    if (gpu && gp_sample_has(s, GP_MF_UTIL))
        raised += step(a, dev, dev_name, GP_ALERT_UTILIZATION, s->v[GP_MF_UTIL]);
    return raised;
}

void gp_alerts_device_lost(gp_alerts *a, int dev, const char *why)
{
    if (dev < 0 || dev >= MAX_DEV || a->level[dev][GP_ALERT_DEVICE_LOST]) return;
    a->level[dev][GP_ALERT_DEVICE_LOST] = 2;
    a->count[GP_ALERT_DEVICE_LOST]++;
    a->count_lv[GP_ALERT_DEVICE_LOST][2]++;
    gp_event ev = {0};
    ev.type = GP_EV_ALERT;
    ev.kind = GP_ALERT_DEVICE_LOST;
    ev.level = 2;
    ev.device = dev;
    snprintf(ev.message, sizeof ev.message, "device %d lost: %s", dev, why);
    gp_alerts_emit(a, &ev);
}

void gp_alerts_device_back(gp_alerts *a, int dev)
{
    if (dev < 0 || dev >= MAX_DEV || !a->level[dev][GP_ALERT_DEVICE_LOST]) return;
    a->level[dev][GP_ALERT_DEVICE_LOST] = 0;
    gp_event ev = {0};
    ev.type = GP_EV_ALERT_CLEARED;
    ev.kind = GP_ALERT_DEVICE_LOST;
    ev.device = dev;
    snprintf(ev.message, sizeof ev.message, "device %d is back", dev);
    gp_alerts_emit(a, &ev);
}

uint64_t gp_alerts_count(const gp_alerts *a, int kind)
{
    return kind >= 0 && kind < GP_ALERT__COUNT ? a->count[kind] : 0;
}

uint64_t gp_alerts_count_level(const gp_alerts *a, int kind, int level)
{
    if (kind < 0 || kind >= GP_ALERT__COUNT || level < 1 || level > 2) return 0;
    return a->count_lv[kind][level];
}

const char *gp_alert_level_name(int level)
{
    return level == 2 ? "critical" : level == 1 ? "warning" : "none";
}

int gp_alerts_level(const gp_alerts *a, int dev, int kind)
{
    if (dev < 0 || dev >= MAX_DEV || kind < 0 || kind >= GP_ALERT__COUNT) return 0;
    return a->level[dev][kind];
}

const char *gp_alert_kind_name(int kind)
{
    static const char *const n[] = {"temperature", "memory", "utilization", "device_lost", "xid"};
    return kind >= 0 && kind < GP_ALERT__COUNT ? n[kind] : "unknown";
}

const char *gp_event_type_name(int type)
{
    static const char *const n[] = {
        "alert",          "alert_cleared",   "profiler_started", "profiler_stopped",
        "data_generated", "session_started", "session_stopped"};
    return type >= 0 && type <= GP_EV_SESSION_STOPPED ? n[type] : "unknown";
}
