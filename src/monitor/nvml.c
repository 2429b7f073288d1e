/* monitor/nvml.c: the NVML backend. libnvidia-ml is loaded with dlopen, the
 * newest versioned symbol first, and only the NVML types used here are
 * declared (no nvml.h), so gpuprof builds and runs without a driver. */
#include "monitor/backend.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the subset of NVML's ABI we use ---------------------------------- */
typedef int nvmlReturn_t;
typedef struct nvmlDevice_st *nvmlDevice_t;
typedef struct nvmlEventSet_st *nvmlEventSet_t;
enum {
    NVML_SUCCESS = 0,
    NVML_ERROR_NOT_SUPPORTED = 3,
    NVML_ERROR_NO_PERMISSION = 4,
    NVML_ERROR_INSUFFICIENT_SIZE = 7,
    NVML_ERROR_DRIVER_NOT_LOADED = 9,
    NVML_ERROR_TIMEOUT = 10,
    NVML_ERROR_GPU_IS_LOST = 15,
    NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18,
    NVML_ERROR_NO_DATA = 21,
};
typedef struct {
    unsigned long long total, free, used;
} nvmlMemory_t;
typedef struct {
    unsigned int version;
    unsigned long long total, reserved, free, used;
} nvmlMemory_v2_t;
#define NVML_MEMORY_V2_VERSION ((unsigned)(sizeof(nvmlMemory_v2_t) | (2u << 24)))
typedef struct {
    unsigned int gpu, memory;
} nvmlUtilization_t;
typedef struct { /* v2/v3 layout; v1 has busId[16] where busIdLegacy is */
    char busIdLegacy[16];
    unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
    char busId[32];
} nvmlPciInfo_t;
typedef union {
    double dVal;
    unsigned int uiVal;
    unsigned long ulVal;
    unsigned long long ullVal;
    signed long long sllVal;
} nvmlValue_t;
typedef struct {
    unsigned long long timeStamp;
    nvmlValue_t sampleValue;
} nvmlSample_t;
enum { NVML_GPU_UTILIZATION_SAMPLES = 1, NVML_MEMORY_UTILIZATION_SAMPLES = 2 };
enum { NVML_VT_DOUBLE, NVML_VT_UINT, NVML_VT_ULONG, NVML_VT_ULL, NVML_VT_SLL };
typedef struct {
    unsigned int pid;
    unsigned long long usedGpuMemory;
} nvmlProcessInfo_v1_t;
typedef struct {
    unsigned int pid;
    unsigned long long usedGpuMemory;
    unsigned int gpuInstanceId, computeInstanceId;
} nvmlProcessInfo_v2_t;
typedef struct {
    unsigned int pid;
    unsigned long long usedGpuMemory;
    unsigned int gpuInstanceId, computeInstanceId;
    unsigned long long usedGpuCcProtectedMemory;
} nvmlProcessInfo_v3_t;
typedef struct {
    unsigned int pid;
    unsigned long long timeStamp;
    unsigned int smUtil, memUtil, encUtil, decUtil;
} nvmlProcessUtilizationSample_t;
typedef struct {
    nvmlDevice_t device;
    unsigned long long eventType, eventData;
    unsigned int gpuInstanceId, computeInstanceId;
} nvmlEventData_t;
#define NVML_EVENT_XID 0x8ull
enum { NVML_TEMP_GPU = 0 };
enum { NVML_TEMP_THRESH_SHUTDOWN = 0, NVML_TEMP_THRESH_SLOWDOWN = 1 };
enum { NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2 };
enum { NVML_PCIE_TX = 0, NVML_PCIE_RX = 1 };
enum { NVML_ECC_CORRECTED = 0, NVML_ECC_UNCORRECTED = 1, NVML_ECC_VOLATILE = 0 };

