/* gpuprof/monitor.h: the device monitor's public C API: devices (NVIDIA via
 * NVML or nvidia-smi, AMD/Intel via sysfs, OpenCL, the host), a sampler thread
 * with history, alerts with hysteresis, sessions with snapshots and reports,
 * inference observations, health checks and the YAML configuration. */
#ifndef GPUPROF_MONITOR_H
#define GPUPROF_MONITOR_H
#include <gpuprof/common.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Measured fields. Every sample carries a validity bit per field: a field a
 * device or driver does not report is invalid (printed N/A), never 0. */
typedef enum gp_mfield {
    GP_MF_UTIL,          /* busy %: GPU SM/graphics, host: CPU (all cores) */
    GP_MF_MEM_UTIL,      /* memory-controller busy % */
    GP_MF_MEM_TOTAL,     /* bytes (host: RAM) */
    GP_MF_MEM_USED,      /* bytes */
    GP_MF_MEM_FREE,      /* bytes */
    GP_MF_TEMP,          /* degrees C */
    GP_MF_TEMP_SLOWDOWN, /* degrees C, driver slowdown threshold */
    GP_MF_TEMP_SHUTDOWN, /* degrees C, driver shutdown threshold */
    GP_MF_POWER,         /* W */
    GP_MF_POWER_LIMIT,   /* W, enforced limit */
    GP_MF_ENERGY,        /* J since the driver was loaded */
    GP_MF_CLOCK_SM,      /* MHz */
    GP_MF_CLOCK_MEM,     /* MHz */
    GP_MF_FAN,           /* % of maximum */
    GP_MF_PSTATE,        /* performance state 0 (max) .. 15 */
    GP_MF_THROTTLE,      /* bit mask of clock-event (throttle) reasons */
    GP_MF_PCIE_TX,       /* bytes/s */
    GP_MF_PCIE_RX,       /* bytes/s */
    GP_MF_ECC_CORR,      /* corrected ECC errors since boot (volatile) */
    GP_MF_ECC_UNCORR,    /* uncorrected ECC errors since boot (volatile) */
    GP_MF_XID,           /* last XID critical error code seen */
    GP_MF_MIG,           /* MIG mode: 1 enabled, 0 disabled */
    GP_MF_LOAD1,         /* host load average, 1 min */
    GP_MF_LOAD5,         /* 5 min */
    GP_MF_LOAD15,        /* 15 min */
    GP_MF_XID_EVENTS,    /* XID critical error events seen since monitoring started */
    GP_MF_COUNT
} gp_mfield;

/* Returns the JSON/CSV key of field f (e.g. "temp_c"), or NULL. Static. */
GP_API const char *gp_mfield_key(int f);
/* Returns the unit of field f ("%", "bytes", "C", "W", "J", "MHz", ...). */
GP_API const char *gp_mfield_unit(int f);

/* Clock-event (throttle) reason bits, as NVML defines them. */
enum {
    GP_THR_GPU_IDLE = 0x1,
    GP_THR_APP_CLOCKS = 0x2,
    GP_THR_SW_POWER_CAP = 0x4,
    GP_THR_HW_SLOWDOWN = 0x8,
    GP_THR_SYNC_BOOST = 0x10,
    GP_THR_SW_THERMAL = 0x20,
    GP_THR_HW_THERMAL = 0x40,
    GP_THR_HW_POWER_BRAKE = 0x80,
    GP_THR_DISPLAY_CLOCKS = 0x100,
};
/* Writes the decoded reasons of mask as "sw_power_cap,hw_thermal" (or "none")
 * into buf; returns buf. */
GP_API const char *gp_throttle_decode(uint64_t mask, char *buf, size_t n);

/* One sample of one device. */
typedef struct gp_dev_sample {
    int64_t wall_ns; /* when taken, Unix epoch ns */
    uint64_t valid;  /* bit (1 << f) set when v[f] holds a measured value */
    double v[GP_MF_COUNT];
} gp_dev_sample;

static inline int gp_sample_has(const gp_dev_sample *s, int f)
{
    return (s->valid >> f) & 1;
}

