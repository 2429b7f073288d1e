/* report/monitor.c: the result writers of `gpuprof monitor`: one JSON
 * object or CSV row per device and tick, and the full-screen terminal view. */
#include "report/monitor.h"
#include <stdlib.h>
#include "core/table.h"
#include "report/devices.h"
#include "monitor/alerts.h"
#include "monitor/fields.h"
#include <math.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void csv_str(gp_sbuf *b, const char *s)
{
    gp_sbuf_putc(b, '"');
    for (const char *p = s; *p; p++) {
        if (*p == '"') gp_sbuf_putc(b, '"');
        gp_sbuf_putc(b, *p == '\n' || *p == '\r' ? ' ' : *p);
    }
    gp_sbuf_putc(b, '"');
}

static void json_str_or_null(gp_sbuf *b, const char *s)
{
    if (s && *s)
        gp_json_str(b, s);
    else
        gp_sbuf_puts(b, "null");
}

static void hostname(char *h, size_t n)
{
    if (gethostname(h, n - 1)) h[0] = 0;
    h[n - 1] = 0;
}

static int shown(const gp_dev_info *d, int gpus_only)
{
    return !gpus_only || (!strcmp(d->kind, "gpu") && strcmp(d->backend, "opencl"));
}

void gp_report_monitor_lines(gp_sbuf *b, gp_monitor *m, int csv, int gpus_only, uint64_t tick)
{
    char host[256];
    hostname(host, sizeof host);
    size_t n = gp_monitor_device_count(m);
    for (size_t i = 0; i < n; i++) {
        gp_dev_info d;
        gp_dev_sample s;
        if (gp_monitor_device_info(m, i, &d) || !shown(&d, gpus_only)) continue;
        int have = gp_monitor_get_status(m, i, &s) == 0;
        if (!have) memset(&s, 0, sizeof s);
        if (csv) {
            gp_sbuf_printf(b, "%lld,%llu,%zu,", (long long)s.wall_ns, (unsigned long long)tick, i);
            csv_str(b, d.name);
            gp_sbuf_printf(b, ",%s,%d", d.backend, d.present);
            for (int f = 0; f < GP_MF_COUNT; f++) {
                if (gp_sample_has(&s, f)) {
                    /* the shortest form that reads back as the same double
                     * (5.37, not 5.3700000000000001) */
                    char num[40];
                    snprintf(num, sizeof num, "%.15g", s.v[f]);
                    if (strtod(num, NULL) != s.v[f]) snprintf(num, sizeof num, "%.17g", s.v[f]);
                    gp_sbuf_printf(b, ",%s", num);
                } else
                    gp_sbuf_puts(b, ",");
            }
            gp_sbuf_putc(b, ',');
            if (d.uuid[0]) csv_str(b, d.uuid);
            gp_sbuf_putc(b, ',');
            csv_str(b, host);
            gp_sbuf_puts(b, ",,,,,,\n"); /* the alert columns */
        } else {
            gp_sbuf_puts(b, "{\"tick\":");
            gp_json_int(b, (int64_t)tick);
            gp_json_key(b, "wall_ns", 1);
            if (have)
                gp_json_int(b, s.wall_ns);
            else
                gp_sbuf_puts(b, "null");
            gp_json_key(b, "device", 1);
            gp_json_int(b, (int64_t)i);
            gp_json_key(b, "name", 1);
            gp_json_str(b, d.name);
            gp_json_key(b, "backend", 1);
            gp_json_str(b, d.backend);
            gp_json_key(b, "uuid", 1);
            json_str_or_null(b, d.uuid);
            gp_json_key(b, "hostname", 1);
            json_str_or_null(b, host);
            gp_json_key(b, "present", 1);
            gp_sbuf_puts(b, d.present ? "true" : "false");
            gp_fields_json(b, &s, 1);
            gp_report_device_procs_json(m, i, b);
            gp_sbuf_puts(b, "}\n");
        }
    }
}

static void bar(gp_sbuf *b, double pct, int width)
{
    if (isnan(pct)) {
        gp_sbuf_printf(b, "[%*s]", width, "N/A");
        return;
    }
    if (pct < 0) pct = 0;
    if (pct > 100) pct = 100;
    int fill = (int)(pct / 100.0 * width + 0.5);
    const char *col = pct >= 90 ? "\033[31m" : pct >= 70 ? "\033[33m" : "\033[32m";
    gp_sbuf_printf(b, "[%s", col);
    for (int i = 0; i < width; i++) gp_sbuf_puts(b, i < fill ? "|" : " ");
    gp_sbuf_puts(b, "\033[0m]");
}

