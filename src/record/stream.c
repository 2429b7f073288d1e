/* record/stream.c: the stream sink (GP_SINK_STREAM). The drain writes the
 * ranges it has turned into slices out and drops them from memory, folding
 * each into per-name statistics (so results stay exact); kernel timings
 * (into p->kagg), counter samples and [memory] events go out the same way;
 * metadata and the ranges aggregated inline are written when the profiler
 * is destroyed. Two outputs: a Chrome trace file, or the SQLite run
 * store of `gpuprof run` (a stream_path naming a store: docs/api.md "Sinks"),
 * written through the store's writer thread (store/store.c), which commits
 * at least every 100 ms, so a crash keeps what was drained. */
#include "core/clock.h"
#include "core/redact.h"
#include "core/sbuf.h"
#include "core/sketch.h"
#include "record/recorder.h"
#include "store/store.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct gp_stream {
    FILE *f;
    char *path;
    int err;  /* errno of the first failed write (later output is skipped) */
    int said; /* the store's writer dropped events: said in p->err */
    uint64_t lost_ranges_seen, lost_values_seen; /* the writer's drops counted so far */
    int lazy;                /* a forked child's file: created at its first output */
    gp_u64map row_of;        /* name id -> index in rows */
    GP_VEC(gp_agg_row) rows; /* statistics of the streamed ranges */
    /* the rollover rows and dropped count of the ranges recorded before a
     * gp_profiler_reset, written at the end with the later ones (the
     * output holds every range; a reset restarts the results only) */
    GP_VEC(gp_agg_row) carried;
    uint64_t carried_dropped;
    /* store output (w != NULL) */
    gp_store_writer *w;
    int64_t run;
    pid_t owner;                 /* the process that began the run (ends it) */
    GP_VEC(uint32_t) trk;        /* trace track -> store track id + 1 (0: not yet) */
    gp_u64map str_of;            /* trace string id -> store string id */
    uint32_t last_name, last_id; /* cache of the last name looked up */
    GP_VEC(gp_store_ev) evs;     /* events handed to the writer in blocks */
    /* file output: slice heads of the ranges by (name, track) (gp_exp_slice_head) */
    gp_u64map head_of; /* name << 32 | track -> offset << 16 | length in heads */
    GP_VEC(char) heads;
};

/* Events handed to the store writer per call, the most it queues
 * (backpressure beyond: the drain waits, the recording threads never do;
 * 2 x 16 Ki events of 136 B = 4.25 MiB in the writer) and its page cache. */
#define STORE_BLOCK    4096
#define STORE_QUEUE    16384
#define STORE_CACHE_KB 8192

/* 1 when path names a run store: an existing SQLite file, or a path ending
 * in .db, .sqlite or .sqlite3. */
static int is_store_path(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f) {
        char magic[16] = {0};
        size_t n = fread(magic, 1, sizeof magic, f);
        fclose(f);
        if (n == sizeof magic && !memcmp(magic, "SQLite format 3", 16)) return 1;
    }
    /* a store suffix on a file that is not SQLite: the store fails to open
     * (one message), the file is not overwritten as a trace */
    size_t n = strlen(path);
    static const char *const ext[] = {".db", ".sqlite", ".sqlite3"};
    for (size_t i = 0; i < sizeof ext / sizeof ext[0]; i++) {
        size_t k = strlen(ext[i]);
        if (n > k && !strcmp(path + n - k, ext[i])) return 1;
    }
    return 0;
}

/* This process's command line, redacted (core/redact.h), or NULL. */
static char *self_command(void)
{
    FILE *f = fopen("/proc/self/cmdline", "rb");
    if (!f) return NULL;
    char buf[8192];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *argv[256];
    int argc = 0;
    for (size_t i = 0; i < n && argc < 255; i += strlen(buf + i) + 1) argv[argc++] = buf + i;
    argv[argc] = NULL;
    return argc ? gp_redact_argv(argv, argc) : NULL;
}

static int store_open_(gp_profiler *p, gp_stream *st);

/* Begins the run and starts the writer; in the program's thread, so its
 * writes must not end the program (gp_xfsz_block). */
