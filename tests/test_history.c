/* tests/test_history.c: `gpuprof history`: per-run figures of stored runs and
 * step detection, on stores written with the store's writer API (one op
 * slowing down from run 4 on; a flat history), plus the command's output. */
#include "analysis/history.h"
#include "analysis/mannwhitney.h"
#include "core/clock.h"
#include "store/store.h"
#include "test.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void tmp_path(char *buf, size_t n, const char *tag)
{
    snprintf(buf, n, "/tmp/gp_test_history_%s_%d.db", tag, (int)getpid());
    gp_test_rm_db(buf);
}

/* Deterministic noise in [-1, 1). */
static double noise(uint64_t *s)
{
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(*s >> 11) / (double)(1ULL << 52) - 1.0;
}

/* Writes nruns runs: kernel "gemm" (100 us), kernel "flat_kernel" (50 us)
 * and API call "clEnqueueNDRangeKernel" (2 us), n instances each with +-3 %
 * noise; from run step_run on (1-based; 0 = never) gemm takes slow_pct more. */
static int write_store(const char *path, int nruns, int step_run, double slow_pct, int n)
{
    uint64_t seed = 12345;
    for (int r = 1; r <= nruns; r++) {
        gp_store *s;
        gp_err err = {0};
        if (gp_store_open(path, &s, &err)) return -1;
        gp_store_run_info ri = {"prog", "host", gp_clock_wall_ns(), gp_clock_mono_ns(), 1};
        int64_t run = gp_store_run_begin(s, &ri, &err);
        gp_store_close(s);
        if (run <= 0) return -1;
        gp_store_writer_opts o = {50, 0, "test"};
        gp_store_writer *w = gp_store_writer_start(path, run, &o, &err);
        if (!w) return -1;
        uint32_t th = gp_store_writer_track(w, GP_STORE_TRACK_THREAD, 100, GP_NONE, NULL);
        uint32_t q = gp_store_writer_track(w, GP_STORE_TRACK_QUEUE, 7, 0, "queue 7");
        uint32_t cat = gp_store_writer_str(w, "runtime");
        uint32_t launch = gp_store_writer_str(w, "clEnqueueNDRangeKernel");
        uint32_t gemm = gp_store_writer_str(w, "gemm");
        uint32_t flat = gp_store_writer_str(w, "flat_kernel");
        int64_t t = 1000000;
        double f = step_run && r >= step_run ? 1 + slow_pct / 100 : 1;
        for (int i = 0; i < n; i++) {
            gp_store_ev ev[4];
            gp_store_ev_init(&ev[0], GP_ST_API);
            ev[0].track = th;
            ev[0].cat = cat;
            ev[0].name = launch;
            ev[0].ts = t;
            ev[0].dur = (int64_t)(2000 * (1 + 0.03 * noise(&seed)));
            for (int k = 1; k <= 2; k++) {
                gp_store_ev_init(&ev[k], GP_ST_KERNEL);
                ev[k].track = q;
                ev[k].device = 0;
                ev[k].stream = 7;
            }
            ev[1].name = gemm;
            ev[1].ts = t + 3000;
            ev[1].dur = (int64_t)(100000 * f * (1 + 0.03 * noise(&seed)));
            ev[2].name = flat;
            ev[2].ts = t + 150000;
            ev[2].dur = (int64_t)(50000 * (1 + 0.03 * noise(&seed)));
            gp_store_writer_put(w, ev, 3);
            t += 300000;
        }
        if (gp_store_writer_stop(w)) return -1;
        if (gp_store_open(path, &s, &err)) return -1;
        int rc = gp_store_run_end(s, run, 0, t, 0, &err);
        gp_store_close(s);
        if (rc) return -1;
    }
    return 0;
}

