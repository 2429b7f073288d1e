/* tests/fake_nvml/fake_nvml.c: a test-only stand-in for libnvidia-ml that
 * implements the NVML entry points gpuprof calls, driven by the scenario file
 * named by $FAKE_NVML_SCENARIO (format in tests/fake_nvml/README.md). Built
 * twice: the full library, and with FAKE_NVML_OLD an old driver's library
 * that lacks every versioned and newer symbol. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define EXPORT __attribute__((visibility("default")))
typedef int nvmlReturn_t;
typedef struct fdev *nvmlDevice_t;

enum { OK = 0, UNINIT = 1, INVALID = 2, NOT_SUPPORTED = 3, NO_PERMISSION = 4 };
enum { INSUFFICIENT_SIZE = 7, DRIVER_NOT_LOADED = 9, TIMEOUT = 10, GPU_IS_LOST = 15 };
enum { LIB_RM_VERSION_MISMATCH = 18, NOT_FOUND = 6, UNKNOWN = 999 };

/* fields a scenario can give values (over ticks) or faults */
enum {
    F_UTIL,
    F_MEM_UTIL,
    F_MEM_TOTAL,
    F_MEM_USED,
    F_TEMP,
    F_TEMP_SLOWDOWN,
    F_TEMP_SHUTDOWN,
    F_POWER_MW,
    F_POWER_LIMIT_MW,
    F_ENERGY_MJ,
    F_CLOCK_SM,
    F_CLOCK_MEM,
    F_FAN,
    F_PSTATE,
    F_THROTTLE,
    F_PCIE_TX_KBS,
    F_PCIE_RX_KBS,
    F_ECC_CORR,
    F_ECC_UNCORR,
    F_MIG,
    F_PROCS,
    F_NF
};
static const char *const fnames[F_NF] = {
    "util",          "mem_util", "mem_total",      "mem_used",    "temp",        "temp_slowdown",
    "temp_shutdown", "power_mw", "power_limit_mw", "energy_mj",   "clock_sm",    "clock_mem",
    "fan",           "pstate",   "throttle",       "pcie_tx_kbs", "pcie_rx_kbs", "ecc_corr",
    "ecc_uncorr",    "mig",      "procs"};

#define MAXV 256
#define MAXP 16
struct fdev {
    char name[96], uuid[96], pci[32];
    unsigned long long vals[F_NF][MAXV];
    int nvals[F_NF];
    int fault[F_NF]; /* NVML return code forced for the field, 0 = none */
    int lost_at;     /* tick from which everything fails GPU_IS_LOST; -1 never */
    int handle_error;
    unsigned pids[MAXP];
    unsigned long long pmem[MAXP];
    unsigned putil[MAXP];
    int nprocs;
    int xid_tick, xid_code, xid_sent;
    long tick, mem_calls;
};

static struct fdev devs[8];
static int ndevs, init_ret, inited;
static char driver[64] = "550.54.15";
static int cuda = 12040;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

