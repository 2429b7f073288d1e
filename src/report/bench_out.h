/* report/bench_out.h: writers of bench results and of the bench health
 * check (text tables, JSON with units in the keys). */
#ifndef GP_REPORT_BENCH_OUT_H
#define GP_REPORT_BENCH_OUT_H
#include "bench/bench.h"
#include "core/sbuf.h"
#include <stdio.h>

/* Text: per device one row per selected test (mean, median, min, max, CI,
 * repetitions, % of peak or "peak unknown", verified), then the sweeps. */
void gp_bench_write_text(FILE *out, const gp_bench_result *r);
/* JSON: {"devices":[{"device":"cl0",...,"figures":{"fp32_GFLOPS":{"unit":...,
 * "stats":{mean, median, min, max, ci95, ci_pct, n, samples}}}}]}. */
void gp_bench_write_json(gp_sbuf *b, const gp_bench_result *r);
void gp_bench_write_health_text(FILE *out, const gp_bench_result *r, const gp_bench_health *h);
void gp_bench_write_health_json(gp_sbuf *b, const gp_bench_result *r, const gp_bench_health *h);

/* ---- bench figures in compare and history (group "bench") ---- */
#include "analysis/compare.h"
#include "analysis/history.h"
#include "store/store.h"

/* Unit of a stored figure name ("bench:h2d_pinned_GBps@4096" -> "GB/s"). */
const char *gp_bench_series_unit(const char *series);
/* Formats a figure value with its unit ("12.35 GB/s"; "N/A" for NaN). */
const char *gp_bench_fmt_value(char *buf, size_t n, double v, const char *series);
/* Text: the bench figures of a comparison (nothing when there is none). */
void gp_bench_write_compare_text(FILE *out, const gp_comparison *c, int wide);
/* JSON: `,"bench_figures":[...]` (nothing when there is none). */
void gp_bench_write_compare_json(gp_sbuf *b, const gp_comparison *c);
/* Text of one bench figure over the runs of a store (history --op). */
void gp_bench_write_history_text(FILE *out, const gp_history *h, const gp_hist_op *x,
                                 const gp_store_run_row *rows, size_t nr, const char *path,
                                 const gp_history_opts *ho);

#endif