/* Loads every run of the store into a finished history. */
static gp_history *history_of(const char *path, const gp_history_opts *o)
{
    gp_store_run_row *rows;
    size_t n;
    gp_err err = {0};
    if (gp_store_runs(path, &rows, &n, &err)) return NULL;
    gp_history *h = gp_history_create(o);
    for (size_t i = 0; h && i < n; i++) {
        gp_trace *t;
        if (gp_store_load(path, rows[i].id, &t, &err) || gp_history_add_run(h, t)) {
            gp_history_destroy(h);
            h = NULL;
            break;
        }
        gp_trace_destroy(t);
    }
    gp_store_runs_free(rows, n);
    if (h && gp_history_finish(h)) {
        gp_history_destroy(h);
        h = NULL;
    }
    return h;
}

static const gp_hist_op *op_named(const gp_history *h, const char *name)
{
    size_t n;
    const gp_hist_op *ops = gp_history_ops(h, &n);
    for (size_t i = 0; i < n; i++)
        if (!strcmp(gp_history_name(h, ops[i].name), name)) return &ops[i];
    return NULL;
}

/* 12 runs, gemm 20 % slower from run 7 on: 6 runs against 6 (the per-run
 * means are tested: 6 against 6 separated gives p = 2/924 x 11 splits). */
TEST(history_step_at_run7)
{
    char path[256];
    tmp_path(path, sizeof path, "step");
    ASSERT_EQ_INT(write_store(path, 12, 7, 20, 60), 0);
    gp_history_opts o;
    gp_history_opts_default(&o);
    gp_history *h = history_of(path, &o);
    ASSERT(h != NULL);
    ASSERT_EQ_INT(gp_history_runs(h), 12);
    const gp_hist_op *g = op_named(h, "gemm"), *f = op_named(h, "flat_kernel");
    const gp_hist_op *api = op_named(h, "clEnqueueNDRangeKernel");
    ASSERT(g && f && api);
    ASSERT_EQ_INT(g->group, GP_G_KERNEL);
    ASSERT_EQ_INT(api->group, GP_G_RUNTIME);
    ASSERT_EQ_INT(g->runs_present, 12);
    for (int r = 0; r < 12; r++) {
        ASSERT_EQ_INT(g->pts[r].count, 60);
        double want = r >= 6 ? 120000 : 100000;
        ASSERT_NEAR(g->pts[r].mean_ns, want, want * 0.01);
        ASSERT(g->pts[r].p50_ns <= g->pts[r].p95_ns);
    }
    ASSERT_EQ_INT(g->nsteps, 1);
    ASSERT_EQ_INT(g->steps[0].at, 6); /* the 7th run */
    ASSERT_NEAR(g->steps[0].change_pct, 20, 1.5);
    ASSERT_NEAR(g->steps[0].p, 2.0 / 924 * 11, 1e-9);
    ASSERT(g->steps[0].effect < 0.5);
    ASSERT_EQ_INT(f->nsteps, 0);
    ASSERT_EQ_INT(api->nsteps, 0);
    /* the listing puts the op with a step first */
    size_t n;
    const gp_hist_op *ops = gp_history_ops(h, &n);
    ASSERT_EQ_INT(n, 3);
    ASSERT_EQ_STR(gp_history_name(h, ops[0].name), "gemm");
    gp_history_destroy(h);
    gp_test_rm_db(path);
}

TEST(history_flat_no_step)
{
    char path[256];
    tmp_path(path, sizeof path, "flat");
    ASSERT_EQ_INT(write_store(path, 6, 0, 0, 60), 0);
    gp_history_opts o;
    gp_history_opts_default(&o);
    gp_history *h = history_of(path, &o);
    ASSERT(h != NULL);
    size_t n;
    const gp_hist_op *ops = gp_history_ops(h, &n);
    ASSERT_EQ_INT(n, 3);
    for (size_t i = 0; i < n; i++) {
        ASSERT_EQ_INT(ops[i].nsteps, 0);
        ASSERT(ops[i].spread_pct < 5);
    }
    gp_history_destroy(h);
    gp_test_rm_db(path);
}

