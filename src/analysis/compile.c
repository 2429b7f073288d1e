/* analysis/compile.c: torch.compile figures from TORCH_TRACE logs and from
 * Kineto traces of compiled models. Definitions: docs/compile.md. */
#include "analysis/compile.h"
#include "core/hash.h"
#include "core/stats.h"
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---- logs ---------------------------------------------------------------- */

double gp_compile_time_s(const gp_tt_compile *c)
{
    return !isnan(c->entire_s) ? c->entire_s : c->dynamo_cum_s;
}

void gp_compile_totals_of(const gp_tlog *l, gp_compile_totals *t)
{
    memset(t, 0, sizeof *t);
    gp_u64map frames = {0};
    int frames_ok = 1;
    for (size_t i = 0; i < l->compiles.n; i++) {
        const gp_tt_compile *c = &l->compiles.v[i];
        t->fx_hit += c->fx_hit;
        t->fx_miss += c->fx_miss;
        t->fx_bypass += c->fx_bypass;
        t->aot_hit += c->aot_hit;
        t->aot_miss += c->aot_miss;
        t->aot_bypass += c->aot_bypass;
        if (c->status == GP_TT_RESTARTED) t->restarted++;
        if (!c->n_metrics) continue;
        /* a record holds its latest metrics; n_metrics > 1 only when one id
         * repeats without a dynamo_start between (then each counts) */
        uint64_t k = (uint64_t)c->n_metrics;
        t->compiles += k;
        if (frames_ok && !gp_u64map_slot(&frames, (uint64_t)c->frame_id, 0)) frames_ok = 0;
        if (c->frame_compile_id > 0) t->recompiles += k;
        t->graph_breaks += c->restart_reasons.n;
        if (c->fail_type) t->failures += k;
        double s = gp_compile_time_s(c);
        if (isnan(s))
            t->time_unknown += k;
        else
            t->compile_time_s += s;
    }
    if (frames_ok) {
        t->frames = frames.n;
    } else { /* out of memory for the set: count by scanning (quadratic, rare) */
        for (size_t i = 0; i < l->compiles.n; i++) {
            const gp_tt_compile *c = &l->compiles.v[i];
            if (!c->n_metrics) continue;
            size_t j = 0;
            while (j < i &&
                   !(l->compiles.v[j].n_metrics && l->compiles.v[j].frame_id == c->frame_id))
                j++;
            t->frames += j == i;
        }
    }
    gp_u64map_free(&frames);
}

double gp_cache_hit_ratio(uint64_t hit, uint64_t miss, uint64_t bypass)
{
    uint64_t n = hit + miss + bypass;
    return n ? (double)hit / (double)n : NAN;
}

void gp_compile_user_frame(const gp_tt_compile *c, uint32_t *file, int64_t *line, uint32_t *fn)
{
    *file = 0;
    *line = GP_TT_NONE;
    *fn = c->co_name;
    if (c->fail_file) {
        *file = c->fail_file;
        *line = c->fail_line;
        return;
    }
    if (c->stack.n) {
        const gp_tt_frame *f = &c->stack.v[c->stack.n - 1];
        *file = f->file;
        *line = f->line;
        if (f->name) *fn = f->name;
        return;
    }
    *file = c->co_filename;
    *line = c->co_firstlineno;
}

size_t gp_compile_phases_of(const gp_tlog *l, size_t idx, gp_compile_part *out, size_t max)
{
    const gp_tt_compile *c = &l->compiles.v[idx];
    char base[64];
    if (c->autograd_id != GP_TT_NONE)
        snprintf(base, sizeof base, "!%lld/%lld/%lld", (long long)c->autograd_id,
                 (long long)c->frame_id, (long long)c->frame_compile_id);
    else
        snprintf(base, sizeof base, "%lld/%lld", (long long)c->frame_id,
                 (long long)c->frame_compile_id);
    uint32_t id = gp_strtab_find(l->strings, base, strlen(base));
    size_t n = 0;
    if (!id || id == GP_NO_INDEX) return 0;
    for (size_t i = 0; i < l->phases.n; i++) {
        const gp_tt_phase *p = &l->phases.v[i];
        if (p->compile_id != id || p->depth > 1 || p->end_ns == GP_TT_NONE) continue;
        size_t k = 0;
        while (k < n && !(out[k].name == p->name && out[k].depth == p->depth)) k++;
        if (k == n) {
            if (n == max) continue;
            out[n++] = (gp_compile_part){p->name, 0, p->depth};
        }
        out[k].dur_ns += p->end_ns - p->begin_ns;
    }
    return n;
}

