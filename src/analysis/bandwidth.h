/* analysis/bandwidth.h: achieved memory bandwidth per copy kind (HtoD, DtoH,
 * DtoD, memset, ...): count, bytes, time, GB/s overall and per copy. */
#ifndef GP_ANALYSIS_BANDWIDTH_H
#define GP_ANALYSIS_BANDWIDTH_H
#include "analysis/hta_prep.h"
#include "core/stats.h"

typedef struct gp_bw_row {
    uint8_t kind;            /* gp_copy_kind */
    uint64_t count;          /* copies / memsets of this kind */
    uint64_t sized;          /* of which the byte count is known */
    int64_t bytes;           /* sum of known byte counts */
    int64_t time_ns;         /* sum of the durations of all copies */
    int64_t sized_time_ns;   /* sum of the durations of the sized copies */
    int gbps_valid;          /* 0: no sized copy with time > 0 (gbps N/A) */
    double gbps;             /* bytes / sized_time_ns (bytes per ns = GB/s) */
    gp_dstats per_copy_gbps; /* over sized copies with duration > 0 */
} gp_bw_row;

/* Bandwidth of the memcpy / memset events of v (kinds in gp_copy_kind order,
 * only kinds that occur). Durations are the recorded nanosecond ones even in
 * compat mode (whole-microsecond rounding would turn sub-microsecond copies
 * into 0 or -1 us); compat only changes which events are in the view.
 * *rows is malloc'd (caller frees), NULL with *n = 0 when there is no copy.
 * Returns 0 or GP_ENOMEM. */
int gp_bandwidth_compute(const gp_hview *v, gp_bw_row **rows, size_t *n);

#endif
