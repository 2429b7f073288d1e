/* render/perfetto.c: the .pftrace writer (see perfetto.h). Protobuf wire
 * format: a field is a varint key (number << 3 | wire type) then a varint
 * (type 0), 8 little-endian bytes (type 1) or a varint length and the bytes
 * (type 2). Field numbers below are perfetto_trace.proto's. */
#include "render/perfetto.h"
#include "analysis/calltree.h"
#include "analysis/memory.h"
#include "core/hash.h"
#include "core/sbuf.h"
#include <stdlib.h>
#include <string.h>

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
enum { CLOCK_REALTIME = 1, CLOCK_BOOTTIME = 6 };
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

typedef struct flowref {
    uint32_t slice;
    uint32_t term; /* 1: terminating_flow_ids, 0: flow_ids */
    uint64_t id;
} flowref;

typedef struct E {
    const gp_trace *t;
    FILE *f;
    gp_sbuf out, pk, te, in, tmp, tmp2;
    uint8_t *name_done; /* per string id: interned already */
    uint8_t *cat_done;  /* per category */
    int io_err;
} E;

static void flush(E *e, size_t limit)
{
    if (e->out.n < limit) return;
    if (gp_sbuf_write(&e->out, e->f)) e->io_err = 1;
    gp_sbuf_reset(&e->out);
}

/* Appends packet pk as Trace.packet 1 and clears it. */
static void emit(E *e)
{
    pb_msg(&e->out, F_TRACE_PACKET, &e->pk);
    gp_sbuf_reset(&e->pk);
    flush(e, 1 << 22);
}

static void intern_pair(gp_sbuf *in, uint32_t field, uint64_t iid, const char *name, gp_sbuf *tmp)
{
    gp_sbuf_reset(tmp);
    pb_u64(tmp, 1, iid);
    pb_str(tmp, 2, name);
    pb_msg(in, field, tmp);
}

/* Starts a TrackEvent packet at ts: timestamp, sequence; e->te collects the
 * event, e->in the interned data it needs. */
static void begin_event(E *e, int64_t ts)
{
    gp_sbuf_reset(&e->pk);
    gp_sbuf_reset(&e->te);
    gp_sbuf_reset(&e->in);
    pb_u64(&e->pk, P_TIMESTAMP, (uint64_t)(ts < 0 ? 0 : ts));
    pb_u64(&e->pk, P_SEQ_ID, SEQ);
    pb_u64(&e->pk, P_SEQ_FLAGS, SEQ_NEEDS);
}

static void end_event(E *e)
{
    if (e->in.n) pb_msg(&e->pk, P_INTERNED, &e->in);
    pb_msg(&e->pk, P_TRACK_EVENT, &e->te);
    emit(e);
}

/* name_iid (= string id + 1) and category_iids (= category + 1), interning
 * each on first use. */
static void event_name_cat(E *e, uint32_t name, uint16_t cat)
{
    const gp_trace *t = e->t;
    if (!e->cat_done[cat]) {
        e->cat_done[cat] = 1;
        intern_pair(&e->in, 1, (uint64_t)cat + 1, gp_trace_s(t, t->cats.v[cat].name), &e->tmp);
    }
    if (!e->name_done[name]) {
        e->name_done[name] = 1;
        intern_pair(&e->in, 2, (uint64_t)name + 1, gp_trace_s(t, name), &e->tmp);
    }
    pb_u64(&e->te, TE_CATEGORY_IIDS, (uint64_t)cat + 1);
    pb_u64(&e->te, TE_NAME_IID, (uint64_t)name + 1);
}

