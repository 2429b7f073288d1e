/* render/flame.h: flame-graph outputs of a call tree: folded stacks,
 * nested JSON, the self-contained interactive HTML page, and speedscope
 * files (evented per thread from a trace, sampled from a call tree). */
#ifndef GP_RENDER_FLAME_H
#define GP_RENDER_FLAME_H
#include "analysis/calltree.h"
#include "core/sbuf.h"
#include "trace/trace.h"

/* Appends one "frame;frame;... SELF" line per frame with self weight > 0,
 * root excluded (';' and newlines inside names become ',' and ' '). The
 * counts sum to the root's total. */
void gp_flame_folded(const gp_ftree *f, gp_sbuf *b);

/* Appends the tree as nested JSON {"name","kind","value","self","children"}
 * (d3-flame-graph shape) wrapped in {"unit":...,"total":...,"root":...}. */
void gp_flame_json(const gp_ftree *f, gp_sbuf *b);

/* Appends the self-contained HTML flame graph (click to zoom, search with
 * highlight, tooltips with time and share, reset). `note` (may be NULL) is
 * shown under the title. Children should be sorted first. */
void gp_flame_html(const gp_ftree *f, const char *title, const char *note, gp_sbuf *b);

/* The page stays responsive: raises po->min_total so that at most 300,000
 * frames of tree are drawn (the smallest fold into their parent). */
void gp_flame_page_limit(const gp_ftree *tree, gp_ftree_prune_opts *po);
/* The note the page shows when that limit folded frames of tree into the
 * drawn tree `use` ("" when it did not); requested is the min_total asked
 * for (--min-duration). */
void gp_flame_page_note(const gp_ftree *tree, const gp_ftree *use, const gp_ftree_prune_opts *po,
                        int64_t requested, char *note, size_t n);

/* Appends a speedscope file with one evented profile per CPU thread (its
 * nested slices) and per GPU stream (its kernels, copies and memsets),
 * times in ns since the trace start. Returns 0 or GP_ENOMEM. */
int gp_speedscope_trace(const gp_trace *const *traces, size_t n, gp_sbuf *b);
/* Appends a speedscope file with one sampled profile built from the tree
 * (one sample per frame with self weight). Returns 0 or GP_ENOMEM. */
int gp_speedscope_tree(const gp_ftree *f, const char *name, gp_sbuf *b);

#endif
