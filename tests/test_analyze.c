/* tests/test_analyze.c: the analyze family (HTA-style breakdowns) on small
 * hand-built traces whose figures are worked out in the comments. */
#include "analysis/bandwidth.h"
#include "analysis/hta_prep.h"
#include "analysis/idle.h"
#include "analysis/kernel_breakdown.h"
#include "analysis/launch.h"
#include "analysis/queue.h"
#include "analysis/steps.h"
#include "analysis/straggler.h"
#include "analysis/temporal.h"
#include "analysis/timeline_stats.h"
#include "core/stats.h"
#include "test.h"
#include "trace/import.h"
#include <stdlib.h>
#include <string.h>

/* Times in us. Two ProfilerSteps (the second starts at 100). Stream 7:
 * A gemm [10,20] (launch 1+2), B gemm [25,30] (launch 4+60: a runtime
 * outlier), C relu [90,91] (launch 80+2: short kernel, host wait), a memcpy
 * [150,155] (launched 40+3: delay 107 > 100), D gemm [160,170] launched at
 * 150, after the last step start. Stream 8: nccl [15,35] (launch 5+1). */
static const char *trace_json =
    "{\"traceEvents\":["
    "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#1\",\"pid\":1,\"tid\":1,"
    "\"ts\":0,\"dur\":100},"
    "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#2\",\"pid\":1,\"tid\":1,"
    "\"ts\":100,\"dur\":100},"
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,"
    "\"ts\":1,\"dur\":2,\"args\":{\"correlation\":1}},"
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,"
    "\"ts\":4,\"dur\":60,\"args\":{\"correlation\":2}},"
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,"
    "\"ts\":5,\"dur\":1,\"args\":{\"correlation\":4}},"
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaMemcpyAsync\",\"pid\":1,\"tid\":1,"
    "\"ts\":40,\"dur\":3,\"args\":{\"correlation\":6}},"
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,"
    "\"ts\":80,\"dur\":2,\"args\":{\"correlation\":3}},"
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,"
    "\"ts\":150,\"dur\":2,\"args\":{\"correlation\":5}},"
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"gemm\",\"pid\":0,\"tid\":7,\"ts\":10,\"dur\":10,"
    "\"args\":{\"stream\":7,\"correlation\":1}},"
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"gemm\",\"pid\":0,\"tid\":7,\"ts\":25,\"dur\":5,"
    "\"args\":{\"stream\":7,\"correlation\":2}},"
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"relu\",\"pid\":0,\"tid\":7,\"ts\":90,\"dur\":1,"
    "\"args\":{\"stream\":7,\"correlation\":3}},"
    "{\"ph\":\"X\",\"cat\":\"gpu_memcpy\",\"name\":\"Memcpy HtoD (Pageable -> Device)\","
    "\"pid\":0,\"tid\":7,\"ts\":150,\"dur\":5,\"args\":{\"stream\":7,\"correlation\":6}},"
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"gemm\",\"pid\":0,\"tid\":7,\"ts\":160,\"dur\":10,"
    "\"args\":{\"stream\":7,\"correlation\":5}},"
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"ncclKernel_AllReduce\",\"pid\":0,\"tid\":8,"
    "\"ts\":15,\"dur\":20,\"args\":{\"stream\":8,\"correlation\":4}}"
    "]}";

static gp_trace *load(const char *json)
{
    gp_trace *t = NULL;
    gp_err err = {0};
    int rc = gp_import_json_mem(json, strlen(json), "mem.json", &t, &err);
    if (rc) fprintf(stderr, "%s\n", err.msg);
    return rc ? NULL : t;
}

