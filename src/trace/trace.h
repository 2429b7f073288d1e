/* trace/trace.h: the trace model every source produces and every analysis
 * reads. Columnar: one array of fixed-size records per event kind, strings
 * interned once, integer nanoseconds relative to the trace start (t0). */
#ifndef GP_TRACE_TRACE_H
#define GP_TRACE_TRACE_H
#include "core/strtab.h"
#include "core/vec.h"
#include <stdint.h>

#define GP_NONE     (-1)       /* absent correlation / external id / int field */
#define GP_NO_INDEX UINT32_MAX /* absent index */

/* What an event is. Importers map their own category names onto these; the
 * original name is kept in gp_category.name. */
typedef enum gp_kind {
    GP_K_OTHER = 0,
    GP_K_CPU_OP,          /* cpu_op, operator, Operator */
    GP_K_PYTHON,          /* python_function */
    GP_K_USER_ANNOTATION, /* user_annotation (CPU side ranges, ProfilerStep#N) */
    GP_K_GPU_ANNOTATION,  /* gpu_user_annotation (ranges drawn on GPU streams) */
    GP_K_RUNTIME,         /* cuda_runtime, Runtime, hip_runtime, mtia_runtime */
    GP_K_DRIVER,          /* cuda_driver */
    GP_K_KERNEL,          /* kernel, Kernel, mtia_ccp_events */
    GP_K_MEMCPY,          /* gpu_memcpy, Memcpy */
    GP_K_MEMSET,          /* gpu_memset, Memset */
    GP_K_SYNC,            /* cuda_sync (GPU-side synchronization) */
    GP_K_TRACE_SPAN,      /* Trace: the profiler's own window */
    GP_K_OVERHEAD,        /* overhead, cuda_profiler_range */
    GP_K_RANGE,           /* ranges from gpuprof's own API / NVTX */
    GP_K_CL_COMMAND,      /* OpenCL command (kernel, read, write, copy) */
    GP_K__COUNT
} gp_kind;

/* 1 when events of this kind execute on a GPU stream / queue. */
int gp_kind_is_gpu(gp_kind k);
/* Short lowercase name ("kernel", "cpu_op", ...). */
const char *gp_kind_name(gp_kind k);

typedef struct gp_category {
    uint32_t name; /* original category string id */
    uint8_t kind;  /* gp_kind */
} gp_category;

typedef enum gp_track_type {
    GP_TRACK_CPU = 0, /* a host thread */
    GP_TRACK_GPU,     /* a GPU stream or OpenCL queue */
    GP_TRACK_OTHER,   /* anything else (string pid/tid, spans) */
} gp_track_type;

typedef struct gp_track {
    int64_t pid, tid; /* as in the source; string ids hashed, see *_str */
    uint32_t pid_str; /* string id when the source pid was a string, else 0 */
    uint32_t tid_str;
    uint32_t name; /* thread name (string id, 0 = none) */
    uint32_t process_name;
    uint8_t type;   /* gp_track_type */
    int32_t device; /* GPU device id (GP_NONE if unknown / CPU) */
    int64_t stream; /* GPU stream id (GP_NONE if unknown / CPU) */
} gp_track;

/* Copy kinds derived from memcpy names ("Memcpy HtoD (Pageable -> Device)"). */
typedef enum gp_copy_kind {
    GP_COPY_UNKNOWN = 0,
    GP_COPY_HTOD,
    GP_COPY_DTOH,
    GP_COPY_DTOD,
    GP_COPY_HTOH,
    GP_COPY_PTOP,
    GP_COPY_MEMSET,
} gp_copy_kind;

/* Slice flags */
#define GP_SLICE_FROM_BE 0x1 /* built from B/E pair */
#define GP_SLICE_WARMUP  0x2 /* libgpuprof: a kernel timed during gp_measure's warm-up */
/* a libgpuprof range whose begin named its device (gp_range_begin_ex;
 * "device":"cpu"/"gpu" in an export): the seed's advice rules treat it as a
 * CPU operation or a GPU operation */
#define GP_SLICE_DEV_CPU 0x4
#define GP_SLICE_DEV_GPU 0x8

/* A complete duration event ("X", or a matched B/E pair). 48 bytes. */
typedef struct gp_slice {
    int64_t ts;          /* ns since t0 */
    int64_t dur;         /* ns, >= 0 */
    int64_t correlation; /* links a launch (runtime/driver) to its GPU work; GP_NONE */
    int64_t external_id; /* links GPU work / runtime to its cpu_op; GP_NONE */
    uint32_t name;       /* string id */
    uint32_t track;      /* index into trace->tracks */
    uint32_t gpu;        /* index into trace->gpu_info or GP_NO_INDEX */
    uint16_t cat;        /* index into trace->cats */
    uint16_t flags;
} gp_slice;

