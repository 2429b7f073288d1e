/* gpuprof/gpuprof.h: libgpuprof, the in-process instrumentation library:
 * ranges, function timing, kernel timers (CUDA events, OpenCL events), a
 * memory tracker, counters/observations and in-process results. */
#ifndef GPUPROF_GPUPROF_H
#define GPUPROF_GPUPROF_H
#include <gpuprof/common.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ */
/* Profilers                                                          */

typedef struct gp_profiler gp_profiler; /* opaque */

/* Where recorded ranges go (gp_options.sink; docs/api.md "Sinks").
 * Per-thread buffers are drained by a background thread and their chunks
 * recycled, so a recording thread keeps writing into warm memory. */
typedef enum gp_sink {
    /* default: the first keep_max ranges of each thread, and at most
     * 2 x keep_max in all threads, are kept as events (full trace:
     * timeline, attributes); later ranges roll over into the per-name
     * statistics of the aggregate sink (counted, never lost) */
    GP_SINK_AUTO = 0,
    /* every range kept in memory up to keep_max per thread (0: no cap);
     * ranges beyond the cap are dropped and counted */
    GP_SINK_KEEP,
    /* per-name statistics only (count, total, self, min, max, exact
     * variance, quantile sketch), in fixed memory per name and thread */
    GP_SINK_AGGREGATE,
    /* events written to stream_path (Chrome trace JSON) as they are drained
     * and then dropped from memory; statistics of every range are kept */
    GP_SINK_STREAM
} gp_sink;

typedef struct gp_options {
    int start_disabled;      /* 1: recording starts off (enable with gp_enable) */
    int clock;               /* 0: auto (TSC when invariant, else CLOCK_MONOTONIC), 1: always
                                CLOCK_MONOTONIC */
    int leak_report;         /* 0: print the leak report at destroy, 1: never */
    FILE *report_stream;     /* where the leak report goes (NULL: stderr) */
    const char *name;        /* process/profiler name used in exports (NULL: "gpuprof") */
    int sink;                /* gp_sink (0: GP_SINK_AUTO) */
    int64_t keep_max;        /* ranges kept as events per thread: 0 = the sink's default
                                (AUTO: 131072, and 2 x keep_max in all threads; KEEP: no
                                cap), < 0 = no cap */
    const char *stream_path; /* GP_SINK_STREAM: the trace file to write (copied) */
} gp_options;

/* Creates a profiler (opts may be NULL for defaults). Returns NULL on out of
 * memory. The caller destroys it with gp_profiler_destroy. */
GP_API gp_profiler *gp_profiler_create(const gp_options *opts);
/* Destroys p: prints the leak report for tracked buffers never untracked
 * (unless disabled in the options) and frees everything. No thread may record
 * into p during or after this call. NULL is ignored. */
GP_API void gp_profiler_destroy(gp_profiler *p);
/* Returns the process-wide default profiler, created on first use with
 * default options (thread-safe). It lives until exit; never destroy it.
 * Environment, read at creation: GPUPROF_SINK=keep|aggregate|stream (with
 * GPUPROF_STREAM=FILE) and GPUPROF_KEEP_MAX=N choose the sink,
 * GPUPROF_DISABLE=1 starts it off,
 * GPUPROF_CLOCK=monotonic avoids the TSC, GPUPROF_LEAK_REPORT=1 prints the
 * leak report (buffers still tracked) to stderr at exit (atexit). */
GP_API gp_profiler *gp_default(void);
/* Turns recording on/off at run time (any thread). Ranges opened while on are
 * still closed by their gp_range_end after turning off, and nesting is kept:
 * a begin made while off, inside a range recorded while on, is counted (not
 * recorded), so that its end closes nothing and the outer range's own end
 * closes the outer range. */
GP_API void gp_enable(gp_profiler *p);
GP_API void gp_disable(gp_profiler *p);
/* 1 when recording, else 0. */
GP_API int gp_enabled(const gp_profiler *p);
/* Discards everything recorded so far (ranges, kernel times, counters,
 * observations); tracked buffers stay tracked but the peak restarts at the
 * current total. Ranges open at the time are dropped. Returns 0. */