static int store_open(gp_profiler *p, gp_stream *st)
{
    gp_xfsz_guard g; /* the program's thread */
    gp_xfsz_block(&g);
    int rc = store_open_(p, st);
    gp_xfsz_unblock(&g);
    return rc;
}

static int store_open_(gp_profiler *p, gp_stream *st)
{
    gp_err err = {0};
    gp_store *db;
    if (gp_store_open(st->path, &db, &err)) {
        gp_rec_seterr(p, "stream sink: %s", err.msg);
        return GP_EIO;
    }
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    char *cmd = self_command();
    gp_store_run_info ri = {cmd ? cmd : p->name, host, p->wall0, p->mono0, getpid()};
    st->run = gp_store_run_begin(db, &ri, &err);
    free(cmd);
    gp_store_close(db); /* the writer has its own connection; the end opens one again */
    if (st->run < 0) {
        gp_rec_seterr(p, "stream sink: %s", err.msg);
        return GP_EIO;
    }
    gp_store_writer_opts wo = {0};
    wo.source = "libgpuprof";
    wo.max_pending = STORE_QUEUE;
    st->w = gp_store_writer_start(st->path, st->run, &wo, &err);
    if (!st->w) {
        gp_store_run_release_reserve(st->path, st->run); /* no run to end: not held */
        gp_rec_seterr(p, "stream sink: %s", err.msg);
        return GP_EIO;
    }
    gp_store_writer_set_bounded(st->w, STORE_CACHE_KB);
    st->owner = getpid();
    gp_store_writer_device(st->w, "libgpuprof", p->name);
    return 0;
}

/* The store's id of trace string id. */
static uint32_t store_str(gp_profiler *p, gp_stream *st, uint32_t id)
{
    if (id == st->last_name && st->last_id != UINT32_MAX) return st->last_id;
    uint64_t *slot = gp_u64map_slot(&st->str_of, id, UINT64_MAX);
    uint32_t out;
    if (slot && *slot != UINT64_MAX) {
        out = (uint32_t)*slot;
    } else {
        out = gp_store_writer_str(st->w, gp_trace_s(p->tr, id));
        if (slot) *slot = out;
    }
    st->last_name = id;
    st->last_id = out;
    return out;
}

/* The store's id of trace track k (sent once; again at the end, for names
 * given later). */
static uint32_t store_track(gp_profiler *p, gp_stream *st, uint32_t k, int resend)
{
    while (st->trk.n <= k)
        if (GP_VEC_PUSH(st->trk, 0)) return 0;
    if (!st->trk.v[k] || resend) {
        const gp_track *t = &p->tr->tracks.v[k];
        int gpu = t->type == GP_TRACK_GPU;
        st->trk.v[k] =
            1 + gp_store_writer_track(st->w, gpu ? GP_STORE_TRACK_QUEUE : GP_STORE_TRACK_THREAD,
                                      gpu ? t->stream : t->tid, gpu ? t->device : GP_NONE,
                                      t->name ? gp_trace_s(p->tr, t->name) : NULL);
    }
    return st->trk.v[k] - 1;
}

static void store_put(gp_stream *st, const gp_store_ev *ev)
{
    if (GP_VEC_PUSH(st->evs, *ev) || st->evs.n >= STORE_BLOCK) {
        gp_store_writer_put(st->w, st->evs.v, st->evs.n);
        st->evs.n = 0;
    }
}

static void store_put_end(gp_stream *st)
{
    if (st->evs.n) gp_store_writer_put(st->w, st->evs.v, st->evs.n);
    st->evs.n = 0;
}

/* Slice i as a store event (ranges: slices table; kernel timings: kernels). */
static void store_slice(gp_profiler *p, gp_stream *st, size_t i)
{
    const gp_slice *s = &p->tr->slices.v[i];
    gp_store_ev ev;
    int kernel = s->cat == p->cat_cuda || s->cat == p->cat_cl;
    gp_store_ev_init(&ev, kernel ? GP_ST_KERNEL : GP_ST_SLICE);
    ev.name = store_str(p, st, s->name);
    ev.cat = store_str(p, st, p->tr->cats.v[s->cat].name);
    ev.track = store_track(p, st, s->track, 0);
    ev.ts = p->mono0 + s->ts;
    ev.dur = s->dur;
    if (!kernel && p->tr->inline_children.n)
        ev.inline_child_ns = gp_trace_inline_child_ns(p->tr, i);
    if (kernel) {
        const gp_track *t = &p->tr->tracks.v[s->track];
        ev.device = t->device;
        ev.stream = t->stream;
    }
    store_put(st, &ev);
}

