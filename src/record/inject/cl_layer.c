/* record/inject/cl_layer.c: libgpuprof_cl_layer.so, an OpenCL ICD-loader
 * layer (OPENCL_LAYERS) that records every enqueue of an unmodified program
 * into the run store: profiling forced on every queue, device times mapped
 * onto CLOCK_MONOTONIC, events resolved in completion callbacks. */
#include "core/clock.h"
#include "store/store.h"
#include <CL/cl_layer.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define LAYER_API __attribute__((visibility("default")))

/* A layer is a process-wide singleton by nature (the loader calls plain C
 * entry points), so its state is one static object. */
typedef struct qinfo {
    cl_command_queue q;
    int64_t id;     /* queue serial in this process */
    int32_t dev;    /* device index */
    uint32_t track; /* store track of the queue */
    int used;       /* commands enqueued on it by this process */
} qinfo;

typedef struct dinfo {
    cl_device_id d;
    int64_t offset;  /* host mono ns = device ns + offset */
    int have_offset; /* 1 when known (timer call or first event) */
    int method;      /* 1 clGetDeviceAndHostTimer, 2 marker bracket, 3 first command */
} dinfo;

static struct {
    const struct _cl_icd_dispatch *next;
    struct _cl_icd_dispatch disp;
    gp_store_writer *w;
    pthread_mutex_t mu;
    qinfo *queues;
    size_t nq, capq;
    int64_t next_queue;
    dinfo devs[64];
    int ndev;
    atomic_long corr;
    atomic_long inflight;
    atomic_int stopping;
    uint32_t cat_api, cat_copy, cat_fill, cat_sync;
    struct mapping {
        const void *ptr;
        int64_t bytes;
    } maps[256]; /* mapped regions (mu): the bytes of the unmap */
    size_t nmaps;
} L = {.mu = PTHREAD_MUTEX_INITIALIZER};

static _Thread_local uint32_t tls_track = UINT32_MAX;

static uint32_t thread_track(void)
{
    if (tls_track == UINT32_MAX)
        tls_track = gp_store_writer_track(L.w, GP_STORE_TRACK_THREAD, (int64_t)syscall(SYS_gettid),
                                          GP_NONE, NULL);
    return tls_track;
}

/* ---- devices and queues ---- */

/* Returns the device slot (mu held). Measures the device-to-host offset
 * with clGetDeviceAndHostTimer bracketed by two CLOCK_MONOTONIC reads. */
static int dev_slot(cl_device_id d)
{
    for (int i = 0; i < L.ndev; i++)
        if (L.devs[i].d == d) return i;
    if (L.ndev == (int)(sizeof L.devs / sizeof L.devs[0])) return 0;
    dinfo *di = &L.devs[L.ndev];
    memset(di, 0, sizeof *di);
    di->d = d;
    if (L.next->clGetDeviceAndHostTimer) {
        int64_t best = INT64_MAX;
        for (int k = 0; k < 5; k++) { /* keep the tightest bracket */
            cl_ulong dt = 0, ht = 0;
            int64_t a = gp_clock_mono_ns();
            cl_int rc = L.next->clGetDeviceAndHostTimer(d, &dt, &ht);
            int64_t b = gp_clock_mono_ns();
            if (rc != CL_SUCCESS) break;
            if (b - a < best) {
                best = b - a;
                di->offset = a + (b - a) / 2 - (int64_t)dt;
                di->have_offset = 1;
                di->method = 1;
            }
        }
    }
    if (getenv("GPUPROF_CL_DEBUG"))
        fprintf(stderr, "gpuprof cl layer: device %d clock offset %lld ns (method %d)\n", L.ndev,
                (long long)di->offset, di->method);
    char name[256] = "";
    if (L.next->clGetDeviceInfo(d, CL_DEVICE_NAME, sizeof name - 1, name, NULL) == CL_SUCCESS &&
        L.w)
        gp_store_writer_device(L.w, "opencl", name);
    return L.ndev++;
}

/* Without a device/host timer: enqueue markers and keep the tightest
 * CLOCK_MONOTONIC bracket around the call that sets CL_PROFILING_COMMAND_QUEUED
 * (mu held; q has profiling enabled). */
static void calibrate(int slot, cl_command_queue q)
{
    pthread_mutex_lock(&L.mu);
    int done = L.devs[slot].have_offset;
    pthread_mutex_unlock(&L.mu);
    if (done || !L.next->clEnqueueMarkerWithWaitList) return;
    /* without mu: completion callbacks of other commands take it */
    int64_t best = INT64_MAX, offset = 0;
    for (int k = 0; k < 5; k++) {
        cl_event ev = NULL;
        int64_t a = gp_clock_mono_ns();
        cl_int rc = L.next->clEnqueueMarkerWithWaitList(q, 0, NULL, &ev);
        int64_t b = gp_clock_mono_ns();
        if (rc != CL_SUCCESS || !ev) return;
        cl_ulong queued = 0;
        L.next->clWaitForEvents(1, &ev);
        rc = L.next->clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_QUEUED, sizeof queued,
                                             &queued, NULL);
        L.next->clReleaseEvent(ev);
        if (rc != CL_SUCCESS) return;
        if (b - a < best) {
            best = b - a;
            offset = a + (b - a) / 2 - (int64_t)queued;
        }
    }
    pthread_mutex_lock(&L.mu);
    dinfo *di = &L.devs[slot];
    if (!di->have_offset) {
        di->offset = offset;
        di->have_offset = 1;
        di->method = 2;
    }
    pthread_mutex_unlock(&L.mu);
    if (getenv("GPUPROF_CL_DEBUG"))
        fprintf(stderr,
                "gpuprof cl layer: device %d clock offset %lld ns (marker bracket %lld ns)\n", slot,
                (long long)offset, (long long)best);
}