static void view(gp_trace *t, int compat, gp_hview *v)
{
    int rank = 0;
    gp_hta_opts o = {compat};
    gp_err err = {0};
    if (gp_hta_prepare(&t, &rank, 1, &o, v, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        abort();
    }
}

/* HTA's step filter joins GPU events to the host events before the last
 * ProfilerStep on correlation with multiplicity: a kernel whose id two
 * launches carry appears twice, in place; one launched after the last step
 * starts, or by no host event, is dropped. The duplicated kernel comes after
 * others, so the in-place compaction has begun when it is met. */
TEST(step_filter_multiplicity)
{
    static const char json[] =
        "{\"traceEvents\":["
        "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#1\",\"pid\":1,\"tid\":1,"
        "\"ts\":0,\"dur\":90},"
        "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#2\",\"pid\":1,\"tid\":1,"
        "\"ts\":100,\"dur\":90},"
        "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,"
        "\"ts\":10,\"dur\":2,\"args\":{\"correlation\":1}},"
        "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,"
        "\"ts\":20,\"dur\":2,\"args\":{\"correlation\":1}},"
        "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,"
        "\"ts\":30,\"dur\":2,\"args\":{\"correlation\":2}},"
        "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,"
        "\"ts\":150,\"dur\":2,\"args\":{\"correlation\":3}},"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k2\",\"pid\":0,\"tid\":7,\"ts\":40,\"dur\":5,"
        "\"args\":{\"stream\":7,\"correlation\":2}},"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k9\",\"pid\":0,\"tid\":7,\"ts\":46,\"dur\":5,"
        "\"args\":{\"stream\":7,\"correlation\":9}},"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k1\",\"pid\":0,\"tid\":7,\"ts\":60,\"dur\":5,"
        "\"args\":{\"stream\":7,\"correlation\":1}},"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k3\",\"pid\":0,\"tid\":7,\"ts\":160,\"dur\":5,"
        "\"args\":{\"stream\":7,\"correlation\":3}},"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k2b\",\"pid\":0,\"tid\":7,\"ts\":170,\"dur\":"
        "5,"
        "\"args\":{\"stream\":7,\"correlation\":2}}"
        "]}";
    gp_trace *t = load(json);
    ASSERT(t);
    gp_hview v;
    view(t, 1, &v);
    ASSERT_EQ_INT(v.step_filtered, 1);
    int k1 = 0, k2 = 0, k2b = 0, other_gpu = 0, cpu = 0, step1 = 0;
    for (size_t i = 0; i < v.n; i++) {
        const gp_hev *e = &v.ev[i];
        if (i) ASSERT(v.ev[i - 1].slice <= e->slice); /* order kept */
        const char *nm = gp_trace_s(t, gp_hev_name(&v, e));
        if (e->stream == -1) {
            cpu++;
            ASSERT(e->ts < 100000); /* nothing from the last step on */
            step1 += !strcmp(nm, "ProfilerStep#1");
        } else if (!strcmp(nm, "k1"))
            k1++;
        else if (!strcmp(nm, "k2"))
            k2++;
        else if (!strcmp(nm, "k2b"))
            k2b++;
        else
            other_gpu++;
    }
    ASSERT_EQ_INT(cpu, 4); /* step 1 and the three launches before step 2 */
    ASSERT_EQ_INT(step1, 1);
    ASSERT_EQ_INT(k1, 2);
    ASSERT_EQ_INT(k2, 1);
    ASSERT_EQ_INT(k2b, 1);       /* its launch (id 2) is before the last step */
    ASSERT_EQ_INT(other_gpu, 0); /* k3: launched in the last step; k9: no launch */
    ASSERT_EQ_INT(v.n, 8);
    gp_hview_free(&v);
    gp_trace_destroy(t);
}

TEST(kernel_type_names)
{
    ASSERT_EQ_INT(gp_ktype_of_name("ncclKernel_AllReduce_RING_LL_Sum_float"), GP_KT_COMMUNICATION);
    ASSERT_EQ_INT(gp_ktype_of_name("void foo<ncclKernel>"), GP_KT_COMMUNICATION);
    ASSERT_EQ_INT(gp_ktype_of_name("Memcpy DtoD (Device -> Device)"), GP_KT_MEMORY);
    ASSERT_EQ_INT(gp_ktype_of_name("Memset (Device)"), GP_KT_MEMORY);
    ASSERT_EQ_INT(gp_ktype_of_name("Context Sync"), GP_KT_OTHER);
    ASSERT_EQ_INT(gp_ktype_of_name("Stream Wait Event"), GP_KT_OTHER);
    ASSERT_EQ_INT(gp_ktype_of_name("cudaLaunchKernelExC"), GP_KT_OTHER);
    ASSERT_EQ_INT(gp_ktype_of_name("volta_sgemm_128x64_nn"), GP_KT_COMPUTATION);
    ASSERT_EQ_INT(gp_ktype_of_name("triton_poi_fused_add_cos_sin_0"), GP_KT_COMPUTATION);
}

TEST(compat_filter_and_breakdowns)
{
    gp_trace *t = load(trace_json);
    ASSERT(t);
    gp_hview v;
    view(t, 1, &v);
    ASSERT_EQ_INT(v.step_filtered, 1);
    /* compat: D and its launch are gone. GPU: [10,35] [90,91] [150,155] */
    gp_temporal tb;
    ASSERT_EQ_INT(gp_temporal_compute(&v, &tb), 0);
    ASSERT_EQ_INT(tb.valid, 1);
    ASSERT_EQ_INT(tb.span_ns, 145000);
    ASSERT_EQ_INT(tb.idle_ns, 114000);
    ASSERT_EQ_INT(tb.compute_ns, 16000);
    ASSERT_EQ_INT(tb.non_compute_ns, 15000);
    double pct;
    int valid;
    ASSERT_EQ_INT(gp_comm_comp_overlap(&v, &pct, &valid), 0);
    ASSERT_EQ_INT(valid, 1);
    ASSERT_NEAR(pct, 50.0, 1e-9); /* comm [15,35] overlaps comp [15,20] and [25,30] */

    gp_ktype_time kt;
    memset(&kt, 0, sizeof kt);
    ASSERT_EQ_INT(gp_ktype_time_add(&v, &kt), 0);
    ASSERT_EQ_INT(kt.ns[1], 6000);  /* COMPUTATION alone: [10,15] + [90,91] */
    ASSERT_EQ_INT(kt.ns[2], 10000); /* COMMUNICATION alone: [20,25] + [30,35] */
    ASSERT_EQ_INT(kt.ns[3], 10000); /* overlap */
    ASSERT_EQ_INT(kt.ns[4], 5000);  /* MEMORY */
    char lab[96];
    gp_kstate_label(3, lab, sizeof lab);
    ASSERT_EQ_STR(lab, "COMPUTATION overlapping COMMUNICATION");

    gp_topk *top;
    size_t ntop;
    ASSERT_EQ_INT(gp_top_kernels(&v, 10, 0.8, &top, &ntop), 0);
    ASSERT_EQ_INT(ntop, 4); /* gemm, relu, nccl, memcpy */
    ASSERT_EQ_STR(gp_trace_s(t, top[0].name), "gemm");
    ASSERT_EQ_INT(top[0].count, 2);
    ASSERT_EQ_INT(top[0].sum, 15000);
    ASSERT_EQ_INT(top[0].min, 5000);
    ASSERT_NEAR(top[0].mean, 7500.0, 1e-9);
    free(top);

    gp_idle_row *idle;
    size_t nidle;
    ASSERT_EQ_INT(gp_idle_breakdown(&v, 30000, &idle, &nidle), 0);
    ASSERT_EQ_INT(nidle, 2);
    ASSERT_EQ_INT(idle[0].stream, 7);
    ASSERT_EQ_INT(idle[0].kernel_wait_ns, 5000);
    ASSERT_EQ_INT(idle[0].host_wait_ns, 60000);
    ASSERT_EQ_INT(idle[0].other_ns, 59000);
    ASSERT_EQ_INT(idle[1].stream, 8);
    ASSERT_EQ_INT(idle[1].gaps, 0);
    free(idle);

    gp_launch_opts lo = {50000, 100000};
    gp_launch_stats ls;
    ASSERT_EQ_INT(gp_launch_compute(&v, GP_LAUNCH_HTA, &lo, &ls), 0);
    ASSERT_EQ_INT(ls.launches, 5);
    ASSERT_EQ_INT(ls.short_kernels, 1);
    ASSERT_EQ_INT(ls.runtime_outliers, 1);
    ASSERT_EQ_INT(ls.launch_delay_outliers, 1);
    ASSERT_EQ_INT(ls.delay_ns.max, 107000);
    ASSERT_EQ_INT(gp_launch_compute(&v, GP_LAUNCH_OTHER, &lo, &ls), 0);
    ASSERT_EQ_INT(ls.launches, 0);

    gp_queue_row *q;
    size_t nq;
    ASSERT_EQ_INT(gp_queue_length(&v, 1024, &q, &nq), 0);
    ASSERT_EQ_INT(nq, 2);
    ASSERT_EQ_INT(q[0].stream, 7);
    ASSERT_EQ_INT(q[0].max, 2);
    ASSERT_EQ_INT(q[0].launches, 4);
    free(q);
    gp_hview_free(&v);
    gp_trace_destroy(t);
}

TEST(default_mode_keeps_everything)
{
    gp_trace *t = load(trace_json);
    ASSERT(t);
    gp_hview v;
    view(t, 0, &v);
    ASSERT_EQ_INT(v.step_filtered, 0);
    gp_temporal tb;
    ASSERT_EQ_INT(gp_temporal_compute(&v, &tb), 0);
    ASSERT_EQ_INT(tb.span_ns, 160000); /* up to D's end at 170 */
    ASSERT_EQ_INT(tb.compute_ns, 26000);
    gp_hview_free(&v);
    gp_trace_destroy(t);
}

/* Fractional timestamps: HTA rounds the start up and the end down. */
TEST(compat_rounding)
{
    const char *js = "{\"traceEvents\":["
                     "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":7,"
                     "\"ts\":10.5,\"dur\":2.2,\"args\":{\"stream\":7,\"correlation\":1}},"
                     "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":7,"
                     "\"ts\":20.25,\"dur\":0.5,\"args\":{\"stream\":7,\"correlation\":2}}"
                     "]}";
    gp_trace *t = load(js);
    ASSERT(t);
    gp_hview v;
    view(t, 1, &v);
    ASSERT_EQ_INT(v.rounded, 1);
    ASSERT_EQ_INT(v.n, 2);
    ASSERT_EQ_INT(v.ev[0].dur, 1000);  /* [11, 12] */
    ASSERT_EQ_INT(v.ev[1].dur, -1000); /* [21, 20]: as in HTA, end < start: -1 us */
    gp_hview_free(&v);
    view(t, 0, &v);
    ASSERT_EQ_INT(v.ev[0].dur, 2200);
    gp_hview_free(&v);
    gp_trace_destroy(t);
}

/* A stream argument on a CPU op (Triton) makes it GPU work for HTA. */
TEST(stream_argument_on_cpu_op)
{
    const char *js = "{\"traceEvents\":["
                     "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"triton_k\",\"pid\":1,\"tid\":1,"
                     "\"ts\":1,\"dur\":9,\"args\":{\"stream\":0}},"
                     "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"triton_k\",\"pid\":0,\"tid\":7,"
                     "\"ts\":5,\"dur\":1,\"args\":{\"stream\":7,\"correlation\":3}}"
                     "]}";
    gp_trace *t = load(js);
    ASSERT(t);
    ASSERT_EQ_INT(t->arg_streams.n, 1);
    gp_hview v;
    view(t, 1, &v);
    gp_temporal tb;
    ASSERT_EQ_INT(gp_temporal_compute(&v, &tb), 0);
    ASSERT_EQ_INT(tb.span_ns, 9000);
    gp_hview_free(&v);
    view(t, 0, &v);
    ASSERT_EQ_INT(gp_temporal_compute(&v, &tb), 0);
    ASSERT_EQ_INT(tb.span_ns, 1000);
    gp_hview_free(&v);
    gp_trace_destroy(t);
}

/* Steps of trace_json (default mode): step 1 [0,100) launched A, B, nccl,
 * relu and the memcpy (launched at 40, runs at [150,155]); step 2 launched
 * D [160,170]. */
TEST(steps_by_launch)
{
    gp_trace *t = load(trace_json);
    ASSERT(t);
    gp_hview v;
    view(t, 0, &v);
    gp_step_row *st;
    size_t ns;
    ASSERT_EQ_INT(gp_steps_compute(&v, &st, &ns), 0);
    ASSERT_EQ_INT(ns, 2);
    ASSERT_EQ_INT(st[0].step, 1);
    ASSERT_EQ_INT(st[0].span_ns, 100000);
    ASSERT_EQ_INT(st[0].gpu_events, 5);
    ASSERT_EQ_INT(st[0].kernels, 4);
    ASSERT_EQ_INT(st[0].gpu_span_ns, 145000); /* [10, 155] */
    ASSERT_EQ_INT(st[0].gpu_busy_ns, 31000);  /* [10,35] + [90,91] + [150,155] */
    ASSERT_EQ_INT(st[0].gpu_idle_ns, 114000);
    ASSERT_EQ_INT(st[0].compute_ns, 16000); /* A 10 + B 5 + relu 1 */
    ASSERT_EQ_INT(st[1].step, 2);
    ASSERT_EQ_INT(st[1].gpu_events, 1);
    ASSERT_EQ_INT(st[1].gpu_busy_ns, 10000);
    ASSERT_EQ_INT(st[1].gpu_idle_ns, 0);
    free(st);
    gp_hview_free(&v);
    /* compat: HTA's filter dropped the last step and what it launched */
    view(t, 1, &v);
    ASSERT_EQ_INT(gp_steps_compute(&v, &st, &ns), 0);
    ASSERT_EQ_INT(ns, 1);
    ASSERT_EQ_INT(st[0].gpu_events, 5);
    free(st);
    gp_hview_free(&v);
    gp_trace_destroy(t);
}

/* Copies: HtoD 1 MB in 10 us (100 GB/s) and 1 MB in 30 us (33.3 GB/s), a
 * DtoH of unknown size, a memset of 4000 B in 2 us. */
TEST(memory_bandwidth)
{
    const char *js =
        "{\"traceEvents\":["
        "{\"ph\":\"X\",\"cat\":\"gpu_memcpy\",\"name\":\"Memcpy HtoD (Pinned -> Device)\","
        "\"pid\":0,\"tid\":7,\"ts\":0,\"dur\":10,\"args\":{\"stream\":7,\"bytes\":1000000}},"
        "{\"ph\":\"X\",\"cat\":\"gpu_memcpy\",\"name\":\"Memcpy HtoD (Pinned -> Device)\","
        "\"pid\":0,\"tid\":7,\"ts\":20,\"dur\":30,\"args\":{\"stream\":7,\"bytes\":1000000}},"
        "{\"ph\":\"X\",\"cat\":\"gpu_memcpy\",\"name\":\"Memcpy DtoH (Device -> Pinned)\","
        "\"pid\":0,\"tid\":7,\"ts\":60,\"dur\":5,\"args\":{\"stream\":7}},"
        "{\"ph\":\"X\",\"cat\":\"gpu_memset\",\"name\":\"Memset (Device)\","
        "\"pid\":0,\"tid\":7,\"ts\":70,\"dur\":2,\"args\":{\"stream\":7,\"bytes\":4000}},"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":7,"
        "\"ts\":80,\"dur\":5,\"args\":{\"stream\":7}}"
        "]}";
    gp_trace *t = load(js);
    ASSERT(t);
    gp_hview v;
    view(t, 0, &v);
    gp_bw_row *r;
    size_t n;
    ASSERT_EQ_INT(gp_bandwidth_compute(&v, &r, &n), 0);
    ASSERT_EQ_INT(n, 3); /* HtoD, DtoH, Memset (gp_copy_kind order) */
    ASSERT_EQ_STR(gp_copy_kind_name((gp_copy_kind)r[0].kind), "HtoD");
    ASSERT_EQ_INT(r[0].count, 2);
    ASSERT_EQ_INT(r[0].bytes, 2000000);
    ASSERT_EQ_INT(r[0].time_ns, 40000);
    ASSERT_EQ_INT(r[0].gbps_valid, 1);
    ASSERT_NEAR(r[0].gbps, 50.0, 1e-9);
    ASSERT_NEAR(r[0].per_copy_gbps.mean, (100.0 + 100.0 / 3) / 2, 1e-9);
    ASSERT_NEAR(r[0].per_copy_gbps.max, 100.0, 1e-9);
    ASSERT_EQ_STR(gp_copy_kind_name((gp_copy_kind)r[1].kind), "DtoH");
    ASSERT_EQ_INT(r[1].count, 1);
    ASSERT_EQ_INT(r[1].sized, 0);
    ASSERT_EQ_INT(r[1].gbps_valid, 0); /* unknown size: N/A, not 0 */
    ASSERT_EQ_STR(gp_copy_kind_name((gp_copy_kind)r[2].kind), "Memset");
    ASSERT_NEAR(r[2].gbps, 2.0, 1e-9);
    free(r);
    gp_hview_free(&v);
    gp_trace_destroy(t);
}

/* CPU: cpu_op [0,10] (thread 1), runtime [5,12] (thread 2), an annotation
 * [0,100] that is no CPU work; GPU kernels [8,20] and [30,40]. */
TEST(timeline_stats)
{
    const char *js = "{\"traceEvents\":["
                     "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"a\",\"pid\":1,"
                     "\"tid\":1,\"ts\":0,\"dur\":100},"
                     "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"op\",\"pid\":1,\"tid\":1,"
                     "\"ts\":0,\"dur\":10},"
                     "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\","
                     "\"pid\":1,\"tid\":2,\"ts\":5,\"dur\":7},"
                     "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":7,"
                     "\"ts\":8,\"dur\":12,\"args\":{\"stream\":7}},"
                     "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":7,"
                     "\"ts\":30,\"dur\":10,\"args\":{\"stream\":7}}"
                     "]}";
    gp_trace *t = load(js);
    ASSERT(t);
    gp_timeline_stats s;
    ASSERT_EQ_INT(gp_timeline_stats_compute(t, &s), 0);
    ASSERT_EQ_INT(s.span_ns, 100000);
    ASSERT_EQ_INT(s.cpu_active_ns, 12000);
    ASSERT_EQ_INT(s.gpu_active_ns, 22000);
    ASSERT_EQ_INT(s.overlap_ns, 4000);
    ASSERT_EQ_INT(s.cpu_only_ns, 8000);
    ASSERT_EQ_INT(s.gpu_only_ns, 18000);
    ASSERT_EQ_INT(s.idle_ns, 70000);
    ASSERT_EQ_INT(s.gpu_valid, 1);
    gp_trace_destroy(t);
}

/* Four ranks, rank 2 computes 50% longer and idles least: the straggler. */
TEST(stragglers_robust_z)
{
    int ranks[4] = {0, 1, 2, 3};
    int64_t comp[4] = {100000, 101000, 150000, 99000}, idle[4] = {60000, 61000, 10000, 59000};
    gp_straggler_row r[4];
    ASSERT_EQ_INT(gp_stragglers(ranks, comp, idle, 4, 3.5, r), 0);
    /* compute: median 100500, |dev| 500 500 49500 1500 -> MAD 1000 */
    ASSERT_NEAR(r[2].compute_z, 0.6745 * 49500 / 1000, 1e-9);
    ASSERT_EQ_INT(r[2].straggler, 1);
    ASSERT_EQ_INT(r[2].outlier, 1);
    ASSERT_EQ_INT(r[2].by_compute, 1);
    ASSERT_EQ_INT(r[2].by_idle, 1);
    for (int i = 0; i < 4; i++)
        if (i != 2) ASSERT_EQ_INT(r[i].outlier, 0);
    ASSERT_EQ_INT(r[3].by_compute, 4);
    /* all alike: no deviation, no outlier */
    int64_t same[4] = {5, 5, 5, 5};
    ASSERT_EQ_INT(gp_stragglers(ranks, same, same, 4, 3.5, r), 0);
    ASSERT_NEAR(r[0].compute_z, 0.0, 0);
    ASSERT_EQ_INT(r[0].outlier, 0);
    /* MAD 0 but one rank differs: the mean absolute deviation stands in */
    int64_t one[4] = {5, 5, 5, 9};
    ASSERT_EQ_INT(gp_stragglers(ranks, one, same, 4, 3.5, r), 0);
    ASSERT_NEAR(r[3].compute_z, 4.0 / (1.253314 * 1.0), 1e-9);
    ASSERT_EQ_INT(r[3].outlier, 0); /* 3.19 < 3.5 */
}

/* The pair sort is stable and agrees with a reference order. */
TEST(sort_pairs_stable)
{
    size_t n = 20000;
    int64_t *p = malloc(2 * n * sizeof *p);
    ASSERT(p);
    uint64_t x = 88172645463325252ull;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        p[2 * i] = (int64_t)(x % 1000) - 500 + (i % 3 ? 0 : (int64_t)1 << 40);
        p[2 * i + 1] = (int64_t)i;
    }
    gp_sort_pairs_i64(p, n);
    for (size_t i = 1; i < n; i++) {
        ASSERT(p[2 * (i - 1)] <= p[2 * i]);
        if (p[2 * (i - 1)] == p[2 * i]) ASSERT(p[2 * (i - 1) + 1] < p[2 * i + 1]);
    }
    free(p);
}