/* Hands the counter samples and the tracker's [memory] events in p->tr to
 * the writer (the caller then drops them from p->tr). */
static void store_samples(gp_profiler *p, gp_stream *st)
{
    const gp_trace *t = p->tr;
    for (size_t i = 0; i < t->counters.n; i++) {
        const gp_counter_sample *c = &t->counters.v[i];
        gp_store_ev ev;
        gp_store_ev_init(&ev, GP_ST_COUNTER);
        ev.name = store_str(p, st, t->series.v[c->series].name);
        ev.track = store_track(p, st, t->series.v[c->series].track, 0);
        ev.ts = p->mono0 + c->ts;
        ev.value = c->value;
        store_put(st, &ev);
    }
    for (size_t i = 0; i < t->mem_events.n; i++) {
        const gp_mem_event *m = &t->mem_events.v[i];
        gp_store_ev ev;
        gp_store_ev_init(&ev, GP_ST_MEM);
        ev.track = store_track(p, st, m->track, 0); /* the calling thread's */
        ev.ts = p->mono0 + m->ts;
        ev.addr = (int64_t)m->addr;
        ev.bytes = m->bytes;
        store_put(st, &ev);
    }
}

/* Writes b whole to the file's descriptor (no stdio: a copy less). 0, or
 * -1 with the bytes written before the failure in *done. */
static int write_all(int fd, const char *s, size_t n, size_t *done)
{
    *done = 0;
    while (n) {
        ssize_t k = write(fd, s, n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return -1;
        s += k;
        n -= (size_t)k;
        *done += (size_t)k;
    }
    return 0;
}

/* Events of b (file_slice, gp_exp_counters, gp_exp_mem_events output: each
 * ",\n{...}") written whole in its first k bytes: each ends with a '}'
 * followed by the next one's ",\n" or by the end of b (a name's newline is
 * escaped, so ",\n" only separates). */
static uint64_t slices_whole(const gp_sbuf *b, size_t k)
{
    uint64_t n = 0;
    for (size_t q = 0; q < k; q++)
        if (b->s[q] == '}' &&
            (q + 1 == b->n || (q + 2 < b->n && b->s[q + 1] == ',' && b->s[q + 2] == '\n')))
            n++;
    return n;
}

static int child_open(gp_profiler *p);

/* Writes b, which holds `events` events (file_slice, gp_exp_counters or
 * gp_exp_mem_events output) and nothing else (0: any other output). The
 * events of a failed write that did not reach the file whole, and those of
 * every later call, are added to *lost. */
static void put_events(gp_profiler *p, gp_sbuf *b, uint64_t events, uint64_t *lost)
{
    gp_stream *st = p->stream;
    if (st->lazy && (!b->n || child_open(p))) { /* nothing yet, or no file */
        *lost += events;
        gp_sbuf_reset(b);
        return;
    }
    errno = 0;
    size_t done = 0;
    gp_xfsz_guard g; /* results calls drain in the program's threads */
    gp_xfsz_block(&g);
    int failed = !st->err && write_all(fileno(st->f), b->s, b->n, &done) != 0;
    int e = errno;
    gp_xfsz_unblock(&g);
    if (st->err) {
        *lost += events;
    } else if (failed) {
        st->err = e ? e : EIO;
        *lost += events - (events ? slices_whole(b, done) : 0);
        gp_rec_seterr(p, "%s: %s (stream sink: later events are counted as dropped)", st->path,
                      strerror(st->err));
    }
    gp_sbuf_reset(b);
}

static void put(gp_profiler *p, gp_sbuf *b)
{
    uint64_t none = 0;
    put_events(p, b, 0, &none);
}

/* put_events of b holding n ranges (file_slice). */
static void put_ranges(gp_profiler *p, gp_sbuf *b, uint64_t n)
{
    put_events(p, b, n, &p->stream_lost);
}

/* Writes a stream file's head: the header, the opening of the event array
 * and the process/thread metadata (of the process writing it). */
static void put_head(gp_profiler *p)
{
    gp_sbuf b = {0};
    gp_exp_header(p, &b);
    gp_sbuf_puts(&b, "\"traceEvents\":[\n");
    gp_exp_meta(p, &b, 1);
    put(p, &b);
    gp_sbuf_free(&b);
}

int gp_stream_open_(gp_profiler *p, const char *path)
{
    if (!path || !*path) {
        gp_rec_seterr(p, "stream sink: no stream_path");
        return GP_EINVAL;
    }
    gp_stream *st = calloc(1, sizeof *st);
    if (!st) return GP_ENOMEM;
    st->path = strdup(path);
    st->last_id = UINT32_MAX;
    if (st->path && is_store_path(path)) {
        p->stream = st;
        if (store_open(p, st) == 0) {
            p->no_attrs = 1; /* set before any thread records (create) */
            return 0;
        }
        p->stream = NULL;
        gp_store_writer_stop(st->w);
        free(st->path);
        free(st);
        return GP_EIO;
    }
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    st->f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!st->path || !st->f) {
        gp_rec_seterr(p, "stream sink: %s: %s", path, st->path ? strerror(errno) : "out of memory");
        if (fd >= 0 && !st->f) close(fd);
        free(st->path);
        free(st);
        return GP_EIO;
    }
    p->stream = st;
    put_head(p);
    return 0;
}

