/* tests/test.h: a tiny libuv-style test harness. Each test file defines
 * TEST(name) functions and ends with TEST_MAIN(name, ...). Assertions print
 * file, line and both values, then abandon the current test case. */
#ifndef GP_TEST_H
#define GP_TEST_H
#include <inttypes.h>
#include <math.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* 1 in a build with ASan or TSan (their shadow memory and slower hot paths
 * make RSS bounds and full-size loops meaningless or too slow there). */
#if defined(__SANITIZE_ADDRESS__)
#define GP_TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define GP_TEST_SANITIZED 1
#endif
#endif
#ifndef GP_TEST_SANITIZED
#define GP_TEST_SANITIZED 0
#endif

/* CLOCK_MONOTONIC from the kernel: for the tests that define their own
 * clock_gettime (which the library then reads). */
static inline int64_t gp_test_real_mono_ns(void)
{
    struct timespec ts;
    syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Removes the SQLite store at path and its -wal/-shm files (absent ones
 * are fine). */
static inline void gp_test_rm_db(const char *path)
{
    char x[4200];
    remove(path);
    snprintf(x, sizeof x, "%s-wal", path);
    remove(x);
    snprintf(x, sizeof x, "%s-shm", path);
    remove(x);
}

/* The resident set size of this process in kB (VmRSS), -1 if unknown. */
static inline long gp_test_rss_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long v = -1;
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "VmRSS:", 6)) v = atol(line + 6);
    if (f) fclose(f);
    return v;
}

/* Sleeps ms milliseconds (the whole of it, a signal or not). */
static inline void gp_test_sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

/* The whole file at path as a NUL-terminated string (malloc'ed; the caller
 * frees it), or NULL when it cannot be opened. */
static inline char *gp_test_slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) n = 0;
    if (s) s[n] = 0;
    fclose(f);
    return s;
}

