/* record/inject/cuda_inject.c: libgpuprof_cuda_inject.so, loaded by the CUDA
 * driver through CUDA_INJECTION64_PATH (InitializeInjection) and by NVTX
 * through NVTX_INJECTION64_PATH (InitializeInjectionNvtx2). CUPTI is dlopen'ed
 * at run time; activity buffers are converted (record/cuda/cupti_conv.c) and
 * handed to the store writer as soon as CUPTI completes them. */
#include "core/clock.h"
#include "record/cuda/cupti_conv.h"
#include "store/store.h"
#include <cupti_callbacks.h>
#include <dlfcn.h>
#include <nvtx3/nvToolsExt.h> /* also brings the injection types (nvtxTypes.h) */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define INJ_API  __attribute__((visibility("default")))
#define BUF_SIZE (8u << 20)

/* The injection entry points are plain C functions called once per process
 * by the driver / NVTX, so the state is one static object. */
static struct {
    pthread_once_t once;
    gp_store_writer *w;
    int started_cupti;
    void *lib;
    CUptiResult (*RegisterCallbacks)(CUpti_BuffersCallbackRequestFunc,
                                     CUpti_BuffersCallbackCompleteFunc);
    CUptiResult (*Enable)(CUpti_ActivityKind);
    CUptiResult (*FlushAll)(uint32_t);
    CUptiResult (*GetNextRecord)(uint8_t *, size_t, CUpti_Activity **);
    CUptiResult (*GetNumDropped)(CUcontext, uint32_t, size_t *);
    CUptiResult (*RegisterTimestamp)(CUpti_TimestampCallbackFunc);
    CUptiResult (*GetCallbackName)(CUpti_CallbackDomain, uint32_t, const char **);
    CUptiResult (*SetThreadIdType)(CUpti_ActivityThreadIdType);
    gp_cupti_sink sink;
    uint32_t cat_nvtx;
    pthread_mutex_t mu;
} S = {.once = PTHREAD_ONCE_INIT, .mu = PTHREAD_MUTEX_INITIALIZER};

static uint32_t s_str(void *ud, const char *s)
{
    (void)ud;
    return gp_store_writer_str(S.w, s);
}

static uint32_t s_thread(void *ud, uint32_t tid)
{
    (void)ud;
    return gp_store_writer_track(S.w, GP_STORE_TRACK_THREAD, tid, GP_NONE, NULL);
}

static uint32_t s_stream(void *ud, uint32_t dev, uint32_t stream)
{
    (void)ud;
    char label[64];
    snprintf(label, sizeof label, "CUDA stream %u", stream);
    return gp_store_writer_track(S.w, GP_STORE_TRACK_QUEUE, stream,
                                 dev == UINT32_MAX ? GP_NONE : (int32_t)dev, label);
}

static const char *s_api(void *ud, int drv, uint32_t cbid)
{
    (void)ud;
    const char *n = NULL;
    if (!S.GetCallbackName ||
        S.GetCallbackName(drv ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API, cbid,
                          &n) != CUPTI_SUCCESS)
        return NULL;
    return n;
}

/* Starts the store writer once per process (shared by CUPTI and NVTX). */
static void start_writer(void)
{
    const char *path = getenv("GPUPROF_STORE"), *run = getenv("GPUPROF_RUN_ID");
    if (!path || !run) return;
    gp_err err = {0};
    gp_store_writer_opts o = {0, 0, "cuda"};
    const char *ms = getenv("GPUPROF_COMMIT_MS");
    if (ms) o.commit_ms = atoi(ms);
    S.w = gp_store_writer_start(path, atoll(run), &o, &err);
    if (!S.w) {
        fprintf(stderr, "gpuprof cuda injection: not recording: %s\n", err.msg);
        return;
    }
    gp_cupti_sink k = {NULL, s_str, s_thread, s_stream, s_api, 0, 0, 0, 0, 0, 0};
    k.cat_runtime = s_str(NULL, "cuda_runtime");
    k.cat_driver = s_str(NULL, "cuda_driver");
    k.cat_memcpy = s_str(NULL, "gpu_memcpy");
    k.cat_memset = s_str(NULL, "gpu_memset");
    k.cat_sync = s_str(NULL, "cuda_sync");
    k.cat_overhead = s_str(NULL, "overhead");
    S.sink = k;
    S.cat_nvtx = s_str(NULL, "nvtx");
}

