/* record/export.c: writes a profiler's results as Chrome/Kineto trace JSON
 * through the one Chrome writer, render/chrome.c (gp_export_trace), and as
 * the same trace plus a "gpuprof" results section (gp_export_json), both
 * readable by `gpuprof summary` and HTA; the gp_exp_* pieces serve the
 * streaming sinks (stream.c), which write slices as they are drained. */
#include "core/sbuf.h"
#include "analysis/summary.h"
#include "core/stats.h"
#include "core/afile.h"
#include "record/recorder.h"
#include "render/chrome.h"
#include "store/store.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ns -> microseconds with exactly three decimals (no precision loss). */
void gp_exp_us(gp_sbuf *b, int64_t ns)
{
    if (ns < 0) {
        gp_sbuf_putc(b, '-');
        ns = -ns;
    }
    /* no printf: the stream sink writes two of these per range */
    gp_json_int(b, ns / 1000);
    char f[4] = {(char)('.'), (char)('0' + ns % 1000 / 100), (char)('0' + ns % 100 / 10),
                 (char)('0' + ns % 10)};
    gp_sbuf_add(b, f, 4);
}

static const char *dev_name(int d)
{
    return d == GP_DEV_CPU ? "cpu" : d == GP_DEV_GPU ? "gpu" : NULL;
}

static const char *backend_name(int b)
{
    switch (b) {
    case GP_BACKEND_CPU:
        return "cpu";
    case GP_BACKEND_CUDA:
        return "cuda";
    case GP_BACKEND_OPENCL:
        return "opencl";
    default:
        return NULL;
    }
}

/* Appends the process and thread metadata events, each preceded by ",\n"
 * except the very first (caller holds p->mu). */
void gp_exp_meta(gp_profiler *p, gp_sbuf *b, int first)
{
    const gp_trace *t = p->tr;
    long pid = (long)getpid();
    gp_sbuf_printf(b,
                   "%s{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%ld,\"tid\":0,"
                   "\"args\":{\"name\":",
                   first ? "" : ",\n", pid);
    gp_json_str(b, p->name);
    gp_sbuf_puts(b, "}}");
    for (size_t i = 0; i < t->tracks.n; i++) {
        const gp_track *k = &t->tracks.v[i];
        gp_sbuf_printf(b,
                       ",\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%ld,\"tid\":%lld,"
                       "\"args\":{\"name\":",
                       pid, (long long)k->tid);
        if (k->name)
            gp_json_str(b, gp_trace_s(t, k->name));
        else
            gp_sbuf_printf(b, "\"thread %lld\"", (long long)k->tid);
        gp_sbuf_puts(b, "}}");
        /* GPU tracks sort after the host threads */
        gp_sbuf_printf(b,
                       ",\n{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":%ld,"
                       "\"tid\":%lld,\"args\":{\"sort_index\":%d}}",
                       pid, (long long)k->tid, k->type == GP_TRACK_GPU ? 1000 + (int)i : (int)i);
    }
}

/* Appends the head of slice i: ",\n{...,\"tid\":N", the same for every
 * slice of one (category, name, track) (caller holds p->mu). */
void gp_exp_slice_head(gp_profiler *p, gp_sbuf *b, size_t i)
{
    const gp_trace *t = p->tr;
    const gp_slice *s = &t->slices.v[i];
    gp_sbuf_puts(b, ",\n{\"ph\":\"X\",\"cat\":");
    gp_json_str(b, gp_trace_s(t, t->cats.v[s->cat].name));
    gp_sbuf_puts(b, ",\"name\":");
    gp_json_str(b, gp_trace_s(t, s->name));
    gp_sbuf_puts(b, ",\"pid\":");
    gp_json_int(b, p->pid);
    gp_sbuf_puts(b, ",\"tid\":");
    gp_json_int(b, t->tracks.v[s->track].tid);
}

/* Appends range slice i's self time args: "self_ns", and "inline_child_ns"
 * (the time of its children aggregated inline; docs/api.md "Self time")
 * when there are any. */
static void range_self(gp_profiler *p, gp_sbuf *b, size_t i, int *comma)
{
    gp_json_key(b, "self_ns", (*comma)++);
    gp_json_int(b, p->ext.v[i].self_ns);
    int64_t inl = p->tr->inline_children.n ? gp_trace_inline_child_ns(p->tr, i) : 0;
    if (inl > 0) {
        gp_json_key(b, "inline_child_ns", (*comma)++);
        gp_json_int(b, inl);
    }
}

/* Appends the rest of slice i after its head: ",\"ts\":...}" (caller holds
 * p->mu). */
