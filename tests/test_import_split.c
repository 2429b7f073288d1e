/* tests/test_import_split.c: the parallel import of large plain files gives
 * the same trace as the sequential one, slice for slice in the same order
 * (so exports do not depend on the thread count), including B/E pairs that
 * span the cut points, metadata after the events, and strings that look like
 * event starts. */
#include "test.h"
#include "render/chrome.h"
#include "trace/import.h"
#include "input_helpers.h"
#include "trace/input.h"
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct rec {
    int64_t ts, dur;
    char name[48];
    int64_t pid, tid, corr;
    char args[96]; /* the kept args text ("" when none) */
} rec;

static rec *records(const gp_trace *t)
{
    rec *r = calloc(t->slices.n + 1, sizeof *r);
    size_t a = 0;
    for (size_t i = 0; i < t->slices.n; i++) {
        const gp_slice *s = &t->slices.v[i];
        while (a < t->slice_args.n && t->slice_args.v[a].owner < i) a++;
        if (a < t->slice_args.n && t->slice_args.v[a].owner == i)
            snprintf(r[i].args, sizeof r[i].args, "%.*s", (int)t->slice_args.v[a].len,
                     t->args_text.v + t->slice_args.v[a].off);
        r[i].ts = s->ts;
        r[i].dur = s->dur;
        snprintf(r[i].name, sizeof r[i].name, "%s", gp_trace_s(t, s->name));
        r[i].pid = t->tracks.v[s->track].pid;
        r[i].tid = t->tracks.v[s->track].tid;
        r[i].corr = s->correlation;
    }
    return r; /* in the model's order: a split import keeps the sequential order */
}