static int code_of(const char *s)
{
    static const struct {
        const char *n;
        int c;
    } t[] = {{"SUCCESS", OK},
             {"NOT_SUPPORTED", NOT_SUPPORTED},
             {"NO_PERMISSION", NO_PERMISSION},
             {"DRIVER_NOT_LOADED", DRIVER_NOT_LOADED},
             {"GPU_IS_LOST", GPU_IS_LOST},
             {"LIB_RM_VERSION_MISMATCH", LIB_RM_VERSION_MISMATCH},
             {"UNKNOWN", UNKNOWN}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (!strcmp(s, t[i].n)) return t[i].c;
    fprintf(stderr, "fake_nvml: unknown return code '%s'\n", s);
    return UNKNOWN;
}

static int field_of(const char *s)
{
    for (int i = 0; i < F_NF; i++)
        if (!strcmp(s, fnames[i])) return i;
    fprintf(stderr, "fake_nvml: unknown field '%s'\n", s);
    return -1;
}

static void load_scenario(void)
{
    const char *path = getenv("FAKE_NVML_SCENARIO");
    init_ret = DRIVER_NOT_LOADED;
    ndevs = 0;
    if (!path) return;
    FILE *f = fopen(path, "r");
    if (!f) return;
    init_ret = OK;
    char line[4096];
    struct fdev *d = NULL;
    while (fgets(line, sizeof line, f)) {
        char *p = line;
        while (*p == ' ' || *p == '\t') p++;
        p[strcspn(p, "\r\n")] = 0;
        if (!*p || *p == '#') continue;
        if (!strcmp(p, "device")) {
            if (ndevs == 8) break;
            d = &devs[ndevs++];
            memset(d, 0, sizeof *d);
            d->lost_at = -1;
            d->xid_tick = -1;
            snprintf(d->name, sizeof d->name, "Fake GPU %d", ndevs - 1);
            snprintf(d->uuid, sizeof d->uuid, "GPU-fake-%d", ndevs - 1);
            snprintf(d->pci, sizeof d->pci, "00000000:%02X:00.0", 0x18 + ndevs - 1);
            continue;
        }
        char *colon = strchr(p, ':');
        if (!colon) continue;
        *colon = 0;
        char *key = p, *val = colon + 1;
        while (*val == ' ') val++;
        if (!strcmp(key, "init"))
            init_ret = code_of(val);
        else if (!strcmp(key, "driver"))
            snprintf(driver, sizeof driver, "%s", val);
        else if (!strcmp(key, "cuda"))
            cuda = atoi(val);
        else if (!d)
            continue;
        else if (!strcmp(key, "name"))
            snprintf(d->name, sizeof d->name, "%s", val);
        else if (!strcmp(key, "uuid"))
            snprintf(d->uuid, sizeof d->uuid, "%s", val);
        else if (!strcmp(key, "pci"))
            snprintf(d->pci, sizeof d->pci, "%s", val);
        else if (!strcmp(key, "lost_at"))
            d->lost_at = atoi(val);
        else if (!strcmp(key, "handle_error"))
            d->handle_error = code_of(val);
        else if (!strcmp(key, "xid"))
            sscanf(val, "%d:%d", &d->xid_tick, &d->xid_code);
        else if (!strcmp(key, "unsupported") || !strcmp(key, "no_permission")) {
            int c = !strcmp(key, "unsupported") ? NOT_SUPPORTED : NO_PERMISSION;
            for (char *t = strtok(val, " ,"); t; t = strtok(NULL, " ,")) {
                int fi = field_of(t);
                if (fi >= 0) d->fault[fi] = c;
            }
        } else if (!strcmp(key, "procs")) { /* pid:mem_bytes:sm_util ... */
            for (char *t = strtok(val, " "); t && d->nprocs < MAXP; t = strtok(NULL, " ")) {
                unsigned pid = 0, u = 0;
                unsigned long long mem = 0;
                if (sscanf(t, "%u:%llu:%u", &pid, &mem, &u) == 3) {
                    d->pids[d->nprocs] = pid;
                    d->pmem[d->nprocs] = mem;
                    d->putil[d->nprocs++] = u;
                }
            }
        } else {
            int fi = field_of(key);
            if (fi < 0) continue;
            d->nvals[fi] = 0;
            for (char *t = strtok(val, " ,"); t && d->nvals[fi] < MAXV; t = strtok(NULL, " ,"))
                d->vals[fi][d->nvals[fi]++] = strtoull(t, NULL, 0);
        }
    }
    fclose(f);
}

/* Value of field fi at the device's current tick, or an NVML error. */
static nvmlReturn_t get(nvmlDevice_t d, int fi, unsigned long long *out)
{
    if (!inited) return UNINIT;
    if (!d) return INVALID;
    if (d->lost_at >= 0 && d->tick >= d->lost_at) return GPU_IS_LOST;
    if (d->fault[fi]) return d->fault[fi];
    if (!d->nvals[fi]) return NOT_SUPPORTED;
    long i = d->tick < d->nvals[fi] ? d->tick : d->nvals[fi] - 1;
    *out = d->vals[fi][i];
    return OK;
}

EXPORT const char *nvmlErrorString(nvmlReturn_t r)
{
    switch (r) {
    case OK:
        return "Success";
    case NOT_SUPPORTED:
        return "Not Supported";
    case NO_PERMISSION:
        return "Insufficient Permissions";
    case DRIVER_NOT_LOADED:
        return "Driver Not Loaded";
    case GPU_IS_LOST:
        return "GPU is lost";
    case LIB_RM_VERSION_MISMATCH:
        return "Driver/library version mismatch";
    default:
        return "Unknown Error";
    }
}

static nvmlReturn_t do_init(void)
{
    pthread_mutex_lock(&mu);
    load_scenario();
    inited = init_ret == OK;
    pthread_mutex_unlock(&mu);
    return init_ret;
}
EXPORT nvmlReturn_t nvmlInit(void)
{
    return do_init();
}
EXPORT nvmlReturn_t nvmlShutdown(void)
{
    inited = 0;
    return OK;
}
EXPORT nvmlReturn_t nvmlSystemGetDriverVersion(char *buf, unsigned n)
{
    if (!inited) return UNINIT;
    snprintf(buf, n, "%s", driver);
    return OK;
}
EXPORT nvmlReturn_t nvmlSystemGetCudaDriverVersion(int *v)
{
    if (!inited) return UNINIT;
    *v = cuda;
    return OK;
}
EXPORT nvmlReturn_t nvmlDeviceGetCount(unsigned *n)
{
    if (!inited) return UNINIT;
    *n = (unsigned)ndevs;
    return OK;
}
EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned i, nvmlDevice_t *h)
{
    if (!inited) return UNINIT;
    if (i >= (unsigned)ndevs) return INVALID;
    if (devs[i].handle_error) return devs[i].handle_error;
    *h = &devs[i];
    return OK;
}
EXPORT nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char *buf, unsigned n)
{
    if (!d) return INVALID;
    snprintf(buf, n, "%s", d->name);
    return OK;
}
EXPORT nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t d, char *buf, unsigned n)
{
    if (!d) return INVALID;
    snprintf(buf, n, "%s", d->uuid);
    return OK;
}
typedef struct {
    char busIdLegacy[16];
    unsigned domain, bus, device, pciDeviceId, pciSubSystemId;
    char busId[32];
} pci_v3;
typedef struct {
    char busId[16];
    unsigned domain, bus, device, pciDeviceId, pciSubSystemId;
    unsigned reserved[4];
} pci_v1;
EXPORT nvmlReturn_t nvmlDeviceGetPciInfo(nvmlDevice_t d, pci_v1 *p)
{
    memset(p, 0, sizeof *p);
    snprintf(p->busId, sizeof p->busId, "%.12s", d->pci + 4); /* legacy: 4-digit domain */
    return OK;
}
typedef struct {
    unsigned long long total, free, used;
} mem_v1;
typedef struct {
    unsigned version;
    unsigned long long total, reserved, free, used;
} mem_v2;
static nvmlReturn_t mem_common(nvmlDevice_t d, unsigned long long *tot, unsigned long long *used)
{
    if (!d) return INVALID;
    pthread_mutex_lock(&mu);
    d->tick = d->mem_calls++; /* one memory read per sample: it sets the tick */
    pthread_mutex_unlock(&mu);
    nvmlReturn_t r = get(d, F_MEM_TOTAL, tot);
    if (r == OK) r = get(d, F_MEM_USED, used);
    return r;
}
EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t d, mem_v1 *m)
{
    unsigned long long t = 0, u = 0;
    nvmlReturn_t r = mem_common(d, &t, &u);
    if (r) return r;
    m->total = t, m->used = u, m->free = t - u;
    return OK;
}
EXPORT nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t d, unsigned *u)
{
    unsigned long long a = 0, b = 0;
    nvmlReturn_t r = get(d, F_UTIL, &a);
    if (r == OK) r = get(d, F_MEM_UTIL, &b);
    if (r) return r;
    u[0] = (unsigned)a, u[1] = (unsigned)b;
    return OK;
}
EXPORT nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t d, int sensor, unsigned *t)
{
    unsigned long long v = 0;
    nvmlReturn_t r = sensor ? INVALID : get(d, F_TEMP, &v);
    *t = (unsigned)v;
    return r;
}
EXPORT nvmlReturn_t nvmlDeviceGetTemperatureThreshold(nvmlDevice_t d, int type, unsigned *t)
{
    unsigned long long v = 0;
    nvmlReturn_t r = get(d, type == 0 ? F_TEMP_SHUTDOWN : F_TEMP_SLOWDOWN, &v);
    *t = (unsigned)v;
    return r;
}
#define U32_GETTER(fn, field)                                                                      \
    EXPORT nvmlReturn_t fn(nvmlDevice_t d, unsigned *out)                                          \
    {                                                                                              \
        unsigned long long v = 0;                                                                  \
        nvmlReturn_t r = get(d, field, &v);                                                        \
        if (r == OK) *out = (unsigned)v;                                                           \
        return r;                                                                                  \
    }