void gp_exp_slice_rest(gp_profiler *p, gp_sbuf *b, size_t i)
{
    const gp_trace *t = p->tr;
    const gp_slice *s = &t->slices.v[i];
    const gp_slice_ext *x = &p->ext.v[i];
    gp_sbuf_puts(b, ",\"ts\":");
    gp_exp_us(b, s->ts);
    gp_sbuf_puts(b, ",\"dur\":");
    gp_exp_us(b, s->dur);
    int comma = 0;
    gp_sbuf_puts(b, ",\"args\":{");
    if (dev_name(x->device)) {
        gp_json_key(b, "device", comma++);
        gp_json_str(b, dev_name(x->device));
    }
    if (backend_name(x->backend)) {
        gp_json_key(b, "backend", comma++);
        gp_json_str(b, backend_name(x->backend));
    }
    if (x->bytes >= 0) {
        gp_json_key(b, "bytes", comma++);
        gp_json_int(b, x->bytes);
    }
    if (s->cat == p->cat_range) range_self(p, b, i, &comma);
    for (uint32_t a = 0; a < x->nattr; a++) {
        const gp_attr *at = &p->attrs.v[x->attr_first + a];
        gp_json_key(b, gp_trace_s(t, at->key), comma++);
        if (at->is_str)
            gp_json_str(b, gp_attr_text(p, at));
        else
            gp_json_int(b, at->ival);
    }
    gp_sbuf_puts(b, "}}");
}

/* Appends the counter samples as ",\n{...}" events (caller holds p->mu). */
void gp_exp_counters(gp_profiler *p, gp_sbuf *b, size_t from, size_t to)
{
    const gp_trace *t = p->tr;
    long pid = (long)getpid();
    for (size_t i = from; i < to && i < t->counters.n; i++) {
        const gp_counter_sample *c = &t->counters.v[i];
        gp_sbuf_puts(b, ",\n{\"ph\":\"C\",\"name\":");
        gp_json_str(b, gp_trace_s(t, t->series.v[c->series].name));
        gp_sbuf_printf(b, ",\"pid\":%ld,\"tid\":0,\"ts\":", pid);
        gp_exp_us(b, c->ts);
        gp_sbuf_puts(b, ",\"args\":{\"value\":");
        gp_json_num(b, c->value);
        gp_sbuf_puts(b, "}}");
    }
}

/* The tracker's [memory] events (as chrome.c writes them for exports). */
void gp_exp_mem_events(gp_profiler *p, gp_sbuf *b, size_t from, size_t to)
{
    const gp_trace *t = p->tr;
    for (size_t i = from; i < to && i < t->mem_events.n; i++) {
        const gp_mem_event *m = &t->mem_events.v[i];
        gp_sbuf_puts(b, ",\n{\"ph\":\"i\",\"cat\":\"cpu_instant_event\",\"s\":\"t\","
                        "\"name\":\"[memory]\",\"pid\":");
        gp_json_int(b, p->pid);
        gp_sbuf_puts(b, ",\"tid\":"); /* the calling thread's (0: the process's) */
        gp_json_int(b, m->track < t->tracks.n ? t->tracks.v[m->track].tid : 0);
        gp_sbuf_puts(b, ",\"ts\":");
        gp_exp_us(b, m->ts);
        gp_sbuf_puts(b, ",\"args\":{\"Total Allocated\":");
        gp_json_int(b, m->total_allocated);
        gp_sbuf_puts(b, ",\"Bytes\":");
        gp_json_int(b, m->bytes);
        gp_sbuf_puts(b, ",\"Addr\":");
        gp_json_int(b, (int64_t)m->addr);
        gp_sbuf_puts(b, "}}");
    }
}

/* Appends "rollover":[...]: the aggregated ranges of p->tr->aggs, read back
 * by the importer into trace->aggs (caller holds p->mu). */
