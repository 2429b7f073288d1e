/* tests/fake_cudart/fake_cudart.c: a stand-in libcudart for libgpuprof's
 * CUDA event timers (record/cuda/cuda_timer.c) without a GPU, with device
 * durations the test chooses. The signatures come from the real
 * cuda_runtime_api.h. One device; the "device clock" is virtual: an event
 * records its value, and fake_cudart_work(ms) advances it, as work enqueued
 * between two events would. Built with SONAME libcudart.so, so that a test
 * that loads it first (by path) is what libgpuprof's dlopen("libcudart.so")
 * finds. */
#include <cuda_runtime_api.h>
#include <stdlib.h>

#define EXPORT __attribute__((visibility("default")))

struct CUevent_st {
    double t_ms;
};

static double clock_ms;

EXPORT void fake_cudart_work(double ms);

EXPORT void fake_cudart_work(double ms)
{
    clock_ms += ms;
}

EXPORT cudaError_t CUDARTAPI cudaGetDeviceCount(int *n)
{
    *n = 1;
    return cudaSuccess;
}

EXPORT const char *CUDARTAPI cudaGetErrorString(cudaError_t e)
{
    return e == cudaSuccess ? "no error" : "fake error";
}

EXPORT cudaError_t CUDARTAPI cudaEventCreate(cudaEvent_t *ev)
{
    *ev = calloc(1, sizeof **ev);
    return *ev ? cudaSuccess : cudaErrorMemoryAllocation;
}

EXPORT cudaError_t CUDARTAPI cudaEventRecord(cudaEvent_t ev, cudaStream_t s)
{
    (void)s;
    ev->t_ms = clock_ms;
    return cudaSuccess;
}

EXPORT cudaError_t CUDARTAPI cudaEventQuery(cudaEvent_t ev)
{
    (void)ev;
    return cudaSuccess;
}

EXPORT cudaError_t CUDARTAPI cudaEventSynchronize(cudaEvent_t ev)
{
    (void)ev;
    return cudaSuccess;
}

EXPORT cudaError_t CUDARTAPI cudaEventElapsedTime(float *ms, cudaEvent_t a, cudaEvent_t b)
{
    *ms = (float)(b->t_ms - a->t_ms);
    return cudaSuccess;
}

EXPORT cudaError_t CUDARTAPI cudaEventDestroy(cudaEvent_t ev)
{
    free(ev);
    return cudaSuccess;
}

EXPORT cudaError_t CUDARTAPI cudaMemGetInfo(size_t *f, size_t *t)
{
    *f = (size_t)1 << 30;
    *t = (size_t)2 << 30;
    return cudaSuccess;
}
