/* store/store_read.c: reading the run store: "FILE[:ID]" specs, loading one
 * run into the trace model, listing runs, ad-hoc SQL. */
#include "core/sbuf.h"
#include "store/access.h"
#include "store/store.h"
#include "core/sketch.h"
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int is_sqlite_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    char magic[16];
    size_t n = fread(magic, 1, sizeof magic, f);
    fclose(f);
    return n == 16 && !memcmp(magic, "SQLite format 3", 16);
}

int gp_store_spec(const char *spec, char **file, int64_t *run)
{
    struct stat st;
    if (stat(spec, &st) == 0 && S_ISREG(st.st_mode)) {
        size_t l = strlen(spec);
        int db_suffix = l > 3 && !strcmp(spec + l - 3, ".db");
        if (!is_sqlite_file(spec) && !(db_suffix && st.st_size == 0)) return 0;
        *file = gp_xstrdup(spec);
        *run = 0;
        return 1;
    }
    const char *colon = strrchr(spec, ':');
    if (!colon || !colon[1]) return 0;
    char *end;
    errno = 0;
    long long id = strtoll(colon + 1, &end, 10);
    if (*end || errno || id <= 0) return 0;
    char *f = gp_xmalloc((size_t)(colon - spec) + 1);
    memcpy(f, spec, (size_t)(colon - spec));
    f[colon - spec] = 0;
    if (stat(f, &st) != 0 || !S_ISREG(st.st_mode) || !is_sqlite_file(f)) {
        free(f);
        return 0;
    }
    *file = f;
    *run = id;
    return 1;
}

/* A one-line error for a failed SQLite call on `db`: a damaged file
 * (SQLITE_CORRUPT, SQLITE_NOTADB) is bad input (GP_EPARSE, exit 2), anything
 * else an I/O failure. Returns the code set. */
static int sql_fail(sqlite3 *db, const char *path, gp_err *err)
{
    int ec = db ? sqlite3_errcode(db) : SQLITE_CANTOPEN;
    int code =
        ec == SQLITE_CORRUPT || ec == SQLITE_NOTADB || ec == SQLITE_FORMAT ? GP_EPARSE : GP_EIO;
    return gp_err_set(err, code, "%s: %s", path, db ? sqlite3_errmsg(db) : "cannot open");
}

/* Ends a reading loop: `last` is the final sqlite3_step result; anything but
 * SQLITE_DONE (a damaged page, an I/O error) is an error, never a partial
 * result. Finalizes st. */
static int step_end(sqlite3 *db, sqlite3_stmt *st, int last, const char *path, gp_err *err)
{
    int rc = last == SQLITE_DONE || last == SQLITE_ROW ? 0 : sql_fail(db, path, err);
    sqlite3_finalize(st);
    return rc;
}

/* 1 when both the -wal and the -shm file of the store at path exist (a
 * writer has it open, or was killed). */
static int wal_present(const char *path)
{
    gp_sbuf w = {0};
    struct stat st;
    gp_sbuf_printf(&w, "%s-wal", path);
    int ok = stat(gp_sbuf_cstr(&w), &st) == 0;
    gp_sbuf_reset(&w);
    gp_sbuf_printf(&w, "%s-shm", path);
    ok = ok && stat(gp_sbuf_cstr(&w), &st) == 0;
    gp_sbuf_free(&w);
    return ok;
}

/* Opens a store for reading. In order: read-write without create (lets
 * SQLite recover the WAL of a killed writer; skipped when strict or the
 * store is another user's, security.md); read-only; read-only with
 * immutable=1 (read-only media, or a file owned by another user whose -shm
 * cannot be created: the file is then read as it is, without locking).
 * Another user's store without -wal/-shm files is opened immutable at once:
 * a plain read-only open would create them, owned by the reader, and the
 * owner could no longer write its own store. */
static sqlite3 *open_any(const char *path, int strict)
{
    sqlite3 *db = NULL;
    int foreign = gp_access_foreign(path);
    if (foreign) strict = 1;
    /* each probe waits for writers (busy timeout): a store another process
     * is writing answers BUSY at once otherwise, and falling through to the
     * immutable open below would read the file without its WAL (a new
     * store: no tables at all) */
    if (!strict && sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL) == SQLITE_OK &&
        sqlite3_busy_timeout(db, 10000) == SQLITE_OK &&
        sqlite3_exec(db, "SELECT 1 FROM sqlite_master LIMIT 1", NULL, NULL, NULL) == SQLITE_OK)
        return db;
    sqlite3_close(db);
    db = NULL;
    if (!(foreign && !wal_present(path))) {
        if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
            sqlite3_busy_timeout(db, 10000) == SQLITE_OK &&
            sqlite3_exec(db, "SELECT 1 FROM sqlite_master LIMIT 1", NULL, NULL, NULL) == SQLITE_OK)
            return db;
        int ec = db ? sqlite3_errcode(db) : SQLITE_CANTOPEN;
        /* damaged, or still locked after the timeout: reported by the caller */
        if (ec == SQLITE_CORRUPT || ec == SQLITE_NOTADB || (ec & 0xff) == SQLITE_BUSY) return db;
        sqlite3_close(db);
        db = NULL;
    }
    gp_sbuf u = {0};
    gp_sbuf_puts(&u, "file:");
    for (const char *c = path; *c; c++) {
        if (*c == '?' || *c == '#' || *c == '%')
            gp_sbuf_printf(&u, "%%%02X", (unsigned char)*c);
        else
            gp_sbuf_putc(&u, *c);
    }
    gp_sbuf_puts(&u, "?immutable=1");
    if (sqlite3_open_v2(gp_sbuf_cstr(&u), &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL) !=
        SQLITE_OK) {
        sqlite3_close(db);
        db = NULL;
    }
    gp_sbuf_free(&u);
    return db;
}

