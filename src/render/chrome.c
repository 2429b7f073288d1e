/* render/chrome.c: the lossless Chrome trace-event / Kineto JSON writer
 * (see chrome.h). */
#include "render/chrome.h"
#include "analysis/calltree.h"
#include "core/hash.h"
#include "core/sbuf.h"
#include <gpuprof/common.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct W {
    const gp_trace *t;
    FILE *f;
    gp_sbuf b;
    int64_t raw0; /* raw ns of model time 0: t0_abs_ns - baseTimeNanoseconds */
    int io_err;
} W;

static void flush(W *w, size_t limit)
{
    if (w->b.n < limit) return;
    if (gp_sbuf_write(&w->b, w->f)) w->io_err = 1;
    gp_sbuf_reset(&w->b);
}

/* ns -> µs: whole microseconds as integers, else three decimals (exact). */
static void put_us(gp_sbuf *b, int64_t ns)
{
    if (ns < 0) {
        gp_sbuf_putc(b, '-');
        ns = -ns;
    }
    if (ns % 1000 == 0)
        gp_sbuf_printf(b, "%lld", (long long)(ns / 1000));
    else
        gp_sbuf_printf(b, "%lld.%03lld", (long long)(ns / 1000), (long long)(ns % 1000));
}

static void put_pid_tid(W *w, uint32_t track)
{
    const gp_track *k = &w->t->tracks.v[track];
    gp_sbuf_puts(&w->b, ",\"pid\":");
    if (k->pid_str)
        gp_json_str(&w->b, gp_trace_s(w->t, k->pid_str));
    else
        gp_json_int(&w->b, k->pid);
    gp_sbuf_puts(&w->b, ",\"tid\":");
    if (k->tid_str)
        gp_json_str(&w->b, gp_trace_s(w->t, k->tid_str));
    else
        gp_json_int(&w->b, k->tid);
}

/* {"ph":PH,"cat":..,"name":..,"pid":..,"tid":..,"ts":..  (no closing brace) */
static void put_head(W *w, char ph, uint16_t cat, const char *name, uint32_t track, int64_t ts)
{
    gp_sbuf_printf(&w->b, ",\n{\"ph\":\"%c\"", ph);
    const char *c = gp_trace_s(w->t, w->t->cats.v[cat].name);
    if (*c) { /* an absent "cat" is read as "": HTA drops events without one */
        gp_sbuf_puts(&w->b, ",\"cat\":");
        gp_json_str(&w->b, c);
    }
    gp_sbuf_puts(&w->b, ",\"name\":");
    gp_json_str(&w->b, name);
    put_pid_tid(w, track);
    gp_sbuf_puts(&w->b, ",\"ts\":");
    put_us(&w->b, w->raw0 + ts);
}

static void key(gp_sbuf *b, const char *k, int *comma)
{
    gp_json_key(b, k, (*comma)++);
}

static void key_int(gp_sbuf *b, const char *k, int64_t v, int *comma)
{
    key(b, k, comma);
    gp_json_int(b, v);
}

static void key_num(gp_sbuf *b, const char *k, double v, int *comma)
{
    key(b, k, comma);
    gp_json_num(b, v);
}