GP_API int gp_profiler_reset(gp_profiler *p);
/* What happened to the ranges recorded so far. */
typedef struct gp_record_stats {
    uint64_t kept;       /* ranges kept as events (slices in memory or written by the stream) */
    uint64_t aggregated; /* ranges known only as per-name statistics */
    uint64_t dropped;    /* ranges and values lost (keep cap, out of memory, a stream that could
                            not write them, counter samples / memory events past the sink's
                            cap: docs/api.md "Sinks"), counted */
} gp_record_stats;
/* Fills *out (a snapshot while threads record). Returns 0. */
GP_API int gp_record_stats_get(gp_profiler *p, gp_record_stats *out);

/* The last error message of p (empty string when none). */
GP_API const char *gp_last_error(const gp_profiler *p);

/* ------------------------------------------------------------------ */
/* Ranges                                                             */

/* Where a range ran and which backend it used (the seed's attributes). */
typedef enum gp_device_kind { GP_DEV_UNSET = 0, GP_DEV_CPU, GP_DEV_GPU } gp_device_kind;
typedef enum gp_backend {
    GP_BACKEND_UNSET = 0,
    GP_BACKEND_CPU,
    GP_BACKEND_CUDA,
    GP_BACKEND_OPENCL
} gp_backend;

/* ABI detail, not API (do not use it directly): every gp_profiler starts with
 * this prefix, so that the hot-path calls below are inline wrappers that read
 * the recording state without a call and call out of line (the exported
 * gp_*_slow_ functions) only when there may be something to do. state (read
 * with a relaxed atomic load): GP_STATE_OFF_ = off and no range open on any
 * thread (begin, end, attributes, counters return at once), GP_STATE_ON_ =
 * recording, GP_STATE_OFF_OPEN_ = off while some thread may still have a
 * range open (begin/end go out of line to keep nesting; attributes, counters
 * and observations return at once). */
typedef struct gp_profiler_head_ {
    int state;
} gp_profiler_head_;
enum { GP_STATE_OFF_ = 0, GP_STATE_ON_ = 1, GP_STATE_OFF_OPEN_ = 2 };
static inline int gp_state_(const gp_profiler *p)
{
    return __atomic_load_n(&((const gp_profiler_head_ *)(const void *)p)->state, __ATOMIC_RELAXED);
}

/* Out-of-line halves of the hot-path calls (exported; they check the state
 * themselves, so calling them directly is correct, only slower). */
GP_API void gp_range_begin_slow_(gp_profiler *p, const char *name);
GP_API void gp_range_end_slow_(gp_profiler *p);
GP_API void gp_range_begin_ex_slow_(gp_profiler *p, const char *name, gp_device_kind device,
                                    gp_backend backend, int64_t bytes);
GP_API void gp_range_attr_int_slow_(gp_profiler *p, const char *key, int64_t value);
GP_API void gp_range_attr_str_slow_(gp_profiler *p, const char *key, const char *value);
GP_API void gp_counter_slow_(gp_profiler *p, const char *name, double value);
GP_API void gp_observe_slow_(gp_profiler *p, const char *name, double value);

/* The hot-path calls below (gp_range_begin, gp_range_end, gp_range_begin_ex,
 * gp_range_attr_int/_str, gp_counter, gp_observe) are `static inline` wrappers.
 * The library also exports real functions with these names (for FFI such as
 * ctypes, and binaries built against older headers): define GP_NO_INLINE
 * before including this header to call those instead. */
#ifdef GP_NO_INLINE
#define GP_HOT_(ret, name, params, body) GP_API ret name params;
#else
#define GP_HOT_(ret, name, params, body) static inline ret name params body
#endif

/* Opens a range named `name` on the calling thread (ranges nest per thread).
 * `name` is stored by pointer: it must stay valid until p is destroyed
 * (string literals, or strings from gp_intern). Cheap: no lock, no
 * allocation except one chunk per 2,048 events. Does nothing when disabled
 * (but is counted when a range recorded earlier is still open on this
 * thread, see gp_enable). */
GP_HOT_(void, gp_range_begin, (gp_profiler * p, const char *name), {
    if (gp_state_(p) != GP_STATE_OFF_) gp_range_begin_slow_(p, name);
})
/* Closes the innermost open range of the calling thread (or the innermost
 * begin counted while off); ignored when none. */
GP_HOT_(void, gp_range_end, (gp_profiler * p), {
    if (gp_state_(p) != GP_STATE_OFF_) gp_range_end_slow_(p);
})
/* gp_range_begin plus the seed's attributes: device, backend and a size in
 * bytes (negative: none). */
