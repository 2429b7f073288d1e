/* bench/bench.c: the benchmark tests' table, the statistics of a figure and
 * the repetition loop shared by every device back-end. */
#include "bench/bench.h"
#include "core/stats.h"
#include <gpuprof/common.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define KIB 1024LL
#define MIB (1024LL * 1024)

static const gp_bench_info infos[GP_BT__COUNT] = {
    {"h2d_pageable", "h2d_pageable_GBps", "GB/s", 1, 1, 0,
     "host->device copy from malloc'ed (pageable) memory; bytes / copy time from device events, "
     "over the size sweep"},
    {"h2d_pinned", "h2d_pinned_GBps", "GB/s", 1, 1, 1,
     "host->device copy from pinned (page-locked) memory; bytes / copy time from device events, "
     "over the size sweep"},
    {"d2h_pageable", "d2h_pageable_GBps", "GB/s", 1, 1, 0,
     "device->host copy into malloc'ed (pageable) memory; bytes / copy time from device events, "
     "over the size sweep"},
    {"d2h_pinned", "d2h_pinned_GBps", "GB/s", 1, 1, 1,
     "device->host copy into pinned memory; bytes / copy time from device events, over the size "
     "sweep"},
    {"d2d", "d2d_copy_GBps", "GB/s", 1, 0, 0,
     "device->device buffer copy (API copy); 2 x bytes (read + write) / copy time from device "
     "events"},
    {"global_read", "global_read_GBps", "GB/s", 1, 0, 1,
     "kernel reading a buffer (16 vector loads per work-item, coalesced, summed); bytes read / "
     "kernel time from device events; the sums are checked"},
    {"global_write", "global_write_GBps", "GB/s", 1, 0, 0,
     "kernel writing a buffer (coalesced vector stores of a pattern); bytes written / kernel time "
     "from device events; the buffer is read back and checked"},
    {"global_copy", "global_copy_GBps", "GB/s", 1, 0, 1,
     "kernel copying a buffer into another; 2 x bytes (read + write) / kernel time from device "
     "events; the destination is read back and checked"},
    {"fp32", "fp32_GFLOPS", "GFLOP/s", 1, 0, 1,
     "fp32 FMA chains x -> a x + b (2 flops per FMA), independent chains per work-item (OpenCL: "
     "the fastest of 16..256, or --chains; CUDA: 32) and enough work-items to fill the device; "
     "flops / kernel time from device events; results checked on the host"},
    {"fp64", "fp64_GFLOPS", "GFLOP/s", 1, 0, 0,
     "fp64 FMA chains as fp32 (where the device supports fp64)"},
    {"fp16", "fp16_GFLOPS", "GFLOP/s", 1, 0, 0,
     "fp16 FMA chains as fp32 (where the device supports fp16 arithmetic)"},
    {"int32", "int32_GIOPS", "GIOP/s", 1, 0, 0,
     "int32 multiply-add chains (2 operations each) as fp32; results checked exactly"},
    {"launch_latency", "launch_latency_us", "us", 0, 0, 1,
     "empty kernel (one work-item): host time from enqueue to completion seen by the host"},
    {"sync_latency", "sync_latency_us", "us", 0, 0, 0,
     "host time of a synchronisation call (clFinish / cuCtxSynchronize) with nothing pending"},
};

const gp_bench_info *gp_bench_info_of(gp_bench_test t)
{
    return (unsigned)t < GP_BT__COUNT ? &infos[t] : NULL;
}

int gp_bench_test_parse(const char *name)
{
    for (int i = 0; i < GP_BT__COUNT; i++)
        if (!strcmp(name, infos[i].name) || !strcmp(name, infos[i].key)) return i;
    return -1;
}

/* Two-sided 95 % Student t quantiles, df 1..30; beyond, the Cornish-Fisher
 * expansion around the normal quantile (error < 1e-4 for df > 30). */
double gp_bench_t975(size_t df)
{
    static const double t[31] = {NAN,   12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365,
                                 2.306, 2.262,  2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
                                 2.120, 2.110,  2.101, 2.093, 2.086, 2.080, 2.074, 2.069,
                                 2.064, 2.060,  2.056, 2.052, 2.048, 2.045, 2.042};
    if (df == 0) return NAN;
    if (df <= 30) return t[df];
    double z = 1.959964, v = (double)df;
    double z3 = z * z * z, z5 = z3 * z * z;
    return z + (z3 + z) / (4 * v) + (5 * z5 + 16 * z3 + 3 * z) / (96 * v * v);
}

