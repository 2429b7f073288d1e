/* tests/test_bench.c: the bench statistics and repetition rule, the
 * compute kernels' expected values, the verdict direction of bench figures
 * in compare, and the CUDA back-end driven through tests/fake_cuda (no
 * device, out of memory, launch failure; the PTX assembled by ptxas when
 * the CUDA toolkit is present). Timings from the stand-in are not device
 * timings: the test checks the API sequence, the peaks and the verified
 * outputs, not the figures. */
#include "analysis/compare.h"
#include "bench/bench.h"
#include "test.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

char *gp_bench_cuda_ptx(int module);

TEST(t_quantile)
{
    ASSERT_NEAR(gp_bench_t975(1), 12.706, 1e-3);
    ASSERT_NEAR(gp_bench_t975(10), 2.228, 1e-3);
    ASSERT_NEAR(gp_bench_t975(60), 2.0003, 2e-4); /* scipy.stats.t.ppf(0.975, 60) */
    ASSERT_NEAR(gp_bench_t975(1000), 1.9623, 2e-4);
}

TEST(stat_compute)
{
    double v[] = {10, 12, 11, 13, 9};
    gp_bench_stat st = {0};
    st.samples = v;
    st.n = 5;
    gp_bench_stat_compute(&st);
    ASSERT_NEAR(st.mean, 11, 1e-12);
    ASSERT_NEAR(st.median, 11, 1e-12);
    ASSERT_NEAR(st.min, 9, 0);
    ASSERT_NEAR(st.max, 13, 0);
    /* std = sqrt(2.5); t(4) = 2.776 */
    ASSERT_NEAR(st.ci95, 2.776 * sqrt(2.5) / sqrt(5.0), 1e-9);
    ASSERT_NEAR(st.ci_pct, 100 * st.ci95 / 11, 1e-9);
}

TEST(expect_int_matches_loop)
{
    /* every vector count a kernel variant can have (CUDA: 2) */
    for (int nv = 1; nv <= GP_BENCH_CHAINS_MAX / 16; nv *= 2)
        for (int64_t n = 0; n < 50; n += 7) {
            uint32_t r = 0;
            for (uint32_t k = 0; k < (uint32_t)nv; k++)
                for (uint32_t l = 0; l < 16; l++) {
                    uint32_t x = 123 + l + 7 * k;
                    for (int64_t i = 0; i < n; i++)
                        x = x * (uint32_t)GP_BENCH_CHAIN_IA + (uint32_t)GP_BENCH_CHAIN_IB;
                    r ^= x;
                }
            ASSERT_EQ_INT(gp_bench_expect_int(123, n, nv), r);
        }
    /* fp: 0 steps gives the start values; a few steps match the loop in
     * double; many steps reach the fixed point 1 on every chain */
    for (int nv = 1; nv <= GP_BENCH_CHAINS_MAX / 16; nv *= 2) {
        double s0 = 0, s5 = 0;
        for (int k = 0; k < nv; k++)
            for (int l = 0; l < 16; l++) {
                double x = (5 & 63) / 64.0 + l / 16.0 + 0.5 * k;
                s0 += x;
                for (int i = 0; i < 5; i++) x = 0.9 * x + 0.1;
                s5 += x;
            }
        ASSERT_NEAR(gp_bench_expect_fp(5, 0, nv, 0.9, 0.1), s0, 1e-9);
        ASSERT_NEAR(gp_bench_expect_fp(5, 5, nv, 0.9, 0.1), s5, 1e-9);
        ASSERT_NEAR(gp_bench_expect_fp(5, 10000, nv, 0.9, 0.1), 16.0 * nv, 1e-9);
    }
    ASSERT(gp_bench_chains_valid(16) && gp_bench_chains_valid(256) && gp_bench_chains_valid(32));
    ASSERT(!gp_bench_chains_valid(0) && !gp_bench_chains_valid(48) && !gp_bench_chains_valid(512));
}

