/* analysis/activity.h: when the CPU and the GPU are busy: the union of CPU
 * slices over all threads, of GPU work over all streams, and their overlap. */
#ifndef GP_ANALYSIS_ACTIVITY_H
#define GP_ANALYSIS_ACTIVITY_H
#include "trace/trace.h"
#include <stdint.h>

/* The one definition of CPU and GPU activity (docs/analyze.md, "CPU and GPU
 * activity"), used by analyze, timeline, report and summary alike. */
typedef struct gp_activity {
    int64_t span_ns;       /* t_end - t_begin */
    int64_t cpu_active_ns; /* time with a CPU operator or runtime/driver call open on any thread */
    int64_t gpu_active_ns; /* time with GPU work (kernel, copy, memset) on any stream */
    int64_t overlap_ns;    /* time both are active */
    uint64_t cpu_slices, gpu_slices;
    int gpu_valid; /* 0 when the trace has no GPU work: GPU figures are N/A */
} gp_activity;

/* Kinds that count as CPU work: cpu_op, runtime, driver (not annotations,
 * ranges, Python frames: they enclose the work). */
unsigned gp_kind_mask_cpu_work(void);
/* Computes the activity figures of t: CPU work as gp_kind_mask_cpu_work,
 * GPU work as gp_kind_mask_gpu_work (kernels, copies, memsets, OpenCL
 * commands). Returns 0 or GP_ENOMEM. */
int gp_activity_compute(const gp_trace *t, gp_activity *out);
/* Same with other kinds counted as CPU and GPU activity, given as masks of
 * GP_KIND_BIT(kind). */
int gp_activity_compute_masks(const gp_trace *t, unsigned cpu_mask, unsigned gpu_mask,
                              gp_activity *out);

/* Sorts and merges intervals iv[0..2n) given as (start, end) pairs in place;
 * returns the number of disjoint intervals left (their pairs first). */
size_t gp_intervals_merge(int64_t *iv, size_t n);
/* Total length of the intersection of two merged interval lists. */
int64_t gp_intervals_overlap(const int64_t *a, size_t na, const int64_t *b, size_t nb);

#endif