static void sparkline(gp_sbuf *b, gp_monitor *m, size_t dev, int width)
{
    static const char *const lv[] = {" ",      "\u2581", "\u2582", "\u2583", "\u2584",
                                     "\u2585", "\u2586", "\u2587", "\u2588"};
    gp_dev_sample h[128];
    if (width > 128) width = 128;
    size_t n = gp_monitor_history(m, dev, h, (size_t)width);
    for (size_t i = n; i < (size_t)width; i++) gp_sbuf_putc(b, ' ');
    for (size_t i = 0; i < n; i++) {
        if (!gp_sample_has(&h[i], GP_MF_UTIL)) {
            gp_sbuf_putc(b, '.');
            continue;
        }
        int k = (int)(h[i].v[GP_MF_UTIL] / 100.0 * 8 + 0.5);
        gp_sbuf_puts(b, lv[k < 0 ? 0 : k > 8 ? 8 : k]);
    }
}

void gp_report_monitor_screen(gp_sbuf *out, gp_monitor *m, int gpus_only, const char *last_alert,
                              double interval, int cols)
{
    int bw = cols >= 120 ? 20 : 12, sw = cols >= 120 ? 40 : 24;
    gp_sbuf *b = out;
    gp_sbuf_puts(b, "\033[H\033[2J");
    char ts[32];
    time_t now = time(NULL);
    struct tm tm;
    localtime_r(&now, &tm);
    strftime(ts, sizeof ts, "%H:%M:%S", &tm);
    gp_sbuf_printf(b, "\033[1mgpuprof monitor\033[0m  %s  every %.2f s  (q or Ctrl-C quits)\n", ts,
                   interval);
    size_t n = gp_monitor_device_count(m);
    int gpus = 0;
    for (size_t i = 0; i < n; i++) {
        gp_dev_info d;
        gp_dev_sample s;
        if (gp_monitor_device_info(m, i, &d) || !shown(&d, gpus_only)) continue;
        if (!strcmp(d.kind, "gpu") && strcmp(d.backend, "opencl")) gpus++;
        int have = gp_monitor_get_status(m, i, &s) == 0;
        if (!have) memset(&s, 0, sizeof s);
        gp_sbuf_printf(b, "\n\033[1m%zu %.50s\033[0m  (%s%s%s)\n", i, d.name, d.backend,
                       d.present ? "" : ", LOST: ", d.present ? "" : d.status);
        double util = gp_sample_has(&s, GP_MF_UTIL) ? s.v[GP_MF_UTIL] : NAN;
        double memp = gp_sample_has(&s, GP_MF_MEM_USED) && gp_sample_has(&s, GP_MF_MEM_TOTAL) &&
                              s.v[GP_MF_MEM_TOTAL] > 0
                          ? 100.0 * s.v[GP_MF_MEM_USED] / s.v[GP_MF_MEM_TOTAL]
                          : NAN;
        char t1[48], t2[48], t3[48], t4[48], t5[48];
        gp_sbuf_puts(b, "  util ");
        bar(b, util, bw);
        gp_sbuf_printf(b, " %-6s  mem ", gp_fields_fmt(&s, GP_MF_UTIL, t1, sizeof t1));
        bar(b, memp, bw);
        gp_sbuf_printf(b, " %s / %s\n", gp_fields_fmt(&s, GP_MF_MEM_USED, t2, sizeof t2),
                       gp_fields_fmt(&s, GP_MF_MEM_TOTAL, t3, sizeof t3));
        if (!strcmp(d.backend, "host"))
            gp_sbuf_printf(b, "  load %s %s %s", gp_fields_fmt(&s, GP_MF_LOAD1, t1, sizeof t1),
                           gp_fields_fmt(&s, GP_MF_LOAD5, t2, sizeof t2),
                           gp_fields_fmt(&s, GP_MF_LOAD15, t3, sizeof t3));
        else if (strcmp(d.backend, "opencl"))
            gp_sbuf_printf(b, "  temp %s  power %s / %s  sm %s  mem %s  %s",
                           gp_fields_fmt(&s, GP_MF_TEMP, t1, sizeof t1),
                           gp_fields_fmt(&s, GP_MF_POWER, t2, sizeof t2),
                           gp_fields_fmt(&s, GP_MF_POWER_LIMIT, t3, sizeof t3),
                           gp_fields_fmt(&s, GP_MF_CLOCK_SM, t4, sizeof t4),
                           gp_fields_fmt(&s, GP_MF_CLOCK_MEM, t5, sizeof t5),
                           gp_sample_has(&s, GP_MF_THROTTLE) &&
                                   ((uint64_t)s.v[GP_MF_THROTTLE] & ~(uint64_t)GP_THR_GPU_IDLE)
                               ? "THROTTLED"
                               : "");
        else
            gp_sbuf_printf(b, "  %d compute units, %d MHz, %s", d.compute_units, d.max_clock_mhz,
                           d.platform);
        gp_sbuf_puts(b, "\n  util history ");
        sparkline(b, m, i, sw);
        gp_sbuf_putc(b, '\n');
        gp_dev_proc p[8];
        size_t np = gp_monitor_processes(m, i, p, 8);
        for (size_t k = 0; k < np; k++) {
            gp_sbuf_printf(b, "    pid %-8d %-20.20s", p[k].pid, p[k].name);
            if (p[k].valid & GP_PROC_MEM)
                gp_sbuf_printf(b, " mem %s", gp_fmt_bytes(t1, sizeof t1, (double)p[k].mem_bytes));
            if (p[k].valid & GP_PROC_UTIL) gp_sbuf_printf(b, " util %.0f %%", p[k].util_pct);
            gp_sbuf_putc(b, '\n');
        }
    }
    if (!gpus && !gpus_only) {
        gp_health_entry h[16];
        size_t nh = 0;
        gp_monitor_health(m, h, 16, &nh);
        gp_sbuf_puts(b, "\nNo GPU found:");
        for (size_t i = 0; i < nh && i < 16; i++)
            if (strcmp(h[i].backend, "host") && strcmp(h[i].backend, "opencl"))
                gp_sbuf_printf(b, " %s.", h[i].reason);
        gp_sbuf_putc(b, '\n');
    }
    if (last_alert && last_alert[0])
        gp_sbuf_printf(b, "\n\033[33mlast alert: %s\033[0m\n", last_alert);
}