static qinfo *queue_find(cl_command_queue q)
{
    for (size_t i = 0; i < L.nq; i++)
        if (L.queues[i].q == q) return &L.queues[i];
    return NULL;
}

/* Registers q (mu held); returns its info. */
static qinfo *queue_add(cl_command_queue q, cl_device_id d)
{
    if (L.nq == L.capq) {
        size_t nc = L.capq ? L.capq * 2 : 16;
        qinfo *nv = realloc(L.queues, nc * sizeof *nv);
        if (!nv) return NULL;
        L.queues = nv;
        L.capq = nc;
    }
    qinfo *qi = &L.queues[L.nq++];
    qi->q = q;
    qi->used = 0;
    qi->id = ++L.next_queue;
    qi->dev = dev_slot(d);
    char label[64];
    snprintf(label, sizeof label, "OpenCL queue %lld", (long long)qi->id);
    qi->track = gp_store_writer_track(L.w, GP_STORE_TRACK_QUEUE, qi->id, qi->dev, label);
    return qi;
}

/* Returns the info of q, registering a queue that was created without the
 * layer seeing it. Copies it to *out (mu taken inside). */
static int queue_get(cl_command_queue q, qinfo *out)
{
    pthread_mutex_lock(&L.mu);
    qinfo *qi = queue_find(q);
    if (!qi) {
        cl_device_id d = NULL;
        L.next->clGetCommandQueueInfo(q, CL_QUEUE_DEVICE, sizeof d, &d, NULL);
        qi = queue_add(q, d);
    }
    if (qi) {
        qi->used = 1;
        *out = *qi;
    }
    pthread_mutex_unlock(&L.mu);
    return qi != NULL;
}

/* ---- commands ---- */

typedef struct pending {
    gp_store_ev dev; /* the device-side record, times filled on completion */
    int64_t host_t0; /* start of the enqueue call (last-resort clock alignment) */
    int own;         /* the layer created the event: release it */
    int dev_slot;
} pending;

static void CL_CALLBACK on_complete(cl_event ev, cl_int status, void *user)
{
    pending *p = user;
    cl_ulong t[4] = {0};
    static const cl_profiling_info what[4] = {CL_PROFILING_COMMAND_QUEUED,
                                              CL_PROFILING_COMMAND_SUBMIT,
                                              CL_PROFILING_COMMAND_START, CL_PROFILING_COMMAND_END};
    int ok = status == CL_COMPLETE;
    for (int i = 0; i < 4 && ok; i++)
        ok = L.next->clGetEventProfilingInfo(ev, what[i], sizeof t[i], &t[i], NULL) == CL_SUCCESS;
    /* under mu: layer_exit clears L.w under mu before stopping the writer,
     * so a late callback never touches a stopped writer */
    pthread_mutex_lock(&L.mu);
    if (ok && L.w && !atomic_load(&L.stopping)) {
        dinfo *di = &L.devs[p->dev_slot];
        if (!di->have_offset) { /* last resort: QUEUED is set when the enqueue call starts */
            di->offset = p->host_t0 - (int64_t)t[0];
            di->have_offset = 1;
            di->method = 3;
        }
        int64_t off = di->offset;
        p->dev.queued = (int64_t)t[0] + off;
        p->dev.submit = (int64_t)t[1] + off;
        p->dev.ts = (int64_t)t[2] + off;
        p->dev.dur = t[3] >= t[2] ? (int64_t)(t[3] - t[2]) : 0;
        gp_store_writer_put(L.w, &p->dev, 1);
    } else if (L.w && !atomic_load(&L.stopping)) {
        gp_store_writer_add_dropped(L.w, 1); /* failed command or no profiling data */
    }
    pthread_mutex_unlock(&L.mu);
    /* ours, or the application's reference taken at enqueue */
    L.next->clReleaseEvent(ev);
    free(p);
    atomic_fetch_sub(&L.inflight, 1);
}

/* Common part of every recorded enqueue: *evp is what the application
 * passed (maybe NULL); call with the event pointer to give the driver. */
typedef struct cmd {
    qinfo qi;
    cl_event *app_ev;
    cl_event mine;
    int64_t t0;
    int64_t corr;
} cmd;

static cl_event *cmd_begin(cmd *c, cl_command_queue q, cl_event *app_ev)
{
    c->app_ev = app_ev;
    c->mine = NULL;
    c->corr = 0;
    if (!L.w || !queue_get(q, &c->qi)) {
        c->qi.q = NULL;
        return app_ev;
    }
    c->corr = atomic_fetch_add(&L.corr, 1) + 1;
    c->t0 = gp_clock_mono_ns();
    return app_ev ? app_ev : &c->mine;
}

/* Records the API call and hooks the completion of the command. */
static void cmd_end(cmd *c, cl_int rc, const char *api, gp_store_ev *dev)
{
    if (!c->qi.q) return;
    int64_t t1 = gp_clock_mono_ns();
    gp_store_ev a;
    gp_store_ev_init(&a, GP_ST_API);
    a.track = thread_track();
    a.cat = L.cat_api;
    a.name = gp_store_writer_str(L.w, api);
    a.ts = c->t0;
    a.dur = t1 - c->t0;
    a.corr = c->corr;
    gp_store_writer_put(L.w, &a, 1);
    cl_event ev = c->app_ev ? *c->app_ev : c->mine;
    if (rc != CL_SUCCESS || !ev) return;
    pending *p = malloc(sizeof *p);
    if (!p) {
        if (c->mine) L.next->clReleaseEvent(c->mine);
        gp_store_writer_add_dropped(L.w, 1);
        return;
    }
    p->dev = *dev;
    p->dev.track = c->qi.track;
    p->dev.corr = c->corr;
    p->dev.device = c->qi.dev;
    p->dev.stream = c->qi.id;
    p->host_t0 = c->t0;
    p->own = c->mine != NULL;
    p->dev_slot = c->qi.dev;
    if (!p->own) L.next->clRetainEvent(ev); /* keep it until the callback */
    atomic_fetch_add(&L.inflight, 1);
    if (L.next->clSetEventCallback(ev, CL_COMPLETE, on_complete, p) != CL_SUCCESS) {
        atomic_fetch_sub(&L.inflight, 1);
        L.next->clReleaseEvent(ev);
        free(p);
        gp_store_writer_add_dropped(L.w, 1);
    }
}

