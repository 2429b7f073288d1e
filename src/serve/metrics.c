/* serve/metrics.c: the Prometheus exposition of the device monitor: gpuprof_*
 * families in base units, the seed's eight gpu_* metrics, optionally the
 * dcgm-exporter names, and a per-generation cache of the rendered text. */
#include "core/afile.h"
#include "serve/metrics.h"
#include "monitor/alerts.h"
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

/* ---- formatting ------------------------------------------------------- */

/* Appends the decimal digits of u. */
static void put_u64(gp_sbuf *b, unsigned long long u, int min_digits)
{
    char t[24], *p = t + sizeof t;
    do {
        *--p = (char)('0' + u % 10);
        u /= 10;
    } while (u || t + sizeof t - p < min_digits);
    gp_sbuf_add(b, p, (size_t)(t + sizeof t - p));
}

/* Appends a sample value in the shortest decimal that reads back as the
 * same double: integers and values with up to 9 decimals without printf
 * (r / 10^d == v proves that the decimal r * 10^-d rounds to v), others in
 * 15 or 17 significant digits. */
static void put_num(gp_sbuf *b, double v)
{
    static const double p10[] = {1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9};
    if (isnan(v)) {
        gp_sbuf_puts(b, "NaN");
        return;
    }
    if (isinf(v)) {
        gp_sbuf_puts(b, v > 0 ? "+Inf" : "-Inf");
        return;
    }
    if (fabs(v) < 1e6) {
        for (int d = 0; d <= 9; d++) {
            double r = nearbyint(v * p10[d]);
            if (r / p10[d] != v) continue;
            if (r < 0) gp_sbuf_putc(b, '-');
            unsigned long long u = (unsigned long long)fabs(r), q = (unsigned long long)p10[d];
            put_u64(b, u / q, 1);
            if (d) {
                gp_sbuf_putc(b, '.');
                put_u64(b, u % q, d);
            }
            return;
        }
    } else if (v == floor(v) && fabs(v) < 9e15) {
        if (v < 0) gp_sbuf_putc(b, '-');
        put_u64(b, (unsigned long long)fabs(v), 1);
        return;
    }
    char t[40];
    int n = snprintf(t, sizeof t, "%.15g", v);
    if (strtod(t, NULL) != v) n = snprintf(t, sizeof t, "%.17g", v);
    gp_sbuf_add(b, t, (size_t)n);
}

/* Length of the valid UTF-8 sequence at s (1..4), 0 when invalid. */
static size_t utf8_len(const unsigned char *s)
{
    size_t n = s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc2 ? 2 : 0;
    if (s[0] < 0x80) return 1;
    for (size_t i = 1; i < n; i++)
        if ((s[i] & 0xc0) != 0x80) return 0;
    return n;
}

/* Appends `name="value"` with the value escaped as the text format asks
 * (backslash, double quote, newline); other control bytes and invalid
 * UTF-8 become '?', since names come from devices and /proc. */
static void put_label(gp_sbuf *b, int comma, const char *name, const char *v)
{
    if (comma) gp_sbuf_putc(b, ',');
    gp_sbuf_puts(b, name);
    gp_sbuf_puts(b, "=\"");
    for (const unsigned char *p = (const unsigned char *)v; *p;) {
        const unsigned char *q = p; /* a run of printable ASCII goes in one copy */
        while (*q >= 0x20 && *q < 0x7f && *q != '\\' && *q != '"') q++;
        if (q > p) {
            gp_sbuf_add(b, (const char *)p, (size_t)(q - p));
            p = q;
            continue;
        }
        if (*p == '\\' || *p == '"') {
            gp_sbuf_putc(b, '\\');
            gp_sbuf_putc(b, (char)*p++);
        } else if (*p == '\n') {
            gp_sbuf_puts(b, "\\n");
            p++;
        } else if (*p < 0x20 || *p == 0x7f) {
            gp_sbuf_putc(b, '?');
            p++;
        } else {
            size_t k = utf8_len(p);
            if (!k) {
                gp_sbuf_putc(b, '?');
                p++;
            } else {
                gp_sbuf_add(b, (const char *)p, k);
                p += k;
            }
        }
    }
    gp_sbuf_putc(b, '"');
}