U32_GETTER(nvmlDeviceGetPowerUsage, F_POWER_MW)
U32_GETTER(nvmlDeviceGetEnforcedPowerLimit, F_POWER_LIMIT_MW)
U32_GETTER(nvmlDeviceGetFanSpeed, F_FAN)
EXPORT nvmlReturn_t nvmlDeviceGetPerformanceState(nvmlDevice_t d, int *p)
{
    unsigned long long v = 0;
    nvmlReturn_t r = get(d, F_PSTATE, &v);
    if (r == OK) *p = (int)v;
    return r;
}
EXPORT nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t d, int type, unsigned *c)
{
    unsigned long long v = 0;
    nvmlReturn_t r = get(d, type == 2 ? F_CLOCK_MEM : F_CLOCK_SM, &v);
    if (r == OK) *c = (unsigned)v;
    return r;
}
EXPORT nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t d, unsigned long long *m)
{
    return get(d, F_THROTTLE, m);
}
EXPORT nvmlReturn_t nvmlDeviceGetPcieThroughput(nvmlDevice_t d, int counter, unsigned *v)
{
    unsigned long long x = 0;
    nvmlReturn_t r = get(d, counter == 0 ? F_PCIE_TX_KBS : F_PCIE_RX_KBS, &x);
    if (r == OK) *v = (unsigned)x;
    return r;
}
EXPORT nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t d, int type, int counter,
                                                unsigned long long *v)
{
    return get(d, type == 0 ? F_ECC_CORR : F_ECC_UNCORR, v);
}
EXPORT nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t d, unsigned *cur, unsigned *pend)
{
    unsigned long long v = 0;
    nvmlReturn_t r = get(d, F_MIG, &v);
    if (r == OK) *cur = *pend = (unsigned)v;
    return r;
}
/* Processes: stride is the struct size of the version called. */
static nvmlReturn_t procs_common(nvmlDevice_t d, unsigned *count, unsigned char *buf, size_t stride)
{
    unsigned long long dummy;
    if (!d) return INVALID;
    if (d->lost_at >= 0 && d->tick >= d->lost_at) return GPU_IS_LOST;
    if (d->fault[F_PROCS]) return d->fault[F_PROCS];
    (void)dummy;
    if (*count < (unsigned)d->nprocs) {
        *count = (unsigned)d->nprocs;
        return INSUFFICIENT_SIZE;
    }
    for (int i = 0; i < d->nprocs; i++) {
        unsigned char *e = buf + (size_t)i * stride;
        memset(e, 0, stride);
        memcpy(e, &d->pids[i], sizeof(unsigned));
        memcpy(e + 8, &d->pmem[i], sizeof(unsigned long long));
    }
    *count = (unsigned)d->nprocs;
    return OK;
}
EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t d, unsigned *count, void *buf)
{
    return procs_common(d, count, buf, 16);
}
EXPORT nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t d, unsigned long long *e)
{
    return get(d, F_ENERGY_MJ, e);
}