static void copy_ev(gp_store_ev *e, uint32_t cat, const char *name, gp_copy_kind k, size_t bytes)
{
    gp_store_ev_init(e, GP_ST_COPY);
    e->cat = cat;
    e->name = gp_store_writer_str(L.w, name);
    e->copy_kind = (uint8_t)k;
    e->bytes = (int64_t)bytes;
    /* host side of a read/write is pageable unless the app says otherwise */
    e->src_kind = k == GP_COPY_HTOD ? 1 : 3;
    e->dst_kind = k == GP_COPY_DTOH ? 1 : 3;
}

static cl_int CL_API_CALL l_EnqueueNDRangeKernel(cl_command_queue q, cl_kernel k, cl_uint dim,
                                                 const size_t *off, const size_t *gws,
                                                 const size_t *lws, cl_uint nw, const cl_event *wl,
                                                 cl_event *ev)
{
    cmd c;
    cl_event *use = cmd_begin(&c, q, ev);
    cl_int rc = L.next->clEnqueueNDRangeKernel(q, k, dim, off, gws, lws, nw, wl, use);
    if (c.qi.q) {
        gp_store_ev e;
        gp_store_ev_init(&e, GP_ST_KERNEL);
        char name[256] = "";
        if (L.next->clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, sizeof name - 1, name, NULL) !=
            CL_SUCCESS)
            strcpy(name, "kernel");
        e.name = gp_store_writer_str(L.w, name);
        for (cl_uint i = 0; i < dim && i < 3; i++) {
            e.grid[i] = gws ? (int32_t)gws[i] : 0; /* OpenCL: global size in work-items */
            e.block[i] = lws ? (int32_t)lws[i] : 0;
        }
        cmd_end(&c, rc, "clEnqueueNDRangeKernel", &e);
    }
    return rc;
}

static cl_int CL_API_CALL l_EnqueueTask(cl_command_queue q, cl_kernel k, cl_uint nw,
                                        const cl_event *wl, cl_event *ev)
{
    cmd c;
    cl_event *use = cmd_begin(&c, q, ev);
    cl_int rc = L.next->clEnqueueTask(q, k, nw, wl, use);
    if (c.qi.q) {
        gp_store_ev e;
        gp_store_ev_init(&e, GP_ST_KERNEL);
        char name[256] = "";
        if (L.next->clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, sizeof name - 1, name, NULL) !=
            CL_SUCCESS)
            strcpy(name, "kernel");
        e.name = gp_store_writer_str(L.w, name);
        e.grid[0] = e.block[0] = 1;
        cmd_end(&c, rc, "clEnqueueTask", &e);
    }
    return rc;
}

static cl_int CL_API_CALL l_EnqueueReadBuffer(cl_command_queue q, cl_mem b, cl_bool blk, size_t off,
                                              size_t n, void *p, cl_uint nw, const cl_event *wl,
                                              cl_event *ev)
{
    cmd c;
    cl_event *use = cmd_begin(&c, q, ev);
    cl_int rc = L.next->clEnqueueReadBuffer(q, b, blk, off, n, p, nw, wl, use);
    if (c.qi.q) {
        gp_store_ev e;
        copy_ev(&e, L.cat_copy, "Memcpy DtoH (Device -> Pageable)", GP_COPY_DTOH, n);
        cmd_end(&c, rc, "clEnqueueReadBuffer", &e);
    }
    return rc;
}

static cl_int CL_API_CALL l_EnqueueWriteBuffer(cl_command_queue q, cl_mem b, cl_bool blk,
                                               size_t off, size_t n, const void *p, cl_uint nw,
                                               const cl_event *wl, cl_event *ev)
{
    cmd c;
    cl_event *use = cmd_begin(&c, q, ev);
    cl_int rc = L.next->clEnqueueWriteBuffer(q, b, blk, off, n, p, nw, wl, use);
    if (c.qi.q) {
        gp_store_ev e;
        copy_ev(&e, L.cat_copy, "Memcpy HtoD (Pageable -> Device)", GP_COPY_HTOD, n);
        cmd_end(&c, rc, "clEnqueueWriteBuffer", &e);
    }
    return rc;
}

static size_t rect_bytes(const size_t *region)
{
    return region ? region[0] * region[1] * region[2] : 0;
}

static cl_int CL_API_CALL l_EnqueueReadBufferRect(cl_command_queue q, cl_mem b, cl_bool blk,
                                                  const size_t *bo, const size_t *ho,
                                                  const size_t *rg, size_t brp, size_t bsp,
                                                  size_t hrp, size_t hsp, void *p, cl_uint nw,
                                                  const cl_event *wl, cl_event *ev)
{
    cmd c;
    cl_event *use = cmd_begin(&c, q, ev);
    cl_int rc =
        L.next->clEnqueueReadBufferRect(q, b, blk, bo, ho, rg, brp, bsp, hrp, hsp, p, nw, wl, use);
    if (c.qi.q) {
        gp_store_ev e;
        copy_ev(&e, L.cat_copy, "Memcpy DtoH (Device -> Pageable)", GP_COPY_DTOH, rect_bytes(rg));
        cmd_end(&c, rc, "clEnqueueReadBufferRect", &e);
    }
    return rc;
}

