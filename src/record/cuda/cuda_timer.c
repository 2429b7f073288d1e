/* record/cuda/cuda_timer.c: CUDA kernel timers with CUDA events. libcudart
 * is loaded with dlopen at the first call, so this builds and runs (reporting
 * "no device") on machines without a GPU or driver. */
#include "record/recorder.h"
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct cu_api {
    void *h;
    cudaError_t (*GetDeviceCount)(int *);
    cudaError_t (*EventCreate)(cudaEvent_t *);
    cudaError_t (*EventRecord)(cudaEvent_t, cudaStream_t);
    cudaError_t (*EventQuery)(cudaEvent_t);
    cudaError_t (*EventSynchronize)(cudaEvent_t);
    cudaError_t (*EventElapsedTime)(float *, cudaEvent_t, cudaEvent_t);
    cudaError_t (*EventDestroy)(cudaEvent_t);
    cudaError_t (*MemGetInfo)(size_t *, size_t *);
    const char *(*GetErrorString)(cudaError_t);
} cu_api;

typedef struct cu_open {
    cudaEvent_t start;
    uint32_t name;
    cudaStream_t stream;
} cu_open;

typedef struct cu_pending {
    cudaEvent_t start, end;
    uint32_t name;
    cudaStream_t stream;
    int warmup;      /* ended during gp_measure's warm-up */
    int64_t bytes;   /* a transfer's bytes (gp_cuda_end_ex), else -1 */
    gp_entry_ctx ec; /* the ranges open on the calling thread (per-entry metrics) */
} cu_pending;

typedef struct cu_state {
    cu_api api;
    int status; /* 1 usable, GP_ENODEV when not */
    char why[200];
    cudaEvent_t ref; /* recorded once, synchronized: the time origin */
    int64_t ref_host_ns;
    GP_VEC(cudaEvent_t) pool;
    GP_VEC(cu_open) open;
    GP_VEC(cu_pending) pend;
    size_t poll_at; /* pend.n that makes gp_cuda_end poll (0: GP_POLL_MIN) */
} cu_state;

/* Pending timings at which gp_cuda_end polls them (a program that asks for
 * no results for hours would otherwise hold two events per timing): the
 * first poll at GP_POLL_MIN, the next when the pending ones have doubled. */
#define GP_POLL_MIN 1024

static const char *cu_err(cu_state *s, cudaError_t e)
{
    return s->api.GetErrorString ? s->api.GetErrorString(e) : "unknown error";
}

