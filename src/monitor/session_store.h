/* monitor/session_store.h: keeps session reports in a SQLite database (the
 * run store, or any file) in table monitor_sessions. */
#ifndef GP_MONITOR_SESSION_STORE_H
#define GP_MONITOR_SESSION_STORE_H
#include "core/error.h"
#include <stdint.h>

/* Inserts (or replaces, by name and start time) one session report into
 * table monitor_sessions of the database at path, creating the table.
 * Returns 0, GP_EIO with the SQLite message in err, or GP_EUNSUPPORTED when
 * gpuprof was built without SQLite. */
int gp_session_store_put(const char *path, const char *name, const char *description,
                         int64_t start_wall_ns, int64_t stop_wall_ns, const char *report_json,
                         gp_err *err);

#endif
