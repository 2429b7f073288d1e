/* tests/test_cupti_conv.c: CUPTI activity records built here (no GPU) are
 * converted into the right store events: kernels, copies with memory kinds,
 * memsets, API calls, synchronization, MEMORY2 alloc/free, overhead. */
#include "test.h"
#ifdef GP_HAVE_CUDA
#include "record/cuda/cupti_conv.h"
#include <string.h>

static char strs[64][128];
static int nstrs;

static uint32_t f_str(void *ud, const char *s)
{
    (void)ud;
    for (int i = 0; i < nstrs; i++)
        if (!strcmp(strs[i], s)) return (uint32_t)i;
    snprintf(strs[nstrs], sizeof strs[0], "%s", s);
    return (uint32_t)nstrs++;
}
static uint32_t f_thread(void *ud, uint32_t tid)
{
    (void)ud;
    return 1000 + tid;
}
static uint32_t f_stream(void *ud, uint32_t dev, uint32_t stream)
{
    (void)ud;
    return dev == UINT32_MAX ? 90000 + stream : dev * 100 + stream;
}
static const char *f_api(void *ud, int drv, uint32_t cbid)
{
    (void)ud;
    if (!drv && cbid == 211) return "cudaLaunchKernel";
    return NULL;
}

static gp_cupti_sink sink(void)
{
    gp_cupti_sink s = {NULL, f_str, f_thread, f_stream, f_api, 0, 0, 0, 0, 0, 0};
    s.cat_runtime = f_str(NULL, "cuda_runtime");
    s.cat_driver = f_str(NULL, "cuda_driver");
    s.cat_memcpy = f_str(NULL, "gpu_memcpy");
    s.cat_memset = f_str(NULL, "gpu_memset");
    s.cat_sync = f_str(NULL, "cuda_sync");
    s.cat_overhead = f_str(NULL, "overhead");
    return s;
}

TEST(cupti_kernel)
{
    gp_cupti_sink s = sink();
    gp_cupti_kernel k;
    memset(&k, 0, sizeof k);
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.name = "void gemm<128>(float*)";
    k.start = 5000;
    k.end = 7500;
    k.queued = 4000;
    k.submitted = 4500;
    k.deviceId = 1;
    k.contextId = 3;
    k.streamId = 7;
    k.gridX = 80;
    k.gridY = 2;
    k.gridZ = 1;
    k.blockX = 256;
    k.blockY = 1;
    k.blockZ = 1;
    k.registersPerThread = 64;
    k.staticSharedMemory = 1024;
    k.dynamicSharedMemory = 4096;
    k.correlationId = 42;
    gp_store_ev e;
    ASSERT_EQ_INT(gp_cupti_convert((const CUpti_Activity *)&k, &s, &e), 1);
    ASSERT_EQ_INT(e.table, GP_ST_KERNEL);
    ASSERT_EQ_STR(strs[e.name], "void gemm<128>(float*)");
    ASSERT_EQ_INT(e.ts, 5000);
    ASSERT_EQ_INT(e.dur, 2500);
    ASSERT_EQ_INT(e.queued, 4000);
    ASSERT_EQ_INT(e.submit, 4500);
    ASSERT_EQ_INT(e.corr, 42);
    ASSERT_EQ_INT(e.device, 1);
    ASSERT_EQ_INT(e.stream, 7);
    ASSERT_EQ_INT(e.track, 107);
    ASSERT_EQ_INT(e.grid[0], 80);
    ASSERT_EQ_INT(e.grid[1], 2);
    ASSERT_EQ_INT(e.block[0], 256);
    ASSERT_EQ_INT(e.registers, 64);
    ASSERT_EQ_INT(e.shared_mem, 5120);
    /* queued/submitted not collected: unknown, never 0 */
    k.queued = 0;
    k.submitted = 0;
    ASSERT_EQ_INT(gp_cupti_convert((const CUpti_Activity *)&k, &s, &e), 1);
    ASSERT_EQ_INT(e.queued, GP_NONE);
    ASSERT_EQ_INT(e.submit, GP_NONE);
}

TEST(cupti_memcpy_memset)
{
    gp_cupti_sink s = sink();
    gp_cupti_memcpy m;
    memset(&m, 0, sizeof m);
    m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
    m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
    m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
    m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    m.bytes = 1 << 20;
    m.start = 100;
    m.end = 350;
    m.deviceId = 0;
    m.streamId = 13;
    m.correlationId = 9;
    gp_store_ev e;
    ASSERT_EQ_INT(gp_cupti_convert((const CUpti_Activity *)&m, &s, &e), 1);
    ASSERT_EQ_INT(e.table, GP_ST_COPY);
    ASSERT_EQ_STR(strs[e.name], "Memcpy HtoD (Pageable -> Device)");
    ASSERT_EQ_STR(strs[e.cat], "gpu_memcpy");
    ASSERT_EQ_INT(e.copy_kind, GP_COPY_HTOD);
    ASSERT_EQ_INT(e.src_kind, 1);
    ASSERT_EQ_INT(e.dst_kind, 3);
    ASSERT_EQ_INT(e.bytes, 1 << 20);
    ASSERT_EQ_INT(e.dur, 250);
    ASSERT_EQ_INT(e.track, 13);
    /* the trace model derives the same copy kind from the name */
    ASSERT_EQ_INT(gp_copy_kind_from_name(strs[e.name]), GP_COPY_HTOD);
    m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
    m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
    ASSERT_EQ_INT(gp_cupti_convert((const CUpti_Activity *)&m, &s, &e), 1);
    ASSERT_EQ_STR(strs[e.name], "Memcpy DtoH (Device -> Pinned)");
    ASSERT_EQ_INT(e.dst_kind, 2);

    gp_cupti_memset ms;
    memset(&ms, 0, sizeof ms);
    ms.kind = CUPTI_ACTIVITY_KIND_MEMSET;
    ms.bytes = 4096;
    ms.start = 10;
    ms.end = 20;
    ms.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    ms.streamId = 2;
    ASSERT_EQ_INT(gp_cupti_convert((const CUpti_Activity *)&ms, &s, &e), 1);
    ASSERT_EQ_STR(strs[e.name], "Memset (Device)");
    ASSERT_EQ_STR(strs[e.cat], "gpu_memset");
    ASSERT_EQ_INT(e.copy_kind, GP_COPY_MEMSET);
    ASSERT_EQ_INT(e.bytes, 4096);
}