/* ---- ranks --------------------------------------------------------------- */

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median_of(const double *v, size_t n, double *tmp)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (!isnan(v[i])) tmp[k++] = v[i];
    if (!k) return NAN;
    qsort(tmp, k, sizeof *tmp, cmp_dbl);
    return k % 2 ? tmp[k / 2] : (tmp[k / 2 - 1] + tmp[k / 2]) / 2;
}

static int div_push(gp_rank_divergence *d, const char *what, const double *vals, size_t n,
                    int is_time, double *tmp)
{
    double med = median_of(vals, n, tmp);
    int differs = 0;
    size_t far = 0;
    double fard = -1;
    for (size_t i = 0; i < n; i++) {
        double dv = isnan(vals[i]) || isnan(med) ? INFINITY : fabs(vals[i] - med);
        if (dv > fard) fard = dv, far = i;
        if (is_time ? (isnan(vals[i]) != isnan(vals[0]) ||
                       (!isnan(vals[i]) && dv > GP_RANK_TIME_TOL * fabs(med)))
                    : vals[i] != vals[0])
            differs = 1;
    }
    if (!differs) return 0;
    gp_rank_div *nv = realloc(d->v, (d->n + 1) * sizeof *d->v);
    if (!nv) return GP_ENOMEM;
    d->v = nv;
    gp_rank_div *r = &d->v[d->n];
    memset(r, 0, sizeof *r);
    snprintf(r->what, sizeof r->what, "%s", what);
    r->values = malloc(n * sizeof *r->values);
    if (!r->values) return GP_ENOMEM;
    memcpy(r->values, vals, n * sizeof *vals);
    r->nlogs = n;
    r->median = med;
    r->outlier = far;
    d->n++;
    return 0;
}

#define DIV_MAX_IDS 50 /* compile ids present on some ranks only, at most */

int gp_rank_divergence_of(const gp_tlog *const *l, size_t n, gp_rank_divergence *out)
{
    memset(out, 0, sizeof *out);
    size_t ranked = 0;
    for (size_t i = 0; i < n; i++) ranked += l[i]->rank != GP_TT_NONE;
    out->ranked = ranked >= 2;
    if (n < 2) return 0;
    double *vals = calloc(n, sizeof *vals), *tmp = calloc(n, sizeof *tmp);
    gp_compile_totals *t = malloc(n * sizeof *t);
    int rc = GP_ENOMEM;
    if (!vals || !tmp || !t) goto out;
    for (size_t i = 0; i < n; i++) gp_compile_totals_of(l[i], &t[i]);
#define FIG(field, name, is_time)                                                                  \
    do {                                                                                           \
        for (size_t i = 0; i < n; i++) vals[i] = (double)t[i].field;                               \
        if (div_push(out, name, vals, n, is_time, tmp)) goto out;                                  \
    } while (0)
    FIG(compiles, "compiles", 0);
    FIG(frames, "frames", 0);
    FIG(recompiles, "recompiles", 0);
    FIG(graph_breaks, "graph_breaks", 0);
    FIG(failures, "failures", 0);
    FIG(compile_time_s, "compile_time_s", 1);
#undef FIG
    /* compile ids (with metrics) that some logs have and others lack */
    size_t ids = 0;
    for (size_t a = 0; a < n && ids < DIV_MAX_IDS; a++)
        for (size_t i = 0; i < l[a]->compiles.n && ids < DIV_MAX_IDS; i++) {
            const gp_tt_compile *c = &l[a]->compiles.v[i];
            if (!c->n_metrics) continue;
            int seen_before = 0, missing = 0;
            for (size_t b = 0; b < n; b++) {
                int has = 0;
                for (size_t j = 0; j < l[b]->compiles.n && !has; j++)
                    has = l[b]->compiles.v[j].n_metrics && !strcmp(l[b]->compiles.v[j].id, c->id);
                vals[b] = has;
                if (b < a && has) seen_before = 1;
                missing |= !has;
            }
            if (seen_before || !missing) continue;
            char what[48];
            snprintf(what, sizeof what, "compile id %.30s", c->id);
            if (div_push(out, what, vals, n, 0, tmp)) goto out;
            ids++;
        }
    rc = 0;
out:
    free(vals);
    free(tmp);
    free(t);
    if (rc) gp_rank_divergence_free(out);
    return rc;
}