void gp_bench_stat_compute(gp_bench_stat *st)
{
    st->min = st->median = st->mean = st->max = st->ci95 = st->ci_pct = NAN;
    if (!st->n) return;
    double *v = malloc(st->n * sizeof *v);
    if (!v) return;
    memcpy(v, st->samples, st->n * sizeof *v);
    gp_dstats ds;
    gp_stats_f64(v, st->n, &ds);
    free(v);
    st->min = ds.min;
    st->max = ds.max;
    st->median = ds.p50;
    st->mean = ds.mean;
    if (st->n >= 2) {
        st->ci95 = gp_bench_t975(st->n - 1) * ds.std / sqrt((double)st->n);
        st->ci_pct = st->mean != 0 ? 100.0 * st->ci95 / fabs(st->mean) : NAN;
    }
}

double gp_bench_expect_fp(size_t g, int64_t n, int nvec, double a, double b)
{
    double s = 0, p = b / (1.0 - a), an = pow(a, (double)n);
    for (int k = 0; k < nvec; k++)
        for (int lane = 0; lane < 16; lane++) {
            double x0 = (double)(g & 63) * 0.015625 + lane * 0.0625 + 0.5 * k;
            s += p + (x0 - p) * an;
        }
    return s;
}

uint32_t gp_bench_expect_int(size_t g, int64_t n, int nvec)
{
    /* x -> A x + B applied n times is x -> An x + Bn */
    uint32_t A = (uint32_t)GP_BENCH_CHAIN_IA, B = (uint32_t)GP_BENCH_CHAIN_IB;
    uint32_t An = 1, Bn = 0;
    for (int64_t k = n; k > 0; k >>= 1) {
        if (k & 1) { /* (An, Bn) then (A, B) */
            Bn = A * Bn + B;
            An = A * An;
        }
        B = A * B + B; /* (A, B) twice */
        A = A * A;
    }
    uint32_t r = 0;
    for (uint32_t k = 0; k < (uint32_t)nvec; k++)
        for (uint32_t lane = 0; lane < 16; lane++) r ^= An * ((uint32_t)g + lane + 7 * k) + Bn;
    return r;
}

const char *gp_bench_chains_how_name(int how)
{
    return how == GP_BENCH_CHAINS_FASTEST ? "fastest"
           : how == GP_BENCH_CHAINS_ASKED ? "--chains"
           : how == GP_BENCH_CHAINS_FIXED ? "fixed"
                                          : "none";
}

int gp_bench_chains_valid(int c)
{
    for (int v = GP_BENCH_CHAINS_MIN; v <= GP_BENCH_CHAINS_MAX; v *= 2)
        if (c == v) return 1;
    return 0;
}

