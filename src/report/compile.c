/* report/compile.c: text and JSON writers of `gpuprof compile`, and the
 * Perfetto JSON of the compile phases (through the trace model's timeline
 * writer, render/timeline.c). */
#include "report/compile.h"
#include "core/table.h"
#include "render/chrome.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PARTS 32

/* ---- JSON ---------------------------------------------------------------- */

static void jnum(gp_sbuf *b, const char *key, double v, int comma)
{
    gp_json_key(b, key, comma);
    gp_json_num(b, v);
}

static void jint(gp_sbuf *b, const char *key, int64_t v, int comma)
{
    gp_json_key(b, key, comma);
    if (v == GP_TT_NONE)
        gp_sbuf_puts(b, "null");
    else
        gp_json_int(b, v);
}

static void jstr(gp_sbuf *b, const gp_tlog *l, const char *key, uint32_t id, int comma)
{
    gp_json_key(b, key, comma);
    if (id)
        gp_json_str(b, gp_tlog_s(l, id));
    else
        gp_sbuf_puts(b, "null");
}

static void jcache(gp_sbuf *b, const char *key, uint64_t hit, uint64_t miss, uint64_t bypass,
                   int comma)
{
    gp_json_key(b, key, comma);
    gp_sbuf_printf(b, "{\"hit\":%llu,\"miss\":%llu,\"bypass\":%llu}", (unsigned long long)hit,
                   (unsigned long long)miss, (unsigned long long)bypass);
}

static void jids(gp_sbuf *b, const gp_tlog *l, const char *key, const uint32_t *v, size_t n)
{
    gp_json_key(b, key, 1);
    gp_sbuf_putc(b, '[');
    for (size_t i = 0; i < n; i++) {
        if (i) gp_sbuf_putc(b, ',');
        gp_json_str(b, gp_tlog_s(l, v[i]));
    }
    gp_sbuf_putc(b, ']');
}

static void json_compile(gp_sbuf *b, const gp_tlog *l, size_t idx)
{
    const gp_tt_compile *c = &l->compiles.v[idx];
    gp_sbuf_putc(b, '{');
    gp_json_key(b, "id", 0);
    gp_json_str(b, c->id);
    jint(b, "frame_id", c->frame_id, 1);
    jint(b, "frame_compile_id", c->frame_compile_id, 1);
    jint(b, "attempt", c->attempt, 1);
    gp_json_key(b, "status", 1);
    gp_json_str(b, gp_tt_status_name(c->status));
    jint(b, "line", (int64_t)c->first_line, 1);
    jstr(b, l, "function", c->co_name, 1);
    jstr(b, l, "file", c->co_filename, 1);
    jint(b, "first_line_no", c->co_firstlineno, 1);
    uint32_t uf, ufn;
    int64_t ul;
    gp_compile_user_frame(c, &uf, &ul, &ufn);
    gp_json_key(b, "user_frame", 1);
    gp_sbuf_putc(b, '{');
    jstr(b, l, "file", uf, 0);
    jint(b, "line", ul, 1);
    jstr(b, l, "function", ufn, 1);
    gp_sbuf_putc(b, '}');
    jstr(b, l, "fail_type", c->fail_type, 1);
    jstr(b, l, "fail_reason", c->fail_reason, 1);
    jnum(b, "compile_time_s", gp_compile_time_s(c), 1);
    gp_json_key(b, "time_parts_s", 1);
    gp_sbuf_putc(b, '{');
    jnum(b, "entire_frame", c->entire_s, 0);
    jnum(b, "dynamo_cumulative", c->dynamo_cum_s, 1);
    jnum(b, "aot_autograd_cumulative", c->aot_cum_s, 1);
    jnum(b, "inductor_cumulative", c->inductor_cum_s, 1);
    jnum(b, "code_gen_cumulative", c->codegen_cum_s, 1);
    jnum(b, "backend_compile", c->backend_s, 1);
    jnum(b, "inductor_compile", c->inductor_s, 1);
    jnum(b, "code_gen", c->codegen_s, 1);
    gp_sbuf_putc(b, '}');
    gp_compile_part parts[MAX_PARTS];
    size_t np = gp_compile_phases_of(l, idx, parts, MAX_PARTS);
    gp_json_key(b, "phases", 1);
    gp_sbuf_putc(b, '[');
    for (size_t i = 0; i < np; i++) {
        gp_sbuf_puts(b, i ? ",{" : "{");
        jstr(b, l, "name", parts[i].name, 0);
        jint(b, "depth", parts[i].depth, 1);
        jnum(b, "dur_s", (double)parts[i].dur_ns / 1e9, 1);
        gp_sbuf_putc(b, '}');
    }
    gp_sbuf_putc(b, ']');
    jint(b, "graph_op_count", c->graph_op_count, 1);
    jint(b, "graph_node_count", c->graph_node_count, 1);
    jint(b, "graph_input_count", c->graph_input_count, 1);
    jint(b, "guard_count", c->guard_count, 1);
    jids(b, l, "restart_reasons", c->restart_reasons.v, c->restart_reasons.n);
    jids(b, l, "recompile_reasons", c->recompile_reasons.v, c->recompile_reasons.n);
    jcache(b, "fx_graph_cache", c->fx_hit, c->fx_miss, c->fx_bypass, 1);
    jcache(b, "aotautograd_cache", c->aot_hit, c->aot_miss, c->aot_bypass, 1);
    gp_json_key(b, "kernels", 1);
    gp_sbuf_putc(b, '[');
    for (size_t i = 0; i < c->kernels.n; i++) {
        const gp_tt_kernel *k = &c->kernels.v[i];
        gp_sbuf_puts(b, i ? ",{" : "{");
        jstr(b, l, "name", k->name, 0);
        jstr(b, l, "aten_ops", k->ops, 1);
        jint(b, "fused_ops", k->n_ops, 1);
        gp_sbuf_putc(b, '}');
    }
    gp_sbuf_putc(b, ']');
    gp_json_key(b, "stack", 1);
    gp_sbuf_putc(b, '[');
    for (size_t i = 0; i < c->stack.n; i++) {
        const gp_tt_frame *f = &c->stack.v[i];
        gp_sbuf_puts(b, i ? ",{" : "{");
        jstr(b, l, "file", f->file, 0);
        jint(b, "line", f->line, 1);
        jstr(b, l, "function", f->name, 1);
        jstr(b, l, "code", f->loc, 1);
        gp_sbuf_putc(b, '}');
    }
    gp_sbuf_puts(b, "]}");
}