/* Folds slice i (a range) into the streamed statistics. 0 or GP_ENOMEM. */
static int fold(gp_profiler *p, size_t i)
{
    gp_stream *st = p->stream;
    const gp_slice *s = &p->tr->slices.v[i];
    const gp_slice_ext *x = &p->ext.v[i];
    uint64_t *slot = gp_u64map_slot(&st->row_of, s->name, UINT64_MAX);
    if (!slot) return GP_ENOMEM;
    if (*slot == UINT64_MAX) {
        gp_agg_row r;
        if (gp_rec_agg_init(&r, s->name, s->cat, GP_NO_INDEX, s->ts, x) ||
            GP_VEC_PUSH(st->rows, r)) {
            free(r.sketch);
            return GP_ENOMEM;
        }
        *slot = st->rows.n - 1;
    }
    gp_rec_agg_add(&st->rows.v[*slot], s->ts, s->dur, x);
    return 0;
}

/* Appends slice i (gp_exp_slice_head and _rest), its head from the cache. */
static void file_slice(gp_profiler *p, gp_stream *st, gp_sbuf *b, size_t i)
{
    const gp_slice *s = &p->tr->slices.v[i];
    uint64_t key = (uint64_t)s->name << 32 | s->track;
    uint64_t *slot = gp_u64map_slot(&st->head_of, key, UINT64_MAX);
    if (slot && *slot == UINT64_MAX) {
        size_t at = b->n;
        gp_exp_slice_head(p, b, i);
        size_t len = b->n - at, off = st->heads.n;
        if (len < 0xffff && off < ((uint64_t)1 << 40) && !GP_VEC_RESERVE(st->heads, len)) {
            memcpy(st->heads.v + off, b->s + at, len);
            st->heads.n += len;
            *slot = (uint64_t)off << 16 | len;
        }
    } else if (slot) {
        gp_sbuf_add(b, st->heads.v + (*slot >> 16), (size_t)(*slot & 0xffff));
    } else {
        gp_exp_slice_head(p, b, i);
    }
    gp_exp_slice_rest(p, b, i);
}

/* What the store's writer dropped (a store that cannot be written: disk
 * full, file size limit; said once in p->err), counted by kind as the file sink counts its
 * failed writes: ranges are lost (p->stream_lost: dropped, not kept),
 * kernel timings, counter samples and [memory] events are values not
 * written (p->values_dropped). Each drop is counted once (the writer's
 * counts only grow); returns the writer's dropped events in all. */
