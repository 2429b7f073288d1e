/* record/recorder.h: libgpuprof internals: the profiler object, per-thread
 * lock-free event buffers (chunked, registered once per thread) and the
 * drain that turns buffered events into the trace model. */
#ifndef GP_RECORD_RECORDER_H
#define GP_RECORD_RECORDER_H
#include "core/hash.h"
#include "core/vec.h"
#include "trace/trace.h"
#include <gpuprof/gpuprof.h>
#include <pthread.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>
#include "core/sketch.h"

/* Buffered event types. */
enum {
    GP_EV_BEGIN = 1, /* p = name */
    GP_EV_BEGIN_EX,  /* p = name, a = device | backend << 8, v = bytes */
    GP_EV_FUNC,      /* p = function address (-finstrument-functions) */
    GP_EV_END,
    GP_EV_ATTR_INT, /* p = key, v = value */
    GP_EV_ATTR_STR, /* p = key, v = interned value pointer */
    GP_EV_COUNTER,  /* p = name, v = double bits */
    GP_EV_OBSERVE,  /* p = name, v = double bits */
};

typedef struct gp_rev {
    uint64_t t;    /* raw timestamp (TSC ticks or monotonic ns) */
    const void *p; /* name, key or function address */
    uint64_t v;    /* value bits */
    uint32_t type;
    uint32_t a;
} gp_rev;

#define GP_CHUNK_EVENTS 2048
/* Chunks a thread may have allocated before new ranges roll over into the
 * inline aggregate (the drain thread recycles consumed chunks): 64 x 64 KiB. */
#define GP_MAX_CHUNKS 64
typedef struct gp_chunk {
    _Atomic(struct gp_chunk *) next; /* set by the writer once this chunk is full */
    _Atomic uint32_t n;              /* events published (release by the writer) */
    struct gp_chunk *free_next;      /* link in the recycled list */
    /* the events start on a cache line of their own (the chunk is allocated
     * 64-aligned): a 32-byte event never straddles two lines, a begin/end
     * pair fills one line, and the header the drain reads is not on it */
    gp_rev ev[GP_CHUNK_EVENTS] __attribute__((aligned(64)));
} gp_chunk;

/* An open level of a thread (owner-only). */
enum { GP_FR_EVENT = 0, GP_FR_INLINE = 1, GP_FR_SKIP = 2 };
/* The tracked-memory peak of one open gp_session (session.c), raised by
 * every tracker call (memtrack.c) while the session is in
 * gp_profiler.open_sessions: sessions may nest, each has its own. */
typedef struct gp_sess_peak {
    int64_t peak;
    struct gp_sess_peak *next;
} gp_sess_peak;

typedef struct gp_frame {
    const void *name; /* name or function address */
    uint64_t t0;      /* raw begin timestamp (inline frames) */
    int64_t child_ns; /* time of inline-aggregated children (ns) */
    int64_t bytes;
    uint32_t dev; /* device | backend << 8 */
    uint8_t mode; /* GP_FR_* */
    uint8_t type; /* GP_EV_BEGIN, GP_EV_BEGIN_EX or GP_EV_FUNC */
} gp_frame;

/* Per-name statistics of ranges aggregated without events. Written only by
 * the owning thread (relaxed atomics, so that results calls may read them
 * while it records); the sketch is allocated when the entry is created. */
#define GP_AGG_PEND 32
typedef struct gp_agg {
    const void *key; /* name or function address */
    uint32_t dev;
    uint8_t type;
    _Atomic uint64_t count;
    _Atomic int64_t total_ns, self_ns, min_ns, max_ns, bytes;
    _Atomic uint64_t sq_lo, sq_hi;    /* sum of squared durations (128 bits) */
    _Atomic uint64_t first_t, last_t; /* raw time of the first begin, last end */
    _Atomic uint64_t *bk; /* GP_SKETCH_BUCKETS counts (set before the entry is published) */
    /* durations not yet counted in bk: the sketch is updated GP_AGG_PEND at
     * a time (an increment of a bucket chosen by the duration just measured,
     * once per range, stalls the recording thread on the memory dependence;
     * bench/sustained.sh); readers add these to bk */
    _Atomic uint32_t npend;
    _Atomic int64_t pend[GP_AGG_PEND];
} gp_agg;
/* gp_tbuf.agg_cache: GP_AGG_SETS sets of 2 entries, the set chosen by a
 * hash of the name pointer (gp_rec_agg_set) */
