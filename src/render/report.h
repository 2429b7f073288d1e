/* render/report.h: the self-contained HTML dashboard of one or more traces:
 * summary figures, the advice of `gpuprof advise`, time distribution, average
 * time and call counts, GPU vs CPU vs transfer per operation, memory over
 * time, bottlenecks, operation timeline, the sortable statistics table and
 * the `analyze` breakdowns. */
#ifndef GP_RENDER_REPORT_H
#define GP_RENDER_REPORT_H
#include "core/sbuf.h"
#include "trace/trace.h"

/* Time an operation spent itself and on the GPU for work it launched. */
typedef struct gp_op_gpu {
    uint32_t name;       /* string id */
    uint64_t count;      /* calls */
    int64_t cpu_ns;      /* summed durations of the operation */
    int64_t gpu_ns;      /* kernels launched beneath it */
    int64_t transfer_ns; /* copies and memsets launched beneath it */
} gp_op_gpu;

/* For every CPU operator name of t: its CPU time and the GPU kernel and
 * transfer time of the work launched (through correlation) by runtime calls
 * nested inside it; in a trace without CPU operators (a libgpuprof export),
 * for every range name that named its device: its time as CPU or GPU time
 * (kept and aggregated ranges). Sorted by cpu+gpu+transfer descending; *out malloc'd
 * (caller frees). Returns 0 or GP_ENOMEM. */
int gp_report_op_gpu(const gp_trace *t, gp_op_gpu **out, size_t *n);

/* Appends the dashboard page for traces[0..n). Returns 0 or GP_ENOMEM. */
int gp_report_html(gp_trace *const *traces, size_t n, gp_sbuf *b);

#endif
