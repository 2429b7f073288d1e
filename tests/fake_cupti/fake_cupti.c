/* tests/fake_cupti/fake_cupti.c: a stand-in libcupti for testing the CUPTI
 * injection library on a machine without a GPU. It implements the calls the
 * injection makes; cuptiActivityFlushAll fills one buffer with a launch and
 * its kernel, a pageable copy, a memset, a stream synchronization, an
 * allocation and its free and an overhead record, all stamped through the
 * registered timestamp callback, and reports 2 dropped records. Records are
 * laid out as [uint64 size][record] (only this file reads the layout).
 * FAKE_CUPTI_LATE=1: the buffer is completed on a thread of the stand-in's
 * own, as CUPTI's worker may do while the program exits; the flush returns
 * once that thread has read its first record, and the thread then waits
 * 300 ms inside the completion before reading on. */
#include <cupti_activity.h>
#include <cupti_callbacks.h>
#include <cupti_version.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

static CUpti_BuffersCallbackRequestFunc req_cb;
static CUpti_BuffersCallbackCompleteFunc done_cb;
static CUpti_TimestampCallbackFunc ts_cb;
static uint64_t enabled; /* bit per kind < 64 */
static int flushed;
static int late;           /* FAKE_CUPTI_LATE: completion on the stand-in's thread */
static int late_first = 1; /* the late thread's first record is yet to be read */
static pthread_mutex_t late_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t late_cv = PTHREAD_COND_INITIALIZER;
static int late_inside;