#define GP_AGG_SETS 4
static inline unsigned gp_rec_agg_set(const void *key)
{
    return (unsigned)((uint64_t)(uintptr_t)key * 0x9E3779B97F4A7C15ull >> 62) & (GP_AGG_SETS - 1);
}
#define GP_AGG_BLOCK  64
#define GP_AGG_BLOCKS 1024 /* at most 65,536 distinct names per thread */

/* A range being assembled by the drain. */
typedef struct gp_open {
    int64_t ts, child_ns, bytes;
    uint32_t name;
    uint8_t device, backend;
    size_t attr_first;   /* index into the profiler's pending attrs */
    uint32_t last_child; /* slice index of the last child slice ended, UINT32_MAX none */
} gp_open;

/* A range attribute: is_str 0: ival; GP_ATTR_STR: sval, a string id of the
 * trace; GP_ATTR_OWNED: a string value, malloc'd by the recording thread
 * and owned by this record (its pointer in ival), freed with
 * gp_rec_attrs_release once the range is written (file stream) or its
 * slice discarded (reset, destroy), so that distinct values cost no memory
 * for good. */
enum { GP_ATTR_STR = 1, GP_ATTR_OWNED = 2 };
typedef struct gp_attr {
    uint32_t key;
    uint8_t is_str;
    int64_t ival;
    uint32_t sval;
} gp_attr;

/* Per-thread buffer. Writer fields are touched only by the owning thread;
 * reader fields only by the drain (under the profiler's lock). */
typedef struct gp_tbuf {
    /* writer side */
    gp_chunk *cur;
    uint32_t pos;
    /* open levels (recorded begins + begins counted while off) not yet ended;
     * written only by the owner (relaxed), read by gp_disable's scan */
    atomic_int depth;
    uint32_t fcap;    /* size of fr */
    gp_frame *fr;     /* open levels */
    gp_chunk *spare;  /* recycled chunks taken from `freed` */
    uint32_t nchunks; /* chunks allocated by this thread */
    uint32_t woke;    /* drain woken for a full backlog, no chunk back yet */
    /* an end found the backlog full and took a chunk beyond GP_MAX_CHUNKS
     * (an end is never lost): until a chunk comes back, new begins roll over
     * inline, so that the extra chunk holds only ends (else each filled it
     * with begins whose ends took one more: growth without bound); begins
     * look at `freed` themselves (they call no chunk_next while the extra
     * chunk has room) */
    uint32_t over;
    /* the default sink's keep budget (keep_more): this thread records events
     * while emitted < keep_lim; keep_dry once neither its own cap nor the
     * profiler's pool gives more (reset clears both) */
    _Atomic uint32_t keep_dry;
    _Atomic uint64_t keep_lim;
    _Atomic uint64_t emitted; /* ranges recorded as events (reset clears it) */
    _Atomic uint64_t dropped; /* events lost (keep cap, no memory, full backlog) */
    _Atomic uint64_t rolled;  /* ranges aggregated inline */
    /* inline aggregates: entries in fixed blocks (never move), published by nagg */
    gp_agg *agg_blk[GP_AGG_BLOCKS];
    _Atomic uint32_t nagg;
    uint32_t agg_cap;  /* size of agg_idx (power of two) */
    uint32_t *agg_idx; /* open addressing: entry index + 1, 0 = empty */
    /* entries last used, 2 per set of names (most recent first): nested
     * ranges of a few names each find theirs without the index */
    gp_agg *agg_cache[GP_AGG_SETS][2];
    char pad_[64];
    _Atomic(gp_chunk *) freed; /* consumed chunks pushed back by the drain */
    /* a line of its own: the owner reads `freed` on every begin while its
     * backlog is full, and the drain writes the reader side below per event */
    char pad2_[64 - sizeof(void *)];
    /* reader side */
    struct gp_tbuf *next_all;
    gp_chunk *head; /* NULL only in p->retired */
    uint32_t head_pos;
    /* the thread's track in p->tr, made when first needed (gp_rec_thread_track:
     * a thread whose ranges were all aggregated and that exited before any
     * results call never has one); GP_NO_INDEX until made */
    uint32_t track;
    int dead;    /* the thread exited (its key destructor ran); under p->mu */
    int64_t tid; /* thread serial (unique per thread of the process; 0: p->retired) */
    int64_t os_pid, os_tid;
    char tname[16]; /* pthread_getname_np at the buffer's creation */
    GP_VEC(gp_open) stack;
    GP_VEC(gp_attr) pattrs; /* attrs of open ranges, by gp_open.attr_first */
} gp_tbuf;

