/* tests/progs/cl_cmds_prog.c: enqueues one of each OpenCL command kind the
 * layer records beyond kernels and buffer reads/writes (images, maps,
 * markers/barriers, SVM when the device has it), some without events. For
 * each command it prints "expect<TAB>API<TAB>TABLE<TAB>NAME<TAB>BYTES" (what
 * the store should hold; TABLE is copy or slice); t_run_opencl.py compares.
 * Exit 77 without an OpenCL device with image support. */
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define W   64
#define H   32
#define PIX 16 /* CL_RGBA x CL_FLOAT */

static void expect(const char *api, const char *table, const char *name, long long bytes)
{
    printf("expect\t%s\t%s\t%s\t%lld\n", api, table, name, bytes);
}

#define CHECK(e, what)                                                                             \
    do {                                                                                           \
        cl_int rc_ = (e);                                                                          \
        if (rc_ != CL_SUCCESS) {                                                                   \
            fprintf(stderr, "cl_cmds_prog: %s failed (%d)\n", what, (int)rc_);                     \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

int main(void)
{
    cl_platform_id plat;
    cl_device_id dev;
    cl_uint np = 0;
    cl_bool images = CL_FALSE;
    if (clGetPlatformIDs(1, &plat, &np) != CL_SUCCESS || np == 0 ||
        clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL) != CL_SUCCESS ||
        clGetDeviceInfo(dev, CL_DEVICE_IMAGE_SUPPORT, sizeof images, &images, NULL) != CL_SUCCESS ||
        !images) {
        printf("SKIP no OpenCL device with image support\n");
        return 77;
    }
    cl_int err;
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    CHECK(err, "clCreateContext");
    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, dev, NULL, &err);
    CHECK(err, "clCreateCommandQueueWithProperties");
    cl_image_format fmt = {CL_RGBA, CL_FLOAT};
    cl_image_desc desc;
    memset(&desc, 0, sizeof desc);
    desc.image_type = CL_MEM_OBJECT_IMAGE2D;
    desc.image_width = W;
    desc.image_height = H;
    cl_mem i1 = clCreateImage(ctx, CL_MEM_READ_WRITE, &fmt, &desc, NULL, &err);
    CHECK(err, "clCreateImage 1");
    cl_mem i2 = clCreateImage(ctx, CL_MEM_READ_WRITE, &fmt, &desc, NULL, &err);
    CHECK(err, "clCreateImage 2");
    cl_mem b = clCreateBuffer(ctx, CL_MEM_READ_WRITE, W * H * PIX, NULL, &err);
    CHECK(err, "clCreateBuffer");
    static float host[W * H * 4];
    for (size_t i = 0; i < sizeof host / sizeof host[0]; i++) host[i] = (float)i;
    size_t o0[3] = {0, 0, 0}, full[3] = {W, H, 1};
    cl_event ev;

    CHECK(clEnqueueWriteImage(q, i1, CL_TRUE, o0, full, 0, 0, host, 0, NULL, &ev), "WriteImage");
    clReleaseEvent(ev);
    expect("clEnqueueWriteImage", "copy", "Memcpy HtoD (Pageable -> Image)", W * H * PIX);
    size_t r1[3] = {32, 16, 1};
    CHECK(clEnqueueReadImage(q, i1, CL_TRUE, o0, r1, 0, 0, host, 0, NULL, NULL), "ReadImage");
    expect("clEnqueueReadImage", "copy", "Memcpy DtoH (Image -> Pageable)", 32 * 16 * PIX);
    CHECK(clEnqueueCopyImage(q, i1, i2, o0, o0, full, 0, NULL, NULL), "CopyImage");
    expect("clEnqueueCopyImage", "copy", "Memcpy DtoD (Image -> Image)", W * H * PIX);
    size_t r2[3] = {16, 8, 1};
    CHECK(clEnqueueCopyImageToBuffer(q, i2, b, o0, r2, 0, 0, NULL, NULL), "CopyImageToBuffer");
    expect("clEnqueueCopyImageToBuffer", "copy", "Memcpy DtoD (Image -> Device)", 16 * 8 * PIX);
    size_t r3[3] = {8, 8, 1};
    CHECK(clEnqueueCopyBufferToImage(q, b, i1, 0, o0, r3, 0, NULL, NULL), "CopyBufferToImage");
    expect("clEnqueueCopyBufferToImage", "copy", "Memcpy DtoD (Device -> Image)", 8 * 8 * PIX);
    float color[4] = {1, 2, 3, 4};
    CHECK(clEnqueueFillImage(q, i2, color, o0, full, 0, NULL, NULL), "FillImage");
    expect("clEnqueueFillImage", "copy", "Memset (Image)", W * H * PIX);
    CHECK(clFinish(q), "clFinish");

    void *p = clEnqueueMapBuffer(q, b, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 1024, 4096, 0, NULL,
                                 NULL, &err);
    CHECK(err, "MapBuffer");
    expect("clEnqueueMapBuffer", "copy", "Map (Device -> Host)", 4096);
    CHECK(clEnqueueUnmapMemObject(q, b, p, 0, NULL, &ev), "Unmap buffer");
    clReleaseEvent(ev);
    expect("clEnqueueUnmapMemObject", "copy", "Unmap (Host -> Device)", 4096);
    size_t rp = 0, r4[3] = {16, 16, 1};
    p = clEnqueueMapImage(q, i1, CL_TRUE, CL_MAP_READ, o0, r4, &rp, NULL, 0, NULL, NULL, &err);
    CHECK(err, "MapImage");
    expect("clEnqueueMapImage", "copy", "Map (Image -> Host)", 16 * 16 * PIX);
    CHECK(clEnqueueUnmapMemObject(q, i1, p, 0, NULL, NULL), "Unmap image");
    expect("clEnqueueUnmapMemObject", "copy", "Unmap (Host -> Device)", 16 * 16 * PIX);

    cl_event before;
    CHECK(clEnqueueMarkerWithWaitList(q, 0, NULL, &before), "MarkerWithWaitList");
    expect("clEnqueueMarkerWithWaitList", "slice", "Marker", -1);
    CHECK(clEnqueueBarrierWithWaitList(q, 1, &before, NULL), "BarrierWithWaitList");
    expect("clEnqueueBarrierWithWaitList", "slice", "Barrier", -1);
    clReleaseEvent(before);
    CHECK(clEnqueueMarker(q, &ev), "clEnqueueMarker");
    clReleaseEvent(ev);
    expect("clEnqueueMarker", "slice", "Marker", -1);
    CHECK(clEnqueueBarrier(q), "clEnqueueBarrier");
    expect("clEnqueueBarrier", "slice", "Barrier", -1);
    CHECK(clFinish(q), "clFinish");

    cl_device_svm_capabilities svm = 0;
    if (clGetDeviceInfo(dev, CL_DEVICE_SVM_CAPABILITIES, sizeof svm, &svm, NULL) == CL_SUCCESS &&
        (svm & CL_DEVICE_SVM_COARSE_GRAIN_BUFFER)) {
        size_t n = 8192;
        char *s = clSVMAlloc(ctx, CL_MEM_READ_WRITE, n, 0);
        if (s) {
            int pat = 7;
            CHECK(clEnqueueSVMMemFill(q, s, &pat, sizeof pat, n, 0, NULL, NULL), "SVMMemFill");
            expect("clEnqueueSVMMemFill", "copy", "Memset (SVM)", (long long)n);
            CHECK(clEnqueueSVMMemcpy(q, CL_TRUE, s, host, 4096, 0, NULL, &ev), "SVMMemcpy");
            clReleaseEvent(ev);
            expect("clEnqueueSVMMemcpy", "copy", "Memcpy SVM", 4096);
            CHECK(clEnqueueSVMMap(q, CL_TRUE, CL_MAP_READ, s, n, 0, NULL, NULL), "SVMMap");
            expect("clEnqueueSVMMap", "copy", "Map SVM (Device -> Host)", (long long)n);
            CHECK(clEnqueueSVMUnmap(q, s, 0, NULL, NULL), "SVMUnmap");
            expect("clEnqueueSVMUnmap", "copy", "Unmap SVM (Host -> Device)", (long long)n);
            CHECK(clFinish(q), "clFinish");
            clSVMFree(ctx, s);
        } else {
            printf("note: clSVMAlloc failed: SVM commands not enqueued\n");
        }
    } else {
        printf("note: no coarse-grained SVM: SVM commands not enqueued\n");
    }
    clReleaseMemObject(i1);
    clReleaseMemObject(i2);
    clReleaseMemObject(b);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    return 0;
}