static cl_int CL_API_CALL l_EnqueueWriteBufferRect(cl_command_queue q, cl_mem b, cl_bool blk,
                                                   const size_t *bo, const size_t *ho,
                                                   const size_t *rg, size_t brp, size_t bsp,
                                                   size_t hrp, size_t hsp, const void *p,
                                                   cl_uint nw, const cl_event *wl, cl_event *ev)
{
    cmd c;
    cl_event *use = cmd_begin(&c, q, ev);
    cl_int rc =
        L.next->clEnqueueWriteBufferRect(q, b, blk, bo, ho, rg, brp, bsp, hrp, hsp, p, nw, wl, use);
    if (c.qi.q) {
        gp_store_ev e;
        copy_ev(&e, L.cat_copy, "Memcpy HtoD (Pageable -> Device)", GP_COPY_HTOD, rect_bytes(rg));
        cmd_end(&c, rc, "clEnqueueWriteBufferRect", &e);
    }
    return rc;
}

static cl_int CL_API_CALL l_EnqueueCopyBuffer(cl_command_queue q, cl_mem s, cl_mem d, size_t so,
                                              size_t dof, size_t n, cl_uint nw, const cl_event *wl,
                                              cl_event *ev)
{
    cmd c;
    cl_event *use = cmd_begin(&c, q, ev);
    cl_int rc = L.next->clEnqueueCopyBuffer(q, s, d, so, dof, n, nw, wl, use);
    if (c.qi.q) {
        gp_store_ev e;
        copy_ev(&e, L.cat_copy, "Memcpy DtoD (Device -> Device)", GP_COPY_DTOD, n);
        cmd_end(&c, rc, "clEnqueueCopyBuffer", &e);
    }
    return rc;
}

static cl_int CL_API_CALL l_EnqueueFillBuffer(cl_command_queue q, cl_mem b, const void *pat,
                                              size_t ps, size_t off, size_t n, cl_uint nw,
                                              const cl_event *wl, cl_event *ev)
{
    cmd c;
    cl_event *use = cmd_begin(&c, q, ev);
    cl_int rc = L.next->clEnqueueFillBuffer(q, b, pat, ps, off, n, nw, wl, use);
    if (c.qi.q) {
        gp_store_ev e;
        copy_ev(&e, L.cat_fill, "Memset (Device)", GP_COPY_MEMSET, n);
        e.src_kind = 0;
        cmd_end(&c, rc, "clEnqueueFillBuffer", &e);
    }
    return rc;
}

/* ---- images, maps, SVM, markers and barriers ---- */

/* Bytes of an image region: element size x width x height x depth. */
static int64_t img_bytes(cl_mem img, const size_t *region)
{
    size_t elem = 0;
    if (!region ||
        L.next->clGetImageInfo(img, CL_IMAGE_ELEMENT_SIZE, sizeof elem, &elem, NULL) != CL_SUCCESS)
        return GP_NONE;
    return (int64_t)(elem * region[0] * region[1] * region[2]);
}

/* Remembers a mapping's size for its unmap (bounded: the oldest is reused). */
static void map_add(const void *ptr, int64_t bytes)
{
    if (!ptr) return;
    pthread_mutex_lock(&L.mu);
    size_t n = sizeof L.maps / sizeof L.maps[0];
    if (L.nmaps == n) {
        memmove(L.maps, L.maps + 1, (n - 1) * sizeof L.maps[0]);
        L.nmaps--;
    }
    L.maps[L.nmaps].ptr = ptr;
    L.maps[L.nmaps++].bytes = bytes;
    pthread_mutex_unlock(&L.mu);
}

/* Bytes of the newest mapping at ptr, forgotten; GP_NONE when unknown. */
static int64_t map_take(const void *ptr)
{
    int64_t bytes = GP_NONE;
    pthread_mutex_lock(&L.mu);
    for (size_t i = L.nmaps; i-- > 0;)
        if (L.maps[i].ptr == ptr) {
            bytes = L.maps[i].bytes;
            L.maps[i] = L.maps[--L.nmaps];
            break;
        }
    pthread_mutex_unlock(&L.mu);
    return bytes;
}

static void copy_ev64(gp_store_ev *e, uint32_t cat, const char *name, gp_copy_kind k, int64_t bytes)
{
    copy_ev(e, cat, name, k, 0);
    e->bytes = bytes;
}

static cl_int CL_API_CALL l_EnqueueReadImage(cl_command_queue q, cl_mem img, cl_bool blk,
                                             const size_t *org, const size_t *rg, size_t rp,
                                             size_t sp, void *p, cl_uint nw, const cl_event *wl,
                                             cl_event *ev)
{
    cmd c;
    cl_event *use = cmd_begin(&c, q, ev);
    cl_int rc = L.next->clEnqueueReadImage(q, img, blk, org, rg, rp, sp, p, nw, wl, use);
    if (c.qi.q) {
        gp_store_ev e;
        copy_ev64(&e, L.cat_copy, "Memcpy DtoH (Image -> Pageable)", GP_COPY_DTOH,
                  img_bytes(img, rg));
        e.src_kind = 5;
        cmd_end(&c, rc, "clEnqueueReadImage", &e);
    }
    return rc;
}

static cl_int CL_API_CALL l_EnqueueWriteImage(cl_command_queue q, cl_mem img, cl_bool blk,
                                              const size_t *org, const size_t *rg, size_t rp,
                                              size_t sp, const void *p, cl_uint nw,
                                              const cl_event *wl, cl_event *ev)
{
    cmd c;
    cl_event *use = cmd_begin(&c, q, ev);
    cl_int rc = L.next->clEnqueueWriteImage(q, img, blk, org, rg, rp, sp, p, nw, wl, use);
    if (c.qi.q) {
        gp_store_ev e;
        copy_ev64(&e, L.cat_copy, "Memcpy HtoD (Pageable -> Image)", GP_COPY_HTOD,
                  img_bytes(img, rg));
        e.dst_kind = 5;
        cmd_end(&c, rc, "clEnqueueWriteImage", &e);
    }
    return rc;
}

