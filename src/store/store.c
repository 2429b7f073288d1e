/* store/store.c: the SQLite run store: schema, runs bookkeeping, command-line
 * redaction, and the batched writer thread that recording processes use
 * (events queued under a mutex, committed by one thread every <= commit_ms). */
#include "store/store.h"
#include "store/access.h"
#include "core/redact.h"
#include "core/clock.h"
#include "core/hash.h"
#include "core/sbuf.h"
#include "core/sketch.h"
#include "core/strtab.h"
#include "core/vec.h"
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct gp_store {
    sqlite3 *db;
    char *path;
};

static const char *const schema_sql =
    "CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT);"
    "CREATE TABLE IF NOT EXISTS runs(id INTEGER PRIMARY KEY, command TEXT, start_wall_ns "
    "INTEGER, start_mono_ns INTEGER, host TEXT, pid INTEGER, devices TEXT, version TEXT, "
    "exit_status INTEGER, duration_ns INTEGER, dropped INTEGER);"
    "CREATE TABLE IF NOT EXISTS processes(id INTEGER PRIMARY KEY, run INTEGER, pid INTEGER, "
    "ppid INTEGER, exe TEXT, source TEXT, start_mono_ns INTEGER, start_wall_ns INTEGER, "
    "end_mono_ns INTEGER, events INTEGER DEFAULT 0, dropped INTEGER DEFAULT 0);"
    "CREATE TABLE IF NOT EXISTS devices(proc INTEGER, kind TEXT, name TEXT);"
    "CREATE TABLE IF NOT EXISTS strings(proc INTEGER, id INTEGER, s TEXT, PRIMARY KEY(proc, id)) "
    "WITHOUT ROWID;"
    "CREATE TABLE IF NOT EXISTS tracks(proc INTEGER, id INTEGER, type INTEGER, tid INTEGER, "
    "device INTEGER, name TEXT, PRIMARY KEY(proc, id)) WITHOUT ROWID;"
    "CREATE TABLE IF NOT EXISTS api_calls(proc INTEGER, track INTEGER, cat INTEGER, name INTEGER, "
    "ts INTEGER, dur INTEGER, corr INTEGER);"
    "CREATE TABLE IF NOT EXISTS kernels(proc INTEGER, track INTEGER, name INTEGER, ts INTEGER, "
    "dur INTEGER, queued INTEGER, submit INTEGER, corr INTEGER, device INTEGER, context INTEGER, "
    "stream INTEGER, grid_x INTEGER, grid_y INTEGER, grid_z INTEGER, block_x INTEGER, block_y "
    "INTEGER, block_z INTEGER, registers INTEGER, shared_mem INTEGER);"
    "CREATE TABLE IF NOT EXISTS copies(proc INTEGER, track INTEGER, cat INTEGER, name INTEGER, ts "
    "INTEGER, dur INTEGER, queued INTEGER, submit INTEGER, corr INTEGER, device INTEGER, context "
    "INTEGER, stream INTEGER, bytes INTEGER, copy_kind INTEGER, src_kind INTEGER, dst_kind "
    "INTEGER);"
    "CREATE TABLE IF NOT EXISTS slices(proc INTEGER, track INTEGER, cat INTEGER, name INTEGER, ts "
    "INTEGER, dur INTEGER, corr INTEGER);"
    "CREATE TABLE IF NOT EXISTS instants(proc INTEGER, track INTEGER, cat INTEGER, name INTEGER, "
    "ts INTEGER);"
    "CREATE TABLE IF NOT EXISTS counters(proc INTEGER, track INTEGER, name INTEGER, ts INTEGER, "
    "value REAL);"
    "CREATE TABLE IF NOT EXISTS memory(proc INTEGER, track INTEGER, ts INTEGER, addr INTEGER, "
    "bytes INTEGER, device INTEGER);"
    /* the newest commit of each recording process: every event queued before
     * taken_mono_ns is in it (crash safety is checked against this) */
    "CREATE TABLE IF NOT EXISTS commits(proc INTEGER PRIMARY KEY, taken_mono_ns INTEGER, "
    "events INTEGER);"
    /* the recorded program's environment that matters to recording (redacted) */
    "CREATE TABLE IF NOT EXISTS run_env(run INTEGER, name TEXT, value TEXT, PRIMARY KEY(run, "
    "name)) WITHOUT ROWID;";

/* Schema version 2 (issue 17; docs/store.md): lookup tables for the
 * enumerated columns, per-run indexes and readable views with names
 * resolved and `_ns` time columns. Additive over version 1, so migrating a
 * version-1 store is running this and updating meta.schema_version. */
static const char *const schema_v2_sql =
    "CREATE TABLE IF NOT EXISTS track_types(id INTEGER PRIMARY KEY, name TEXT);"
    "INSERT OR IGNORE INTO track_types VALUES(0, 'thread'), (1, 'queue'), (2, 'nvtx_domain');"
    "CREATE TABLE IF NOT EXISTS copy_kinds(id INTEGER PRIMARY KEY, name TEXT);"
    "INSERT OR IGNORE INTO copy_kinds VALUES(0, 'unknown'), (1, 'HtoD'), (2, 'DtoH'), "
    "(3, 'DtoD'), (4, 'HtoH'), (5, 'PtoP'), (6, 'Memset');"
    "CREATE TABLE IF NOT EXISTS memory_kinds(id INTEGER PRIMARY KEY, name TEXT);"
    "INSERT OR IGNORE INTO memory_kinds VALUES(0, 'unknown'), (1, 'pageable'), (2, 'pinned'), "
    "(3, 'device'), (4, 'managed'), (5, 'array');"
    "CREATE TABLE IF NOT EXISTS event_types(id INTEGER PRIMARY KEY, table_name TEXT, what TEXT);"
    "INSERT OR IGNORE INTO event_types VALUES(1, 'api_calls', 'host API call'), "
    "(2, 'kernels', 'device kernel'), (3, 'copies', 'device copy or memset'), "
    "(4, 'slices', 'other range (NVTX range, sync, overhead)'), (5, 'instants', 'mark'), "
    "(6, 'counters', 'counter sample'), (7, 'memory', 'allocation or free');"
    "CREATE INDEX IF NOT EXISTS processes_run ON processes(run);"
    "CREATE INDEX IF NOT EXISTS devices_proc ON devices(proc);"
    /* libgpuprof's stream sink: ranges known only as per-name statistics
     * (gp_store_range_stats); sketch: GP_SKETCH_BUCKETS native uint64 counts */
    "CREATE TABLE IF NOT EXISTS range_stats(proc INTEGER, track INTEGER, cat INTEGER, name "
    "INTEGER, device INTEGER, backend INTEGER, count INTEGER, total_ns INTEGER, self_ns INTEGER, "
    "min_ns INTEGER, max_ns INTEGER, bytes INTEGER, m2 REAL, first_ns INTEGER, last_ns INTEGER, "
    "sketch BLOB);"
    "CREATE VIEW IF NOT EXISTS v_tracks AS SELECT p.run AS run, t.proc AS proc, t.id AS id, "
    "tt.name AS type, t.tid AS tid, t.device AS device, t.name AS name FROM tracks t JOIN "
    "processes p ON p.id = t.proc LEFT JOIN track_types tt ON tt.id = t.type;";

/* Schema version 3 (docs/store.md): the API kind of every API call as a
 * lookup id, api_calls.kind -> api_kinds, and v_api_calls resolving it. Run
 * once, when a store older than 3 (or a new one) is brought to 3: the
 * column is added, the calls already recorded get their kind from their
 * process's source and category string through api_kinds (the same rows the
 * writer resolves new calls with); v_api_calls shows it (made by schema_v5_sql). */
static const char *const schema_v3_sql =
    "CREATE TABLE IF NOT EXISTS api_kinds(id INTEGER PRIMARY KEY, name TEXT, source TEXT, "
    "category TEXT, what TEXT);"
    "INSERT OR IGNORE INTO api_kinds VALUES(0, 'unknown', NULL, NULL, 'not known'), "
    "(1, 'cuda_runtime', 'cuda', 'cuda_runtime', 'CUDA runtime API "
    "(CUPTI_ACTIVITY_KIND_RUNTIME)'), "
    "(2, 'cuda_driver', 'cuda', 'cuda_driver', 'CUDA driver API (CUPTI_ACTIVITY_KIND_DRIVER)'), "
    "(3, 'opencl', 'opencl', 'runtime', 'OpenCL API (the gpuprof OpenCL layer)');"
    "UPDATE api_calls SET kind = coalesce((SELECT k.id FROM processes p JOIN strings s ON s.proc = "
    "api_calls.proc AND s.id = api_calls.cat JOIN api_kinds k ON k.source = p.source AND "
    "k.category = s.s WHERE p.id = api_calls.proc), 0) WHERE kind IS NULL;";

/* Schema version 5 (docs/store.md, "Which rows are a process's"): the rows
 * of the event tables are found through event_rows, the rowid ranges each
 * process's writer appended (one row per table and contiguous stretch, in the
 * transaction that wrote the rows), instead of a (proc, ts) index that every
 * row had to enter. Run once, when a store older than 5 (or a new one) is
 * brought to 5, followed by fill_event_rows for the rows already there:
 * the per-row indexes are dropped, and every view over an event table is
 * made again to join through event_rows (the same columns and rows as
 * before). */
