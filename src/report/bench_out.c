/* report/bench_out.c: the writers of `gpuprof bench` and `gpuprof health
 * --bench`: a text table per device and JSON whose keys carry their units. */
#include "report/bench_out.h"
#include "core/table.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *fmt_num(char *buf, size_t n, double v)
{
    if (isnan(v))
        snprintf(buf, n, "N/A");
    else if (fabs(v) >= 100)
        snprintf(buf, n, "%.1f", v);
    else if (fabs(v) >= 1)
        snprintf(buf, n, "%.2f", v);
    else
        snprintf(buf, n, "%.4g", v);
    return buf;
}

static void peak_cell(char *buf, size_t n, const gp_bench_fig *f)
{
    if (f->peak_valid)
        snprintf(buf, n, "%.1f%% of %.0f", 100.0 * f->st.mean / f->peak, f->peak);
    else if (gp_bench_info_of(f->test)->higher_better)
        snprintf(buf, n, "peak unknown");
    else
        snprintf(buf, n, "-");
}

void gp_bench_write_text(FILE *out, const gp_bench_result *r)
{
    fprintf(out, "== gpuprof bench%s on %s (gpuprof %s): %zu device(s)\n",
            r->quick ? " --quick" : "", r->host, r->version, r->ndev);
    if (!r->ndev) {
        fprintf(out, "%s\n", r->none_why);
        return;
    }
    fprintf(out,
            "each figure: repetitions until the 95%% CI of the mean is within %.3g%% or %.3g s "
            "(CI %% marked * when the cap stopped it)\n",
            r->target_ci_pct, r->cap_s);
    for (size_t d = 0; d < r->ndev; d++) {
        const gp_bench_dev_result *dv = &r->devs[d];
        fprintf(out, "\n%s  %s  [%s; %s]\n", dv->sel, dv->name, dv->backend, dv->driver);
        const char *hd[] = {"Test",    "Unit", "Mean", "Median",    "Min",     "Max",
                            "CI95 +-", "CI %", "N",    "% of peak", "Verified"};
        gp_table *tb = gp_table_create(11, hd, "llrrrrrrrll");
        for (int t = 0; t < GP_BT__COUNT; t++) {
            const gp_bench_fig *f = &dv->figs[t];
            if (!f->selected) continue;
            const gp_bench_info *in = gp_bench_info_of(f->test);
            if (!f->valid) {
                const char *cells[] = {in->key, in->unit, "-", "-", "-",   "-",
                                       "-",     "-",      "-", "-", f->why};
                gp_table_row(tb, cells);
                continue;
            }
            char mean[32], med[32], mn[32], mx[32], ci[32], cip[32], n[32], pk[64];
            fmt_num(mean, sizeof mean, f->st.mean);
            fmt_num(med, sizeof med, f->st.median);
            fmt_num(mn, sizeof mn, f->st.min);
            fmt_num(mx, sizeof mx, f->st.max);
            fmt_num(ci, sizeof ci, f->st.ci95);
            snprintf(cip, sizeof cip, "%.2f%s", f->st.ci_pct, f->st.converged ? "" : "*");
            snprintf(n, sizeof n, "%zu", f->st.n);
            peak_cell(pk, sizeof pk, f);
            const char *cells[] = {
                in->key, in->unit, mean, med, mn, mx, ci, cip, n, pk, f->verified ? "yes" : "no"};
            gp_table_row(tb, cells);
        }
        gp_table_print(tb, out, 0);
        gp_table_destroy(tb);
        /* sweeps */
        for (int t = 0; t < GP_BT__COUNT; t++) {
            const gp_bench_fig *f = &dv->figs[t];
            if (!f->valid || !f->nsweep) continue;
            char hb[32];
            fprintf(out, "  %s (GB/s) by size:", gp_bench_info_of(f->test)->key);
            for (size_t k = 0; k < f->nsweep; k++)
                fprintf(out, " %s %.2f%s", gp_fmt_bytes(hb, sizeof hb, (double)f->sweep[k].bytes),
                        f->sweep[k].st.mean, k + 1 < f->nsweep ? "," : "");
            if (f->half_peak_bytes > 0)
                fprintf(out, "; half of the best reached at %s\n",
                        gp_fmt_bytes(hb, sizeof hb, (double)f->half_peak_bytes));
            else
                fprintf(out, "\n");
        }
        /* compute kernels: their independent chains per work-item */
        int nchains = 0;
        for (int t = 0; t < GP_BT__COUNT; t++) {
            const gp_bench_fig *f = &dv->figs[t];
            if (!f->valid || !f->chains) continue;
            fprintf(out, "%s %s %d (%s)", nchains++ ? "," : "  independent chains per work-item:",
                    gp_bench_info_of(f->test)->key, f->chains,
                    f->chains_how == GP_BENCH_CHAINS_FASTEST
                        ? "the fastest of 16..256"
                        : gp_bench_chains_how_name(f->chains_how));
        }
        if (nchains) fputc('\n', out);
        if (dv->peaks.mem_valid || dv->peaks.fp32_valid)
            fprintf(out, "  peaks: memory %s%s%s\n",
                    dv->peaks.mem_valid ? dv->peaks.mem_src : "unknown",
                    dv->peaks.fp32_valid ? "; compute " : "",
                    dv->peaks.fp32_valid ? dv->peaks.compute_src : "");
        else
            fprintf(out,
                    "  peaks: unknown (the %s API reports no memory clock, bus width or FMA "
                    "rate)\n",
                    dv->backend);
    }
}

