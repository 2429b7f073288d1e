/* report/advise.h: the result writers of `gpuprof advise`: the advice of
 * each trace by priority, as text or JSON (shared by the CLI and the
 * server's /api/advise). Advice below priority minp is left out. */
#ifndef GP_REPORT_ADVISE_H
#define GP_REPORT_ADVISE_H
#include "analysis/advise.h"
#include "core/sbuf.h"
#include <stdio.h>

void gp_report_advise_text(FILE *f, const gp_trace *t, const gp_advice_list *l, gp_priority minp);
void gp_report_advise_json(gp_sbuf *b, const gp_trace *t, const gp_advice_list *l,
                           gp_priority minp);
/* {"gpuprof_version":..,"traces":[..]}\n over n traces (text: blank-line separated). */
void gp_report_advise_json_doc(gp_sbuf *b, gp_trace *const *t, const gp_advice_list *l, size_t n,
                               gp_priority minp);
void gp_report_advise_text_doc(FILE *f, gp_trace *const *t, const gp_advice_list *l, size_t n,
                               gp_priority minp);
/* The rules with their parameters, defaults and hints (--list-rules). */
void gp_report_advise_rules_text(FILE *f);

#endif