static void family(gp_sbuf *b, const char *name, const char *type, const char *help)
{
    gp_sbuf_puts(b, "# HELP ");
    gp_sbuf_puts(b, name);
    gp_sbuf_putc(b, ' ');
    gp_sbuf_puts(b, help);
    gp_sbuf_puts(b, "\n# TYPE ");
    gp_sbuf_puts(b, name);
    gp_sbuf_putc(b, ' ');
    gp_sbuf_puts(b, type);
    gp_sbuf_putc(b, '\n');
}

/* `name{labels} value\n`; labels is a pre-rendered `a="x",b="y"` or "". */
static void series(gp_sbuf *b, const char *name, const char *labels, double v)
{
    gp_sbuf_puts(b, name);
    if (labels && *labels) {
        gp_sbuf_putc(b, '{');
        gp_sbuf_puts(b, labels);
        gp_sbuf_putc(b, '}');
    }
    gp_sbuf_putc(b, ' ');
    put_num(b, v);
    gp_sbuf_putc(b, '\n');
}

/* ---- what is exposed ---------------------------------------------------- */

/* Per-device families in base units. */
typedef struct dev_fam {
    int f;
    const char *name, *type;
    double mul, div; /* exposed value = sample * mul / div (division keeps 95 % = 0.95 exact) */
    const char *help;
} dev_fam;

static const dev_fam gp_fams[] = {
    {GP_MF_UTIL, "gpuprof_gpu_utilization_ratio", "gauge", 1, 100,
     "Share of time the GPU (SM/graphics engine) was busy, 0..1."},
    {GP_MF_MEM_UTIL, "gpuprof_gpu_memory_utilization_ratio", "gauge", 1, 100,
     "Share of time the memory controller was busy, 0..1."},
    {GP_MF_MEM_TOTAL, "gpuprof_gpu_memory_total_bytes", "gauge", 1, 1, "Device memory total."},
    {GP_MF_MEM_USED, "gpuprof_gpu_memory_used_bytes", "gauge", 1, 1, "Device memory in use."},
    {GP_MF_MEM_FREE, "gpuprof_gpu_memory_free_bytes", "gauge", 1, 1, "Device memory free."},
    {GP_MF_TEMP, "gpuprof_gpu_temperature_celsius", "gauge", 1, 1, "GPU temperature."},
    {GP_MF_TEMP_SLOWDOWN, "gpuprof_gpu_slowdown_temperature_celsius", "gauge", 1, 1,
     "Temperature at which the driver slows the clocks down."},
    {GP_MF_TEMP_SHUTDOWN, "gpuprof_gpu_shutdown_temperature_celsius", "gauge", 1, 1,
     "Temperature at which the GPU shuts down."},
    {GP_MF_POWER, "gpuprof_gpu_power_watts", "gauge", 1, 1, "Power draw."},
    {GP_MF_POWER_LIMIT, "gpuprof_gpu_power_limit_watts", "gauge", 1, 1, "Enforced power limit."},
    {GP_MF_ENERGY, "gpuprof_gpu_energy_joules_total", "counter", 1, 1,
     "Energy consumed since the driver was loaded."},
    {GP_MF_CLOCK_SM, "gpuprof_gpu_sm_clock_hertz", "gauge", 1e6, 1, "SM (graphics) clock."},
    {GP_MF_CLOCK_MEM, "gpuprof_gpu_memory_clock_hertz", "gauge", 1e6, 1, "Memory clock."},
    {GP_MF_FAN, "gpuprof_gpu_fan_speed_ratio", "gauge", 1, 100, "Fan speed, share of maximum."},
    {GP_MF_PSTATE, "gpuprof_gpu_performance_state", "gauge", 1, 1,
     "Performance state (0 = maximum performance .. 15)."},
    {GP_MF_THROTTLE, "gpuprof_gpu_clock_throttle_reasons", "gauge", 1, 1,
     "Bit mask of active clock-event (throttle) reasons, as NVML defines them."},
    {GP_MF_PCIE_TX, "gpuprof_gpu_pcie_transmit_bytes_per_second", "gauge", 1, 1,
     "PCIe transmit throughput."},
    {GP_MF_PCIE_RX, "gpuprof_gpu_pcie_receive_bytes_per_second", "gauge", 1, 1,
     "PCIe receive throughput."},
    {GP_MF_ECC_CORR, "gpuprof_gpu_ecc_corrected_errors_total", "counter", 1, 1,
     "Corrected ECC errors since boot (volatile)."},
    {GP_MF_ECC_UNCORR, "gpuprof_gpu_ecc_uncorrected_errors_total", "counter", 1, 1,
     "Uncorrected ECC errors since boot (volatile)."},
    {GP_MF_XID, "gpuprof_gpu_last_xid", "gauge", 1, 1, "Code of the last XID critical error."},
    {GP_MF_XID_EVENTS, "gpuprof_gpu_xid_errors_total", "counter", 1, 1,
     "XID critical error events seen since monitoring started."},
    {GP_MF_MIG, "gpuprof_gpu_mig_enabled", "gauge", 1, 1, "MIG mode: 1 enabled, 0 disabled."},
};

