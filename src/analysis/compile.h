/* analysis/compile.h: torch.compile analysis. From TORCH_TRACE logs (the
 * model of trace/torch_trace.h): compile time per compile id and its parts,
 * totals per log, cache hit ratios, the divergence between ranks. From a
 * Kineto trace of a compiled model (trace/trace.h): compiled regions and
 * their GPU time, eager time outside them, Dynamo cache-lookup overhead,
 * fused Triton kernels and the ATen ops they replace, and with an eager
 * trace beside it the speedup per step and per op group (analysis/compare.c).
 * Definitions: docs/compile.md. */
#ifndef GP_ANALYSIS_COMPILE_H
#define GP_ANALYSIS_COMPILE_H
#include "analysis/advise.h"
#include "analysis/compare.h"
#include "trace/torch_trace.h"
#include "trace/trace.h"
#include <stddef.h>
#include <stdint.h>

/* ---- from the log -------------------------------------------------------- */

/* The compile time of one record: entire_frame_compile_time_s, or
 * dynamo_cumulative_compile_time_us / 1e6 where the former is absent; NaN
 * when both are absent. */
double gp_compile_time_s(const gp_tt_compile *c);

/* The totals of one log, with the definitions of docs/compile.md. */
typedef struct gp_compile_totals {
    uint64_t compiles;     /* compilation_metrics records */
    uint64_t frames;       /* distinct frame_id among them */
    uint64_t recompiles;   /* of them, frame_compile_id > 0 */
    uint64_t graph_breaks; /* total length of their restart_reasons lists */
    uint64_t failures;     /* of them, a non-null fail_type */
    double compile_time_s; /* sum of gp_compile_time_s over them (records with neither: none) */
    uint64_t time_unknown; /* records with neither time field (left out of compile_time_s) */
    uint64_t fx_hit, fx_miss, fx_bypass;    /* fx_graph_cache_{hit,miss,bypass} artifacts */
    uint64_t aot_hit, aot_miss, aot_bypass; /* aotautograd_cache_{hit,miss,bypass} artifacts */
    uint64_t restarted;                     /* attempts restarted (records without metrics) */
} gp_compile_totals;

void gp_compile_totals_of(const gp_tlog *l, gp_compile_totals *t);

/* Hit ratio hit / (hit + miss + bypass); NaN when no lookup was logged. */
double gp_cache_hit_ratio(uint64_t hit, uint64_t miss, uint64_t bypass);

/* The compile phases of one record (chromium events with its compile id),
 * summed per name at nesting depth 0 and 1. */
typedef struct gp_compile_part {
    uint32_t name; /* string id in the log */
    int64_t dur_ns;
    int depth;
} gp_compile_part;

/* Fills out[0..max) with the compile phases of record l->compiles.v[idx]:
 * the chromium_event phases whose compile_id is the record's "F/C" (any
 * attempt), durations summed per (name, depth) for depth 0 and 1, in order
 * of first appearance. Returns how many. A log that repeats a compile id
 * (concatenated logs) sums the phases of all its repeats. */
size_t gp_compile_phases_of(const gp_tlog *l, size_t idx, gp_compile_part *out, size_t max);

/* The user frame of a record: the innermost frame of its dynamo_start
 * stack, or the fail_user_frame, or (co_filename, co_firstlineno). *file is
 * a string id (0 = none) and *line GP_TT_NONE when unknown. */
void gp_compile_user_frame(const gp_tt_compile *c, uint32_t *file, int64_t *line, uint32_t *fn);

/* Divergence between ranks: one row per totals figure that is not the same
 * on every rank (counts differ, or compile time differs from the median by
 * more than GP_RANK_TIME_TOL), plus compile ids present on some ranks only. */
#define GP_RANK_TIME_TOL 0.25
typedef struct gp_rank_div {
    char what[48];  /* "recompiles", "compile_time_s", "compile id 0/3", ... */
    size_t nlogs;   /* values per log (the order of the logs given) */
    double *values; /* NaN where absent */
    double median;
    size_t outlier; /* index of the log farthest from the median */
} gp_rank_div;

typedef struct gp_rank_divergence {
    gp_rank_div *v;
    size_t n;
    int ranked; /* 1 when at least two logs have a rank */
} gp_rank_divergence;

/* Compares logs l[0..n) (n >= 2). Returns 0 or GP_ENOMEM. Free with
 * gp_rank_divergence_free. */
int gp_rank_divergence_of(const gp_tlog *const *l, size_t n, gp_rank_divergence *out);
void gp_rank_divergence_free(gp_rank_divergence *d);

/* ---- from a Kineto trace ------------------------------------------------- */

