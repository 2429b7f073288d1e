/* monitor/session.h: named monitoring sessions: per-device aggregates of the
 * samples taken while active, snapshots with retention, inference latency
 * observations, suggestions and the JSON report. */
#ifndef GP_MONITOR_SESSION_H
#define GP_MONITOR_SESSION_H
#include "core/error.h"
#include "core/sbuf.h"
#include "monitor/alerts.h"
#include <gpuprof/monitor.h>

typedef struct gp_sessions gp_sessions;

/* Most bucket edges of the inference latency histogram. */
#define GP_INF_HIST_MAX 32
/* The latency histogram's bucket upper edges in ms (static, ascending; the
 * last bucket, above the last edge, is open); *n receives their count. */
const double *gp_sessions_hist_edges(size_t *n);

/* Creates an empty session list using c's limits and thresholds (copied). */
gp_sessions *gp_sessions_create(const gp_mon_config *c);
void gp_sessions_destroy(gp_sessions *s);
/* Starts a session (see gp_monitor_session_start for the rules). */
int gp_sessions_start(gp_sessions *s, const char *name, const char *desc, int64_t now_ns,
                      gp_err *err);
/* Stops an active session; GP_ENOTFOUND / GP_ESTATE. */
int gp_sessions_stop(gp_sessions *s, const char *name, int64_t now_ns, gp_err *err);
/* Adds one tick of samples (have[i] = 0: device i had none) to every active
 * session. */
void gp_sessions_observe(gp_sessions *s, size_t ndev, const gp_dev_info *info,
                         const gp_dev_sample *samples, const int *have);
/* Stores a snapshot in session name (NULL: every active one). */
int gp_sessions_snapshot(gp_sessions *s, const char *name, const char *reason, int64_t now_ns,
                         size_t ndev, const gp_dev_info *info, const gp_dev_sample *samples,
                         const int *have);
/* Records one latency (ms) in session name (NULL: every active one). */
int gp_sessions_track(gp_sessions *s, const char *name, double ms);
/* Number of active sessions. */
size_t gp_sessions_active(const gp_sessions *s);
/* Copies the description of the newest session called name; GP_ENOTFOUND. */
int gp_sessions_info(const gp_sessions *s, const char *name, gp_session_info *out);
/* Copies up to max session descriptions, oldest first; returns the count. */
size_t gp_sessions_list(const gp_sessions *s, gp_session_info *out, size_t max);
/* Writes session name's JSON report into b (alert counters from a, may be
 * NULL). GP_ENOTFOUND when there is no such session. */
int gp_sessions_report(const gp_sessions *s, const char *name, const gp_alerts *a, gp_sbuf *b);
/* Writes the report to DIR/NAME.json (creating DIR) and remembers the path. */
int gp_sessions_write_report(gp_sessions *s, const char *name, const char *dir, const gp_alerts *a,
                             gp_err *err);

#endif
