/* render/perfetto.c: the .pftrace writer (see perfetto.h). Protobuf wire
 * format: a field is a varint key (number << 3 | wire type) then a varint
 * (type 0), 8 little-endian bytes (type 1) or a varint length and the bytes
 * (type 2). Field numbers below are perfetto_trace.proto's.
 *
 * Speed (bench/export_perfetto.sh): the nesting and the flow binding run on
 * two threads; the events are then encoded in units (a range of one
 * track's nested slices, of instants, of counter samples, of one memory
 * device's points) by up to 4 threads and written in unit order by the
 * calling thread. Every event name and category is interned up front, so a
 * unit's bytes depend on nothing but its range: the file is the same
 * whatever the number of threads or their timing. */
#include "render/perfetto.h"
#include "analysis/calltree.h"
#include "analysis/memory.h"
#include "core/hash.h"
#include "core/sbuf.h"
#include "core/vec.h"
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* TracePacket */
enum {
    F_TRACE_PACKET = 1,
    P_CLOCK_SNAPSHOT = 6,
    P_TIMESTAMP = 8,
    P_SEQ_ID = 10,
    P_TRACK_EVENT = 11,
    P_INTERNED = 12,
    P_SEQ_FLAGS = 13,
    P_TRACK_DESCRIPTOR = 60,
};
/* TrackEvent */
enum {
    TE_CATEGORY_IIDS = 3,
    TE_DEBUG = 4,
    TE_TYPE = 9,
    TE_NAME_IID = 10,
    TE_TRACK_UUID = 11,
    TE_NAME = 23,
    TE_DOUBLE_COUNTER = 44,
    TE_FLOW_IDS = 47,
    TE_TERM_FLOW_IDS = 48,
};
enum { TYPE_SLICE_BEGIN = 1, TYPE_SLICE_END = 2, TYPE_INSTANT = 3, TYPE_COUNTER = 4 };
enum { SEQ_CLEARED = 1, SEQ_NEEDS = 2 };
enum { SEQ = 1 }; /* our one trusted_packet_sequence_id */
enum { PF_CLOCK_REALTIME = 1, PF_CLOCK_BOOTTIME = 6 };
/* debug annotation names, interned once in the first packet */
enum { DA_CORRELATION = 1, DA_EXTERNAL_ID, DA_DEVICE, DA_STREAM, DA_BYTES, DA_DUR_NS, DA__N };
static const char *const da_names[DA__N] = {"",       "correlation", "External id", "device",
                                            "stream", "bytes",       "dur_ns"};

/* track uuids: tracks k+1; processes, GPUs and counters in their own ranges */
#define UUID_TRACK(k)  ((uint64_t)(k) + 1)
#define UUID_PROC(p)   ((1ull << 40) | (uint64_t)(p))
#define UUID_GPU(d)    ((2ull << 40) | (uint64_t)(uint32_t)(d))
#define UUID_SERIES(s) ((3ull << 40) | (uint64_t)(s))
#define UUID_MEM(d, r) ((4ull << 40) | ((uint64_t)(d) << 1) | (uint64_t)(r))

static inline void pb_varint(gp_sbuf *b, uint64_t v)
{
    /* in place when there is room (the common case: no call per field) */
    if (b->n + 11 <= b->cap) {
        if (v < 0x80) { /* tags and small values: one byte */
            b->s[b->n++] = (char)v;
            return;
        }
        char *d = b->s + b->n;
        while (v >= 0x80) {
            *d++ = (char)((v & 0x7f) | 0x80);
            v >>= 7;
        }
        *d++ = (char)v;
        b->n = (size_t)(d - b->s);
        return;
    }
    char tmp[10];
    size_t n = 0;
    while (v >= 0x80) {
        tmp[n++] = (char)((v & 0x7f) | 0x80);
        v >>= 7;
    }
    tmp[n++] = (char)v;
    gp_sbuf_add(b, tmp, n);
}

static void pb_u64(gp_sbuf *b, uint32_t field, uint64_t v)
{
    pb_varint(b, (uint64_t)field << 3);
    pb_varint(b, v);
}

static void pb_i64(gp_sbuf *b, uint32_t field, int64_t v)
{
    pb_u64(b, field, (uint64_t)v); /* int32/int64: two's complement varint */
}

static void pb_fixed64(gp_sbuf *b, uint32_t field, uint64_t v)
{
    pb_varint(b, (uint64_t)field << 3 | 1);
    char tmp[8];
    for (int i = 0; i < 8; i++) tmp[i] = (char)(v >> (8 * i));
    gp_sbuf_add(b, tmp, 8);
}

static void pb_double(gp_sbuf *b, uint32_t field, double d)
{
    uint64_t v;
    memcpy(&v, &d, 8);
    pb_fixed64(b, field, v);
}

static void pb_bytes(gp_sbuf *b, uint32_t field, const void *s, size_t n)
{
    pb_varint(b, (uint64_t)field << 3 | 2);
    pb_varint(b, n);
    gp_sbuf_add(b, s, n);
}

