/* tests/test_libgpuprof_entry.c: per-entry metrics of libgpuprof ranges
 * (docs/api.md "Per-entry metrics") with real OpenCL (PoCL): the device time
 * of the timings closed inside a range, transfers and their bandwidth, and
 * the memory tracker calls made inside it, checked against values the test
 * computes itself (the events' own CL_PROFILING_COMMAND_START/END, the
 * tracked sizes), for ranges kept as events and ranges that rolled over
 * into the aggregate statistics; then the same figures in the export, the
 * imported trace's summary, `gpuprof summary --json` and `gpuprof report`. */
#include "analysis/advise.h"
#include "analysis/summary.h"
#include "record/recorder.h"
#include "test.h"
#include "trace/import.h"
#include <gpuprof/gpuprof.h>
#include <pthread.h>
#include <unistd.h>
#ifdef GP_FAKE_CUDART
#include <dlfcn.h>
#endif
#ifdef GP_HAVE_OPENCL
#include <CL/cl.h>
#endif

#ifdef GP_FAKE_CUDART
/* The stand-in libcudart (loaded first, so that libgpuprof's dlopen of
 * libcudart.so finds it) and its fake_cudart_work, which advances the
 * virtual device clock by ms. */
static void (*fake_cudart(void))(double)
{
    void *h = dlopen(GP_FAKE_CUDART, RTLD_NOW | RTLD_GLOBAL);
    ASSERT(h != NULL);
    void (*work)(double) = (void (*)(double))dlsym(h, "fake_cudart_work");
    ASSERT(work != NULL);
    return work;
}
#endif

static const gp_summary_row *find_row(const gp_summary_row *r, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(r[i].name, name) && !strcmp(r[i].group, "annotation")) return &r[i];
    return NULL;
}

static void tmp_path(char *buf, size_t n, const char *what)
{
    snprintf(buf, n, "/tmp/gp_test_entry_%ld_%s", (long)getpid(), what);
}

/* Exports p with gp_export_json to the temporary file `what` (its path in
 * jp) and reads it back as `gpuprof summary` would. */
static gp_trace *export_read(gp_profiler *p, const char *what, char *jp, size_t njp)
{
    tmp_path(jp, njp, what);
    ASSERT_EQ_INT(gp_export_json(p, jp), 0);
    gp_trace *t = NULL;
    gp_err er;
    ASSERT_EQ_INT(gp_import_json_file(jp, NULL, &t, &er), 0);
    return t;
}

/* Expected per-name figures, computed by the test. */
typedef struct expect {
    const char *name;
    uint64_t count, timers, xfers, allocs, frees;
    int64_t gpu_ns, xfer_ns, xfer_bytes, alloc_bytes, freed_bytes, peak;
} expect;

static void check_row(const gp_summary_row *r, const expect *x)
{
    if (!r) {
        fprintf(stderr, "  row %s missing\n", x->name);
        ASSERT(r != NULL);
    }
    ASSERT_EQ_INT(r->count, x->count);
    ASSERT_EQ_INT(r->gpu_timers, x->timers);
    ASSERT_EQ_INT(r->gpu_ns, x->gpu_ns);
    ASSERT_EQ_INT(r->xfers, x->xfers);
    ASSERT_EQ_INT(r->xfer_ns, x->xfer_ns);
    ASSERT_EQ_INT(r->xfer_bytes, x->xfer_bytes);
    if (x->xfer_ns > 0)
        ASSERT_NEAR(r->bandwidth_Bps, (double)x->xfer_bytes * 1e9 / (double)x->xfer_ns, 1e-6);
    else
        ASSERT(isnan(r->bandwidth_Bps));
    ASSERT_EQ_INT(r->allocs, x->allocs);
    ASSERT_EQ_INT(r->alloc_bytes, x->alloc_bytes);
    ASSERT_EQ_INT(r->frees, x->frees);
    ASSERT_EQ_INT(r->freed_bytes, x->freed_bytes);
    ASSERT_EQ_INT(r->peak_bytes, x->allocs ? x->peak : -1);
}

/* The same figures in a summary row of an imported trace. */
static void check_op_row(const gp_trace *t, const gp_summary *s, const expect *x)
{
    const gp_op_row *r = NULL;
    for (size_t i = 0; i < s->n; i++)
        if (s->rows[i].group == GP_G_ANNOTATION && !strcmp(gp_trace_s(t, s->rows[i].name), x->name))
            r = &s->rows[i];
    ASSERT(r != NULL);
    ASSERT_EQ_INT(r->st.count, x->count);
    ASSERT_EQ_INT(r->em.timers, x->timers);
    ASSERT_EQ_INT(r->em.gpu_ns, x->gpu_ns);
    ASSERT_EQ_INT(r->em.xfers, x->xfers);
    ASSERT_EQ_INT(r->em.xfer_ns, x->xfer_ns);
    ASSERT_EQ_INT(r->em.xfer_bytes, x->xfer_bytes);
    ASSERT_EQ_INT(r->em.allocs, x->allocs);
    ASSERT_EQ_INT(r->em.alloc_bytes, x->alloc_bytes);
    ASSERT_EQ_INT(r->em.frees, x->frees);
    ASSERT_EQ_INT(r->em.freed_bytes, x->freed_bytes);
    if (x->allocs) ASSERT_EQ_INT(r->em.peak_bytes, x->peak);
}

/* The integer after "key": in the first row named by `anchor` (e.g.
 * "\"name\":\"step\"") that has it before the next row's "name" (a kernel
 * row of the same name has no per-entry keys); INT64_MIN when none. */
static int64_t int_after(const char *text, const char *anchor, const char *key)
{
    char k[64];
    snprintf(k, sizeof k, "\"%s\":", key);
    for (const char *a = strstr(text, anchor); a; a = strstr(a + 1, anchor)) {
        const char *next = strstr(a + strlen(anchor), "\"name\":");
        const char *v = strstr(a, k);
        if (v && (!next || v < next)) return strtoll(v + strlen(k), NULL, 10);
    }
    return INT64_MIN;
}

/* Runs the CLI on the export at jp and checks the figures of x in `summary
 * --json`, the text summary and the report's per-entry table. */