void gp_exp_rollover(gp_profiler *p, gp_sbuf *b)
{
    const gp_trace *t = p->tr;
    gp_sbuf_puts(b, "\"rollover\":[");
    for (size_t i = 0; i < t->aggs.n; i++) {
        const gp_agg_row *r = &t->aggs.v[i];
        gp_sbuf_puts(b, i ? ",\n{\"name\":" : "\n{\"name\":");
        gp_json_str(b, gp_trace_s(t, r->name));
        gp_sbuf_puts(b, ",\"cat\":");
        gp_json_str(b, gp_trace_s(t, t->cats.v[r->cat].name));
        gp_sbuf_printf(
            b,
            ",\"pid\":%ld,\"tid\":%lld,\"device\":%d,\"backend\":%d,\"count\":%llu,"
            "\"total_ns\":%lld,\"self_ns\":%lld,\"min_ns\":%lld,\"max_ns\":%lld,"
            "\"bytes\":%lld,\"m2_ns2\":",
            (long)getpid(), (long long)(r->track != GP_NO_INDEX ? t->tracks.v[r->track].tid : 0),
            r->device, r->backend, (unsigned long long)r->count, (long long)r->total_ns,
            (long long)r->self_ns, (long long)r->min_ns, (long long)r->max_ns, (long long)r->bytes);
        gp_json_num(b, r->m2);
        if (gp_entry_sum_any(&r->em)) {
            int c = 1;
            gp_entry_sum_json(b, &r->em, &c);
        }
        gp_sbuf_puts(b, ",\"first_us\":");
        gp_exp_us(b, r->first_ns);
        gp_sbuf_puts(b, ",\"last_us\":");
        gp_exp_us(b, r->last_ns);
        gp_sbuf_puts(b, ",\"sketch\":\"");
        int first = 1;
        for (unsigned k = 0; r->sketch && k < GP_SKETCH_BUCKETS; k++) {
            if (!r->sketch[k]) continue;
            gp_sbuf_printf(b, "%s%u:%llu", first ? "" : ",", k, (unsigned long long)r->sketch[k]);
            first = 0;
        }
        gp_sbuf_puts(b, "\"}");
    }
    gp_sbuf_puts(b, "]");
}

/* A view of p->tr for the one Chrome writer (render/chrome.c): the same
 * events with each slice's args text built from its Kineto facts (GPU work:
 * device, stream, correlation) and gpuprof's own (device "cpu"/"gpu" of a
 * range, backend, bytes, self_ns, attributes). Caller holds p->mu and frees
 * view->args_text / view->slice_args. */
static int trace_view(gp_profiler *p, gp_trace *view)
{
    const gp_trace *t = p->tr;
    *view = *t;
    memset(&view->args_text, 0, sizeof view->args_text);
    memset(&view->slice_args, 0, sizeof view->slice_args);
    memset(&view->instant_args, 0, sizeof view->instant_args);
    /* ts are ns since wall0 (baseTimeNanoseconds): model time 0 is raw 0 */
    view->meta.has_base_time = 1;
    view->meta.base_time_ns = p->wall0;
    view->meta.t0_abs_ns = p->wall0;
    view->meta.trace_name = 0;
    gp_sbuf b = {0};
    size_t em = 0; /* t->entry_metrics, ascending slice */
    for (size_t i = 0; i < t->slices.n; i++) {
        const gp_slice *s = &t->slices.v[i];
        const gp_slice_ext *x = &p->ext.v[i];
        gp_sbuf_reset(&b);
        gp_sbuf_putc(&b, '{');
        int comma = 0;
        gp_chrome_slice_args(t, i, GP_NONE, &b, &comma);
        if (t->tracks.v[s->track].type != GP_TRACK_GPU && dev_name(x->device)) {
            gp_json_key(&b, "device", comma++);
            gp_json_str(&b, dev_name(x->device));
        }
        if (backend_name(x->backend)) {
            gp_json_key(&b, "backend", comma++);
            gp_json_str(&b, backend_name(x->backend));
        }
        if (x->bytes >= 0 && (s->gpu == GP_NO_INDEX || t->gpu_info.v[s->gpu].bytes == GP_NONE)) {
            gp_json_key(&b, "bytes", comma++);
            gp_json_int(&b, x->bytes);
        }
        if (s->cat == p->cat_range) range_self(p, &b, i, &comma);
        while (em < t->entry_metrics.n && t->entry_metrics.v[em].slice < i) em++;
        if (em < t->entry_metrics.n && t->entry_metrics.v[em].slice == i)
            gp_entry_sum_json(&b, &t->entry_metrics.v[em].m, &comma);
        for (uint32_t a = 0; a < x->nattr; a++) {
            const gp_attr *at = &p->attrs.v[x->attr_first + a];
            gp_json_key(&b, gp_trace_s(t, at->key), comma++);
            if (at->is_str)
                gp_json_str(&b, gp_attr_text(p, at));
            else
                gp_json_int(&b, at->ival);
        }
        gp_sbuf_putc(&b, '}');
        if (gp_trace_add_args(view, 0, (uint32_t)i, b.s, b.n)) {
            gp_sbuf_free(&b);
            return GP_ENOMEM;
        }
    }
    gp_sbuf_free(&b);
    return 0;
}

