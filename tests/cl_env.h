/* tests/cl_env.h: the OpenCL fixture of the libgpuprof tests (real OpenCL on
 * PoCL): a profiling queue, a kernel `scale` over a 64 Ki-float buffer that
 * runs `iters` multiply-adds per element, and a host copy of the buffer's
 * size for transfers. Include after test.h, inside #ifdef GP_HAVE_OPENCL. */
#ifndef GP_TESTS_CL_ENV_H
#define GP_TESTS_CL_ENV_H
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct cl_env {
    cl_context ctx;
    cl_command_queue q;
    cl_program prog;
    cl_kernel k;
    cl_mem buf;
    cl_device_id dev;
    size_t n;       /* floats in buf and host */
    float *host;    /* n zeroed floats */
    gp_profiler *p; /* for the caller's use (not created here) */
} cl_env;

/* 0, or -1 with the reason in why (the caller skips). */
static inline int cl_setup(cl_env *e, int iters, char *why, size_t nwhy)
{
    cl_platform_id plat;
    cl_uint np = 0;
    cl_int err;
    if (clGetPlatformIDs(1, &plat, &np) != CL_SUCCESS || !np ||
        clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &e->dev, NULL) != CL_SUCCESS) {
        snprintf(why, nwhy, "no OpenCL platform/device (PoCL not installed?)");
        return -1;
    }
    e->ctx = clCreateContext(NULL, 1, &e->dev, NULL, NULL, &err);
    cl_queue_properties props[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0};
    e->q = clCreateCommandQueueWithProperties(e->ctx, e->dev, props, &err);
    char src[256];
    snprintf(src, sizeof src,
             "__kernel void scale(__global float *x) {"
             "  size_t i = get_global_id(0); float v = x[i];"
             "  for (int k = 0; k < %d; k++) v = v * 1.0001f + 0.5f;"
             "  x[i] = v; }",
             iters);
    const char *s = src;
    e->prog = clCreateProgramWithSource(e->ctx, 1, &s, NULL, &err);
    if (clBuildProgram(e->prog, 1, &e->dev, NULL, NULL, NULL) != CL_SUCCESS) {
        snprintf(why, nwhy, "OpenCL program build failed");
        return -1;
    }
    e->k = clCreateKernel(e->prog, "scale", &err);
    e->n = 1 << 16;
    e->buf = clCreateBuffer(e->ctx, CL_MEM_READ_WRITE, e->n * sizeof(float), NULL, &err);
    e->host = calloc(e->n, sizeof(float));
    clSetKernelArg(e->k, 0, sizeof e->buf, &e->buf);
    return 0;
}

static inline void cl_teardown(cl_env *e)
{
    clReleaseMemObject(e->buf);
    clReleaseKernel(e->k);
    clReleaseProgram(e->prog);
    clReleaseCommandQueue(e->q);
    clReleaseContext(e->ctx);
    free(e->host);
}
#endif