/* Opens the store at path (see open_any) and checks its schema version. */
static int open_store(const char *path, int strict, sqlite3 **out, gp_err *err)
{
    sqlite3 *db = open_any(path, strict);
    if (!db) return gp_err_set(err, GP_EIO, "%s: cannot open store", path);
    sqlite3_busy_timeout(db, 10000);
    sqlite3_stmt *st = NULL;
    int s = SQLITE_ERROR;
    if (sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = 'schema_version'", -1, &st,
                           NULL) != SQLITE_OK ||
        (s = sqlite3_step(st)) != SQLITE_ROW) {
        int ec = sqlite3_errcode(db);
        int rc;
        if (ec == SQLITE_CORRUPT || ec == SQLITE_NOTADB || ec == SQLITE_IOERR ||
            (ec & 0xff) == SQLITE_IOERR || ec == SQLITE_BUSY || ec == SQLITE_CANTOPEN)
            rc = sql_fail(db, path, err);
        else
            rc = gp_err_set(err, GP_EPARSE, "%s: not a gpuprof store (no schema_version)", path);
        sqlite3_finalize(st);
        sqlite3_close(db);
        return rc;
    }
    int ver = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    if (ver > GP_STORE_SCHEMA_VERSION || ver < 1) {
        gp_err_set(err, GP_EUNSUPPORTED, "%s: store schema version %d, this gpuprof reads 1 to %d",
                   path, ver, GP_STORE_SCHEMA_VERSION);
        sqlite3_close(db);
        return GP_EUNSUPPORTED;
    }
    if (ver < GP_STORE_SCHEMA_VERSION && !sqlite3_db_readonly(db, "main")) {
        /* an older store: migrate it (additive); a read-only one is read as it is */
        gp_err e2 = {0};
        if (gp_store_ensure_schema_(db, path, &e2))
            fprintf(stderr, "gpuprof: note: %s not migrated to schema %d: %s\n", path,
                    GP_STORE_SCHEMA_VERSION, e2.msg);
    }
    *out = db;
    return 0;
}

static int open_ro(const char *path, sqlite3 **out, gp_err *err)
{
    return open_store(path, 0, out, err);
}

struct sqlite3 *gp_store_open_reader(const char *path)
{
    return open_any(path, 1);
}

/* Per-process mapping of the store's local ids to the trace's. */
typedef struct lproc {
    int64_t id, pid;
    GP_VEC(uint32_t) str;   /* local string id -> trace string id */
    GP_VEC(uint32_t) track; /* local track id -> trace track */
    GP_VEC(uint32_t) cat;   /* local string id -> category index + 1 (lazy) */
} lproc;

typedef struct loader {
    sqlite3 *db;
    const char *path;
    gp_trace *t;
    GP_VEC(lproc) procs;
    int64_t run;
    uint16_t cat_kernel, cat_flow;
    int oom;
    int ranges; /* the store has event_rows (schema 5) */
} loader;

static lproc *proc_of(loader *L, int64_t id)
{
    /* processes are few: binary search over ids loaded in ascending order */
    size_t lo = 0, hi = L->procs.n;
    while (lo < hi) {
        size_t m = (lo + hi) / 2;
        if (L->procs.v[m].id < id)
            lo = m + 1;
        else
            hi = m;
    }
    return lo < L->procs.n && L->procs.v[lo].id == id ? &L->procs.v[lo] : NULL;
}

static uint32_t map_str(lproc *p, int64_t id)
{
    return id >= 0 && (size_t)id < p->str.n ? p->str.v[id] : 0;
}

static uint32_t map_track(lproc *p, int64_t id)
{
    return id >= 0 && (size_t)id < p->track.n ? p->track.v[id] : GP_NO_INDEX;
}

static uint16_t map_cat(loader *L, lproc *p, int64_t id)
{
    if (id < 0 || (size_t)id >= p->cat.n) return 0;
    if (!p->cat.v[id]) {
        const char *s = gp_trace_s(L->t, map_str(p, id));
        uint32_t c = gp_trace_category(L->t, s, strlen(s));
        if (c == GP_NO_INDEX) {
            L->oom = 1;
            return 0;
        }
        p->cat.v[id] = c + 1;
    }
    return (uint16_t)(p->cat.v[id] - 1);
}

static int64_t col_opt(sqlite3_stmt *st, int i)
{
    return sqlite3_column_type(st, i) == SQLITE_NULL ? GP_NONE : sqlite3_column_int64(st, i);
}

#define RUN_PROCS "proc IN (SELECT id FROM processes WHERE run = ?1)"

static int prep(loader *L, const char *sql, sqlite3_stmt **st, gp_err *err)
{
    if (sqlite3_prepare_v2(L->db, sql, -1, st, NULL) != SQLITE_OK) {
        *st = NULL;
        return sql_fail(L->db, L->path, err);
    }
    sqlite3_bind_int64(*st, 1, L->run);
    return 0;
}

/* The rows of one event table that belong to the run, in rowid order (the
 * order the writers appended them). Schema 5: range by range of event_rows
 * (docs/store.md, "Which rows are a process's"), ranges in rowid order; an
 * older store opened read-only (not migrated): proc IN the run's processes. */
typedef struct rowq {
    sqlite3_stmt *st; /* the rows: the whole query, or one range's */
    sqlite3_stmt *rg; /* the ranges (schema 5), NULL before */
    int in_range;     /* st is bound to a range and not at its end */
} rowq;

/* tbl: the table's gp_store_table (= event_types.id, event_rows.tbl). */
static int rowq_open(loader *L, const char *cols, const char *table, int tbl, rowq *q, gp_err *err)
{
    char sql[512];
    memset(q, 0, sizeof *q);
    if (!L->ranges) {
        snprintf(sql, sizeof sql, "SELECT %s FROM %s WHERE " RUN_PROCS " ORDER BY rowid", cols,
                 table);
        return prep(L, sql, &q->st, err);
    }
    snprintf(sql, sizeof sql,
             "SELECT %s FROM %s WHERE rowid BETWEEN ?2 AND ?3 AND proc = ?1 ORDER BY rowid", cols,
             table);
    int rc = prep(L, sql, &q->st, err);
    if (rc) return rc;
    snprintf(sql, sizeof sql,
             "SELECT r.proc, r.first_rowid, r.last_rowid FROM event_rows r JOIN processes p ON "
             "p.id = r.proc WHERE p.run = ?1 AND r.tbl = %d ORDER BY r.first_rowid",
             tbl);
    if ((rc = prep(L, sql, &q->rg, err))) {
        sqlite3_finalize(q->st);
        q->st = NULL;
    }
    return rc;
}

