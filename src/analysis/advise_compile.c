/* analysis/advise_compile.c: the torch.compile rules of the advice engine:
 * graph breaks, recompiles and failures read from TORCH_TRACE logs, sorted
 * into classes by their reason text, each class with its own fix. */
#include "analysis/advise_compile.h"
#include "analysis/compile.h"
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* case-insensitive substring search */
static int has(const char *s, const char *needle)
{
    size_t k = strlen(needle);
    for (; *s; s++)
        if (!strncasecmp(s, needle, k)) return 1;
    return 0;
}

static int has_any(const char *s, const char *const *needles)
{
    for (; *needles; needles++)
        if (has(s, *needles)) return 1;
    return 0;
}

static const char *const data_dep[] = {
    "data dependent",      "data-dependent",         "datadependent", "generic_jump", ".item()",
    "_local_scalar_dense", "dynamic shape operator", "nonzero",       "unbacked",     NULL};
static const char *const unsupported[] = {"builtin",       "unsupported", "not supported",
                                          "call_function", "call_method", "UserDefined",
                                          "inline",        NULL};
static const char *const skipped[] = {
    "skip function", "graph_break",           "skipfiles", "skip_files",
    "disallow",      "torch._dynamo.disable", NULL};

gp_break_class gp_break_classify(const char *reason)
{
    if (!reason) return GP_BC_OTHER;
    if (has_any(reason, data_dep)) return GP_BC_DATA_DEPENDENT;
    if (has_any(reason, skipped)) return GP_BC_SKIPPED;
    if (has_any(reason, unsupported)) return GP_BC_UNSUPPORTED;
    return GP_BC_OTHER;
}

int gp_recompile_is_shape(const char *reason)
{
    static const char *const shape[] = {"size mismatch", "stride mismatch", "size()",
                                        "stride()",      "dimensionality",  "shape",
                                        "dim ",          "numel",           NULL};
    return reason && has_any(reason, shape);
}

/* ---- evidence ------------------------------------------------------------ */

static void ev_add(gp_advice *a, const gp_tlog *l, size_t nlogs, const gp_tt_compile *c,
                   const char *reason, uint64_t count)
{
    if (a->nev >= GP_ADV_MAX_EVIDENCE) return;
    gp_adv_evidence *x = &a->ev[a->nev++];
    memset(x, 0, sizeof *x);
    uint32_t file, fn;
    int64_t line;
    gp_compile_user_frame(c, &file, &line, &fn);
    char rank[24] = "";
    if (nlogs > 1 && l->rank != GP_TT_NONE) snprintf(rank, sizeof rank, "rank %d: ", l->rank);
    char where[96] = "";
    if (file && line != GP_TT_NONE)
        snprintf(where, sizeof where, " at %.60s:%lld", gp_tlog_s(l, file), (long long)line);
    else if (file)
        snprintf(where, sizeof where, " at %.80s", gp_tlog_s(l, file));
    /* the evidence name is cut to its field (a long function name loses its tail) */
    if (snprintf(x->name, sizeof x->name, "%s%s %s%s", rank, c->id, fn ? gp_tlog_s(l, fn) : "?",
                 where) >= (int)sizeof x->name)
        x->name[sizeof x->name - 1] = 0;
    snprintf(x->detail, sizeof x->detail, "%s", reason ? reason : "");
    x->count = count;
    double s = gp_compile_time_s(c);
    x->time_ns = isnan(s) ? GP_NONE : (int64_t)llround(s * 1e9);
    x->value = NAN;
    x->unit = GP_ADV_U_NONE;
}

/* Collects the records whose reasons match `want` (a class of graph break
 * restart reason / failure reason); fills a; returns how many reasons. */
typedef int (*reason_pred)(const char *reason, const void *arg);

typedef enum { SRC_BREAKS, SRC_FAILURE, SRC_RECOMPILES } src_kind;

