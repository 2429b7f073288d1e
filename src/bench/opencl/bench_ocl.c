/* bench/opencl/bench_ocl.c: the OpenCL benchmark back-end (real on PoCL):
 * copies and kernels timed with event profiling, latencies on the host
 * clock, every kernel's output checked. Built only when OpenCL was found. */
#include "bench/bench.h"
#include <CL/cl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MIB    (1024LL * 1024)
#define UNROLL 8 /* FMAs per chain per loop iteration in the compute kernels */

/* Memory kernels: float4; the read kernel sums 16 per work-item (each
 * work-group a contiguous block, neighbouring work-items on neighbouring
 * addresses), write and copy move one per work-item. The compute kernels
 * are generated (gen_compute). */
static const char *const base_src =
    "#define FETCH 16\n"
    "/* each work-group reads FETCH x its size contiguous float4s; the FETCH\n"
    "   accesses are unrolled (PoCL vectorises across work-items only in\n"
    "   loop-free code) */\n"
    "#define FIRST (get_group_id(0) * get_local_size(0) * FETCH + get_local_id(0))\n"
    "#define X4(S) S S S S\n"
    "#define X16(S) X4(S) X4(S) X4(S) X4(S)\n"
    "#define PAT(i) (float4)((float)((4 * (i)) & 1023), (float)((4 * (i) + 1) & 1023), \\\n"
    "                       (float)((4 * (i) + 2) & 1023), (float)((4 * (i) + 3) & 1023))\n"
    "__kernel void gp_read(__global const float4 *in, __global float *out) {\n"
    "  size_t i = FIRST, l = get_local_size(0);\n"
    "  float4 s = (float4)(0.0f);\n"
    "  X16(s += in[i]; i += l;)\n"
    "  out[get_global_id(0)] = s.x + s.y + s.z + s.w;\n"
    "}\n"
    "/* write and copy: one float4 per work-item (PoCL vectorises these\n"
    "   stores across work-items only in this form: 5x the copy rate of 16\n"
    "   strided stores per work-item on AVX-512) */\n"
    "__kernel void gp_write(__global float4 *out) {\n"
    "  size_t i = get_global_id(0);\n"
    "  out[i] = PAT(i);\n"
    "}\n"
    "__kernel void gp_copy(__global const float4 *in, __global float4 *out) {\n"
    "  size_t i = get_global_id(0);\n"
    "  out[i] = in[i];\n"
    "}\n"
    "__kernel void gp_empty(void) {}\n";

/* Compute kernels, generated (gen_compute): for each kind, variants
 * gp_KIND_vN with N = 1, 2, 4, 8, 16 vectors of 16 lanes, every lane an
 * independent chain (GP_BENCH_CHAINS_* in bench.h), UNROLL steps per loop
 * iteration. A CPU device runs the work-items of a work-group one after
 * another, so the chains of one work-item are all the instruction-level
 * parallelism it sees: filling its FMA pipelines needs more than one
 * vector (FMA latency x FMA units); a GPU hides the latency with other
 * work-items, and too many chains cost registers. The fastest variant is
 * measured (ocl_prepare). */
enum { K_FP32, K_FP64, K_FP16, K_INT32, K__N };
static const char *const kind_name[K__N] = {"fp32", "fp64", "fp16", "int32"};

