/* store/store.h: the SQLite run store of `gpuprof run`: schema, run
 * bookkeeping, a batched writer thread for recording processes (OpenCL layer,
 * CUPTI injection) and the reader that loads a run into the trace model. */
#ifndef GP_STORE_STORE_H
#define GP_STORE_STORE_H
#include "core/error.h"
#include "trace/trace.h"
#include <signal.h>
#include <stddef.h>
#include <stdint.h>

/* 1: the first store; 2: lookup tables, per-run indexes, v_* views; 3:
 * api_calls.kind -> api_kinds (an older store is migrated when opened for
 * writing or read by a process that may write it). docs/store.md. */
#define GP_STORE_SCHEMA_VERSION 5

/* Which table an event goes to. */
typedef enum gp_store_table {
    GP_ST_API = 1, /* host API call (cuda_runtime, cuda_driver, runtime = OpenCL) */
    GP_ST_KERNEL,  /* device kernel */
    GP_ST_COPY,    /* device copy or memset */
    GP_ST_SLICE,   /* any other range (nvtx, cuda_sync, overhead) */
    GP_ST_INSTANT, /* a mark (NVTX mark) */
    GP_ST_COUNTER, /* a counter sample (value) */
    GP_ST_MEM,     /* allocation (bytes > 0) or free (bytes < 0) */
} gp_store_table;

/* One recorded event. Times are CLOCK_MONOTONIC ns (system-wide, so that
 * events of several processes line up). Strings (name, cat) and tracks are
 * ids from gp_store_writer_str / gp_store_writer_track. Fields a table does
 * not use are ignored; unknown values are GP_NONE. */
typedef struct gp_store_ev {
    uint8_t table;              /* gp_store_table */
    uint8_t copy_kind;          /* gp_copy_kind (copies) */
    uint8_t src_kind, dst_kind; /* 0 unknown, 1 pageable, 2 pinned, 3 device, 4 managed, 5 array */
    uint32_t name, cat, track;
    int64_t ts, dur;
    int64_t queued, submit; /* OpenCL queued/submit times (GP_NONE when absent) */
    int64_t corr;           /* correlation id linking an API call to its device work */
    int64_t bytes;          /* copies/memsets/memory events */
    int64_t stream;
    int64_t addr; /* memory events */
    double value; /* counters */
    int32_t device, context;
    int32_t grid[3], block[3];
    int32_t registers, shared_mem;
    int64_t inline_child_ns; /* slices: children aggregated inline (gp_inline_child), 0 none */
} gp_store_ev;

/* Creates or migrates the schema of an open connection (struct sqlite3 *)
 * to GP_STORE_SCHEMA_VERSION in one transaction; GP_EUNSUPPORTED for a
 * store written by a newer gpuprof. Returns 0 or a GP_E* code with err set. */
struct sqlite3;
int gp_store_ensure_schema_(struct sqlite3 *db, const char *path, gp_err *err);
/* 1 when db's table has the column col, 0 when not, -1 on error. */
int gp_store_has_column_(struct sqlite3 *db, const char *table, const char *col);
/* A read-only connection to the store at path that creates no file when
 * the store is another user's (docs/security.md), or NULL. */
struct sqlite3 *gp_store_open_reader(const char *path);

/* Initialises ev to an empty event of `table` (unknown fields GP_NONE). */
void gp_store_ev_init(gp_store_ev *ev, gp_store_table table);

/* Track types of gp_store_writer_track: a host thread (id = tid; the value
 * of GP_TRACK_CPU), a device queue or stream (id = queue/stream id, device;
 * the value of GP_TRACK_GPU), a named NVTX domain's push/pop ranges on one
 * host thread (id = tid, device = the domain's index in the process, name
 * = the domain's name; loaded as a GP_TRACK_CPU track of its own). */
enum { GP_STORE_TRACK_THREAD = 0, GP_STORE_TRACK_QUEUE = 1, GP_STORE_TRACK_NVTX_DOMAIN = 2 };

/* Facts about a run written when it starts. */
typedef struct gp_store_run_info {
    const char *command; /* already redacted, see gp_redact_argv (core/redact.h) */
    const char *host;
    int64_t start_wall_ns, start_mono_ns;
    int64_t pid;
} gp_store_run_info;

/* Opens (creating when absent) the store at path in WAL mode with the schema
 * in place. Returns 0 or a GP_E* code with err set; *out freed with
 * gp_store_close. */
typedef struct gp_store gp_store;
int gp_store_open(const char *path, gp_store **out, gp_err *err);
void gp_store_close(gp_store *s);