/* dcgm-exporter's names, units and types for the fields that map. */
static const dev_fam dcgm_fams[] = {
    {GP_MF_UTIL, "DCGM_FI_DEV_GPU_UTIL", "gauge", 1, 1, "GPU utilization (in %)."},
    {GP_MF_MEM_UTIL, "DCGM_FI_DEV_MEM_COPY_UTIL", "gauge", 1, 1, "Memory utilization (in %)."},
    {GP_MF_MEM_TOTAL, "DCGM_FI_DEV_FB_TOTAL", "gauge", 1, 1048576,
     "Framebuffer memory total (in MiB)."},
    {GP_MF_MEM_USED, "DCGM_FI_DEV_FB_USED", "gauge", 1, 1048576,
     "Framebuffer memory used (in MiB)."},
    {GP_MF_MEM_FREE, "DCGM_FI_DEV_FB_FREE", "gauge", 1, 1048576,
     "Framebuffer memory free (in MiB)."},
    {GP_MF_TEMP, "DCGM_FI_DEV_GPU_TEMP", "gauge", 1, 1, "GPU temperature (in C)."},
    {GP_MF_TEMP_SLOWDOWN, "DCGM_FI_DEV_SLOWDOWN_TEMP", "gauge", 1, 1,
     "Slowdown temperature (in C)."},
    {GP_MF_TEMP_SHUTDOWN, "DCGM_FI_DEV_SHUTDOWN_TEMP", "gauge", 1, 1,
     "Shutdown temperature (in C)."},
    {GP_MF_POWER, "DCGM_FI_DEV_POWER_USAGE", "gauge", 1, 1, "Power draw (in W)."},
    {GP_MF_POWER_LIMIT, "DCGM_FI_DEV_POWER_MGMT_LIMIT", "gauge", 1, 1, "Power limit (in W)."},
    {GP_MF_ENERGY, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "counter", 1000, 1,
     "Total energy consumption since boot (in mJ)."},
    {GP_MF_CLOCK_SM, "DCGM_FI_DEV_SM_CLOCK", "gauge", 1, 1, "SM clock frequency (in MHz)."},
    {GP_MF_CLOCK_MEM, "DCGM_FI_DEV_MEM_CLOCK", "gauge", 1, 1, "Memory clock frequency (in MHz)."},
    {GP_MF_FAN, "DCGM_FI_DEV_FAN_SPEED", "gauge", 1, 1, "Fan speed (in %)."},
    {GP_MF_PSTATE, "DCGM_FI_DEV_PSTATE", "gauge", 1, 1, "Performance state."},
    {GP_MF_THROTTLE, "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", "gauge", 1, 1,
     "Throttling reasons bit mask."},
    {GP_MF_PCIE_TX, "DCGM_FI_DEV_PCIE_TX_THROUGHPUT", "gauge", 1, 1024,
     "PCIe transmit throughput (in KB/s)."},
    {GP_MF_PCIE_RX, "DCGM_FI_DEV_PCIE_RX_THROUGHPUT", "gauge", 1, 1024,
     "PCIe receive throughput (in KB/s)."},
    {GP_MF_ECC_CORR, "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", "counter", 1, 1,
     "Total number of single-bit volatile ECC errors."},
    {GP_MF_ECC_UNCORR, "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "counter", 1, 1,
     "Total number of double-bit volatile ECC errors."},
    {GP_MF_XID, "DCGM_FI_DEV_XID_ERRORS", "gauge", 1, 1,
     "Value of the last XID error encountered."},
    {GP_MF_MIG, "DCGM_FI_DEV_MIG_MODE", "gauge", 1, 1, "MIG mode (1 enabled)."},
};

