/* tests/fake_cuda/fake_cuda.c: a stand-in libcuda (driver API) for testing
 * the CUDA path of `gpuprof bench` without a GPU. The signatures come from
 * the real cuda.h. Device memory is host memory; copies copy; the kernels
 * gpuprof's PTX defines are emulated by name on the host (cuModuleGetFunction
 * fails unless the PTX given to cuModuleLoadData has the entry); events
 * record the host clock. FAKE_CUDA_SCENARIO selects: "ok" (one device with
 * an H100's clocks and bus (16 SMs)), "nodevice" (cuInit: CUDA_ERROR_NO_DEVICE), "oom"
 * (cuMemAlloc/cuMemAllocHost: CUDA_ERROR_OUT_OF_MEMORY), "launchfail"
 * (launches are accepted, the next synchronisation returns
 * CUDA_ERROR_LAUNCH_FAILED, as a faulting kernel does). */
#include <cuda.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define EXPORT __attribute__((visibility("default")))

static int scenario(const char *s)
{
    const char *e = getenv("FAKE_CUDA_SCENARIO");
    return !strcmp(e ? e : "ok", s);
}

static int pending_fault; /* launchfail: a launched kernel "faulted" */

struct CUmod_st {
    char *ptx;
};
struct CUfunc_st {
    char name[32];
};
struct CUevent_st {
    double t;
};

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