static char *gen_compute(int kind)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return NULL;
    const char *T = kind == K_FP32   ? "float"
                    : kind == K_FP64 ? "double"
                    : kind == K_FP16 ? "half"
                                     : "int";
    const char *outT = kind == K_FP64 ? "double" : kind == K_INT32 ? "int" : "float";
    const char *argT = kind == K_INT32 ? "int" : "float";
    if (kind == K_FP64) fputs("#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n", f);
    if (kind == K_FP16) fputs("#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n", f);
    for (int nv = 1; nv <= GP_BENCH_CHAINS_MAX / 16; nv *= 2) {
        fprintf(f, "__kernel void gp_%s_v%d(__global %s *out, %s a0, %s b0, int iters) {\n",
                kind_name[kind], nv, outT, argT, argT);
        fprintf(f, "  size_t g = get_global_id(0);\n  %s a = (%s)a0, b = (%s)b0;\n", T, T, T);
        if (kind == K_INT32)
            fputs("  int16 x0 = (int16)((int)g) + (int16)(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, "
                  "12, 13, 14, 15);\n",
                  f);
        else
            fprintf(f,
                    "  %s16 x0 = (%s16)((%s)(g & 63)) * (%s)0.015625f + (%s16)(0, 1, 2, 3, 4, 5, "
                    "6, 7, 8, 9, 10, 11, 12, 13, 14, 15) * (%s)0.0625f;\n",
                    T, T, T, T, T, T);
        for (int k = 1; k < nv; k++) {
            if (kind == K_INT32)
                fprintf(f, "  int16 x%d = x0 + %d;\n", k, 7 * k);
            else
                fprintf(f, "  %s16 x%d = x0 + (%s)%.1ff;\n", T, k, T, 0.5 * k);
        }
        fputs("  for (int i = 0; i < iters; i++) {\n", f);
        for (int u = 0; u < UNROLL; u++) {
            fputs("   ", f);
            for (int k = 0; k < nv; k++) {
                if (kind == K_INT32)
                    fprintf(f, " x%d = x%d * a + b;", k, k);
                else
                    fprintf(f, " x%d = mad(x%d, a, b);", k, k);
            }
            fputs("\n", f);
        }
        fputs("  }\n", f);
        const char *sT = kind == K_FP64 ? "double16" : kind == K_INT32 ? "int16" : "float16";
        fprintf(f, "  %s s = ", sT);
        for (int k = 0; k < nv; k++) {
            if (k) fputs(kind == K_INT32 ? " ^ " : " + ", f);
            fprintf(f, kind == K_FP16 ? "convert_float16(x%d)" : "x%d", k);
        }
        fputs(";\n  out[g] = s.s0", f);
        for (int l = 1; l < 16; l++) fprintf(f, " %s s.s%x", kind == K_INT32 ? "^" : "+", l);
        fputs(";\n}\n", f);
    }
    if (fclose(f)) {
        free(buf);
        return NULL;
    }
    return buf;
}

/* Chain constants: x -> a x + b converges to b / (1 - a) = 1. */
#define CA GP_BENCH_CHAIN_A
#define CB GP_BENCH_CHAIN_B
#define IA GP_BENCH_CHAIN_IA
#define IB GP_BENCH_CHAIN_IB

typedef struct ocl_dev {
    cl_device_id id;
    cl_context ctx;
    cl_command_queue q;
    cl_program prog[1 + K__N]; /* base, then the compute kinds: built when first needed */
    int has_fp64, has_fp16;
    cl_uint cus;
    size_t max_wg, local; /* local: work-group size of the kernels (a power of two) */
    size_t klocal;        /* work-group size of the running test's kernel */
    int nvec;             /* compute tests: vectors of 16 chains of the kernel */
    cl_ulong max_alloc;
    /* the running test */
    cl_mem a, b, pin;
    void *host, *pin_ptr;
    cl_kernel k;
    size_t gsize;
    int iters;
    int64_t bytes;
} ocl_dev;

static int cl_fail(gp_err *err, const char *what, cl_int rc)
{
    return gp_err_set(err, GP_EIO, "OpenCL: %s failed (error %d)", what, (int)rc);
}

static int64_t host_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Device time of a completed event in ns (profiling START..END). */
static int ev_ns(cl_event ev, double *ns, gp_err *err)
{
    cl_ulong s = 0, e = 0;
    cl_int rc = clWaitForEvents(1, &ev);
    if (rc == CL_SUCCESS)
        rc = clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof s, &s, NULL);
    if (rc == CL_SUCCESS)
        rc = clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof e, &e, NULL);
    clReleaseEvent(ev);
    if (rc != CL_SUCCESS) return cl_fail(err, "event profiling", rc);
    /* a command shorter than the timer resolution reads as 0: count 1 ns */
    *ns = e > s ? (double)(e - s) : 1.0;
    return 0;
}

