/* monitor/backend.h: the device-backend interface (a table of function
 * pointers, one file per backend) and the helpers backends share. */
#ifndef GP_MONITOR_BACKEND_H
#define GP_MONITOR_BACKEND_H
#include "core/error.h"
#include <gpuprof/monitor.h>
#include <stdint.h>

/* What a backend is told at init. */
typedef struct gp_backend_env {
    const gp_mon_config *cfg;
    int64_t interval_ns; /* sampler period (NVML uses sample buffers below 1 s) */
} gp_backend_env;

/* Most processes reported per device and sample. */
#define GP_MAX_PROCS 64
/* Most devices one backend reports. */
#define GP_MAX_DEVS 64

typedef struct gp_backend {
    const char *name;
    /* Name of the backend this one stands in for: it is initialised only when
     * that one is unavailable (nvidia-smi for NVML). NULL otherwise. */
    const char *fallback_for;
    int is_gpu; /* counts for "a GPU backend works" in health */
    /* Initialises the backend into *state. Returns 0 when usable, else a
     * negative code with h->reason saying why (state is then NULL). The
     * backend also fills h->state (ok or degraded). */
    int (*init)(void **state, const gp_backend_env *env, gp_health_entry *h);
    /* Lists up to max devices into out; returns the count or a negative code. */
    int (*discover)(void *state, gp_dev_info *out, int max, gp_err *err);
    /* Optional: called once per tick before the per-device samples. */
    void (*begin_tick)(void *state, int64_t mono_ns);
    /* Samples device idx (its discover position). Sets s->valid bits for the
     * fields it measured; fills procs[0..*nproc) when procs is not NULL (*nproc
     * holds the capacity on entry). Returns 0, or GP_ENODEV when the device
     * is gone (err says why); other failures only clear validity bits. */
    int (*sample)(void *state, int idx, int64_t mono_ns, gp_dev_sample *s, gp_dev_proc *procs,
                  int *nproc, gp_err *err);
    void (*fini)(void *state);
} gp_backend;

extern const gp_backend gp_backend_nvml;
extern const gp_backend gp_backend_nvsmi;
extern const gp_backend gp_backend_sysfs;
extern const gp_backend gp_backend_host;
#ifdef GP_HAVE_OPENCL
extern const gp_backend gp_backend_ocl;
#endif

/* Sets field f of s to v and marks it valid. */
static inline void gp_sample_set(gp_dev_sample *s, int f, double v)
{
    s->v[f] = v;
    s->valid |= (uint64_t)1 << f;
}

/* Copies src into dst (size n), truncating, always NUL-terminated. */
void gp_backend_strcpy(char *dst, size_t n, const char *src);
/* Fills name (size n) from /proc/PID/comm under root ("/" normally); "?" when
 * the PID does not exist there. Returns 1 when it exists. */
int gp_backend_proc_name(const char *root, int pid, char *name, size_t n);
/* Reads a small file under root into buf (NUL-terminated, trailing newline
 * stripped); returns the length or -1. */
int gp_backend_read_file(const char *root, const char *path, char *buf, size_t n);

#endif
