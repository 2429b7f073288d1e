/* analysis/session_result.h: the one computation of a session result
 * (gp_session_result, include/gpuprof/gpuprof.h) shared by libgpuprof's
 * gp_session_end and `gpuprof run`: facts measured outside the trace (wall,
 * CPU, GPU time, memory), the top kernels by device time, the bottlenecks
 * by self time and the advice engine's recommendations. The writers are in
 * report/session_result.h. */
#ifndef GP_ANALYSIS_SESSION_RESULT_H
#define GP_ANALYSIS_SESSION_RESULT_H
#include "trace/trace.h"
#include <gpuprof/gpuprof.h>

/* Rows kept in a result (top kernels, bottlenecks). */
#define GP_SESSION_TOP 10

/* What a session measured besides its operations. */
typedef struct gp_session_facts {
    const char *name;
    int64_t total_ns, cpu_ns;
    int gpu_valid;
    int64_t gpu_ns;
    uint64_t kernel_launches;
    int mem_valid;
    int64_t mem_peak_bytes, mem_allocated_bytes;
    int reserved_valid;
    int64_t mem_reserved_bytes;
} gp_session_facts;

/* Fills *out: the facts; rows[0..nrows) (taken over, freed here) ranked by
 * self time, then name, the first GP_SESSION_TOP kept as bottlenecks;
 * krows[0..nk) (taken over) ranked by total, then name, the first
 * GP_SESSION_TOP kept as kernels; and one recommendation per finding of the
 * advice engine on t ("[priority] rule: finding; hint"). Returns 0 or
 * GP_ENOMEM (*out then freed). */
int gp_session_build(gp_session_result *out, const gp_session_facts *f, gp_summary_row *rows,
                     size_t nrows, gp_kernel_row *krows, size_t nk, const gp_trace *t);

/* The result of a whole recorded trace (a `gpuprof run` run): total_ns and
 * cpu_ns as given (cpu_ns < 0: unknown, stored as 0); GPU time = the sum of
 * the kernel durations (GP_G_KERNEL: CUDA kernels and OpenCL kernels), over
 * that many launches; memory from the [memory] events (gp_memory_compute):
 * the peak of the device with the highest peak and the bytes still
 * allocated at the end summed over devices; reserved unknown; bottlenecks =
 * the rows `gpuprof summary` ranks as bottlenecks (gp_summary_bottleneck_mask)
 * with their self time. Returns 0 or GP_ENOMEM. */
int gp_session_of_trace(const gp_trace *t, const char *name, int64_t total_ns, int64_t cpu_ns,
                        gp_session_result *out);

#endif