void gp_chrome_slice_args(const gp_trace *t, size_t i, int64_t arg_stream, gp_sbuf *b, int *comma)
{
    const gp_slice *s = &t->slices.v[i];
    const gp_track *tk = &t->tracks.v[s->track];
    int c = *comma;
    if (s->external_id != GP_NONE) key_int(b, "External id", s->external_id, &c);
    if (s->gpu != GP_NO_INDEX) {
        const gp_gpu_info *g = &t->gpu_info.v[s->gpu];
        if (g->device != GP_NONE) key_int(b, "device", g->device, &c);
        if (g->context != GP_NONE) key_int(b, "context", g->context, &c);
        if (g->stream != GP_NONE) key_int(b, "stream", g->stream, &c);
    } else if (arg_stream != GP_NONE) {
        key_int(b, "stream", arg_stream, &c);
    } else if (tk->type == GP_TRACK_GPU &&
               (gp_kind_mask_gpu_work() & GP_KIND_BIT(gp_slice_kind(t, s)))) {
        /* GPU work recorded without per-slice facts: its track's device and stream/queue */
        if (tk->device != GP_NONE) key_int(b, "device", tk->device, &c);
        if (tk->stream != GP_NONE) key_int(b, "stream", tk->stream, &c);
    }
    if (s->correlation != GP_NONE) key_int(b, "correlation", s->correlation, &c);
    if (s->gpu != GP_NO_INDEX) {
        const gp_gpu_info *g = &t->gpu_info.v[s->gpu];
        if (g->registers != GP_NONE) key_int(b, "registers per thread", g->registers, &c);
        if (g->shared_mem != GP_NONE) key_int(b, "shared memory", g->shared_mem, &c);
        if (!isnan(g->blocks_per_sm)) key_num(b, "blocks per SM", g->blocks_per_sm, &c);
        if (!isnan(g->warps_per_sm)) key_num(b, "warps per SM", g->warps_per_sm, &c);
        if (g->grid[0] || g->block[0]) {
            key(b, "grid", &c);
            gp_sbuf_printf(b, "[%d, %d, %d]", g->grid[0], g->grid[1], g->grid[2]);
            key(b, "block", &c);
            gp_sbuf_printf(b, "[%d, %d, %d]", g->block[0], g->block[1], g->block[2]);
        }
        if (!isnan(g->occupancy_pct)) key_num(b, "est. achieved occupancy %", g->occupancy_pct, &c);
        if (g->bytes != GP_NONE) {
            key_int(b, "bytes", g->bytes, &c);
            if (s->dur > 0) /* Kineto: bytes / ns = GB/s */
                key_num(b, "memory bandwidth (GB/s)", (double)g->bytes / (double)s->dur, &c);
        }
    }
    *comma = c;
}

/* Kineto's arguments rebuilt from the model (a trace loaded without its
 * args text: a run store, an import without GP_LOAD_KEEP_ARGS). */
static void synth_args(W *w, size_t i, int64_t arg_stream)
{
    int c = 0;
    gp_sbuf_puts(&w->b, ",\"args\":{");
    gp_chrome_slice_args(w->t, i, arg_stream, &w->b, &c);
    gp_sbuf_putc(&w->b, '}');
}

/* The raw args of owner i when refs (ascending) has them; *cur advances. */
static const gp_args_ref *args_of(const gp_args_ref *refs, size_t n, size_t *cur, size_t i)
{
    while (*cur < n && refs[*cur].owner < i) (*cur)++;
    return *cur < n && refs[*cur].owner == i ? &refs[*cur] : NULL;
}

static void put_raw_args(W *w, const gp_args_ref *r)
{
    gp_sbuf_puts(&w->b, ",\"args\":");
    gp_sbuf_add(&w->b, w->t->args_text.v + r->off, r->len);
}