static void write_trace(const char *path, int array_form)
{
    FILE *f = fopen(path, "w");
    fprintf(f, array_form ? "[\n"
                          : "{\"deviceProperties\":[{\"id\":0,\"name\":\"G\"},{\"id\":1}],\n"
                            "\"traceEvents\":[\n");
    fprintf(
        f, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":2,\"args\":{\"name\":\"t\"}}");
    for (int i = 0; i < 20000; i++) {
        /* names that contain ",{" and ", {" to fool the cut-point search */
        fprintf(f,
                ",\n{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"op%d ,{\\\"x\\\": , {\",\"pid\":1,"
                "\"tid\":%d,\"ts\":%d.%03d,\"dur\":3.5,\"args\":{\"External id\":%d,"
                "\"Input Dims\":[[1,2],[3]],\"list\":[{\"a\":1}, {\"b\":2}]}}",
                i % 7, 2 + i % 3, 1000 + i * 10, i % 1000, i);
        fprintf(f,
                ",\n{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k%d\",\"pid\":0,\"tid\":7,"
                "\"ts\":%d,\"dur\":2,\"args\":{\"correlation\":%d,\"stream\":7,\"grid\":[1,1,1]}}",
                i % 5, 1003 + i * 10, i);
        if (i % 50 == 0) /* long B/E ranges that cross many events */
            fprintf(f,
                    ",\n{\"ph\":\"B\",\"name\":\"range%d\",\"cat\":\"user_annotation\",\"pid\":1,"
                    "\"tid\":9,\"ts\":%d}",
                    i, 1000 + i * 10);
        if (i % 50 == 49)
            fprintf(f, ",\n{\"ph\":\"E\",\"pid\":1,\"tid\":9,\"ts\":%d}", 1000 + i * 10 + 5);
        if (i % 100 == 0)
            fprintf(f,
                    ",\n{\"ph\":\"i\",\"name\":\"[memory]\",\"pid\":1,\"tid\":2,\"ts\":%d,"
                    "\"args\":{\"Bytes\":%d,\"Addr\":%d}}",
                    1000 + i * 10, 64 + i, i);
        if (i % 1000 == 500)
            fprintf(f,
                    ",\n{\"ph\":\"C\",\"name\":\"q\",\"pid\":1,\"tid\":2,\"ts\":%d,"
                    "\"args\":{\"depth\":%d}}",
                    1000 + i * 10, i);
    }
    fprintf(f, ",\n{\"name\":\"process_labels\",\"ph\":\"M\",\"pid\":0,\"tid\":0,"
               "\"args\":{\"labels\":\"GPU 0\"}}");
    if (array_form)
        fprintf(f, "\n]\n");
    else
        fprintf(f, "\n],\"distributedInfo\":{\"rank\":5},\"baseTimeNanoseconds\":7000}\n");
    fclose(f);
}

static void compare_split(int array_form)
{
    char path[] = "/tmp/gp_split_XXXXXX";
    int fd = mkstemp(path);
    ASSERT(fd >= 0);
    close(fd);
    write_trace(path, array_form);
    setenv("GPUPROF_SPLIT_MIN_BYTES", "1", 1);
    gp_err err;
    gp_trace *seq = NULL;
    gp_import_opts o1 = {0, 1, 1};
    ASSERT_EQ_INT(gp_import_json_file(path, &o1, &seq, &err), 0);
    rec *rs = records(seq);
    for (int threads = 2; threads <= 8; threads *= 2) {
        gp_trace *par = NULL;
        gp_import_opts o = {0, threads, 1};
        int rc = gp_import_json_file(path, &o, &par, &err);
        if (rc) fprintf(stderr, "  %s\n", err.msg);
        ASSERT_EQ_INT(rc, 0);
        ASSERT_EQ_INT(par->slices.n, seq->slices.n);
        if (threads == 8) ASSERT_CMP_INT(par->meta.import_parts, >, 1); /* really split */
        ASSERT_CMP_INT(par->meta.import_parts, <=, threads);
        ASSERT_EQ_INT(par->flows.n, seq->flows.n);
        ASSERT_EQ_INT(par->mem_events.n, seq->mem_events.n);
        ASSERT_EQ_INT(par->counters.n, seq->counters.n);
        ASSERT_EQ_INT(par->tracks.n, seq->tracks.n);
        ASSERT_EQ_INT(par->devices.n, seq->devices.n);
        ASSERT_EQ_INT(par->meta.rank, seq->meta.rank);
        ASSERT_EQ_INT(par->meta.t0_abs_ns, seq->meta.t0_abs_ns);
        ASSERT_EQ_INT(par->meta.unmatched_begin, seq->meta.unmatched_begin);
        ASSERT_EQ_INT(par->meta.unmatched_end, seq->meta.unmatched_end);
        ASSERT_EQ_INT(par->t_end, seq->t_end);
        rec *rp = records(par);
        for (size_t i = 0; i < seq->slices.n; i++) {
            ASSERT_EQ_INT(rp[i].ts, rs[i].ts);
            ASSERT_EQ_INT(rp[i].dur, rs[i].dur);
            ASSERT_EQ_STR(rp[i].name, rs[i].name);
            ASSERT_EQ_INT(rp[i].pid, rs[i].pid);
            ASSERT_EQ_INT(rp[i].tid, rs[i].tid);
            ASSERT_EQ_INT(rp[i].corr, rs[i].corr);
        }
        /* the args text kept for lossless exports follows its slice */
        ASSERT_EQ_INT(par->slice_args.n, seq->slice_args.n);
        ASSERT_EQ_INT(par->args_text.n, seq->args_text.n);
        ASSERT_CMP_INT(seq->slice_args.n, >, 0);
        for (size_t i = 0; i < seq->slices.n; i++) ASSERT_EQ_STR(rp[i].args, rs[i].args);
        for (size_t i = 0; i < seq->tracks.n; i++) {
            /* same tracks, same GPU typing, same names */
            int found = 0;
            for (size_t j = 0; j < par->tracks.n; j++)
                if (par->tracks.v[j].pid == seq->tracks.v[i].pid &&
                    par->tracks.v[j].tid == seq->tracks.v[i].tid) {
                    found = 1;
                    ASSERT_EQ_INT(par->tracks.v[j].type, seq->tracks.v[i].type);
                    ASSERT_EQ_STR(gp_trace_s(par, par->tracks.v[j].name),
                                  gp_trace_s(seq, seq->tracks.v[i].name));
                }
            ASSERT(found);
        }
        free(rp);
        gp_trace_destroy(par);
    }
    free(rs);
    gp_trace_destroy(seq);
    /* a truncated file fails the same way in parallel */
    truncate(path, 300000);
    gp_trace *t = NULL;
    gp_err e1, e2;
    ASSERT_EQ_INT(gp_import_json_file(path, &o1, &t, &e1), GP_EPARSE);
    gp_import_opts o2 = {0, 2, 0};
    int rc2 = gp_import_json_file(path, &o2, &t, &e2);
    if (array_form) {
        ASSERT_EQ_INT(rc2, GP_EPARSE); /* truncated mid-event */
    } else {
        ASSERT_EQ_INT(rc2, GP_EPARSE);
    }
    ASSERT_EQ_STR(e2.msg, e1.msg);
    unlink(path);
    unsetenv("GPUPROF_SPLIT_MIN_BYTES");
}

TEST(split_object_form)
{
    compare_split(0);
}

TEST(split_array_form)
{
    compare_split(1);
}

/* ---- the whole model and the whole export, split or not ---------------------------------- */

/* Every record of the model with its string, category, track and series ids
 * resolved (ids themselves differ: each part interns its own strings), in
 * the model's order, and the metadata. A split import must give the same
 * text as the sequential one. */
static char *model_text(const gp_trace *t, size_t *len)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
#define S(id) gp_trace_s(t, id)
#define TK(k)                                                                                      \
    (k) == GP_NO_INDEX ? -2LL : (long long)t->tracks.v[k].pid,                                     \
        (k) == GP_NO_INDEX ? -2LL : (long long)t->tracks.v[k].tid,                                 \
        (k) == GP_NO_INDEX ? "" : S(t->tracks.v[k].pid_str),                                       \
        (k) == GP_NO_INDEX ? "" : S(t->tracks.v[k].tid_str)
#define TKF "%lld/%lld/%s/%s"
    for (size_t i = 0; i < t->cats.n; i++)
        fprintf(f, "cat %s %d\n", S(t->cats.v[i].name), t->cats.v[i].kind);
    for (size_t i = 0; i < t->tracks.n; i++) {
        const gp_track *k = &t->tracks.v[i];
        fprintf(f, "track " TKF " name=%s proc=%s type=%d dev=%d stream=%lld\n", TK((uint32_t)i),
                S(k->name), S(k->process_name), k->type, k->device, (long long)k->stream);
    }
    for (size_t i = 0; i < t->slices.n; i++) {
        const gp_slice *x = &t->slices.v[i];
        fprintf(f, "slice %lld %lld %lld %lld %s " TKF " %s flags=%d", (long long)x->ts,
                (long long)x->dur, (long long)x->correlation, (long long)x->external_id, S(x->name),
                TK(x->track), S(t->cats.v[x->cat].name), x->flags);
        if (x->gpu != GP_NO_INDEX) {
            const gp_gpu_info *g = &t->gpu_info.v[x->gpu];
            fprintf(f, " gpu %d %d %lld %d %d %d %d %d %d %d %d %lld %g %g %g %d %d %d", g->device,
                    g->context, (long long)g->stream, g->grid[0], g->grid[1], g->grid[2],
                    g->block[0], g->block[1], g->block[2], g->registers, g->shared_mem,
                    (long long)g->bytes, g->blocks_per_sm, g->warps_per_sm, g->occupancy_pct,
                    g->copy_kind, g->src_kind, g->dst_kind);
        }
        fputc('\n', f);
    }
    for (size_t i = 0; i < t->flows.n; i++) {
        const gp_flow *x = &t->flows.v[i];
        fprintf(f, "flow %c %lld %lld " TKF " %s %s %d\n", x->ph, (long long)x->ts,
                (long long)x->id, TK(x->track), S(x->name), S(t->cats.v[x->cat].name),
                x->bind_enclosing);
    }
    for (size_t i = 0; i < t->instants.n; i++) {
        const gp_instant *x = &t->instants.v[i];
        fprintf(f, "instant %lld %s " TKF " %s %c\n", (long long)x->ts, S(x->name), TK(x->track),
                S(t->cats.v[x->cat].name), x->scope);
    }
    for (size_t i = 0; i < t->mem_events.n; i++) {
        const gp_mem_event *x = &t->mem_events.v[i];
        fprintf(f, "mem %lld %llu %lld %lld %lld " TKF " %d %d\n", (long long)x->ts,
                (unsigned long long)x->addr, (long long)x->bytes, (long long)x->total_allocated,
                (long long)x->total_reserved, TK(x->track), x->device_type, x->device_id);
    }
    for (size_t i = 0; i < t->counters.n; i++) {
        const gp_counter_sample *x = &t->counters.v[i];
        const gp_series *r = &t->series.v[x->series];
        fprintf(f, "counter %lld %.17g %s " TKF "\n", (long long)x->ts, x->value, S(r->name),
                TK(r->track));
    }
    for (size_t i = 0; i < t->devices.n; i++) {
        const gp_device_prop *d = &t->devices.v[i];
        fprintf(f, "device %d %s %lld %d %d %d\n", d->id, S(d->name),
                (long long)d->total_global_mem, d->compute_major, d->compute_minor, d->num_sms);
    }
    for (size_t i = 0; i < t->arg_streams.n; i++)
        fprintf(f, "arg_stream %u %lld\n", t->arg_streams.v[i].slice,
                (long long)t->arg_streams.v[i].stream);
    for (int inst = 0; inst < 2; inst++) {
        const gp_args_ref *v = inst ? t->instant_args.v : t->slice_args.v;
        size_t n = inst ? t->instant_args.n : t->slice_args.n;
        for (size_t i = 0; i < n; i++)
            fprintf(f, "args %d %u %.*s\n", inst, v[i].owner, (int)v[i].len,
                    t->meta.args_at_source ? "" : t->args_text.v + v[i].off);
    }
    for (size_t i = 0; i < t->tracked_buffers.n; i++)
        fprintf(f, "buffer %s %s %lld\n", S(t->tracked_buffers.v[i].name),
                S(t->tracked_buffers.v[i].dtype), (long long)t->tracked_buffers.v[i].bytes);
    for (size_t i = 0; i < t->aggs.n; i++) {
        const gp_agg_row *a = &t->aggs.v[i];
        fprintf(f, "agg %s %s " TKF " %llu %lld %lld %lld %lld %lld %lld\n", S(a->name),
                S(t->cats.v[a->cat].name), TK(a->track), (unsigned long long)a->count,
                (long long)a->total_ns, (long long)a->self_ns, (long long)a->min_ns,
                (long long)a->max_ns, (long long)a->first_ns, (long long)a->last_ns);
    }
    for (size_t i = 0; i < t->entry_metrics.n; i++)
        fprintf(f, "entry_metrics %u %llu\n", t->entry_metrics.v[i].slice,
                (unsigned long long)t->entry_metrics.v[i].m.timers);
    for (size_t i = 0; i < t->inline_children.n; i++)
        fprintf(f, "inline_child %u %lld\n", t->inline_children.v[i].slice,
                (long long)t->inline_children.v[i].ns);
    const gp_trace_meta *m = &t->meta;
    fprintf(
        f,
        "meta rank=%d world=%d backend=%s extra=%s trace_name=%s unit=%s schema=%d base=%d/%lld "
        "t0=%lld form=%d frac=%d read=%llu nodur=%llu unmatched=%llu/%llu unterminated=%d "
        "stream=%d has_events=%d tracked=%d/%lld/%lld span=%lld..%lld\n",
        m->rank, m->world_size, S(m->backend), S(m->dist_extra), S(m->trace_name),
        S(m->display_time_unit), m->schema_version, m->has_base_time, (long long)m->base_time_ns,
        (long long)m->t0_abs_ns, m->ts_form, m->fractional_ts, (unsigned long long)m->events_read,
        (unsigned long long)m->events_dropped_no_dur, (unsigned long long)m->unmatched_begin,
        (unsigned long long)m->unmatched_end, m->unterminated, m->gp_stream, m->has_trace_events,
        m->has_tracked_memory, (long long)m->tracked_current_bytes,
        (long long)m->tracked_peak_bytes, (long long)t->t_begin, (long long)t->t_end);
#undef TKF
#undef TK
#undef S
    fclose(f);
    return buf;
}

