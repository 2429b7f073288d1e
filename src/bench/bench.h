/* bench/bench.h: built-in device benchmarks (`gpuprof bench`): the tests
 * (name, unit, method), the device back-ends (OpenCL, CUDA driver API), the
 * repetition rule (until the 95 % confidence interval of the mean is within
 * 2 % or a time cap) and the plain result structs the writers print. */
#ifndef GP_BENCH_BENCH_H
#define GP_BENCH_BENCH_H
#include "core/error.h"
#include <stddef.h>
#include <stdint.h>

typedef enum gp_bench_test {
    GP_BT_H2D_PAGEABLE = 0,
    GP_BT_H2D_PINNED,
    GP_BT_D2H_PAGEABLE,
    GP_BT_D2H_PINNED,
    GP_BT_D2D,
    GP_BT_READ,
    GP_BT_WRITE,
    GP_BT_COPY,
    GP_BT_FP32,
    GP_BT_FP64,
    GP_BT_FP16,
    GP_BT_INT32,
    GP_BT_LAUNCH,
    GP_BT_SYNC,
    GP_BT__COUNT
} gp_bench_test;

/* Static description of a test. */
typedef struct gp_bench_info {
    const char *name;  /* --only name: "h2d_pinned" */
    const char *key;   /* figure name with its unit: "h2d_pinned_GBps" */
    const char *unit;  /* printed unit: "GB/s" */
    int higher_better; /* 1 for bandwidth/throughput, 0 for latency */
    int sweep;         /* 1: measured over the host<->device size sweep */
    int quick;         /* 1: part of the --quick set */
    const char *method;
} gp_bench_info;

const gp_bench_info *gp_bench_info_of(gp_bench_test t);
/* Test of a --only name or a key ("fp32" or "fp32_GFLOPS"); -1 when unknown. */
int gp_bench_test_parse(const char *name);
/* 1 when a figure key (the part after "bench:", optionally "SEL/" first)
 * is higher-is-better (ends in GBps, GFLOPS or GIOPS), 0 for lower-is-better
 * (latencies, _us), -1 when it is not a bench figure. */
int gp_bench_key_higher_better(const char *key);

/* The compute kernels' chains (the same on every back-end): each
 * work-item g runs nvec vectors of 16 lanes, every lane an independent
 * chain (16 x nvec chains per work-item): vector k, lane l starts at
 * x0 + k / 2 with x0 = (g & 63) / 64 + l / 16 and steps n times through
 * x -> A x + B (fixed point 1); the int32 kernel starts vector k, lane l at
 * g + l + 7 k and steps x -> IA x + IB (mod 2^32). Outputs: the sum of the
 * 16 x nvec final values (float kinds) or their XOR (int32). The CUDA
 * kernels have nvec = 2 (32 chains per thread); the OpenCL ones are built
 * for nvec = 1, 2, 4, 8 and 16 (see GP_BENCH_CHAINS_*). */
#define GP_BENCH_CHAIN_A  0.9f
#define GP_BENCH_CHAIN_B  0.1f
#define GP_BENCH_CHAIN_IA 1664525
#define GP_BENCH_CHAIN_IB 1013904223
/* Independent chains per work-item a kernel variant may have: 16 x nvec,
 * nvec a power of two from 1 to 16. */
#define GP_BENCH_CHAINS_MIN 16
#define GP_BENCH_CHAINS_MAX 256
/* Expected outputs of work-item g after n steps (closed forms: the float
 * chain contracts, so rounding differences stay at the ulp level; the
 * integer one by composing the affine map, O(log n)). */
double gp_bench_expect_fp(size_t g, int64_t n, int nvec, double a, double b);
uint32_t gp_bench_expect_int(size_t g, int64_t n, int nvec);
/* How a compute figure's chain count came about. */
enum {
    GP_BENCH_CHAINS_FASTEST = 1, /* the fastest of the back-end's variants (OpenCL) */
    GP_BENCH_CHAINS_ASKED,       /* --chains */
    GP_BENCH_CHAINS_FIXED        /* the back-end has one variant (CUDA: 32) */
};
const char *gp_bench_chains_how_name(int how);
/* 1 when c is a valid --chains value (16, 32, 64, 128 or 256). */
int gp_bench_chains_valid(int c);

/* Statistics of one figure's samples (values in the test's unit). */
typedef struct gp_bench_stat {
    size_t n;
    double *samples; /* n values in the order measured (malloc'ed) */
    double min, median, mean, max;
    double ci95;      /* half-width of the 95 % confidence interval of the mean */
    double ci_pct;    /* 100 * ci95 / mean */
    int converged;    /* 1: ci_pct <= the target; 0: stopped by the time cap or the count cap */
    double elapsed_s; /* time spent repeating */
} gp_bench_stat;

