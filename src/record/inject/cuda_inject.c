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
#include <errno.h>
#include <link.h>
#include <nvtx3/nvToolsExt.h> /* also brings the injection types (nvtxTypes.h) */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <wchar.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

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
    /* CUPTI may complete a buffer on its own thread while the program exits:
     * the writer (and the sink's string and track helpers, which use it) is
     * reached under S.mu, which at_fini takes to stop it; a buffer comes
     * every few MB of activity, so the lock costs nothing measurable */
    pthread_mutex_lock(&S.mu);
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
    pthread_mutex_unlock(&S.mu);
    free(buf);
    (void)size;
}

static int n_started; /* NVTX: defined with the NVTX part below */
static void n_fork_prepare(void);
static void n_fork_parent(void);
static void n_fork_child(void);
static void n_drain_stop(void);

/* exit, first part (an atexit handler, registered when the injection
 * starts): CUPTI's buffers are flushed while the driver is still up. */
static void at_exit(void)
{
    if (S.started_cupti) S.FlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
}

/* exit, last part (the library's destructor, run by the dynamic linker after
 * every atexit handler and C++ static destructor, which may still record
 * NVTX ranges): hands every published NVTX event to the writer and stops
 * it. */
__attribute__((destructor)) static void at_fini(void)
{
    if (n_started) n_drain_stop();
    pthread_mutex_lock(&S.mu);
    gp_store_writer *w = S.w;
    S.w = NULL;
    pthread_mutex_unlock(&S.mu);
    if (w) {
        int rc = gp_store_writer_stop(w);
        if (rc) fprintf(stderr, "gpuprof cuda injection: writing the store failed\n");
    }
}

/* fork without exec: the store connection must not cross the fork; the
 * child records as a process of its own (NVTX; CUDA itself does not work in
 * a child forked after cuInit, so CUPTI is not flushed there). */
static void fork_prepare(void)
{
    n_fork_prepare(); /* NVTX's drain holds its lock while it calls the writer */
    pthread_mutex_lock(&S.mu);
    if (S.w) gp_store_writer_fork_prepare(S.w);
}

static void fork_parent(void)
{
    if (S.w) gp_store_writer_fork_parent(S.w);
    pthread_mutex_unlock(&S.mu);
    n_fork_parent();
}

