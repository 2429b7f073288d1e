/* examples/opencl_saxpy.c: SAXPY on the first OpenCL device (PoCL on a
 * CPU-only machine) with libgpuprof's OpenCL kernel timers and memory
 * tracker. Usage: example_opencl_saxpy [N [OUT.json]]; exits 77 without a
 * usable OpenCL device. */
#include <CL/cl.h>
#include <gpuprof/gpuprof.h>
#include <stdio.h>
#include <stdlib.h>

static const char *src = "__kernel void saxpy(float a, __global const float *x,\n"
                         "                    __global float *y) {\n"
                         "    size_t i = get_global_id(0);\n"
                         "    y[i] = a * x[i] + y[i];\n"
                         "}\n";

#define CHECK(e, what)                                                                             \
    do {                                                                                           \
        if ((e) != CL_SUCCESS) {                                                                   \
            fprintf(stderr, "opencl_saxpy: %s failed (%d)\n", what, (int)(e));                     \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : (1u << 20);
    const char *out = argc > 2 ? argv[2] : "opencl_saxpy.json";
    cl_platform_id plat;
    cl_device_id dev;
    cl_uint np = 0;
    if (clGetPlatformIDs(1, &plat, &np) != CL_SUCCESS || np == 0 ||
        clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL) != CL_SUCCESS) {
        printf("opencl_saxpy: no OpenCL device, skipping\n");
        return 77;
    }
    cl_int err;
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    CHECK(err, "clCreateContext");
    cl_queue_properties props[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0};
    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, dev, props, &err);
    CHECK(err, "clCreateCommandQueueWithProperties");
    cl_program prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    CHECK(err, "clCreateProgramWithSource");
    CHECK(clBuildProgram(prog, 1, &dev, NULL, NULL, NULL), "clBuildProgram");
    cl_kernel k = clCreateKernel(prog, "saxpy", &err);
    CHECK(err, "clCreateKernel");

    gp_profiler *p = gp_profiler_create(NULL);
    gp_mem_set_cl_device(p, dev);
    float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
    for (size_t i = 0; i < n; i++) {
        x[i] = (float)(i % 1000); /* small values: exact float results */
        y[i] = 1.0f;
    }
    int64_t shape[1] = {(int64_t)n};
    cl_mem dx = clCreateBuffer(ctx, CL_MEM_READ_ONLY, n * sizeof(float), NULL, &err);
    CHECK(err, "clCreateBuffer x");
    gp_mem_track(p, "x", dx, n * sizeof(float), shape, 1, "float32");
    cl_mem dy = clCreateBuffer(ctx, CL_MEM_READ_WRITE, n * sizeof(float), NULL, &err);
    CHECK(err, "clCreateBuffer y");
    gp_mem_track(p, "y", dy, n * sizeof(float), shape, 1, "float32");

    cl_event ev;
    gp_range_begin(p, "saxpy_total");
    gp_range_begin_ex(p, "upload", GP_DEV_GPU, GP_BACKEND_OPENCL, (int64_t)(2 * n * sizeof(float)));
    CHECK(clEnqueueWriteBuffer(q, dx, CL_FALSE, 0, n * sizeof(float), x, 0, NULL, &ev), "write x");
    gp_cl_event(p, "write_x", ev);
    clReleaseEvent(ev);
    CHECK(clEnqueueWriteBuffer(q, dy, CL_FALSE, 0, n * sizeof(float), y, 0, NULL, &ev), "write y");
    gp_cl_event(p, "write_y", ev);
    clReleaseEvent(ev);
    clFinish(q);
    gp_range_end(p);

    float a = 2.0f;
    clSetKernelArg(k, 0, sizeof a, &a);
    clSetKernelArg(k, 1, sizeof dx, &dx);
    clSetKernelArg(k, 2, sizeof dy, &dy);
    for (int it = 0; it < 10; it++) {
        GP_SCOPE(p, "saxpy_iteration");
        CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &n, NULL, 0, NULL, &ev), "saxpy");
        gp_cl_event(p, "saxpy", ev);
        clReleaseEvent(ev);
    }
    CHECK(clEnqueueReadBuffer(q, dy, CL_TRUE, 0, n * sizeof(float), y, 0, NULL, &ev), "read y");
    gp_cl_event(p, "read_y", ev);
    clReleaseEvent(ev);
    gp_kernels_resolve(p, 1);
    gp_range_end(p); /* saxpy_total */

    /* y = 1 + 10 * 2 * x */
    int bad = 0;
    for (size_t i = 0; i < n; i++)
        if (y[i] != 1.0f + 20.0f * (float)(i % 1000)) bad++;
    printf("saxpy: n=%zu, %d wrong results\n", n, bad);

    gp_print_kernels(p, stdout);
    gp_print_memory(p, stdout);
    gp_mem_untrack(p, dx);
    gp_mem_untrack(p, dy);
    clReleaseMemObject(dx);
    clReleaseMemObject(dy);
    gp_print_summary(p, stdout);
    if (gp_export_json(p, out) == 0) printf("wrote %s\n", out);
    gp_profiler_destroy(p);
    free(x);
    free(y);
    clReleaseKernel(k);
    clReleaseProgram(prog);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    return bad ? 1 : 0;
}
