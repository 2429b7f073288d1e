/* core/table.h: terminal tables with per-column alignment, and duration
 * formatting with one unit per column (ns/us/ms/s) named in the header. */
#ifndef GP_CORE_TABLE_H
#define GP_CORE_TABLE_H
#include <stdint.h>
#include <stdio.h>

typedef struct gp_table gp_table;

/* Creates a table; align is one char per column: 'l' or 'r'. Caller destroys. */
gp_table *gp_table_create(int ncols, const char *const *headers, const char *align);
void gp_table_destroy(gp_table *t);
/* Appends a row of ncols cells (copied). */
void gp_table_row(gp_table *t, const char *const *cells);
/* Appends a row from printf-style cells separated by '\t' in one string. */
void gp_table_rowf(gp_table *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prints header, rule and rows; max_width caps column widths (0 = none). */
void gp_table_print(const gp_table *t, FILE *f, int max_width);

typedef struct gp_unit {
    const char *name; /* "ns", "us", "ms", "s" */
    double div;       /* ns per unit */
} gp_unit;

/* Picks the unit in which max_ns prints with 1..4 integer digits where
 * possible (ns below 10 us, us below 10 ms, ms below 10 s, else s). */
gp_unit gp_unit_pick(double max_ns);
/* Formats ns in unit u with 3 decimals (0 for ns) into buf. */
const char *gp_fmt_dur(char *buf, size_t n, double ns, gp_unit u);
/* Formats ns with its own best unit ("12.345 ms"). */
const char *gp_fmt_dur_auto(char *buf, size_t n, double ns);
/* Formats a byte count with a binary unit ("1.50 GiB"). */
const char *gp_fmt_bytes(char *buf, size_t n, double bytes);

#endif