static void pb_str(gp_sbuf *b, uint32_t field, const char *s)
{
    pb_bytes(b, field, s, strlen(s));
}

static void pb_msg(gp_sbuf *b, uint32_t field, const gp_sbuf *m)
{
    pb_bytes(b, field, m->s ? m->s : "", m->n);
}

/* ---- flows -------------------------------------------------------------------------------- */

typedef struct flowref {
    uint32_t slice;
    uint32_t term; /* 1: terminating_flow_ids, 0: flow_ids */
    uint64_t id;
} flowref;

/* An open-addressing table of (ts, track) -> slice, one array (one cache
 * line per probe). track1 = track + 1; 0 marks an empty entry (calloc'ed). */
typedef struct fent {
    int64_t ts;
    uint32_t track1;
    uint32_t slice;
} fent;

typedef struct ftab {
    fent *v;
    size_t mask;
    uint64_t *bits; /* a bit per hash value's top bits: set for every key */
    unsigned shift;
} ftab;

static int ftab_init(ftab *h, size_t n)
{
    size_t cap = 16;
    while (cap < 2 * n) cap *= 2;
    h->v = calloc(cap, sizeof *h->v);
    /* 8 bits per entry: a probe for an absent key mostly stops here, in a
     * bit array small enough for the cache, instead of in the table */
    h->shift = 64;
    size_t nbits = 1;
    while (nbits < 8 * cap) {
        nbits *= 2;
        h->shift--;
    }
    h->bits = calloc(nbits / 64 + 1, sizeof *h->bits);
    if (!h->v || !h->bits) return GP_ENOMEM;
    h->mask = cap - 1;
    return 0;
}

static void ftab_free(ftab *h)
{
    free(h->v);
    free(h->bits);
}

static inline uint64_t ftab_hash(int64_t ts, uint32_t track)
{
    return gp_hash_u64((uint64_t)ts * 1000003u ^ track);
}

/* Prefetches what a later ftab_at of the same key reads: the bit (stage 0),
 * then, if it is set, the entry (stage 1). The probes are otherwise cache
 * misses one after another; a few dozen keys ahead they overlap. */
static inline void ftab_prefetch(const ftab *h, int64_t ts, uint32_t track, int stage)
{
    uint64_t x = ftab_hash(ts, track), bit = x >> h->shift;
    if (!stage)
        __builtin_prefetch(&h->bits[bit >> 6]);
    else if (h->bits[bit >> 6] >> (bit & 63) & 1)
        __builtin_prefetch(&h->v[x & h->mask]);
}

/* The entry of (ts, track): found, or (insert) new with slice GP_NO_INDEX,
 * or SIZE_MAX when absent. The table never fills (sized 2x its keys). */
static size_t ftab_at(ftab *h, int64_t ts, uint32_t track, int insert)
{
    uint64_t x = ftab_hash(ts, track), bit = x >> h->shift;
    if (insert)
        h->bits[bit >> 6] |= 1ull << (bit & 63);
    else if (!(h->bits[bit >> 6] >> (bit & 63) & 1))
        return SIZE_MAX;
    size_t j = x & h->mask;
    for (;; j = (j + 1) & h->mask) {
        fent *e = &h->v[j];
        if (!e->track1) {
            if (!insert) return SIZE_MAX;
            *e = (fent){ts, track + 1, GP_NO_INDEX};
            return j;
        }
        if (e->ts == ts && e->track1 == track + 1) return j;
    }
}

#define PREFETCH 16 /* keys ahead */

typedef struct flows {
    flowref *v;     /* sorted by slice; per slice the flow starts, then the ends */
    uint32_t *end;  /* end[s]: one past slice s's last flowref (start: end[s - 1], 0 for s 0) */
    uint64_t links; /* flow ends bound */
} flows;

/* Orders refs[0..n) by slice (counting sort, stable, starts before ends)
 * into f->v and sets f->end. */
static int flows_sort(const gp_trace *t, const flowref *refs, size_t n, flows *f)
{
    f->end = calloc(t->slices.n + 1, sizeof *f->end);
    f->v = malloc((n ? n : 1) * sizeof *f->v);
    if (!f->end || !f->v) return GP_ENOMEM;
    for (size_t i = 0; i < n; i++) f->end[refs[i].slice + 1]++;
    for (size_t s = 0; s < t->slices.n; s++) f->end[s + 1] += f->end[s];
    /* f->end[s] is now slice s's start; placing advances it to its end */
    for (uint32_t term = 0; term < 2; term++)
        for (size_t i = 0; i < n; i++)
            if (refs[i].term == term) f->v[f->end[refs[i].slice]++] = refs[i];
    return 0;
}

/* Flow endpoints bound to slices: the trace's flows ("s"/"t" start or step a
 * flow at the first slice starting at the same ts on the same track, "f"
 * ends it), or, for a trace without flows, launch -> GPU work by
 * correlation id (the last launch of an id). */