/* Program `which`: 0 the base kernels, 1 + K_* a compute kind's. */
static cl_program build(ocl_dev *d, int which, gp_err *err)
{
    if (d->prog[which]) return d->prog[which];
    char *gen = NULL;
    if (which) {
        gen = gen_compute(which - 1);
        if (!gen) {
            gp_err_set(err, GP_ENOMEM, "out of memory");
            return NULL;
        }
    }
    const char *src = which ? gen : base_src;
    cl_int rc;
    cl_program p = clCreateProgramWithSource(d->ctx, 1, &src, NULL, &rc);
    free(gen);
    if (!p) {
        cl_fail(err, "clCreateProgramWithSource", rc);
        return NULL;
    }
    rc = clBuildProgram(p, 1, &d->id, "", NULL, NULL);
    if (rc != CL_SUCCESS) {
        char log[256] = "";
        clGetProgramBuildInfo(p, d->id, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, NULL);
        gp_err_set(err, GP_EIO, "OpenCL: kernel build failed (error %d): %.200s", (int)rc, log);
        clReleaseProgram(p);
        return NULL;
    }
    d->prog[which] = p;
    return p;
}

static cl_kernel kernel(ocl_dev *d, int which, const char *name, gp_err *err)
{
    cl_program p = build(d, which, err);
    if (!p) return NULL;
    cl_int rc;
    cl_kernel k = clCreateKernel(p, name, &rc);
    if (!k) cl_fail(err, "clCreateKernel", rc);
    return k;
}

static void release_test(ocl_dev *d)
{
    if (d->pin_ptr) clEnqueueUnmapMemObject(d->q, d->pin, d->pin_ptr, 0, NULL, NULL);
    clFinish(d->q);
    if (d->k) clReleaseKernel(d->k);
    d->nvec = 0;
    if (d->a) clReleaseMemObject(d->a);
    if (d->b) clReleaseMemObject(d->b);
    if (d->pin) clReleaseMemObject(d->pin);
    free(d->host);
    d->k = NULL;
    d->a = d->b = d->pin = NULL;
    d->host = d->pin_ptr = NULL;
}

static cl_mem mkbuf(ocl_dev *d, cl_mem_flags fl, size_t bytes, gp_err *err)
{
    cl_int rc;
    cl_mem m = clCreateBuffer(d->ctx, fl, bytes, NULL, &rc);
    if (!m)
        cl_fail(err,
                rc == CL_MEM_OBJECT_ALLOCATION_FAILURE || rc == CL_OUT_OF_RESOURCES
                    ? "buffer allocation (out of device memory)"
                    : "clCreateBuffer",
                rc);
    return m;
}

/* Pattern value of float i of a buffer (exact small integers). */
static float pat(size_t i)
{
    return (float)(i & 1023);
}

static int is_copy(gp_bench_test t)
{
    return t <= GP_BT_D2H_PINNED;
}

static int is_h2d(gp_bench_test t)
{
    return t == GP_BT_H2D_PAGEABLE || t == GP_BT_H2D_PINNED;
}

static int is_pinned(gp_bench_test t)
{
    return t == GP_BT_H2D_PINNED || t == GP_BT_D2H_PINNED;
}

/* Size of the device buffers of the memory kernels and the d2d copy. */
static int64_t mem_bytes(const ocl_dev *d)
{
    int64_t b = 64 * MIB;
    while ((cl_ulong)b > d->max_alloc / 2 && b > MIB) b /= 2;
    return b;
}

/* Runs the test's kernel over gsize work-items in work-groups of the
 * device's largest size (as clpeak does) and gives its device time. */
static int run_kernel(ocl_dev *d, size_t gsize, double *ns, gp_err *err)
{
    cl_event ev;
    size_t local = d->klocal ? d->klocal : d->local;
    cl_int rc = clEnqueueNDRangeKernel(d->q, d->k, 1, NULL, &gsize, &local, 0, NULL, &ev);
    if (rc != CL_SUCCESS) return cl_fail(err, "kernel launch", rc);
    return ev_ns(ev, ns, err);
}

static int set_compute_args(ocl_dev *d, gp_bench_test t)
{
    cl_int rc = clSetKernelArg(d->k, 0, sizeof d->a, &d->a);
    if (t == GP_BT_INT32) {
        cl_int ia = IA, ib = IB;
        rc |= clSetKernelArg(d->k, 1, sizeof ia, &ia);
        rc |= clSetKernelArg(d->k, 2, sizeof ib, &ib);
    } else {
        cl_float fa = CA, fb = CB;
        rc |= clSetKernelArg(d->k, 1, sizeof fa, &fa);
        rc |= clSetKernelArg(d->k, 2, sizeof fb, &fb);
    }
    cl_int it = d->iters;
    rc |= clSetKernelArg(d->k, 3, sizeof it, &it);
    return rc;
}

