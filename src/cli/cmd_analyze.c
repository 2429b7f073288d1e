/* cli/cmd_analyze.c: `gpuprof analyze PATH...`: the Holistic Trace Analysis
 * family (temporal / kernel / idle breakdowns, overlap, launch statistics,
 * queue length, memory bandwidth, CPU/GPU timeline, steps, stragglers) per
 * rank, as a text report or JSON; --compat hta gives HTA 0.6.1's numbers. */
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
#include "cli/cli.h"
#include "core/clock.h"
#include "core/error.h"
#include "core/sbuf.h"
#include "core/table.h"
#include <getopt.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct opts {
    int json, compat, wide;
    long top;
    double ratio;
    int64_t kernel_wait_ns, queue_full;
    double straggler_z;
    gp_launch_opts lo;
} opts;

typedef struct rank_res {
    gp_hview v;
    gp_temporal tb;
    double ov_pct;
    int ov_valid;
    gp_topk *top;
    size_t ntop;
    gp_idle_row *idle;
    size_t nidle;
    gp_launch_stats ls[2];
    gp_queue_row *queue;
    size_t nqueue;
    gp_bw_row *bw;
    size_t nbw;
    gp_timeline_stats tl;
    gp_step_row *steps;
    size_t nsteps;
    gp_ktype_time kt; /* this rank's share, summed over ranks afterwards */
    int failed[3];    /* out of memory, per group of analyses (analyze_group) */
} rank_res;

static void usage(FILE *f)
{
    fprintf(f, "usage: gpuprof analyze [options] PATH...\n"
               "  PATH: trace file (.json/.json.gz) or folder of rank files\n"
               "  --compat hta            reproduce HTA 0.6.1's preprocessing and numbers\n"
               "  --json                  machine-readable output (keys of expected.hta.json)\n"
               "  --top N                 kernels per type before folding into 'others' (10)\n"
               "  --duration-ratio R      cumulative share kept before folding (0.8)\n"
               "  --kernel-wait-us US     gap below which idle time is kernel_wait (30)\n"
               "  --runtime-cutoff-us US  launch call duration outlier threshold (50)\n"
               "  --delay-cutoff-us US    launch delay outlier threshold (100)\n"
               "  --queue-full N          queue length counted as full (1024)\n"
               "  --straggler-z Z         robust z-score above which a rank is an outlier (3.5)\n"
               "  --wide                  do not shorten kernel names in tables\n");
}

/* Python's round(x, nd) for the values printed here: correctly rounded. */
static double round_dec(double x, int nd)
{
    char buf[64];
    snprintf(buf, sizeof buf, "%.*f", nd, x);
    return strtod(buf, NULL);
}

static double us(int64_t ns)
{
    return (double)ns / 1000.0;
}

static double pct(const opts *o, int64_t part, int64_t whole, int nd)
{
    double r = 100.0 * ((double)part / (double)whole);
    return o->compat ? round_dec(r, nd) : r;
}

/* rank: distributedInfo.rank, else a number after "rank" in the file name,
 * else -1 (the caller then uses the position). */
static int rank_of(const gp_trace *t)
{
    if (t->meta.rank != GP_NONE) return t->meta.rank;
    const char *src = gp_trace_s(t, t->meta.source), *base = strrchr(src, '/');
    base = base ? base + 1 : src;
    for (const char *p = strstr(base, "rank"); p; p = strstr(p + 1, "rank")) {
        const char *d = p + 4;
        while (*d == '-' || *d == '_' || *d == '.') d++;
        if (*d >= '0' && *d <= '9') return atoi(d);
    }
    return -1;
}

static void json_ranks(gp_sbuf *b, rank_res *r, size_t n, const opts *o)
{
    gp_json_key(b, "temporal_breakdown", 1);
    gp_sbuf_putc(b, '[');
    int first = 1;
    for (size_t i = 0; i < n; i++) {
        const gp_temporal *t = &r[i].tb;
        if (!t->valid) continue;
        gp_sbuf_printf(b, "%s{", first ? "" : ",");
        first = 0;
        gp_json_key(b, "rank", 0);
        gp_json_int(b, r[i].v.rank);
        gp_json_key(b, "idle_us", 1);
        gp_json_num(b, us(t->idle_ns));
        gp_json_key(b, "compute_us", 1);
        gp_json_num(b, us(t->compute_ns));
        gp_json_key(b, "non_compute_us", 1);
        gp_json_num(b, us(t->non_compute_ns));
        gp_json_key(b, "kernel_span_us", 1);
        gp_json_num(b, us(t->span_ns));
        gp_json_key(b, "idle_pct", 1);
        gp_json_num(b, t->span_ns ? pct(o, t->idle_ns, t->span_ns, 2) : NAN);
        gp_json_key(b, "compute_pct", 1);
        gp_json_num(b, t->span_ns ? pct(o, t->compute_ns, t->span_ns, 2) : NAN);
        gp_json_key(b, "non_compute_pct", 1);
        gp_json_num(b, t->span_ns ? pct(o, t->non_compute_ns, t->span_ns, 2) : NAN);
        gp_sbuf_putc(b, '}');
    }
    gp_sbuf_putc(b, ']');
}

