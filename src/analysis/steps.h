/* analysis/steps.h: per-step figures from ProfilerStep#N annotations: the
 * step's span and the GPU work launched during it (busy, idle, compute time,
 * kernel count). */
#ifndef GP_ANALYSIS_STEPS_H
#define GP_ANALYSIS_STEPS_H
#include "analysis/hta_prep.h"

typedef struct gp_step_row {
    int64_t step;        /* N of ProfilerStep#N */
    int64_t ts, span_ns; /* the annotation: start (ns since t0) and duration */
    uint64_t gpu_events; /* GPU events attributed to the step */
    uint64_t kernels;    /* of which kernels */
    int gpu_valid;       /* 0 when no GPU event is attributed (GPU figures N/A) */
    int64_t gpu_span_ns; /* end of its last GPU event - start of its first */
    int64_t gpu_busy_ns; /* union of its GPU events */
    int64_t gpu_idle_ns; /* gpu_span - gpu_busy */
    int64_t compute_ns;  /* union of its COMPUTATION events */
} gp_step_row;

/* One row per host event named ProfilerStep#N in v (not counting the
 * gpu_user_annotation copy Kineto draws on the GPU), by start. A GPU event
 * belongs to the step during which its launching host event (same
 * correlation id) started, or, without one, to the step during which it
 * started itself. *rows is malloc'd (caller frees), NULL with *n = 0 when
 * there is no step. Returns 0 or GP_ENOMEM. */
int gp_steps_compute(const gp_hview *v, gp_step_row **rows, size_t *n);

#endif
