/* analysis/idle.h: idle time per GPU stream split by cause (HTA
 * get_idle_time_breakdown): host_wait, kernel_wait, other. */
#ifndef GP_ANALYSIS_IDLE_H
#define GP_ANALYSIS_IDLE_H
#include "analysis/hta_prep.h"

typedef struct gp_idle_row {
    int64_t stream;
    int64_t host_wait_ns;   /* the launching call started after the previous event ended */
    int64_t kernel_wait_ns; /* else gaps below the threshold (launch back-to-back overhead) */
    int64_t other_ns;       /* every other gap */
    uint64_t gaps;
} gp_idle_row;

/* Computes the breakdown per stream over v's GPU events other than
 * synchronization (kernel type OTHER), each gap being the time from the end
 * of the previous event (in start order) to the start of the next. Streams:
 * in compat mode those with at least one event correlated to a host event
 * (as HTA), else every stream. kernel_wait_threshold_ns: HTA's 30 us.
 * *rows is malloc'd (caller frees). Returns 0 or GP_ENOMEM. */
int gp_idle_breakdown(const gp_hview *v, int64_t kernel_wait_threshold_ns, gp_idle_row **rows,
                      size_t *n);

#endif