static int cmp_key_then_index(const void *a, const void *b)
{
    const int64_t *x = a, *y = b;
    if (x[0] != y[0]) return x[0] < y[0] ? -1 : 1;
    return (x[1] > y[1]) - (x[1] < y[1]);
}

/* The pair sort's paths (runs merged where they overlap little, the radix
 * sort otherwise, insertion for small inputs) against a reference stable
 * order on inputs of many shapes: 1-300 ascending runs overlapping from not
 * at all to completely, equal keys across run edges, few distinct keys,
 * random keys, the int64 extremes. */
TEST(sort_pairs_shapes)
{
    size_t cap = 300000;
    int64_t *p = malloc(2 * cap * sizeof *p), *q = malloc(2 * cap * sizeof *q);
    ASSERT(p && q);
    uint64_t x = 0x9e3779b97f4a7c15ull;
#define RND() (x ^= x << 13, x ^= x >> 7, x ^= x << 17, x)
    size_t sizes[] = {2, 63, 64, 65, 1000, 65536, 300000};
    size_t nruns[] = {1, 2, 3, 4, 7, 33, 256, 257, 300};
    int checked = 0;
    for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++)
        for (size_t ri = 0; ri < sizeof nruns / sizeof *nruns; ri++)
            for (int shape = 0; shape < 6; shape++) {
                size_t n = sizes[si], runs = nruns[ri] < n ? nruns[ri] : n, per = n / runs;
                int64_t t = shape == 5 ? INT64_MIN + 5 : -123456789;
                for (size_t i = 0; i < n; i++) {
                    if (i && i % per == 0) {    /* a new run starts back in time */
                        if (shape == 0) t -= 3; /* barely overlaps */
                        if (shape == 1) t -= (int64_t)(per * 50); /* overlaps the previous */
                        if (shape == 2) t -= (int64_t)(RND() % (per * 100 + 1)); /* some */
                    }
                    if (shape == 3)
                        p[2 * i] = (int64_t)(RND() % 5); /* few distinct keys */
                    else if (shape == 4)
                        p[2 * i] = (int64_t)RND(); /* any key */
                    else {
                        t += (int64_t)(RND() % 100); /* equal neighbours too */
                        p[2 * i] = shape == 5 && i % 7 == 0 ? INT64_MAX - (int64_t)(i % 3) : t;
                    }
                    p[2 * i + 1] = (int64_t)i;
                }
                memcpy(q, p, 2 * n * sizeof *p);
                qsort(q, n, 2 * sizeof *q, cmp_key_then_index);
                gp_sort_pairs_i64(p, n);
                ASSERT(memcmp(p, q, 2 * n * sizeof *p) == 0);
                checked++;
            }
