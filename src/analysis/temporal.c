/* analysis/temporal.c: temporal breakdown and communication-computation
 * overlap from merged GPU intervals (HTA BreakdownAnalysis /
 * CommunicationAnalysis semantics). */
#include "analysis/temporal.h"
#include <stdlib.h>
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
    int64_t *all, *comp;
    size_t na = gp_hta_merged(v, ~0u, &all);
    if (!na) return all ? 0 : 0;
    size_t nc = gp_hta_merged(v, 1u << GP_KT_COMPUTATION, &comp);
    out->valid = 1;
    out->span_ns = all[2 * na - 1] - all[0];
    out->idle_ns = out->span_ns - busy(all, na);
    out->compute_ns = busy(comp, nc);
    out->non_compute_ns = out->span_ns - out->compute_ns - out->idle_ns;
    free(all);
    free(comp);
    return 0;
}

int gp_comm_comp_overlap(const gp_hview *v, double *pct, int *valid)
{
    int64_t *comm, *comp;
    size_t nm = gp_hta_merged(v, 1u << GP_KT_COMMUNICATION, &comm);
    size_t nc = gp_hta_merged(v, 1u << GP_KT_COMPUTATION, &comp);
    int64_t tot = busy(comm, nm), ov = 0;
    /* both lists are sorted and disjoint: a two-pointer sweep */
    size_t i = 0, j = 0;
    while (i < nm && j < nc) {
        int64_t lo = comm[2 * i] > comp[2 * j] ? comm[2 * i] : comp[2 * j];
        int64_t hi = comm[2 * i + 1] < comp[2 * j + 1] ? comm[2 * i + 1] : comp[2 * j + 1];
        if (hi > lo) ov += hi - lo;
        if (comm[2 * i + 1] < comp[2 * j + 1])
            i++;
        else
            j++;
    }
    free(comm);
    free(comp);
    *valid = tot > 0;
    *pct = tot > 0 ? 100.0 * (double)ov / (double)tot : 0;
    return 0;
}
