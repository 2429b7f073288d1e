/* analysis/summary.h: per-operation statistics grouped by name within each
 * category group, and the top bottlenecks by self time. */
#ifndef GP_ANALYSIS_SUMMARY_H
#define GP_ANALYSIS_SUMMARY_H
#include "core/stats.h"
#include "trace/trace.h"

typedef enum gp_group {
    GP_G_KERNEL = 0, /* GPU kernels (and OpenCL kernels) */
    GP_G_MEMORY,     /* memcpy / memset */
    GP_G_CPU_OP,     /* framework CPU operators */
    GP_G_RUNTIME,    /* runtime and driver API calls */
    GP_G_ANNOTATION, /* user annotations and ranges (CPU and GPU side) */
    GP_G_PYTHON,     /* python functions */
    GP_G_SYNC,       /* GPU-side synchronization */
    GP_G_OTHER,
    GP_G__COUNT
} gp_group;

/* Group of a kind; GP_G__COUNT for kinds left out of summaries (the
 * profiler's own Trace span). */
gp_group gp_group_of_kind(gp_kind k);
const char *gp_group_name(gp_group g);
/* Pseudo group of compare and history (never of a slice): the figures of
 * `gpuprof bench` runs, counter series named "bench:KEY" (values in the
 * key's unit, not durations). gp_group_name gives "bench". */
#define GP_G_BENCH ((gp_group)(GP_G__COUNT + 1))
/* 1 when a counter series name is a bench figure ("bench:..."). */
int gp_is_bench_series(const char *name);
/* Parses a group name ("kernel", "memory", "cpu_op", ...); -1 if unknown. */
int gp_group_parse(const char *s);

/* Self time (docs/analyze.md, "Self time"): a slice's duration minus the
 * durations of the slices nested in it on the same track (partial overlaps
 * clipped to the parent, analysis/calltree.c). Summed over the slices of one
 * track it never exceeds the track's busy time, so shares of self time add
 * up to at most 100 % of the span per thread; inclusive totals of nested
 * operations count the same time once per level. */
typedef struct gp_op_row {
    gp_group group;
    uint32_t name;    /* string id in the trace */
    gp_stats st;      /* durations in ns (inclusive) */
    double share_pct; /* total / traced span * 100 (inclusive) */
    int64_t self_ns;  /* self time summed over the slices */
    double self_pct;  /* self_ns / traced span * 100 */
    /* ranges of this row known only as statistics (trace->aggs): count, sum,
     * min, max, mean and std stay exact; percentiles then come from the
     * merged sketch (within GP_SKETCH_REL_ERR) and pct_approx is 1 */
    uint64_t agg_count;
    int pct_approx;
    gp_entry_sum em; /* per-entry metrics summed over the row's ranges (libgpuprof) */
} gp_op_row;

typedef struct gp_summary {
    gp_op_row *rows; /* sorted by group, then total descending */
    size_t n;
    int64_t span_ns;                     /* t_end - t_begin */
    int64_t group_total_ns[GP_G__COUNT]; /* inclusive sums */
    int64_t group_self_ns[GP_G__COUNT];  /* self time sums: category totals */
    uint64_t group_count[GP_G__COUNT];
    int64_t self_total_ns; /* sum of group_self_ns */
} gp_summary;

/* Per-entry metrics (docs/api.md "Per-entry metrics"): the one definition
 * of the derived figures, used by the library's results, its export, and
 * `summary` / `report`. */
/* Adds src to dst: counts and byte/time sums add, the peak is the larger. */
void gp_entry_sum_add(gp_entry_sum *dst, const gp_entry_sum *src);
/* 1 when e holds any metric (a timing, an allocation or a free). */
int gp_entry_sum_any(const gp_entry_sum *e);
/* Transfer bandwidth in bytes per second: xfer_bytes / xfer_ns (from the
 * totals, not a mean of ratios); NAN when no transfer time was recorded. */
double gp_entry_bandwidth(const gp_entry_sum *e);
/* Appends e's members as JSON keys ("gpu_timers", "gpu_ns", "xfers",
 * "xfer_ns", "xfer_bytes", "bandwidth_Bps" when defined, "allocs",
 * "alloc_bytes", "frees", "freed_bytes", "peak_bytes" when allocs > 0)
 * after *comma members already written; the importer reads them back. */
struct gp_sbuf;
void gp_entry_sum_json(struct gp_sbuf *b, const gp_entry_sum *e, int *comma);

/* Computes the summary of t. Returns 0 or GP_ENOMEM. Free with gp_summary_free. */
int gp_summary_compute(const gp_trace *t, gp_summary *out);
void gp_summary_free(gp_summary *s);

/* Fills idx[0..k) with indices of the top rows by self time (then total)
 * over the groups in mask (bit g set = include): the bottlenecks. Returns
 * k <= max. */
size_t gp_summary_top(const gp_summary *s, unsigned mask, size_t *idx, size_t max);
/* The groups whose rows are bottleneck candidates (a mask for
 * gp_summary_top), one rule for `summary` (text, JSON) and `report`: every
 * group but the annotations, which enclose the operations; in a trace with
 * no framework CPU operator and no python function (a libgpuprof export, an
 * NVTX-only program) the user's ranges are the operations, and the
 * annotations are candidates too. */
unsigned gp_summary_bottleneck_mask(const gp_summary *s);

/* The library's row (gp_summary_row, include/gpuprof/gpuprof.h) of op row o
 * of t: name (copied), group, statistics, self time, per-entry metrics;
 * bytes -1 (the caller sets what it knows). 0 or GP_ENOMEM. One conversion
 * for gp_summary_rows and the session results. */
struct gp_summary_row; /* include/gpuprof/gpuprof.h */
int gp_summary_row_of(const gp_trace *t, const gp_op_row *o, struct gp_summary_row *w);
/* Sorts rows by self time, descending, then by name: the bottleneck order
 * of gp_bottlenecks and of session results. */
void gp_summary_rows_by_self(struct gp_summary_row *rows, size_t n);

#endif
