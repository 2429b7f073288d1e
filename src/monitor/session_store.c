/* monitor/session_store.c: session reports into SQLite (table
 * monitor_sessions: name, description, start/stop wall ns, report JSON). */
#include "monitor/session_store.h"
#ifdef GP_HAVE_SQLITE
#include "store/access.h"
#include <sqlite3.h>

int gp_session_store_put(const char *path, const char *name, const char *description,
                         int64_t start_wall_ns, int64_t stop_wall_ns, const char *report_json,
                         gp_err *err)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    int rc = GP_EIO;
    gp_access_create(path); /* owner-only when new (docs/security.md) */
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK)
        goto fail;
    sqlite3_busy_timeout(db, 5000); /* the run store's writer may hold the lock */
    if (sqlite3_exec(db,
                     "CREATE TABLE IF NOT EXISTS monitor_sessions(name TEXT, description TEXT, "
                     "start_wall_ns INTEGER, stop_wall_ns INTEGER, report TEXT, "
                     "PRIMARY KEY(name, start_wall_ns))",
                     NULL, NULL, NULL) != SQLITE_OK)
        goto fail;
    if (sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO monitor_sessions VALUES(?,?,?,?,?)", -1, &st,
                           NULL) != SQLITE_OK)
        goto fail;
    sqlite3_bind_text(st, 1, name, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 2, description ? description : "", -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(st, 3, start_wall_ns);
    sqlite3_bind_int64(st, 4, stop_wall_ns);
    sqlite3_bind_text(st, 5, report_json, -1, SQLITE_TRANSIENT);
    if (sqlite3_step(st) != SQLITE_DONE) goto fail;
    rc = 0;
fail:
    if (rc) gp_err_set(err, GP_EIO, "%s: %s", path, db ? sqlite3_errmsg(db) : "cannot open");
    sqlite3_finalize(st);
    sqlite3_close(db);
    return rc;
}
#else
int gp_session_store_put(const char *path, const char *name, const char *description,
                         int64_t start_wall_ns, int64_t stop_wall_ns, const char *report_json,
                         gp_err *err)
{
    (void)name, (void)description, (void)start_wall_ns, (void)stop_wall_ns, (void)report_json;
    return gp_err_set(err, GP_EUNSUPPORTED, "%s: gpuprof was built without SQLite", path);
}
#endif