static const char *const schema_v5_sql =
    "CREATE TABLE IF NOT EXISTS event_rows(tbl INTEGER, proc INTEGER, first_rowid INTEGER, "
    "last_rowid INTEGER, PRIMARY KEY(proc, tbl, first_rowid)) WITHOUT ROWID;"
    "DROP INDEX IF EXISTS api_calls_proc_ts;"
    "DROP INDEX IF EXISTS kernels_proc_ts;"
    "DROP INDEX IF EXISTS copies_proc_ts;"
    "DROP INDEX IF EXISTS slices_proc_ts;"
    "DROP INDEX IF EXISTS instants_proc_ts;"
    "DROP INDEX IF EXISTS counters_proc_ts;"
    "DROP INDEX IF EXISTS memory_proc_ts;"
    "DROP VIEW IF EXISTS kernel_v;"
    "DROP VIEW IF EXISTS copy_v;"
    "DROP VIEW IF EXISTS api_v;"
    "DROP VIEW IF EXISTS v_kernels;"
    "DROP VIEW IF EXISTS v_copies;"
    "DROP VIEW IF EXISTS v_ranges;"
    "DROP VIEW IF EXISTS v_nvtx_ranges;"
    "DROP VIEW IF EXISTS v_marks;"
    "DROP VIEW IF EXISTS v_counters;"
    "DROP VIEW IF EXISTS v_memory;"
    "DROP VIEW IF EXISTS v_api_calls;"
    "CREATE VIEW kernel_v AS SELECT p.run AS run, k.proc AS proc, s.s AS name, k.ts AS ts, "
    "k.dur AS dur, k.queued AS queued, k.submit AS submit, k.corr AS corr, k.device AS device, "
    "k.stream AS stream, k.grid_x, k.grid_y, k.grid_z, k.block_x, k.block_y, k.block_z, "
    "k.registers, k.shared_mem FROM processes p CROSS JOIN event_rows er ON er.proc = p.id AND "
    "er.tbl = 2 CROSS JOIN kernels k ON k.rowid BETWEEN er.first_rowid AND er.last_rowid AND "
    "+k.proc = er.proc JOIN strings s ON s.proc = k.proc AND s.id = k.name;"
    "CREATE VIEW copy_v AS SELECT p.run AS run, c.proc AS proc, cs.s AS cat, s.s AS name, c.ts "
    "AS ts, c.dur AS dur, c.corr AS corr, c.device AS device, c.stream AS stream, c.bytes AS "
    "bytes, c.copy_kind AS copy_kind FROM processes p CROSS JOIN event_rows er ON er.proc = "
    "p.id AND er.tbl = 3 CROSS JOIN copies c ON c.rowid BETWEEN er.first_rowid AND "
    "er.last_rowid AND +c.proc = er.proc JOIN strings s ON s.proc = c.proc AND s.id = c.name "
    "JOIN strings cs ON cs.proc = c.proc AND cs.id = c.cat;"
    "CREATE VIEW api_v AS SELECT p.run AS run, a.proc AS proc, cs.s AS cat, s.s AS name, a.ts "
    "AS ts, a.dur AS dur, a.corr AS corr, t.tid AS tid FROM processes p CROSS JOIN event_rows "
    "er ON er.proc = p.id AND er.tbl = 1 CROSS JOIN api_calls a ON a.rowid BETWEEN "
    "er.first_rowid AND er.last_rowid AND +a.proc = er.proc JOIN strings s ON s.proc = a.proc "
    "AND s.id = a.name JOIN strings cs ON cs.proc = a.proc AND cs.id = a.cat JOIN tracks t ON "
    "t.proc = a.proc AND t.id = a.track;"
    "CREATE VIEW v_kernels AS SELECT p.run AS run, k.proc AS proc, p.pid AS pid, s.s AS name, "
    "k.ts AS start_ns, k.dur AS dur_ns, k.ts + k.dur AS end_ns, k.queued AS queued_ns, "
    "k.submit AS submit_ns, k.corr AS correlation, k.device AS device, k.context AS context, "
    "k.stream AS stream, k.grid_x, k.grid_y, k.grid_z, k.block_x, k.block_y, k.block_z, "
    "k.registers AS registers_per_thread, k.shared_mem AS shared_mem_bytes FROM processes p "
    "CROSS JOIN event_rows er ON er.proc = p.id AND er.tbl = 2 CROSS JOIN kernels k ON k.rowid "
    "BETWEEN er.first_rowid AND er.last_rowid AND +k.proc = er.proc LEFT JOIN strings s ON "
    "s.proc = k.proc AND s.id = k.name;"
    "CREATE VIEW v_copies AS SELECT p.run AS run, c.proc AS proc, p.pid AS pid, cs.s AS "
    "category, s.s AS name, c.ts AS start_ns, c.dur AS dur_ns, c.ts + c.dur AS end_ns, "
    "c.queued AS queued_ns, c.submit AS submit_ns, c.corr AS correlation, c.device AS device, "
    "c.context AS context, c.stream AS stream, c.bytes AS bytes, ck.name AS copy_kind, sk.name "
    "AS src_kind, dk.name AS dst_kind FROM processes p CROSS JOIN event_rows er ON er.proc = "
    "p.id AND er.tbl = 3 CROSS JOIN copies c ON c.rowid BETWEEN er.first_rowid AND "
    "er.last_rowid AND +c.proc = er.proc LEFT JOIN strings s ON s.proc = c.proc AND s.id = "
    "c.name LEFT JOIN strings cs ON cs.proc = c.proc AND cs.id = c.cat LEFT JOIN copy_kinds ck "
    "ON ck.id = c.copy_kind LEFT JOIN memory_kinds sk ON sk.id = c.src_kind LEFT JOIN "
    "memory_kinds dk ON dk.id = c.dst_kind;"
    "CREATE VIEW v_ranges AS SELECT p.run AS run, r.proc AS proc, p.pid AS pid, t.tid AS tid, "
    "t.name AS thread, cs.s AS category, s.s AS name, r.ts AS start_ns, r.dur AS dur_ns, r.ts "
    "+ r.dur AS end_ns, r.corr AS correlation FROM processes p CROSS JOIN event_rows er ON "
    "er.proc = p.id AND er.tbl = 4 CROSS JOIN slices r ON r.rowid BETWEEN er.first_rowid AND "
    "er.last_rowid AND +r.proc = er.proc LEFT JOIN strings s ON s.proc = r.proc AND s.id = "
    "r.name LEFT JOIN strings cs ON cs.proc = r.proc AND cs.id = r.cat LEFT JOIN tracks t ON "
    "t.proc = r.proc AND t.id = r.track;"
    "CREATE VIEW v_nvtx_ranges AS SELECT * FROM v_ranges WHERE category = 'nvtx';"
    "CREATE VIEW v_marks AS SELECT p.run AS run, i.proc AS proc, p.pid AS pid, t.tid AS tid, "
    "t.name AS thread, cs.s AS category, s.s AS name, i.ts AS ts_ns FROM processes p CROSS "
    "JOIN event_rows er ON er.proc = p.id AND er.tbl = 5 CROSS JOIN instants i ON i.rowid "
    "BETWEEN er.first_rowid AND er.last_rowid AND +i.proc = er.proc LEFT JOIN strings s ON "
    "s.proc = i.proc AND s.id = i.name LEFT JOIN strings cs ON cs.proc = i.proc AND cs.id = "
    "i.cat LEFT JOIN tracks t ON t.proc = i.proc AND t.id = i.track;"
    "CREATE VIEW v_counters AS SELECT p.run AS run, c.proc AS proc, p.pid AS pid, t.name AS "
    "track, s.s AS name, c.ts AS ts_ns, c.value AS value FROM processes p CROSS JOIN "
    "event_rows er ON er.proc = p.id AND er.tbl = 6 CROSS JOIN counters c ON c.rowid BETWEEN "
    "er.first_rowid AND er.last_rowid AND +c.proc = er.proc LEFT JOIN strings s ON s.proc = "
    "c.proc AND s.id = c.name LEFT JOIN tracks t ON t.proc = c.proc AND t.id = c.track;"
    "CREATE VIEW v_memory AS SELECT p.run AS run, m.proc AS proc, p.pid AS pid, t.tid AS tid, "
    "m.ts AS ts_ns, CASE WHEN m.bytes < 0 THEN 'free' ELSE 'alloc' END AS action, m.addr AS "
    "addr, m.bytes AS bytes, m.device AS device FROM processes p CROSS JOIN event_rows er ON "
    "er.proc = p.id AND er.tbl = 7 CROSS JOIN memory m ON m.rowid BETWEEN er.first_rowid AND "
    "er.last_rowid AND +m.proc = er.proc LEFT JOIN tracks t ON t.proc = m.proc AND t.id = "
    "m.track;"
    "CREATE VIEW v_api_calls AS SELECT p.run AS run, a.proc AS proc, p.pid AS pid, t.tid AS "
    "tid, t.name AS thread, ak.name AS kind, cs.s AS category, s.s AS name, a.ts AS start_ns, "
    "a.dur AS dur_ns, a.ts + a.dur AS end_ns, a.corr AS correlation FROM processes p CROSS "
    "JOIN event_rows er ON er.proc = p.id AND er.tbl = 1 CROSS JOIN api_calls a ON a.rowid "
    "BETWEEN er.first_rowid AND er.last_rowid AND +a.proc = er.proc LEFT JOIN strings s ON "
    "s.proc = a.proc AND s.id = a.name LEFT JOIN strings cs ON cs.proc = a.proc AND cs.id = "
    "a.cat LEFT JOIN tracks t ON t.proc = a.proc AND t.id = a.track LEFT JOIN api_kinds ak ON "
    "ak.id = a.kind;";

/* Event tables by gp_store_table (= event_types.id): name and column count. */
static const struct {
    const char *table;
    int ncol;
} tables[8] = {
    {NULL, 0},     {"api_calls", 8}, {"kernels", 19}, {"copies", 16},
    {"slices", 8}, {"instants", 5},  {"counters", 5}, {"memory", 6},
};

/* Migration to schema 5: the event_rows ranges of the rows already in the
 * event tables, each maximal stretch of consecutive rowids of one process,
 * in one pass over each table in rowid order (no sort: a window function
 * over (proc, rowid) took 8x as long). Returns 0 or an SQLite code. */
static int fill_event_rows(sqlite3 *db)
{
    sqlite3_stmt *ins = NULL;
    int rc = sqlite3_prepare_v2(db, "INSERT INTO event_rows VALUES(?,?,?,?)", -1, &ins, NULL);
    for (int t = GP_ST_API; t <= GP_ST_MEM && rc == SQLITE_OK; t++) {
        char sql[96];
        snprintf(sql, sizeof sql, "SELECT rowid, proc FROM %s ORDER BY rowid", tables[t].table);
        sqlite3_stmt *st = NULL;
        if ((rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL)) != SQLITE_OK) break;
        int64_t proc = 0, first = 0, last = 0;
        int have = 0, r;
        for (;;) {
            r = sqlite3_step(st);
            int row = r == SQLITE_ROW;
            int64_t id = row ? sqlite3_column_int64(st, 0) : 0;
            int null = row && sqlite3_column_type(st, 1) == SQLITE_NULL;
            int64_t p = row ? sqlite3_column_int64(st, 1) : 0;
            if (row && !null && have && p == proc && id == last + 1) {
                last = id;
                continue;
            }
            if (have) { /* the stretch ends: this row is another's, after a gap, or none */
                sqlite3_bind_int(ins, 1, t);
                sqlite3_bind_int64(ins, 2, proc);
                sqlite3_bind_int64(ins, 3, first);
                sqlite3_bind_int64(ins, 4, last);
                int ri = sqlite3_step(ins);
                sqlite3_reset(ins);
                if (ri != SQLITE_DONE) {
                    r = ri;
                    break;
                }
            }
            if (!row) break;
            have = !null;
            proc = p;
            first = last = id;
        }
        rc = r == SQLITE_DONE ? SQLITE_OK : r;
        sqlite3_finalize(st);
    }
    sqlite3_finalize(ins);
    return rc;
}

