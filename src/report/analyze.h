/* report/analyze.h: the result writers of `gpuprof analyze`: the text report
 * per rank and the JSON document (keys of HTA's expected.hta.json plus our
 * own), shared by the CLI and the server's /api/profiler/hta. */
#ifndef GP_REPORT_ANALYZE_H
#define GP_REPORT_ANALYZE_H
#include "analysis/analyze.h"
#include "core/sbuf.h"
#include <stdio.h>

void gp_report_analyze_text(FILE *f, const gp_analyze_result *r, const gp_analyze_opts *o);
/* The whole JSON document, ending in a newline. */
void gp_report_analyze_json(gp_sbuf *b, const gp_analyze_result *r, const gp_analyze_opts *o);

#endif