static int ocl_prepare(void *state, gp_bench_test t, int64_t bytes, int *chains, gp_err *err)
{
    ocl_dev *d = state;
    cl_int rc = CL_SUCCESS;
    int want_chains = *chains;
    *chains = 0;
    d->klocal = d->local;
    if (is_copy(t)) {
        d->bytes = bytes;
        if (!(d->a = mkbuf(d, CL_MEM_READ_WRITE, (size_t)bytes, err))) goto fail;
        if (is_pinned(t)) {
            if (!(d->pin = mkbuf(d, CL_MEM_ALLOC_HOST_PTR, (size_t)bytes, err))) goto fail;
            d->pin_ptr = clEnqueueMapBuffer(d->q, d->pin, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0,
                                            (size_t)bytes, 0, NULL, NULL, &rc);
            if (!d->pin_ptr) {
                cl_fail(err, "clEnqueueMapBuffer (pinned host memory)", rc);
                goto fail;
            }
        } else if (!(d->host = malloc((size_t)bytes))) {
            gp_err_set(err, GP_ENOMEM, "out of host memory (%lld bytes)", (long long)bytes);
            goto fail;
        }
        float *h = d->pin_ptr ? d->pin_ptr : d->host;
        size_t nf = (size_t)bytes / sizeof(float);
        if (is_h2d(t)) {
            for (size_t i = 0; i < nf; i++) h[i] = pat(i);
        } else {
            /* the device buffer holds the pattern the copies bring back */
            for (size_t i = 0; i < nf; i++) h[i] = pat(i);
            rc = clEnqueueWriteBuffer(d->q, d->a, CL_TRUE, 0, (size_t)bytes, h, 0, NULL, NULL);
            if (rc != CL_SUCCESS) {
                cl_fail(err, "clEnqueueWriteBuffer", rc);
                goto fail;
            }
            memset(h, 0, (size_t)bytes);
        }
        return 0;
    }
    if (t == GP_BT_FP64 && !d->has_fp64)
        return gp_err_set(err, GP_EUNSUPPORTED, "unsupported: the device has no cl_khr_fp64");
    if (t == GP_BT_FP16 && !d->has_fp16)
        return gp_err_set(err, GP_EUNSUPPORTED, "unsupported: the device has no cl_khr_fp16");
    if (t == GP_BT_LAUNCH || t == GP_BT_SYNC) {
        if (!(d->k = kernel(d, 0, "gp_empty", err))) goto fail;
        return 0;
    }
    if (t == GP_BT_D2D || t == GP_BT_READ || t == GP_BT_WRITE || t == GP_BT_COPY) {
        int64_t b = mem_bytes(d);
        d->bytes = b;
        /* float4 elements, / FETCH for the read kernel */
        d->gsize = t == GP_BT_READ ? (size_t)b / 16 / 16 : (size_t)b / 16;
        size_t nf = (size_t)b / sizeof(float);
        if (!(d->a = mkbuf(d, CL_MEM_READ_WRITE, (size_t)b, err))) goto fail;
        size_t bbytes = t == GP_BT_READ ? d->gsize * sizeof(float) : (size_t)b;
        if (!(d->b = mkbuf(d, CL_MEM_READ_WRITE, bbytes, err))) goto fail;
        float *h = malloc((size_t)b);
        if (!h) {
            gp_err_set(err, GP_ENOMEM, "out of host memory");
            goto fail;
        }
        for (size_t i = 0; i < nf; i++) h[i] = pat(i);
        rc = clEnqueueWriteBuffer(d->q, d->a, CL_TRUE, 0, (size_t)b, h, 0, NULL, NULL);
        free(h);
        if (rc != CL_SUCCESS) {
            cl_fail(err, "clEnqueueWriteBuffer", rc);
            goto fail;
        }
        if (t == GP_BT_D2D) return 0;
        const char *kn = t == GP_BT_READ ? "gp_read" : t == GP_BT_WRITE ? "gp_write" : "gp_copy";
        if (!(d->k = kernel(d, 0, kn, err))) goto fail;
        if (t == GP_BT_WRITE)
            rc = clSetKernelArg(d->k, 0, sizeof d->b, &d->b);
        else
            rc = clSetKernelArg(d->k, 0, sizeof d->a, &d->a) |
                 clSetKernelArg(d->k, 1, sizeof d->b, &d->b);
        if (rc != CL_SUCCESS) {
            cl_fail(err, "clSetKernelArg", rc);
            goto fail;
        }
        return 0;
    }
    /* compute: the variant with the requested chains, or the fastest one */
    if (want_chains && !gp_bench_chains_valid(want_chains)) {
        gp_err_set(err, GP_EINVAL, "chains per work-item must be 16, 32, 64, 128 or 256 (got %d)",
                   want_chains);
        goto fail;
    }
    int kind = t == GP_BT_FP32   ? K_FP32
               : t == GP_BT_FP64 ? K_FP64
               : t == GP_BT_FP16 ? K_FP16
                                 : K_INT32;
    /* a power of two work-groups, >= 4 per compute unit */
    size_t groups = 1;
    while (groups < 4 * (size_t)d->cus) groups *= 2;
    size_t osz = t == GP_BT_FP64 ? sizeof(double) : 4;
    if (!(d->a = mkbuf(d, CL_MEM_WRITE_ONLY, groups * d->local * osz, err))) goto fail;
    /* the variants: kernel, work-group size, iterations, best rate */
    enum { NV = 5 };
    cl_kernel vk[NV] = {0};
    size_t vl[NV] = {0};
    int vit[NV] = {0};
    double vrate[NV] = {0};
    for (int v = 0; v < NV; v++) {
        int nv = 1 << v;
        if (want_chains && nv * 16 != want_chains) continue;
        char kn[32];
        snprintf(kn, sizeof kn, "gp_%s_v%d", kind_name[kind], nv);
        if (!(vk[v] = kernel(d, 1 + kind, kn, err))) goto cfail;
        /* the kernel's own limit (registers) may be below the device's */
        size_t kwg = 0;
        clGetKernelWorkGroupInfo(vk[v], d->id, CL_KERNEL_WORK_GROUP_SIZE, sizeof kwg, &kwg, NULL);
        vl[v] = d->local;
        while (kwg && vl[v] > kwg) vl[v] /= 2;
        /* iterations doubled until one run takes >= 5 ms */
        d->k = vk[v], d->klocal = vl[v], d->gsize = groups * vl[v];
        for (d->iters = 1;; d->iters *= 2) {
            double ns;
            if (set_compute_args(d, t) != CL_SUCCESS) {
                gp_err_set(err, GP_EIO, "OpenCL: clSetKernelArg failed");
                goto cfail;
            }
            if (run_kernel(d, d->gsize, &ns, err)) goto cfail;
            if (ns >= 5e6 || d->iters >= (1 << 20)) break;
        }
        vit[v] = d->iters;
    }
    /* each variant's rate: the best of 3 runs, the variants taking turns
     * (a load that changes over time hits them alike) */
    for (int r = 0; r < 3; r++)
        for (int v = 0; v < NV; v++) {
            if (!vk[v]) continue;
            double ns;
            d->k = vk[v], d->klocal = vl[v], d->gsize = groups * vl[v], d->iters = vit[v];
            if (set_compute_args(d, t) != CL_SUCCESS) {
                gp_err_set(err, GP_EIO, "OpenCL: clSetKernelArg failed");
                goto cfail;
            }
            if (run_kernel(d, d->gsize, &ns, err)) goto cfail;
            vrate[v] = fmax(vrate[v], (double)d->gsize * vit[v] * UNROLL * (1 << v) * 16 * 2 / ns);
        }
    int bv = -1;
    for (int v = 0; v < NV; v++)
        if (vk[v] && (bv < 0 || vrate[v] > vrate[bv])) bv = v;
    for (int v = 0; v < NV; v++)
        if (v != bv && vk[v]) clReleaseKernel(vk[v]);
    d->k = vk[bv], d->klocal = vl[bv], d->gsize = groups * vl[bv], d->nvec = 1 << bv;
    d->iters = vit[bv];
    /* then doubled until one repetition takes >= 20 ms of device time */
    for (;; d->iters *= 2) {
        double ns;
        if (set_compute_args(d, t) != CL_SUCCESS) {
            gp_err_set(err, GP_EIO, "OpenCL: clSetKernelArg failed");
            goto fail;
        }
        if (run_kernel(d, d->gsize, &ns, err)) goto fail;
        if (ns >= 20e6 || d->iters >= (1 << 20)) break;
    }
    *chains = d->nvec * 16;
    return 0;
cfail:
    d->k = NULL;
    for (int v = 0; v < NV; v++)
        if (vk[v]) clReleaseKernel(vk[v]);
fail:
    release_test(d);
    return err->code ? err->code : GP_EIO;
}

