/* report/history.h: the result writers of `gpuprof history`: one
 * operation's figures run by run with its steps, or the operations that
 * changed most over the runs of a store (text tables or JSON; shared by the
 * CLI and the server). rows[0..nr) are the runs h was built from, oldest
 * first; path is the store's name as shown. */
#ifndef GP_REPORT_HISTORY_H
#define GP_REPORT_HISTORY_H
#include "analysis/history.h"
#include "core/sbuf.h"
#include "store/store.h"
#include <stdio.h>

/* One operation x run by run, then its steps. */
void gp_report_history_op_text(FILE *f, const gp_history *h, const gp_hist_op *x,
                               const gp_store_run_row *rows, size_t nr, const char *path,
                               const gp_history_opts *ho);
/* The top operations (top <= 0: all) by largest step, then spread. */
void gp_report_history_list_text(FILE *f, const gp_history *h, const gp_store_run_row *rows,
                                 size_t nr, const char *path, long top, int wide,
                                 const gp_history_opts *ho);
/* The whole JSON document (ending in a newline): operation x with its
 * per-run points, or (x NULL) the top operations with their means. */
void gp_report_history_json(gp_sbuf *b, const gp_history *h, const gp_hist_op *x,
                            const gp_store_run_row *rows, size_t nr, const char *path, long top,
                            const gp_history_opts *ho);

#endif