static uint64_t writer_losses(gp_profiler *p, gp_stream *st)
{
    uint64_t r = gp_store_writer_dropped_in(st->w, GP_ST_SLICE);
    uint64_t v = gp_store_writer_dropped_in(st->w, GP_ST_KERNEL) +
                 gp_store_writer_dropped_in(st->w, GP_ST_COUNTER) +
                 gp_store_writer_dropped_in(st->w, GP_ST_MEM);
    if (r > st->lost_ranges_seen) p->stream_lost += r - st->lost_ranges_seen;
    if (v > st->lost_values_seen) p->values_dropped += v - st->lost_values_seen;
    st->lost_ranges_seen = r;
    st->lost_values_seen = v;
    uint64_t lost = gp_store_writer_dropped(st->w);
    if (lost && !st->said) {
        st->said = 1;
        gp_rec_seterr(p,
                      "%s: the run store cannot be written (stream sink: its writer "
                      "dropped %llu events; later ones are counted as dropped)",
                      st->path, (unsigned long long)lost);
    }
    return lost;
}

int gp_stream_flush_(gp_profiler *p)
{
    gp_stream *st = p->stream;
    gp_trace *t = p->tr;
    gp_sbuf b = {0};
    uint64_t nb = 0; /* ranges and kernel timings in b */
    int rc = 0;
    /* every slice is a range or a kernel timing (gp_rec_kernel_timing): all
     * written out and dropped */
    for (size_t i = 0; i < t->slices.n; i++) {
        if (t->slices.v[i].cat != p->cat_range) {
            /* a kernel timing: its statistics kept (gp_kernel_stats) */
            if (gp_rec_kagg_stream(p, i)) rc = GP_ENOMEM;
        } else {
            if (fold(p, i)) rc = GP_ENOMEM;
            p->streamed_ranges++;
        }
        if (st->w) {
            store_slice(p, st, i);
        } else if (!st->err) {
            file_slice(p, st, &b, i); /* its head cache holds kernel heads too */
            nb++;
        } else if (t->slices.v[i].cat == p->cat_range) {
            p->stream_lost++; /* a range lost: dropped, not kept */
        } else {
            p->values_dropped++; /* a timing not written (its statistics stay) */
        }
        if (b.n >= (1u << 20)) {
            put_ranges(p, &b, nb);
            nb = 0;
        }
    }
    /* counter samples and the tracker's [memory] events go out as they come
     * too (a long run that tracks buffers or samples counters stays
     * bounded; gp_counter_last reads p->sstat) */
    if (st->w) {
        store_samples(p, st);
    } else if (t->counters.n || t->mem_events.n) {
        put_ranges(p, &b, nb);
        nb = 0;
        /* in blocks of 4,096 (the buffer stays small), counter samples
         * [0, nc) then [memory] events [nc, all) */
        size_t nc = t->counters.n, all = nc + t->mem_events.n;
        for (size_t i = 0; i < all; i += 4096) {
            size_t to = all - i > 4096 ? i + 4096 : all;
            if (!st->err) {
                gp_exp_counters(p, &b, i, to); /* clamps to nc */
                if (to > nc) gp_exp_mem_events(p, &b, i > nc ? i - nc : 0, to - nc);
            }
            put_events(p, &b, to - i, &p->values_dropped);
        }
    }
    t->counters.n = 0;
    t->mem_events.n = 0;
    if (st->w) {
        store_put_end(st);
        writer_losses(p, st); /* what it dropped so far */
    } else {
        put_ranges(p, &b, nb);
    }
    gp_sbuf_free(&b);
    t->slices.n = p->ext.n = 0;
    p->kslices = 0;
    t->inline_children.n = 0;                        /* they name ranges, all written above */
    gp_rec_attrs_release(p->attrs.v, 0, p->attrs.n); /* the ranges' owned values */
    p->attrs.n = 0;
    return st->err ? GP_EIO : rc;
}

void gp_stream_settle_(gp_profiler *p)
{
    gp_stream *st = p->stream;
    if (!st || !st->w) return;
    gp_store_writer_flush(st->w);
    writer_losses(p, st);
}

