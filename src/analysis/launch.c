/* analysis/launch.c: kernel launch statistics joined on correlation ids. */
#include "analysis/launch.h"
#include "core/hash.h"
#include <stdlib.h>
#include <string.h>

/* HTA 0.6.1's launch names (cuda_kernel_analysis.py); its MTIA launch is
 * "runFunction - job_prep_and_submit_for_execution" (its mtiaLaunchKernel_id).
 * The default mode also counts MTIA's mtiaLaunchKernel. */
static const char *const hta_names[] = {"cudaLaunchKernel",
                                        "cudaLaunchKernelExC",
                                        "cudaMemcpyAsync",
                                        "cudaMemsetAsync",
                                        "runFunction - job_prep_and_submit_for_execution",
                                        NULL};
static const char *const other_names[] = {
    "cuLaunchKernel", "cuLaunchKernelEx", "hipLaunchKernel",     "hipExtModuleLaunchKernel",
    "hipMemcpyAsync", "hipMemsetAsync",   "hipMemcpyWithStream", NULL};

int gp_launch_name_in(const char *name, gp_launch_set s, int compat)
{
    if (s == GP_LAUNCH_HTA && !compat && !strcmp(name, "mtiaLaunchKernel")) return 1;
    const char *const *l = s == GP_LAUNCH_HTA ? hta_names : other_names;
    for (; *l; l++)
        if (!strcmp(name, *l)) return 1;
    return 0;
}

/* Launch delay: GPU start - launch end; HTA clips it at 0 (--compat hta). */
static int64_t launch_delay(const gp_hview *v, const gp_hev *c, const gp_hev *g)
{
    int64_t delay = g->ts - (c->ts + c->dur);
    return v->compat && delay < 0 ? 0 : delay;
}

static void count(gp_launch_stats *out, const gp_launch_opts *o, const gp_hev *c, const gp_hev *g,
                  int64_t delay, int64_t *vc, int64_t *vg, int64_t *vd)
{
    size_t k = out->launches++;
    if (c->dur <= o->runtime_cutoff_ns && g->dur < c->dur) out->short_kernels++;
    if (c->dur > o->runtime_cutoff_ns) out->runtime_outliers++;
    if (delay > o->launch_delay_cutoff_ns) out->launch_delay_outliers++;
    vc[k] = c->dur;
    vg[k] = g->dur;
    vd[k] = delay;
}

/* Without duplicated correlation ids (and no launch call lacking one) each
 * GPU event pairs with at most one host event: its correlation peer. */
static int launch_fast(const gp_hview *v, gp_launch_set s, const gp_launch_opts *o,
                       gp_launch_stats *out, int *fallback)
{
    const gp_trace *t = v->t;
    uint32_t nstr = gp_strtab_count(t->strings);
    uint8_t *isl = malloc(nstr ? nstr : 1); /* per name id: 0/1, 0xff unknown */
    if (!isl) return GP_ENOMEM;
    memset(isl, 0xff, nstr);
    size_t np = 0;
    for (size_t i = 0; i < v->n; i++) {
        const gp_hev *e = &v->ev[i];
        uint32_t nm = gp_hev_name(v, e);
        if (isl[nm] == 0xff) isl[nm] = (uint8_t)gp_launch_name_in(gp_trace_s(t, nm), s, v->compat);
        if (!isl[nm]) continue;
        if (gp_hev_corr(v, e) == -1) { /* joins every uncorrelated event: the general path */
            *fallback = 1;
            free(isl);
            return 0;
        }
        np += v->peer[i] != GP_NO_INDEX;
    }
    int64_t *buf = malloc((np ? np : 1) * 3 * sizeof *buf);
    if (!buf) {
        free(isl);
        return GP_ENOMEM;
    }
    int64_t *vc = buf, *vg = buf + np, *vd = buf + 2 * np;
    for (size_t i = 0; i < v->n; i++) {
        const gp_hev *g = &v->ev[i];
        uint32_t h = v->peer[i];
        if (g->stream == -1 || h == GP_NO_INDEX) continue;
        if (!isl[gp_hev_name(v, g)] && !isl[gp_hev_name(v, &v->ev[h])]) continue;
        count(out, o, &v->ev[h], g, launch_delay(v, &v->ev[h], g), vc, vg, vd);
    }
    gp_stats_i64(vc, out->launches, &out->cpu_ns);
    gp_stats_i64(vg, out->launches, &out->gpu_ns);
    gp_stats_i64(vd, out->launches, &out->delay_ns);
    free(buf);
    free(isl);
    return 0;
}