static void check_cli(const char *jp, const expect *x, int nx)
{
    const char *bin = getenv("GPUPROF_BIN");
    if (!bin) return; /* run outside ctest */
    char out[300], cmd[1200];
    snprintf(out, sizeof out, "%s.sum.json", jp);
    snprintf(cmd, sizeof cmd, "'%s' summary --json '%s' > '%s'", bin, jp, out);
    ASSERT_EQ_INT(system(cmd), 0);
    char *js = gp_test_slurp(out);
    ASSERT(js != NULL);
    for (int i = 0; i < nx; i++) {
        char anchor[96];
        snprintf(anchor, sizeof anchor, "\"name\":\"%s\"", x[i].name);
        ASSERT_EQ_INT(int_after(js, anchor, "gpu_timers"), (int64_t)x[i].timers);
        ASSERT_EQ_INT(int_after(js, anchor, "gpu_ns"), x[i].gpu_ns);
        ASSERT_EQ_INT(int_after(js, anchor, "xfer_ns"), x[i].xfer_ns);
        ASSERT_EQ_INT(int_after(js, anchor, "xfer_bytes"), x[i].xfer_bytes);
        ASSERT_EQ_INT(int_after(js, anchor, "alloc_bytes"), x[i].alloc_bytes);
        ASSERT_EQ_INT(int_after(js, anchor, "freed_bytes"), x[i].freed_bytes);
        ASSERT_EQ_INT(int_after(js, anchor, "peak_bytes"), x[i].allocs ? x[i].peak : INT64_MIN);
        if (x[i].xfer_ns > 0) {
            /* bandwidth_Bps is a double: its integer part, then the whole */
            int64_t bwi = int_after(js, anchor, "bandwidth_Bps");
            double want = (double)x[i].xfer_bytes * 1e9 / (double)x[i].xfer_ns;
            ASSERT_EQ_INT(bwi, (int64_t)want);
        }
    }
    free(js);
    /* text: the per-entry table with the bandwidth in GB/s */
    snprintf(cmd, sizeof cmd, "'%s' summary --wide '%s' > '%s'", bin, jp, out);
    ASSERT_EQ_INT(system(cmd), 0);
    char *tx = gp_test_slurp(out);
    ASSERT(tx != NULL);
    ASSERT_CONTAINS(tx, "Per-entry metrics");
    char bwt[64];
    snprintf(bwt, sizeof bwt, "%.3f", (double)x[0].xfer_bytes / (double)x[0].xfer_ns);
    ASSERT_CONTAINS(tx, bwt);
    free(tx);
    /* report: the per-entry card, exact values in data-v */
    snprintf(out, sizeof out, "%s.html", jp);
    snprintf(cmd, sizeof cmd, "'%s' report '%s' -o '%s' > /dev/null", bin, jp, out);
    ASSERT_EQ_INT(system(cmd), 0);
    char *h = gp_test_slurp(out);
    ASSERT(h != NULL);
    const char *card = strstr(h, "Per-entry metrics");
    ASSERT(card != NULL);
    for (int i = 0; i < nx; i++) {
        char row[512];
        snprintf(row, sizeof row,
                 "<tr><td class=\"l\">%s</td><td data-v=\"%llu\">%llu</td><td "
                 "data-v=\"%llu\">%llu</td><td data-v=\"%lld\">",
                 x[i].name, (unsigned long long)x[i].count, (unsigned long long)x[i].count,
                 (unsigned long long)x[i].timers, (unsigned long long)x[i].timers,
                 (long long)x[i].gpu_ns);
        ASSERT_CONTAINS(card, row);
    }
    free(h);
    if (getenv("GP_TEST_KEEP_FILES")) return; /* to look at them */
    remove(out);
    snprintf(out, sizeof out, "%s.sum.json", jp);
    remove(out);
}

#ifdef GP_HAVE_OPENCL
#include "cl_env.h"

/* The device duration of a completed event, read by the test itself. */
static int64_t ev_ns(cl_event ev)
{
    cl_ulong s = 0, e = 0;
    clWaitForEvents(1, &ev);
    clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof s, &s, NULL);
    clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof e, &e, NULL);
    return e >= s ? (int64_t)(e - s) : 0;
}

static int64_t run_kernel(gp_profiler *p, cl_env *e)
{
    cl_event ev;
    clEnqueueNDRangeKernel(e->q, e->k, 1, NULL, &e->n, NULL, 0, NULL, &ev);
    gp_cl_event(p, "scale", ev);
    int64_t d = ev_ns(ev);
    clReleaseEvent(ev);
    return d;
}

static int64_t run_write(gp_profiler *p, cl_env *e, size_t bytes)
{
    cl_event ev;
    clEnqueueWriteBuffer(e->q, e->buf, CL_FALSE, 0, bytes, e->host, 0, NULL, &ev);
    gp_cl_event_ex(p, "write", ev, (int64_t)bytes);
    int64_t d = ev_ns(ev);
    clReleaseEvent(ev);
    return d;
}

typedef struct other_arg {
    gp_profiler *p;
    cl_env *e;
    int64_t ns;
    int rc;
    char buf[64];
} other_arg;

/* Another thread: its timing and its tracked buffer count in its own range
 * only (not in "step", open on the main thread meanwhile). */
static void *other_thread(void *v)
{
    other_arg *a = v;
    gp_range_begin(a->p, "other");
    a->ns += run_kernel(a->p, a->e);
    a->rc |= gp_mem_track(a->p, "o", a->buf, 64, NULL, 0, NULL);
    a->rc |= gp_mem_untrack(a->p, a->buf);
    gp_range_end(a->p);
    return NULL;
}

enum { X_STEP, X_UPLOAD, X_COMPUTE, X_OTHER, X_N };

/* The program: `iters` steps, each an upload (a transfer), a compute range
 * (a kernel, two buffers tracked, one untracked) and, while step is open,
 * another thread's range with a kernel; a kernel outside every range. */
static void program(gp_profiler *p, cl_env *e, int iters, expect *x, char (*bufs)[64])
{
    static const char *const names[X_N] = {"step", "upload", "compute", "other"};
    memset(x, 0, X_N * sizeof *x);
    for (int i = 0; i < X_N; i++) x[i].name = names[i];
    int64_t total = 0;
    other_arg oa = {p, e, 0, 0, {0}};
    for (int it = 0; it < iters; it++) {
        size_t wb = (size_t)(4096 * (it + 1));
        gp_range_begin(p, "step");
        gp_range_begin_ex(p, "upload", GP_DEV_GPU, GP_BACKEND_OPENCL, (int64_t)wb);
        int64_t w = run_write(p, e, wb);
        gp_range_end(p);
        gp_range_begin(p, "compute");
        int64_t k = run_kernel(p, e);
        void *a = bufs[2 * it], *b = bufs[2 * it + 1];
        int64_t sa = 1000 + it, sb = 500 + 7 * it;
        ASSERT_EQ_INT(gp_mem_track(p, "a", a, (size_t)sa, NULL, 0, "f32"), 0);
        total += sa;
        int64_t pk = total;
        ASSERT_EQ_INT(gp_mem_track(p, "b", b, (size_t)sb, NULL, 0, "f32"), 0);
        total += sb;
        if (total > pk) pk = total;
        ASSERT_EQ_INT(gp_mem_untrack(p, a), 0);
        total -= sa;
        gp_range_end(p);
        pthread_t th;
        int64_t before = oa.ns;
        pthread_create(&th, NULL, other_thread, &oa);
        pthread_join(th, NULL);
        gp_range_end(p);
        x[X_STEP].count++;
        x[X_STEP].timers += 2;
        x[X_STEP].gpu_ns += w + k;
        x[X_STEP].xfers++;
        x[X_STEP].xfer_ns += w;
        x[X_STEP].xfer_bytes += (int64_t)wb;
        x[X_STEP].allocs += 2;
        x[X_STEP].alloc_bytes += sa + sb;
        x[X_STEP].frees++;
        x[X_STEP].freed_bytes += sa;
        if (pk > x[X_STEP].peak) x[X_STEP].peak = pk;
        x[X_UPLOAD].count++;
        x[X_UPLOAD].timers++;
        x[X_UPLOAD].gpu_ns += w;
        x[X_UPLOAD].xfers++;
        x[X_UPLOAD].xfer_ns += w;
        x[X_UPLOAD].xfer_bytes += (int64_t)wb;
        x[X_COMPUTE].count++;
        x[X_COMPUTE].timers++;
        x[X_COMPUTE].gpu_ns += k;
        x[X_COMPUTE].allocs += 2;
        x[X_COMPUTE].alloc_bytes += sa + sb;
        x[X_COMPUTE].frees++;
        x[X_COMPUTE].freed_bytes += sa;
        if (pk > x[X_COMPUTE].peak) x[X_COMPUTE].peak = pk;
        x[X_OTHER].count++;
        x[X_OTHER].timers++;
        x[X_OTHER].gpu_ns += oa.ns - before;
        ASSERT_EQ_INT(oa.rc, 0);
        x[X_OTHER].allocs++;
        x[X_OTHER].alloc_bytes += 64;
        x[X_OTHER].frees++;
        x[X_OTHER].freed_bytes += 64;
        if (total + 64 > x[X_OTHER].peak) x[X_OTHER].peak = total + 64;
    }
    run_kernel(p, e); /* outside every range: counts nowhere */
    ASSERT_EQ_INT(gp_kernels_resolve(p, 1), 0);
}