/* SQLITE_ROW with the next row in q->st, SQLITE_DONE after the last, or
 * the failing step's result. */
static int rowq_step(rowq *q)
{
    if (!q->rg) return sqlite3_step(q->st);
    for (;;) {
        if (q->in_range) {
            int r = sqlite3_step(q->st);
            if (r != SQLITE_DONE) return r;
            sqlite3_reset(q->st);
            q->in_range = 0;
        }
        int r = sqlite3_step(q->rg);
        if (r != SQLITE_ROW) return r;
        sqlite3_bind_int64(q->st, 1, sqlite3_column_int64(q->rg, 0));
        sqlite3_bind_int64(q->st, 2, sqlite3_column_int64(q->rg, 1));
        sqlite3_bind_int64(q->st, 3, sqlite3_column_int64(q->rg, 2));
        q->in_range = 1;
    }
}

/* Ends a rowq loop as step_end does (the error read before the range
 * statement is finalized, which would reset it). */
static int rowq_end(loader *L, rowq *q, int last, gp_err *err)
{
    int rc = step_end(L->db, q->st, last, L->path, err);
    sqlite3_finalize(q->rg);
    return rc;
}

static int load_procs(loader *L, gp_err *err)
{
    sqlite3_stmt *st;
    int sr = SQLITE_DONE;
    int rc = prep(L, "SELECT id, pid, exe FROM processes WHERE run = ?1 ORDER BY id", &st, err);
    if (rc) return rc;
    while ((sr = sqlite3_step(st)) == SQLITE_ROW) {
        lproc p = {0};
        p.id = sqlite3_column_int64(st, 0);
        p.pid = sqlite3_column_int64(st, 1);
        if (GP_VEC_PUSH(L->procs, p)) L->oom = 1;
    }
    if ((rc = step_end(L->db, st, sr, L->path, err))) return rc;
    /* strings */
    if ((rc = prep(L, "SELECT proc, id, s FROM strings WHERE " RUN_PROCS, &st, err))) return rc;
    while ((sr = sqlite3_step(st)) == SQLITE_ROW) {
        lproc *p = proc_of(L, sqlite3_column_int64(st, 0));
        int64_t id = sqlite3_column_int64(st, 1);
        if (!p || id < 0 || id > (1 << 30)) continue;
        const char *s = (const char *)sqlite3_column_text(st, 2);
        int n = sqlite3_column_bytes(st, 2);
        while (p->str.n <= (size_t)id) {
            if (GP_VEC_PUSH(p->str, 0) || GP_VEC_PUSH(p->cat, 0)) {
                L->oom = 1;
                break;
            }
        }
        if ((size_t)id < p->str.n) {
            uint32_t tid = gp_trace_str(L->t, s ? s : "", s ? (size_t)n : 0);
            if (tid == GP_NO_INDEX)
                L->oom = 1;
            else
                p->str.v[id] = tid;
        }
    }
    if ((rc = step_end(L->db, st, sr, L->path, err))) return rc;
    /* tracks: host threads keep (pid, tid); device queues/streams are drawn
     * like Kineto's GPU tracks, (device, stream), within the process */
    if ((rc = prep(L,
                   "SELECT t.proc, t.id, t.type, t.tid, t.device, t.name, p.exe FROM tracks t "
                   "JOIN processes p ON p.id = t.proc WHERE p.run = ?1 ORDER BY t.proc, t.id",
                   &st, err)))
        return rc;
    while ((sr = sqlite3_step(st)) == SQLITE_ROW) {
        lproc *p = proc_of(L, sqlite3_column_int64(st, 0));
        int64_t id = sqlite3_column_int64(st, 1);
        if (!p || id < 0 || id > (1 << 24)) continue;
        int type = sqlite3_column_int(st, 2);
        int64_t tid = sqlite3_column_int64(st, 3);
        int64_t dev = col_opt(st, 4);
        const char *name = (const char *)sqlite3_column_text(st, 5);
        const char *exe = (const char *)sqlite3_column_text(st, 6);
        uint32_t k;
        if (type == GP_STORE_TRACK_QUEUE) {
            /* one GPU "process" per (recorded process, device) */
            k = gp_trace_track(L->t, p->pid * 1000 + (dev >= 0 ? dev : 999), tid, 0, 0);
        } else if (type == GP_STORE_TRACK_NVTX_DOMAIN) {
            /* a named NVTX domain's ranges on thread tid: a track of its
             * own in the thread's process, "TID NVTX domain NAME" */
            gp_sbuf lbl = {0}; /* domain names are kept whole, however long */
            gp_sbuf_printf(&lbl, "%lld NVTX domain %s", (long long)tid, name ? name : "");
            uint32_t ls = gp_trace_str(L->t, gp_sbuf_cstr(&lbl), lbl.n);
            gp_sbuf_free(&lbl);
            k = ls == GP_NO_INDEX ? GP_NO_INDEX : gp_trace_track(L->t, p->pid, tid, 0, ls);
            if (k != GP_NO_INDEX) L->t->tracks.v[k].type = GP_TRACK_CPU;
            name = NULL; /* the label is its name */
        } else {
            k = gp_trace_track(L->t, p->pid, tid, 0, 0);
        }
        if (k == GP_NO_INDEX) {
            L->oom = 1;
            continue;
        }
        gp_track *tk = &L->t->tracks.v[k];
        if (type == GP_STORE_TRACK_QUEUE) {
            tk->type = GP_TRACK_GPU;
            tk->device = dev >= 0 ? (int32_t)dev : GP_NONE;
            tk->stream = tid;
        }
        if (name) tk->name = gp_trace_str(L->t, name, strlen(name));
        if (exe) {
            const char *base = strrchr(exe, '/');
            base = base ? base + 1 : exe;
            tk->process_name = gp_trace_str(L->t, base, strlen(base));
        }
        while (p->track.n <= (size_t)id)
            if (GP_VEC_PUSH(p->track, GP_NO_INDEX)) {
                L->oom = 1;
                break;
            }
        if ((size_t)id < p->track.n) p->track.v[id] = k;
    }
    if ((rc = step_end(L->db, st, sr, L->path, err))) return rc;
    return 0;
}