static void header(W *w, const char *extra)
{
    const gp_trace *t = w->t;
    const gp_trace_meta *m = &t->meta;
    gp_sbuf *b = &w->b;
    gp_sbuf_putc(b, '{');
    /* distributedInfo first, "rank": N with a space: HTA finds a file's rank
     * with the regex "rank":\s+(\d+) on the first lines */
    if (m->rank != GP_NONE || m->world_size != GP_NONE || m->backend || m->dist_extra) {
        gp_sbuf_puts(b, "\"distributedInfo\": {");
        int c = 0;
        if (m->backend) {
            gp_sbuf_puts(b, "\"backend\": ");
            gp_json_str(b, gp_trace_s(t, m->backend));
            c = 1;
        }
        if (m->rank != GP_NONE) gp_sbuf_printf(b, "%s\"rank\": %d", c++ ? ", " : "", m->rank);
        if (m->world_size != GP_NONE)
            gp_sbuf_printf(b, "%s\"world_size\": %d", c++ ? ", " : "", m->world_size);
        if (m->dist_extra) {
            if (c) gp_sbuf_puts(b, ", ");
            gp_sbuf_puts(b, gp_trace_s(t, m->dist_extra));
        }
        gp_sbuf_puts(b, "},\n");
    }
    if (m->schema_version != GP_NONE)
        gp_sbuf_printf(b, "\"schemaVersion\":%d,\n", m->schema_version);
    if (t->devices.n) {
        gp_sbuf_puts(b, "\"deviceProperties\":[");
        for (size_t i = 0; i < t->devices.n; i++) {
            const gp_device_prop *d = &t->devices.v[i];
            gp_sbuf_printf(b, "%s\n{\"id\":%d,\"name\":", i ? "," : "", d->id);
            gp_json_str(b, gp_trace_s(t, d->name));
            gp_sbuf_printf(b,
                           ",\"totalGlobalMem\":%lld,\"computeMajor\":%d,\"computeMinor\":%d,"
                           "\"maxThreadsPerBlock\":%d,\"maxThreadsPerMultiprocessor\":%d,"
                           "\"regsPerBlock\":%d,\"regsPerMultiprocessor\":%d,\"warpSize\":%d,"
                           "\"sharedMemPerBlock\":%lld,\"sharedMemPerMultiprocessor\":%lld,"
                           "\"numSms\":%d,\"sharedMemPerBlockOptin\":%lld}",
                           (long long)d->total_global_mem, d->compute_major, d->compute_minor,
                           d->max_threads_per_block, d->max_threads_per_sm, d->regs_per_block,
                           d->regs_per_sm, d->warp_size, (long long)d->smem_per_block,
                           (long long)d->smem_per_sm, d->num_sms,
                           (long long)d->smem_per_block_optin);
        }
        gp_sbuf_puts(b, "],\n");
    }
    if (m->trace_name) {
        gp_sbuf_puts(b, "\"traceName\":");
        gp_json_str(b, gp_trace_s(t, m->trace_name));
        gp_sbuf_puts(b, ",\n");
    }
    gp_sbuf_puts(b, "\"displayTimeUnit\":");
    gp_json_str(b, m->display_time_unit ? gp_trace_s(t, m->display_time_unit) : "ns");
    if (m->has_base_time)
        gp_sbuf_printf(b, ",\n\"baseTimeNanoseconds\":%lld", (long long)m->base_time_ns);
    gp_sbuf_puts(b, ",\n");
    if (extra) gp_sbuf_puts(b, extra);
    gp_sbuf_puts(b, "\"otherData\":{\"generator\":\"gpuprof ");
    gp_sbuf_puts(b, gp_version());
    gp_sbuf_puts(b, "\",\"source\":");
    gp_json_str(b, m->source ? gp_trace_s(t, m->source) : "");
    gp_sbuf_puts(b, "},\n\"traceEvents\":[\n");
}

/* process_name / thread_name metadata (first event: no leading comma). */
static int metadata(W *w)
{
    const gp_trace *t = w->t;
    gp_u64map seen = {0};
    int first = 1;
    for (size_t k = 0; k < t->tracks.n; k++) {
        const gp_track *tk = &t->tracks.v[k];
        if (tk->process_name) {
            uint64_t key = gp_hash_u64((uint64_t)tk->pid ^ ((uint64_t)tk->pid_str << 40));
            uint64_t *slot = gp_u64map_slot(&seen, key, 0);
            if (!slot) {
                gp_u64map_free(&seen);
                return GP_ENOMEM;
            }
            if (!*slot) {
                *slot = 1;
                gp_sbuf_puts(&w->b, first ? "{\"ph\":\"M\",\"name\":\"process_name\""
                                          : ",\n{\"ph\":\"M\",\"name\":\"process_name\"");
                first = 0;
                put_pid_tid(w, (uint32_t)k);
                gp_sbuf_puts(&w->b, ",\"args\":{\"name\":");
                gp_json_str(&w->b, gp_trace_s(t, tk->process_name));
                gp_sbuf_puts(&w->b, "}}");
            }
        }
        if (tk->name) {
            gp_sbuf_puts(&w->b, first ? "{\"ph\":\"M\",\"name\":\"thread_name\""
                                      : ",\n{\"ph\":\"M\",\"name\":\"thread_name\"");
            first = 0;
            put_pid_tid(w, (uint32_t)k);
            gp_sbuf_puts(&w->b, ",\"args\":{\"name\":");
            gp_json_str(&w->b, gp_trace_s(t, tk->name));
            gp_sbuf_puts(&w->b, "}}");
        }
    }
    gp_u64map_free(&seen);
    /* the array's first element: a metadata event keeps every later one
     * comma-led even when the trace has no names */
    if (first)
        gp_sbuf_puts(&w->b, "{\"ph\":\"M\",\"name\":\"gpuprof\",\"pid\":0,\"tid\":0,\"args\":{}}");
    return 0;
}

