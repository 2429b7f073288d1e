/* report/compare.h: the result writers of `gpuprof compare`: verdicts per
 * operation, top regressions and improvements, tracked buffers, as text
 * tables or JSON (shared by the CLI and the server's /api/compare). bpath
 * and cpath are the names the sides are shown by. */
#ifndef GP_REPORT_COMPARE_H
#define GP_REPORT_COMPARE_H
#include "analysis/compare.h"
#include "core/sbuf.h"
#include <stdio.h>

typedef struct gp_compare_view {
    long top; /* regressions/improvements/other changes shown (default 10) */
    int wide; /* text: do not shorten long names */
    int all;  /* text: also every operation with its verdict */
} gp_compare_view;

void gp_report_compare_text(FILE *f, const gp_comparison *c, const char *bpath, const char *cpath,
                            const gp_compare_view *o);
/* The whole JSON document, ending in a newline. */
void gp_report_compare_json(gp_sbuf *b, const gp_comparison *c, const char *bpath,
                            const char *cpath, const gp_compare_view *o);

#endif
