/* render/html.h: pieces shared by every self-contained HTML page we write
 * (flame graph, timeline, memory, report): page frame, the embedded CSS and
 * JavaScript of src/render/web/ (render/web.h), safe embedding of JSON
 * data, writing files.
 *
 * Safety rule for every page: trace data is written either HTML-escaped as
 * text (gp_html_escape) or as JSON through gp_html_json; page scripts read
 * the JSON and put strings into the DOM only as text (see
 * src/render/web/common.js). */
#ifndef GP_RENDER_HTML_H
#define GP_RENDER_HTML_H
#include "core/error.h"
#include "core/sbuf.h"

/* Opens a page: doctype, <head> with title, common.css plus the embedded
 * style sheet named css (e.g. "report.css"; may be NULL), then <body>, an
 * <h1> with the escaped title and the tooltip element. */
void gp_html_page_begin(gp_sbuf *b, const char *title, const char *css);
/* Writes <script type="application/json" id="ID"> with json[0..n) escaped so
 * that it cannot close the script element ("</" becomes "<\/"). */
void gp_html_json(gp_sbuf *b, const char *id, const char *json, size_t n);
/* Same with extra attributes (raw, e.g. "class=\"x\" data-p=\"r0\""; may be NULL). */
void gp_html_json_attrs(gp_sbuf *b, const char *id, const char *attrs, const char *json, size_t n);
/* Closes a page: one <script> with common.js (the global object gp), then
 * one <script> per embedded script named in js (NULL-terminated list, may
 * be NULL; e.g. {"memview.js", "report.js", NULL}), a footer naming the
 * gpuprof version, and the end of body and html. */
void gp_html_page_end(gp_sbuf *b, const char *const *js);

/* Writes b to path ("-" = stdout). Returns 0 or GP_EIO with err "PATH: why". */
int gp_write_file(const char *path, const gp_sbuf *b, gp_err *err);

/* 1 when path ends with suffix (case-sensitive). */
int gp_path_has_suffix(const char *path, const char *suffix);

#endif
