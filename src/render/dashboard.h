/* render/dashboard.h: the page of `gpuprof serve` at "/": traces, runs and
 * devices, filled by src/render/web/dashboard.js from the server's API. */
#ifndef GP_RENDER_DASHBOARD_H
#define GP_RENDER_DASHBOARD_H
#include "core/sbuf.h"

/* Appends the page. monitor: the server samples devices (live panel);
 * store: a run store is served. */
void gp_dashboard_html(gp_sbuf *b, int monitor, int store);

#endif