static void fork_child(void)
{
    if (S.w) gp_store_writer_fork_child(S.w);
    S.started_cupti = 0;
    pthread_mutex_unlock(&S.mu);
    n_fork_child();
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

/* ---- NVTX ----
 *
 * The hot path (push/pop/mark) touches only the calling thread's state: one
 * timestamp (TSC, or CLOCK_MONOTONIC without an invariant TSC) per event, the
 * name looked up in a per-thread cache (no interning per push), and finished
 * events appended to per-thread chunks published with one release store. A
 * drain thread takes the published events every drain period, converts the
 * timestamps to CLOCK_MONOTONIC ns (the store's clock) and hands them to the
 * store writer in batches (docs/recording.md, "NVTX"). */

typedef struct nev { /* a finished event in a thread's chunk */
    uint64_t t0, t1; /* raw times; t1 == NEV_MARK for a mark */
    uint32_t name, track;
} nev;
#define NEV_MARK      UINT64_MAX
#define NCHUNK_EVENTS 1024
#define NCHUNK_MAX                                                                                 \
    8192 /* chunks in flight per thread (8 M events, 192 MiB): the writer queue's bound */
typedef struct nchunk {
    _Atomic(struct nchunk *) next; /* set by the owner when this chunk is full */
    _Atomic uint32_t n;            /* events published (release by the owner) */
    nev ev[NCHUNK_EVENTS];
} nchunk;

typedef struct nrange {
    uint64_t t;
    uint32_t name;
} nrange;

/* One name-cache entry: a message pointer (ASCII literal or registered
 * handle) of a domain -> string id. A pointer into a read-only segment is
 * trusted while no library was unloaded; any other pointer is trusted only
 * while its text still equals the copy taken when it was interned. */
typedef struct ncache {
    const void *key, *dom;
    char *copy; /* NULL when key points into read-only memory */
    uint32_t id;
} ncache;
#define NCACHE 256
#define NPAGES 64 /* per-thread verdicts "this page is read-only" */

#define NVTX_DEPTH 128
typedef struct ndstk { /* the push/pop stack of one named domain on one thread */
    int depth;
    uint32_t track; /* its ranges' track (UINT32_MAX: not made yet) */
    nrange stack[NVTX_DEPTH];
} ndstk;

typedef struct nthr {
    /* owner side */
    nchunk *cur;
    uint32_t pos;
    int depth; /* the default domain's stack (depth, stack) */
    uint32_t track;
    uint64_t gen; /* N.unload_gen the cache was filled under */
    nrange stack[NVTX_DEPTH];
    ndstk **dstk; /* named domains' stacks by ndomain.idx (allocated on first push) */
    uint32_t ndstk;
    ncache cache[NCACHE];
    uintptr_t page[NPAGES]; /* page number + 1 (0 = empty) */
    uint8_t page_ro[NPAGES];
    _Atomic uint32_t nchunks; /* chunks in flight (owner adds, drain subtracts) */
    _Atomic uint64_t dropped; /* events lost (deep stack, backlog), drain reports */
    _Atomic int dead;         /* the thread exited: free once drained */
    /* drain side (under N.mu) */
    nchunk *head;
    uint32_t head_pos;
    struct nthr *next;
} nthr;

static __thread nthr *tl_n;

typedef struct nanchor { /* a (raw, mono) pair: raw -> ns is linear between anchors */
    uint64_t raw;
    int64_t mono;
} nanchor;

static struct {
    int use_tsc;
    pthread_mutex_t mu; /* threads list, anchors, drain state */
    pthread_cond_t cv;
    pthread_t thr;
    int running, stop, awake;
    int64_t period_ns;
    nthr *threads;
    pthread_key_t key;
    nanchor *anc;
    size_t nanc, canc;
    _Atomic uint64_t unload_gen; /* bumped when a library was unloaded */
    unsigned long long dl_subs;
} N = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

static inline uint64_t n_now(void)
{
#if defined(__x86_64__) || defined(__i386__)
    if (N.use_tsc) return __builtin_ia32_rdtsc();
#endif
    return (uint64_t)gp_clock_mono_ns();
}

/* Takes a (raw, mono) anchor: the tightest of 8 TSC brackets around a
 * clock read (gp_clock_tsc_pair); a single bracket taken while the thread
 * was preempted put the ranges converted near it microseconds off. */
static nanchor n_anchor_now(void)
{
    nanchor a;
    a.mono = gp_clock_mono_ns();
    a.raw = (uint64_t)a.mono;
#if defined(__x86_64__) || defined(__i386__)
    if (N.use_tsc) gp_clock_tsc_pair(&a.mono, &a.raw);
#endif
    return a;
}

/* Appends an anchor when it is later than the last one (caller holds N.mu). */
static void n_anchor_add(nanchor a)
{
    if (N.nanc && (a.raw <= N.anc[N.nanc - 1].raw || a.mono <= N.anc[N.nanc - 1].mono)) return;
    if (N.nanc == N.canc) {
        size_t nc = N.canc ? N.canc * 2 : 256;
        nanchor *nv = realloc(N.anc, nc * sizeof *nv);
        if (!nv) return;
        N.anc = nv;
        N.canc = nc;
    }
    N.anc[N.nanc++] = a;
}

/* raw -> CLOCK_MONOTONIC ns: linear between the two anchors around raw
 * (caller holds N.mu; at least two anchors; raw <= the last one in practice). */
static int64_t n_to_ns(uint64_t raw)
{
    if (!N.use_tsc) return (int64_t)raw;
    size_t lo = 0, hi = N.nanc - 1; /* find the segment [lo, lo + 1] holding raw */
    if (raw >= N.anc[hi].raw)
        lo = hi - 1;
    else if (raw > N.anc[0].raw)
        while (hi - lo > 1) {
            size_t mid = lo + (hi - lo) / 2;
            if (N.anc[mid].raw <= raw)
                lo = mid;
            else
                hi = mid;
        }
    const nanchor *a = &N.anc[lo], *b = &N.anc[lo + 1];
    double f = (double)(b->mono - a->mono) / (double)(b->raw - a->raw);
    return a->mono + (int64_t)((double)(int64_t)(raw - a->raw) * f);
}

static void n_thread_exit(void *arg)
{
    nthr *t = arg;
    tl_n = NULL; /* a later NVTX call in another destructor registers anew */
    atomic_store_explicit(&t->dead, 1, memory_order_release);
}

static void n_drain_wake(void);

/* The calling thread's state, registered on first use (NULL on no memory). */
static nthr *n_self_slow(void)
{
    nthr *t = calloc(1, sizeof *t);
    nchunk *c = calloc(1, sizeof *c);
    if (!t || !c) {
        free(t);
        free(c);
        return NULL;
    }
    t->cur = t->head = c;
    atomic_init(&t->nchunks, 1);
    t->track = UINT32_MAX;
    t->gen = atomic_load_explicit(&N.unload_gen, memory_order_relaxed);
    pthread_mutex_lock(&N.mu);
    t->next = N.threads;
    N.threads = t;
    pthread_mutex_unlock(&N.mu);
    pthread_setspecific(N.key, t);
    tl_n = t;
    return t;
}

static inline nthr *n_self(void)
{
    nthr *t = tl_n;
    return t ? t : n_self_slow();
}

/* The writer's string and thread-track tables, from an NVTX call (a cache
 * miss, a thread's first event, a thread name): under S.mu, so that a thread
 * still inside a call when the program exits never uses the writer at_fini
 * stops and frees (it gets 0; what it records then is not drained). */
static uint32_t n_str(const char *s)
{
    pthread_mutex_lock(&S.mu);
    uint32_t id = S.w ? gp_store_writer_str(S.w, s) : 0;
    pthread_mutex_unlock(&S.mu);
    return id;
}

static uint32_t n_thread_track(int64_t tid, const char *name)
{
    pthread_mutex_lock(&S.mu);
    uint32_t id = S.w ? gp_store_writer_track(S.w, GP_STORE_TRACK_THREAD, tid, GP_NONE, name) : 0;
    pthread_mutex_unlock(&S.mu);
    return id;
}

static uint32_t n_track(nthr *t)
{
    if (t->track == UINT32_MAX) t->track = n_thread_track((int64_t)syscall(SYS_gettid), NULL);
    return t->track;
}

/* Moves the owner to a new chunk; 0 when the backlog is full or no memory. */
static int n_next_chunk(nthr *t)
{
    uint32_t inflight = atomic_load_explicit(&t->nchunks, memory_order_relaxed);
    if (inflight >= NCHUNK_MAX) {
        n_drain_wake();
        return 0;
    }
    nchunk *c = malloc(sizeof *c);
    if (!c) return 0;
    atomic_init(&c->next, NULL);
    atomic_init(&c->n, 0);
    atomic_fetch_add_explicit(&t->nchunks, 1, memory_order_relaxed);
    atomic_store_explicit(&t->cur->next, c, memory_order_release);
    t->cur = c;
    t->pos = 0;
    if (inflight + 1 >= 8) n_drain_wake(); /* the drain falls behind: call it now */
    return 1;
}

static inline void n_emit(nthr *t, uint64_t t0, uint64_t t1, uint32_t name, uint32_t track)
{
    if (__builtin_expect(t->pos == NCHUNK_EVENTS, 0) && !n_next_chunk(t)) {
        atomic_fetch_add_explicit(&t->dropped, 1, memory_order_relaxed);
        return;
    }
    nev *e = &t->cur->ev[t->pos++];
    e->t0 = t0;
    e->t1 = t1;
    e->name = name;
    e->track = track;
    atomic_store_explicit(&t->cur->n, t->pos, memory_order_release);
}

typedef struct ndomain {
    char *name;
    uint32_t idx; /* 0, 1, ... in creation order: the index of its per-thread stacks */
    struct ndomain *next;
} ndomain;
static _Atomic uint32_t n_domains; /* domains created */
/* The domains by name: nvtxDomainCreate of a name already created (another
 * library with its own copy of NVTX, or a program that creates its domain
 * per call) returns the same handle, so one name is one domain with one
 * push/pop stack per thread, and creating it again costs no memory */
static struct {
    pthread_mutex_t mu;
    ndomain *head;
} D = {.mu = PTHREAD_MUTEX_INITIALIZER};

#define NREG_MAGIC 0x6e726567u
typedef struct nreg { /* an nvtxStringHandle_t */
    uint32_t magic;
    uint32_t id; /* the string's id under dom's name */
    const ndomain *dom;
    char *s;
} nreg;

/* Interns a message under a domain's name ("domain::message"). */
static uint32_t n_intern(const ndomain *d, const char *m)
{
    if (!m) m = "";
    if (!d || !d->name) return n_str(m);
    /* whole, however long (a cache miss only: not on the hot path) */
    size_t ld = strlen(d->name), lm = strlen(m);
    char sbuf[512], *buf = sbuf;
    if (ld + 2 + lm + 1 > sizeof sbuf && !(buf = malloc(ld + 2 + lm + 1))) {
        buf = sbuf; /* no memory: the name is cut to 511 bytes */
        snprintf(buf, sizeof sbuf, "%s::%s", d->name, m);
    } else {
        memcpy(buf, d->name, ld);
        memcpy(buf + ld, "::", 2);
        memcpy(buf + ld + 2, m, lm + 1);
    }
    uint32_t id = n_str(buf);
    if (buf != sbuf) free(buf);
    return id;
}

typedef struct ro_probe {
    uintptr_t addr;
    int found, ro;
} ro_probe;

static int ro_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    ro_probe *p = arg;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD) continue;
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        if (p->addr >= lo && p->addr < lo + ph->p_memsz) {
            p->found = 1;
            p->ro = !(ph->p_flags & PF_W);
            return 1;
        }
    }
    return 0;
}