static int bind_flows(const gp_trace *t, flows *out)
{
    GP_VEC(flowref) v = {0};
    ftab h = {0};
    uint32_t *at = NULL;
    int rc = GP_ENOMEM;
    out->links = 0;
    if (t->flows.n) {
        at = malloc(t->flows.n * sizeof *at);
        if (!at || ftab_init(&h, t->flows.n)) goto done;
        const gp_flow *fv = t->flows.v;
        const gp_slice *sv = t->slices.v;
        size_t nf = t->flows.n, ns = t->slices.n;
        for (size_t i = 0; i < nf; i++) {
            if (i + PREFETCH < nf)
                __builtin_prefetch(
                    &h.v[ftab_hash(fv[i + PREFETCH].ts, fv[i + PREFETCH].track) & h.mask], 1);
            at[i] = (uint32_t)ftab_at(&h, fv[i].ts, fv[i].track, 1);
        }
        for (size_t i = 0; i < ns; i++) { /* the first slice at (ts, track) */
            if (i + 2 * PREFETCH < ns)
                ftab_prefetch(&h, sv[i + 2 * PREFETCH].ts, sv[i + 2 * PREFETCH].track, 0);
            if (i + PREFETCH < ns)
                ftab_prefetch(&h, sv[i + PREFETCH].ts, sv[i + PREFETCH].track, 1);
            const gp_slice *s = &sv[i];
            size_t j = ftab_at(&h, s->ts, s->track, 0);
            if (j != SIZE_MAX && h.v[j].slice == GP_NO_INDEX) h.v[j].slice = (uint32_t)i;
        }
        for (size_t i = 0; i < t->flows.n; i++) {
            const gp_flow *f = &t->flows.v[i];
            uint32_t si = h.v[at[i]].slice;
            if (si == GP_NO_INDEX) continue;
            flowref r = {si, f->ph == 'f',
                         gp_hash_u64((uint64_t)f->id ^ ((uint64_t)f->cat << 48)) | 1};
            if (GP_VEC_PUSH(v, r)) goto done;
            if (f->ph == 'f') out->links++;
        }
    } else {
        size_t nl = 0;
        for (size_t i = 0; i < t->slices.n; i++) {
            gp_kind k = gp_slice_kind(t, &t->slices.v[i]);
            nl += (k == GP_K_RUNTIME || k == GP_K_DRIVER) && t->slices.v[i].correlation != GP_NONE;
        }
        if (ftab_init(&h, nl)) goto done;
        for (size_t i = 0; i < t->slices.n; i++) { /* correlation -> its last launch */
            const gp_slice *s = &t->slices.v[i];
            gp_kind k = gp_slice_kind(t, s);
            if ((k == GP_K_RUNTIME || k == GP_K_DRIVER) && s->correlation != GP_NONE)
                h.v[ftab_at(&h, s->correlation, 0, 1)].slice = (uint32_t)i;
        }
        unsigned gm = gp_kind_mask_gpu_work();
        for (size_t i = 0; i < t->slices.n && nl; i++) {
            const gp_slice *s = &t->slices.v[i];
            if (!(gm & GP_KIND_BIT(gp_slice_kind(t, s))) || s->correlation == GP_NONE) continue;
            size_t j = ftab_at(&h, s->correlation, 0, 0);
            if (j == SIZE_MAX) continue;
            uint64_t id = gp_hash_u64((uint64_t)s->correlation) | 1;
            flowref a = {h.v[j].slice, 0, id}, b = {(uint32_t)i, 1, id};
            if (GP_VEC_PUSH(v, a) || GP_VEC_PUSH(v, b)) goto done;
            out->links++;
        }
    }
    rc = flows_sort(t, v.v, v.n, out);
done:
    GP_VEC_FREE(v);
    ftab_free(&h);
    free(at);
    return rc;
}

/* ---- header: clock snapshot, interned names, track descriptors ---------------------------- */

typedef struct E {
    const gp_trace *t;
    gp_sbuf out, pk, in, tmp, tmp2;
} E;

/* Appends packet pk as Trace.packet 1 and clears it. */
static void emit(E *e)
{
    pb_msg(&e->out, F_TRACE_PACKET, &e->pk);
    gp_sbuf_reset(&e->pk);
}

static void intern_pair(gp_sbuf *in, uint32_t field, uint64_t iid, const char *name, size_t len,
                        gp_sbuf *tmp)
{
    gp_sbuf_reset(tmp);
    pb_u64(tmp, 1, iid);
    pb_bytes(tmp, 2, name, len);
    pb_msg(in, field, tmp);
}

/* A packet of interned data only (continuing the sequence's state). */
static void emit_interned(E *e)
{
    if (!e->in.n) return;
    pb_u64(&e->pk, P_SEQ_ID, SEQ);
    pb_u64(&e->pk, P_SEQ_FLAGS, SEQ_NEEDS);
    pb_msg(&e->pk, P_INTERNED, &e->in);
    emit(e);
    gp_sbuf_reset(&e->in);
}

#define INTERNED_MAX (256 << 10) /* bytes of interned data per packet */

