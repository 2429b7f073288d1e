/* render/compile_page.c: the HTML page of `gpuprof compile`. The data are
 * the --json document, embedded as JSON and put into the DOM as text by
 * compile.js. */
#include "render/compile_page.h"
#include "render/html.h"

void gp_compile_page(const gp_compile_result *r, gp_sbuf *b)
{
    char title[64];
    snprintf(title, sizeof title, "torch.compile: %zu log%s%s", r->nlogs, r->nlogs == 1 ? "" : "s",
             r->trace ? " and a trace" : "");
    gp_html_page_begin(b, title, "compile.css");
    gp_sbuf_puts(b, "<div id=\"compile\"></div>\n");
    gp_sbuf d = {0};
    gp_compile_json(r, &d);
    gp_html_json(b, "compile-data", d.s ? d.s : "{}", d.n ? d.n : 2);
    gp_sbuf_free(&d);
    static const char *const js[] = {"compile.js", NULL};
    gp_html_page_end(b, js);
}