/* 1 when s (a string, of wchar_t when wide) lies in a read-only segment of
 * a loaded object (a literal); the verdict is kept per page (forgotten when
 * a library is unloaded). */
static int n_readonly(nthr *t, const void *s, int wide)
{
    uintptr_t pg = ((uintptr_t)s >> 12) + 1;
    unsigned slot = (unsigned)(pg ^ (pg >> 6)) & (NPAGES - 1);
    if (t->page[slot] == pg) return t->page_ro[slot];
    ro_probe p = {(uintptr_t)s, 0, 0};
    dl_iterate_phdr(ro_cb, &p);
    /* a string crossing into the next page is judged by its first page only
     * when both are read-only: check the end too */
    int ro = p.found && p.ro;
    if (ro) {
        size_t end = wide ? wcslen(s) * sizeof(wchar_t) + sizeof(wchar_t) - 1 : strlen(s);
        ro_probe q = {(uintptr_t)s + end, 0, 0};
        dl_iterate_phdr(ro_cb, &q);
        ro = q.found && q.ro;
        if (!ro) return 0; /* not cached: the verdict is for this string only */
    }
    t->page[slot] = pg;
    t->page_ro[slot] = (uint8_t)ro;
    return ro;
}

/* Name id of an ASCII message m of domain d through the thread's cache. */
static uint32_t n_name(nthr *t, const ndomain *d, const char *m)
{
    if (!m) m = "";
    uint64_t gen = atomic_load_explicit(&N.unload_gen, memory_order_relaxed);
    if (__builtin_expect(gen != t->gen, 0)) { /* a library went away: forget literals */
        for (int i = 0; i < NCACHE; i++)
            if (!t->cache[i].copy) t->cache[i].key = NULL;
        memset(t->page, 0, sizeof t->page);
        t->gen = gen;
    }
    ncache *c = &t->cache[(((uintptr_t)m >> 3) ^ ((uintptr_t)d >> 4) ^ ((uintptr_t)m >> 11)) &
                          (NCACHE - 1)];
    if (__builtin_expect(c->key == m && c->dom == d, 1) && (!c->copy || !strcmp(c->copy, m)))
        return c->id;
    uint32_t id = n_intern(d, m);
    int writable = c->key == m && c->copy; /* same buffer, new text: known writable */
    free(c->copy);
    c->copy = NULL;
    c->key = NULL;
    if (writable || !n_readonly(t, m, 0)) {
        c->copy = strdup(m);
        if (!c->copy) return id;
    }
    c->key = m;
    c->dom = d;
    c->id = id;
    return id;
}

/* wchar_t text (UTF-32 on Linux) as UTF-8, malloc'ed; a value that is no
 * Unicode scalar value (a surrogate, above U+10FFFF, negative) becomes
 * U+FFFD. NULL on no memory. */
_Static_assert(sizeof(wchar_t) == 4, "wchar_t is UTF-32");
static char *n_utf8(const wchar_t *w)
{
    if (!w) w = L"";
    size_t n = wcslen(w);
    char *o = n < (SIZE_MAX - 1) / 4 ? malloc(4 * n + 1) : NULL, *p = o;
    if (!o) return NULL;
    for (size_t i = 0; i < n; i++) {
        uint32_t c = (uint32_t)w[i];
        if (c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff)) c = 0xfffd;
        if (c < 0x80) {
            *p++ = (char)c;
        } else if (c < 0x800) {
            *p++ = (char)(0xc0 | c >> 6);
            *p++ = (char)(0x80 | (c & 0x3f));
        } else if (c < 0x10000) {
            *p++ = (char)(0xe0 | c >> 12);
            *p++ = (char)(0x80 | ((c >> 6) & 0x3f));
            *p++ = (char)(0x80 | (c & 0x3f));
        } else {
            *p++ = (char)(0xf0 | c >> 18);
            *p++ = (char)(0x80 | ((c >> 12) & 0x3f));
            *p++ = (char)(0x80 | ((c >> 6) & 0x3f));
            *p++ = (char)(0x80 | (c & 0x3f));
        }
    }
    *p = 0;
    return o;
}

