/* render/export.h: writing a whole trace in an interchange format (Chrome /
 * Kineto JSON: render/chrome.h; Perfetto protobuf: render/perfetto.h) to a
 * file or stdout, shared by `gpuprof export` and `gpuprof timeline`. */
#ifndef GP_RENDER_EXPORT_H
#define GP_RENDER_EXPORT_H
#include "core/error.h"
#include "trace/trace.h"
#include <stdint.h>
#include <stdio.h>

typedef enum gp_export_format {
    GP_EXPORT_CHROME = 0, /* Chrome trace-event JSON with Kineto's fields */
    GP_EXPORT_PERFETTO,   /* Perfetto TracePacket protobuf (.pftrace) */
} gp_export_format;

typedef struct gp_export_stats {
    uint64_t slices, instants, mem_events, counters, flows;
    uint64_t
        flows_synthesized; /* ac2g flow ends made from correlation ids (no flows in the trace) */
    uint64_t bytes;        /* bytes written */
} gp_export_stats;

/* Parses "chrome" / "json" / "perfetto" / "pftrace"; -1 when unknown. */
int gp_export_format_parse(const char *name);

/* Writes t in format fmt to path ("-" = stdout). Returns 0 or a GP_E* code
 * with err set to one line. st may be NULL. */
int gp_export_write(const gp_trace *t, gp_export_format fmt, const char *path, gp_export_stats *st,
                    gp_err *err);

#endif
