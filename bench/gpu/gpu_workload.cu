// bench/gpu/gpu_workload.cu: the CUDA program of the issue-5 GPU check (two
// streams, kernels, pageable and pinned copies, memsets, NVTX ranges) and a
// loop of small kernels for the overhead check. Built by bench/gpu/run_all.sh.
// Usage: gpu_workload mix [ITERATIONS]   prints the expected counts as JSON
//        gpu_workload loop [N]           N tiny kernels; prints the loop's ns
// Exits 77 with the reason when there is no CUDA device.
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <time.h>

__global__ void scale(float *x, int n, float a)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= a;
}

__global__ void add(float *y, const float *x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] += x[i];
}

__global__ void tiny(float *x) { x[threadIdx.x] += 1.0f; }

#define CK(call)                                                                                   \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "gpu_workload: %s: %s\n", #call, cudaGetErrorString(e_));              \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

static long long mono_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static int mix(int iters)
{
    const int n = 1 << 20;
    const size_t bytes = (size_t)n * sizeof(float);
    float *d_a, *d_b, *h_pinned, *h_pageable;
    cudaStream_t s0, s1;
    nvtxNameOsThreadA((uint32_t)syscall(SYS_gettid), "main");
    CK(cudaStreamCreateWithFlags(&s0, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    CK(cudaMalloc(&d_a, bytes));
    CK(cudaMalloc(&d_b, bytes));
    CK(cudaMallocHost(&h_pinned, bytes));
    h_pageable = (float *)malloc(bytes);
    if (!h_pageable) return 1;
    for (int i = 0; i < n; i++) h_pinned[i] = h_pageable[i] = 1.0f;
    nvtxRangePushA("mix");
    for (int it = 0; it < iters; it++) {
        nvtxRangePushA("iteration");
        CK(cudaMemsetAsync(d_a, 0, bytes, s0));
        CK(cudaMemsetAsync(d_b, 0, bytes, s1));
        CK(cudaMemcpyAsync(d_a, h_pinned, bytes, cudaMemcpyHostToDevice, s0));   /* pinned */
        CK(cudaMemcpyAsync(d_b, h_pageable, bytes, cudaMemcpyHostToDevice, s1)); /* pageable */
        scale<<<(n + 255) / 256, 256, 0, s0>>>(d_a, n, 2.0f);
        add<<<(n + 255) / 256, 256, 0, s1>>>(d_b, d_b, n);
        CK(cudaGetLastError());
        CK(cudaMemcpyAsync(h_pinned, d_a, bytes, cudaMemcpyDeviceToHost, s0));
        CK(cudaMemcpyAsync(h_pageable, d_b, bytes, cudaMemcpyDeviceToHost, s1));
        nvtxMarkA("enqueued");
        CK(cudaStreamSynchronize(s0));
        CK(cudaStreamSynchronize(s1));
        nvtxRangePop();
    }
    nvtxRangePop();
    CK(cudaDeviceSynchronize());
    /* the program's own account of what it enqueued: run_vs_torch.py compares
     * the store with it */
    printf("{\"kernels\":%d,\"kernel_names\":{\"scale\":%d,\"add\":%d},"
           "\"memsets\":%d,\"htod_pinned\":%d,\"htod_pageable\":%d,"
           "\"dtoh_pinned\":%d,\"dtoh_pageable\":%d,\"copy_bytes\":%zu,"
           "\"nvtx_ranges\":{\"mix\":1,\"iteration\":%d},\"nvtx_marks\":%d,\"streams\":2}\n",
           2 * iters, iters, iters, 2 * iters, iters, iters, iters, iters, bytes, iters, iters);
    free(h_pageable);
    CK(cudaFreeHost(h_pinned));
    CK(cudaFree(d_a));
    CK(cudaFree(d_b));
    CK(cudaStreamDestroy(s0));
    CK(cudaStreamDestroy(s1));
    return 0;
}

static int loop(int n)
{
    float *d;
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CK(cudaMalloc(&d, 32 * sizeof(float)));
    CK(cudaMemset(d, 0, 32 * sizeof(float)));
    for (int i = 0; i < 100; i++) tiny<<<1, 32, 0, s>>>(d); /* warm-up */
    CK(cudaStreamSynchronize(s));
    long long t0 = mono_ns();
    for (int i = 0; i < n; i++) tiny<<<1, 32, 0, s>>>(d);
    CK(cudaStreamSynchronize(s));
    long long t1 = mono_ns();
    CK(cudaGetLastError());
    printf("{\"kernels\":%d,\"loop_ns\":%lld}\n", n, t1 - t0);
    CK(cudaFree(d));
    CK(cudaStreamDestroy(s));
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2 || (strcmp(argv[1], "mix") && strcmp(argv[1], "loop"))) {
        fprintf(stderr, "usage: gpu_workload mix [ITERATIONS] | loop [N]\n");
        return 2;
    }
    int ndev = 0;
    cudaError_t e = cudaGetDeviceCount(&ndev);
    if (e != cudaSuccess || ndev == 0) {
        printf("gpu_workload: no CUDA device (%s), skipping\n",
               e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
        return 77;
    }
    if (!strcmp(argv[1], "mix")) return mix(argc > 2 ? atoi(argv[2]) : 10);
    return loop(argc > 2 ? atoi(argv[2]) : 10000);
}
