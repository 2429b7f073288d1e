/* tests/progs/cl_fork_prog.c: an OpenCL program that forks without exec
 * after OpenCL is in use; parent and children enqueue on the inherited
 * queue. t_run_fork.py checks that `gpuprof run` records each process as its
 * own processes row, with no event lost or duplicated and no deadlock. Needs
 * a driver that works in a forked child (PoCL: POCL_DEVICES=basic).
 * Prints "pid PID pre N kernels N writes N" per process.
 * Usage: cl_fork_prog [CHILDREN]; exit 77 without OpenCL. */
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *src = "__kernel void pre_fork(__global float *x) {\n"
                         "    x[get_global_id(0)] += 1.0f;\n"
                         "}\n"
                         "__kernel void in_parent(__global float *x) {\n"
                         "    x[get_global_id(0)] *= 2.0f;\n"
                         "}\n"
                         "__kernel void in_child(__global float *x) {\n"
                         "    x[get_global_id(0)] -= 1.0f;\n"
                         "}\n";

#define N 4096

static cl_command_queue q;
static cl_kernel kpre, kpar, kchild;
static cl_mem buf;
static float host[N];

/* Enqueues `kernels` launches of k (NULL events) and one write, then finishes. */
static int work(cl_kernel k, int kernels)
{
    size_t g = N;
    for (int i = 0; i < kernels; i++)
        if (clEnqueueNDRangeKernel(q, k, 1, NULL, &g, NULL, 0, NULL, NULL) != CL_SUCCESS) return 1;
    if (clEnqueueWriteBuffer(q, buf, CL_TRUE, 0, sizeof host, host, 0, NULL, NULL) != CL_SUCCESS)
        return 1;
    return clFinish(q) != CL_SUCCESS;
}

int main(int argc, char **argv)
{
    int children = argc > 1 ? atoi(argv[1]) : 2;
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
    if (err != CL_SUCCESS) return 1;
    q = clCreateCommandQueueWithProperties(ctx, dev, NULL, &err);
    if (err != CL_SUCCESS) return 1;
    cl_program prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    if (err != CL_SUCCESS || clBuildProgram(prog, 1, &dev, NULL, NULL, NULL) != CL_SUCCESS)
        return 1;
    kpre = clCreateKernel(prog, "pre_fork", &err);
    kpar = clCreateKernel(prog, "in_parent", &err);
    kchild = clCreateKernel(prog, "in_child", &err);
    buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, sizeof host, NULL, &err);
    if (err != CL_SUCCESS) return 1;
    clSetKernelArg(kpre, 0, sizeof buf, &buf);
    clSetKernelArg(kpar, 0, sizeof buf, &buf);
    clSetKernelArg(kchild, 0, sizeof buf, &buf);
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (work(kpre, 3)) return 1; /* recorded before any fork: the parent's */
    int parent_kernels = 0, parent_writes = 1;
    for (int c = 0; c < children; c++) {
        fflush(stdout);
        pid_t pid = fork();
        if (pid < 0) return 1;
        if (pid == 0) {
            int n = 2 * (c + 1);
            int rc = work(kchild, n);
            printf("pid %d pre 0 kernels %d writes 1\n", (int)getpid(), n);
            exit(rc); /* atexit handlers run: the child's recording is completed */
        }
        if (work(kpar, 5)) return 1; /* while the child runs */
        parent_kernels += 5;
        parent_writes++;
        int st = 0;
        if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            fprintf(stderr, "cl_fork_prog: child %d failed (status %d)\n", c, st);
            return 1;
        }
    }
    printf("pid %d pre 3 kernels %d writes %d\n", (int)getpid(), parent_kernels, parent_writes);
    clReleaseMemObject(buf);
    clReleaseKernel(kpre);
    clReleaseKernel(kpar);
    clReleaseKernel(kchild);
    clReleaseProgram(prog);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    return 0;
}