int gp_launch_compute(const gp_hview *v, gp_launch_set s, const gp_launch_opts *o,
                      gp_launch_stats *out)
{
    memset(out, 0, sizeof *out);
    if (!v->corr_multi && v->peer) {
        int fallback = 0, rc = launch_fast(v, s, o, out, &fallback);
        if (rc || !fallback) return rc;
        memset(out, 0, sizeof *out);
    }
    /* names are interned: decide per distinct string id once */
    gp_u64map isl = {0}, corrs = {0}, gpu_first = {0};
    int64_t *cpu = NULL, *gpu = NULL, *dl = NULL;
    size_t *next = NULL;
    int rc = GP_ENOMEM;
    for (size_t i = 0; i < v->n; i++) {
        const gp_hev *e = &v->ev[i];
        uint64_t yes;
        uint32_t nm = gp_hev_name(v, e);
        if (!gp_u64map_get(&isl, nm, &yes)) {
            yes = (uint64_t)gp_launch_name_in(gp_trace_s(v->t, nm), s, v->compat);
            if (gp_u64map_put(&isl, nm, yes)) goto done;
        }
        if (yes && gp_u64map_put(&corrs, (uint64_t)gp_hev_corr(v, e), 1)) goto done;
    }
    /* GPU events per correlation as linked lists (inner join keeps all pairs) */
    next = malloc((v->n ? v->n : 1) * sizeof *next);
    if (!next) goto done;
    for (size_t i = v->n; i-- > 0;) {
        const gp_hev *e = &v->ev[i];
        uint64_t x;
        if (e->stream == -1) continue;
        uint64_t corr = (uint64_t)gp_hev_corr(v, e);
        if (!gp_u64map_get(&corrs, corr, &x)) continue;
        uint64_t *head = gp_u64map_slot(&gpu_first, corr, SIZE_MAX);
        if (!head) goto done;
        next[i] = (size_t)*head;
        *head = i;
    }
    GP_VEC(int64_t) vc = {0}, vg = {0}, vd = {0};
    for (size_t i = 0; i < v->n; i++) {
        const gp_hev *c = &v->ev[i];
        uint64_t h;
        if (c->stream != -1 || !gp_u64map_get(&gpu_first, (uint64_t)gp_hev_corr(v, c), &h))
            continue;
        for (size_t j = (size_t)h; j != SIZE_MAX; j = next[j]) {
            const gp_hev *g = &v->ev[j];
            int64_t delay = launch_delay(v, c, g);
            out->launches++;
            if (c->dur <= o->runtime_cutoff_ns && g->dur < c->dur) out->short_kernels++;
            if (c->dur > o->runtime_cutoff_ns) out->runtime_outliers++;
            if (delay > o->launch_delay_cutoff_ns) out->launch_delay_outliers++;
            if (GP_VEC_PUSH(vc, c->dur) || GP_VEC_PUSH(vg, g->dur) || GP_VEC_PUSH(vd, delay)) {
                GP_VEC_FREE(vc);
                GP_VEC_FREE(vg);
                GP_VEC_FREE(vd);
                goto done;
            }
        }
    }
    gp_stats_i64(vc.v, vc.n, &out->cpu_ns);
    gp_stats_i64(vg.v, vg.n, &out->gpu_ns);
    gp_stats_i64(vd.v, vd.n, &out->delay_ns);
    GP_VEC_FREE(vc);
    GP_VEC_FREE(vg);
    GP_VEC_FREE(vd);
    rc = 0;
done:
    free(cpu);
    free(gpu);
    free(dl);
    free(next);
    gp_u64map_free(&isl);
    gp_u64map_free(&corrs);
    gp_u64map_free(&gpu_first);
    return rc;
}