static const struct {
    uint64_t bit;
    const char *name;
} thr_reasons[] = {{GP_THR_GPU_IDLE, "gpu_idle"},
                   {GP_THR_APP_CLOCKS, "app_clocks"},
                   {GP_THR_SW_POWER_CAP, "sw_power_cap"},
                   {GP_THR_HW_SLOWDOWN, "hw_slowdown"},
                   {GP_THR_SYNC_BOOST, "sync_boost"},
                   {GP_THR_SW_THERMAL, "sw_thermal"},
                   {GP_THR_HW_THERMAL, "hw_thermal"},
                   {GP_THR_HW_POWER_BRAKE, "hw_power_brake"},
                   {GP_THR_DISPLAY_CLOCKS, "display_clocks"}};

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* Devices the gpuprof_gpu_* families cover: GPUs and accelerators of any
 * backend (an OpenCL CPU device and the host are not GPUs). */
static int is_dev(const gp_dev_info *d)
{
    return strcmp(d->backend, "host") &&
           (!strcmp(d->kind, "gpu") || !strcmp(d->kind, "accelerator"));
}
/* Devices the seed's aggregates and gpu_device_count cover: present GPUs
 * of a GPU backend (gp_monitor_gpu_count's rule). */
static int is_gpu(const gp_dev_info *d)
{
    return d->present && !strcmp(d->kind, "gpu") && strcmp(d->backend, "opencl");
}
/* Devices dcgm-exporter would list: NVIDIA GPUs. */
static int is_nvidia(const gp_dev_info *d)
{
    return !strcmp(d->backend, "nvml") || !strcmp(d->backend, "nvidia-smi");
}

static void dev_labels(gp_sbuf *b, size_t i, const gp_dev_info *d, const char *host)
{
    char idx[24];
    snprintf(idx, sizeof idx, "%zu", i);
    put_label(b, 0, "gpu", idx);
    put_label(b, 1, "uuid", d->uuid);
    put_label(b, 1, "model", d->name);
    put_label(b, 1, "hostname", host);
    put_label(b, 1, "backend", d->backend);
}

static void dcgm_labels(gp_sbuf *b, size_t i, const gp_dev_info *d, const char *host)
{
    char idx[24], dev[32];
    snprintf(idx, sizeof idx, "%zu", i);
    snprintf(dev, sizeof dev, "nvidia%zu", i);
    put_label(b, 0, "gpu", idx);
    put_label(b, 1, "UUID", d->uuid);
    put_label(b, 1, "device", dev);
    put_label(b, 1, "modelName", d->name);
    put_label(b, 1, "Hostname", host);
    put_label(b, 1, "DCGM_FI_DRIVER_VERSION", d->driver_version);
}

/* Labels of every device, pre-rendered once per exposition. */
typedef struct labelset {
    gp_sbuf all;  /* NUL-separated */
    size_t *off;  /* per device: offset in all */
    size_t *doff; /* per device: dcgm labels */
} labelset;

static void device_fams(gp_sbuf *b, const gp_mon_view *v, const labelset *ls, const dev_fam *fams,
                        size_t nf, int dcgm)
{
    for (size_t k = 0; k < nf; k++) {
        const dev_fam *fm = &fams[k];
        int any = 0;
        for (size_t i = 0; i < v->ndev; i++) {
            const gp_dev_info *d = &v->info[i];
            if (!is_dev(d) || (dcgm && !is_nvidia(d)) || !v->have[i] || !d->present ||
                !gp_sample_has(&v->sample[i], fm->f))
                continue;
            if (!any) family(b, fm->name, fm->type, fm->help);
            any = 1;
            series(b, fm->name, ls->all.s + (dcgm ? ls->doff[i] : ls->off[i]),
                   v->sample[i].v[fm->f] * fm->mul / fm->div);
        }
        if (!any) family(b, fm->name, fm->type, fm->help); /* HELP/TYPE even when empty */
    }
}

/* Appends a series with the device's labels plus extra ones. */
static void dev_series_x(gp_sbuf *b, const char *name, const char *labels, const char *k1,
                         const char *v1, const char *k2, const char *v2, double val)
{
    gp_sbuf_puts(b, name);
    gp_sbuf_putc(b, '{');
    gp_sbuf_puts(b, labels);
    if (k1) put_label(b, 1, k1, v1);
    if (k2) put_label(b, 1, k2, v2);
    gp_sbuf_puts(b, "} ");
    put_num(b, val);
    gp_sbuf_putc(b, '\n');
}

