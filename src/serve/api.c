/* serve/api.c: the route table and handlers of `gpuprof serve` (see api.h).
 * A handler checks its parameters first (400 before any trace is loaded),
 * then holds the trace(s) from the cache, answers from the bodies kept with
 * them or computes with the command's own analysis and writer. */
#include "serve/api.h"
#include "trace/sanitize.h"
#include "serve/timeline_body.h"
#include "analysis/advise.h"
#include "analysis/analyze.h"
#include "analysis/calltree.h"
#include "analysis/compare.h"
#include "analysis/memory.h"
#include "analysis/summary.h"
#include "core/jdom.h"
#include "monitor/monitor.h"
#include "monitor/session_dir.h"
#include "report/compile.h"
#include "serve/metrics.h"
#include "render/dashboard.h"
#include "render/flame.h"
#include "render/memview.h"
#include "render/report.h"
#include "report/advise.h"
#include "report/analyze.h"
#include "report/compare.h"
#include "report/devices.h"
#include "report/runs.h"
#include "report/sessions.h"
#include "report/summary.h"
#include "store/store.h"
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static const char *const JSON = "application/json";
static const char *const HTML = "text/html; charset=utf-8";

void gp_api_error(gp_resp *out, int status, const char *msg)
{
    gp_sbuf_reset(&out->body);
    out->status = status;
    out->ctype = JSON;
    out->html = 0;
    gp_sbuf_puts(&out->body, "{\"error\":");
    gp_json_str(&out->body, msg);
    gp_sbuf_printf(&out->body, ",\"status\":%d}\n", status);
}

/* The HTTP status of a GP_E* code from a handler. */
static int status_of(int rc)
{
    switch (rc) {
    case GP_EINVAL:
    case GP_EPARSE:
    case GP_ERANGE:
        return 400;
    case GP_ENOTFOUND:
        return 404;
    case GP_ENOMEM:
        return 503;
    case GP_EUNSUPPORTED:
        return 501;
    default:
        return 500;
    }
}

static void fail(gp_resp *out, int rc, const gp_err *err)
{
    gp_api_error(out, status_of(rc), err->msg[0] ? err->msg : gp_strerror(rc));
}

/* ---- computing from held traces ------------------------------------------------------------ */

/* Computes the body of one request from n traces named `name`; returns 0
 * or a GP_E* code with err set. */
typedef int (*compute_fn)(gp_trace *const *t, size_t n, const char *name, const void *opts,
                          gp_sbuf *b, gp_err *err);

/* The cache key of a request: its path and its parameters in order. */
static void cache_key(gp_sbuf *k, const gp_target *t)
{
    gp_sbuf_puts(k, t->path);
    const char *keys[GP_QUERY_MAX];
    size_t n = t->q.n;
    for (size_t i = 0; i < n; i++) keys[i] = t->q.key[i];
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && strcmp(keys[j], keys[j - 1]) < 0; j--) {
            const char *x = keys[j];
            keys[j] = keys[j - 1];
            keys[j - 1] = x;
        }
    for (size_t i = 0; i < n; i++) {
        const char *v = gp_query_get(&t->q, keys[i]);
        gp_sbuf_printf(k, "%c%s=%zu:%s", i ? ';' : '?', keys[i], strlen(v), v);
    }
}

/* Answers a request from the trace it names: the body kept for it, or
 * computed by fn. args: fn writes the events' args text (gp_tentry_args
 * reads it in first; a file that changed since the load is loaded again,
 * once). */
static void with_trace_args(gp_serve_ctx *ctx, const gp_target *t, compute_fn fn, const void *opts,
                            const char *ctype, gp_resp *out, int args)
{
    const char *id = gp_query_get(&t->q, "trace");
    if (!id) {
        gp_api_error(out, 400, "trace=ID is required (the ids are listed by /api/traces)");
        return;
    }
    gp_sbuf key = {0};
    cache_key(&key, t);
    gp_sbuf_cstr(&key);
    out->ctype = ctype;
    out->html = ctype == HTML;
    gp_err err = {0};
    int rc, changed = 0;
    for (int attempt = 0;; attempt++) {
        gp_tentry *e;
        rc = gp_tcache_acquire(ctx->cache, id, &e, &err);
        if (rc) {
            gp_api_error(out, rc == GP_ENOTFOUND ? 404 : 422, err.msg);
            gp_sbuf_free(&key);
            return;
        }
        if (!gp_tentry_body_get(ctx->cache, e, key.s, &out->body)) {
            if (args) rc = gp_tentry_args(ctx->cache, e, &err);
            if (rc) {
                gp_tentry_body_abandon(ctx->cache, e, key.s);
                gp_tcache_release(ctx->cache, e);
                if (rc == GP_ESTATE && attempt == 0) { /* changed since the load: again */
                    gp_err_clear(&err);
                    continue;
                }
                changed = rc == GP_ESTATE;
                break;
            }
            size_t n;
            gp_trace *const *tr = gp_tentry_traces(e, &n);
            rc = fn(tr, n, gp_tentry_name(e), opts, &out->body, &err);
            if (!rc)
                gp_tentry_body_put(ctx->cache, e, key.s, &out->body,
                                   ctype == HTML ? GP_API_KEPT_HTML : GP_API_KEPT_JSON);
            else
                gp_tentry_body_abandon(ctx->cache, e, key.s);
        }
        gp_tcache_release(ctx->cache, e);
        break;
    }
    gp_sbuf_free(&key);
    if (changed) /* changed again while it was read: a later request gets it */
        gp_api_error(out, 503, err.msg);
    else if (rc)
        fail(out, rc, &err);
    else
        out->status = 200;
}