static void add_flow(loader *L, int64_t corr, int64_t ts, uint32_t track, char ph)
{
    gp_flow f = {ts, corr, track, 0, L->cat_flow, ph, ph == 'f' ? 1 : 0};
    if (GP_VEC_PUSH(L->t->flows, f)) L->oom = 1;
}

static int push_slice(loader *L, const gp_slice *s)
{
    if (s->track == GP_NO_INDEX) return 0;
    if (GP_VEC_PUSH(L->t->slices, *s)) {
        L->oom = 1;
        return 0;
    }
    return 1;
}

/* Fills a slice from the leading columns shared by the slice tables:
 * (proc, track, cat, name, ts, dur, corr); no external id, no GPU info. */
static void slice_from_row(loader *L, lproc *p, sqlite3_stmt *st, gp_slice *s)
{
    memset(s, 0, sizeof *s);
    s->track = map_track(p, sqlite3_column_int64(st, 1));
    s->cat = map_cat(L, p, sqlite3_column_int64(st, 2));
    s->name = map_str(p, sqlite3_column_int64(st, 3));
    s->ts = sqlite3_column_int64(st, 4);
    s->dur = sqlite3_column_int64(st, 5);
    s->correlation = col_opt(st, 6);
    s->external_id = GP_NONE;
    s->gpu = GP_NO_INDEX;
}

/* Loads the rows (proc, track, cat, name, ts, dur, corr) of `table` as
 * slices; with flow_ph set, a slice with a correlation also gets that flow
 * end. Returns 0 or a GP_E* code with err set. */
static int load_plain_slices(loader *L, const char *table, int tbl, char flow_ph, gp_err *err)
{
    /* slices.inline_child_ns: schema 4 (a store opened read-only may be older) */
    int inl = !strcmp(table, "slices") && gp_store_has_column_(L->db, table, "inline_child_ns") > 0;
    rowq q;
    int sr = SQLITE_DONE;
    int rc = rowq_open(L,
                       inl ? "proc, track, cat, name, ts, dur, corr, inline_child_ns"
                           : "proc, track, cat, name, ts, dur, corr",
                       table, tbl, &q, err);
    if (rc) return rc;
    sqlite3_stmt *st = q.st;
    while (!L->oom && (sr = rowq_step(&q)) == SQLITE_ROW) {
        lproc *p = proc_of(L, sqlite3_column_int64(st, 0));
        if (!p) continue;
        gp_slice s;
        slice_from_row(L, p, st, &s);
        if (!push_slice(L, &s)) continue;
        if (flow_ph && s.correlation != GP_NONE) add_flow(L, s.correlation, s.ts, s.track, flow_ph);
        int64_t ic = inl ? sqlite3_column_int64(st, 7) : 0; /* NULL reads 0 */
        if (ic > s.dur) ic = s.dur;
        if (ic > 0) {
            gp_inline_child c = {(uint32_t)(L->t->slices.n - 1), ic};
            if (GP_VEC_PUSH(L->t->inline_children, c)) L->oom = 1;
        }
    }
    return rowq_end(L, &q, sr, err);
}

/* Ranges known only as per-name statistics (libgpuprof's stream sink,
 * table range_stats; absent from stores written before it) into t->aggs. */
static int load_range_stats(loader *L, gp_err *err)
{
    sqlite3_stmt *st;
    int rc, sr = SQLITE_DONE;
    int have = 0;
    if (sqlite3_prepare_v2(L->db,
                           "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = "
                           "'range_stats'",
                           -1, &st, NULL) == SQLITE_OK)
        have = sqlite3_step(st) == SQLITE_ROW;
    sqlite3_finalize(st);
    if (!have) return 0;
    if ((rc = prep(L,
                   "SELECT proc, track, cat, name, device, backend, count, total_ns, self_ns, "
                   "min_ns, max_ns, bytes, m2, first_ns, last_ns, sketch FROM range_stats "
                   "WHERE " RUN_PROCS " ORDER BY rowid",
                   &st, err)))
        return rc;
    while (!L->oom && (sr = sqlite3_step(st)) == SQLITE_ROW) {
        lproc *p = proc_of(L, sqlite3_column_int64(st, 0));
        int64_t count = sqlite3_column_int64(st, 6);
        if (!p || count <= 0) continue;
        gp_agg_row r = {0};
        r.track = map_track(p, sqlite3_column_int64(st, 1));
        r.cat = map_cat(L, p, sqlite3_column_int64(st, 2));
        r.name = map_str(p, sqlite3_column_int64(st, 3));
        r.device = (uint8_t)sqlite3_column_int(st, 4);
        r.backend = (uint8_t)sqlite3_column_int(st, 5);
        r.count = (uint64_t)count;
        r.total_ns = sqlite3_column_int64(st, 7);
        r.self_ns = sqlite3_column_int64(st, 8);
        r.min_ns = sqlite3_column_int64(st, 9);
        r.max_ns = sqlite3_column_int64(st, 10);
        r.bytes = sqlite3_column_int64(st, 11);
        r.m2 = sqlite3_column_double(st, 12);
        r.first_ns = sqlite3_column_int64(st, 13);
        r.last_ns = sqlite3_column_int64(st, 14);
        const void *blob = sqlite3_column_blob(st, 15);
        if (blob && sqlite3_column_bytes(st, 15) == (int)(GP_SKETCH_BUCKETS * sizeof(uint64_t))) {
            r.sketch = malloc(GP_SKETCH_BUCKETS * sizeof *r.sketch);
            if (!r.sketch) {
                L->oom = 1;
                break;
            }
            memcpy(r.sketch, blob, GP_SKETCH_BUCKETS * sizeof *r.sketch);
        }
        if (GP_VEC_PUSH(L->t->aggs, r)) {
            free(r.sketch);
            L->oom = 1;
        }
    }
    return step_end(L->db, st, sr, L->path, err);
}

