/* render/memview.h: the memory analysis as text, JSON and a self-contained
 * HTML page (allocated/reserved over time per device, peak, leaks). */
#ifndef GP_RENDER_MEMVIEW_H
#define GP_RENDER_MEMVIEW_H
#include "analysis/memory.h"
#include "core/sbuf.h"
#include <stdio.h>

/* Prints the per-device figures, the operations live at the peak and the
 * top `top` leak groups as text. */
void gp_memview_text(const gp_trace *t, const gp_memory *m, size_t top, FILE *f);
/* Appends one JSON object for trace t (times in ns since the trace start,
 * plus the peak's absolute time in us as in the source). The series is
 * downsampled to at most max_points per device (0 = all). */
void gp_memview_json(const gp_trace *t, const gp_memory *m, size_t max_points, gp_sbuf *b);
/* The whole document of n traces: {"traces":[one object each]}\n (the
 * output of `gpuprof memory --json` and of /api/profiler/memory). */
void gp_memview_json_doc(gp_trace *const *t, const gp_memory *m, size_t n, size_t max_points,
                         gp_sbuf *b);
/* The text reports of n traces separated by blank lines. */
void gp_memview_text_doc(gp_trace *const *t, const gp_memory *m, size_t n, size_t top, FILE *f);
/* Writes the JS data of the memory chart (used by the memory page and the
 * report): {"devices":[{label,pts:[[ts,alloc,reserved|null]..],peak...}]}. */
void gp_memview_chart_data(const gp_memory *m, size_t max_points, gp_sbuf *b);
/* The page script that draws that data is src/render/web/memview.js
 * (gpMemCharts(data_id, el_id)). */
/* Appends the whole memory page. */
void gp_memview_html(const gp_trace *t, const gp_memory *m, gp_sbuf *b);

#endif