/* ac2g flows from launches to their GPU work, for traces without flows. */
static int synth_flows(W *w, gp_export_stats *st)
{
    const gp_trace *t = w->t;
    gp_u64map launch = {0};
    for (size_t i = 0; i < t->slices.n; i++) {
        const gp_slice *s = &t->slices.v[i];
        gp_kind k = gp_slice_kind(t, s);
        if ((k == GP_K_RUNTIME || k == GP_K_DRIVER) && s->correlation != GP_NONE &&
            gp_u64map_put(&launch, (uint64_t)s->correlation, i)) {
            gp_u64map_free(&launch);
            return GP_ENOMEM;
        }
    }
    unsigned gm = gp_kind_mask_gpu_work();
    for (size_t i = 0; i < t->slices.n; i++) {
        const gp_slice *s = &t->slices.v[i];
        uint64_t li;
        if (!(gm & GP_KIND_BIT(gp_slice_kind(t, s))) || s->correlation == GP_NONE ||
            !gp_u64map_get(&launch, (uint64_t)s->correlation, &li))
            continue;
        const gp_slice *l = &t->slices.v[li];
        gp_sbuf_printf(&w->b, ",\n{\"ph\":\"s\",\"id\":%lld,\"cat\":\"ac2g\",\"name\":\"ac2g\"",
                       (long long)s->correlation);
        put_pid_tid(w, l->track);
        gp_sbuf_puts(&w->b, ",\"ts\":");
        put_us(&w->b, w->raw0 + l->ts);
        gp_sbuf_printf(
            &w->b, "},\n{\"ph\":\"f\",\"id\":%lld,\"cat\":\"ac2g\",\"name\":\"ac2g\",\"bp\":\"e\"",
            (long long)s->correlation);
        put_pid_tid(w, s->track);
        gp_sbuf_puts(&w->b, ",\"ts\":");
        put_us(&w->b, w->raw0 + s->ts);
        gp_sbuf_putc(&w->b, '}');
        st->flows += 2;
        st->flows_synthesized += 2;
        flush(w, 1 << 22);
    }
    gp_u64map_free(&launch);
    return 0;
}

int gp_chrome_write(const gp_trace *t, FILE *f, gp_export_stats *st)
{
    return gp_chrome_write_ex(t, f, NULL, st);
}