/* gp_chrome_write's text for t (what `gpuprof export` writes) */
static char *export_text(const gp_trace *t, size_t *len)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    int rc = gp_chrome_write(t, f, NULL);
    fclose(f);
    if (rc) {
        free(buf);
        return NULL;
    }
    return buf;
}

/* Reports the first difference of a and b (the lines around it). */
static int same_text(const char *what, const char *path, int threads, const char *a, size_t an,
                     const char *b, size_t bn)
{
    if (an == bn && memcmp(a, b, an) == 0) return 1;
    size_t i = 0;
    while (i < an && i < bn && a[i] == b[i]) i++;
    size_t from = i > 200 ? i - 200 : 0;
    fprintf(stderr,
            "  %s of %s differs with %d threads at byte %zu:\n    1 thread: %.300s\n    split:    "
            "%.300s\n",
            what, path, threads, i, a + from, b + from);
    return 0;
}

/* Imports path with 1 thread and with 2..8 (split: $GPUPROF_SPLIT_MIN_BYTES
 * is 1), with the args text kept (as `export` does) and without; the models
 * (every record, ids resolved) and the exports must be byte-identical, and
 * an error the same line. Returns the number of imports that did split. */
static int split_same_export(const char *path)
{
    int split = 0;
    for (int keep = 0; keep <= GP_ARGS_TEXT; keep += GP_ARGS_TEXT) {
        gp_import_opts o1 = {0, 1, keep};
        gp_trace *seq = NULL;
        gp_err e1;
        int rc1 = gp_import_json_file(path, &o1, &seq, &e1);
        size_t mn = 0, xn = 0;
        char *model = rc1 ? NULL : model_text(seq, &mn);
        char *exp = rc1 ? NULL : export_text(seq, &xn);
        if (!rc1) ASSERT(exp != NULL);
        for (int th = 2; th <= 8; th++) {
            gp_import_opts o = {0, th, keep};
            gp_trace *par = NULL;
            gp_err e2;
            int rc2 = gp_import_json_file(path, &o, &par, &e2);
            ASSERT_EQ_INT(rc2, rc1);
            if (rc1) {
                ASSERT_EQ_STR(e2.msg, e1.msg);
                continue;
            }
            split += par->meta.import_parts > 1;
            size_t mn2 = 0, xn2 = 0;
            char *model2 = model_text(par, &mn2), *exp2 = export_text(par, &xn2);
            ASSERT(exp2 != NULL);
            ASSERT(same_text("model", path, th, model, mn, model2, mn2));
            ASSERT(same_text("export", path, th, exp, xn, exp2, xn2));
            free(model2);
            free(exp2);
            gp_trace_destroy(par);
        }
        free(model);
        free(exp);
        gp_trace_destroy(seq);
    }
    return split;
}