/* Extra facts per slice, parallel to trace->slices. */
typedef struct gp_slice_ext {
    int64_t self_ns;
    int64_t bytes; /* -1 when none (a kernel timing: the bytes of a transfer) */
    uint32_t attr_first, nattr;
    uint8_t device, backend;
} gp_slice_ext;

/* Timer and tracker calls made while ranges kept as events were open on the
 * calling thread (per-entry metrics, entry.c): the thread's track + 1, the
 * host time of the first call, and the sum of the calls' metrics. Calls made
 * under the same set of open kept ranges (gp_entry_ctx.sig) share one item,
 * so the items are bounded by the kept ranges, not by the calls. */
typedef struct gp_eitem {
    uint32_t thr;
    int64_t ts;
    gp_entry_sum d;
} gp_eitem;

/* Per-entry metrics of the ranges of one (thread, name, device, kind) that
 * are aggregated inline, added when a slow-path call (timer, tracker) is made
 * inside them (entry.c). */
typedef struct gp_inl_metric {
    const struct gp_tbuf *b;
    const void *key;
    uint32_t dev;
    uint8_t type;
    gp_entry_sum em;
} gp_inl_metric;

/* Where a timer or tracker call made by the calling thread counts (entry.c):
 * its thread track + 1 (0: none), the host time of the call, and the inline
 * metric entries (p->inl indices, owned) of its open inline-aggregated
 * ranges. */
typedef struct gp_entry_ctx {
    uint32_t thr;
    int64_t host_ns;
    uint32_t n;
    uint32_t *ix;
    int in_event; /* a range kept as an event is open on the thread: the call
                     is noted for gp_rec_entry_metrics (else nothing holds it) */
    uint64_t sig; /* the set of kept ranges open (their depths and begin times) */
    /* the calling thread's buffer (NULL: none): for use during the call only
     * (a pending timing outlives it; the thread may exit) */
    struct gp_tbuf *b;
} gp_entry_ctx;

/* Samples of one counter series (p->tr->series), all of them, whether
 * still in p->tr->counters or not (streamed, beyond samples_max). */
typedef struct gp_series_stat {
    uint64_t n;
    int64_t last_ts;
    double last;
} gp_series_stat;

typedef struct gp_obs {
    uint32_t name;
    GP_VEC(double) v;
} gp_obs;

typedef struct gp_membuf {
    char *name, *dtype;
    int64_t *shape;
    int ndim;
    int64_t bytes;
    const void *ptr;
    int64_t ts;
} gp_membuf;

