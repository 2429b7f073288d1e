/* render/perfetto.h: Perfetto's native trace format (a protobuf `Trace` of
 * TracePackets, ../shared/perfetto/perfetto_trace.proto), written by the
 * project's own small wire-format encoder: TrackEvent slices (BEGIN/END,
 * properly nested per track), instants and counters, event names and
 * categories interned, one track per CPU thread (ThreadDescriptor, with
 * process names) and per GPU stream / OpenCL queue (under a "GPU N" track),
 * flows from each launch to its GPU work and the trace's other flows,
 * memory counters per device and the trace's own counter series, a clock
 * snapshot mapping the trace clock (BOOTTIME, ns since the trace start) to
 * the wall clock. docs/interop.md lists what each packet carries. */
#ifndef GP_RENDER_PERFETTO_H
#define GP_RENDER_PERFETTO_H
#include "render/export.h"
#include "trace/trace.h"
#include <stdio.h>

/* Writes t to f as a .pftrace. st receives the counts (slices = BEGIN/END
 * pairs, flows = flow links). Returns 0, GP_ENOMEM or GP_EIO. */
int gp_perfetto_write(const gp_trace *t, FILE *f, gp_export_stats *st);

#endif
