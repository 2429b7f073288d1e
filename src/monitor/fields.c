/* monitor/fields.c: names, units and formatting of the measured fields. */
#include "monitor/fields.h"
#include "core/table.h"
#include <stdio.h>
#include <string.h>

typedef struct field_def {
    const char *key, *unit, *desc;
} field_def;

static const field_def defs[GP_MF_COUNT] = {
    [GP_MF_UTIL] = {"util_pct", "%", "busy share (GPU: SM/graphics engine; host: all CPUs)"},
    [GP_MF_MEM_UTIL] = {"mem_util_pct", "%", "memory-controller busy share"},
    [GP_MF_MEM_TOTAL] = {"mem_total_bytes", "bytes", "device memory (host: RAM) total"},
    [GP_MF_MEM_USED] = {"mem_used_bytes", "bytes", "memory in use"},
    [GP_MF_MEM_FREE] = {"mem_free_bytes", "bytes", "memory free"},
    [GP_MF_TEMP] = {"temp_c", "C", "GPU temperature"},
    [GP_MF_TEMP_SLOWDOWN] = {"temp_slowdown_c", "C", "temperature at which clocks slow down"},
    [GP_MF_TEMP_SHUTDOWN] = {"temp_shutdown_c", "C", "temperature at which the GPU shuts down"},
    [GP_MF_POWER] = {"power_w", "W", "power draw"},
    [GP_MF_POWER_LIMIT] = {"power_limit_w", "W", "enforced power limit"},
    [GP_MF_ENERGY] = {"energy_j", "J", "energy since the driver was loaded"},
    [GP_MF_CLOCK_SM] = {"clock_sm_mhz", "MHz", "SM (graphics) clock"},
    [GP_MF_CLOCK_MEM] = {"clock_mem_mhz", "MHz", "memory clock"},
    [GP_MF_FAN] = {"fan_pct", "%", "fan speed"},
    [GP_MF_PSTATE] = {"pstate", "", "performance state (0 = maximum)"},
    [GP_MF_THROTTLE] = {"throttle_mask", "bitmask", "clock-event (throttle) reasons"},
    [GP_MF_PCIE_TX] = {"pcie_tx_bytes_per_s", "bytes/s", "PCIe transmit throughput"},
    [GP_MF_PCIE_RX] = {"pcie_rx_bytes_per_s", "bytes/s", "PCIe receive throughput"},
    [GP_MF_ECC_CORR] = {"ecc_corrected", "count", "corrected ECC errors (volatile)"},
    [GP_MF_ECC_UNCORR] = {"ecc_uncorrected", "count", "uncorrected ECC errors (volatile)"},
    [GP_MF_XID] = {"last_xid", "code", "last XID critical error event"},
    [GP_MF_MIG] = {"mig_enabled", "bool", "MIG mode (current)"},
    [GP_MF_LOAD1] = {"load1", "", "host load average, 1 minute"},
    [GP_MF_LOAD5] = {"load5", "", "host load average, 5 minutes"},
    [GP_MF_LOAD15] = {"load15", "", "host load average, 15 minutes"},
    [GP_MF_XID_EVENTS] = {"xid_events", "count",
                          "XID critical error events since monitoring started"},
};

const char *gp_mfield_key(int f)
{
    return f >= 0 && f < GP_MF_COUNT ? defs[f].key : NULL;
}

const char *gp_mfield_unit(int f)
{
    return f >= 0 && f < GP_MF_COUNT ? defs[f].unit : NULL;
}

const char *gp_fields_desc(int f)
{
    return f >= 0 && f < GP_MF_COUNT ? defs[f].desc : NULL;
}