/* Fills runs of k instances around mean m[r] (+-2 %). */
static void synth(int64_t *buf, const int64_t **runs, size_t *cnt, const double *m, size_t nr,
                  size_t k)
{
    uint64_t seed = 99;
    for (size_t r = 0; r < nr; r++) {
        runs[r] = buf + r * k;
        cnt[r] = k;
        for (size_t i = 0; i < k; i++) buf[r * k + i] = (int64_t)(m[r] * (1 + 0.02 * noise(&seed)));
        /* ascending, as the contract asks */
        for (size_t i = 1; i < k; i++)
            for (size_t j = i; j > 0 && buf[r * k + j - 1] > buf[r * k + j]; j--) {
                int64_t t = buf[r * k + j];
                buf[r * k + j] = buf[r * k + j - 1];
                buf[r * k + j - 1] = t;
            }
    }
}

TEST(history_steps_rules)
{
    gp_history_opts o;
    gp_history_opts_default(&o);
    static int64_t buf[30 * 40];
    const int64_t *runs[30];
    size_t cnt[30];
    gp_hist_step *st;
    size_t ns;
    /* two steps: up at run index 10, back down at 20 */
    double m2[30];
    for (int r = 0; r < 30; r++) m2[r] = r >= 10 && r < 20 ? 1300 : 1000;
    synth(buf, runs, cnt, m2, 30, 40);
    ASSERT_EQ_INT(gp_history_steps(runs, cnt, 30, &o, &st, &ns), 0);
    ASSERT_EQ_INT(ns, 2);
    ASSERT_EQ_INT(st[0].at, 10);
    ASSERT_EQ_INT(st[1].at, 20);
    ASSERT(st[0].change_pct > 25 && st[1].change_pct < -20);
    free(st);
    /* a 2 % shift is below the threshold */
    double small[12] = {1000, 1000, 1000, 1000, 1000, 1000, 1020, 1020, 1020, 1020, 1020, 1020};
    synth(buf, runs, cnt, small, 12, 40);
    ASSERT_EQ_INT(gp_history_steps(runs, cnt, 12, &o, &st, &ns), 0);
    ASSERT_EQ_INT(ns, 0);
    free(st);
    /* the test is on per-run figures: 3 runs against 3 can never be
     * significant (smallest p 0.1 before the correction), however many
     * instances each run has */
    double big[6] = {1000, 1000, 1000, 2000, 2000, 2000};
    synth(buf, runs, cnt, big, 6, 40);
    ASSERT_EQ_INT(gp_history_steps(runs, cnt, 6, &o, &st, &ns), 0);
    ASSERT_EQ_INT(ns, 0);
    free(st);
    /* identical runs on a loaded machine: one run whose every instance is
     * 30 % slower is run-to-run variance, not a step (pooling its 40
     * instances against the others' would give p ~ 1e-20) */
    double loaded[12] = {1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1300};
    synth(buf, runs, cnt, loaded, 12, 40);
    ASSERT_EQ_INT(gp_history_steps(runs, cnt, 12, &o, &st, &ns), 0);
    ASSERT_EQ_INT(ns, 0);
    free(st);
    double loaded2[12] = {1000, 1000, 1000, 1000, 1000, 1300, 1000, 1000, 1000, 1000, 1000, 1000};
    synth(buf, runs, cnt, loaded2, 12, 40);
    ASSERT_EQ_INT(gp_history_steps(runs, cnt, 12, &o, &st, &ns), 0);
    ASSERT_EQ_INT(ns, 0);
    free(st);
    /* absent runs are skipped: the step lands on the next run present */
    double big16[16];
    for (int r = 0; r < 16; r++) big16[r] = r >= 8 ? 2000 : 1000;
    synth(buf, runs, cnt, big16, 16, 40);
    cnt[8] = 0;
    ASSERT_EQ_INT(gp_history_steps(runs, cnt, 16, &o, &st, &ns), 0);
    ASSERT_EQ_INT(ns, 1);
    ASSERT_EQ_INT(st[0].at, 9);
    free(st);
}