static int ocl_sample(void *state, gp_bench_test t, int64_t bytes, double *ns, double *work,
                      gp_err *err)
{
    ocl_dev *d = state;
    cl_event ev;
    cl_int rc;
    if (is_copy(t)) {
        void *h = d->pin_ptr ? d->pin_ptr : d->host;
        if (is_h2d(t))
            rc = clEnqueueWriteBuffer(d->q, d->a, CL_FALSE, 0, (size_t)bytes, h, 0, NULL, &ev);
        else
            rc = clEnqueueReadBuffer(d->q, d->a, CL_FALSE, 0, (size_t)bytes, h, 0, NULL, &ev);
        if (rc != CL_SUCCESS) return cl_fail(err, "copy", rc);
        *work = (double)bytes;
        return ev_ns(ev, ns, err);
    }
    switch (t) {
    case GP_BT_D2D:
        rc = clEnqueueCopyBuffer(d->q, d->a, d->b, 0, 0, (size_t)d->bytes, 0, NULL, &ev);
        if (rc != CL_SUCCESS) return cl_fail(err, "clEnqueueCopyBuffer", rc);
        *work = 2.0 * (double)d->bytes;
        return ev_ns(ev, ns, err);
    case GP_BT_READ:
    case GP_BT_WRITE:
    case GP_BT_COPY:
        *work = (double)d->bytes * (t == GP_BT_COPY ? 2 : 1);
        return run_kernel(d, d->gsize, ns, err);
    case GP_BT_LAUNCH: {
        size_t one = 1;
        int64_t t0 = host_ns();
        rc = clEnqueueNDRangeKernel(d->q, d->k, 1, NULL, &one, NULL, 0, NULL, NULL);
        if (rc == CL_SUCCESS) rc = clFinish(d->q);
        *ns = (double)(host_ns() - t0);
        *work = 1;
        return rc == CL_SUCCESS ? 0 : cl_fail(err, "empty kernel", rc);
    }
    case GP_BT_SYNC: {
        int64_t t0 = host_ns();
        rc = clFinish(d->q);
        *ns = (double)(host_ns() - t0);
        *work = 1;
        return rc == CL_SUCCESS ? 0 : cl_fail(err, "clFinish", rc);
    }
    default:
        /* compute: nvec vectors x 16 lanes x UNROLL per iteration, 2 ops each */
        *work = (double)d->gsize * d->iters * UNROLL * d->nvec * 16 * 2;
        return run_kernel(d, d->gsize, ns, err);
    }
}