void gp_rank_divergence_free(gp_rank_divergence *d)
{
    for (size_t i = 0; i < d->n; i++) free(d->v[i].values);
    free(d->v);
    memset(d, 0, sizeof *d);
}

/* ---- fused kernel names -------------------------------------------------- */

/* ATen ops whose names hold "_" and appear in Inductor kernel names. */
static const char *const multi_ops[] = {
    "_native_batch_norm_legit_functional",
    "_native_batch_norm_legit_no_training",
    "_native_batch_norm_legit",
    "native_batch_norm_backward",
    "native_layer_norm_backward",
    "native_group_norm_backward",
    "_log_softmax_backward_data",
    "_softmax_backward_data",
    "max_pool2d_with_indices_backward",
    "max_pool2d_with_indices",
    "embedding_dense_backward",
    "convolution_backward",
    "native_layer_norm",
    "native_batch_norm",
    "native_group_norm",
    "native_dropout_backward",
    "native_dropout",
    "nll_loss_forward",
    "nll_loss_backward",
    "nll_loss2d_forward",
    "nll_loss2d_backward",
    "threshold_backward",
    "sigmoid_backward",
    "tanh_backward",
    "gelu_backward",
    "silu_backward",
    "hardswish_backward",
    "hardsigmoid_backward",
    "leaky_relu_backward",
    "elu_backward",
    "avg_pool2d_backward",
    "upsample_nearest2d_backward",
    "upsample_bilinear2d_backward",
    "upsample_nearest2d",
    "upsample_bilinear2d",
    "grid_sampler_2d",
    "reflection_pad2d",
    "replication_pad2d",
    "constant_pad_nd",
    "avg_pool2d",
    "adaptive_avg_pool2d",
    "_adaptive_avg_pool2d",
    "_unsafe_index_put",
    "_unsafe_index",
    "_unsafe_view",
    "_to_copy",
    "_log_softmax",
    "_softmax",
    "_foreach_add",
    "_foreach_mul",
    "index_put",
    "index_add",
    "index_select",
    "index_copy",
    "scatter_add",
    "scatter_reduce",
    "select_scatter",
    "slice_scatter",
    "diagonal_scatter",
    "masked_fill",
    "masked_scatter",
    "bitwise_and",
    "bitwise_or",
    "bitwise_not",
    "bitwise_xor",
    "logical_and",
    "logical_or",
    "logical_not",
    "logical_xor",
    "clamp_min",
    "clamp_max",
    "leaky_relu",
    "full_like",
    "zeros_like",
    "ones_like",
    "empty_like",
    "rand_like",
    "randn_like",
    "new_zeros",
    "new_ones",
    "new_empty",
    "new_full",
    "as_strided",
    "var_mean",
    "mse_loss",
    "binary_cross_entropy",
    "lift_fresh_copy",
    "inductor_seeds",
    "inductor_lookup_seed",
    "inductor_random",
    "inductor_randint",
    "split_with_sizes",
    "scaled_dot_product",
    "_scaled_dot_product_flash_attention",
    "_scaled_dot_product_efficient_attention",
    "_fused_rms_norm",
    "rms_norm",
    "layer_norm",
    "group_norm",
    "batch_norm",
    "linalg_vector_norm",
    "sort_stable",
    "cumsum",
    "cumprod",
    "topk",
    "arange",
    "argmax",
    "argmin",
    "logsumexp",
    "copy_",
    "add_",
    "mul_",
    "div_",
    "sub_",
    "fill_",
    "zero_",
    "clamp_",
};

