/* trace/import.h: the streaming Chrome-trace / Kineto JSON importer. */
#ifndef GP_TRACE_IMPORT_H
#define GP_TRACE_IMPORT_H
#include "core/error.h"
#include "trace/trace.h"
#include <stdatomic.h>
#include <stdint.h>

typedef struct gp_import_opts {
    int progress;  /* 1: progress on stderr after 1 s; 0: never; -1: when stderr is a tty */
    int threads;   /* parts parsed in parallel for large plain files; 0 = one per core
                      (or $GPUPROF_IMPORT_THREADS) */
    int keep_args; /* GP_ARGS_TEXT: keep each slice's and instant's "args" text
                      (trace->args_text); GP_ARGS_AT_SOURCE: keep only where each lies in
                      the file (trace/args_source.h); 0: neither */
} gp_import_opts;
enum { GP_ARGS_TEXT = 1, GP_ARGS_AT_SOURCE = 2 };

/* Progress counter of the imports that the calling thread starts from now
 * on (NULL: none): the bytes of each file read so far (compressed bytes for
 * .gz; its size when done) are added to *read_bytes as the import goes (a
 * server shows it as progress). */
void gp_import_count_bytes(_Atomic(uint64_t) *read_bytes);

/* Tests only: fn(arg, pos) is called on the calling thread each time an
 * import of a mapped plain file (trace/import_json.c) passes another 8 MiB
 * window, with the file offset reached (NULL: none). */
void gp_import_test_window_hook(void (*fn)(void *arg, uint64_t pos), void *arg);

/* Imports a .json or .json.gz trace (object form or bare array form).
 * On success *out is a finished trace the caller destroys. On error returns
 * a GP_E* code and err->msg holds one line "FILE:LINE:COL: what was expected". */
int gp_import_json_file(const char *path, const gp_import_opts *opts, gp_trace **out, gp_err *err);

/* Same from memory; `name` is used in messages. */
int gp_import_json_mem(const void *data, size_t n, const char *name, gp_trace **out, gp_err *err);

/* Parses a JSON number into exact integer nanoseconds, taking the text as
 * microseconds (e.g. "12.345" -> 12345). Digits beyond the nanosecond are
 * rounded half away from zero. Returns 0, GP_EPARSE (not a number) or
 * GP_ERANGE (does not fit int64 ns). *end receives the first unparsed byte. */
int gp_parse_us_to_ns(const char *s, const char *lim, int64_t *ns, const char **end);

#endif