static void json_log(gp_sbuf *b, const gp_tlog *l)
{
    gp_compile_totals t;
    gp_compile_totals_of(l, &t);
    gp_sbuf_putc(b, '{');
    jstr(b, l, "file", l->file, 0);
    jint(b, "rank", l->rank, 1);
    gp_json_key(b, "compiles", 1);
    gp_sbuf_putc(b, '[');
    for (size_t i = 0; i < l->compiles.n; i++) {
        if (i) gp_sbuf_putc(b, ',');
        json_compile(b, l, i);
    }
    gp_sbuf_putc(b, ']');
    /* the totals: exactly the keys of the definition */
    gp_json_key(b, "totals", 1);
    gp_sbuf_printf(b,
                   "{\"compiles\":%llu,\"frames\":%llu,\"recompiles\":%llu,"
                   "\"graph_breaks\":%llu,\"failures\":%llu",
                   (unsigned long long)t.compiles, (unsigned long long)t.frames,
                   (unsigned long long)t.recompiles, (unsigned long long)t.graph_breaks,
                   (unsigned long long)t.failures);
    jnum(b, "compile_time_s", t.compile_time_s, 1);
    jcache(b, "fx_graph_cache", t.fx_hit, t.fx_miss, t.fx_bypass, 1);
    gp_sbuf_putc(b, '}');
    jcache(b, "aotautograd_cache", t.aot_hit, t.aot_miss, t.aot_bypass, 1);
    jnum(b, "fx_graph_cache_hit_ratio", gp_cache_hit_ratio(t.fx_hit, t.fx_miss, t.fx_bypass), 1);
    jint(b, "compile_time_unknown", (int64_t)t.time_unknown, 1);
    jint(b, "restarted_attempts", (int64_t)t.restarted, 1);
    jint(b, "lines", (int64_t)l->lines, 1);
    jint(b, "bytes", (int64_t)l->bytes, 1);
    jint(b, "envelopes", (int64_t)l->envelopes, 1);
    jint(b, "corrupt_lines", (int64_t)l->corrupt, 1);
    gp_json_key(b, "corrupt", 1);
    gp_sbuf_putc(b, '[');
    for (size_t i = 0; i < l->bad.n; i++) {
        gp_sbuf_printf(b, "%s{\"line\":%llu,\"what\":", i ? "," : "",
                       (unsigned long long)l->bad.v[i].line);
        gp_json_str(b, l->bad.v[i].what);
        gp_sbuf_putc(b, '}');
    }
    gp_sbuf_putc(b, ']');
    /* phases: start relative to the log's first phase (phases_t0_us, epoch) */
    int64_t t0 = INT64_MAX;
    for (size_t i = 0; i < l->phases.n; i++)
        if (l->phases.v[i].begin_ns < t0) t0 = l->phases.v[i].begin_ns;
    gp_json_key(b, "phases_t0_us", 1);
    if (l->phases.n)
        gp_json_int(b, t0 / 1000);
    else
        gp_sbuf_puts(b, "null");
    int64_t t0us = l->phases.n ? t0 / 1000 * 1000 : 0;
    gp_json_key(b, "phases", 1);
    gp_sbuf_putc(b, '[');
    size_t w = 0;
    for (size_t i = 0; i < l->phases.n; i++) {
        const gp_tt_phase *p = &l->phases.v[i];
        if (p->end_ns == GP_TT_NONE) continue;
        gp_sbuf_puts(b, w++ ? ",{" : "{");
        jstr(b, l, "name", p->name, 0);
        jstr(b, l, "compile_id", p->compile_id, 1);
        jint(b, "tid", p->tid, 1);
        jint(b, "depth", p->depth, 1);
        jnum(b, "start_s", (double)(p->begin_ns - t0us) / 1e9, 1);
        jnum(b, "dur_s", (double)(p->end_ns - p->begin_ns) / 1e9, 1);
        gp_sbuf_putc(b, '}');
    }
    gp_sbuf_puts(b, "]}");
}