struct gp_profiler {
    /* GP_STATE_* (gpuprof.h), read by the header's inline wrappers through
     * gp_profiler_head_; GP_STATE_OFF_ only while no thread has an open level
     * (see gp_disable in recorder.c) */
    atomic_int state;
    uint64_t id; /* unique per profiler (guards the thread-local cache) */
    int use_tsc;
    uint64_t tsc0;
    int64_t mono0, wall0;
    double ns_per_tick;
    /* sink (gp_options.sink, resolved), keep cap per thread (0 = none): read
     * by every begin, so here with the other fields fixed at create, not
     * after `mu` in the lines the drain thread writes (a begin missing on
     * a line the drain just wrote cost ~100 ns per recorded range) */
    int sink;
    uint64_t keep_max;
    /* GP_SINK_AUTO: ranges kept as events in all threads together (0: no
     * total); threads take it from keep_pool in grants (keep_more) */
    uint64_t keep_total;
    /* a store stream: range attributes have no place in the store (its
     * slices table holds none), so they are not recorded at all */
    int no_attrs;
    gp_options opts;
    char name[64];

    pthread_mutex_t mu; /* everything below */
    int off_sticky;     /* turned off without membarrier: stay GP_STATE_OFF_OPEN_ */
    gp_tbuf *threads;
    /* the drain's cache of name pointer -> string id (str_id): a hit is
     * checked against the text, so a buffer reused with other text is
     * interned again */
    struct {
        const char *s, *text; /* the name's pointer; its interned copy (stable) */
        uint32_t id, len;
    } name_cache[256];
    /* the folded inline aggregates and counts of exited threads (retired by
     * the drain once it has read their events): a buffer with no chunk and no
     * owner, on the "exited threads" track, last in `threads` once made */
    gp_tbuf *retired;
    uint64_t retired_threads;  /* threads retired so far */
    int any_dead;              /* some buffer was marked dead (p->retired is then made) */
    _Atomic int64_t keep_pool; /* GP_SINK_AUTO: ranges of keep_total not yet granted */
    gp_trace *tr;
    GP_VEC(gp_slice_ext) ext;
    GP_VEC(gp_attr) attrs;
    GP_VEC(gp_obs) obs;
    gp_u64map obs_of;    /* name id -> obs index */
    gp_u64map series_of; /* name id -> series index */
    gp_u64map func_name; /* function address -> name id */
    gp_strtab *interned; /* gp_intern storage */
    uint16_t cat_range, cat_cuda, cat_cl;
    uint16_t cat_warmup; /* gpuprof_warmup: gp_measure's warm-up timings (kind other) */
    uint32_t proc_track; /* counters' track */
    uint64_t unmatched_end;
    /* background drain thread */
    pthread_t drain_thr;
    pthread_cond_t drain_cv;
    atomic_int drain_state; /* 0 not started, 1 running, 2 stopping */
    uint64_t drained;       /* events drained so far */
    pid_t drain_pid;
    pid_t pid; /* getpid() (a system call): set at create and in a forked child */
    struct gp_stream *stream;
    /* (typedef for stream.c) */ /* GP_SINK_STREAM output (stream.c) */
    uint64_t streamed_ranges;    /* ranges written by the stream and dropped from tr */
    /* of them, ranges the stream could not write (a failed write of the
     * file, events the store's writer dropped): counted as dropped */
    uint64_t stream_lost;
    /* streamed_ranges and stream_lost at the last gp_profiler_reset: the
     * results (gp_record_stats_get) count from there, the output holds all */
    uint64_t streamed_base, lost_base;
    /* counter samples and [memory] events kept in memory, each: the first
     * samples_max (GP_SINK_AUTO, GP_SINK_AGGREGATE; 0 = no cap), later ones
     * counted in values_dropped; the stream sink writes them out as it
     * drains. sstat: per series, every sample (gp_counter_last). */
    uint64_t samples_max, values_dropped;
    GP_VEC(gp_series_stat) sstat;
    struct gp_profiler *next_live; /* registry of live profilers (fork handlers) */
    GP_VEC(char *) sessions;       /* results of ended sessions, JSON (export "sessions") */
    int64_t kernel_ns_total;       /* sum of kernel durations resolved so far (warm-up excluded) */
    uint64_t kernel_count;
    /* kernel timings (ktimer.c, gp_rec_kernel_timing): kslices of them are
     * slices in tr (the timeline); past samples_max (default and aggregate
     * sinks) they are folded into kagg, per (name, GPU track, backend), so a
     * long run stays bounded and gp_kernel_stats and the rollover stay
     * exact; the stream sink writes every timing out as it comes and folds
     * it into kagg as "streamed" (kept out of its own file's rollover) */
    uint64_t kslices;
    GP_VEC(gp_agg_row) kagg;
    gp_u64map kagg_of;      /* kagg key (ktimer.c) -> index in kagg */
    uint64_t kwarm_dropped; /* gp_measure warm-up timings past the cap (not on the timeline) */
    /* times the results were cleared (gp_profiler_reset, a forked child's
     * stream): a gp_session begun before then counts from the clearing */
    uint64_t clears;