/* Extra facts about GPU-side slices (kernels, copies, memsets) and launches.
 * 72 bytes (the order of the members avoids padding). */
typedef struct gp_gpu_info {
    int32_t device, context;
    int64_t stream;
    int32_t grid[3], block[3];                        /* 0 when unknown */
    int32_t registers;                                /* per thread, GP_NONE when unknown */
    int32_t shared_mem;                               /* bytes, GP_NONE when unknown */
    int64_t bytes;                                    /* copy/memset bytes, GP_NONE when unknown */
    float blocks_per_sm, warps_per_sm, occupancy_pct; /* NaN when unknown */
    uint8_t copy_kind;                                /* gp_copy_kind */
    uint8_t src_kind, dst_kind; /* 0 unknown, 1 pageable, 2 pinned, 3 device, 4 managed, 5 array */
} gp_gpu_info;

/* A flow endpoint ("s", "t", "f"): ac2g launch->kernel, fwdbwd, ... */
typedef struct gp_flow {
    int64_t ts;
    int64_t id;
    uint32_t track;
    uint32_t name; /* string id (0 = none) */
    uint16_t cat;
    char ph;             /* 's', 't' or 'f' */
    char bind_enclosing; /* 1 when bp == "e" */
} gp_flow;

/* An instant event (other than [memory]). */
typedef struct gp_instant {
    int64_t ts;
    uint32_t name;
    uint32_t track;
    uint16_t cat;
    char scope; /* 't', 'p', 'g' */
} gp_instant;

/* A [memory] instant: an allocation (bytes > 0) or free (bytes < 0). */
typedef struct gp_mem_event {
    int64_t ts;
    uint64_t addr;
    int64_t bytes;
    int64_t total_allocated; /* GP_NONE when absent */
    int64_t total_reserved;  /* GP_NONE when absent */
    uint32_t track;
    int16_t device_type; /* Kineto: 0 CPU, 1 CUDA, ... */
    int16_t device_id;
} gp_mem_event;

/* One sample of a counter series ("C" events, sampler values). */
typedef struct gp_counter_sample {
    int64_t ts;
    double value;
    uint32_t series; /* index into trace->series */
} gp_counter_sample;

typedef struct gp_series {
    uint32_t name; /* "event name" or "event name.key" */
    uint32_t track;
} gp_series;

/* A numeric "stream" argument on a slice that has no gp_gpu_info (e.g. the
 * cpu_op of a Triton kernel carries "stream": 0). HTA treats any event with a
 * stream argument as GPU work; `analyze --compat hta` needs these to match. */
typedef struct gp_arg_stream {
    uint32_t slice; /* index into trace->slices */
    int64_t stream;
} gp_arg_stream;

/* The "args" object of a slice or instant exactly as the source wrote it
 * (JSON text "{...}" in trace->args_text), kept when the import was asked to
 * (GP_LOAD_KEEP_ARGS / gp_import_opts.keep_args) so that exports write every
 * argument with its original name and type. 16 bytes. */
typedef struct gp_args_ref {
    uint32_t owner; /* index into trace->slices or trace->instants */
    uint32_t len;   /* bytes of text */
    uint64_t off;   /* offset into trace->args_text */
} gp_args_ref;

typedef struct gp_device_prop {
    int32_t id;
    uint32_t name;
    int64_t total_global_mem;
    int32_t compute_major, compute_minor;
    int32_t num_sms, warp_size;
    int32_t max_threads_per_block, max_threads_per_sm;
    int32_t regs_per_block, regs_per_sm;
    int64_t smem_per_block, smem_per_sm, smem_per_block_optin;
} gp_device_prop;

/* A buffer of libgpuprof's memory tracker (gp_mem_track) still tracked when
 * a gp_export_json file was written ("gpuprof" -> "memory" -> "buffers"). */
typedef struct gp_tracked_buffer {
    uint32_t name;  /* string id */
    uint32_t dtype; /* string id; 0 when absent */
    int64_t bytes;
} gp_tracked_buffer;

/* Ranges known only as per-name statistics: libgpuprof's aggregate sink and
 * the ranges beyond its per-thread keep cap (gp_export_json "gpuprof" ->
 * "rollover"). Summaries merge them with the slices of the same name. */
/* Per-entry metrics of libgpuprof ranges (docs/api.md "Per-entry
 * metrics"): what happened inside one range, or summed over several. The
 * device timings, transfers and tracker calls counted are those made by the
 * range's own thread while the range was open. */