/* Runs the program on a profiler with options o and checks the rows, the
 * export and its import; returns the export's path in jp (caller removes). */
static void run_case(cl_env *e, const gp_options *o, int iters, uint64_t want_aggregated, char *jp,
                     size_t njp)
{
    gp_options oo = {0};
    if (o) oo = *o;
    oo.leak_report = 1; /* buffer b of each step stays tracked */
    gp_profiler *p = gp_profiler_create(&oo);
    ASSERT(p != NULL);
    expect x[X_N];
    char(*bufs)[64] = calloc((size_t)iters * 2, 64);
    program(p, e, iters, x, bufs);
    gp_summary_row *rows;
    size_t n;
    ASSERT_EQ_INT(gp_summary_rows(p, &rows, &n), 0);
    uint64_t agg = 0;
    for (int i = 0; i < X_N; i++) {
        const gp_summary_row *r = find_row(rows, n, x[i].name);
        check_row(r, &x[i]);
        agg += r->aggregated;
    }
    ASSERT_EQ_INT(agg, want_aggregated);
    /* the kernel row is not a range: no per-entry metrics */
    for (size_t i = 0; i < n; i++)
        if (!strcmp(rows[i].group, "kernel")) ASSERT_EQ_INT(rows[i].gpu_timers, 0);
    gp_summary_rows_free(rows, n);
    /* the export's summary carries them, and its trace reads back to the
     * same figures through the one summary computation */
    tmp_path(jp, njp, o && o->sink == GP_SINK_AGGREGATE ? "agg.json" : "kept.json");
    ASSERT_EQ_INT(gp_export_json(p, jp), 0);
    char *js = gp_test_slurp(jp);
    ASSERT(js != NULL);
    ASSERT_CONTAINS(js, "\"gpu_timers\"");
    ASSERT_CONTAINS(js, "\"bandwidth_Bps\"");
    free(js);
    /* the library's own text summary prints the same per-entry table */
    char *ps = NULL;
    size_t pn = 0;
    FILE *pf = open_memstream(&ps, &pn);
    ASSERT(pf != NULL);
    gp_print_summary(p, pf);
    fclose(pf);
    ASSERT_CONTAINS(ps, "Per-entry metrics");
    char pbw[64];
    snprintf(pbw, sizeof pbw, "%.3f", (double)x[0].xfer_bytes / (double)x[0].xfer_ns);
    ASSERT_CONTAINS(ps, pbw);
    free(ps);
    gp_trace *t = NULL;
    gp_err er;
    ASSERT_EQ_INT(gp_import_json_file(jp, NULL, &t, &er), 0);
    gp_summary s;
    ASSERT_EQ_INT(gp_summary_compute(t, &s), 0);
    for (int i = 0; i < X_N; i++) check_op_row(t, &s, &x[i]);
    gp_summary_free(&s);
    gp_trace_destroy(t);
    gp_profiler_destroy(p);
    free(bufs);
    check_cli(jp, x, X_N);
}
#endif

TEST(kept_ranges_opencl)
{
#ifndef GP_HAVE_OPENCL
    SKIP("built without OpenCL");
#else
    cl_env e = {0};
    char why[200], jp[256];
    if (cl_setup(&e, 100, why, sizeof why)) SKIP("%s", why);
    run_case(&e, NULL, 4, 0, jp, sizeof jp);
    if (!getenv("GP_TEST_KEEP_FILES")) remove(jp);
    cl_teardown(&e);
#endif
}

TEST(aggregated_ranges_opencl)
{
#ifndef GP_HAVE_OPENCL
    SKIP("built without OpenCL");
#else
    cl_env e = {0};
    char why[200], jp[256];
    if (cl_setup(&e, 100, why, sizeof why)) SKIP("%s", why);
    gp_options o = {0};
    o.sink = GP_SINK_AGGREGATE;
    run_case(&e, &o, 4, 4 * X_N, jp, sizeof jp);
    remove(jp);
    cl_teardown(&e);
#endif
}

TEST(mixed_rollover_opencl)
{
#ifndef GP_HAVE_OPENCL
    SKIP("built without OpenCL");
#else
    /* the default sink with a small cap: the first ranges of each thread
     * are kept as events, the rest roll over; one row sums both */
    cl_env e = {0};
    char why[200], jp[256];
    if (cl_setup(&e, 100, why, sizeof why)) SKIP("%s", why);
    gp_options o = {0};
    o.keep_max = 5; /* main thread: step, upload, compute of step 1, then step 2 and upload 2 */
    /* other threads keep their 1 range each (a new thread per step) */
    run_case(&e, &o, 5, 3 * 5 - 5, jp, sizeof jp);
    remove(jp);
    cl_teardown(&e);
#endif
}