static void json_advice(gp_sbuf *b, const gp_advice_list *a)
{
    gp_sbuf_putc(b, '[');
    for (size_t i = 0; i < a->n; i++) {
        const gp_advice *x = &a->v[i];
        gp_sbuf_puts(b, i ? ",{" : "{");
        gp_json_key(b, "rule", 0);
        gp_json_str(b, x->rule->id);
        gp_json_key(b, "priority", 1);
        gp_json_str(b, gp_priority_name(x->priority));
        gp_json_key(b, "finding", 1);
        gp_json_str(b, x->finding);
        gp_json_key(b, "hint", 1);
        gp_json_str(b, x->rule->hint);
        gp_json_key(b, "estimate", 1);
        gp_json_str(b, x->estimate);
        jnum(b, "time_s", x->time_ns == GP_NONE ? NAN : (double)x->time_ns / 1e9, 1);
        gp_json_key(b, "evidence", 1);
        gp_sbuf_putc(b, '[');
        for (size_t k = 0; k < x->nev; k++) {
            const gp_adv_evidence *e = &x->ev[k];
            gp_sbuf_puts(b, k ? ",{" : "{");
            gp_json_key(b, "compile", 0);
            gp_json_str(b, e->name);
            gp_json_key(b, "reason", 1);
            gp_json_str(b, e->detail);
            jint(b, "count", (int64_t)e->count, 1);
            jnum(b, "compile_time_s", e->time_ns == GP_NONE ? NAN : (double)e->time_ns / 1e9, 1);
            gp_sbuf_putc(b, '}');
        }
        gp_sbuf_puts(b, "]}");
    }
    gp_sbuf_putc(b, ']');
}

static void json_div(gp_sbuf *b, const gp_compile_result *r)
{
    gp_sbuf_putc(b, '[');
    for (size_t i = 0; i < r->div->n; i++) {
        const gp_rank_div *d = &r->div->v[i];
        gp_sbuf_puts(b, i ? ",{" : "{");
        gp_json_key(b, "what", 0);
        gp_json_str(b, d->what);
        gp_json_key(b, "values", 1);
        gp_sbuf_putc(b, '[');
        for (size_t k = 0; k < d->nlogs; k++) {
            if (k) gp_sbuf_putc(b, ',');
            gp_json_num(b, d->values[k]);
        }
        gp_sbuf_putc(b, ']');
        jnum(b, "median", d->median, 1);
        jint(b, "outlier_log", (int64_t)d->outlier, 1);
        jint(b, "outlier_rank", d->outlier < r->nlogs ? r->logs[d->outlier]->rank : GP_TT_NONE, 1);
        gp_sbuf_putc(b, '}');
    }
    gp_sbuf_putc(b, ']');
}

