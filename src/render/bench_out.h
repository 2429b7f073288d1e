/* render/bench_out.h: writers of bench results and of the bench health
 * check (text tables, JSON with units in the keys). */
#ifndef GP_RENDER_BENCH_OUT_H
#define GP_RENDER_BENCH_OUT_H
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

#endif