typedef struct gp_entry_sum {
    uint64_t timers;     /* CUDA/OpenCL timings closed inside the entries */
    int64_t gpu_ns;      /* their device durations, summed */
    uint64_t xfers;      /* of those timings, transfers (given a byte count) */
    int64_t xfer_ns;     /* the transfers' device durations, summed */
    int64_t xfer_bytes;  /* the transfers' bytes, summed */
    uint64_t allocs;     /* gp_mem_track calls inside */
    int64_t alloc_bytes; /* bytes they tracked (gross) */
    uint64_t frees;      /* gp_mem_untrack calls inside */
    int64_t freed_bytes; /* bytes they untracked */
    int64_t peak_bytes;  /* highest tracked total just after an allocation inside (allocs > 0) */
} gp_entry_sum;

/* The per-entry metrics of one slice (a libgpuprof range). */
typedef struct gp_entry_metrics {
    uint32_t slice; /* index into trace->slices */
    gp_entry_sum m;
} gp_entry_metrics;

/* Time inside a slice (a libgpuprof range) spent in child ranges that have
 * no slice of their own: ranges the recorder aggregated inline (they count
 * in trace->aggs). A slice's self time is its duration less its child
 * slices' and less this (docs/api.md "Self time"). */
typedef struct gp_inline_child {
    uint32_t slice; /* index into trace->slices */
    int64_t ns;     /* > 0 */
} gp_inline_child;

typedef struct gp_agg_row {
    uint32_t name;           /* string id */
    uint16_t cat;            /* category index (kind annotation for libgpuprof ranges) */
    uint32_t track;          /* thread track, GP_NO_INDEX when unknown */
    uint8_t device, backend; /* gp_device_kind / gp_backend of the ranges (0 unset) */
    uint64_t count;
    int64_t total_ns, self_ns, min_ns, max_ns;
    int64_t bytes;             /* sum of the bytes attribute, -1 when none */
    double m2;                 /* sum of squared deviations from the mean (ns^2) */
    int64_t first_ns, last_ns; /* first begin, last end (ns since t0) */
    uint64_t *sketch;          /* GP_SKETCH_BUCKETS counts (core/sketch.h), owned */
    gp_entry_sum em;           /* per-entry metrics summed over these ranges */
} gp_agg_row;

typedef enum gp_ts_form {
    GP_TS_UNKNOWN = 0,
    GP_TS_INT_EPOCH_US, /* integer microseconds since the epoch */
    GP_TS_FLOAT_US,     /* microseconds with fractional digits (absolute) */
    GP_TS_RELATIVE_US,  /* microseconds relative to baseTimeNanoseconds */
} gp_ts_form;

typedef struct gp_trace_meta {
    int32_t rank;       /* GP_NONE when unknown */
    int32_t world_size; /* GP_NONE when unknown */
    uint32_t backend;   /* distributed backend string id ("nccl") */
    /* the other distributedInfo members as JSON text, string id (0: none) */
    uint32_t dist_extra;
    uint32_t source; /* file the trace came from */
    uint32_t trace_name;
    uint32_t display_time_unit;
    int32_t schema_version; /* GP_NONE when absent */
    int has_base_time;      /* baseTimeNanoseconds was present */
    int64_t base_time_ns;   /* raw baseTimeNanoseconds */
    /* Absolute time of t0 in ns: epoch ns when the source timestamps were
     * absolute (or relative to a base), else the raw offset. */
    int64_t t0_abs_ns;
    uint8_t ts_form;                         /* gp_ts_form */
    int fractional_ts;                       /* some ts/dur had fractional microseconds */
    uint64_t events_read;                    /* trace events seen in the file */
    uint64_t events_dropped_no_dur;          /* X events lacking dur (kept out) */
    uint64_t unmatched_begin, unmatched_end; /* B/E events without partner */
    int unterminated;                        /* the array was not closed (crashed writer) */
    int gp_stream;                           /* a libgpuprof stream file ("gpuprofStream") */
    int import_parts;       /* parts parsed in parallel and merged (1 = sequential) */
    int has_trace_events;   /* the source had an event array (a "traceEvents" key or bare array) */
    int has_tracked_memory; /* a gp_export_json "gpuprof" memory section was read */
    /* slice_args/instant_args hold offsets into the source file's text and
     * args_text is empty (trace/args_source.h: gp_trace_args_read) */
    int args_at_source;
    int64_t tracked_current_bytes, tracked_peak_bytes; /* its current_bytes, peak_bytes */
    /* libgpuprof ranges and values its recorder dropped (keep cap, out of
     * memory): the "dropped" of a "gpuprof" section (gp_export_json, the
     * end of a file stream); 0 when absent */
    uint64_t lib_dropped;
} gp_trace_meta;