static void view_free(gp_trace *view)
{
    GP_VEC_FREE(view->args_text);
    GP_VEC_FREE(view->slice_args);
    GP_VEC_FREE(view->instant_args);
}

/* Writes the profiler's trace to path with the extra top-level members
 * `extra` (or NULL); caller holds p->mu. */
static int write_trace(gp_profiler *p, const char *path, const char *extra)
{
    gp_trace view;
    int rc = trace_view(p, &view);
    if (rc) {
        view_free(&view);
        gp_rec_seterr(p, "%s: out of memory", path);
        return rc;
    }
    /* in the program's thread: a write past the file size limit must fail
     * (EFBIG), not end the program with SIGXFSZ */
    gp_xfsz_guard g;
    gp_xfsz_block(&g);
    /* replaced whole or not at all: a failed write leaves an earlier
     * export as it was */
    gp_afile af;
    if (gp_afile_open(&af, path)) {
        rc = GP_EIO;
    } else {
        rc = gp_chrome_write_ex(&view, af.f, extra, NULL);
        if (gp_afile_close(&af, rc != 0) != 0 && !rc) rc = GP_EIO;
    }
    int e = errno;
    gp_xfsz_unblock(&g);
    if (rc) gp_rec_seterr(p, "%s: %s", path, rc == GP_ENOMEM ? "out of memory" : strerror(e));
    view_free(&view);
    return rc;
}

void gp_exp_header(gp_profiler *p, gp_sbuf *b)
{
    /* "gpuprofStream" first: the importer reads a stream cut short by a
     * crash up to the cut (docs/api.md, "Stream sink"); the split import
     * finds it in the file's first bytes */
    gp_sbuf_printf(b,
                   "{\"gpuprofStream\":1,\"displayTimeUnit\":\"ns\",\"baseTimeNanoseconds\":%lld,"
                   "\"traceName\":",
                   (long long)p->wall0);
    gp_json_str(b, p->name);
    gp_sbuf_puts(b, ",\n");
}

int gp_export_trace(gp_profiler *p, const char *path)
{
    gp_sbuf extra = {0};
    pthread_mutex_lock(&p->mu);
    gp_rec_drain(p);
    gp_cuda_resolve_(p, 0);
    gp_cl_resolve_(p, 0);
    gp_rec_collect_aggs(p, 1);
    gp_rec_entry_metrics(p);
    gp_sbuf_puts(&extra, "\"gpuprof\":{\"schema\":\"gpuprof-lib-1\",");
    gp_exp_rollover(p, &extra);
    gp_sbuf_puts(&extra, "},\n");
    int rc = write_trace(p, path, gp_sbuf_cstr(&extra));
    pthread_mutex_unlock(&p->mu);
    gp_sbuf_free(&extra);
    return rc;
}

static void row_json(gp_sbuf *b, const gp_summary_row *r)
{
    gp_sbuf_puts(b, "{\"name\":");
    gp_json_str(b, r->name);
    gp_sbuf_puts(b, ",\"kind\":");
    gp_json_str(b, strcmp(r->group, "annotation") == 0 ? "range" : r->group);
    gp_sbuf_printf(b,
                   ",\"count\":%llu,\"total_ns\":%lld,\"self_ns\":%lld,\"min_ns\":%lld,"
                   "\"max_ns\":%lld",
                   (unsigned long long)r->count, (long long)r->total_ns, (long long)r->self_ns,
                   (long long)r->min_ns, (long long)r->max_ns);
    const char *k[] = {"mean_ns", "std_ns", "p50_ns", "p95_ns", "p99_ns"};
    double v[] = {r->mean_ns, r->std_ns, r->p50_ns, r->p95_ns, r->p99_ns};
    for (int i = 0; i < 5; i++) {
        gp_json_key(b, k[i], 1);
        gp_json_num(b, v[i]);
    }
    if (r->bytes >= 0) gp_sbuf_printf(b, ",\"bytes\":%lld", (long long)r->bytes);
    gp_entry_sum e = {r->gpu_timers, r->gpu_ns,      r->xfers, r->xfer_ns,     r->xfer_bytes,
                      r->allocs,     r->alloc_bytes, r->frees, r->freed_bytes, r->peak_bytes};
    if (gp_entry_sum_any(&e)) {
        int c = 1;
        gp_entry_sum_json(b, &e, &c);
    }
    gp_sbuf_putc(b, '}');
}

