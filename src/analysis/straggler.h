/* analysis/straggler.h: stragglers among ranks: robust z-scores (median and
 * median absolute deviation) of each rank's GPU compute and idle time. */
#ifndef GP_ANALYSIS_STRAGGLER_H
#define GP_ANALYSIS_STRAGGLER_H
#include <stddef.h>
#include <stdint.h>

typedef struct gp_straggler_row {
    int rank;
    int64_t compute_ns, idle_ns;
    double compute_z, idle_z; /* robust z-scores (0 when every rank is alike) */
    int by_compute;           /* 1 = most compute time */
    int by_idle;              /* 1 = least idle time */
    int outlier;              /* |compute_z| or |idle_z| above the threshold */
    int straggler;            /* compute_z > threshold or idle_z < -threshold: the
                               * others wait for this rank */
} gp_straggler_row;

/* Robust z-score of x against values with median med and median absolute
 * deviation mad: 0.6745 (x - med) / mad (Iglewicz and Hoaglin). When mad is
 * 0, meanad (mean absolute deviation from the median) stands in:
 * (x - med) / (1.2533 meanad); when that is 0 too the score is 0. */
double gp_robust_z(double x, double med, double mad, double meanad);

/* Fills rows[i] for ranks[i], compute_ns[i], idle_ns[i] (i < n), scoring
 * each metric across the n ranks and flagging |z| > threshold. rows come
 * back in the input order; by_compute / by_idle give the orderings.
 * Returns 0 or GP_ENOMEM. */
int gp_stragglers(const int *ranks, const int64_t *compute_ns, const int64_t *idle_ns, size_t n,
                  double threshold, gp_straggler_row *rows);

#endif