static void with_trace(gp_serve_ctx *ctx, const gp_target *t, compute_fn fn, const void *opts,
                       const char *ctype, gp_resp *out)
{
    with_trace_args(ctx, t, fn, opts, ctype, out, 0);
}

/* ---- summary and kernels ------------------------------------------------------------------- */

static int parse_groups(const char *v, unsigned *mask, gp_err *err)
{
    char buf[GP_QVAL_MAX + 1];
    snprintf(buf, sizeof buf, "%s", v);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int g = gp_group_parse(tok);
        if (g < 0) return gp_err_set(err, GP_EINVAL, "category: unknown category '%.40s'", tok);
        *mask |= 1u << g;
    }
    return 0;
}

static int c_summary(gp_trace *const *t, size_t n, const char *name, const void *opts, gp_sbuf *b,
                     gp_err *err)
{
    gp_summary *s = calloc(n, sizeof *s);
    if (!s) return gp_err_set(err, GP_ENOMEM, "out of memory");
    size_t done = 0;
    int rc = 0;
    for (; done < n; done++)
        if (gp_summary_compute(t[done], &s[done])) {
            rc = gp_err_set(err, GP_ENOMEM, "out of memory");
            break;
        }
    if (!rc) gp_report_summary_json_doc(b, t, s, n, opts);
    for (size_t i = 0; i < done; i++) gp_summary_free(&s[i]);
    free(s);
    return rc;
}

static void h_summary(gp_serve_ctx *ctx, const gp_target *t, gp_resp *out, int kernels)
{
    static const char *const ok_s[] = {"trace", "top", "bottlenecks", "category", NULL};
    static const char *const ok_k[] = {"trace", "top", "bottlenecks", NULL};
    gp_summary_view v;
    gp_summary_view_default(&v, 1);
    gp_err err = {0};
    long top = -1, bn = 10;
    unsigned mask = 0;
    const char *cat = gp_query_get(&t->q, "category");
    int rc = gp_query_only(&t->q, kernels ? ok_k : ok_s, &err);
    if (!rc) rc = gp_query_long(&t->q, "top", 0, 1L << 30, &top, &err);
    if (!rc) rc = gp_query_long(&t->q, "bottlenecks", 0, 1L << 20, &bn, &err);
    if (!rc && cat) rc = parse_groups(cat, &mask, &err);
    if (rc) {
        fail(out, rc, &err);
        return;
    }
    v.top = top;
    v.bottlenecks = bn;
    if (kernels)
        v.mask = 1u << GP_G_KERNEL;
    else if (mask)
        v.mask = mask;
    with_trace(ctx, t, c_summary, &v, JSON, out);
}

/* ---- analyze (HTA) -------------------------------------------------------------------------- */

static int c_hta(gp_trace *const *t, size_t n, const char *name, const void *opts, gp_sbuf *b,
                 gp_err *err)
{
    gp_analyze_result r;
    int rc = gp_analyze_run(t, n, opts, &r, err);
    if (rc) return rc == GP_ENOMEM ? rc : GP_EINVAL;
    gp_report_analyze_json(b, &r, opts);
    gp_analyze_free(&r);
    return 0;
}

static int q_us(const gp_query *q, const char *key, int64_t *ns, gp_err *err)
{
    double v = -1;
    int rc = gp_query_double(q, key, 0, 9e12, &v, err);
    if (!rc && v >= 0) *ns = (int64_t)(v * 1000.0 + 0.5);
    return rc;
}

static void h_hta(gp_serve_ctx *ctx, const gp_target *t, gp_resp *out)
{
    static const char *const ok[] = {"trace",
                                     "compat",
                                     "top",
                                     "duration_ratio",
                                     "kernel_wait_us",
                                     "runtime_cutoff_us",
                                     "delay_cutoff_us",
                                     "queue_full",
                                     "straggler_z",
                                     NULL};
    static const char *const compat[] = {"hta", NULL};
    gp_analyze_opts o;
    gp_analyze_opts_default(&o);
    gp_err err = {0};
    int c = -1;
    long queue = o.queue_full;
    int rc = gp_query_only(&t->q, ok, &err);
    if (!rc) rc = gp_query_enum(&t->q, "compat", compat, &c, &err);
    if (!rc) rc = gp_query_long(&t->q, "top", 0, 1L << 20, &o.top, &err);
    if (!rc) rc = gp_query_double(&t->q, "duration_ratio", 0, 1, &o.ratio, &err);
    if (!rc) rc = q_us(&t->q, "kernel_wait_us", &o.kernel_wait_ns, &err);
    if (!rc) rc = q_us(&t->q, "runtime_cutoff_us", &o.lo.runtime_cutoff_ns, &err);
    if (!rc) rc = q_us(&t->q, "delay_cutoff_us", &o.lo.launch_delay_cutoff_ns, &err);
    if (!rc) rc = gp_query_long(&t->q, "queue_full", 0, 1L << 40, &queue, &err);
    if (!rc) rc = gp_query_double(&t->q, "straggler_z", 1e-9, 1e9, &o.straggler_z, &err);
    if (rc) {
        fail(out, rc, &err);
        return;
    }
    o.compat = c == 0;
    o.queue_full = queue;
    with_trace(ctx, t, c_hta, &o, JSON, out);
}

/* ---- flame ---------------------------------------------------------------------------------- */

typedef struct flame_opts {
    gp_ftree_prune_opts po;
    int html;
} flame_opts;

