/* record/cuda/cupti_conv.c: CUPTI activity records -> run-store events. */
#include "record/cuda/cupti_conv.h"
#include "core/demangle.h"
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

uint8_t gp_cupti_mem_kind(uint32_t k)
{
    switch (k) {
    case CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE:
        return 1;
    case CUPTI_ACTIVITY_MEMORY_KIND_PINNED:
        return 2;
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE:
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC:
        return 3;
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED:
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC:
        return 4;
    case CUPTI_ACTIVITY_MEMORY_KIND_ARRAY:
        return 5;
    default:
        return 0;
    }
}

static const char *const mem_kind_name[6] = {"Unknown", "Pageable", "Pinned",
                                             "Device",  "Managed",  "Array"};

static gp_copy_kind copy_kind(uint8_t k)
{
    switch (k) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA:
        return GP_COPY_HTOD;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH:
        return GP_COPY_DTOH;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA:
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD:
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA:
        return GP_COPY_DTOD;
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH:
        return GP_COPY_HTOH;
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP:
        return GP_COPY_PTOP;
    default:
        return GP_COPY_UNKNOWN;
    }
}

const char *gp_cupti_memcpy_name(uint8_t kind, uint8_t src, uint8_t dst, char *buf, size_t n)
{
    static const char *const kn[] = {"Unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
                                     "AtoD",    "DtoA", "DtoD", "HtoH", "PtoP"};
    uint8_t s = gp_cupti_mem_kind(src), d = gp_cupti_mem_kind(dst);
    snprintf(buf, n, "Memcpy %s (%s -> %s)", kind <= 10 ? kn[kind] : "Unknown", mem_kind_name[s],
             mem_kind_name[d]);
    return buf;
}

static int64_t opt_ts(uint64_t t)
{
    return t == 0 || t == (uint64_t)-1 ? GP_NONE : (int64_t)t;
}

/* CUPTI correlation ids start at 1; 0 means none */
static int64_t corr_of(uint32_t c)
{
    return c ? (int64_t)c : GP_NONE;
}

static int64_t dur_of(uint64_t start, uint64_t end)
{
    return end > start ? (int64_t)(end - start) : 0;
}

static const char *sync_name(uint32_t type)
{
    switch (type) {
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE:
        return "cudaEventSynchronize";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT:
        return "cudaStreamWaitEvent";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE:
        return "cudaStreamSynchronize";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE:
        return "cudaDeviceSynchronize";
    default:
        return "Synchronization";
    }
}

static const char *overhead_name(uint32_t k)
{
    switch (k) {
    case CUPTI_ACTIVITY_OVERHEAD_DRIVER_COMPILER:
        return "driver compiler";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH:
        return "CUPTI buffer flush";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_INSTRUMENTATION:
        return "CUPTI instrumentation";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_RESOURCE:
        return "CUPTI resource";
    default:
        return "overhead";
    }
}