static int check_read(ocl_dev *d, gp_bench_test t, int *ok, gp_err *err)
{
    size_t nf = (size_t)d->bytes / sizeof(float);
    size_t outn = t == GP_BT_READ ? d->gsize : nf;
    float *o = malloc(outn * sizeof *o);
    if (!o) return gp_err_set(err, GP_ENOMEM, "out of host memory");
    cl_int rc = clEnqueueReadBuffer(d->q, d->b, CL_TRUE, 0, outn * sizeof *o, o, 0, NULL, NULL);
    if (rc != CL_SUCCESS) {
        free(o);
        return cl_fail(err, "clEnqueueReadBuffer", rc);
    }
    *ok = 1;
    for (size_t i = 0; i < outn && *ok; i++) {
        float want;
        if (t == GP_BT_READ) {
            double s = 0; /* float4 FIRST + k * local, 4 floats each */
            size_t first = i / d->local * d->local * 16 + i % d->local;
            for (size_t k = 0; k < 16; k++)
                for (size_t c = 0; c < 4; c++) s += pat((first + k * d->local) * 4 + c);
            want = (float)s;
        } else {
            want = pat(i);
        }
        if (o[i] != want) {
            *ok = 0;
            gp_err_set(err, GP_EIO, "element %zu is %g, expected %g", i, o[i], want);
        }
    }
    free(o);
    return 0;
}

/* Reads the compute kernel's output back and checks 65 work-items spread
 * over the range against the closed form for d->iters loop iterations
 * (every work-item for the integer chain would cost as much as the kernel). */