static cl_int CL_API_CALL l_EnqueueCopyImage(cl_command_queue q, cl_mem si, cl_mem di,
                                             const size_t *so, const size_t *dorg, const size_t *rg,
                                             cl_uint nw, const cl_event *wl, cl_event *ev)
{
    cmd c;
    cl_event *use = cmd_begin(&c, q, ev);
    cl_int rc = L.next->clEnqueueCopyImage(q, si, di, so, dorg, rg, nw, wl, use);
    if (c.qi.q) {
        gp_store_ev e;
        copy_ev64(&e, L.cat_copy, "Memcpy DtoD (Image -> Image)", GP_COPY_DTOD, img_bytes(si, rg));
        e.src_kind = e.dst_kind = 5;
        cmd_end(&c, rc, "clEnqueueCopyImage", &e);
    }
    return rc;
}

static cl_int CL_API_CALL l_EnqueueCopyImageToBuffer(cl_command_queue q, cl_mem si, cl_mem db,
                                                     const size_t *so, const size_t *rg,
                                                     size_t doff, cl_uint nw, const cl_event *wl,
                                                     cl_event *ev)
{
    cmd c;
    cl_event *use = cmd_begin(&c, q, ev);
    cl_int rc = L.next->clEnqueueCopyImageToBuffer(q, si, db, so, rg, doff, nw, wl, use);
    if (c.qi.q) {
        gp_store_ev e;
        copy_ev64(&e, L.cat_copy, "Memcpy DtoD (Image -> Device)", GP_COPY_DTOD, img_bytes(si, rg));
        e.src_kind = 5;
        cmd_end(&c, rc, "clEnqueueCopyImageToBuffer", &e);
    }
    return rc;
}

static cl_int CL_API_CALL l_EnqueueCopyBufferToImage(cl_command_queue q, cl_mem sb, cl_mem di,
                                                     size_t soff, const size_t *dorg,
                                                     const size_t *rg, cl_uint nw,
                                                     const cl_event *wl, cl_event *ev)
{
    cmd c;
    cl_event *use = cmd_begin(&c, q, ev);
    cl_int rc = L.next->clEnqueueCopyBufferToImage(q, sb, di, soff, dorg, rg, nw, wl, use);
    if (c.qi.q) {
        gp_store_ev e;
        copy_ev64(&e, L.cat_copy, "Memcpy DtoD (Device -> Image)", GP_COPY_DTOD, img_bytes(di, rg));
        e.dst_kind = 5;
        cmd_end(&c, rc, "clEnqueueCopyBufferToImage", &e);
    }
    return rc;
}

static cl_int CL_API_CALL l_EnqueueFillImage(cl_command_queue q, cl_mem img, const void *color,
                                             const size_t *org, const size_t *rg, cl_uint nw,
                                             const cl_event *wl, cl_event *ev)
{
    cmd c;
    cl_event *use = cmd_begin(&c, q, ev);
    cl_int rc = L.next->clEnqueueFillImage(q, img, color, org, rg, nw, wl, use);
    if (c.qi.q) {
        gp_store_ev e;
        copy_ev64(&e, L.cat_fill, "Memset (Image)", GP_COPY_MEMSET, img_bytes(img, rg));
        e.src_kind = 0;
        e.dst_kind = 5;
        cmd_end(&c, rc, "clEnqueueFillImage", &e);
    }
    return rc;
}

static void *CL_API_CALL l_EnqueueMapBuffer(cl_command_queue q, cl_mem b, cl_bool blk,
                                            cl_map_flags fl, size_t off, size_t n, cl_uint nw,
                                            const cl_event *wl, cl_event *ev, cl_int *err)
{
    cmd c;
    cl_event *use = cmd_begin(&c, q, ev);
    cl_int rc = CL_SUCCESS;
    void *p = L.next->clEnqueueMapBuffer(q, b, blk, fl, off, n, nw, wl, use, &rc);
    if (err) *err = rc;
    if (c.qi.q) {
        gp_store_ev e;
        copy_ev(&e, L.cat_copy, "Map (Device -> Host)", GP_COPY_DTOH, n);
        cmd_end(&c, rc, "clEnqueueMapBuffer", &e);
        if (rc == CL_SUCCESS) map_add(p, (int64_t)n);
    }
    return p;
}

static void *CL_API_CALL l_EnqueueMapImage(cl_command_queue q, cl_mem img, cl_bool blk,
                                           cl_map_flags fl, const size_t *org, const size_t *rg,
                                           size_t *rp, size_t *sp, cl_uint nw, const cl_event *wl,
                                           cl_event *ev, cl_int *err)
{
    cmd c;
    cl_event *use = cmd_begin(&c, q, ev);
    cl_int rc = CL_SUCCESS;
    void *p = L.next->clEnqueueMapImage(q, img, blk, fl, org, rg, rp, sp, nw, wl, use, &rc);
    if (err) *err = rc;
    if (c.qi.q) {
        gp_store_ev e;
        int64_t bytes = img_bytes(img, rg);
        copy_ev64(&e, L.cat_copy, "Map (Image -> Host)", GP_COPY_DTOH, bytes);
        e.src_kind = 5;
        cmd_end(&c, rc, "clEnqueueMapImage", &e);
        if (rc == CL_SUCCESS) map_add(p, bytes);
    }
    return p;
}

static cl_int CL_API_CALL l_EnqueueUnmapMemObject(cl_command_queue q, cl_mem m, void *ptr,
                                                  cl_uint nw, const cl_event *wl, cl_event *ev)
{
    cmd c;
    cl_event *use = cmd_begin(&c, q, ev);
    cl_int rc = L.next->clEnqueueUnmapMemObject(q, m, ptr, nw, wl, use);
    if (c.qi.q) {
        gp_store_ev e;
        copy_ev64(&e, L.cat_copy, "Unmap (Host -> Device)", GP_COPY_HTOD,
                  rc == CL_SUCCESS ? map_take(ptr) : GP_NONE);
        cmd_end(&c, rc, "clEnqueueUnmapMemObject", &e);
    }
    return rc;
}

