/* render/html.h: pieces shared by every self-contained HTML page we write
 * (flame graph, timeline, memory, report): page frame, common CSS and
 * JavaScript helpers, safe embedding of JSON data, writing files. */
#ifndef GP_RENDER_HTML_H
#define GP_RENDER_HTML_H
#include "core/error.h"
#include "core/sbuf.h"

/* Opens a page: doctype, <head> with title, the common CSS plus extra_css
 * (may be NULL), then <body> and an <h1> with the escaped title. */
void gp_html_begin(gp_sbuf *b, const char *title, const char *extra_css);
/* Writes <script type="application/json" id="ID"> with json[0..n) escaped so
 * that it cannot close the script element ("</" becomes "<\/"). */
void gp_html_json(gp_sbuf *b, const char *id, const char *json, size_t n);
/* Same with extra attributes (raw, e.g. "class=\"x\" data-p=\"r0\""; may be NULL). */
void gp_html_json_attrs(gp_sbuf *b, const char *id, const char *attrs, const char *json, size_t n);
/* Writes a <script> with the common helpers (gp.fmtDur, gp.fmtBytes,
 * gp.esc, gp.tip, gp.color) followed by js (may be NULL). */
void gp_html_script(gp_sbuf *b, const char *js);
/* Closes body and html, with a footer naming the gpuprof version. */
void gp_html_end(gp_sbuf *b);

/* Writes b to path ("-" = stdout). Returns 0 or GP_EIO with err "PATH: why". */
int gp_write_file(const char *path, const gp_sbuf *b, gp_err *err);

/* 1 when path ends with suffix (case-sensitive). */
int gp_path_has_suffix(const char *path, const char *suffix);

#endif