static void debug_int(E *e, int da, int64_t v)
{
    gp_sbuf_reset(&e->tmp);
    pb_u64(&e->tmp, 1, (uint64_t)da);
    pb_i64(&e->tmp, 4, v);
    pb_msg(&e->te, TE_DEBUG, &e->tmp);
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

/* First packet (clock snapshot, annotation names) and the track descriptors. */
static int tracks(E *e, const gp_memory *mem)
{
    const gp_trace *t = e->t;
    gp_sbuf_reset(&e->pk);
    gp_sbuf_reset(&e->tmp);
    gp_sbuf_reset(&e->tmp2);
    /* ClockSnapshot: clocks 1 {clock_id 1, timestamp 2}, primary_trace_clock 2 */
    pb_u64(&e->tmp2, 1, CLOCK_BOOTTIME);
    pb_u64(&e->tmp2, 2, 0);
    pb_msg(&e->tmp, 1, &e->tmp2);
    if (t->meta.t0_abs_ns > 0) {
        gp_sbuf_reset(&e->tmp2);
        pb_u64(&e->tmp2, 1, CLOCK_REALTIME);
        pb_u64(&e->tmp2, 2, (uint64_t)t->meta.t0_abs_ns);
        pb_msg(&e->tmp, 1, &e->tmp2);
    }
    pb_u64(&e->tmp, 2, CLOCK_BOOTTIME);
    pb_u64(&e->pk, P_TIMESTAMP, 0);
    pb_msg(&e->pk, P_CLOCK_SNAPSHOT, &e->tmp);
    pb_u64(&e->pk, P_SEQ_ID, SEQ);
    pb_u64(&e->pk, P_SEQ_FLAGS, SEQ_CLEARED);
    gp_sbuf_reset(&e->in);
    for (int i = 1; i < DA__N; i++) intern_pair(&e->in, 3, (uint64_t)i, da_names[i], &e->tmp);
    pb_msg(&e->pk, P_INTERNED, &e->in);
    emit(e);

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

static int cmp_flow(const void *a, const void *b)
{
    const flowref *x = a, *y = b;
    if (x->slice != y->slice) return x->slice < y->slice ? -1 : 1;
    return x->term < y->term ? -1 : x->term > y->term;
}

/* Flow endpoints bound to slices: the trace's flows ("s"/"t" start or step a
 * flow at the slice starting at the same ts on the same track, "f" ends it),
 * or, for a trace without flows, launch -> GPU work by correlation id. */
static int bind_flows(const gp_trace *t, flowref **out, size_t *nout, uint64_t *links)
{
    GP_VEC(flowref) v = {0};
    gp_u64map at = {0};
    int rc = GP_ENOMEM;
    *links = 0;
    if (t->flows.n) {
        for (size_t i = t->slices.n; i-- > 0;) { /* first slice at (track, ts) wins */
            const gp_slice *s = &t->slices.v[i];
            uint64_t key = gp_hash_u64((uint64_t)s->ts * 1000003u ^ s->track) | 1;
            if (gp_u64map_put(&at, key, i)) goto done;
        }
        for (size_t i = 0; i < t->flows.n; i++) {
            const gp_flow *f = &t->flows.v[i];
            uint64_t si;
            uint64_t key = gp_hash_u64((uint64_t)f->ts * 1000003u ^ f->track) | 1;
            if (!gp_u64map_get(&at, key, &si)) continue;
            const gp_slice *s = &t->slices.v[si];
            if (s->ts != f->ts || s->track != f->track) continue; /* hash collision */
            flowref r = {(uint32_t)si, f->ph == 'f',
                         gp_hash_u64((uint64_t)f->id ^ ((uint64_t)f->cat << 48)) | 1};
            if (GP_VEC_PUSH(v, r)) goto done;
            if (f->ph == 'f') (*links)++;
        }
    } else {
        gp_u64map launch = {0};
        for (size_t i = 0; i < t->slices.n; i++) {
            const gp_slice *s = &t->slices.v[i];
            gp_kind k = gp_slice_kind(t, s);
            if ((k == GP_K_RUNTIME || k == GP_K_DRIVER) && s->correlation != GP_NONE &&
                gp_u64map_put(&launch, (uint64_t)s->correlation, i + 1)) {
                gp_u64map_free(&launch);
                goto done;
            }
        }
        unsigned gm = gp_kind_mask_gpu_work();
        for (size_t i = 0; i < t->slices.n; i++) {
            const gp_slice *s = &t->slices.v[i];
            uint64_t li;
            if (!(gm & GP_KIND_BIT(gp_slice_kind(t, s))) || s->correlation == GP_NONE ||
                !gp_u64map_get(&launch, (uint64_t)s->correlation, &li))
                continue;
            uint64_t id = gp_hash_u64((uint64_t)s->correlation) | 1;
            flowref a = {(uint32_t)(li - 1), 0, id}, b = {(uint32_t)i, 1, id};
            if (GP_VEC_PUSH(v, a) || GP_VEC_PUSH(v, b)) {
                gp_u64map_free(&launch);
                goto done;
            }
            (*links)++;
        }
        gp_u64map_free(&launch);
    }
    if (v.n) qsort(v.v, v.n, sizeof *v.v, cmp_flow);
    *out = v.v;
    *nout = v.n;
    v.v = NULL;
    rc = 0;
done:
    GP_VEC_FREE(v);
    gp_u64map_free(&at);
    return rc;
}

static void slice_end(E *e, uint64_t uuid, int64_t ts)
{
    begin_event(e, ts);
    pb_u64(&e->te, TE_TYPE, TYPE_SLICE_END);
    pb_u64(&e->te, TE_TRACK_UUID, uuid);
    end_event(e);
}

int gp_perfetto_write(const gp_trace *t, FILE *f, gp_export_stats *stp)
{
    gp_export_stats dummy;
    gp_export_stats *st = stp ? stp : &dummy;
    memset(st, 0, sizeof *st);
    E e;
    memset(&e, 0, sizeof e);
    e.t = t;
    e.f = f;
    gp_nesting ns = {0};
    gp_memory mem = {0};
    flowref *fl = NULL;
    size_t nfl = 0;
    int64_t *stack = NULL;
    int rc = GP_ENOMEM;
    e.name_done = calloc(gp_strtab_count(t->strings) + 1, 1);
    e.cat_done = calloc(t->cats.n + 1, 1);
    stack = malloc((t->slices.n + 1) * sizeof *stack);
    if (!e.name_done || !e.cat_done || !stack) goto done;
    if (gp_nesting_build(t, (1u << GP_K__COUNT) - 1, &ns) || gp_memory_compute(t, &mem) ||
        bind_flows(t, &fl, &nfl, &st->flows))
        goto done;
    if ((rc = tracks(&e, &mem))) goto done;
    rc = GP_ENOMEM;
    size_t fi = 0;
    /* flowrefs are sorted by slice; index them for the nesting-order walk */
    uint32_t *ffirst = calloc(t->slices.n + 1, sizeof *ffirst);
    if (!ffirst) goto done;
    for (size_t i = 0, j = 0; i <= t->slices.n; i++) {
        while (j < nfl && fl[j].slice < i) j++;
        ffirst[i] = (uint32_t)j;
    }
    (void)fi;
    for (size_t k = 0; k < ns.ntracks; k++) {
        size_t depth = 0;
        uint64_t uuid = UUID_TRACK(k);
        for (size_t i = ns.track_first[k]; i < ns.track_first[k + 1]; i++) {
            const gp_nest_item *it = &ns.items[i];
            const gp_slice *s = &t->slices.v[it->slice];
            while (depth && stack[depth - 1] <= s->ts) slice_end(&e, uuid, stack[--depth]);
            begin_event(&e, s->ts);
            pb_u64(&e.te, TE_TYPE, TYPE_SLICE_BEGIN);
            pb_u64(&e.te, TE_TRACK_UUID, uuid);
            event_name_cat(&e, s->name, s->cat);
            for (uint32_t j = ffirst[it->slice]; j < ffirst[it->slice + 1]; j++)
                pb_fixed64(&e.te, fl[j].term ? TE_TERM_FLOW_IDS : TE_FLOW_IDS, fl[j].id);
            if (s->correlation != GP_NONE) debug_int(&e, DA_CORRELATION, s->correlation);
            if (s->external_id != GP_NONE) debug_int(&e, DA_EXTERNAL_ID, s->external_id);
            if (s->gpu != GP_NO_INDEX) {
                const gp_gpu_info *g = &t->gpu_info.v[s->gpu];
                if (g->device != GP_NONE) debug_int(&e, DA_DEVICE, g->device);
                if (g->stream != GP_NONE) debug_int(&e, DA_STREAM, g->stream);
                if (g->bytes != GP_NONE) debug_int(&e, DA_BYTES, g->bytes);
            }
            if (it->end != s->ts + s->dur) debug_int(&e, DA_DUR_NS, s->dur);
            end_event(&e);
            stack[depth++] = it->end;
            st->slices++;
        }
        while (depth) slice_end(&e, uuid, stack[--depth]);
    }
    free(ffirst);
    for (size_t i = 0; i < t->instants.n; i++) {
        const gp_instant *in = &t->instants.v[i];
        begin_event(&e, in->ts);
        pb_u64(&e.te, TE_TYPE, TYPE_INSTANT);
        pb_u64(&e.te, TE_TRACK_UUID, UUID_TRACK(in->track));
        event_name_cat(&e, in->name, in->cat);
        end_event(&e);
        st->instants++;
    }
    for (size_t i = 0; i < t->counters.n; i++) {
        const gp_counter_sample *c = &t->counters.v[i];
        begin_event(&e, c->ts);
        pb_u64(&e.te, TE_TYPE, TYPE_COUNTER);
        pb_u64(&e.te, TE_TRACK_UUID, UUID_SERIES(c->series));
        pb_double(&e.te, TE_DOUBLE_COUNTER, c->value);
        end_event(&e);
        st->counters++;
    }
    for (size_t d = 0; d < mem.n; d++) {
        const gp_mem_device *dv = &mem.dev[d];
        for (size_t i = 0; i < dv->n; i++)
            for (int r = 0; r < 2; r++) {
                if (r && (!dv->reserved_valid || dv->pts[i].reserved == GP_NONE)) continue;
                begin_event(&e, dv->pts[i].ts);
                pb_u64(&e.te, TE_TYPE, TYPE_COUNTER);
                pb_u64(&e.te, TE_TRACK_UUID, UUID_MEM(d, r));
                pb_double(&e.te, TE_DOUBLE_COUNTER,
                          (double)(r ? dv->pts[i].reserved : dv->pts[i].allocated));
                end_event(&e);
                st->counters++;
            }
        st->mem_events += dv->n;
    }
    flush(&e, 0);
    rc = e.io_err ? GP_EIO : 0;
done:
    gp_sbuf_free(&e.out);
    gp_sbuf_free(&e.pk);
    gp_sbuf_free(&e.te);
    gp_sbuf_free(&e.in);
    gp_sbuf_free(&e.tmp);
    gp_sbuf_free(&e.tmp2);
    free(e.name_done);
    free(e.cat_done);
    free(stack);
    free(fl);
    gp_nesting_free(&ns);
    gp_memory_free(&mem);
    return rc;
}