static int c_flame(gp_trace *const *t, size_t n, const char *name, const void *opts, gp_sbuf *b,
                   gp_err *err)
{
    const flame_opts *fo = opts;
    gp_ftree tree, prt, *use;
    if (gp_ftree_build_traces(&tree, t, n)) return gp_err_set(err, GP_ENOMEM, "out of memory");
    gp_ftree_prune_opts po = fo->po;
    if (fo->html) gp_flame_page_limit(&tree, &po); /* as `gpuprof flame -o x.html` */
    if (gp_ftree_select(&tree, &po, &prt, &use)) {
        gp_ftree_fini(&tree);
        return gp_err_set(err, GP_ENOMEM, "out of memory");
    }
    if (fo->html) {
        const char *base = strrchr(name, '/');
        char title[512], note[256];
        snprintf(title, sizeof title, "Flame graph: %s", base && base[1] ? base + 1 : name);
        gp_flame_page_note(&tree, use, &po, fo->po.min_total, note, sizeof note);
        gp_flame_html(use, title, note[0] ? note : NULL, b);
    } else {
        gp_flame_json(use, b);
    }
    if (use == &prt) gp_ftree_fini(&prt);
    gp_ftree_fini(&tree);
    return 0;
}

static void h_flame(gp_serve_ctx *ctx, const gp_target *t, gp_resp *out, int html)
{
    static const char *const ok[] = {"trace", "min_duration", "max_depth", "group_small_kernels",
                                     NULL};
    flame_opts fo = {{0, 0, 0}, html};
    long long md = 0, gs = 0;
    long depth = 0;
    gp_err err = {0};
    int rc = gp_query_only(&t->q, ok, &err);
    if (!rc) rc = gp_query_dur(&t->q, "min_duration", &md, &err);
    if (!rc) rc = gp_query_long(&t->q, "max_depth", 0, 1L << 30, &depth, &err);
    if (!rc) rc = gp_query_dur(&t->q, "group_small_kernels", &gs, &err);
    if (rc) {
        fail(out, rc, &err);
        return;
    }
    fo.po.min_total = md;
    fo.po.max_depth = (uint32_t)depth;
    fo.po.group_gpu_below = gs;
    with_trace(ctx, t, c_flame, &fo, html ? HTML : JSON, out);
}

/* ---- memory --------------------------------------------------------------------------------- */

typedef struct mem_opts {
    long points;
    int html;
} mem_opts;

static int c_memory(gp_trace *const *t, size_t n, const char *name, const void *opts, gp_sbuf *b,
                    gp_err *err)
{
    const mem_opts *mo = opts;
    size_t nm = mo->html ? 1 : n, done = 0;
    gp_memory *m = calloc(nm, sizeof *m);
    int rc = m ? 0 : GP_ENOMEM;
    for (; !rc && done < nm; done++)
        if (gp_memory_compute(t[done], &m[done])) {
            rc = GP_ENOMEM;
            break;
        }
    if (!rc && mo->html)
        gp_memview_html(t[0], &m[0], b);
    else if (!rc)
        gp_memview_json_doc(t, m, n, (size_t)mo->points, b);
    for (size_t i = 0; i < done; i++) gp_memory_free(&m[i]);
    free(m);
    return rc ? gp_err_set(err, rc, "out of memory") : 0;
}

static void h_memory(gp_serve_ctx *ctx, const gp_target *t, gp_resp *out, int html)
{
    static const char *const ok[] = {"trace", "points", NULL};
    mem_opts mo = {2000, html};
    gp_err err = {0};
    int rc = gp_query_only(&t->q, ok, &err);
    if (!rc) rc = gp_query_long(&t->q, "points", 0, 1L << 24, &mo.points, &err);
    if (rc) {
        fail(out, rc, &err);
        return;
    }
    with_trace(ctx, t, c_memory, &mo, html ? HTML : JSON, out);
}

/* ---- timeline ------------------------------------------------------------------------------- */

static int c_timeline(gp_trace *const *t, size_t n, const char *name, const void *opts, gp_sbuf *b,
                      gp_err *err)
{
    if (n != 1)
        return gp_err_set(err, GP_EINVAL, "the timeline takes one trace (%zu found in %s)", n,
                          name);
    return gp_serve_timeline(t[0], *(const long *)opts != 0, b, err);
}

static void h_timeline(gp_serve_ctx *ctx, const gp_target *t, gp_resp *out, long html)
{
    static const char *const ok[] = {"trace", NULL};
    gp_err err = {0};
    int rc = gp_query_only(&t->q, ok, &err);
    if (rc) {
        fail(out, rc, &err);
        return;
    }
    static const long yes = 1, no = 0;
    /* the JSON is the lossless export: every event's args text (the page has none) */
    with_trace_args(ctx, t, c_timeline, html ? &yes : &no, html ? HTML : JSON, out, !html);
}

/* ---- report page ---------------------------------------------------------------------------- */

static int c_report(gp_trace *const *t, size_t n, const char *name, const void *opts, gp_sbuf *b,
                    gp_err *err)
{
    if (gp_report_html(t, n, b)) return gp_err_set(err, GP_ENOMEM, "out of memory");
    return 0;
}

static void h_view_report(gp_serve_ctx *ctx, const gp_target *t, gp_resp *out)
{
    static const char *const ok[] = {"trace", NULL};
    gp_err err = {0};
    int rc = gp_query_only(&t->q, ok, &err);
    if (rc) {
        fail(out, rc, &err);
        return;
    }
    with_trace(ctx, t, c_report, NULL, HTML, out);
}

/* ---- advise --------------------------------------------------------------------------------- */

typedef struct adv_opts {
    int minp;
    double (*values)[GP_ADV_MAX_PARAMS];
    unsigned char (*set)[GP_ADV_MAX_PARAMS];
    unsigned char *enabled;
} adv_opts;