int gp_fused_op_count(const char *name)
{
    if (!name || strncmp(name, "triton_", 7)) return 0;
    const char *f = strstr(name, "_fused_");
    if (!f) return 0;
    const char *p = f + 7, *end = name + strlen(name);
    /* drop the "_N" index suffix */
    const char *q = end;
    while (q > p && q[-1] >= '0' && q[-1] <= '9') q--;
    if (q < end && q > p && q[-1] == '_') end = q - 1;
    int ops = 0;
    while (p < end) {
        size_t best = 0;
        for (size_t i = 0; i < sizeof multi_ops / sizeof multi_ops[0]; i++) {
            size_t k = strlen(multi_ops[i]);
            if (k > best && (size_t)(end - p) >= k && !memcmp(p, multi_ops[i], k) &&
                (p + k == end || p[k] == '_'))
                best = k;
        }
        if (!best) {
            const char *u = memchr(p, '_', (size_t)(end - p));
            best = u ? (size_t)(u - p) : (size_t)(end - p);
        }
        if (best) ops++;
        p += best;
        if (p < end && *p == '_') p++;
    }
    return ops;
}

/* ---- Kineto traces of compiled models ------------------------------------ */

static int starts(const char *s, const char *pre)
{
    return !strncmp(s, pre, strlen(pre));
}

static int is_cpu_side(gp_kind k)
{
    return k == GP_K_CPU_OP || k == GP_K_USER_ANNOTATION || k == GP_K_PYTHON || k == GP_K_OTHER;
}

typedef struct ival {
    int64_t b, e;
    uint32_t track;
    uint32_t region; /* index into out->regions */
} ival;

static int cmp_ival(const void *a, const void *b)
{
    const ival *x = a, *y = b;
    if (x->track != y->track) return x->track < y->track ? -1 : 1;
    return (x->b > y->b) - (x->b < y->b);
}

/* The region interval on `track` containing ts (the latest start <= ts). */
static const ival *find_ival(const ival *v, size_t n, uint32_t track, int64_t ts)
{
    size_t lo = 0, hi = n;
    while (lo < hi) { /* first element > (track, ts) */
        size_t mid = (lo + hi) / 2;
        if (v[mid].track < track || (v[mid].track == track && v[mid].b <= ts))
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo; i-- > 0;) {
        if (v[i].track != track) return NULL;
        if (ts < v[i].e) return &v[i];
        if (i + 8 < lo) return NULL; /* regions do not nest deeply */
    }
    return NULL;
}

static int cmp_i64pair(const void *a, const void *b)
{
    const int64_t *x = a, *y = b;
    return (x[0] > y[0]) - (x[0] < y[0]);
}

/* Length of [b, e) not covered by the sorted, merged intervals m[0..2n). */
static int64_t uncovered(int64_t b, int64_t e, const int64_t *m, size_t n)
{
    int64_t cov = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t x = m[2 * i] > b ? m[2 * i] : b, y = m[2 * i + 1] < e ? m[2 * i + 1] : e;
        if (y > x) cov += y - x;
    }
    return e - b - cov;
}

static int cmp_fused(const void *a, const void *b)
{
    const gp_fused_kernel *x = a, *y = b;
    if (x->gpu_ns != y->gpu_ns) return x->gpu_ns < y->gpu_ns ? 1 : -1;
    return (x->name > y->name) - (x->name < y->name);
}