static uint64_t collect(const gp_tlog *const *logs, size_t n, src_kind src, reason_pred pred,
                        const void *arg, gp_advice *a, int64_t *time_ns, uint64_t *ids)
{
    uint64_t total = 0;
    *time_ns = 0;
    *ids = 0;
    for (size_t li = 0; li < n; li++) {
        const gp_tlog *l = logs[li];
        for (size_t i = 0; i < l->compiles.n; i++) {
            const gp_tt_compile *c = &l->compiles.v[i];
            uint64_t hits = 0;
            const char *first = NULL;
            if (src == SRC_FAILURE) {
                if (c->fail_type) {
                    const char *r = c->fail_reason ? gp_tlog_s(l, c->fail_reason) : "";
                    if (pred(r, arg)) {
                        hits = 1;
                        first = r;
                    }
                }
            } else {
                const uint32_t *v =
                    src == SRC_BREAKS ? c->restart_reasons.v : c->recompile_reasons.v;
                size_t k = src == SRC_BREAKS ? c->restart_reasons.n : c->recompile_reasons.n;
                for (size_t j = 0; j < k; j++) {
                    const char *r = gp_tlog_s(l, v[j]);
                    if (!pred(r, arg)) continue;
                    hits++;
                    if (!first) first = r;
                }
            }
            if (!hits) continue;
            total += hits;
            (*ids)++;
            double s = gp_compile_time_s(c);
            if (!isnan(s)) *time_ns += (int64_t)llround(s * 1e9);
            if (src == SRC_FAILURE && c->fail_type) {
                char buf[256];
                snprintf(buf, sizeof buf, "%s: %s", gp_tlog_s(l, c->fail_type), first);
                ev_add(a, l, n, c, buf, hits);
            } else {
                ev_add(a, l, n, c, first, hits);
            }
        }
    }
    return total;
}

static int pred_class(const char *r, const void *arg)
{
    return gp_break_classify(r) == *(const gp_break_class *)arg;
}

static int pred_shape(const char *r, const void *arg)
{
    return gp_recompile_is_shape(r) == *(const int *)arg;
}

static int pred_any(const char *r, const void *arg)
{
    (void)r;
    (void)arg;
    return 1;
}

static void finish(gp_advice *a, int64_t time_ns, gp_priority prio)
{
    a->priority = prio;
    a->time_ns = time_ns;
    a->saving_ns = GP_NONE;
    a->saving_pct = NAN;
}

static int break_rule(const gp_tlog *const *logs, size_t n, const double *p, gp_advice *a,
                      gp_break_class cls, const char *what)
{
    int64_t tm;
    uint64_t ids;
    uint64_t k = collect(logs, n, SRC_BREAKS, pred_class, &cls, a, &tm, &ids);
    if (k < (uint64_t)p[0] || !k) return 0;
    snprintf(a->finding, sizeof a->finding, "%llu graph break%s %s in %llu compile id%s",
             (unsigned long long)k, k == 1 ? "" : "s", what, (unsigned long long)ids,
             ids == 1 ? "" : "s");
    finish(a, tm, cls == GP_BC_SKIPPED ? GP_PRIO_LOW : GP_PRIO_HIGH);
    snprintf(a->estimate, sizeof a->estimate,
             "each break splits the graph: fewer, larger graphs fuse more and run less Python");
    return 1;
}

int gp_advc_data_dependent(const gp_tlog *const *logs, size_t n, const double *p, gp_advice *a)
{
    return break_rule(logs, n, p, a, GP_BC_DATA_DEPENDENT, "from data-dependent control flow");
}

int gp_advc_unsupported(const gp_tlog *const *logs, size_t n, const double *p, gp_advice *a)
{
    return break_rule(logs, n, p, a, GP_BC_UNSUPPORTED, "on unsupported builtins or calls");
}

int gp_advc_skipped(const gp_tlog *const *logs, size_t n, const double *p, gp_advice *a)
{
    return break_rule(logs, n, p, a, GP_BC_SKIPPED, "at skipped functions or graph_break()");
}

int gp_advc_other_break(const gp_tlog *const *logs, size_t n, const double *p, gp_advice *a)
{
    return break_rule(logs, n, p, a, GP_BC_OTHER, "of other kinds");
}

static int recompile_rule(const gp_tlog *const *logs, size_t n, const double *p, gp_advice *a,
                          int shape)
{
    int64_t tm;
    uint64_t ids;
    uint64_t k = collect(logs, n, SRC_RECOMPILES, pred_shape, &shape, a, &tm, &ids);
    if (ids < (uint64_t)p[0] || !k) return 0;
    snprintf(a->finding, sizeof a->finding, "%llu recompile%s caused by %s (%llu reasons)",
             (unsigned long long)ids, ids == 1 ? "" : "s",
             shape ? "changing input shapes" : "failed guards on values or objects",
             (unsigned long long)k);
    finish(a, tm, ids >= 8 ? GP_PRIO_HIGH : GP_PRIO_MEDIUM);
    snprintf(a->estimate, sizeof a->estimate, "up to the recompiles' compile time");
    if (tm > 0) a->saving_ns = tm;
    return 1;
}

int gp_advc_dynamic_shapes(const gp_tlog *const *logs, size_t n, const double *p, gp_advice *a)
{
    return recompile_rule(logs, n, p, a, 1);
}