TEST(cuda_stand_in_known_durations)
{
#ifndef GP_FAKE_CUDART
    SKIP("built without the CUDA toolkit (no stand-in libcudart)");
#else
    /* the stand-in's virtual device clock: each timing lasts what the test
     * advances it by, so every figure is known exactly */
    void (*work)(double) = fake_cudart();
    gp_options o = {0};
    o.keep_max = 7; /* the first iterations kept as events, the rest roll over */
    gp_profiler *p = gp_profiler_create(&o);
    expect x[3] = {{.name = "iter"}, {.name = "h2d"}, {.name = "kern"}};
    int64_t late_ns = 0;
    for (int i = 0; i < 6; i++) {
        int64_t bytes = (int64_t)(1 << 20) * (i + 1);
        double h2d_ms = 0.25 * (i + 1), k_ms = 1.5 + 0.125 * i;
        gp_range_begin(p, "iter");
        gp_range_begin_ex(p, "h2d", GP_DEV_GPU, GP_BACKEND_CUDA, bytes);
        ASSERT_EQ_INT(gp_cuda_begin(p, "h2d", NULL), 0);
        work(h2d_ms);
        ASSERT_EQ_INT(gp_cuda_end_ex(p, "h2d", NULL, bytes), 0);
        gp_range_end(p);
        gp_range_begin(p, "kern");
        ASSERT_EQ_INT(gp_cuda_begin(p, "k", NULL), 0);
        work(k_ms);
        ASSERT_EQ_INT(gp_cuda_end(p, "k", NULL), 0);
        gp_range_end(p);
        gp_range_end(p);
        int64_t hn = (int64_t)(h2d_ms * 1e6), kn = (int64_t)(k_ms * 1e6);
        x[0].count++;
        x[0].timers += 2;
        x[0].gpu_ns += hn + kn;
        x[0].xfers++;
        x[0].xfer_ns += hn;
        x[0].xfer_bytes += bytes;
        x[1].count++;
        x[1].timers++;
        x[1].gpu_ns += hn;
        x[1].xfers++;
        x[1].xfer_ns += hn;
        x[1].xfer_bytes += bytes;
        x[2].count++;
        x[2].timers++;
        x[2].gpu_ns += kn;
    }
    /* a timing begun outside every range and ended inside one counts there
     * (the call that closes a timing decides) */
    ASSERT_EQ_INT(gp_cuda_begin(p, "late", NULL), 0);
    work(2.0);
    gp_range_begin(p, "late");
    ASSERT_EQ_INT(gp_cuda_end(p, "late", NULL), 0);
    gp_range_end(p);
    late_ns = 2000000;
    ASSERT_EQ_INT(gp_kernels_resolve(p, 1), 0);
    gp_summary_row *rows;
    size_t n;
    ASSERT_EQ_INT(gp_summary_rows(p, &rows, &n), 0);
    uint64_t agg = 0;
    for (int i = 0; i < 3; i++) {
        const gp_summary_row *r = find_row(rows, n, x[i].name);
        check_row(r, &x[i]);
        agg += r->aggregated;
    }
    ASSERT_EQ_INT(agg, 3 * 6 - 7); /* 7 kept: 2 whole iterations and "iter" of the third */
    const gp_summary_row *lr = find_row(rows, n, "late");
    ASSERT(lr != NULL);
    ASSERT_EQ_INT(lr->gpu_ns, late_ns);
    /* bandwidth from the totals: 21 MiB over 5.25 ms */
    ASSERT_NEAR(find_row(rows, n, "h2d")->bandwidth_Bps, 21.0 * 1048576 / 5.25e-3, 1e-3);
    gp_summary_rows_free(rows, n);
    char jp[256];
    gp_trace *t = export_read(p, "cuda.json", jp, sizeof jp);
    gp_summary s;
    ASSERT_EQ_INT(gp_summary_compute(t, &s), 0);
    for (int i = 0; i < 3; i++) check_op_row(t, &s, &x[i]);
    gp_summary_free(&s);
    gp_trace_destroy(t);
    gp_profiler_destroy(p);
    check_cli(jp, x, 3);
    if (!getenv("GP_TEST_KEEP_FILES")) remove(jp);
#endif
}

/* A session's bottleneck rows hold the session's share of the per-entry
 * metrics, as of counts and times (docs/api.md "Sessions"): tracker calls
 * and timings inside the ranges before the session are not counted, and the
 * peak, a maximum over all the ranges of a name, is unknown (-1) for a name
 * that allocated before the session. A gp_profiler_reset inside a session
 * makes the session count from the reset (before: counts and launches
 * wrapped around below zero). */
TEST(session_share_of_entry_metrics)
{
    gp_profiler *p = gp_profiler_create(NULL);
    ASSERT(p);
    static char bufs[64];
#ifdef GP_FAKE_CUDART
    void (*work)(double) = fake_cudart();
#endif
    for (int i = 0; i < 10; i++) { /* before the session */
        gp_range_begin(p, "step");
        ASSERT_EQ_INT(gp_mem_track(p, "b", &bufs[i], 1000, NULL, 0, NULL), 0);
        ASSERT_EQ_INT(gp_mem_untrack(p, &bufs[i]), 0);
#ifdef GP_FAKE_CUDART
        ASSERT_EQ_INT(gp_cuda_begin(p, "k", NULL), 0);
        work(1.0);
        ASSERT_EQ_INT(gp_cuda_end_ex(p, "k", NULL, 1000), 0);
#endif
        gp_range_end(p);
    }
    gp_session *s = gp_session_begin(p, "s");
    ASSERT(s);
    for (int i = 0; i < 3; i++) {
        gp_range_begin(p, "step");
        ASSERT_EQ_INT(gp_mem_track(p, "b", &bufs[20 + i], 500, NULL, 0, NULL), 0);
        ASSERT_EQ_INT(gp_mem_untrack(p, &bufs[20 + i]), 0);
#ifdef GP_FAKE_CUDART
        ASSERT_EQ_INT(gp_cuda_begin(p, "k", NULL), 0);
        work(0.5);
        ASSERT_EQ_INT(gp_cuda_end_ex(p, "k", NULL, 4000), 0);
#endif
        gp_range_end(p);
        gp_range_begin(p, "fresh"); /* only in the session: its own peak */
        ASSERT_EQ_INT(gp_mem_track(p, "c", &bufs[30 + i], 700, NULL, 0, NULL), 0);
        gp_range_end(p);
    }
    gp_session_result r;
    ASSERT_EQ_INT(gp_session_end(s, &r), 0);
    const gp_summary_row *st = NULL, *fr = NULL;
    for (size_t i = 0; i < r.nbottlenecks; i++) {
        if (!strcmp(r.bottlenecks[i].name, "step")) st = &r.bottlenecks[i];
        if (!strcmp(r.bottlenecks[i].name, "fresh")) fr = &r.bottlenecks[i];
    }
    ASSERT(st && fr);
    ASSERT_EQ_INT(st->count, 3);
    ASSERT_EQ_INT(st->allocs, 3);
    ASSERT_EQ_INT(st->frees, 3);
    ASSERT_EQ_INT(st->alloc_bytes, 1500);
    ASSERT_EQ_INT(st->freed_bytes, 1500);
    ASSERT_EQ_INT(st->peak_bytes, -1);
    ASSERT_EQ_INT(fr->allocs, 3);
    ASSERT_EQ_INT(fr->alloc_bytes, 2100);
    ASSERT_EQ_INT(fr->peak_bytes, 2100);
#ifdef GP_FAKE_CUDART
    ASSERT_EQ_INT(r.kernel_launches, 3);
    ASSERT_EQ_INT(r.gpu_ns, 1500000);
    ASSERT_EQ_INT(st->gpu_timers, 3);
    ASSERT_EQ_INT(st->gpu_ns, 1500000);
    ASSERT_EQ_INT(st->xfers, 3);
    ASSERT_EQ_INT(st->xfer_ns, 1500000);
    ASSERT_EQ_INT(st->xfer_bytes, 12000);
    ASSERT_NEAR(st->bandwidth_Bps, 12000 / 1.5e-3, 1e-6);
#else
    ASSERT_EQ_INT(st->gpu_timers, 0);
    ASSERT(isnan(st->bandwidth_Bps));
#endif
    gp_session_result_free(&r);
    for (int i = 0; i < 3; i++) ASSERT_EQ_INT(gp_mem_untrack(p, &bufs[30 + i]), 0);

    /* a reset inside the session */
    s = gp_session_begin(p, "with reset");
    ASSERT(s);
    gp_range_begin(p, "step");
    gp_range_end(p);
    ASSERT_EQ_INT(gp_profiler_reset(p), 0);
    for (int i = 0; i < 2; i++) {
        gp_range_begin(p, "step");
        ASSERT_EQ_INT(gp_mem_track(p, "b", &bufs[40 + i], 300, NULL, 0, NULL), 0);
        ASSERT_EQ_INT(gp_mem_untrack(p, &bufs[40 + i]), 0);
#ifdef GP_FAKE_CUDART
        ASSERT_EQ_INT(gp_cuda_begin(p, "k", NULL), 0);
        work(0.25);
        ASSERT_EQ_INT(gp_cuda_end(p, "k", NULL), 0);
#endif
        gp_range_end(p);
    }
    ASSERT_EQ_INT(gp_session_end(s, &r), 0);
    st = NULL;
    for (size_t i = 0; i < r.nbottlenecks; i++)
        if (!strcmp(r.bottlenecks[i].name, "step")) st = &r.bottlenecks[i];
    ASSERT(st);
    ASSERT_EQ_INT(st->count, 2);
    ASSERT_CMP_INT(st->total_ns, >=, 0);
    ASSERT_CMP_INT(st->self_ns, >=, 0);
    ASSERT_EQ_INT(st->allocs, 2);
    ASSERT_EQ_INT(st->alloc_bytes, 600);
    ASSERT_EQ_INT(st->peak_bytes, 300);
#ifdef GP_FAKE_CUDART
    ASSERT_EQ_INT(r.kernel_launches, 2);
    ASSERT_EQ_INT(r.gpu_ns, 500000);
    ASSERT_EQ_INT(r.nkernels, 1);
    ASSERT_EQ_INT(r.kernels[0].count, 2);
#else
    ASSERT_EQ_INT(r.kernel_launches, 0);
#endif
    gp_session_result_free(&r);
    gp_profiler_destroy(p);
}