#undef RND
    ASSERT_EQ_INT(checked, 7 * 9 * 6);
    free(p);
    free(q);
}

/* The fast paths (shared index) against the general ones they replace:
 * launch and queue with corr_multi forced (hash joins), the kernel-type sweep
 * with reversed forced (sort), the cached merged lists against merging the
 * collected intervals. */
static void check_paths(gp_hview *v)
{
    gp_launch_opts lo = {50000, 100000};
    for (int set = 0; set < 2; set++) {
        gp_launch_stats a, b;
        ASSERT_EQ_INT(gp_launch_compute(v, (gp_launch_set)set, &lo, &a), 0);
        int m = v->corr_multi;
        v->corr_multi = 1;
        ASSERT_EQ_INT(gp_launch_compute(v, (gp_launch_set)set, &lo, &b), 0);
        v->corr_multi = m;
        ASSERT_EQ_INT(a.launches, b.launches);
        ASSERT_EQ_INT(a.short_kernels, b.short_kernels);
        ASSERT_EQ_INT(a.runtime_outliers, b.runtime_outliers);
        ASSERT_EQ_INT(a.launch_delay_outliers, b.launch_delay_outliers);
        ASSERT_EQ_INT(a.cpu_ns.sum, b.cpu_ns.sum);
        ASSERT_EQ_INT(a.gpu_ns.max, b.gpu_ns.max);
        ASSERT_NEAR(a.delay_ns.p50, b.delay_ns.p50, 0);
    }
    gp_queue_row *qa, *qb;
    size_t na, nb;
    ASSERT_EQ_INT(gp_queue_length(v, 1024, &qa, &na), 0);
    int m = v->corr_multi;
    v->corr_multi = 1;
    ASSERT_EQ_INT(gp_queue_length(v, 1024, &qb, &nb), 0);
    v->corr_multi = m;
    ASSERT_EQ_INT(na, nb);
    for (size_t i = 0; i < na && i < nb; i++) {
        ASSERT_EQ_INT(qa[i].stream, qb[i].stream);
        ASSERT_EQ_INT(qa[i].max, qb[i].max);
        ASSERT_EQ_INT(qa[i].launches, qb[i].launches);
        ASSERT_NEAR(qa[i].mean, qb[i].mean, 1e-9 * (1 + qb[i].mean));
    }
    free(qa);
    free(qb);
    gp_ktype_time ka, kb;
    memset(&ka, 0, sizeof ka);
    memset(&kb, 0, sizeof kb);
    ASSERT_EQ_INT(gp_ktype_time_add(v, &ka), 0);
    int r = v->reversed;
    v->reversed = 1;
    ASSERT_EQ_INT(gp_ktype_time_add(v, &kb), 0);
    v->reversed = r;
    for (int s = 0; s < GP_KSTATES; s++) {
        ASSERT_EQ_INT(ka.ns[s], kb.ns[s]);
        ASSERT_EQ_INT(ka.seen[s], kb.seen[s]);
    }
    static const unsigned masks[4] = {~0u, 1u, 2u, 4u};
    for (int k = 0; k < 4; k++) {
        size_t nc = 0, nm = 0;
        const int64_t *c = gp_hview_merged(v, masks[k], &nc);
        int64_t *iv = malloc((v->n ? v->n : 1) * 2 * sizeof *iv);
        ASSERT(iv);
        for (size_t i = 0; i < v->n; i++)
            if (v->ev[i].stream != -1 && (masks[k] >> v->ev[i].ktype & 1u)) {
                iv[2 * nm] = v->ev[i].ts;
                iv[2 * nm + 1] = v->ev[i].ts + v->ev[i].dur;
                nm++;
            }
        nm = gp_hta_merge(iv, nm);
        ASSERT_EQ_INT(nc, nm);
        for (size_t i = 0; i < 2 * nm && i < 2 * nc; i++) ASSERT_EQ_INT(c[i], iv[i]);
        free(iv);
    }
}

