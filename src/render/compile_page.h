/* render/compile_page.h: the self-contained HTML page of `gpuprof compile`:
 * the compile phase timeline per rank, ranks side by side with their
 * divergence, compile ids, graph breaks, recompiles, failures, suggestions,
 * the compiled-model trace and the speedup over eager. The page receives the
 * JSON of gp_compile_json and draws it with src/render/web/compile.js. */
#ifndef GP_RENDER_COMPILE_PAGE_H
#define GP_RENDER_COMPILE_PAGE_H
#include "core/sbuf.h"
#include "report/compile.h"

/* Appends the page to b. */
void gp_compile_page(const gp_compile_result *r, gp_sbuf *b);

#endif