static int c_advise(gp_trace *const *t, size_t n, const char *name, const void *opts, gp_sbuf *b,
                    gp_err *err)
{
    const adv_opts *o = opts;
    gp_advice_list *l = calloc(n + 1, sizeof *l);
    int rc = l ? 0 : GP_ENOMEM;
    size_t done = 0;
    if (!rc) {
        gp_advise_opts ao = {(const double(*)[GP_ADV_MAX_PARAMS])o->values,
                             (const unsigned char(*)[GP_ADV_MAX_PARAMS])o->set, o->enabled};
        for (; done < n; done++)
            if (gp_advise(t[done], &ao, &l[done])) {
                rc = GP_ENOMEM;
                break;
            }
    }
    if (!rc) gp_report_advise_json_doc(b, t, l, n, (gp_priority)o->minp);
    for (size_t i = 0; i < done; i++) gp_advice_list_free(&l[i]);
    free(l);
    return rc ? gp_err_set(err, rc, "out of memory") : 0;
}

/* The `set` parameter: a comma list of RULE.PARAM=VALUE (the repeated
 * --set of the command). */
static int adv_sets(const char *list, adv_opts *o, gp_err *err)
{
    char buf[GP_QVAL_MAX + 1], msg[512];
    snprintf(buf, sizeof buf, "%s", list);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
        if (gp_adv_parse_set(tok, o->values, o->set, msg, sizeof msg))
            return gp_err_set(err, GP_EINVAL, "set: %s", msg + (strncmp(msg, "--set ", 6) ? 0 : 6));
    return 0;
}

static void h_advise(gp_serve_ctx *ctx, const gp_target *t, gp_resp *out)
{
    static const char *const ok[] = {"trace", "min_priority", "only", "disable", "set", NULL};
    static const char *const prio[] = {"critical", "high", "medium", "low", NULL};
    adv_opts o = {GP_PRIO_LOW, NULL, NULL, NULL};
    size_t nr;
    gp_adv_rules(&nr);
    o.values = calloc(nr + 1, sizeof *o.values);
    o.set = calloc(nr + 1, sizeof *o.set);
    o.enabled = malloc(nr + 1);
    gp_err err = {0};
    char msg[256];
    int rc = o.values && o.set && o.enabled ? 0 : gp_err_set(&err, GP_ENOMEM, "out of memory");
    if (!rc) memset(o.enabled, 1, nr);
    const char *only = gp_query_get(&t->q, "only"), *dis = gp_query_get(&t->q, "disable"),
               *sets = gp_query_get(&t->q, "set");
    if (!rc) rc = gp_query_only(&t->q, ok, &err);
    if (!rc) rc = gp_query_enum(&t->q, "min_priority", prio, &o.minp, &err);
    if (!rc && only) {
        memset(o.enabled, 0, nr);
        if (gp_adv_parse_rules(only, o.enabled, 1, msg, sizeof msg))
            rc = gp_err_set(&err, GP_EINVAL, "only: %s", msg);
    }
    if (!rc && dis && gp_adv_parse_rules(dis, o.enabled, 0, msg, sizeof msg))
        rc = gp_err_set(&err, GP_EINVAL, "disable: %s", msg);
    if (!rc && sets) rc = adv_sets(sets, &o, &err);
    if (rc)
        fail(out, rc, &err);
    else
        with_trace(ctx, t, c_advise, &o, JSON, out);
    free(o.values);
    free(o.set);
    free(o.enabled);
}

/* ---- compare -------------------------------------------------------------------------------- */

/* As `gpuprof compare` does with a folder of runs: files without events are
 * not runs (unless every file is empty). Fills keep[0..*k) from t[0..n). */
static void nonempty(gp_trace *const *t, size_t n, gp_trace **keep, size_t *k)
{
    size_t ne = 0;
    for (size_t i = 0; i < n; i++) ne += t[i]->slices.n || t[i]->mem_events.n;
    *k = 0;
    for (size_t i = 0; i < n; i++)
        if (n < 2 || ne == 0 || ne == n || t[i]->slices.n || t[i]->mem_events.n)
            keep[(*k)++] = t[i];
}

