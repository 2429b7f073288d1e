// examples/cuda_saxpy.cu: SAXPY timed with libgpuprof's CUDA-event kernel
// timers (gp_cuda_begin/_end) plus the memory tracker. Needs an NVIDIA GPU to
// run; exits 77 with the reason when there is none.
// Usage: example_cuda_saxpy [N [ITERATIONS [OUT.json]]]
#include <cuda_runtime.h>
#include <gpuprof/gpuprof.h>
#include <stdio.h>
#include <stdlib.h>

__global__ void saxpy(int n, float a, const float *x, float *y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : (1 << 24);
    int iters = argc > 2 ? atoi(argv[2]) : 20;
    const char *out = argc > 3 ? argv[3] : "cuda_saxpy.json";
    int ndev = 0;
    cudaError_t e = cudaGetDeviceCount(&ndev);
    if (e != cudaSuccess || ndev == 0) {
        printf("cuda_saxpy: no CUDA device (%s), skipping\n",
               e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
        return 77;
    }
    gp_profiler *p = gp_profiler_create(NULL);
    float *x, *y;
    size_t bytes = (size_t)n * sizeof(float);
    cudaMalloc(&x, bytes);
    cudaMalloc(&y, bytes);
    int64_t shape[1] = {n};
    gp_mem_track(p, "x", x, bytes, shape, 1, "float32");
    gp_mem_track(p, "y", y, bytes, shape, 1, "float32");
    cudaMemset(x, 0, bytes);
    cudaMemset(y, 0, bytes);
    cudaStream_t s;
    cudaStreamCreate(&s);
    for (int i = 0; i < iters; i++) {
        int rc = gp_cuda_begin(p, "saxpy", s);
        if (rc) {
            printf("cuda_saxpy: %s\n", gp_last_error(p));
            return 1;
        }
        saxpy<<<(n + 255) / 256, 256, 0, s>>>(n, 2.0f, x, y);
        gp_cuda_end(p, "saxpy", s);
    }
    cudaStreamSynchronize(s);
    gp_kernels_resolve(p, 1);
    gp_print_kernels(p, stdout);
    gp_print_memory(p, stdout);
    gp_mem_untrack(p, x);
    gp_mem_untrack(p, y);
    cudaFree(x);
    cudaFree(y);
    gp_export_json(p, out);
    gp_profiler_destroy(p);
    return 0;
}