static void json_trace(gp_sbuf *b, const gp_trace *t, const gp_compiled_trace *c)
{
    gp_sbuf_putc(b, '{');
    gp_json_key(b, "file", 0);
    gp_json_str(b, gp_trace_s(t, t->meta.source));
    gp_json_key(b, "regions", 1);
    gp_sbuf_putc(b, '[');
    for (size_t i = 0; i < c->nregions; i++) {
        const gp_cregion *g = &c->regions[i];
        gp_sbuf_puts(b, i ? ",{" : "{");
        gp_json_key(b, "name", 0);
        gp_json_str(b, gp_trace_s(t, g->name));
        jint(b, "count", (int64_t)g->count, 1);
        jint(b, "cpu_ns", g->cpu_ns, 1);
        jint(b, "gpu_ns", g->gpu_ns, 1);
        jint(b, "gpu_ops", (int64_t)g->kernels, 1);
        gp_sbuf_putc(b, '}');
    }
    gp_sbuf_putc(b, ']');
    jint(b, "region_calls", (int64_t)c->region_calls, 1);
    jint(b, "region_cpu_ns", c->region_cpu_ns, 1);
    jint(b, "region_gpu_ns", c->region_gpu_ns, 1);
    jint(b, "cache_lookups", (int64_t)c->lookups, 1);
    jint(b, "cache_lookup_ns", c->lookup_ns, 1);
    jint(b, "eager_gpu_ns", c->eager_gpu_ns, 1);
    jint(b, "eager_gpu_ops", (int64_t)c->eager_kernels, 1);
    jint(b, "eager_cpu_ns", c->eager_cpu_ns, 1);
    gp_json_key(b, "fused_kernels", 1);
    gp_sbuf_putc(b, '[');
    for (size_t i = 0; i < c->nfused; i++) {
        const gp_fused_kernel *k = &c->fused[i];
        gp_sbuf_puts(b, i ? ",{" : "{");
        gp_json_key(b, "name", 0);
        gp_json_str(b, gp_trace_s(t, k->name));
        jint(b, "count", (int64_t)k->count, 1);
        jint(b, "gpu_ns", k->gpu_ns, 1);
        jint(b, "ops_replaced", k->ops, 1);
        gp_sbuf_putc(b, '}');
    }
    gp_sbuf_putc(b, ']');
    jint(b, "fused_ops", (int64_t)c->fused_ops, 1);
    jnum(b, "fusion_ratio", c->fusion_ratio, 1);
    jint(b, "steps", (int64_t)c->steps, 1);
    jint(b, "max_regions_per_step", (int64_t)c->max_regions_per_step, 1);
    jint(b, "steps_with_several_regions", (int64_t)c->steps_with_breaks, 1);
    gp_sbuf_putc(b, '}');
}

static void json_speedup(gp_sbuf *b, const gp_compile_result *r)
{
    const gp_compile_speedup *s = r->sp;
    gp_sbuf_putc(b, '{');
    gp_json_key(b, "eager_file", 0);
    gp_json_str(b, r->eager_file ? r->eager_file : "");
    jnum(b, "step_eager_ns", s->step_eager_ns, 1);
    jnum(b, "step_compiled_ns", s->step_compiled_ns, 1);
    jnum(b, "step_speedup", s->step_speedup, 1);
    jnum(b, "gpu_speedup", s->gpu_speedup, 1);
    jnum(b, "geomean_ratio", s->cmp.geomean_ratio, 1);
    gp_json_key(b, "groups", 1);
    gp_sbuf_putc(b, '[');
    for (size_t i = 0; i < s->ngroups; i++) {
        const gp_speedup_group *g = &s->groups[i];
        gp_sbuf_puts(b, i ? ",{" : "{");
        gp_json_key(b, "group", 0);
        gp_json_str(b, gp_group_name(g->group));
        jnum(b, "eager_ns", g->eager_ns, 1);
        jnum(b, "compiled_ns", g->compiled_ns, 1);
        jnum(b, "speedup", g->speedup, 1);
        gp_sbuf_putc(b, '}');
    }
    gp_sbuf_puts(b, "]}");
}