/* Inserts a runs row and returns its id (> 0), or a GP_E* code with err set. */
int64_t gp_store_run_begin(gp_store *s, const gp_store_run_info *ri, gp_err *err);
/* Completes a run: exit status (or -signal), duration, the devices and the
 * dropped count: the larger of the sum over its processes rows and
 * dropped_seen (what the writers reported outside the store, see
 * GPUPROF_STATUS_FD in store.c). 0 or GP_E* with err set. */
int gp_store_run_end(gp_store *s, int64_t run, int exit_status, int64_t duration_ns,
                     int64_t dropped_seen, gp_err *err);
/* gp_store_run_begin also makes the run's reserve: 1 MiB of disk in a file
 * FILE-reserve.RUN beside the store, which gp_store_run_end (or this, for a
 * caller with more to write first) removes before the run's last writes,
 * so that a run that filled the disk still records how it ended. */
void gp_store_run_release_reserve(const char *path, int64_t run);

/* 1 when an environment variable is kept with a run: the CUDA_, OPENCL_,
 * GPUPROF_ and NVTX_ variables (which include all that gpuprof run sets). */
int gp_store_env_kept(const char *name);
/* Stores the kept variables of envp ("NAME=VALUE" strings, NULL-terminated)
 * with values redacted by gp_redact_env in run_env(run, name, value). 0 or GP_E* with err set. */
int gp_store_run_env(gp_store *s, int64_t run, char *const *envp, gp_err *err);

/* Per-name statistics of ranges known only as statistics (libgpuprof's
 * rollover, gp_agg_row), table range_stats: name, cat and track are ids of
 * the writer of process `proc` (gp_store_writer_str / _track), times
 * CLOCK_MONOTONIC ns, sketch GP_SKETCH_BUCKETS counts (core/sketch.h). */
typedef struct gp_store_stat {
    uint32_t name, cat, track;
    uint8_t device, backend;
    uint64_t count;
    int64_t total_ns, self_ns, min_ns, max_ns, bytes, first_ns, last_ns;
    double m2;
    const uint64_t *sketch;
    /* the texts of name and cat (NULL: not given): written with the row
     * when the writer never committed them (its batches failed: a full
     * disk), so that the row keeps its name */
    const char *name_text, *cat_text;
} gp_store_stat;
/* Inserts n rows of process proc in one transaction. 0 or GP_E* with err set. */
int gp_store_range_stats(gp_store *s, int64_t proc, const gp_store_stat *v, size_t n, gp_err *err);

/* ---- writer (in recorded processes) ---- */

typedef struct gp_store_writer gp_store_writer;

/* Writer options. commit_ms: the longest time between two commits (<= 200
 * keeps the crash-safety promise); max_pending: events buffered before new
 * ones are dropped and counted. */
typedef struct gp_store_writer_opts {
    int commit_ms;      /* 0 = 100 */
    size_t max_pending; /* 0 = 8 M events */
    const char *source; /* what records: "opencl", "cuda", ... */
} gp_store_writer_opts;

/* Opens its own connection to path, inserts a processes row for this
 * process under `run` and starts the writer thread. Returns NULL with err
 * set on failure. Stop with gp_store_writer_stop. */
gp_store_writer *gp_store_writer_start(const char *path, int64_t run, const gp_store_writer_opts *o,
                                       gp_err *err);
/* Interns s (thread-safe); returns its id for gp_store_ev fields. */
uint32_t gp_store_writer_str(gp_store_writer *w, const char *s);
/* Returns the id (thread-safe, created once per key) of a track: a host
 * thread (type THREAD, id = tid) or a device queue / stream (type QUEUE,
 * id = stream or queue id, device). name may be NULL. */
uint32_t gp_store_writer_track(gp_store_writer *w, int type, int64_t id, int32_t device,
                               const char *name);
/* Records a device seen by this process (kind "opencl"/"cuda"), once per name. */
void gp_store_writer_device(gp_store_writer *w, const char *kind, const char *name);
/* Queues events (thread-safe). Events beyond max_pending are dropped and counted. */
void gp_store_writer_put(gp_store_writer *w, const gp_store_ev *ev, size_t n);
/* Bounded mode, for a producer that may block (libgpuprof's stream sink,
 * whose recording threads never wait): gp_store_writer_put waits for the
 * writer thread while max_pending events are queued instead of dropping,
 * the connection's page cache is cache_kb (0: unchanged), and the writer
 * reports nothing on GPUPROF_STATUS_FD (its store is not `gpuprof run`'s). */