/* keys of our own: memory_bandwidth, timeline_stats, steps, stragglers */
static void json_extra(gp_sbuf *b, rank_res *r, size_t n, const gp_straggler_row *sg, size_t nsg,
                       const opts *o)
{
    gp_json_key(b, "memory_bandwidth", 1);
    gp_sbuf_putc(b, '[');
    int first = 1;
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < r[i].nbw; k++) {
            const gp_bw_row *w = &r[i].bw[k];
            const gp_dstats *d = &w->per_copy_gbps;
            gp_sbuf_printf(b, "%s{", first ? "" : ",");
            first = 0;
            gp_json_key(b, "rank", 0);
            gp_json_int(b, r[i].v.rank);
            gp_json_key(b, "kind", 1);
            gp_json_str(b, gp_copy_kind_name((gp_copy_kind)w->kind));
            gp_json_key(b, "count", 1);
            gp_json_int(b, (int64_t)w->count);
            gp_json_key(b, "sized", 1);
            gp_json_int(b, (int64_t)w->sized);
            gp_json_key(b, "bytes", 1);
            gp_json_int(b, w->bytes);
            gp_json_key(b, "time_us", 1);
            gp_json_num(b, us(w->time_ns));
            gp_json_key(b, "gbps", 1);
            gp_json_num(b, w->gbps_valid ? w->gbps : NAN);
            gp_json_key(b, "gbps_mean", 1);
            gp_json_num(b, d->count ? d->mean : NAN);
            gp_json_key(b, "gbps_p50", 1);
            gp_json_num(b, d->count ? d->p50 : NAN);
            gp_json_key(b, "gbps_max", 1);
            gp_json_num(b, d->count ? d->max : NAN);
            gp_sbuf_putc(b, '}');
        }
    gp_sbuf_putc(b, ']');

    gp_json_key(b, "timeline_stats", 1);
    gp_sbuf_putc(b, '[');
    for (size_t i = 0; i < n; i++) {
        const gp_timeline_stats *t = &r[i].tl;
        int g = t->gpu_valid;
        gp_sbuf_printf(b, "%s{", i ? "," : "");
        gp_json_key(b, "rank", 0);
        gp_json_int(b, r[i].v.rank);
        gp_json_key(b, "span_us", 1);
        gp_json_num(b, us(t->span_ns));
        gp_json_key(b, "cpu_active_us", 1);
        gp_json_num(b, us(t->cpu_active_ns));
        gp_json_key(b, "gpu_active_us", 1);
        gp_json_num(b, g ? us(t->gpu_active_ns) : NAN);
        gp_json_key(b, "overlap_us", 1);
        gp_json_num(b, g ? us(t->overlap_ns) : NAN);
        gp_json_key(b, "cpu_only_us", 1);
        gp_json_num(b, us(t->cpu_only_ns));
        gp_json_key(b, "gpu_only_us", 1);
        gp_json_num(b, g ? us(t->gpu_only_ns) : NAN);
        gp_json_key(b, "idle_us", 1);
        gp_json_num(b, us(t->idle_ns));
        gp_json_key(b, "cpu_active_pct", 1);
        gp_json_num(b, t->span_ns ? 100.0 * (double)t->cpu_active_ns / (double)t->span_ns : NAN);
        gp_json_key(b, "gpu_active_pct", 1);
        gp_json_num(b,
                    g && t->span_ns ? 100.0 * (double)t->gpu_active_ns / (double)t->span_ns : NAN);
        gp_sbuf_putc(b, '}');
    }
    gp_sbuf_putc(b, ']');

    gp_json_key(b, "steps", 1);
    gp_sbuf_putc(b, '[');
    first = 1;
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < r[i].nsteps; k++) {
            const gp_step_row *t = &r[i].steps[k];
            int g = t->gpu_valid;
            gp_sbuf_printf(b, "%s{", first ? "" : ",");
            first = 0;
            gp_json_key(b, "rank", 0);
            gp_json_int(b, r[i].v.rank);
            gp_json_key(b, "step", 1);
            gp_json_int(b, t->step);
            gp_json_key(b, "span_us", 1);
            gp_json_num(b, us(t->span_ns));
            gp_json_key(b, "gpu_events", 1);
            gp_json_int(b, (int64_t)t->gpu_events);
            gp_json_key(b, "kernels", 1);
            gp_json_int(b, (int64_t)t->kernels);
            gp_json_key(b, "gpu_span_us", 1);
            gp_json_num(b, g ? us(t->gpu_span_ns) : NAN);
            gp_json_key(b, "gpu_busy_us", 1);
            gp_json_num(b, g ? us(t->gpu_busy_ns) : NAN);
            gp_json_key(b, "gpu_idle_us", 1);
            gp_json_num(b, g ? us(t->gpu_idle_ns) : NAN);
            gp_json_key(b, "compute_us", 1);
            gp_json_num(b, g ? us(t->compute_ns) : NAN);
            gp_sbuf_putc(b, '}');
        }
    gp_sbuf_putc(b, ']');

    gp_json_key(b, "stragglers", 1);
    gp_sbuf_putc(b, '[');
    for (size_t i = 0; i < nsg; i++) {
        const gp_straggler_row *g = &sg[i];
        gp_sbuf_printf(b, "%s{", i ? "," : "");
        gp_json_key(b, "rank", 0);
        gp_json_int(b, g->rank);
        gp_json_key(b, "compute_us", 1);
        gp_json_num(b, us(g->compute_ns));
        gp_json_key(b, "idle_us", 1);
        gp_json_num(b, us(g->idle_ns));
        gp_json_key(b, "by_compute", 1);
        gp_json_int(b, g->by_compute);
        gp_json_key(b, "by_idle", 1);
        gp_json_int(b, g->by_idle);
        gp_json_key(b, "compute_z", 1);
        gp_json_num(b, g->compute_z);
        gp_json_key(b, "idle_z", 1);
        gp_json_num(b, g->idle_z);
        gp_json_key(b, "outlier", 1);
        gp_sbuf_puts(b, g->outlier ? "true" : "false");
        gp_json_key(b, "straggler", 1);
        gp_sbuf_puts(b, g->straggler ? "true" : "false");
        gp_sbuf_putc(b, '}');
    }
    gp_sbuf_putc(b, ']');
    gp_json_key(b, "straggler_z", 1);
    gp_json_num(b, o->straggler_z);
}

