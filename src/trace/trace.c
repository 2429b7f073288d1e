/* trace/trace.c: construction, category/track lookup and finishing of the
 * trace model. */
#include "trace/trace.h"
#include "core/hash.h"
#include <limits.h>
#include <stdlib.h>
#include <string.h>

static const char *const kind_names[GP_K__COUNT] = {
    "other",   "cpu_op",     "python",   "user_annotation", "gpu_annotation",
    "runtime", "driver",     "kernel",   "memcpy",          "memset",
    "sync",    "trace_span", "overhead", "range",           "cl_command",
};

const char *gp_kind_name(gp_kind k)
{
    return (unsigned)k < GP_K__COUNT ? kind_names[k] : "other";
}

int gp_kind_is_gpu(gp_kind k)
{
    return k == GP_K_KERNEL || k == GP_K_MEMCPY || k == GP_K_MEMSET || k == GP_K_SYNC ||
           k == GP_K_GPU_ANNOTATION || k == GP_K_CL_COMMAND;
}

gp_trace *gp_trace_create(void)
{
    gp_trace *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    t->strings = gp_strtab_create();
    if (!t->strings) {
        free(t);
        return NULL;
    }
    t->meta.rank = GP_NONE;
    t->meta.world_size = GP_NONE;
    t->meta.schema_version = GP_NONE;
    return t;
}

void gp_trace_destroy(gp_trace *t)
{
    if (!t) return;
    gp_strtab_destroy(t->strings);
    GP_VEC_FREE(t->cats);
    GP_VEC_FREE(t->tracks);
    GP_VEC_FREE(t->slices);
    GP_VEC_FREE(t->gpu_info);
    GP_VEC_FREE(t->flows);
    GP_VEC_FREE(t->instants);
    GP_VEC_FREE(t->mem_events);
    GP_VEC_FREE(t->counters);
    GP_VEC_FREE(t->series);
    GP_VEC_FREE(t->devices);
    GP_VEC_FREE(t->arg_streams);
    GP_VEC_FREE(t->tracked_buffers);
    GP_VEC_FREE(t->args_text);
    GP_VEC_FREE(t->slice_args);
    GP_VEC_FREE(t->instant_args);
    gp_trace_aggs_clear(t);
    GP_VEC_FREE(t->aggs);
    GP_VEC_FREE(t->entry_metrics);
    GP_VEC_FREE(t->inline_children);
    free(t);
}

/* Copies the elements of src whose timestamp field f is in (from, to] into
 * dst (a fresh vector). 0 or GP_ENOMEM. */
#define VIEW_FILTER(dst, src, f, from, to)                                                         \
    do {                                                                                           \
        for (size_t i_ = 0; i_ < (src).n; i_++)                                                    \
            if ((src).v[i_].f > (from) && (src).v[i_].f <= (to) && GP_VEC_PUSH(dst, (src).v[i_]))  \
                goto oom;                                                                          \
    } while (0)

int gp_trace_view_window(const gp_trace *t, int64_t from, int64_t to, gp_trace *v)
{
    /* what the view shares (slices keep their gpu_info index); the rest
     * starts empty */
    memset(v, 0, sizeof *v);
    v->strings = t->strings;
    v->cats = t->cats;
    v->tracks = t->tracks;
    v->gpu_info = t->gpu_info;
    v->series = t->series;
    v->devices = t->devices;
    v->meta = t->meta;
    v->t_begin = from;
    v->t_end = to;
    /* slices ending in the window (a range is recorded at its end, as the
     * per-name statistics count it), and their inline children's time */
    size_t ic = 0;
    for (size_t i = 0; i < t->slices.n; i++) {
        const gp_slice *s = &t->slices.v[i];
        int64_t end = s->ts + s->dur;
        while (ic < t->inline_children.n && t->inline_children.v[ic].slice < i) ic++;
        if (end <= from || end > to) continue;
        if (GP_VEC_PUSH(v->slices, *s)) goto oom;
        if (ic < t->inline_children.n && t->inline_children.v[ic].slice == i) {
            gp_inline_child c = t->inline_children.v[ic];
            c.slice = (uint32_t)(v->slices.n - 1);
            if (GP_VEC_PUSH(v->inline_children, c)) goto oom;
        }
    }
    VIEW_FILTER(v->instants, t->instants, ts, from, to);
    VIEW_FILTER(v->mem_events, t->mem_events, ts, from, to);
    VIEW_FILTER(v->counters, t->counters, ts, from, to);
    return 0;
oom:
    gp_trace_view_free(v);
    return GP_ENOMEM;
}

