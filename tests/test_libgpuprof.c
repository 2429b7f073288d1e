/* tests/test_libgpuprof.c: libgpuprof: ranges, scopes, attributes, enable
 * flag, counters/observations, memory tracker, exports (read back by the
 * importer), gp_measure, OpenCL kernel timers on PoCL, CUDA skip path. */
#include "test.h"
#include "trace/import.h"
#include <gpuprof/gpuprof.h>
#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef GP_HAVE_OPENCL
#include <CL/cl.h>
#endif

static void sleep_ns(long ns)
{
    struct timespec ts = {ns / 1000000000L, ns % 1000000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

static const gp_summary_row *find_row(const gp_summary_row *r, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(r[i].name, name)) return &r[i];
    return NULL;
}

static void tmp_path(char *buf, size_t n, const char *what)
{
    snprintf(buf, n, "/tmp/gp_test_lib_%ld_%s", (long)getpid(), what);
}

TEST(ranges_nest_and_time)
{
    for (int clock = 0; clock < 2; clock++) {
        gp_options o = {0};
        o.clock = clock;
        gp_profiler *p = gp_profiler_create(&o);
        ASSERT(p);
        gp_range_begin(p, "outer");
        sleep_ns(2000000);
        gp_range_begin(p, "inner");
        sleep_ns(20000000);
        gp_range_end(p);
        gp_range_end(p);
        gp_range_end(p); /* extra end: ignored */
        gp_summary_row *r;
        size_t n;
        ASSERT_EQ_INT(gp_summary_rows(p, &r, &n), 0);
        ASSERT_EQ_INT(n, 2);
        const gp_summary_row *in = find_row(r, n, "inner"), *out = find_row(r, n, "outer");
        ASSERT(in && out);
        ASSERT_EQ_INT(in->count, 1);
        ASSERT_EQ_STR(in->group, "annotation");
        /* slept 20 ms: the range is at least that and not absurdly more */
        ASSERT_CMP_INT(in->total_ns, >=, 20000000);
        ASSERT_CMP_INT(in->total_ns, <, 200000000);
        ASSERT_CMP_INT(out->total_ns, >=, in->total_ns + 2000000);
        ASSERT_EQ_INT(out->self_ns, out->total_ns - in->total_ns);
        ASSERT_EQ_INT(in->self_ns, in->total_ns);
        ASSERT_EQ_INT(in->bytes, -1);
        gp_summary_rows_free(r, n);
        gp_profiler_destroy(p);
    }
}

static int traced_fn(gp_profiler *p, int x)
{
    GP_FUNC(p);
    return x * 2;
}

static volatile int sink;
static void add_one(int *x)
{
    *x += 1;
}

TEST(scope_func_and_call_macros)
{
    gp_profiler *p = gp_profiler_create(NULL);
    for (int i = 0; i < 3; i++) {
        GP_SCOPE(p, "loop_body");
        sink = traced_fn(p, i);
    }
    int v = 0;
    GP_TIME_CALL(p, add_one(&v));
    ASSERT_EQ_INT(v, 1);
    gp_summary_row *r;
    size_t n;
    ASSERT_EQ_INT(gp_summary_rows(p, &r, &n), 0);
    ASSERT_EQ_INT(n, 3);
    ASSERT(find_row(r, n, "loop_body") && find_row(r, n, "loop_body")->count == 3);
    ASSERT(find_row(r, n, "traced_fn") && find_row(r, n, "traced_fn")->count == 3);
    ASSERT(find_row(r, n, "add_one(&v)") && find_row(r, n, "add_one(&v)")->count == 1);
    /* nesting: loop_body contains traced_fn */
    ASSERT_CMP_INT(find_row(r, n, "loop_body")->total_ns, >=,
                   find_row(r, n, "traced_fn")->total_ns);
    gp_summary_rows_free(r, n);
    gp_profiler_destroy(p);
}

TEST(enable_disable)
{
    gp_options o = {0};
    o.start_disabled = 1;
    gp_profiler *p = gp_profiler_create(&o);
    ASSERT_EQ_INT(gp_enabled(p), 0);
    gp_range_begin(p, "off");
    gp_range_end(p);
    gp_counter(p, "c", 1);
    gp_enable(p);
    gp_range_begin(p, "on");
    gp_disable(p); /* a range opened while on is still closed */
    gp_range_begin(p, "ignored");
    gp_range_end(p); /* closes "ignored" (counted, not recorded), not "on" */
    gp_enable(p);
    gp_range_begin(p, "after");
    gp_range_end(p);
    gp_summary_row *r;
    size_t n;
    ASSERT_EQ_INT(gp_summary_rows(p, &r, &n), 0);
    /* "after" was closed by its own end, so "on" is still open: not a row yet */
    ASSERT_EQ_INT(n, 1);
    ASSERT(find_row(r, n, "after"));
    gp_summary_rows_free(r, n);
    gp_range_end(p); /* closes "on" */
    ASSERT_EQ_INT(gp_summary_rows(p, &r, &n), 0);
    ASSERT_EQ_INT(n, 2);
    ASSERT(find_row(r, n, "on") && find_row(r, n, "after"));
    gp_summary_rows_free(r, n);
    double last;
    uint64_t cnt;
    ASSERT_EQ_INT(gp_counter_last(p, "c", &last, &cnt), GP_ENOTFOUND);
    gp_profiler_destroy(p);
}

TEST(attributes_and_exports)
{
    gp_profiler *p = gp_profiler_create(NULL);
    gp_range_begin_ex(p, "copy", GP_DEV_GPU, GP_BACKEND_OPENCL, 1000);
    gp_range_attr_int(p, "step", 5);
    char mode[8] = "fast";
    gp_range_attr_str(p, "mode", mode);
    strcpy(mode, "xxxx"); /* the value was copied */
    gp_range_end(p);
    gp_range_begin_ex(p, "copy", GP_DEV_GPU, GP_BACKEND_OPENCL, 24);
    gp_range_end(p);
    char dyn[32];
    snprintf(dyn, sizeof dyn, "dyn_%d", 7);
    gp_range_begin(p, gp_intern(p, dyn));
    gp_range_end(p);
    gp_counter(p, "queue_len", 3);
    gp_counter(p, "queue_len", 4);
    gp_summary_row *r;
    size_t n;
    ASSERT_EQ_INT(gp_summary_rows(p, &r, &n), 0);
    ASSERT(find_row(r, n, "copy"));
    ASSERT_EQ_INT(find_row(r, n, "copy")->bytes, 1024);
    ASSERT(find_row(r, n, "dyn_7"));
    gp_summary_rows_free(r, n);

    char tp[256], jp[256];
    tmp_path(tp, sizeof tp, "trace.json");
    tmp_path(jp, sizeof jp, "results.json");
    ASSERT_EQ_INT(gp_export_trace(p, tp), 0);
    ASSERT_EQ_INT(gp_export_json(p, jp), 0);
    char *t = gp_test_slurp(tp);
    ASSERT(t);
    ASSERT_CONTAINS(t, "\"bytes\":1000");
    ASSERT_CONTAINS(t, "\"step\":5");
    ASSERT_CONTAINS(t, "\"mode\":\"fast\"");
    ASSERT_CONTAINS(t, "\"device\":\"gpu\",\"backend\":\"opencl\"");
    ASSERT_CONTAINS(t, "\"thread_name\"");
    ASSERT_CONTAINS(t, "\"ph\":\"C\",\"name\":\"queue_len\"");
    free(t);
    char *j = gp_test_slurp(jp);
    ASSERT(j);
    ASSERT_CONTAINS(j, "\"gpuprof\":{\"schema\":\"gpuprof-lib-1\"");
    ASSERT_CONTAINS(j, "\"name\":\"copy\",\"kind\":\"range\",\"count\":2");
    free(j);
    /* both files are read back by the importer: ranges, counters */
    const char *paths[2] = {tp, jp};
    for (int k = 0; k < 2; k++) {
        gp_trace *tr = NULL;
        gp_err e;
        ASSERT_EQ_INT(gp_import_json_file(paths[k], NULL, &tr, &e), 0);
        ASSERT_EQ_INT(tr->slices.n, 3);
        for (size_t i = 0; i < tr->slices.n; i++)
            ASSERT_EQ_INT(gp_slice_kind(tr, &tr->slices.v[i]), GP_K_RANGE);
        ASSERT_EQ_INT(tr->counters.n, 2);
        gp_trace_destroy(tr);
    }
    remove(tp);
    remove(jp);
    ASSERT_EQ_INT(gp_export_json(p, "/nonexistent-dir/x.json"), GP_EIO);
    ASSERT_CONTAINS(gp_last_error(p), "/nonexistent-dir/x.json");
    gp_profiler_destroy(p);
}

TEST(counters_and_observations)
{
    gp_profiler *p = gp_profiler_create(NULL);
    for (int i = 1; i <= 100; i++) gp_observe(p, "latency_ms", (double)i);
    for (int i = 0; i < 5; i++) gp_counter(p, "mem", 10.0 * i);
    gp_observation o;
    ASSERT_EQ_INT(gp_observation_stats(p, "latency_ms", &o), 0);
    ASSERT_EQ_INT(o.count, 100);
    ASSERT_NEAR(o.mean, 50.5, 1e-9);
    ASSERT_NEAR(o.p50, 50.5, 1e-9);
    ASSERT_NEAR(o.p95, 95.05, 1e-9); /* numpy linear: 1 + 0.95 * 99 */
    ASSERT_NEAR(o.min, 1, 0);
    ASSERT_NEAR(o.max, 100, 0);
    ASSERT_NEAR(o.std, 29.011491975882016, 1e-9);
    ASSERT_EQ_INT(gp_observation_stats(p, "nope", &o), GP_ENOTFOUND);
    double last = 0;
    uint64_t cnt = 0;
    ASSERT_EQ_INT(gp_counter_last(p, "mem", &last, &cnt), 0);
    ASSERT_EQ_INT(cnt, 5);
    ASSERT_NEAR(last, 40, 0);
    /* a NULL name is recorded as "" and looked up as "" (the lookups
     * crashed on it); NULL outputs are refused */
    ASSERT_EQ_INT(gp_observation_stats(p, NULL, &o), GP_ENOTFOUND);
    ASSERT_EQ_INT(gp_counter_last(p, NULL, &last, &cnt), GP_ENOTFOUND);
    gp_observe(p, NULL, 7.0);
    gp_counter(p, NULL, 3.0);
    ASSERT_EQ_INT(gp_observation_stats(p, NULL, &o), 0);
    ASSERT_EQ_INT(o.count, 1);
    ASSERT_NEAR(o.max, 7, 0);
    ASSERT_EQ_INT(gp_counter_last(p, NULL, &last, &cnt), 0);
    ASSERT_EQ_INT(cnt, 1);
    ASSERT_NEAR(last, 3, 0);
    ASSERT_EQ_INT(gp_counter_last(p, "", &last, &cnt), 0);
    ASSERT_EQ_INT(gp_observation_stats(p, "mem", NULL), GP_EINVAL);
    ASSERT_EQ_INT(gp_counter_last(p, "mem", NULL, &cnt), GP_EINVAL);
    ASSERT_EQ_INT(gp_counter_last(NULL, "mem", &last, &cnt), GP_EINVAL);
    gp_profiler_reset(p);
    ASSERT_EQ_INT(gp_observation_stats(p, "latency_ms", &o), GP_ENOTFOUND);
    ASSERT_EQ_INT(gp_counter_last(p, "mem", &last, &cnt), GP_ENOTFOUND);
    gp_profiler_destroy(p);
}

TEST(memory_tracker_and_leaks)
{
    char lp[256];
    tmp_path(lp, sizeof lp, "leaks.txt");
    FILE *lf = fopen(lp, "w+");
    ASSERT(lf);
    gp_options opt = {0};
    opt.report_stream = lf;
    gp_profiler *p = gp_profiler_create(&opt);
    static char a[1], b[1], c[1];
    int64_t shape[2] = {2, 3};
    ASSERT_EQ_INT(gp_mem_track(p, "weights", a, 24, shape, 2, "float32"), 0);
    ASSERT_EQ_INT(gp_mem_track(p, "acts", b, 1000, NULL, 0, NULL), 0);
    ASSERT_EQ_INT(gp_mem_track(p, "again", a, 8, NULL, 0, NULL), GP_EINVAL);
    ASSERT_EQ_INT(gp_mem_current(p), 1024);
    ASSERT_EQ_INT(gp_mem_untrack(p, b), 0);
    ASSERT_EQ_INT(gp_mem_untrack(p, b), GP_ENOTFOUND);
    ASSERT_EQ_INT(gp_mem_track(p, "grads", c, 100, shape, 1, "bf16"), 0);
    ASSERT_EQ_INT(gp_mem_track(p, "acts2", b, 50, NULL, 0, NULL), 0); /* reuse after untrack */
    ASSERT_EQ_INT(gp_mem_current(p), 174);
    ASSERT_EQ_INT(gp_mem_peak(p), 1024);
    ASSERT_EQ_INT(gp_mem_count(p), 3);
    ASSERT_EQ_INT(gp_mem_untrack(p, b), 0);
    char mp[256];
    tmp_path(mp, sizeof mp, "mem.txt");
    FILE *mf = fopen(mp, "w");
    gp_print_memory(p, mf);
    fclose(mf);
    char *m = gp_test_slurp(mp);
    ASSERT_CONTAINS(m, "current 124 B");
    ASSERT_CONTAINS(m, "peak 1.00 KiB");
    ASSERT_CONTAINS(m, "[2, 3]");
    ASSERT_CONTAINS(m, "float32");
    ASSERT_CONTAINS(m, "bf16");
    free(m);
    remove(mp);
    gp_mem_pool pool;
    int prc = gp_mem_pool_info(p, &pool);
    ASSERT(prc == 0 || prc == GP_ENODEV);
    gp_profiler_destroy(p); /* 2 buffers never untracked: leak report */
    fflush(lf);
    char *l = gp_test_slurp(lp);
    fclose(lf);
    ASSERT_CONTAINS(l, "2 tracked buffer(s) never untracked");
    ASSERT_CONTAINS(l, "weights");
    ASSERT_CONTAINS(l, "grads");
    free(l);
    remove(lp);
}

static volatile double dsink;
static void spin(void *arg)
{
    double s = 0;
    long n = *(long *)arg;
    for (long i = 0; i < n; i++) s += (double)i * 0.5 / (double)(i + 1);
    dsink = s;
}

TEST(measure_and_compare)
{
    gp_profiler *p = gp_profiler_create(NULL);
    long slow = 2000000, fast = 200000;
    gp_result a, b;
    ASSERT_EQ_INT(gp_measure(p, "slow", spin, &slow, 1, 5, &a), 0);
    ASSERT_EQ_INT(gp_measure(p, "fast", spin, &fast, 1, 5, &b), 0);
    ASSERT(a.wall.valid && a.cpu.valid);
    ASSERT(!a.gpu.valid);      /* no kernel timer used */
    ASSERT(!a.mem_peak_valid); /* nothing tracked */
    ASSERT_EQ_INT(a.iterations, 5);
    ASSERT_EQ_STR(a.name, "slow");
    ASSERT(a.wall.min_ns <= a.wall.p50_ns && a.wall.p50_ns <= a.wall.max_ns);
    ASSERT(a.cpu.mean_ns > 0 && a.cpu.mean_ns <= a.wall.mean_ns * 1.05 + 1e5);
    gp_comparison c;
    ASSERT_EQ_INT(gp_result_compare(&a, &b, &c), 0);
    /* 10x less work: CPU medians are robust to preemption on a loaded machine */
    ASSERT(a.cpu.p50_ns > 4 * b.cpu.p50_ns);
    ASSERT_NEAR(c.speedup, a.wall.mean_ns / b.wall.mean_ns, 1e-9);
    /* no wall-clock claim: preemption on a loaded machine can stretch the
     * few fast iterations; the direction follows the measured means */
    ASSERT_EQ_INT(c.speedup > 1.0, a.wall.mean_ns > b.wall.mean_ns);
    ASSERT(!c.gpu_valid && !c.mem_valid);
    /* each timed iteration is also a range */
    gp_summary_row *r;
    size_t n;
    ASSERT_EQ_INT(gp_summary_rows(p, &r, &n), 0);
    ASSERT(find_row(r, n, "slow") && find_row(r, n, "slow")->count == 5);
    gp_summary_rows_free(r, n);
    ASSERT_EQ_INT(gp_measure(p, "bad", spin, &fast, 0, 0, &b), GP_EINVAL);
    gp_result z = {0};
    ASSERT_EQ_INT(gp_result_compare(&a, &z, &c), GP_EINVAL);
    gp_profiler_destroy(p);
}

TEST(bottlenecks_by_self_time)
{
    gp_profiler *p = gp_profiler_create(NULL);
    gp_range_begin(p, "parent");
    gp_range_begin(p, "child");
    sleep_ns(40000000);
    gp_range_end(p);
    gp_range_begin(p, "sibling");
    sleep_ns(2000000);
    gp_range_end(p);
    gp_range_end(p);
    gp_summary_row *r;
    size_t n;
    ASSERT_EQ_INT(gp_bottlenecks(p, 2, &r, &n), 0);
    ASSERT_EQ_INT(n, 2);
    ASSERT_EQ_STR(r[0].name, "child");
    ASSERT_EQ_STR(r[1].name, "sibling");
    gp_summary_rows_free(r, n);
    char bp[256];
    tmp_path(bp, sizeof bp, "bn.txt");
    FILE *f = fopen(bp, "w");
    gp_print_bottlenecks(p, 3, f);
    gp_print_summary(p, f);
    fclose(f);
    char *s = gp_test_slurp(bp);
    ASSERT_CONTAINS(s, "Top 3 bottlenecks by self time");
    ASSERT_CONTAINS(s, "Self (ms)");
    ASSERT_CONTAINS(s, "3 operations");
    free(s);
    remove(bp);
    gp_profiler_destroy(p);
}

static void *get_default(void *arg)
{
    *(gp_profiler **)arg = gp_default();
    return NULL;
}

TEST(default_profiler)
{
    gp_profiler *a = NULL, *b = NULL;
    pthread_t t1, t2;
    pthread_create(&t1, NULL, get_default, &a);
    pthread_create(&t2, NULL, get_default, &b);
    pthread_join(t1, NULL);
    pthread_join(t2, NULL);
    ASSERT(a && a == b && a == gp_default());
    gp_range_begin(a, "default_range");
    gp_range_end(a);
    gp_summary_row *r;
    size_t n;
    ASSERT_EQ_INT(gp_summary_rows(a, &r, &n), 0);
    ASSERT(find_row(r, n, "default_range"));
    gp_summary_rows_free(r, n);
}

TEST(cuda_timer_or_skip)
{
    gp_profiler *p = gp_profiler_create(NULL);
    int rc = gp_cuda_begin(p, "k", NULL);
    if (rc != 0) {
        char why[200];
        snprintf(why, sizeof why, "%.150s", gp_last_error(p));
        ASSERT(rc == GP_ENODEV || rc == GP_EUNSUPPORTED);
        ASSERT(why[0]);
        gp_profiler_destroy(p);
        SKIP("%s", why);
    }
    ASSERT_EQ_INT(gp_cuda_end(p, "k", NULL), 0);
    ASSERT_EQ_INT(gp_cuda_end(p, "k", NULL), GP_ESTATE);
    ASSERT_EQ_INT(gp_kernels_resolve(p, 1), 0);
    gp_kernel_row *k;
    size_t n;
    ASSERT_EQ_INT(gp_kernel_stats(p, &k, &n), 0);
    ASSERT_EQ_INT(n, 1);
    ASSERT_EQ_INT(k[0].count, 1);
    ASSERT_EQ_INT(k[0].backend, GP_BACKEND_CUDA);
    gp_kernel_rows_free(k, n);
    gp_profiler_destroy(p);
}

#ifdef GP_HAVE_OPENCL
#include "cl_env.h"

static void cl_run(void *arg)
{
    cl_env *e = arg;
    cl_event ev;
    clEnqueueNDRangeKernel(e->q, e->k, 1, NULL, &e->n, NULL, 0, NULL, &ev);
    gp_cl_event(e->p, "scale", ev);
    clReleaseEvent(ev);
    clFinish(e->q);
}
#endif

TEST(opencl_kernel_timers_pocl)
{
#ifndef GP_HAVE_OPENCL
    SKIP("built without OpenCL");
#else
    cl_env e = {0};
    char why[200];
    if (cl_setup(&e, 200, why, sizeof why)) SKIP("%s", why);
    gp_profiler *p = e.p = gp_profiler_create(NULL);
    ASSERT_EQ_INT(gp_cl_event(p, "x", NULL), GP_EINVAL);
    int64_t t0 = 0;
    for (int i = 0; i < 5; i++) cl_run(&e);
    (void)t0;
    ASSERT_EQ_INT(gp_kernels_resolve(p, 1), 0);
    gp_kernel_row *k;
    size_t n;
    ASSERT_EQ_INT(gp_kernel_stats(p, &k, &n), 0);
    ASSERT_EQ_INT(n, 1);
    ASSERT_EQ_STR(k[0].name, "scale");
    ASSERT_EQ_INT(k[0].count, 5);
    ASSERT_EQ_INT(k[0].backend, GP_BACKEND_OPENCL);
    ASSERT_CMP_INT(k[0].min_ns, >, 0);
    ASSERT(k[0].min_ns <= k[0].mean_ns && k[0].mean_ns <= k[0].max_ns);
    ASSERT_EQ_INT(k[0].total_ns, (int64_t)(k[0].mean_ns * 5 + 0.5));
    gp_kernel_rows_free(k, n);
    /* gp_measure sees the kernel time of each iteration */
    gp_result res;
    ASSERT_EQ_INT(gp_measure(p, "cl_iter", cl_run, &e, 3, 4, &res), 0);
    ASSERT(res.gpu.valid);
    /* the 3 warm-up calls are not counted, as in the ranges (4) */
    ASSERT_EQ_INT(gp_kernels_resolve(p, 1), 0);
    ASSERT_EQ_INT(gp_kernel_stats(p, &k, &n), 0);
    ASSERT_EQ_INT(n, 1);
    ASSERT_EQ_INT(k[0].count, 5 + 4);
    gp_kernel_rows_free(k, n);
    ASSERT(res.gpu.min_ns > 0 && res.gpu.mean_ns <= res.wall.mean_ns);
    /* the kernel report and the device memory from the OpenCL device */
    char kp[256];
    tmp_path(kp, sizeof kp, "k.txt");
    FILE *f = fopen(kp, "w");
    gp_print_kernels(p, f);
    fclose(f);
    char *s = gp_test_slurp(kp);
    ASSERT_CONTAINS(s, "scale");
    ASSERT_CONTAINS(s, "opencl");
    ASSERT_CONTAINS(s, "TOTAL");
    ASSERT_CONTAINS(s, "Calls");
    free(s);
    remove(kp);
    ASSERT_EQ_INT(gp_mem_set_cl_device(p, e.dev), 0);
    gp_mem_pool pool;
    if (gp_mem_pool_info(p, &pool) == 0 && pool.backend == GP_BACKEND_OPENCL) {
        ASSERT(pool.total_valid && pool.total_bytes > 0);
        ASSERT(!pool.free_valid);
    }
    /* kernels are exported on a queue track, category "opencl" */
    char jp[256];
    tmp_path(jp, sizeof jp, "cl.json");
    ASSERT_EQ_INT(gp_export_trace(p, jp), 0);
    gp_trace *tr = NULL;
    gp_err er;
    ASSERT_EQ_INT(gp_import_json_file(jp, NULL, &tr, &er), 0);
    size_t nk = 0, nw = 0;
    for (size_t i = 0; i < tr->slices.n; i++) {
        const gp_slice *sl = &tr->slices.v[i];
        if (gp_slice_kind(tr, sl) == GP_K_CL_COMMAND) nk++;
        if (!strcmp(gp_trace_s(tr, tr->cats.v[sl->cat].name), "gpuprof_warmup")) nw++;
    }
    ASSERT_EQ_INT(nk, 9); /* 5 + 4 measured */
    ASSERT_EQ_INT(nw, 3); /* the timeline keeps the warm-up, as no kernel of the work */
    gp_trace_destroy(tr);
    remove(jp);
    gp_profiler_destroy(p);
    cl_teardown(&e);
#endif
}

/* A program that times every kernel and asks for no results (for hours)
 * does not hold every event: gp_cl_event polls the pending timings once
 * 1,024 are pending (then when they have doubled), times the completed ones
 * and releases them. Checked on the reference count of an event the test
 * keeps: 1 (the test's) once the library released its own; before, it
 * stayed 2 until a results call (PoCL's 338 B per timing: 113 B now, as
 * without the library). */
TEST(opencl_pending_timings_polled)
{
#ifndef GP_HAVE_OPENCL
    SKIP("built without OpenCL");
#else
    cl_env e = {0};
    char why[200];
    if (cl_setup(&e, 1, why, sizeof why)) SKIP("%s", why);
    gp_profiler *p = e.p = gp_profiler_create(NULL);
    ASSERT(p);
    cl_event first;
    size_t one = 1;
    ASSERT_EQ_INT(clEnqueueNDRangeKernel(e.q, e.k, 1, NULL, &one, NULL, 0, NULL, &first), 0);
    ASSERT_EQ_INT(gp_cl_event(p, "k", first), 0);
    clFinish(e.q);
    cl_uint refs = 0;
    for (int i = 0; i < 1100; i++) { /* past the first poll */
        cl_event ev;
        ASSERT_EQ_INT(clEnqueueNDRangeKernel(e.q, e.k, 1, NULL, &one, NULL, 0, NULL, &ev), 0);
        ASSERT_EQ_INT(gp_cl_event(p, "k", ev), 0);
        clReleaseEvent(ev);
        if (i % 100 == 99) clFinish(e.q);
    }
    ASSERT_EQ_INT(clGetEventInfo(first, CL_EVENT_REFERENCE_COUNT, sizeof refs, &refs, NULL), 0);
    ASSERT_EQ_INT(refs, 1); /* timed and released without a results call */
    clReleaseEvent(first);
    /* every timing is still counted once */
    ASSERT_EQ_INT(gp_kernels_resolve(p, 1), 0);
    gp_kernel_row *k;
    size_t n;
    ASSERT_EQ_INT(gp_kernel_stats(p, &k, &n), 0);
    ASSERT_EQ_INT(n, 1);
    ASSERT_EQ_INT(k[0].count, 1101);
    gp_kernel_rows_free(k, n);
    gp_profiler_destroy(p);
    cl_teardown(&e);
#endif
}

/* An export past the file size limit (ulimit -f) fails with GP_EIO and the
 * reason, and the program goes on: before, the write raised SIGXFSZ in the
 * program's thread, whose default action ended it. */
TEST(exports_past_file_size_limit)
{
    char dir[128];
    snprintf(dir, sizeof dir, "/tmp/gp_test_fsize_%ld", (long)getpid());
    fflush(stdout);
    pid_t pid = fork();
    ASSERT(pid >= 0);
    if (pid == 0) {
        signal(SIGXFSZ, SIG_DFL);
        struct rlimit rl = {64 << 10, 64 << 10};
        if (setrlimit(RLIMIT_FSIZE, &rl)) _exit(2);
        gp_options o = {0};
        o.sink = GP_SINK_KEEP;
        gp_profiler *p = gp_profiler_create(&o);
        if (!p) _exit(3);
        for (int i = 0; i < 20000; i++) {
            gp_range_begin(p, "step");
            gp_range_end(p);
        }
        char path[160], path2[160];
        snprintf(path, sizeof path, "%s.json", dir);
        snprintf(path2, sizeof path2, "%s.trace.json", dir);
        /* earlier exports of a small profile at both paths: a failed export
         * replaces nothing and leaves no partial or temporary file */
        gp_profiler *small = gp_profiler_create(&o);
        if (!small) _exit(3);
        gp_range_begin(small, "earlier");
        gp_range_end(small);
        if (gp_export_json(small, path) || gp_export_trace(small, path2)) _exit(7);
        gp_profiler_destroy(small);
        struct stat s1, s2, a1, a2;
        if (stat(path, &s1) || stat(path2, &s2)) _exit(8);
        if (gp_export_json(p, path) != GP_EIO || !strstr(gp_last_error(p), "File too large"))
            _exit(4);
        if (gp_export_trace(p, path2) != GP_EIO) _exit(5);
        if (stat(path, &a1) || stat(path2, &a2) || a1.st_size != s1.st_size ||
            a2.st_size != s2.st_size || a1.st_ino != s1.st_ino || a2.st_ino != s2.st_ino)
            _exit(9);
        const char *base = strrchr(dir, '/') + 1;
        DIR *d = opendir("/tmp");
        if (!d) _exit(10);
        for (struct dirent *de; (de = readdir(d));)
            if (!strncmp(de->d_name, base, strlen(base)) && strstr(de->d_name, ".tmp")) _exit(11);
        closedir(d);
        gp_range_begin(p, "after"); /* still recording */
        gp_range_end(p);
        gp_summary_row *rows;
        size_t n;
        if (gp_summary_rows(p, &rows, &n) || n != 2) _exit(6);
        gp_summary_rows_free(rows, n);
        gp_profiler_destroy(p);
        _exit(0);
    }
    int ws = 0;
    pid_t got = waitpid(pid, &ws, 0);
    char path[160]; /* removed before any assertion can return */
    snprintf(path, sizeof path, "%s.json", dir);
    remove(path);
    snprintf(path, sizeof path, "%s.trace.json", dir);
    remove(path);
    ASSERT_EQ_INT(got, pid);
    if (WIFSIGNALED(ws)) printf("  child ended by signal %d\n", WTERMSIG(ws));
    ASSERT(WIFEXITED(ws));
    ASSERT_EQ_INT(WEXITSTATUS(ws), 0);
}

TEST(opencl_queue_without_profiling)
{
#ifndef GP_HAVE_OPENCL
    SKIP("built without OpenCL");
#else
    cl_env e = {0};
    char why[200];
    if (cl_setup(&e, 200, why, sizeof why)) SKIP("%s", why);
    cl_int err;
    cl_command_queue q = clCreateCommandQueueWithProperties(e.ctx, e.dev, NULL, &err);
    ASSERT_EQ_INT(err, CL_SUCCESS);
    gp_profiler *p = gp_profiler_create(NULL);
    cl_event ev;
    ASSERT_EQ_INT(clEnqueueNDRangeKernel(q, e.k, 1, NULL, &e.n, NULL, 0, NULL, &ev), CL_SUCCESS);
    ASSERT_EQ_INT(gp_cl_event(p, "noprof", ev), 0);
    clReleaseEvent(ev);
    ASSERT_EQ_INT(gp_kernels_resolve(p, 1), 0); /* resolved by dropping it */
    ASSERT_CONTAINS(gp_last_error(p), "CL_QUEUE_PROFILING_ENABLE");
    gp_kernel_row *k;
    size_t n;
    ASSERT_EQ_INT(gp_kernel_stats(p, &k, &n), 0);
    ASSERT_EQ_INT(n, 0);
    gp_kernel_rows_free(k, n);
    gp_profiler_destroy(p);
    clReleaseCommandQueue(q);
    cl_teardown(&e);
#endif
}

TEST(reset_discards)
{
    gp_profiler *p = gp_profiler_create(NULL);
    gp_range_begin(p, "a");
    gp_range_end(p);
    gp_range_begin(p, "open_at_reset");
    gp_profiler_reset(p);
    gp_range_end(p); /* its begin was dropped: ignored */
    gp_range_begin(p, "b");
    gp_range_end(p);
    gp_summary_row *r;
    size_t n;
    ASSERT_EQ_INT(gp_summary_rows(p, &r, &n), 0);
    ASSERT_EQ_INT(n, 1);
    ASSERT_EQ_STR(r[0].name, "b");
    gp_summary_rows_free(r, n);
    gp_profiler_destroy(p);
}

TEST(many_events_cross_chunks)
{
    gp_profiler *p = gp_profiler_create(NULL);
    for (int i = 0; i < 10000; i++) {
        gp_range_begin(p, "tick");
        gp_range_end(p);
        if (i == 5000) { /* a drain in the middle */
            gp_summary_row *r;
            size_t n;
            ASSERT_EQ_INT(gp_summary_rows(p, &r, &n), 0);
            gp_summary_rows_free(r, n);
        }
    }
    gp_summary_row *r;
    size_t n;
    ASSERT_EQ_INT(gp_summary_rows(p, &r, &n), 0);
    ASSERT_EQ_INT(n, 1);
    ASSERT_EQ_INT(r[0].count, 10000);
    gp_summary_rows_free(r, n);
    gp_profiler_destroy(p);
}

TEST_MAIN(ranges_nest_and_time, scope_func_and_call_macros, enable_disable, attributes_and_exports,
          counters_and_observations, memory_tracker_and_leaks, measure_and_compare,
          bottlenecks_by_self_time, default_profiler, cuda_timer_or_skip, opencl_kernel_timers_pocl,
          opencl_queue_without_profiling, reset_discards, many_events_cross_chunks,
          opencl_pending_timings_polled, exports_past_file_size_limit)
