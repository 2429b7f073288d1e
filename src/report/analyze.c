/* report/analyze.c: the result writers of `gpuprof analyze` (text report and
 * JSON with the keys of HTA's expected.hta.json), shared by the CLI and the
 * server. */
#include "report/analyze.h"
#include "core/table.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static double pct(const gp_analyze_opts *o, int64_t part, int64_t whole, int nd)
{
    double r = 100.0 * ((double)part / (double)whole);
    return o->compat ? round_dec(r, nd) : r;
}

static void json_ranks(gp_sbuf *b, const gp_analyze_rank *r, size_t n, const gp_analyze_opts *o)
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
        gp_json_int(b, r[i].rank);
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
static void json_extra(gp_sbuf *b, const gp_analyze_rank *r, size_t n, const gp_straggler_row *sg,
                       size_t nsg, const gp_analyze_opts *o)
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
            gp_json_int(b, r[i].rank);
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
        gp_json_int(b, r[i].rank);
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
            gp_json_int(b, r[i].rank);
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

void gp_report_analyze_json(gp_sbuf *out, const gp_analyze_result *res, const gp_analyze_opts *o)
{
    const gp_analyze_rank *r = res->r;
    size_t n = res->n, nsg = res->nsg;
    const gp_ktype_time *kt = &res->kt;
    const gp_straggler_row *sg = res->sg;
    gp_sbuf *b = out;
    gp_sbuf_putc(b, '{');
    gp_json_key(b, "mode", 0);
    gp_json_str(b, o->compat ? "hta" : "default");
    gp_json_key(b, "ranks", 1);
    gp_sbuf_putc(b, '[');
    for (size_t i = 0; i < n; i++) gp_sbuf_printf(b, "%s%d", i ? "," : "", r[i].rank);
    gp_sbuf_putc(b, ']');
    json_ranks(b, r, n, o);

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
    gp_json_key(b, "kernel_type_breakdown", 1);
    gp_sbuf_putc(b, '[');
    for (size_t i = 0; i < no; i++) {
        char lab[96];
        gp_kstate_label(order[i], lab, sizeof lab);
        gp_sbuf_printf(b, "%s{", i ? "," : "");
        gp_json_key(b, "type", 0);
        gp_json_str(b, lab);
        gp_json_key(b, "us", 1);
        gp_json_num(b, us(kt->ns[order[i]]));
        gp_json_key(b, "pct", 1);
        gp_json_num(b, tot ? pct(o, kt->ns[order[i]], tot, 1) : NAN);
        gp_sbuf_putc(b, '}');
    }
    gp_sbuf_putc(b, ']');

    for (int others = 0; others < 2; others++) {
        gp_json_key(b, others ? "top_kernels_others" : "top_kernels", 1);
        gp_sbuf_putc(b, '[');
        int first = 1;
        for (size_t i = 0; i < n; i++)
            for (size_t k = 0; k < r[i].ntop; k++) {
                const gp_topk *t = &r[i].top[k];
                if ((t->name == GP_NO_INDEX) != others) continue;
                gp_sbuf_printf(b, "%s{", first ? "" : ",");
                first = 0;
                gp_json_key(b, "rank", 0);
                gp_json_int(b, r[i].rank);
                gp_json_key(b, "name", 1);
                gp_json_str(b, others ? "others" : r[i].top_name[k]);
                gp_json_key(b, "type", 1);
                gp_json_str(b, gp_ktype_name((gp_ktype)t->type));
                gp_json_key(b, "count", 1);
                gp_json_int(b, (int64_t)t->count);
                gp_json_key(b, "sum_us", 1);
                gp_json_num(b, us(t->sum));
                gp_json_key(b, "mean_us", 1);
                gp_json_num(b, t->mean / 1000.0);
                gp_json_key(b, "min_us", 1);
                gp_json_num(b, us(t->min));
                gp_json_key(b, "max_us", 1);
                gp_json_num(b, us(t->max));
                gp_json_key(b, "std_us", 1);
                gp_json_num(b, t->std / 1000.0);
                gp_sbuf_putc(b, '}');
            }
        gp_sbuf_putc(b, ']');
    }

    gp_json_key(b, "comm_comp_overlap", 1);
    gp_sbuf_putc(b, '[');
    for (size_t i = 0; i < n; i++) {
        gp_sbuf_printf(b, "%s{", i ? "," : "");
        gp_json_key(b, "rank", 0);
        gp_json_int(b, r[i].rank);
        gp_json_key(b, "pct", 1);
        gp_json_num(b, r[i].ov_valid ? (o->compat ? round_dec(r[i].ov_pct, 2) : r[i].ov_pct) : NAN);
        gp_sbuf_putc(b, '}');
    }
    gp_sbuf_putc(b, ']');

    gp_json_key(b, "idle_breakdown", 1);
    gp_sbuf_putc(b, '[');
    int first = 1;
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < r[i].nidle; k++) {
            const gp_idle_row *d = &r[i].idle[k];
            gp_sbuf_printf(b, "%s{", first ? "" : ",");
            first = 0;
            gp_json_key(b, "rank", 0);
            gp_json_int(b, r[i].rank);
            gp_json_key(b, "stream", 1);
            gp_json_int(b, d->stream);
            gp_json_key(b, "host_wait_us", 1);
            gp_json_num(b, us(d->host_wait_ns));
            gp_json_key(b, "kernel_wait_us", 1);
            gp_json_num(b, us(d->kernel_wait_ns));
            gp_json_key(b, "other_us", 1);
            gp_json_num(b, us(d->other_ns));
            gp_sbuf_putc(b, '}');
        }
    gp_sbuf_putc(b, ']');

    for (int set = 0; set < 2; set++) {
        gp_json_key(b, set ? "launch_stats_driver_hip" : "launch_stats", 1);
        gp_sbuf_putc(b, '[');
        for (size_t i = 0; i < n; i++) {
            const gp_launch_stats *l = &r[i].ls[set];
            gp_sbuf_printf(b, "%s{", i ? "," : "");
            gp_json_key(b, "rank", 0);
            gp_json_int(b, r[i].rank);
            gp_json_key(b, "launches", 1);
            gp_json_int(b, (int64_t)l->launches);
            gp_json_key(b, "short_kernels", 1);
            gp_json_int(b, (int64_t)l->short_kernels);
            gp_json_key(b, "runtime_outliers", 1);
            gp_json_int(b, (int64_t)l->runtime_outliers);
            gp_json_key(b, "launch_delay_outliers", 1);
            gp_json_int(b, (int64_t)l->launch_delay_outliers);
            const gp_stats *st[3] = {&l->cpu_ns, &l->gpu_ns, &l->delay_ns};
            static const char *const nm[3] = {"cpu_duration", "gpu_duration", "launch_delay"};
            for (int s = 0; s < 3; s++) {
                char key[64];
                int have = st[s]->count > 0;
                snprintf(key, sizeof key, "%s_mean_us", nm[s]);
                gp_json_key(b, key, 1);
                gp_json_num(b, have ? st[s]->mean / 1000.0 : NAN);
                snprintf(key, sizeof key, "%s_p50_us", nm[s]);
                gp_json_key(b, key, 1);
                gp_json_num(b, have ? st[s]->p50 / 1000.0 : NAN);
                snprintf(key, sizeof key, "%s_p95_us", nm[s]);
                gp_json_key(b, key, 1);
                gp_json_num(b, have ? st[s]->p95 / 1000.0 : NAN);
                snprintf(key, sizeof key, "%s_max_us", nm[s]);
                gp_json_key(b, key, 1);
                gp_json_num(b, have ? us(st[s]->max) : NAN);
            }
            gp_sbuf_putc(b, '}');
        }
        gp_sbuf_putc(b, ']');
    }

    gp_json_key(b, "queue_length", 1);
    gp_sbuf_putc(b, '[');
    first = 1;
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < r[i].nqueue; k++) {
            const gp_queue_row *q = &r[i].queue[k];
            gp_sbuf_printf(b, "%s{", first ? "" : ",");
            first = 0;
            gp_json_key(b, "rank", 0);
            gp_json_int(b, r[i].rank);
            gp_json_key(b, "stream", 1);
            gp_json_int(b, q->stream);
            gp_json_key(b, "max", 1);
            gp_json_int(b, q->max);
            gp_json_key(b, "mean", 1);
            gp_json_num(b, q->mean);
            gp_json_key(b, "full_pct", 1);
            gp_json_num(b, q->full_pct);
            gp_json_key(b, "launches", 1);
            gp_json_int(b, (int64_t)q->launches);
            gp_sbuf_putc(b, '}');
        }
    gp_sbuf_putc(b, ']');
    json_extra(b, r, n, sg, nsg, o);
    gp_sbuf_puts(b, "}\n");
}

