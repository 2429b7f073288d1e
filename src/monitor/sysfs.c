/* monitor/sysfs.c: AMD and Intel GPUs through sysfs (/sys/class/drm/cardN),
 * hwmon (temperature, power, energy, fan) and DRM fdinfo (per-process engine
 * time and memory; busy % where the driver has no gpu_busy_percent). The root
 * of /sys and /proc is configurable so that tests run on a fake tree. */
#include "monitor/backend.h"
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { VENDOR_AMD = 0x1002, VENDOR_INTEL = 0x8086 };
#define MAX_CLIENTS 256

typedef struct sysfs_card {
    char dir[64];   /* "/sys/class/drm/card0/device" (relative to root) */
    char hwmon[96]; /* ".../hwmon/hwmonN" or "" */
    char pdev[32];  /* PCI slot, e.g. 0000:03:00.0 */
    char gtfreq[128];
    int vendor;
    /* energy -> power */
    double prev_energy_uj;
    int64_t prev_energy_ns;
    int have_energy;
    /* fdinfo totals of this tick */
    double busy_pct;
    int have_busy;
    gp_dev_proc procs[GP_MAX_PROCS];
    int nprocs;
} sysfs_card;

typedef struct client {
    char pdev[32];
    long id;
    int pid;
    double engine_ns[8]; /* per engine class */
    char engine[8][16];
    double capacity[8];
    int nengine;
    double mem_bytes;
    int have_mem;
    unsigned gen;
} client;

typedef struct sysfs_state {
    const char *root;
    sysfs_card card[GP_MAX_DEVS];
    int ncard;
    int want_fdinfo;
    client prev[MAX_CLIENTS], cur[MAX_CLIENTS];
    int nprev, ncur;
    int64_t prev_ns;
} sysfs_state;

static int readf(const sysfs_state *st, const char *dir, const char *file, char *buf, size_t n)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    return gp_backend_read_file(st->root, path, buf, n);
}

static int readnum(const sysfs_state *st, const char *dir, const char *file, double *v)
{
    char buf[64], *end;
    if (readf(st, dir, file, buf, sizeof buf) <= 0) return 0;
    *v = strtod(buf, &end);
    return end != buf;
}

static void full_path(const sysfs_state *st, const char *rel, char *out, size_t n)
{
    if (!strcmp(st->root, "/"))
        snprintf(out, n, "%s", rel);
    else
        snprintf(out, n, "%s%s", st->root, rel);
}

/* Finds the cards of supported vendors. */
static int scan_cards(sysfs_state *st)
{
    char path[512];
    full_path(st, "/sys/class/drm", path, sizeof path);
    DIR *d = opendir(path);
    if (!d) return 0;
    struct dirent *e;
    char names[GP_MAX_DEVS][64];
    int n = 0;
    while ((e = readdir(d)) && n < GP_MAX_DEVS) {
        if (strncmp(e->d_name, "card", 4) || strchr(e->d_name, '-')) continue;
        gp_backend_strcpy(names[n++], 64, e->d_name);
    }
    closedir(d);
    /* card order by number */
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && atoi(names[j - 1] + 4) > atoi(names[j] + 4); j--) {
            char t[64];
            memcpy(t, names[j], 64);
            memcpy(names[j], names[j - 1], 64);
            memcpy(names[j - 1], t, 64);
        }
    st->ncard = 0;
    for (int i = 0; i < n; i++) {
        sysfs_card *c = &st->card[st->ncard];
        memset(c, 0, sizeof *c);
        snprintf(c->dir, sizeof c->dir, "/sys/class/drm/%.20s/device", names[i]);
        char vb[32];
        if (readf(st, c->dir, "vendor", vb, sizeof vb) <= 0) continue;
        c->vendor = (int)strtol(vb, NULL, 16);
        if (c->vendor != VENDOR_AMD && c->vendor != VENDOR_INTEL) continue;
        char ue[1024];
        if (readf(st, c->dir, "uevent", ue, sizeof ue) > 0) {
            char *p = strstr(ue, "PCI_SLOT_NAME=");
            if (p) {
                p += 14;
                size_t k = strcspn(p, "\n");
                if (k >= sizeof c->pdev) k = sizeof c->pdev - 1;
                memcpy(c->pdev, p, k);
                c->pdev[k] = 0;
            }
        }
        char hw[512];
        snprintf(hw, sizeof hw, "%.400s%.64s/hwmon", strcmp(st->root, "/") ? st->root : "", c->dir);
        DIR *hd = opendir(hw);
        if (hd) {
            while ((e = readdir(hd)))
                if (!strncmp(e->d_name, "hwmon", 5)) {
                    char dir[64];
                    gp_backend_strcpy(dir, sizeof dir, c->dir);
                    snprintf(c->hwmon, sizeof c->hwmon, "%.60s/hwmon/%.20s", dir, e->d_name);
                    break;
                }
            closedir(hd);
        }
        /* Intel current GT frequency: i915 on the card, xe under the tile */
        static const char *const freq[] = {"/sys/class/drm/%.20s/gt_cur_freq_mhz",
                                           "/sys/class/drm/%.20s/device/tile0/gt0/freq0/cur_freq"};
        for (int k = 0; k < 2; k++) {
            char rel[160], buf[32];
            snprintf(rel, sizeof rel, freq[k], names[i]);
            if (gp_backend_read_file(st->root, rel, buf, sizeof buf) > 0) {
                gp_backend_strcpy(c->gtfreq, sizeof c->gtfreq, rel);
                break;
            }
        }
        st->ncard++;
    }
    return st->ncard;
}