TEST(keys_and_direction)
{
    ASSERT_EQ_INT(gp_bench_test_parse("h2d_pinned"), GP_BT_H2D_PINNED);
    ASSERT_EQ_INT(gp_bench_test_parse("fp32_GFLOPS"), GP_BT_FP32);
    ASSERT_EQ_INT(gp_bench_test_parse("nope"), -1);
    ASSERT_EQ_INT(gp_bench_key_higher_better("h2d_pinned_GBps"), 1);
    ASSERT_EQ_INT(gp_bench_key_higher_better("cl0/fp32_GFLOPS"), 1);
    ASSERT_EQ_INT(gp_bench_key_higher_better("h2d_pinned_GBps@4096"), 1);
    ASSERT_EQ_INT(gp_bench_key_higher_better("launch_latency_us"), 0);
    ASSERT_EQ_INT(gp_bench_key_higher_better("kernel_ms"), -1);
    for (int t = 0; t < GP_BT__COUNT; t++) {
        const gp_bench_info *in = gp_bench_info_of((gp_bench_test)t);
        ASSERT_EQ_INT(gp_bench_key_higher_better(in->key), in->higher_better);
        ASSERT(strlen(in->method) > 20);
    }
}

/* A trace holding one bench figure's samples as a counter series. */
static gp_trace *bench_trace(const char *name, const double *v, size_t n)
{
    gp_trace *t = gp_trace_create();
    ASSERT(t);
    gp_track tr;
    memset(&tr, 0, sizeof tr);
    ASSERT(!GP_VEC_PUSH(t->tracks, tr));
    gp_series se = {gp_strtab_intern(t->strings, name, strlen(name)), 0};
    ASSERT(!GP_VEC_PUSH(t->series, se));
    for (size_t i = 0; i < n; i++) {
        gp_counter_sample cs = {(int64_t)i, v[i], 0};
        ASSERT(!GP_VEC_PUSH(t->counters, cs));
    }
    return t;
}

/* Bandwidth down by 20 %: REGRESSION; latency down by 20 %: IMPROVEMENT. */
TEST(compare_direction)
{
    const char *names[2] = {"bench:h2d_pinned_GBps", "bench:launch_latency_us"};
    gp_verdict want[2] = {GP_V_REGRESSION, GP_V_IMPROVEMENT};
    for (int k = 0; k < 2; k++) {
        double base[20], cur[20];
        for (int i = 0; i < 20; i++) {
            base[i] = 10 + 0.01 * i;
            cur[i] = 8 + 0.01 * i;
        }
        gp_trace *b = bench_trace(names[k], base, 20), *c = bench_trace(names[k], cur, 20);
        gp_compare_opts o;
        gp_compare_opts_default(&o);
        gp_comparison cmp;
        ASSERT_EQ_INT(gp_compare_runs(&b, 1, &c, 1, &o, &cmp), 0);
        ASSERT_EQ_INT(cmp.nmetrics, 1);
        ASSERT_EQ_INT(cmp.metrics[0].verdict, want[k]);
        ASSERT_EQ_INT(cmp.metrics[0].higher_better, k == 0);
        ASSERT_NEAR(cmp.metrics[0].base_fig, 10.095, 1e-9);
        ASSERT_NEAR(cmp.metrics[0].change_pct, 100 * (8.095 / 10.095 - 1), 1e-9);
        ASSERT_EQ_INT(cmp.n, 0); /* not mixed with the operations */
        gp_comparison_free(&cmp);
        gp_trace_destroy(b);
        gp_trace_destroy(c);
    }
}

static const char *fake_lib(void)
{
    static char path[1024];
    snprintf(path, sizeof path, "%s/tests/libfake_cuda.so", GP_BINARY_DIR);
    return access(path, R_OK) == 0 ? path : NULL;
}

static size_t open_fake(const char *scen, gp_bench_dev *devs, char *why, size_t whylen)
{
    setenv("GPUPROF_CUDA_LIB", fake_lib(), 1);
    setenv("FAKE_CUDA_SCENARIO", scen, 1);
    size_t n = 0;
    ASSERT_EQ_INT(gp_bench_cuda_open(devs, 4, &n, why, whylen), 0);
    return n;
}