/* A trace with every event kind the importer models, metadata events early
 * and late, string pids, escapes, B/E ranges across the cuts, and the
 * top-level keys read after the events (distributedInfo with extra members,
 * deviceProperties, the gpuprof section with tracked buffers and rollover
 * rows, baseTimeNanoseconds, traceName, displayTimeUnit). */
static void write_every_kind(const char *path)
{
    FILE *f = fopen(path, "w");
    fprintf(f, "{\"schemaVersion\": 1, \"traceEvents\": [\n"
               "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"tid\":0,"
               "\"args\":{\"name\":\"python\"}},\n"
               "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":2,"
               "\"args\":{\"name\":\"main\"}}");
    for (int i = 0; i < 6000; i++) {
        int ts = 1000 + i * 20;
        fprintf(
            f,
            ",\n{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"op%d \\\"q\\\" \\u00e9 \\u0000 ,{\","
            "\"pid\":1,\"tid\":2,\"ts\":%d.%03d,\"dur\":9.5,\"args\":{\"External id\":%d,"
            "\"Input Dims\":[[1,2],[3]],\"Sequence number\":%d%s}}",
            i % 11, ts, i % 1000, i, i, i % 9 == 0 ? ",\"stream\":0" : "");
        fprintf(f,
                ",\n{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,"
                "\"tid\":2,\"ts\":%d,\"dur\":2,\"args\":{\"External id\":%d,\"correlation\":%d}}",
                ts + 1, i, i);
        fprintf(f,
                ",\n{\"ph\":\"s\",\"id\":%d,\"pid\":1,\"tid\":2,\"ts\":%d,\"cat\":\"ac2g\","
                "\"name\":\"ac2g\"}",
                i, ts + 1);
        fprintf(f,
                ",\n{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"kern%d\",\"pid\":0,\"tid\":7,"
                "\"ts\":%d,\"dur\":4,\"args\":{\"device\":0,\"stream\":7,\"correlation\":%d,"
                "\"registers per thread\":32,\"shared memory\":0,\"grid\":[%d,1,1],"
                "\"block\":[128,1,1],\"est. achieved occupancy %%\":50}}",
                i % 13, ts + 3, i, 1 + i % 4);
        fprintf(f,
                ",\n{\"ph\":\"f\",\"id\":%d,\"pid\":0,\"tid\":7,\"ts\":%d,\"cat\":\"ac2g\","
                "\"name\":\"ac2g\",\"bp\":\"e\"}",
                i, ts + 3);
        if (i % 7 == 0) /* flows of other categories and names, a "t" step */
            fprintf(f,
                    ",\n{\"ph\":\"%c\",\"id\":%d,\"pid\":1,\"tid\":%d,\"ts\":%d,"
                    "\"cat\":\"fwdbwd%d\",\"name\":\"fwdbwd %d\"}",
                    "stf"[i / 7 % 3], i / 21, 2 + i % 3, ts + 5, i % 4, i % 5);
        if (i % 11 == 0)
            fprintf(f,
                    ",\n{\"ph\":\"X\",\"cat\":\"gpu_memcpy\",\"name\":\"Memcpy HtoD (Pageable -> "
                    "Device)\",\"pid\":0,\"tid\":8,\"ts\":%d,\"dur\":1,\"args\":{\"device\":0,"
                    "\"stream\":8,\"correlation\":%d,\"bytes\":%d}}",
                    ts + 6, 100000 + i, 4096 + i);
        if (i % 50 == 0)
            fprintf(f,
                    ",\n{\"ph\":\"B\",\"name\":\"range%d\",\"cat\":\"user_annotation\",\"pid\":1,"
                    "\"tid\":9,\"ts\":%d}",
                    i, ts);
        if (i % 50 == 49) fprintf(f, ",\n{\"ph\":\"E\",\"pid\":1,\"tid\":9,\"ts\":%d}", ts + 7);
        if (i % 30 == 0)
            fprintf(f,
                    ",\n{\"ph\":\"%c\",\"name\":\"mark%d\",\"cat\":\"instant%d\",\"s\":\"%c\","
                    "\"pid\":1,\"tid\":%d,\"ts\":%d,\"args\":{\"k\":%d}}",
                    i % 60 ? 'i' : 'I', i % 17, i % 3, "tpg"[i / 30 % 3], 2 + i % 2, ts + 2, i);
        if (i % 40 == 0)
            fprintf(f,
                    ",\n{\"ph\":\"i\",\"cat\":\"cpu_instant_event\",\"name\":\"[memory]\","
                    "\"pid\":1,\"tid\":2,\"ts\":%d,\"args\":{\"Device Type\":1,\"Device Id\":0,"
                    "\"Addr\":%d,\"Bytes\":%d,\"Total Allocated\":%d,\"Total Reserved\":%d}}",
                    ts + 4, 1000 + i, i % 80 ? 64 : -64, 1000 + i, 2000 + i);
        if (i % 100 == 0)
            fprintf(f,
                    ",\n{\"ph\":\"C\",\"name\":\"counter%d\",\"pid\":1,\"tid\":2,\"ts\":%d,"
                    "\"args\":{\"depth\":%d,\"value\":%d.5}}",
                    i % 300, ts, i, i);
        if (i % 200 == 100) /* metadata late in the file: later parts */
            fprintf(f,
                    ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,"
                    "\"args\":{\"name\":\"worker %d\"}},\n"
                    "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":0,"
                    "\"args\":{\"name\":\"proc %d\"}},\n"
                    "{\"ph\":\"X\",\"cat\":\"python_function\",\"name\":\"py%d\",\"pid\":%d,"
                    "\"tid\":%d,\"ts\":%d,\"dur\":1}",
                    10 + i / 200, 20 + i / 200, i, 10 + i / 200, i, i % 7, 10 + i / 200,
                    20 + i / 200, ts);
        if (i % 300 == 0)
            fprintf(f,
                    ",\n{\"ph\":\"X\",\"cat\":\"Trace\",\"name\":\"spans\",\"pid\":\"Spans\","
                    "\"tid\":\"PyTorch Profiler %d\",\"ts\":%d,\"dur\":3}",
                    i / 300, ts);
        if (i % 500 == 0) /* no dur: counted, left out; async: skipped */
            fprintf(f,
                    ",\n{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"nodur\",\"pid\":1,\"tid\":2,"
                    "\"ts\":%d},\n{\"ph\":\"b\",\"cat\":\"async\",\"name\":\"a\",\"id\":1,"
                    "\"pid\":1,\"tid\":2,\"ts\":%d}",
                    ts, ts);
    }
    fprintf(f, ",\n{\"name\":\"process_labels\",\"ph\":\"M\",\"pid\":0,\"tid\":0,"
               "\"args\":{\"labels\":\"GPU 0\"}}\n],\n"
               "\"distributedInfo\": {\"backend\": \"nccl\", \"rank\": 3, \"world_size\": 8, "
               "\"pg_count\": 2, \"nccl_version\": \"2.18.1\"},\n"
               "\"deviceProperties\": [{\"id\": 0, \"name\": \"GPU A\", \"totalGlobalMem\": 100, "
               "\"computeMajor\": 8, \"computeMinor\": 0, \"numSms\": 108}],\n"
               "\"gpuprof\": {\"memory\": {\"current_bytes\": 5, \"peak_bytes\": 9, \"buffers\": "
               "[{\"name\": \"buf\", \"dtype\": \"f32\", \"bytes\": 4}, {\"name\": \"b2\", "
               "\"bytes\": 8}]}, \"rollover\": [{\"name\": \"agg1\", \"cat\": \"gpuprof_range\", "
               "\"count\": 3, \"total_ns\": 30, \"self_ns\": 20, \"min_ns\": 5, \"max_ns\": 15, "
               "\"first_us\": 1000, \"last_us\": 5000, \"pid\": 1, \"tid\": 2}]},\n"
               "\"baseTimeNanoseconds\": 1000000, \"traceName\": \"tr\", "
               "\"displayTimeUnit\": \"ns\"}\n");
    fclose(f);
}