static int sysfs_init(void **state, const gp_backend_env *env, gp_health_entry *h)
{
    *state = NULL;
    sysfs_state *st = calloc(1, sizeof *st);
    if (!st) return GP_ENOMEM;
    st->root = env->cfg->sysfs_root[0] ? env->cfg->sysfs_root : "/";
    st->want_fdinfo = env->cfg->enable_process_monitoring;
    if (!scan_cards(st)) {
        snprintf(h->reason, sizeof h->reason, "sysfs: no AMD or Intel GPU in /sys/class/drm");
        h->state = GP_HEALTH_UNAVAILABLE;
        free(st);
        return GP_ENODEV;
    }
    h->state = GP_HEALTH_OK;
    snprintf(h->reason, sizeof h->reason, "sysfs: %d AMD/Intel GPU(s)", st->ncard);
    *state = st;
    return 0;
}

static int sysfs_discover(void *state, gp_dev_info *out, int max, gp_err *err)
{
    sysfs_state *st = state;
    (void)err;
    scan_cards(st);
    int n = 0;
    for (int i = 0; i < st->ncard && n < max; i++, n++) {
        sysfs_card *c = &st->card[i];
        gp_dev_info *d = &out[n];
        memset(d, 0, sizeof *d);
        gp_backend_strcpy(d->backend, sizeof d->backend, "sysfs");
        gp_backend_strcpy(d->kind, sizeof d->kind, "gpu");
        gp_backend_strcpy(d->vendor, sizeof d->vendor, c->vendor == VENDOR_AMD ? "AMD" : "Intel");
        char buf[128];
        if (readf(st, c->dir, "product_name", buf, sizeof buf) > 0 && buf[0])
            gp_backend_strcpy(d->name, sizeof d->name, buf);
        else {
            char dev[32] = "?";
            readf(st, c->dir, "device", dev, sizeof dev);
            snprintf(d->name, sizeof d->name, "%s GPU %s", d->vendor, dev);
        }
        if (readf(st, c->dir, "unique_id", buf, sizeof buf) > 0)
            gp_backend_strcpy(d->uuid, sizeof d->uuid, buf);
        gp_backend_strcpy(d->pci_bus_id, sizeof d->pci_bus_id, c->pdev);
        char link[512], target[512];
        full_path(st, c->dir, link, sizeof link);
        strncat(link, "/driver", sizeof link - strlen(link) - 1);
        ssize_t k = readlink(link, target, sizeof target - 1);
        if (k > 0) {
            target[k] = 0;
            const char *base = strrchr(target, '/');
            gp_backend_strcpy(d->platform, sizeof d->platform, base ? base + 1 : target);
            char mod[160];
            snprintf(mod, sizeof mod, "/sys/module/%s/version", d->platform);
            if (gp_backend_read_file(st->root, mod, buf, sizeof buf) > 0)
                gp_backend_strcpy(d->driver_version, sizeof d->driver_version, buf);
        }
        d->present = 1;
    }
    return n;
}