TEST(cupti_api_sync_memory_overhead)
{
    gp_cupti_sink s = sink();
    CUpti_ActivityAPI a;
    memset(&a, 0, sizeof a);
    a.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
    a.cbid = 211;
    a.start = 1000;
    a.end = 1300;
    a.threadId = 77;
    a.correlationId = 42;
    gp_store_ev e;
    ASSERT_EQ_INT(gp_cupti_convert((const CUpti_Activity *)&a, &s, &e), 1);
    ASSERT_EQ_INT(e.table, GP_ST_API);
    ASSERT_EQ_STR(strs[e.name], "cudaLaunchKernel");
    ASSERT_EQ_STR(strs[e.cat], "cuda_runtime");
    ASSERT_EQ_INT(e.track, 1077);
    ASSERT_EQ_INT(e.corr, 42);
    a.kind = CUPTI_ACTIVITY_KIND_DRIVER;
    a.cbid = 5;
    ASSERT_EQ_INT(gp_cupti_convert((const CUpti_Activity *)&a, &s, &e), 1);
    ASSERT_EQ_STR(strs[e.name], "driver API 5");
    ASSERT_EQ_STR(strs[e.cat], "cuda_driver");

    gp_cupti_sync y;
    memset(&y, 0, sizeof y);
    y.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
    y.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
    y.start = 50;
    y.end = 90;
    y.streamId = 7;
    ASSERT_EQ_INT(gp_cupti_convert((const CUpti_Activity *)&y, &s, &e), 1);
    ASSERT_EQ_INT(e.table, GP_ST_SLICE);
    ASSERT_EQ_STR(strs[e.name], "cudaStreamSynchronize");
    ASSERT_EQ_STR(strs[e.cat], "cuda_sync");
    ASSERT_EQ_INT(e.track, 90007);

    gp_cupti_memory m;
    memset(&m, 0, sizeof m);
    m.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
    m.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
    m.address = 0x7f0000001000ull;
    m.bytes = 8192;
    m.timestamp = 123;
    m.deviceId = 0;
    ASSERT_EQ_INT(gp_cupti_convert((const CUpti_Activity *)&m, &s, &e), 1);
    ASSERT_EQ_INT(e.table, GP_ST_MEM);
    ASSERT_EQ_INT(e.bytes, 8192);
    ASSERT_EQ_INT(e.addr, (int64_t)0x7f0000001000ull);
    m.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE;
    ASSERT_EQ_INT(gp_cupti_convert((const CUpti_Activity *)&m, &s, &e), 1);
    ASSERT_EQ_INT(e.bytes, -8192);
    m.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_INVALID;
    ASSERT_EQ_INT(gp_cupti_convert((const CUpti_Activity *)&m, &s, &e), 0);

    gp_cupti_overhead o;
    memset(&o, 0, sizeof o);
    o.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
    o.overheadKind = CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH;
    o.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
    o.objectId.pt.threadId = 5;
    o.start = 1;
    o.end = 11;
    ASSERT_EQ_INT(gp_cupti_convert((const CUpti_Activity *)&o, &s, &e), 1);
    ASSERT_EQ_STR(strs[e.name], "CUPTI buffer flush");
    ASSERT_EQ_STR(strs[e.cat], "overhead");
    ASSERT_EQ_INT(e.track, 1005);
    ASSERT_EQ_INT(e.dur, 10);

    CUpti_Activity other = {CUPTI_ACTIVITY_KIND_MARKER};
    ASSERT_EQ_INT(gp_cupti_convert(&other, &s, &e), 0);
}

/* CUPTI's mangled kernel names are demangled like Kineto's and ncu's. */
TEST(cupti_kernel_demangled)
{
    gp_cupti_sink s = sink();
    gp_cupti_kernel k;
    memset(&k, 0, sizeof k);
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.name = "_Z5scalePfif";
    k.start = 1;
    k.end = 2;
    gp_store_ev e;
    ASSERT_EQ_INT(gp_cupti_convert((const CUpti_Activity *)&k, &s, &e), 1);
    if (!strcmp(strs[e.name], "_Z5scalePfif")) SKIP("no C++ runtime to demangle with");
    ASSERT_EQ_STR(strs[e.name], "scale(float*, int, float)");
    k.name = "_Znot_a_valid_mangling";
    ASSERT_EQ_INT(gp_cupti_convert((const CUpti_Activity *)&k, &s, &e), 1);
    ASSERT_EQ_STR(strs[e.name], "_Znot_a_valid_mangling"); /* kept as given */
}

TEST_MAIN(cupti_kernel, cupti_kernel_demangled, cupti_memcpy_memset, cupti_api_sync_memory_overhead)
#else
TEST(cupti_not_built)
{
    SKIP("built without the CUDA toolkit: CUPTI record conversion not compiled");
}
TEST_MAIN(cupti_not_built)
#endif