static int check_compute(ocl_dev *d, gp_bench_test t, int *ok, gp_err *err)
{
    size_t osz = t == GP_BT_FP64 ? sizeof(double) : 4;
    void *o = malloc(d->gsize * osz);
    if (!o) return gp_err_set(err, GP_ENOMEM, "out of host memory");
    cl_int crc = clEnqueueReadBuffer(d->q, d->a, CL_TRUE, 0, d->gsize * osz, o, 0, NULL, NULL);
    if (crc != CL_SUCCESS) {
        free(o);
        return cl_fail(err, "clEnqueueReadBuffer", crc);
    }
    double tol = t == GP_BT_FP64 ? 1e-9 : t == GP_BT_FP16 ? 0.05 : 1e-4;
    int64_t steps = (int64_t)d->iters * UNROLL;
    *ok = 1;
    for (size_t k = 0; k <= 64 && *ok; k++) {
        size_t g = k * (d->gsize - 1) / 64;
        if (t == GP_BT_INT32) {
            uint32_t want = gp_bench_expect_int(g, steps, d->nvec), got = ((uint32_t *)o)[g];
            if (got != want) {
                *ok = 0;
                gp_err_set(err, GP_EIO, "work-item %zu gave %u after %lld steps, expected %u", g,
                           got, (long long)steps, want);
            }
        } else {
            double want = gp_bench_expect_fp(g, steps, d->nvec, CA, CB);
            double got = t == GP_BT_FP64 ? ((double *)o)[g] : ((float *)o)[g];
            if (!(fabs(got - want) <= tol * fabs(want))) {
                *ok = 0;
                gp_err_set(err, GP_EIO, "work-item %zu gave %.9g after %lld steps, expected %.9g",
                           g, got, (long long)steps, want);
            }
        }
    }
    free(o);
    return 0;
}

static int ocl_finish(void *state, gp_bench_test t, int *ok, gp_err *err)
{
    ocl_dev *d = state;
    gp_err dummy = {0};
    if (!err) err = &dummy; /* after a failed repetition: only release */
    int rc = 0;
    *ok = 0;
    if (err == &dummy) goto done;
    if (clFinish(d->q) != CL_SUCCESS) {
        rc = gp_err_set(err, GP_EIO, "OpenCL: clFinish failed");
        goto done;
    }
    if (is_copy(t)) {
        size_t nf = (size_t)d->bytes / sizeof(float);
        float *h = d->pin_ptr ? d->pin_ptr : d->host, *chk = h;
        if (is_h2d(t)) {
            /* read the device buffer back into fresh memory */
            chk = malloc((size_t)d->bytes);
            if (!chk) {
                rc = gp_err_set(err, GP_ENOMEM, "out of host memory");
                goto done;
            }
            cl_int crc =
                clEnqueueReadBuffer(d->q, d->a, CL_TRUE, 0, (size_t)d->bytes, chk, 0, NULL, NULL);
            if (crc != CL_SUCCESS) {
                free(chk);
                rc = cl_fail(err, "clEnqueueReadBuffer", crc);
                goto done;
            }
        }
        *ok = 1;
        for (size_t i = 0; i < nf; i++)
            if (chk[i] != pat(i)) {
                *ok = 0;
                gp_err_set(err, GP_EIO, "copied element %zu is %g, expected %g", i, chk[i], pat(i));
                break;
            }
        if (chk != h) free(chk);
    } else if (t == GP_BT_D2D || t == GP_BT_WRITE || t == GP_BT_COPY || t == GP_BT_READ) {
        rc = check_read(d, t, ok, err);
    } else if (t == GP_BT_LAUNCH || t == GP_BT_SYNC) {
        *ok = 1; /* nothing to check: the kernel has no output */
    } else {
        /* pass 0: the output of the last repetition (every chain near the
         * fixed point 1); pass 1: one more run of 3 loop iterations, whose
         * outputs still depend on the exact number of steps (an FMA left
         * out changes the sum by ~0.4 %) */
        for (int pass = 0; pass < 2 && !rc; pass++) {
            if (pass) {
                if (!*ok) break;
                double ns;
                d->iters = 3;
                if (set_compute_args(d, t) != CL_SUCCESS) {
                    rc = gp_err_set(err, GP_EIO, "OpenCL: clSetKernelArg failed");
                    break;
                }
                if ((rc = run_kernel(d, d->gsize, &ns, err))) break;
            }
            rc = check_compute(d, t, ok, err);
        }
    }
done:
    release_test(d);
    return rc;
}