/* Parses one fdinfo file into c; returns 1 when it is a DRM client. */
static int parse_fdinfo(const char *text, client *c)
{
    memset(c, 0, sizeof *c);
    c->id = -1;
    for (const char *p = text; p && *p;) {
        const char *nl = strchr(p, '\n');
        char line[256];
        size_t k = nl ? (size_t)(nl - p) : strlen(p);
        if (k >= sizeof line) k = sizeof line - 1;
        memcpy(line, p, k);
        line[k] = 0;
        p = nl ? nl + 1 : NULL;
        char *colon = strchr(line, ':');
        if (!colon || strncmp(line, "drm-", 4)) continue;
        *colon = 0;
        const char *key = line + 4, *val = colon + 1;
        while (*val == ' ' || *val == '\t') val++;
        if (!strcmp(key, "pdev"))
            gp_backend_strcpy(c->pdev, sizeof c->pdev, val);
        else if (!strcmp(key, "client-id"))
            c->id = strtol(val, NULL, 10);
        else if (!strncmp(key, "engine-capacity-", 16)) {
            for (int i = 0; i < c->nengine; i++)
                if (!strcmp(c->engine[i], key + 16)) c->capacity[i] = strtod(val, NULL);
        } else if (!strncmp(key, "engine-", 7) && c->nengine < 8) {
            gp_backend_strcpy(c->engine[c->nengine], 16, key + 7);
            c->engine_ns[c->nengine] = strtod(val, NULL);
            c->capacity[c->nengine] = 1;
            c->nengine++;
        } else if (!strncmp(key, "memory-vram", 11) || !strncmp(key, "total-vram", 10) ||
                   !strncmp(key, "total-local", 11)) {
            char *end;
            double v = strtod(val, &end);
            while (*end == ' ') end++;
            if (!strncmp(end, "KiB", 3))
                v *= 1024;
            else if (!strncmp(end, "MiB", 3))
                v *= 1024 * 1024;
            if (!c->have_mem || v > c->mem_bytes) c->mem_bytes = v;
            c->have_mem = 1;
        }
    }
    /* capacity lines may come before the engine lines: re-read them */
    for (const char *p = strstr(text, "drm-engine-capacity-"); p;
         p = strstr(p + 1, "drm-engine-capacity-")) {
        char name[16];
        const char *q = p + 20;
        size_t k = strcspn(q, ":");
        if (k >= sizeof name) continue;
        memcpy(name, q, k);
        name[k] = 0;
        for (int i = 0; i < c->nengine; i++)
            if (!strcmp(c->engine[i], name)) c->capacity[i] = strtod(q + k + 1, NULL);
    }
    return c->pdev[0] && c->id >= 0;
}

/* Scans /proc/PID/fdinfo of every fd that points at a DRM node. */
static void scan_fdinfo(sysfs_state *st)
{
    st->ncur = 0;
    char procdir[512];
    full_path(st, "/proc", procdir, sizeof procdir);
    DIR *pd = opendir(procdir);
    if (!pd) return;
    struct dirent *pe;
    while ((pe = readdir(pd))) {
        char *end;
        long pid = strtol(pe->d_name, &end, 10);
        if (*end || pid <= 0) continue;
        char fddir[600];
        snprintf(fddir, sizeof fddir, "%s/%ld/fd", procdir, pid);
        DIR *fd = opendir(fddir);
        if (!fd) continue;
        struct dirent *fe;
        while ((fe = readdir(fd)) && st->ncur < MAX_CLIENTS) {
            if (fe->d_name[0] == '.') continue;
            char link[900], target[256];
            snprintf(link, sizeof link, "%s/%.64s", fddir, fe->d_name);
            ssize_t k = readlink(link, target, sizeof target - 1);
            if (k <= 0) continue;
            target[k] = 0;
            if (strncmp(target, "/dev/dri/", 9)) continue;
            char rel[128], text[4096];
            snprintf(rel, sizeof rel, "/proc/%ld/fdinfo/%.64s", pid, fe->d_name);
            if (gp_backend_read_file(st->root, rel, text, sizeof text) <= 0) continue;
            client c;
            if (!parse_fdinfo(text, &c)) continue;
            c.pid = (int)pid;
            int dup = 0; /* several fds of one client: count it once */
            for (int i = 0; i < st->ncur && !dup; i++)
                dup = st->cur[i].id == c.id && !strcmp(st->cur[i].pdev, c.pdev);
            if (!dup) st->cur[st->ncur++] = c;
        }
        closedir(fd);
    }
    closedir(pd);
}