void gp_trace_view_free(gp_trace *v)
{
    GP_VEC_FREE(v->slices);
    GP_VEC_FREE(v->instants);
    GP_VEC_FREE(v->mem_events);
    GP_VEC_FREE(v->counters);
    GP_VEC_FREE(v->inline_children);
    memset(v, 0, sizeof *v);
}

void gp_trace_aggs_clear(gp_trace *t)
{
    for (size_t i = 0; i < t->aggs.n; i++) free(t->aggs.v[i].sketch);
    t->aggs.n = 0;
}

uint32_t gp_trace_str(gp_trace *t, const char *s, size_t n)
{
    return gp_strtab_intern(t->strings, s, n);
}

static int eq(const char *s, size_t n, const char *lit)
{
    return strlen(lit) == n && memcmp(s, lit, n) == 0;
}

gp_kind gp_kind_from_category(const char *s, size_t n)
{
    if (eq(s, n, "cpu_op") || eq(s, n, "operator") || eq(s, n, "Operator")) return GP_K_CPU_OP;
    if (eq(s, n, "python_function")) return GP_K_PYTHON;
    if (eq(s, n, "user_annotation")) return GP_K_USER_ANNOTATION;
    if (eq(s, n, "gpu_user_annotation")) return GP_K_GPU_ANNOTATION;
    if (eq(s, n, "cuda_runtime") || eq(s, n, "Runtime") || eq(s, n, "runtime") ||
        eq(s, n, "hip_runtime") || eq(s, n, "mtia_runtime"))
        return GP_K_RUNTIME;
    if (eq(s, n, "cuda_driver") || eq(s, n, "Driver")) return GP_K_DRIVER;
    /* MTIA (HTA 0.6.1: mtia_ccp_events are GPU kernels, memory "dma..." included) */
    if (eq(s, n, "kernel") || eq(s, n, "Kernel") || eq(s, n, "mtia_ccp_events")) return GP_K_KERNEL;
    if (eq(s, n, "gpu_memcpy") || eq(s, n, "Memcpy")) return GP_K_MEMCPY;
    if (eq(s, n, "gpu_memset") || eq(s, n, "Memset")) return GP_K_MEMSET;
    if (eq(s, n, "cuda_sync") || eq(s, n, "gpu_sync")) return GP_K_SYNC;
    if (eq(s, n, "Trace")) return GP_K_TRACE_SPAN;
    if (eq(s, n, "overhead") || eq(s, n, "cuda_profiler_range")) return GP_K_OVERHEAD;
    if (eq(s, n, "gpuprof_range") || eq(s, n, "nvtx")) return GP_K_RANGE;
    if (eq(s, n, "opencl")) return GP_K_CL_COMMAND;
    return GP_K_OTHER;
}

uint32_t gp_trace_category(gp_trace *t, const char *name, size_t n)
{
    uint32_t id = gp_trace_str(t, name, n);
    if (id == GP_NO_INDEX) return GP_NO_INDEX;
    for (size_t i = 0; i < t->cats.n; i++)
        if (t->cats.v[i].name == id) return (uint32_t)i;
    if (t->cats.n >= UINT16_MAX) return GP_NO_INDEX;
    gp_category c = {id, (uint8_t)gp_kind_from_category(name, n)};
    if (GP_VEC_PUSH(t->cats, c)) return GP_NO_INDEX;
    return (uint32_t)(t->cats.n - 1);
}

uint32_t gp_trace_track(gp_trace *t, int64_t pid, int64_t tid, uint32_t pid_str, uint32_t tid_str)
{
    /* Linear scan from the most recently used track: traces have few tracks
     * and events cluster by track. */
    static _Thread_local size_t last;
    size_t n = t->tracks.n;
    if (last < n) {
        const gp_track *k = &t->tracks.v[last];
        if (k->pid == pid && k->tid == tid && k->pid_str == pid_str && k->tid_str == tid_str)
            return (uint32_t)last;
    }
    for (size_t i = 0; i < n; i++) {
        const gp_track *k = &t->tracks.v[i];
        if (k->pid == pid && k->tid == tid && k->pid_str == pid_str && k->tid_str == tid_str) {
            last = i;
            return (uint32_t)i;
        }
    }
    gp_track k = {0};
    k.pid = pid;
    k.tid = tid;
    k.pid_str = pid_str;
    k.tid_str = tid_str;
    k.type = (pid_str || tid_str) ? GP_TRACK_OTHER : GP_TRACK_CPU;
    k.device = GP_NONE;
    k.stream = GP_NONE;
    if (GP_VEC_PUSH(t->tracks, k)) return GP_NO_INDEX;
    last = n;
    return (uint32_t)n;
}

