/* examples/instrumented.c: CPU work instrumented with libgpuprof: scopes,
 * function timing, attributes, counters, observations, gp_measure and the
 * in-process reports. Usage: example_instrumented [OUT.json [TRACE.json]] */
#include <gpuprof/gpuprof.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double work(int n)
{
    double s = 0;
    for (int i = 1; i <= n; i++) s += sqrt((double)i) * sin((double)i);
    return s;
}

static void sort_floats(float *v, int n) /* insertion sort: deliberately slow */
{
    for (int i = 1; i < n; i++) {
        float x = v[i];
        int j = i - 1;
        while (j >= 0 && v[j] > x) {
            v[j + 1] = v[j];
            j--;
        }
        v[j + 1] = x;
    }
}

static double preprocess(gp_profiler *p, int n)
{
    GP_FUNC(p); /* the seed's decorator: a range named "preprocess" */
    return work(n);
}

static void *worker(void *arg)
{
    gp_profiler *p = arg;
    for (int step = 0; step < 20; step++) {
        GP_SCOPE(p, "worker_step");
        volatile double r = work(20000);
        (void)r;
    }
    return NULL;
}

static void infer(void *arg)
{
    volatile double r = work(*(int *)arg);
    (void)r;
}

int main(int argc, char **argv)
{
    gp_profiler *p = gp_default();
    pthread_t th;
    pthread_create(&th, NULL, worker, p);
    float *v = malloc(4000 * sizeof *v);
    for (int step = 0; step < 10; step++) {
        GP_SCOPE(p, "train_step");
        gp_range_begin_ex(p, "load_batch", GP_DEV_CPU, GP_BACKEND_CPU, 4000 * sizeof *v);
        for (int i = 0; i < 4000; i++) v[i] = (float)((i * 7919) % 4001);
        gp_range_attr_int(p, "step", step);
        gp_range_end(p);
        volatile double r = preprocess(p, 30000 + 1000 * step);
        (void)r;
        GP_TIME_CALL(p, sort_floats(v, 2000));
        gp_counter(p, "loss", 1.0 / (1.0 + step));
        gp_observe(p, "step_latency_ms", 1.0 + 0.1 * step);
    }
    pthread_join(th, NULL);
    free(v);

    int small = 20000, big = 80000;
    gp_result base, cur;
    gp_comparison cmp;
    gp_measure(p, "infer_big", infer, &big, 2, 10, &base);
    gp_measure(p, "infer_small", infer, &small, 2, 10, &cur);
    gp_result_compare(&base, &cur, &cmp);
    printf("gp_measure: infer_big mean %.1f us, infer_small mean %.1f us, speedup %.2fx\n",
           base.wall.mean_ns / 1e3, cur.wall.mean_ns / 1e3, cmp.speedup);

    gp_print_summary(p, stdout);
    gp_print_bottlenecks(p, 5, stdout);
    const char *out = argc > 1 ? argv[1] : "instrumented.json";
    if (gp_export_json(p, out) != 0) {
        fprintf(stderr, "export failed: %s\n", gp_last_error(p));
        return 1;
    }
    printf("wrote %s\n", out);
    if (argc > 2) {
        if (gp_export_trace(p, argv[2]) != 0) {
            fprintf(stderr, "export failed: %s\n", gp_last_error(p));
            return 1;
        }
        printf("wrote %s (open in ui.perfetto.dev)\n", argv[2]);
    }
    return 0;
}