static int json_report(rank_res *r, size_t n, const gp_ktype_time *kt, const gp_straggler_row *sg,
                       size_t nsg, const opts *o)
{
    gp_sbuf b = {0};
    gp_sbuf_putc(&b, '{');
    gp_json_key(&b, "mode", 0);
    gp_json_str(&b, o->compat ? "hta" : "default");
    gp_json_key(&b, "ranks", 1);
    gp_sbuf_putc(&b, '[');
    for (size_t i = 0; i < n; i++) gp_sbuf_printf(&b, "%s%d", i ? "," : "", r[i].v.rank);
    gp_sbuf_putc(&b, ']');
    json_ranks(&b, r, n, o);

    /* kernel type breakdown over all ranks, largest first */
    int64_t tot = 0;
    unsigned order[GP_KSTATES];
    size_t no = 0;
    for (unsigned s = 1; s < GP_KSTATES; s++)
        if (kt->seen[s]) {
            tot += kt->ns[s];
            order[no++] = s;
        }
    for (size_t i = 1; i < no; i++)
        for (size_t j = i; j > 0 && kt->ns[order[j]] > kt->ns[order[j - 1]]; j--) {
            unsigned x = order[j];
            order[j] = order[j - 1];
            order[j - 1] = x;
        }
    gp_json_key(&b, "kernel_type_breakdown", 1);
    gp_sbuf_putc(&b, '[');
    for (size_t i = 0; i < no; i++) {
        char lab[96];
        gp_kstate_label(order[i], lab, sizeof lab);
        gp_sbuf_printf(&b, "%s{", i ? "," : "");
        gp_json_key(&b, "type", 0);
        gp_json_str(&b, lab);
        gp_json_key(&b, "us", 1);
        gp_json_num(&b, us(kt->ns[order[i]]));
        gp_json_key(&b, "pct", 1);
        gp_json_num(&b, tot ? pct(o, kt->ns[order[i]], tot, 1) : NAN);
        gp_sbuf_putc(&b, '}');
    }
    gp_sbuf_putc(&b, ']');

    for (int others = 0; others < 2; others++) {
        gp_json_key(&b, others ? "top_kernels_others" : "top_kernels", 1);
        gp_sbuf_putc(&b, '[');
        int first = 1;
        for (size_t i = 0; i < n; i++)
            for (size_t k = 0; k < r[i].ntop; k++) {
                const gp_topk *t = &r[i].top[k];
                if ((t->name == GP_NO_INDEX) != others) continue;
                gp_sbuf_printf(&b, "%s{", first ? "" : ",");
                first = 0;
                gp_json_key(&b, "rank", 0);
                gp_json_int(&b, r[i].v.rank);
                gp_json_key(&b, "name", 1);
                gp_json_str(&b, others ? "others" : gp_trace_s(r[i].v.t, t->name));
                gp_json_key(&b, "type", 1);
                gp_json_str(&b, gp_ktype_name((gp_ktype)t->type));
                gp_json_key(&b, "count", 1);
                gp_json_int(&b, (int64_t)t->count);
                gp_json_key(&b, "sum_us", 1);
                gp_json_num(&b, us(t->sum));
                gp_json_key(&b, "mean_us", 1);
                gp_json_num(&b, t->mean / 1000.0);
                gp_json_key(&b, "min_us", 1);
                gp_json_num(&b, us(t->min));
                gp_json_key(&b, "max_us", 1);
                gp_json_num(&b, us(t->max));
                gp_json_key(&b, "std_us", 1);
                gp_json_num(&b, t->std / 1000.0);
                gp_sbuf_putc(&b, '}');
            }
        gp_sbuf_putc(&b, ']');
    }

    gp_json_key(&b, "comm_comp_overlap", 1);
    gp_sbuf_putc(&b, '[');
    for (size_t i = 0; i < n; i++) {
        gp_sbuf_printf(&b, "%s{", i ? "," : "");
        gp_json_key(&b, "rank", 0);
        gp_json_int(&b, r[i].v.rank);
        gp_json_key(&b, "pct", 1);
        gp_json_num(&b,
                    r[i].ov_valid ? (o->compat ? round_dec(r[i].ov_pct, 2) : r[i].ov_pct) : NAN);
        gp_sbuf_putc(&b, '}');
    }
    gp_sbuf_putc(&b, ']');

    gp_json_key(&b, "idle_breakdown", 1);
    gp_sbuf_putc(&b, '[');
    int first = 1;
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < r[i].nidle; k++) {
            const gp_idle_row *d = &r[i].idle[k];
            gp_sbuf_printf(&b, "%s{", first ? "" : ",");
            first = 0;
            gp_json_key(&b, "rank", 0);
            gp_json_int(&b, r[i].v.rank);
            gp_json_key(&b, "stream", 1);
            gp_json_int(&b, d->stream);
            gp_json_key(&b, "host_wait_us", 1);
            gp_json_num(&b, us(d->host_wait_ns));
            gp_json_key(&b, "kernel_wait_us", 1);
            gp_json_num(&b, us(d->kernel_wait_ns));
            gp_json_key(&b, "other_us", 1);
            gp_json_num(&b, us(d->other_ns));
            gp_sbuf_putc(&b, '}');
        }
    gp_sbuf_putc(&b, ']');

    for (int set = 0; set < 2; set++) {
        gp_json_key(&b, set ? "launch_stats_driver_hip" : "launch_stats", 1);
        gp_sbuf_putc(&b, '[');
        for (size_t i = 0; i < n; i++) {
            const gp_launch_stats *l = &r[i].ls[set];
            gp_sbuf_printf(&b, "%s{", i ? "," : "");
            gp_json_key(&b, "rank", 0);
            gp_json_int(&b, r[i].v.rank);
            gp_json_key(&b, "launches", 1);
            gp_json_int(&b, (int64_t)l->launches);
            gp_json_key(&b, "short_kernels", 1);
            gp_json_int(&b, (int64_t)l->short_kernels);
            gp_json_key(&b, "runtime_outliers", 1);
            gp_json_int(&b, (int64_t)l->runtime_outliers);
            gp_json_key(&b, "launch_delay_outliers", 1);
            gp_json_int(&b, (int64_t)l->launch_delay_outliers);
            const gp_stats *st[3] = {&l->cpu_ns, &l->gpu_ns, &l->delay_ns};
            static const char *const nm[3] = {"cpu_duration", "gpu_duration", "launch_delay"};
            for (int s = 0; s < 3; s++) {
                char key[64];
                int have = st[s]->count > 0;
                snprintf(key, sizeof key, "%s_mean_us", nm[s]);
                gp_json_key(&b, key, 1);
                gp_json_num(&b, have ? st[s]->mean / 1000.0 : NAN);
                snprintf(key, sizeof key, "%s_p50_us", nm[s]);
                gp_json_key(&b, key, 1);
                gp_json_num(&b, have ? st[s]->p50 / 1000.0 : NAN);
                snprintf(key, sizeof key, "%s_p95_us", nm[s]);
                gp_json_key(&b, key, 1);
                gp_json_num(&b, have ? st[s]->p95 / 1000.0 : NAN);
                snprintf(key, sizeof key, "%s_max_us", nm[s]);
                gp_json_key(&b, key, 1);
                gp_json_num(&b, have ? us(st[s]->max) : NAN);
            }
            gp_sbuf_putc(&b, '}');
        }
        gp_sbuf_putc(&b, ']');
    }

    gp_json_key(&b, "queue_length", 1);
    gp_sbuf_putc(&b, '[');
    first = 1;
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < r[i].nqueue; k++) {
            const gp_queue_row *q = &r[i].queue[k];
            gp_sbuf_printf(&b, "%s{", first ? "" : ",");
            first = 0;
            gp_json_key(&b, "rank", 0);
            gp_json_int(&b, r[i].v.rank);
            gp_json_key(&b, "stream", 1);
            gp_json_int(&b, q->stream);
            gp_json_key(&b, "max", 1);
            gp_json_int(&b, q->max);
            gp_json_key(&b, "mean", 1);
            gp_json_num(&b, q->mean);
            gp_json_key(&b, "full_pct", 1);
            gp_json_num(&b, q->full_pct);
            gp_json_key(&b, "launches", 1);
            gp_json_int(&b, (int64_t)q->launches);
            gp_sbuf_putc(&b, '}');
        }
    gp_sbuf_putc(&b, ']');
    json_extra(&b, r, n, sg, nsg, o);
    gp_sbuf_puts(&b, "}\n");
    int rc = gp_sbuf_write(&b, stdout);
    gp_sbuf_free(&b);
    return rc ? 1 : 0;
}