TEST(no_range_no_metrics)
{
    /* tracker calls outside every range count nowhere; a range without
     * timings or tracker calls has no metrics */
    gp_profiler *p = gp_profiler_create(NULL);
    int x;
    gp_range_begin(p, "plain");
    gp_range_end(p);
    ASSERT_EQ_INT(gp_mem_track(p, "x", &x, 64, NULL, 0, NULL), 0);
    gp_summary_row *rows;
    size_t n;
    ASSERT_EQ_INT(gp_summary_rows(p, &rows, &n), 0);
    const gp_summary_row *r = find_row(rows, n, "plain");
    ASSERT(r != NULL);
    ASSERT_EQ_INT(r->gpu_timers, 0);
    ASSERT_EQ_INT(r->allocs, 0);
    ASSERT_EQ_INT(r->peak_bytes, -1);
    ASSERT(isnan(r->bandwidth_Bps));
    gp_summary_rows_free(rows, n);
    ASSERT_EQ_INT(gp_mem_untrack(p, &x), 0);
    gp_profiler_destroy(p);
}

#ifdef GP_FAKE_CUDART
/* Timings i of kernel_timings_*: name i % 3, 0.125 .. 0.625 ms (exact in
 * float ms and in ns). */
static const char *const kname[3] = {"gemm", "softmax", "copy"};
static int64_t kdur_ns(long i)
{
    return 125000 * (1 + (i * 7) % 5);
}

/* Records timings [from, to) inside the open ranges of the caller, each
 * inside a range "iter" of its own. */
static void ktimings(gp_profiler *p, void (*work)(double), long from, long to)
{
    for (long i = from; i < to; i++) {
        gp_range_begin(p, "iter");
        ASSERT_EQ_INT(gp_cuda_begin(p, kname[i % 3], NULL), 0);
        work((double)kdur_ns(i) / 1e6);
        ASSERT_EQ_INT(gp_cuda_end(p, kname[i % 3], NULL), 0);
        gp_range_end(p);
    }
}

/* gp_kernel_stats against the exact figures of timings [0, n). */
static void check_kstats(gp_profiler *p, long n)
{
    ASSERT_EQ_INT(gp_kernels_resolve(p, 1), 0);
    gp_kernel_row *rows;
    size_t nr;
    ASSERT_EQ_INT(gp_kernel_stats(p, &rows, &nr), 0);
    ASSERT_EQ_INT(nr, 3);
    for (int k = 0; k < 3; k++) {
        uint64_t c = 0;
        int64_t tot = 0, mn = INT64_MAX, mx = 0;
        for (long i = k; i < n; i += 3) {
            c++;
            tot += kdur_ns(i);
            if (kdur_ns(i) < mn) mn = kdur_ns(i);
            if (kdur_ns(i) > mx) mx = kdur_ns(i);
        }
        double mean = (double)tot / (double)c, acc = 0;
        for (long i = k; i < n; i += 3)
            acc += ((double)kdur_ns(i) - mean) * ((double)kdur_ns(i) - mean);
        const gp_kernel_row *r = NULL;
        for (size_t j = 0; j < nr; j++)
            if (!strcmp(rows[j].name, kname[k])) r = &rows[j];
        ASSERT(r != NULL);
        ASSERT_EQ_INT(r->count, c);
        ASSERT_EQ_INT(r->total_ns, tot);
        ASSERT_EQ_INT(r->min_ns, mn);
        ASSERT_EQ_INT(r->max_ns, mx);
        ASSERT_NEAR(r->mean_ns, mean, 1e-6);
        ASSERT_NEAR(r->std_ns, sqrt(acc / (double)(c - 1)), 1e-6 * mean);
    }
    gp_kernel_rows_free(rows, nr);
}

/* Kernel slices and the kernel group's count per name in the export at jp. */
static void check_export_kernels(const char *jp, long n, size_t max_slices)
{
    gp_trace *t = NULL;
    gp_err er;
    ASSERT_EQ_INT(gp_import_json_file(jp, NULL, &t, &er), 0);
    size_t ks = 0;
    for (size_t i = 0; i < t->slices.n; i++)
        if (!strcmp(gp_trace_s(t, t->cats.v[t->slices.v[i].cat].name), "kernel")) ks++;
    ASSERT_CMP_INT(ks, <=, max_slices);
    gp_summary s;
    ASSERT_EQ_INT(gp_summary_compute(t, &s), 0);
    uint64_t got = 0;
    int64_t tot = 0, want_tot = 0;
    for (size_t i = 0; i < s.n; i++)
        if (s.rows[i].group == GP_G_KERNEL) {
            got += s.rows[i].st.count;
            tot += s.rows[i].st.sum;
        }
    for (long i = 0; i < n; i++) want_tot += kdur_ns(i);
    ASSERT_EQ_INT(got, (uint64_t)n);
    ASSERT_EQ_INT(tot, want_tot);
    gp_summary_free(&s);
    gp_trace_destroy(t);
}
#endif

