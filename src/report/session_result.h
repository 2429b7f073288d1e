/* report/session_result.h: the writers of a session result
 * (gp_session_result, computed by analysis/session_result.c): the seed's
 * session summary as text and the "gpuprof-session-1" JSON object. Used by
 * libgpuprof (gp_session_result_print/_json, gp_export_json "sessions") and
 * by `gpuprof run` (printed at the end, --session-json). */
#ifndef GP_REPORT_SESSION_RESULT_H
#define GP_REPORT_SESSION_RESULT_H
#include "core/sbuf.h"
#include <gpuprof/gpuprof.h>
#include <stdio.h>

void gp_report_session_result_text(FILE *f, const gp_session_result *r);
/* One JSON object, no newline. */
void gp_report_session_result_json(gp_sbuf *b, const gp_session_result *r);

#endif
