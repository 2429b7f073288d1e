/* render/html.c: the page frame, embedded CSS/JS and file writing shared
 * by every HTML view. No external resources: everything is inline. */
#include "core/afile.h"
#include "render/html.h"
#include "render/web.h"
#include <errno.h>
#include <gpuprof/common.h>
#include <stdio.h>
#include <string.h>

void gp_html_page_begin(gp_sbuf *b, const char *title, const char *css)
{
    gp_sbuf_puts(b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
                    "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\n"
                    "<meta name=\"generator\" content=\"gpuprof ");
    gp_html_escape(b, gp_version());
    gp_sbuf_puts(b, "\">\n<title>");
    gp_html_escape(b, title);
    gp_sbuf_puts(b, "</title>\n<style>\n");
    gp_sbuf_puts(b, gp_web("common.css"));
    if (css && gp_web(css)) gp_sbuf_puts(b, gp_web(css));
    gp_sbuf_puts(b, "</style></head>\n<body>\n<h1>");
    gp_html_escape(b, title);
    gp_sbuf_puts(b, "</h1>\n<div id=\"tip\" class=\"tip\"></div>\n");
}

void gp_html_json(gp_sbuf *b, const char *id, const char *json, size_t n)
{
    gp_html_json_attrs(b, id, NULL, json, n);
}

void gp_html_json_attrs(gp_sbuf *b, const char *id, const char *attrs, const char *json, size_t n)
{
    gp_sbuf_puts(b, "<script type=\"application/json\" id=\"");
    gp_html_escape(b, id);
    gp_sbuf_puts(b, "\"");
    if (attrs) {
        gp_sbuf_putc(b, ' ');
        gp_sbuf_puts(b, attrs);
    }
    gp_sbuf_puts(b, ">");
    const char *p = json, *lim = json + n;
    while (p < lim) {
        const char *lt = p;
        while (lt < lim && *lt != '<' && (unsigned char)*lt != 0xe2) lt++;
        if (lt == lim) {
            gp_sbuf_add(b, p, (size_t)(lim - p));
            break;
        }
        if ((unsigned char)*lt == 0xe2) {
            /* U+2028 and U+2029 (line terminators to a JavaScript parser)
             * written as \u2028 / \u2029: the element's text is plain ASCII
             * line-wise whatever parses it */
            if (lt + 2 < lim && (unsigned char)lt[1] == 0x80 &&
                ((unsigned char)lt[2] == 0xa8 || (unsigned char)lt[2] == 0xa9)) {
                gp_sbuf_add(b, p, (size_t)(lt - p));
                gp_sbuf_puts(b, (unsigned char)lt[2] == 0xa8 ? "\\u2028" : "\\u2029");
                p = lt + 3;
            } else {
                gp_sbuf_add(b, p, (size_t)(lt - p) + 1);
                p = lt + 1;
            }
            continue;
        }
        gp_sbuf_add(b, p, (size_t)(lt - p) + 1);
        if (lt + 1 < lim && (lt[1] == '/' || lt[1] == '!')) {
            /* "<\/" and "<\u0021" keep the JSON value and cannot end the element */
            gp_sbuf_puts(b, lt[1] == '/' ? "\\/" : "\\u0021");
            p = lt + 2;
        } else {
            p = lt + 1;
        }
    }
    gp_sbuf_puts(b, "</script>\n");
}

static void script(gp_sbuf *b, const char *name)
{
    const char *js = gp_web(name);
    if (!js) return;
    gp_sbuf_puts(b, "<script>\n");
    gp_sbuf_puts(b, js);
    gp_sbuf_puts(b, "</script>\n");
}

void gp_html_page_end(gp_sbuf *b, const char *const *js)
{
    script(b, "common.js");
    for (size_t i = 0; js && js[i]; i++) script(b, js[i]);
    gp_sbuf_puts(b, "<footer>Written by gpuprof ");
    gp_html_escape(b, gp_version());
    gp_sbuf_puts(b, "; self-contained page, no network access.</footer>\n</body></html>\n");
}

int gp_write_file(const char *path, const gp_sbuf *b, gp_err *err)
{
    if (!strcmp(path, "-")) {
        if (gp_sbuf_write(b, stdout) || fflush(stdout))
            return gp_err_set(err, GP_EIO, "stdout: write failed");
        return 0;
    }
    gp_afile af; /* replaced whole or not at all (core/afile.h) */
    if (gp_afile_open(&af, path)) return gp_err_set(err, GP_EIO, "%s: %s", path, strerror(errno));
    int bad = gp_sbuf_write(b, af.f) != 0;
    if (gp_afile_close(&af, bad) != 0)
        return gp_err_set(err, GP_EIO, "%s: write failed: %s", path, strerror(errno));
    return 0;
}

int gp_path_has_suffix(const char *path, const char *suffix)
{
    size_t n = strlen(path), m = strlen(suffix);
    return n >= m && !memcmp(path + n - m, suffix, m);
}