static const char *short_name(const char *s, int wide, char *buf, size_t n)
{
    size_t len = strlen(s);
    if (wide || len <= 60) return s;
    snprintf(buf, n, "%.57s...", s);
    return buf;
}

/* memory bandwidth, CPU/GPU timeline and per-step tables of one rank */
static void text_extra(FILE *f, const gp_analyze_rank *x)
{
    char a[64], c[64], d[64], e[64], fb[64];
    const gp_timeline_stats *t = &x->tl;
    if (t->span_ns > 0) {
        fprintf(f, "\nCPU/GPU timeline: span %s, CPU active %s (%.1f%%)",
                gp_fmt_dur_auto(a, sizeof a, (double)t->span_ns),
                gp_fmt_dur_auto(c, sizeof c, (double)t->cpu_active_ns),
                100.0 * (double)t->cpu_active_ns / (double)t->span_ns);
        if (t->gpu_valid)
            fprintf(f, ", GPU active %s (%.1f%%), both %s, CPU only %s, GPU only %s",
                    gp_fmt_dur_auto(d, sizeof d, (double)t->gpu_active_ns),
                    100.0 * (double)t->gpu_active_ns / (double)t->span_ns,
                    gp_fmt_dur_auto(e, sizeof e, (double)t->overlap_ns),
                    gp_fmt_dur_auto(fb, sizeof fb, (double)t->cpu_only_ns),
                    gp_fmt_dur_auto(a, sizeof a, (double)t->gpu_only_ns));
        else
            fprintf(f, ", GPU active N/A (no GPU work)");
        fprintf(f, ", idle %s\n", gp_fmt_dur_auto(c, sizeof c, (double)t->idle_ns));
    }
    if (x->nbw) {
        fprintf(f, "\nmemory bandwidth per copy kind (GB/s: total bytes / total time; per copy: "
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
        gp_table_print(tb, f, 0);
        gp_table_destroy(tb);
    }
    if (x->nsteps) {
        fprintf(f, "\nsteps (ProfilerStep#N; GPU work by launch)\n");
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
                          gp_fmt_dur(fb, sizeof fb, (double)s->compute_ns, u[4]),
                          (unsigned long long)s->kernels);
        }
        gp_table_print(tb, f, 0);
        gp_table_destroy(tb);
    }
}

