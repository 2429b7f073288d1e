/* serve/cache.h: the traces `gpuprof serve` serves, each named by a short
 * id, loaded once on first use and kept in memory up to a budget (least
 * recently used first out), re-read when a file changed on disk. Every
 * loaded trace also keeps the response bodies computed from it, so that a
 * repeated request is answered without computing again.
 *
 * A request never names a file: it names an id the operator's paths were
 * given at start. Files reached through a folder must lie in that folder
 * (a symlink out of it is refused). Thread-safe. */
#ifndef GP_SERVE_CACHE_H
#define GP_SERVE_CACHE_H
#include "core/error.h"
#include "core/sbuf.h"
#include "trace/trace.h"
#include <stdatomic.h>
#include <stdint.h>

typedef struct gp_tcache gp_tcache;
typedef struct gp_tentry gp_tentry;

/* A cache holding at most mem_bytes of traces and bodies (0 = no limit). */
gp_tcache *gp_tcache_create(uint64_t mem_bytes);
void gp_tcache_destroy(gp_tcache *c);

/* Registers a trace: a file, a folder of rank files, or a run of a store
 * ("gpuprof.db:ID"; "gpuprof.db" = its latest run). Checks that it exists
 * and, for a folder, expands it now; does not load it. The id (8 hex
 * digits, stable for a name) is written to id_out (>= 16 bytes) when not
 * NULL. Returns 0, or GP_EINVAL / GP_EIO with err set. Adding a name twice
 * is a no-op. */
int gp_tcache_add(gp_tcache *c, const char *name, char *id_out, gp_err *err);
/* --redact: every trace loaded from now on is sanitized (trace/sanitize.h,
 * keep: GP_KEEP_* bits), and entries added from now on show a sanitized
 * name. */
void gp_tcache_set_redact(gp_tcache *c, int on, unsigned keep);

/* Finds the trace with id and makes sure it is loaded and current (loads it
 * on first use or when a file changed, in this thread; concurrent callers
 * wait for that load). Returns 0 with *e held (release with
 * gp_tcache_release), GP_ENOENT (no such id; err set) or the load's error. */
int gp_tcache_acquire(gp_tcache *c, const char *id, gp_tentry **e, gp_err *err);
void gp_tcache_release(gp_tcache *c, gp_tentry *e);

/* Makes sure the traces of a held entry have their events' args text (the
 * lossless Chrome export repeats it): a trace is loaded with only where its
 * args lie in its file (trace/args_source.h), and the first caller reads
 * the text in from the file (concurrent callers wait for it; sanitized with
 * --redact). Returns 0; GP_ESTATE when a file is no longer the one loaded
 * (the next gp_tcache_acquire then looks at the files at once and loads
 * them again when nobody holds the entry); or another GP_E* code; err set
 * (out of memory sanitizing the args is kept: the entry's timeline is
 * refused until its files are loaded again). */
int gp_tentry_args(gp_tcache *c, gp_tentry *e, gp_err *err);

/* The traces of a held entry (ranks of a folder; one otherwise) and the
 * name the operator gave. */
gp_trace *const *gp_tentry_traces(const gp_tentry *e, size_t *n);
const char *gp_tentry_name(const gp_tentry *e);

/* Response bodies kept with a held entry, by key (e.g. "summary?top=3").
 * get appends the body to out and returns 1; or returns 0 when absent, and
 * the caller then computes it and must call put (or abandon on failure):
 * meanwhile other requests for the same key wait in get instead of
 * computing it again. */
int gp_tentry_body_get(gp_tcache *c, gp_tentry *e, const char *key, gp_sbuf *out);
/* kind is handed to the aux maker (gp_tcache_set_aux), e.g. JSON or HTML. */
void gp_tentry_body_put(gp_tcache *c, gp_tentry *e, const char *key, const gp_sbuf *body, int kind);
void gp_tentry_body_abandon(gp_tcache *c, gp_tentry *e, const char *key);

/* The server's ready answer for a kept body (an HTTP response with its
 * headers), made once when the body is kept and shared by every request
 * that gets the body from gp_tcache_peek, so that a repeated request costs
 * no copy and no header work. make takes the body's bytes (it owns them
 * from then on and frees them when the last reference is gone) and returns
 * the answer with one reference (the cache's), or NULL (the cache then
 * keeps the bytes itself); ref/unref count references (thread-safe). */
typedef struct gp_tcache_aux_ops {
    void *(*make)(void *user, char *data, size_t n, int kind);
    void (*ref)(void *aux);
    void (*unref)(void *aux);
    void *user;
} gp_tcache_aux_ops;
/* Sets the aux operations (before the first body is kept). */
void gp_tcache_set_aux(gp_tcache *c, const gp_tcache_aux_ops *ops);

/* Without loading or waiting: when trace id is loaded and its files are
 * unchanged (looked at once a second at most), answers the body kept under
 * key and returns 1: when aux is not NULL and the body has a made answer,
 * *aux is that answer with a reference for the caller (drop it with
 * ops->unref); else the bytes are appended to out. Returns 0 when there is
 * no such body (the caller then takes the full path). */
int gp_tcache_peek(gp_tcache *c, const char *id, const char *key, gp_sbuf *out, void **aux);

/* {"traces":[{"id","name","kind","files","state","percent","bytes",
 * "memory_bytes","error"}],"cache_bytes","cache_limit_bytes"}\n where state
 * is "unloaded", "loading", "ready" or "error". */
void gp_tcache_list_json(gp_tcache *c, gp_sbuf *b);

/* Approximate bytes held by a trace (its arrays and strings). */
uint64_t gp_trace_mem_bytes(const gp_trace *t);

#endif