static const char *short_name(const char *s, int wide, char *buf, size_t n)
{
    size_t len = strlen(s);
    if (wide || len <= 60) return s;
    snprintf(buf, n, "%.57s...", s);
    return buf;
}

/* memory bandwidth, CPU/GPU timeline and per-step tables of one rank */
static void text_extra(const rank_res *x)
{
    char a[64], c[64], d[64], e[64], f[64];
    const gp_timeline_stats *t = &x->tl;
    if (t->span_ns > 0) {
        printf("\nCPU/GPU timeline: span %s, CPU active %s (%.1f%%)",
               gp_fmt_dur_auto(a, sizeof a, (double)t->span_ns),
               gp_fmt_dur_auto(c, sizeof c, (double)t->cpu_active_ns),
               100.0 * (double)t->cpu_active_ns / (double)t->span_ns);
        if (t->gpu_valid)
            printf(", GPU active %s (%.1f%%), both %s, CPU only %s, GPU only %s",
                   gp_fmt_dur_auto(d, sizeof d, (double)t->gpu_active_ns),
                   100.0 * (double)t->gpu_active_ns / (double)t->span_ns,
                   gp_fmt_dur_auto(e, sizeof e, (double)t->overlap_ns),
                   gp_fmt_dur_auto(f, sizeof f, (double)t->cpu_only_ns),
                   gp_fmt_dur_auto(a, sizeof a, (double)t->gpu_only_ns));
        else
            printf(", GPU active N/A (no GPU work)");
        printf(", idle %s\n", gp_fmt_dur_auto(c, sizeof c, (double)t->idle_ns));
    }
    if (x->nbw) {
        printf("\nmemory bandwidth per copy kind (GB/s: total bytes / total time; per copy: "
               "mean, p50, max)\n");
        double mt = 0;
        for (size_t k = 0; k < x->nbw; k++)
            if ((double)x->bw[k].time_ns > mt) mt = (double)x->bw[k].time_ns;
        gp_unit ut = gp_unit_pick(mt);
        char ht[32];
        snprintf(ht, sizeof ht, "time (%s)", ut.name);
        const char *h[] = {"kind", "count", "bytes", ht, "GB/s", "mean", "p50", "max"};
        gp_table *tb = gp_table_create(8, h, "lrrrrrrr");
        for (size_t k = 0; k < x->nbw; k++) {
            const gp_bw_row *w = &x->bw[k];
            const gp_dstats *s = &w->per_copy_gbps;
            char g[4][32];
            snprintf(g[0], sizeof g[0], w->gbps_valid ? "%.2f" : "N/A", w->gbps);
            snprintf(g[1], sizeof g[1], s->count ? "%.2f" : "N/A", s->mean);
            snprintf(g[2], sizeof g[2], s->count ? "%.2f" : "N/A", s->p50);
            snprintf(g[3], sizeof g[3], s->count ? "%.2f" : "N/A", s->max);
            gp_table_rowf(tb, "%s\t%llu\t%s\t%s\t%s\t%s\t%s\t%s",
                          gp_copy_kind_name((gp_copy_kind)w->kind), (unsigned long long)w->count,
                          w->sized ? gp_fmt_bytes(a, sizeof a, (double)w->bytes) : "N/A",
                          gp_fmt_dur(c, sizeof c, (double)w->time_ns, ut), g[0], g[1], g[2], g[3]);
        }
        gp_table_print(tb, stdout, 0);
        gp_table_destroy(tb);
    }
    if (x->nsteps) {
        printf("\nsteps (ProfilerStep#N; GPU work by launch)\n");
        /* one unit per column, named in the header */
        double mx[5] = {0, 0, 0, 0, 0};
        for (size_t k = 0; k < x->nsteps; k++) {
            const gp_step_row *s = &x->steps[k];
            const int64_t v[5] = {s->span_ns, s->gpu_span_ns, s->gpu_busy_ns, s->gpu_idle_ns,
                                  s->compute_ns};
            for (int j = 0; j < 5; j++)
                if ((double)v[j] > mx[j]) mx[j] = (double)v[j];
        }
        static const char *const nm[5] = {"span", "GPU span", "GPU busy", "GPU idle", "compute"};
        gp_unit u[5];
        char hb[5][32];
        const char *h[7] = {"step", hb[0], hb[1], hb[2], hb[3], hb[4], "kernels"};
        for (int j = 0; j < 5; j++) {
            u[j] = gp_unit_pick(mx[j]);
            snprintf(hb[j], sizeof hb[j], "%s (%s)", nm[j], u[j].name);
        }
        gp_table *tb = gp_table_create(7, h, "rrrrrrr");
        for (size_t k = 0; k < x->nsteps; k++) {
            const gp_step_row *s = &x->steps[k];
            if (!s->gpu_valid) {
                gp_table_rowf(tb, "%lld\t%s\tN/A\tN/A\tN/A\tN/A\t0", (long long)s->step,
                              gp_fmt_dur(a, sizeof a, (double)s->span_ns, u[0]));
                continue;
            }
            gp_table_rowf(tb, "%lld\t%s\t%s\t%s\t%s\t%s\t%llu", (long long)s->step,
                          gp_fmt_dur(a, sizeof a, (double)s->span_ns, u[0]),
                          gp_fmt_dur(c, sizeof c, (double)s->gpu_span_ns, u[1]),
                          gp_fmt_dur(d, sizeof d, (double)s->gpu_busy_ns, u[2]),
                          gp_fmt_dur(e, sizeof e, (double)s->gpu_idle_ns, u[3]),
                          gp_fmt_dur(f, sizeof f, (double)s->compute_ns, u[4]),
                          (unsigned long long)s->kernels);
        }
        gp_table_print(tb, stdout, 0);
        gp_table_destroy(tb);
    }
}