void gp_compile_json(const gp_compile_result *r, gp_sbuf *b)
{
    gp_sbuf_puts(b, "{\"logs\":[");
    for (size_t i = 0; i < r->nlogs; i++) {
        if (i) gp_sbuf_putc(b, ',');
        json_log(b, r->logs[i]);
    }
    gp_sbuf_putc(b, ']');
    if (r->div) {
        gp_json_key(b, "divergence", 1);
        json_div(b, r);
    }
    if (r->advice) {
        gp_json_key(b, "advice", 1);
        json_advice(b, r->advice);
    }
    if (r->trace && r->ct) {
        gp_json_key(b, "trace", 1);
        json_trace(b, r->trace, r->ct);
    }
    if (r->sp) {
        gp_json_key(b, "speedup", 1);
        json_speedup(b, r);
    }
    gp_sbuf_puts(b, "}\n");
}

/* ---- text ---------------------------------------------------------------- */

static const char *fmt_s(char *buf, size_t n, double s)
{
    if (isnan(s))
        snprintf(buf, n, "N/A");
    else
        snprintf(buf, n, "%.3f", s);
    return buf;
}

static const char *fmt_i(char *buf, size_t n, int64_t v)
{
    if (v == GP_TT_NONE)
        snprintf(buf, n, "N/A");
    else
        snprintf(buf, n, "%lld", (long long)v);
    return buf;
}

static const char *fmt_pct(char *buf, size_t n, double r)
{
    if (isnan(r))
        snprintf(buf, n, "N/A");
    else
        snprintf(buf, n, "%.1f%%", r * 100);
    return buf;
}

static const char *base_name(const char *p)
{
    const char *s = p ? strrchr(p, '/') : NULL;
    return s ? s + 1 : p ? p : "?";
}

static void frame_text(const gp_tlog *l, const gp_tt_compile *c, char *buf, size_t n)
{
    uint32_t f, fn;
    int64_t line;
    gp_compile_user_frame(c, &f, &line, &fn);
    if (f && line != GP_TT_NONE)
        snprintf(buf, n, "%s:%lld", base_name(gp_tlog_s(l, f)), (long long)line);
    else if (f)
        snprintf(buf, n, "%s", base_name(gp_tlog_s(l, f)));
    else
        snprintf(buf, n, "?");
}

/* one line of a possibly multi-line reason */
static void reason_line(FILE *f, const char *s)
{
    const char *nl = strchr(s, '\n');
    int len = nl ? (int)(nl - s) : (int)strlen(s);
    if (len > 200) len = 200;
    fprintf(f, "%.*s%s", len, s, nl || (int)strlen(s) > len ? " ..." : "");
}

