// bench/gpu/cuda_timer_check.cu: the saxpy kernel of examples/cuda_saxpy.cu
// timed by libgpuprof's CUDA-event timer (gp_cuda_begin/_end), for the
// issue-4 GPU check. Built twice by bench/gpu/run_all.sh:
//  - as a program (-DTC_MAIN): cuda_timer_check [N [ITERATIONS]] times
//    ITERATIONS launches and prints libgpuprof's statistics as one JSON line
//    (also what ncu profiles);
//  - as a shared library (libtc.so) that bench/gpu/cuda_timer_check.py loads
//    with ctypes, so the same launch is bracketed by torch.cuda.Event too.
#include <cuda_runtime.h>
#include <gpuprof/gpuprof.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__global__ void saxpy(int n, float a, const float *x, float *y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}

extern "C" {
/* Launches saxpy on `stream` (a cudaStream_t). 0 or the cudaError_t. */
__attribute__((visibility("default"))) int tc_launch(int n, float a, const float *x, float *y,
                                                     void *stream)
{
    saxpy<<<(n + 255) / 256, 256, 0, (cudaStream_t)stream>>>(n, a, x, y);
    return (int)cudaGetLastError();
}

/* A profiler with default options (NULL on failure). */
__attribute__((visibility("default"))) void *tc_create(void) { return gp_profiler_create(NULL); }

__attribute__((visibility("default"))) int tc_begin(void *p, void *stream)
{
    return gp_cuda_begin((gp_profiler *)p, "saxpy", stream);
}

__attribute__((visibility("default"))) int tc_end(void *p, void *stream)
{
    return gp_cuda_end((gp_profiler *)p, "saxpy", stream);
}

/* Waits for every pending timing and writes the "saxpy" row's count, total,
 * min and max (ns). 0, or -1 when there is no such row. */
__attribute__((visibility("default"))) int tc_stats(void *p, long long *count, long long *total,
                                                    long long *min, long long *max)
{
    gp_kernel_row *rows = NULL;
    size_t n = 0;
    gp_kernels_resolve((gp_profiler *)p, 1);
    if (gp_kernel_stats((gp_profiler *)p, &rows, &n)) return -1;
    int rc = -1;
    for (size_t i = 0; i < n; i++) {
        if (strcmp(rows[i].name, "saxpy")) continue;
        *count = (long long)rows[i].count;
        *total = rows[i].total_ns;
        *min = rows[i].min_ns;
        *max = rows[i].max_ns;
        rc = 0;
    }
    gp_kernel_rows_free(rows, n);
    return rc;
}

__attribute__((visibility("default"))) const char *tc_error(void *p)
{
    return gp_last_error((gp_profiler *)p);
}

__attribute__((visibility("default"))) void tc_destroy(void *p)
{
    gp_profiler_destroy((gp_profiler *)p);
}
}

#ifdef TC_MAIN
int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : (1 << 24);
    int iters = argc > 2 ? atoi(argv[2]) : 200;
    int ndev = 0;
    cudaError_t e = cudaGetDeviceCount(&ndev);
    if (e != cudaSuccess || ndev == 0) {
        printf("cuda_timer_check: no CUDA device (%s), skipping\n",
               e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
        return 77;
    }
    float *x, *y;
    size_t bytes = (size_t)n * sizeof(float);
    if (cudaMalloc(&x, bytes) || cudaMalloc(&y, bytes)) return 1;
    cudaMemset(x, 0, bytes);
    cudaMemset(y, 0, bytes);
    cudaStream_t s;
    cudaStreamCreate(&s);
    for (int i = 0; i < 10; i++) tc_launch(n, 2.0f, x, y, s); /* warm-up, untimed */
    cudaStreamSynchronize(s);
    void *p = tc_create();
    for (int i = 0; i < iters; i++) {
        if (tc_begin(p, s)) {
            fprintf(stderr, "cuda_timer_check: %s\n", tc_error(p));
            return 1;
        }
        if (tc_launch(n, 2.0f, x, y, s)) return 1;
        tc_end(p, s);
    }
    cudaStreamSynchronize(s);
    long long count = 0, total = 0, mn = 0, mx = 0;
    if (tc_stats(p, &count, &total, &mn, &mx)) {
        fprintf(stderr, "cuda_timer_check: no kernel timings (%s)\n", tc_error(p));
        return 1;
    }
    printf("{\"n\":%d,\"count\":%lld,\"total_ns\":%lld,\"min_ns\":%lld,\"max_ns\":%lld}\n", n,
           count, total, mn, mx);
    tc_destroy(p);
    cudaFree(x);
    cudaFree(y);
    cudaStreamDestroy(s);
    return 0;
}
#endif