/* Per-run mean of run r. */
static double run_mean(const int64_t *const *runs, const size_t *cnt, size_t r)
{
    double s = 0;
    for (size_t i = 0; i < cnt[r]; i++) s += (double)runs[r][i];
    return s / (double)cnt[r];
}

/* Every step reported passes the rule between its neighbouring steps, where
 * it is described: random histories (steps of random size at random runs,
 * run-level noise), each step's figures recomputed here from the per-run
 * means of [previous step, next step). */
TEST(history_steps_pass_between_neighbours)
{
    gp_history_opts o;
    gp_history_opts_default(&o);
    static int64_t buf[40 * 8];
    const int64_t *runs[40];
    size_t cnt[40];
    uint64_t seed = 7;
    size_t total_steps = 0;
    for (int trial = 0; trial < 400; trial++) {
        size_t nr = 8 + (size_t)((noise(&seed) + 1) * 16); /* 8..39 runs */
        double m[40], level = 1000;
        for (size_t r = 0; r < nr; r++) {
            if (noise(&seed) > 0.8) level *= 1 + 0.3 * noise(&seed); /* a step */
            m[r] = level * (1 + 0.04 * noise(&seed));                /* run-level noise */
        }
        synth(buf, runs, cnt, m, nr, 8);
        gp_hist_step *st;
        size_t ns;
        ASSERT_EQ_INT(gp_history_steps(runs, cnt, nr, &o, &st, &ns), 0);
        for (size_t i = 0; i < ns; i++) {
            size_t a = i ? st[i - 1].at : 0, b = i + 1 < ns ? st[i + 1].at : nr, k = st[i].at;
            ASSERT(a < k && k < b);
            ASSERT_EQ_INT(st[i].seg_begin, a);
            ASSERT_EQ_INT(st[i].seg_end, b);
            int64_t x[40], y[40];
            double sx = 0, sy = 0;
            for (size_t r = a; r < k; r++) {
                sx += run_mean(runs, cnt, r);
                x[r - a] = llround(run_mean(runs, cnt, r) * 1024);
            }
            for (size_t r = k; r < b; r++) {
                sy += run_mean(runs, cnt, r);
                y[r - k] = llround(run_mean(runs, cnt, r) * 1024);
            }
            /* sort for the test */
            for (size_t p = 1; p < k - a; p++)
                for (size_t q = p; q > 0 && x[q - 1] > x[q]; q--) {
                    int64_t t = x[q];
                    x[q] = x[q - 1];
                    x[q - 1] = t;
                }
            for (size_t p = 1; p < b - k; p++)
                for (size_t q = p; q > 0 && y[q - 1] > y[q]; q--) {
                    int64_t t = y[q];
                    y[q] = y[q - 1];
                    y[q - 1] = t;
                }
            gp_mwu mw;
            gp_mwu_test_sorted_i64(x, k - a, y, b - k, GP_MWU_AUTO, &mw);
            double p = fmin(1, mw.p * (double)(b - a - 1));
            double before = sx / (double)(k - a), after = sy / (double)(b - k);
            double pct = 100 * (after - before) / before;
            ASSERT(p < o.alpha);
            ASSERT_NEAR(st[i].p, p, 1e-12);
            ASSERT(fabs(pct) >= o.threshold_pct);
            ASSERT(after > before ? mw.effect < 0.5 : mw.effect > 0.5);
            total_steps++;
        }
        free(st);
    }
    ASSERT(total_steps > 50); /* the property was exercised */
}