static void quick_opts(gp_bench_opts *o, unsigned long long only)
{
    gp_bench_opts_default(o);
    o->only = only;
    o->cap_s = 0.01;
    o->min_reps = 2;
    o->sweep_max = 1 << 20;
}

TEST(cuda_nodevice)
{
    if (!fake_lib()) SKIP("tests/libfake_cuda.so not built (no CUDA headers)");
    gp_bench_dev devs[4];
    char why[256] = "";
    ASSERT_EQ_INT(open_fake("nodevice", devs, why, sizeof why), 0);
    ASSERT(strstr(why, "no device"));
    /* a library that is not there */
    setenv("GPUPROF_CUDA_LIB", "/nonexistent/libcuda.so.1", 1);
    size_t n = 0;
    why[0] = 0;
    ASSERT_EQ_INT(gp_bench_cuda_open(devs, 4, &n, why, sizeof why), 0);
    ASSERT_EQ_INT(n, 0);
    ASSERT(strstr(why, "not found"));
}

TEST(cuda_ok)
{
    if (!fake_lib()) SKIP("tests/libfake_cuda.so not built (no CUDA headers)");
    gp_bench_dev devs[4];
    char why[256] = "";
    ASSERT_EQ_INT(open_fake("ok", devs, why, sizeof why), 1);
    ASSERT_EQ_STR(devs[0].sel, "cuda0");
    ASSERT_EQ_STR(devs[0].name, "Fake H100 80GB HBM3");
    /* peaks from the attributes: 2 x 2619 MHz x 5120 bit / 8; 2 x 128 x 16 SMs x 1980 MHz */
    ASSERT(devs[0].peaks.mem_valid && devs[0].peaks.fp32_valid && devs[0].peaks.fp64_valid);
    ASSERT_NEAR(devs[0].peaks.mem_GBps, 2 * 2619e6 * 640 / 1e9, 1e-6);
    ASSERT_NEAR(devs[0].peaks.fp32_GFLOPS, 2.0 * 128 * 16 * 1980e6 / 1e9, 1e-6);
    ASSERT_NEAR(devs[0].peaks.fp64_GFLOPS, 2.0 * 64 * 16 * 1980e6 / 1e9, 1e-6);
    gp_bench_opts o;
    unsigned long long only = 0;
    int tests[] = {GP_BT_H2D_PINNED, GP_BT_D2H_PAGEABLE, GP_BT_D2D,  GP_BT_READ,
                   GP_BT_WRITE,      GP_BT_COPY,         GP_BT_FP32, GP_BT_FP64,
                   GP_BT_INT32,      GP_BT_LAUNCH,       GP_BT_SYNC};
    for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++) only |= 1ull << tests[i];
    quick_opts(&o, only);
    gp_bench_result r;
    ASSERT_EQ_INT(gp_bench_run(devs, 1, &o, &r), 0);
    for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++) {
        const gp_bench_fig *f = &r.devs[0].figs[tests[i]];
        if (!f->valid) fprintf(stderr, "  %s: %s\n", gp_bench_info_of(f->test)->key, f->why);
        ASSERT(f->valid && f->verified);
        ASSERT(f->st.n >= 2);
    }
    ASSERT(r.devs[0].figs[GP_BT_READ].peak_valid);
    ASSERT(r.devs[0].figs[GP_BT_FP32].peak_valid);
    /* the PTX kernels: 32 chains per thread, not chosen; none for the others */
    ASSERT_EQ_INT(r.devs[0].figs[GP_BT_FP32].chains, 32);
    ASSERT_EQ_INT(r.devs[0].figs[GP_BT_FP32].chains_how, GP_BENCH_CHAINS_FIXED);
    ASSERT_EQ_INT(r.devs[0].figs[GP_BT_READ].chains, 0);
    ASSERT(!r.devs[0].figs[GP_BT_H2D_PINNED].peak_valid);      /* PCIe peak not known */
    ASSERT_EQ_INT(r.devs[0].figs[GP_BT_H2D_PINNED].nsweep, 5); /* 4K 16K 64K 256K 1M */
    gp_bench_result_free(&r);
    printf("  cuda_ok: timing part skipped: the stand-in driver runs kernels on the host, its "
           "event times are not device timings\n");
}