/* Loads libcudart and checks for a device (caller holds p->mu). */
static cu_state *cu_get(gp_profiler *p)
{
    cu_state *s = p->cuda;
    if (s) return s;
    s = p->cuda = calloc(1, sizeof *s);
    if (!s) return NULL;
    static const char *const libs[] = {"libcudart.so", "libcudart.so.13", "libcudart.so.12",
                                       "libcudart.so.11.0"};
    for (size_t i = 0; i < sizeof libs / sizeof libs[0] && !s->api.h; i++)
        s->api.h = dlopen(libs[i], RTLD_NOW | RTLD_LOCAL);
    s->status = GP_ENODEV;
    if (!s->api.h) {
        snprintf(s->why, sizeof s->why, "CUDA kernel timers: libcudart not found (%s)", dlerror());
        return s;
    }
#define SYM(f)                                                                                     \
    do {                                                                                           \
        *(void **)&s->api.f = dlsym(s->api.h, "cuda" #f);                                          \
        if (!s->api.f) {                                                                           \
            snprintf(s->why, sizeof s->why, "CUDA kernel timers: libcudart lacks cuda" #f);        \
            return s;                                                                              \
        }                                                                                          \
    } while (0)
    SYM(GetErrorString);
    SYM(GetDeviceCount);
    SYM(EventCreate);
    SYM(EventRecord);
    SYM(EventQuery);
    SYM(EventSynchronize);
    SYM(EventElapsedTime);
    SYM(EventDestroy);
    SYM(MemGetInfo);
#undef SYM
    int n = 0;
    cudaError_t e = s->api.GetDeviceCount(&n);
    if (e != cudaSuccess || n == 0) {
        snprintf(s->why, sizeof s->why, "CUDA kernel timers: no CUDA device (%s)",
                 e != cudaSuccess ? cu_err(s, e) : "0 devices");
        return s;
    }
    if ((e = s->api.EventCreate(&s->ref)) != cudaSuccess ||
        (e = s->api.EventRecord(s->ref, 0)) != cudaSuccess ||
        (e = s->api.EventSynchronize(s->ref)) != cudaSuccess) {
        snprintf(s->why, sizeof s->why, "CUDA kernel timers: %s", cu_err(s, e));
        return s;
    }
    s->ref_host_ns = gp_rec_host_ns(p);
    s->status = 1;
    return s;
}

static int cu_usable(gp_profiler *p, cu_state **out)
{
    cu_state *s = cu_get(p);
    if (!s) return GP_ENOMEM;
    if (s->status != 1) {
        gp_rec_seterr(p, "%s", s->why);
        return s->status;
    }
    *out = s;
    return 0;
}

static int cu_event(cu_state *s, cudaEvent_t *ev)
{
    if (s->pool.n) {
        *ev = s->pool.v[--s->pool.n];
        return 0;
    }
    return s->api.EventCreate(ev) == cudaSuccess ? 0 : GP_ENODEV;
}

int gp_cuda_begin(gp_profiler *p, const char *name, void *stream)
{
    if (!p || !name) return GP_EINVAL;
    cu_state *s = NULL;
    pthread_mutex_lock(&p->mu);
    int rc = cu_usable(p, &s);
    if (rc) goto out;
    cu_open o = {0, gp_trace_str(p->tr, name, strlen(name)), (cudaStream_t)stream};
    if ((rc = cu_event(s, &o.start))) goto out;
    cudaError_t e = s->api.EventRecord(o.start, o.stream);
    if (e != cudaSuccess) {
        gp_rec_seterr(p, "gp_cuda_begin(%s): %s", name, cu_err(s, e));
        GP_VEC_PUSH(s->pool, o.start);
        rc = GP_ENODEV;
        goto out;
    }
    rc = GP_VEC_PUSH(s->open, o);
out:
    pthread_mutex_unlock(&p->mu);
    return rc;
}

int gp_cuda_end(gp_profiler *p, const char *name, void *stream)
{
    return gp_cuda_end_ex(p, name, stream, -1);
}

int gp_cuda_end_ex(gp_profiler *p, const char *name, void *stream, int64_t bytes)
{
    if (!p || !name) return GP_EINVAL;
    cu_state *s = NULL;
    gp_entry_ctx ec;
    gp_rec_entry_ctx(p, &ec);
    pthread_mutex_lock(&p->mu);
    int rc = cu_usable(p, &s);
    if (rc) goto out;
    uint32_t id = gp_trace_str(p->tr, name, strlen(name));
    size_t i = s->open.n;
    while (i > 0 && !(s->open.v[i - 1].name == id && s->open.v[i - 1].stream == stream)) i--;
    if (i == 0) {
        gp_rec_seterr(p, "gp_cuda_end(%s): no gp_cuda_begin on this stream", name);
        rc = GP_ESTATE;
        goto out;
    }
    cu_open o = s->open.v[i - 1];
    memmove(&s->open.v[i - 1], &s->open.v[i], (s->open.n - i) * sizeof o);
    s->open.n--;
    cu_pending pe = {o.start, 0, o.name, o.stream, gp_rec_warmup != 0, bytes < 0 ? -1 : bytes, ec};
    if ((rc = cu_event(s, &pe.end))) goto out;
    cudaError_t e = s->api.EventRecord(pe.end, pe.stream);
    if (e != cudaSuccess) {
        gp_rec_seterr(p, "gp_cuda_end(%s): %s", name, cu_err(s, e));
        rc = GP_ENODEV;
        goto out;
    }
    rc = GP_VEC_PUSH(s->pend, pe);
    if (!rc) {
        ec.ix = NULL; /* owned by the pending record */
        if (s->pend.n >= (s->poll_at ? s->poll_at : GP_POLL_MIN)) {
            size_t left = (size_t)gp_cuda_resolve_(p, 0); /* events back to the pool */
            s->poll_at = left * 2 > GP_POLL_MIN ? left * 2 : GP_POLL_MIN;
        }
    }
out:
    pthread_mutex_unlock(&p->mu);
    gp_rec_entry_ctx_free(&ec);
    return rc;
}

int gp_cuda_resolve_(gp_profiler *p, int wait)
{
    cu_state *s = p->cuda;
    if (!s || s->status != 1) return 0;
    size_t keep = 0;
    for (size_t i = 0; i < s->pend.n; i++) {
        cu_pending *pe = &s->pend.v[i];
        cudaError_t e = wait ? s->api.EventSynchronize(pe->end) : s->api.EventQuery(pe->end);
        if (e == cudaErrorNotReady) {
            s->pend.v[keep++] = *pe;
            continue;
        }
        float at_ms = 0, dur_ms = 0;
        if (e == cudaSuccess && s->api.EventElapsedTime(&at_ms, s->ref, pe->start) == cudaSuccess &&
            s->api.EventElapsedTime(&dur_ms, pe->start, pe->end) == cudaSuccess) {
            char label[64];
            snprintf(label, sizeof label, "CUDA stream %p", (void *)pe->stream);
            uint32_t track = gp_rec_gpu_track(p, (uint64_t)(uintptr_t)pe->stream, label);
            int64_t dur = llround((double)dur_ms * 1e6); /* 0.7f ms: 700000 ns, not 699999 */
            gp_slice_ext x = {dur, pe->bytes, 0, 0, GP_DEV_GPU, GP_BACKEND_CUDA};
            int lost = track == GP_NO_INDEX ||
                       gp_rec_kernel_timing(p, track, p->cat_cuda, pe->name,
                                            s->ref_host_ns + llround((double)at_ms * 1e6), dur, &x,
                                            pe->warmup);
            if (!lost && !pe->warmup) {
                gp_rec_entry_timing_done(p, &pe->ec, dur, pe->bytes);
                p->kernel_ns_total += dur;
                p->kernel_count++;
            }
        } else {
            gp_rec_seterr(p, "CUDA timer '%s': %s", gp_trace_s(p->tr, pe->name), cu_err(s, e));
        }
        if (GP_VEC_PUSH(s->pool, pe->start)) s->api.EventDestroy(pe->start);
        if (GP_VEC_PUSH(s->pool, pe->end)) s->api.EventDestroy(pe->end);
        gp_rec_entry_ctx_free(&pe->ec);
    }
    s->pend.n = keep;
    return (int)keep;
}

void gp_cuda_entry_remap_(gp_profiler *p, const uint32_t *to, size_t n)
{
    cu_state *s = p->cuda;
    if (!s) return;
    for (size_t i = 0; i < s->pend.n; i++) gp_rec_entry_ctx_remap(&s->pend.v[i].ec, to, n);
}

void gp_cuda_fini_(gp_profiler *p)
{
    cu_state *s = p->cuda;
    if (!s) return;
    if (s->status == 1) {
        for (size_t i = 0; i < s->pool.n; i++) s->api.EventDestroy(s->pool.v[i]);
        for (size_t i = 0; i < s->open.n; i++) s->api.EventDestroy(s->open.v[i].start);
        for (size_t i = 0; i < s->pend.n; i++) {
            s->api.EventDestroy(s->pend.v[i].start);
            s->api.EventDestroy(s->pend.v[i].end);
        }
        s->api.EventDestroy(s->ref);
    }
    for (size_t i = 0; i < s->pend.n; i++) gp_rec_entry_ctx_free(&s->pend.v[i].ec);
    GP_VEC_FREE(s->pool);
    GP_VEC_FREE(s->open);
    GP_VEC_FREE(s->pend);
    /* libcudart stays loaded: unloading it under a live CUDA context is unsafe */
    free(s);
    p->cuda = NULL;
}

int gp_cuda_meminfo_(gp_profiler *p, int64_t *free_b, int64_t *total_b)
{
    cu_state *s = cu_get(p);
    if (!s || s->status != 1) return GP_ENODEV;
    size_t f = 0, t = 0;
    if (s->api.MemGetInfo(&f, &t) != cudaSuccess) return GP_ENODEV;
    *free_b = (int64_t)f;
    *total_b = (int64_t)t;
    return 0;
}