void gp_store_writer_set_bounded(gp_store_writer *w, int cache_kb);
/* Adds to the dropped count (records lost before reaching the writer). */
void gp_store_writer_add_dropped(gp_store_writer *w, uint64_t n);
/* Asks the writer to commit what is queued now and waits until it has. */
void gp_store_writer_flush(gp_store_writer *w);
/* Flushes, commits, stops the thread, records the end of the process and
 * frees w. Returns 0 or the first write error's code. */
int gp_store_writer_stop(gp_store_writer *w);
/* Fork support, for pthread_atfork handlers of a recording library (an
 * SQLite connection must not cross a fork). _prepare: the writer commits
 * what is queued, closes its connection and stops its thread; w's mutex is
 * then held across the fork. _parent: reconnects and restarts the thread.
 * _child: drops the events the parent had queued (the parent writes them),
 * inserts a new processes row for the child under the same run, sends the
 * strings, tracks and devices again under it and starts a fresh writer
 * thread. Failures are printed and leave the writer not writing (events
 * then counted as dropped at stop). */
void gp_store_writer_fork_prepare(gp_store_writer *w);
void gp_store_writer_fork_parent(gp_store_writer *w);
void gp_store_writer_fork_child(gp_store_writer *w);
/* A write of the library in a thread of the recorded program must not end
 * it: under a file size limit (ulimit -f) a write past the limit raises
 * SIGXFSZ, whose default action ends the process. Between gp_xfsz_block and
 * gp_xfsz_unblock the signal is blocked in the calling thread (the write
 * fails with EFBIG instead) and one raised meanwhile is consumed. */
typedef struct gp_xfsz_guard {
    sigset_t old;
    int was_pending;
} gp_xfsz_guard;
void gp_xfsz_block(gp_xfsz_guard *g);
void gp_xfsz_unblock(gp_xfsz_guard *g);

/* The processes row of this writer (its events' proc). */
int64_t gp_store_writer_proc(gp_store_writer *w);
/* Events written (committed) and dropped so far. */
uint64_t gp_store_writer_written(gp_store_writer *w);
uint64_t gp_store_writer_dropped(gp_store_writer *w);
/* Of the dropped events, those of one table (what gp_store_writer_put was
 * given, by its table field; gp_store_writer_add_dropped's are of none). */
uint64_t gp_store_writer_dropped_in(gp_store_writer *w, gp_store_table table);

/* ---- reader ---- */

/* Splits "FILE" or "FILE:ID" into *file (malloc'ed) and *run (0 = latest).
 * Returns 1 when spec names a store (an SQLite file, optionally with :ID),
 * 0 when it does not (*file untouched). */
int gp_store_spec(const char *spec, char **file, int64_t *run);

/* Loads run `run` (0 = the latest) of the store at path into a new trace.
 * Returns 0 or a GP_E* code with err set ("FILE: ..."). */
int gp_store_load(const char *path, int64_t run, gp_trace **out, gp_err *err);

/* One runs row, for `gpuprof runs`. Strings are malloc'ed (free with
 * gp_store_runs_free). Unknown numbers are GP_NONE. */
typedef struct gp_store_run_row {
    int64_t id, start_wall_ns, duration_ns, exit_status, dropped, events, processes;
    int64_t pid; /* the recorder's (gpuprof run's) pid */
    char *command, *host, *devices, *version;
} gp_store_run_row;

/* The state of a run, one definition for every output (docs/recording.md):
 * COMPLETE: finished, nothing dropped; INCOMPLETE: finished but events were
 * dropped; RUNNING: not finished and its recorder is alive on this host;
 * INTERRUPTED: not finished and its recorder is gone (killed, crashed, the
 * store could not be written at the end); UNKNOWN: not finished, recorded on
 * another host. */
typedef enum gp_run_state {
    GP_RUN_COMPLETE,
    GP_RUN_INCOMPLETE,
    GP_RUN_RUNNING,
    GP_RUN_INTERRUPTED,
    GP_RUN_UNKNOWN,
} gp_run_state;
gp_run_state gp_store_run_state(const gp_store_run_row *r);
/* "complete", "incomplete", "running", "interrupted", "unknown". */
const char *gp_run_state_name(gp_run_state s);
int gp_store_runs(const char *path, gp_store_run_row **rows, size_t *n, gp_err *err);
void gp_store_runs_free(gp_store_run_row *rows, size_t n);

/* Runs sql on the store at path and prints the result to f as a table
 * (header + rows, '|' separated) or as JSON lines. 0 or GP_E* with err set. */
int gp_store_sql(const char *path, const char *sql, int json, void *f, gp_err *err);

#endif