/* Fills st's figures from st->samples[0..n) (Student t quantile for n-1
 * degrees of freedom; ci95 is NaN for n < 2). */
void gp_bench_stat_compute(gp_bench_stat *st);
/* Two-sided 95 % Student t quantile for df degrees of freedom (df >= 1). */
double gp_bench_t975(size_t df);

/* One size of a host<->device sweep. */
typedef struct gp_bench_point {
    int64_t bytes;
    gp_bench_stat st;
} gp_bench_point;

/* One test on one device. Unknown is never 0: valid says whether the test
 * ran; peak_valid whether a peak is known. */
typedef struct gp_bench_fig {
    gp_bench_test test;
    int selected;  /* asked for (by --only / --quick) */
    int valid;     /* ran and verified */
    char why[160]; /* when !valid: unsupported / error / verification failure */
    gp_bench_stat st;
    int64_t bytes; /* work size of one repetition (bytes moved, or 0) */
    double work;   /* bytes or operations of one repetition */
    int verified;  /* 1: output buffer checked and correct */
    int peak_valid;
    double peak;           /* in the test's unit */
    char peak_src[96];     /* how the peak was derived */
    gp_bench_point *sweep; /* sweep tests: one point per size (malloc'ed) */
    size_t nsweep;
    int64_t half_peak_bytes; /* smallest swept size reaching half the sweep's best mean (-1 none) */
    int chains;              /* compute tests: independent chains per work-item (0: not one) */
    int chains_how;          /* GP_BENCH_CHAINS_FASTEST / _ASKED / _FIXED (0: not a compute test) */
} gp_bench_fig;

/* Per-device peaks (valid flags: unknown is never 0). */
typedef struct gp_bench_peaks {
    int mem_valid;
    double mem_GBps;
    char mem_src[96];
    int fp32_valid, fp64_valid, int32_valid, fp16_valid;
    double fp32_GFLOPS, fp64_GFLOPS, int32_GIOPS, fp16_GFLOPS;
    char compute_src[96];
} gp_bench_peaks;

/* A device back-end's operations. One repetition: run the test once at
 * `bytes` (sweep tests; other tests choose their size at prepare) and give
 * its time in ns (device events where the API has them, host clock for the
 * latencies) and its work (bytes moved or operations). */
typedef struct gp_bench_ops {
    /* Allocates and initialises what the test needs. GP_EUNSUPPORTED (with
     * err saying why) when the device cannot run it. *chains: in, the
     * chains per work-item asked for by the compute tests (0: the back-end
     * chooses); out, the chains of the kernel prepared (0 for the other
     * tests). */
    int (*prepare)(void *dev, gp_bench_test t, int64_t bytes, int *chains, gp_err *err);
    int (*sample)(void *dev, gp_bench_test t, int64_t bytes, double *ns, double *work, gp_err *err);
    /* Checks the output of the last repetition (1 correct, 0 wrong with err
     * saying what) and frees the test's buffers. Returns 0 or GP_E*. */
    int (*finish)(void *dev, gp_bench_test t, int *ok, gp_err *err);
    void (*close)(void *dev);
} gp_bench_ops;

typedef struct gp_bench_dev {
    char sel[16];     /* "cl0", "cuda0" */
    char backend[16]; /* "opencl", "cuda" */
    char name[128];
    char driver[96];
    int chains_fixed; /* compute kernels with one chain count (CUDA: 32); 0: chosen per test */
    gp_bench_peaks peaks;
    const gp_bench_ops *ops;
    void *state;
} gp_bench_dev;

/* Opens every OpenCL / CUDA device into devs[*n..max), advancing *n.
 * Returns 0 (also when there is none: *why says so) or a GP_E* code.
 * The CUDA back-end loads libcuda with dlopen (GPUPROF_CUDA_LIB names
 * another library, for tests). */
int gp_bench_ocl_open(gp_bench_dev *devs, size_t max, size_t *n, char *why, size_t whylen);
int gp_bench_cuda_open(gp_bench_dev *devs, size_t max, size_t *n, char *why, size_t whylen);

typedef struct gp_bench_opts {
    unsigned long long only; /* bit per test; 0 = all (or the quick set) */
    int quick;
    double target_ci_pct; /* default 2 */
    double cap_s;         /* time cap per figure (sweep: per size); default 2 (quick 0.5) */
    size_t min_reps;      /* default 5 */
    size_t max_reps;      /* default 2000 */
    int64_t sweep_max;    /* largest swept size (default 256 MiB; tests may lower it) */
    int chains;           /* compute tests: chains per work-item (0: the back-end's choice) */
    void (*progress)(const char *what, void *arg); /* may be NULL */
    void *progress_arg;
} gp_bench_opts;

