/* analysis/analyze.h: the Holistic Trace Analysis family over the ranks of a
 * job, as one computation (temporal / kernel / idle breakdowns, overlap,
 * launch statistics, queue length, memory bandwidth, CPU/GPU timeline,
 * steps, stragglers). Used by `gpuprof analyze` and the server; written by
 * report/analyze.h. */
#ifndef GP_ANALYSIS_ANALYZE_H
#define GP_ANALYSIS_ANALYZE_H
#include "analysis/bandwidth.h"
#include "analysis/hta_prep.h"
#include "analysis/idle.h"
#include "analysis/kernel_breakdown.h"
#include "analysis/launch.h"
#include "analysis/queue.h"
#include "analysis/steps.h"
#include "analysis/straggler.h"
#include "analysis/temporal.h"
#include "analysis/timeline_stats.h"
#include "core/error.h"

typedef struct gp_analyze_opts {
    int compat;             /* HTA 0.6.1's preprocessing and rounding */
    int wide;               /* text output: do not shorten kernel names */
    long top;               /* kernels per type before folding into 'others' (10) */
    double ratio;           /* cumulative share kept before folding (0.8) */
    int64_t kernel_wait_ns; /* gap below which idle time is kernel_wait (30 us) */
    int64_t queue_full;     /* queue length counted as full (1024) */
    double straggler_z;     /* robust z-score of an outlier rank (3.5) */
    gp_launch_opts lo;      /* launch outlier cutoffs (50 us, 100 us) */
} gp_analyze_opts;

/* The defaults of `gpuprof analyze`. */
void gp_analyze_opts_default(gp_analyze_opts *o);

typedef struct gp_analyze_rank {
    gp_hview v;
    gp_temporal tb;
    double ov_pct;
    int ov_valid;
    gp_topk *top;
    size_t ntop;
    gp_idle_row *idle;
    size_t nidle;
    gp_launch_stats ls[2];
    gp_queue_row *queue;
    size_t nqueue;
    gp_bw_row *bw;
    size_t nbw;
    gp_timeline_stats tl;
    gp_step_row *steps;
    size_t nsteps;
    gp_ktype_time kt; /* this rank's share, summed over ranks afterwards */
    int failed[3];    /* out of memory, per group of analyses */
} gp_analyze_rank;

typedef struct gp_analyze_result {
    gp_analyze_rank *r; /* per rank, by rank */
    size_t n;
    gp_ktype_time kt; /* kernel type breakdown over all ranks */
    gp_straggler_row *sg;
    size_t nsg; /* 0 unless >= 2 ranks have GPU work */
    /* wall / main-thread CPU ns of the phases views, analyses, wait for the
     * timeline thread; and the timeline thread's own wall / CPU ns */
    int64_t phase_ns[3], phase_cpu_ns[3], tl_ns, tl_cpu_ns;
} gp_analyze_result;

/* Analyzes the traces as the ranks of one job. Traces without any event are
 * left out when there is more than one (a folder may hold other JSON files);
 * ranks come from distributedInfo.rank, else a number after "rank" in the
 * file name, else the position, and are sorted. The traces are only read.
 * Returns 0, GP_EINVAL (err set: the traces cannot be prepared) or
 * GP_ENOMEM. Free with gp_analyze_free. */
int gp_analyze_run(gp_trace *const *traces, size_t n, const gp_analyze_opts *o,
                   gp_analyze_result *out, gp_err *err);
void gp_analyze_free(gp_analyze_result *r);

#endif
