/* tests/progs/cl_record_prog.c: an ordinary OpenCL program (no profiling
 * requested, some enqueues without events) used by t_run_opencl.py to check
 * what `gpuprof run` records. It prints what it enqueued and its own
 * CLOCK_MONOTONIC timestamps as lines "op name bytes t_before_ns t_after_ns".
 * Usage: cl_record_prog [ITERATIONS [N [SLEEP_MS]]]; exit 77 without OpenCL. */
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static const char *src = "__kernel void scale(__global float *x, float a) {\n"
                         "    size_t i = get_global_id(0); x[i] = a * x[i];\n"
                         "}\n"
                         "__kernel void add_one(__global float *x) {\n"
                         "    size_t i = get_global_id(0); x[i] = x[i] + 1.0f;\n"
                         "}\n";

static long long mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

#define CHECK(e, what)                                                                             \
    do {                                                                                           \
        if ((e) != CL_SUCCESS) {                                                                   \
            fprintf(stderr, "cl_record_prog: %s failed (%d)\n", what, (int)(e));                   \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

int main(int argc, char **argv)
{
    int iters = argc > 1 ? atoi(argv[1]) : 5;
    size_t n = argc > 2 ? strtoul(argv[2], NULL, 10) : 65536;
    int sleep_ms = argc > 3 ? atoi(argv[3]) : 0;
    cl_platform_id plat;
    cl_device_id dev;
    cl_uint np = 0;
    if (clGetPlatformIDs(1, &plat, &np) != CL_SUCCESS || np == 0 ||
        clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL) != CL_SUCCESS) {
        printf("SKIP no OpenCL device\n");
        return 77;
    }
    cl_int err;
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    CHECK(err, "clCreateContext");
    /* deliberately no CL_QUEUE_PROFILING_ENABLE: the layer must add it */
    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, dev, NULL, &err);
    CHECK(err, "clCreateCommandQueueWithProperties");
    cl_program prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    CHECK(err, "clCreateProgramWithSource");
    CHECK(clBuildProgram(prog, 1, &dev, NULL, NULL, NULL), "clBuildProgram");
    cl_kernel ks = clCreateKernel(prog, "scale", &err);
    CHECK(err, "clCreateKernel scale");
    cl_kernel ka = clCreateKernel(prog, "add_one", &err);
    CHECK(err, "clCreateKernel add_one");
    size_t bytes = n * sizeof(float);
    float *h = malloc(bytes);
    for (size_t i = 0; i < n; i++) h[i] = (float)(i % 100);
    cl_mem b = clCreateBuffer(ctx, CL_MEM_READ_WRITE, bytes, NULL, &err);
    CHECK(err, "clCreateBuffer");
    float a = 0.5f;
    clSetKernelArg(ks, 0, sizeof b, &b);
    clSetKernelArg(ks, 1, sizeof a, &a);
    clSetKernelArg(ka, 0, sizeof b, &b);
    setvbuf(stdout, NULL, _IOLBF, 0);
    for (int it = 0; it < iters; it++) {
        long long t0 = mono();
        cl_event ev; /* an event the application asks for */
        CHECK(clEnqueueWriteBuffer(q, b, CL_TRUE, 0, bytes, h, 0, NULL, &ev), "write");
        clReleaseEvent(ev);
        long long t1 = mono();
        printf("write Memcpy %zu %lld %lld\n", bytes, t0, t1);
        size_t gws = n, lws = 64;
        t0 = mono();
        CHECK(clEnqueueNDRangeKernel(q, ks, 1, NULL, &gws, &lws, 0, NULL, NULL), "scale");
        CHECK(clFinish(q), "finish");
        t1 = mono();
        printf("kernel scale %zu %lld %lld\n", gws, t0, t1);
        t0 = mono();
        CHECK(clEnqueueNDRangeKernel(q, ka, 1, NULL, &gws, NULL, 0, NULL, NULL), "add_one");
        CHECK(clFinish(q), "finish");
        t1 = mono();
        printf("kernel add_one %zu %lld %lld\n", gws, t0, t1);
        t0 = mono();
        CHECK(clEnqueueReadBuffer(q, b, CL_TRUE, 0, bytes / 2, h, 0, NULL, NULL), "read");
        t1 = mono();
        printf("read Memcpy %zu %lld %lld\n", bytes / 2, t0, t1);
        if (sleep_ms) usleep((useconds_t)sleep_ms * 1000);
    }
    clReleaseMemObject(b);
    clReleaseKernel(ks);
    clReleaseKernel(ka);
    clReleaseProgram(prog);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    free(h);
    return 0;
}