const char *gp_throttle_decode(uint64_t mask, char *buf, size_t n)
{
    static const struct {
        uint64_t bit;
        const char *name;
    } r[] = {{GP_THR_GPU_IDLE, "gpu_idle"},
             {GP_THR_APP_CLOCKS, "app_clocks"},
             {GP_THR_SW_POWER_CAP, "sw_power_cap"},
             {GP_THR_HW_SLOWDOWN, "hw_slowdown"},
             {GP_THR_SYNC_BOOST, "sync_boost"},
             {GP_THR_SW_THERMAL, "sw_thermal"},
             {GP_THR_HW_THERMAL, "hw_thermal"},
             {GP_THR_HW_POWER_BRAKE, "hw_power_brake"},
             {GP_THR_DISPLAY_CLOCKS, "display_clocks"}};
    size_t len = 0;
    if (n) buf[0] = 0;
    for (size_t i = 0; i < sizeof r / sizeof r[0]; i++)
        if (mask & r[i].bit) {
            int k = snprintf(buf + len, n > len ? n - len : 0, "%s%s", len ? "," : "", r[i].name);
            if (k > 0 && len + (size_t)k < n) len += (size_t)k;
        }
    if (!len && n) snprintf(buf, n, "%s", mask ? "other" : "none");
    return buf;
}

void gp_fields_json(gp_sbuf *b, const gp_dev_sample *s, int with_null)
{
    for (int f = 0; f < GP_MF_COUNT; f++) {
        if (!gp_sample_has(s, f)) {
            if (with_null) {
                gp_json_key(b, defs[f].key, 1);
                gp_sbuf_puts(b, "null");
            }
            continue;
        }
        gp_json_key(b, defs[f].key, 1);
        if (f == GP_MF_THROTTLE) {
            gp_json_int(b, (int64_t)s->v[f]);
            char tmp[160];
            gp_json_key(b, "throttle_reasons", 1);
            gp_json_str(b, gp_throttle_decode((uint64_t)s->v[f], tmp, sizeof tmp));
        } else
            gp_json_num(b, s->v[f]);
    }
}

const char *gp_fields_fmt(const gp_dev_sample *s, int f, char *buf, size_t n)
{
    if (!gp_sample_has(s, f)) {
        snprintf(buf, n, "N/A");
        return buf;
    }
    double v = s->v[f];
    switch (f) {
    case GP_MF_MEM_TOTAL:
    case GP_MF_MEM_USED:
    case GP_MF_MEM_FREE:
        return gp_fmt_bytes(buf, n, v);
    case GP_MF_PCIE_TX:
    case GP_MF_PCIE_RX: {
        char t[32];
        snprintf(buf, n, "%s/s", gp_fmt_bytes(t, sizeof t, v));
        return buf;
    }
    case GP_MF_THROTTLE:
        return gp_throttle_decode((uint64_t)v, buf, n);
    case GP_MF_PSTATE:
        snprintf(buf, n, "P%d", (int)v);
        return buf;
    case GP_MF_MIG:
        snprintf(buf, n, "%s", v ? "enabled" : "disabled");
        return buf;
    case GP_MF_UTIL:
    case GP_MF_MEM_UTIL:
    case GP_MF_FAN:
        snprintf(buf, n, "%.0f %%", v);
        return buf;
    case GP_MF_TEMP:
    case GP_MF_TEMP_SLOWDOWN:
    case GP_MF_TEMP_SHUTDOWN:
        snprintf(buf, n, "%.0f C", v);
        return buf;
    case GP_MF_POWER:
    case GP_MF_POWER_LIMIT:
        snprintf(buf, n, "%.1f W", v);
        return buf;
    case GP_MF_ENERGY:
        snprintf(buf, n, "%.1f J", v);
        return buf;
    case GP_MF_CLOCK_SM:
    case GP_MF_CLOCK_MEM:
        snprintf(buf, n, "%.0f MHz", v);
        return buf;
    case GP_MF_LOAD1:
    case GP_MF_LOAD5:
    case GP_MF_LOAD15:
        snprintf(buf, n, "%.2f", v);
        return buf;
    default:
        snprintf(buf, n, "%.0f", v);
        return buf;
    }
}