/* ---- loaded entry points ---------------------------------------------- */
typedef struct nvml_api {
    nvmlReturn_t (*init)(void);
    nvmlReturn_t (*shutdown)(void);
    const char *(*error_string)(nvmlReturn_t);
    nvmlReturn_t (*driver_version)(char *, unsigned);
    nvmlReturn_t (*cuda_version)(int *);
    nvmlReturn_t (*count)(unsigned *);
    nvmlReturn_t (*handle)(unsigned, nvmlDevice_t *);
    nvmlReturn_t (*name)(nvmlDevice_t, char *, unsigned);
    nvmlReturn_t (*uuid)(nvmlDevice_t, char *, unsigned);
    nvmlReturn_t (*pci)(nvmlDevice_t, nvmlPciInfo_t *);
    int pci_v1;
    nvmlReturn_t (*mem_v2)(nvmlDevice_t, nvmlMemory_v2_t *);
    nvmlReturn_t (*mem)(nvmlDevice_t, nvmlMemory_t *);
    nvmlReturn_t (*util)(nvmlDevice_t, nvmlUtilization_t *);
    nvmlReturn_t (*samples)(nvmlDevice_t, int, unsigned long long, int *, unsigned *,
                            nvmlSample_t *);
    nvmlReturn_t (*temp)(nvmlDevice_t, int, unsigned *);
    nvmlReturn_t (*temp_thresh)(nvmlDevice_t, int, unsigned *);
    nvmlReturn_t (*power)(nvmlDevice_t, unsigned *);
    nvmlReturn_t (*power_limit)(nvmlDevice_t, unsigned *);
    nvmlReturn_t (*energy)(nvmlDevice_t, unsigned long long *);
    nvmlReturn_t (*clock)(nvmlDevice_t, int, unsigned *);
    nvmlReturn_t (*fan)(nvmlDevice_t, unsigned *);
    nvmlReturn_t (*pstate)(nvmlDevice_t, int *);
    nvmlReturn_t (*clock_events)(nvmlDevice_t, unsigned long long *);
    nvmlReturn_t (*pcie)(nvmlDevice_t, int, unsigned *);
    nvmlReturn_t (*ecc)(nvmlDevice_t, int, int, unsigned long long *);
    nvmlReturn_t (*procs)(nvmlDevice_t, unsigned *, void *);
    size_t proc_stride;
    nvmlReturn_t (*proc_util)(nvmlDevice_t, nvmlProcessUtilizationSample_t *, unsigned *,
                              unsigned long long);
    nvmlReturn_t (*mig)(nvmlDevice_t, unsigned *, unsigned *);
    nvmlReturn_t (*ev_create)(nvmlEventSet_t *);
    nvmlReturn_t (*ev_register)(nvmlDevice_t, unsigned long long, nvmlEventSet_t);
    nvmlReturn_t (*ev_wait)(nvmlEventSet_t, nvmlEventData_t *, unsigned);
    nvmlReturn_t (*ev_free)(nvmlEventSet_t);
} nvml_api;

typedef struct nvml_dev {
    nvmlDevice_t h;
    int lost;
    unsigned long long last_util_ts, last_mem_ts, last_proc_ts;
    int last_xid;                  /* 0: none seen */
    int xid_reg;                   /* registered for XID events */
    unsigned long long xid_events; /* XID events seen since the monitor started */
} nvml_dev;

typedef struct nvml_state {
    void *lib;
    nvml_api f;
    nvml_dev dev[GP_MAX_DEVS];
    int ndev;
    int use_samples; /* interval below 1 s: average NVML's sample buffer */
    const char *proc_root;
    /* XID thread */
    nvmlEventSet_t evset;
    pthread_t xid_thread;
    int xid_running;
    atomic_int xid_stop; /* set by the owner, read by the XID thread */
    pthread_mutex_t xid_mu;
    nvmlSample_t *sbuf;
    unsigned sbuf_cap;
} nvml_state;