static void text_log(const gp_tlog *l, FILE *f)
{
    gp_compile_totals t;
    gp_compile_totals_of(l, &t);
    char a[32], b2[32], c2[32];
    fprintf(f, "== %s", gp_tlog_s(l, l->file));
    if (l->rank != GP_TT_NONE) fprintf(f, " (rank %d)", l->rank);
    fprintf(f,
            ": %llu compiles, %llu frames, %llu recompiles, %llu graph breaks, %llu failures, "
            "%s s compiling\n",
            (unsigned long long)t.compiles, (unsigned long long)t.frames,
            (unsigned long long)t.recompiles, (unsigned long long)t.graph_breaks,
            (unsigned long long)t.failures, fmt_s(a, sizeof a, t.compile_time_s));
    fprintf(f,
            "   FX graph cache: %llu hit / %llu miss / %llu bypass (hit ratio %s); AOT autograd "
            "cache: %llu / %llu / %llu (%s)\n",
            (unsigned long long)t.fx_hit, (unsigned long long)t.fx_miss,
            (unsigned long long)t.fx_bypass,
            fmt_pct(b2, sizeof b2, gp_cache_hit_ratio(t.fx_hit, t.fx_miss, t.fx_bypass)),
            (unsigned long long)t.aot_hit, (unsigned long long)t.aot_miss,
            (unsigned long long)t.aot_bypass,
            fmt_pct(c2, sizeof c2, gp_cache_hit_ratio(t.aot_hit, t.aot_miss, t.aot_bypass)));
    if (t.time_unknown)
        fprintf(f, "   %llu record(s) without a compile time (left out of the sum)\n",
                (unsigned long long)t.time_unknown);
    if (l->corrupt) {
        fprintf(f, "   %llu corrupt line(s) skipped:", (unsigned long long)l->corrupt);
        for (size_t i = 0; i < l->bad.n && i < 5; i++)
            fprintf(f, "%s line %llu (%s)", i ? ";" : "", (unsigned long long)l->bad.v[i].line,
                    l->bad.v[i].what);
        fprintf(f, "%s\n", l->bad.n > 5 ? "; ..." : "");
    }
    if (!l->compiles.n) return;
    static const char *const hdr[] = {"id",       "status", "function",   "user frame", "time_s",
                                      "dynamo_s", "aot_s",  "inductor_s", "codegen_s",  "graph ops",
                                      "guards",   "breaks", "kernels"};
    gp_table *tb = gp_table_create(13, hdr, "lllrrrrrrrrrr");
    for (size_t i = 0; i < l->compiles.n; i++) {
        const gp_tt_compile *c = &l->compiles.v[i];
        char fr[128], t1[32], t2[32], t3[32], t4[32], t5[32], o[32], g[32];
        frame_text(l, c, fr, sizeof fr);
        double ind = !isnan(c->inductor_cum_s) ? c->inductor_cum_s : c->inductor_s;
        double cg = !isnan(c->codegen_cum_s) ? c->codegen_cum_s : c->codegen_s;
        gp_table_rowf(tb, "%s\t%s\t%.40s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%zu\t%zu", c->id,
                      gp_tt_status_name(c->status), c->co_name ? gp_tlog_s(l, c->co_name) : "?", fr,
                      fmt_s(t1, sizeof t1, gp_compile_time_s(c)),
                      fmt_s(t2, sizeof t2, c->dynamo_cum_s), fmt_s(t3, sizeof t3, c->aot_cum_s),
                      fmt_s(t4, sizeof t4, ind), fmt_s(t5, sizeof t5, cg),
                      fmt_i(o, sizeof o, c->graph_op_count), fmt_i(g, sizeof g, c->guard_count),
                      c->restart_reasons.n, c->kernels.n);
    }
    gp_table_print(tb, f, 60);
    gp_table_destroy(tb);
    int hdr_done = 0;
    for (size_t i = 0; i < l->compiles.n; i++) {
        const gp_tt_compile *c = &l->compiles.v[i];
        char fr[128];
        frame_text(l, c, fr, sizeof fr);
        for (size_t k = 0; k < c->restart_reasons.n; k++) {
            if (!hdr_done++) fprintf(f, "  graph breaks:\n");
            fprintf(f, "    %s at %s: ", c->id, fr);
            reason_line(f, gp_tlog_s(l, c->restart_reasons.v[k]));
            fputc('\n', f);
        }
    }
    hdr_done = 0;
    for (size_t i = 0; i < l->compiles.n; i++) {
        const gp_tt_compile *c = &l->compiles.v[i];
        if (!c->recompile_reasons.n) continue;
        if (!hdr_done++) fprintf(f, "  recompiles (the first failed guard of each):\n");
        fprintf(f, "    %s: ", c->id);
        reason_line(f, gp_tlog_s(l, c->recompile_reasons.v[0]));
        if (c->recompile_reasons.n > 1) fprintf(f, " (+%zu more)", c->recompile_reasons.n - 1);
        fputc('\n', f);
    }
    hdr_done = 0;
    for (size_t i = 0; i < l->compiles.n; i++) {
        const gp_tt_compile *c = &l->compiles.v[i];
        if (!c->fail_type) continue;
        if (!hdr_done++) fprintf(f, "  failures:\n");
        fprintf(f, "    %s %s: ", c->id, gp_tlog_s(l, c->fail_type));
        reason_line(f, c->fail_reason ? gp_tlog_s(l, c->fail_reason) : "");
        fputc('\n', f);
    }
    hdr_done = 0;
    for (size_t i = 0; i < l->compiles.n; i++) {
        const gp_tt_compile *c = &l->compiles.v[i];
        for (size_t k = 0; k < c->kernels.n; k++) {
            const gp_tt_kernel *kn = &c->kernels.v[k];
            if (!hdr_done++) fprintf(f, "  Inductor kernels (fused ATen ops):\n");
            char n[32];
            fprintf(f, "    %s %s: %s [%s]\n", c->id, gp_tlog_s(l, kn->name),
                    fmt_i(n, sizeof n, kn->n_ops), kn->ops ? gp_tlog_s(l, kn->ops) : "");
        }
    }
}

