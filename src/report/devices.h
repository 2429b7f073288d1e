/* report/devices.h: the result writers of `gpuprof devices` and `gpuprof
 * health`: the devices of a monitor with their latest sample, and the health
 * of each device backend (text tables or JSON; shared by the CLI and the
 * server's /api/devices and /api/health). */
#ifndef GP_REPORT_DEVICES_H
#define GP_REPORT_DEVICES_H
#include "core/sbuf.h"
#include <gpuprof/monitor.h>
#include <stdio.h>

/* Present GPUs of m (OpenCL views of the same GPUs are not counted). */
size_t gp_report_gpu_count(gp_monitor *m);
/* Device i of m as one JSON object (info, latest sample, processes). */
void gp_report_device_json(gp_monitor *m, size_t i, gp_sbuf *b);
/* ,"processes":[...] of device i of m (the GPU processes of its latest
 * sample: pid, name, mem_bytes, util_pct), as in device JSON and the
 * monitor's JSON lines. */
void gp_report_device_procs_json(gp_monitor *m, size_t i, gp_sbuf *b);
/* The backend health entries as a JSON array; *overall is set. */
void gp_report_health_entries_json(gp_monitor *m, gp_sbuf *b, int *overall);

/* {"gpu_count","backends","health","devices"}\n */
void gp_report_devices_json(gp_sbuf *b, gp_monitor *m);
/* "No GPU found." with the reasons when there is none, then one table row
 * per device. */
void gp_report_devices_text(FILE *f, gp_monitor *m);
/* {"backends","overall"}\n; returns the overall state (gp_health). */
int gp_report_health_json(gp_sbuf *b, gp_monitor *m);
/* A table of the backends and the overall line; returns the overall state. */
int gp_report_health_text(FILE *f, gp_monitor *m);

#endif