/* A process using a device. */
typedef struct gp_dev_proc {
    int pid;
    unsigned valid;    /* GP_PROC_MEM | GP_PROC_UTIL */
    int64_t mem_bytes; /* device memory used by the process */
    double util_pct;   /* its share of the device's SM / engine time */
    char name[64];     /* from /proc/PID/comm; "?" when the PID is not visible */
} gp_dev_proc;
enum { GP_PROC_MEM = 1, GP_PROC_UTIL = 2 };

/* Static description of a device. Strings are empty when unknown. */
typedef struct gp_dev_info {
    char backend[16]; /* "nvml", "nvidia-smi", "sysfs", "opencl", "host" */
    char kind[16];    /* "gpu", "cpu", "accelerator", "host", "other" */
    char name[128], vendor[64], uuid[96], pci_bus_id[32];
    char driver_version[64], cuda_version[32], platform[128];
    int compute_units, max_clock_mhz; /* 0 when unknown */
    int present;                      /* 0 once the device was lost */
    char status[128];                 /* why it is not present, else "" */
} gp_dev_info;

/* Health of one backend. */
typedef enum gp_health_state {
    GP_HEALTH_OK = 0,
    GP_HEALTH_DEGRADED = 1,
    GP_HEALTH_UNAVAILABLE = 2
} gp_health_state;
typedef struct gp_health_entry {
    char backend[16];
    int state;   /* gp_health_state */
    int devices; /* devices this backend currently provides */
    char reason[256];
} gp_health_entry;
/* "ok", "degraded", "unavailable". */
GP_API const char *gp_health_name(int state);

/* Configuration: the YAML file's keys (see docs/monitoring.md). */
typedef struct gp_mon_config {
    double monitoring_interval_seconds;       /* sampler period, 0.01 .. 3600 */
    double metrics_update_interval_seconds;   /* live-view refresh */
    double device_discovery_interval_seconds; /* re-discovery period, 0 = never */
    int enable_gpu_monitoring, enable_opencl_monitoring, enable_host_monitoring;
    int enable_process_monitoring, enable_alerts, enable_event_log;
    int enable_snapshot_on_alert;
    double temperature_warning_threshold, temperature_critical_threshold; /* C */
    double memory_warning_threshold, memory_critical_threshold;           /* % */
    double utilization_high_threshold;                                    /* % */
    double temperature_hysteresis, memory_hysteresis, utilization_hysteresis;
    double slow_inference_ms; /* suggestion threshold for p95 latency */
    int max_snapshots, max_profiling_sessions, history_size;
    char output_dir[512];
    int export_json_reports;
    char store_path[512];   /* SQLite file that also keeps session reports; empty: none */
    char nvml_library[512]; /* empty: libnvidia-ml.so.1 then libnvidia-ml.so */
    char nvidia_smi[512];   /* empty: nvidia-smi from PATH */
    char sysfs_root[512];   /* "/" normally; a fake tree in tests */
    /* data protection (docs/security.md) */
    char audit_file[512];  /* append-only JSONL audit log; empty: only the store's table */
    int redact;            /* --redact by default on export/report/timeline/flame/memory */
    char redact_keep[512]; /* default --redact-keep list (comma-separated) */
    int share_group;       /* files 0640 / folders 0750 instead of owner-only 0600 / 0700 */
} gp_mon_config;

/* Fills c with the defaults (1 s sampling, 80/90 C, 80/95 %, 90 % util...). */
GP_API void gp_mon_config_defaults(gp_mon_config *c);
/* Reads a YAML file (libyaml; one document; flat keys, sections, or the
 * seed's `gpu_profiler:` root, see docs/monitoring.md) into c. Unknown keys,
 * duplicate keys, bad values and cross-field violations fail with GP_EPARSE
 * and "FILE:LINE:COLUMN: ..." in errbuf, leaving c unchanged. */
GP_API int gp_mon_config_load(gp_mon_config *c, const char *path, char *errbuf, size_t n);
/* Cross-field rules over a whole configuration (a warning threshold not
 * above its critical one): 0, or GP_EINVAL with the message in errbuf. */
GP_API int gp_mon_config_check(const gp_mon_config *c, char *errbuf, size_t n);
/* Sets one key from text (used for env vars and --set KEY=VALUE); 0 or
 * GP_EINVAL/GP_ENOTFOUND with the message in errbuf. */
GP_API int gp_mon_config_set(gp_mon_config *c, const char *key, const char *value, char *errbuf,
                             size_t n);