static void text_stragglers(const gp_straggler_row *sg, size_t nsg, const opts *o)
{
    if (!nsg) return;
    char a[64], c[64];
    printf("\nranks by GPU compute time (robust z-scores; outlier when |z| > %.2f)\n",
           o->straggler_z);
    double mc = 0, mi = 0;
    for (size_t i = 0; i < nsg; i++) {
        if ((double)sg[i].compute_ns > mc) mc = (double)sg[i].compute_ns;
        if ((double)sg[i].idle_ns > mi) mi = (double)sg[i].idle_ns;
    }
    gp_unit uc = gp_unit_pick(mc), ui = gp_unit_pick(mi);
    char hc[32], hi[32];
    snprintf(hc, sizeof hc, "compute (%s)", uc.name);
    snprintf(hi, sizeof hi, "idle (%s)", ui.name);
    const char *h[] = {"rank", hc, "z", hi, "z", "flag"};
    gp_table *tb = gp_table_create(6, h, "rrrrrl");
    for (int pos = 1; pos <= (int)nsg; pos++)
        for (size_t i = 0; i < nsg; i++) {
            const gp_straggler_row *g = &sg[i];
            if (g->by_compute != pos) continue;
            gp_table_rowf(tb, "%d\t%s\t%.2f\t%s\t%.2f\t%s", g->rank,
                          gp_fmt_dur(a, sizeof a, (double)g->compute_ns, uc), g->compute_z,
                          gp_fmt_dur(c, sizeof c, (double)g->idle_ns, ui), g->idle_z,
                          g->straggler ? "STRAGGLER"
                          : g->outlier ? "outlier"
                                       : "");
        }
    gp_table_print(tb, stdout, 0);
    gp_table_destroy(tb);
}