TEST(split_export_every_kind)
{
    char path[] = "/tmp/gp_split_kinds_XXXXXX";
    int fd = mkstemp(path);
    ASSERT(fd >= 0);
    close(fd);
    write_every_kind(path);
    setenv("GPUPROF_SPLIT_MIN_BYTES", "1", 1);
    int split = split_same_export(path);
    unsetenv("GPUPROF_SPLIT_MIN_BYTES");
    unlink(path);
    ASSERT_EQ_INT(split, 14); /* every import with 2..8 threads did split */
}

/* plain copies of the trace files under dir (two levels) compared split and
 * not; returns the number of files */
static int walk_shared(const char *dir, int depth, const char *plain, int *split)
{
    DIR *d = opendir(dir);
    if (!d) return 0;
    int files = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.' || strstr(de->d_name, "expected")) continue;
        char p[4096];
        snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
        struct stat st;
        if (stat(p, &st)) continue;
        size_t l = strlen(de->d_name);
        if (S_ISDIR(st.st_mode) && depth < 2)
            files += walk_shared(p, depth + 1, plain, split);
        else if (S_ISREG(st.st_mode) && ((l > 5 && !strcmp(de->d_name + l - 5, ".json")) ||
                                         (l > 8 && !strcmp(de->d_name + l - 8, ".json.gz")))) {
            ASSERT_EQ_INT(gp_test_inflate_to(p, plain), 0);
            *split += split_same_export(plain) > 0;
            files++;
        }
    }
    closedir(d);
    return files;
}

