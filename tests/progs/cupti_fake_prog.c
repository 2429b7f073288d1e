/* tests/progs/cupti_fake_prog.c: plays the CUDA driver's part for
 * t_run_cupti_fake.py: loads the library named by CUDA_INJECTION64_PATH and
 * calls its InitializeInjection, as cuInit does; the fake libcupti then
 * produces records when the injection flushes at exit. Prints its own
 * CLOCK_MONOTONIC start and end. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static long long mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(void)
{
    long long t0 = mono();
    const char *path = getenv("CUDA_INJECTION64_PATH");
    if (!path) {
        fprintf(stderr, "cupti_fake_prog: CUDA_INJECTION64_PATH not set\n");
        return 2;
    }
    void *h = dlopen(path, RTLD_NOW);
    if (!h) {
        fprintf(stderr, "cupti_fake_prog: %s\n", dlerror());
        return 2;
    }
    int (*init)(void) = (int (*)(void))dlsym(h, "InitializeInjection");
    if (!init || init() != 1) {
        fprintf(stderr, "cupti_fake_prog: InitializeInjection missing or failed\n");
        return 2;
    }
    printf("start %lld end %lld\n", t0, mono());
    return 0;
}