static void text_report(rank_res *r, size_t n, const gp_ktype_time *kt, const gp_straggler_row *sg,
                        size_t nsg, const opts *o)
{
    char a[64], c[64], d[64], e[64], nb[96];
    printf("gpuprof analyze (%s mode): %zu rank(s)\n", o->compat ? "HTA-compatible" : "default", n);
    for (size_t i = 0; i < n; i++) {
        const rank_res *x = &r[i];
        printf("\n== rank %d: %s%s\n", x->v.rank, gp_trace_s(x->v.t, x->v.t->meta.source),
               x->v.step_filtered ? " (events after the last ProfilerStep dropped)" : "");
        if (!x->tb.valid) {
            printf("no GPU events\n");
        } else {
            const gp_temporal *t = &x->tb;
            printf("GPU span %s: idle %s (%.2f%%), compute %s (%.2f%%), non-compute %s (%.2f%%)\n",
                   gp_fmt_dur_auto(a, sizeof a, (double)t->span_ns),
                   gp_fmt_dur_auto(c, sizeof c, (double)t->idle_ns),
                   100.0 * (double)t->idle_ns / (double)t->span_ns,
                   gp_fmt_dur_auto(d, sizeof d, (double)t->compute_ns),
                   100.0 * (double)t->compute_ns / (double)t->span_ns,
                   gp_fmt_dur_auto(e, sizeof e, (double)t->non_compute_ns),
                   100.0 * (double)t->non_compute_ns / (double)t->span_ns);
        }
        if (x->ov_valid) printf("communication overlapped by computation: %.2f%%\n", x->ov_pct);
        if (x->ntop) {
            printf("\ntop kernels\n");
            static const char *const h[] = {"type", "kernel", "count", "total", "mean", "max"};
            gp_table *tb = gp_table_create(6, h, "llrrrr");
            for (size_t k = 0; k < x->ntop; k++) {
                const gp_topk *t = &x->top[k];
                const char *nm = t->name == GP_NO_INDEX ? "others" : gp_trace_s(x->v.t, t->name);
                gp_table_rowf(tb, "%s\t%s\t%llu\t%s\t%s\t%s", gp_ktype_name((gp_ktype)t->type),
                              short_name(nm, o->wide, nb, sizeof nb), (unsigned long long)t->count,
                              gp_fmt_dur_auto(a, sizeof a, (double)t->sum),
                              gp_fmt_dur_auto(c, sizeof c, t->mean),
                              gp_fmt_dur_auto(d, sizeof d, (double)t->max));
            }
            gp_table_print(tb, stdout, 0);
            gp_table_destroy(tb);
        }
        if (x->nidle) {
            printf("\nidle time per stream\n");
            static const char *const h[] = {"stream", "host_wait", "kernel_wait", "other"};
            gp_table *tb = gp_table_create(4, h, "rrrr");
            for (size_t k = 0; k < x->nidle; k++) {
                const gp_idle_row *q = &x->idle[k];
                gp_table_rowf(tb, "%lld\t%s\t%s\t%s", (long long)q->stream,
                              gp_fmt_dur_auto(a, sizeof a, (double)q->host_wait_ns),
                              gp_fmt_dur_auto(c, sizeof c, (double)q->kernel_wait_ns),
                              gp_fmt_dur_auto(d, sizeof d, (double)q->other_ns));
            }
            gp_table_print(tb, stdout, 0);
            gp_table_destroy(tb);
        }
        for (int set = 0; set < 2; set++) {
            const gp_launch_stats *l = &x->ls[set];
            if (!l->launches) continue;
            printf("\n%s: %llu launches, %llu short kernels, %llu runtime outliers, %llu "
                   "launch-delay outliers; mean call %s, mean delay %s\n",
                   set ? "driver/HIP launches" : "CUDA runtime launches (HTA set)",
                   (unsigned long long)l->launches, (unsigned long long)l->short_kernels,
                   (unsigned long long)l->runtime_outliers,
                   (unsigned long long)l->launch_delay_outliers,
                   gp_fmt_dur_auto(a, sizeof a, l->cpu_ns.mean),
                   gp_fmt_dur_auto(c, sizeof c, l->delay_ns.mean));
        }
        if (x->nqueue) {
            printf("\nqueue length per stream\n");
            static const char *const h[] = {"stream", "max", "mean", "full %", "launches"};
            gp_table *tb = gp_table_create(5, h, "rrrrr");
            for (size_t k = 0; k < x->nqueue; k++) {
                const gp_queue_row *q = &x->queue[k];
                gp_table_rowf(tb, "%lld\t%lld\t%.2f\t%.2f\t%llu", (long long)q->stream,
                              (long long)q->max, q->mean, q->full_pct,
                              (unsigned long long)q->launches);
            }
            gp_table_print(tb, stdout, 0);
            gp_table_destroy(tb);
        }
        text_extra(x);
    }
    text_stragglers(sg, nsg, o);
    int64_t tot = 0;
    for (unsigned s = 1; s < GP_KSTATES; s++) tot += kt->ns[s];
    if (tot) {
        printf("\nkernel type breakdown (all ranks)\n");
        for (unsigned s = 1; s < GP_KSTATES; s++) {
            if (!kt->seen[s]) continue;
            char lab[96];
            gp_kstate_label(s, lab, sizeof lab);
            printf("  %-40s %14s %6.1f%%\n", lab, gp_fmt_dur_auto(a, sizeof a, (double)kt->ns[s]),
                   100.0 * (double)kt->ns[s] / (double)tot);
        }
    }
}

static int parse_us(const char *opt, const char *val, int64_t *ns)
{
    char *end;
    double v = strtod(val, &end);
    if (*end || !(v >= 0) || v > 9e12) {
        fprintf(stderr, "gpuprof: %s expects a non-negative number of microseconds, got '%s'\n",
                opt, val);
        return -1;
    }
    *ns = (int64_t)llround(v * 1000.0);
    return 0;
}

/* The analyses of one rank in NGROUPS independent groups (each writes its
 * own fields of rank_res), so that even one rank keeps every core busy;
 * sets x->failed[g] on out of memory. */
#define NGROUPS 3

static void analyze_group(rank_res *x, int g, const opts *o)
{
    int bad = 0;
    switch (g) {
    case 0:
        memset(&x->kt, 0, sizeof x->kt);
        bad = gp_temporal_compute(&x->v, &x->tb) ||
              gp_comm_comp_overlap(&x->v, &x->ov_pct, &x->ov_valid) ||
              gp_ktype_time_add(&x->v, &x->kt) ||
              gp_top_kernels(&x->v, (int)o->top, o->ratio, &x->top, &x->ntop) ||
              gp_idle_breakdown(&x->v, o->kernel_wait_ns, &x->idle, &x->nidle) ||
              gp_bandwidth_compute(&x->v, &x->bw, &x->nbw);
        break;
    case 1:
        bad = gp_launch_compute(&x->v, GP_LAUNCH_HTA, &o->lo, &x->ls[0]) ||
              gp_launch_compute(&x->v, GP_LAUNCH_OTHER, &o->lo, &x->ls[1]);
        break;
    default:
        bad = gp_queue_length(&x->v, o->queue_full, &x->queue, &x->nqueue) ||
              gp_steps_compute(&x->v, &x->steps, &x->nsteps);
        break;
    }
    x->failed[g] = bad;
}