/* ---- CUPTI ---- */

static uint64_t CUPTIAPI timestamp(void)
{
    return (uint64_t)gp_clock_mono_ns(); /* CUPTI records on the store's clock */
}

static void CUPTIAPI buf_request(uint8_t **buf, size_t *size, size_t *max_records)
{
    *buf = aligned_alloc(8, BUF_SIZE);
    *size = *buf ? BUF_SIZE : 0;
    *max_records = 0;
}

static void CUPTIAPI buf_complete(CUcontext ctx, uint32_t stream, uint8_t *buf, size_t size,
                                  size_t valid)
{
    gp_store_ev batch[256];
    size_t n = 0;
    CUpti_Activity *rec = NULL;
    while (S.w && S.GetNextRecord(buf, valid, &rec) == CUPTI_SUCCESS) {
        if (gp_cupti_convert(rec, &S.sink, &batch[n]) && ++n == 256) {
            gp_store_writer_put(S.w, batch, n);
            n = 0;
        }
    }
    if (S.w && n) gp_store_writer_put(S.w, batch, n);
    size_t dropped = 0;
    if (S.w && S.GetNumDropped(ctx, stream, &dropped) == CUPTI_SUCCESS && dropped)
        gp_store_writer_add_dropped(S.w, dropped);
    free(buf);
    (void)size;
}

static void at_exit(void)
{
    if (S.started_cupti) S.FlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    pthread_mutex_lock(&S.mu);
    gp_store_writer *w = S.w;
    S.w = NULL;
    pthread_mutex_unlock(&S.mu);
    if (w) {
        int rc = gp_store_writer_stop(w);
        if (rc) fprintf(stderr, "gpuprof cuda injection: writing the store failed\n");
    }
}

static _Thread_local uint32_t tl_track; /* defined with the NVTX part below */

/* fork without exec: the store connection must not cross the fork; the
 * child records as a process of its own (NVTX; CUDA itself does not work in
 * a child forked after cuInit, so CUPTI is not flushed there). */
static void fork_prepare(void)
{
    pthread_mutex_lock(&S.mu);
    if (S.w) gp_store_writer_fork_prepare(S.w);
}

static void fork_parent(void)
{
    if (S.w) gp_store_writer_fork_parent(S.w);
    pthread_mutex_unlock(&S.mu);
}

static void fork_child(void)
{
    if (S.w) gp_store_writer_fork_child(S.w);
    S.started_cupti = 0;
    tl_track = UINT32_MAX; /* the forking thread has a new tid in the child */
    pthread_mutex_unlock(&S.mu);
}

static void init_once(void)
{
    start_writer();
    if (S.w) {
        atexit(at_exit);
        pthread_atfork(fork_prepare, fork_parent, fork_child);
    }
}

static int load_cupti(void)
{
    const char *env = getenv("GPUPROF_CUPTI_PATH");
    const char *names[] = {env,
                           "libcupti.so",
                           "libcupti.so.13",
                           "libcupti.so.12",
                           "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so",
                           "/usr/local/cuda/lib64/libcupti.so"};
    for (size_t i = 0; i < sizeof names / sizeof names[0] && !S.lib; i++)
        if (names[i]) S.lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!S.lib) return -1;
#define SYM(field, name) *(void **)&S.field = dlsym(S.lib, name)
    SYM(RegisterCallbacks, "cuptiActivityRegisterCallbacks");
    SYM(Enable, "cuptiActivityEnable");
    SYM(FlushAll, "cuptiActivityFlushAll");
    SYM(GetNextRecord, "cuptiActivityGetNextRecord");
    SYM(GetNumDropped, "cuptiActivityGetNumDroppedRecords");
    SYM(RegisterTimestamp, "cuptiActivityRegisterTimestampCallback");
    SYM(GetCallbackName, "cuptiGetCallbackName");
    SYM(SetThreadIdType, "cuptiSetThreadIdType");
