/* render/dashboard.c: the dashboard page of `gpuprof serve` (see
 * dashboard.h); its script and style are src/render/web/dashboard.{js,css}. */
#include "render/dashboard.h"
#include "render/html.h"
#include <stdio.h>

void gp_dashboard_html(gp_sbuf *b, int monitor, int store)
{
    char cfg[64];
    int n = snprintf(cfg, sizeof cfg, "{\"monitor\":%s,\"store\":%s}", monitor ? "true" : "false",
                     store ? "true" : "false");
    gp_html_page_begin(b, "gpuprof", "dashboard.css");
    gp_html_json(b, "gp-config", cfg, (size_t)n);
    gp_sbuf_puts(b, "<h2>Traces</h2>\n<div id=\"traces\" class=\"panel\"></div>\n"
                    "<div id=\"detail\" class=\"panel\"></div>\n"
                    "<h2>Runs</h2>\n<div id=\"runs\" class=\"panel\"></div>\n"
                    "<h2>Devices</h2>\n<div id=\"devices\" class=\"panel\"></div>\n");
    static const char *const js[] = {"dashboard.js", NULL};
    gp_html_page_end(b, js);
}