/* Name id of a wide message m of domain d (the W variants, Ex with
 * NVTX_MESSAGE_TYPE_UNICODE), interned as UTF-8, through the thread's cache
 * like n_name. Its entries are keyed by the domain's address + 1 (a domain
 * is a malloc'ed block, so that is never a domain's address): a narrow
 * lookup of the same pointer never meets them; the copy of a writable
 * buffer is its wchar_t text. */
static uint32_t n_wname(nthr *t, const ndomain *d, const wchar_t *m)
{
    if (!m) return n_name(t, d, "");
    uint64_t gen = atomic_load_explicit(&N.unload_gen, memory_order_relaxed);
    if (gen != t->gen) { /* a library went away: forget literals */
        for (int i = 0; i < NCACHE; i++)
            if (!t->cache[i].copy) t->cache[i].key = NULL;
        memset(t->page, 0, sizeof t->page);
        t->gen = gen;
    }
    const void *dk = (const void *)((uintptr_t)d + 1);
    ncache *c = &t->cache[(((uintptr_t)m >> 3) ^ ((uintptr_t)d >> 4) ^ ((uintptr_t)m >> 11)) &
                          (NCACHE - 1)];
    if (c->key == m && c->dom == dk && (!c->copy || !wcscmp((const wchar_t *)c->copy, m)))
        return c->id;
    char *u = n_utf8(m);
    uint32_t id = n_intern(d, u ? u : "<out of memory>");
    free(u);
    int writable = c->key == m && c->copy; /* same buffer, new text: known writable */
    free(c->copy);
    c->copy = NULL;
    c->key = NULL;
    if (writable || !n_readonly(t, m, 1)) {
        c->copy = (char *)wcsdup(m);
        if (!c->copy) return id;
    }
    c->key = m;
    c->dom = dk;
    c->id = id;
    return id;
}

/* Name id of an event's attributes (or of a plain ASCII message). */
static uint32_t n_attr_name(nthr *t, const ndomain *d, const nvtxEventAttributes_t *a,
                            const char *plain)
{
    if (!a) return n_name(t, d, plain);
    if (a->messageType == NVTX_MESSAGE_TYPE_ASCII) return n_name(t, d, a->message.ascii);
    if (a->messageType == NVTX_MESSAGE_TYPE_UNICODE) return n_wname(t, d, a->message.unicode);
    if (a->messageType == NVTX_MESSAGE_TYPE_REGISTERED) {
        const nreg *r = (const nreg *)a->message.registered;
        if (!r || r->magic != NREG_MAGIC) return n_name(t, d, "<invalid registered string>");
        return r->dom == d ? r->id : n_name(t, d, r->s);
    }
    if (a->messageType == NVTX_MESSAGE_UNKNOWN) return n_name(t, d, ""); /* no message */
    return n_name(t, d, "<unsupported message type>");
}

/* Push and pop on one stack (depth, stack): the default domain's or a named
 * domain's. Push returns the new range's level in that stack, pop the level
 * it ended or -1 when the stack is empty. */
static inline int n_push_on(nthr *t, int *depth, nrange *stack, uint32_t name)
{
    int k = *depth;
    if (__builtin_expect(k < NVTX_DEPTH, 1)) {
        stack[k].name = name;
        stack[k].t = n_now();
    } else {
        atomic_fetch_add_explicit(&t->dropped, 1, memory_order_relaxed);
    }
    *depth = k + 1;
    return k;
}

static inline int n_pop_on(nthr *t, int *depth, nrange *stack, uint32_t track)
{
    if (*depth <= 0) return -1;
    uint64_t t1 = n_now();
    int k = --*depth;
    if (__builtin_expect(k < NVTX_DEPTH, 1)) n_emit(t, stack[k].t, t1, stack[k].name, track);
    return k;
}

/* The default domain's push and pop: n_push_on/n_pop_on on the thread's own
 * stack, written out (through the pointers the compiler kept one more
 * register and instruction on this hot path) */
static inline int n_push(nthr *t, uint32_t name)
{
    int k = t->depth;
    if (__builtin_expect(k < NVTX_DEPTH, 1)) {
        t->stack[k].name = name;
        t->stack[k].t = n_now();
    } else {
        atomic_fetch_add_explicit(&t->dropped, 1, memory_order_relaxed);
    }
    t->depth = k + 1;
    return k;
}

static inline int n_pop(nthr *t)
{
    if (t->depth <= 0) return -1;
    uint64_t t1 = n_now();
    int k = --t->depth;
    if (__builtin_expect(k < NVTX_DEPTH, 1))
        n_emit(t, t->stack[k].t, t1, t->stack[k].name, n_track(t));
    return k;
}

/* The calling thread's stack of domain d (NULL: the default domain's is
 * used by the callers); make: allocate it when missing. NULL when missing
 * (a pop: nothing open) or on no memory (a push: counted as dropped). */
static ndstk *n_dstack(nthr *t, const ndomain *d, int make)
{
    uint32_t i = d->idx;
    if (__builtin_expect(i < t->ndstk && t->dstk[i], 1)) return t->dstk[i];
    if (!make) return NULL;
    if (i >= t->ndstk) {
        size_t n = (size_t)i + 1 > 2 * (size_t)t->ndstk ? (size_t)i + 1 : 2 * (size_t)t->ndstk;
        ndstk **v = realloc(t->dstk, n * sizeof *v);
        if (!v) return NULL;
        memset(v + t->ndstk, 0, (n - t->ndstk) * sizeof *v);
        t->dstk = v;
        t->ndstk = (uint32_t)n;
    }
    t->dstk[i] = malloc(sizeof **t->dstk);
    if (t->dstk[i]) {
        t->dstk[i]->depth = 0;
        t->dstk[i]->track = UINT32_MAX;
    }
    return t->dstk[i];
}