static void json_stat(gp_sbuf *b, const char *key, const gp_bench_stat *st, int comma)
{
    gp_json_key(b, key, comma);
    gp_sbuf_puts(b, "{\"mean\":");
    gp_json_num(b, st->mean);
    gp_sbuf_puts(b, ",\"median\":");
    gp_json_num(b, st->median);
    gp_sbuf_puts(b, ",\"min\":");
    gp_json_num(b, st->min);
    gp_sbuf_puts(b, ",\"max\":");
    gp_json_num(b, st->max);
    gp_sbuf_puts(b, ",\"ci95\":");
    gp_json_num(b, st->ci95);
    gp_sbuf_puts(b, ",\"ci_pct\":");
    gp_json_num(b, st->ci_pct);
    gp_sbuf_puts(b, ",\"converged\":");
    gp_sbuf_puts(b, st->converged ? "true" : "false");
    gp_sbuf_puts(b, ",\"n\":");
    gp_json_int(b, (int64_t)st->n);
    gp_sbuf_puts(b, ",\"samples\":[");
    for (size_t i = 0; i < st->n; i++) {
        if (i) gp_sbuf_putc(b, ',');
        gp_json_num(b, st->samples[i]);
    }
    gp_sbuf_puts(b, "]}");
}

void gp_bench_write_json(gp_sbuf *b, const gp_bench_result *r)
{
    gp_sbuf_puts(b, "{\"host\":");
    gp_json_str(b, r->host);
    gp_sbuf_puts(b, ",\"gpuprof_version\":");
    gp_json_str(b, r->version);
    gp_sbuf_puts(b, ",\"quick\":");
    gp_sbuf_puts(b, r->quick ? "true" : "false");
    gp_sbuf_puts(b, ",\"target_ci_pct\":");
    gp_json_num(b, r->target_ci_pct);
    gp_sbuf_puts(b, ",\"time_cap_s\":");
    gp_json_num(b, r->cap_s);
    gp_sbuf_puts(b, ",\"duration_s\":");
    gp_json_num(b, (double)r->duration_ns / 1e9);
    if (!r->ndev) {
        gp_sbuf_puts(b, ",\"no_device\":");
        gp_json_str(b, r->none_why);
    }
    gp_sbuf_puts(b, ",\"devices\":[");
    for (size_t d = 0; d < r->ndev; d++) {
        const gp_bench_dev_result *dv = &r->devs[d];
        if (d) gp_sbuf_putc(b, ',');
        gp_sbuf_puts(b, "{\"device\":");
        gp_json_str(b, dv->sel);
        gp_sbuf_puts(b, ",\"backend\":");
        gp_json_str(b, dv->backend);
        gp_sbuf_puts(b, ",\"name\":");
        gp_json_str(b, dv->name);
        gp_sbuf_puts(b, ",\"driver\":");
        gp_json_str(b, dv->driver);
        gp_sbuf_puts(b, ",\"peak_memory_GBps\":");
        gp_json_num(b, dv->peaks.mem_valid ? dv->peaks.mem_GBps : NAN);
        gp_sbuf_puts(b, ",\"peak_fp32_GFLOPS\":");
        gp_json_num(b, dv->peaks.fp32_valid ? dv->peaks.fp32_GFLOPS : NAN);
        gp_sbuf_puts(b, ",\"figures\":{");
        int first = 1;
        for (int t = 0; t < GP_BT__COUNT; t++) {
            const gp_bench_fig *f = &dv->figs[t];
            if (!f->selected) continue;
            const gp_bench_info *in = gp_bench_info_of(f->test);
            gp_json_key(b, in->key, !first);
            first = 0;
            gp_sbuf_puts(b, "{\"unit\":");
            gp_json_str(b, in->unit);
            gp_sbuf_puts(b, ",\"valid\":");
            gp_sbuf_puts(b, f->valid ? "true" : "false");
            if (!f->valid) {
                gp_sbuf_puts(b, ",\"reason\":");
                gp_json_str(b, f->why);
                gp_sbuf_putc(b, '}');
                continue;
            }
            gp_sbuf_puts(b, ",\"higher_is_better\":");
            gp_sbuf_puts(b, in->higher_better ? "true" : "false");
            gp_sbuf_puts(b, ",\"verified\":");
            gp_sbuf_puts(b, f->verified ? "true" : "false");
            gp_sbuf_puts(b, ",\"work_per_rep\":");
            gp_json_num(b, f->work);
            gp_sbuf_puts(b, ",\"peak\":");
            gp_json_num(b, f->peak_valid ? f->peak : NAN);
            gp_sbuf_puts(b, ",\"pct_of_peak\":");
            gp_json_num(b, f->peak_valid ? 100.0 * f->st.mean / f->peak : NAN);
            if (f->peak_valid) {
                gp_sbuf_puts(b, ",\"peak_source\":");
                gp_json_str(b, f->peak_src);
            }
            gp_sbuf_putc(b, ',');
            json_stat(b, "stats", &f->st, 0);
            if (f->chains) {
                gp_sbuf_puts(b, ",\"chains_per_work_item\":");
                gp_json_int(b, f->chains);
                gp_sbuf_puts(b, ",\"chains_chosen\":");
                gp_json_str(b, gp_bench_chains_how_name(f->chains_how));
            }
            if (f->nsweep) {
                gp_sbuf_puts(b, ",\"half_peak_bytes\":");
                if (f->half_peak_bytes > 0)
                    gp_json_int(b, f->half_peak_bytes);
                else
                    gp_sbuf_puts(b, "null");
                gp_sbuf_puts(b, ",\"sweep\":[");
                for (size_t k = 0; k < f->nsweep; k++) {
                    if (k) gp_sbuf_putc(b, ',');
                    gp_sbuf_puts(b, "{\"bytes\":");
                    gp_json_int(b, f->sweep[k].bytes);
                    gp_sbuf_putc(b, ',');
                    json_stat(b, "stats", &f->sweep[k].st, 0);
                    gp_sbuf_putc(b, '}');
                }
                gp_sbuf_putc(b, ']');
            }
            gp_sbuf_putc(b, '}');
        }
        gp_sbuf_puts(b, "}}");
    }
    gp_sbuf_puts(b, "]}\n");
}

