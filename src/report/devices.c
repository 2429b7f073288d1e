/* report/devices.c: the result writers of `gpuprof devices` and `gpuprof
 * health` (text tables and JSON), shared by the CLI and the server. */
#include "report/devices.h"
#include "core/table.h"
#include "monitor/fields.h"
#include <string.h>

static void kv_str(gp_sbuf *b, const char *k, const char *v, int comma)
{
    gp_json_key(b, k, comma);
    if (v && v[0])
        gp_json_str(b, v);
    else
        gp_sbuf_puts(b, "null");
}

void gp_report_device_json(gp_monitor *m, size_t i, gp_sbuf *b)
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
    gp_report_device_procs_json(m, i, b);
    gp_sbuf_putc(b, '}');
}

void gp_report_device_procs_json(gp_monitor *m, size_t i, gp_sbuf *b)
{
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
    gp_sbuf_putc(b, ']');
}

void gp_report_health_entries_json(gp_monitor *m, gp_sbuf *b, int *overall)
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
size_t gp_report_gpu_count(gp_monitor *m)
{
    return gp_monitor_gpu_count(m); /* the monitor's rule, also used by the metrics */
}

void gp_report_devices_json(gp_sbuf *b, gp_monitor *m)
{
    size_t n = gp_monitor_device_count(m);
    int overall;
    gp_sbuf_puts(b, "{\"gpu_count\":");
    gp_json_int(b, (int64_t)gp_report_gpu_count(m));
    gp_json_key(b, "backends", 1);
    gp_report_health_entries_json(m, b, &overall);
    gp_json_key(b, "health", 1);
    gp_json_str(b, gp_health_name(overall));
    gp_json_key(b, "devices", 1);
    gp_sbuf_putc(b, '[');
    for (size_t i = 0; i < n; i++) {
        if (i) gp_sbuf_putc(b, ',');
        gp_report_device_json(m, i, b);
    }
    gp_sbuf_puts(b, "]}\n");
}

void gp_report_devices_text(FILE *f, gp_monitor *m)
{
    size_t n = gp_monitor_device_count(m), gpus = gp_report_gpu_count(m);
    if (!gpus) {
        gp_health_entry h[16];
        size_t nh = 0;
        gp_monitor_health(m, h, 16, &nh);
        fprintf(f, "No GPU found.");
        for (size_t i = 0; i < nh && i < 16; i++)
            if (strcmp(h[i].backend, "host") && strcmp(h[i].backend, "opencl"))
                fprintf(f, " %s.", h[i].reason);
        fprintf(f, "\n");
        if (n) fprintf(f, "Other devices:\n");
    }
    const char *hdr[] = {"#",    "Backend", "Kind",  "Name",  "Memory", "Used",
                         "Util", "Temp",    "Power", "Units", "Driver", "Bus ID"};
    gp_table *t = gp_table_create(12, hdr, "rllllrrrrrll");
    for (size_t i = 0; i < n; i++) {
        gp_dev_info d;
        gp_dev_sample s;
        gp_monitor_device_info(m, i, &d);
        int have = gp_monitor_get_status(m, i, &s) == 0;
        if (!have) memset(&s, 0, sizeof s);
        char c[12][160];
        snprintf(c[0], sizeof c[0], "%zu", i);
        snprintf(c[1], sizeof c[1], "%s", d.backend);
        snprintf(c[2], sizeof c[2], "%s", d.kind);
        snprintf(c[3], sizeof c[3], "%s%s", d.name, d.present ? "" : " (lost)");
        gp_fields_fmt(&s, GP_MF_MEM_TOTAL, c[4], sizeof c[4]);
        gp_fields_fmt(&s, GP_MF_MEM_USED, c[5], sizeof c[5]);
        gp_fields_fmt(&s, GP_MF_UTIL, c[6], sizeof c[6]);
        gp_fields_fmt(&s, GP_MF_TEMP, c[7], sizeof c[7]);
        gp_fields_fmt(&s, GP_MF_POWER, c[8], sizeof c[8]);
        if (d.compute_units)
            snprintf(c[9], sizeof c[9], "%d", d.compute_units);
        else
            snprintf(c[9], sizeof c[9], "N/A");
        snprintf(c[10], sizeof c[10], "%s", d.driver_version[0] ? d.driver_version : "-");
        snprintf(c[11], sizeof c[11], "%s", d.pci_bus_id[0] ? d.pci_bus_id : "-");
        const char *cp[12];
        for (int k = 0; k < 12; k++) cp[k] = c[k];
        gp_table_row(t, cp);
    }
    gp_table_print(t, f, 48);
    gp_table_destroy(t);
}

int gp_report_health_json(gp_sbuf *b, gp_monitor *m)
{
    int overall;
    gp_sbuf_puts(b, "{\"backends\":");
    gp_report_health_entries_json(m, b, &overall);
    gp_json_key(b, "overall", 1);
    gp_json_str(b, gp_health_name(overall));
    gp_sbuf_puts(b, "}\n");
    return overall;
}

int gp_report_health_text(FILE *f, gp_monitor *m)
{
    gp_health_entry h[16];
    size_t nh = 0;
    int overall = gp_monitor_health(m, h, 16, &nh);
    const char *hdr[] = {"Backend", "State", "Devices", "Reason"};
    gp_table *t = gp_table_create(4, hdr, "llrl");
    for (size_t i = 0; i < nh && i < 16; i++)
        gp_table_rowf(t, "%s\t%s\t%d\t%s", h[i].backend, gp_health_name(h[i].state), h[i].devices,
                      h[i].reason);
    gp_table_print(t, f, 0);
    gp_table_destroy(t);
    fprintf(f, "overall: %s%s\n", gp_health_name(overall),
            overall == GP_HEALTH_UNAVAILABLE ? " (no GPU backend has a device)" : "");
    return overall;
}