int gp_advc_guard_recompiles(const gp_tlog *const *logs, size_t n, const double *p, gp_advice *a)
{
    return recompile_rule(logs, n, p, a, 0);
}

int gp_advc_recompile_limit(const gp_tlog *const *logs, size_t n, const double *p, gp_advice *a)
{
    /* frames recompiled at least `limit` times, or a reason naming the limit */
    int64_t tm = 0;
    uint64_t frames = 0;
    for (size_t li = 0; li < n; li++) {
        const gp_tlog *l = logs[li];
        for (size_t i = 0; i < l->compiles.n; i++) {
            const gp_tt_compile *c = &l->compiles.v[i];
            int named = 0;
            const char *why = NULL;
            for (size_t j = 0; j < c->restart_reasons.n && !named; j++) {
                why = gp_tlog_s(l, c->restart_reasons.v[j]);
                named = has(why, "cache_size_limit") || has(why, "recompile_limit");
            }
            if (!named && c->fail_reason) {
                why = gp_tlog_s(l, c->fail_reason);
                named = has(why, "cache_size_limit") || has(why, "recompile_limit");
            }
            /* the frame's highest frame_compile_id reaching the limit */
            int last = c->n_metrics && c->frame_compile_id + 1 >= (int64_t)p[0];
            for (size_t j = i + 1; j < l->compiles.n && last; j++)
                if (l->compiles.v[j].frame_id == c->frame_id && l->compiles.v[j].n_metrics)
                    last = 0;
            if (!named && !last) continue;
            frames++;
            char buf[256];
            if (named)
                snprintf(buf, sizeof buf, "%s", why);
            else
                snprintf(buf, sizeof buf, "frame %lld compiled %lld times (limit %g)",
                         (long long)c->frame_id, (long long)c->frame_compile_id + 1, p[0]);
            for (size_t j = 0; j < l->compiles.n; j++) {
                const gp_tt_compile *d = &l->compiles.v[j];
                double s = gp_compile_time_s(d);
                if (d->frame_id == c->frame_id && d->n_metrics && !isnan(s) && !named)
                    tm += (int64_t)llround(s * 1e9);
            }
            ev_add(a, l, n, c, buf, (uint64_t)(c->frame_compile_id + 1));
        }
    }
    if (!frames) return 0;
    snprintf(a->finding, sizeof a->finding,
             "%llu frame%s at the recompile limit: past it Dynamo runs the frame eagerly",
             (unsigned long long)frames, frames == 1 ? "" : "s");
    finish(a, tm, GP_PRIO_CRITICAL);
    snprintf(a->estimate, sizeof a->estimate, "the frames fall back to eager execution");
    return 1;
}

int gp_advc_failure(const gp_tlog *const *logs, size_t n, const double *p, gp_advice *a)
{
    int64_t tm;
    uint64_t ids;
    uint64_t k = collect(logs, n, SRC_FAILURE, pred_any, NULL, a, &tm, &ids);
    if (k < (uint64_t)p[0] || !k) return 0;
    snprintf(a->finding, sizeof a->finding, "%llu compilation%s failed", (unsigned long long)k,
             k == 1 ? "" : "s");
    finish(a, tm, GP_PRIO_CRITICAL);
    snprintf(a->estimate, sizeof a->estimate, "the failed frames run eagerly (or raise)");
    return 1;
}

int gp_advc_cache_miss(const gp_tlog *const *logs, size_t n, const double *p, gp_advice *a)
{
    uint64_t miss = 0, hit = 0;
    double secs = 0;
    for (size_t li = 0; li < n; li++) {
        gp_compile_totals t;
        gp_compile_totals_of(logs[li], &t);
        miss += t.fx_miss;
        hit += t.fx_hit;
        secs += t.compile_time_s;
        const gp_tlog *l = logs[li];
        for (size_t i = 0; i < l->compiles.n; i++)
            if (l->compiles.v[i].fx_miss) {
                char buf[64];
                snprintf(buf, sizeof buf, "fx_graph_cache_miss x%u", l->compiles.v[i].fx_miss);
                ev_add(a, l, n, &l->compiles.v[i], buf, l->compiles.v[i].fx_miss);
            }
    }
    if (!miss || hit || secs < p[0]) {
        a->nev = 0;
        return 0;
    }
    snprintf(a->finding, sizeof a->finding,
             "%llu FX graph cache misses and no hit; %.1f s spent compiling",
             (unsigned long long)miss, secs);
    finish(a, (int64_t)llround(secs * 1e9), GP_PRIO_MEDIUM);
    snprintf(a->estimate, sizeof a->estimate, "warm-cache runs skip most of Inductor's time");
    return 1;
}