static int load_events(loader *L, gp_err *err)
{
    gp_trace *t = L->t;
    sqlite3_stmt *st;
    rowq q;
    int rc, sr = SQLITE_DONE;
    /* API calls: launches get the start of a flow to their device work */
    if ((rc = load_plain_slices(L, "api_calls", GP_ST_API, 's', err))) return rc;
    /* kernels */
    if ((rc = rowq_open(L,
                        "proc, track, name, ts, dur, corr, device, context, stream, grid_x, "
                        "grid_y, grid_z, block_x, block_y, block_z, registers, shared_mem",
                        "kernels", GP_ST_KERNEL, &q, err)))
        return rc;
    st = q.st;
    while (!L->oom && (sr = rowq_step(&q)) == SQLITE_ROW) {
        lproc *p = proc_of(L, sqlite3_column_int64(st, 0));
        if (!p) continue;
        gp_slice s = {0};
        s.track = map_track(p, sqlite3_column_int64(st, 1));
        s.cat = L->cat_kernel;
        s.name = map_str(p, sqlite3_column_int64(st, 2));
        s.ts = sqlite3_column_int64(st, 3);
        s.dur = sqlite3_column_int64(st, 4);
        s.correlation = col_opt(st, 5);
        s.external_id = GP_NONE;
        gp_gpu_info g;
        memset(&g, 0, sizeof g);
        g.device = (int32_t)col_opt(st, 6);
        g.context = (int32_t)col_opt(st, 7);
        g.stream = col_opt(st, 8);
        for (int k = 0; k < 3; k++) {
            g.grid[k] = sqlite3_column_int(st, 9 + k);
            g.block[k] = sqlite3_column_int(st, 12 + k);
        }
        g.registers = (int32_t)col_opt(st, 15);
        g.shared_mem = (int32_t)col_opt(st, 16);
        g.blocks_per_sm = g.warps_per_sm = g.occupancy_pct = (float)NAN;
        g.bytes = GP_NONE;
        if (GP_VEC_PUSH(t->gpu_info, g)) L->oom = 1;
        s.gpu = (uint32_t)(t->gpu_info.n - 1);
        if (push_slice(L, &s) && s.correlation != GP_NONE)
            add_flow(L, s.correlation, s.ts, s.track, 'f');
    }
    if ((rc = rowq_end(L, &q, sr, err))) return rc;
    /* copies and memsets */
    if ((rc = rowq_open(L,
                        "proc, track, cat, name, ts, dur, corr, device, context, stream, bytes, "
                        "copy_kind, src_kind, dst_kind",
                        "copies", GP_ST_COPY, &q, err)))
        return rc;
    st = q.st;
    while (!L->oom && (sr = rowq_step(&q)) == SQLITE_ROW) {
        lproc *p = proc_of(L, sqlite3_column_int64(st, 0));
        if (!p) continue;
        gp_slice s;
        slice_from_row(L, p, st, &s);
        gp_gpu_info g;
        memset(&g, 0, sizeof g);
        g.device = (int32_t)col_opt(st, 7);
        g.context = (int32_t)col_opt(st, 8);
        g.stream = col_opt(st, 9);
        g.bytes = col_opt(st, 10);
        g.copy_kind = (uint8_t)sqlite3_column_int(st, 11);
        g.src_kind = (uint8_t)sqlite3_column_int(st, 12);
        g.dst_kind = (uint8_t)sqlite3_column_int(st, 13);
        g.registers = g.shared_mem = GP_NONE;
        g.blocks_per_sm = g.warps_per_sm = g.occupancy_pct = (float)NAN;
        if (GP_VEC_PUSH(t->gpu_info, g)) L->oom = 1;
        s.gpu = (uint32_t)(t->gpu_info.n - 1);
        if (push_slice(L, &s) && s.correlation != GP_NONE)
            add_flow(L, s.correlation, s.ts, s.track, 'f');
    }
    if ((rc = rowq_end(L, &q, sr, err))) return rc;
    /* other ranges */
    if ((rc = load_plain_slices(L, "slices", GP_ST_SLICE, 0, err))) return rc;
    /* marks */
    if ((rc = rowq_open(L, "proc, track, cat, name, ts", "instants", GP_ST_INSTANT, &q, err)))
        return rc;
    st = q.st;
    while (!L->oom && (sr = rowq_step(&q)) == SQLITE_ROW) {
        lproc *p = proc_of(L, sqlite3_column_int64(st, 0));
        if (!p) continue;
        gp_instant in = {sqlite3_column_int64(st, 4), map_str(p, sqlite3_column_int64(st, 3)),
                         map_track(p, sqlite3_column_int64(st, 1)),
                         map_cat(L, p, sqlite3_column_int64(st, 2)), 't'};
        if (in.track != GP_NO_INDEX && GP_VEC_PUSH(t->instants, in)) L->oom = 1;
    }
    if ((rc = rowq_end(L, &q, sr, err))) return rc;
    /* counters: one series per (name, track) */
    if ((rc = rowq_open(L, "proc, track, name, ts, value", "counters", GP_ST_COUNTER, &q, err)))
        return rc;
    st = q.st;
    while (!L->oom && (sr = rowq_step(&q)) == SQLITE_ROW) {
        lproc *p = proc_of(L, sqlite3_column_int64(st, 0));
        if (!p) continue;
        uint32_t track = map_track(p, sqlite3_column_int64(st, 1));
        uint32_t name = map_str(p, sqlite3_column_int64(st, 2));
        if (track == GP_NO_INDEX) continue;
        uint32_t series = GP_NO_INDEX;
        for (size_t i = t->series.n; i-- > 0;)
            if (t->series.v[i].name == name && t->series.v[i].track == track) {
                series = (uint32_t)i;
                break;
            }
        if (series == GP_NO_INDEX) {
            gp_series se = {name, track};
            if (GP_VEC_PUSH(t->series, se)) {
                L->oom = 1;
                break;
            }
            series = (uint32_t)(t->series.n - 1);
        }
        gp_counter_sample cs = {sqlite3_column_int64(st, 3), sqlite3_column_double(st, 4), series};
        if (GP_VEC_PUSH(t->counters, cs)) L->oom = 1;
    }
    if ((rc = rowq_end(L, &q, sr, err))) return rc;
    /* memory */
    if ((rc = rowq_open(L, "proc, track, ts, addr, bytes, device", "memory", GP_ST_MEM, &q, err)))
        return rc;
    st = q.st;
    while (!L->oom && (sr = rowq_step(&q)) == SQLITE_ROW) {
        lproc *p = proc_of(L, sqlite3_column_int64(st, 0));
        if (!p) continue;
        gp_mem_event m = {0};
        m.ts = sqlite3_column_int64(st, 2);
        m.addr = (uint64_t)sqlite3_column_int64(st, 3);
        m.bytes = sqlite3_column_int64(st, 4);
        m.total_allocated = m.total_reserved = GP_NONE;
        m.track = map_track(p, sqlite3_column_int64(st, 1));
        m.device_type = 1;
        m.device_id = (int16_t)col_opt(st, 5);
        if (m.track != GP_NO_INDEX && GP_VEC_PUSH(t->mem_events, m)) L->oom = 1;
    }
    if ((rc = rowq_end(L, &q, sr, err))) return rc;
    return load_range_stats(L, err);
}