#ifdef GP_FAKE_CUDART
static void (*warm_work)(double);
static void one_timing(void *arg)
{
    gp_profiler *p = arg;
    gp_cuda_begin(p, "w", NULL);
    warm_work(0.125);
    gp_cuda_end(p, "w", NULL);
}
#endif

/* CUDA durations are rounded to the nanosecond (cudaEventElapsedTime's
 * float 0.7 ms is 0.699999988 ms: 700000 ns, it was truncated to 699999),
 * and gp_measure's warm-up timings past the kernel cap, not kept, are
 * counted as dropped (gp_record_stats_get) */
TEST(kernel_timing_rounding_and_warmup_drops)
{
#ifndef GP_FAKE_CUDART
    SKIP("built without the CUDA toolkit (no stand-in libcudart)");
#else
    warm_work = fake_cudart();
    gp_options o = {0};
    o.keep_max = 5; /* 10 kernel timings kept as slices */
    gp_profiler *p = gp_profiler_create(&o);
    ASSERT(p != NULL);
    ASSERT_EQ_INT(gp_cuda_begin(p, "k07", NULL), 0);
    warm_work(0.7);
    ASSERT_EQ_INT(gp_cuda_end(p, "k07", NULL), 0);
    for (int i = 0; i < 9; i++) one_timing(p); /* the cap reached */
    gp_result r;
    ASSERT_EQ_INT(gp_measure(p, "m", one_timing, p, 4, 2, &r), 0);
    ASSERT_EQ_INT(gp_kernels_resolve(p, 1), 0);
    gp_kernel_row *rows;
    size_t nr;
    ASSERT_EQ_INT(gp_kernel_stats(p, &rows, &nr), 0);
    int seen = 0;
    for (size_t i = 0; i < nr; i++) {
        if (!strcmp(rows[i].name, "k07")) {
            ASSERT_EQ_INT(rows[i].total_ns, 700000);
            seen |= 1;
        }
        if (!strcmp(rows[i].name, "w")) {
            ASSERT_EQ_INT(rows[i].count, 9 + 2); /* the warm-ups left out */
            seen |= 2;
        }
    }
    ASSERT_EQ_INT(seen, 3);
    gp_kernel_rows_free(rows, nr);
    gp_record_stats st;
    ASSERT_EQ_INT(gp_record_stats_get(p, &st), 0);
    ASSERT_EQ_INT(st.dropped, 4); /* the 4 warm-up timings past the cap */
    gp_profiler_destroy(p);
#endif
}

#ifdef GP_FAKE_CUDART
/* The summary row of (group, name) in rows, or NULL. */
static const gp_summary_row *row_in(const gp_summary_row *r, size_t n, const char *group,
                                    const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(r[i].group, group) && !strcmp(r[i].name, name)) return &r[i];
    return NULL;
}
#endif

/* gp_measure's warm-up timings kept on the timeline are not kernels of the
 * program's work in any output: the kernel rows of gp_summary_rows, of an
 * export's summary and gp_kernel_stats all count the 2 measured timings,
 * and the 3 warm-ups are rows of their own (category gpuprof_warmup).
 * Before, the summary rows counted 5 kernels where gp_kernel_stats said 2. */
TEST(warmup_timings_out_of_kernel_rows)
{
#ifndef GP_FAKE_CUDART
    SKIP("built without the CUDA toolkit (no stand-in libcudart)");
#else
    warm_work = fake_cudart();
    gp_profiler *p = gp_profiler_create(NULL);
    ASSERT(p != NULL);
    gp_result r;
    ASSERT_EQ_INT(gp_measure(p, "m", one_timing, p, 3, 2, &r), 0);
    ASSERT_EQ_INT(gp_kernels_resolve(p, 1), 0);
    gp_kernel_row *kr;
    size_t nk;
    ASSERT_EQ_INT(gp_kernel_stats(p, &kr, &nk), 0);
    ASSERT_EQ_INT(nk, 1);
    ASSERT_EQ_INT(kr[0].count, 2);
    gp_kernel_rows_free(kr, nk);
    gp_summary_row *rows;
    size_t nr;
    ASSERT_EQ_INT(gp_summary_rows(p, &rows, &nr), 0);
    const gp_summary_row *k = row_in(rows, nr, "kernel", "w"), *w = row_in(rows, nr, "other", "w");
    ASSERT(k && w);
    ASSERT_EQ_INT(k->count, 2);
    ASSERT_EQ_INT(w->count, 3);
    gp_summary_rows_free(rows, nr);
    char jp[256];
    gp_trace *t = export_read(p, "warmup.json", jp, sizeof jp);
    gp_profiler_destroy(p);
    gp_summary s;
    ASSERT_EQ_INT(gp_summary_compute(t, &s), 0);
    uint64_t kernels = 0, others = 0;
    for (size_t i = 0; i < s.n; i++) {
        if (strcmp(gp_trace_s(t, s.rows[i].name), "w")) continue;
        if (s.rows[i].group == GP_G_KERNEL) kernels += s.rows[i].st.count;
        if (s.rows[i].group == GP_G_OTHER) others += s.rows[i].st.count;
    }
    ASSERT_EQ_INT(kernels, 2);
    ASSERT_EQ_INT(others, 3);
    gp_summary_free(&s);
    gp_trace_destroy(t);
    remove(jp);
#endif
}

/* Kernel timings in a long run: past 2 x keep_max (the default and
 * aggregate sinks) they fold into per-(name, stream) statistics instead of
 * one slice each, so memory stays bounded while gp_kernel_stats, the
 * summary of an export and the per-entry metrics of a kept range around
 * all of them stay exact; before, every timing stayed a slice (about 100 B
 * each, 10 M timings: 1 GB) and its per-entry record another 16 B. */