/* Applies GPUPROF_<KEY in upper case> environment variables (and the
 * aliases GPUPROF_NVML_LIB, GPUPROF_NVIDIA_SMI, GPUPROF_SYSFS_ROOT). */
GP_API int gp_mon_config_env(gp_mon_config *c, char *errbuf, size_t n);
/* Defaults, then the file named by $GPUPROF_CONFIG (when set), then the
 * environment: the configuration every command starts from. 0 or GP_E*
 * with the message in errbuf. */
GP_API int gp_mon_config_auto(gp_mon_config *c, char *errbuf, size_t n);

typedef struct gp_monitor gp_monitor;

/* Creates a monitor: initialises every enabled backend (none being usable is
 * an ordinary state, see gp_monitor_health) and discovers devices. Returns
 * NULL only when out of memory. Destroy with gp_monitor_destroy. */
GP_API gp_monitor *gp_monitor_create(const gp_mon_config *c);
/* Stops the sampler, ends open sessions (writing their reports) and frees. */
GP_API void gp_monitor_destroy(gp_monitor *m);
/* Starts the sampler thread (the seed's start()); GP_ESTATE when running. */
GP_API int gp_monitor_start(gp_monitor *m);
/* Stops and joins the sampler thread (the seed's stop()); 0 when not running. */
GP_API int gp_monitor_stop(gp_monitor *m);
/* Takes one sample of every device now (what the sampler does per tick). */
GP_API int gp_monitor_sample_now(gp_monitor *m);
/* Asks every backend for its devices again; lost ones that came back are
 * present again, new ones are appended. Returns the device count. */
GP_API int gp_monitor_rediscover(gp_monitor *m);

GP_API size_t gp_monitor_device_count(gp_monitor *m);
/* Copies device i's description; GP_ENOTFOUND when out of range. */
GP_API int gp_monitor_device_info(gp_monitor *m, size_t i, gp_dev_info *out);
/* Copies device i's latest sample (the seed's get_gpu_status); GP_ENODEV
 * when none has been taken yet. */
GP_API int gp_monitor_get_status(gp_monitor *m, size_t i, gp_dev_sample *out);
/* Copies up to max samples of device i's history, oldest first; returns how
 * many were copied. */
GP_API size_t gp_monitor_history(gp_monitor *m, size_t i, gp_dev_sample *out, size_t max);
/* Copies up to max processes of device i's latest sample; returns the count. */
GP_API size_t gp_monitor_processes(gp_monitor *m, size_t i, gp_dev_proc *out, size_t max);
/* Number of ticks taken so far. */
GP_API uint64_t gp_monitor_ticks(gp_monitor *m);
/* A number that changes whenever something the monitor shows changed (a
 * tick, a discovery, a session started, an inference tracked): readers that
 * cache what they render compare it. */
GP_API uint64_t gp_monitor_generation(gp_monitor *m);
/* Present GPUs: devices of kind "gpu" from a GPU backend (OpenCL views of
 * the same hardware are not counted). */
GP_API size_t gp_monitor_gpu_count(gp_monitor *m);
/* Opens OUTPUT_DIR/events.jsonl now when enable_event_log is set (as
 * gp_monitor_start does); returns 1 when the log is open. */
GP_API int gp_monitor_open_event_log(gp_monitor *m);

/* Fills out[0..max) with one entry per backend; returns the overall state:
 * ok when every backend that found hardware is ok, degraded when one
 * works in a reduced way (fallback, lost device), unavailable when no GPU
 * backend works. *n receives the number of entries. */
GP_API int gp_monitor_health(gp_monitor *m, gp_health_entry *out, size_t max, size_t *n);