int gp_store_has_column_(sqlite3 *db, const char *table, const char *col)
{
    sqlite3_stmt *st = NULL;
    int has = -1;
    if (sqlite3_prepare_v2(db, "SELECT count(*) FROM pragma_table_info(?1) WHERE name = ?2", -1,
                           &st, NULL) == SQLITE_OK &&
        sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC) == SQLITE_OK &&
        sqlite3_bind_text(st, 2, col, -1, SQLITE_STATIC) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        has = sqlite3_column_int(st, 0) > 0;
    sqlite3_finalize(st);
    return has;
}

/* Adds column `col` (its SQL type: decl) to table unless it has it. */
static int add_column(sqlite3 *db, const char *table, const char *col, const char *decl, char **msg)
{
    int has = gp_store_has_column_(db, table, col);
    if (has < 0) return -1;
    if (has) return 0;
    char sql[200];
    snprintf(sql, sizeof sql, "ALTER TABLE %s ADD COLUMN %s %s", table, col, decl);
    return sqlite3_exec(db, sql, NULL, NULL, msg) == SQLITE_OK ? 0 : -1;
}

void gp_store_ev_init(gp_store_ev *ev, gp_store_table table)
{
    memset(ev, 0, sizeof *ev);
    ev->table = (uint8_t)table;
    ev->queued = ev->submit = ev->corr = ev->bytes = ev->stream = GP_NONE;
    ev->addr = 0;
    ev->device = ev->context = ev->registers = ev->shared_mem = GP_NONE;
}

static int db_err(sqlite3 *db, const char *path, gp_err *err, const char *what)
{
    return gp_err_set(err, GP_EIO, "%s: %s: %s", path, what, db ? sqlite3_errmsg(db) : "?");
}

/* Opens a connection with the pragmas every user of the store wants. */
static int open_db(const char *path, int create, sqlite3 **out, gp_err *err)
{
    sqlite3 *db = NULL;
    int flags = SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0) | SQLITE_OPEN_NOMUTEX;
    /* access control (docs/security.md): another user's store is read-only
     * for us; a new store is owner-only, and SQLite gives its -wal and -shm
     * files the same mode */
    if (gp_access_foreign(path))
        return gp_err_set(err, GP_EINVAL, "%s: belongs to another user: read-only for you", path);
    if (create && gp_access_create(path))
        return gp_err_set(err, GP_EIO, "%s: cannot create: %s", path, strerror(errno));
    if (sqlite3_open_v2(path, &db, flags, NULL) != SQLITE_OK) {
        int rc = db_err(db, path, err, "cannot open store");
        sqlite3_close(db);
        return rc;
    }
    sqlite3_busy_timeout(db, 10000);
    char *msg = NULL;
    /* Switching a new file to WAL takes an exclusive lock, and SQLite answers
     * BUSY at once rather than through the busy timeout when another process
     * does the same (two runs starting on one new store): retried for as
     * long as that timeout. */
    int rc;
    for (int64_t t0 = gp_clock_mono_ns();;) {
        rc = sqlite3_exec(db,
                          "PRAGMA page_size=65536; PRAGMA journal_mode=WAL; "
                          "PRAGMA synchronous=NORMAL;",
                          NULL, NULL, &msg);
        if ((rc & 0xff) != SQLITE_BUSY || gp_clock_mono_ns() - t0 > 10000000000LL) break;
        sqlite3_free(msg);
        msg = NULL;
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL);
    }
    if (rc != SQLITE_OK) {
        gp_err_set(err, GP_EIO, "%s: not a gpuprof store (%s)", path, msg ? msg : "?");
        sqlite3_free(msg);
        sqlite3_close(db);
        return GP_EIO;
    }
    *out = db;
    return 0;
}

/* meta.schema_version of db: 0 when absent (a new store), -1 on error */
static int schema_version(sqlite3 *db)
{
    sqlite3_stmt *st = NULL;
    int v = -1;
    if (sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = 'schema_version'", -1, &st,
                           NULL) == SQLITE_OK) {
        int r = sqlite3_step(st);
        v = r == SQLITE_ROW ? sqlite3_column_int(st, 0) : r == SQLITE_DONE ? 0 : -1;
    } else if (strstr(sqlite3_errmsg(db), "no such table")) {
        v = 0; /* a new file: no meta table yet */
    }
    sqlite3_finalize(st);
    return v;
}

int gp_store_ensure_schema_(sqlite3 *db, const char *path, gp_err *err)
{
    char *msg = NULL;
    if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, &msg) != SQLITE_OK) goto fail;
    int ver = schema_version(db);
    if (ver > GP_STORE_SCHEMA_VERSION) {
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
        return gp_err_set(err, GP_EUNSUPPORTED,
                          "%s: store schema version %d is newer than this gpuprof's (%d)", path,
                          ver, GP_STORE_SCHEMA_VERSION);
    }
    char vsql[120];
    snprintf(vsql, sizeof vsql, "INSERT OR REPLACE INTO meta VALUES('schema_version', '%d')",
             GP_STORE_SCHEMA_VERSION);
    if (sqlite3_exec(db, schema_sql, NULL, NULL, &msg) != SQLITE_OK ||
        sqlite3_exec(db, schema_v2_sql, NULL, NULL, &msg) != SQLITE_OK)
        goto fail;
    if (ver < 3) { /* a new store or one of version 1 or 2 */
        if (add_column(db, "api_calls", "kind", "INTEGER", &msg) ||
            sqlite3_exec(db, schema_v3_sql, NULL, NULL, &msg) != SQLITE_OK)
            goto fail;
    }
    /* version 4: slices.inline_child_ns (NULL in rows written before) */
    if (ver < 4 && add_column(db, "slices", "inline_child_ns", "INTEGER", &msg)) goto fail;
    /* version 5: event_rows instead of the (proc, ts) indexes; views remade */
    if (ver < 5 && (sqlite3_exec(db, schema_v5_sql, NULL, NULL, &msg) != SQLITE_OK ||
                    fill_event_rows(db) != SQLITE_OK))
        goto fail;
    if (sqlite3_exec(db, vsql, NULL, NULL, &msg) != SQLITE_OK ||
        sqlite3_exec(db,
                     "INSERT OR IGNORE INTO meta VALUES('created_by', 'gpuprof " GP_VERSION "')",
                     NULL, NULL, &msg) != SQLITE_OK)
        goto fail;
    if (ver > 0 && ver < GP_STORE_SCHEMA_VERSION) { /* a migration: say from what */
        char m[160];
        snprintf(m, sizeof m,
                 "INSERT OR REPLACE INTO meta VALUES('migrated_from_%d', 'gpuprof " GP_VERSION "')",
                 ver);
        if (sqlite3_exec(db, m, NULL, NULL, &msg) != SQLITE_OK) goto fail;
    }
    if (sqlite3_exec(db, "COMMIT", NULL, NULL, &msg) != SQLITE_OK) goto fail;
    return 0;
fail:
    gp_err_set(err, GP_EIO, "%s: cannot create the schema: %s", path,
               msg ? msg : sqlite3_errmsg(db));
    sqlite3_free(msg);
    sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    return GP_EIO;
}

int gp_store_open(const char *path, gp_store **out, gp_err *err)
{
    sqlite3 *db = NULL;
    int rc = open_db(path, 1, &db, err);
    if (rc) return rc;
    if ((rc = gp_store_ensure_schema_(db, path, err))) {
        sqlite3_close(db);
        return rc;
    }
    gp_store *s = gp_xcalloc(1, sizeof *s);
    s->db = db;
    s->path = gp_xstrdup(path);
    *out = s;
    return 0;
}

void gp_store_close(gp_store *s)
{
    if (!s) return;
    sqlite3_close(s->db);
    free(s->path);
    free(s);
}

/* The reserve of a run: GP_STORE_RESERVE bytes of disk held in a file
 * beside the store from the run's begin to its end, freed before the
 * run's last writes so that a run whose store filled the disk can still
 * record how it ended (exit status, dropped count) instead of showing as
 * interrupted. */
#define GP_STORE_RESERVE (1 << 20)

static void reserve_path(char *buf, size_t n, const char *path, int64_t run)
{
    snprintf(buf, n, "%s-reserve.%lld", path, (long long)run);
}

/* Makes the reserve; without one (no space already, a file size limit,
 * a read-only folder) the run goes on. */
static void reserve_make(const char *path, int64_t run)
{
    char rp[4200];
    reserve_path(rp, sizeof rp, path, run);
    int fd = open(rp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) return;
    gp_xfsz_guard g; /* past `ulimit -f`: EFBIG, not SIGXFSZ */
    gp_xfsz_block(&g);
    int ok = posix_fallocate(fd, 0, GP_STORE_RESERVE) == 0;
    if (!ok) { /* a file system without fallocate: written */
        static const char zero[65536];
        ok = 1;
        for (size_t done = 0; ok && done < GP_STORE_RESERVE; done += sizeof zero)
            ok = write(fd, zero, sizeof zero) == (ssize_t)sizeof zero;
        if (ok) ok = fsync(fd) == 0;
    }
    gp_xfsz_unblock(&g);
    close(fd);
    if (!ok) unlink(rp);
}

void gp_store_run_release_reserve(const char *path, int64_t run)
{
    char rp[4200];
    reserve_path(rp, sizeof rp, path, run);
    unlink(rp);
}

int64_t gp_store_run_begin(gp_store *s, const gp_store_run_info *ri, gp_err *err)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(s->db,
                           "INSERT INTO runs(command, start_wall_ns, start_mono_ns, host, pid, "
                           "version, dropped) VALUES(?,?,?,?,?,?,0)",
                           -1, &st, NULL) != SQLITE_OK)
        return db_err(s->db, s->path, err, "cannot add a run");
    sqlite3_bind_text(st, 1, ri->command ? ri->command : "", -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(st, 2, ri->start_wall_ns);
    sqlite3_bind_int64(st, 3, ri->start_mono_ns);
    sqlite3_bind_text(st, 4, ri->host ? ri->host : "", -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(st, 5, ri->pid);
    sqlite3_bind_text(st, 6, GP_VERSION, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) return db_err(s->db, s->path, err, "cannot add a run");
    int64_t run = sqlite3_last_insert_rowid(s->db);
    reserve_make(s->path, run);
    return run;
}

int gp_store_run_end(gp_store *s, int64_t run, int exit_status, int64_t duration_ns,
                     int64_t dropped_seen, gp_err *err)
{
    gp_store_run_release_reserve(s->path, run); /* room for this last write */
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(
            s->db,
            "UPDATE runs SET exit_status = ?1, duration_ns = ?2, dropped = max(?4, (SELECT "
            "coalesce(sum(dropped), 0) FROM processes WHERE run = ?3)), devices = (SELECT "
            "group_concat(d, '; ') FROM (SELECT DISTINCT kind || ': ' || name AS d FROM devices "
            "WHERE proc IN (SELECT id FROM processes WHERE run = ?3))) WHERE id = ?3",
            -1, &st, NULL) != SQLITE_OK)
        return db_err(s->db, s->path, err, "cannot finish the run");
    sqlite3_bind_int(st, 1, exit_status);
    sqlite3_bind_int64(st, 2, duration_ns);
    sqlite3_bind_int64(st, 3, run);
    sqlite3_bind_int64(st, 4, dropped_seen > 0 ? dropped_seen : 0);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) return db_err(s->db, s->path, err, "cannot finish the run");
    return 0;
}