typedef struct worker {
    rank_res *res;
    size_t ntasks; /* ranks x NGROUPS */
    atomic_size_t *next;
    const opts *o;
} worker;

static void *worker_main(void *arg)
{
    worker *w = arg;
    for (size_t k; (k = atomic_fetch_add(w->next, 1)) < w->ntasks;)
        analyze_group(&w->res[k / NGROUPS], (int)(k % NGROUPS), w->o);
    return NULL;
}

/* Analyzes the ranks, one thread per core taking (rank, group) tasks. */
static void analyze_all(rank_res *res, size_t n, const opts *o)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    size_t nth = cores > 0 ? (size_t)cores : 1, ntasks = n * NGROUPS;
    if (nth > ntasks) nth = ntasks;
    atomic_size_t next;
    atomic_init(&next, 0);
    worker w = {res, ntasks, &next, o};
    if (nth <= 1) {
        worker_main(&w);
        return;
    }
    pthread_t *th = gp_xcalloc(nth, sizeof *th);
    int *started = gp_xcalloc(nth, sizeof *started);
    for (size_t k = 1; k < nth; k++)
        started[k] = pthread_create(&th[k], NULL, worker_main, &w) == 0;
    worker_main(&w); /* the tasks of threads that failed to start are left to this one */
    for (size_t k = 1; k < nth; k++)
        if (started[k]) pthread_join(th[k], NULL);
    free(th);
    free(started);
}

/* The timeline statistics read the traces, not the views: they run in a
 * thread of their own while the views are built and analyzed. */
typedef struct tl_job {
    rank_res *res;
    gp_trace **traces;
    size_t n;
    int failed;
    int64_t ns, cpu_ns; /* wall and CPU time the thread took */
} tl_job;

static void *tl_main(void *arg)
{
    tl_job *j = arg;
    int64_t t0 = gp_clock_mono_ns(), c0 = gp_clock_thread_cpu_ns();
    for (size_t i = 0; i < j->n; i++)
        if (gp_timeline_stats_compute(j->traces[i], &j->res[i].tl)) j->failed = 1;
    j->ns = gp_clock_mono_ns() - t0;
    j->cpu_ns = gp_clock_thread_cpu_ns() - c0;
    return NULL;
}