    /* per-entry metrics (entry.c) */
    GP_VEC(gp_eitem) eitems;
    gp_u64map eitem_of; /* hash of (thread, sig) -> index in eitems */
    GP_VEC(gp_inl_metric) inl;
    gp_u64map inl_of;          /* hash of (thread, key, dev, type) -> index in inl */
    GP_VEC(uint32_t) inl_free; /* slots of inl freed by exited threads (b NULL) */
    size_t inl_dead;           /* keys of inl_of left by freed slots (entry.c) */

    /* memory tracker */
    GP_VEC(gp_membuf) mem;
    gp_u64map mem_of; /* address -> index in mem */
    size_t mem_dead;  /* addresses untracked in mem_of (UINT64_MAX): rebuilt when many */
    int64_t mem_cur, mem_peak, mem_window_peak;
    gp_sess_peak *open_sessions; /* the memory peaks of the open sessions */
    uint32_t mem_series;
    void *cl_device;

    /* kernel timer back-ends (owned by cuda_timer.c / cl_timer.c) */
    void *cuda;
    void *cl;
    char err[256];
};

/* the public header's inline wrappers read the state at offset 0 as an int */
_Static_assert(offsetof(struct gp_profiler, state) == offsetof(gp_profiler_head_, state),
               "state must be first");
_Static_assert(sizeof(atomic_int) == sizeof(int), "atomic_int must be an int");