#undef SYM
    return S.RegisterCallbacks && S.Enable && S.FlushAll && S.GetNextRecord && S.GetNumDropped ? 0
                                                                                               : -1;
}

INJ_API int InitializeInjection(void);
INJ_API int InitializeInjection(void)
{
    const char *on = getenv("GPUPROF_CUDA");
    if (on && !strcmp(on, "0")) return 1;
    pthread_once(&S.once, init_once);
    if (!S.w || S.started_cupti) return 1;
    if (load_cupti()) {
        fprintf(stderr,
                "gpuprof cuda injection: libcupti not found or incomplete (%s); CUDA "
                "activity is not recorded\n",
                dlerror());
        return 1;
    }
    if (S.SetThreadIdType) S.SetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
    if (S.RegisterTimestamp)
        S.RegisterTimestamp(timestamp);
    else
        fprintf(stderr, "gpuprof cuda injection: no timestamp callback: GPU times not aligned\n");
    if (S.RegisterCallbacks(buf_request, buf_complete) != CUPTI_SUCCESS) return 1;
    static const CUpti_ActivityKind kinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                                               CUPTI_ACTIVITY_KIND_MEMCPY,
                                               CUPTI_ACTIVITY_KIND_MEMSET,
                                               CUPTI_ACTIVITY_KIND_RUNTIME,
                                               CUPTI_ACTIVITY_KIND_DRIVER,
                                               CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
                                               CUPTI_ACTIVITY_KIND_MEMORY2,
                                               CUPTI_ACTIVITY_KIND_OVERHEAD};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (S.Enable(kinds[i]) != CUPTI_SUCCESS)
            fprintf(stderr, "gpuprof cuda injection: activity kind %d not enabled\n",
                    (int)kinds[i]);
    S.started_cupti = 1;
    return 1;
}

/* ---- NVTX ---- */

typedef struct nrange {
    int64_t ts;
    uint32_t name;
} nrange;

#define NVTX_DEPTH 128
static _Thread_local nrange tl_stack[NVTX_DEPTH];
static _Thread_local int tl_depth;
static _Thread_local uint32_t tl_track = UINT32_MAX;

typedef struct nstart { /* start/end ranges may end on another thread */
    uint64_t id;
    int64_t ts;
    uint32_t name, track;
} nstart;
static struct {
    pthread_mutex_t mu;
    nstart *v;
    size_t n, cap;
    uint64_t next_id;
} R = {.mu = PTHREAD_MUTEX_INITIALIZER};

typedef struct ndomain {
    char *name;
} ndomain;

static uint32_t my_track(void)
{
    if (tl_track == UINT32_MAX)
        tl_track = gp_store_writer_track(S.w, GP_STORE_TRACK_THREAD, (int64_t)syscall(SYS_gettid),
                                         GP_NONE, NULL);
    return tl_track;
}

/* Name id of an event: its ASCII or registered message, prefixed with the
 * domain's name for named domains ("domain::message"). */
static uint32_t msg_name(const ndomain *d, const nvtxEventAttributes_t *a, const char *plain)
{
    const char *m = plain;
    if (a) {
        if (a->messageType == NVTX_MESSAGE_TYPE_ASCII)
            m = a->message.ascii;
        else if (a->messageType == NVTX_MESSAGE_TYPE_REGISTERED)
            m = (const char *)a->message.registered;
        else
            m = "<unsupported message type>";
    }
    if (!m) m = "";
    if (!d || !d->name) return gp_store_writer_str(S.w, m);
    char buf[512];
    snprintf(buf, sizeof buf, "%s::%s", d->name, m);
    return gp_store_writer_str(S.w, buf);
}

static void push(uint32_t name)
{
    if (tl_depth < NVTX_DEPTH)
        tl_stack[tl_depth] = (nrange){gp_clock_mono_ns(), name};
    else
        gp_store_writer_add_dropped(S.w, 1);
    tl_depth++;
}