/* --chains other than the PTX kernels' 32: unsupported, said so */
TEST(cuda_chains)
{
    if (!fake_lib()) SKIP("tests/libfake_cuda.so not built (no CUDA headers)");
    gp_bench_dev devs[4];
    char why[256] = "";
    ASSERT_EQ_INT(open_fake("ok", devs, why, sizeof why), 1);
    gp_bench_opts o;
    quick_opts(&o, 1ull << GP_BT_FP32 | 1ull << GP_BT_INT32);
    o.chains = 64;
    gp_bench_result r;
    ASSERT_EQ_INT(gp_bench_run(devs, 1, &o, &r), 0);
    for (int t = GP_BT_FP32; t <= GP_BT_INT32; t += GP_BT_INT32 - GP_BT_FP32) {
        ASSERT(!r.devs[0].figs[t].valid);
        ASSERT(strstr(r.devs[0].figs[t].why, "32 chains per thread"));
    }
    gp_bench_result_free(&r);
}

TEST(cuda_oom)
{
    if (!fake_lib()) SKIP("tests/libfake_cuda.so not built (no CUDA headers)");
    gp_bench_dev devs[4];
    char why[256] = "";
    ASSERT_EQ_INT(open_fake("oom", devs, why, sizeof why), 1);
    gp_bench_opts o;
    quick_opts(&o, 1ull << GP_BT_H2D_PINNED | 1ull << GP_BT_READ);
    gp_bench_result r;
    ASSERT_EQ_INT(gp_bench_run(devs, 1, &o, &r), 0);
    for (int t = GP_BT_H2D_PINNED; t <= GP_BT_READ; t += GP_BT_READ - GP_BT_H2D_PINNED) {
        const gp_bench_fig *f = &r.devs[0].figs[t];
        ASSERT(!f->valid);
        ASSERT(strstr(f->why, "out of device memory"));
        ASSERT(strstr(f->why, "CUDA_ERROR_OUT_OF_MEMORY"));
    }
    gp_bench_result_free(&r);
}

TEST(cuda_launch_failure)
{
    if (!fake_lib()) SKIP("tests/libfake_cuda.so not built (no CUDA headers)");
    gp_bench_dev devs[4];
    char why[256] = "";
    ASSERT_EQ_INT(open_fake("launchfail", devs, why, sizeof why), 1);
    gp_bench_opts o;
    quick_opts(&o, 1ull << GP_BT_FP32);
    gp_bench_result r;
    ASSERT_EQ_INT(gp_bench_run(devs, 1, &o, &r), 0);
    const gp_bench_fig *f = &r.devs[0].figs[GP_BT_FP32];
    ASSERT(!f->valid);
    ASSERT(strstr(f->why, "CUDA_ERROR_LAUNCH_FAILED"));
    gp_bench_result_free(&r);
}

TEST(ptx_assembles)
{
    const char *ptxas = "/usr/local/cuda/bin/ptxas";
    if (access(ptxas, X_OK)) SKIP("no ptxas (CUDA toolkit) to assemble the PTX with");
    for (int m = 0; m < 2; m++) {
        char *ptx = gp_bench_cuda_ptx(m);
        ASSERT(ptx);
        char src[64], cmd[512];
        snprintf(src, sizeof src, "/tmp/gp_bench_ptx_%d_%d.ptx", (int)getpid(), m);
        FILE *f = fopen(src, "w");
        ASSERT(f);
        fputs(ptx, f);
        fclose(f);
        free(ptx);
        snprintf(cmd, sizeof cmd, "%s -arch=sm_90 %s -o /dev/null", ptxas, src);
        int rc = system(cmd);
        unlink(src);
        ASSERT_EQ_INT(rc, 0);
    }
}

TEST_MAIN(t_quantile, stat_compute, expect_int_matches_loop, keys_and_direction, compare_direction,
          cuda_nodevice, cuda_ok, cuda_chains, cuda_oom, cuda_launch_failure, ptx_assembles)