int gp_compiled_trace_of(const gp_trace *t, gp_compiled_trace *out)
{
    memset(out, 0, sizeof *out);
    out->fusion_ratio = NAN;
    size_t n = t->slices.n;
    ival *iv = malloc((n ? n : 1) * sizeof *iv);
    int64_t *cov = malloc((n ? n : 1) * 2 * sizeof *cov);
    uint32_t *steps = malloc((n ? n : 1) * sizeof *steps);
    gp_u64map corr = {0}, rmap = {0}, fmap = {0};
    size_t niv = 0, ncov = 0, nsteps = 0;
    int rc = GP_ENOMEM;
    int64_t cpu_b = INT64_MAX, cpu_e = INT64_MIN;
    if (!iv || !cov || !steps) goto out;
    out->regions = calloc(1, sizeof *out->regions);
    out->fused = calloc(1, sizeof *out->fused);
    if (!out->regions || !out->fused) goto out;
    for (size_t i = 0; i < n; i++) {
        const gp_slice *s = &t->slices.v[i];
        gp_kind k = gp_slice_kind(t, s);
        const char *nm = gp_trace_s(t, s->name);
        if ((k == GP_K_RUNTIME || k == GP_K_DRIVER) && s->correlation != GP_NONE) {
            if (gp_u64map_put(&corr, (uint64_t)s->correlation, i)) goto out;
            continue;
        }
        if (!is_cpu_side(k)) continue;
        if (starts(nm, "ProfilerStep#")) {
            steps[nsteps++] = (uint32_t)i;
            continue;
        }
        if (starts(nm, "Torch-Compiled Region")) {
            uint64_t *slot = gp_u64map_slot(&rmap, s->name, out->nregions);
            if (!slot) goto out;
            if (*slot == out->nregions) {
                gp_cregion *nr = realloc(out->regions, (out->nregions + 1) * sizeof *nr);
                if (!nr) goto out;
                out->regions = nr;
                memset(&nr[out->nregions], 0, sizeof *nr);
                nr[out->nregions++].name = s->name;
            }
            gp_cregion *r = &out->regions[*slot];
            r->count++;
            r->cpu_ns += s->dur;
            out->region_calls++;
            out->region_cpu_ns += s->dur;
            iv[niv++] = (ival){s->ts, s->ts + s->dur, s->track, (uint32_t)*slot};
            cov[2 * ncov] = s->ts;
            cov[2 * ncov++ + 1] = s->ts + s->dur;
        } else if (!strcmp(nm, "TorchDynamo Cache Lookup")) {
            out->lookups++;
            out->lookup_ns += s->dur;
            cov[2 * ncov] = s->ts;
            cov[2 * ncov++ + 1] = s->ts + s->dur;
        }
        if (k == GP_K_CPU_OP || k == GP_K_PYTHON) {
            if (s->ts < cpu_b) cpu_b = s->ts;
            if (s->ts + s->dur > cpu_e) cpu_e = s->ts + s->dur;
        }
    }
    qsort(iv, niv, sizeof *iv, cmp_ival);
    for (size_t i = 0; i < n; i++) {
        const gp_slice *s = &t->slices.v[i];
        gp_kind k = gp_slice_kind(t, s);
        if (k != GP_K_KERNEL && k != GP_K_MEMCPY && k != GP_K_MEMSET) continue;
        uint64_t li;
        const ival *in = NULL;
        if (s->correlation != GP_NONE && gp_u64map_get(&corr, (uint64_t)s->correlation, &li)) {
            const gp_slice *l = &t->slices.v[li];
            in = find_ival(iv, niv, l->track, l->ts);
        }
        if (in) {
            out->regions[in->region].gpu_ns += s->dur;
            out->regions[in->region].kernels++;
            out->region_gpu_ns += s->dur;
        } else {
            out->eager_gpu_ns += s->dur;
            out->eager_kernels++;
        }
        int ops = k == GP_K_KERNEL ? gp_fused_op_count(gp_trace_s(t, s->name)) : 0;
        if (ops > 0) {
            uint64_t *slot = gp_u64map_slot(&fmap, s->name, out->nfused);
            if (!slot) goto out;
            if (*slot == out->nfused) {
                gp_fused_kernel *nf = realloc(out->fused, (out->nfused + 1) * sizeof *nf);
                if (!nf) goto out;
                out->fused = nf;
                nf[out->nfused++] = (gp_fused_kernel){s->name, 0, 0, ops};
                out->fused_ops += (uint64_t)ops;
            }
            out->fused[*slot].count++;
            out->fused[*slot].gpu_ns += s->dur;
        }
    }
    qsort(out->fused, out->nfused, sizeof *out->fused, cmp_fused);
    if (out->nfused) out->fusion_ratio = (double)out->fused_ops / (double)out->nfused;
    /* eager CPU time: the windows (steps, else the CPU operators' span) less
     * the union of compiled regions and cache lookups */
    qsort(cov, ncov, 2 * sizeof *cov, cmp_i64pair);
    size_t m = 0;
    for (size_t i = 0; i < ncov; i++) {
        if (m && cov[2 * i] <= cov[2 * (m - 1) + 1]) {
            if (cov[2 * i + 1] > cov[2 * (m - 1) + 1]) cov[2 * (m - 1) + 1] = cov[2 * i + 1];
        } else {
            cov[2 * m] = cov[2 * i];
            cov[2 * m + 1] = cov[2 * i + 1];
            m++;
        }
    }
    out->steps = nsteps;
    if (nsteps) {
        for (size_t i = 0; i < nsteps; i++) {
            const gp_slice *st = &t->slices.v[steps[i]];
            out->eager_cpu_ns += uncovered(st->ts, st->ts + st->dur, cov, m);
            uint64_t calls = 0;
            for (size_t j = 0; j < niv; j++)
                calls += iv[j].b >= st->ts && iv[j].b < st->ts + st->dur;
            if (calls > out->max_regions_per_step) out->max_regions_per_step = calls;
            out->steps_with_breaks += calls > 1;
        }
    } else if (cpu_b < cpu_e) {
        out->eager_cpu_ns = uncovered(cpu_b, cpu_e, cov, m);
    }
    rc = 0;
out:
    free(iv);
    free(cov);
    free(steps);
    gp_u64map_free(&corr);
    gp_u64map_free(&rmap);
    gp_u64map_free(&fmap);
    if (rc) gp_compiled_trace_free(out);
    return rc;
}