static int pop(void)
{
    if (tl_depth <= 0) return -1;
    int64_t t1 = gp_clock_mono_ns();
    if (--tl_depth < NVTX_DEPTH) {
        gp_store_ev e;
        gp_store_ev_init(&e, GP_ST_SLICE);
        e.cat = S.cat_nvtx;
        e.name = tl_stack[tl_depth].name;
        e.track = my_track();
        e.ts = tl_stack[tl_depth].ts;
        e.dur = t1 - e.ts;
        gp_store_writer_put(S.w, &e, 1);
    }
    return tl_depth;
}

static uint64_t start_range(uint32_t name)
{
    pthread_mutex_lock(&R.mu);
    if (R.n == R.cap) {
        size_t nc = R.cap ? R.cap * 2 : 64;
        nstart *nv = realloc(R.v, nc * sizeof *nv);
        if (!nv) {
            pthread_mutex_unlock(&R.mu);
            return 0;
        }
        R.v = nv;
        R.cap = nc;
    }
    uint64_t id = ++R.next_id;
    R.v[R.n++] = (nstart){id, gp_clock_mono_ns(), name, my_track()};
    pthread_mutex_unlock(&R.mu);
    return id;
}

static void end_range(uint64_t id)
{
    int64_t t1 = gp_clock_mono_ns();
    pthread_mutex_lock(&R.mu);
    for (size_t i = R.n; i-- > 0;)
        if (R.v[i].id == id) {
            gp_store_ev e;
            gp_store_ev_init(&e, GP_ST_SLICE);
            e.cat = S.cat_nvtx;
            e.name = R.v[i].name;
            e.track = R.v[i].track;
            e.ts = R.v[i].ts;
            e.dur = t1 - e.ts;
            R.v[i] = R.v[--R.n];
            pthread_mutex_unlock(&R.mu);
            gp_store_writer_put(S.w, &e, 1);
            return;
        }
    pthread_mutex_unlock(&R.mu);
}

static void mark(uint32_t name)
{
    gp_store_ev e;
    gp_store_ev_init(&e, GP_ST_INSTANT);
    e.cat = S.cat_nvtx;
    e.name = name;
    e.track = my_track();
    e.ts = gp_clock_mono_ns();
    gp_store_writer_put(S.w, &e, 1);
}

static void NVTX_API n_MarkEx(const nvtxEventAttributes_t *a)
{
    if (S.w) mark(msg_name(NULL, a, NULL));
}
static void NVTX_API n_MarkA(const char *m)
{
    if (S.w) mark(msg_name(NULL, NULL, m));
}
static nvtxRangeId_t NVTX_API n_RangeStartEx(const nvtxEventAttributes_t *a)
{
    return S.w ? start_range(msg_name(NULL, a, NULL)) : 0;
}
static nvtxRangeId_t NVTX_API n_RangeStartA(const char *m)
{
    return S.w ? start_range(msg_name(NULL, NULL, m)) : 0;
}
static void NVTX_API n_RangeEnd(nvtxRangeId_t id)
{
    if (S.w) end_range(id);
}
static int NVTX_API n_RangePushEx(const nvtxEventAttributes_t *a)
{
    if (!S.w) return -1;
    push(msg_name(NULL, a, NULL));
    return tl_depth - 1;
}
static int NVTX_API n_RangePushA(const char *m)
{
    if (!S.w) return -1;
    push(msg_name(NULL, NULL, m));
    return tl_depth - 1;
}
static int NVTX_API n_RangePop(void)
{
    return S.w ? pop() : -1;
}
static void NVTX_API n_NameOsThreadA(uint32_t tid, const char *name)
{
    if (S.w && name) gp_store_writer_track(S.w, GP_STORE_TRACK_THREAD, tid, GP_NONE, name);
}
static void NVTX_API n_DomainMarkEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
    if (S.w) mark(msg_name((const ndomain *)d, a, NULL));
}
static nvtxRangeId_t NVTX_API n_DomainRangeStartEx(nvtxDomainHandle_t d,
                                                   const nvtxEventAttributes_t *a)
{
    return S.w ? start_range(msg_name((const ndomain *)d, a, NULL)) : 0;
}
static void NVTX_API n_DomainRangeEnd(nvtxDomainHandle_t d, nvtxRangeId_t id)
{
    (void)d;
    if (S.w) end_range(id);
}
static int NVTX_API n_DomainRangePushEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
    if (!S.w) return -1;
    push(msg_name((const ndomain *)d, a, NULL));
    return tl_depth - 1;
}
static int NVTX_API n_DomainRangePop(nvtxDomainHandle_t d)
{
    (void)d;
    return S.w ? pop() : -1;
}
static nvtxDomainHandle_t NVTX_API n_DomainCreateA(const char *name)
{
    /* domains live until exit (NVTX handles must stay valid) */
    ndomain *d = calloc(1, sizeof *d);
    if (d && name) d->name = strdup(name);
    return (nvtxDomainHandle_t)d;
}
static void NVTX_API n_DomainDestroy(nvtxDomainHandle_t d)
{
    (void)d; /* kept: events still in flight may name it */
}
static nvtxStringHandle_t NVTX_API n_DomainRegisterStringA(nvtxDomainHandle_t d, const char *s)
{
    (void)d;
    return (nvtxStringHandle_t)(s ? strdup(s) : NULL); /* the handle is the string */
}

