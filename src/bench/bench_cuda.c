/* bench/bench_cuda.c: the CUDA benchmark back-end through the driver API,
 * loaded with dlopen (declarations of only what is used, so it builds and
 * runs with no CUDA installed); kernels are PTX text generated here and
 * JIT-compiled by the driver (cuModuleLoadData): no nvcc at run time. */
#include "bench/bench.h"
#include <dlfcn.h>
#include <stdarg.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- the driver API types and calls used (cuda.h, CUDA 12/13) ---- */
typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
enum {
    CUDA_SUCCESS = 0,
    CUDA_ERROR_OUT_OF_MEMORY = 2,
    CUDA_ERROR_NO_DEVICE = 100,
    ATTR_CLOCK_RATE = 13, /* kHz */
    ATTR_SM_COUNT = 16,
    ATTR_MEM_CLOCK_RATE = 36, /* kHz */
    ATTR_BUS_WIDTH = 37,      /* bits */
    ATTR_CC_MAJOR = 75,
    ATTR_CC_MINOR = 76,
};

typedef struct cu_api {
    void *h;
    CUresult (*Init)(unsigned);
    CUresult (*DriverGetVersion)(int *);
    CUresult (*DeviceGetCount)(int *);
    CUresult (*DeviceGet)(CUdevice *, int);
    CUresult (*DeviceGetName)(char *, int, CUdevice);
    CUresult (*DeviceGetAttribute)(int *, int, CUdevice);
    CUresult (*DeviceTotalMem)(size_t *, CUdevice);
    CUresult (*DevicePrimaryCtxRetain)(CUcontext *, CUdevice);
    CUresult (*DevicePrimaryCtxRelease)(CUdevice);
    CUresult (*CtxSetCurrent)(CUcontext);
    CUresult (*CtxSynchronize)(void);
    CUresult (*ModuleLoadData)(CUmodule *, const void *);
    CUresult (*ModuleUnload)(CUmodule);
    CUresult (*ModuleGetFunction)(CUfunction *, CUmodule, const char *);
    CUresult (*MemAlloc)(CUdeviceptr *, size_t);
    CUresult (*MemFree)(CUdeviceptr);
    CUresult (*MemAllocHost)(void **, size_t);
    CUresult (*MemFreeHost)(void *);
    CUresult (*MemcpyHtoDAsync)(CUdeviceptr, const void *, size_t, CUstream);
    CUresult (*MemcpyDtoHAsync)(void *, CUdeviceptr, size_t, CUstream);
    CUresult (*MemcpyDtoDAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
    CUresult (*LaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                             unsigned, CUstream, void **, void **);
    CUresult (*StreamCreate)(CUstream *, unsigned);
    CUresult (*StreamDestroy)(CUstream);
    CUresult (*StreamSynchronize)(CUstream);
    CUresult (*EventCreate)(CUevent *, unsigned);
    CUresult (*EventDestroy)(CUevent);
    CUresult (*EventRecord)(CUevent, CUstream);
    CUresult (*EventSynchronize)(CUevent);
    CUresult (*EventElapsedTime)(float *, CUevent, CUevent);
    CUresult (*GetErrorName)(CUresult, const char **);
} cu_api;

#define MIB       (1024LL * 1024)
#define UNROLL    8
#define BLOCK     256
#define CU_CHAINS 32 /* independent chains per thread of the compute kernels (x0..15, y0..15) */

typedef struct cu_dev {
    cu_api *api; /* shared by the devices; freed with the last (refs) */
    int *refs;
    CUdevice dev;
    CUcontext ctx;
    CUstream s;
    CUevent e0, e1;
    CUmodule mod[2]; /* base (sm_50), fp16 (sm_53) */
    int sms, cc_major, cc_minor;
    size_t total_mem;
    /* the running test */
    CUfunction f;
    CUdeviceptr a, b;
    void *host, *pin;
    int64_t bytes;
    unsigned nthreads;
    int iters;
} cu_dev;

static void cu_unload(cu_api *a)
{
    if (a->h) dlclose(a->h);
    free(a);
}

static int cu_fail(const cu_dev *d, gp_err *err, const char *what, CUresult rc)
{
    const char *nm = NULL;
    if (d->api->GetErrorName) d->api->GetErrorName(rc, &nm);
    int code = GP_EIO; /* device memory: not the host's GP_ENOMEM, which stops the run */
    if (rc == CUDA_ERROR_OUT_OF_MEMORY)
        return gp_err_set(err, code, "CUDA: %s: out of device memory (%s)", what,
                          nm ? nm : "CUDA_ERROR_OUT_OF_MEMORY");
    return gp_err_set(err, code, "CUDA: %s failed: %s (%d)", what, nm ? nm : "error", rc);
}

#define SYM(field, name)                                                                           \
    do {                                                                                           \
        *(void **)&a->field = dlsym(a->h, name);                                                   \
        if (!a->field) miss = name;                                                                \
    } while (0)
/* newest versioned symbol first */
#define SYM2(field, v2, v1)                                                                        \
    do {                                                                                           \
        *(void **)&a->field = dlsym(a->h, v2);                                                     \
        if (!a->field) *(void **)&a->field = dlsym(a->h, v1);                                      \
        if (!a->field) miss = v1;                                                                  \
    } while (0)

static cu_api *cu_load(char *why, size_t whylen)
{
    cu_api *a = calloc(1, sizeof *a);
    if (!a) return NULL;
    const char *env = getenv("GPUPROF_CUDA_LIB");
    const char *libs[] = {env && *env ? env : "libcuda.so.1", "libcuda.so"};
    for (int i = 0; i < 2 && !a->h; i++) {
        a->h = dlopen(libs[i], RTLD_NOW | RTLD_LOCAL);
        if (env && *env) break;
    }
    if (!a->h) {
        snprintf(why, whylen, "CUDA: %s not found (no NVIDIA driver)",
                 env && *env ? env : "libcuda.so.1");
        free(a);
        return NULL;
    }
    const char *miss = NULL;
    SYM(Init, "cuInit");
    SYM(DriverGetVersion, "cuDriverGetVersion");
    SYM(DeviceGetCount, "cuDeviceGetCount");
    SYM(DeviceGet, "cuDeviceGet");
    SYM(DeviceGetName, "cuDeviceGetName");
    SYM(DeviceGetAttribute, "cuDeviceGetAttribute");
    SYM2(DeviceTotalMem, "cuDeviceTotalMem_v2", "cuDeviceTotalMem");
    SYM(DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
    SYM2(DevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease");
    SYM(CtxSetCurrent, "cuCtxSetCurrent");
    SYM(CtxSynchronize, "cuCtxSynchronize");
    SYM(ModuleLoadData, "cuModuleLoadData");
    SYM(ModuleUnload, "cuModuleUnload");
    SYM(ModuleGetFunction, "cuModuleGetFunction");
    SYM2(MemAlloc, "cuMemAlloc_v2", "cuMemAlloc");
    SYM2(MemFree, "cuMemFree_v2", "cuMemFree");
    SYM2(MemAllocHost, "cuMemAllocHost_v2", "cuMemAllocHost");
    SYM(MemFreeHost, "cuMemFreeHost");
    SYM2(MemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2", "cuMemcpyHtoDAsync");
    SYM2(MemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2", "cuMemcpyDtoHAsync");
    SYM2(MemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2", "cuMemcpyDtoDAsync");
    SYM(LaunchKernel, "cuLaunchKernel");
    SYM(StreamCreate, "cuStreamCreate");
    SYM2(StreamDestroy, "cuStreamDestroy_v2", "cuStreamDestroy");
    SYM(StreamSynchronize, "cuStreamSynchronize");
    SYM(EventCreate, "cuEventCreate");
    SYM2(EventDestroy, "cuEventDestroy_v2", "cuEventDestroy");
    SYM(EventRecord, "cuEventRecord");
    SYM(EventSynchronize, "cuEventSynchronize");
    SYM2(EventElapsedTime, "cuEventElapsedTime_v2", "cuEventElapsedTime");
    *(void **)&a->GetErrorName = dlsym(a->h, "cuGetErrorName"); /* optional */
    if (miss) {
        snprintf(why, whylen, "CUDA: the driver library lacks %s", miss);
        cu_unload(a);
        return NULL;
    }
    return a;
}

/* ---- PTX generation ---- */

typedef struct pbuf {
    char *s;
    size_t n, cap;
    int oom;
} pbuf;

__attribute__((format(printf, 2, 3))) static void pf(pbuf *b, const char *fmt, ...);
static void pf(pbuf *b, const char *fmt, ...)
{
    if (b->oom) return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int w = vsnprintf(b->s ? b->s + b->n : NULL, b->s ? b->cap - b->n : 0, fmt, ap);
        va_end(ap);
        if (w < 0) {
            b->oom = 1;
            return;
        }
        if (b->s && b->n + (size_t)w < b->cap) {
            b->n += (size_t)w;
            return;
        }
        size_t nc = b->cap ? b->cap * 2 : 16384;
        while (nc <= b->n + (size_t)w) nc *= 2;
        char *ns = realloc(b->s, nc);
        if (!ns) {
            b->oom = 1;
            return;
        }
        b->s = ns;
        b->cap = nc;
    }
}

static uint32_t f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

/* g = ctaid.x * ntid.x + tid.x into %r3, n = nctaid.x * ntid.x into %r6. */
static void ptx_index(pbuf *b)
{
    pf(b, "  mov.u32 %%r0, %%ctaid.x;\n  mov.u32 %%r1, %%ntid.x;\n  mov.u32 %%r2, %%tid.x;\n"
          "  mad.lo.u32 %%r3, %%r0, %%r1, %%r2;\n  mov.u32 %%r5, %%nctaid.x;\n"
          "  mul.lo.u32 %%r6, %%r5, %%r1;\n");
}

/* Memory kernels: 16 float4 per thread, strided by the grid size (as the
 * OpenCL kernels). */
static void ptx_mem(pbuf *b)
{
    pf(b, ".visible .entry gp_empty()\n{\n  ret;\n}\n");
    const char *names[3] = {"gp_read", "gp_write", "gp_copy"};
    for (int k = 0; k < 3; k++) {
        if (k == 1)
            pf(b, ".visible .entry gp_write(.param .u64 p_out)\n{\n");
        else
            pf(b, ".visible .entry %s(.param .u64 p_in, .param .u64 p_out)\n{\n", names[k]);
        pf(b, "  .reg .u32 %%r<12>;\n  .reg .u64 %%rd<8>;\n  .reg .f32 %%f<12>;\n");
        ptx_index(b);
        pf(b, "  ld.param.u64 %%rd0, [p_out];\n  cvta.to.global.u64 %%rd0, %%rd0;\n");
        if (k != 1) pf(b, "  ld.param.u64 %%rd1, [p_in];\n  cvta.to.global.u64 %%rd1, %%rd1;\n");
        if (k == 0) pf(b, "  mov.f32 %%f4, 0f00000000;\n");
        for (int i = 0; i < 16; i++) {
            /* %r7 = g + i * n; %rd2 = %r7 * 16 */
            pf(b, "  mad.lo.u32 %%r7, %%r6, %d, %%r3;\n  mul.wide.u32 %%rd2, %%r7, 16;\n", i);
            if (k == 0) {
                pf(b, "  add.u64 %%rd3, %%rd1, %%rd2;\n"
                      "  ld.global.v4.f32 {%%f0, %%f1, %%f2, %%f3}, [%%rd3];\n"
                      "  add.f32 %%f4, %%f4, %%f0;\n  add.f32 %%f4, %%f4, %%f1;\n"
                      "  add.f32 %%f4, %%f4, %%f2;\n  add.f32 %%f4, %%f4, %%f3;\n");
            } else if (k == 1) {
                /* floats j..j+3 of the pattern (j & 1023), j = 4 * index */
                pf(b, "  shl.b32 %%r8, %%r7, 2;\n");
                for (int c = 0; c < 4; c++)
                    pf(b,
                       "  add.u32 %%r9, %%r8, %d;\n  and.b32 %%r9, %%r9, 1023;\n"
                       "  cvt.rn.f32.u32 %%f%d, %%r9;\n",
                       c, c);
                pf(b, "  add.u64 %%rd3, %%rd0, %%rd2;\n"
                      "  st.global.v4.f32 [%%rd3], {%%f0, %%f1, %%f2, %%f3};\n");
            } else {
                pf(b, "  add.u64 %%rd3, %%rd1, %%rd2;\n  add.u64 %%rd4, %%rd0, %%rd2;\n"
                      "  ld.global.v4.f32 {%%f0, %%f1, %%f2, %%f3}, [%%rd3];\n"
                      "  st.global.v4.f32 [%%rd4], {%%f0, %%f1, %%f2, %%f3};\n");
            }
        }
        if (k == 0)
            pf(b, "  mul.wide.u32 %%rd2, %%r3, 4;\n  add.u64 %%rd3, %%rd0, %%rd2;\n"
                  "  st.global.f32 [%%rd3], %%f4;\n");
        pf(b, "  ret;\n}\n");
    }
}

/* Compute kernel of kind: 'f' fp32, 'd' fp64, 'i' int32, 'h' fp16 (16
 * lanes as 8 f16x2 pairs). Params: out, a, b (f32; s32 for int32), iters. */
static void ptx_compute(pbuf *b, char kind)
{
    const char *nm = kind == 'f'   ? "gp_fp32"
                     : kind == 'd' ? "gp_fp64"
                     : kind == 'i' ? "gp_int32"
                                   : "gp_fp16";
    const char *ty = kind == 'f' ? "f32" : kind == 'd' ? "f64" : kind == 'i' ? "s32" : "b32";
    int lanes = kind == 'h' ? 8 : 16;
    pf(b,
       ".visible .entry %s(.param .u64 p_out, .param .%s p_a, .param .%s p_b, "
       ".param .u32 p_it)\n{\n",
       nm, kind == 'i' ? "s32" : "f32", kind == 'i' ? "s32" : "f32");
    pf(b,
       "  .reg .pred %%p;\n  .reg .u32 %%r<12>;\n  .reg .u64 %%rd<4>;\n  .reg .f32 %%f<8>;\n"
       "  .reg .%s %%x<16>, %%y<16>, %%a, %%b;\n",
       ty);
    if (kind == 'h') pf(b, "  .reg .f16 %%h<4>;\n");
    if (kind == 'd') pf(b, "  .reg .f64 %%s;\n");
    ptx_index(b);
    pf(b, "  ld.param.u32 %%r4, [p_it];\n");
    if (kind == 'i') {
        pf(b, "  ld.param.s32 %%a, [p_a];\n  ld.param.s32 %%b, [p_b];\n");
        for (int l = 0; l < 16; l++)
            pf(b, "  add.s32 %%x%d, %%r3, %d;\n  add.s32 %%y%d, %%x%d, 7;\n", l, l, l, l);
    } else {
        pf(b, "  ld.param.f32 %%f6, [p_a];\n  ld.param.f32 %%f7, [p_b];\n");
        if (kind == 'f') pf(b, "  mov.f32 %%a, %%f6;\n  mov.f32 %%b, %%f7;\n");
        if (kind == 'd') pf(b, "  cvt.f64.f32 %%a, %%f6;\n  cvt.f64.f32 %%b, %%f7;\n");
        if (kind == 'h')
            pf(b, "  cvt.rn.f16.f32 %%h0, %%f6;\n  mov.b32 %%a, {%%h0, %%h0};\n"
                  "  cvt.rn.f16.f32 %%h1, %%f7;\n  mov.b32 %%b, {%%h1, %%h1};\n");
        /* %f0 = (g & 63) / 64 */
        pf(b,
           "  and.b32 %%r5, %%r3, 63;\n  cvt.rn.f32.u32 %%f0, %%r5;\n"
           "  mul.f32 %%f0, %%f0, 0f%08X;\n",
           f32_bits(0.015625f));
        for (int l = 0; l < 16; l++) {
            /* x = %f1, y = %f2 of lane l */
            pf(b, "  add.f32 %%f1, %%f0, 0f%08X;\n  add.f32 %%f2, %%f1, 0f%08X;\n",
               f32_bits(0.0625f * (float)l), f32_bits(0.5f));
            if (kind == 'f')
                pf(b, "  mov.f32 %%x%d, %%f1;\n  mov.f32 %%y%d, %%f2;\n", l, l);
            else if (kind == 'd')
                pf(b, "  cvt.f64.f32 %%x%d, %%f1;\n  cvt.f64.f32 %%y%d, %%f2;\n", l, l);
            else if (l % 2 == 0)
                pf(b, "  cvt.rn.f16.f32 %%h0, %%f1;\n  cvt.rn.f16.f32 %%h1, %%f2;\n");
            else
                pf(b,
                   "  cvt.rn.f16.f32 %%h2, %%f1;\n  cvt.rn.f16.f32 %%h3, %%f2;\n"
                   "  mov.b32 %%x%d, {%%h0, %%h2};\n  mov.b32 %%y%d, {%%h1, %%h3};\n",
                   l / 2, l / 2);
        }
    }
    pf(b, "  setp.eq.u32 %%p, %%r4, 0;\n  @%%p bra DONE;\nLOOP:\n");
    for (int u = 0; u < UNROLL; u++)
        for (int l = 0; l < lanes; l++) {
            if (kind == 'i')
                pf(b,
                   "  mad.lo.s32 %%x%d, %%x%d, %%a, %%b;\n  mad.lo.s32 %%y%d, %%y%d, %%a, %%b;\n",
                   l, l, l, l);
            else
                pf(b, "  fma.rn.%s %%x%d, %%x%d, %%a, %%b;\n  fma.rn.%s %%y%d, %%y%d, %%a, %%b;\n",
                   kind == 'h' ? "f16x2" : ty, l, l, kind == 'h' ? "f16x2" : ty, l, l);
        }
    pf(b, "  sub.u32 %%r4, %%r4, 1;\n  setp.ne.u32 %%p, %%r4, 0;\n  @%%p bra LOOP;\nDONE:\n");
    pf(b, "  ld.param.u64 %%rd0, [p_out];\n  cvta.to.global.u64 %%rd0, %%rd0;\n");
    if (kind == 'i') {
        for (int l = 0; l < 16; l++) pf(b, "  xor.b32 %%x0, %%x0, %%y%d;\n", l);
        for (int l = 1; l < 16; l++) pf(b, "  xor.b32 %%x0, %%x0, %%x%d;\n", l);
        pf(b, "  mul.wide.u32 %%rd1, %%r3, 4;\n  add.u64 %%rd2, %%rd0, %%rd1;\n"
              "  st.global.s32 [%%rd2], %%x0;\n");
    } else if (kind == 'd') {
        pf(b, "  mov.f64 %%s, 0d0000000000000000;\n");
        for (int l = 0; l < 16; l++)
            pf(b, "  add.f64 %%s, %%s, %%x%d;\n  add.f64 %%s, %%s, %%y%d;\n", l, l);
        pf(b, "  mul.wide.u32 %%rd1, %%r3, 8;\n  add.u64 %%rd2, %%rd0, %%rd1;\n"
              "  st.global.f64 [%%rd2], %%s;\n");
    } else {
        pf(b, "  mov.f32 %%f3, 0f00000000;\n");
        for (int l = 0; l < lanes; l++) {
            if (kind == 'f') {
                pf(b, "  add.f32 %%f3, %%f3, %%x%d;\n  add.f32 %%f3, %%f3, %%y%d;\n", l, l);
            } else {
                pf(b, "  mov.b32 {%%h0, %%h1}, %%x%d;\n  mov.b32 {%%h2, %%h3}, %%y%d;\n", l, l);
                for (int h = 0; h < 4; h++)
                    pf(b, "  cvt.f32.f16 %%f4, %%h%d;\n  add.f32 %%f3, %%f3, %%f4;\n", h);
            }
        }
        pf(b, "  mul.wide.u32 %%rd1, %%r3, 4;\n  add.u64 %%rd2, %%rd0, %%rd1;\n"
              "  st.global.f32 [%%rd2], %%f3;\n");
    }
    pf(b, "  ret;\n}\n");
}

/* The PTX of module 0 (memory kernels, empty, fp32, fp64, int32; sm_50)
 * or module 1 (fp16; sm_53). Returns a malloc'ed string or NULL. */
char *gp_bench_cuda_ptx(int module);
char *gp_bench_cuda_ptx(int module)
{
    pbuf b = {0};
    pf(&b, ".version 6.0\n.target %s\n.address_size 64\n\n", module ? "sm_53" : "sm_50");
    if (module) {
        ptx_compute(&b, 'h');
    } else {
        ptx_mem(&b);
        ptx_compute(&b, 'f');
        ptx_compute(&b, 'd');
        ptx_compute(&b, 'i');
    }
    if (b.oom) {
        free(b.s);
        return NULL;
    }
    return b.s;
}

/* ---- the back-end ---- */

static int64_t host_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
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
static float pat(size_t i)
{
    return (float)(i & 1023);
}

static void release_test(cu_dev *d)
{
    cu_api *a = d->api;
    a->StreamSynchronize(d->s);
    if (d->a) a->MemFree(d->a);
    if (d->b) a->MemFree(d->b);
    if (d->pin) a->MemFreeHost(d->pin);
    free(d->host);
    d->a = d->b = 0;
    d->pin = d->host = NULL;
    d->f = NULL;
}

static int get_fn(cu_dev *d, int module, const char *name, gp_err *err)
{
    cu_api *a = d->api;
    CUresult rc;
    if (!d->mod[module]) {
        char *ptx = gp_bench_cuda_ptx(module);
        if (!ptx) return gp_err_set(err, GP_ENOMEM, "out of memory");
        rc = a->ModuleLoadData(&d->mod[module], ptx);
        free(ptx);
        if (rc != CUDA_SUCCESS) return cu_fail(d, err, "cuModuleLoadData (PTX JIT)", rc);
    }
    rc = a->ModuleGetFunction(&d->f, d->mod[module], name);
    if (rc != CUDA_SUCCESS) return cu_fail(d, err, "cuModuleGetFunction", rc);
    return 0;
}

static int launch(cu_dev *d, gp_bench_test t, unsigned nthreads)
{
    cu_api *a = d->api;
    float fa = GP_BENCH_CHAIN_A, fb = GP_BENCH_CHAIN_B;
    int ia = GP_BENCH_CHAIN_IA, ib = GP_BENCH_CHAIN_IB;
    unsigned it = (unsigned)d->iters;
    void *mem2[] = {&d->a, &d->b}, *mem1[] = {&d->b};
    void *fp[] = {&d->a, &fa, &fb, &it}, *ip[] = {&d->a, &ia, &ib, &it};
    void **params = NULL;
    switch (t) {
    case GP_BT_LAUNCH:
        params = NULL;
        break;
    case GP_BT_READ:
    case GP_BT_COPY:
        params = mem2;
        break;
    case GP_BT_WRITE:
        params = mem1;
        break;
    case GP_BT_INT32:
        params = ip;
        break;
    default:
        params = fp;
        break;
    }
    unsigned block = nthreads < BLOCK ? nthreads : BLOCK;
    return a->LaunchKernel(d->f, nthreads / block, 1, 1, block, 1, 1, 0, d->s, params, NULL);
}

/* Device time (events) of one copy or kernel of test t on the stream. */
static int timed(cu_dev *d, gp_bench_test t, int64_t bytes, double *ns, gp_err *err)
{
    cu_api *a = d->api;
    CUresult rc = a->EventRecord(d->e0, d->s);
    if (rc == CUDA_SUCCESS) {
        switch (t) {
        case GP_BT_H2D_PAGEABLE:
        case GP_BT_H2D_PINNED:
            rc = a->MemcpyHtoDAsync(d->a, d->pin ? d->pin : d->host, (size_t)bytes, d->s);
            break;
        case GP_BT_D2H_PAGEABLE:
        case GP_BT_D2H_PINNED:
            rc = a->MemcpyDtoHAsync(d->pin ? d->pin : d->host, d->a, (size_t)bytes, d->s);
            break;
        case GP_BT_D2D:
            rc = a->MemcpyDtoDAsync(d->b, d->a, (size_t)d->bytes, d->s);
            break;
        default:
            rc = launch(d, t, d->nthreads);
            break;
        }
    }
    if (rc == CUDA_SUCCESS) rc = a->EventRecord(d->e1, d->s);
    if (rc == CUDA_SUCCESS) rc = a->EventSynchronize(d->e1);
    float ms = 0;
    if (rc == CUDA_SUCCESS) rc = a->EventElapsedTime(&ms, d->e0, d->e1);
    if (rc != CUDA_SUCCESS) return cu_fail(d, err, gp_bench_info_of(t)->name, rc);
    *ns = ms > 0 ? 1e6 * (double)ms : 1.0;
    return 0;
}

/* Buffer size of the memory kernels: 256 MiB (well beyond the L2 of
 * current GPUs, 50 MiB on an H100), at most 1/8 of the device memory. */
static int64_t mem_bytes(const cu_dev *d)
{
    int64_t b = 256 * MIB;
    while (d->total_mem && (size_t)b > d->total_mem / 8 && b > MIB) b /= 2;
    return b;
}

static int cu_prepare(void *state, gp_bench_test t, int64_t bytes, int *chains, gp_err *err)
{
    cu_dev *d = state;
    cu_api *a = d->api;
    CUresult rc = CUDA_SUCCESS;
    int erc = 0, want_chains = *chains;
    *chains = 0;
    if (a->CtxSetCurrent(d->ctx) != CUDA_SUCCESS)
        return gp_err_set(err, GP_EIO, "CUDA: cuCtxSetCurrent failed");
    if (is_copy(t)) {
        d->bytes = bytes;
        if ((rc = a->MemAlloc(&d->a, (size_t)bytes)) != CUDA_SUCCESS) {
            erc = cu_fail(d, err, "cuMemAlloc", rc);
            goto fail;
        }
        if (is_pinned(t)) {
            if ((rc = a->MemAllocHost(&d->pin, (size_t)bytes)) != CUDA_SUCCESS) {
                d->pin = NULL;
                erc = cu_fail(d, err, "cuMemAllocHost (pinned)", rc);
                goto fail;
            }
        } else if (!(d->host = malloc((size_t)bytes))) {
            erc = gp_err_set(err, GP_ENOMEM, "out of host memory");
            goto fail;
        }
        float *h = d->pin ? d->pin : d->host;
        size_t nf = (size_t)bytes / 4;
        for (size_t i = 0; i < nf; i++) h[i] = pat(i);
        if (!is_h2d(t)) {
            rc = a->MemcpyHtoDAsync(d->a, h, (size_t)bytes, d->s);
            if (rc == CUDA_SUCCESS) rc = a->StreamSynchronize(d->s);
            if (rc != CUDA_SUCCESS) {
                erc = cu_fail(d, err, "cuMemcpyHtoDAsync", rc);
                goto fail;
            }
            memset(h, 0, (size_t)bytes);
        }
        return 0;
    }
    if (t == GP_BT_FP16 && (d->cc_major * 10 + d->cc_minor) < 53)
        return gp_err_set(err, GP_EUNSUPPORTED,
                          "unsupported: fp16 arithmetic needs compute capability >= 5.3");
    if (t == GP_BT_LAUNCH || t == GP_BT_SYNC) return get_fn(d, 0, "gp_empty", err);
    if (t == GP_BT_D2D || t == GP_BT_READ || t == GP_BT_WRITE || t == GP_BT_COPY) {
        int64_t b = mem_bytes(d);
        d->bytes = b;
        d->nthreads = (unsigned)(b / 16 / 16);
        size_t bb = t == GP_BT_READ ? (size_t)d->nthreads * 4 : (size_t)b;
        if ((rc = a->MemAlloc(&d->a, (size_t)b)) != CUDA_SUCCESS ||
            (rc = a->MemAlloc(&d->b, bb)) != CUDA_SUCCESS) {
            erc = cu_fail(d, err, "cuMemAlloc", rc);
            goto fail;
        }
        float *h = malloc((size_t)b);
        if (!h) {
            erc = gp_err_set(err, GP_ENOMEM, "out of host memory");
            goto fail;
        }
        for (size_t i = 0; i < (size_t)b / 4; i++) h[i] = pat(i);
        rc = a->MemcpyHtoDAsync(d->a, h, (size_t)b, d->s);
        if (rc == CUDA_SUCCESS) rc = a->StreamSynchronize(d->s);
        free(h);
        if (rc != CUDA_SUCCESS) {
            erc = cu_fail(d, err, "cuMemcpyHtoDAsync", rc);
            goto fail;
        }
        if (t == GP_BT_D2D) return 0;
        const char *kn = t == GP_BT_READ ? "gp_read" : t == GP_BT_WRITE ? "gp_write" : "gp_copy";
        if ((erc = get_fn(d, 0, kn, err))) goto fail;
        return 0;
    }
    /* the PTX kernels have 32 chains per thread: a GPU hides the FMA
     * latency with its other threads */
    if (want_chains && want_chains != CU_CHAINS)
        return gp_err_set(err, GP_EUNSUPPORTED,
                          "unsupported: the CUDA kernels have %d chains per thread (--chains %d)",
                          CU_CHAINS, want_chains);
    const char *kn = t == GP_BT_FP32   ? "gp_fp32"
                     : t == GP_BT_FP64 ? "gp_fp64"
                     : t == GP_BT_FP16 ? "gp_fp16"
                                       : "gp_int32";
    if ((erc = get_fn(d, t == GP_BT_FP16, kn, err))) goto fail;
    *chains = CU_CHAINS;
    d->nthreads = (unsigned)d->sms * 2048;
    if ((rc = a->MemAlloc(&d->a, (size_t)d->nthreads * 8)) != CUDA_SUCCESS) {
        erc = cu_fail(d, err, "cuMemAlloc", rc);
        goto fail;
    }
    /* iterations doubled until one repetition takes >= 20 ms */
    for (d->iters = 1;; d->iters *= 2) {
        double ns = 0;
        if ((erc = timed(d, t, 0, &ns, err))) goto fail;
        if (ns >= 20e6 || d->iters >= (1 << 22)) break;
    }
    return 0;
fail:
    release_test(d);
    return erc ? erc : GP_EIO;
}

static int cu_sample(void *state, gp_bench_test t, int64_t bytes, double *ns, double *work,
                     gp_err *err)
{
    cu_dev *d = state;
    cu_api *a = d->api;
    CUresult rc;
    if (t == GP_BT_LAUNCH || t == GP_BT_SYNC) {
        *work = 1;
        int64_t t0 = host_ns();
        if (t == GP_BT_LAUNCH) {
            rc = launch(d, t, 1);
            if (rc == CUDA_SUCCESS) rc = a->StreamSynchronize(d->s);
        } else {
            rc = a->CtxSynchronize();
        }
        *ns = (double)(host_ns() - t0);
        return rc == CUDA_SUCCESS ? 0 : cu_fail(d, err, gp_bench_info_of(t)->name, rc);
    }
    if (is_copy(t))
        *work = (double)bytes;
    else if (t == GP_BT_D2D || t == GP_BT_COPY)
        *work = 2.0 * (double)d->bytes;
    else if (t == GP_BT_READ || t == GP_BT_WRITE)
        *work = (double)d->bytes;
    else /* 2 variables x 16 lanes x UNROLL per iteration, 2 ops each */
        *work = (double)d->nthreads * d->iters * UNROLL * 2 * 16 * 2;
    return timed(d, t, bytes, ns, err);
}

static int dtoh(cu_dev *d, void *dst, CUdeviceptr src, size_t n, gp_err *err)
{
    CUresult rc = d->api->MemcpyDtoHAsync(dst, src, n, d->s);
    if (rc == CUDA_SUCCESS) rc = d->api->StreamSynchronize(d->s);
    return rc == CUDA_SUCCESS ? 0 : cu_fail(d, err, "cuMemcpyDtoHAsync", rc);
}

static int cu_finish(void *state, gp_bench_test t, int *ok, gp_err *err)
{
    cu_dev *d = state;
    int rc = 0;
    *ok = 0;
    if (!err) goto done;
    if (t == GP_BT_LAUNCH || t == GP_BT_SYNC) {
        *ok = 1; /* no output */
        goto done;
    }
    float *chk = NULL;
    size_t n = 0;
    if (is_copy(t)) {
        n = (size_t)d->bytes / 4;
        chk = malloc((size_t)d->bytes);
        if (!chk) {
            rc = gp_err_set(err, GP_ENOMEM, "out of host memory");
            goto done;
        }
        if (is_h2d(t))
            rc = dtoh(d, chk, d->a, (size_t)d->bytes, err);
        else
            memcpy(chk, d->pin ? d->pin : d->host, (size_t)d->bytes);
    } else if (t == GP_BT_D2D || t == GP_BT_WRITE || t == GP_BT_COPY || t == GP_BT_READ) {
        n = t == GP_BT_READ ? d->nthreads : (size_t)d->bytes / 4;
        chk = malloc(n * 4);
        if (!chk) {
            rc = gp_err_set(err, GP_ENOMEM, "out of host memory");
            goto done;
        }
        rc = dtoh(d, chk, d->b, n * 4, err);
    } else {
        size_t osz = t == GP_BT_FP64 ? 8 : 4;
        void *o = malloc((size_t)d->nthreads * osz);
        if (!o) {
            rc = gp_err_set(err, GP_ENOMEM, "out of host memory");
            goto done;
        }
        double tol = t == GP_BT_FP64 ? 1e-9 : t == GP_BT_FP16 ? 0.05 : 1e-4;
        /* pass 0: the last repetition's output (chains near the fixed point
         * 1); pass 1: one more run of 3 loop iterations, whose outputs
         * still depend on the exact number of steps */
        for (int pass = 0; pass < 2 && !rc && (pass == 0 || *ok); pass++) {
            if (pass) {
                d->iters = 3;
                CUresult lr = launch(d, t, d->nthreads);
                if (lr == CUDA_SUCCESS) lr = d->api->StreamSynchronize(d->s);
                if (lr != CUDA_SUCCESS) {
                    rc = cu_fail(d, err, "compute kernel (check run)", lr);
                    break;
                }
            }
            if ((rc = dtoh(d, o, d->a, (size_t)d->nthreads * osz, err))) break;
            *ok = 1;
            int64_t steps = (int64_t)d->iters * UNROLL;
            for (size_t k = 0; k <= 64 && *ok; k++) {
                size_t g = k * (d->nthreads - 1) / 64;
                if (t == GP_BT_INT32) {
                    uint32_t want = gp_bench_expect_int(g, steps, CU_CHAINS / 16),
                             got = ((uint32_t *)o)[g];
                    if (got != want) {
                        *ok = 0;
                        gp_err_set(err, GP_EIO, "thread %zu gave %u after %lld steps, expected %u",
                                   g, got, (long long)steps, want);
                    }
                } else {
                    double want = gp_bench_expect_fp(g, steps, CU_CHAINS / 16, GP_BENCH_CHAIN_A,
                                                     GP_BENCH_CHAIN_B);
                    double got = osz == 8 ? ((double *)o)[g] : ((float *)o)[g];
                    if (!(fabs(got - want) <= tol * fabs(want))) {
                        *ok = 0;
                        gp_err_set(err, GP_EIO,
                                   "thread %zu gave %.9g after %lld steps, expected %.9g", g, got,
                                   (long long)steps, want);
                    }
                }
            }
        }
        free(o);
        goto done;
    }
    if (!rc) {
        *ok = 1;
        for (size_t i = 0; i < n; i++) {
            float want;
            if (t == GP_BT_READ) {
                double s = 0;
                for (size_t k = 0; k < 16; k++)
                    for (size_t c = 0; c < 4; c++) s += pat((i + k * d->nthreads) * 4 + c);
                want = (float)s;
            } else {
                want = pat(i);
            }
            if (chk[i] != want) {
                *ok = 0;
                gp_err_set(err, GP_EIO, "element %zu is %g, expected %g", i, chk[i], want);
                break;
            }
        }
    }
    free(chk);
done:
    release_test(d);
    return rc;
}

static void cu_close(void *state)
{
    cu_dev *d = state;
    if (!d) return;
    cu_api *a = d->api;
    if (d->ctx) {
        a->CtxSetCurrent(d->ctx);
        release_test(d);
        for (int i = 0; i < 2; i++)
            if (d->mod[i]) a->ModuleUnload(d->mod[i]);
        if (d->e0) a->EventDestroy(d->e0);
        if (d->e1) a->EventDestroy(d->e1);
        if (d->s) a->StreamDestroy(d->s);
        a->DevicePrimaryCtxRelease(d->dev);
    }
    if (--*d->refs == 0) {
        cu_unload(a);
        free(d->refs);
    }
    free(d);
}

static const gp_bench_ops cu_ops = {cu_prepare, cu_sample, cu_finish, cu_close};

/* FP32 FMA units per SM by compute capability (the CUDA C programming
 * guide's arithmetic-instruction throughput table); 0 when not listed. */
static int fp32_per_sm(int major, int minor)
{
    int cc = major * 10 + minor;
    if (cc == 60) return 64;
    if (major == 5 || major == 6) return 128;
    if (cc == 70 || cc == 72 || cc == 75 || cc == 80) return 64;
    if (cc == 86 || cc == 87 || cc == 89 || cc == 90 || major == 10 || major == 12) return 128;
    return 0;
}

/* FP64 FMA units per SM (same table); 0 when not listed. */
static int fp64_per_sm(int major, int minor)
{
    int cc = major * 10 + minor;
    if (cc == 60 || cc == 70 || cc == 80) return 32;
    if (cc == 90) return 64;
    return 0;
}

static void peaks_of(cu_dev *d, gp_bench_peaks *p)
{
    cu_api *a = d->api;
    int clk = 0, mclk = 0, bus = 0;
    a->DeviceGetAttribute(&clk, ATTR_CLOCK_RATE, d->dev);
    a->DeviceGetAttribute(&mclk, ATTR_MEM_CLOCK_RATE, d->dev);
    a->DeviceGetAttribute(&bus, ATTR_BUS_WIDTH, d->dev);
    if (mclk > 0 && bus > 0) {
        /* double data rate: 2 transfers per memory clock */
        p->mem_valid = 1;
        p->mem_GBps = 2.0 * mclk * 1e3 * (bus / 8.0) / 1e9;
        snprintf(p->mem_src, sizeof p->mem_src, "2 x %d MHz memory clock x %d-bit bus", mclk / 1000,
                 bus);
    }
    int f32 = fp32_per_sm(d->cc_major, d->cc_minor), f64 = fp64_per_sm(d->cc_major, d->cc_minor);
    if (clk > 0 && d->sms > 0 && f32) {
        p->fp32_valid = 1;
        p->fp32_GFLOPS = 2.0 * f32 * d->sms * clk * 1e3 / 1e9;
        /* int32 multiply-add: half the fp32 rate from 7.0 on (64 per SM) */
        if (d->cc_major >= 7) {
            p->int32_valid = 1;
            p->int32_GIOPS = 2.0 * 64 * d->sms * clk * 1e3 / 1e9;
        }
        if (f64) {
            p->fp64_valid = 1;
            p->fp64_GFLOPS = 2.0 * f64 * d->sms * clk * 1e3 / 1e9;
        }
        snprintf(p->compute_src, sizeof p->compute_src,
                 "%d SMs x %d MHz x FMA units per SM of compute capability %d.%d", d->sms,
                 clk / 1000, d->cc_major, d->cc_minor);
    }
}

int gp_bench_cuda_open(gp_bench_dev *devs, size_t max, size_t *n, char *why, size_t whylen)
{
    cu_api *a = cu_load(why, whylen);
    if (!a) return 0;
    CUresult rc = a->Init(0);
    int count = 0;
    if (rc == CUDA_SUCCESS) rc = a->DeviceGetCount(&count);
    if (rc != CUDA_SUCCESS || count <= 0) {
        const char *nm = NULL;
        if (a->GetErrorName) a->GetErrorName(rc, &nm);
        if (rc == CUDA_ERROR_NO_DEVICE || (rc == CUDA_SUCCESS && count <= 0))
            snprintf(why, whylen, "CUDA: no device");
        else
            snprintf(why, whylen, "CUDA: cuInit failed: %s (%d)", nm ? nm : "error", rc);
        cu_unload(a);
        return 0;
    }
    int *refs = calloc(1, sizeof *refs);
    if (!refs) {
        cu_unload(a);
        return GP_ENOMEM;
    }
    *refs = 1; /* held by this loop */
    int drv = 0;
    a->DriverGetVersion(&drv);
    for (int i = 0; i < count && *n < max; i++) {
        cu_dev *d = calloc(1, sizeof *d);
        if (!d) break;
        d->api = a;
        d->refs = refs;
        ++*refs;
        const char *step = "cuDeviceGet";
        if ((rc = a->DeviceGet(&d->dev, i)) != CUDA_SUCCESS) goto bad;
        step = "cuDevicePrimaryCtxRetain";
        if ((rc = a->DevicePrimaryCtxRetain(&d->ctx, d->dev)) != CUDA_SUCCESS) {
            d->ctx = NULL;
            goto bad;
        }
        step = "cuCtxSetCurrent";
        if ((rc = a->CtxSetCurrent(d->ctx)) != CUDA_SUCCESS) goto bad;
        step = "cuStreamCreate";
        if ((rc = a->StreamCreate(&d->s, 0)) != CUDA_SUCCESS) goto bad;
        step = "cuEventCreate";
        if ((rc = a->EventCreate(&d->e0, 0)) != CUDA_SUCCESS ||
            (rc = a->EventCreate(&d->e1, 0)) != CUDA_SUCCESS)
            goto bad;
        a->DeviceGetAttribute(&d->sms, ATTR_SM_COUNT, d->dev);
        a->DeviceTotalMem(&d->total_mem, d->dev);
        a->DeviceGetAttribute(&d->cc_major, ATTR_CC_MAJOR, d->dev);
        a->DeviceGetAttribute(&d->cc_minor, ATTR_CC_MINOR, d->dev);
        if (d->sms <= 0) d->sms = 1;
        gp_bench_dev *b = &devs[(*n)++];
        memset(b, 0, sizeof *b);
        snprintf(b->sel, sizeof b->sel, "cuda%d", i);
        snprintf(b->backend, sizeof b->backend, "cuda");
        a->DeviceGetName(b->name, (int)sizeof b->name - 1, d->dev);
        snprintf(b->driver, sizeof b->driver, "CUDA driver API %d.%d, compute capability %d.%d",
                 drv / 1000, (drv % 1000) / 10, d->cc_major, d->cc_minor);
        peaks_of(d, &b->peaks);
        b->ops = &cu_ops;
        b->chains_fixed = CU_CHAINS;
        b->state = d;
        continue;
    bad : {
        const char *nm = NULL;
        if (a->GetErrorName) a->GetErrorName(rc, &nm);
        snprintf(why, whylen, "CUDA: device %d: %s failed: %s (%d)", i, step, nm ? nm : "error",
                 rc);
        cu_close(d);
    }
    }
    if (--*refs == 0) {
        free(refs);
        cu_unload(a);
    }
    return 0;
}