/* The track of named domain d's push/pop ranges on thread t (stack k): a
 * track of its own beside the thread's (GP_STORE_TRACK_NVTX_DOMAIN), as
 * Nsight Systems draws a row per domain. Ranges of two domains may
 * overlap without nesting (each domain nests on its own); on one track
 * the nesting views clipped them. */
static uint32_t n_dtrack(nthr *t, ndstk *k, const ndomain *d)
{
    (void)t;
    if (__builtin_expect(k->track == UINT32_MAX, 0)) {
        pthread_mutex_lock(&S.mu);
        k->track = S.w ? gp_store_writer_track(S.w, GP_STORE_TRACK_NVTX_DOMAIN,
                                               (int64_t)syscall(SYS_gettid), (int32_t)d->idx,
                                               d->name ? d->name : "")
                       : 0;
        pthread_mutex_unlock(&S.mu);
    }
    return k->track;
}

typedef struct nstart { /* start/end ranges may end on another thread */
    uint64_t id;
    uint64_t t;
    uint32_t name, track; /* track: the starting thread's; NSTART_FORKED: see n_fork_child */
} nstart;
#define NSTART_FORKED UINT32_MAX
/* The open start/end ranges: a table by id (open addressing, linear
 * probing, id 0 = empty slot; cap a power of two, at most half full), so
 * that an end finds its start in O(1) whatever the order of the ends (a
 * scan of the open ranges made n ends in FIFO order cost O(n^2)). */
static struct {
    pthread_mutex_t mu;
    nstart *v;
    size_t n, cap;
    uint64_t next_id;
} R = {.mu = PTHREAD_MUTEX_INITIALIZER};

static size_t r_home(uint64_t id)
{
    return (size_t)(id * 0x9E3779B97F4A7C15ull >> 17) & (R.cap - 1);
}

static void r_place(nstart r)
{
    size_t i = r_home(r.id);
    while (R.v[i].id) i = (i + 1) & (R.cap - 1);
    R.v[i] = r;
}

/* Doubles the table (caller holds R.mu). 0, or -1 when out of memory. */
static int r_grow(void)
{
    size_t oc = R.cap, nc = oc ? oc * 2 : 64;
    nstart *ov = R.v, *nv = calloc(nc, sizeof *nv);
    if (!nv) return -1;
    R.v = nv;
    R.cap = nc;
    for (size_t i = 0; i < oc; i++)
        if (ov[i].id) r_place(ov[i]);
    free(ov);
    return 0;
}

static uint64_t start_range(nthr *t, uint32_t name)
{
    uint64_t now = n_now();
    uint32_t track = n_track(t);
    pthread_mutex_lock(&R.mu);
    if ((R.n + 1) * 2 > R.cap && r_grow()) {
        pthread_mutex_unlock(&R.mu);
        atomic_fetch_add_explicit(&t->dropped, 1, memory_order_relaxed);
        return 0;
    }
    uint64_t id = ++R.next_id;
    if (!id) id = ++R.next_id; /* 0 is "no range" (and the empty slot) */
    r_place((nstart){id, now, name, track});
    R.n++;
    pthread_mutex_unlock(&R.mu);
    return id;
}

static void end_range(nthr *t, uint64_t id)
{
    uint64_t t1 = n_now();
    pthread_mutex_lock(&R.mu);
    if (!id || !R.cap) {
        pthread_mutex_unlock(&R.mu);
        return;
    }
    size_t m = R.cap - 1, i = r_home(id);
    while (R.v[i].id && R.v[i].id != id) i = (i + 1) & m;
    if (!R.v[i].id) { /* not open: ended already, or never started */
        pthread_mutex_unlock(&R.mu);
        return;
    }
    nstart r = R.v[i];
    /* deletion by backward shift: a later entry of the probe run moves into
     * the hole unless its home lies cyclically in (hole, its slot] */
    for (size_t j = (i + 1) & m; R.v[j].id; j = (j + 1) & m) {
        size_t k = r_home(R.v[j].id);
        if (i <= j ? (i < k && k <= j) : (i < k || k <= j)) continue;
        R.v[i] = R.v[j];
        i = j;
    }
    R.v[i].id = 0;
    R.n--;
    pthread_mutex_unlock(&R.mu);
    /* on the starting thread's track; a range a thread of the parent
     * started before the fork, on the ending thread's */
    n_emit(t, r.t, t1, r.name, r.track == NSTART_FORKED ? n_track(t) : r.track);
}

/* ---- NVTX drain ---- */

static int dl_subs_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    *(unsigned long long *)arg = info->dlpi_subs;
    return 1;
}

/* Hands the events of t published up to `until` (raw time) to the writer
 * (caller holds N.mu). Returns 1 when t is dead and fully drained. */
static int n_drain_thread(nthr *t, uint64_t until, int all)
{
    int dead = atomic_load_explicit(&t->dead, memory_order_acquire);
    gp_store_ev batch[256];
    size_t nb = 0;
    int more = 1;
    while (more) {
        uint32_t n = atomic_load_explicit(&t->head->n, memory_order_acquire);
        while (t->head_pos < n) {
            const nev *e = &t->head->ev[t->head_pos];
            uint64_t at = e->t1 == NEV_MARK ? e->t0 : e->t1; /* when it was emitted */
            if (!all && N.use_tsc && at > until) {           /* after the last anchor: next time */
                more = 0;
                break;
            }
            gp_store_ev *o = &batch[nb];
            gp_store_ev_init(o, e->t1 == NEV_MARK ? GP_ST_INSTANT : GP_ST_SLICE);
            o->cat = S.cat_nvtx;
            o->name = e->name;
            o->track = e->track;
            o->ts = n_to_ns(e->t0);
            if (e->t1 != NEV_MARK) o->dur = n_to_ns(e->t1) - o->ts;
            t->head_pos++;
            if (++nb == sizeof batch / sizeof batch[0]) {
                gp_store_writer_put(S.w, batch, nb);
                nb = 0;
            }
        }
        if (!more || t->head_pos < NCHUNK_EVENTS) break;
        nchunk *nx = atomic_load_explicit(&t->head->next, memory_order_acquire);
        if (!nx) break;
        free(t->head);
        t->head = nx;
        t->head_pos = 0;
        atomic_fetch_sub_explicit(&t->nchunks, 1, memory_order_relaxed);
    }
    if (nb) gp_store_writer_put(S.w, batch, nb);
    uint64_t d = atomic_exchange_explicit(&t->dropped, 0, memory_order_relaxed);
    if (d) gp_store_writer_add_dropped(S.w, d);
    if (!dead || !more) return 0;
    return atomic_load_explicit(&t->head->n, memory_order_acquire) == t->head_pos &&
           !atomic_load_explicit(&t->head->next, memory_order_acquire);
}