static cl_int CL_API_CALL l_EnqueueSVMMemcpy(cl_command_queue q, cl_bool blk, void *dst,
                                             const void *src, size_t n, cl_uint nw,
                                             const cl_event *wl, cl_event *ev)
{
    cmd c;
    cl_event *use = cmd_begin(&c, q, ev);
    cl_int rc = L.next->clEnqueueSVMMemcpy(q, blk, dst, src, n, nw, wl, use);
    if (c.qi.q) {
        gp_store_ev e;
        /* either side may be SVM or host memory: the direction is not known */
        copy_ev(&e, L.cat_copy, "Memcpy SVM", GP_COPY_UNKNOWN, n);
        e.src_kind = e.dst_kind = 0;
        cmd_end(&c, rc, "clEnqueueSVMMemcpy", &e);
    }
    return rc;
}

static cl_int CL_API_CALL l_EnqueueSVMMemFill(cl_command_queue q, void *ptr, const void *pat,
                                              size_t ps, size_t n, cl_uint nw, const cl_event *wl,
                                              cl_event *ev)
{
    cmd c;
    cl_event *use = cmd_begin(&c, q, ev);
    cl_int rc = L.next->clEnqueueSVMMemFill(q, ptr, pat, ps, n, nw, wl, use);
    if (c.qi.q) {
        gp_store_ev e;
        copy_ev(&e, L.cat_fill, "Memset (SVM)", GP_COPY_MEMSET, n);
        e.src_kind = 0;
        e.dst_kind = 4;
        cmd_end(&c, rc, "clEnqueueSVMMemFill", &e);
    }
    return rc;
}

static cl_int CL_API_CALL l_EnqueueSVMMap(cl_command_queue q, cl_bool blk, cl_map_flags fl,
                                          void *ptr, size_t n, cl_uint nw, const cl_event *wl,
                                          cl_event *ev)
{
    cmd c;
    cl_event *use = cmd_begin(&c, q, ev);
    cl_int rc = L.next->clEnqueueSVMMap(q, blk, fl, ptr, n, nw, wl, use);
    if (c.qi.q) {
        gp_store_ev e;
        copy_ev(&e, L.cat_copy, "Map SVM (Device -> Host)", GP_COPY_DTOH, n);
        e.src_kind = 4;
        cmd_end(&c, rc, "clEnqueueSVMMap", &e);
        if (rc == CL_SUCCESS) map_add(ptr, (int64_t)n);
    }
    return rc;
}

static cl_int CL_API_CALL l_EnqueueSVMUnmap(cl_command_queue q, void *ptr, cl_uint nw,
                                            const cl_event *wl, cl_event *ev)
{
    cmd c;
    cl_event *use = cmd_begin(&c, q, ev);
    cl_int rc = L.next->clEnqueueSVMUnmap(q, ptr, nw, wl, use);
    if (c.qi.q) {
        gp_store_ev e;
        copy_ev64(&e, L.cat_copy, "Unmap SVM (Host -> Device)", GP_COPY_HTOD,
                  rc == CL_SUCCESS ? map_take(ptr) : GP_NONE);
        e.dst_kind = 4;
        cmd_end(&c, rc, "clEnqueueSVMUnmap", &e);
    }
    return rc;
}

/* Markers and barriers: a zero-work command on the queue, drawn as a
 * "gpu_sync" slice on the queue's track (its wait shows as its duration). */
static void sync_ev(gp_store_ev *e, const char *name)
{
    gp_store_ev_init(e, GP_ST_SLICE);
    e->cat = L.cat_sync;
    e->name = gp_store_writer_str(L.w, name);
}

static cl_int CL_API_CALL l_EnqueueMarkerWithWaitList(cl_command_queue q, cl_uint nw,
                                                      const cl_event *wl, cl_event *ev)
{
    cmd c;
    cl_event *use = cmd_begin(&c, q, ev);
    cl_int rc = L.next->clEnqueueMarkerWithWaitList(q, nw, wl, use);
    if (c.qi.q) {
        gp_store_ev e;
        sync_ev(&e, "Marker");
        cmd_end(&c, rc, "clEnqueueMarkerWithWaitList", &e);
    }
    return rc;
}

static cl_int CL_API_CALL l_EnqueueBarrierWithWaitList(cl_command_queue q, cl_uint nw,
                                                       const cl_event *wl, cl_event *ev)
{
    cmd c;
    cl_event *use = cmd_begin(&c, q, ev);
    cl_int rc = L.next->clEnqueueBarrierWithWaitList(q, nw, wl, use);
    if (c.qi.q) {
        gp_store_ev e;
        sync_ev(&e, "Barrier");
        cmd_end(&c, rc, "clEnqueueBarrierWithWaitList", &e);
    }
    return rc;
}

static cl_int CL_API_CALL l_EnqueueMarker(cl_command_queue q, cl_event *ev)
{
    cmd c;
    cl_event *use = cmd_begin(&c, q, ev);
    cl_int rc = L.next->clEnqueueMarker(q, use);
    if (c.qi.q) {
        gp_store_ev e;
        sync_ev(&e, "Marker");
        cmd_end(&c, rc, "clEnqueueMarker", &e);
    }
    return rc;
}

/* clEnqueueBarrier (1.1) takes no event: it is enqueued as the equivalent
 * clEnqueueBarrierWithWaitList with an empty wait list, which gives one. */
static cl_int CL_API_CALL l_EnqueueBarrier(cl_command_queue q)
{
    if (!L.next->clEnqueueBarrierWithWaitList) return L.next->clEnqueueBarrier(q);
    cmd c;
    cl_event *use = cmd_begin(&c, q, NULL);
    cl_int rc = L.next->clEnqueueBarrierWithWaitList(q, 0, NULL, use);
    if (c.qi.q) {
        gp_store_ev e;
        sync_ev(&e, "Barrier");
        cmd_end(&c, rc, "clEnqueueBarrier", &e);
    }
    return rc;
}