void gp_bench_write_health_text(FILE *out, const gp_bench_result *r, const gp_bench_health *h)
{
    fprintf(out,
            "== gpuprof health --bench: %zu figure(s), %zu flagged (below %.0f%% of the peak or "
            "%.0f%% of the baseline%s%s)\n",
            h->n, h->flagged, 100 * h->opts.min_peak_share, 100 * h->opts.min_baseline_share,
            h->opts.store ? " from " : "; no baseline store", h->opts.store ? h->opts.store : "");
    if (!r->ndev) {
        fprintf(out, "%s\n", r->none_why);
        return;
    }
    const char *hd[] = {"Device",   "Figure",      "Value",  "% of peak",
                        "Baseline", "vs baseline", "Verdict"};
    gp_table *tb = gp_table_create(7, hd, "llrrrrl");
    for (size_t i = 0; i < h->n; i++) {
        const gp_bench_health_row *x = &h->rows[i];
        const gp_bench_fig *f = &r->devs[x->dev].figs[x->test];
        char v[48], pk[32], bs[48], vs[32];
        char num[32];
        snprintf(v, sizeof v, "%s %s", fmt_num(num, sizeof num, x->value),
                 gp_bench_info_of(x->test)->unit);
        if (isnan(x->peak_share))
            snprintf(pk, sizeof pk, "%s",
                     gp_bench_info_of(x->test)->higher_better ? "peak unknown" : "-");
        else
            snprintf(pk, sizeof pk, "%.1f%%", 100 * x->peak_share);
        if (x->base.valid)
            snprintf(bs, sizeof bs, "%s (%zu runs)", fmt_num(num, sizeof num, x->base.mean),
                     x->base.runs);
        else
            snprintf(bs, sizeof bs, "none");
        if (isnan(x->base_share))
            snprintf(vs, sizeof vs, "-");
        else
            snprintf(vs, sizeof vs, "%.1f%%", 100 * x->base_share);
        const char *cells[] = {r->devs[x->dev].sel,
                               gp_bench_info_of(x->test)->key,
                               v,
                               pk,
                               bs,
                               vs,
                               x->flag == GP_BF_FAILED ? f->why : gp_bench_flag_name(x->flag)};
        gp_table_row(tb, cells);
    }
    gp_table_print(tb, out, 0);
    gp_table_destroy(tb);
}