void gp_stream_reset_(gp_profiler *p)
{
    gp_stream *st = p->stream;
    if (!st) return;
    gp_stream_flush_(p); /* the timings just resolved: written */
    /* the inline aggregates (ranges never written as events) are the
     * output's rollover rows: kept, merged per key so that a program that
     * resets often stays bounded */
    if (gp_rec_collect_aggs(p, 0) == 0) {
        const gp_trace *t = p->tr;
        for (size_t i = 0; i < t->aggs.n; i++) {
            const gp_agg_row *r = &t->aggs.v[i];
            gp_agg_row *c = NULL;
            for (size_t k = 0; k < st->carried.n && !c; k++)
                if (!gp_rec_agg_cmp(&st->carried.v[k], r)) c = &st->carried.v[k];
            if (!c) {
                gp_agg_row z = *r;
                z.count = 0;
                z.total_ns = z.self_ns = 0;
                z.bytes = -1;
                memset(&z.em, 0, sizeof z.em);
                z.sketch = calloc(GP_SKETCH_BUCKETS, sizeof *z.sketch);
                if (!z.sketch || GP_VEC_PUSH(st->carried, z)) {
                    free(z.sketch);
                    st->carried_dropped += r->count; /* out of memory: counted */
                    continue;
                }
                c = &st->carried.v[st->carried.n - 1];
            }
            gp_rec_agg_merge(c, r);
        }
    }
    st->carried_dropped += gp_rec_count(p, 0);
    /* the streamed ranges' statistics are results: they start again */
    for (size_t i = 0; i < st->rows.n; i++) free(st->rows.v[i].sketch);
    st->rows.n = 0;
    gp_u64map_free(&st->row_of);
    memset(&st->row_of, 0, sizeof st->row_of);
    p->streamed_base = p->streamed_ranges;
    p->lost_base = p->stream_lost;
}

/* Appends the carried rollover rows to p->tr->aggs (after a
 * gp_rec_collect_aggs(p, 0) of the end). 0 or GP_ENOMEM. */
static int carried_append(gp_profiler *p, gp_stream *st)
{
    return gp_rec_aggs_append(p, st->carried.v, st->carried.n);
}

static void carried_free(gp_stream *st)
{
    for (size_t i = 0; i < st->carried.n; i++) free(st->carried.v[i].sketch);
    GP_VEC_FREE(st->carried);
    st->carried_dropped = 0;
}

int gp_stream_stats_(gp_profiler *p)
{
    gp_stream *st = p->stream;
    return st ? gp_rec_aggs_append(p, st->rows.v, st->rows.n) : 0;
}

/* The end of a store stream: the last counter samples and tracked memory,
 * the ranges aggregated inline (range_stats), the writer's last commit and the
 * run's end (by the process that began it; a forked child's processes row
 * ends with its writer). */
static int store_close_(gp_profiler *p, gp_stream *st);

/* The end of a store stream in the program's thread (destroy, exit): its
 * writes must not end the program (gp_xfsz_block). */
static int store_close(gp_profiler *p, gp_stream *st)
{
    gp_xfsz_guard g;
    gp_xfsz_block(&g);
    int rc = store_close_(p, st);
    gp_xfsz_unblock(&g);
    return rc;
}