TEST(fast_paths_equal_general)
{
    gp_trace *t = load(trace_json);
    ASSERT(t);
    gp_hview v;
    for (int compat = 0; compat < 2; compat++) {
        view(t, compat, &v);
        check_paths(&v);
        gp_hview_free(&v);
    }
    gp_trace_destroy(t);
    const char *dir = gp_test_traces_dir();
    if (!dir) SKIP("shared traces not found (GPUPROF_TRACES)");
    static const char *const files[] = {
        "nccl_data/nccl_data.json.gz", "ns_resolution/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz",
        "amd_mi250/mi250_minitoy_train_ROCm6_2_kineto.json.gz",
        "triton_example/triton_example.json.gz"};
    int found = 0;
    for (size_t f = 0; f < sizeof files / sizeof *files; f++) {
        char path[8400];
        int w = snprintf(path, sizeof path, "%s/%s", dir, files[f]);
        if (w < 0 || (size_t)w >= sizeof path) continue;
        gp_err err = {0};
        gp_trace *rt = NULL;
        if (gp_import_json_file(path, NULL, &rt, &err)) continue;
        found++;
        for (int compat = 0; compat < 2; compat++) {
            view(rt, compat, &v);
            check_paths(&v);
            gp_hview_free(&v);
        }
        gp_trace_destroy(rt);
    }
    if (found < 4) fprintf(stderr, "note: %d of 4 shared trace files found\n", found);
    if (!found) SKIP("none of the shared trace files found");
}

TEST_MAIN(kernel_type_names, step_filter_multiplicity, compat_filter_and_breakdowns,
          default_mode_keeps_everything, compat_rounding, stream_argument_on_cpu_op,
          steps_by_launch, memory_bandwidth, timeline_stats, stragglers_robust_z, sort_pairs_stable,
          sort_pairs_shapes, fast_paths_equal_general)
