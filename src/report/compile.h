/* report/compile.h: the result writers of `gpuprof compile` (text, JSON, the
 * Perfetto JSON of the compile phases; the HTML page is render/compile_page.c).
 * The CLI and the server call these, so every output shows the same figures. */
#ifndef GP_REPORT_COMPILE_H
#define GP_REPORT_COMPILE_H
#include "analysis/advise.h"
#include "analysis/compile.h"
#include "core/sbuf.h"
#include <stdio.h>

/* Everything one `gpuprof compile` run shows. Any pointer may be NULL /
 * any count 0 when that part was not asked for. */
typedef struct gp_compile_result {
    const gp_tlog *const *logs;
    size_t nlogs;
    const gp_advice_list *advice;  /* torch-compile rules over all logs */
    const gp_rank_divergence *div; /* when nlogs >= 2 */
    const gp_trace *trace;         /* Kineto trace of the compiled model */
    const gp_compiled_trace *ct;   /* its analysis */
    const gp_compile_speedup *sp;  /* with --eager */
    const char *eager_file;
} gp_compile_result;

/* JSON: {"logs": [{"file", "rank", "compiles": [...], "totals": {...}, ...}],
 * "divergence": [...], "advice": [...], "trace": {...}, "speedup": {...}}
 * (the optional parts only when present). Keys: docs/compile.md. */
void gp_compile_json(const gp_compile_result *r, gp_sbuf *b);
/* Text tables for a terminal. */
void gp_compile_text(const gp_compile_result *r, FILE *f);
/* Perfetto / chrome://tracing JSON of the chromium_event compile phases:
 * one process per log (named by its rank or file), one track per thread.
 * Returns 0, GP_ENOMEM or GP_EIO. */
int gp_compile_timeline(const gp_tlog *const *logs, size_t n, FILE *f);

#endif
