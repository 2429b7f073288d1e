/* serve/metrics.h: the Prometheus text exposition of the device monitor
 * (docs/fleet.md lists every family). One function renders it from one
 * consistent copy of the monitor's latest sample and counters; a cache keeps
 * the rendered text per monitor generation, so a scrape never calls a device
 * library and its cost does not grow with the number of scrapers. Used by
 * `gpuprof monitor --prometheus/--textfile` and `gpuprof serve --monitor`. */
#ifndef GP_SERVE_METRICS_H
#define GP_SERVE_METRICS_H
#include "core/error.h"
#include "core/sbuf.h"
#include "monitor/monitor.h"
#include <gpuprof/monitor.h>
#include <stddef.h>
#include <stdint.h>

/* Content-Type of the exposition (text format 0.0.4). */
#define GP_METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

typedef struct gp_metrics_opts {
    int dcgm;           /* also the dcgm-exporter names and labels */
    char hostname[256]; /* the `hostname` / `Hostname` label; empty: gethostname() */
} gp_metrics_opts;

/* Renders the whole exposition of view v into b (appended): HELP and TYPE
 * for every family, a series only for a value that is known. */
void gp_metrics_render(const gp_mon_view *v, const gp_metrics_opts *o, gp_sbuf *b);

/* One rendered exposition, shared by every reader until released. */
typedef struct gp_metrics_text {
    size_t len;
    char *data;    /* len bytes, NUL-terminated */
    size_t gz_len; /* gzip of data, made once when a reader first asks */
    char *gz;      /* NULL when not asked for (or compression failed) */
} gp_metrics_text;

typedef struct gp_metrics gp_metrics;

/* Creates a cache over monitor m (not owned; it must outlive the cache).
 * Returns NULL when out of memory. Free with gp_metrics_destroy. */
gp_metrics *gp_metrics_create(gp_monitor *m, const gp_metrics_opts *o);
/* Frees the cache; texts still acquired stay valid until released. */
void gp_metrics_destroy(gp_metrics *x);
/* Returns the exposition of the monitor's current generation, rendering it
 * only when the monitor changed since the last call; thread-safe. The
 * caller releases it with gp_metrics_release. NULL when out of memory. */
gp_metrics_text *gp_metrics_acquire(gp_metrics *x);
/* As gp_metrics_acquire, and also makes t->gz (once per text) so that
 * scrapers that accept gzip share one compression per generation. */
gp_metrics_text *gp_metrics_acquire_gzip(gp_metrics *x);
void gp_metrics_release(gp_metrics_text *t);
/* How many times the text was rendered (for tests and benchmarks). */
uint64_t gp_metrics_renders(gp_metrics *x);
/* Writes the current exposition to path atomically: a temporary file in
 * the same folder (not ending in .prom), fsync, rename. 0 or GP_EIO with
 * err filled. */
int gp_metrics_write_textfile(gp_metrics *x, const char *path, gp_err *err);

#endif