static void seed_metrics(gp_sbuf *b, const gp_mon_view *v)
{
    double mem_total = 0, mem_used = 0, util = 0, tmax = -INFINITY;
    int n_total = 0, n_used = 0, n_util = 0, n_temp = 0;
    for (size_t i = 0; i < v->ndev; i++) {
        const gp_dev_info *d = &v->info[i];
        const gp_dev_sample *s = &v->sample[i];
        if (!is_gpu(d) || !v->have[i]) continue;
        if (gp_sample_has(s, GP_MF_MEM_TOTAL)) mem_total += s->v[GP_MF_MEM_TOTAL], n_total++;
        if (gp_sample_has(s, GP_MF_MEM_USED)) mem_used += s->v[GP_MF_MEM_USED], n_used++;
        if (gp_sample_has(s, GP_MF_UTIL)) util += s->v[GP_MF_UTIL], n_util++;
        if (gp_sample_has(s, GP_MF_TEMP) && s->v[GP_MF_TEMP] > tmax) tmax = s->v[GP_MF_TEMP];
        n_temp += gp_sample_has(s, GP_MF_TEMP);
    }
    family(b, "gpu_device_count", "gauge", "Number of GPUs present.");
    series(b, "gpu_device_count", "", (double)v->gpus);
    family(b, "gpu_total_memory_mb", "gauge", "Memory of all GPUs together (in MiB).");
    if (n_total) series(b, "gpu_total_memory_mb", "", mem_total / 1048576.0);
    family(b, "gpu_total_memory_used_mb", "gauge", "Memory used on all GPUs together (in MiB).");
    if (n_used) series(b, "gpu_total_memory_used_mb", "", mem_used / 1048576.0);
    family(b, "gpu_average_utilization_percent", "gauge",
           "Mean utilization of the GPUs that report it (in %).");
    if (n_util) series(b, "gpu_average_utilization_percent", "", util / n_util);
    family(b, "gpu_max_temperature_celsius", "gauge", "Highest GPU temperature.");
    if (n_temp) series(b, "gpu_max_temperature_celsius", "", tmax);
    family(b, "gpu_inference_time_ms", "histogram",
           "Inference latencies recorded with gp_monitor_track_inference (in ms).");
    uint64_t cum = 0;
    char le[48];
    for (size_t j = 0; j < v->nedges; j++) {
        cum += v->inf_hist[j];
        gp_sbuf_puts(b, "gpu_inference_time_ms_bucket{le=\"");
        snprintf(le, sizeof le, "%g", v->edges[j]);
        gp_sbuf_puts(b, le);
        gp_sbuf_puts(b, "\"} ");
        put_num(b, (double)cum);
        gp_sbuf_putc(b, '\n');
    }
    series(b, "gpu_inference_time_ms_bucket{le=\"+Inf\"}", "", (double)v->inf_count);
    series(b, "gpu_inference_time_ms_sum", "", v->inf_sum_ms);
    series(b, "gpu_inference_time_ms_count", "", (double)v->inf_count);
    family(b, "gpu_thermal_alerts_total", "counter",
           "Temperature alerts raised (and escalations).");
    series(b, "gpu_thermal_alerts_total", "", (double)v->alerts[GP_ALERT_TEMPERATURE][0]);
    family(b, "gpu_profiling_sessions_total", "counter", "Monitoring sessions started.");
    series(b, "gpu_profiling_sessions_total", "", (double)v->sessions_started);
}

static void alert_metrics(gp_sbuf *b, const gp_mon_view *v, const labelset *ls, const char *host)
{
    family(b, "gpuprof_alerts_total", "counter",
           "Alerts raised, by kind and by the level raised to (an escalation counts again).");
    for (int k = 0; k < GP_ALERT__COUNT; k++)
        for (int l = 1; l <= 2; l++) {
            if (k == GP_ALERT_UTILIZATION && l == 2) continue; /* one level only */
            if (k == GP_ALERT_DEVICE_LOST && l == 1) continue; /* always critical */
            gp_sbuf_puts(b, "gpuprof_alerts_total{");
            put_label(b, 0, "kind", gp_alert_kind_name(k));
            put_label(b, 1, "level", gp_alert_level_name(l));
            put_label(b, 1, "hostname", host);
            gp_sbuf_puts(b, "} ");
            put_num(b, (double)v->alerts[k][l]);
            gp_sbuf_putc(b, '\n');
        }
    family(b, "gpuprof_alert_level", "gauge",
           "Active alert level per device and kind: 0 none, 1 warning, 2 critical.");
    for (size_t i = 0; i < v->ndev; i++) {
        if (!is_dev(&v->info[i])) continue;
        for (int k = 0; k < GP_ALERT__COUNT; k++)
            dev_series_x(b, "gpuprof_alert_level", ls->all.s + ls->off[i], "kind",
                         gp_alert_kind_name(k), NULL, NULL, v->level[i * GP_ALERT__COUNT + k]);
    }
}

