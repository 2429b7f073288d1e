/* cli/mon_common.c: configuration layering and JSON writers shared by the
 * device-monitor commands. */
#include "cli/mon_common.h"
#include "monitor/fields.h"
#include <stdlib.h>
#include <string.h>

int gp_cli_mon_add_set(gp_mon_opts *o, const char *kv)
{
    if (o->nsets == (int)(sizeof o->sets / sizeof o->sets[0])) {
        fprintf(stderr, "gpuprof: too many --set options\n");
        return 2;
    }
    o->sets[o->nsets++] = kv;
    return 0;
}

int gp_cli_mon_config(const gp_mon_opts *o, gp_mon_config *c)
{
    char err[600];
    gp_mon_config_defaults(c);
    const char *path = o->config ? o->config : getenv("GPUPROF_CONFIG");
    if (path && *path && gp_mon_config_load(c, path, err, sizeof err)) {
        fprintf(stderr, "gpuprof: %s\n", err);
        return 2;
    }
    if (gp_mon_config_env(c, err, sizeof err)) {
        fprintf(stderr, "gpuprof: %s\n", err);
        return 2;
    }
    for (int i = 0; i < o->nsets; i++) {
        char key[128];
        const char *eq = strchr(o->sets[i], '=');
        if (!eq || (size_t)(eq - o->sets[i]) >= sizeof key) {
            fprintf(stderr, "gpuprof: --set expects KEY=VALUE, got '%s'\n", o->sets[i]);
            return 2;
        }
        memcpy(key, o->sets[i], (size_t)(eq - o->sets[i]));
        key[eq - o->sets[i]] = 0;
        if (gp_mon_config_set(c, key, eq + 1, err, sizeof err)) {
            fprintf(stderr, "gpuprof: --set %s\n", err);
            return 2;
        }
    }
    if (gp_mon_config_check(c, err, sizeof err)) { /* over every layer together */
        fprintf(stderr, "gpuprof: configuration: %s\n", err);
        return 2;
    }
    return 0;
}

static void kv_str(gp_sbuf *b, const char *k, const char *v, int comma)
{
    gp_json_key(b, k, comma);
    if (v && v[0])
        gp_json_str(b, v);
    else
        gp_sbuf_puts(b, "null");
}

void gp_cli_mon_device_json(gp_monitor *m, size_t i, gp_sbuf *b)
{
    gp_dev_info d;
    if (gp_monitor_device_info(m, i, &d)) return;
    gp_sbuf_puts(b, "{\"index\":");
    gp_json_int(b, (int64_t)i);
    kv_str(b, "backend", d.backend, 1);
    kv_str(b, "kind", d.kind, 1);
    kv_str(b, "name", d.name, 1);
    kv_str(b, "vendor", d.vendor, 1);
    kv_str(b, "uuid", d.uuid, 1);
    kv_str(b, "pci_bus_id", d.pci_bus_id, 1);
    kv_str(b, "driver_version", d.driver_version, 1);
    kv_str(b, "cuda_version", d.cuda_version, 1);
    kv_str(b, "platform", d.platform, 1);
    gp_json_key(b, "compute_units", 1);
    if (d.compute_units)
        gp_json_int(b, d.compute_units);
    else
        gp_sbuf_puts(b, "null");
    gp_json_key(b, "max_clock_mhz", 1);
    if (d.max_clock_mhz)
        gp_json_int(b, d.max_clock_mhz);
    else
        gp_sbuf_puts(b, "null");
    gp_json_key(b, "present", 1);
    gp_sbuf_puts(b, d.present ? "true" : "false");
    kv_str(b, "status", d.status, 1);
    gp_dev_sample s;
    gp_json_key(b, "sample", 1);
    if (gp_monitor_get_status(m, i, &s) == 0) {
        gp_sbuf_puts(b, "{\"wall_ns\":");
        gp_json_int(b, s.wall_ns);
        gp_fields_json(b, &s, 1);
        gp_sbuf_putc(b, '}');
    } else
        gp_sbuf_puts(b, "null");
    gp_dev_proc p[64];
    size_t np = gp_monitor_processes(m, i, p, 64);
    gp_json_key(b, "processes", 1);
    gp_sbuf_putc(b, '[');
    for (size_t k = 0; k < np; k++) {
        gp_sbuf_puts(b, k ? ",{\"pid\":" : "{\"pid\":");
        gp_json_int(b, p[k].pid);
        kv_str(b, "name", p[k].name, 1);
        gp_json_key(b, "mem_bytes", 1);
        if (p[k].valid & GP_PROC_MEM)
            gp_json_int(b, p[k].mem_bytes);
        else
            gp_sbuf_puts(b, "null");
        gp_json_key(b, "util_pct", 1);
        if (p[k].valid & GP_PROC_UTIL)
            gp_json_num(b, p[k].util_pct);
        else
            gp_sbuf_puts(b, "null");
        gp_sbuf_putc(b, '}');
    }
    gp_sbuf_puts(b, "]}");
}

void gp_cli_mon_health_json(gp_monitor *m, gp_sbuf *b, int *overall)
{
    gp_health_entry h[16];
    size_t n = 0;
    int st = gp_monitor_health(m, h, 16, &n);
    if (overall) *overall = st;
    gp_sbuf_putc(b, '[');
    for (size_t i = 0; i < n && i < 16; i++) {
        gp_sbuf_puts(b, i ? ",{\"backend\":" : "{\"backend\":");
        gp_json_str(b, h[i].backend);
        gp_json_key(b, "state", 1);
        gp_json_str(b, gp_health_name(h[i].state));
        gp_json_key(b, "devices", 1);
        gp_json_int(b, h[i].devices);
        gp_json_key(b, "reason", 1);
        gp_json_str(b, h[i].reason);
        gp_sbuf_putc(b, '}');
    }
    gp_sbuf_putc(b, ']');
}