int gp_store_load(const char *path, int64_t run, gp_trace **out, gp_err *err)
{
    loader L = {0};
    L.path = path;
    int rc = open_ro(path, &L.db, err);
    if (rc) return rc;
    sqlite3_stmt *st = NULL;
    int64_t wall = 0, mono = 0;
    int sr = SQLITE_ERROR;
    sqlite3_prepare_v2(L.db,
                       run > 0 ? "SELECT id, start_wall_ns, start_mono_ns FROM runs WHERE id = ?1"
                               : "SELECT id, start_wall_ns, start_mono_ns FROM runs ORDER BY id "
                                 "DESC LIMIT 1",
                       -1, &st, NULL);
    if (run > 0) sqlite3_bind_int64(st, 1, run);
    if (!st || (sr = sqlite3_step(st)) != SQLITE_ROW) {
        sqlite3_finalize(st);
        if (!st || sr != SQLITE_DONE) {
            rc = sql_fail(L.db, path, err);
            sqlite3_close(L.db);
            return rc;
        }
        sqlite3_close(L.db);
        if (run > 0) return gp_err_set(err, GP_ENOTFOUND, "%s: no run %lld", path, (long long)run);
        return gp_err_set(err, GP_ENOTFOUND, "%s: the store holds no run", path);
    }
    L.run = sqlite3_column_int64(st, 0);
    wall = sqlite3_column_int64(st, 1);
    mono = sqlite3_column_int64(st, 2);
    sqlite3_finalize(st);
    L.ranges = gp_store_has_column_(L.db, "event_rows", "last_rowid") > 0; /* schema 5 */

    L.t = gp_trace_create();
    if (!L.t) {
        sqlite3_close(L.db);
        return gp_err_set(err, GP_ENOMEM, "out of memory");
    }
    uint32_t ck = gp_trace_category(L.t, "kernel", 6);
    uint32_t cf = gp_trace_category(L.t, "ac2g", 4);
    L.cat_kernel = (uint16_t)ck;
    L.cat_flow = (uint16_t)cf;
    if (ck == GP_NO_INDEX || cf == GP_NO_INDEX) L.oom = 1;
    if (!L.oom && !(rc = load_procs(&L, err))) rc = load_events(&L, err);
    for (size_t i = 0; i < L.procs.n; i++) {
        GP_VEC_FREE(L.procs.v[i].str);
        GP_VEC_FREE(L.procs.v[i].track);
        GP_VEC_FREE(L.procs.v[i].cat);
    }
    GP_VEC_FREE(L.procs);
    sqlite3_close(L.db);
    if (!rc && L.oom) rc = gp_err_set(err, GP_ENOMEM, "%s: out of memory", path);
    if (rc) {
        gp_trace_destroy(L.t);
        return rc;
    }
    char src[4096];
    snprintf(src, sizeof src, "%s:%lld", path, (long long)L.run);
    L.t->meta.source = gp_trace_str(L.t, src, strlen(src));
    L.t->meta.trace_name = L.t->meta.source;
    /* timestamps are CLOCK_MONOTONIC; the base makes t0_abs_ns an epoch time */
    L.t->meta.has_base_time = 1;
    L.t->meta.has_trace_events = 1; /* a run is a trace (its events may be none) */
    L.t->meta.base_time_ns = wall - mono;
    L.t->meta.events_read = L.t->slices.n + L.t->instants.n + L.t->counters.n + L.t->mem_events.n;
    gp_trace_finish(L.t);
    *out = L.t;
    return 0;
}

int gp_store_runs(const char *path, gp_store_run_row **rows, size_t *n, gp_err *err)
{
    sqlite3 *db;
    int rc = open_ro(path, &db, err);
    if (rc) return rc;
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(
            db,
            "SELECT r.id, r.start_wall_ns, r.duration_ns, r.exit_status, "
            "coalesce(r.dropped, (SELECT sum(dropped) FROM processes WHERE run = r.id)), "
            "(SELECT sum(events) FROM processes WHERE run = r.id), (SELECT count(*) FROM "
            "processes WHERE run = r.id), r.command, r.host, r.devices, r.version, r.pid FROM "
            "runs r ORDER BY r.id",
            -1, &st, NULL) != SQLITE_OK) {
        rc = sql_fail(db, path, err);
        sqlite3_close(db);
        return rc;
    }
    GP_VEC(gp_store_run_row) v = {0};
    int sr;
    while ((sr = sqlite3_step(st)) == SQLITE_ROW) {
        gp_store_run_row r;
        r.id = sqlite3_column_int64(st, 0);
        r.start_wall_ns = col_opt(st, 1);
        r.duration_ns = col_opt(st, 2);
        r.exit_status = col_opt(st, 3);
        r.dropped = col_opt(st, 4);
        r.events = col_opt(st, 5);
        r.processes = col_opt(st, 6);
        r.pid = col_opt(st, 11);
        char **dst[4] = {&r.command, &r.host, &r.devices, &r.version};
        for (int k = 0; k < 4; k++) {
            const char *s = (const char *)sqlite3_column_text(st, 7 + k);
            *dst[k] = gp_xstrdup(s ? s : "");
        }
        if (GP_VEC_PUSH(v, r)) {
            for (int k = 0; k < 4; k++) free(*dst[k]);
            rc = gp_err_set(err, GP_ENOMEM, "out of memory");
            break;
        }
    }
    if (!rc)
        rc = step_end(db, st, sr, path, err);
    else
        sqlite3_finalize(st);
    sqlite3_close(db);
    if (rc) {
        gp_store_runs_free(v.v, v.n);
        return rc;
    }
    *rows = v.v;
    *n = v.n;
    return 0;
}

