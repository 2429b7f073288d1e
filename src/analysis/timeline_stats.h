/* analysis/timeline_stats.h: CPU/GPU timeline statistics (the seed's
 * TimelineGenerator figures): span, CPU-active, GPU-active, both, CPU-only,
 * GPU-only and idle time of one trace. */
#ifndef GP_ANALYSIS_TIMELINE_STATS_H
#define GP_ANALYSIS_TIMELINE_STATS_H
#include "trace/trace.h"
#include <stdint.h>

typedef struct gp_timeline_stats {
    int64_t span_ns;       /* t_end - t_begin of the whole trace */
    int64_t cpu_active_ns; /* union of CPU op, runtime and driver slices (all threads) */
    int64_t gpu_active_ns; /* union of kernels, copies, memsets (all streams) */
    int64_t overlap_ns;    /* both active */
    int64_t cpu_only_ns;   /* cpu_active - overlap */
    int64_t gpu_only_ns;   /* gpu_active - overlap */
    int64_t idle_ns;       /* span - (cpu_active + gpu_active - overlap) */
    uint64_t cpu_slices, gpu_slices;
    int gpu_valid; /* 0 when the trace has no GPU work: GPU figures are N/A */
} gp_timeline_stats;

/* Computes the figures of t over the whole trace at nanosecond precision
 * (through gp_activity_compute_masks). Returns 0 or GP_ENOMEM. */
int gp_timeline_stats_compute(const gp_trace *t, gp_timeline_stats *out);

#endif