/* The event names (iid = string id + 1) and categories (iid = category + 1)
 * that slices and instants use, in id order, in packets of interned data
 * right after the first one. */
static int intern_all(E *e, const gp_trace *t)
{
    size_t nstr = gp_strtab_count(t->strings) + 1;
    uint8_t *used = calloc(nstr + t->cats.n + 1, 1);
    if (!used) return GP_ENOMEM;
    uint8_t *cat_used = used + nstr;
    for (size_t i = 0; i < t->slices.n; i++) {
        const gp_slice *s = &t->slices.v[i];
        if (s->dur < 0) continue; /* not written (gp_nesting_build leaves them out) */
        used[s->name] = 1;
        cat_used[s->cat] = 1;
    }
    for (size_t i = 0; i < t->instants.n; i++) {
        used[t->instants.v[i].name] = 1;
        cat_used[t->instants.v[i].cat] = 1;
    }
    for (size_t c = 0; c < t->cats.n; c++)
        if (cat_used[c]) {
            uint32_t nm = t->cats.v[c].name;
            intern_pair(&e->in, 1, (uint64_t)c + 1, gp_trace_s(t, nm),
                        gp_strtab_len(t->strings, nm), &e->tmp);
            if (e->in.n >= INTERNED_MAX) emit_interned(e);
        }
    for (size_t i = 0; i < nstr; i++)
        if (used[i]) {
            intern_pair(&e->in, 2, (uint64_t)i + 1, gp_trace_s(t, (uint32_t)i),
                        gp_strtab_len(t->strings, (uint32_t)i), &e->tmp);
            if (e->in.n >= INTERNED_MAX) emit_interned(e);
        }
    emit_interned(e);
    free(used);
    return 0;
}

static void descriptor(E *e, const gp_sbuf *td)
{
    gp_sbuf_reset(&e->pk);
    pb_u64(&e->pk, P_SEQ_ID, SEQ);
    pb_msg(&e->pk, P_TRACK_DESCRIPTOR, td);
    emit(e);
}

static int32_t pid32(const gp_track *k)
{
    return (int32_t)(k->pid_str ? (k->pid & 0x3fffffff) : k->pid);
}

/* First packet (clock snapshot, annotation names), the interned names and
 * the track descriptors. */