/* Looks up the first of the NULL-terminated names that the library has. */
static void *sym(void *lib, const char *const *names, int *which)
{
    for (int i = 0; names[i]; i++) {
        void *p = dlsym(lib, names[i]);
        if (p) {
            if (which) *which = i;
            return p;
        }
    }
    return NULL;
}
#define SYM(field, ...)                                                                            \
    do {                                                                                           \
        static const char *const n_[] = {__VA_ARGS__, NULL};                                       \
        *(void **)&st->f.field = sym(st->lib, n_, NULL);                                           \
    } while (0)

static const char *nvml_errstr(const nvml_state *st, nvmlReturn_t r)
{
    const char *s = st->f.error_string ? st->f.error_string(r) : NULL;
    return s ? s : "unknown NVML error";
}

static void *xid_main(void *arg)
{
    nvml_state *st = arg;
    while (!atomic_load(&st->xid_stop)) {
        nvmlEventData_t ev;
        memset(&ev, 0, sizeof ev);
        nvmlReturn_t r = st->f.ev_wait(st->evset, &ev, 200);
        if (r == NVML_SUCCESS && (ev.eventType & NVML_EVENT_XID)) {
            pthread_mutex_lock(&st->xid_mu);
            for (int i = 0; i < st->ndev; i++)
                if (st->dev[i].h == ev.device) {
                    st->dev[i].last_xid = (int)ev.eventData;
                    st->dev[i].xid_events++;
                }
            pthread_mutex_unlock(&st->xid_mu);
        } else if (r != NVML_SUCCESS && r != NVML_ERROR_TIMEOUT) {
            /* not supported or broken: do not spin */
            struct timespec ts = {0, 200 * 1000000L};
            nanosleep(&ts, NULL);
        }
    }
    return NULL;
}

static void nvml_fini(void *state)
{
    nvml_state *st = state;
    if (!st) return;
    if (st->xid_running) {
        atomic_store(&st->xid_stop, 1);
        pthread_join(st->xid_thread, NULL);
    }
    if (st->evset && st->f.ev_free) st->f.ev_free(st->evset);
    pthread_mutex_destroy(&st->xid_mu);
    if (st->f.shutdown) st->f.shutdown();
    if (st->lib) dlclose(st->lib);
    free(st->sbuf);
    free(st);
}