static void device_extra(gp_sbuf *b, const gp_mon_view *v, const labelset *ls)
{
    family(b, "gpuprof_gpu_info", "gauge", "Device identity (value 1).");
    for (size_t i = 0; i < v->ndev; i++)
        if (is_dev(&v->info[i]))
            dev_series_x(b, "gpuprof_gpu_info", ls->all.s + ls->off[i], "driver_version",
                         v->info[i].driver_version, "pci_bus_id", v->info[i].pci_bus_id, 1);
    family(b, "gpuprof_gpu_present", "gauge", "1 while the device answers, 0 once it was lost.");
    for (size_t i = 0; i < v->ndev; i++)
        if (is_dev(&v->info[i]))
            series(b, "gpuprof_gpu_present", ls->all.s + ls->off[i], v->info[i].present ? 1 : 0);
    family(b, "gpuprof_gpu_clock_throttled", "gauge",
           "1 while the clock-event (throttle) reason is active, else 0.");
    for (size_t i = 0; i < v->ndev; i++) {
        const gp_dev_sample *s = &v->sample[i];
        if (!is_dev(&v->info[i]) || !v->have[i] || !v->info[i].present ||
            !gp_sample_has(s, GP_MF_THROTTLE))
            continue;
        uint64_t mask = (uint64_t)s->v[GP_MF_THROTTLE];
        for (size_t r = 0; r < NELEM(thr_reasons); r++)
            dev_series_x(b, "gpuprof_gpu_clock_throttled", ls->all.s + ls->off[i], "reason",
                         thr_reasons[r].name, NULL, NULL, (mask & thr_reasons[r].bit) ? 1 : 0);
    }
    static const char *const pf[2] = {"gpuprof_gpu_process_memory_used_bytes",
                                      "gpuprof_gpu_process_utilization_ratio"};
    static const char *const ph[2] = {"Device memory used by a process.",
                                      "Share of the device's SM time used by a process, 0..1."};
    for (int w = 0; w < 2; w++) {
        family(b, pf[w], "gauge", ph[w]);
        for (size_t i = 0; i < v->ndev; i++) {
            if (!is_dev(&v->info[i]) || !v->have[i] || !v->info[i].present) continue;
            for (int k = 0; k < v->nprocs[i]; k++) {
                const gp_dev_proc *p = &v->procs[i * GP_MAX_PROCS + (size_t)k];
                if (!(p->valid & (w ? GP_PROC_UTIL : GP_PROC_MEM))) continue;
                char pid[24];
                snprintf(pid, sizeof pid, "%d", p->pid);
                dev_series_x(b, pf[w], ls->all.s + ls->off[i], "pid", pid, "process", p->name,
                             w ? p->util_pct / 100.0 : (double)p->mem_bytes);
            }
        }
    }
}

static void monitor_meta(gp_sbuf *b, const gp_mon_view *v, const char *host)
{
    family(b, "gpuprof_backend_health", "gauge",
           "Device backend state: 0 ok, 1 degraded, 2 unavailable.");
    gp_sbuf lb = {0};
    for (size_t i = 0; i < v->nhealth; i++) {
        gp_sbuf_reset(&lb);
        put_label(&lb, 0, "backend", v->health[i].backend);
        put_label(&lb, 1, "hostname", host);
        series(b, "gpuprof_backend_health", gp_sbuf_cstr(&lb), v->health[i].state);
    }
    family(b, "gpuprof_backend_devices", "gauge", "Devices a backend currently provides.");
    for (size_t i = 0; i < v->nhealth; i++) {
        gp_sbuf_reset(&lb);
        put_label(&lb, 0, "backend", v->health[i].backend);
        put_label(&lb, 1, "hostname", host);
        series(b, "gpuprof_backend_devices", gp_sbuf_cstr(&lb), v->health[i].devices);
    }
    gp_sbuf_free(&lb);
    family(b, "gpuprof_monitor_ticks_total", "counter", "Sampler ticks taken.");
    series(b, "gpuprof_monitor_ticks_total", "", (double)v->ticks);
    family(b, "gpuprof_monitor_last_sample_timestamp_seconds", "gauge",
           "Unix time of the newest tick.");
    if (v->last_tick_wall_ns)
        series(b, "gpuprof_monitor_last_sample_timestamp_seconds", "",
               (double)v->last_tick_wall_ns / 1e9);
}