void gp_bench_write_health_json(gp_sbuf *b, const gp_bench_result *r, const gp_bench_health *h)
{
    gp_sbuf_puts(b, "{\"flagged\":");
    gp_json_int(b, (int64_t)h->flagged);
    gp_sbuf_puts(b, ",\"min_peak_share\":");
    gp_json_num(b, h->opts.min_peak_share);
    gp_sbuf_puts(b, ",\"min_baseline_share\":");
    gp_json_num(b, h->opts.min_baseline_share);
    if (!r->ndev) {
        gp_sbuf_puts(b, ",\"no_device\":");
        gp_json_str(b, r->none_why);
    }
    gp_sbuf_puts(b, ",\"figures\":[");
    for (size_t i = 0; i < h->n; i++) {
        const gp_bench_health_row *x = &h->rows[i];
        if (i) gp_sbuf_putc(b, ',');
        gp_sbuf_puts(b, "{\"device\":");
        gp_json_str(b, r->devs[x->dev].sel);
        gp_sbuf_puts(b, ",\"figure\":");
        gp_json_str(b, gp_bench_info_of(x->test)->key);
        gp_sbuf_puts(b, ",\"value\":");
        gp_json_num(b, x->value);
        gp_sbuf_puts(b, ",\"peak_share\":");
        gp_json_num(b, x->peak_share);
        gp_sbuf_puts(b, ",\"baseline\":");
        gp_json_num(b, x->base.valid ? x->base.mean : NAN);
        gp_sbuf_puts(b, ",\"baseline_runs\":");
        gp_json_int(b, (int64_t)x->base.runs);
        gp_sbuf_puts(b, ",\"baseline_share\":");
        gp_json_num(b, x->base_share);
        gp_sbuf_puts(b, ",\"verdict\":");
        gp_json_str(b, gp_bench_flag_name(x->flag));
        if (x->flag == GP_BF_FAILED) {
            gp_sbuf_puts(b, ",\"reason\":");
            gp_json_str(b, r->devs[x->dev].figs[x->test].why);
        }
        gp_sbuf_putc(b, '}');
    }
    gp_sbuf_puts(b, "]}\n");
}

/* ---- bench figures in compare and history ---- */

const char *gp_bench_series_unit(const char *series)
{
    static const struct {
        const char *suf, *unit;
    } u[] = {{"_GBps", "GB/s"}, {"_GFLOPS", "GFLOP/s"}, {"_GIOPS", "GIOP/s"}, {"_us", "us"}};
    const char *at = strchr(series, '@');
    size_t n = at ? (size_t)(at - series) : strlen(series);
    for (size_t i = 0; i < sizeof u / sizeof u[0]; i++) {
        size_t k = strlen(u[i].suf);
        if (n >= k && !memcmp(series + n - k, u[i].suf, k)) return u[i].unit;
    }
    return "";
}