static int store_close_(gp_profiler *p, gp_stream *st)
{
    gp_trace *t = p->tr; /* no slice left: gp_stream_close_'s flush wrote them */
    store_samples(p, st);
    store_put_end(st);
    for (uint32_t k = 0; k < st->trk.n; k++)
        if (st->trk.v[k]) store_track(p, st, k, 1); /* thread names given later */
    gp_rec_collect_aggs(p, 0);
    carried_append(p, st); /* on out of memory, counted below as the others */
    size_t na = t->aggs.n;
    gp_store_stat *sv = na ? calloc(na, sizeof *sv) : NULL;
    for (size_t i = 0; sv && i < na; i++) {
        const gp_agg_row *r = &t->aggs.v[i];
        gp_store_stat *o = &sv[i];
        o->name = store_str(p, st, r->name);
        o->cat = store_str(p, st, t->cats.v[r->cat].name);
        o->track = r->track != GP_NO_INDEX ? store_track(p, st, r->track, 0) : 0;
        o->device = r->device;
        o->backend = r->backend;
        o->count = r->count;
        o->total_ns = r->total_ns;
        o->self_ns = r->self_ns;
        o->min_ns = r->min_ns;
        o->max_ns = r->max_ns;
        o->bytes = r->bytes;
        o->m2 = r->m2;
        o->first_ns = p->mono0 + r->first_ns;
        o->last_ns = p->mono0 + r->last_ns;
        o->sketch = r->sketch;
        o->name_text = gp_trace_s(t, r->name);
        o->cat_text = gp_trace_s(t, t->cats.v[r->cat].name);
    }
    int64_t proc = gp_store_writer_proc(st->w);
    /* committed first, so that the count holds what the last commit lost;
     * the values among them are in gp_rec_count(p, 0) from here */
    gp_store_writer_flush(st->w);
    uint64_t dropped = writer_losses(p, st) - st->lost_values_seen + st->carried_dropped;
    dropped += gp_rec_count(p, 0) + (na && !sv ? gp_rec_count(p, 1) : 0);
    int rc = gp_store_writer_stop(st->w); /* commits everything queued, strings included */
    st->w = NULL;
    /* the run's last writes (statistics, its end) get the disk space its
     * reserve held, should the events have filled the disk */
    if (getpid() == st->owner) gp_store_run_release_reserve(st->path, st->run);
    gp_err err = {0};
    gp_store *db = NULL;
    if (gp_store_open(st->path, &db, &err) == 0) {
        if (sv && gp_store_range_stats(db, proc, sv, na, &err)) {
            dropped += gp_rec_count(p, 1);
            p->stream_lost += gp_rec_count(p, 1);
            if (!rc) rc = GP_EIO;
        }
        if (getpid() == st->owner &&
            gp_store_run_end(db, st->run, 0, gp_clock_mono_ns() - p->mono0, (int64_t)dropped,
                             &err) &&
            !rc)
            rc = GP_EIO;
        gp_store_close(db);
    } else {
        if (sv) p->stream_lost += gp_rec_count(p, 1); /* their range_stats */
        if (!rc) rc = GP_EIO;
    }
    if (rc) gp_rec_seterr(p, "stream sink: %s", err.msg[0] ? err.msg : "cannot write the store");
    free(sv);
    GP_VEC_FREE(st->trk);
    GP_VEC_FREE(st->evs);
    gp_u64map_free(&st->str_of);
    return rc;
}

/* The path of a forked child's own stream file: PATH with ".<pid>" before
 * a ".json" suffix, else after it (malloc'd; NULL when out of memory). */
static char *child_path(const char *path, pid_t pid)
{
    size_t n = strlen(path), k = n > 5 && !strcmp(path + n - 5, ".json") ? n - 5 : n;
    size_t cap = n + 32;
    char *r = malloc(cap);
    if (r) snprintf(r, cap, "%.*s.%ld%s", (int)k, path, (long)pid, path + k);
    return r;
}

/* Across fork: the parent drains what was recorded before the fork (and a
 * store's writer commits it and stops for the fork); the child starts from
 * nothing: what the parent recorded (streamed statistics, inline
 * aggregates, kernel timings, counters, memory events in the trace) is the
 * parent's to write, so the child's copy is cleared and its output and
 * results hold what it recorded after the fork. A store stream's child
 * writes into the same run under its own processes row; a file stream's
 * child never writes the parent's file (one JSON text cannot have two
 * writers): it streams into its own file, child_path, opened here. */
void gp_stream_fork_(gp_profiler *p, int phase)
{
    gp_stream *st = p->stream;
    if (!st) return;
    if (phase == 0) {
        gp_rec_drain(p); /* a file stream's drain writes the file too */
        if (st->w) gp_store_writer_fork_prepare(st->w);
        return;
    }
    if (phase == 1) {
        if (st->w) gp_store_writer_fork_parent(st->w);
        return;
    }
    if (st->w) {
        gp_store_writer_fork_child(st->w); /* its counts start from 0 */
        st->lost_ranges_seen = st->lost_values_seen = 0;
    } else {
        /* the parent's descriptor: closed here (nothing buffered: put
         * writes the descriptor directly); the child's own file is
         * created at its first output (a child that records nothing
         * leaves no file) */
        if (st->f) fclose(st->f);
        st->f = NULL;
        st->lazy = !st->err;
        gp_u64map_free(&st->head_of);
        memset(&st->head_of, 0, sizeof st->head_of);
        st->heads.n = 0;
    }
    for (size_t i = 0; i < st->rows.n; i++) free(st->rows.v[i].sketch);
    st->rows.n = 0;
    carried_free(st); /* the parent's to write */
    gp_u64map_free(&st->row_of);
    memset(&st->row_of, 0, sizeof st->row_of);
    for (gp_tbuf *b = p->threads; b; b = b->next_all) gp_rec_aggs_zero(b);
    p->tr->slices.n = p->ext.n = 0;
    p->tr->inline_children.n = 0;
    p->tr->counters.n = 0;
    p->tr->mem_events.n = 0;
    p->streamed_ranges = p->streamed_base = 0;
    p->stream_lost = p->lost_base = 0;
    p->values_dropped = 0;
    p->sstat.n = 0;
    p->kernel_ns_total = 0;
    p->kernel_count = 0;
    p->kslices = 0;
    gp_rec_kagg_clear(p);
    p->clears++;
    gp_rec_entry_reset(p); /* per-entry records name the cleared slices */
}