static void n_free_thread(nthr *t)
{
    for (nchunk *c = t->head; c;) {
        nchunk *nx = atomic_load_explicit(&c->next, memory_order_relaxed);
        free(c);
        c = nx;
    }
    for (int i = 0; i < NCACHE; i++) free(t->cache[i].copy);
    for (uint32_t i = 0; i < t->ndstk; i++) free(t->dstk[i]);
    free(t->dstk);
    free(t);
}

/* One pass over every thread (caller holds N.mu). all: take everything,
 * also events stamped after the new anchor (at exit). */
static void n_drain_all(int all)
{
    if (!S.w) return;
    unsigned long long subs = 0;
    dl_iterate_phdr(dl_subs_cb, &subs);
    if (subs != N.dl_subs) {
        N.dl_subs = subs;
        atomic_fetch_add_explicit(&N.unload_gen, 1, memory_order_relaxed);
    }
    if (N.use_tsc) {
        /* a new anchor at most every 1 ms; the first rate over >= 10 ms
         * (>= 2 ms at exit: a process that short waits that long once) */
        int64_t age = gp_clock_mono_ns() - N.anc[N.nanc - 1].mono;
        int64_t need = N.nanc > 1 ? 1000000 : all ? 2000000 : 10000000;
        if (age < need && N.nanc == 1 && !all) return;
        if (age < need && N.nanc == 1) {
            struct timespec ts = {0, (long)(need - age)};
            while (nanosleep(&ts, &ts) && errno == EINTR) {
            }
        }
        if (age >= need || N.nanc == 1) n_anchor_add(n_anchor_now());
        if (N.nanc < 2) return; /* the clock did not move */
    }
    uint64_t until = N.use_tsc ? N.anc[N.nanc - 1].raw : UINT64_MAX;
    for (nthr **pp = &N.threads; *pp;) {
        nthr *t = *pp;
        if (n_drain_thread(t, until, all)) {
            *pp = t->next;
            n_free_thread(t);
        } else {
            pp = &t->next;
        }
    }
}

static void *n_drain_main(void *arg)
{
    (void)arg;
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    pthread_mutex_lock(&N.mu);
    while (!N.stop) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        int64_t at = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec + N.period_ns;
        ts.tv_sec = at / 1000000000;
        ts.tv_nsec = at % 1000000000;
        N.awake = 0;
        while (!N.stop && !N.awake && pthread_cond_timedwait(&N.cv, &N.mu, &ts) == 0) {
        }
        N.awake = 1;
        if (!N.stop) n_drain_all(0);
    }
    pthread_mutex_unlock(&N.mu);
    return NULL;
}

static void n_drain_wake(void)
{
    /* a recording thread never waits for a drain pass: when the lock is
     * taken, the drain is running (or being woken) already */
    if (pthread_mutex_trylock(&N.mu)) return;
    if (!N.awake) {
        N.awake = 1;
        pthread_cond_signal(&N.cv);
    }
    pthread_mutex_unlock(&N.mu);
}

/* Starts the drain thread (caller holds N.mu). */
static void n_drain_start(void)
{
    /* (re)initialised without destroy: in a forked child the old one may
     * still count the parent's waiting drain thread */
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    memset(&N.cv, 0, sizeof N.cv);
    pthread_cond_init(&N.cv, &ca);
    pthread_condattr_destroy(&ca);
    N.stop = 0;
    N.awake = 0;
    N.running = pthread_create(&N.thr, NULL, n_drain_main, NULL) == 0;
    if (!N.running)
        fprintf(stderr, "gpuprof nvtx injection: no drain thread; events kept to exit\n");
}

/* Stops the drain thread and hands over everything published (at exit). */
static void n_drain_stop(void)
{
    pthread_mutex_lock(&N.mu);
    int running = N.running;
    N.stop = 1;
    pthread_cond_signal(&N.cv);
    pthread_mutex_unlock(&N.mu);
    if (running) pthread_join(N.thr, NULL);
    pthread_mutex_lock(&N.mu);
    N.running = 0;
    n_drain_all(1);
    pthread_mutex_unlock(&N.mu);
}

static pthread_once_t n_once = PTHREAD_ONCE_INIT;

static void n_init_once(void)
{
#if defined(__x86_64__) || defined(__i386__)
    unsigned a, b, c, d; /* invariant TSC: CPUID.80000007H:EDX[8] */
    const char *clk = getenv("GPUPROF_CLOCK");
    N.use_tsc = __get_cpuid(0x80000007u, &a, &b, &c, &d) && (d & (1u << 8)) &&
                !(clk && !strcmp(clk, "monotonic"));
#endif
    if (pthread_key_create(&N.key, n_thread_exit)) return;
    const char *ms = getenv("GPUPROF_COMMIT_MS");
    int64_t commit = ms && atoi(ms) > 0 ? atoi(ms) : 100;
    N.period_ns = commit * 1000000 / 2; /* events reach the writer within half a commit */
    if (N.period_ns > 50000000) N.period_ns = 50000000;
    dl_iterate_phdr(dl_subs_cb, &N.dl_subs);
    pthread_mutex_lock(&N.mu);
    n_anchor_add(n_anchor_now());
    n_drain_start();
    pthread_mutex_unlock(&N.mu);
    n_started = 1;
}

