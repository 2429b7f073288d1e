/* render/chrome.h: the one Chrome trace-event / Kineto JSON writer, used by
 * `gpuprof export --format chrome`, `gpuprof timeline -o X.json` and
 * libgpuprof's gp_export_trace. Lossless for what the importer reads: the
 * original pid/tid, category and name, ts and dur in exact nanoseconds (µs
 * with three decimals, whole µs as integers), every event's args (the
 * source's own text when the trace was loaded with GP_LOAD_KEEP_ARGS, else
 * Kineto's names and types rebuilt from the model), instants, [memory]
 * events, counters, all flows (ac2g, fwdbwd, ...), distributedInfo,
 * deviceProperties, baseTimeNanoseconds, traceName, schemaVersion.
 * docs/interop.md describes the format and what is not kept. */
#ifndef GP_RENDER_CHROME_H
#define GP_RENDER_CHROME_H
#include "core/sbuf.h"
#include "render/export.h"

/* Writes t to f. Raw timestamps are rebuilt as t0_abs_ns - baseTimeNanoseconds
 * + ts, so a re-import gives the same trace (and HTA the same figures).
 * st may be NULL. Returns 0, GP_ENOMEM or GP_EIO. */
int gp_chrome_write(const gp_trace *t, FILE *f, gp_export_stats *st);
/* Same with extra top-level members: text `"key":value,` pairs (each
 * followed by a comma) written before "otherData" and "traceEvents". */
int gp_chrome_write_ex(const gp_trace *t, FILE *f, const char *extra, gp_export_stats *st);

/* Appends slice i's arguments rebuilt with Kineto's names and types
 * ("External id", "device", "context", "stream", "correlation", "registers
 * per thread", "shared memory", "blocks per SM", "warps per SM", "grid",
 * "block", "est. achieved occupancy %", "bytes", "memory bandwidth (GB/s)")
 * as "key":value pairs, each preceded by a comma when *comma is non-zero
 * (updated). arg_stream: a "stream" argument of a non-GPU slice, or GP_NONE. */
void gp_chrome_slice_args(const gp_trace *t, size_t i, int64_t arg_stream, gp_sbuf *b, int *comma);

#endif
