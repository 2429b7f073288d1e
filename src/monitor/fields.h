/* monitor/fields.h: the table of measured fields (key, unit, description)
 * and writers of samples as JSON objects and CSV cells. */
#ifndef GP_MONITOR_FIELDS_H
#define GP_MONITOR_FIELDS_H
#include "core/sbuf.h"
#include <gpuprof/monitor.h>

/* One-line description of field f (static), or NULL. */
const char *gp_fields_desc(int f);
/* Writes the valid fields of s as `"key":value` pairs (each preceded by a
 * comma); invalid ones are written as null when with_null is set. */
void gp_fields_json(gp_sbuf *b, const gp_dev_sample *s, int with_null);
/* Formats field f of s for a table into buf: value with unit, or "N/A". */
const char *gp_fields_fmt(const gp_dev_sample *s, int f, char *buf, size_t n);

#endif