/* fork: the child drops what the parent's threads published (the parent
 * writes it), keeps the forking thread's open ranges and starts its own
 * drain thread. */
static int n_fork_locked; /* n_fork_prepare took N.mu, R.mu and D.mu */
static void n_fork_prepare(void)
{
    /* the start/end table too: a thread of the parent may hold it at the fork */
    n_fork_locked = n_started; /* as seen here: NVTX may start during the fork */
    if (!n_fork_locked) return;
    pthread_mutex_lock(&N.mu);
    pthread_mutex_lock(&R.mu);
    pthread_mutex_lock(&D.mu);
}

static void n_fork_parent(void)
{
    if (!n_fork_locked) return;
    pthread_mutex_unlock(&D.mu);
    pthread_mutex_unlock(&R.mu);
    pthread_mutex_unlock(&N.mu);
}

static void n_fork_child(void)
{
    if (!n_fork_locked) return;
    nthr *self = tl_n;
    /* start/end ranges open at the fork can be ended in the child too; the
     * parent's thread tracks are not the child's: one started by the forking
     * thread goes on that thread's new track, any other on the track of the
     * thread that ends it */
    uint32_t old = self ? self->track : UINT32_MAX, now = UINT32_MAX;
    if (self) { /* the forking thread has a new tid in the child */
        self->track = UINT32_MAX;
        for (uint32_t i = 0; i < self->ndstk; i++)
            if (self->dstk[i]) self->dstk[i]->track = UINT32_MAX;
    }
    for (size_t i = 0; i < R.cap; i++)
        if (!R.v[i].id) {
            continue;
        } else if (old != UINT32_MAX && R.v[i].track == old) {
            if (now == UINT32_MAX) now = n_track(self);
            R.v[i].track = now;
        } else {
            R.v[i].track = NSTART_FORKED;
        }
    pthread_mutex_unlock(&D.mu);
    pthread_mutex_unlock(&R.mu);
    for (nthr *t = N.threads, *nx; t; t = nx) {
        nx = t->next;
        if (t == self) continue;
        n_free_thread(t);
    }
    N.threads = NULL;
    if (self) {
        while (self->head != self->cur) {
            nchunk *nx = atomic_load_explicit(&self->head->next, memory_order_relaxed);
            free(self->head);
            self->head = nx;
        }
        self->head_pos = self->pos;
        atomic_store_explicit(&self->nchunks, 1, memory_order_relaxed);
        atomic_store_explicit(&self->dropped, 0, memory_order_relaxed);
        self->next = NULL;
        N.threads = self;
    }
    pthread_mutex_unlock(&N.mu);
    pthread_mutex_lock(&N.mu);
    n_drain_start();
    pthread_mutex_unlock(&N.mu);
}

#define N_SELF_OR(fail)                                                                            \
    nthr *t = S.w ? n_self() : NULL;                                                               \
    if (!t) return fail

static void NVTX_API n_MarkEx(const nvtxEventAttributes_t *a)
{
    N_SELF_OR();
    uint32_t name = n_attr_name(t, NULL, a, NULL);
    n_emit(t, n_now(), NEV_MARK, name, n_track(t));
}
static void NVTX_API n_MarkA(const char *m)
{
    N_SELF_OR();
    uint32_t name = n_name(t, NULL, m);
    n_emit(t, n_now(), NEV_MARK, name, n_track(t));
}
static void NVTX_API n_MarkW(const wchar_t *m)
{
    N_SELF_OR();
    uint32_t name = n_wname(t, NULL, m);
    n_emit(t, n_now(), NEV_MARK, name, n_track(t));
}
static nvtxRangeId_t NVTX_API n_RangeStartEx(const nvtxEventAttributes_t *a)
{
    N_SELF_OR(0);
    return start_range(t, n_attr_name(t, NULL, a, NULL));
}
static nvtxRangeId_t NVTX_API n_RangeStartA(const char *m)
{
    N_SELF_OR(0);
    return start_range(t, n_name(t, NULL, m));
}
static nvtxRangeId_t NVTX_API n_RangeStartW(const wchar_t *m)
{
    N_SELF_OR(0);
    return start_range(t, n_wname(t, NULL, m));
}
static void NVTX_API n_RangeEnd(nvtxRangeId_t id)
{
    N_SELF_OR();
    end_range(t, id);
}
static int NVTX_API n_RangePushEx(const nvtxEventAttributes_t *a)
{
    N_SELF_OR(-1);
    return n_push(t, n_attr_name(t, NULL, a, NULL));
}
static int NVTX_API n_RangePushA(const char *m)
{
    N_SELF_OR(-1);
    return n_push(t, n_name(t, NULL, m));
}
static int NVTX_API n_RangePushW(const wchar_t *m)
{
    N_SELF_OR(-1);
    return n_push(t, n_wname(t, NULL, m));
}
static int NVTX_API n_RangePop(void)
{
    N_SELF_OR(-1);
    return n_pop(t);
}
static void NVTX_API n_NameOsThreadA(uint32_t tid, const char *name)
{
    if (S.w && name) n_thread_track(tid, name);
}
static void NVTX_API n_NameOsThreadW(uint32_t tid, const wchar_t *name)
{
    if (!S.w || !name) return;
    char *u = n_utf8(name);
    if (u) n_thread_track(tid, u);
    free(u);
}
static void NVTX_API n_DomainMarkEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
    N_SELF_OR();
    uint32_t name = n_attr_name(t, (const ndomain *)d, a, NULL);
    n_emit(t, n_now(), NEV_MARK, name, n_track(t));
}
static nvtxRangeId_t NVTX_API n_DomainRangeStartEx(nvtxDomainHandle_t d,
                                                   const nvtxEventAttributes_t *a)
{
    N_SELF_OR(0);
    return start_range(t, n_attr_name(t, (const ndomain *)d, a, NULL));
}
static void NVTX_API n_DomainRangeEnd(nvtxDomainHandle_t d, nvtxRangeId_t id)
{
    (void)d;
    N_SELF_OR();
    end_range(t, id);
}
/* Each domain has its own push/pop stack per thread (NVTX: "nesting is
 * maintained per thread per domain"); a NULL handle is the default domain. */