static void h_compare(gp_serve_ctx *ctx, const gp_target *t, gp_resp *out)
{
    static const char *const ok[] = {"base", "current",    "alpha",    "threshold", "min_time",
                                     "mode", "correction", "category", "top",       NULL};
    static const char *const modes[] = {"auto", "instances", "runs", NULL};
    static const char *const corr[] = {"none", "holm", NULL};
    gp_compare_opts co;
    gp_compare_opts_default(&co);
    gp_compare_view v = {10, 0, 0};
    gp_err err = {0};
    int mode = -1, cr = -1;
    unsigned mask = 0;
    long long mt = co.min_time_ns;
    const char *bid = gp_query_get(&t->q, "base"), *cid = gp_query_get(&t->q, "current");
    const char *cat = gp_query_get(&t->q, "category");
    int rc = gp_query_only(&t->q, ok, &err);
    if (!rc && (!bid || !cid))
        rc = gp_err_set(&err, GP_EINVAL, "base=ID and current=ID are required");
    if (!rc) rc = gp_query_double(&t->q, "alpha", 0, 1, &co.alpha, &err);
    if (!rc) rc = gp_query_double(&t->q, "threshold", 0, 1e9, &co.threshold_pct, &err);
    if (!rc) rc = gp_query_dur(&t->q, "min_time", &mt, &err);
    if (!rc) rc = gp_query_enum(&t->q, "mode", modes, &mode, &err);
    if (!rc) rc = gp_query_enum(&t->q, "correction", corr, &cr, &err);
    if (!rc && cat) rc = parse_groups(cat, &mask, &err);
    if (!rc) rc = gp_query_long(&t->q, "top", 0, 1L << 30, &v.top, &err);
    if (rc) {
        fail(out, rc, &err);
        return;
    }
    co.min_time_ns = mt;
    if (mode >= 0) co.mode = mode == 0 ? GP_CMP_AUTO : mode == 1 ? GP_CMP_INSTANCES : GP_CMP_RUNS;
    if (cr >= 0) co.correction = cr == 0 ? GP_CORR_NONE : GP_CORR_HOLM;
    if (mask) co.group_mask = mask;
    gp_tentry *be, *ce;
    if ((rc = gp_tcache_acquire(ctx->cache, bid, &be, &err))) {
        gp_api_error(out, rc == GP_ENOTFOUND ? 404 : 422, err.msg);
        return;
    }
    if ((rc = gp_tcache_acquire(ctx->cache, cid, &ce, &err))) {
        gp_tcache_release(ctx->cache, be);
        gp_api_error(out, rc == GP_ENOTFOUND ? 404 : 422, err.msg);
        return;
    }
    /* not kept: the body depends on two traces that change independently */
    out->ctype = JSON;
    {
        size_t nb, nc, kb = 0, kc = 0;
        gp_trace *const *bt = gp_tentry_traces(be, &nb), *const *ct = gp_tentry_traces(ce, &nc);
        gp_trace **bk = calloc(nb + 1, sizeof *bk), **ck = calloc(nc + 1, sizeof *ck);
        if (!bk || !ck) {
            rc = gp_err_set(&err, GP_ENOMEM, "out of memory");
        } else {
            nonempty(bt, nb, bk, &kb);
            nonempty(ct, nc, ck, &kc);
            if (co.mode == GP_CMP_RUNS && (kb < 2 || kc < 2))
                rc = gp_err_set(&err, GP_EINVAL,
                                "mode=runs needs at least 2 runs on each side (got %zu and %zu)",
                                kb, kc);
        }
        gp_comparison cmp;
        if (!rc && (rc = gp_compare_runs(bk, kb, ck, kc, &co, &cmp)))
            gp_err_set(&err, rc, "compare: %s", gp_strerror(rc));
        if (!rc) {
            gp_report_compare_json(&out->body, &cmp, gp_tentry_name(be), gp_tentry_name(ce), &v);
            gp_comparison_free(&cmp);
        }
        free(bk);
        free(ck);
    }
    gp_tcache_release(ctx->cache, ce);
    gp_tcache_release(ctx->cache, be);
    if (rc)
        fail(out, rc, &err);
    else
        out->status = 200;
}

/* ---- listings ------------------------------------------------------------------------------- */

static int no_params(const gp_target *t, gp_resp *out)
{
    static const char *const none[] = {NULL};
    gp_err err = {0};
    int rc = gp_query_only(&t->q, none, &err);
    if (rc) fail(out, rc, &err);
    return rc;
}

static void h_traces(gp_serve_ctx *ctx, const gp_target *t, gp_resp *out)
{
    if (no_params(t, out)) return;
    gp_tcache_list_json(ctx->cache, &out->body);
    out->status = 200;
    out->ctype = JSON;
}

static void h_runs(gp_serve_ctx *ctx, const gp_target *t, gp_resp *out)
{
    if (no_params(t, out)) return;
    if (!ctx->store) {
        gp_api_error(out, 404, "no store is served (start gpuprof serve with --store FILE)");
        return;
    }
    gp_store_run_row *rows;
    size_t n;
    gp_err err = {0};
    if (gp_store_runs(ctx->store, &rows, &n, &err)) {
        gp_api_error(out, 500, err.msg);
        return;
    }
    for (size_t i = 0; ctx->redact && i < n; i++) { /* --redact: command and host */
        char *c = gp_sanitize_str(rows[i].command ? rows[i].command : "", ctx->redact_keep);
        char *h = gp_sanitize_str(rows[i].host ? rows[i].host : "", ctx->redact_keep);
        free(rows[i].command);
        free(rows[i].host);
        rows[i].command = c;
        rows[i].host = h;
    }
    gp_report_runs_json(&out->body, ctx->redact ? "<store>" : ctx->store, rows, n);
    gp_store_runs_free(rows, n);
    out->status = 200;
    out->ctype = JSON;
}

/* The monitor to read devices from: the running sampler, or a one-shot
 * monitor sampled as `gpuprof devices` (twice, 100 ms apart) / `gpuprof
 * health` (once) do. */
static void h_devices(gp_serve_ctx *ctx, const gp_target *t, gp_resp *out, int health)
{
    if (no_params(t, out)) return;
    gp_monitor *m = ctx->mon;
    if (!m) {
        gp_mon_config cfg = ctx->moncfg;
        cfg.enable_event_log = 0;
        if (!(m = gp_monitor_create(&cfg))) {
            gp_api_error(out, 503, "out of memory");
            return;
        }
        gp_monitor_sample_now(m);
        if (!health) {
            struct timespec ts = {0, 100 * 1000000L};
            nanosleep(&ts, NULL);
            gp_monitor_sample_now(m);
        }
    }
    if (health)
        gp_report_health_json(&out->body, m);
    else
        gp_report_devices_json(&out->body, m);
    if (m != ctx->mon) gp_monitor_destroy(m);
    out->status = 200;
    out->ctype = JSON;
}

/* Runs `gpuprof session ACTION NAME [...]` (the command itself, so that a
 * session started here is the same background sampler); its first output
 * line becomes the message. Returns its exit status, or -1. */
