/* tests/progs/nvtx_prog.c: an ordinary program annotated with NVTX v3
 * (header-only; no GPU, no CUDA library): push/pop ranges, start/end ranges
 * (one ended on another thread), marks, a named domain with a registered
 * string, a thread name. t_run_nvtx.py checks what `gpuprof run --nvtx`
 * records. Usage: nvtx_prog [ITERATIONS]. */
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static void spin_us(long us)
{
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    do clock_gettime(CLOCK_MONOTONIC, &b);
    while ((b.tv_sec - a.tv_sec) * 1000000L + (b.tv_nsec - a.tv_nsec) / 1000 < us);
}

static nvtxRangeId_t cross;

static void *ender(void *arg)
{
    (void)arg;
    spin_us(200);
    nvtxRangeEnd(cross);
    return NULL;
}

int main(int argc, char **argv)
{
    int iters = argc > 1 ? atoi(argv[1]) : 3;
    nvtxNameOsThreadA((uint32_t)syscall(SYS_gettid), "main thread");
    nvtxDomainHandle_t dom = nvtxDomainCreateA("mylib");
    nvtxStringHandle_t reg = nvtxDomainRegisterStringA(dom, "registered step");
    for (int i = 0; i < iters; i++) {
        nvtxRangePushA("outer");
        spin_us(100);
        nvtxRangePushA("inner");
        spin_us(100);
        nvtxRangePop();
        nvtxMarkA("checkpoint");
        nvtxRangePop();
        nvtxEventAttributes_t a = {0};
        a.version = NVTX_VERSION;
        a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
        a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
        a.message.registered = reg;
        nvtxDomainRangePushEx(dom, &a);
        spin_us(50);
        nvtxDomainRangePop(dom);
    }
    cross = nvtxRangeStartA("cross-thread");
    pthread_t th;
    pthread_create(&th, NULL, ender, NULL);
    pthread_join(th, NULL);
    printf("nvtx_prog: %d iterations\n", iters);
    return 0;
}