int gp_chrome_write_ex(const gp_trace *t, FILE *f, const char *extra, gp_export_stats *stp)
{
    gp_export_stats dummy;
    gp_export_stats *st = stp ? stp : &dummy;
    memset(st, 0, sizeof *st);
    W w = {t, f, {0}, t->meta.t0_abs_ns - (t->meta.has_base_time ? t->meta.base_time_ns : 0), 0};
    int rc = 0;
    header(&w, extra);
    if ((rc = metadata(&w))) goto done;
    size_t ac = 0, as = 0;
    for (size_t i = 0; i < t->slices.n; i++) {
        const gp_slice *s = &t->slices.v[i];
        put_head(&w, 'X', s->cat, gp_trace_s(t, s->name), s->track, s->ts);
        gp_sbuf_puts(&w.b, ",\"dur\":");
        put_us(&w.b, s->dur);
        const gp_args_ref *r = args_of(t->slice_args.v, t->slice_args.n, &ac, i);
        if (r) {
            put_raw_args(&w, r);
        } else {
            while (as < t->arg_streams.n && t->arg_streams.v[as].slice < i) as++;
            int64_t sv = as < t->arg_streams.n && t->arg_streams.v[as].slice == i
                             ? t->arg_streams.v[as].stream
                             : GP_NONE;
            synth_args(&w, i, sv);
        }
        gp_sbuf_putc(&w.b, '}');
        st->slices++;
        flush(&w, 1 << 22);
    }
    ac = 0;
    for (size_t i = 0; i < t->instants.n; i++) {
        const gp_instant *in = &t->instants.v[i];
        put_head(&w, 'i', in->cat, gp_trace_s(t, in->name), in->track, in->ts);
        gp_sbuf_printf(&w.b, ",\"s\":\"%c\"", in->scope ? in->scope : 't');
        const gp_args_ref *r = args_of(t->instant_args.v, t->instant_args.n, &ac, i);
        if (r) put_raw_args(&w, r);
        gp_sbuf_putc(&w.b, '}');
        st->instants++;
        flush(&w, 1 << 22);
    }
    for (size_t i = 0; i < t->mem_events.n; i++) {
        const gp_mem_event *m = &t->mem_events.v[i];
        gp_sbuf_puts(&w.b, ",\n{\"ph\":\"i\",\"cat\":\"cpu_instant_event\",\"s\":\"t\","
                           "\"name\":\"[memory]\"");
        put_pid_tid(&w, m->track);
        gp_sbuf_puts(&w.b, ",\"ts\":");
        put_us(&w.b, w.raw0 + m->ts);
        int c = 0;
        gp_sbuf_puts(&w.b, ",\"args\":{");
        if (m->total_reserved != GP_NONE) key_int(&w.b, "Total Reserved", m->total_reserved, &c);
        if (m->total_allocated != GP_NONE) key_int(&w.b, "Total Allocated", m->total_allocated, &c);
        key_int(&w.b, "Bytes", m->bytes, &c);
        key(&w.b, "Addr", &c);
        gp_sbuf_printf(&w.b, "%llu", (unsigned long long)m->addr);
        if (m->device_id != GP_NONE) key_int(&w.b, "Device Id", m->device_id, &c);
        if (m->device_type != GP_NONE) key_int(&w.b, "Device Type", m->device_type, &c);
        gp_sbuf_puts(&w.b, "}}");
        st->mem_events++;
        flush(&w, 1 << 22);
    }
    for (size_t i = 0; i < t->counters.n; i++) {
        const gp_counter_sample *c = &t->counters.v[i];
        const gp_series *se = &t->series.v[c->series];
        gp_sbuf_puts(&w.b, ",\n{\"ph\":\"C\",\"name\":");
        gp_json_str(&w.b, gp_trace_s(t, se->name));
        put_pid_tid(&w, se->track);
        gp_sbuf_puts(&w.b, ",\"ts\":");
        put_us(&w.b, w.raw0 + c->ts);
        gp_sbuf_puts(&w.b, ",\"args\":{\"value\":");
        gp_json_num(&w.b, c->value);
        gp_sbuf_puts(&w.b, "}}");
        st->counters++;
        flush(&w, 1 << 22);
    }
    for (size_t i = 0; i < t->flows.n; i++) {
        const gp_flow *fl = &t->flows.v[i];
        gp_sbuf_printf(&w.b, ",\n{\"ph\":\"%c\"", fl->ph);
        if (fl->id != GP_NONE) gp_sbuf_printf(&w.b, ",\"id\":%lld", (long long)fl->id);
        gp_sbuf_puts(&w.b, ",\"cat\":");
        gp_json_str(&w.b, gp_trace_s(t, t->cats.v[fl->cat].name));
        if (fl->name) {
            gp_sbuf_puts(&w.b, ",\"name\":");
            gp_json_str(&w.b, gp_trace_s(t, fl->name));
        }
        if (fl->bind_enclosing) gp_sbuf_puts(&w.b, ",\"bp\":\"e\"");
        put_pid_tid(&w, fl->track);
        gp_sbuf_puts(&w.b, ",\"ts\":");
        put_us(&w.b, w.raw0 + fl->ts);
        gp_sbuf_putc(&w.b, '}');
        st->flows++;
        flush(&w, 1 << 22);
    }
    /* a JSON source's flows are exactly its own; runs and recorders get ac2g */
    if (!t->flows.n && !t->meta.has_trace_events && (rc = synth_flows(&w, st))) goto done;
    gp_sbuf_puts(&w.b, "\n]}\n");
    flush(&w, 0);
    if (w.io_err) rc = GP_EIO;
done:
    gp_sbuf_free(&w.b);
    return rc;
}
