/* monitor/alerts.h: threshold alerts with hysteresis, event delivery to
 * callbacks and to a JSONL event log, counters by kind. */
#ifndef GP_MONITOR_ALERTS_H
#define GP_MONITOR_ALERTS_H
#include "core/error.h"
#include "core/sbuf.h"
#include <gpuprof/monitor.h>

typedef struct gp_alerts gp_alerts;

/* Creates the alert state with c's thresholds (copied). Caller destroys. */
gp_alerts *gp_alerts_create(const gp_mon_config *c);
/* Closes the event log and frees. */
void gp_alerts_destroy(gp_alerts *a);
/* Appends events to path as JSON lines (created when missing). 0 or GP_EIO. */
int gp_alerts_open_log(gp_alerts *a, const char *path, gp_err *err);
/* Registers a callback (at most 16); GP_ERANGE when full. */
int gp_alerts_on_event(gp_alerts *a, gp_event_cb cb, void *user);
/* Delivers ev (wall_ns filled in when 0) to the callbacks and the log. */
void gp_alerts_emit(gp_alerts *a, gp_event *ev);
/* Compares device dev's sample with the thresholds; raises, escalates or
 * clears alerts. dev_kind is gp_dev_info.kind: the utilization rule is a GPU
 * rule ("gpu", "accelerator"), the host's CPU load never raises it. A new
 * XID code in the sample raises an alert: XID 79 (fallen off the bus) as
 * device_lost (critical), any other as xid (warning). Returns the number of
 * alerts raised by this sample. */
int gp_alerts_check(gp_alerts *a, int dev, const char *dev_name, const char *dev_kind,
                    const gp_dev_sample *s);
/* Raises the device-lost alert once per loss; gp_alerts_device_back clears. */
void gp_alerts_device_lost(gp_alerts *a, int dev, const char *why);
void gp_alerts_device_back(gp_alerts *a, int dev);
/* Alerts raised so far of one kind to one level (1 warning, 2 critical). */
uint64_t gp_alerts_count_level(const gp_alerts *a, int kind, int level);
/* Writes ev as one JSON object (no newline): the record of events.jsonl. */
void gp_event_json(gp_sbuf *b, const gp_event *ev);
/* Alerts raised so far of one kind. */
uint64_t gp_alerts_count(const gp_alerts *a, int kind);
/* Current level (0 none, 1 warning, 2 critical) of kind on device dev. */
int gp_alerts_level(const gp_alerts *a, int dev, int kind);

#endif