/* xorshift64 over the caller's state (a fixed seed gives a fixed sequence) */
static inline uint64_t gp_test_xorshift(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* durations log-uniform over ~6 decades (1 ns .. 1.2 ms) plus small
 * integers, like the durations of mixed operations */
static inline int64_t gp_test_log_duration(uint64_t *s)
{
    double u = (double)(gp_test_xorshift(s) >> 11) / 9007199254740992.0;
    return (int64_t)exp(u * 14.0) + (int64_t)(gp_test_xorshift(s) % 7);
}

static jmp_buf gp_test_jmp;
static int gp_test_failed, gp_test_skipped;
static char gp_test_skip_reason[256];

#define TEST(name) static void test_##name(void)

#define GP_FAIL_(...)                                                                              \
    do {                                                                                           \
        fprintf(stderr, "  %s:%d: ", __FILE__, __LINE__);                                          \
        fprintf(stderr, __VA_ARGS__);                                                              \
        fputc('\n', stderr);                                                                       \
        gp_test_failed = 1;                                                                        \
        longjmp(gp_test_jmp, 1);                                                                   \
    } while (0)

#define ASSERT(cond)                                                                               \
    do {                                                                                           \
        if (!(cond)) GP_FAIL_("assertion failed: %s", #cond);                                      \
    } while (0)

#define ASSERT_EQ_INT(a, b)                                                                        \
    do {                                                                                           \
        long long a_ = (long long)(a), b_ = (long long)(b);                                        \
        if (a_ != b_) GP_FAIL_("%s == %s: %lld != %lld", #a, #b, a_, b_);                          \
    } while (0)

#define ASSERT_NE_INT(a, b)                                                                        \
    do {                                                                                           \
        long long a_ = (long long)(a), b_ = (long long)(b);                                        \
        if (a_ == b_) GP_FAIL_("%s != %s: both %lld", #a, #b, a_);                                 \
    } while (0)

#define ASSERT_CMP_INT(a, op, b)                                                                   \
    do {                                                                                           \
        long long a_ = (long long)(a), b_ = (long long)(b);                                        \
        if (!(a_ op b_)) GP_FAIL_("%s %s %s: %lld vs %lld", #a, #op, #b, a_, b_);                  \
    } while (0)

/* a comparison of floating-point values (ASSERT_CMP_INT would truncate) */
#define ASSERT_CMP_DBL(a, op, b)                                                                   \
    do {                                                                                           \
        double a_ = (double)(a), b_ = (double)(b);                                                 \
        if (!(a_ op b_)) GP_FAIL_("%s %s %s: %.9g vs %.9g", #a, #op, #b, a_, b_);                  \
    } while (0)

#define ASSERT_NEAR(a, b, tol)                                                                     \
    do {                                                                                           \
        double a_ = (double)(a), b_ = (double)(b);                                                 \
        if (!(fabs(a_ - b_) <= (tol)))                                                             \
            GP_FAIL_("%s ~= %s (tol %g): %.9g vs %.9g", #a, #b, (double)(tol), a_, b_);            \
    } while (0)

#define ASSERT_EQ_STR(a, b)                                                                        \
    do {                                                                                           \
        const char *a_ = (a), *b_ = (b);                                                           \
        if (!a_ || !b_ || strcmp(a_, b_) != 0)                                                     \
            GP_FAIL_("%s == %s: \"%s\" != \"%s\"", #a, #b, a_ ? a_ : "(null)",                     \
                     b_ ? b_ : "(null)");                                                          \
    } while (0)

#define ASSERT_CONTAINS(hay, needle)                                                               \
    do {                                                                                           \
        const char *h_ = (hay), *n_ = (needle);                                                    \
        if (!h_ || !strstr(h_, n_))                                                                \
            GP_FAIL_("\"%s\" does not contain \"%s\"", h_ ? h_ : "(null)", n_);                    \
    } while (0)

/* Skips the current test case with a printed reason. */
#define SKIP(...)                                                                                  \
    do {                                                                                           \
        snprintf(gp_test_skip_reason, sizeof gp_test_skip_reason, __VA_ARGS__);                    \
        gp_test_skipped = 1;                                                                       \
        longjmp(gp_test_jmp, 1);                                                                   \
    } while (0)

typedef struct {
    const char *name;
    void (*fn)(void);
} gp_test_case;

static inline int gp_test_run_all(const gp_test_case *cases, int n, const char *file)
{
    volatile int passed = 0, failed = 0, skipped = 0;
    const char *only = getenv("GP_TEST_ONLY");
    for (volatile int i = 0; i < n; i++) {
        if (only && strcmp(only, cases[i].name) != 0) continue;
        gp_test_failed = gp_test_skipped = 0;
        if (setjmp(gp_test_jmp) == 0) cases[i].fn();
        if (gp_test_failed) {
            failed++;
            printf("not ok %d - %s\n", i + 1, cases[i].name);
        } else if (gp_test_skipped) {
            skipped++;
            printf("ok %d - %s # SKIP %s\n", i + 1, cases[i].name, gp_test_skip_reason);
        } else {
            passed++;
            printf("ok %d - %s\n", i + 1, cases[i].name);
        }
        fflush(stdout);
    }
    printf("%s: %d passed, %d failed, %d skipped\n", file, (int)passed, (int)failed, (int)skipped);
    if (failed) return 1;
    if (passed == 0 && skipped > 0) return 77;
    return 0;
}

#define GP_TC_(name)   {#name, test_##name},
#define GP_MAP1_(m, x) m(x)
#define GP_FOREACH_(m, ...)                                                                        \
    GP_FE_N_(__VA_ARGS__, GP_FE24_, GP_FE23_, GP_FE22_, GP_FE21_, GP_FE20_, GP_FE19_, GP_FE18_,    \
             GP_FE17_, GP_FE16_, GP_FE15_, GP_FE14_, GP_FE13_, GP_FE12_, GP_FE11_, GP_FE10_,       \
             GP_FE9_, GP_FE8_, GP_FE7_, GP_FE6_, GP_FE5_, GP_FE4_, GP_FE3_, GP_FE2_, GP_FE1_)      \
    (m, __VA_ARGS__)
#define GP_FE_N_(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14, _15, _16, _17, _18,  \
                 _19, _20, _21, _22, _23, _24, N, ...)                                             \
    N
#define GP_FE1_(m, x)       m(x)
#define GP_FE2_(m, x, ...)  m(x) GP_FE1_(m, __VA_ARGS__)
#define GP_FE3_(m, x, ...)  m(x) GP_FE2_(m, __VA_ARGS__)
#define GP_FE4_(m, x, ...)  m(x) GP_FE3_(m, __VA_ARGS__)
#define GP_FE5_(m, x, ...)  m(x) GP_FE4_(m, __VA_ARGS__)
#define GP_FE6_(m, x, ...)  m(x) GP_FE5_(m, __VA_ARGS__)
#define GP_FE7_(m, x, ...)  m(x) GP_FE6_(m, __VA_ARGS__)
#define GP_FE8_(m, x, ...)  m(x) GP_FE7_(m, __VA_ARGS__)
#define GP_FE9_(m, x, ...)  m(x) GP_FE8_(m, __VA_ARGS__)
#define GP_FE10_(m, x, ...) m(x) GP_FE9_(m, __VA_ARGS__)
#define GP_FE11_(m, x, ...) m(x) GP_FE10_(m, __VA_ARGS__)
#define GP_FE12_(m, x, ...) m(x) GP_FE11_(m, __VA_ARGS__)
#define GP_FE13_(m, x, ...) m(x) GP_FE12_(m, __VA_ARGS__)
#define GP_FE14_(m, x, ...) m(x) GP_FE13_(m, __VA_ARGS__)
#define GP_FE15_(m, x, ...) m(x) GP_FE14_(m, __VA_ARGS__)
#define GP_FE16_(m, x, ...) m(x) GP_FE15_(m, __VA_ARGS__)
#define GP_FE17_(m, x, ...) m(x) GP_FE16_(m, __VA_ARGS__)
#define GP_FE18_(m, x, ...) m(x) GP_FE17_(m, __VA_ARGS__)
#define GP_FE19_(m, x, ...) m(x) GP_FE18_(m, __VA_ARGS__)
#define GP_FE20_(m, x, ...) m(x) GP_FE19_(m, __VA_ARGS__)
#define GP_FE21_(m, x, ...) m(x) GP_FE20_(m, __VA_ARGS__)
#define GP_FE22_(m, x, ...) m(x) GP_FE21_(m, __VA_ARGS__)
#define GP_FE23_(m, x, ...) m(x) GP_FE22_(m, __VA_ARGS__)
#define GP_FE24_(m, x, ...) m(x) GP_FE23_(m, __VA_ARGS__)

/* Up to 24 test names per TEST_MAIN. */
#define TEST_MAIN(...)                                                                             \
    int main(void)                                                                                 \
    {                                                                                              \
        static const gp_test_case cases[] = {GP_FOREACH_(GP_TC_, __VA_ARGS__)};                    \
        return gp_test_run_all(cases, (int)(sizeof cases / sizeof cases[0]), __FILE__);            \
    }

/* Where the shared real traces live: $GPUPROF_TRACES, else ../shared/traces
 * next to the source tree. Returns NULL when absent. */
static inline const char *gp_test_traces_dir(void)
{
    static char buf[4096];
    const char *env = getenv("GPUPROF_TRACES");
    if (env && *env) return env;
#ifdef GP_SOURCE_DIR
    snprintf(buf, sizeof buf, "%s/../shared/traces", GP_SOURCE_DIR);
    FILE *f = fopen(buf, "r");
    if (f) {
        fclose(f);
        return buf;
    }
#endif
    return NULL;
}

#endif
