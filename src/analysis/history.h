/* analysis/history.h: one operation's figures over a sequence of runs (the
 * runs of a store, oldest first) and detection of the runs where its mean
 * duration stepped (binary segmentation + Mann-Whitney U test). */
#ifndef GP_ANALYSIS_HISTORY_H
#define GP_ANALYSIS_HISTORY_H
#include "analysis/summary.h"
#include "core/strtab.h"
#include "trace/trace.h"
#include <stddef.h>
#include <stdint.h>

typedef struct gp_history_opts {
    double alpha;         /* significance level of a step (default 0.05) */
    double threshold_pct; /* relative change of the mean a step needs (default 5) */
    unsigned group_mask;  /* groups followed (bit per gp_group; default all) */
} gp_history_opts;

/* Fills o with the defaults above (those of gpuprof compare). */
void gp_history_opts_default(gp_history_opts *o);

/* One operation in one run. Figures are NaN when count is 0. */
typedef struct gp_hist_point {
    uint64_t count;
    double total_ns, mean_ns, p50_ns, p95_ns;
} gp_hist_point;

/* A step: the mean per instance changed from run `at` on. */
typedef struct gp_hist_step {
    size_t at;                  /* index (into the runs) of the first run after the step */
    size_t seg_begin, seg_end;  /* runs [seg_begin, seg_end): from the previous step (or the
                                   first run) to the next step (or past the last run) */
    double before_ns, after_ns; /* mean of the per-run means in [seg_begin, at) / [at, seg_end) */
    double change_pct;          /* 100 * (after - before) / before */
    double p;      /* Mann-Whitney p on the per-run means, Bonferroni-adjusted over the splits */
    double effect; /* P(before > after) + P(=)/2; < 0.5: slower after */
} gp_hist_step;

typedef struct gp_hist_op {
    gp_group group;
    uint32_t name;       /* id in gp_history.names */
    gp_hist_point *pts;  /* one per run */
    size_t runs_present; /* runs with at least one instance */
    gp_hist_step *steps; /* ordered by run */
    size_t nsteps;
    double change_pct; /* mean of the last run present vs the first, in % (NaN if < 2 runs) */
    double spread_pct; /* (max - min) / min of the per-run means, in % (NaN if < 2 runs) */
    double score;      /* ranking: largest |step change %|; without a step spread_pct (-1: none) */
    double total_ns;   /* total time over all runs */
    int metric;        /* a bench figure (group GP_G_BENCH): every *_ns figure above and in
                          pts/steps is in the figure's unit instead (GB/s, GFLOP/s, us) */
    int higher_better; /* metric whose larger values are better (bandwidth, throughput) */
} gp_hist_op;

typedef struct gp_history gp_history;

/* Creates an empty history (caller frees with gp_history_destroy); NULL on
 * out of memory. */
gp_history *gp_history_create(const gp_history_opts *o);
void gp_history_destroy(gp_history *h);

/* Appends run t (the next one in order) to h: its per-operation durations
 * are copied, so t may be freed afterwards; so are the samples of its
 * bench figures (counter series "bench:KEY", group GP_G_BENCH). Returns 0
 * or GP_ENOMEM. */
int gp_history_add_run(gp_history *h, const gp_trace *t);

/* Computes every operation's per-run figures and steps. Call once after the
 * last gp_history_add_run. Returns 0 or GP_ENOMEM. */
int gp_history_finish(gp_history *h);

/* Runs added. */
size_t gp_history_runs(const gp_history *h);
/* Operations after gp_history_finish, ordered by score (steps first, the
 * largest step first), then by total time. The array belongs to h. */
const gp_hist_op *gp_history_ops(const gp_history *h, size_t *n);
/* Name of an operation. */
const char *gp_history_name(const gp_history *h, uint32_t name);

/* Finds steps in the per-run samples of one operation: runs[r] points at
 * the ascending durations of run r (cnt[r] of them; 0 = absent, left out of
 * the sequence). Binary segmentation finds candidates: in a segment of >= 2
 * runs present, the split maximising the between-segment sum of squares of
 * the per-run means is a candidate when the mean of the run means changes by
 * >= threshold; then both halves are searched again. Each candidate is then
 * tested between its neighbouring candidates: the two-sided Mann-Whitney
 * test of the per-run means before/after gives p * (splits) < alpha in the
 * direction of the change, and the change is >= threshold; while some fail,
 * the weakest is dropped and the others are tested again. Fills *steps
 * (malloc'ed, caller frees) ordered by run. Returns 0 or GP_ENOMEM. */
int gp_history_steps(const int64_t *const *runs, const size_t *cnt, size_t nruns,
                     const gp_history_opts *o, gp_hist_step **steps, size_t *nsteps);

#endif
