/* analysis/compare.h: baseline-vs-current comparison of one or more runs per
 * side: per-operation figures, a Mann-Whitney U test plus a relative
 * threshold for each verdict, overall change and peak memory. */
#ifndef GP_ANALYSIS_COMPARE_H
#define GP_ANALYSIS_COMPARE_H
#include "analysis/summary.h"
#include "core/strtab.h"
#include "trace/trace.h"
#include <stddef.h>
#include <stdint.h>

typedef enum gp_verdict {
    GP_V_REGRESSION = 0, /* large and significant increase */
    GP_V_IMPROVEMENT,    /* large and significant decrease */
    GP_V_NO_CHANGE,      /* change below the relative threshold */
    GP_V_UNSURE,         /* "~": large change that is not significant */
    GP_V_NEW,            /* only in the current runs */
    GP_V_REMOVED,        /* only in the baseline runs */
    GP_V_IGNORED,        /* below --min-time on both sides */
    GP_V__COUNT
} gp_verdict;

/* "REGRESSION", "IMPROVEMENT", "NO_CHANGE", "~", "NEW", "REMOVED", "IGNORED". */
const char *gp_verdict_name(gp_verdict v);

typedef enum gp_cmp_mode {
    GP_CMP_AUTO = 0,  /* per-run totals when both sides have >= 2 runs, else instances */
    GP_CMP_INSTANCES, /* per-instance durations (pooled over a side's runs) */
    GP_CMP_RUNS,      /* per-run totals (needs >= 2 runs per side) */
} gp_cmp_mode;

typedef enum gp_cmp_correction {
    GP_CORR_NONE = 0,
    GP_CORR_HOLM, /* Holm-Bonferroni over all tested operations (the default) */
} gp_cmp_correction;

typedef struct gp_compare_opts {
    double alpha;         /* significance level (default 0.05) */
    double threshold_pct; /* relative change needed (default 5) */
    int64_t min_time_ns;  /* ops whose total per run is below this on both sides: IGNORED */
    unsigned group_mask;  /* groups compared (bit per gp_group) */
    gp_cmp_mode mode;
    gp_cmp_correction correction;
} gp_compare_opts;

/* Fills o with the defaults above (all groups, auto mode, Holm correction). */
void gp_compare_opts_default(gp_compare_opts *o);

/* Samples fewer than this on a side make a verdict weak (a warning). */
#define GP_CMP_FEW_SAMPLES 9

typedef struct gp_cmp_side {
    double count;     /* instances per run (mean over the side's runs) */
    double total_ns;  /* total time per run (mean over runs) */
    double mean_ns;   /* mean duration per instance (NaN when absent) */
    uint64_t samples; /* values given to the test */
} gp_cmp_side;

typedef struct gp_cmp_row {
    gp_group group;
    uint32_t name; /* id in gp_comparison.names */
    gp_cmp_side base, cur;
    double base_fig, cur_fig; /* compared figure: mean per instance, or total per run */
    double change_ns;         /* cur_fig - base_fig (NaN for NEW/REMOVED) */
    double change_pct;        /* 100 * change / base_fig (NaN when base_fig is 0 or absent) */
    double p;                 /* two-sided Mann-Whitney p-value (NaN: not tested) */
    double p_adj;             /* after the multiple-test correction (== p without one) */
    double effect;            /* P(base > current) + P(=)/2; < 0.5: current slower */
    int exact;                /* p from the exact distribution */
    int few_samples;          /* a side has fewer than GP_CMP_FEW_SAMPLES samples */
    gp_verdict verdict;
    int higher_better; /* bench figures (gp_comparison.metrics): larger is better, so a
                          significant decrease is the REGRESSION */
} gp_cmp_row;

typedef struct gp_cmp_mem {
    int device_type, device_id;  /* Kineto's Device Type (0 CPU, 1 CUDA) and Id */
    int base_valid, cur_valid;   /* the side had [memory] events for this device */
    int64_t base_peak, cur_peak; /* bytes: max over runs of the peak allocated */
    int64_t base_live_end,
        cur_live_end; /* bytes allocated during the trace, not freed (max over runs) */
    uint64_t base_allocs, cur_allocs; /* allocations per run (max over runs) */
} gp_cmp_mem;

/* Buffers of libgpuprof's memory tracker with one name, from gp_export_json
 * files (the buffers still tracked when each file was written). */
typedef struct gp_cmp_buffer {
    uint32_t name;                  /* id in gp_comparison.names */
    int base_valid, cur_valid;      /* the name was tracked on that side */
    int64_t base_bytes, cur_bytes;  /* bytes of the buffers with the name (max over runs) */
    uint32_t base_count, cur_count; /* buffers with the name (max over runs) */
} gp_cmp_buffer;

/* A side's memory tracker figures (valid when its files had the section). */
typedef struct gp_cmp_tracked {
    int valid;
    int64_t peak_bytes, current_bytes; /* max over runs */
} gp_cmp_tracked;

typedef struct gp_comparison {
    gp_strtab *names; /* operation names (owned) */
    gp_cmp_row *rows; /* sorted by group, then |change_ns| descending */
    size_t n;
    size_t base_runs, cur_runs;
    int by_runs; /* 1: samples were per-run totals; 0: per-instance durations */
    gp_compare_opts opts;
    size_t verdicts[GP_V__COUNT];
    size_t few_sample_rows;           /* tested rows with a side below GP_CMP_FEW_SAMPLES */
    double geomean_ratio;             /* geometric mean of cur_fig/base_fig (NaN when none) */
    size_t geomean_n;                 /* rows in it */
    double base_span_ns, cur_span_ns; /* traced span per run (mean) */
    double base_gpu_ns, cur_gpu_ns;   /* kernel + memcpy/memset time per run (mean) */
    gp_cmp_mem *mem;
    size_t nmem;
    gp_cmp_tracked base_tracked, cur_tracked;
    gp_cmp_buffer *bufs; /* by |cur_bytes - base_bytes| descending, then name */
    size_t nbufs;
    /* Bench figures (counter series "bench:KEY" of `gpuprof bench` runs),
     * group GP_G_BENCH, kept apart from the operations: every *_ns field of
     * these rows is in the figure's unit (GB/s, GFLOP/s, us); samples are
     * the repetitions (pooled over a side's runs) or, by runs, the per-run
     * means; Holm correction over these rows; sorted by name. */
    gp_cmp_row *metrics;
    size_t nmetrics;
    size_t metric_verdicts[GP_V__COUNT];
} gp_comparison;

/* The name under which compare and history match an operation across runs:
 * "ProfilerStep#N" becomes "ProfilerStep#*" (steps compared as samples); any
 * other name is returned as is. *len is the name's length, updated. */
const char *gp_compare_op_name(const char *name, size_t *len);

/* Compares runs base[0..nb) with cur[0..nc) (each >= 1 trace). Returns 0,
 * GP_EINVAL (no run on a side, or GP_CMP_RUNS with < 2 runs on a side) or
 * GP_ENOMEM. Free *out with gp_comparison_free. */
int gp_compare_runs(gp_trace *const *base, size_t nb, gp_trace *const *cur, size_t nc,
                    const gp_compare_opts *o, gp_comparison *out);
void gp_comparison_free(gp_comparison *c);

/* Fills idx with up to max row indices of verdict v, largest |change_ns|
 * first; returns how many. */
size_t gp_comparison_top(const gp_comparison *c, gp_verdict v, size_t *idx, size_t max);

#endif
