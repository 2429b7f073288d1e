/* report/runs.h: the result writers of `gpuprof runs`: the runs of a store
 * as a table or JSON (shared by the CLI and the server's /api/runs). */
#ifndef GP_REPORT_RUNS_H
#define GP_REPORT_RUNS_H
#include "core/sbuf.h"
#include "store/store.h"
#include <stdio.h>

/* A table, one row per run (start in local time). */
void gp_report_runs_text(FILE *f, const gp_store_run_row *rows, size_t n);
/* {"store":path,"runs":[...]}\n; unknown figures are null. */
void gp_report_runs_json(gp_sbuf *b, const char *path, const gp_store_run_row *rows, size_t n);

#endif