void gp_report_monitor_csv_header(gp_sbuf *b)
{
    gp_sbuf_puts(b, "wall_ns,tick,device,name,backend,present");
    for (int f = 0; f < GP_MF_COUNT; f++) gp_sbuf_printf(b, ",%s", gp_mfield_key(f));
    gp_sbuf_puts(b, ",uuid,hostname,event,alert_kind,alert_level,alert_value,alert_threshold,"
                    "message\n");
}

void gp_report_monitor_alerts(gp_sbuf *b, gp_monitor *m, const gp_event *ev, size_t n, int csv,
                              int gpus_only, uint64_t tick)
{
    char host[256];
    hostname(host, sizeof host);
    for (size_t k = 0; k < n; k++, ev++) {
        gp_dev_info d;
        int have = ev->device >= 0 && gp_monitor_device_info(m, (size_t)ev->device, &d) == 0;
        if (have && !shown(&d, gpus_only)) continue;
        if (csv) {
            gp_sbuf_printf(b, "%lld,%llu,", (long long)ev->wall_ns, (unsigned long long)tick);
            if (ev->device >= 0) gp_sbuf_printf(b, "%d", ev->device);
            gp_sbuf_putc(b, ',');
            if (have) csv_str(b, d.name);
            gp_sbuf_printf(b, ",%s,", have ? d.backend : "");
            if (have) gp_sbuf_puts(b, d.present ? "1" : "0");
            for (int f = 0; f < GP_MF_COUNT; f++) gp_sbuf_putc(b, ',');
            gp_sbuf_putc(b, ',');
            if (have && d.uuid[0]) csv_str(b, d.uuid);
            gp_sbuf_putc(b, ',');
            csv_str(b, host);
            gp_sbuf_printf(b, ",%s,%s,%s,%.17g,%.17g,", gp_event_type_name(ev->type),
                           gp_alert_kind_name(ev->kind), gp_alert_level_name(ev->level), ev->value,
                           ev->threshold);
            csv_str(b, ev->message);
            gp_sbuf_putc(b, '\n');
        } else {
            /* the events.jsonl record, with the tick and the device's identity added */
            gp_sbuf rec = {0};
            gp_event_json(&rec, ev);
            gp_sbuf_add(b, rec.s, rec.n - 1); /* without its closing brace */
            gp_sbuf_free(&rec);
            gp_json_key(b, "tick", 1);
            gp_json_int(b, (int64_t)tick);
            if (have) {
                gp_json_key(b, "name", 1);
                gp_json_str(b, d.name);
                gp_json_key(b, "uuid", 1);
                json_str_or_null(b, d.uuid);
            }
            gp_json_key(b, "hostname", 1);
            json_str_or_null(b, host);
            gp_sbuf_puts(b, "}\n");
        }
    }
}