/* Current raw timestamp for p (TSC ticks or monotonic ns). */
static inline uint64_t gp_rec_now(const gp_profiler *p)
{
#if defined(__x86_64__) || defined(__i386__)
    if (p->use_tsc) return __builtin_ia32_rdtsc();
#endif
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Converts a raw timestamp of p to ns since p's start. */
static inline int64_t gp_rec_ns(const gp_profiler *p, uint64_t t)
{
    if (p->use_tsc) return (int64_t)((double)(int64_t)(t - p->tsc0) * p->ns_per_tick);
    return (int64_t)t - p->mono0;
}

/* Host ns since p's start, now. */
int64_t gp_rec_host_ns(const gp_profiler *p);

/* Ranges kept as events per thread by default (GP_SINK_AUTO); beyond it
 * they are aggregated inline. In all threads together GP_SINK_AUTO keeps at
 * most GP_KEEP_TOTAL_MUL x keep_max, handed out GP_KEEP_GRANT at a time. */
#define GP_KEEP_DEFAULT   131072
#define GP_KEEP_TOTAL_MUL 2
#define GP_KEEP_GRANT     4096

/* Drains every thread buffer into p->tr (caller holds p->mu); with a stream
 * sink the new slices are written out and dropped. 0 or GP_ENOMEM. */
int gp_rec_drain(gp_profiler *p);
/* Rebuilds p->tr->aggs from the threads' inline aggregates and, when
 * with_streamed, the statistics of ranges the stream sink wrote (caller
 * holds p->mu). 0 or GP_ENOMEM. */
int gp_rec_collect_aggs(gp_profiler *p, int with_streamed);
/* Appends the statistics of the ranges already streamed to p->tr->aggs
 * (caller holds p->mu). 0 or GP_ENOMEM. */
int gp_stream_stats_(gp_profiler *p);
/* The track of b's thread in p->tr, made on first use (caller holds p->mu);
 * GP_NO_INDEX when out of memory. */
uint32_t gp_rec_thread_track(gp_profiler *p, gp_tbuf *b);
/* Sum over threads of ranges dropped (which = 0) or aggregated inline
 * (which = 1) (caller holds p->mu). */
uint64_t gp_rec_count(gp_profiler *p, int which);
/* The background drain thread: started with the first thread buffer (caller
 * holds p->mu), woken when a thread runs short of chunks, stopped at
 * destroy (caller does not hold p->mu). */
void gp_rec_drain_start(gp_profiler *p);
void gp_rec_drain_wake(gp_profiler *p);
void gp_rec_drain_stop(gp_profiler *p);
/* Stream sink (stream.c): opens path for p (at create), writes the slices
 * and counters drained so far and drops them from p->tr (caller holds
 * p->mu), and finishes the file at destroy (caller holds p->mu). */
int gp_stream_open_(gp_profiler *p, const char *path);
int gp_stream_flush_(gp_profiler *p);
/* After gp_stream_flush_: with a store stream, waits until its writer has
 * committed (or, on a store that cannot be written, dropped) what is
 * queued, and counts what it dropped (caller holds p->mu), so that the
 * kept and dropped counts are final for what was recorded so far. A file
 * stream's writes are done by gp_stream_flush_ itself. */
void gp_stream_settle_(gp_profiler *p);
/* At gp_profiler_reset (caller holds p->mu, the buffers drained): the
 * stream writes what is left in p->tr (timings just resolved); what its
 * output still has to write of the ranges recorded so far (their inline
 * aggregates, the dropped count) is carried to its end, and the
 * statistics of the streamed ranges, which are results, start again. */
void gp_stream_reset_(gp_profiler *p);
/* gp_stream_close_ returns 0, or GP_EIO when the stream could not be
 * written whole (the reason in p->err, the ranges lost in p->stream_lost). */
int gp_stream_close_(gp_profiler *p);
/* Zeroes b's inline aggregates (entries stay, so the owner's pointers hold). */
void gp_rec_aggs_zero(gp_tbuf *b);
/* Fork handlers of a store stream's writer (phase 0 prepare, 1 parent,
 * 2 child; caller holds p->mu). */
void gp_stream_fork_(gp_profiler *p, int phase);
/* Frees p's thread buffers (caller guarantees no thread records). */
void gp_rec_free_threads(gp_profiler *p);

/* Appends a finished slice with its ext record (caller holds p->mu).
 * Returns the slice index or -1 on out of memory. */
/* Non-zero on a thread while gp_measure runs its warm-up calls: kernel
 * timers started then are kept on the timeline under category
 * gpuprof_warmup (not a kernel: its own summary rows), flagged
 * GP_SLICE_WARMUP, and left out of gp_kernel_stats, the kernel rows and
 * the kernel totals (as the warm-up is left out of the measured ranges). */
extern _Thread_local int gp_rec_warmup;

long gp_rec_add_slice(gp_profiler *p, uint32_t track, uint16_t cat, uint32_t name, int64_t ts,
                      int64_t dur, const gp_slice_ext *ext);
/* Returns (creating) the GPU track named `label` for key (stream/queue). */
uint32_t gp_rec_gpu_track(gp_profiler *p, uint64_t key, const char *label);
/* Appends a counter sample of series `name` (caller holds p->mu). */
/* force: kept even beyond samples_max (the tracker's new peaks) */
int gp_rec_counter_sample(gp_profiler *p, uint32_t name, int64_t ts, double v, int force);
typedef struct gp_stream gp_stream;
/* Chrome-trace writers of export.c, shared with the stream sink (caller
 * holds p->mu): the file header up to "traceEvents", ns as microseconds
 * with three decimals, metadata events, one slice, the counters, and the
 * "rollover" key with p->tr->aggs. */
struct gp_sbuf;
void gp_exp_header(gp_profiler *p, struct gp_sbuf *b);
void gp_exp_us(struct gp_sbuf *b, int64_t ns);
void gp_exp_meta(gp_profiler *p, struct gp_sbuf *b, int first);
/* One slice as ",\n{...}", in two parts: the head (up to "tid", the same
 * for every slice of one category, name and track: the stream sink caches
 * it) and the rest. */
void gp_exp_slice_head(gp_profiler *p, struct gp_sbuf *b, size_t i);
void gp_exp_slice_rest(gp_profiler *p, struct gp_sbuf *b, size_t i);
/* counter samples / [memory] events of index from to to (exclusive) */
void gp_exp_counters(gp_profiler *p, struct gp_sbuf *b, size_t from, size_t to);
void gp_exp_mem_events(gp_profiler *p, struct gp_sbuf *b, size_t from, size_t to);
void gp_exp_rollover(gp_profiler *p, struct gp_sbuf *b);
/* The text of a string attribute (is_str != 0). */
static inline const char *gp_attr_text(const gp_profiler *p, const gp_attr *a)
{
    return a->is_str == GP_ATTR_OWNED ? (const char *)(uintptr_t)a->ival
                                      : gp_trace_s(p->tr, a->sval);
}
/* Frees the owned values of attributes v[from, to). */
void gp_rec_attrs_release(gp_attr *v, size_t from, size_t to);
/* Sets p->err (caller holds p->mu or owns p). */
void gp_rec_seterr(gp_profiler *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Per-entry metrics (entry.c; docs/api.md "Per-entry metrics").
 * gp_rec_entry_ctx fills *c for a call of the calling thread (caller does
 * not hold p->mu); 0 or GP_ENOMEM (c then counts nowhere). */
int gp_rec_entry_ctx(gp_profiler *p, gp_entry_ctx *c);
void gp_rec_entry_ctx_free(gp_entry_ctx *c);
/* Notes a kernel timing of device duration dur closed by the call of c
 * (caller holds p->mu; not for warm-up timings) for the kept ranges open at
 * the call, and adds it to c's inline entries. */
void gp_rec_entry_timing_done(gp_profiler *p, const gp_entry_ctx *c, int64_t dur, int64_t bytes);
/* The metrics of one timing of device duration dur (bytes >= 0: a transfer). */
gp_entry_sum gp_rec_entry_timing(int64_t dur, int64_t bytes);
/* Adds d to the inline entries of c (caller holds p->mu). */
void gp_rec_entry_inline_add(gp_profiler *p, const gp_entry_ctx *c, const gp_entry_sum *d);
/* Records a tracker call of c (caller holds p->mu): bytes > 0 tracked, < 0
 * untracked, total = tracked total after it. */
void gp_rec_entry_memop(gp_profiler *p, const gp_entry_ctx *c, int64_t bytes, int64_t total);
/* The inline sums of (b, key, dev, type) (caller holds p->mu). */
gp_entry_sum gp_rec_entry_inline_of(gp_profiler *p, const struct gp_tbuf *b, const void *key,
                                    uint32_t dev, uint8_t type);
/* Rebuilds p->tr->entry_metrics from the kernel timings and tracker calls
 * made inside the kept ranges (caller holds p->mu). 0 or GP_ENOMEM. */
int gp_rec_entry_metrics(gp_profiler *p);
/* Moves the inline metric entries of the exited thread b to r (p->retired,
 * caller holds p->mu). */
void gp_rec_entry_retire(gp_profiler *p, const struct gp_tbuf *b, const struct gp_tbuf *r);
/* Moves the p->inl indices of a pending timing's context: to[i] for i < n. */
void gp_rec_entry_ctx_remap(gp_entry_ctx *c, const uint32_t *to, size_t n);
/* Clears the per-entry records (reset) / frees them (destroy). */
void gp_rec_entry_reset(gp_profiler *p);
void gp_rec_entry_free(gp_profiler *p);
/* The calling thread's buffer in p, NULL when it has none (no lock taken
 * when cached). */
struct gp_tbuf *gp_rec_tbuf_find(gp_profiler *p);

/* A resolved kernel timing of a back-end (caller holds p->mu): a slice on
 * track while fewer than samples_max are kept (no cap in the keep and
 * stream sinks), else folded into p->kagg; warm-up timings are slices of
 * category gpuprof_warmup flagged GP_SLICE_WARMUP, and past the cap only
 * counted (kwarm_dropped). The
 * stream sink writes its timings out every GP_KSTREAM_BLOCK. 0, or -1 when
 * out of memory (the timing is lost). */
int gp_rec_kernel_timing(gp_profiler *p, uint32_t track, uint16_t cat, uint32_t name, int64_t ts,
                         int64_t dur, const gp_slice_ext *x, int warmup);
#define GP_KSTREAM_BLOCK 4096
/* Folds one duration into an aggregate row (Welford's update of m2, the
 * sketch, min, max, first and last); init makes r a fresh row of name and
 * cat. 0, or GP_ENOMEM (the sketch). */
int gp_rec_agg_init(gp_agg_row *r, uint32_t name, uint16_t cat, uint32_t track, int64_t ts,
                    const gp_slice_ext *x);
void gp_rec_agg_add(gp_agg_row *r, int64_t ts, int64_t dur, const gp_slice_ext *x);
/* The order of aggregate rows by what makes one (name, category, thread,
 * device, backend): 0 for rows of the same key (qsort's comparator). */
int gp_rec_agg_cmp(const void *a, const void *b);
/* Adds the statistics of b into a, a row of the same key: count, times,
 * bytes, min, max, first and last, m2 by Chan et al.'s combination, the
 * per-entry sums, the sketch buckets (when both have one). */
void gp_rec_agg_merge(gp_agg_row *a, const gp_agg_row *b);
/* Appends copies of rows[0, n) (their sketches too) to p->tr->aggs (caller
 * holds p->mu). 0 or GP_ENOMEM. */
int gp_rec_aggs_append(gp_profiler *p, const gp_agg_row *rows, size_t n);
/* Appends p->kagg to p->tr->aggs (caller holds p->mu); the stream sink's
 * only when with_streamed (its output holds those timings). 0 or GP_ENOMEM. */
int gp_rec_kagg_collect(gp_profiler *p, int with_streamed);
/* Clears / frees p->kagg. */
void gp_rec_kagg_clear(gp_profiler *p);
void gp_rec_kagg_free(gp_profiler *p);
/* Folds kernel slice i (a timing the stream sink writes out) into p->kagg
 * as streamed (caller holds p->mu). 0 or GP_ENOMEM. */
int gp_rec_kagg_stream(gp_profiler *p, size_t i);

/* Kernel timer back-ends: resolve pending timings (wait: block until done);
 * return the number still pending. Free at destroy. */
int gp_cuda_resolve_(gp_profiler *p, int wait);
void gp_cuda_fini_(gp_profiler *p);
/* gp_rec_entry_ctx_remap on every pending timing (entry.c's retire). */
void gp_cuda_entry_remap_(gp_profiler *p, const uint32_t *to, size_t n);
void gp_cl_entry_remap_(gp_profiler *p, const uint32_t *to, size_t n);
int gp_cuda_meminfo_(gp_profiler *p, int64_t *free_b, int64_t *total_b);
int gp_cl_resolve_(gp_profiler *p, int wait);
void gp_cl_fini_(gp_profiler *p);
int gp_cl_global_mem_(gp_profiler *p, int64_t *total_b);

#endif