int gp_store_env_kept(const char *name)
{
    static const char *const prefixes[] = {"CUDA_", "OPENCL_", "GPUPROF_", "NVTX_"};
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
        if (!strncmp(name, prefixes[i], strlen(prefixes[i]))) return 1;
    return 0;
}

int gp_store_run_env(gp_store *s, int64_t run, char *const *envp, gp_err *err)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_exec(s->db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(s->db, "INSERT OR REPLACE INTO run_env VALUES(?,?,?)", -1, &st, NULL) !=
            SQLITE_OK) {
        int rc = db_err(s->db, s->path, err, "cannot store the environment");
        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
        return rc;
    }
    int rc = 0;
    for (size_t i = 0; envp && envp[i] && !rc; i++) {
        const char *eq = strchr(envp[i], '=');
        if (!eq || eq == envp[i]) continue;
        size_t nl = (size_t)(eq - envp[i]);
        char *name = gp_xmalloc(nl + 1);
        memcpy(name, envp[i], nl);
        name[nl] = 0;
        if (gp_store_env_kept(name)) {
            char *v = gp_redact_env(name, eq + 1);
            sqlite3_bind_int64(st, 1, run);
            sqlite3_bind_text(st, 2, name, -1, SQLITE_STATIC);
            sqlite3_bind_text(st, 3, v, -1, SQLITE_STATIC);
            if (sqlite3_step(st) != SQLITE_DONE)
                rc = db_err(s->db, s->path, err, "cannot store the environment");
            sqlite3_reset(st);
            free(v);
        }
        free(name);
    }
    sqlite3_finalize(st);
    if (rc || sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
        if (!rc) rc = db_err(s->db, s->path, err, "cannot store the environment");
        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
    }
    return rc;
}