static int tracks(E *e, const gp_memory *mem)
{
    const gp_trace *t = e->t;
    gp_sbuf_reset(&e->pk);
    gp_sbuf_reset(&e->tmp);
    gp_sbuf_reset(&e->tmp2);
    /* ClockSnapshot: clocks 1 {clock_id 1, timestamp 2}, primary_trace_clock 2 */
    pb_u64(&e->tmp2, 1, PF_CLOCK_BOOTTIME);
    pb_u64(&e->tmp2, 2, 0);
    pb_msg(&e->tmp, 1, &e->tmp2);
    if (t->meta.t0_abs_ns > 0) {
        gp_sbuf_reset(&e->tmp2);
        pb_u64(&e->tmp2, 1, PF_CLOCK_REALTIME);
        pb_u64(&e->tmp2, 2, (uint64_t)t->meta.t0_abs_ns);
        pb_msg(&e->tmp, 1, &e->tmp2);
    }
    pb_u64(&e->tmp, 2, PF_CLOCK_BOOTTIME);
    pb_u64(&e->pk, P_TIMESTAMP, 0);
    pb_msg(&e->pk, P_CLOCK_SNAPSHOT, &e->tmp);
    pb_u64(&e->pk, P_SEQ_ID, SEQ);
    pb_u64(&e->pk, P_SEQ_FLAGS, SEQ_CLEARED);
    gp_sbuf_reset(&e->in);
    for (int i = 1; i < DA__N; i++)
        intern_pair(&e->in, 3, (uint64_t)i, da_names[i], strlen(da_names[i]), &e->tmp);
    pb_msg(&e->pk, P_INTERNED, &e->in);
    emit(e);
    gp_sbuf_reset(&e->in);
    if (intern_all(e, t)) return GP_ENOMEM;
    gp_u64map seen = {0};
    gp_sbuf td = {0}, sub = {0};
    int rc = 0;
    for (size_t k = 0; k < t->tracks.n; k++) {
        const gp_track *tk = &t->tracks.v[k];
        gp_sbuf_reset(&td);
        gp_sbuf_reset(&sub);
        pb_u64(&td, 1, UUID_TRACK(k));
        if (tk->type == GP_TRACK_GPU) {
            uint64_t *slot = gp_u64map_slot(&seen, UUID_GPU(tk->device), 0);
            if (!slot) goto oom;
            if (!*slot) { /* the GPU's parent track */
                *slot = 1;
                gp_sbuf td2 = {0};
                char nm[48];
                snprintf(nm, sizeof nm, "GPU %d", tk->device);
                pb_u64(&td2, 1, UUID_GPU(tk->device));
                pb_str(&td2, 2, nm);
                descriptor(e, &td2);
                gp_sbuf_free(&td2);
            }
            char nm[300];
            if (tk->name)
                snprintf(nm, sizeof nm, "%s", gp_trace_s(t, tk->name));
            else
                snprintf(nm, sizeof nm, "stream %lld", (long long)tk->stream);
            pb_u64(&td, 5, UUID_GPU(tk->device));
            pb_str(&td, 2, nm);
        } else {
            int32_t pid = pid32(tk);
            uint64_t *slot = gp_u64map_slot(&seen, UUID_PROC((uint32_t)pid), 0);
            if (!slot) goto oom;
            if (!*slot) { /* ProcessDescriptor: pid 1, process_name 6 */
                *slot = 1;
                gp_sbuf td2 = {0}, pd = {0};
                pb_u64(&td2, 1, UUID_PROC((uint32_t)pid));
                pb_i64(&pd, 1, pid);
                const char *pn = tk->process_name ? gp_trace_s(t, tk->process_name)
                                 : tk->pid_str    ? gp_trace_s(t, tk->pid_str)
                                                  : NULL;
                if (pn) pb_str(&pd, 6, pn);
                pb_msg(&td2, 3, &pd);
                descriptor(e, &td2);
                gp_sbuf_free(&td2);
                gp_sbuf_free(&pd);
            }
            /* ThreadDescriptor: pid 1, tid 2, thread_name 5 */
            pb_i64(&sub, 1, pid);
            pb_i64(&sub, 2, tk->tid_str ? (int64_t)(k + 1) : tk->tid);
            const char *tn = tk->name      ? gp_trace_s(t, tk->name)
                             : tk->tid_str ? gp_trace_s(t, tk->tid_str)
                                           : NULL;
            if (tn) pb_str(&sub, 5, tn);
            pb_u64(&td, 5, UUID_PROC((uint32_t)pid));
            pb_msg(&td, 4, &sub);
        }
        descriptor(e, &td);
    }
    /* counter tracks: CounterDescriptor 8 (empty: plain values) */
    for (size_t s = 0; s < t->series.n; s++) {
        gp_sbuf_reset(&td);
        gp_sbuf_reset(&sub);
        pb_u64(&td, 1, UUID_SERIES(s));
        pb_str(&td, 2, gp_trace_s(t, t->series.v[s].name));
        pb_msg(&td, 8, &sub);
        descriptor(e, &td);
    }
    for (size_t d = 0; d < mem->n; d++)
        for (int r = 0; r < 2; r++) {
            if (r && !mem->dev[d].reserved_valid) continue;
            char nm[64];
            snprintf(nm, sizeof nm, "memory %s %s", mem->dev[d].label,
                     r ? "reserved" : "allocated");
            gp_sbuf_reset(&td);
            gp_sbuf_reset(&sub);
            pb_u64(&td, 1, UUID_MEM(d, r));
            pb_str(&td, 2, nm);
            pb_u64(&sub, 3, 3); /* unit: UNIT_SIZE_BYTES */
            pb_msg(&td, 8, &sub);
            descriptor(e, &td);
        }
    goto done;
oom:
    rc = GP_ENOMEM;
done:
    gp_u64map_free(&seen);
    gp_sbuf_free(&td);
    gp_sbuf_free(&sub);
    return rc;
}

/* ---- events: units encoded in parallel, written in order ---------------------------------- */

