/* bench/keys.c: which way a bench figure is better, from its key's unit
 * (bench.h). Apart from the benchmarks themselves: compare and history
 * judge stored bench runs with it. */
#include "bench/bench.h"
#include <string.h>

static int ends_with(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && !memcmp(s + a - b, suf, b);
}

int gp_bench_key_higher_better(const char *key)
{
    const char *at = strchr(key, '@'); /* sweep point: "h2d_pinned_GBps@4096" */
    char buf[128];
    if (at) {
        size_t n = (size_t)(at - key);
        if (n >= sizeof buf) return -1;
        memcpy(buf, key, n);
        buf[n] = 0;
        key = buf;
    }
    if (ends_with(key, "_GBps") || ends_with(key, "_GFLOPS") || ends_with(key, "_GIOPS")) return 1;
    if (ends_with(key, "_us")) return 0;
    return -1;
}