/* Creates a forked child's own stream file (child_path) and writes its
 * head. 0, or -1 (st->err set: nothing of the child is written). */
static int child_open(gp_profiler *p)
{
    gp_stream *st = p->stream;
    st->lazy = 0;
    char *cp = child_path(st->path, getpid());
    int fd = cp ? open(cp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600) : -1;
    st->f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!st->f) {
        st->err = cp ? (errno ? errno : EIO) : ENOMEM;
        gp_rec_seterr(p, "%s: %s (stream sink of a forked child: nothing of the child is written)",
                      cp ? cp : st->path, strerror(st->err));
        if (fd >= 0) close(fd);
        free(cp);
        return -1;
    }
    free(st->path);
    st->path = cp;
    put_head(p);
    return st->err ? -1 : 0;
}

int gp_stream_close_(gp_profiler *p)
{
    gp_stream *st = p->stream;
    if (!st) return 0;
    /* timings resolved first, so that the flush writes and counts them */
    gp_cuda_resolve_(p, 0);
    gp_cl_resolve_(p, 0);
    gp_stream_flush_(p);
    int rc = 0;
    if (st->w) {
        rc = store_close(p, st);
        goto done;
    }
    if (st->lazy) { /* a forked child that has written nothing yet */
        const gp_trace *t = p->tr;
        gp_rec_collect_aggs(p, 0);
        if (!t->slices.n && !t->counters.n && !t->mem_events.n && !t->aggs.n &&
            !p->streamed_ranges && !gp_rec_count(p, 0))
            goto done; /* and recorded nothing: no file */
    }
    gp_sbuf b = {0};
    gp_exp_meta(p, &b, 0); /* the slices: all written by the flush above */
    gp_exp_counters(p, &b, 0, p->tr->counters.n);
    gp_exp_mem_events(p, &b, 0, p->tr->mem_events.n);
    /* the file's rollover holds only what is not in its events, those of
     * before a reset included */
    gp_rec_collect_aggs(p, 0);
    carried_append(p, st);
    gp_sbuf_printf(&b,
                   "\n],\n\"gpuprof\":{\"schema\":\"gpuprof-lib-1\",\"streamed_ranges\":%llu,"
                   "\"dropped\":%llu,",
                   (unsigned long long)p->streamed_ranges,
                   (unsigned long long)(gp_rec_count(p, 0) + st->carried_dropped));
    gp_exp_rollover(p, &b);
    gp_sbuf_puts(&b, "}}\n");
    put(p, &b);
    gp_sbuf_free(&b);
    if (st->f && fclose(st->f) != 0 && !st->err) {
        st->err = errno;
        gp_rec_seterr(p, "%s: %s", st->path, strerror(errno));
    }
    if (st->err) rc = GP_EIO;
done:
    if (p->stream_lost) rc = GP_EIO;
    gp_u64map_free(&st->head_of);
    GP_VEC_FREE(st->heads);
    for (size_t i = 0; i < st->rows.n; i++) free(st->rows.v[i].sketch);
    GP_VEC_FREE(st->rows);
    carried_free(st);
    gp_u64map_free(&st->row_of);
    free(st->path);
    free(st);
    p->stream = NULL;
    gp_rec_collect_aggs(p, 1);
    return rc;
}