void gp_metrics_render(const gp_mon_view *v, const gp_metrics_opts *o, gp_sbuf *b)
{
    char host[256];
    if (o->hostname[0])
        snprintf(host, sizeof host, "%s", o->hostname);
    else if (gethostname(host, sizeof host - 1) != 0)
        host[0] = 0;
    host[sizeof host - 1] = 0;
    labelset ls = {{0}, NULL, NULL};
    size_t nd = v->ndev ? v->ndev : 1;
    ls.off = gp_xcalloc(nd, sizeof *ls.off);
    ls.doff = gp_xcalloc(nd, sizeof *ls.doff);
    for (size_t i = 0; i < v->ndev; i++) {
        ls.off[i] = ls.all.n;
        dev_labels(&ls.all, i, &v->info[i], host);
        gp_sbuf_putc(&ls.all, 0);
        ls.doff[i] = ls.all.n;
        if (o->dcgm) dcgm_labels(&ls.all, i, &v->info[i], host);
        gp_sbuf_putc(&ls.all, 0);
    }
    seed_metrics(b, v);
    if (v->ndev) {
        device_fams(b, v, &ls, gp_fams, NELEM(gp_fams), 0);
        device_extra(b, v, &ls);
        alert_metrics(b, v, &ls, host);
        if (o->dcgm) device_fams(b, v, &ls, dcgm_fams, NELEM(dcgm_fams), 1);
    }
    monitor_meta(b, v, host);
    gp_sbuf_free(&ls.all);
    free(ls.off);
    free(ls.doff);
}

/* ---- cache ---------------------------------------------------------------- */

typedef struct text_rc {
    gp_metrics_text pub; /* first: the pointer handed out is this */
    atomic_long refs;
} text_rc;

struct gp_metrics {
    gp_monitor *mon;
    gp_metrics_opts opts;
    pthread_mutex_t mu;
    gp_mon_view view;
    text_rc *cur;
    gp_sbuf scratch;
    uint64_t renders;
};

gp_metrics *gp_metrics_create(gp_monitor *m, const gp_metrics_opts *o)
{
    gp_metrics *x = calloc(1, sizeof *x);
    if (!x) return NULL;
    x->mon = m;
    if (o) x->opts = *o;
    if (!x->opts.hostname[0] && gethostname(x->opts.hostname, sizeof x->opts.hostname - 1))
        x->opts.hostname[0] = 0;
    pthread_mutex_init(&x->mu, NULL);
    return x;
}

void gp_metrics_release(gp_metrics_text *t)
{
    if (!t) return;
    text_rc *r = (text_rc *)t;
    if (atomic_fetch_sub(&r->refs, 1) == 1) {
        free(r->pub.data);
        free(r->pub.gz);
        free(r);
    }
}

void gp_metrics_destroy(gp_metrics *x)
{
    if (!x) return;
    if (x->cur) gp_metrics_release(&x->cur->pub);
    gp_mon_view_free(&x->view);
    gp_sbuf_free(&x->scratch);
    pthread_mutex_destroy(&x->mu);
    free(x);
}

gp_metrics_text *gp_metrics_acquire(gp_metrics *x)
{
    pthread_mutex_lock(&x->mu);
    int rc = gp_monitor_view(x->mon, &x->view);
    if (rc < 0) {
        pthread_mutex_unlock(&x->mu);
        return NULL;
    }
    if (rc == 0 || !x->cur) {
        gp_sbuf_reset(&x->scratch);
        gp_metrics_render(&x->view, &x->opts, &x->scratch);
        text_rc *t = calloc(1, sizeof *t);
        char *data = malloc(x->scratch.n + 1);
        if (!t || !data) {
            free(t);
            free(data);
            pthread_mutex_unlock(&x->mu);
            return NULL;
        }
        memcpy(data, x->scratch.s, x->scratch.n);
        data[x->scratch.n] = 0;
        t->pub.data = data;
        t->pub.len = x->scratch.n;
        atomic_init(&t->refs, 1); /* the cache's own reference */
        if (x->cur) gp_metrics_release(&x->cur->pub);
        x->cur = t;
        x->renders++;
    }
    atomic_fetch_add(&x->cur->refs, 1);
    gp_metrics_text *out = &x->cur->pub;
    pthread_mutex_unlock(&x->mu);
    return out;
}