const char *gp_bench_fmt_value(char *buf, size_t n, double v, const char *series)
{
    char num[32];
    if (isnan(v)) {
        snprintf(buf, n, "N/A");
        return buf;
    }
    snprintf(buf, n, "%s %s", fmt_num(num, sizeof num, v), gp_bench_series_unit(series));
    return buf;
}

void gp_bench_write_compare_text(FILE *out, const gp_comparison *c, int wide)
{
    if (!c->nmetrics) return;
    const size_t *v = c->metric_verdicts;
    fprintf(out,
            "\nBench figures (%zu): %zu regressions, %zu improvements, %zu unchanged, %zu not "
            "significant, %zu new, %zu removed; bandwidth and throughput: higher is better, "
            "latency: lower is better\n",
            c->nmetrics, v[GP_V_REGRESSION], v[GP_V_IMPROVEMENT], v[GP_V_NO_CHANGE], v[GP_V_UNSURE],
            v[GP_V_NEW], v[GP_V_REMOVED]);
    const char *hd[] = {"Figure",   "Better",   "Base n", "Cur n",  "Base mean",
                        "Cur mean", "Change %", "p",      "Verdict"};
    gp_table *tb = gp_table_create(9, hd, "llrrrrrrl");
    for (size_t i = 0; i < c->nmetrics; i++) {
        const gp_cmp_row *r = &c->metrics[i];
        const char *nm = gp_strtab_get(c->names, r->name);
        char bn[32], cn[32], bm[48], cm[48], pc[32], pv[32], vd[48];
        snprintf(bn, sizeof bn, "%llu", (unsigned long long)r->base.samples);
        snprintf(cn, sizeof cn, "%llu", (unsigned long long)r->cur.samples);
        gp_bench_fmt_value(bm, sizeof bm, r->base_fig, nm);
        gp_bench_fmt_value(cm, sizeof cm, r->cur_fig, nm);
        if (isnan(r->change_pct))
            snprintf(pc, sizeof pc, "N/A");
        else
            snprintf(pc, sizeof pc, "%+.1f%%", r->change_pct);
        if (isnan(r->p_adj))
            snprintf(pv, sizeof pv, "N/A");
        else if (r->p_adj < 1e-4)
            snprintf(pv, sizeof pv, "<1e-4");
        else
            snprintf(pv, sizeof pv, "%.4f", r->p_adj);
        snprintf(vd, sizeof vd, "%s%s", gp_verdict_name(r->verdict),
                 r->few_samples ? " (few)" : "");
        const char *cells[] = {nm, r->higher_better ? "higher" : "lower", bn, cn, bm, cm, pc, pv,
                               vd};
        gp_table_row(tb, cells);
    }
    gp_table_print(tb, out, wide ? 0 : 60);
    gp_table_destroy(tb);
}

void gp_bench_write_compare_json(gp_sbuf *b, const gp_comparison *c)
{
    if (!c->nmetrics) return;
    gp_json_key(b, "bench_figures", 1);
    gp_sbuf_putc(b, '[');
    for (size_t i = 0; i < c->nmetrics; i++) {
        const gp_cmp_row *r = &c->metrics[i];
        const char *nm = gp_strtab_get(c->names, r->name);
        if (i) gp_sbuf_putc(b, ',');
        gp_sbuf_puts(b, "{\"name\":");
        gp_json_str(b, nm);
        gp_sbuf_puts(b, ",\"unit\":");
        gp_json_str(b, gp_bench_series_unit(nm));
        gp_sbuf_puts(b, ",\"higher_is_better\":");
        gp_sbuf_puts(b, r->higher_better ? "true" : "false");
        gp_sbuf_puts(b, ",\"verdict\":");
        gp_json_str(b, gp_verdict_name(r->verdict));
        gp_sbuf_puts(b, ",\"baseline_mean\":");
        gp_json_num(b, r->base_fig);
        gp_sbuf_puts(b, ",\"current_mean\":");
        gp_json_num(b, r->cur_fig);
        gp_sbuf_puts(b, ",\"baseline_samples\":");
        gp_json_int(b, (int64_t)r->base.samples);
        gp_sbuf_puts(b, ",\"current_samples\":");
        gp_json_int(b, (int64_t)r->cur.samples);
        gp_sbuf_puts(b, ",\"change_pct\":");
        gp_json_num(b, r->change_pct);
        gp_sbuf_puts(b, ",\"p_value\":");
        gp_json_num(b, r->p);
        gp_sbuf_puts(b, ",\"p_adjusted\":");
        gp_json_num(b, r->p_adj);
        gp_sbuf_puts(b, ",\"effect\":");
        gp_json_num(b, r->effect);
        gp_sbuf_putc(b, '}');
    }
    gp_sbuf_putc(b, ']');
}