TEST(kernel_timings_bounded)
{
#ifndef GP_FAKE_CUDART
    SKIP("built without the CUDA toolkit (no stand-in libcudart)");
#else
    void (*work)(double) = fake_cudart();
    gp_options o = {0};
    o.keep_max = 500; /* 1000 kernel timings kept as slices */
    gp_profiler *p = gp_profiler_create(&o);
    ASSERT(p != NULL);
    const long n = 20000;
    gp_range_begin(p, "epoch"); /* kept: all n timings inside it */
    ktimings(p, work, 0, n);
    gp_range_end(p);
    check_kstats(p, n);
    gp_summary_row *rows;
    size_t nr;
    ASSERT_EQ_INT(gp_summary_rows(p, &rows, &nr), 0);
    int64_t all = 0;
    for (long i = 0; i < n; i++) all += kdur_ns(i);
    const gp_summary_row *ep = find_row(rows, nr, "epoch"), *it = find_row(rows, nr, "iter");
    ASSERT(ep != NULL && it != NULL);
    ASSERT_EQ_INT(ep->gpu_timers, (uint64_t)n);
    ASSERT_EQ_INT(ep->gpu_ns, all);
    ASSERT_EQ_INT(it->count, (uint64_t)n);
    ASSERT_EQ_INT(it->gpu_timers, (uint64_t)n); /* kept ones and rolled-over ones */
    ASSERT_EQ_INT(it->gpu_ns, all);
    gp_summary_rows_free(rows, nr);
    char jp[256];
    tmp_path(jp, sizeof jp, "ktimings.json");
    ASSERT_EQ_INT(gp_export_json(p, jp), 0);
    check_export_kernels(jp, n, 1000);
    remove(jp);
    gp_profiler_destroy(p);

    /* the stream sink writes every timing as it comes (here into a file),
     * keeps their statistics, and never counts them twice in its rollover */
    gp_options so = {0};
    so.sink = GP_SINK_STREAM;
    tmp_path(jp, sizeof jp, "kstream.json");
    so.stream_path = jp;
    p = gp_profiler_create(&so);
    ASSERT(p != NULL);
    ktimings(p, work, 0, n);
    check_kstats(p, n);
    gp_profiler_destroy(p);
    check_export_kernels(jp, n, (size_t)n);
    remove(jp);
    /* a program that only times kernels (no range, so no drain thread):
     * its timer calls write them out */
    p = gp_profiler_create(&so);
    ASSERT(p != NULL);
    for (long i = 0; i < n; i++) {
        ASSERT_EQ_INT(gp_cuda_begin(p, kname[i % 3], NULL), 0);
        work((double)kdur_ns(i) / 1e6);
        ASSERT_EQ_INT(gp_cuda_end(p, kname[i % 3], NULL), 0);
        if (i == n / 2) {
            pthread_mutex_lock(&p->mu);
            uint64_t held = p->kslices;
            pthread_mutex_unlock(&p->mu);
            ASSERT_CMP_INT(held, <=, GP_KSTREAM_BLOCK);
        }
    }
    check_kstats(p, n);
    gp_profiler_destroy(p);
    check_export_kernels(jp, n, (size_t)n);
    remove(jp);
    /* the same into the run store: every timing a row of its kernels table */
    tmp_path(jp, sizeof jp, "kstream.db");
    remove(jp);
    so.stream_path = jp;
    p = gp_profiler_create(&so);
    ASSERT(p != NULL);
    ktimings(p, work, 0, n);
    check_kstats(p, n);
    gp_profiler_destroy(p);
    const char *bin = getenv("GPUPROF_BIN");
    if (bin) {
        char cmd[800], out[300];
        snprintf(out, sizeof out, "%s.out", jp);
        snprintf(cmd, sizeof cmd,
                 "'%s' sql '%s' \"SELECT count(*) || '|' || sum(dur) FROM kernels\" > '%s'", bin,
                 jp, out);
        ASSERT_EQ_INT(system(cmd), 0);
        char *txt = gp_test_slurp(out);
        ASSERT(txt != NULL);
        char want[64];
        int64_t all_ns = 0;
        for (long i = 0; i < n; i++) all_ns += kdur_ns(i);
        snprintf(want, sizeof want, "%ld|%lld", n, (long long)all_ns);
        ASSERT_CONTAINS(txt, want);
        free(txt);
        remove(out);
    }
    remove(jp);

    if (GP_TEST_SANITIZED) return; /* ASan's quarantine holds freed memory */
    /* the default sink: RSS flat over 600,000 more timings, every one inside
     * one kept range, once 2 x keep_max are kept */
    p = gp_profiler_create(NULL);
    ASSERT(p != NULL);
    gp_range_begin(p, "epoch");
    ktimings(p, work, 0, 300000);
    ASSERT_EQ_INT(gp_kernels_resolve(p, 1), 0);
    long r1 = gp_test_rss_kb();
    ktimings(p, work, 300000, 900000);
    ASSERT_EQ_INT(gp_kernels_resolve(p, 1), 0);
    long r2 = gp_test_rss_kb();
    gp_range_end(p);
    fprintf(stderr, "  RSS %ld kB after 300,000 timings, %ld kB after 900,000\n", r1, r2);
    ASSERT_CMP_INT(r2 - r1, <, 8192);
    check_kstats(p, 900000);
    gp_profiler_destroy(p);
#endif
}

/* Threads that come and go (docs/api.md "Threads that come and go"): the
 * per-entry metrics of an exited thread's inline ranges are folded into one
 * entry per name of the "exited threads", so a program that starts a thread
 * per task, each making tracker calls and timings inside aggregated
 * ranges, holds one entry per name however many threads it started. Before,
 * every exited thread left its entries for good (~140 B per thread and name)
 * and each new thread whose buffer took an old one's address found its
 * entries by a scan of all of them (20,000 threads: 16 s instead of 2 s).
 * Timings of an exited thread still pending when it exits (polled only
 * every 1,024) count in the folded entry when they complete. */
typedef struct churn_job {
    gp_profiler *p;
    void (*work)(double);
    char *bufs; /* NULL: no tracker calls */
} churn_job;

static void *churn_task(void *a)
{
    churn_job *j = a;
    for (int i = 0; i < 5; i++) {
        gp_range_begin(j->p, "task");
        if (j->bufs) {
            gp_mem_track(j->p, "b", j->bufs + i, 100 + i, NULL, 0, NULL);
            gp_mem_untrack(j->p, j->bufs + i);
        }
        if (j->work) {
            gp_cuda_begin(j->p, "k", NULL);
            j->work(0.125);
            gp_cuda_end(j->p, "k", NULL);
        }
        gp_range_end(j->p);
    }
    return NULL;
}

/* Runs n threads of churn_task one after another on a new profiler of the
 * aggregate sink (every range aggregated inline) in j->p, and waits for
 * their timings. */
static void churn_run(churn_job *j, int n)
{
    gp_options o = {0};
    o.sink = GP_SINK_AGGREGATE;
    j->p = gp_profiler_create(&o);
    ASSERT(j->p != NULL);
    for (int t = 0; t < n; t++) {
        pthread_t th;
        ASSERT_EQ_INT(pthread_create(&th, NULL, churn_task, j), 0);
        pthread_join(th, NULL);
    }
    ASSERT_EQ_INT(gp_kernels_resolve(j->p, 1), 0);
}

TEST(exited_threads_inline_metrics_bounded)
{
    static char bufs[8];
    churn_job j = {0};
    j.bufs = bufs;
#ifdef GP_FAKE_CUDART
    j.work = fake_cudart();
#endif
    const int nthreads = 3000;
    churn_run(&j, nthreads);
    gp_summary_row *rows;
    size_t n;
    ASSERT_EQ_INT(gp_summary_rows(j.p, &rows, &n), 0);
    const gp_summary_row *r = find_row(rows, n, "task");
    ASSERT(r != NULL);
    ASSERT_EQ_INT(r->count, (uint64_t)nthreads * 5);
    ASSERT_EQ_INT(r->allocs, (uint64_t)nthreads * 5);
    ASSERT_EQ_INT(r->frees, (uint64_t)nthreads * 5);
    ASSERT_EQ_INT(r->alloc_bytes, (int64_t)nthreads * (100 + 101 + 102 + 103 + 104));
    ASSERT_EQ_INT(r->freed_bytes, r->alloc_bytes);
    ASSERT_EQ_INT(r->gpu_timers, j.work ? (uint64_t)nthreads * 5 : 0);
    ASSERT_EQ_INT(r->gpu_ns, j.work ? (int64_t)nthreads * 5 * 125000 : 0);
    gp_summary_rows_free(rows, n);
    /* one entry for "task" of the exited threads (and a slot or two of
     * the thread that exited last, freed for reuse) */
    pthread_mutex_lock(&j.p->mu);
    size_t live = j.p->inl.n - j.p->inl_free.n, all = j.p->inl.n;
    pthread_mutex_unlock(&j.p->mu);
    fprintf(stderr, "  inline metric entries: %zu live, %zu slots\n", live, all);
    ASSERT_CMP_INT(live, <=, 2);
    ASSERT_CMP_INT(all, <=, 4);
    gp_profiler_destroy(j.p);
}

