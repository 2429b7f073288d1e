/* monitor/monitor.h: library-internal access to the monitor context beyond
 * the public API: one consistent copy of everything a metrics exposition
 * shows (devices, latest samples, processes, alert state and counters,
 * health, inference histogram), taken under the monitor's lock. */
#ifndef GP_MONITOR_MONITOR_H
#define GP_MONITOR_MONITOR_H
#include "monitor/backend.h"
#include "monitor/session.h"
#include <gpuprof/monitor.h>
#include <stddef.h>
#include <stdint.h>

/* A copy of the monitor's visible state. Zero-initialise; the arrays grow
 * as needed and are freed by gp_mon_view_free. */
typedef struct gp_mon_view {
    int valid;           /* filled at least once */
    uint64_t generation; /* gp_monitor_generation when copied */
    uint64_t ticks, sessions_started;
    int64_t last_tick_wall_ns; /* 0 before the first tick */
    size_t ndev, cap, gpus;    /* gpus: as gp_monitor_gpu_count */
    gp_dev_info *info;         /* ndev entries */
    gp_dev_sample *sample;     /* valid where have[i] */
    int *have;
    int *nprocs; /* processes of device i: procs[i * GP_MAX_PROCS ..] */
    gp_dev_proc *procs;
    unsigned char *level; /* alert level of device i, kind k: level[i * GP_ALERT__COUNT + k] */
    uint64_t alerts[GP_ALERT__COUNT][3]; /* [kind][0]: all raises; [kind][1|2] by level */
    gp_health_entry health[16];
    size_t nhealth;
    int overall;         /* gp_health_state */
    const double *edges; /* inference histogram edges (ms), nedges of them */
    size_t nedges;
    uint64_t inf_hist[GP_INF_HIST_MAX + 1]; /* per bucket (not cumulative); [nedges]: above */
    uint64_t inf_count;
    double inf_sum_ms;
} gp_mon_view;

/* Copies the monitor's state into v. Returns 1 (nothing copied) when v
 * already holds the current generation, 0 when copied, GP_ENOMEM. */
int gp_monitor_view(gp_monitor *m, gp_mon_view *v);
/* Frees v's arrays and zeroes it. */
void gp_mon_view_free(gp_mon_view *v);

/* Counts a session started on m's behalf by another process (`gpuprof
 * serve --monitor` starts sessions by running `gpuprof session start`):
 * gpu_profiling_sessions_total grows as for gp_monitor_session_start. */
void gp_monitor_count_session(gp_monitor *m);

#endif