static int nvml_init(void **state, const gp_backend_env *env, gp_health_entry *h)
{
    *state = NULL;
    nvml_state *st = calloc(1, sizeof *st);
    if (!st) return GP_ENOMEM;
    pthread_mutex_init(&st->xid_mu, NULL);
    const char *path = env->cfg->nvml_library;
    if (path[0]) {
        st->lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (!st->lib) snprintf(h->reason, sizeof h->reason, "NVML: cannot load %.200s", path);
    } else {
        st->lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
        if (!st->lib) st->lib = dlopen("libnvidia-ml.so", RTLD_NOW | RTLD_LOCAL);
        if (!st->lib) snprintf(h->reason, sizeof h->reason, "NVML: libnvidia-ml.so.1 not found");
    }
    if (!st->lib) goto fail;
    SYM(init, "nvmlInit_v2", "nvmlInit");
    SYM(shutdown, "nvmlShutdown");
    SYM(error_string, "nvmlErrorString");
    SYM(count, "nvmlDeviceGetCount_v2", "nvmlDeviceGetCount");
    SYM(handle, "nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex");
    if (!st->f.init || !st->f.count || !st->f.handle) {
        snprintf(h->reason, sizeof h->reason, "NVML: library lacks nvmlInit/nvmlDeviceGetCount");
        goto fail;
    }
    SYM(driver_version, "nvmlSystemGetDriverVersion");
    SYM(cuda_version, "nvmlSystemGetCudaDriverVersion_v2", "nvmlSystemGetCudaDriverVersion");
    SYM(name, "nvmlDeviceGetName");
    SYM(uuid, "nvmlDeviceGetUUID");
    {
        static const char *const n[] = {"nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetPciInfo_v2",
                                        "nvmlDeviceGetPciInfo", NULL};
        int which = 0;
        *(void **)&st->f.pci = sym(st->lib, n, &which);
        st->f.pci_v1 = which == 2;
    }
    SYM(mem_v2, "nvmlDeviceGetMemoryInfo_v2");
    SYM(mem, "nvmlDeviceGetMemoryInfo");
    SYM(util, "nvmlDeviceGetUtilizationRates");
    SYM(samples, "nvmlDeviceGetSamples");
    SYM(temp, "nvmlDeviceGetTemperature");
    SYM(temp_thresh, "nvmlDeviceGetTemperatureThreshold");
    SYM(power, "nvmlDeviceGetPowerUsage");
    SYM(power_limit, "nvmlDeviceGetEnforcedPowerLimit", "nvmlDeviceGetPowerManagementLimit");
    SYM(energy, "nvmlDeviceGetTotalEnergyConsumption");
    SYM(clock, "nvmlDeviceGetClockInfo");
    SYM(fan, "nvmlDeviceGetFanSpeed");
    SYM(pstate, "nvmlDeviceGetPerformanceState");
    SYM(clock_events, "nvmlDeviceGetCurrentClocksEventReasons",
        "nvmlDeviceGetCurrentClocksThrottleReasons");
    SYM(pcie, "nvmlDeviceGetPcieThroughput");
    SYM(ecc, "nvmlDeviceGetTotalEccErrors");
    {
        static const char *const n[] = {"nvmlDeviceGetComputeRunningProcesses_v3",
                                        "nvmlDeviceGetComputeRunningProcesses_v2",
                                        "nvmlDeviceGetComputeRunningProcesses", NULL};
        static const size_t stride[] = {sizeof(nvmlProcessInfo_v3_t), sizeof(nvmlProcessInfo_v2_t),
                                        sizeof(nvmlProcessInfo_v1_t)};
        int which = 0;
        *(void **)&st->f.procs = sym(st->lib, n, &which);
        st->f.proc_stride = stride[which];
    }
    SYM(proc_util, "nvmlDeviceGetProcessUtilization");
    SYM(mig, "nvmlDeviceGetMigMode");
    SYM(ev_create, "nvmlEventSetCreate");
    SYM(ev_register, "nvmlDeviceRegisterEvents");
    SYM(ev_wait, "nvmlEventSetWait_v2", "nvmlEventSetWait");
    SYM(ev_free, "nvmlEventSetFree");

    nvmlReturn_t r = st->f.init();
    if (r != NVML_SUCCESS) {
        if (r == NVML_ERROR_LIB_RM_VERSION_MISMATCH)
            snprintf(h->reason, sizeof h->reason, "NVML: driver/library version mismatch");
        else if (r == NVML_ERROR_DRIVER_NOT_LOADED)
            snprintf(h->reason, sizeof h->reason, "NVML: NVIDIA driver not loaded");
        else if (r == NVML_ERROR_NO_PERMISSION)
            snprintf(h->reason, sizeof h->reason, "NVML: no permission to open the GPU");
        else
            snprintf(h->reason, sizeof h->reason, "NVML: init failed: %s", nvml_errstr(st, r));
        st->f.shutdown = NULL; /* not initialised: do not shut down */
        goto fail;
    }
    st->use_samples = env->interval_ns < 1000000000LL && st->f.samples;
    st->proc_root = env->cfg->sysfs_root[0] ? env->cfg->sysfs_root : "/";
    h->state = GP_HEALTH_OK;
    snprintf(h->reason, sizeof h->reason, "NVML loaded");
    *state = st;
    return 0;
fail:
    h->state = GP_HEALTH_UNAVAILABLE;
    nvml_fini(st);
    return GP_EUNSUPPORTED;
}