static void set(NvtxFunctionTable t, unsigned n, unsigned id, NvtxFunctionPointer f)
{
    if (t && id <= n && t[id]) *t[id] = f; /* valid ids: 1..n */
}

INJ_API int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get);
INJ_API int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get)
{
    const char *on = getenv("GPUPROF_NVTX");
    if (on && !strcmp(on, "0")) return 0;
    pthread_once(&S.once, init_once);
    if (!S.w) return 0;
    const NvtxExportTableCallbacks *cb = get ? get(NVTX_ETID_CALLBACKS) : NULL;
    if (!cb || !cb->GetModuleFunctionTable) return 0;
    NvtxFunctionTable t = NULL;
    unsigned n = 0;
    /* every module that initializes gets the same functions: idempotent */
    if (cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &t, &n)) {
        set(t, n, NVTX_CBID_CORE_MarkEx, (NvtxFunctionPointer)n_MarkEx);
        set(t, n, NVTX_CBID_CORE_MarkA, (NvtxFunctionPointer)n_MarkA);
        set(t, n, NVTX_CBID_CORE_RangeStartEx, (NvtxFunctionPointer)n_RangeStartEx);
        set(t, n, NVTX_CBID_CORE_RangeStartA, (NvtxFunctionPointer)n_RangeStartA);
        set(t, n, NVTX_CBID_CORE_RangeEnd, (NvtxFunctionPointer)n_RangeEnd);
        set(t, n, NVTX_CBID_CORE_RangePushEx, (NvtxFunctionPointer)n_RangePushEx);
        set(t, n, NVTX_CBID_CORE_RangePushA, (NvtxFunctionPointer)n_RangePushA);
        set(t, n, NVTX_CBID_CORE_RangePop, (NvtxFunctionPointer)n_RangePop);
        set(t, n, NVTX_CBID_CORE_NameOsThreadA, (NvtxFunctionPointer)n_NameOsThreadA);
    }
    t = NULL;
    n = 0;
    if (cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &t, &n)) {
        set(t, n, NVTX_CBID_CORE2_DomainMarkEx, (NvtxFunctionPointer)n_DomainMarkEx);
        set(t, n, NVTX_CBID_CORE2_DomainRangeStartEx, (NvtxFunctionPointer)n_DomainRangeStartEx);
        set(t, n, NVTX_CBID_CORE2_DomainRangeEnd, (NvtxFunctionPointer)n_DomainRangeEnd);
        set(t, n, NVTX_CBID_CORE2_DomainRangePushEx, (NvtxFunctionPointer)n_DomainRangePushEx);
        set(t, n, NVTX_CBID_CORE2_DomainRangePop, (NvtxFunctionPointer)n_DomainRangePop);
        set(t, n, NVTX_CBID_CORE2_DomainCreateA, (NvtxFunctionPointer)n_DomainCreateA);
        set(t, n, NVTX_CBID_CORE2_DomainDestroy, (NvtxFunctionPointer)n_DomainDestroy);
        set(t, n, NVTX_CBID_CORE2_DomainRegisterStringA,
            (NvtxFunctionPointer)n_DomainRegisterStringA);
    }
    return 1;
}