static void sysfs_begin_tick(void *state, int64_t mono_ns)
{
    sysfs_state *st = state;
    for (int i = 0; i < st->ncard; i++) {
        st->card[i].nprocs = 0;
        st->card[i].have_busy = 0;
        st->card[i].busy_pct = 0;
    }
    if (!st->want_fdinfo) {
        int intel = 0; /* Intel needs fdinfo for its busy % */
        for (int i = 0; i < st->ncard; i++) intel |= st->card[i].vendor == VENDOR_INTEL;
        if (!intel) return;
    }
    scan_fdinfo(st);
    double dt = st->prev_ns ? (double)(mono_ns - st->prev_ns) : 0;
    for (int i = 0; i < st->ncur; i++) {
        client *c = &st->cur[i];
        sysfs_card *card = NULL;
        for (int k = 0; k < st->ncard && !card; k++)
            if (!strcmp(st->card[k].pdev, c->pdev)) card = &st->card[k];
        if (!card) continue;
        const client *p = NULL;
        for (int k = 0; k < st->nprev && !p; k++)
            if (st->prev[k].id == c->id && !strcmp(st->prev[k].pdev, c->pdev)) p = &st->prev[k];
        double util = -1;
        if (p && dt > 0)
            for (int e = 0; e < c->nengine; e++)
                for (int f = 0; f < p->nengine; f++)
                    if (!strcmp(c->engine[e], p->engine[f]) && c->engine_ns[e] >= p->engine_ns[f]) {
                        double cap = c->capacity[e] > 0 ? c->capacity[e] : 1;
                        double u = 100.0 * (c->engine_ns[e] - p->engine_ns[f]) / dt / cap;
                        if (u > util) util = u;
                    }
        if (util > 100) util = 100;
        if (util >= 0) {
            card->busy_pct += util;
            card->have_busy = 1;
        }
        /* one row per process: several clients of a process add up */
        gp_dev_proc *pr = NULL;
        for (int k = 0; k < card->nprocs && !pr; k++)
            if (card->procs[k].pid == c->pid) pr = &card->procs[k];
        if (!pr && card->nprocs < GP_MAX_PROCS) {
            pr = &card->procs[card->nprocs++];
            memset(pr, 0, sizeof *pr);
            pr->pid = c->pid;
            gp_backend_proc_name(st->root, c->pid, pr->name, sizeof pr->name);
        }
        if (!pr) continue;
        if (c->have_mem) {
            pr->mem_bytes += (int64_t)c->mem_bytes;
            pr->valid |= GP_PROC_MEM;
        }
        if (util >= 0) {
            pr->util_pct += util;
            if (pr->util_pct > 100) pr->util_pct = 100;
            pr->valid |= GP_PROC_UTIL;
        }
    }
    memcpy(st->prev, st->cur, (size_t)st->ncur * sizeof *st->cur);
    st->nprev = st->ncur;
    st->prev_ns = mono_ns;
}

/* "0: 500Mhz\n1: 1700Mhz *" -> 1700 */
static int dpm_current(const char *text, double *mhz)
{
    for (const char *p = text; p && *p;) {
        const char *nl = strchr(p, '\n');
        const char *star = strchr(p, '*');
        if (star && (!nl || star < nl)) {
            const char *c = strchr(p, ':');
            if (!c) return 0;
            *mhz = strtod(c + 1, NULL);
            return 1;
        }
        p = nl ? nl + 1 : NULL;
    }
    return 0;
}