GP_HOT_(void, gp_range_begin_ex,
        (gp_profiler * p, const char *name, gp_device_kind device, gp_backend backend,
         int64_t bytes),
        {
            if (gp_state_(p) != GP_STATE_OFF_)
                gp_range_begin_ex_slow_(p, name, device, backend, bytes);
        })
/* Attach a user key/value to the innermost open range of this thread. `key`
 * is stored by pointer (same rule as names); the string value is copied.
 * Ignored when no range is open, the innermost begin was not recorded, or
 * recording is off. */
GP_HOT_(void, gp_range_attr_int, (gp_profiler * p, const char *key, int64_t value), {
    if (gp_state_(p) == GP_STATE_ON_) gp_range_attr_int_slow_(p, key, value);
})
GP_HOT_(void, gp_range_attr_str, (gp_profiler * p, const char *key, const char *value), {
    if (gp_state_(p) == GP_STATE_ON_) gp_range_attr_str_slow_(p, key, value);
})
/* Returns a copy of s owned by p (same string -> same pointer), usable as a
 * range name or key when s itself does not live long enough; NULL on OOM. */
GP_API const char *gp_intern(gp_profiler *p, const char *s);

/* Helpers for GP_SCOPE (not for direct use). gp_scope_begin_ returns p when
 * the begin was recorded or counted (so the scope's end must run), else NULL. */
GP_API gp_profiler *gp_scope_begin_(gp_profiler *p, const char *name);
static inline void gp_scope_end_(gp_profiler **pp)
{
    if (*pp) gp_range_end(*pp);
}
/* Skips a profiler that is off with no range open without any call. */
static inline gp_profiler *gp_scope_enter_(gp_profiler *p, const char *name)
{
    return gp_state_(p) != GP_STATE_OFF_ ? gp_scope_begin_(p, name) : (gp_profiler *)0;
}
#define GP_CAT2_(a, b) a##b
#define GP_CAT_(a, b)  GP_CAT2_(a, b)
/* GP_SCOPE(p, "name"): a range that ends itself when the enclosing block is
 * left (uses the GCC/Clang cleanup attribute). */
#define GP_SCOPE(p, name)                                                                          \
    gp_profiler *GP_CAT_(gp_scope_, __LINE__) __attribute__((cleanup(gp_scope_end_), unused)) =    \
        gp_scope_enter_((p), (name))
/* GP_FUNC(p): a scope named after the enclosing function (the seed's
 * decorator, placed as the first statement of the function). */
#define GP_FUNC(p) GP_SCOPE(p, __func__)
/* GP_TIME_CALL(p, call): times one function call (any expression statement)
 * as a range named after the call text, e.g. GP_TIME_CALL(p, sort(v, n)). */