static void text_trace(const gp_compile_result *r, FILE *f)
{
    const gp_trace *t = r->trace;
    const gp_compiled_trace *c = r->ct;
    char a[48], b[48], d[48];
    fprintf(f, "== trace %s: %llu compiled region call(s), %llu Dynamo cache lookup(s) (%s)\n",
            gp_trace_s(t, t->meta.source), (unsigned long long)c->region_calls,
            (unsigned long long)c->lookups, gp_fmt_dur_auto(a, sizeof a, (double)c->lookup_ns));
    fprintf(f,
            "   GPU time in compiled regions %s, launched outside them (eager) %s; CPU time "
            "outside regions and lookups %s\n",
            gp_fmt_dur_auto(a, sizeof a, (double)c->region_gpu_ns),
            gp_fmt_dur_auto(b, sizeof b, (double)c->eager_gpu_ns),
            gp_fmt_dur_auto(d, sizeof d, (double)c->eager_cpu_ns));
    if (c->steps)
        fprintf(f,
                "   %llu step(s); at most %llu compiled region call(s) per step; %llu step(s) "
                "with several (graph breaks or several compiled functions)\n",
                (unsigned long long)c->steps, (unsigned long long)c->max_regions_per_step,
                (unsigned long long)c->steps_with_breaks);
    if (c->nregions) {
        static const char *const hdr[] = {"region", "calls", "cpu", "gpu", "gpu ops"};
        gp_table *tb = gp_table_create(5, hdr, "lrrrr");
        for (size_t i = 0; i < c->nregions; i++) {
            const gp_cregion *g = &c->regions[i];
            gp_table_rowf(
                tb, "%s\t%llu\t%s\t%s\t%llu", gp_trace_s(t, g->name), (unsigned long long)g->count,
                gp_fmt_dur_auto(a, sizeof a, (double)g->cpu_ns),
                gp_fmt_dur_auto(b, sizeof b, (double)g->gpu_ns), (unsigned long long)g->kernels);
        }
        gp_table_print(tb, f, 80);
        gp_table_destroy(tb);
    }
    if (c->nfused) {
        fprintf(f, "   %zu fused Triton kernel(s) replacing %llu ATen op(s) (fusion ratio %.2f):\n",
                c->nfused, (unsigned long long)c->fused_ops, c->fusion_ratio);
        static const char *const hdr[] = {"kernel", "calls", "gpu", "ops replaced"};
        gp_table *tb = gp_table_create(4, hdr, "lrrr");
        for (size_t i = 0; i < c->nfused; i++) {
            const gp_fused_kernel *k = &c->fused[i];
            gp_table_rowf(tb, "%s\t%llu\t%s\t%d", gp_trace_s(t, k->name),
                          (unsigned long long)k->count,
                          gp_fmt_dur_auto(a, sizeof a, (double)k->gpu_ns), k->ops);
        }
        gp_table_print(tb, f, 80);
        gp_table_destroy(tb);
    }
}

static void text_speedup(const gp_compile_result *r, FILE *f)
{
    const gp_compile_speedup *s = r->sp;
    char a[48], b[48];
    fprintf(f, "== speedup of compiled over eager (%s)\n", r->eager_file ? r->eager_file : "");
    if (!isnan(s->step_speedup))
        fprintf(f, "   per step: eager %s, compiled %s, speedup %.2fx\n",
                gp_fmt_dur_auto(a, sizeof a, s->step_eager_ns),
                gp_fmt_dur_auto(b, sizeof b, s->step_compiled_ns), s->step_speedup);
    else
        fprintf(f, "   per step: N/A (no ProfilerStep on both sides)\n");
    if (!isnan(s->gpu_speedup)) fprintf(f, "   GPU time: speedup %.2fx\n", s->gpu_speedup);
    static const char *const hdr[] = {"group", "eager", "compiled", "speedup"};
    gp_table *tb = gp_table_create(4, hdr, "lrrr");
    for (size_t i = 0; i < s->ngroups; i++) {
        const gp_speedup_group *g = &s->groups[i];
        char sp[32];
        if (isnan(g->speedup))
            snprintf(sp, sizeof sp, "N/A");
        else
            snprintf(sp, sizeof sp, "%.2fx", g->speedup);
        gp_table_rowf(tb, "%s\t%s\t%s\t%s", gp_group_name(g->group),
                      gp_fmt_dur_auto(a, sizeof a, g->eager_ns),
                      gp_fmt_dur_auto(b, sizeof b, g->compiled_ns), sp);
    }
    gp_table_print(tb, f, 80);
    gp_table_destroy(tb);
}

