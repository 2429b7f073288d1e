/* tests/test_import_split.c: the parallel import of large plain files gives
 * the same trace as the sequential one, slice for slice in the same order
 * (so exports do not depend on the thread count), including B/E pairs that
 * span the cut points, metadata after the events, and strings that look like
 * event starts. */
#include "test.h"
#include "trace/import.h"
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

TEST_MAIN(split_object_form, split_array_form)