#define GP_TIME_CALL(p, call)                                                                      \
    do {                                                                                           \
        gp_profiler *gp_tc_p_ = gp_scope_enter_((p), #call);                                       \
        call;                                                                                      \
        if (gp_tc_p_) gp_range_end(gp_tc_p_);                                                      \
    } while (0)

/* Records calls to functions compiled with -finstrument-functions into
 * gp_default() (built with -DGP_INSTRUMENT_FUNCTIONS=ON; link
 * libgpuprof_finstr and -rdynamic so that dladdr can name the functions).
 * These switch the hooks on/off for the calling process (default on). */
GP_API void gp_finstr_enable(int on);
/* Hook helper for libgpuprof_finstr (not for direct use): opens a range named
 * after the function at address fn (symbolized with dladdr when results are
 * computed); closed by gp_range_end. Returns 1 when recorded, else 0. */
GP_API int gp_func_enter_(gp_profiler *p, const void *fn);

/* ------------------------------------------------------------------ */
/* Kernel timers                                                      */

/* CUDA: records a CUDA event pair on `stream` (a cudaStream_t, NULL = the
 * default stream) around the work enqueued between begin and end. Times are
 * read later (at a results call or gp_kernels_resolve) without synchronizing
 * in the hot path. libcudart is loaded with dlopen at the first call.
 * Returns 0, GP_EUNSUPPORTED (built without the CUDA toolkit), GP_ENODEV (no
 * libcudart / no device: message in gp_last_error), GP_ESTATE (end without
 * begin on this stream). */
GP_API int gp_cuda_begin(gp_profiler *p, const char *name, void *stream);
GP_API int gp_cuda_end(gp_profiler *p, const char *name, void *stream);
/* gp_cuda_end for a transfer (a copy enqueued between begin and end):
 * `bytes` moved (>= 0; -1 = not a transfer). The timing then counts as
 * transfer time and bytes in the per-entry metrics of the ranges it was
 * ended in (docs/api.md "Per-entry metrics"). */
GP_API int gp_cuda_end_ex(gp_profiler *p, const char *name, void *stream, int64_t bytes);

struct _cl_event; /* cl_event is struct _cl_event * */
/* OpenCL: times the command behind `ev` (queue created with
 * CL_QUEUE_PROFILING_ENABLE) from CL_PROFILING_COMMAND_START/END once it
 * completes. The event is retained until resolved. Returns 0,
 * GP_EUNSUPPORTED (built without OpenCL), GP_EINVAL (bad event). */
GP_API int gp_cl_event(gp_profiler *p, const char *name, struct _cl_event *ev);
/* gp_cl_event for a transfer (e.g. the event of clEnqueueWriteBuffer):
 * `bytes` moved (>= 0; -1 = not a transfer), as gp_cuda_end_ex. */
GP_API int gp_cl_event_ex(gp_profiler *p, const char *name, struct _cl_event *ev, int64_t bytes);

/* Waits for (when `wait` is 1) or polls all pending CUDA/OpenCL timings and
 * moves completed ones into the results. Returns the number still pending. */
GP_API int gp_kernels_resolve(gp_profiler *p, int wait);

/* Per-kernel statistics (times in ns). */
typedef struct gp_kernel_row {
    char *name;
    gp_backend backend;
    uint64_t count;
    int64_t total_ns, min_ns, max_ns;
    double mean_ns, std_ns;
} gp_kernel_row;
/* Resolves completed timings and returns per-kernel rows sorted by total
 * descending in *rows (caller frees with gp_kernel_rows_free). 0 or GP_ENOMEM. */
GP_API int gp_kernel_stats(gp_profiler *p, gp_kernel_row **rows, size_t *n);
GP_API void gp_kernel_rows_free(gp_kernel_row *rows, size_t n);
/* The seed's kernel report: kernel, calls, total, mean, min, max, TOTAL row. */
GP_API void gp_print_kernels(gp_profiler *p, FILE *f);

/* ------------------------------------------------------------------ */
/* Memory tracker                                                     */

/* Tracks a buffer (e.g. a device allocation): name (copied), address (the
 * key), size, shape (ndim dims, copied; may be NULL/0) and dtype (copied, may
 * be NULL). Returns 0, GP_EINVAL (NULL ptr or already tracked) or GP_ENOMEM. */
GP_API int gp_mem_track(gp_profiler *p, const char *name, const void *ptr, size_t bytes,
                        const int64_t *shape, int ndim, const char *dtype);
/* Stops tracking ptr. Returns 0 or GP_ENOTFOUND. */
GP_API int gp_mem_untrack(gp_profiler *p, const void *ptr);
/* Bytes currently tracked, and the peak since create/reset. */
GP_API int64_t gp_mem_current(gp_profiler *p);
GP_API int64_t gp_mem_peak(gp_profiler *p);
/* Number of buffers currently tracked. */
GP_API size_t gp_mem_count(gp_profiler *p);

/* Device memory pool statistics; fields are valid only when *_valid is 1. */
typedef struct gp_mem_pool {
    gp_backend backend;
    int total_valid, free_valid;
    int64_t total_bytes, free_bytes;
} gp_mem_pool;
/* Names the OpenCL device (a cl_device_id) whose global memory size the
 * memory report shows. Returns 0 or GP_EUNSUPPORTED. */
GP_API int gp_mem_set_cl_device(gp_profiler *p, void *cl_device_id);
/* Fills *out from the CUDA runtime (cudaMemGetInfo) when a device is usable,
 * else from the OpenCL device set above. Returns 0 or GP_ENODEV. */
GP_API int gp_mem_pool_info(gp_profiler *p, gp_mem_pool *out);
/* The seed's memory report: current, peak, per-buffer table (name, shape,
 * dtype, size), device pool statistics when available. */
GP_API void gp_print_memory(gp_profiler *p, FILE *f);
/* Prints the buffers still tracked ("leaks") to f; returns their number. */
GP_API size_t gp_print_leaks(gp_profiler *p, FILE *f);

/* ------------------------------------------------------------------ */
/* Counters and observations                                          */

/* Appends a sample to the time series `name` (stored by pointer, as range
 * names). Lock-free; ignored when disabled (inline check). */
GP_HOT_(void, gp_counter, (gp_profiler * p, const char *name, double value), {
    if (gp_state_(p) == GP_STATE_ON_) gp_counter_slow_(p, name, value);
})
/* Adds one value to the distribution `name` (e.g. an inference latency in
 * ms). Lock-free; ignored when disabled (inline check). */
GP_HOT_(void, gp_observe, (gp_profiler * p, const char *name, double value), {
    if (gp_state_(p) == GP_STATE_ON_) gp_observe_slow_(p, name, value);
})

typedef struct gp_observation {
    uint64_t count;
    double sum, mean, std, min, max, p50, p95, p99;
} gp_observation;
/* Statistics of the distribution `name`. Returns 0 or GP_ENOTFOUND. */
GP_API int gp_observation_stats(gp_profiler *p, const char *name, gp_observation *out);
/* Samples recorded for counter `name`; GP_ENOTFOUND when none. Returns the
 * last value in *last and the count in *n. */
GP_API int gp_counter_last(gp_profiler *p, const char *name, double *last, uint64_t *n);

/* ------------------------------------------------------------------ */
/* Results                                                            */

/* One per-operation row (ranges by name, kernels by name). Times in ns. */
typedef struct gp_summary_row {
    char *name;
    const char *group; /* "annotation" (ranges) or "kernel" (static string) */
    uint64_t count;
    int64_t total_ns, self_ns, min_ns, max_ns;
    double mean_ns, std_ns, p50_ns, p95_ns, p99_ns;
    int64_t bytes;       /* sum of the bytes attribute, -1 when none was given */
    uint64_t aggregated; /* of count, ranges known only as statistics (sinks) */
    int pct_approx;      /* 1: p50/p95/p99 from the quantile sketch (within 1.6 %) */
    /* per-entry metrics summed over the row's ranges (docs/api.md
     * "Per-entry metrics"; all 0 for kernel rows and ranges without any) */
    uint64_t gpu_timers;              /* device timings closed inside the ranges */
    int64_t gpu_ns;                   /* their device time, summed */
    uint64_t xfers;                   /* of them, transfers (_ex with bytes) */
    int64_t xfer_ns, xfer_bytes;      /* the transfers' device time and bytes */
    double bandwidth_Bps;             /* xfer_bytes / xfer_ns in bytes/s; NAN when no transfer */
    uint64_t allocs, frees;           /* gp_mem_track / gp_mem_untrack calls inside */
    int64_t alloc_bytes, freed_bytes; /* bytes they tracked / untracked (gross) */
    int64_t peak_bytes; /* highest tracked total after an allocation inside; -1 none */
} gp_summary_row;
/* Per-operation rows, sorted by total descending. Caller frees with
 * gp_summary_rows_free. Returns 0 or GP_ENOMEM. */
GP_API int gp_summary_rows(gp_profiler *p, gp_summary_row **rows, size_t *n);
GP_API void gp_summary_rows_free(gp_summary_row *rows, size_t n);
/* Top-n rows by self time (time not covered by nested ranges) into *rows
 * (caller frees with gp_summary_rows_free). 0 or GP_ENOMEM. */
GP_API int gp_bottlenecks(gp_profiler *p, size_t n, gp_summary_row **rows, size_t *nout);
/* Text reports. */
GP_API void gp_print_summary(gp_profiler *p, FILE *f);
GP_API void gp_print_bottlenecks(gp_profiler *p, size_t n, FILE *f);
/* Writes the results as a JSON object that `gpuprof summary` reads (Chrome
 * trace events plus "gpuprof" sections: summary, kernels, observations,
 * memory). Returns 0 or GP_EIO (message in gp_last_error). */
GP_API int gp_export_json(gp_profiler *p, const char *path);
/* Writes a Chrome/Perfetto trace: one track per thread, one per GPU
 * stream/queue, counters as counter tracks. Returns 0 or GP_EIO. */
GP_API int gp_export_trace(gp_profiler *p, const char *path);

/* ------------------------------------------------------------------ */
/* Measure a function                                                 */

typedef struct gp_time_stats {
    int valid;
    double mean_ns, std_ns, min_ns, max_ns, p50_ns, p95_ns, p99_ns;
} gp_time_stats;

typedef struct gp_result {
    char name[128];
    int iterations;
    gp_time_stats wall; /* wall-clock time per iteration */
    gp_time_stats cpu;  /* CPU time of the calling thread per iteration */
    gp_time_stats gpu;  /* kernel time recorded into p during each iteration
                           (valid when a kernel timer was used) */
    int mem_peak_valid; /* peak tracked memory during the iterations */
    int64_t mem_peak_bytes;
} gp_result;

/* Calls fn(arg) `warmup` times, then `iterations` timed times (each also
 * recorded as a range `name`). Fills *out. Returns 0 or GP_EINVAL. */
GP_API int gp_measure(gp_profiler *p, const char *name, void (*fn)(void *), void *arg, int warmup,
                      int iterations, gp_result *out);

typedef struct gp_comparison {
    double speedup; /* base mean wall / current mean wall (>1: faster) */
    int gpu_valid;
    double gpu_speedup; /* same on GPU time */
    int mem_valid;
    int64_t mem_diff_bytes; /* current peak - base peak */
} gp_comparison;
/* Compares two results. Returns 0 or GP_EINVAL (invalid wall times). */
GP_API int gp_result_compare(const gp_result *base, const gp_result *cur, gp_comparison *out);

/* ------------------------------------------------------------------ */
/* Sessions: one result for a stretch of a program (the seed's          */
/* ProfileSession)                                                      */

typedef struct gp_session gp_session; /* opaque */

typedef struct gp_session_result {
    char name[128];
    int64_t total_ns;            /* wall time from gp_session_begin to gp_session_end */
    int64_t cpu_ns;              /* CPU time of the process (user + system) in that time */
    int gpu_valid;               /* 1 when a CUDA/OpenCL kernel timer completed in the session */
    int64_t gpu_ns;              /* device time of those kernel timings (sum of their durations) */
    uint64_t kernel_launches;    /* timings completed in the session (transfers too) */
    int mem_valid;               /* 1 when buffers were tracked (gp_mem_track) */
    int64_t mem_peak_bytes;      /* peak of tracked bytes during the session */
    int64_t mem_allocated_bytes; /* tracked bytes at the end */
    int reserved_valid;          /* 1 when the device pool is known (gp_mem_pool_info) */
    int64_t mem_reserved_bytes;  /* device memory in use (total - free) at the end */
    /* operations of the session (counts and times are the session's share:
     * totals at the end minus totals at the begin) */
    gp_kernel_row *kernels; /* top kernels by total device time */
    size_t nkernels;
    gp_summary_row *bottlenecks; /* top operations by self time (inclusive beside) */
    size_t nbottlenecks;
    char **recommendations; /* advice engine findings on the profiler's data */
    size_t nrecommendations;
} gp_session_result;

/* Starts a session named `name` (copied) on p: snapshots the per-operation
 * and kernel statistics, CPU time and memory. Returns NULL on out of memory.
 * End it with gp_session_end. */
GP_API gp_session *gp_session_begin(gp_profiler *p, const char *name);
/* Ends s (freeing it) and fills *out (free with gp_session_result_free).
 * Returns 0, GP_EINVAL or GP_ENOMEM. */
GP_API int gp_session_end(gp_session *s, gp_session_result *out);
GP_API void gp_session_result_free(gp_session_result *r);
/* Prints the result as the seed's session summary. */
GP_API void gp_session_result_print(const gp_session_result *r, FILE *f);
/* Writes the result as one JSON object to path ("gpuprof-session-1"
 * schema, times in ns). Returns 0 or GP_EIO. */
GP_API int gp_session_result_json(const gp_session_result *r, const char *path);

typedef struct gp_session_cmp {
    double speedup; /* base total / current total (> 1: current is faster) */
    int cpu_valid;
    double cpu_speedup; /* same on CPU time */
    int gpu_valid;
    double gpu_speedup; /* same on GPU time (both sessions had kernel timings) */
    int mem_valid;
    int64_t mem_peak_diff_bytes; /* current peak - base peak */
} gp_session_cmp;
/* Compares two session results (the seed's compare_sessions). Returns 0 or
 * GP_EINVAL (a total time that is not positive). */
GP_API int gp_session_compare(const gp_session_result *base, const gp_session_result *cur,
                              gp_session_cmp *out);

#ifdef __cplusplus
}
#endif
#endif
