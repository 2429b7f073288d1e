/* analysis/kernel_breakdown.h: time per kernel type and per overlap of
 * types ("COMPUTATION overlapping COMMUNICATION"), and the top kernels of
 * each type (HTA get_gpu_kernel_breakdown). */
#ifndef GP_ANALYSIS_KERNEL_BREAKDOWN_H
#define GP_ANALYSIS_KERNEL_BREAKDOWN_H
#include "analysis/hta_prep.h"

/* Overlap states: bit 0 COMPUTATION, bit 1 COMMUNICATION, bit 2 MEMORY. */
#define GP_KSTATES 8

typedef struct gp_ktype_time {
    int64_t ns[GP_KSTATES]; /* time spent in each non-empty state */
    int seen[GP_KSTATES];   /* the state occurred (possibly for 0 ns) */
} gp_ktype_time;

/* Adds v's time per overlap state to acc (zero-initialise it first; call
 * once per rank to aggregate ranks). Events starting at the instant others
 * end are ordered first, so touching intervals of two types yield a
 * zero-length overlap state (as HTA reports). Returns 0 or GP_ENOMEM. */
int gp_ktype_time_add(const gp_hview *v, gp_ktype_time *acc);
/* Writes the label of state s ("MEMORY", "COMPUTATION overlapping MEMORY"). */
void gp_kstate_label(unsigned s, char *buf, size_t n);

typedef struct gp_topk {
    uint32_t name;         /* string id in the view's trace; GP_NO_INDEX: "others" */
    uint8_t type;          /* gp_ktype */
    uint64_t count;        /* kernels in the row */
    int64_t sum, min, max; /* ns */
    double mean, std;      /* ns; std: sample standard deviation */
} gp_topk;

/* Top kernels of types COMPUTATION, COMMUNICATION, MEMORY: per type, kernels
 * grouped by name and sorted by total time; when there are more than
 * num_kernels names, those past num_kernels or past the duration_ratio
 * quantile of the cumulative sum are folded into one "others" row. In
 * compat mode the statistics of the folded table follow HTA (each named row
 * then has mean = min = max = sum, std 0; "others" has statistics over the
 * folded per-name sums). *rows is malloc'd (caller frees). 0 or GP_ENOMEM. */
int gp_top_kernels(const gp_hview *v, int num_kernels, double duration_ratio, gp_topk **rows,
                   size_t *n);

#endif