static inline size_t vlen(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

/* Appends a TracePacket {timestamp, sequence id, SEQ_NEEDS, track_event te}. */
static void put_event(gp_sbuf *o, int64_t ts, const gp_sbuf *te)
{
    uint64_t t = (uint64_t)(ts < 0 ? 0 : ts);
    size_t body = 1 + vlen(t) + 2 + 2 + 1 + vlen(te->n) + te->n;
    gp_sbuf_reserve(o, body + 16);
    pb_varint(o, F_TRACE_PACKET << 3 | 2);
    pb_varint(o, body);
    pb_varint(o, P_TIMESTAMP << 3);
    pb_varint(o, t);
    pb_varint(o, P_SEQ_ID << 3);
    pb_varint(o, SEQ);
    pb_varint(o, P_SEQ_FLAGS << 3);
    pb_varint(o, SEQ_NEEDS);
    pb_varint(o, P_TRACK_EVENT << 3 | 2);
    pb_varint(o, te->n);
    memcpy(o->s + o->n, te->s, te->n);
    o->n += te->n;
}

/* TrackEvent.debug_annotations {name_iid da, int_value v} */
static void debug_int(gp_sbuf *te, int da, int64_t v)
{
    pb_varint(te, TE_DEBUG << 3 | 2);
    pb_varint(te, 3 + vlen((uint64_t)v));
    pb_varint(te, 1 << 3);
    pb_varint(te, (uint64_t)da);
    pb_varint(te, 4 << 3);
    pb_varint(te, (uint64_t)v);
}

static void head(gp_sbuf *te, int type, uint64_t uuid)
{
    gp_sbuf_reset(te);
    gp_sbuf_reserve(te, 32);
    pb_u64(te, TE_TYPE, (uint64_t)type);
    pb_u64(te, TE_TRACK_UUID, uuid);
}

enum { U_SLICES, U_INSTANTS, U_COUNTERS, U_MEM };
typedef struct unit {
    uint32_t kind, k; /* k: the track (slices) or memory device */
    size_t a, b;      /* range of nesting items / instants / samples / points */
} unit;

typedef struct job {
    const gp_trace *t;
    const gp_nesting *ns;
    const gp_memory *mem;
    const flows *fl;
    unit *u;
    size_t nu, window;
    gp_sbuf *outs;  /* per unit */
    uint8_t *ready; /* per unit: encoded */
    GP_VEC(gp_sbuf) spare;
    size_t next, written;
    pthread_mutex_t mu;
    pthread_cond_t cv;
} job;

typedef struct enc {
    gp_sbuf te;
    GP_VEC(int64_t) stack; /* ends of the open slices */
    int oom;
} enc;

static void slice_end(enc *c, gp_sbuf *o, uint64_t uuid, int64_t ts)
{
    head(&c->te, TYPE_SLICE_END, uuid);
    put_event(o, ts, &c->te);
}

/* Nesting items [a, b) of track k. The open slices at a are a's ancestors
 * (gp_nesting_build pops by the same rule), and the slices that end before
 * the item after b are ended here: as if the track were written in one go. */
static void enc_slices(enc *c, const job *j, uint32_t k, size_t a, size_t b, gp_sbuf *o)
{
    const gp_trace *t = j->t;
    const gp_nesting *ns = j->ns;
    const flows *fl = j->fl;
    uint64_t uuid = UUID_TRACK(k);
    c->stack.n = 0;
    for (uint32_t p = ns->items[a].parent; p != GP_NO_INDEX; p = ns->items[p].parent)
        if (GP_VEC_PUSH(c->stack, ns->items[p].end)) c->oom = 1;
    for (size_t x = 0, y = c->stack.n; x + 1 < y; x++, y--) { /* outermost first */
        int64_t tmp = c->stack.v[x];
        c->stack.v[x] = c->stack.v[y - 1];
        c->stack.v[y - 1] = tmp;
    }
    for (size_t i = a; i < b; i++) {
        const gp_nest_item *it = &ns->items[i];
        const gp_slice *s = &t->slices.v[it->slice];
        while (c->stack.n && c->stack.v[c->stack.n - 1] <= s->ts)
            slice_end(c, o, uuid, c->stack.v[--c->stack.n]);
        gp_sbuf *te = &c->te;
        head(te, TYPE_SLICE_BEGIN, uuid);
        pb_u64(te, TE_CATEGORY_IIDS, (uint64_t)s->cat + 1);
        pb_u64(te, TE_NAME_IID, (uint64_t)s->name + 1);
        for (uint32_t f = it->slice ? fl->end[it->slice - 1] : 0; f < fl->end[it->slice]; f++)
            pb_fixed64(te, fl->v[f].term ? TE_TERM_FLOW_IDS : TE_FLOW_IDS, fl->v[f].id);
        if (s->correlation != GP_NONE) debug_int(te, DA_CORRELATION, s->correlation);
        if (s->external_id != GP_NONE) debug_int(te, DA_EXTERNAL_ID, s->external_id);
        if (s->gpu != GP_NO_INDEX) {
            const gp_gpu_info *g = &t->gpu_info.v[s->gpu];
            if (g->device != GP_NONE) debug_int(te, DA_DEVICE, g->device);
            if (g->stream != GP_NONE) debug_int(te, DA_STREAM, g->stream);
            if (g->bytes != GP_NONE) debug_int(te, DA_BYTES, g->bytes);
        }
        if (it->end != s->ts + s->dur) debug_int(te, DA_DUR_NS, s->dur);
        put_event(o, s->ts, te);
        if (GP_VEC_PUSH(c->stack, it->end)) c->oom = 1;
    }
    int64_t next = b < ns->track_first[k + 1] ? t->slices.v[ns->items[b].slice].ts : INT64_MAX;
    while (c->stack.n && c->stack.v[c->stack.n - 1] <= next)
        slice_end(c, o, uuid, c->stack.v[--c->stack.n]);
}

static void enc_unit(enc *c, const job *j, const unit *u, gp_sbuf *o)
{
    const gp_trace *t = j->t;
    gp_sbuf *te = &c->te;
    switch (u->kind) {
    case U_SLICES:
        enc_slices(c, j, u->k, u->a, u->b, o);
        break;
    case U_INSTANTS:
        for (size_t i = u->a; i < u->b; i++) {
            const gp_instant *in = &t->instants.v[i];
            head(te, TYPE_INSTANT, UUID_TRACK(in->track));
            pb_u64(te, TE_CATEGORY_IIDS, (uint64_t)in->cat + 1);
            pb_u64(te, TE_NAME_IID, (uint64_t)in->name + 1);
            put_event(o, in->ts, te);
        }
        break;
    case U_COUNTERS:
        for (size_t i = u->a; i < u->b; i++) {
            const gp_counter_sample *cs = &t->counters.v[i];
            head(te, TYPE_COUNTER, UUID_SERIES(cs->series));
            pb_double(te, TE_DOUBLE_COUNTER, cs->value);
            put_event(o, cs->ts, te);
        }
        break;
    case U_MEM: {
        const gp_mem_device *dv = &j->mem->dev[u->k];
        for (size_t i = u->a; i < u->b; i++)
            for (int r = 0; r < 2; r++) {
                if (r && (!dv->reserved_valid || dv->pts[i].reserved == GP_NONE)) continue;
                head(te, TYPE_COUNTER, UUID_MEM(u->k, r));
                pb_double(te, TE_DOUBLE_COUNTER,
                          (double)(r ? dv->pts[i].reserved : dv->pts[i].allocated));
                put_event(o, dv->pts[i].ts, te);
            }
        break;
    }
    }
}

#define UNIT_SLICES (1u << 14) /* nesting items per unit */
#define UNIT_OTHER  (1u << 16) /* instants, samples or points per unit */

/* Takes the next unit to encode (mu held): its index, or SIZE_MAX when
 * none may be taken now (all taken, or `window` units ahead of the writer). */
static size_t take(job *j, gp_sbuf *buf)
{
    if (j->next >= j->nu || j->next >= j->written + j->window) return SIZE_MAX;
    size_t i = j->next++;
    *buf = j->spare.n ? j->spare.v[--j->spare.n] : (gp_sbuf){0};
    return i;
}

static void encode_one(job *j, enc *c, size_t i, gp_sbuf *buf)
{
    gp_sbuf_reset(buf);
    enc_unit(c, j, &j->u[i], buf);
    pthread_mutex_lock(&j->mu);
    j->outs[i] = *buf;
    j->ready[i] = 1;
    pthread_cond_broadcast(&j->cv);
}

static void *worker(void *arg)
{
    job *j = arg;
    enc c = {0};
    pthread_mutex_lock(&j->mu);
    for (;;) {
        gp_sbuf buf;
        size_t i = take(j, &buf);
        if (i == SIZE_MAX) {
            if (j->next >= j->nu) break;
            pthread_cond_wait(&j->cv, &j->mu);
            continue;
        }
        pthread_mutex_unlock(&j->mu);
        encode_one(j, &c, i, &buf); /* returns with mu held */
    }
    pthread_mutex_unlock(&j->mu);
    gp_sbuf_free(&c.te);
    GP_VEC_FREE(c.stack);
    return (void *)(intptr_t)c.oom;
}

/* The cores this process may run on (taskset, cpusets), else those online. */
static size_t ncores(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return (size_t)CPU_COUNT(&set);
    long c = sysconf(_SC_NPROCESSORS_ONLN);
    return c > 0 ? (size_t)c : 1;
}

#define MAX_THREADS 4

/* Encodes the units with up to MAX_THREADS threads and writes them to f in
 * order from this one (which encodes too). Returns 0, GP_ENOMEM or GP_EIO. */
static int encode_units(job *j, FILE *f)
{
    int rc = 0, io = 0;
    j->outs = calloc(j->nu ? j->nu : 1, sizeof *j->outs);
    j->ready = calloc(j->nu ? j->nu : 1, 1);
    if (!j->outs || !j->ready) {
        free(j->outs);
        free(j->ready);
        return GP_ENOMEM;
    }
    size_t nth = ncores();
    if (nth > MAX_THREADS) nth = MAX_THREADS;
    if (nth > j->nu) nth = j->nu ? j->nu : 1;
    j->window = 2 * nth + 2;
    pthread_mutex_init(&j->mu, NULL);
    pthread_cond_init(&j->cv, NULL);
    pthread_t th[MAX_THREADS];
    int started[MAX_THREADS] = {0};
    for (size_t k = 1; k < nth; k++) started[k] = pthread_create(&th[k], NULL, worker, j) == 0;
    enc c = {0};
    pthread_mutex_lock(&j->mu);
    while (j->written < j->nu) {
        if (j->ready[j->written]) { /* write the oldest encoded unit */
            gp_sbuf b = j->outs[j->written];
            pthread_mutex_unlock(&j->mu);
            if (!io && b.n && fwrite(b.s, 1, b.n, f) != b.n) io = 1;
            pthread_mutex_lock(&j->mu);
            j->written++;
            if (GP_VEC_PUSH(j->spare, b)) gp_sbuf_free(&b);
            pthread_cond_broadcast(&j->cv);
            continue;
        }
        gp_sbuf buf;
        size_t i = take(j, &buf);
        if (i != SIZE_MAX) {
            pthread_mutex_unlock(&j->mu);
            encode_one(j, &c, i, &buf);
        } else {
            pthread_cond_wait(&j->cv, &j->mu);
        }
    }
    pthread_mutex_unlock(&j->mu);
    for (size_t k = 1; k < nth; k++)
        if (started[k]) {
            void *r = NULL;
            pthread_join(th[k], &r);
            if (r) c.oom = 1;
        }
    for (size_t i = 0; i < j->spare.n; i++) gp_sbuf_free(&j->spare.v[i]);
    GP_VEC_FREE(j->spare);
    gp_sbuf_free(&c.te);
    GP_VEC_FREE(c.stack);
    pthread_mutex_destroy(&j->mu);
    pthread_cond_destroy(&j->cv);
    free(j->outs);
    free(j->ready);
    if (c.oom)
        rc = GP_ENOMEM;
    else if (io)
        rc = GP_EIO;
    return rc;
}

/* ---- the writer --------------------------------------------------------------------------- */

typedef struct flow_job {
    const gp_trace *t;
    flows fl;
    int rc;
} flow_job;

static void *flow_main(void *arg)
{
    flow_job *fj = arg;
    fj->rc = bind_flows(fj->t, &fj->fl);
    return NULL;
}

int gp_perfetto_write(const gp_trace *t, FILE *f, gp_export_stats *stp)
{
    gp_export_stats dummy;
    gp_export_stats *st = stp ? stp : &dummy;
    memset(st, 0, sizeof *st);
    E e;
    memset(&e, 0, sizeof e);
    e.t = t;
    gp_nesting ns = {0};
    gp_memory mem = {0};
    flow_job fj = {.t = t};
    GP_VEC(unit) units = {0};
    int rc = GP_ENOMEM;
    /* the flows on a second thread while this one nests the slices */
    pthread_t fth;
    int fstarted = pthread_create(&fth, NULL, flow_main, &fj) == 0;
    if (!fstarted) flow_main(&fj);
    int nrc = gp_nesting_build(t, (1u << GP_K__COUNT) - 1, &ns);
    int mrc = nrc ? 0 : gp_memory_series(t, &mem);
    int trc = nrc || mrc ? 0 : tracks(&e, &mem);
    if (fstarted) pthread_join(fth, NULL);
    if (nrc || mrc || fj.rc) goto done;
    if ((rc = trc)) goto done;
    rc = GP_ENOMEM;
    st->flows = fj.fl.links;
    if (e.out.n && fwrite(e.out.s, 1, e.out.n, f) != e.out.n) {
        rc = GP_EIO;
        goto done;
    }
    /* the units, in the order of the file */
    for (size_t k = 0; k < ns.ntracks; k++)
        for (size_t a = ns.track_first[k]; a < ns.track_first[k + 1]; a += UNIT_SLICES) {
            size_t b =
                ns.track_first[k + 1] - a > UNIT_SLICES ? a + UNIT_SLICES : ns.track_first[k + 1];
            unit u = {U_SLICES, (uint32_t)k, a, b};
            if (GP_VEC_PUSH(units, u)) goto done;
        }
    for (size_t a = 0; a < t->instants.n; a += UNIT_OTHER) {
        unit u = {U_INSTANTS, 0, a,
                  t->instants.n - a > UNIT_OTHER ? a + UNIT_OTHER : t->instants.n};
        if (GP_VEC_PUSH(units, u)) goto done;
    }
    for (size_t a = 0; a < t->counters.n; a += UNIT_OTHER) {
        unit u = {U_COUNTERS, 0, a,
                  t->counters.n - a > UNIT_OTHER ? a + UNIT_OTHER : t->counters.n};
        if (GP_VEC_PUSH(units, u)) goto done;
    }
    for (size_t d = 0; d < mem.n; d++)
        for (size_t a = 0; a < mem.dev[d].n; a += UNIT_OTHER) {
            unit u = {U_MEM, (uint32_t)d, a,
                      mem.dev[d].n - a > UNIT_OTHER ? a + UNIT_OTHER : mem.dev[d].n};
            if (GP_VEC_PUSH(units, u)) goto done;
        }
    job j;
    memset(&j, 0, sizeof j);
    j.t = t;
    j.ns = &ns;
    j.mem = &mem;
    j.fl = &fj.fl;
    j.u = units.v;
    j.nu = units.n;
    if ((rc = encode_units(&j, f))) goto done;
    st->slices = ns.n;
    st->instants = t->instants.n;
    st->counters = t->counters.n;
    for (size_t d = 0; d < mem.n; d++) {
        const gp_mem_device *dv = &mem.dev[d];
        st->mem_events += dv->n;
        st->counters += dv->n;
        if (dv->reserved_valid)
            for (size_t i = 0; i < dv->n; i++) st->counters += dv->pts[i].reserved != GP_NONE;
    }
    rc = 0;
done:
    gp_sbuf_free(&e.out);
    gp_sbuf_free(&e.pk);
    gp_sbuf_free(&e.in);
    gp_sbuf_free(&e.tmp);
    gp_sbuf_free(&e.tmp2);
    GP_VEC_FREE(units);
    free(fj.fl.v);
    free(fj.fl.end);
    gp_nesting_free(&ns);
    gp_memory_free(&mem);
    return rc;
}