/* ---- queues: profiling forced on ---- */

/* Registers a queue the layer created (with profiling) and measures its
 * device's clock offset when not known yet. */
static void register_queue(cl_command_queue q, cl_device_id d)
{
    pthread_mutex_lock(&L.mu);
    qinfo *qi = queue_add(q, d);
    int slot = qi ? qi->dev : -1;
    pthread_mutex_unlock(&L.mu);
    if (slot >= 0) calibrate(slot, q);
}

static cl_command_queue CL_API_CALL l_CreateCommandQueueWithProperties(
    cl_context ctx, cl_device_id d, const cl_queue_properties *props, cl_int *err)
{
    cl_queue_properties p[64];
    size_t n = 0;
    int have = 0;
    for (size_t i = 0; props && props[i] && n + 4 < 64; i += 2) {
        p[n] = props[i];
        p[n + 1] = props[i + 1];
        if (props[i] == CL_QUEUE_PROPERTIES) {
            p[n + 1] |= CL_QUEUE_PROFILING_ENABLE;
            have = 1;
        }
        n += 2;
    }
    if (!have) {
        p[n++] = CL_QUEUE_PROPERTIES;
        p[n++] = CL_QUEUE_PROFILING_ENABLE;
    }
    p[n] = 0;
    cl_command_queue q = L.next->clCreateCommandQueueWithProperties(ctx, d, p, err);
    if (q && L.w) register_queue(q, d);
    return q;
}

static cl_command_queue CL_API_CALL l_CreateCommandQueue(cl_context ctx, cl_device_id d,
                                                         cl_command_queue_properties props,
                                                         cl_int *err)
{
    cl_command_queue q =
        L.next->clCreateCommandQueue(ctx, d, props | CL_QUEUE_PROFILING_ENABLE, err);
    if (q && L.w) register_queue(q, d);
    return q;
}

static cl_int CL_API_CALL l_ReleaseCommandQueue(cl_command_queue q)
{
    cl_uint refs = 0;
    if (L.w &&
        L.next->clGetCommandQueueInfo(q, CL_QUEUE_REFERENCE_COUNT, sizeof refs, &refs, NULL) ==
            CL_SUCCESS &&
        refs == 1) {
        /* last reference: forget the handle (its address may be reused) */
        L.next->clFinish(q);
        pthread_mutex_lock(&L.mu);
        qinfo *qi = queue_find(q);
        if (qi) *qi = L.queues[--L.nq];
        pthread_mutex_unlock(&L.mu);
    }
    return L.next->clReleaseCommandQueue(q);
}

/* ---- synchronization calls ---- */

static void sync_slice(const char *name, int64_t t0)
{
    if (!L.w) return;
    gp_store_ev a;
    gp_store_ev_init(&a, GP_ST_API);
    a.track = thread_track();
    a.cat = L.cat_api;
    a.name = gp_store_writer_str(L.w, name);
    a.ts = t0;
    a.dur = gp_clock_mono_ns() - t0;
    gp_store_writer_put(L.w, &a, 1);
}

static cl_int CL_API_CALL l_Finish(cl_command_queue q)
{
    int64_t t0 = gp_clock_mono_ns();
    cl_int rc = L.next->clFinish(q);
    sync_slice("clFinish", t0);
    return rc;
}

static cl_int CL_API_CALL l_WaitForEvents(cl_uint n, const cl_event *evs)
{
    int64_t t0 = gp_clock_mono_ns();
    cl_int rc = L.next->clWaitForEvents(n, evs);
    sync_slice("clWaitForEvents", t0);
    return rc;
}

static cl_int CL_API_CALL l_BuildProgram(cl_program p, cl_uint nd, const cl_device_id *d,
                                         const char *opt, void(CL_CALLBACK *cb)(cl_program, void *),
                                         void *ud)
{
    int64_t t0 = gp_clock_mono_ns();
    cl_int rc = L.next->clBuildProgram(p, nd, d, opt, cb, ud);
    sync_slice("clBuildProgram", t0);
    return rc;
}

/* ---- start and end ---- */

static void layer_exit(void)
{
    if (!L.w) return;
    /* commands still running: finish the known queues, then give the
     * completion callbacks up to 2 s; what is left is counted as dropped */
    pthread_mutex_lock(&L.mu);
    size_t nq = L.nq;
    cl_command_queue qs[256];
    if (nq > 256) nq = 256;
    size_t nu = 0;
    for (size_t i = 0; i < nq; i++)
        if (L.queues[i].used) qs[nu++] = L.queues[i].q; /* not a parent's queue after fork */
    nq = nu;
    pthread_mutex_unlock(&L.mu);
    for (size_t i = 0; i < nq; i++) L.next->clFinish(qs[i]);
    for (int i = 0; i < 2000 && atomic_load(&L.inflight) > 0; i++) usleep(1000);
    pthread_mutex_lock(&L.mu);
    atomic_store(&L.stopping, 1);
    long left = atomic_load(&L.inflight);
    if (left > 0) gp_store_writer_add_dropped(L.w, (uint64_t)left);
    gp_store_writer *w = L.w;
    L.w = NULL;
    pthread_mutex_unlock(&L.mu);
    int rc = gp_store_writer_stop(w);
    if (rc) fprintf(stderr, "gpuprof cl layer: writing the store failed: %s\n", gp_strerror(rc));
}

/* fork without exec: the child records as a process of its own (a new
 * processes row, a fresh writer thread); commands in flight in the parent
 * complete in the parent, and the child finishes only its own queues at exit. */
