/* tests/trace_digest.h: a 64-bit digest of everything in a trace model, field
 * by field (never struct padding), for tests and fuzz targets that require two
 * ways of building a model to give the same one (scanning paths, parts). */
#ifndef GP_TESTS_TRACE_DIGEST_H
#define GP_TESTS_TRACE_DIGEST_H
#include "trace/import.h"
#include "trace/trace.h"
#include <stdio.h>
#include <string.h>

static inline void td_mix(uint64_t *h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) *h = (*h ^ b[i]) * 1099511628211ull;
}
/* mixes one scalar field (an expression, so several fit on one line) */
#define TD(h, x) td_mix(h, &(__typeof__(x)){(x)}, sizeof(x))

/* Digest of the model: strings, categories, tracks, every event array and
 * the metadata. Equal models give equal digests. */
static inline uint64_t trace_digest(const gp_trace *t)
{
    uint64_t h = 14695981039346656037ull;
    uint32_t ns = gp_strtab_count(t->strings);
    TD(&h, ns);
    for (uint32_t i = 0; i < ns; i++) {
        uint32_t n = gp_strtab_len(t->strings, i);
        TD(&h, n);
        td_mix(&h, gp_strtab_get(t->strings, i), n);
    }
    for (size_t i = 0; i < t->cats.n; i++) TD(&h, t->cats.v[i].name), TD(&h, t->cats.v[i].kind);
    for (size_t i = 0; i < t->tracks.n; i++) {
        const gp_track *k = &t->tracks.v[i];
        TD(&h, k->pid), TD(&h, k->tid), TD(&h, k->pid_str), TD(&h, k->tid_str);
        TD(&h, k->name), TD(&h, k->process_name), TD(&h, k->type), TD(&h, k->device);
        TD(&h, k->stream);
    }
    for (size_t i = 0; i < t->slices.n; i++) {
        const gp_slice *s = &t->slices.v[i];
        TD(&h, s->ts), TD(&h, s->dur), TD(&h, s->correlation), TD(&h, s->external_id);
        TD(&h, s->name), TD(&h, s->track), TD(&h, s->gpu), TD(&h, s->cat), TD(&h, s->flags);
    }
    for (size_t i = 0; i < t->gpu_info.n; i++) {
        const gp_gpu_info *g = &t->gpu_info.v[i];
        TD(&h, g->device), TD(&h, g->context), TD(&h, g->stream);
        for (int j = 0; j < 3; j++) TD(&h, g->grid[j]), TD(&h, g->block[j]);
        TD(&h, g->registers), TD(&h, g->shared_mem), TD(&h, g->blocks_per_sm);
        TD(&h, g->warps_per_sm), TD(&h, g->occupancy_pct), TD(&h, g->bytes);
        TD(&h, g->copy_kind), TD(&h, g->src_kind), TD(&h, g->dst_kind);
    }
    for (size_t i = 0; i < t->flows.n; i++) {
        const gp_flow *f = &t->flows.v[i];
        TD(&h, f->ts), TD(&h, f->id), TD(&h, f->track), TD(&h, f->name), TD(&h, f->cat);
        TD(&h, f->ph);
        TD(&h, f->bind_enclosing);
    }
    for (size_t i = 0; i < t->instants.n; i++) {
        const gp_instant *x = &t->instants.v[i];
        TD(&h, x->ts), TD(&h, x->name), TD(&h, x->track), TD(&h, x->cat), TD(&h, x->scope);
    }
    for (size_t i = 0; i < t->mem_events.n; i++) {
        const gp_mem_event *m = &t->mem_events.v[i];
        TD(&h, m->ts), TD(&h, m->addr), TD(&h, m->bytes), TD(&h, m->total_allocated);
        TD(&h, m->total_reserved), TD(&h, m->track), TD(&h, m->device_type), TD(&h, m->device_id);
    }
    for (size_t i = 0; i < t->counters.n; i++) {
        const gp_counter_sample *c = &t->counters.v[i];
        TD(&h, c->ts), TD(&h, c->value), TD(&h, c->series);
    }
    for (size_t i = 0; i < t->series.n; i++)
        TD(&h, t->series.v[i].name), TD(&h, t->series.v[i].track);
    for (size_t i = 0; i < t->devices.n; i++) {
        const gp_device_prop *d = &t->devices.v[i];
        TD(&h, d->id), TD(&h, d->name), TD(&h, d->total_global_mem), TD(&h, d->compute_major);
        TD(&h, d->compute_minor), TD(&h, d->num_sms), TD(&h, d->warp_size);
        TD(&h, d->max_threads_per_block), TD(&h, d->max_threads_per_sm), TD(&h, d->regs_per_block);
        TD(&h, d->regs_per_sm), TD(&h, d->smem_per_block), TD(&h, d->smem_per_sm);
        TD(&h, d->smem_per_block_optin);
    }
    for (size_t i = 0; i < t->arg_streams.n; i++)
        TD(&h, t->arg_streams.v[i].slice), TD(&h, t->arg_streams.v[i].stream);
    for (size_t i = 0; i < t->tracked_buffers.n; i++) {
        const gp_tracked_buffer *b = &t->tracked_buffers.v[i];
        TD(&h, b->name), TD(&h, b->dtype), TD(&h, b->bytes);
    }
    const gp_trace_meta *m = &t->meta;
    TD(&h, m->rank), TD(&h, m->world_size), TD(&h, m->backend), TD(&h, m->dist_extra);
    TD(&h, m->source);
    TD(&h, m->trace_name), TD(&h, m->display_time_unit), TD(&h, m->schema_version);
    TD(&h, m->has_base_time), TD(&h, m->base_time_ns), TD(&h, m->t0_abs_ns), TD(&h, m->ts_form);
    TD(&h, m->fractional_ts), TD(&h, m->events_read), TD(&h, m->events_dropped_no_dur);
    TD(&h, m->unmatched_begin), TD(&h, m->unmatched_end), TD(&h, m->unterminated);
    TD(&h, m->import_parts), TD(&h, m->has_trace_events), TD(&h, m->has_tracked_memory);
    TD(&h, m->tracked_current_bytes), TD(&h, m->tracked_peak_bytes);
    TD(&h, t->t_begin), TD(&h, t->t_end);
    return h;
}

/* What importing one input gave: return code, digest and slice count of the
 * model (0 when none), and the error line. */
typedef struct outcome {
    int rc;
    uint64_t digest;
    size_t slices;
    char msg[512];
} outcome;

/* Imports path (or, when path is NULL, the n bytes at mem) with `threads`
 * threads under the current environment and returns what it gave. */
static inline outcome import_outcome(const char *path, const char *mem, size_t n, int threads)
{
    outcome o;
    memset(&o, 0, sizeof o);
    gp_trace *t = NULL;
    gp_err err;
    memset(&err, 0, sizeof err);
    gp_import_opts opts = {0, threads, 0};
    o.rc = path ? gp_import_json_file(path, &opts, &t, &err)
                : gp_import_json_mem(mem, n, "mem.json", &t, &err);
    if (t) {
        o.digest = trace_digest(t);
        o.slices = t->slices.n;
        gp_trace_destroy(t);
    }
    snprintf(o.msg, sizeof o.msg, "%s", o.rc ? err.msg : "");
    return o;
}

#endif
