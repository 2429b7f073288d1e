/* record/stream.c: the stream sink (GP_SINK_STREAM). The drain writes the
 * ranges it has turned into slices to a Chrome trace file and drops them
 * from memory, folding each into per-name statistics (so results stay
 * exact); kernel timings, counters, metadata and the ranges aggregated
 * inline are written when the profiler is destroyed. */
#include "core/sbuf.h"
#include "core/sketch.h"
#include "record/recorder.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct gp_stream {
    FILE *f;
    char *path;
    int err;                 /* errno of the first failed write (later output is skipped) */
    gp_u64map row_of;        /* name id -> index in rows */
    GP_VEC(gp_agg_row) rows; /* statistics of the streamed ranges */
};

static void put(gp_profiler *p, gp_sbuf *b)
{
    gp_stream *st = p->stream;
    if (!st->err && gp_sbuf_write(b, st->f) != 0) {
        st->err = errno ? errno : EIO;
        gp_rec_seterr(p, "%s: %s (stream sink: later events are counted as dropped)", st->path,
                      strerror(st->err));
    }
    gp_sbuf_reset(b);
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
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    st->f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!st->path || !st->f) {
        if (fd >= 0 && !st->f) close(fd);
        free(st->path);
        free(st);
        return GP_EIO;
    }
    p->stream = st;
    gp_sbuf b = {0};
    gp_exp_header(p, &b);
    gp_sbuf_puts(&b, "\"traceEvents\":[\n");
    gp_exp_meta(p, &b, 1);
    put(p, &b);
    gp_sbuf_free(&b);
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
        gp_agg_row r = {0};
        r.name = s->name;
        r.cat = s->cat;
        r.track = GP_NO_INDEX;
        r.bytes = -1;
        r.min_ns = INT64_MAX;
        r.max_ns = INT64_MIN;
        r.first_ns = s->ts;
        r.last_ns = s->ts + s->dur;
        r.device = x->device;
        r.backend = x->backend;
        r.sketch = calloc(GP_SKETCH_BUCKETS, sizeof *r.sketch);
        if (!r.sketch || GP_VEC_PUSH(st->rows, r)) {
            free(r.sketch);
            return GP_ENOMEM;
        }
        *slot = st->rows.n - 1;
    }
    gp_agg_row *r = &st->rows.v[*slot];
    /* Welford's update of the squared deviations */
    double old_mean = r->count ? (double)r->total_ns / (double)r->count : 0;
    r->count++;
    r->total_ns += s->dur;
    double new_mean = (double)r->total_ns / (double)r->count;
    r->m2 += ((double)s->dur - old_mean) * ((double)s->dur - new_mean);
    r->self_ns += x->self_ns;
    if (s->dur < r->min_ns) r->min_ns = s->dur;
    if (s->dur > r->max_ns) r->max_ns = s->dur;
    if (x->bytes >= 0) r->bytes = (r->bytes < 0 ? 0 : r->bytes) + x->bytes;
    if (s->ts < r->first_ns) r->first_ns = s->ts;
    if (s->ts + s->dur > r->last_ns) r->last_ns = s->ts + s->dur;
    r->sketch[gp_sketch_index(s->dur)]++;
    return 0;
}

int gp_stream_flush_(gp_profiler *p)
{
    gp_stream *st = p->stream;
    gp_trace *t = p->tr;
    gp_sbuf b = {0};
    size_t w = 0;
    int rc = 0, attrs_used = 0;
    for (size_t i = 0; i < t->slices.n; i++) {
        if (t->slices.v[i].cat != p->cat_range) { /* kernel timings: written at close */
            t->slices.v[w] = t->slices.v[i];
            p->ext.v[w] = p->ext.v[i];
            attrs_used |= p->ext.v[w].nattr != 0;
            w++;
            continue;
        }
        if (!st->err) gp_exp_slice(p, &b, i);
        if (fold(p, i)) rc = GP_ENOMEM;
        p->streamed_ranges++;
        if (b.n >= (1u << 20)) put(p, &b);
    }
    put(p, &b);
    gp_sbuf_free(&b);
    t->slices.n = p->ext.n = w;
    if (!attrs_used) p->attrs.n = 0;
    return st->err ? GP_EIO : rc;
}

int gp_stream_stats_(gp_profiler *p)
{
    gp_stream *st = p->stream;
    if (!st) return 0;
    for (size_t i = 0; i < st->rows.n; i++) {
        gp_agg_row r = st->rows.v[i];
        r.sketch = malloc(GP_SKETCH_BUCKETS * sizeof *r.sketch);
        if (!r.sketch) return GP_ENOMEM;
        memcpy(r.sketch, st->rows.v[i].sketch, GP_SKETCH_BUCKETS * sizeof *r.sketch);
        if (GP_VEC_PUSH(p->tr->aggs, r)) {
            free(r.sketch);
            return GP_ENOMEM;
        }
    }
    return 0;
}

void gp_stream_close_(gp_profiler *p)
{
    gp_stream *st = p->stream;
    if (!st) return;
    gp_stream_flush_(p);
    gp_cuda_resolve_(p, 0);
    gp_cl_resolve_(p, 0);
    gp_sbuf b = {0};
    gp_exp_meta(p, &b, 0);
    for (size_t i = 0; i < p->tr->slices.n; i++) gp_exp_slice(p, &b, i);
    gp_exp_counters(p, &b);
    gp_exp_mem_events(p, &b);
    /* the file's rollover holds only what is not in its events */
    gp_rec_collect_aggs(p, 0);
    gp_sbuf_printf(&b,
                   "\n],\n\"gpuprof\":{\"schema\":\"gpuprof-lib-1\",\"streamed_ranges\":%llu,"
                   "\"dropped\":%llu,",
                   (unsigned long long)p->streamed_ranges, (unsigned long long)gp_rec_count(p, 0));
    gp_exp_rollover(p, &b);
    gp_sbuf_puts(&b, "}}\n");
    put(p, &b);
    gp_sbuf_free(&b);
    if (fclose(st->f) != 0 && !st->err) {
        st->err = errno;
        gp_rec_seterr(p, "%s: %s", st->path, strerror(errno));
    }
    for (size_t i = 0; i < st->rows.n; i++) free(st->rows.v[i].sketch);
    GP_VEC_FREE(st->rows);
    gp_u64map_free(&st->row_of);
    free(st->path);
    free(st);
    p->stream = NULL;
    gp_rec_collect_aggs(p, 1);
}