int gp_cmd_analyze(int argc, char **argv)
{
    opts o = {0};
    o.top = 10;
    o.ratio = 0.8;
    o.kernel_wait_ns = 30000;
    o.queue_full = 1024;
    o.straggler_z = 3.5;
    o.lo.runtime_cutoff_ns = 50000;
    o.lo.launch_delay_cutoff_ns = 100000;
    static const struct option lopts[] = {{"compat", required_argument, 0, 'c'},
                                          {"json", no_argument, 0, 'j'},
                                          {"top", required_argument, 0, 't'},
                                          {"duration-ratio", required_argument, 0, 'r'},
                                          {"kernel-wait-us", required_argument, 0, 'k'},
                                          {"runtime-cutoff-us", required_argument, 0, 'R'},
                                          {"delay-cutoff-us", required_argument, 0, 'D'},
                                          {"queue-full", required_argument, 0, 'q'},
                                          {"straggler-z", required_argument, 0, 'z'},
                                          {"wide", no_argument, 0, 'w'},
                                          {"help", no_argument, 0, 'h'},
                                          {0, 0, 0, 0}};
    int ch;
    optind = 1;
    while ((ch = getopt_long(argc, argv, "h", lopts, NULL)) != -1) {
        long lv;
        char *end;
        switch (ch) {
        case 'c':
            if (strcmp(optarg, "hta")) {
                fprintf(stderr, "gpuprof: --compat: only 'hta' is known, got '%s'\n", optarg);
                return 2;
            }
            o.compat = 1;
            break;
        case 'j':
            o.json = 1;
            break;
        case 'w':
            o.wide = 1;
            break;
        case 't':
            if ((lv = gp_cli_parse_count("--top", optarg)) < 0) return 2;
            o.top = lv;
            break;
        case 'q':
            if ((lv = gp_cli_parse_count("--queue-full", optarg)) < 0) return 2;
            o.queue_full = lv;
            break;
        case 'r':
            o.ratio = strtod(optarg, &end);
            if (*end || !(o.ratio >= 0 && o.ratio <= 1)) {
                fprintf(stderr, "gpuprof: --duration-ratio expects a number in [0, 1], got '%s'\n",
                        optarg);
                return 2;
            }
            break;
        case 'z':
            o.straggler_z = strtod(optarg, &end);
            if (*end || !(o.straggler_z > 0 && o.straggler_z < 1e9)) {
                fprintf(stderr, "gpuprof: --straggler-z expects a positive number, got '%s'\n",
                        optarg);
                return 2;
            }
            break;
        case 'k':
            if (parse_us("--kernel-wait-us", optarg, &o.kernel_wait_ns)) return 2;
            break;
        case 'R':
            if (parse_us("--runtime-cutoff-us", optarg, &o.lo.runtime_cutoff_ns)) return 2;
            break;
        case 'D':
            if (parse_us("--delay-cutoff-us", optarg, &o.lo.launch_delay_cutoff_ns)) return 2;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (optind >= argc) {
        usage(stderr);
        return 2;
    }
    gp_trace **traces;
    size_t n;
    int64_t tm[6], cpu[6];
    tm[0] = gp_clock_mono_ns();
    cpu[0] = gp_clock_thread_cpu_ns();
    int rc = gp_cli_load_traces(argv + optind, argc - optind, &traces, &n);
    if (rc) return rc;
    tm[1] = gp_clock_mono_ns();
    cpu[1] = gp_clock_thread_cpu_ns();
    /* a folder may hold other JSON files (expected results, configs): a
     * file without any trace event is no rank */
    size_t kept = 0;
    for (size_t i = 0; i < n; i++) {
        if (n > 1 && traces[i]->meta.events_read == 0) {
            gp_trace_destroy(traces[i]);
            continue;
        }
        traces[kept++] = traces[i];
    }
    n = kept;
    /* order by rank (HTA's dictionary of ranks is sorted) */
    int *ranks = gp_xcalloc(n ? n : 1, sizeof *ranks);
    for (size_t i = 0; i < n; i++) {
        int rk = rank_of(traces[i]);
        ranks[i] = rk >= 0 ? rk : (int)i;
    }
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && ranks[j] < ranks[j - 1]; j--) {
            int x = ranks[j];
            ranks[j] = ranks[j - 1];
            ranks[j - 1] = x;
            gp_trace *y = traces[j];
            traces[j] = traces[j - 1];
            traces[j - 1] = y;
        }
    gp_hview *views = gp_xcalloc(n ? n : 1, sizeof *views);
    rank_res *res = gp_xcalloc(n ? n : 1, sizeof *res);
    gp_err err = {0};
    gp_hta_opts ho = {o.compat};
    gp_ktype_time kt;
    memset(&kt, 0, sizeof kt);
    gp_straggler_row *sg = NULL;
    tl_job tj = {res, traces, n, 0, 0, 0};
    pthread_t tl_th;
    int tl_started =
        sysconf(_SC_NPROCESSORS_ONLN) > 1 && pthread_create(&tl_th, NULL, tl_main, &tj) == 0;
    if (!tl_started) tl_main(&tj);
    if (gp_hta_prepare(traces, ranks, n, &ho, views, &err)) {
        fprintf(stderr, "gpuprof: %s\n", err.msg);
        rc = 3;
        if (tl_started) pthread_join(tl_th, NULL);
        goto out;
    }
    tm[2] = gp_clock_mono_ns();
    cpu[2] = gp_clock_thread_cpu_ns();
    for (size_t i = 0; i < n; i++) res[i].v = views[i];
    analyze_all(res, n, &o);
    tm[3] = gp_clock_mono_ns();
    cpu[3] = gp_clock_thread_cpu_ns();
    if (tl_started) pthread_join(tl_th, NULL);
    tm[4] = gp_clock_mono_ns();
    cpu[4] = gp_clock_thread_cpu_ns();
    for (size_t i = 0; i < n; i++) {
        if (res[i].failed[0] || res[i].failed[1] || res[i].failed[2] || tj.failed) {
            fprintf(stderr, "gpuprof: out of memory during the analysis\n");
            rc = 3;
            goto out;
        }
        for (unsigned s = 0; s < GP_KSTATES; s++) {
            kt.ns[s] += res[i].kt.ns[s];
            kt.seen[s] |= res[i].kt.seen[s];
        }
    }
    /* stragglers: ranks with GPU work, scored against each other */
    size_t nsg = 0;
    for (size_t i = 0; i < n; i++) nsg += res[i].tb.valid;
    if (nsg >= 2) {
        int *rk = gp_xcalloc(nsg, sizeof *rk);
        int64_t *cm = gp_xcalloc(nsg, sizeof *cm), *id = gp_xcalloc(nsg, sizeof *id);
        sg = gp_xcalloc(nsg, sizeof *sg);
        size_t k = 0;
        for (size_t i = 0; i < n; i++)
            if (res[i].tb.valid) {
                rk[k] = res[i].v.rank;
                cm[k] = res[i].tb.compute_ns;
                id[k++] = res[i].tb.idle_ns;
            }
        int e = gp_stragglers(rk, cm, id, nsg, o.straggler_z, sg);
        free(rk);
        free(cm);
        free(id);
        if (e) {
            fprintf(stderr, "gpuprof: out of memory during the analysis\n");
            rc = 3;
            goto out;
        }
    } else {
        nsg = 0;
    }
    if (o.json)
        rc = json_report(res, n, &kt, sg, nsg, &o);
    else
        text_report(res, n, &kt, sg, nsg, &o);
    tm[5] = gp_clock_mono_ns();
    cpu[5] = gp_clock_thread_cpu_ns();
    if (getenv("GPUPROF_ANALYZE_TIMES")) { /* for bench/: where the time goes */
        static const char *const ph[5] = {"load", "views", "analyses", "wait for timeline",
                                          "output"};
        fprintf(stderr, "analyze times, wall / CPU of the main thread (ms):");
        for (int k = 0; k < 5; k++)
            fprintf(stderr, " %s %.1f / %.1f,", ph[k], (double)(tm[k + 1] - tm[k]) / 1e6,
                    (double)(cpu[k + 1] - cpu[k]) / 1e6);
        fprintf(stderr, " timeline thread %.1f / %.1f\n", (double)tj.ns / 1e6,
                (double)tj.cpu_ns / 1e6);
    }
out:
    for (size_t i = 0; i < n; i++) {
        gp_hview_free(&views[i]);
        free(res[i].top);
        free(res[i].idle);
        free(res[i].queue);
        free(res[i].bw);
        free(res[i].steps);
    }
    free(sg);
    free(views);
    free(res);
    free(ranks);
    gp_cli_free_traces(traces, n);
    return rc;
}