TEST(split_export_shared_traces)
{
    const char *dir = gp_test_traces_dir();
    if (!dir) SKIP("shared traces not found (GPUPROF_TRACES)");
    char plain[] = "/tmp/gp_split_shared_XXXXXX";
    int fd = mkstemp(plain);
    ASSERT(fd >= 0);
    close(fd);
    setenv("GPUPROF_SPLIT_MIN_BYTES", "1", 1);
    int split = 0, files = walk_shared(dir, 0, plain, &split);
    unsetenv("GPUPROF_SPLIT_MIN_BYTES");
    unlink(plain);
    fprintf(stderr, "  %d shared traces compared, %d of them split\n", files, split);
    ASSERT_CMP_INT(files, >, 0);
    ASSERT_CMP_INT(split, >, 0);
}

/* Times too far apart for int64 ns from the trace start are refused after
 * the merge as after a sequential import (the same line), never wrapped. */
/* path (a file the test wrote) is refused with a message holding want,
 * the same read in one part and split into 2, 4 and 8; the file is removed */
static void split_refuses(const char *path, const char *want)
{
    setenv("GPUPROF_SPLIT_MIN_BYTES", "1", 1);
    gp_err e1, e2;
    gp_trace *t = NULL;
    gp_import_opts o1 = {0, 1, 0};
    ASSERT_EQ_INT(gp_import_json_file(path, &o1, &t, &e1), GP_EPARSE);
    ASSERT_CONTAINS(e1.msg, want);
    for (int threads = 2; threads <= 8; threads *= 2) {
        gp_import_opts o = {0, threads, 0};
        ASSERT_EQ_INT(gp_import_json_file(path, &o, &t, &e2), GP_EPARSE);
        ASSERT_EQ_STR(e2.msg, e1.msg);
        ASSERT(t == NULL);
    }
    unsetenv("GPUPROF_SPLIT_MIN_BYTES");
    unlink(path);
}

