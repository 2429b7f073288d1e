/* tests/progs/lib_views_prog.c: a libgpuprof program with every kind of
 * library data, for t_lib_views.py: CPU ranges and GPU ranges
 * (gp_range_begin_ex), OpenCL kernel timers (first OpenCL device, PoCL in
 * CI) and tracked buffers (gp_mem_track), each made to trigger one of the
 * seed's advice rules. It measures every range itself with CLOCK_MONOTONIC
 * (outside: around begin and end; inside: between them), so the test checks
 * the views against values the library did not compute.
 * usage: lib_views_prog OUT.json FACTS.json; exits 77 without an OpenCL
 * device. */
#ifdef GP_HAVE_OPENCL
#include <CL/cl.h>
#endif
#include <gpuprof/gpuprof.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void spin(int64_t ns)
{
    int64_t t0 = now_ns();
    while (now_ns() - t0 < ns) {
    }
}

typedef struct own {
    const char *name;
    long count;
    int64_t outer, inner; /* sums: around begin..end, and inside */
} own;

/* n ranges of `name` on device dev, each spinning ns, measured by us too */
static void ranges(gp_profiler *p, own *o, gp_device_kind dev, gp_backend be, int n, int64_t ns)
{
    for (int i = 0; i < n; i++) {
        int64_t a = now_ns();
        gp_range_begin_ex(p, o->name, dev, be, 4096);
        int64_t b = now_ns();
        spin(ns);
        int64_t c = now_ns();
        gp_range_end(p);
        int64_t d = now_ns();
        o->count++;
        o->outer += d - a;
        o->inner += c - b;
    }
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: lib_views_prog OUT.json FACTS.json\n");
        return 2;
    }
#ifndef GP_HAVE_OPENCL
    printf("lib_views_prog: built without OpenCL, skipping\n");
    return 77;
#else
    cl_platform_id plat;
    cl_device_id dev;
    cl_uint np = 0;
    if (clGetPlatformIDs(1, &plat, &np) != CL_SUCCESS || np == 0 ||
        clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL) != CL_SUCCESS) {
        printf("lib_views_prog: no OpenCL device, skipping\n");
        return 77;
    }
    cl_int err;
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    cl_queue_properties props[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0};
    cl_command_queue q = ctx ? clCreateCommandQueueWithProperties(ctx, dev, props, &err) : NULL;
    const char *src = "__kernel void fill(__global float *x) { x[get_global_id(0)] = 1.0f; }";
    cl_program prog = q ? clCreateProgramWithSource(ctx, 1, &src, NULL, &err) : NULL;
    if (!prog || clBuildProgram(prog, 1, &dev, NULL, NULL, NULL) != CL_SUCCESS) {
        fprintf(stderr, "lib_views_prog: OpenCL setup failed (%d)\n", (int)err);
        return 1;
    }
    cl_kernel k = clCreateKernel(prog, "fill", &err);
    size_t n = 4096;
    cl_mem buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, n * sizeof(float), NULL, &err);
    if (!k || !buf) return 1;
    clSetKernelArg(k, 0, sizeof buf, &buf);

    gp_options o = {0};
    o.leak_report = 1;
    gp_profiler *p = gp_profiler_create(&o);
    if (!p) return 1;
    gp_mem_set_cl_device(p, dev);

    /* tracked buffers: 150 MiB kept (large-memory, never freed), 1 MiB freed */
    static char w_addr, t_addr;
    int64_t wbytes = 150ll << 20, tbytes = 1ll << 20;
    int64_t shape[2] = {1024, 38400};
    gp_mem_track(p, "tmp", &t_addr, (size_t)tbytes, NULL, 0, "uint8");

    own big = {"cpu_big", 0, 0, 0}, small = {"cpu_small", 0, 0, 0}, gpu = {"gpu_small", 0, 0, 0};
    gp_range_begin(p, "step");
    /* the leak is made inside "step": gpuprof memory groups it there */
    gp_mem_track(p, "weights", &w_addr, (size_t)wbytes, shape, 2, "float32");
    ranges(p, &big, GP_DEV_CPU, GP_BACKEND_CPU, 1, 15000000);  /* large-cpu-op: > 10 ms */
    ranges(p, &small, GP_DEV_CPU, GP_BACKEND_CPU, 150, 5000);  /* cache-calls: >= 100, < 100 us */
    ranges(p, &gpu, GP_DEV_GPU, GP_BACKEND_OPENCL, 12, 20000); /* small-gpu-op, batch-calls */
    for (int i = 0; i < 3; i++) {                              /* kernel timers */
        cl_event ev;
        if (clEnqueueNDRangeKernel(q, k, 1, NULL, &n, NULL, 0, NULL, &ev) != CL_SUCCESS) return 1;
        gp_cl_event(p, "fill", ev);
        clReleaseEvent(ev);
    }
    clFinish(q);
    gp_range_end(p);
    /* a timed transfer inside "upload": its device time is the range's
     * transfer time in the report's CPU/GPU bars */
    static float host[4096];
    cl_event wev;
    gp_range_begin(p, "upload");
    if (clEnqueueWriteBuffer(q, buf, CL_TRUE, 0, n * sizeof(float), host, 0, NULL, &wev) !=
        CL_SUCCESS)
        return 1;
    gp_cl_event_ex(p, "write", wev, (int64_t)(n * sizeof(float)));
    gp_range_end(p);
    cl_ulong w0 = 0, w1 = 0;
    clGetEventProfilingInfo(wev, CL_PROFILING_COMMAND_START, sizeof w0, &w0, NULL);
    clGetEventProfilingInfo(wev, CL_PROFILING_COMMAND_END, sizeof w1, &w1, NULL);
    clReleaseEvent(wev);
    gp_mem_untrack(p, &t_addr);
    gp_kernels_resolve(p, 1);

    if (gp_export_json(p, argv[1]) != 0) {
        fprintf(stderr, "lib_views_prog: %s\n", gp_last_error(p));
        return 1;
    }
    FILE *f = fopen(argv[2], "w");
    if (!f) return 1;
    fprintf(f, "{\"ranges\":{");
    own *all[] = {&big, &small, &gpu};
    for (int i = 0; i < 3; i++)
        fprintf(f, "%s\"%s\":{\"count\":%ld,\"outer_ns\":%lld,\"inner_ns\":%lld}", i ? "," : "",
                all[i]->name, all[i]->count, (long long)all[i]->outer, (long long)all[i]->inner);
    fprintf(f,
            "},\"kernels\":{\"fill\":3},\"peak_bytes\":%lld,\"never_freed_bytes\":%lld,"
            "\"upload_transfer_ns\":%lld}\n",
            (long long)(wbytes + tbytes), (long long)wbytes, (long long)(w1 - w0));
    fclose(f);
    gp_profiler_destroy(p);
    clReleaseMemObject(buf);
    clReleaseKernel(k);
    clReleaseProgram(prog);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    return 0;
#endif
}
