/* render/timeline.h: the self-contained zoomable HTML timeline viewer
 * (JSON and .pftrace: render/export.h) that aggregates what
 * is too small to see so that huge traces give a bounded page. */
#ifndef GP_RENDER_TIMELINE_H
#define GP_RENDER_TIMELINE_H
#include "core/sbuf.h"
#include "trace/trace.h"
#include <stdint.h>
#include <stdio.h>

typedef struct gp_timeline_stats {
    uint64_t slices;     /* slices written individually */
    uint64_t aggregated; /* slices folded into aggregate bins (HTML) */
    uint64_t bins;       /* aggregate bins (HTML) */
    uint64_t flows;      /* launch->GPU links */
    uint64_t counters;   /* counter samples */
    uint64_t clipped;    /* slices clipped to their parent to keep nesting */
    int64_t bin_ns;      /* HTML: slices shorter than this were aggregated (0 = none) */
} gp_timeline_stats;

/* Appends the HTML viewer of t. max_slices bounds the slices drawn one by
 * one (0 = default 300,000); beyond it, slices shorter than span/20,000 (or
 * more) are aggregated into bins per track and level. Returns 0 or GP_ENOMEM. */
int gp_timeline_html(const gp_trace *t, uint64_t max_slices, gp_sbuf *b, gp_timeline_stats *st);

#endif