/* A thread whose ranges all roll over inline and that makes timer calls
 * gets no track of its own (nothing of it is on a timeline): a program that
 * keeps starting such threads holds no memory per thread. Before, every
 * timer or tracker call made its thread's track (~50 B per thread for
 * good). A tracker call whose [memory] event is kept still puts it on its
 * thread's track. */
TEST(inline_threads_make_no_tracks)
{
#ifndef GP_FAKE_CUDART
    SKIP("built without the CUDA toolkit (no stand-in libcudart)");
#else
    churn_job j = {0};
    j.work = fake_cudart();
    churn_run(&j, 2000);
    gp_summary_row *rows;
    size_t n;
    ASSERT_EQ_INT(gp_summary_rows(j.p, &rows, &n), 0);
    const gp_summary_row *r = find_row(rows, n, "task");
    ASSERT(r != NULL);
    ASSERT_EQ_INT(r->gpu_timers, 2000 * 5);
    gp_summary_rows_free(rows, n);
    pthread_mutex_lock(&j.p->mu);
    size_t ntr = j.p->tr->tracks.n;
    pthread_mutex_unlock(&j.p->mu);
    fprintf(stderr, "  tracks after 2,000 threads: %zu\n", ntr);
    ASSERT_CMP_INT(ntr, <, 10); /* the process, the stream, the exited threads */
    /* a kept [memory] event of a thread that records ranges (this one, its
     * range aggregated inline): on the thread's track */
    gp_range_begin(j.p, "main");
    gp_range_end(j.p);
    static char one;
    ASSERT_EQ_INT(gp_mem_track(j.p, "b", &one, 64, NULL, 0, NULL), 0);
    ASSERT_EQ_INT(gp_mem_untrack(j.p, &one), 0);
    pthread_mutex_lock(&j.p->mu);
    const gp_trace *t = j.p->tr;
    ASSERT_CMP_INT(t->mem_events.n, >=, 2);
    int on_thread = t->mem_events.v[t->mem_events.n - 1].track != j.p->proc_track;
    pthread_mutex_unlock(&j.p->mu);
    ASSERT(on_thread);
    gp_profiler_destroy(j.p);
#endif
}

/* A session's kernels and its launches count the same timings (docs/api.md
 * "Sessions"): a timing of before the session that is still running at
 * gp_session_begin is in neither, one of the session still running at
 * gp_session_end is in both. Before, the begin and the end took the
 * kernel rows before waiting for the pending timings and the launch count
 * after: the first timing was a kernel of the session with 0 launches, the
 * second a launch with no kernel. */
TEST(session_pending_timings_consistent)
{
#ifndef GP_HAVE_OPENCL
    SKIP("built without OpenCL");
#else
    cl_env e;
    char why[200];
    if (cl_setup(&e, 2000, why, sizeof why)) SKIP("%s", why);
    gp_profiler *p = gp_profiler_create(NULL);
    ASSERT(p != NULL);
    cl_event ev;
    ASSERT_EQ_INT(clEnqueueNDRangeKernel(e.q, e.k, 1, NULL, &e.n, NULL, 0, NULL, &ev), 0);
    clFlush(e.q);
    ASSERT_EQ_INT(gp_cl_event(p, "scale", ev), 0); /* still running */
    gp_session *s = gp_session_begin(p, "after");
    ASSERT(s != NULL);
    gp_session_result r;
    ASSERT_EQ_INT(gp_session_end(s, &r), 0);
    ASSERT_EQ_INT(r.kernel_launches, 0);
    ASSERT_EQ_INT(r.nkernels, 0);
    gp_session_result_free(&r);
    clReleaseEvent(ev);
    s = gp_session_begin(p, "inside");
    ASSERT(s != NULL);
    ASSERT_EQ_INT(clEnqueueNDRangeKernel(e.q, e.k, 1, NULL, &e.n, NULL, 0, NULL, &ev), 0);
    clFlush(e.q);
    ASSERT_EQ_INT(gp_cl_event(p, "scale", ev), 0); /* still running at the end */
    ASSERT_EQ_INT(gp_session_end(s, &r), 0);
    int64_t d = ev_ns(ev);
    clReleaseEvent(ev);
    ASSERT_EQ_INT(r.kernel_launches, 1);
    ASSERT_EQ_INT(r.gpu_ns, d);
    ASSERT_EQ_INT(r.nkernels, 1);
    ASSERT_EQ_INT(r.kernels[0].count, 1);
    ASSERT_EQ_INT(r.kernels[0].total_ns, d);
    gp_session_result_free(&r);
    gp_profiler_destroy(p);
    cl_teardown(&e);
#endif
}

/* A GPU kept busy for a long run is not advised as idle: past 2 x keep_max
 * the timings are rollover rows with no interval, and the advice engine's
 * low-gpu-utilization rule counts their time (before, 1,000 back-to-back
 * timings with 100 kept read as the GPU busy 10 % of the span). */
TEST(busy_gpu_past_kernel_cap_not_idle)
{
#ifndef GP_FAKE_CUDART
    SKIP("built without the CUDA toolkit (no stand-in libcudart)");
#else
    void (*work)(double) = fake_cudart();
    gp_options o = {0};
    o.keep_max = 50; /* 100 timings kept as slices */
    gp_profiler *p = gp_profiler_create(&o);
    ASSERT(p != NULL);
    for (int i = 0; i < 1000; i++) {
        ASSERT_EQ_INT(gp_cuda_begin(p, "k", NULL), 0);
        work(0.5);
        ASSERT_EQ_INT(gp_cuda_end(p, "k", NULL), 0);
    }
    char jp[256];
    gp_trace *t = export_read(p, "busy.json", jp, sizeof jp);
    gp_profiler_destroy(p);
    gp_advice_list al;
    ASSERT_EQ_INT(gp_advise(t, NULL, &al), 0);
    for (size_t i = 0; i < al.n; i++) {
        fprintf(stderr, "  %s: %s\n", al.v[i].rule->id, al.v[i].finding);
        ASSERT(strcmp(al.v[i].rule->id, "low-gpu-utilization") != 0);
    }
    gp_advice_list_free(&al);
    gp_trace_destroy(t);
    remove(jp);
#endif
}

TEST_MAIN(kept_ranges_opencl, aggregated_ranges_opencl, mixed_rollover_opencl,
          cuda_stand_in_known_durations, no_range_no_metrics, session_share_of_entry_metrics,
          kernel_timings_bounded, kernel_timing_rounding_and_warmup_drops,
          exited_threads_inline_metrics_bounded, session_pending_timings_consistent,
          busy_gpu_past_kernel_cap_not_idle, inline_threads_make_no_tracks,
          warmup_timings_out_of_kernel_rows)
