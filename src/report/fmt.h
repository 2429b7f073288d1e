/* report/fmt.h: small formatting helpers shared by the result writers. */
#ifndef GP_REPORT_FMT_H
#define GP_REPORT_FMT_H
#include "core/sbuf.h"
#include <stddef.h>
#include <stdint.h>

/* Formats a signed percentage ("+12.3%") or "N/A" for NaN into buf. */
const char *gp_fmt_pct(char *buf, size_t n, double pct);
/* Formats a p-value ("0.0123", "<1e-4") or "N/A" for NaN into buf. */
const char *gp_fmt_p(char *buf, size_t n, double p);
/* Formats a wall-clock time in ns since the epoch as UTC
 * "YYYY-MM-DD HH:MM:SS", or "N/A" when unknown (GP_NONE or <= 0). */
const char *gp_fmt_wall_utc(char *buf, size_t n, int64_t ns);

/* The frame of a per-trace JSON document: {"gpuprof_version":V,"traces":[
 * ... ]}\n (the objects in between are separated by the caller's commas). */
void gp_report_doc_begin(gp_sbuf *b);
void gp_report_doc_end(gp_sbuf *b);

#endif
