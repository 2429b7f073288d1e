/* report/monitor.h: the result writers of `gpuprof monitor`: line output
 * (one JSON object or CSV row per shown device and tick) and the
 * full-screen terminal view. gpus_only leaves out OpenCL and host devices. */
#ifndef GP_REPORT_MONITOR_H
#define GP_REPORT_MONITOR_H
#include "core/sbuf.h"
#include <gpuprof/monitor.h>
#include <stdint.h>

/* The CSV header row (wall_ns,tick,device,name,backend,present,FIELDS...,
 * uuid,hostname and the alert columns event,alert_kind,alert_level,
 * alert_value,alert_threshold,message). */
void gp_report_monitor_csv_header(gp_sbuf *b);
/* One line per shown device with its latest sample (JSON lines carry uuid
 * and hostname). */
void gp_report_monitor_lines(gp_sbuf *b, gp_monitor *m, int csv, int gpus_only, uint64_t tick);
/* One line per alert event of ev[0..n) about a shown device (or about no
 * device): JSON, the events.jsonl record plus tick, name, uuid and hostname;
 * CSV, a row with the device columns and the alert columns filled. */
void gp_report_monitor_alerts(gp_sbuf *b, gp_monitor *m, const gp_event *ev, size_t n, int csv,
                              int gpus_only, uint64_t tick);
/* The terminal view (ANSI escapes) for a terminal `cols` wide; last_alert
 * (may be NULL or empty) is shown at the bottom. */
void gp_report_monitor_screen(gp_sbuf *b, gp_monitor *m, int gpus_only, const char *last_alert,
                              double interval, int cols);

#endif