int gp_export_json(gp_profiler *p, const char *path)
{
    gp_summary_row *rows = NULL;
    gp_kernel_row *krows = NULL;
    size_t n = 0, nk = 0;
    if (gp_summary_rows(p, &rows, &n) || gp_kernel_stats(p, &krows, &nk)) {
        gp_summary_rows_free(rows, n);
        return GP_ENOMEM;
    }
    gp_sbuf b = {0};
    pthread_mutex_lock(&p->mu);
    gp_rec_drain(p);
    gp_rec_collect_aggs(p, 1);
    gp_rec_entry_metrics(p);
    gp_sbuf_printf(&b, "\"gpuprof\":{\"schema\":\"gpuprof-lib-1\",\"dropped\":%llu,",
                   (unsigned long long)gp_rec_count(p, 0));
    gp_exp_rollover(p, &b);
    gp_sbuf_puts(&b, ",\n\"summary\":[");
    for (size_t i = 0; i < n; i++) {
        if (i) gp_sbuf_putc(&b, ',');
        gp_sbuf_puts(&b, "\n");
        row_json(&b, &rows[i]);
    }
    gp_sbuf_puts(&b, "],\n\"kernels\":[");
    for (size_t i = 0; i < nk; i++) {
        const gp_kernel_row *r = &krows[i];
        gp_sbuf_puts(&b, i ? ",\n{\"name\":" : "\n{\"name\":");
        gp_json_str(&b, r->name);
        gp_sbuf_printf(&b,
                       ",\"backend\":\"%s\",\"count\":%llu,\"total_ns\":%lld,\"min_ns\":%lld,"
                       "\"max_ns\":%lld,\"mean_ns\":",
                       r->backend == GP_BACKEND_OPENCL ? "opencl" : "cuda",
                       (unsigned long long)r->count, (long long)r->total_ns, (long long)r->min_ns,
                       (long long)r->max_ns);
        gp_json_num(&b, r->mean_ns);
        gp_sbuf_puts(&b, ",\"std_ns\":");
        gp_json_num(&b, r->std_ns);
        gp_sbuf_putc(&b, '}');
    }
    gp_sbuf_puts(&b, "],\n\"observations\":{");
    int comma = 0;
    for (size_t i = 0; i < p->obs.n; i++) {
        const gp_obs *o = &p->obs.v[i];
        if (!o->v.n) continue;
        double *tmp = malloc(o->v.n * sizeof *tmp);
        if (!tmp) continue;
        memcpy(tmp, o->v.v, o->v.n * sizeof *tmp);
        gp_dstats st;
        gp_stats_f64(tmp, o->v.n, &st);
        free(tmp);
        gp_json_key(&b, gp_trace_s(p->tr, o->name), comma++);
        gp_sbuf_printf(&b, "{\"count\":%llu", (unsigned long long)st.count);
        const char *k[] = {"sum", "mean", "std", "min", "max", "p50", "p95", "p99"};
        double v[] = {st.sum, st.mean, st.std, st.min, st.max, st.p50, st.p95, st.p99};
        for (int j = 0; j < 8; j++) {
            gp_json_key(&b, k[j], 1);
            gp_json_num(&b, v[j]);
        }
        gp_sbuf_putc(&b, '}');
    }
    gp_sbuf_printf(&b, "},\n\"memory\":{\"current_bytes\":%lld,\"peak_bytes\":%lld,\"buffers\":[",
                   (long long)p->mem_cur, (long long)p->mem_peak);
    for (size_t i = 0; i < p->mem.n; i++) {
        const gp_membuf *m = &p->mem.v[i];
        gp_sbuf_puts(&b, i ? ",{\"name\":" : "{\"name\":");
        gp_json_str(&b, m->name);
        gp_sbuf_puts(&b, ",\"shape\":[");
        for (int d = 0; d < m->ndim; d++)
            gp_sbuf_printf(&b, "%s%lld", d ? "," : "", (long long)m->shape[d]);
        gp_sbuf_puts(&b, "],\"dtype\":");
        gp_json_str(&b, m->dtype);
        gp_sbuf_printf(&b, ",\"bytes\":%lld}", (long long)m->bytes);
    }
    gp_sbuf_puts(&b, "]},\n\"sessions\":[");
    for (size_t i = 0; i < p->sessions.n; i++) {
        if (i) gp_sbuf_puts(&b, ",\n");
        gp_sbuf_puts(&b, p->sessions.v[i]);
    }
    gp_sbuf_puts(&b, "]},\n");
    int rc = write_trace(p, path, gp_sbuf_cstr(&b));
    pthread_mutex_unlock(&p->mu);
    gp_summary_rows_free(rows, n);
    gp_kernel_rows_free(krows, nk);
    gp_sbuf_free(&b);
    return rc;
}
