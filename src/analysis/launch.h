/* analysis/launch.h: kernel launch statistics (HTA
 * get_cuda_kernel_launch_stats): per launch the host call's duration, the
 * GPU event's duration and the launch delay; counts of short kernels and
 * outliers. */
#ifndef GP_ANALYSIS_LAUNCH_H
#define GP_ANALYSIS_LAUNCH_H
#include "analysis/hta_prep.h"
#include "core/stats.h"

typedef enum gp_launch_set {
    GP_LAUNCH_HTA = 0, /* cudaLaunchKernel, cudaLaunchKernelExC, cudaMemcpyAsync, cudaMemsetAsync,
                          MTIA's "runFunction - job_prep_and_submit_for_execution"; outside
                          --compat hta also mtiaLaunchKernel */
    GP_LAUNCH_OTHER,   /* cuLaunchKernel(Ex) (Triton, driver API) and hip* launches/copies */
} gp_launch_set;

typedef struct gp_launch_opts {
    int64_t runtime_cutoff_ns;      /* HTA: 50 us */
    int64_t launch_delay_cutoff_ns; /* HTA: 100 us */
} gp_launch_opts;

typedef struct gp_launch_stats {
    uint64_t launches;                 /* host call / GPU event pairs joined on correlation */
    uint64_t short_kernels;            /* cpu <= runtime cutoff and gpu duration < cpu duration */
    uint64_t runtime_outliers;         /* cpu duration > runtime cutoff */
    uint64_t launch_delay_outliers;    /* gpu start - host end > launch delay cutoff */
    gp_stats cpu_ns, gpu_ns, delay_ns; /* distributions (count 0 when no launch) */
} gp_launch_stats;

/* Returns 1 when name is a launch call of set s (compat: HTA 0.6.1's lists). */
int gp_launch_name_in(const char *name, gp_launch_set s, int compat);

/* Computes the statistics of set s over v. Returns 0 or GP_ENOMEM. */
int gp_launch_compute(const gp_hview *v, gp_launch_set s, const gp_launch_opts *o,
                      gp_launch_stats *out);

#endif