gp_copy_kind gp_copy_kind_from_name(const char *name)
{
    if (strstr(name, "Memset") || strstr(name, "memset")) return GP_COPY_MEMSET;
    if (strstr(name, "HtoD")) return GP_COPY_HTOD;
    if (strstr(name, "DtoH")) return GP_COPY_DTOH;
    if (strstr(name, "DtoD")) return GP_COPY_DTOD;
    if (strstr(name, "HtoH")) return GP_COPY_HTOH;
    if (strstr(name, "PtoP") || strstr(name, "Peer")) return GP_COPY_PTOP;
    return GP_COPY_UNKNOWN;
}

const char *gp_copy_kind_name(gp_copy_kind k)
{
    switch (k) {
    case GP_COPY_HTOD:
        return "HtoD";
    case GP_COPY_DTOH:
        return "DtoH";
    case GP_COPY_DTOD:
        return "DtoD";
    case GP_COPY_HTOH:
        return "HtoH";
    case GP_COPY_PTOP:
        return "PtoP";
    case GP_COPY_MEMSET:
        return "Memset";
    default:
        return "unknown";
    }
}

int gp_trace_add_args(gp_trace *t, int instant, uint32_t owner, const char *args, size_t n)
{
    if (n > UINT32_MAX || GP_VEC_RESERVE(t->args_text, n)) return GP_ENOMEM;
    gp_args_ref r = {owner, (uint32_t)n, t->args_text.n};
    if (instant ? GP_VEC_PUSH(t->instant_args, r) : GP_VEC_PUSH(t->slice_args, r)) return GP_ENOMEM;
    memcpy(t->args_text.v + t->args_text.n, args, n);
    t->args_text.n += n;
    return 0;
}

static int64_t floor_us(int64_t ns)
{
    int64_t q = ns / 1000;
    if (ns % 1000 < 0) q--;
    return q * 1000;
}

int gp_trace_finish(gp_trace *t)
{
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (size_t i = 0; i < t->slices.n; i++) {
        const gp_slice *s = &t->slices.v[i];
        if (s->ts < lo) lo = s->ts;
        if (s->ts + s->dur > hi) hi = s->ts + s->dur;
    }
#define SPAN(vec)                                                                                  \
    for (size_t i = 0; i < t->vec.n; i++) {                                                        \
        if (t->vec.v[i].ts < lo) lo = t->vec.v[i].ts;                                              \
        if (t->vec.v[i].ts > hi) hi = t->vec.v[i].ts;                                              \
    }
    for (size_t i = 0; i < t->aggs.n; i++) {
        if (t->aggs.v[i].first_ns < lo) lo = t->aggs.v[i].first_ns;
        if (t->aggs.v[i].last_ns > hi) hi = t->aggs.v[i].last_ns;
    }
    SPAN(flows)
    SPAN(instants)
    SPAN(mem_events)
    SPAN(counters)
#undef SPAN
    if (lo == INT64_MAX) { /* no timed events */
        lo = hi = 0;
    }
    int64_t t0 = floor_us(lo);
    for (size_t i = 0; i < t->slices.n; i++) t->slices.v[i].ts -= t0;
    for (size_t i = 0; i < t->flows.n; i++) t->flows.v[i].ts -= t0;
    for (size_t i = 0; i < t->instants.n; i++) t->instants.v[i].ts -= t0;
    for (size_t i = 0; i < t->mem_events.n; i++) t->mem_events.v[i].ts -= t0;
    for (size_t i = 0; i < t->counters.n; i++) t->counters.v[i].ts -= t0;
    for (size_t i = 0; i < t->aggs.n; i++) {
        t->aggs.v[i].first_ns -= t0;
        t->aggs.v[i].last_ns -= t0;
    }
    t->t_begin = lo - t0;
    t->t_end = hi - t0;
    t->meta.t0_abs_ns = t0 + (t->meta.has_base_time ? t->meta.base_time_ns : 0);
    return 0;
}

size_t gp_trace_bytes(const gp_trace *t)
{
    return gp_strtab_bytes(t->strings) + t->slices.cap * sizeof(gp_slice) +
           t->gpu_info.cap * sizeof(gp_gpu_info) + t->flows.cap * sizeof(gp_flow) +
           t->instants.cap * sizeof(gp_instant) + t->mem_events.cap * sizeof(gp_mem_event) +
           t->counters.cap * sizeof(gp_counter_sample) + t->tracks.cap * sizeof(gp_track);
}

int64_t gp_trace_inline_child_ns(const gp_trace *t, size_t slice)
{
    size_t lo = 0, hi = t->inline_children.n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->inline_children.v[mid].slice < slice)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < t->inline_children.n && t->inline_children.v[lo].slice == slice
               ? t->inline_children.v[lo].ns
               : 0;
}