void gp_store_runs_free(gp_store_run_row *rows, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(rows[i].command);
        free(rows[i].host);
        free(rows[i].devices);
        free(rows[i].version);
    }
    free(rows);
}

/* ---- gpuprof sql: read-only ---- */

typedef struct sql_guard {
    char why[160]; /* the first denied action, for the error message */
} sql_guard;

static int deny(sql_guard *g, const char *what)
{
    if (!g->why[0]) snprintf(g->why, sizeof g->why, "%s", what);
    return SQLITE_DENY;
}

/* Pragmas that only read (with or without an argument naming a table). */
static int pragma_reads(const char *name, const char *arg)
{
    static const char *const table_args[] = {"table_info",    "table_xinfo",     "index_list",
                                             "index_info",    "index_xinfo",     "foreign_key_list",
                                             "function_list", "pragma_list",     "collation_list",
                                             "database_list", "compile_options", "table_list"};
    static const char *const no_args[] = {"user_version",   "schema_version", "page_count",
                                          "page_size",      "freelist_count", "encoding",
                                          "application_id", "data_version",   "query_only"};
    for (size_t i = 0; i < sizeof table_args / sizeof *table_args; i++)
        if (!sqlite3_stricmp(name, table_args[i])) return 1;
    if (arg) return 0;
    for (size_t i = 0; i < sizeof no_args / sizeof *no_args; i++)
        if (!sqlite3_stricmp(name, no_args[i])) return 1;
    return 0;
}

/* The authorizer of gpuprof sql: reading is allowed, every write, schema
 * change, ATTACH/DETACH, load_extension and pragma that changes something
 * is denied with its name recorded. */
static int sql_authorizer(void *ctx, int action, const char *a1, const char *a2, const char *db,
                          const char *trigger)
{
    sql_guard *g = ctx;
    char what[160];
    (void)db;
    (void)trigger;
    switch (action) {
    case SQLITE_SELECT:
    case SQLITE_READ:
    case SQLITE_RECURSIVE:
    case SQLITE_TRANSACTION:
    case SQLITE_SAVEPOINT:
        return SQLITE_OK;
    case SQLITE_FUNCTION:
        if (a2 && (!sqlite3_stricmp(a2, "load_extension") || !sqlite3_stricmp(a2, "writefile") ||
                   !sqlite3_stricmp(a2, "edit") || !sqlite3_stricmp(a2, "fts3_tokenizer"))) {
            snprintf(what, sizeof what, "the function %s() is not allowed", a2);
            return deny(g, what);
        }
        return SQLITE_OK;
    case SQLITE_PRAGMA:
        if (a1 && pragma_reads(a1, a2)) return SQLITE_OK;
        snprintf(what, sizeof what, "PRAGMA %s%s%s is not allowed", a1 ? a1 : "?", a2 ? " = " : "",
                 a2 ? a2 : "");
        return deny(g, what);
    case SQLITE_ATTACH:
        return deny(g, "ATTACH is not allowed");
    case SQLITE_DETACH:
        return deny(g, "DETACH is not allowed");
    case SQLITE_INSERT:
    case SQLITE_UPDATE:
    case SQLITE_DELETE:
        if (a1 && (!sqlite3_stricmp(a1, "sqlite_master") || !sqlite3_stricmp(a1, "sqlite_schema") ||
                   !sqlite3_stricmp(a1, "sqlite_temp_master")))
            return deny(g, "changing the schema (CREATE/DROP/ALTER) is not allowed");
        break;
    default:
        break;
    }
    switch (action) {
    case SQLITE_INSERT:
        snprintf(what, sizeof what, "INSERT into %s is not allowed", a1 ? a1 : "?");
        return deny(g, what);
    case SQLITE_UPDATE:
        snprintf(what, sizeof what, "UPDATE of %s is not allowed", a1 ? a1 : "?");
        return deny(g, what);
    case SQLITE_DELETE:
        snprintf(what, sizeof what, "DELETE from %s is not allowed", a1 ? a1 : "?");
        return deny(g, what);
    case SQLITE_ALTER_TABLE:
        return deny(g, "ALTER TABLE is not allowed");
    case SQLITE_ANALYZE:
        return deny(g, "ANALYZE is not allowed");
    case SQLITE_REINDEX:
        return deny(g, "REINDEX is not allowed");
    default: /* CREATE_*, DROP_*, virtual tables: schema changes */
        return deny(g, "changing the schema (CREATE/DROP) is not allowed");
    }
}

/* 1 when the statement at sql starts with the keyword kw (any case). */
static int starts_with_kw(const char *sql, const char *kw)
{
    while (*sql == ' ' || *sql == '\t' || *sql == '\n' || *sql == '\r') sql++;
    size_t n = strlen(kw);
    return !sqlite3_strnicmp(sql, kw, (int)n) && !(isalnum((unsigned char)sql[n]) || sql[n] == '_');
}

/* Checks every statement of sql (VACUUM, the authorizer at prepare time,
 * sqlite3_stmt_readonly) before any runs, so that input with several
 * statements is refused as a whole, with no partial output. 0 or the error. */
static int sql_check_all(sqlite3 *db, const char *path, const char *sql, sql_guard *guard,
                         gp_err *err)
{
    const char *tail = sql;
    while (tail && *tail) {
        sqlite3_stmt *st = NULL;
        guard->why[0] = 0;
        if (starts_with_kw(tail, "VACUUM"))
            return gp_err_set(err, GP_EINVAL, "%s: gpuprof sql is read-only: VACUUM is not allowed",
                              path);
        if (sqlite3_prepare_v2(db, tail, -1, &st, &tail) != SQLITE_OK) {
            if (guard->why[0])
                return gp_err_set(err, GP_EINVAL, "%s: gpuprof sql is read-only: %s", path,
                                  guard->why);
            return gp_err_set(err, GP_EPARSE, "%s: SQL error: %s", path, sqlite3_errmsg(db));
        }
        if (!st) break; /* trailing whitespace or comment */
        int ro = sqlite3_stmt_readonly(st);
        sqlite3_finalize(st);
        if (!ro)
            return gp_err_set(err, GP_EINVAL, "%s: gpuprof sql is read-only: the statement writes",
                              path);
    }
    return 0;
}

