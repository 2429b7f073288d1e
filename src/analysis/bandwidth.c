/* analysis/bandwidth.c: memory bandwidth per copy kind from gpu_info.bytes
 * and the copy kind the importer derived from each copy's name. */
#include "analysis/bandwidth.h"
#include "core/stats.h"
#include <stdlib.h>
#include <string.h>

#define NKINDS (GP_COPY_MEMSET + 1)

int gp_bandwidth_compute(const gp_hview *v, gp_bw_row **rows, size_t *nrows)
{
    const gp_trace *t = v->t;
    gp_bw_row acc[NKINDS];
    memset(acc, 0, sizeof acc);
    size_t ncopy = 0;
    for (size_t i = 0; i < v->ngpu; i++) { /* GPU events by start */
        const gp_hev *e = &v->ev[v->gpu[i]];
        if (e->kind != GP_K_MEMCPY && e->kind != GP_K_MEMSET) continue;
        const gp_slice *s = &t->slices.v[e->slice];
        if (s->gpu == GP_NO_INDEX) continue;
        ncopy++;
    }
    *rows = NULL;
    *nrows = 0;
    if (!ncopy) return 0;
    /* per-copy GB/s, grouped by kind afterwards */
    double *rate = malloc(ncopy * sizeof *rate);
    uint8_t *rkind = malloc(ncopy);
    if (!rate || !rkind) {
        free(rate);
        free(rkind);
        return GP_ENOMEM;
    }
    size_t nr = 0;
    for (size_t i = 0; i < v->ngpu; i++) { /* GPU events by start */
        const gp_hev *e = &v->ev[v->gpu[i]];
        if (e->kind != GP_K_MEMCPY && e->kind != GP_K_MEMSET) continue;
        const gp_slice *s = &t->slices.v[e->slice];
        if (s->gpu == GP_NO_INDEX) continue;
        const gp_gpu_info *g = &t->gpu_info.v[s->gpu];
        unsigned k = g->copy_kind < NKINDS ? g->copy_kind : GP_COPY_UNKNOWN;
        if (e->kind == GP_K_MEMSET) k = GP_COPY_MEMSET;
        gp_bw_row *r = &acc[k];
        r->kind = (uint8_t)k;
        r->count++;
        r->time_ns = gp_sat_add_i64(r->time_ns, s->dur);
        if (g->bytes < 0) continue; /* GP_NONE: unknown size */
        r->sized++;
        r->bytes = gp_sat_add_i64(r->bytes, g->bytes);
        r->sized_time_ns = gp_sat_add_i64(r->sized_time_ns, s->dur);
        if (s->dur > 0) {
            rate[nr] = (double)g->bytes / (double)s->dur;
            rkind[nr++] = (uint8_t)k;
        }
    }
    gp_bw_row *out = malloc(NKINDS * sizeof *out);
    double *tmp = malloc((nr ? nr : 1) * sizeof *tmp);
    if (!out || !tmp) {
        free(out);
        free(tmp);
        free(rate);
        free(rkind);
        return GP_ENOMEM;
    }
    size_t m = 0;
    for (unsigned k = 0; k < NKINDS; k++) {
        gp_bw_row *r = &acc[k];
        if (!r->count) continue;
        size_t c = 0;
        for (size_t i = 0; i < nr; i++)
            if (rkind[i] == k) tmp[c++] = rate[i];
        gp_stats_f64(tmp, c, &r->per_copy_gbps);
        r->gbps_valid = r->sized_time_ns > 0;
        r->gbps = r->gbps_valid ? (double)r->bytes / (double)r->sized_time_ns : 0;
        out[m++] = *r;
    }
    free(tmp);
    free(rate);
    free(rkind);
    *rows = out;
    *nrows = m;
    return 0;
}
