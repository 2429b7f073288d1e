/* analysis/temporal.h: HTA's temporal breakdown (GPU busy span split into
 * idle / compute / non-compute time) and communication-computation overlap. */
#ifndef GP_ANALYSIS_TEMPORAL_H
#define GP_ANALYSIS_TEMPORAL_H
#include "analysis/hta_prep.h"

typedef struct gp_temporal {
    int valid;              /* 0 when the view has no GPU events */
    int64_t span_ns;        /* end of the last GPU event - start of the first */
    int64_t idle_ns;        /* span - union of all GPU events */
    int64_t compute_ns;     /* union of COMPUTATION events */
    int64_t non_compute_ns; /* span - compute - idle */
} gp_temporal;

/* Computes the temporal breakdown of v. Returns 0 or GP_ENOMEM. */
int gp_temporal_compute(const gp_hview *v, gp_temporal *out);

/* Percentage of the (merged) COMMUNICATION time during which COMPUTATION
 * also runs. Returns 0 with *valid = 0 when there is no communication time,
 * GP_ENOMEM on out of memory. */
int gp_comm_comp_overlap(const gp_hview *v, double *pct, int *valid);

#endif
