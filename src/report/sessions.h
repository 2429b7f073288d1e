/* report/sessions.h: the result writers of `gpuprof session list` (text
 * table or JSON) and `gpuprof session show` (the readable summary of a
 * session report), shared by the CLI and the server's /api/sessions. */
#ifndef GP_REPORT_SESSIONS_H
#define GP_REPORT_SESSIONS_H
#include "core/jdom.h"
#include "core/sbuf.h"
#include "monitor/session_dir.h"
#include <stdio.h>

/* {"sessions":[{"name","state":"running"} | {"name","state":"finished",
 * "samples","snapshots","inferences","duration_s","report"}]}\n */
void gp_report_sessions_json(gp_sbuf *b, const gp_session_entry *s, size_t n);
/* A table, or "no sessions in DIR". */
void gp_report_sessions_text(FILE *f, const char *dir, const gp_session_entry *s, size_t n);
/* The readable summary of report r (parsed NAME.json) read from path. */
void gp_report_session_text(FILE *f, const gp_jv *r, const char *path);

#endif