static int sysfs_sample(void *state, int idx, int64_t mono_ns, gp_dev_sample *s, gp_dev_proc *procs,
                        int *nproc, gp_err *err)
{
    sysfs_state *st = state;
    int cap = nproc ? *nproc : 0;
    if (nproc) *nproc = 0;
    if (idx < 0 || idx >= st->ncard) return gp_err_set(err, GP_ENODEV, "sysfs: no card %d", idx);
    sysfs_card *c = &st->card[idx];
    char buf[512];
    if (readf(st, c->dir, "vendor", buf, sizeof buf) <= 0)
        return gp_err_set(err, GP_ENODEV, "sysfs: %s disappeared", c->dir);
    double v;
    if (readnum(st, c->dir, "gpu_busy_percent", &v))
        gp_sample_set(s, GP_MF_UTIL, v);
    else if (c->have_busy)
        gp_sample_set(s, GP_MF_UTIL, c->busy_pct > 100 ? 100 : c->busy_pct);
    if (readnum(st, c->dir, "mem_busy_percent", &v)) gp_sample_set(s, GP_MF_MEM_UTIL, v);
    double tot, used;
    if (readnum(st, c->dir, "mem_info_vram_total", &tot)) {
        gp_sample_set(s, GP_MF_MEM_TOTAL, tot);
        if (readnum(st, c->dir, "mem_info_vram_used", &used)) {
            gp_sample_set(s, GP_MF_MEM_USED, used);
            gp_sample_set(s, GP_MF_MEM_FREE, tot - used);
        }
    }
    if (readf(st, c->dir, "pp_dpm_sclk", buf, sizeof buf) > 0 && dpm_current(buf, &v))
        gp_sample_set(s, GP_MF_CLOCK_SM, v);
    else if (c->gtfreq[0] && gp_backend_read_file(st->root, c->gtfreq, buf, sizeof buf) > 0)
        gp_sample_set(s, GP_MF_CLOCK_SM, strtod(buf, NULL));
    if (readf(st, c->dir, "pp_dpm_mclk", buf, sizeof buf) > 0 && dpm_current(buf, &v))
        gp_sample_set(s, GP_MF_CLOCK_MEM, v);
    if (c->hwmon[0]) {
        if (readnum(st, c->hwmon, "temp1_input", &v)) gp_sample_set(s, GP_MF_TEMP, v / 1000.0);
        if (readnum(st, c->hwmon, "temp1_crit", &v))
            gp_sample_set(s, GP_MF_TEMP_SHUTDOWN, v / 1000.0);
        if (readnum(st, c->hwmon, "power1_average", &v) ||
            readnum(st, c->hwmon, "power1_input", &v))
            gp_sample_set(s, GP_MF_POWER, v / 1e6);
        if (readnum(st, c->hwmon, "power1_cap", &v)) gp_sample_set(s, GP_MF_POWER_LIMIT, v / 1e6);
        if (readnum(st, c->hwmon, "energy1_input", &v)) {
            gp_sample_set(s, GP_MF_ENERGY, v / 1e6);
            if (!gp_sample_has(s, GP_MF_POWER) && c->have_energy && mono_ns > c->prev_energy_ns &&
                v >= c->prev_energy_uj)
                gp_sample_set(s, GP_MF_POWER,
                              (v - c->prev_energy_uj) * 1e3 /
                                  (double)(mono_ns - c->prev_energy_ns));
            c->prev_energy_uj = v;
            c->prev_energy_ns = mono_ns;
            c->have_energy = 1;
        }
        double pwm, pmax = 255;
        if (readnum(st, c->hwmon, "pwm1", &pwm)) {
            readnum(st, c->hwmon, "pwm1_max", &pmax);
            if (pmax > 0) gp_sample_set(s, GP_MF_FAN, 100.0 * pwm / pmax);
        }
    }
    if (procs && nproc)
        for (int i = 0; i < c->nprocs && *nproc < cap; i++) procs[(*nproc)++] = c->procs[i];
    return 0;
}

static void sysfs_fini(void *state)
{
    free(state);
}

const gp_backend gp_backend_sysfs = {
    .name = "sysfs",
    .fallback_for = NULL,
    .is_gpu = 1,
    .init = sysfs_init,
    .discover = sysfs_discover,
    .begin_tick = sysfs_begin_tick,
    .sample = sysfs_sample,
    .fini = sysfs_fini,
};