/* Alerts and events. */
typedef enum gp_alert_kind {
    GP_ALERT_TEMPERATURE,
    GP_ALERT_MEMORY,
    GP_ALERT_UTILIZATION,
    GP_ALERT_DEVICE_LOST, /* also raised by XID 79 (the GPU fell off the bus) */
    GP_ALERT_XID,         /* any other new XID error code reported by the driver */
    GP_ALERT__COUNT
} gp_alert_kind;
typedef enum gp_event_type {
    GP_EV_ALERT,            /* an alert was raised (or escalated) */
    GP_EV_ALERT_CLEARED,    /* the value went back below threshold - hysteresis */
    GP_EV_PROFILER_STARTED, /* sampler started */
    GP_EV_PROFILER_STOPPED,
    GP_EV_DATA_GENERATED, /* a session report was written */
    GP_EV_SESSION_STARTED,
    GP_EV_SESSION_STOPPED,
} gp_event_type;
typedef struct gp_event {
    int64_t wall_ns;
    int type;   /* gp_event_type */
    int kind;   /* gp_alert_kind, alerts only */
    int level;  /* 1 warning, 2 critical (alerts); 0 otherwise */
    int device; /* device index or -1 */
    double value, threshold;
    char message[256];
} gp_event;
typedef void (*gp_event_cb)(const gp_event *ev, void *user);
/* Registers a callback for every event (called on the sampler thread, with
 * the monitor locked: do not call back into the monitor). Up to 16. */
GP_API int gp_monitor_on_event(gp_monitor *m, gp_event_cb cb, void *user);
/* Alerts raised so far of one kind (escalations count again). */
GP_API uint64_t gp_monitor_alert_count(gp_monitor *m, int kind);
/* "temperature", "memory", "utilization", "device_lost". */
GP_API const char *gp_alert_kind_name(int kind);
/* "warning" (1), "critical" (2), "none" otherwise. */
GP_API const char *gp_alert_level_name(int level);
/* "alert", "alert_cleared", "profiler_started", ... */
GP_API const char *gp_event_type_name(int type);

/* Sessions (the seed's start_profiling_session / get_profiling_sessions). */
typedef struct gp_session_info {
    char name[64];
    char description[256];
    int64_t start_wall_ns, stop_wall_ns; /* stop 0 while active */
    int active;
    size_t snapshots;
    uint64_t inferences;
    char report_path[512]; /* set once a report was written */
} gp_session_info;

/* Starts a named session; GP_EINVAL on a bad name (letters, digits, '.',
 * '_', '-'), GP_ESTATE when one of that name is active. The oldest finished
 * sessions beyond max_profiling_sessions are dropped. */
GP_API int gp_monitor_session_start(gp_monitor *m, const char *name, const char *description);
/* Stops it and, with export_json_reports, writes OUTPUT_DIR/NAME.json. */
GP_API int gp_monitor_session_stop(gp_monitor *m, const char *name);
/* Stores the latest samples of every device in session name (NULL: every
 * active session) with a reason; the oldest beyond max_snapshots go. */
GP_API int gp_monitor_snapshot(gp_monitor *m, const char *name, const char *reason);
/* Records one inference latency in milliseconds (NULL: every active one). */
GP_API int gp_monitor_track_inference(gp_monitor *m, const char *name, double ms);

/* The Prometheus text exposition of this monitor (format 0.0.4, every
 * family of docs/fleet.md): the same text `gpuprof monitor --prometheus`
 * serves, rendered from the sampler's latest sample, so that a program that
 * embeds the monitor exports what only it knows: the gpu_inference_time_ms
 * histogram of gp_monitor_track_inference and gpu_profiling_sessions_total
 * of gp_monitor_session_start. GP_METRICS_DCGM adds the dcgm-exporter names
 * and labels. gp_monitor_metrics returns a malloc'd NUL-terminated string
 * (free it), NULL when out of memory; serve it from the program's own
 * /metrics. gp_monitor_write_metrics writes it atomically to path (a
 * temporary file in the same folder, fsync, rename: node-exporter's
 * textfile collector), 0 or GP_E* with the message in errbuf. */
#define GP_METRICS_DCGM 0x1u
GP_API char *gp_monitor_metrics(gp_monitor *m, unsigned flags);
GP_API int gp_monitor_write_metrics(gp_monitor *m, const char *path, unsigned flags, char *errbuf,
                                    size_t n);
/* Copies up to max sessions, oldest first; returns how many exist. */
GP_API size_t gp_monitor_sessions(gp_monitor *m, gp_session_info *out, size_t max);
/* Returns the JSON report of session name in a malloc'd string (caller
 * frees) or NULL when there is no such session. */
GP_API char *gp_monitor_session_report(gp_monitor *m, const char *name);

#ifdef __cplusplus
}
#endif
#endif