EXPORT CUresult CUDAAPI cuInit(unsigned int flags)
{
    (void)flags;
    return scenario("nodevice") ? CUDA_ERROR_NO_DEVICE : CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuDriverGetVersion(int *v)
{
    *v = 12080;
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuDeviceGetCount(int *n)
{
    *n = scenario("nodevice") ? 0 : 1;
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuDeviceGet(CUdevice *d, int ordinal)
{
    if (ordinal != 0) return CUDA_ERROR_INVALID_DEVICE;
    *d = 0;
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuDeviceGetName(char *name, int len, CUdevice d)
{
    (void)d;
    strncpy(name, "Fake H100 80GB HBM3", (size_t)len);
    name[len - 1] = 0;
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuDeviceGetAttribute(int *v, CUdevice_attribute a, CUdevice d)
{
    (void)d;
    switch (a) {
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
        *v = 16; /* few: the kernels run on the host */
        break;
    case CU_DEVICE_ATTRIBUTE_CLOCK_RATE:
        *v = 1980000;
        break;
    case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE:
        *v = 2619000;
        break;
    case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH:
        *v = 5120;
        break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
        *v = 9;
        break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
        *v = 0;
        break;
    default:
        return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuDeviceTotalMem_v2(size_t *bytes, CUdevice d)
{
    (void)d;
    *bytes = (size_t)256 << 20; /* small, so that the memory tests stay small */
    return CUDA_SUCCESS;
}

static struct CUctx_st {
    int retained;
} the_ctx;

EXPORT CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d)
{
    (void)d;
    the_ctx.retained++;
    *c = &the_ctx;
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuDevicePrimaryCtxRelease_v2(CUdevice d)
{
    (void)d;
    if (the_ctx.retained <= 0) return CUDA_ERROR_INVALID_CONTEXT;
    the_ctx.retained--;
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuCtxSetCurrent(CUcontext c)
{
    return c == &the_ctx && the_ctx.retained ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

static CUresult sync_status(void)
{
    if (pending_fault) return CUDA_ERROR_LAUNCH_FAILED; /* sticky, as a real fault */
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuCtxSynchronize(void)
{
    return sync_status();
}

EXPORT CUresult CUDAAPI cuModuleLoadData(CUmodule *m, const void *image)
{
    const char *s = image;
    if (!strstr(s, ".version") || !strstr(s, ".target")) return CUDA_ERROR_INVALID_PTX;
    *m = calloc(1, sizeof **m);
    if (!*m) return CUDA_ERROR_OUT_OF_MEMORY;
    (*m)->ptx = strdup(s);
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuModuleUnload(CUmodule m)
{
    free(m->ptx);
    free(m);
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name)
{
    char pat[64];
    snprintf(pat, sizeof pat, ".entry %s(", name);
    if (!strstr(m->ptx, pat)) return CUDA_ERROR_NOT_FOUND;
    static struct CUfunc_st fns[16];
    static int nf;
    for (int i = 0; i < nf; i++)
        if (!strcmp(fns[i].name, name)) {
            *f = &fns[i];
            return CUDA_SUCCESS;
        }
    if (nf == 16) return CUDA_ERROR_OUT_OF_MEMORY;
    snprintf(fns[nf].name, sizeof fns[nf].name, "%s", name);
    *f = &fns[nf++];
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuMemAlloc_v2(CUdeviceptr *p, size_t n)
{
    if (scenario("oom")) return CUDA_ERROR_OUT_OF_MEMORY;
    void *m = malloc(n);
    if (!m) return CUDA_ERROR_OUT_OF_MEMORY;
    *p = (CUdeviceptr)(uintptr_t)m;
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuMemFree_v2(CUdeviceptr p)
{
    free((void *)(uintptr_t)p);
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuMemAllocHost_v2(void **p, size_t n)
{
    if (scenario("oom")) return CUDA_ERROR_OUT_OF_MEMORY;
    *p = malloc(n);
    return *p ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

EXPORT CUresult CUDAAPI cuMemFreeHost(void *p)
{
    free(p);
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuMemcpyHtoDAsync_v2(CUdeviceptr d, const void *h, size_t n, CUstream s)
{
    (void)s;
    memcpy((void *)(uintptr_t)d, h, n);
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuMemcpyDtoHAsync_v2(void *h, CUdeviceptr d, size_t n, CUstream s)
{
    (void)s;
    memcpy(h, (const void *)(uintptr_t)d, n);
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuMemcpyDtoDAsync_v2(CUdeviceptr d, CUdeviceptr src, size_t n, CUstream s)
{
    (void)s;
    memcpy((void *)(uintptr_t)d, (const void *)(uintptr_t)src, n);
    return CUDA_SUCCESS;
}

/* The float chains of gpuprof's compute kernels, emulated in T. */
#define CHAIN(T, OUT)                                                                              \
    for (size_t g = 0; g < nthreads; g++) {                                                        \
        T s = 0;                                                                                   \
        for (int l = 0; l < 16; l++) {                                                             \
            T x = (T)(g & 63) * (T)0.015625 + (T)l * (T)0.0625, y = x + (T)0.5;                    \
            for (unsigned i = 0; i < it * 8; i++) {                                                \
                x = x * (T)a + (T)b;                                                               \
                y = y * (T)a + (T)b;                                                               \
            }                                                                                      \
            s += x + y;                                                                            \
        }                                                                                          \
        ((OUT *)out)[g] = (OUT)s;                                                                  \
    }

static void emulate(const char *name, size_t nthreads, unsigned block, void **p)
{
    if (!strcmp(name, "gp_empty")) return;
    if (!strcmp(name, "gp_read") || !strcmp(name, "gp_copy") || !strcmp(name, "gp_write")) {
        int w = !strcmp(name, "gp_write");
        float *in = w ? NULL : (float *)(uintptr_t) * (CUdeviceptr *)p[0];
        float *out = (float *)(uintptr_t) * (CUdeviceptr *)p[w ? 0 : 1];
        for (size_t t = 0; t < nthreads; t++) {
            size_t first = t / block * block * 16 + t % block;
            float s = 0;
            for (size_t k = 0; k < 16; k++) {
                size_t i = first + k * block; /* float4 index */
                for (size_t c = 0; c < 4; c++) {
                    if (!strcmp(name, "gp_read"))
                        s += in[4 * i + c];
                    else if (w)
                        out[4 * i + c] = (float)((4 * i + c) & 1023);
                    else
                        out[4 * i + c] = in[4 * i + c];
                }
            }
            if (!strcmp(name, "gp_read")) out[t] = s;
        }
        return;
    }
    void *out = (void *)(uintptr_t) * (CUdeviceptr *)p[0];
    unsigned it = *(unsigned *)p[3];
    if (!strcmp(name, "gp_int32")) {
        uint32_t a = (uint32_t) * (int *)p[1], b = (uint32_t) * (int *)p[2];
        for (size_t g = 0; g < nthreads; g++) {
            uint32_t r = 0;
            for (uint32_t l = 0; l < 16; l++) {
                uint32_t x = (uint32_t)g + l, y = x + 7;
                for (unsigned i = 0; i < it * 8; i++) {
                    x = x * a + b;
                    y = y * a + b;
                }
                r ^= x ^ y;
            }
            ((uint32_t *)out)[g] = r;
        }
        return;
    }
    float a = *(float *)p[1], b = *(float *)p[2];
    if (!strcmp(name, "gp_fp64")) {
        CHAIN(double, double)
    } else {
        CHAIN(float, float) /* fp32, and fp16 approximated in fp32 */
    }
}

EXPORT CUresult CUDAAPI cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy,
                                       unsigned int gz, unsigned int bx, unsigned int by,
                                       unsigned int bz, unsigned int shmem, CUstream s,
                                       void **params, void **extra)
{
    (void)s, (void)shmem, (void)extra;
    if (!f || !gx || !gy || !gz || !bx || !by || !bz || bx * by * bz > 1024)
        return CUDA_ERROR_INVALID_VALUE;
    if (scenario("launchfail")) {
        pending_fault = 1; /* reported at the next synchronisation */
        return CUDA_SUCCESS;
    }
    emulate(f->name, (size_t)gx * bx, bx, params);
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuStreamCreate(CUstream *s, unsigned int flags)
{
    (void)flags;
    *s = (CUstream)calloc(1, 16);
    return *s ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

EXPORT CUresult CUDAAPI cuStreamDestroy_v2(CUstream s)
{
    free(s);
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuStreamSynchronize(CUstream s)
{
    (void)s;
    return sync_status();
}

EXPORT CUresult CUDAAPI cuEventCreate(CUevent *e, unsigned int flags)
{
    (void)flags;
    *e = calloc(1, sizeof **e);
    return *e ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

EXPORT CUresult CUDAAPI cuEventDestroy_v2(CUevent e)
{
    free(e);
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuEventRecord(CUevent e, CUstream s)
{
    (void)s;
    e->t = now();
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuEventSynchronize(CUevent e)
{
    (void)e;
    return sync_status();
}

EXPORT CUresult CUDAAPI cuEventElapsedTime_v2(float *ms, CUevent a, CUevent b)
{
    *ms = (float)((b->t - a->t) * 1e3);
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuGetErrorName(CUresult r, const char **s)
{
    switch (r) {
    case CUDA_SUCCESS:
        *s = "CUDA_SUCCESS";
        break;
    case CUDA_ERROR_OUT_OF_MEMORY:
        *s = "CUDA_ERROR_OUT_OF_MEMORY";
        break;
    case CUDA_ERROR_NO_DEVICE:
        *s = "CUDA_ERROR_NO_DEVICE";
        break;
    case CUDA_ERROR_LAUNCH_FAILED:
        *s = "CUDA_ERROR_LAUNCH_FAILED";
        break;
    case CUDA_ERROR_NOT_FOUND:
        *s = "CUDA_ERROR_NOT_FOUND";
        break;
    default:
        *s = NULL;
        return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}