static int NVTX_API n_DomainRangePushEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
    N_SELF_OR(-1);
    const ndomain *dom = (const ndomain *)d;
    uint32_t name = n_attr_name(t, dom, a, NULL);
    if (!dom) return n_push(t, name);
    ndstk *k = n_dstack(t, dom, 1);
    if (!k) {
        atomic_fetch_add_explicit(&t->dropped, 1, memory_order_relaxed);
        return -1;
    }
    return n_push_on(t, &k->depth, k->stack, name);
}
static int NVTX_API n_DomainRangePop(nvtxDomainHandle_t d)
{
    N_SELF_OR(-1);
    const ndomain *dom = (const ndomain *)d;
    if (!dom) return n_pop(t);
    ndstk *k = n_dstack(t, dom, 0);
    return k ? n_pop_on(t, &k->depth, k->stack, n_dtrack(t, k, dom)) : -1;
}
/* The domain of name (owned: kept or freed; NULL: a NULL name, or out of
 * memory for a copy), created when new. Domains live until exit (NVTX
 * handles must stay valid). */
static nvtxDomainHandle_t n_domain(char *name)
{
    pthread_mutex_lock(&D.mu);
    ndomain *d = D.head;
    while (d && !(name ? d->name && !strcmp(d->name, name) : !d->name)) d = d->next;
    if (d) {
        free(name);
    } else if ((d = calloc(1, sizeof *d))) {
        d->name = name;
        d->idx = atomic_fetch_add_explicit(&n_domains, 1, memory_order_relaxed);
        d->next = D.head;
        D.head = d;
    } else {
        free(name);
    }
    pthread_mutex_unlock(&D.mu);
    return (nvtxDomainHandle_t)d;
}
static nvtxDomainHandle_t NVTX_API n_DomainCreateA(const char *name)
{
    return n_domain(name ? strdup(name) : NULL);
}
static nvtxDomainHandle_t NVTX_API n_DomainCreateW(const wchar_t *name)
{
    return n_domain(name ? n_utf8(name) : NULL);
}
static void NVTX_API n_DomainDestroy(nvtxDomainHandle_t d)
{
    (void)d; /* kept: events still in flight may name it */
}
/* Registers s (owned by the handle from now on; NULL: no memory). */
static nvtxStringHandle_t n_register(nvtxDomainHandle_t d, char *s)
{
    /* the handle carries the string's id: no lookup when it is used */
    nreg *r = S.w && s ? calloc(1, sizeof *r) : NULL;
    if (!r) {
        free(s);
        return NULL;
    }
    r->s = s;
    r->magic = NREG_MAGIC;
    r->dom = (const ndomain *)d;
    r->id = n_intern(r->dom, s);
    return (nvtxStringHandle_t)r;
}
static nvtxStringHandle_t NVTX_API n_DomainRegisterStringA(nvtxDomainHandle_t d, const char *s)
{
    return s ? n_register(d, strdup(s)) : NULL;
}
static nvtxStringHandle_t NVTX_API n_DomainRegisterStringW(nvtxDomainHandle_t d, const wchar_t *s)
{
    return s ? n_register(d, n_utf8(s)) : NULL;
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
    pthread_once(&n_once, n_init_once);
    if (!n_started) return 0;
    const NvtxExportTableCallbacks *cb = get ? get(NVTX_ETID_CALLBACKS) : NULL;
    if (!cb || !cb->GetModuleFunctionTable) return 0;
    NvtxFunctionTable t = NULL;
    unsigned n = 0;
    /* every module that initializes gets the same functions: idempotent */
    if (cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &t, &n)) {
        set(t, n, NVTX_CBID_CORE_MarkEx, (NvtxFunctionPointer)n_MarkEx);
        set(t, n, NVTX_CBID_CORE_MarkA, (NvtxFunctionPointer)n_MarkA);
        set(t, n, NVTX_CBID_CORE_MarkW, (NvtxFunctionPointer)n_MarkW);
        set(t, n, NVTX_CBID_CORE_RangeStartEx, (NvtxFunctionPointer)n_RangeStartEx);
        set(t, n, NVTX_CBID_CORE_RangeStartA, (NvtxFunctionPointer)n_RangeStartA);
        set(t, n, NVTX_CBID_CORE_RangeStartW, (NvtxFunctionPointer)n_RangeStartW);
        set(t, n, NVTX_CBID_CORE_RangeEnd, (NvtxFunctionPointer)n_RangeEnd);
        set(t, n, NVTX_CBID_CORE_RangePushEx, (NvtxFunctionPointer)n_RangePushEx);
        set(t, n, NVTX_CBID_CORE_RangePushA, (NvtxFunctionPointer)n_RangePushA);
        set(t, n, NVTX_CBID_CORE_RangePushW, (NvtxFunctionPointer)n_RangePushW);
        set(t, n, NVTX_CBID_CORE_RangePop, (NvtxFunctionPointer)n_RangePop);
        set(t, n, NVTX_CBID_CORE_NameOsThreadA, (NvtxFunctionPointer)n_NameOsThreadA);
        set(t, n, NVTX_CBID_CORE_NameOsThreadW, (NvtxFunctionPointer)n_NameOsThreadW);
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
        set(t, n, NVTX_CBID_CORE2_DomainCreateW, (NvtxFunctionPointer)n_DomainCreateW);
        set(t, n, NVTX_CBID_CORE2_DomainDestroy, (NvtxFunctionPointer)n_DomainDestroy);
        set(t, n, NVTX_CBID_CORE2_DomainRegisterStringA,
            (NvtxFunctionPointer)n_DomainRegisterStringA);
        set(t, n, NVTX_CBID_CORE2_DomainRegisterStringW,
            (NvtxFunctionPointer)n_DomainRegisterStringW);
    }
    return 1;
}
