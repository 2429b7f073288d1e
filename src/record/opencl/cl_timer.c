/* record/opencl/cl_timer.c: OpenCL kernel timers: events handed to
 * gp_cl_event are retained and, once complete, timed from
 * CL_PROFILING_COMMAND_START/END and placed on the profiler's timeline. */
#include "record/recorder.h"
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct cl_pending {
    cl_event ev;
    uint32_t name;
    int64_t host_ns; /* host time of gp_cl_event (just after enqueue) */
    uint64_t queue;
    int warmup;      /* enqueued during gp_measure's warm-up */
    int64_t bytes;   /* a transfer's bytes (gp_cl_event_ex), else -1 */
    gp_entry_ctx ec; /* the ranges open on the calling thread (per-entry metrics) */
} cl_pending;

/* Pending timings at which gp_cl_event polls them (a program that asks for
 * no results for hours would otherwise retain every event): the first poll
 * at GP_POLL_MIN, the next when the pending ones have doubled. */
#define GP_POLL_MIN 1024

typedef struct cl_state {
    GP_VEC(cl_pending) pend;
    size_t poll_at; /* pend.n that makes gp_cl_event poll (0: GP_POLL_MIN) */
    int have_off;
    int64_t off; /* host ns - device ns, from the first resolved event */
} cl_state;

int gp_cl_event(gp_profiler *p, const char *name, struct _cl_event *ev)
{
    return gp_cl_event_ex(p, name, ev, -1);
}

int gp_cl_event_ex(gp_profiler *p, const char *name, struct _cl_event *ev, int64_t bytes)
{
    if (!p || !name || !ev) return GP_EINVAL;
    int64_t now = gp_rec_host_ns(p);
    int rc = 0;
    gp_entry_ctx ec;
    gp_rec_entry_ctx(p, &ec);
    pthread_mutex_lock(&p->mu);
    cl_state *st = p->cl;
    if (!st) st = p->cl = calloc(1, sizeof *st);
    if (!st) {
        rc = GP_ENOMEM;
        goto out;
    }
    cl_command_queue q = NULL;
    cl_int e = clGetEventInfo(ev, CL_EVENT_COMMAND_QUEUE, sizeof q, &q, NULL);
    if (e != CL_SUCCESS || clRetainEvent(ev) != CL_SUCCESS) {
        gp_rec_seterr(p, "gp_cl_event(%s): invalid OpenCL event (error %d)", name, (int)e);
        rc = GP_EINVAL;
        goto out;
    }
    cl_pending pe = {ev,
                     gp_trace_str(p->tr, name, strlen(name)),
                     now,
                     (uint64_t)(uintptr_t)q,
                     gp_rec_warmup != 0,
                     bytes < 0 ? -1 : bytes,
                     ec};
    if (GP_VEC_PUSH(st->pend, pe)) {
        clReleaseEvent(ev);
        rc = GP_ENOMEM;
    } else {
        ec.ix = NULL; /* owned by the pending record */
        if (st->pend.n >= (st->poll_at ? st->poll_at : GP_POLL_MIN)) {
            size_t left = (size_t)gp_cl_resolve_(p, 0); /* completed ones: timed, released */
            st->poll_at = left * 2 > GP_POLL_MIN ? left * 2 : GP_POLL_MIN;
        }
    }
out:
    pthread_mutex_unlock(&p->mu);
    gp_rec_entry_ctx_free(&ec);
    return rc;
}