static void fork_prepare(void)
{
    pthread_mutex_lock(&L.mu);
    if (L.w) gp_store_writer_fork_prepare(L.w);
}

static void fork_parent(void)
{
    if (L.w) gp_store_writer_fork_parent(L.w);
    pthread_mutex_unlock(&L.mu);
}

static void fork_child(void)
{
    if (L.w) gp_store_writer_fork_child(L.w);
    tls_track = UINT32_MAX; /* the forking thread has a new tid in the child */
    atomic_store(&L.inflight, 0);
    for (size_t i = 0; i < L.nq; i++) L.queues[i].used = 0;
    pthread_mutex_unlock(&L.mu);
}

static void layer_start(void)
{
    const char *path = getenv("GPUPROF_STORE");
    const char *run = getenv("GPUPROF_RUN_ID");
    const char *off = getenv("GPUPROF_OPENCL");
    if (!path || !run || (off && !strcmp(off, "0"))) return; /* pass-through */
    gp_err err = {0};
    gp_store_writer_opts o = {0, 0, "opencl"};
    const char *ms = getenv("GPUPROF_COMMIT_MS");
    if (ms) o.commit_ms = atoi(ms);
    L.w = gp_store_writer_start(path, atoll(run), &o, &err);
    if (!L.w) {
        fprintf(stderr, "gpuprof cl layer: not recording: %s\n", err.msg);
        return;
    }
    L.cat_api = gp_store_writer_str(L.w, "runtime");
    L.cat_copy = gp_store_writer_str(L.w, "gpu_memcpy");
    L.cat_fill = gp_store_writer_str(L.w, "gpu_memset");
    L.cat_sync = gp_store_writer_str(L.w, "gpu_sync");
    atexit(layer_exit);
    pthread_atfork(fork_prepare, fork_parent, fork_child);
}

LAYER_API CL_API_ENTRY cl_int CL_API_CALL clGetLayerInfo(cl_layer_info param, size_t size,
                                                         void *value, size_t *size_ret)
{
    if (param != CL_LAYER_API_VERSION) return CL_INVALID_VALUE;
    if (value) {
        if (size < sizeof(cl_layer_api_version)) return CL_INVALID_VALUE;
        *(cl_layer_api_version *)value = CL_LAYER_API_VERSION_100;
    }
    if (size_ret) *size_ret = sizeof(cl_layer_api_version);
    return CL_SUCCESS;
}

LAYER_API CL_API_ENTRY cl_int CL_API_CALL clInitLayer(cl_uint num_entries,
                                                      const struct _cl_icd_dispatch *target,
                                                      cl_uint *num_entries_ret,
                                                      const struct _cl_icd_dispatch **layer_ret)
{
    size_t n = sizeof(struct _cl_icd_dispatch) / sizeof(void *);
    if (!target || !num_entries_ret || !layer_ret || num_entries < n) return CL_INVALID_VALUE;
    L.next = target;
    L.disp = *target;
    L.disp.clEnqueueNDRangeKernel = l_EnqueueNDRangeKernel;
    L.disp.clEnqueueTask = l_EnqueueTask;
    L.disp.clEnqueueReadBuffer = l_EnqueueReadBuffer;
    L.disp.clEnqueueWriteBuffer = l_EnqueueWriteBuffer;
    L.disp.clEnqueueReadBufferRect = l_EnqueueReadBufferRect;
    L.disp.clEnqueueWriteBufferRect = l_EnqueueWriteBufferRect;
    L.disp.clEnqueueCopyBuffer = l_EnqueueCopyBuffer;
    L.disp.clEnqueueFillBuffer = l_EnqueueFillBuffer;
    L.disp.clEnqueueReadImage = l_EnqueueReadImage;
    L.disp.clEnqueueWriteImage = l_EnqueueWriteImage;
    L.disp.clEnqueueCopyImage = l_EnqueueCopyImage;
    L.disp.clEnqueueCopyImageToBuffer = l_EnqueueCopyImageToBuffer;
    L.disp.clEnqueueCopyBufferToImage = l_EnqueueCopyBufferToImage;
    L.disp.clEnqueueFillImage = l_EnqueueFillImage;
    L.disp.clEnqueueMapBuffer = l_EnqueueMapBuffer;
    L.disp.clEnqueueMapImage = l_EnqueueMapImage;
    L.disp.clEnqueueUnmapMemObject = l_EnqueueUnmapMemObject;
    L.disp.clEnqueueMarkerWithWaitList = l_EnqueueMarkerWithWaitList;
    L.disp.clEnqueueBarrierWithWaitList = l_EnqueueBarrierWithWaitList;
    L.disp.clEnqueueMarker = l_EnqueueMarker;
    L.disp.clEnqueueBarrier = l_EnqueueBarrier;
    /* SVM entries only where the driver has them (the loader's table may hold NULL) */
    if (target->clEnqueueSVMMemcpy) L.disp.clEnqueueSVMMemcpy = l_EnqueueSVMMemcpy;
    if (target->clEnqueueSVMMemFill) L.disp.clEnqueueSVMMemFill = l_EnqueueSVMMemFill;
    if (target->clEnqueueSVMMap) L.disp.clEnqueueSVMMap = l_EnqueueSVMMap;
    if (target->clEnqueueSVMUnmap) L.disp.clEnqueueSVMUnmap = l_EnqueueSVMUnmap;
    L.disp.clCreateCommandQueue = l_CreateCommandQueue;
    L.disp.clCreateCommandQueueWithProperties = l_CreateCommandQueueWithProperties;
    L.disp.clReleaseCommandQueue = l_ReleaseCommandQueue;
    L.disp.clFinish = l_Finish;
    L.disp.clWaitForEvents = l_WaitForEvents;
    L.disp.clBuildProgram = l_BuildProgram;
    layer_start();
    *num_entries_ret = (cl_uint)n;
    *layer_ret = &L.disp;
    return CL_SUCCESS;
}