void gp_compiled_trace_free(gp_compiled_trace *c)
{
    free(c->regions);
    free(c->fused);
    memset(c, 0, sizeof *c);
    c->fusion_ratio = NAN;
}

/* ---- speedup over eager -------------------------------------------------- */

static double ratio(double a, double b)
{
    return a > 0 && b > 0 ? a / b : NAN;
}

int gp_compile_speedup_of(gp_trace *eager, gp_trace *compiled, gp_compile_speedup *out)
{
    memset(out, 0, sizeof *out);
    gp_compare_opts o;
    gp_compare_opts_default(&o);
    int rc = gp_compare_runs(&eager, 1, &compiled, 1, &o, &out->cmp);
    if (rc) return rc;
    const gp_comparison *c = &out->cmp;
    out->step_eager_ns = out->step_compiled_ns = NAN;
    double ge[GP_G__COUNT] = {0}, gc[GP_G__COUNT] = {0};
    for (size_t i = 0; i < c->n; i++) {
        const gp_cmp_row *r = &c->rows[i];
        if (!strcmp(gp_strtab_get(c->names, r->name), "ProfilerStep#*")) {
            out->step_eager_ns = r->base.mean_ns;
            out->step_compiled_ns = r->cur.mean_ns;
            continue; /* a step contains the ops: kept out of the group sums */
        }
        if (r->group >= GP_G__COUNT) continue;
        ge[r->group] += r->base.total_ns;
        gc[r->group] += r->cur.total_ns;
    }
    out->step_speedup = ratio(out->step_eager_ns, out->step_compiled_ns);
    out->gpu_speedup = ratio(c->base_gpu_ns, c->cur_gpu_ns);
    for (int g = 0; g < GP_G__COUNT; g++) {
        if (ge[g] <= 0 && gc[g] <= 0) continue;
        gp_speedup_group *sg = &out->groups[out->ngroups++];
        sg->group = (gp_group)g;
        sg->eager_ns = ge[g];
        sg->compiled_ns = gc[g];
        sg->speedup = ratio(ge[g], gc[g]);
    }
    return 0;
}