/* Times one completed event; returns 0, or 1 when it must be dropped. */
static int cl_time(gp_profiler *p, cl_state *st, const cl_pending *pe)
{
    cl_ulong q = 0, s = 0, e = 0;
    cl_int r1 = clGetEventProfilingInfo(pe->ev, CL_PROFILING_COMMAND_QUEUED, sizeof q, &q, NULL);
    cl_int r2 = clGetEventProfilingInfo(pe->ev, CL_PROFILING_COMMAND_START, sizeof s, &s, NULL);
    cl_int r3 = clGetEventProfilingInfo(pe->ev, CL_PROFILING_COMMAND_END, sizeof e, &e, NULL);
    if (r1 != CL_SUCCESS || r2 != CL_SUCCESS || r3 != CL_SUCCESS) {
        gp_rec_seterr(p,
                      "OpenCL event '%s': no profiling information (error %d; was the queue "
                      "created with CL_QUEUE_PROFILING_ENABLE?)",
                      gp_trace_s(p->tr, pe->name), (int)(r2 != CL_SUCCESS ? r2 : r3));
        return 1;
    }
    if (!st->have_off) {
        st->off = pe->host_ns - (int64_t)q;
        st->have_off = 1;
    }
    int64_t dur = e >= s ? (int64_t)(e - s) : 0;
    char label[64];
    snprintf(label, sizeof label, "OpenCL queue 0x%llx", (unsigned long long)pe->queue);
    uint32_t track = gp_rec_gpu_track(p, pe->queue, label);
    if (track == GP_NO_INDEX) return 1;
    gp_slice_ext x = {dur, pe->bytes, 0, 0, GP_DEV_UNSET, GP_BACKEND_OPENCL};
    if (gp_rec_kernel_timing(p, track, p->cat_cl, pe->name, (int64_t)s + st->off, dur, &x,
                             pe->warmup))
        return 1;
    if (pe->warmup) return 0;
    gp_rec_entry_timing_done(p, &pe->ec, dur, pe->bytes);
    p->kernel_ns_total += dur;
    p->kernel_count++;
    return 0;
}

void gp_cl_entry_remap_(gp_profiler *p, const uint32_t *to, size_t n)
{
    cl_state *st = p->cl;
    if (!st) return;
    for (size_t i = 0; i < st->pend.n; i++) gp_rec_entry_ctx_remap(&st->pend.v[i].ec, to, n);
}

int gp_cl_resolve_(gp_profiler *p, int wait)
{
    cl_state *st = p->cl;
    if (!st) return 0;
    size_t keep = 0;
    for (size_t i = 0; i < st->pend.n; i++) {
        cl_pending *pe = &st->pend.v[i];
        if (wait) clWaitForEvents(1, &pe->ev);
        cl_int status = CL_QUEUED;
        if (clGetEventInfo(pe->ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status,
                           NULL) != CL_SUCCESS)
            status = -1;
        if (status == CL_COMPLETE) {
            cl_time(p, st, pe);
        } else if (status >= 0) {
            st->pend.v[keep++] = *pe; /* still running */
            continue;
        } else {
            gp_rec_seterr(p, "OpenCL event '%s' failed (status %d)", gp_trace_s(p->tr, pe->name),
                          (int)status);
        }
        clReleaseEvent(pe->ev);
        gp_rec_entry_ctx_free(&pe->ec);
    }
    st->pend.n = keep;
    return (int)keep;
}

void gp_cl_fini_(gp_profiler *p)
{
    cl_state *st = p->cl;
    if (!st) return;
    for (size_t i = 0; i < st->pend.n; i++) {
        clReleaseEvent(st->pend.v[i].ev);
        gp_rec_entry_ctx_free(&st->pend.v[i].ec);
    }
    GP_VEC_FREE(st->pend);
    free(st);
    p->cl = NULL;
}

int gp_mem_set_cl_device(gp_profiler *p, void *dev)
{
    pthread_mutex_lock(&p->mu);
    p->cl_device = dev;
    pthread_mutex_unlock(&p->mu);
    return 0;
}

int gp_cl_global_mem_(gp_profiler *p, int64_t *total_b)
{
    if (!p->cl_device) return GP_ENODEV;
    cl_ulong sz = 0;
    if (clGetDeviceInfo((cl_device_id)p->cl_device, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof sz, &sz,
                        NULL) != CL_SUCCESS)
        return GP_ENODEV;
    *total_b = (int64_t)sz;
    return 0;
}
