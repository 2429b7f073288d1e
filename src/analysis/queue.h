/* analysis/queue.h: queue length per GPU stream (HTA
 * get_queue_length_summary): outstanding operations over time, +1 when a
 * launch call is made on the host, -1 when its GPU event starts. */
#ifndef GP_ANALYSIS_QUEUE_H
#define GP_ANALYSIS_QUEUE_H
#include "analysis/hta_prep.h"

typedef struct gp_queue_row {
    int64_t stream;
    int64_t max;       /* largest queue length */
    double mean;       /* time-weighted mean between the first and last change */
    double full_pct;   /* share of that time with length >= full_at */
    uint64_t launches; /* operations counted */
} gp_queue_row;

/* Launch calls: cudaLaunchKernel(ExC), cuLaunchKernel(Ex), cudaMemcpyAsync,
 * cudaMemsetAsync, hipLaunchKernel, hipExtModuleLaunchKernel,
 * hipMemcpyAsync, hipMemsetAsync, hipMemcpyWithStream, each correlated to a
 * GPU event. At equal timestamps decrements are applied first. full_at:
 * HTA's 1024. *rows is malloc'd (caller frees). Returns 0 or GP_ENOMEM. */
int gp_queue_length(const gp_hview *v, int64_t full_at, gp_queue_row **rows, size_t *n);

#endif