void gp_compile_speedup_free(gp_compile_speedup *s)
{
    gp_comparison_free(&s->cmp);
    memset(s, 0, sizeof *s);
}

/* ---- the logs of one `gpuprof compile` ---------------------------------------- */

static int has_suffix(const char *s, const char *suf)
{
    size_t n = strlen(s), k = strlen(suf);
    return n >= k && !strcmp(s + n - k, suf);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void add_file(gp_compile_logs *c, const char *path)
{
    c->files = gp_xrealloc(c->files, (c->nfiles + 1) * sizeof *c->files);
    c->files[c->nfiles++] = gp_xstrdup(path);
}

int gp_compile_logs_add(gp_compile_logs *c, const char *path, gp_err *err)
{
    struct stat st;
    if (stat(path, &st)) return gp_err_set(err, GP_EIO, "%s: %s", path, strerror(errno));
    if (!S_ISDIR(st.st_mode)) {
        add_file(c, path);
        return 0;
    }
    DIR *d = opendir(path);
    if (!d) return gp_err_set(err, GP_EIO, "%s: %s", path, strerror(errno));
    size_t first = c->nfiles;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!has_suffix(e->d_name, ".log") && !has_suffix(e->d_name, ".log.gz")) continue;
        size_t len = strlen(path) + strlen(e->d_name) + 2;
        char *p = gp_xmalloc(len);
        snprintf(p, len, "%s/%s", path, e->d_name);
        if (stat(p, &st) == 0 && S_ISREG(st.st_mode)) add_file(c, p);
        free(p);
    }
    closedir(d);
    if (c->nfiles == first)
        return gp_err_set(err, GP_EINVAL,
                          "%s: no TORCH_TRACE logs (*.log, *.log.gz) in this folder", path);
    qsort(c->files + first, c->nfiles - first, sizeof *c->files, cmp_str);
    return 0;
}

int gp_compile_logs_read(gp_compile_logs *c, const gp_tt_opts *o, gp_err *err)
{
    c->logs = gp_xcalloc(c->nfiles ? c->nfiles : 1, sizeof *c->logs);
    for (size_t i = 0; i < c->nfiles; i++) {
        int rc = gp_tlog_read_file(c->files[i], o, &c->logs[i], err);
        if (rc) return rc;
        c->nlogs++;
    }
    if (c->nlogs) {
        if (gp_advise_compile((const gp_tlog *const *)c->logs, c->nlogs, NULL, &c->adv))
            return gp_err_set(err, GP_ENOMEM, "out of memory");
        c->have_adv = 1;
    }
    if (c->nlogs >= 2) {
        if (gp_rank_divergence_of((const gp_tlog *const *)c->logs, c->nlogs, &c->div))
            return gp_err_set(err, GP_ENOMEM, "out of memory");
        c->have_div = 1;
    }
    return 0;
}

void gp_compile_logs_free(gp_compile_logs *c)
{
    if (c->have_adv) gp_advice_list_free(&c->adv);
    if (c->have_div) gp_rank_divergence_free(&c->div);
    for (size_t i = 0; i < c->nlogs; i++) gp_tlog_destroy(c->logs[i]);
    free(c->logs);
    for (size_t i = 0; i < c->nfiles; i++) free(c->files[i]);
    free(c->files);
    memset(c, 0, sizeof *c);
}