static int nvml_discover(void *state, gp_dev_info *out, int max, gp_err *err)
{
    nvml_state *st = state;
    unsigned n = 0;
    nvmlReturn_t r = st->f.count(&n);
    if (r != NVML_SUCCESS)
        return gp_err_set(err, GP_ENODEV, "NVML: device count: %s", nvml_errstr(st, r));
    if (n > (unsigned)max) n = (unsigned)max;
    if (n > GP_MAX_DEVS) n = GP_MAX_DEVS;
    char drv[80] = "", cuda[32] = "";
    if (st->f.driver_version && st->f.driver_version(drv, sizeof drv) != NVML_SUCCESS) drv[0] = 0;
    int cv = 0;
    if (st->f.cuda_version && st->f.cuda_version(&cv) == NVML_SUCCESS && cv > 0)
        snprintf(cuda, sizeof cuda, "%d.%d", cv / 1000, (cv % 1000) / 10);
    /* stop the XID thread while the handle table changes */
    if (st->xid_running) {
        atomic_store(&st->xid_stop, 1);
        pthread_join(st->xid_thread, NULL);
        st->xid_running = 0;
        atomic_store(&st->xid_stop, 0);
    }
    nvml_dev old[GP_MAX_DEVS];
    int nold = st->ndev;
    memcpy(old, st->dev, sizeof old);
    int k = 0;
    for (unsigned i = 0; i < n; i++) {
        nvmlDevice_t h = NULL;
        gp_dev_info *d = &out[k];
        memset(d, 0, sizeof *d);
        gp_backend_strcpy(d->backend, sizeof d->backend, "nvml");
        gp_backend_strcpy(d->kind, sizeof d->kind, "gpu");
        gp_backend_strcpy(d->vendor, sizeof d->vendor, "NVIDIA");
        gp_backend_strcpy(d->driver_version, sizeof d->driver_version, drv);
        gp_backend_strcpy(d->cuda_version, sizeof d->cuda_version, cuda);
        r = st->f.handle(i, &h);
        if (r != NVML_SUCCESS) {
            /* keep the index stable: a device we cannot open is reported lost */
            snprintf(d->name, sizeof d->name, "GPU %u", i);
            snprintf(d->status, sizeof d->status, "%s", nvml_errstr(st, r));
            st->dev[k] = (nvml_dev){0};
            st->dev[k].lost = 1;
            k++;
            continue;
        }
        d->present = 1;
        if (!st->f.name || st->f.name(h, d->name, sizeof d->name) != NVML_SUCCESS)
            snprintf(d->name, sizeof d->name, "NVIDIA GPU %u", i);
        if (!st->f.uuid || st->f.uuid(h, d->uuid, sizeof d->uuid) != NVML_SUCCESS) d->uuid[0] = 0;
        nvmlPciInfo_t pci;
        memset(&pci, 0, sizeof pci);
        if (st->f.pci && st->f.pci(h, &pci) == NVML_SUCCESS) {
            pci.busId[sizeof pci.busId - 1] = 0;
            pci.busIdLegacy[sizeof pci.busIdLegacy - 1] = 0;
            gp_backend_strcpy(d->pci_bus_id, sizeof d->pci_bus_id,
                              st->f.pci_v1 ? pci.busIdLegacy : pci.busId);
        }
        unsigned long long keep_util = 0, keep_mem = 0;
        int keep_xid = 0;
        unsigned long long keep_xev = 0;
        for (int j = 0; j < nold; j++) /* same handle: keep sample cursors */
            if (old[j].h == h) {
                keep_util = old[j].last_util_ts;
                keep_mem = old[j].last_mem_ts;
                keep_xid = old[j].last_xid;
                keep_xev = old[j].xid_events;
            }
        st->dev[k] = (nvml_dev){.h = h,
                                .last_util_ts = keep_util,
                                .last_mem_ts = keep_mem,
                                .last_xid = keep_xid,
                                .xid_events = keep_xev};
        k++;
    }
    st->ndev = k;
    /* XID events: one waiting thread for every device that supports them */
    if (st->f.ev_create && st->f.ev_register && st->f.ev_wait) {
        if (!st->evset && st->f.ev_create(&st->evset) != NVML_SUCCESS) st->evset = NULL;
        int any = 0;
        for (int i = 0; st->evset && i < k; i++)
            if (!st->dev[i].lost &&
                st->f.ev_register(st->dev[i].h, NVML_EVENT_XID, st->evset) == NVML_SUCCESS)
                any = st->dev[i].xid_reg = 1;
        if (any && pthread_create(&st->xid_thread, NULL, xid_main, st) == 0) st->xid_running = 1;
    }
    return k;
}