/* Runs the gpuprof binary with args; returns its exit status and output. */
static int run_cli(const char *args, char *out, size_t n)
{
    const char *bin = getenv("GPUPROF_BIN");
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s %s 2>&1", bin, args);
    FILE *p = popen(cmd, "r");
    if (!p) return -1;
    size_t k = fread(out, 1, n - 1, p);
    out[k] = 0;
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

TEST(history_cli)
{
    if (!getenv("GPUPROF_BIN")) SKIP("GPUPROF_BIN not set (run through ctest)");
    char path[256], args[512];
    static char out[1 << 16];
    tmp_path(path, sizeof path, "cli");
    ASSERT_EQ_INT(write_store(path, 12, 7, 20, 60), 0);
    snprintf(args, sizeof args, "history --op gemm --json %s", path);
    ASSERT_EQ_INT(run_cli(args, out, sizeof out), 0);
    ASSERT_CONTAINS(out, "\"name\":\"gemm\"");
    ASSERT_CONTAINS(out, "\"steps\":[{\"run\":7,\"run_index\":6,");
    ASSERT_CONTAINS(out, "\"runs_present\":12");
    ASSERT_CONTAINS(out, "\"test\":\"mann-whitney-u-on-run-means\"");
    snprintf(args, sizeof args, "history --op gemm %s", path);
    ASSERT_EQ_INT(run_cli(args, out, sizeof out), 0);
    ASSERT_CONTAINS(out, "<- step +1");
    ASSERT_CONTAINS(out, "from run 7:");
    ASSERT_CONTAINS(out, "p 0.0238");
    snprintf(args, sizeof args, "history %s", path);
    ASSERT_EQ_INT(run_cli(args, out, sizeof out), 0);
    ASSERT_CONTAINS(out, "1 with a step");
    ASSERT_CONTAINS(out, "run 7 (+19.9%");
    snprintf(args, sizeof args, "history --category runtime --json %s", path);
    ASSERT_EQ_INT(run_cli(args, out, sizeof out), 0);
    ASSERT_CONTAINS(out, "\"operation_count\":1");
    ASSERT_CONTAINS(out, "\"steps\":[]");
    snprintf(args, sizeof args, "history --op no_such_kernel %s", path);
    ASSERT_EQ_INT(run_cli(args, out, sizeof out), 2);
    ASSERT_CONTAINS(out, "no operation 'no_such_kernel'");
    snprintf(args, sizeof args, "history --last 3 --op gemm --json %s", path);
    ASSERT_EQ_INT(run_cli(args, out, sizeof out), 0);
    ASSERT_CONTAINS(out, "\"run_ids\":[10,11,12]");
    ASSERT_CONTAINS(out, "\"steps\":[]"); /* runs 10-12 are all slow */
    gp_test_rm_db(path);
    tmp_path(path, sizeof path, "cliflat");
    ASSERT_EQ_INT(write_store(path, 6, 0, 0, 60), 0);
    snprintf(args, sizeof args, "history --op gemm --json %s", path);
    ASSERT_EQ_INT(run_cli(args, out, sizeof out), 0);
    ASSERT_CONTAINS(out, "\"steps\":[]");
    snprintf(args, sizeof args, "history %s /tmp/gp_no_such_store_%d.db", path, (int)getpid());
    ASSERT_EQ_INT(run_cli(args, out, sizeof out), 2);
    gp_test_rm_db(path);
    ASSERT_EQ_INT(run_cli("history /nonexistent/x.db", out, sizeof out), 2);
    /* 2 runs against 2, 50 % slower: a change too short to be a step, and
     * the text does not claim the mean did not change */
    tmp_path(path, sizeof path, "clishort");
    ASSERT_EQ_INT(write_store(path, 4, 3, 50, 20), 0);
    snprintf(args, sizeof args, "history --op gemm %s", path);
    ASSERT_EQ_INT(run_cli(args, out, sizeof out), 0);
    ASSERT_CONTAINS(out, "Steps (0): none passed the test");
    ASSERT(!strstr(out, "did not change"));
    gp_test_rm_db(path);
}

TEST_MAIN(history_step_at_run7, history_flat_no_step, history_steps_rules,
          history_steps_pass_between_neighbours, history_cli)