int gp_cupti_convert(const CUpti_Activity *rec, const gp_cupti_sink *s, gp_store_ev *e)
{
    switch (rec->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
        const gp_cupti_kernel *k = (const gp_cupti_kernel *)rec;
        gp_store_ev_init(e, GP_ST_KERNEL);
        /* CUPTI gives mangled names; show them as Kineto and ncu do */
        char *dm = gp_demangle(k->name);
        e->name = s->str(s->ud, dm ? dm : k->name ? k->name : "<unnamed kernel>");
        free(dm);
        e->track = s->stream_track(s->ud, k->deviceId, k->streamId);
        e->ts = (int64_t)k->start;
        e->dur = dur_of(k->start, k->end);
        e->queued = opt_ts(k->queued);
        e->submit = opt_ts(k->submitted);
        e->corr = corr_of(k->correlationId);
        e->device = (int32_t)k->deviceId;
        e->context = (int32_t)k->contextId;
        e->stream = k->streamId;
        e->grid[0] = k->gridX;
        e->grid[1] = k->gridY;
        e->grid[2] = k->gridZ;
        e->block[0] = k->blockX;
        e->block[1] = k->blockY;
        e->block[2] = k->blockZ;
        e->registers = k->registersPerThread;
        e->shared_mem = k->staticSharedMemory + k->dynamicSharedMemory;
        return 1;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
        const gp_cupti_memcpy *m = (const gp_cupti_memcpy *)rec;
        char name[96];
        gp_store_ev_init(e, GP_ST_COPY);
        e->cat = s->cat_memcpy;
        e->name = s->str(
            s->ud, gp_cupti_memcpy_name(m->copyKind, m->srcKind, m->dstKind, name, sizeof name));
        e->track = s->stream_track(s->ud, m->deviceId, m->streamId);
        e->ts = (int64_t)m->start;
        e->dur = dur_of(m->start, m->end);
        e->corr = corr_of(m->correlationId);
        e->device = (int32_t)m->deviceId;
        e->context = (int32_t)m->contextId;
        e->stream = m->streamId;
        e->bytes = (int64_t)m->bytes;
        e->copy_kind = (uint8_t)copy_kind(m->copyKind);
        e->src_kind = gp_cupti_mem_kind(m->srcKind);
        e->dst_kind = gp_cupti_mem_kind(m->dstKind);
        return 1;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
        const gp_cupti_memset *m = (const gp_cupti_memset *)rec;
        char name[64];
        uint8_t mk = gp_cupti_mem_kind(m->memoryKind);
        snprintf(name, sizeof name, "Memset (%s)", mem_kind_name[mk]);
        gp_store_ev_init(e, GP_ST_COPY);
        e->cat = s->cat_memset;
        e->name = s->str(s->ud, name);
        e->track = s->stream_track(s->ud, m->deviceId, m->streamId);
        e->ts = (int64_t)m->start;
        e->dur = dur_of(m->start, m->end);
        e->corr = corr_of(m->correlationId);
        e->device = (int32_t)m->deviceId;
        e->context = (int32_t)m->contextId;
        e->stream = m->streamId;
        e->bytes = (int64_t)m->bytes;
        e->copy_kind = GP_COPY_MEMSET;
        e->dst_kind = mk;
        return 1;
    }
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: {
        const CUpti_ActivityAPI *a = (const CUpti_ActivityAPI *)rec;
        int drv = rec->kind == CUPTI_ACTIVITY_KIND_DRIVER;
        const char *nm = s->api_name(s->ud, drv, a->cbid);
        char tmp[48];
        if (!nm) {
            snprintf(tmp, sizeof tmp, "%s API %u", drv ? "driver" : "runtime", (unsigned)a->cbid);
            nm = tmp;
        }
        gp_store_ev_init(e, GP_ST_API);
        e->cat = drv ? s->cat_driver : s->cat_runtime;
        e->name = s->str(s->ud, nm);
        e->track = s->thread_track(s->ud, a->threadId);
        e->ts = (int64_t)a->start;
        e->dur = dur_of(a->start, a->end);
        e->corr = corr_of(a->correlationId);
        return 1;
    }
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
        const gp_cupti_sync *y = (const gp_cupti_sync *)rec;
        gp_store_ev_init(e, GP_ST_SLICE);
        e->cat = s->cat_sync;
        e->name = s->str(s->ud, sync_name(y->type));
        /* stream (or context, streamId = all ones) synchronization: drawn on
         * the stream; the device is not in the record */
        e->track = s->stream_track(s->ud, UINT32_MAX, y->streamId);
        e->ts = (int64_t)y->start;
        e->dur = dur_of(y->start, y->end);
        e->corr = corr_of(y->correlationId);
        return 1;
    }
    case CUPTI_ACTIVITY_KIND_MEMORY2: {
        const gp_cupti_memory *m = (const gp_cupti_memory *)rec;
        if (m->memoryOperationType != CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION &&
            m->memoryOperationType != CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE)
            return 0;
        gp_store_ev_init(e, GP_ST_MEM);
        e->track = s->stream_track(s->ud, m->deviceId, m->streamId);
        e->ts = (int64_t)m->timestamp;
        e->addr = (int64_t)m->address;
        e->bytes = m->memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE
                       ? -(int64_t)m->bytes
                       : (int64_t)m->bytes;
        e->device = (int32_t)m->deviceId;
        e->corr = corr_of(m->correlationId);
        return 1;
    }
    case CUPTI_ACTIVITY_KIND_OVERHEAD: {
        const gp_cupti_overhead *o = (const gp_cupti_overhead *)rec;
        gp_store_ev_init(e, GP_ST_SLICE);
        e->cat = s->cat_overhead;
        e->name = s->str(s->ud, overhead_name(o->overheadKind));
        uint32_t tid = o->objectKind == CUPTI_ACTIVITY_OBJECT_THREAD ? o->objectId.pt.threadId : 0;
        e->track = s->thread_track(s->ud, tid);
        e->ts = (int64_t)o->start;
        e->dur = dur_of(o->start, o->end);
        return 1;
    }
    default:
        return 0;
    }
}