/* Averages the NVML sample buffer of one type newer than *last; 1 when any. */
static int avg_samples(nvml_state *st, nvmlDevice_t h, int type, unsigned long long *last,
                       double *out)
{
    int vt = 0;
    unsigned cnt = 0;
    if (st->f.samples(h, type, *last, &vt, &cnt, NULL) != NVML_SUCCESS || cnt == 0) return 0;
    if (cnt > st->sbuf_cap) {
        nvmlSample_t *nb = realloc(st->sbuf, cnt * sizeof *nb);
        if (!nb) return 0;
        st->sbuf = nb;
        st->sbuf_cap = cnt;
    }
    if (st->f.samples(h, type, *last, &vt, &cnt, st->sbuf) != NVML_SUCCESS || cnt == 0) return 0;
    double sum = 0;
    unsigned used = 0;
    for (unsigned i = 0; i < cnt && i < st->sbuf_cap; i++) {
        const nvmlSample_t *s = &st->sbuf[i];
        if (s->timeStamp <= *last) continue;
        double v = vt == NVML_VT_DOUBLE  ? s->sampleValue.dVal
                   : vt == NVML_VT_UINT  ? s->sampleValue.uiVal
                   : vt == NVML_VT_ULONG ? (double)s->sampleValue.ulVal
                   : vt == NVML_VT_SLL   ? (double)s->sampleValue.sllVal
                                         : (double)s->sampleValue.ullVal;
        sum += v;
        used++;
        if (s->timeStamp > *last) *last = s->timeStamp;
    }
    if (!used) return 0;
    *out = sum / used;
    return 1;
}

/* Reads processes and their utilization into procs; returns the count. */
static int read_procs(nvml_state *st, nvml_dev *d, gp_dev_proc *procs, int cap)
{
    if (!st->f.procs) return 0;
    /* size the buffer defensively: the newest struct we know plus slack, so a
     * library whose struct grew cannot write past it */
    enum { N = GP_MAX_PROCS };
    size_t stride = st->f.proc_stride;
    unsigned char buf[N * sizeof(nvmlProcessInfo_v3_t) + 256];
    unsigned cnt = (unsigned)((sizeof buf - 256) / stride);
    if (cnt > N) cnt = N;
    nvmlReturn_t r = st->f.procs(d->h, &cnt, buf);
    if (r != NVML_SUCCESS && r != NVML_ERROR_INSUFFICIENT_SIZE) return 0;
    if (cnt > (unsigned)((sizeof buf - 256) / stride))
        cnt = (unsigned)((sizeof buf - 256) / stride);
    int n = 0;
    for (unsigned i = 0; i < cnt && n < cap; i++) {
        nvmlProcessInfo_v1_t pi;
        memcpy(&pi.pid, buf + i * stride, sizeof pi.pid);
        memcpy(&pi.usedGpuMemory, buf + i * stride + offsetof(nvmlProcessInfo_v1_t, usedGpuMemory),
               sizeof pi.usedGpuMemory);
        if (pi.pid == 0) continue;
        gp_dev_proc *p = &procs[n];
        memset(p, 0, sizeof *p);
        p->pid = (int)pi.pid;
        gp_backend_proc_name(st->proc_root, p->pid, p->name, sizeof p->name);
        /* NVML reports "not available" as ~0ull */
        if (pi.usedGpuMemory != ~0ull) {
            p->mem_bytes = (int64_t)pi.usedGpuMemory;
            p->valid |= GP_PROC_MEM;
        }
        n++;
    }
    if (n && st->f.proc_util) {
        nvmlProcessUtilizationSample_t us[N];
        unsigned ucnt = N;
        if (st->f.proc_util(d->h, us, &ucnt, d->last_proc_ts) == NVML_SUCCESS) {
            unsigned long long newest = d->last_proc_ts;
            for (unsigned i = 0; i < ucnt && i < N; i++) {
                for (int j = 0; j < n; j++)
                    if (procs[j].pid == (int)us[i].pid) {
                        procs[j].util_pct = us[i].smUtil;
                        procs[j].valid |= GP_PROC_UTIL;
                    }
                if (us[i].timeStamp > newest) newest = us[i].timeStamp;
            }
            d->last_proc_ts = newest;
        }
    }
    return n;
}