static int run_session(gp_serve_ctx *ctx, const char *action, const char *name, const char *desc,
                       char *msg, size_t mn)
{
    const char *argv[12];
    int k = 0;
    argv[k++] = "gpuprof";
    argv[k++] = "session";
    argv[k++] = action;
    argv[k++] = name;
    if (desc && desc[0]) {
        argv[k++] = "--description";
        argv[k++] = desc;
    }
    if (ctx->config) {
        argv[k++] = "--config";
        argv[k++] = ctx->config;
    }
    argv[k] = NULL;
    int fd[2];
    if (pipe2(fd, O_CLOEXEC)) return -1;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fd[1], 1);
    posix_spawn_file_actions_adddup2(&fa, fd[1], 2);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    /* the server blocks SIGINT/SIGTERM and ignores SIGPIPE: the command (and
     * the session's background sampler it starts) must not inherit that */
    posix_spawnattr_t at;
    posix_spawnattr_init(&at);
    sigset_t none, defs;
    sigemptyset(&none);
    sigemptyset(&defs);
    sigaddset(&defs, SIGPIPE);
    sigaddset(&defs, SIGINT);
    sigaddset(&defs, SIGTERM);
    posix_spawnattr_setsigmask(&at, &none);
    posix_spawnattr_setsigdefault(&at, &defs);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    pid_t pid;
    int rc = posix_spawn(&pid, ctx->self_exe, &fa, &at, (char *const *)argv, environ);
    posix_spawnattr_destroy(&at);
    posix_spawn_file_actions_destroy(&fa);
    close(fd[1]);
    if (rc) {
        close(fd[0]);
        snprintf(msg, mn, "cannot run %s: %s", ctx->self_exe, strerror(rc));
        return -1;
    }
    size_t got = 0;
    ssize_t r;
    while (got + 1 < mn && (r = read(fd[0], msg + got, mn - 1 - got)) > 0) got += (size_t)r;
    msg[got] = 0;
    char drain[256];
    while (read(fd[0], drain, sizeof drain) > 0) {
    }
    close(fd[0]);
    char *nl = strchr(msg, '\n');
    if (nl) *nl = 0;
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* GET /api/sessions?name=NAME: the report of one session, the bytes of
 * `gpuprof session show NAME --json`. */
static void h_session_show(gp_serve_ctx *ctx, const char *name, gp_resp *out)
{
    if (!gp_session_valid_name(name)) {
        gp_api_error(out, 400, "name: letters, digits, '.', '_', '-' (1..63, not starting '.')");
        return;
    }
    char path[1200], msg[1400];
    int running;
    char *text = gp_session_report_read(ctx->moncfg.output_dir, name, path, sizeof path, &running);
    if (!text) {
        snprintf(msg, sizeof msg,
                 running ? "session '%s' is still running; its report is written when it stops"
                         : "no report of session '%s'",
                 name);
        gp_api_error(out, running ? 409 : 404, msg);
        return;
    }
    gp_sbuf_puts(&out->body, text);
    free(text);
    out->status = 200;
    out->ctype = JSON;
}

static void h_sessions(gp_serve_ctx *ctx, unsigned method, const gp_target *t, const char *body,
                       size_t bn, gp_resp *out)
{
    static const char *const show[] = {"name", NULL};
    const char *qname = gp_query_get(&t->q, "name");
    if (method != GP_M_POST && qname) {
        gp_err qerr = {0};
        if (gp_query_only(&t->q, show, &qerr))
            fail(out, GP_EINVAL, &qerr);
        else
            h_session_show(ctx, qname, out);
        return;
    }
    if (no_params(t, out)) return;
    if (method != GP_M_POST) {
        gp_session_entry *s = calloc(576, sizeof *s);
        if (!s) {
            gp_api_error(out, 503, "out of memory");
            return;
        }
        size_t n = gp_session_list(ctx->moncfg.output_dir, s, 576);
        gp_report_sessions_json(&out->body, s, n);
        free(s);
        out->status = 200;
        out->ctype = JSON;
        return;
    }
    gp_jv doc;
    gp_err err = {0};
    if (gp_jdom_parse(body ? body : "", bn, &doc, &err) || doc.type != GP_JOBJ) {
        if (!err.msg[0]) snprintf(err.msg, sizeof err.msg, "the body must be a JSON object");
        gp_api_error(out, 400, err.msg);
        if (!err.code) gp_jdom_free(&doc);
        return;
    }
    const char *action = gp_jdom_str(gp_jdom_get(&doc, "action"), "");
    const char *name = gp_jdom_str(gp_jdom_get(&doc, "name"), "");
    const char *desc = gp_jdom_str(gp_jdom_get(&doc, "description"), "");
    if (strcmp(action, "start") && strcmp(action, "stop") && strcmp(action, "snapshot")) {
        gp_api_error(out, 400, "action must be start, stop or snapshot");
    } else if (!gp_session_valid_name(name)) {
        gp_api_error(out, 400, "name: letters, digits, '.', '_', '-' (1..63, not starting '.')");
    } else if (strlen(desc) > 256 || strchr(desc, '\n')) {
        gp_api_error(out, 400, "description: one line of at most 256 bytes");
    } else {
        char msg[512];
        int st = run_session(ctx, action, name, desc, msg, sizeof msg);
        /* a session started from here counts in this process's
         * gpu_profiling_sessions_total (GET /metrics with --monitor) */
        if (st == 0 && !strcmp(action, "start") && ctx->mon) gp_monitor_count_session(ctx->mon);
        if (st == 0) {
            gp_sbuf_puts(&out->body, "{\"action\":");
            gp_json_str(&out->body, action);
            gp_json_key(&out->body, "name", 1);
            gp_json_str(&out->body, name);
            gp_json_key(&out->body, "message", 1);
            gp_json_str(&out->body, msg);
            gp_sbuf_puts(&out->body, "}\n");
            out->status = 200;
            out->ctype = JSON;
        } else {
            const char *m = strncmp(msg, "gpuprof session: ", 17) ? msg : msg + 17;
            gp_api_error(out, st == 1 ? 409 : st == 2 ? 400 : 500, m);
        }
    }
    gp_jdom_free(&doc);
}

/* The torch.compile view of one Kineto trace: the JSON of `gpuprof compile
 * --json TRACE` (compiled regions, cache lookups, fused kernels). */
