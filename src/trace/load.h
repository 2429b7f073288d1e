/* trace/load.h: loading several traces at once (files or folders of rank
 * files), imported in parallel with one thread per core. */
#ifndef GP_TRACE_LOAD_H
#define GP_TRACE_LOAD_H
#include "core/error.h"
#include "trace/trace.h"
#include <stdatomic.h>
#include <stdint.h>

/* Expands paths: a folder contributes its *.json and *.json.gz files in
 * name order; a run store ("gpuprof.db" = its latest run, "gpuprof.db:ID")
 * is one trace (read by store/store.h when built with SQLite). Returns a NULL-terminated array the
 * caller frees with gp_paths_free, or NULL with err set. */
char **gp_paths_expand(char *const *paths, int n, size_t *count, gp_err *err);
void gp_paths_free(char **paths);

/* Imports paths[0..n) with up to `threads` threads (0 = one per core).
 * On success traces[i] corresponds to paths[i]. On the first error returns
 * its code with err set and no trace left allocated. */
int gp_load_many(char *const *paths, size_t n, int threads, gp_trace **traces, gp_err *err);
/* Same; the bytes read so far of all the files (compressed bytes for .gz;
 * a store run counts when loaded) are added to *read_bytes as the imports
 * go (used for progress; may be NULL). */
int gp_load_many_progress(char *const *paths, size_t n, int threads, gp_trace **traces, gp_err *err,
                          _Atomic(uint64_t) *read_bytes);

/* gp_load_many_progress with flags: GP_LOAD_KEEP_ARGS keeps every JSON
 * event's "args" text in the trace (trace->args_text), for lossless exports. */
#define GP_LOAD_KEEP_ARGS 1u
/* GP_LOAD_ARGS_AT_SOURCE keeps only where each "args" object lies in its
 * file (trace/args_source.h; read in by gp_trace_args_read when needed). */
#define GP_LOAD_ARGS_AT_SOURCE 2u

/* Imports one file (or run store spec); progress as gp_import_opts; threads:
 * parts a large plain file may be parsed in (0 = one per core). Returns 0
 * with *out set, or a GP_E* code with err set and *out NULL. */
int gp_load_one(const char *path, int threads, unsigned flags, int progress, gp_trace **out,
                gp_err *err);
int gp_load_many_ex(char *const *paths, size_t n, int threads, unsigned flags, gp_trace **traces,
                    gp_err *err, _Atomic(uint64_t) *read_bytes);

#endif