static int nvml_sample(void *state, int idx, int64_t mono_ns, gp_dev_sample *s, gp_dev_proc *procs,
                       int *nproc, gp_err *err)
{
    nvml_state *st = state;
    if (nproc && !procs) *nproc = 0;
    if (idx < 0 || idx >= st->ndev) return gp_err_set(err, GP_ENODEV, "NVML: no device %d", idx);
    nvml_dev *d = &st->dev[idx];
    if (d->lost) return gp_err_set(err, GP_ENODEV, "NVML: GPU is lost");
    nvmlDevice_t h = d->h;
    nvmlReturn_t r;
    unsigned u = 0;
    int lost = 0;
#define CHECK(call) ((r = (call)) == NVML_SUCCESS ? 1 : (lost |= r == NVML_ERROR_GPU_IS_LOST, 0))
    if (st->f.mem_v2) {
        nvmlMemory_v2_t m;
        memset(&m, 0, sizeof m);
        m.version = NVML_MEMORY_V2_VERSION;
        if (CHECK(st->f.mem_v2(h, &m))) {
            gp_sample_set(s, GP_MF_MEM_TOTAL, (double)m.total);
            gp_sample_set(s, GP_MF_MEM_USED, (double)m.used);
            gp_sample_set(s, GP_MF_MEM_FREE, (double)m.free);
        }
    } else if (st->f.mem) {
        nvmlMemory_t m;
        if (CHECK(st->f.mem(h, &m))) {
            gp_sample_set(s, GP_MF_MEM_TOTAL, (double)m.total);
            gp_sample_set(s, GP_MF_MEM_USED, (double)m.used);
            gp_sample_set(s, GP_MF_MEM_FREE, (double)m.free);
        }
    }
    if (lost) goto gone;
    double v;
    int got_util = 0, got_mutil = 0;
    if (st->use_samples) {
        if (avg_samples(st, h, NVML_GPU_UTILIZATION_SAMPLES, &d->last_util_ts, &v)) {
            gp_sample_set(s, GP_MF_UTIL, v);
            got_util = 1;
        }
        if (avg_samples(st, h, NVML_MEMORY_UTILIZATION_SAMPLES, &d->last_mem_ts, &v)) {
            gp_sample_set(s, GP_MF_MEM_UTIL, v);
            got_mutil = 1;
        }
    }
    if ((!got_util || !got_mutil) && st->f.util) {
        nvmlUtilization_t ut;
        if (CHECK(st->f.util(h, &ut))) {
            if (!got_util) gp_sample_set(s, GP_MF_UTIL, ut.gpu);
            if (!got_mutil) gp_sample_set(s, GP_MF_MEM_UTIL, ut.memory);
        }
    }
    if (st->f.temp && CHECK(st->f.temp(h, NVML_TEMP_GPU, &u))) gp_sample_set(s, GP_MF_TEMP, u);
    if (st->f.temp_thresh) {
        if (CHECK(st->f.temp_thresh(h, NVML_TEMP_THRESH_SLOWDOWN, &u)))
            gp_sample_set(s, GP_MF_TEMP_SLOWDOWN, u);
        if (CHECK(st->f.temp_thresh(h, NVML_TEMP_THRESH_SHUTDOWN, &u)))
            gp_sample_set(s, GP_MF_TEMP_SHUTDOWN, u);
    }
    if (st->f.power && CHECK(st->f.power(h, &u))) gp_sample_set(s, GP_MF_POWER, u / 1000.0);
    if (st->f.power_limit && CHECK(st->f.power_limit(h, &u)))
        gp_sample_set(s, GP_MF_POWER_LIMIT, u / 1000.0);
    unsigned long long ull = 0;
    if (st->f.energy && CHECK(st->f.energy(h, &ull))) gp_sample_set(s, GP_MF_ENERGY, ull / 1000.0);
    if (st->f.clock) {
        if (CHECK(st->f.clock(h, NVML_CLOCK_SM, &u))) gp_sample_set(s, GP_MF_CLOCK_SM, u);
        if (CHECK(st->f.clock(h, NVML_CLOCK_MEM, &u))) gp_sample_set(s, GP_MF_CLOCK_MEM, u);
    }
    if (st->f.fan && CHECK(st->f.fan(h, &u))) gp_sample_set(s, GP_MF_FAN, u);
    int ps = 0;
    if (st->f.pstate && CHECK(st->f.pstate(h, &ps)) && ps >= 0 && ps <= 15)
        gp_sample_set(s, GP_MF_PSTATE, ps);
    if (st->f.clock_events && CHECK(st->f.clock_events(h, &ull)))
        gp_sample_set(s, GP_MF_THROTTLE, (double)ull);
    if (st->f.pcie) { /* KB/s */
        if (CHECK(st->f.pcie(h, NVML_PCIE_TX, &u))) gp_sample_set(s, GP_MF_PCIE_TX, u * 1024.0);
        if (CHECK(st->f.pcie(h, NVML_PCIE_RX, &u))) gp_sample_set(s, GP_MF_PCIE_RX, u * 1024.0);
    }
    if (st->f.ecc) {
        if (CHECK(st->f.ecc(h, NVML_ECC_CORRECTED, NVML_ECC_VOLATILE, &ull)))
            gp_sample_set(s, GP_MF_ECC_CORR, (double)ull);
        if (CHECK(st->f.ecc(h, NVML_ECC_UNCORRECTED, NVML_ECC_VOLATILE, &ull)))
            gp_sample_set(s, GP_MF_ECC_UNCORR, (double)ull);
    }
    unsigned cur = 0, pend = 0;
    if (st->f.mig && CHECK(st->f.mig(h, &cur, &pend))) gp_sample_set(s, GP_MF_MIG, cur ? 1 : 0);
    if (st->xid_running) {
        pthread_mutex_lock(&st->xid_mu);
        if (d->last_xid) gp_sample_set(s, GP_MF_XID, d->last_xid);
        if (d->xid_reg) gp_sample_set(s, GP_MF_XID_EVENTS, (double)d->xid_events);
        pthread_mutex_unlock(&st->xid_mu);
    }
    if (lost) goto gone;
    if (nproc) *nproc = procs ? read_procs(st, d, procs, *nproc) : 0;
    (void)mono_ns;
    return 0;
gone:
#undef CHECK
    d->lost = 1;
    if (nproc) *nproc = 0;
    return gp_err_set(err, GP_ENODEV, "NVML: %s", nvml_errstr(st, NVML_ERROR_GPU_IS_LOST));
}

const gp_backend gp_backend_nvml = {
    .name = "nvml",
    .fallback_for = NULL,
    .is_gpu = 1,
    .init = nvml_init,
    .discover = nvml_discover,
    .begin_tick = NULL,
    .sample = nvml_sample,
    .fini = nvml_fini,
};
