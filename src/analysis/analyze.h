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

/* The results of one rank: self-contained (no pointer into the trace), so
 * that the trace and its view are freed as soon as the rank is analyzed and
 * a rank's results can travel in a --shard part (report/analyze_part.h). */
typedef struct gp_analyze_rank {
    int rank;          /* the rank (see gp_analyze_assemble) */
    char *source;      /* the trace's source (file name) */
    int step_filtered; /* compat: events after the last ProfilerStep were dropped */
    gp_temporal tb;
    double ov_pct;
    int ov_valid;
    gp_topk *top;    /* rows; top[k].name is GP_NO_INDEX for "others", else 0 */
    char **top_name; /* per row: the kernel's name, NULL for "others" */
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
} gp_analyze_rank;

typedef struct gp_analyze_result {
    gp_analyze_rank *r; /* per rank, by rank */
    size_t n;
    gp_ktype_time kt; /* kernel type breakdown over all ranks */
    gp_straggler_row *sg;
    size_t nsg; /* 0 unless >= 2 ranks have GPU work */
    /* rank numbers given to more than one file (each file stays a rank of
     * its own): how many times, and the first such rank with the indices
     * (into the input files) of its first two files */
    size_t ndup;
    int dup_rank;
    size_t dup_file[2];
} gp_analyze_result;

/* What one input file contributes: the unit of analyze's worker pool and of
 * a --shard part. Which files are ranks, their rank numbers and (compat)
 * whether the step filter applies depend on all the files together, so each
 * file keeps what gp_analyze_assemble needs to decide. */
typedef struct gp_analyze_file {
    int is_trace;   /* holds an event array (other JSON files of a folder are no rank) */
    int has_events; /* at least one trace event was read */
    int rank_hint;  /* distributedInfo.rank, else a number after "rank" in the
                     * file name, else -1 (the rank is then the position) */
    size_t nstep;   /* compat: distinct ProfilerStep* names among the view's events */
    char *step[2];  /* (the first two; two or more anywhere turn the step filter on) */
    /* results: 1, or 2 in compat mode when nstep < 2 and the job has other
     * files (the step filter then depends on the other ranks): [0]
     * unfiltered, [1] filtered; 0 when !is_trace */
    size_t nvar;
    gp_analyze_rank var[2];
    /* CPU ns this file took in its worker: load, view, analyses, timeline
     * statistics (GPUPROF_ANALYZE_TIMES; not part of the results) */
    int64_t cpu_ns[4];
} gp_analyze_file;

/* Called on each loaded trace before it is analyzed (NULL: none); *is_trace
 * comes set to whether it holds an event array and may be set to 1 (a file
 * named by the user counts as a trace). A non-zero return (a GP_E* code with
 * err set) is that file's error. */
typedef int (*gp_analyze_accept_fn)(const gp_trace *t, const char *path, size_t index, void *ctx,
                                    int *is_trace, gp_err *err);

/* Analyzes the files paths[first, end) of the job's n files (expanded as by
 * gp_paths_expand) with
 * `workers` threads (0: one per core, never more than the files): each
 * worker imports a file, analyzes it, keeps its results (out[i - first]) and
 * frees the trace before taking the next, so the peak memory is about
 * workers x one rank, not the sum of the ranks. A worker alone on a file
 * runs that rank's analyses on every core. On an error the workers stop
 * taking files and the error of the first failing file (in path order) is
 * returned with err set; out is then freed. */
int gp_analyze_files(char *const *paths, size_t n, size_t first, size_t end, int workers,
                     const gp_analyze_opts *o, gp_analyze_accept_fn accept, void *ctx,
                     gp_analyze_file *out, gp_err *err);

/* Combines the files of one job (in input order) into the result: files
 * without an event array are left out; of several traces, those without any
 * event are left out too; ranks come from rank_hint, else the position among
 * the ranks, and are sorted (stable); compat: the step filter applies when
 * the ranks together have two or more distinct ProfilerStep* names. The
 * chosen results move into out (files keep the rest; free both). Returns 0,
 * GP_ENOTFOUND (err set: no file holds a trace) or GP_ENOMEM. */
int gp_analyze_assemble(gp_analyze_file *files, size_t n, const gp_analyze_opts *o,
                        gp_analyze_result *out, gp_err *err);
void gp_analyze_file_free(gp_analyze_file *f);
void gp_analyze_rank_free(gp_analyze_rank *r);

/* Analyzes traces already in memory as the ranks of one job (the server):
 * the same per-file analysis and gp_analyze_assemble, every trace counting
 * as a trace file. The traces are only read. Returns 0, GP_ENOTFOUND or
 * GP_ENOMEM (err set). Free with gp_analyze_free. */
int gp_analyze_run(gp_trace *const *traces, size_t n, const gp_analyze_opts *o,
                   gp_analyze_result *out, gp_err *err);
void gp_analyze_free(gp_analyze_result *r);

#endif