void gp_compile_text(const gp_compile_result *r, FILE *f)
{
    for (size_t i = 0; i < r->nlogs; i++) {
        if (i) fputc('\n', f);
        text_log(r->logs[i], f);
    }
    if (r->div && r->div->n) {
        fprintf(f,
                "\n== divergence between the %zu logs (values in log order; * = farthest from "
                "the median)\n",
                r->nlogs);
        for (size_t i = 0; i < r->div->n; i++) {
            const gp_rank_div *d = &r->div->v[i];
            fprintf(f, "   %-24s", d->what);
            for (size_t k = 0; k < d->nlogs; k++) {
                char v[32];
                if (isnan(d->values[k]))
                    snprintf(v, sizeof v, "N/A");
                else
                    snprintf(v, sizeof v, "%g", d->values[k]);
                fprintf(f, " %s%s", v, k == d->outlier ? "*" : "");
            }
            fputc('\n', f);
        }
    } else if (r->div) {
        fprintf(f, "\n== the %zu logs agree on every total\n", r->nlogs);
    }
    if (r->advice && r->advice->n) {
        fprintf(f, "\n== suggestions\n");
        for (size_t i = 0; i < r->advice->n; i++) {
            const gp_advice *x = &r->advice->v[i];
            fprintf(f, "[%s] %s: %s\n    fix: %s\n", gp_priority_name(x->priority), x->rule->id,
                    x->finding, x->rule->hint);
            for (size_t k = 0; k < x->nev; k++) {
                fprintf(f, "    - %s: ", x->ev[k].name);
                reason_line(f, x->ev[k].detail);
                fputc('\n', f);
            }
        }
    }
    if (r->trace && r->ct) {
        if (r->nlogs) fputc('\n', f);
        text_trace(r, f);
    }
    if (r->sp) {
        fputc('\n', f);
        text_speedup(r, f);
    }
}

/* ---- Perfetto JSON of the compile phases ---------------------------------- */

int gp_compile_timeline(const gp_tlog *const *logs, size_t n, FILE *f)
{
    gp_trace *t = gp_trace_create();
    if (!t) return GP_ENOMEM;
    int rc = GP_ENOMEM;
    uint32_t cat = gp_trace_category(t, "compile", 7);
    if (cat == GP_NO_INDEX) goto out;
    for (size_t li = 0; li < n; li++) {
        const gp_tlog *l = logs[li];
        int64_t pid = l->rank != GP_TT_NONE ? l->rank : (int64_t)li;
        char pname[300];
        if (l->rank != GP_TT_NONE)
            snprintf(pname, sizeof pname, "rank %d (%s)", l->rank,
                     base_name(gp_tlog_s(l, l->file)));
        else
            snprintf(pname, sizeof pname, "%s", base_name(gp_tlog_s(l, l->file)));
        for (size_t i = 0; i < l->phases.n; i++) {
            const gp_tt_phase *p = &l->phases.v[i];
            if (p->end_ns == GP_TT_NONE) continue;
            uint32_t tr = gp_trace_track(t, pid, p->tid == GP_TT_NONE ? 0 : p->tid, 0, 0);
            if (tr == GP_NO_INDEX) goto out;
            t->tracks.v[tr].type = GP_TRACK_CPU;
            t->tracks.v[tr].process_name = gp_trace_str(t, pname, strlen(pname));
            char nm[300];
            const char *pn = gp_tlog_s(l, p->name);
            if (p->compile_id)
                snprintf(nm, sizeof nm, "%s [%s]", pn, gp_tlog_s(l, p->compile_id));
            else
                snprintf(nm, sizeof nm, "%s", pn);
            gp_slice s = {p->begin_ns,
                          p->end_ns - p->begin_ns,
                          GP_NONE,
                          GP_NONE,
                          gp_trace_str(t, nm, strlen(nm)),
                          tr,
                          GP_NO_INDEX,
                          (uint16_t)cat,
                          0};
            if (s.name == GP_NO_INDEX || GP_VEC_PUSH(t->slices, s)) goto out;
        }
    }
    gp_trace_finish(t);
    rc = gp_chrome_write(t, f, NULL);
out:
    gp_trace_destroy(t);
    return rc;
}