void gp_bench_opts_default(gp_bench_opts *o);

typedef struct gp_bench_dev_result {
    char sel[16], backend[16], name[128], driver[96];
    gp_bench_peaks peaks;
    gp_bench_fig figs[GP_BT__COUNT];
} gp_bench_dev_result;

typedef struct gp_bench_result {
    char host[128];
    char version[32];
    int quick;
    int64_t start_wall_ns, start_mono_ns, duration_ns;
    double target_ci_pct, cap_s;
    gp_bench_dev_result *devs;
    size_t ndev;
    char none_why[256]; /* when ndev == 0: why no device could be used */
} gp_bench_result;

/* Runs the selected tests on devs[0..n) (which it closes). Returns 0 (a
 * test that fails is recorded in its figure's why) or GP_ENOMEM. Free with
 * gp_bench_result_free. */
int gp_bench_run(gp_bench_dev *devs, size_t n, const gp_bench_opts *o, gp_bench_result *out);
void gp_bench_result_free(gp_bench_result *r);

/* Opens the devices matching sel ("all", a selector like "cl0"/"cuda0", or
 * a backend name "opencl"/"cuda"). Returns the count (0 with why filled). */
size_t gp_bench_open_devices(const char *sel, gp_bench_dev *devs, size_t max, char *why,
                             size_t whylen);

/* ---- stored runs (bench_store.c) ---- */

/* Name of a figure's counter series in the store: "bench:KEY" when the run
 * measured one device, "bench:SEL/KEY" otherwise. */
void gp_bench_series_name(char *buf, size_t n, const gp_bench_result *r, size_t dev,
                          gp_bench_test t);
/* Writes r as a run of the store at path (runs row, one process "bench",
 * the devices with their drivers, one counter track per device and every sample as a counter
 * value named by gp_bench_series_name; sweep points as "...@BYTES").
 * Returns the run id (> 0) or a GP_E* code with err set. */
int64_t gp_bench_store_save(const char *path, const gp_bench_result *r, const char *command,
                            gp_err *err);

/* A stored figure: the mean of one series in earlier runs. */
typedef struct gp_bench_baseline {
    int valid;
    double mean; /* mean over the runs found */
    size_t runs; /* runs it comes from */
    int64_t last_run;
} gp_bench_baseline;

/* Looks up the baseline of series `name` in the store at path: the mean of
 * its per-run means over the latest `last` runs with id < before (0: all).
 * A store without the series gives valid = 0. 0 or GP_E* with err set. */
int gp_bench_store_baseline(const char *path, const char *name, int64_t before, size_t last,
                            gp_bench_baseline *out, gp_err *err);

/* ---- health (bench_health.c) ---- */

typedef enum gp_bench_flag {
    GP_BF_OK = 0,
    GP_BF_LOW_PEAK,     /* below min_peak_share of its peak */
    GP_BF_LOW_BASELINE, /* worse than its baseline by more than the allowed share */
    GP_BF_FAILED,       /* the test did not run or its output was wrong */
    GP_BF_NO_REFERENCE, /* neither a peak nor a baseline: not judged */
} gp_bench_flag;

const char *gp_bench_flag_name(gp_bench_flag f);

typedef struct gp_bench_health_opts {
    double min_peak_share;     /* flag below this share of the peak (default 0.6) */
    double min_baseline_share; /* flag below this share of the baseline (default 0.8;
                                  latencies: above 1/share of it) */
    const char *store;         /* baseline store (NULL: no baseline) */
    size_t baseline_runs;      /* latest runs in the baseline (default 5) */
} gp_bench_health_opts;

void gp_bench_health_opts_default(gp_bench_health_opts *o);

typedef struct gp_bench_health_row {
    size_t dev;
    gp_bench_test test;
    gp_bench_flag flag;
    double value;           /* the run's mean */
    double peak_share;      /* value / peak (NaN: peak unknown) */
    gp_bench_baseline base; /* baseline from the store */
    double base_share;      /* value / baseline mean (NaN without one) */
} gp_bench_health_row;

typedef struct gp_bench_health {
    gp_bench_health_row *rows;
    size_t n;
    size_t flagged;
    gp_bench_health_opts opts;
} gp_bench_health;

/* Judges every selected figure of r against its peak and its baseline.
 * 0 or GP_E* with err set; free with gp_bench_health_free. */
int gp_bench_health_check(const gp_bench_result *r, const gp_bench_health_opts *o,
                          gp_bench_health *out, gp_err *err);
void gp_bench_health_free(gp_bench_health *h);

#endif