EXPORT CUptiResult CUPTIAPI cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc r,
                                                           CUpti_BuffersCallbackCompleteFunc c)
{
    req_cb = r;
    done_cb = c;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult CUPTIAPI cuptiActivityEnable(CUpti_ActivityKind k)
{
    if ((unsigned)k < 64) enabled |= 1ull << k;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult CUPTIAPI cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc f)
{
    ts_cb = f;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult CUPTIAPI cuptiSetThreadIdType(CUpti_ActivityThreadIdType t)
{
    return t == CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM ? CUPTI_SUCCESS
                                                     : CUPTI_ERROR_INVALID_PARAMETER;
}

EXPORT CUptiResult CUPTIAPI cuptiGetCallbackName(CUpti_CallbackDomain d, uint32_t cbid,
                                                 const char **name)
{
    if (d == CUPTI_CB_DOMAIN_RUNTIME_API && cbid == 211) {
        *name = "cudaLaunchKernel";
        return CUPTI_SUCCESS;
    }
    return CUPTI_ERROR_INVALID_PARAMETER;
}

EXPORT CUptiResult CUPTIAPI cuptiActivityGetNumDroppedRecords(CUcontext c, uint32_t s,
                                                              size_t *dropped)
{
    (void)c;
    (void)s;
    *dropped = 2;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult CUPTIAPI cuptiActivityGetNextRecord(uint8_t *buf, size_t valid,
                                                       CUpti_Activity **rec)
{
    uint8_t *p;
    if (!*rec)
        p = buf;
    else
        p = (uint8_t *)*rec + *(uint64_t *)((uint8_t *)*rec - 8);
    if (p + 8 > buf + valid) return CUPTI_ERROR_MAX_LIMIT_REACHED;
    *rec = (CUpti_Activity *)(p + 8);
    if (late && late_first) { /* inside the late completion: the flush may return */
        late_first = 0;
        pthread_mutex_lock(&late_mu);
        late_inside = 1;
        pthread_cond_signal(&late_cv);
        pthread_mutex_unlock(&late_mu);
        usleep(300000);
    }
    return CUPTI_SUCCESS;
}

static uint8_t *put(uint8_t *p, const void *rec, size_t n)
{
    uint64_t sz = (n + 7) & ~(uint64_t)7;
    memcpy(p, &sz, 8);
    memset(p + 8, 0, sz);
    memcpy(p + 8, rec, n);
    return p + 8 + sz;
}

typedef struct late_buf {
    uint8_t *buf;
    size_t size, valid;
} late_buf;

static void *late_main(void *arg)
{
    late_buf *b = arg;
    done_cb(NULL, 0, b->buf, b->size, b->valid);
    return NULL;
}

EXPORT CUptiResult CUPTIAPI cuptiActivityFlushAll(uint32_t flag)
{
    if (flushed || !req_cb || !done_cb || !ts_cb) return CUPTI_SUCCESS;
    flushed = 1;
    uint8_t *buf = NULL;
    size_t size = 0, maxn = 0;
    req_cb(&buf, &size, &maxn);
    if (!buf || size < 4096) return CUPTI_ERROR_OUT_OF_MEMORY;
    uint8_t *p = buf;
    uint64_t t = ts_cb();
    uint32_t tid = (uint32_t)syscall(SYS_gettid);
    if (enabled & (1ull << CUPTI_ACTIVITY_KIND_RUNTIME)) {
        CUpti_ActivityAPI a = {0};
        a.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
        a.cbid = 211;
        a.start = t;
        a.end = t + 3000;
        a.threadId = tid;
        a.correlationId = 1;
        p = put(p, &a, sizeof a);
    }
#if CUPTI_API_VERSION >= 130000
    CUpti_ActivityKernel10 k;
    CUpti_ActivityMemcpy6 m;
    CUpti_ActivityMemory4 mem;
    CUpti_ActivitySynchronization2 y;
    CUpti_ActivityOverhead3 o;
#else
    CUpti_ActivityKernel9 k;
    CUpti_ActivityMemcpy5 m;
    CUpti_ActivityMemory3 mem;
    CUpti_ActivitySynchronization y;
    CUpti_ActivityOverhead o;
#endif
    CUpti_ActivityMemset4 ms;
    if (enabled & (1ull << CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)) {
        memset(&k, 0, sizeof k);
        k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
        k.name = "saxpy_kernel";
        k.start = t + 5000;
        k.end = t + 25000;
        k.queued = t + 3500;
        k.submitted = t + 4000;
        k.streamId = 7;
        k.gridX = 4096;
        k.gridY = k.gridZ = 1;
        k.blockX = 256;
        k.blockY = k.blockZ = 1;
        k.registersPerThread = 16;
        k.correlationId = 1;
        p = put(p, &k, sizeof k);
    }
    if (enabled & (1ull << CUPTI_ACTIVITY_KIND_MEMCPY)) {
        memset(&m, 0, sizeof m);
        m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
        m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
        m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
        m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
        m.bytes = 4 << 20;
        m.start = t + 30000;
        m.end = t + 90000;
        m.streamId = 7;
        m.correlationId = 2;
        p = put(p, &m, sizeof m);
    }
    if (enabled & (1ull << CUPTI_ACTIVITY_KIND_MEMSET)) {
        memset(&ms, 0, sizeof ms);
        ms.kind = CUPTI_ACTIVITY_KIND_MEMSET;
        ms.bytes = 1 << 20;
        ms.start = t + 95000;
        ms.end = t + 96000;
        ms.streamId = 7;
        ms.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
        p = put(p, &ms, sizeof ms);
    }
    if (enabled & (1ull << CUPTI_ACTIVITY_KIND_SYNCHRONIZATION)) {
        memset(&y, 0, sizeof y);
        y.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
        y.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
        y.start = t + 97000;
        y.end = t + 99000;
        y.streamId = 7;
        p = put(p, &y, sizeof y);
    }
    if (enabled & (1ull << CUPTI_ACTIVITY_KIND_MEMORY2)) {
        memset(&mem, 0, sizeof mem);
        mem.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
        mem.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
        mem.address = 0x7000000;
        mem.bytes = 1 << 22;
        mem.timestamp = t + 1000;
        mem.streamId = 7;
        p = put(p, &mem, sizeof mem);
        mem.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE;
        mem.timestamp = t + 100000;
        p = put(p, &mem, sizeof mem);
    }
    if (enabled & (1ull << CUPTI_ACTIVITY_KIND_OVERHEAD)) {
        memset(&o, 0, sizeof o);
        o.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
        o.overheadKind = CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH;
        o.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
        o.objectId.pt.threadId = tid;
        o.start = t + 100;
        o.end = t + 600;
        p = put(p, &o, sizeof o);
    }
    const char *lv = getenv("FAKE_CUPTI_LATE");
    late = lv && lv[0] == '1';
    if (late) {
        static late_buf b;
        pthread_t th;
        b = (late_buf){buf, size, (size_t)(p - buf)};
        if (pthread_create(&th, NULL, late_main, &b) == 0) {
            pthread_detach(th);
            pthread_mutex_lock(&late_mu);
            while (!late_inside) pthread_cond_wait(&late_cv, &late_mu);
            pthread_mutex_unlock(&late_mu);
            return CUPTI_SUCCESS;
        }
    }
    done_cb(NULL, 0, buf, size, (size_t)(p - buf));
    (void)flag;
    return CUPTI_SUCCESS;
}