/* Number of ATen ops an Inductor kernel name says it fused:
 * "triton_poi_fused_add_cos_sin_0" -> 3. Names are "triton_{poi,red,per,
 * tem,...}_fused_" + the op names joined by "_" + "_N"; op names that
 * themselves hold "_" are recognised from a table of ATen ops. Returns 0
 * when the name is not a fused Inductor kernel. */
int gp_fused_op_count(const char *kernel_name);

typedef struct gp_cregion {
    uint32_t name;    /* "Torch-Compiled Region: 0/0" (trace string id) */
    uint64_t count;   /* occurrences */
    int64_t cpu_ns;   /* their CPU duration */
    int64_t gpu_ns;   /* GPU time of the kernels/copies launched inside them */
    uint64_t kernels; /* GPU operations launched inside them */
} gp_cregion;

typedef struct gp_fused_kernel {
    uint32_t name;
    uint64_t count;
    int64_t gpu_ns;
    int ops; /* ATen ops it replaces (gp_fused_op_count) */
} gp_fused_kernel;

typedef struct gp_compiled_trace {
    gp_cregion *regions; /* by first occurrence */
    size_t nregions;
    uint64_t region_calls;
    int64_t region_cpu_ns, region_gpu_ns;
    uint64_t lookups;     /* "TorchDynamo Cache Lookup" slices */
    int64_t lookup_ns;    /* their total duration */
    int64_t eager_gpu_ns; /* GPU time launched outside compiled regions */
    uint64_t eager_kernels;
    int64_t eager_cpu_ns;   /* step (or traced CPU span) time outside regions and lookups */
    gp_fused_kernel *fused; /* Triton kernels whose name says "fused", by gpu time desc */
    size_t nfused;
    uint64_t fused_ops;  /* sum of ops over the distinct fused kernels */
    double fusion_ratio; /* fused_ops / nfused (NaN when none) */
    uint64_t steps;      /* ProfilerStep#N spans (0: the trace has none) */
    uint64_t max_regions_per_step;
    uint64_t steps_with_breaks; /* steps with more than one compiled-region call */
} gp_compiled_trace;

/* Analyses t. Returns 0 or GP_ENOMEM; free with gp_compiled_trace_free. */
int gp_compiled_trace_of(const gp_trace *t, gp_compiled_trace *out);
void gp_compiled_trace_free(gp_compiled_trace *c);

/* Speedup of compiled over eager: per step and per op group, from
 * gp_compare_runs(eager, compiled). Speedup = eager / compiled (> 1: the
 * compiled run is faster); NaN when a side has no such time. */
typedef struct gp_speedup_group {
    gp_group group;
    double eager_ns, compiled_ns; /* total per run */
    double speedup;
} gp_speedup_group;

typedef struct gp_compile_speedup {
    gp_comparison cmp;                      /* the comparison it came from (owned) */
    double step_eager_ns, step_compiled_ns; /* mean ProfilerStep duration (NaN: no steps) */
    double step_speedup;
    double gpu_speedup; /* GPU time per run, eager / compiled */
    gp_speedup_group groups[GP_G__COUNT];
    size_t ngroups;
} gp_compile_speedup;

/* Compares eager (baseline) with compiled. Returns 0 or a GP_E* code. Free
 * with gp_compile_speedup_free. */
int gp_compile_speedup_of(gp_trace *eager, gp_trace *compiled, gp_compile_speedup *out);
void gp_compile_speedup_free(gp_compile_speedup *s);

/* ---- the logs of one `gpuprof compile` (CLI and serve) --------------------- */

/* TORCH_TRACE logs read together, with their advice and (two or more logs)
 * their divergence: what `gpuprof compile LOGS --json` and the dashboard's
 * /api/profiler/compile show. Zero-initialise; free with gp_compile_logs_free. */
typedef struct gp_compile_logs {
    char **files; /* the log files, in the order given (folders expanded) */
    size_t nfiles;
    gp_tlog **logs; /* after gp_compile_logs_read: one per file */
    size_t nlogs;
    gp_advice_list adv; /* the torch-compile advice rules over all logs */
    int have_adv;
    gp_rank_divergence div;
    int have_div;
} gp_compile_logs;

/* Adds a log file, or a folder's *.log / *.log.gz regular files in name
 * order. Returns 0, or GP_EIO / GP_EINVAL ("DIR: no TORCH_TRACE logs ...")
 * with err set. */
int gp_compile_logs_add(gp_compile_logs *c, const char *path, gp_err *err);
/* Reads the files added, then the advice and the divergence. Returns 0, a
 * reader's error (err set) or GP_ENOMEM. */
int gp_compile_logs_read(gp_compile_logs *c, const gp_tt_opts *o, gp_err *err);
void gp_compile_logs_free(gp_compile_logs *c);

#endif