/* gzip (RFC 1952) of t->data into t->gz; leaves gz NULL on failure. */
static void compress_text(gp_metrics_text *t)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) return;
    uLong cap = deflateBound(&z, (uLong)t->len);
    char *out = malloc(cap);
    if (out) {
        z.next_in = (Bytef *)t->data;
        z.avail_in = (uInt)t->len;
        z.next_out = (Bytef *)out;
        z.avail_out = (uInt)cap;
        if (deflate(&z, Z_FINISH) == Z_STREAM_END) {
            t->gz = out;
            t->gz_len = z.total_out;
        } else
            free(out);
    }
    deflateEnd(&z);
}

gp_metrics_text *gp_metrics_acquire_gzip(gp_metrics *x)
{
    gp_metrics_text *t = gp_metrics_acquire(x);
    if (!t) return NULL;
    pthread_mutex_lock(&x->mu); /* one compression per text, whoever asks first */
    if (!t->gz) compress_text(t);
    pthread_mutex_unlock(&x->mu);
    return t;
}

uint64_t gp_metrics_renders(gp_metrics *x)
{
    pthread_mutex_lock(&x->mu);
    uint64_t n = x->renders;
    pthread_mutex_unlock(&x->mu);
    return n;
}

int gp_metrics_write_textfile(gp_metrics *x, const char *path, gp_err *err)
{
    gp_metrics_text *t = gp_metrics_acquire(x);
    if (!t) return gp_err_set(err, GP_ENOMEM, "out of memory");
    /* replaced whole (core/afile.h): the textfile collector never reads a
     * partial file, and reads *.prom only, so the temporary name (PATH.*.tmp)
     * is skipped; flushed to disk before the rename */
    gp_afile af;
    int rc = 0;
    if (gp_afile_open(&af, path)) {
        rc = gp_err_set(err, GP_EIO, "%s: %s", path, strerror(errno));
    } else {
        af.sync = 1;
        int bad = fwrite(t->data, 1, t->len, af.f) != t->len;
        if (gp_afile_close(&af, bad)) rc = gp_err_set(err, GP_EIO, "%s: %s", path, strerror(errno));
    }
    gp_metrics_release(t);
    return rc;
}

/* ---- the public API (include/gpuprof/monitor.h) ---------------------------------------------- */

static gp_metrics *public_cache(gp_monitor *m, unsigned flags)
{
    gp_metrics_opts o;
    memset(&o, 0, sizeof o);
    o.dcgm = (flags & GP_METRICS_DCGM) != 0;
    return gp_metrics_create(m, &o);
}

GP_API char *gp_monitor_metrics(gp_monitor *m, unsigned flags)
{
    if (!m) return NULL;
    gp_metrics *x = public_cache(m, flags);
    if (!x) return NULL;
    gp_metrics_text *t = gp_metrics_acquire(x);
    char *out = t ? malloc(t->len + 1) : NULL;
    if (out) memcpy(out, t->data, t->len + 1);
    if (t) gp_metrics_release(t);
    gp_metrics_destroy(x);
    return out;
}

GP_API int gp_monitor_write_metrics(gp_monitor *m, const char *path, unsigned flags, char *errbuf,
                                    size_t n)
{
    gp_err err = {0};
    int rc;
    gp_metrics *x = m && path ? public_cache(m, flags) : NULL;
    if (!m || !path)
        rc = gp_err_set(&err, GP_EINVAL, "no monitor or no path");
    else if (!x)
        rc = gp_err_set(&err, GP_ENOMEM, "out of memory");
    else
        rc = gp_metrics_write_textfile(x, path, &err);
    gp_metrics_destroy(x);
    if (rc && errbuf && n) snprintf(errbuf, n, "%s", err.msg);
    return rc;
}
