/* bench/bench_health.c: `gpuprof health --bench`: each figure of a (quick)
 * bench run judged against its device's peak, where known, and against its
 * own recorded baseline (earlier runs of the store). */
#include "bench/bench.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const flag_names[] = {"ok", "below_peak", "below_baseline", "failed",
                                         "no_reference"};

const char *gp_bench_flag_name(gp_bench_flag f)
{
    return (unsigned)f <= GP_BF_NO_REFERENCE ? flag_names[f] : "?";
}

void gp_bench_health_opts_default(gp_bench_health_opts *o)
{
    memset(o, 0, sizeof *o);
    o->min_peak_share = 0.6;
    o->min_baseline_share = 0.8;
    o->baseline_runs = 5;
}

int gp_bench_health_check(const gp_bench_result *r, const gp_bench_health_opts *o,
                          gp_bench_health *out, gp_err *err)
{
    memset(out, 0, sizeof *out);
    out->opts = *o;
    out->rows = calloc(r->ndev * GP_BT__COUNT + 1, sizeof *out->rows);
    if (!out->rows) return gp_err_set(err, GP_ENOMEM, "out of memory");
    for (size_t d = 0; d < r->ndev; d++)
        for (int t = 0; t < GP_BT__COUNT; t++) {
            const gp_bench_fig *f = &r->devs[d].figs[t];
            if (!f->selected) continue;
            gp_bench_health_row *h = &out->rows[out->n++];
            h->dev = d;
            h->test = (gp_bench_test)t;
            h->value = f->valid ? f->st.mean : NAN;
            h->peak_share = h->base_share = NAN;
            h->base.mean = NAN;
            if (!f->valid) {
                h->flag = GP_BF_FAILED;
                out->flagged++;
                continue;
            }
            int hb = gp_bench_info_of(h->test)->higher_better;
            if (f->peak_valid) h->peak_share = h->value / f->peak;
            if (o->store) {
                /* a sweep test's figure is its largest size's: the
                 * baseline is the series of that size ("KEY@BYTES"), as
                 * runs with another --max-size measured another size */
                char nm[224], base[192];
                gp_bench_series_name(base, sizeof base, r, d, h->test);
                if (f->nsweep)
                    snprintf(nm, sizeof nm, "%s@%lld", base,
                             (long long)f->sweep[f->nsweep - 1].bytes);
                else
                    snprintf(nm, sizeof nm, "%s", base);
                int rc = gp_bench_store_baseline(o->store, nm, 0, o->baseline_runs, &h->base, err);
                if (rc) return rc;
                if (h->base.valid && h->base.mean > 0) h->base_share = h->value / h->base.mean;
            }
            if (!isnan(h->peak_share) && h->peak_share < o->min_peak_share)
                h->flag = GP_BF_LOW_PEAK;
            else if (!isnan(h->base_share) && (hb ? h->base_share < o->min_baseline_share
                                                  : h->base_share > 1.0 / o->min_baseline_share))
                h->flag = GP_BF_LOW_BASELINE;
            else if (isnan(h->peak_share) && isnan(h->base_share))
                h->flag = GP_BF_NO_REFERENCE;
            else
                h->flag = GP_BF_OK;
            if (h->flag == GP_BF_LOW_PEAK || h->flag == GP_BF_LOW_BASELINE) out->flagged++;
        }
    return 0;
}

void gp_bench_health_free(gp_bench_health *h)
{
    free(h->rows);
    memset(h, 0, sizeof *h);
}
