/* analysis/timeline_stats.c: CPU/GPU timeline statistics derived from the
 * merged activity intervals of analysis/activity.c. */
#include "analysis/timeline_stats.h"
#include "analysis/activity.h"
#include "analysis/calltree.h"
#include "core/error.h"
#include <string.h>

int gp_timeline_stats_compute(const gp_trace *t, gp_timeline_stats *out)
{
    memset(out, 0, sizeof *out);
    gp_activity a; /* the one definition of CPU/GPU activity */
    if (gp_activity_compute(t, &a)) return GP_ENOMEM;
    out->span_ns = a.span_ns;
    out->cpu_active_ns = a.cpu_active_ns;
    out->gpu_active_ns = a.gpu_active_ns;
    out->overlap_ns = a.overlap_ns;
    out->cpu_only_ns = a.cpu_active_ns - a.overlap_ns;
    out->gpu_only_ns = a.gpu_active_ns - a.overlap_ns;
    /* span - (cpu + gpu - overlap), grouped so that no step overflows: cpu
     * + gpu passes INT64_MAX when each is over half of a span near it */
    out->idle_ns = (a.span_ns - a.cpu_active_ns) - (a.gpu_active_ns - a.overlap_ns);
    out->cpu_slices = a.cpu_slices;
    out->gpu_slices = a.gpu_slices;
    out->gpu_valid = a.gpu_valid;
    return 0;
}