TEST(split_span_refused)
{
    char path[] = "/tmp/gp_split_span_XXXXXX";
    int fd = mkstemp(path);
    ASSERT(fd >= 0);
    close(fd);
    FILE *f = fopen(path, "w");
    fprintf(f, "[{\"ph\":\"i\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":-9223372036854775}");
    for (int i = 0; i < 3000; i++)
        fprintf(f, ",\n{\"ph\":\"X\",\"name\":\"x%d\",\"pid\":1,\"tid\":2,\"ts\":1,\"dur\":1}", i);
    fprintf(f, ",\n{\"ph\":\"i\",\"name\":\"z\",\"pid\":1,\"tid\":1,\"ts\":9223372036854775}]");
    fclose(f);
    split_refuses(path, "do not fit int64 nanoseconds from the trace start");
}

/* a second "traceEvents" key is refused (Python's json and JSON.parse keep
 * the last array, a streaming reader both), with the same message whether
 * the file is read in one part or split (a later part starts inside the
 * first array and must know it) */
TEST(trace_events_twice_refused)
{
    char path[] = "/tmp/gp_split_twice_XXXXXX";
    int fd = mkstemp(path);
    ASSERT(fd >= 0);
    close(fd);
    FILE *f = fopen(path, "w");
    for (int a = 0; a < 2; a++) {
        fprintf(f, a ? "],\"x\":1,\"traceEvents\":[" : "{\"traceEvents\":[");
        for (int i = 0; i < 3000; i++)
            fprintf(f,
                    "%s\n{\"ph\":\"X\",\"name\":\"x%d\",\"pid\":1,\"tid\":2,\"ts\":%d,\"dur\":1}",
                    i ? "," : "", i, i * 3);
    }
    fprintf(f, "]}\n");
    fclose(f);
    split_refuses(path, "\"traceEvents\" given twice");
}

TEST_MAIN(split_object_form, split_array_form, split_export_every_kind, split_export_shared_traces,
          split_span_refused, trace_events_twice_refused)