#ifndef FAKE_NVML_OLD
/* ---- newer and versioned entry points ---- */
EXPORT nvmlReturn_t nvmlInit_v2(void)
{
    return do_init();
}
EXPORT nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *v)
{
    return nvmlSystemGetCudaDriverVersion(v);
}
EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned *n)
{
    return nvmlDeviceGetCount(n);
}
EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned i, nvmlDevice_t *h)
{
    return nvmlDeviceGetHandleByIndex(i, h);
}
EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t d, pci_v3 *p)
{
    memset(p, 0, sizeof *p);
    snprintf(p->busId, sizeof p->busId, "%s", d->pci);
    snprintf(p->busIdLegacy, sizeof p->busIdLegacy, "%.12s", d->pci + 4);
    return OK;
}
EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t d, mem_v2 *m)
{
    if (m->version != (unsigned)(sizeof(mem_v2) | (2u << 24)))
        return 25; /* ARGUMENT_VERSION_MISMATCH */
    unsigned long long t = 0, u = 0;
    nvmlReturn_t r = mem_common(d, &t, &u);
    if (r) return r;
    m->total = t, m->used = u, m->reserved = t / 100, m->free = t - u - t / 100;
    return OK;
}
EXPORT nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t d, unsigned long long *m)
{
    return get(d, F_THROTTLE, m);
}
EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t d, unsigned *count,
                                                            void *buf)
{
    return procs_common(d, count, buf, 32);
}
typedef struct {
    unsigned long long ts;
    unsigned long long val;
} sample;
EXPORT nvmlReturn_t nvmlDeviceGetSamples(nvmlDevice_t d, int type, unsigned long long last, int *vt,
                                         unsigned *count, sample *out)
{
    unsigned long long v = 0;
    nvmlReturn_t r = get(d, type == 2 ? F_MEM_UTIL : F_UTIL, &v);
    if (r) return r;
    if (type != 1 && type != 2) return NOT_SUPPORTED;
    unsigned long long ts = (unsigned long long)(d->tick + 1) * 1000;
    if (ts <= last) return 21; /* NO_DATA */
    *vt = 1;                   /* unsigned int */
    if (!out) {
        *count = 1;
        return OK;
    }
    if (*count < 1) return INSUFFICIENT_SIZE;
    memset(out, 0, sizeof *out);
    out[0].ts = ts;
    unsigned u32 = (unsigned)v;
    memcpy(&out[0].val, &u32, sizeof u32);
    *count = 1;
    return OK;
}
typedef struct {
    unsigned pid;
    unsigned long long ts;
    unsigned sm, mem, enc, dec;
} putil;
EXPORT nvmlReturn_t nvmlDeviceGetProcessUtilization(nvmlDevice_t d, putil *out, unsigned *count,
                                                    unsigned long long last)
{
    if (!d) return INVALID;
    if (d->lost_at >= 0 && d->tick >= d->lost_at) return GPU_IS_LOST;
    if (d->fault[F_PROCS]) return d->fault[F_PROCS];
    if (*count < (unsigned)d->nprocs) {
        *count = (unsigned)d->nprocs;
        return INSUFFICIENT_SIZE;
    }
    for (int i = 0; i < d->nprocs; i++)
        out[i] =
            (putil){d->pids[i], (unsigned long long)(d->tick + 1) * 1000, d->putil[i], 0, 0, 0};
    *count = (unsigned)d->nprocs;
    return OK;
}
/* XID events */
typedef struct fset {
    int registered[8];
} * nvmlEventSet_t;
typedef struct {
    nvmlDevice_t device;
    unsigned long long type, data;
    unsigned gi, ci;
} evdata;
EXPORT nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t *s)
{
    *s = calloc(1, sizeof **s);
    return *s ? OK : UNKNOWN;
}
EXPORT nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t s)
{
    free(s);
    return OK;
}
EXPORT nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t d, unsigned long long types,
                                             nvmlEventSet_t s)
{
    if (!d || !s) return INVALID;
    s->registered[d - devs] = (types & 8) != 0;
    return OK;
}
EXPORT nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t s, evdata *ev, unsigned timeout_ms)
{
    pthread_mutex_lock(&mu);
    for (int i = 0; i < ndevs; i++) {
        struct fdev *d = &devs[i];
        if (s->registered[i] && !d->xid_sent && d->xid_tick >= 0 && d->tick >= d->xid_tick) {
            d->xid_sent = 1;
            ev->device = d;
            ev->type = 8;
            ev->data = (unsigned long long)d->xid_code;
            pthread_mutex_unlock(&mu);
            return OK;
        }
    }
    pthread_mutex_unlock(&mu);
    struct timespec ts = {0, (long)(timeout_ms < 20 ? timeout_ms : 20) * 1000000L};
    nanosleep(&ts, NULL);
    return TIMEOUT;
}
#endif