void gp_bench_opts_default(gp_bench_opts *o)
{
    memset(o, 0, sizeof *o);
    o->target_ci_pct = 2.0;
    o->cap_s = 2.0;
    o->min_reps = 5;
    o->max_reps = 2000;
    o->sweep_max = 256 * MIB;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int64_t now_ns(int clk)
{
    struct timespec ts;
    clock_gettime(clk, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Value of one repetition in the test's unit: bytes/ns = GB/s, ops/ns =
 * Gop/s, ns/1000 = us. */
static double value_of(gp_bench_test t, double ns, double work)
{
    if (!infos[t].higher_better) return ns / 1000.0;
    return ns > 0 ? work / ns : NAN;
}

/* Repeats test t at `bytes` until the 95 % CI of the mean is within the
 * target (after min_reps) or the time cap / count cap is reached. One
 * warm-up repetition is not counted. */
static int repeat(gp_bench_dev *d, gp_bench_test t, int64_t bytes, const gp_bench_opts *o,
                  gp_bench_stat *st, double *work_out, gp_err *err)
{
    double ns, work;
    int rc = d->ops->sample(d->state, t, bytes, &ns, &work, err);
    if (rc) return rc;
    size_t cap = 64;
    st->samples = malloc(cap * sizeof *st->samples);
    if (!st->samples) return GP_ENOMEM;
    double t0 = now_s();
    for (;;) {
        if ((rc = d->ops->sample(d->state, t, bytes, &ns, &work, err))) return rc;
        double v = value_of(t, ns, work);
        if (!isfinite(v) || v <= 0)
            return gp_err_set(err, GP_EIO, "%s: a repetition gave %g (time %g ns)", infos[t].key, v,
                              ns);
        if (st->n == cap) {
            double *nv = realloc(st->samples, 2 * cap * sizeof *nv);
            if (!nv) return GP_ENOMEM;
            st->samples = nv;
            cap *= 2;
        }
        st->samples[st->n++] = v;
        *work_out = work;
        st->elapsed_s = now_s() - t0;
        if (st->n >= o->min_reps) {
            gp_bench_stat_compute(st);
            if (st->ci_pct <= o->target_ci_pct) {
                st->converged = 1;
                break;
            }
            if (st->elapsed_s >= o->cap_s || st->n >= o->max_reps) break;
        }
    }
    return 0;
}

/* Sizes of the host<->device sweep: 4 KiB x 4^k up to sweep_max (quick:
 * x 16^k), the largest always included. */
static size_t sweep_sizes(const gp_bench_opts *o, int64_t *sz, size_t max)
{
    size_t n = 0;
    int64_t step = o->quick ? 16 : 4;
    for (int64_t b = 4 * KIB; b < o->sweep_max && n + 1 < max; b *= step) sz[n++] = b;
    sz[n++] = o->sweep_max;
    return n;
}

static void set_peak(gp_bench_fig *f, const gp_bench_peaks *p)
{
    double v = NAN;
    int ok = 0;
    const char *src = p->compute_src;
    switch (f->test) {
    case GP_BT_READ:
    case GP_BT_WRITE:
    case GP_BT_COPY:
    case GP_BT_D2D:
        ok = p->mem_valid, v = p->mem_GBps, src = p->mem_src;
        break;
    case GP_BT_FP32:
        ok = p->fp32_valid, v = p->fp32_GFLOPS;
        break;
    case GP_BT_FP64:
        ok = p->fp64_valid, v = p->fp64_GFLOPS;
        break;
    case GP_BT_FP16:
        ok = p->fp16_valid, v = p->fp16_GFLOPS;
        break;
    case GP_BT_INT32:
        ok = p->int32_valid, v = p->int32_GIOPS;
        break;
    default:
        break;
    }
    f->peak_valid = ok && v > 0;
    if (f->peak_valid) {
        f->peak = v;
        snprintf(f->peak_src, sizeof f->peak_src, "%s", src);
    }
}

static void progress(const gp_bench_opts *o, const gp_bench_dev *d, gp_bench_test t, int64_t b)
{
    if (!o->progress) return;
    char buf[192];
    if (b > 0)
        snprintf(buf, sizeof buf, "%s %s %lld B", d->sel, infos[t].name, (long long)b);
    else
        snprintf(buf, sizeof buf, "%s %s", d->sel, infos[t].name);
    o->progress(buf, o->progress_arg);
}

/* Runs one test on one device into f (errors are recorded in f->why). */
static int run_test(gp_bench_dev *d, gp_bench_fig *f, const gp_bench_opts *o)
{
    gp_bench_test t = f->test;
    gp_err err = {0};
    int rc = 0, ok = 0;
    if (infos[t].sweep) {
        int64_t sz[32];
        size_t ns = sweep_sizes(o, sz, 32);
        f->sweep = calloc(ns, sizeof *f->sweep);
        if (!f->sweep) return GP_ENOMEM;
        int none = 0;
        if ((rc = d->ops->prepare(d->state, t, sz[ns - 1], &none, &err))) goto done;
        for (size_t i = 0; i < ns; i++) {
            progress(o, d, t, sz[i]);
            gp_bench_point *p = &f->sweep[i];
            p->bytes = sz[i];
            f->nsweep = i + 1;
            double work;
            if ((rc = repeat(d, t, sz[i], o, &p->st, &work, &err))) break;
        }
        int frc = d->ops->finish(d->state, t, &ok, rc ? NULL : &err);
        if (!rc) rc = frc;
        if (rc) goto done;
        /* the headline figure is the largest size's */
        gp_bench_point *last = &f->sweep[f->nsweep - 1];
        f->st = last->st;
        f->st.samples = malloc((f->st.n ? f->st.n : 1) * sizeof *f->st.samples);
        if (!f->st.samples) return GP_ENOMEM;
        if (f->st.n) memcpy(f->st.samples, last->st.samples, f->st.n * sizeof *f->st.samples);
        f->bytes = f->work = (double)last->bytes;
        double best = 0;
        for (size_t i = 0; i < f->nsweep; i++) best = fmax(best, f->sweep[i].st.mean);
        f->half_peak_bytes = -1;
        for (size_t i = 0; i < f->nsweep; i++)
            if (f->sweep[i].st.mean >= 0.5 * best) {
                f->half_peak_bytes = f->sweep[i].bytes;
                break;
            }
    } else {
        progress(o, d, t, 0);
        int chains = o->chains;
        if ((rc = d->ops->prepare(d->state, t, 0, &chains, &err))) goto done;
        f->chains = chains;
        if (chains)
            f->chains_how = d->chains_fixed ? GP_BENCH_CHAINS_FIXED
                            : o->chains     ? GP_BENCH_CHAINS_ASKED
                                            : GP_BENCH_CHAINS_FASTEST;
        rc = repeat(d, t, 0, o, &f->st, &f->work, &err);
        int frc = d->ops->finish(d->state, t, &ok, rc ? NULL : &err);
        if (!rc) rc = frc;
        if (rc) goto done;
        f->bytes = f->work;
    }
    if (!ok) {
        snprintf(f->why, sizeof f->why, "verification failed: %.130s", err.msg);
        return 0;
    }
    f->verified = 1;
    f->valid = 1;
    set_peak(f, &d->peaks);
    return 0;
done:
    if (rc == GP_ENOMEM) return rc;
    snprintf(f->why, sizeof f->why, "%.150s", err.msg[0] ? err.msg : gp_strerror(rc));
    return 0;
}

int gp_bench_run(gp_bench_dev *devs, size_t n, const gp_bench_opts *o, gp_bench_result *out)
{
    memset(out, 0, sizeof *out);
    gethostname(out->host, sizeof out->host - 1);
    snprintf(out->version, sizeof out->version, "%s", gp_version());
    out->quick = o->quick;
    out->target_ci_pct = o->target_ci_pct;
    out->cap_s = o->cap_s;
    out->start_wall_ns = now_ns(CLOCK_REALTIME);
    out->start_mono_ns = now_ns(CLOCK_MONOTONIC);
    out->devs = calloc(n ? n : 1, sizeof *out->devs);
    int rc = 0;
    if (!out->devs) rc = GP_ENOMEM;
    out->ndev = rc ? 0 : n;
    for (size_t i = 0; i < n; i++) {
        gp_bench_dev *d = &devs[i];
        if (!rc) {
            gp_bench_dev_result *r = &out->devs[i];
            memcpy(r->sel, d->sel, sizeof r->sel);
            memcpy(r->backend, d->backend, sizeof r->backend);
            memcpy(r->name, d->name, sizeof r->name);
            memcpy(r->driver, d->driver, sizeof r->driver);
            r->peaks = d->peaks;
            for (int t = 0; t < GP_BT__COUNT && !rc; t++) {
                gp_bench_fig *f = &r->figs[t];
                f->test = (gp_bench_test)t;
                f->half_peak_bytes = -1;
                f->peak = NAN;
                if (o->only)
                    f->selected = (o->only >> t) & 1;
                else
                    f->selected = o->quick ? infos[t].quick : 1;
                if (f->selected) rc = run_test(d, f, o);
            }
        }
        d->ops->close(d->state);
        d->state = NULL;
    }
    out->duration_ns = now_ns(CLOCK_MONOTONIC) - out->start_mono_ns;
    return rc;
}

static void stat_free(gp_bench_stat *s)
{
    free(s->samples);
    s->samples = NULL;
}

void gp_bench_result_free(gp_bench_result *r)
{
    for (size_t i = 0; i < r->ndev; i++)
        for (int t = 0; t < GP_BT__COUNT; t++) {
            gp_bench_fig *f = &r->devs[i].figs[t];
            stat_free(&f->st);
            for (size_t k = 0; k < f->nsweep; k++) stat_free(&f->sweep[k].st);
            free(f->sweep);
        }
    free(r->devs);
    memset(r, 0, sizeof *r);
}

#ifndef GP_HAVE_OPENCL
int gp_bench_ocl_open(gp_bench_dev *devs, size_t max, size_t *n, char *why, size_t whylen)
{
    (void)devs, (void)max, (void)n;
    snprintf(why, whylen, "OpenCL: not part of this build");
    return 0;
}
#endif

size_t gp_bench_open_devices(const char *sel, gp_bench_dev *devs, size_t max, char *why,
                             size_t whylen)
{
    gp_bench_dev all[16];
    size_t n = 0;
    char w1[160] = "", w2[160] = "";
    int all_sel = !sel || !strcmp(sel, "all");
    if (all_sel || !strncmp(sel, "cl", 2) || !strcmp(sel, "opencl"))
        gp_bench_ocl_open(all, 16, &n, w1, sizeof w1);
    if (all_sel || !strncmp(sel, "cuda", 4)) gp_bench_cuda_open(all, 16, &n, w2, sizeof w2);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        int take = all_sel || !strcmp(sel, all[i].sel) || !strcmp(sel, all[i].backend);
        if (take && k < max)
            devs[k++] = all[i];
        else
            all[i].ops->close(all[i].state);
    }
    if (!k) {
        if (n)
            snprintf(why, whylen, "no device matches '%s'", sel);
        else
            snprintf(why, whylen, "no device: %s%s%s", w1[0] ? w1 : "", w1[0] && w2[0] ? "; " : "",
                     w2);
    }
    return k;
}
