/* analysis/temporal.c: temporal breakdown and communication-computation
 * overlap from merged GPU intervals (HTA BreakdownAnalysis /
 * CommunicationAnalysis semantics). */
#include "analysis/temporal.h"
#include "analysis/activity.h"
#include <string.h>

static int64_t busy(const int64_t *iv, size_t n)
{
    int64_t s = 0;
    for (size_t i = 0; i < n; i++) s += iv[2 * i + 1] - iv[2 * i];
    return s;
}

int gp_temporal_compute(const gp_hview *v, gp_temporal *out)
{
    memset(out, 0, sizeof *out);
    size_t na, nc;
    const int64_t *all = gp_hview_merged(v, ~0u, &na);
    const int64_t *comp = gp_hview_merged(v, 1u << GP_KT_COMPUTATION, &nc);
    if (!na) return 0;
    out->valid = 1;
    out->span_ns = all[2 * na - 1] - all[0];
    out->idle_ns = out->span_ns - busy(all, na);
    out->compute_ns = busy(comp, nc);
    out->non_compute_ns = out->span_ns - out->compute_ns - out->idle_ns;
    return 0;
}

int gp_comm_comp_overlap(const gp_hview *v, double *pct, int *valid)
{
    size_t nm, nc;
    const int64_t *comm = gp_hview_merged(v, 1u << GP_KT_COMMUNICATION, &nm);
    const int64_t *comp = gp_hview_merged(v, 1u << GP_KT_COMPUTATION, &nc);
    int64_t tot = busy(comm, nm);
    /* both lists are sorted and disjoint */
    int64_t ov = gp_intervals_overlap(comm, nm, comp, nc);
    *valid = tot > 0;
    *pct = tot > 0 ? 100.0 * (double)ov / (double)tot : 0;
    return 0;
}
