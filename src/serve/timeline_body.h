/* serve/timeline_body.h: the timeline bodies of the server (Perfetto JSON
 * as `gpuprof timeline -o x.json` writes it, or the HTML viewer). A module
 * of its own: render/timeline.h and analysis/timeline_stats.h both name a
 * type gp_timeline_stats. */
#ifndef GP_SERVE_TIMELINE_BODY_H
#define GP_SERVE_TIMELINE_BODY_H
#include "core/error.h"
#include "core/sbuf.h"
#include "trace/trace.h"

/* Appends the timeline of t (html: the viewer page). Returns 0 or
 * GP_ENOMEM with err set. */
int gp_serve_timeline(const gp_trace *t, int html, gp_sbuf *b, gp_err *err);

#endif