static void text_stragglers(FILE *f, const gp_straggler_row *sg, size_t nsg,
                            const gp_analyze_opts *o)
{
    if (!nsg) return;
    char a[64], c[64];
    fprintf(f, "\nranks by GPU compute time (robust z-scores; outlier when |z| > %.2f)\n",
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
    gp_table_print(tb, f, 0);
    gp_table_destroy(tb);
}

void gp_report_analyze_text(FILE *f, const gp_analyze_result *res, const gp_analyze_opts *o)
{
    const gp_analyze_rank *r = res->r;
    size_t n = res->n, nsg = res->nsg;
    const gp_ktype_time *kt = &res->kt;
    const gp_straggler_row *sg = res->sg;
    char a[64], c[64], d[64], e[64], nb[96];
    fprintf(f, "gpuprof analyze (%s mode): %zu rank(s)\n", o->compat ? "HTA-compatible" : "default",
            n);
    for (size_t i = 0; i < n; i++) {
        const gp_analyze_rank *x = &r[i];
        fprintf(f, "\n== rank %d: %s%s\n", x->rank, x->source,
                x->step_filtered ? " (events after the last ProfilerStep dropped)" : "");
        if (!x->tb.valid) {
            fprintf(f, "no GPU events\n");
        } else {
            const gp_temporal *t = &x->tb;
            fprintf(f,
                    "GPU span %s: idle %s (%.2f%%), compute %s (%.2f%%), non-compute %s (%.2f%%)\n",
                    gp_fmt_dur_auto(a, sizeof a, (double)t->span_ns),
                    gp_fmt_dur_auto(c, sizeof c, (double)t->idle_ns),
                    100.0 * (double)t->idle_ns / (double)t->span_ns,
                    gp_fmt_dur_auto(d, sizeof d, (double)t->compute_ns),
                    100.0 * (double)t->compute_ns / (double)t->span_ns,
                    gp_fmt_dur_auto(e, sizeof e, (double)t->non_compute_ns),
                    100.0 * (double)t->non_compute_ns / (double)t->span_ns);
        }
        if (x->ov_valid) fprintf(f, "communication overlapped by computation: %.2f%%\n", x->ov_pct);
        if (x->ntop) {
            fprintf(f, "\ntop kernels\n");
            static const char *const h[] = {"type", "kernel", "count", "total", "mean", "max"};
            gp_table *tb = gp_table_create(6, h, "llrrrr");
            for (size_t k = 0; k < x->ntop; k++) {
                const gp_topk *t = &x->top[k];
                const char *nm = t->name == GP_NO_INDEX ? "others" : x->top_name[k];
                gp_table_rowf(tb, "%s\t%s\t%llu\t%s\t%s\t%s", gp_ktype_name((gp_ktype)t->type),
                              short_name(nm, o->wide, nb, sizeof nb), (unsigned long long)t->count,
                              gp_fmt_dur_auto(a, sizeof a, (double)t->sum),
                              gp_fmt_dur_auto(c, sizeof c, t->mean),
                              gp_fmt_dur_auto(d, sizeof d, (double)t->max));
            }
            gp_table_print(tb, f, 0);
            gp_table_destroy(tb);
        }
        if (x->nidle) {
            fprintf(f, "\nidle time per stream\n");
            static const char *const h[] = {"stream", "host_wait", "kernel_wait", "other"};
            gp_table *tb = gp_table_create(4, h, "rrrr");
            for (size_t k = 0; k < x->nidle; k++) {
                const gp_idle_row *q = &x->idle[k];
                gp_table_rowf(tb, "%lld\t%s\t%s\t%s", (long long)q->stream,
                              gp_fmt_dur_auto(a, sizeof a, (double)q->host_wait_ns),
                              gp_fmt_dur_auto(c, sizeof c, (double)q->kernel_wait_ns),
                              gp_fmt_dur_auto(d, sizeof d, (double)q->other_ns));
            }
            gp_table_print(tb, f, 0);
            gp_table_destroy(tb);
        }
        for (int set = 0; set < 2; set++) {
            const gp_launch_stats *l = &x->ls[set];
            if (!l->launches) continue;
            fprintf(f,
                    "\n%s: %llu launches, %llu short kernels, %llu runtime outliers, %llu "
                    "launch-delay outliers; mean call %s, mean delay %s\n",
                    set ? "driver/HIP launches" : "CUDA runtime launches (HTA set)",
                    (unsigned long long)l->launches, (unsigned long long)l->short_kernels,
                    (unsigned long long)l->runtime_outliers,
                    (unsigned long long)l->launch_delay_outliers,
                    gp_fmt_dur_auto(a, sizeof a, l->cpu_ns.mean),
                    gp_fmt_dur_auto(c, sizeof c, l->delay_ns.mean));
        }
        if (x->nqueue) {
            fprintf(f, "\nqueue length per stream\n");
            static const char *const h[] = {"stream", "max", "mean", "full %", "launches"};
            gp_table *tb = gp_table_create(5, h, "rrrrr");
            for (size_t k = 0; k < x->nqueue; k++) {
                const gp_queue_row *q = &x->queue[k];
                gp_table_rowf(tb, "%lld\t%lld\t%.2f\t%.2f\t%llu", (long long)q->stream,
                              (long long)q->max, q->mean, q->full_pct,
                              (unsigned long long)q->launches);
            }
            gp_table_print(tb, f, 0);
            gp_table_destroy(tb);
        }
        text_extra(f, x);
    }
    text_stragglers(f, sg, nsg, o);
    int64_t tot = 0;
    for (unsigned s = 1; s < GP_KSTATES; s++) tot += kt->ns[s];
    if (tot) {
        fprintf(f, "\nkernel type breakdown (all ranks)\n");
        for (unsigned s = 1; s < GP_KSTATES; s++) {
            if (!kt->seen[s]) continue;
            char lab[96];
            gp_kstate_label(s, lab, sizeof lab);
            fprintf(f, "  %-40s %14s %6.1f%%\n", lab,
                    gp_fmt_dur_auto(a, sizeof a, (double)kt->ns[s]),
                    100.0 * (double)kt->ns[s] / (double)tot);
        }
    }
}