int gp_store_range_stats(gp_store *s, int64_t proc, const gp_store_stat *v, size_t n, gp_err *err)
{
    if (!n) return 0;
    sqlite3_stmt *st = NULL, *ss = NULL;
    if (sqlite3_exec(s->db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(s->db, "INSERT INTO range_stats VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                           -1, &st, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(s->db, "INSERT OR IGNORE INTO strings VALUES(?,?,?)", -1, &ss, NULL) !=
            SQLITE_OK) {
        int rc = db_err(s->db, s->path, err, "cannot store range statistics");
        sqlite3_finalize(st);
        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
        return rc;
    }
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        const gp_store_stat *r = &v[i];
        for (int k = 0; k < 2 && !rc; k++) { /* the texts (kept when committed already) */
            const char *text = k ? r->cat_text : r->name_text;
            if (!text) continue;
            sqlite3_bind_int64(ss, 1, proc);
            sqlite3_bind_int64(ss, 2, k ? r->cat : r->name);
            sqlite3_bind_text(ss, 3, text, -1, SQLITE_STATIC);
            rc = sqlite3_step(ss) == SQLITE_DONE ? 0 : GP_EIO;
            sqlite3_reset(ss);
        }
        if (rc) break;
        sqlite3_bind_int64(st, 1, proc);
        sqlite3_bind_int64(st, 2, r->track);
        sqlite3_bind_int64(st, 3, r->cat);
        sqlite3_bind_int64(st, 4, r->name);
        sqlite3_bind_int(st, 5, r->device);
        sqlite3_bind_int(st, 6, r->backend);
        sqlite3_bind_int64(st, 7, (int64_t)r->count);
        sqlite3_bind_int64(st, 8, r->total_ns);
        sqlite3_bind_int64(st, 9, r->self_ns);
        sqlite3_bind_int64(st, 10, r->min_ns);
        sqlite3_bind_int64(st, 11, r->max_ns);
        sqlite3_bind_int64(st, 12, r->bytes);
        sqlite3_bind_double(st, 13, r->m2);
        sqlite3_bind_int64(st, 14, r->first_ns);
        sqlite3_bind_int64(st, 15, r->last_ns);
        if (r->sketch)
            sqlite3_bind_blob(st, 16, r->sketch, (int)(GP_SKETCH_BUCKETS * sizeof *r->sketch),
                              SQLITE_STATIC);
        else
            sqlite3_bind_null(st, 16);
        rc = sqlite3_step(st) == SQLITE_DONE ? 0 : GP_EIO;
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    sqlite3_finalize(ss);
    if (rc || sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
        rc = db_err(s->db, s->path, err, "cannot store range statistics");
        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
    }
    return rc;
}

/* ---- writer ---- */

typedef struct wtrack {
    int type;
    int64_t id;
    int32_t device;
    char *name;
    int hidden; /* a parent's thread track in a forked child: written once used */
} wtrack;

typedef struct wdev {
    char *kind, *name;
} wdev;

typedef GP_VEC(gp_store_ev) evvec;

typedef struct api_kind_row {
    char *category;
    int id;
} api_kind_row;

struct gp_store_writer {
    sqlite3 *db;
    char *path;
    char *source;
    int64_t run, proc;
    int status_fd; /* GPUPROF_STATUS_FD: the pipe of `gpuprof run`, or -1 */
    int reported;  /* a failure was reported on status_fd */
    int64_t commit_ns;
    size_t max_pending;
    int wait_full; /* gp_store_writer_set_bounded */
    int cache_kb;  /* page cache to set (writer thread), 0 = none */
    pthread_t th;
    int started;

    pthread_mutex_t mu; /* everything below, up to the writer-only part */
    pthread_cond_t wake, done;
    evvec pending;
    gp_strtab *strs;
    uint32_t strs_sent; /* strings handed to the writer thread */
    GP_VEC(wtrack) tracks;
    size_t tracks_sent;
    GP_VEC(uint32_t) renamed; /* sent tracks whose name changed since */
    gp_u64map track_of;
    GP_VEC(wdev) devs;
    size_t devs_sent;
    uint64_t dropped, written;
    /* of dropped, per gp_store_table (0: records lost before the writer) */
    uint64_t dropped_in[GP_ST_MEM + 1];
    uint64_t flush_req, flush_done;
    int stop;
    int err;

    /* the checkpointer (writer thread and checkpointer; its own mutex) */
    struct ckpt {
        pthread_mutex_t mu;
        pthread_cond_t cv;
        int want, stop, running;
        pthread_t th;
        sqlite3 *db; /* the checkpointer's connection while open (under mu) */
    } ck;

    /* writer thread only */
    evvec batch;
    int64_t last_taken;           /* `taken` of the newest batch committed whole */
    sqlite3_stmt *st[8];          /* one-row inserts by gp_store_table */
    sqlite3_stmt *multi[8];       /* MULTI-row inserts */
    int64_t *sh[8], *sh_multi[8]; /* their parameters' bound values (binder) */
    sqlite3_stmt *st_str, *st_track, *st_dev, *st_proc, *st_commit;
    sqlite3_stmt *st_max[8];                  /* the largest rowid of each event table */
    sqlite3_stmt *st_rows_add, *st_rows_grow; /* event_rows */
    /* the event_rows range of this process that the newest commit left per
     * event table (0, 0: none yet), and the one the open transaction makes */
    struct rowrange {
        int64_t first, last;
    } rows[8], rows_tx[8];
    /* api_kinds rows of this writer's source (category -> id), read at
     * start, and the api_kinds.id of each string id sent (0: none) */
    GP_VEC(api_kind_row) api_kinds;
    GP_VEC(uint8_t) kind_of_str;
};

/* api_calls.kind of an API call of category string id cat. */
static int api_kind_of(const gp_store_writer *w, uint32_t cat)
{
    return cat < w->kind_of_str.n ? w->kind_of_str.v[cat] : 0;
}

/* Rows go in with multi-row INSERTs of MULTI rows (one statement step per
 * MULTI events) plus a one-row statement for the rest: several times faster
 * than one step per row. */
#define MULTI 64
/* Events per transaction: ~100 ms of writing at the measured ~2 M events/s. */
#define CHUNK 200000

static void bind_opt(sqlite3_stmt *st, int i, int64_t v)
{
    if (v == GP_NONE)
        sqlite3_bind_null(st, i);
    else
        sqlite3_bind_int64(st, i, v);
}

/* A statement and the value each of its parameters was last bound to: a
 * statement keeps its bindings across sqlite3_reset, so a parameter whose
 * value did not change since the previous step is not bound again (most
 * columns repeat from one event to the next: process, track, device, NULLs,
 * launch dimensions). sh[i] is parameter i's value (GP_NONE: NULL; a
 * double's bits); SH_UNSET, never taken as equal, after a prepare. */
#define SH_UNSET INT64_MIN
typedef struct binder {
    sqlite3_stmt *st;
    int64_t *sh;
} binder;

/* 1 when parameter i of d's statement holds v already; else records v
 * (the caller binds it). */
static int bound(binder *d, int i, int64_t v)
{
    if (d->sh[i] == v && v != SH_UNSET) return 1;
    d->sh[i] = v;
    return 0;
}

static void bind_v(binder *d, int i, int64_t v)
{
    if (!bound(d, i, v)) sqlite3_bind_int64(d->st, i, v);
}

static void bind_o(binder *d, int i, int64_t v) /* GP_NONE: NULL */
{
    if (!bound(d, i, v)) bind_opt(d->st, i, v);
}

static void bind_d(binder *d, int i, double x)
{
    int64_t v;
    memcpy(&v, &x, sizeof v);
    if (!bound(d, i, v)) sqlite3_bind_double(d->st, i, x);
}

/* Binds e's columns to parameters b+1 .. b+ncol of d's statement; api_kind
 * is api_calls.kind (api_kinds.id) of an API call. */
static void bind_event(binder *d, int b, int64_t proc, const gp_store_ev *e, int api_kind)
{
    bind_v(d, b + 1, proc);
    bind_v(d, b + 2, e->track);
    switch (e->table) {
    case GP_ST_API:
    case GP_ST_SLICE:
        bind_v(d, b + 3, e->cat);
        bind_v(d, b + 4, e->name);
        bind_v(d, b + 5, e->ts);
        bind_v(d, b + 6, e->dur);
        bind_o(d, b + 7, e->corr);
        if (e->table == GP_ST_API)
            bind_v(d, b + 8, api_kind);
        else /* slices.inline_child_ns */
            bind_o(d, b + 8, e->inline_child_ns > 0 ? e->inline_child_ns : GP_NONE);
        break;
    case GP_ST_KERNEL:
        bind_v(d, b + 3, e->name);
        bind_v(d, b + 4, e->ts);
        bind_v(d, b + 5, e->dur);
        bind_o(d, b + 6, e->queued);
        bind_o(d, b + 7, e->submit);
        bind_o(d, b + 8, e->corr);
        bind_o(d, b + 9, e->device);
        bind_o(d, b + 10, e->context);
        bind_o(d, b + 11, e->stream);
        for (int k = 0; k < 3; k++) {
            bind_v(d, b + 12 + k, e->grid[k]);
            bind_v(d, b + 15 + k, e->block[k]);
        }
        bind_o(d, b + 18, e->registers);
        bind_o(d, b + 19, e->shared_mem);
        break;
    case GP_ST_COPY:
        bind_v(d, b + 3, e->cat);
        bind_v(d, b + 4, e->name);
        bind_v(d, b + 5, e->ts);
        bind_v(d, b + 6, e->dur);
        bind_o(d, b + 7, e->queued);
        bind_o(d, b + 8, e->submit);
        bind_o(d, b + 9, e->corr);
        bind_o(d, b + 10, e->device);
        bind_o(d, b + 11, e->context);
        bind_o(d, b + 12, e->stream);
        bind_o(d, b + 13, e->bytes);
        bind_v(d, b + 14, e->copy_kind);
        bind_v(d, b + 15, e->src_kind);
        bind_v(d, b + 16, e->dst_kind);
        break;
    case GP_ST_INSTANT:
        bind_v(d, b + 3, e->cat);
        bind_v(d, b + 4, e->name);
        bind_v(d, b + 5, e->ts);
        break;
    case GP_ST_COUNTER:
        bind_v(d, b + 3, e->name);
        bind_v(d, b + 4, e->ts);
        bind_d(d, b + 5, e->value);
        break;
    case GP_ST_MEM:
        bind_v(d, b + 3, e->ts);
        bind_v(d, b + 4, e->addr);
        bind_v(d, b + 5, e->bytes);
        bind_o(d, b + 6, e->device);
        break;
    }
}

static int step_reset(sqlite3_stmt *st)
{
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? 0 : GP_EIO;
}

/* The largest rowid of event table t now (0 when empty), or -1 on error. */
static int64_t max_rowid(gp_store_writer *w, int t)
{
    sqlite3_stmt *st = w->st_max[t];
    int64_t v = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -1;
    sqlite3_reset(st);
    return v;
}

/* Records in event_rows that this transaction appended rows before+1 ..
 * before+m to event table t (docs/store.md, "Which rows are a process's"):
 * it grows this process's newest range of the table when the rows follow
 * it directly (no other process wrote the table in between), and starts a
 * new range otherwise. SQLite appends a row at the table's largest rowid
 * + 1 while that is below 2^63 - 1; that the last row is at before + m
 * checks that the m rows are exactly that stretch. */
static int note_rows(gp_store_writer *w, int t, int64_t before, size_t m)
{
    int64_t last = sqlite3_last_insert_rowid(w->db);
    if (before < 0 || before > INT64_MAX - (int64_t)m || last != before + (int64_t)m) return GP_EIO;
    struct rowrange *r = &w->rows_tx[t];
    sqlite3_stmt *st;
    if (r->last > 0 && r->last == before) {
        st = w->st_rows_grow; /* last_rowid = ?1 WHERE tbl, proc, first_rowid */
        sqlite3_bind_int64(st, 1, last);
        sqlite3_bind_int(st, 2, t);
        sqlite3_bind_int64(st, 3, w->proc);
        sqlite3_bind_int64(st, 4, r->first);
    } else {
        r->first = before + 1;
        st = w->st_rows_add;
        sqlite3_bind_int(st, 1, t);
        sqlite3_bind_int64(st, 2, w->proc);
        sqlite3_bind_int64(st, 3, r->first);
        sqlite3_bind_int64(st, 4, last);
    }
    r->last = last;
    return step_reset(st);
}

/* Inserts the batch's events table by table (each table keeps the order of
 * its events, which is the order the reader returns). */
static int write_events(gp_store_writer *w, size_t from, size_t to)
{
    size_t n = to - from;
    if (!n) return 0;
    uint32_t *idx = malloc(n * sizeof *idx);
    if (!idx) return GP_ENOMEM;
    int rc = 0;
    /* one pass: the events' indexes grouped by table, in order (a pass per
     * table read the whole batch seven times) */
    size_t start[GP_ST_MEM + 2] = {0};
    for (size_t i = from; i < to; i++) {
        unsigned t = w->batch.v[i].table;
        if (t >= GP_ST_API && t <= GP_ST_MEM) start[t + 1]++;
    }
    for (int t = GP_ST_API; t <= GP_ST_MEM; t++) start[t + 1] += start[t];
    size_t fill[GP_ST_MEM + 1];
    memcpy(fill, start, sizeof fill);
    for (size_t i = from; i < to; i++) {
        unsigned t = w->batch.v[i].table;
        if (t >= GP_ST_API && t <= GP_ST_MEM) idx[fill[t]++] = (uint32_t)i;
    }
    for (int t = GP_ST_API; t <= GP_ST_MEM && !rc; t++) {
        uint32_t *tidx = idx + start[t];
        size_t m = start[t + 1] - start[t];
        size_t i = 0;
        if (!m) continue;
        int64_t before = max_rowid(w, t);
        binder dm = {w->multi[t], w->sh_multi[t]}, d1 = {w->st[t], w->sh[t]};
        for (; i + MULTI <= m && !rc; i += MULTI) {
            for (int r = 0; r < MULTI; r++) {
                const gp_store_ev *e = &w->batch.v[tidx[i + r]];
                bind_event(&dm, r * tables[t].ncol, w->proc, e, api_kind_of(w, e->cat));
            }
            rc = step_reset(w->multi[t]);
        }
        for (; i < m && !rc; i++) {
            const gp_store_ev *e = &w->batch.v[tidx[i]];
            bind_event(&d1, 0, w->proc, e, api_kind_of(w, e->cat));
            rc = step_reset(w->st[t]);
        }
        if (!rc) rc = note_rows(w, t, before, m);
    }
    free(idx);
    return rc;
}

/* Writes one batch (strings, tracks, devices, events, counts) in one
 * transaction. Called by the writer thread without the mutex held; the
 * metadata slices were copied under the mutex. */
static int write_track(gp_store_writer *w, const wtrack *t, int64_t id)
{
    sqlite3_stmt *st = w->st_track;
    sqlite3_bind_int64(st, 1, w->proc);
    sqlite3_bind_int64(st, 2, id);
    sqlite3_bind_int(st, 3, t->type);
    sqlite3_bind_int64(st, 4, t->id);
    bind_opt(st, 5, t->device);
    if (t->name)
        sqlite3_bind_text(st, 6, t->name, -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(st, 6);
    return step_reset(st);
}

static int write_batch(gp_store_writer *w, char **strs, uint32_t str_first, uint32_t nstr,
                       wtrack *tr, size_t tr_first, size_t ntr, wtrack *ren, const uint32_t *ren_id,
                       size_t nren, wdev *dv, size_t ndv, uint64_t written, uint64_t dropped,
                       size_t from, size_t to, int64_t taken)
{
    int rc = 0;
    /* IMMEDIATE: the write lock first (waiting for other writers through the
     * busy timeout); a read first (max_rowid) would start a read transaction
     * that cannot become a write one once another writer has committed */
    if (sqlite3_exec(w->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) return GP_EIO;
    memcpy(w->rows_tx, w->rows, sizeof w->rows);
    for (uint32_t i = 0; i < nstr && !rc; i++) {
        /* the API kind a call of this category gets (api_kinds) */
        uint32_t id = str_first + i;
        while (w->kind_of_str.n <= id && !rc)
            if (GP_VEC_PUSH(w->kind_of_str, 0)) rc = GP_ENOMEM;
        for (size_t k = 0; k < w->api_kinds.n && !rc; k++)
            if (!strcmp(w->api_kinds.v[k].category, strs[i]))
                w->kind_of_str.v[id] = (uint8_t)w->api_kinds.v[k].id;
        if (rc) break;
        sqlite3_bind_int64(w->st_str, 1, w->proc);
        sqlite3_bind_int64(w->st_str, 2, str_first + i);
        sqlite3_bind_text(w->st_str, 3, strs[i], -1, SQLITE_STATIC);
        if (sqlite3_step(w->st_str) != SQLITE_DONE) rc = GP_EIO;
        sqlite3_reset(w->st_str);
    }
    for (size_t i = 0; i < ntr && !rc; i++)
        if (!tr[i].hidden) rc = write_track(w, &tr[i], (int64_t)(tr_first + i));
    for (size_t i = 0; i < nren && !rc; i++) rc = write_track(w, &ren[i], ren_id[i]);
    for (size_t i = 0; i < ndv && !rc; i++) {
        sqlite3_bind_int64(w->st_dev, 1, w->proc);
        sqlite3_bind_text(w->st_dev, 2, dv[i].kind, -1, SQLITE_STATIC);
        sqlite3_bind_text(w->st_dev, 3, dv[i].name, -1, SQLITE_STATIC);
        if (sqlite3_step(w->st_dev) != SQLITE_DONE) rc = GP_EIO;
        sqlite3_reset(w->st_dev);
    }
    if (!rc) rc = write_events(w, from, to);
    if (!rc) {
        sqlite3_bind_int64(w->st_proc, 1, (int64_t)(written + to));
        sqlite3_bind_int64(w->st_proc, 2, (int64_t)dropped);
        sqlite3_bind_null(w->st_proc, 3);
        sqlite3_bind_int64(w->st_proc, 4, w->proc);
        if (sqlite3_step(w->st_proc) != SQLITE_DONE) rc = GP_EIO;
        sqlite3_reset(w->st_proc);
    }
    if (!rc) {
        sqlite3_bind_int64(w->st_commit, 1, w->proc);
        sqlite3_bind_int64(w->st_commit, 2, taken);
        sqlite3_bind_int64(w->st_commit, 3, (int64_t)(written + to));
        if (sqlite3_step(w->st_commit) != SQLITE_DONE) rc = GP_EIO;
        sqlite3_reset(w->st_commit);
    }
    if (rc || sqlite3_exec(w->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
        sqlite3_exec(w->db, "ROLLBACK", NULL, NULL, NULL);
        return GP_EIO;
    }
    memcpy(w->rows, w->rows_tx, sizeof w->rows);
    return 0;
}

/* ---- what a writer tells `gpuprof run` besides the store ----
 * A store that cannot be written (disk full, file size limit) cannot hold
 * the count of what it lost either. `gpuprof run` passes the write end of a
 * pipe in GPUPROF_STATUS_FD; each writer writes one line there when its
 * first write fails and one when it stops:
 *   "gpuprof-writer PID WRITTEN DROPPED ERR\n"  (ERR: 0 or a GP_E* code)
 * Lines are shorter than PIPE_BUF (atomic) and written without blocking. */
static int status_fd_from_env(void)
{
    const char *e = getenv("GPUPROF_STATUS_FD");
    if (!e || !*e) return -1;
    char *end;
    long fd = strtol(e, &end, 10);
    struct stat sb;
    if (*end || fd < 0 || fd > 1 << 20 || fstat((int)fd, &sb) != 0 || !S_ISFIFO(sb.st_mode))
        return -1; /* not ours (a leaked variable): never write to a random fd */
    return (int)fd;
}

/* Counts n events of v as dropped, in all and per table (w->mu held). */
static void drop_events(gp_store_writer *w, const gp_store_ev *v, size_t n)
{
    w->dropped += n;
    for (size_t i = 0; i < n; i++) w->dropped_in[v[i].table <= GP_ST_MEM ? v[i].table : 0]++;
}

static void status_report(int fd, uint64_t written, uint64_t dropped, int err)
{
    if (fd < 0) return;
    char line[128];
    int n = snprintf(line, sizeof line, "gpuprof-writer %ld %llu %llu %d\n", (long)getpid(),
                     (unsigned long long)written, (unsigned long long)dropped, err);
    if (n > 0 && (size_t)n < sizeof line) {
        int fl = fcntl(fd, F_GETFL);
        if (fl >= 0 && !(fl & O_NONBLOCK)) fcntl(fd, F_SETFL, fl | O_NONBLOCK);
        ssize_t k = write(fd, line, (size_t)n);
        (void)k; /* a full pipe loses the line; `gpuprof run` still has the store */
    }
}

/* SQLite's writes in the caller's thread must not kill the recorded program:
 * under a file size limit (ulimit -f) a write past it raises SIGXFSZ, whose
 * default action ends the process. Between xfsz_block and xfsz_unblock the
 * signal is blocked in this thread (write then fails with EFBIG, an error
 * the writer counts) and one raised meanwhile is consumed. */
typedef gp_xfsz_guard xfsz_guard;
#define xfsz_block   gp_xfsz_block
#define xfsz_unblock gp_xfsz_unblock

void gp_xfsz_block(gp_xfsz_guard *g)
{
    sigset_t x, pend;
    sigemptyset(&x);
    sigaddset(&x, SIGXFSZ);
    pthread_sigmask(SIG_BLOCK, &x, &g->old);
    g->was_pending = sigpending(&pend) == 0 && sigismember(&pend, SIGXFSZ);
}

void gp_xfsz_unblock(gp_xfsz_guard *g)
{
    sigset_t x, pend;
    sigemptyset(&x);
    sigaddset(&x, SIGXFSZ);
    if (!g->was_pending && sigpending(&pend) == 0 && sigismember(&pend, SIGXFSZ)) {
        struct timespec zero = {0, 0};
        sigtimedwait(&x, NULL, &zero);
    }
    pthread_sigmask(SIG_SETMASK, &g->old, NULL);
}

/* Starts the writer thread with every signal blocked: the recorded
 * program's signals go to its own threads, and SIGXFSZ in the writer makes
 * a write fail instead of ending the program. */
static int writer_spawn(gp_store_writer *w, void *(*fn)(void *))
{
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&w->th, NULL, fn, w);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
#ifdef __linux__
    if (rc == 0) pthread_setname_np(w->th, "gpuprof-store"); /* ps, bench/sustained.sh */
#endif
    return rc;
}

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* ---- the checkpointer ----
 * SQLite copies the WAL into the database file at a checkpoint, with an
 * fdatasync of each (synchronous=NORMAL). Run by the writer in its own
 * commits (SQLite's wal_autocheckpoint), that copy and those syncs stopped
 * the writing: a third of bench/store.sh's time went to the checkpoint of
 * 143 MB of WAL at close. A second thread with its own connection runs
 * PASSIVE checkpoints instead, woken by the writer's commits once the WAL
 * holds CKPT_SOFT pages; the writer goes on writing meanwhile (WAL readers
 * and checkpoints do not block a WAL writer). Bounds as before: a WAL of
 * CKPT_HARD pages (1 GiB of 64 KiB pages, SQLite's old automatic bound
 * here) is checkpointed by the writer itself, and the next transaction
 * then starts the WAL file over; a WAL fully copied starts over at the next
 * transaction too. The checkpointer lives within writer_main (a fork joins
 * both). */
#define CKPT_SOFT 512
#define CKPT_HARD 16384

static int wal_hook(void *arg, sqlite3 *db, const char *name, int frames)
{
    gp_store_writer *w = arg;
    if (frames >= CKPT_HARD) {
        /* BUSY (the checkpointer is at work) leaves it to the next commit */
        sqlite3_wal_checkpoint_v2(db, name, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
    } else if (frames >= CKPT_SOFT && w->ck.running) {
        pthread_mutex_lock(&w->ck.mu);
        w->ck.want = 1;
        pthread_cond_signal(&w->ck.cv);
        pthread_mutex_unlock(&w->ck.mu);
    }
    return SQLITE_OK;
}

static void *ckpt_main(void *arg)
{
    gp_store_writer *w = arg;
    sqlite3 *db = NULL;
    gp_err err = {0};
    /* no connection (cannot happen short of a full fd table): the writer's
     * hard bound still checkpoints */
    if (open_db(w->path, 0, &db, &err)) db = NULL;
    pthread_mutex_lock(&w->ck.mu);
    w->ck.db = db;
    for (;;) {
        while (!w->ck.stop && !w->ck.want) pthread_cond_wait(&w->ck.cv, &w->ck.mu);
        if (w->ck.stop) break;
        w->ck.want = 0;
        pthread_mutex_unlock(&w->ck.mu);
        if (db) sqlite3_wal_checkpoint_v2(db, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
        pthread_mutex_lock(&w->ck.mu);
    }
    w->ck.db = NULL;
    pthread_mutex_unlock(&w->ck.mu);
    sqlite3_close(db); /* not the last connection: no checkpoint of its own */
    return NULL;
}

/* Starts the checkpointer (in the writer thread: every signal blocked,
 * SIGXFSZ included, which its writes need as the writer's do). Without it
 * the writer's hard bound still checkpoints. */
static void ckpt_start(gp_store_writer *w)
{
    pthread_mutex_init(&w->ck.mu, NULL);
    pthread_cond_init(&w->ck.cv, NULL);
    w->ck.want = w->ck.stop = 0;
    w->ck.db = NULL;
    w->ck.running = pthread_create(&w->ck.th, NULL, ckpt_main, w) == 0;
#ifdef __linux__
    if (w->ck.running) pthread_setname_np(w->ck.th, "gpuprof-ckpt"); /* as gpuprof-store */
#endif
}

static void ckpt_stop(gp_store_writer *w)
{
    if (w->ck.running) {
        pthread_mutex_lock(&w->ck.mu);
        w->ck.stop = 1;
        /* a checkpoint under way stops at its next page (what it copied
         * stays valid; the close or the next writer copies the rest): a
         * fork or a stop does not wait for tens of MB to be copied */
        if (w->ck.db) sqlite3_interrupt(w->ck.db);
        pthread_cond_signal(&w->ck.cv);
        pthread_mutex_unlock(&w->ck.mu);
        pthread_join(w->ck.th, NULL);
        w->ck.running = 0;
    }
    pthread_cond_destroy(&w->ck.cv);
    pthread_mutex_destroy(&w->ck.mu);
}

static void *writer_main(void *arg)
{
    gp_store_writer *w = arg;
    ckpt_start(w);
    pthread_mutex_lock(&w->mu);
    int64_t prev_taken = now_ns();
    for (;;) {
        /* wait for the commit period, a flush request, a stop or a full
         * transaction's worth of events (CHUNK). The period counts from the
         * previous batch's take, not from the end of its writing: a writer
         * behind its producers then never idles with events waiting (it
         * idled a whole period after each batch, a fifth of its time when
         * a batch took 400 ms to write). */
        int64_t left = prev_taken + w->commit_ns - now_ns();
        if (left > 0) {
            struct timespec dl;
            clock_gettime(CLOCK_REALTIME, &dl);
            int64_t t = (int64_t)dl.tv_nsec + left;
            dl.tv_sec += t / 1000000000;
            dl.tv_nsec = t % 1000000000;
            while (!w->stop && w->flush_req == w->flush_done && w->pending.n < CHUNK) {
                if (pthread_cond_timedwait(&w->wake, &w->mu, &dl) == ETIMEDOUT) break;
            }
        }
        uint64_t req = w->flush_req;
        int stop = w->stop;
        int64_t taken = now_ns(); /* everything queued before now is in this batch */
        prev_taken = taken;
        /* take the queued events and the new metadata */
        evvec tmp = w->batch;
        w->batch = w->pending;
        w->pending = tmp;
        w->pending.n = 0;
        if (w->wait_full) pthread_cond_broadcast(&w->done); /* room for a waiting put */
        uint32_t s0 = w->strs_sent, ns = gp_strtab_count(w->strs) - s0;
        char **strs = ns ? gp_xmalloc(ns * sizeof *strs) : NULL;
        for (uint32_t i = 0; i < ns; i++) strs[i] = gp_xstrdup(gp_strtab_get(w->strs, s0 + i));
        w->strs_sent += ns;
        size_t t0 = w->tracks_sent, nt = w->tracks.n - t0;
        wtrack *tr = nt ? gp_xmalloc(nt * sizeof *tr) : NULL;
        for (size_t i = 0; i < nt; i++) {
            tr[i] = w->tracks.v[t0 + i];
            tr[i].name = tr[i].name ? gp_xstrdup(tr[i].name) : NULL;
        }
        w->tracks_sent += nt;
        /* renamed tracks are written again (INSERT OR REPLACE) */
        size_t nren = w->renamed.n;
        wtrack *ren = nren ? gp_xmalloc(nren * sizeof *ren) : NULL;
        uint32_t *ren_id = nren ? gp_xmalloc(nren * sizeof *ren_id) : NULL;
        for (size_t i = 0; i < nren; i++) {
            ren_id[i] = w->renamed.v[i];
            ren[i] = w->tracks.v[ren_id[i]];
            ren[i].name = ren[i].name ? gp_xstrdup(ren[i].name) : NULL;
        }
        w->renamed.n = 0;
        size_t d0 = w->devs_sent, nd = w->devs.n - d0;
        wdev *dv = nd ? gp_xmalloc(nd * sizeof *dv) : NULL;
        for (size_t i = 0; i < nd; i++) {
            dv[i].kind = gp_xstrdup(w->devs.v[d0 + i].kind);
            dv[i].name = gp_xstrdup(w->devs.v[d0 + i].name);
        }
        w->devs_sent += nd;
        uint64_t written = w->written, dropped = w->dropped;
        int cache_kb = w->cache_kb;
        w->cache_kb = 0;
        pthread_mutex_unlock(&w->mu);
        if (cache_kb > 0) {
            char pragma[64];
            snprintf(pragma, sizeof pragma, "PRAGMA cache_size=-%d", cache_kb);
            sqlite3_exec(w->db, pragma, NULL, NULL, NULL);
        }

        /* in transactions of at most CHUNK events, so that a backlog (a
         * producer faster than the writer) still commits every ~100 ms; the
         * commits row names `taken` once the whole batch is in */
        int rc = 0;
        size_t done = 0, total = w->batch.n;
        if (ns || nt || nd || nren || total || stop || req) {
            do {
                size_t to = total - done > CHUNK ? done + CHUNK : total;
                int first = done == 0;
                rc = write_batch(w, strs, s0, first ? ns : 0, tr, t0, first ? nt : 0, ren, ren_id,
                                 first ? nren : 0, dv, first ? nd : 0, written, dropped, done, to,
                                 to == total ? taken : w->last_taken);
                if (!rc) done = to;
            } while (!rc && done < total);
            if (!rc) w->last_taken = taken;
        }
        for (size_t i = 0; i < nren; i++) free(ren[i].name);
        free(ren);
        free(ren_id);
        for (uint32_t i = 0; i < ns; i++) free(strs[i]);
        free(strs);
        for (size_t i = 0; i < nt; i++) free(tr[i].name);
        free(tr);
        for (size_t i = 0; i < nd; i++) {
            free(dv[i].kind);
            free(dv[i].name);
        }
        free(dv);

        pthread_mutex_lock(&w->mu);
        w->written += done;
        if (rc) {
            if (!w->err) w->err = rc;
            drop_events(w, w->batch.v + done, total - done); /* lost: counted, never hidden */
            if (!w->reported) {
                w->reported = 1;
                status_report(w->status_fd, w->written, w->dropped, w->err);
            }
        }
        w->batch.n = 0;
        w->flush_done = req;
        pthread_cond_broadcast(&w->done);
        if (stop && w->pending.n == 0) break;
    }
    pthread_mutex_unlock(&w->mu);
    ckpt_stop(w);
    return NULL;
}

static int prepare_all(gp_store_writer *w, gp_err *err)
{
    gp_sbuf q = {0};
    for (int i = GP_ST_API; i <= GP_ST_MEM; i++) {
        for (int rows = 1; rows <= MULTI; rows += MULTI - 1) {
            gp_sbuf_reset(&q);
            gp_sbuf_printf(&q, "INSERT INTO %s VALUES", tables[i].table);
            for (int r = 0; r < rows; r++) {
                gp_sbuf_puts(&q, r ? ",(" : "(");
                for (int c = 0; c < tables[i].ncol; c++) gp_sbuf_puts(&q, c ? ",?" : "?");
                gp_sbuf_putc(&q, ')');
            }
            sqlite3_stmt **dst = rows == 1 ? &w->st[i] : &w->multi[i];
            if (sqlite3_prepare_v2(w->db, gp_sbuf_cstr(&q), -1, dst, NULL) != SQLITE_OK) {
                gp_sbuf_free(&q);
                return db_err(w->db, w->path, err, "prepare");
            }
            /* parameters 1 .. rows * ncol, none bound yet */
            int64_t **sh = rows == 1 ? &w->sh[i] : &w->sh_multi[i];
            size_t np = (size_t)rows * (size_t)tables[i].ncol + 1;
            free(*sh);
            *sh = gp_xmalloc(np * sizeof **sh);
            for (size_t k = 0; k < np; k++) (*sh)[k] = SH_UNSET;
        }
        gp_sbuf_reset(&q);
        gp_sbuf_printf(&q, "SELECT coalesce(max(rowid), 0) FROM %s", tables[i].table);
        if (sqlite3_prepare_v2(w->db, gp_sbuf_cstr(&q), -1, &w->st_max[i], NULL) != SQLITE_OK) {
            gp_sbuf_free(&q);
            return db_err(w->db, w->path, err, "prepare");
        }
    }
    gp_sbuf_free(&q);
    if (sqlite3_prepare_v2(w->db, "INSERT OR REPLACE INTO strings VALUES(?,?,?)", -1, &w->st_str,
                           NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(w->db, "INSERT OR REPLACE INTO tracks VALUES(?,?,?,?,?,?)", -1,
                           &w->st_track, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(w->db, "INSERT INTO devices VALUES(?,?,?)", -1, &w->st_dev, NULL) !=
            SQLITE_OK ||
        sqlite3_prepare_v2(w->db,
                           "UPDATE processes SET events = ?1, dropped = ?2, end_mono_ns = "
                           "coalesce(?3, end_mono_ns) WHERE id = ?4",
                           -1, &w->st_proc, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(w->db, "INSERT OR REPLACE INTO commits VALUES(?,?,?)", -1, &w->st_commit,
                           NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(w->db, "INSERT INTO event_rows VALUES(?,?,?,?)", -1, &w->st_rows_add,
                           NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(w->db,
                           "UPDATE event_rows SET last_rowid = ?1 WHERE tbl = ?2 AND proc = ?3 "
                           "AND first_rowid = ?4",
                           -1, &w->st_rows_grow, NULL) != SQLITE_OK)
        return db_err(w->db, w->path, err, "prepare");
    return 0;
}

static void finalize_all(gp_store_writer *w)
{
    for (int i = 0; i < 8; i++) {
        sqlite3_finalize(w->st[i]);
        sqlite3_finalize(w->multi[i]);
        sqlite3_finalize(w->st_max[i]);
        free(w->sh[i]);
        free(w->sh_multi[i]);
        w->sh[i] = w->sh_multi[i] = NULL;
    }
    sqlite3_finalize(w->st_rows_add);
    sqlite3_finalize(w->st_rows_grow);
    sqlite3_finalize(w->st_str);
    sqlite3_finalize(w->st_track);
    sqlite3_finalize(w->st_dev);
    sqlite3_finalize(w->st_proc);
    sqlite3_finalize(w->st_commit);
}

static void api_kinds_free(gp_store_writer *w)
{
    for (size_t i = 0; i < w->api_kinds.n; i++) free(w->api_kinds.v[i].category);
    GP_VEC_FREE(w->api_kinds);
}

static void writer_free(gp_store_writer *w)
{
    finalize_all(w);
    sqlite3_close(w->db);
    gp_strtab_destroy(w->strs);
    for (size_t i = 0; i < w->tracks.n; i++) free(w->tracks.v[i].name);
    GP_VEC_FREE(w->tracks);
    GP_VEC_FREE(w->renamed);
    for (size_t i = 0; i < w->devs.n; i++) {
        free(w->devs.v[i].kind);
        free(w->devs.v[i].name);
    }
    GP_VEC_FREE(w->devs);
    gp_u64map_free(&w->track_of);
    GP_VEC_FREE(w->pending);
    GP_VEC_FREE(w->batch);
    api_kinds_free(w);
    GP_VEC_FREE(w->kind_of_str);
    pthread_mutex_destroy(&w->mu);
    pthread_cond_destroy(&w->wake);
    pthread_cond_destroy(&w->done);
    free(w->path);
    free(w->source);
    free(w);
}

/* Reads the api_kinds rows of w's source: how its API calls get their kind. */
static int api_kinds_load(gp_store_writer *w, gp_err *err)
{
    api_kinds_free(w);
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(w->db,
                           "SELECT id, category FROM api_kinds WHERE source = ? AND category IS "
                           "NOT NULL ORDER BY id",
                           -1, &st, NULL) != SQLITE_OK)
        return db_err(w->db, w->path, err, "api_kinds");
    sqlite3_bind_text(st, 1, w->source, -1, SQLITE_STATIC);
    int r;
    while ((r = sqlite3_step(st)) == SQLITE_ROW) {
        api_kind_row k = {gp_xstrdup((const char *)sqlite3_column_text(st, 1)),
                          sqlite3_column_int(st, 0)};
        if (GP_VEC_PUSH(w->api_kinds, k)) {
            free(k.category);
            r = SQLITE_NOMEM;
            break;
        }
    }
    sqlite3_finalize(st);
    if (r != SQLITE_DONE) return db_err(w->db, w->path, err, "api_kinds");
    return 0;
}

/* Opens the writer's own connection and prepares its statements. */
static int writer_connect(gp_store_writer *w, gp_err *err)
{
    if (open_db(w->path, 1, &w->db, err) || gp_store_ensure_schema_(w->db, w->path, err) ||
        api_kinds_load(w, err))
        return GP_EIO;
    /* the writer appends a lot: a bigger page cache; its WAL is copied into
     * the store by the checkpointer (wal_hook replaces SQLite's automatic
     * checkpoints in the writer's own commits) */
    sqlite3_exec(w->db, "PRAGMA cache_size=-32768;", NULL, NULL, NULL);
    sqlite3_wal_hook(w->db, wal_hook, w);
    return prepare_all(w, err);
}

/* Closes the connection (statements first); w->db is NULL afterwards. */
static void writer_disconnect(gp_store_writer *w)
{
    finalize_all(w);
    memset(w->st, 0, sizeof w->st);
    memset(w->multi, 0, sizeof w->multi);
    memset(w->st_max, 0, sizeof w->st_max);
    w->st_str = w->st_track = w->st_dev = w->st_proc = w->st_commit = NULL;
    w->st_rows_add = w->st_rows_grow = NULL;
    sqlite3_close(w->db);
    w->db = NULL;
}

/* Inserts this process's row under w->run and sets w->proc. */
static int writer_add_process(gp_store_writer *w, gp_err *err)
{
    sqlite3_stmt *st = NULL;
    char exe[1024] = "";
    ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[k > 0 ? k : 0] = 0;
    struct timespec wall;
    clock_gettime(CLOCK_REALTIME, &wall);
    int64_t mono = now_ns();
    if (sqlite3_prepare_v2(w->db,
                           "INSERT INTO processes(run, pid, ppid, exe, source, start_mono_ns, "
                           "start_wall_ns) VALUES(?,?,?,?,?,?,?)",
                           -1, &st, NULL) != SQLITE_OK)
        return db_err(w->db, w->path, err, "cannot add the process");
    sqlite3_bind_int64(st, 1, w->run);
    sqlite3_bind_int64(st, 2, getpid());
    sqlite3_bind_int64(st, 3, getppid());
    sqlite3_bind_text(st, 4, exe, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 5, w->source, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 6, mono);
    sqlite3_bind_int64(st, 7, (int64_t)wall.tv_sec * 1000000000 + wall.tv_nsec);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) return db_err(w->db, w->path, err, "cannot add the process");
    w->proc = sqlite3_last_insert_rowid(w->db);
    memset(w->rows, 0, sizeof w->rows); /* a new process: no range of it yet */
    return 0;
}

gp_store_writer *gp_store_writer_start(const char *path, int64_t run, const gp_store_writer_opts *o,
                                       gp_err *err)
{
    gp_store_writer *w = gp_xcalloc(1, sizeof *w);
    w->path = gp_xstrdup(path);
    w->run = run;
    w->source = gp_xstrdup(o && o->source ? o->source : "");
    w->commit_ns = (int64_t)(o && o->commit_ms > 0 ? o->commit_ms : 100) * 1000000;
    w->max_pending = o && o->max_pending ? o->max_pending : ((size_t)8 << 20);
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->wake, NULL);
    pthread_cond_init(&w->done, NULL);
    w->status_fd = status_fd_from_env();
    w->strs = gp_strtab_create();
    if (!w->strs) {
        gp_err_set(err, GP_ENOMEM, "out of memory");
        goto fail;
    }
    xfsz_guard g;
    xfsz_block(&g);
    int rc = writer_connect(w, err) || writer_add_process(w, err);
    xfsz_unblock(&g);
    if (rc) goto fail;
    if (writer_spawn(w, writer_main) != 0) {
        gp_err_set(err, GP_EIO, "cannot start the store writer thread");
        goto fail;
    }
    w->started = 1;
    return w;
fail:
    /* nothing of this process will be recorded: `gpuprof run` must know */
    status_report(w->status_fd, 0, 0, GP_EIO);
    writer_free(w);
    return NULL;
}

/* Stops the writer thread after it has committed everything queued (mu not
 * held by the caller). */
static void writer_join(gp_store_writer *w)
{
    pthread_mutex_lock(&w->mu);
    int started = w->started;
    if (started) {
        w->stop = 1;
        w->flush_req++;
        pthread_cond_signal(&w->wake);
    }
    pthread_mutex_unlock(&w->mu);
    if (!started) return;
    pthread_join(w->th, NULL);
    pthread_mutex_lock(&w->mu);
    w->started = 0;
    w->stop = 0;
    pthread_cond_broadcast(&w->done); /* flushes waiting on a stopped writer return */
    pthread_mutex_unlock(&w->mu);
}

/* Reconnects and restarts the thread after a fork (mu held by the caller). */
static void writer_restart(gp_store_writer *w, int child)
{
    gp_err err = {0};
    xfsz_guard g;
    xfsz_block(&g);
    int rc = writer_connect(w, &err);
    if (!rc && child) rc = writer_add_process(w, &err);
    xfsz_unblock(&g);
    if (!rc && writer_spawn(w, writer_main) != 0) rc = GP_EIO;
    if (rc) {
        if (w->db) writer_disconnect(w);
        if (!w->err) w->err = rc;
        if (!w->reported) {
            w->reported = 1;
            status_report(w->status_fd, w->written, w->dropped, w->err);
        }
        fprintf(stderr, "gpuprof: store writer of process %d not restarted after fork: %s\n",
                (int)getpid(), err.msg[0] ? err.msg : "cannot start the thread");
        return;
    }
    w->started = 1;
}

void gp_store_writer_fork_prepare(gp_store_writer *w)
{
    /* SQLite connections must not cross a fork: commit, close, lock */
    writer_join(w);
    if (w->db) writer_disconnect(w);
    pthread_mutex_lock(&w->mu);
}

void gp_store_writer_fork_parent(gp_store_writer *w)
{
    if (!w->err) writer_restart(w, 0);
    pthread_mutex_unlock(&w->mu);
}

void gp_store_writer_fork_child(gp_store_writer *w)
{
    /* the parent writes what it had queued; the child starts empty and sends
     * its strings, tracks and devices again under its own processes row */
    pthread_cond_init(&w->wake, NULL);
    pthread_cond_init(&w->done, NULL);
    w->pending.n = w->batch.n = 0;
    w->written = w->dropped = 0;
    memset(w->dropped_in, 0, sizeof w->dropped_in);
    w->flush_req = w->flush_done = 0;
    w->strs_sent = 0;
    w->tracks_sent = 0;
    for (size_t i = 0; i < w->tracks.n; i++) /* the parent's threads are not the child's */
        w->tracks.v[i].hidden = w->tracks.v[i].type == GP_STORE_TRACK_THREAD ||
                                w->tracks.v[i].type == GP_STORE_TRACK_NVTX_DOMAIN;
    w->renamed.n = 0;
    w->devs_sent = 0;
    w->err = 0;
    w->reported = 0;
    w->proc = 0;
    writer_restart(w, 1);
    pthread_mutex_unlock(&w->mu);
}

uint32_t gp_store_writer_str(gp_store_writer *w, const char *s)
{
    if (!s) s = "";
    pthread_mutex_lock(&w->mu);
    uint32_t id = gp_strtab_intern(w->strs, s, strlen(s));
    pthread_mutex_unlock(&w->mu);
    return id == UINT32_MAX ? 0 : id;
}

uint32_t gp_store_writer_track(gp_store_writer *w, int type, int64_t id, int32_t device,
                               const char *name)
{
    uint64_t key = gp_hash_u64((uint64_t)id * 31 + (uint64_t)(uint32_t)device * 7 + (uint64_t)type);
    uint32_t out;
    pthread_mutex_lock(&w->mu);
    uint64_t *slot = gp_u64map_slot(&w->track_of, key, UINT64_MAX);
    if (slot && *slot != UINT64_MAX) {
        out = (uint32_t)*slot;
        wtrack *t = &w->tracks.v[out];
        if (t->hidden) { /* a parent's thread track used in the child after all */
            t->hidden = 0;
            if (out < w->tracks_sent) GP_VEC_PUSH(w->renamed, out);
        }
        if (name && (!t->name || strcmp(t->name, name))) { /* renamed (NVTX thread names) */
            free(t->name);
            t->name = gp_xstrdup(name);
            if (out < w->tracks_sent) GP_VEC_PUSH(w->renamed, out);
        }
    } else {
        wtrack t = {type, id, device, name ? gp_xstrdup(name) : NULL, 0};
        out = (uint32_t)w->tracks.n;
        if (GP_VEC_PUSH(w->tracks, t)) {
            free(t.name);
            out = 0;
        } else if (slot) {
            *slot = out;
        }
    }
    pthread_mutex_unlock(&w->mu);
    return out;
}

void gp_store_writer_device(gp_store_writer *w, const char *kind, const char *name)
{
    pthread_mutex_lock(&w->mu);
    int seen = 0;
    for (size_t i = 0; i < w->devs.n && !seen; i++)
        seen = !strcmp(w->devs.v[i].kind, kind) && !strcmp(w->devs.v[i].name, name);
    if (!seen) {
        wdev d = {gp_xstrdup(kind), gp_xstrdup(name)};
        if (GP_VEC_PUSH(w->devs, d)) {
            free(d.kind);
            free(d.name);
        }
    }
    pthread_mutex_unlock(&w->mu);
}

void gp_store_writer_put(gp_store_writer *w, const gp_store_ev *ev, size_t n)
{
    pthread_mutex_lock(&w->mu);
    /* wait_when_full: the writer thread takes the queue whole at its next
     * batch (asked for here), which makes room */
    while (w->wait_full && w->pending.n > 0 && w->pending.n + n > w->max_pending && w->started &&
           !w->err) {
        w->flush_req++;
        pthread_cond_signal(&w->wake);
        pthread_cond_wait(&w->done, &w->mu);
    }
    size_t room = w->pending.n < w->max_pending ? w->max_pending - w->pending.n : 0;
    size_t take = n < room ? n : room;
    if (take && GP_VEC_RESERVE(w->pending, take)) take = 0;
    memcpy(w->pending.v + w->pending.n, ev, take * sizeof *ev);
    /* a transaction's worth waiting: the writer need not wait out its period */
    if (w->pending.n < CHUNK && w->pending.n + take >= CHUNK) pthread_cond_signal(&w->wake);
    w->pending.n += take;
    drop_events(w, ev + take, n - take);
    pthread_mutex_unlock(&w->mu);
}

void gp_store_writer_set_bounded(gp_store_writer *w, int cache_kb)
{
    pthread_mutex_lock(&w->mu);
    w->wait_full = 1;
    w->cache_kb = cache_kb; /* set by the writer thread, which owns the connection */
    /* a store of its own: a `gpuprof run` recording this program must not
     * count this writer's events in its run (GPUPROF_STATUS_FD) */
    w->status_fd = -1;
    pthread_mutex_unlock(&w->mu);
}

void gp_store_writer_add_dropped(gp_store_writer *w, uint64_t n)
{
    pthread_mutex_lock(&w->mu);
    w->dropped += n;
    w->dropped_in[0] += n;
    pthread_mutex_unlock(&w->mu);
}

void gp_store_writer_flush(gp_store_writer *w)
{
    pthread_mutex_lock(&w->mu);
    uint64_t want = ++w->flush_req;
    pthread_cond_signal(&w->wake);
    while (w->flush_done < want && w->started) pthread_cond_wait(&w->done, &w->mu);
    pthread_mutex_unlock(&w->mu);
}

int64_t gp_store_writer_proc(gp_store_writer *w)
{
    pthread_mutex_lock(&w->mu);
    int64_t v = w->proc;
    pthread_mutex_unlock(&w->mu);
    return v;
}

uint64_t gp_store_writer_written(gp_store_writer *w)
{
    pthread_mutex_lock(&w->mu);
    uint64_t v = w->written;
    pthread_mutex_unlock(&w->mu);
    return v;
}

uint64_t gp_store_writer_dropped(gp_store_writer *w)
{
    pthread_mutex_lock(&w->mu);
    uint64_t v = w->dropped;
    pthread_mutex_unlock(&w->mu);
    return v;
}

uint64_t gp_store_writer_dropped_in(gp_store_writer *w, gp_store_table table)
{
    pthread_mutex_lock(&w->mu);
    uint64_t v = (unsigned)table <= GP_ST_MEM ? w->dropped_in[table] : 0;
    pthread_mutex_unlock(&w->mu);
    return v;
}

int gp_store_writer_stop(gp_store_writer *w)
{
    if (!w) return 0;
    writer_join(w);
    int rc = w->err;
    uint64_t dropped = w->dropped + w->pending.n;
    if (w->db) { /* the process's end and final counts */
        xfsz_guard g;
        xfsz_block(&g);
        sqlite3_bind_int64(w->st_proc, 1, (int64_t)w->written);
        sqlite3_bind_int64(w->st_proc, 2, (int64_t)dropped);
        sqlite3_bind_int64(w->st_proc, 3, now_ns());
        sqlite3_bind_int64(w->st_proc, 4, w->proc);
        if (sqlite3_step(w->st_proc) != SQLITE_DONE && !rc) rc = GP_EIO;
        sqlite3_reset(w->st_proc);
        xfsz_unblock(&g);
    } else if (!rc) {
        rc = GP_EIO; /* not writing since a fork: what it queued is lost */
    }
    status_report(w->status_fd, w->written, dropped, rc);
    /* closing the connection checkpoints the WAL into the store: writes */
    xfsz_guard g;
    xfsz_block(&g);
    writer_free(w);
    xfsz_unblock(&g);
    return rc;
}