static int c_compile(gp_trace *const *t, size_t n, const char *name, const void *opts, gp_sbuf *b,
                     gp_err *err)
{
    if (n != 1) {
        gp_err_set(err, GP_EINVAL, "compile: one trace at a time (%s holds %zu ranks)", name, n);
        return GP_EINVAL;
    }
    gp_compiled_trace ct;
    if (gp_compiled_trace_of(t[0], &ct)) return GP_ENOMEM;
    gp_compile_result res = {NULL, 0, NULL, NULL, t[0], &ct, NULL, NULL};
    gp_compile_json(&res, b);
    gp_compiled_trace_free(&ct);
    return 0;
}

/* Without trace=: the TORCH_TRACE logs given with --torch-trace, read at
 * each request (a log being written grows), the bytes of `gpuprof compile
 * --json PATH...`. */
static void compile_logs(gp_serve_ctx *ctx, gp_resp *out)
{
    gp_compile_logs cl = {0};
    gp_err err = {0};
    gp_tt_opts to = {1};
    int rc = 0;
    for (int i = 0; i < ctx->ntorch_trace && !rc; i++)
        rc = gp_compile_logs_add(&cl, ctx->torch_trace[i], &err);
    if (!rc) rc = gp_compile_logs_read(&cl, &to, &err);
    if (rc) {
        gp_api_error(out, rc == GP_ENOMEM ? 500 : 422, err.msg);
    } else {
        gp_compile_result res = {(const gp_tlog *const *)cl.logs,
                                 cl.nlogs,
                                 cl.have_adv ? &cl.adv : NULL,
                                 cl.have_div ? &cl.div : NULL,
                                 NULL,
                                 NULL,
                                 NULL,
                                 NULL};
        gp_compile_json(&res, &out->body);
        out->ctype = JSON;
        out->status = 200;
    }
    gp_compile_logs_free(&cl);
}

static void h_compile(gp_serve_ctx *ctx, const gp_target *t, gp_resp *out)
{
    static const char *const ok[] = {"trace", NULL};
    gp_err err = {0};
    int rc = gp_query_only(&t->q, ok, &err);
    if (rc) {
        fail(out, rc, &err);
        return;
    }
    if (!gp_query_get(&t->q, "trace") && ctx->ntorch_trace) {
        compile_logs(ctx, out);
        return;
    }
    with_trace(ctx, t, c_compile, NULL, JSON, out);
}

/* GET /metrics: the Prometheus exposition of the running sampler, the same
 * text `gpuprof monitor --prometheus` serves (rendered once per sample and
 * shared by every scraper). */
static void h_metrics(gp_serve_ctx *ctx, const gp_target *t, gp_resp *out)
{
    if (no_params(t, out)) return;
    if (!ctx->metrics) {
        gp_api_error(out, 404, "/metrics needs `gpuprof serve --monitor`");
        return;
    }
    gp_metrics_text *x = gp_metrics_acquire(ctx->metrics);
    if (!x) {
        gp_api_error(out, 503, "out of memory");
        return;
    }
    gp_sbuf_add(&out->body, x->data, x->len);
    gp_metrics_release(x);
    out->status = 200;
    out->ctype = "text/plain; version=0.0.4; charset=utf-8";
}

static void h_index(gp_serve_ctx *ctx, const gp_target *t, gp_resp *out)
{
    if (no_params(t, out)) return;
    gp_dashboard_html(&out->body, ctx->mon != NULL, ctx->store != NULL);
    out->status = 200;
    out->ctype = HTML;
    out->html = 1;
}

/* ---- the table ------------------------------------------------------------------------------ */

/* Every handler has this shape; the route's `arg` picks a variant. */
typedef void (*handler_fn)(gp_serve_ctx *ctx, unsigned method, const gp_target *t, const char *body,
                           size_t bn, int arg, gp_resp *out);

static void r_index(gp_serve_ctx *c, unsigned m, const gp_target *t, const char *b, size_t n, int a,
                    gp_resp *o)
{
    h_index(c, t, o);
}
static void r_metrics(gp_serve_ctx *c, unsigned m, const gp_target *t, const char *b, size_t n,
                      int a, gp_resp *o)
{
    h_metrics(c, t, o);
}
static void r_devices(gp_serve_ctx *c, unsigned m, const gp_target *t, const char *b, size_t n,
                      int a, gp_resp *o)
{
    h_devices(c, t, o, a);
}
static void r_traces(gp_serve_ctx *c, unsigned m, const gp_target *t, const char *b, size_t n,
                     int a, gp_resp *o)
{
    h_traces(c, t, o);
}
static void r_summary(gp_serve_ctx *c, unsigned m, const gp_target *t, const char *b, size_t n,
                      int a, gp_resp *o)
{
    h_summary(c, t, o, a);
}
static void r_hta(gp_serve_ctx *c, unsigned m, const gp_target *t, const char *b, size_t n, int a,
                  gp_resp *o)
{
    h_hta(c, t, o);
}
static void r_flame(gp_serve_ctx *c, unsigned m, const gp_target *t, const char *b, size_t n, int a,
                    gp_resp *o)
{
    h_flame(c, t, o, a);
}
static void r_memory(gp_serve_ctx *c, unsigned m, const gp_target *t, const char *b, size_t n,
                     int a, gp_resp *o)
{
    h_memory(c, t, o, a);
}
static void r_timeline(gp_serve_ctx *c, unsigned m, const gp_target *t, const char *b, size_t n,
                       int a, gp_resp *o)
{
    h_timeline(c, t, o, a);
}
static void r_compile(gp_serve_ctx *c, unsigned m, const gp_target *t, const char *b, size_t n,
                      int a, gp_resp *o)
{
    h_compile(c, t, o);
}
static void r_advise(gp_serve_ctx *c, unsigned m, const gp_target *t, const char *b, size_t n,
                     int a, gp_resp *o)
{
    h_advise(c, t, o);
}
static void r_compare(gp_serve_ctx *c, unsigned m, const gp_target *t, const char *b, size_t n,
                      int a, gp_resp *o)
{
    h_compare(c, t, o);
}
static void r_runs(gp_serve_ctx *c, unsigned m, const gp_target *t, const char *b, size_t n, int a,
                   gp_resp *o)
{
    h_runs(c, t, o);
}
static void r_sessions(gp_serve_ctx *c, unsigned m, const gp_target *t, const char *b, size_t n,
                       int a, gp_resp *o)
{
    h_sessions(c, m, t, b, n, o);
}
static void r_report(gp_serve_ctx *c, unsigned m, const gp_target *t, const char *b, size_t n,
                     int a, gp_resp *o)
{
    h_view_report(c, t, o);
}

