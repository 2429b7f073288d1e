/* report/advise.c: the result writers of `gpuprof advise` (text and JSON),
 * shared by the CLI and the server. */
#include "report/advise.h"
#include "core/table.h"
#include "report/fmt.h"
#include <gpuprof/common.h>
#include <math.h>

void gp_report_advise_text(FILE *f, const gp_trace *t, const gp_advice_list *l, gp_priority minp)
{
    char d[64];
    fprintf(f, "== %s", gp_trace_s(t, t->meta.source));
    if (t->meta.rank != GP_NONE) fprintf(f, " (rank %d)", t->meta.rank);
    fprintf(f, "\ntraced span %s\n", gp_fmt_dur_auto(d, sizeof d, (double)l->span_ns));
    size_t shown = 0;
    for (size_t i = 0; i < l->n; i++) {
        const gp_advice *a = &l->v[i];
        if (a->priority > minp) continue;
        shown++;
        fprintf(f, "\n[%s] %s (%s)\n", gp_priority_name(a->priority), a->rule->id, a->rule->type);
        fprintf(f, "  found:    %s\n", a->finding);
        if (a->time_ns != GP_NONE)
            fprintf(f, "  time:     %s (%.1f%% of the span)\n",
                    gp_fmt_dur_auto(d, sizeof d, (double)a->time_ns),
                    l->span_ns > 0 ? 100.0 * (double)a->time_ns / (double)l->span_ns : 0.0);
        fprintf(f, "  estimate: %s\n", a->estimate);
        fprintf(f, "  hint:     %s\n", a->rule->hint);
        for (size_t k = 0; k < a->nev; k++) {
            const gp_adv_evidence *e = &a->ev[k];
            fprintf(f, "    - %.100s: %llu x", e->name, (unsigned long long)e->count);
            if (e->time_ns != GP_NONE)
                fprintf(f, ", %s", gp_fmt_dur_auto(d, sizeof d, (double)e->time_ns));
            if (!isnan(e->value))
                fprintf(f, ", value %s", gp_adv_value_str(d, sizeof d, e->value, e->unit));
            fprintf(f, "\n");
        }
    }
    if (!shown)
        fprintf(f, "\nno advice: no rule fired%s\n", minp < GP_PRIO_LOW ? " at this priority" : "");
}

void gp_report_advise_json(gp_sbuf *b, const gp_trace *t, const gp_advice_list *l, gp_priority minp)
{
    gp_sbuf_putc(b, '{');
    gp_json_key(b, "file", 0);
    gp_json_str(b, gp_trace_s(t, t->meta.source));
    gp_json_key(b, "rank", 1);
    if (t->meta.rank == GP_NONE)
        gp_sbuf_puts(b, "null");
    else
        gp_json_int(b, t->meta.rank);
    gp_json_key(b, "span_ns", 1);
    gp_json_int(b, l->span_ns);
    gp_json_key(b, "advice", 1);
    gp_sbuf_putc(b, '[');
    int first = 1;
    for (size_t i = 0; i < l->n; i++) {
        const gp_advice *a = &l->v[i];
        if (a->priority > minp) continue;
        if (!first) gp_sbuf_putc(b, ',');
        first = 0;
        gp_sbuf_putc(b, '{');
        gp_json_key(b, "id", 0);
        gp_json_str(b, a->rule->id);
        gp_json_key(b, "type", 1);
        gp_json_str(b, a->rule->type);
        gp_json_key(b, "priority", 1);
        gp_json_str(b, gp_priority_name(a->priority));
        gp_json_key(b, "finding", 1);
        gp_json_str(b, a->finding);
        gp_json_key(b, "time_ns", 1);
        if (a->time_ns == GP_NONE)
            gp_sbuf_puts(b, "null");
        else
            gp_json_int(b, a->time_ns);
        gp_json_key(b, "estimated_saving_ns", 1);
        if (a->saving_ns == GP_NONE)
            gp_sbuf_puts(b, "null");
        else
            gp_json_int(b, a->saving_ns);
        gp_json_key(b, "estimated_saving_pct", 1);
        gp_json_num(b, a->saving_pct);
        gp_json_key(b, "estimate", 1);
        gp_json_str(b, a->estimate);
        gp_json_key(b, "hint", 1);
        gp_json_str(b, a->rule->hint);
        gp_json_key(b, "evidence", 1);
        gp_sbuf_putc(b, '[');
        for (size_t k = 0; k < a->nev; k++) {
            const gp_adv_evidence *e = &a->ev[k];
            if (k) gp_sbuf_putc(b, ',');
            gp_sbuf_putc(b, '{');
            gp_json_key(b, "name", 0);
            gp_json_str(b, e->name);
            gp_json_key(b, "count", 1);
            gp_json_int(b, (int64_t)e->count);
            gp_json_key(b, "time_ns", 1);
            if (e->time_ns == GP_NONE)
                gp_sbuf_puts(b, "null");
            else
                gp_json_int(b, e->time_ns);
            gp_json_key(b, "value", 1);
            gp_json_num(b, e->value);
            gp_json_key(b, "value_unit", 1);
            if (gp_adv_unit_name(e->unit))
                gp_json_str(b, gp_adv_unit_name(e->unit));
            else
                gp_sbuf_puts(b, "null");
            gp_sbuf_putc(b, '}');
        }
        gp_sbuf_puts(b, "]}");
    }
    gp_sbuf_puts(b, "]}");
}
void gp_report_advise_rules_text(FILE *f)
{
    size_t n;
    const gp_adv_rule *r = gp_adv_rules(&n);
    for (size_t i = 0; i < n; i++) {
        fprintf(f, "%s [%s]: %s\n", r[i].id, r[i].type, r[i].title);
        for (int k = 0; k < GP_ADV_MAX_PARAMS && r[i].params[k].name; k++)
            fprintf(f, "    %s.%s = %g  (%s)\n", r[i].id, r[i].params[k].name, r[i].params[k].def,
                    r[i].params[k].help);
        fprintf(f, "    hint: %s\n", r[i].hint);
    }
}

void gp_report_advise_json_doc(gp_sbuf *b, gp_trace *const *t, const gp_advice_list *l, size_t n,
                               gp_priority minp)
{
    gp_report_doc_begin(b);
    for (size_t i = 0; i < n; i++) {
        if (i) gp_sbuf_putc(b, ',');
        gp_report_advise_json(b, t[i], &l[i], minp);
    }
    gp_report_doc_end(b);
}

void gp_report_advise_text_doc(FILE *f, gp_trace *const *t, const gp_advice_list *l, size_t n,
                               gp_priority minp)
{
    for (size_t i = 0; i < n; i++) {
        if (i) fputc('\n', f);
        gp_report_advise_text(f, t[i], &l[i], minp);
    }
}