int gp_store_sql(const char *path, const char *sql, int json, void *fp, gp_err *err)
{
    FILE *f = fp;
    sqlite3 *db;
    sql_guard guard = {{0}};
    int rc = open_store(path, 1, &db, err);
    if (rc) return rc;
    /* three independent locks: a read-only connection, query_only, the authorizer */
    if (sqlite3_exec(db, "PRAGMA query_only = 1", NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_set_authorizer(db, sql_authorizer, &guard) != SQLITE_OK) {
        sqlite3_close(db);
        return gp_err_set(err, GP_EIO, "%s: cannot make the connection read-only", path);
    }
    if ((rc = sql_check_all(db, path, sql, &guard, err))) {
        sqlite3_close(db);
        return rc;
    }
    const char *tail = sql;
    gp_sbuf b = {0};
    while (tail && *tail) {
        sqlite3_stmt *st = NULL;
        const char *head = tail;
        guard.why[0] = 0;
        if (starts_with_kw(head, "VACUUM")) {
            rc = gp_err_set(err, GP_EINVAL, "%s: gpuprof sql is read-only: VACUUM is not allowed",
                            path);
            break;
        }
        if (sqlite3_prepare_v2(db, tail, -1, &st, &tail) != SQLITE_OK) {
            if (guard.why[0])
                rc =
                    gp_err_set(err, GP_EINVAL, "%s: gpuprof sql is read-only: %s", path, guard.why);
            else
                rc = gp_err_set(err, GP_EPARSE, "%s: SQL error: %s", path, sqlite3_errmsg(db));
            break;
        }
        if (!st) break; /* trailing whitespace or comment */
        if (!sqlite3_stmt_readonly(st)) {
            sqlite3_finalize(st);
            rc = gp_err_set(err, GP_EINVAL, "%s: gpuprof sql is read-only: the statement writes",
                            path);
            break;
        }
        int nc = sqlite3_column_count(st);
        if (!json && nc) {
            for (int c = 0; c < nc; c++)
                fprintf(f, "%s%s", c ? "|" : "", sqlite3_column_name(st, c));
            fputc('\n', f);
        }
        int s;
        while ((s = sqlite3_step(st)) == SQLITE_ROW) {
            gp_sbuf_reset(&b);
            if (json) gp_sbuf_putc(&b, '{');
            for (int c = 0; c < nc; c++) {
                if (json)
                    gp_json_key(&b, sqlite3_column_name(st, c), c > 0);
                else if (c)
                    gp_sbuf_putc(&b, '|');
                switch (sqlite3_column_type(st, c)) {
                case SQLITE_NULL:
                    gp_sbuf_puts(&b, json ? "null" : "");
                    break;
                case SQLITE_INTEGER:
                    gp_json_int(&b, sqlite3_column_int64(st, c));
                    break;
                case SQLITE_FLOAT:
                    gp_json_num(&b, sqlite3_column_double(st, c));
                    break;
                default: {
                    const char *txt = (const char *)sqlite3_column_text(st, c);
                    if (json)
                        gp_json_str(&b, txt ? txt : "");
                    else
                        gp_sbuf_puts(&b, txt ? txt : "");
                }
                }
            }
            if (json) gp_sbuf_putc(&b, '}');
            gp_sbuf_putc(&b, '\n');
            gp_sbuf_write(&b, f);
        }
        if (s != SQLITE_DONE) {
            int ec = sqlite3_errcode(db);
            rc = ec == SQLITE_CORRUPT || ec == SQLITE_NOTADB || (ec & 0xff) == SQLITE_IOERR
                     ? sql_fail(db, path, err)
                     : gp_err_set(err, GP_EPARSE, "%s: SQL error: %s", path, sqlite3_errmsg(db));
            sqlite3_finalize(st);
            break;
        }
        sqlite3_finalize(st);
    }
    gp_sbuf_free(&b);
    sqlite3_close(db);
    return rc;
}

/* Start time (epoch ns) of process pid from /proc, or -1. */
static int64_t proc_start_wall_ns(int64_t pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%lld/stat", (long long)pid);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *p = strrchr(buf, ')'); /* the command name may hold spaces */
    if (!p) return -1;
    if (p[1] == ' ' && p[2] == 'Z') return INT64_MAX; /* a zombie: the process is over */
    unsigned long long start = 0;
    /* after ") ": state is field 3, starttime field 22 */
    int field = 2;
    for (char *tok = strtok(p + 1, " "); tok; tok = strtok(NULL, " "))
        if (++field == 22) {
            start = strtoull(tok, NULL, 10);
            break;
        }
    if (field != 22) return -1;
    long hz = sysconf(_SC_CLK_TCK);
    struct timespec rt, bt;
    if (hz <= 0 || clock_gettime(CLOCK_REALTIME, &rt) || clock_gettime(CLOCK_BOOTTIME, &bt))
        return -1;
    int64_t boot = ((int64_t)rt.tv_sec - bt.tv_sec) * 1000000000 + (rt.tv_nsec - bt.tv_nsec);
    return boot + (int64_t)(start * (1000000000.0 / (double)hz));
}

gp_run_state gp_store_run_state(const gp_store_run_row *r)
{
    if (r->exit_status != GP_NONE)
        return r->dropped != GP_NONE && r->dropped > 0 ? GP_RUN_INCOMPLETE : GP_RUN_COMPLETE;
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    if (!r->host || strcmp(r->host, host) || r->pid == GP_NONE || r->pid <= 0)
        return GP_RUN_UNKNOWN;
    if (kill((pid_t)r->pid, 0) != 0 && errno == ESRCH) return GP_RUN_INTERRUPTED;
    /* the pid is in use: by the recorder only when that process started
     * before the run did (pid reuse otherwise); 2 s of slack for clock steps */
    int64_t st = proc_start_wall_ns(r->pid);
    if (st >= 0 && r->start_wall_ns != GP_NONE && st > r->start_wall_ns + 2000000000LL)
        return GP_RUN_INTERRUPTED;
    return GP_RUN_RUNNING;
}

const char *gp_run_state_name(gp_run_state s)
{
    static const char *const names[] = {"complete", "incomplete", "running", "interrupted",
                                        "unknown"};
    return (unsigned)s < sizeof names / sizeof names[0] ? names[s] : "unknown";
}