/* fast: 1 = answered in the network thread; 2 = the same, and the answer
 * without parameters depends on the server's options only (gp_api_static).
 * kept: 0 = computed every time; GP_API_KEPT_JSON = a JSON result of
 * trace=ID kept in the cache; GP_API_KEPT_HTML = the same for an HTML page
 * (gp_api_cached answers both) */
static const struct {
    gp_route r;
    handler_fn fn;
    int arg, fast, kept;
} table[] = {
    {{"/", GP_M_GET, GP_SCOPE_NONE, 0}, r_index, 0, 2, 0},
    {{"/api/health", GP_M_GET, GP_SCOPE_READ, 0}, r_devices, 1, 0, 0},
    {{"/metrics", GP_M_GET, GP_SCOPE_READ, 0}, r_metrics, 0, 1, 0},
    {{"/api/traces", GP_M_GET, GP_SCOPE_READ, 0}, r_traces, 0, 1, 0},
    {{"/api/profiler/kernels", GP_M_GET, GP_SCOPE_READ, 0}, r_summary, 1, 0, 1},
    {{"/api/profiler/hta", GP_M_GET, GP_SCOPE_READ, 0}, r_hta, 0, 0, 1},
    {{"/api/profiler/flame", GP_M_GET, GP_SCOPE_READ, 0}, r_flame, 0, 0, 1},
    {{"/api/profiler/memory", GP_M_GET, GP_SCOPE_READ, 0}, r_memory, 0, 0, 1},
    {{"/api/profiler/timeline", GP_M_GET, GP_SCOPE_READ, 0}, r_timeline, 0, 0, 1},
    {{"/api/profiler/compile", GP_M_GET, GP_SCOPE_READ, 0}, r_compile, 0, 0, 1},
    {{"/api/summary", GP_M_GET, GP_SCOPE_READ, 0}, r_summary, 0, 0, 1},
    {{"/api/advise", GP_M_GET, GP_SCOPE_READ, 0}, r_advise, 0, 0, 1},
    {{"/api/compare", GP_M_GET, GP_SCOPE_READ, 0}, r_compare, 0, 0, 0},
    {{"/api/runs", GP_M_GET, GP_SCOPE_READ, 0}, r_runs, 0, 0, 0},
    {{"/api/devices", GP_M_GET, GP_SCOPE_READ, 0}, r_devices, 0, 0, 0},
    {{"/api/sessions", GP_M_GET | GP_M_POST, GP_SCOPE_READ, 0}, r_sessions, 0, 0, 0},
    {{"/view/report", GP_M_GET, GP_SCOPE_READ, 0}, r_report, 0, 0, 2},
    {{"/view/flame", GP_M_GET, GP_SCOPE_READ, 0}, r_flame, 1, 0, 2},
    {{"/view/timeline", GP_M_GET, GP_SCOPE_READ, 0}, r_timeline, 1, 0, 2},
    {{"/view/memory", GP_M_GET, GP_SCOPE_READ, 0}, r_memory, 1, 0, 2},
};
#define NROUTES (sizeof table / sizeof table[0])
static gp_route routes[NROUTES];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void init_routes(void)
{
    for (size_t i = 0; i < NROUTES; i++) {
        routes[i] = table[i].r;
        routes[i].id = (int)i;
    }
}

void gp_api_init(void)
{
    pthread_once(&once, init_routes);
}

const gp_route *gp_api_routes(size_t *n)
{
    gp_api_init();
    *n = NROUTES;
    return routes;
}

int gp_api_static(const gp_route *r)
{
    return table[r->id].fast == 2;
}

int gp_api_fast(const gp_serve_ctx *ctx, const gp_route *r)
{
    /* the devices and health of the running sampler: its latest sample */
    if (table[r->id].fn == r_devices && ctx->mon) return 1;
    return table[r->id].fast;
}

int gp_api_cached(gp_serve_ctx *ctx, const gp_route *r, const gp_target *t, gp_resp *out,
                  void **aux)
{
    int kept = table[r->id].kept;
    const char *id = gp_query_get(&t->q, "trace");
    if (!kept || !id) return 0;
    gp_sbuf key = {0};
    cache_key(&key, t);
    int hit = gp_tcache_peek(ctx->cache, id, gp_sbuf_cstr(&key), &out->body, aux);
    gp_sbuf_free(&key);
    if (!hit) return 0;
    out->status = 200;
    out->ctype = kept == GP_API_KEPT_HTML ? HTML : JSON;
    out->html = kept == GP_API_KEPT_HTML;
    return 1;
}

void gp_api_handle(gp_serve_ctx *ctx, const gp_route *r, unsigned method, const gp_target *t,
                   const char *body, size_t bn, gp_resp *out)
{
    out->status = 500;
    out->ctype = JSON;
    out->html = 0;
    table[r->id].fn(ctx, method, t, body, bn, table[r->id].arg, out);
}
