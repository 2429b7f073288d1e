/* render/bench_out.c: the writers of `gpuprof bench` and `gpuprof health
 * --bench`: a text table per device and JSON whose keys carry their units. */
#include "render/bench_out.h"
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
        const char *hd[] = {"Test", "Unit", "Mean", "Median", "Min", "Max", "CI95 +-",
                            "CI %", "N", "% of peak", "Verified"};
        gp_table *tb = gp_table_create(11, hd, "llrrrrrrrll");
        for (int t = 0; t < GP_BT__COUNT; t++) {
            const gp_bench_fig *f = &dv->figs[t];
            if (!f->selected) continue;
            const gp_bench_info *in = gp_bench_info_of(f->test);
            if (!f->valid) {
                const char *cells[] = {in->key, in->unit, "-", "-", "-", "-", "-",
                                       "-",     "-",      "-", f->why};
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
            const char *cells[] = {in->key, in->unit, mean, med, mn, mx, ci, cip, n, pk,
                                   f->verified ? "yes" : "no"};
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
        if (dv->peaks.mem_valid || dv->peaks.fp32_valid)
            fprintf(out, "  peaks: memory %s%s%s\n", dv->peaks.mem_valid ? dv->peaks.mem_src : "unknown",
                    dv->peaks.fp32_valid ? "; compute " : "",
                    dv->peaks.fp32_valid ? dv->peaks.compute_src : "");
        else
            fprintf(out, "  peaks: unknown (the %s API reports no memory clock, bus width or FMA "
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
    const char *hd[] = {"Device", "Figure", "Value", "% of peak", "Baseline", "vs baseline",
                        "Verdict"};
    gp_table *tb = gp_table_create(7, hd, "llrrrrl");
    for (size_t i = 0; i < h->n; i++) {
        const gp_bench_health_row *x = &h->rows[i];
        const gp_bench_fig *f = &r->devs[x->dev].figs[x->test];
        char v[48], pk[32], bs[48], vs[32];
        char num[32];
        snprintf(v, sizeof v, "%s %s", fmt_num(num, sizeof num, x->value),
                 gp_bench_info_of(x->test)->unit);
        if (isnan(x->peak_share))
            snprintf(pk, sizeof pk, "%s", gp_bench_info_of(x->test)->higher_better
                                              ? "peak unknown" : "-");
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
        const char *cells[] = {r->devs[x->dev].sel, gp_bench_info_of(x->test)->key, v, pk, bs,
                               vs, x->flag == GP_BF_FAILED ? f->why : gp_bench_flag_name(x->flag)};
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