typedef struct gp_trace {
    gp_strtab *strings;
    GP_VEC(gp_category) cats;
    GP_VEC(gp_track) tracks;
    GP_VEC(gp_slice) slices;
    GP_VEC(gp_gpu_info) gpu_info;
    GP_VEC(gp_flow) flows;
    GP_VEC(gp_instant) instants;
    GP_VEC(gp_mem_event) mem_events;
    GP_VEC(gp_counter_sample) counters;
    GP_VEC(gp_series) series;
    GP_VEC(gp_device_prop) devices;
    GP_VEC(gp_arg_stream) arg_streams;         /* ascending slice index */
    GP_VEC(gp_tracked_buffer) tracked_buffers; /* from a gp_export_json file */
    GP_VEC(char) args_text;                    /* the args objects' text (not NUL-separated) */
    GP_VEC(gp_args_ref) slice_args;            /* ascending owner (slice index) */
    GP_VEC(gp_args_ref) instant_args;          /* ascending owner (instant index) */
    GP_VEC(gp_agg_row) aggs;                   /* aggregated ranges (see gp_agg_row) */
    GP_VEC(gp_entry_metrics) entry_metrics;    /* ascending slice index */
    GP_VEC(gp_inline_child) inline_children;   /* ascending slice index */
    gp_trace_meta meta;
    int64_t t_begin, t_end; /* min ts / max end over all timed events (ns since t0) */
} gp_trace;

/* Creates an empty trace (caller frees with gp_trace_destroy); NULL on OOM. */
gp_trace *gp_trace_create(void);
void gp_trace_destroy(gp_trace *t);

/* Interning and lookup helpers; return ids or GP_NO_INDEX on out of memory. */
/* A stream id as printed: Kineto writes stream -1 (no stream) as the
 * unsigned 32-bit 4294967295 in some traces; it is shown as -1 everywhere
 * (the stored value is kept: HTA's preprocessing compares it as written). */
static inline long long gp_stream_shown(int64_t stream)
{
    return stream == 4294967295LL ? -1LL : (long long)stream;
}
uint32_t gp_trace_str(gp_trace *t, const char *s, size_t n);
static inline const char *gp_trace_s(const gp_trace *t, uint32_t id)
{
    return gp_strtab_get(t->strings, id);
}
/* Returns the category index for a category name (creating it, with its kind
 * derived from the name), or GP_NO_INDEX on out of memory. */
uint32_t gp_trace_category(gp_trace *t, const char *name, size_t n);
/* Maps a category name to its kind. */
gp_kind gp_kind_from_category(const char *name, size_t n);
/* Track lookup/creation by (pid, tid) numbers; string pid/tid use their ids. */
uint32_t gp_trace_track(gp_trace *t, int64_t pid, int64_t tid, uint32_t pid_str, uint32_t tid_str);

static inline gp_kind gp_slice_kind(const gp_trace *t, const gp_slice *s)
{
    return (gp_kind)t->cats.v[s->cat].kind;
}

/* Appends the JSON object text args[0..n) as the args of slice or instant
 * `owner` (to slice_args or instant_args; owners must be added in ascending
 * order). Returns 0 or GP_ENOMEM. */
int gp_trace_add_args(gp_trace *t, int instant, uint32_t owner, const char *args, size_t n);

/* Derives the copy kind from a memcpy/memset name. */
gp_copy_kind gp_copy_kind_from_name(const char *name);
const char *gp_copy_kind_name(gp_copy_kind k);

/* Finalizes after an import: rebases all timestamps so t0 = the earliest
 * event's time floored to a whole microsecond (so that whole-microsecond
 * rounding is unchanged) and computes t_begin/t_end. Events keep the order
 * of the source; analyses sort what they need. Returns 0. */
int gp_trace_finish(gp_trace *t);

/* Frees the aggregated rows (their sketches) and empties t->aggs. */
void gp_trace_aggs_clear(gp_trace *t);

/* The inline_children time of slice i (0 when none; binary search). */
int64_t gp_trace_inline_child_ns(const gp_trace *t, size_t slice);

/* A view of t over the window (from, to] (ns since t0): *v shares t's
 * strings, categories, tracks, GPU info, devices, series and meta, and has
 * its own arrays of the slices that end in the window (their
 * inline_children remapped), and of the instants, [memory] events and
 * counter samples in it; the rest (flows, args, entry metrics, tracked
 * buffers, aggregated rows) is empty (a caller may set v->aggs to rows it owns and
 * empties again before gp_trace_view_free). t_begin/t_end are the window.
 * For analyses of a stretch of a live recording (a session's advice).
 * Returns 0 or GP_ENOMEM (*v then empty). Free with gp_trace_view_free. */
int gp_trace_view_window(const gp_trace *t, int64_t from, int64_t to, gp_trace *v);
void gp_trace_view_free(gp_trace *v);

/* Approximate bytes of memory held by the trace. */
size_t gp_trace_bytes(const gp_trace *t);

#endif