static void ocl_close(void *state)
{
    ocl_dev *d = state;
    if (!d) return;
    release_test(d);
    for (int i = 0; i < 1 + K__N; i++)
        if (d->prog[i]) clReleaseProgram(d->prog[i]);
    if (d->q) clReleaseCommandQueue(d->q);
    if (d->ctx) clReleaseContext(d->ctx);
    free(d);
}

static const gp_bench_ops ocl_ops = {ocl_prepare, ocl_sample, ocl_finish, ocl_close};

static int has_ext(cl_device_id id, const char *ext)
{
    size_t n = 0;
    if (clGetDeviceInfo(id, CL_DEVICE_EXTENSIONS, 0, NULL, &n) != CL_SUCCESS || !n) return 0;
    char *s = malloc(n + 1);
    if (!s) return 0;
    int found = 0;
    if (clGetDeviceInfo(id, CL_DEVICE_EXTENSIONS, n, s, NULL) == CL_SUCCESS) {
        s[n] = 0;
        size_t el = strlen(ext);
        for (char *p = strstr(s, ext); p && !found; p = strstr(p + 1, ext))
            found = (p == s || p[-1] == ' ') && (p[el] == ' ' || p[el] == 0);
    }
    free(s);
    return found;
}

int gp_bench_ocl_open(gp_bench_dev *devs, size_t max, size_t *n, char *why, size_t whylen)
{
    cl_platform_id plats[16];
    cl_uint np = 0;
    cl_int rc = clGetPlatformIDs(16, plats, &np);
    if (rc != CL_SUCCESS || !np) {
        snprintf(why, whylen, "OpenCL: no platform (ICD loader error %d)", (int)rc);
        return 0;
    }
    if (np > 16) np = 16;
    int idx = 0;
    for (cl_uint p = 0; p < np; p++) {
        cl_device_id ids[16];
        cl_uint nd = 0;
        if (clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, 16, ids, &nd) != CL_SUCCESS) continue;
        if (nd > 16) nd = 16;
        for (cl_uint i = 0; i < nd; i++, idx++) {
            if (*n >= max) return 0;
            ocl_dev *d = calloc(1, sizeof *d);
            if (!d) return GP_ENOMEM;
            d->id = ids[i];
            d->ctx = clCreateContext(NULL, 1, &ids[i], NULL, NULL, &rc);
            if (d->ctx) {
                cl_queue_properties props[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0};
                d->q = clCreateCommandQueueWithProperties(d->ctx, ids[i], props, &rc);
            }
            if (!d->ctx || !d->q) {
                snprintf(why, whylen, "OpenCL: device %d: no context/queue (error %d)", idx,
                         (int)rc);
                ocl_close(d);
                continue;
            }
            clGetDeviceInfo(ids[i], CL_DEVICE_MAX_COMPUTE_UNITS, sizeof d->cus, &d->cus, NULL);
            clGetDeviceInfo(ids[i], CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof d->max_wg, &d->max_wg,
                            NULL);
            clGetDeviceInfo(ids[i], CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof d->max_alloc,
                            &d->max_alloc, NULL);
            if (!d->cus) d->cus = 1;
            if (!d->max_wg) d->max_wg = 1;
            for (d->local = 1; d->local * 2 <= d->max_wg && d->local < 1024;) d->local *= 2;
            d->has_fp64 = has_ext(ids[i], "cl_khr_fp64");
            d->has_fp16 = has_ext(ids[i], "cl_khr_fp16");
            gp_bench_dev *b = &devs[(*n)++];
            memset(b, 0, sizeof *b);
            snprintf(b->sel, sizeof b->sel, "cl%d", idx);
            snprintf(b->backend, sizeof b->backend, "opencl");
            clGetDeviceInfo(ids[i], CL_DEVICE_NAME, sizeof b->name - 1, b->name, NULL);
            clGetDeviceInfo(ids[i], CL_DRIVER_VERSION, sizeof b->driver - 1, b->driver, NULL);
            /* OpenCL reports neither the memory clock nor the bus width nor
             * the FMA rate per compute unit: every peak stays unknown */
            b->ops = &ocl_ops;
            b->state = d;
        }
    }
    if (!*n) snprintf(why, whylen, "OpenCL: no device");
    return 0;
}
