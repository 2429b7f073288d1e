/* report/summary.h: the result writers of `gpuprof summary`: per-operation
 * statistics by category and the top bottlenecks, as text tables or JSON.
 * The CLI and the server (`gpuprof serve`) call these same functions, so the
 * server's /api/summary body is byte-identical to `gpuprof summary --json`. */
#ifndef GP_REPORT_SUMMARY_H
#define GP_REPORT_SUMMARY_H
#include "analysis/summary.h"
#include "core/sbuf.h"
#include <stdio.h>

typedef struct gp_summary_view {
    long top;         /* rows per category; < 0 = all */
    long bottlenecks; /* bottleneck rows */
    unsigned mask;    /* groups shown (bit 1 << gp_group) */
    int wide;         /* text: do not shorten long names */
} gp_summary_view;

/* Defaults of the command: every group, 10 bottlenecks; top 15 rows per
 * group in text, all in JSON. */
void gp_summary_view_default(gp_summary_view *v, int json);

/* Text report of one trace (header, one table per group, bottlenecks). */
void gp_report_summary_text(FILE *f, const gp_trace *t, const gp_summary *s,
                            const gp_summary_view *o);
/* One JSON object for one trace. */
void gp_report_summary_json(gp_sbuf *b, const gp_trace *t, const gp_summary *s,
                            const gp_summary_view *o);
/* The whole document of n traces: {"gpuprof_version":..,"traces":[..]}\n
 * (text: the traces' reports separated by a blank line). */
void gp_report_summary_json_doc(gp_sbuf *b, gp_trace *const *t, const gp_summary *s, size_t n,
                                const gp_summary_view *o);
/* One row of the per-entry metrics table (docs/api.md "Per-entry metrics"). */
typedef struct gp_entry_row {
    const char *name;
    uint64_t count; /* calls of the entry */
    gp_entry_sum em;
} gp_entry_row;
/* The per-entry metrics table of `gpuprof summary`, also printed by the
 * library's gp_print_summary: nothing when n is 0; names cut to `width`
 * characters (0: whole). */
void gp_report_entry_table(FILE *f, const gp_entry_row *rows, size_t n, int width);
void gp_report_summary_text_doc(FILE *f, gp_trace *const *t, const gp_summary *s, size_t n,
                                const gp_summary_view *o);

#endif