void gp_bench_write_history_text(FILE *out, const gp_history *h, const gp_hist_op *x,
                                 const gp_store_run_row *rows, size_t nr, const char *path,
                                 const gp_history_opts *ho)
{
    const char *nm = gp_history_name(h, x->name);
    const char *unit = gp_bench_series_unit(nm);
    fprintf(out, "== gpuprof history %s: bench figure %s (%s, %s is better)\n", path, nm, unit,
            x->higher_better ? "higher" : "lower");
    fprintf(out,
            "runs: %zu (the figure in %zu); step: the mean changes by >= %g%% and the two-sided "
            "Mann-Whitney U test of the repetitions before/after gives p < %g (Bonferroni over "
            "the candidate splits)\n",
            nr, x->runs_present, ho->threshold_pct, ho->alpha);
    char hm[48], h50[48], h95[48];
    snprintf(hm, sizeof hm, "Mean (%s)", unit);
    snprintf(h50, sizeof h50, "p50 (%s)", unit);
    snprintf(h95, sizeof h95, "p95 (%s)", unit);
    const char *hd[] = {"Run", "Reps", hm, h50, h95, "vs prev", "Step"};
    gp_table *tb = gp_table_create(7, hd, "rrrrrrl");
    double prev = NAN;
    for (size_t r = 0; r < nr; r++) {
        const gp_hist_point *p = &x->pts[r];
        char id[32], cnt[32], mean[32], p50[32], p95[32], vs[32], step[96] = "";
        snprintf(id, sizeof id, "%lld", (long long)rows[r].id);
        snprintf(cnt, sizeof cnt, "%llu", (unsigned long long)p->count);
        for (size_t k = 0; k < x->nsteps; k++)
            if (x->steps[k].at == r) {
                int better = (x->steps[k].change_pct > 0) == (x->higher_better != 0);
                snprintf(step, sizeof step, "<- step %+.1f%% (%s, p %.2g)", x->steps[k].change_pct,
                         better ? "better" : "worse", x->steps[k].p);
            }
        if (!p->count) {
            snprintf(mean, sizeof mean, "-");
            snprintf(p50, sizeof p50, "-");
            snprintf(p95, sizeof p95, "-");
            snprintf(vs, sizeof vs, "-");
        } else {
            fmt_num(mean, sizeof mean, p->mean_ns);
            fmt_num(p50, sizeof p50, p->p50_ns);
            fmt_num(p95, sizeof p95, p->p95_ns);
            if (!isnan(prev) && prev > 0)
                snprintf(vs, sizeof vs, "%+.1f%%", 100 * (p->mean_ns / prev - 1));
            else
                snprintf(vs, sizeof vs, "N/A");
            prev = p->mean_ns;
        }
        const char *cells[] = {id, cnt, mean, p50, p95, vs, step};
        gp_table_row(tb, cells);
    }
    gp_table_print(tb, out, 0);
    gp_table_destroy(tb);
    fprintf(out, "\nSteps (%zu)%s\n", x->nsteps,
            x->nsteps ? ":" : ": none, the mean did not change");
    for (size_t k = 0; k < x->nsteps; k++) {
        const gp_hist_step *s = &x->steps[k];
        char a[48], b[48];
        int better = (s->change_pct > 0) == (x->higher_better != 0);
        fprintf(out, "  from run %lld: mean %s -> %s (%+.1f%%, %s), p %.3g, effect %.3f\n",
                (long long)rows[s->at].id, gp_bench_fmt_value(a, sizeof a, s->before_ns, nm),
                gp_bench_fmt_value(b, sizeof b, s->after_ns, nm), s->change_pct,
                better ? "better" : "worse", s->p, s->effect);
    }
}
