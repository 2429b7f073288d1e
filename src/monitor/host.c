/* monitor/host.c: the host backend: one "host" device with CPU utilization
 * (from /proc/stat deltas), RAM (MemTotal - MemAvailable) and load averages.
 * The /proc root is configurable so that tests can use a fake tree. */
#include "monitor/backend.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct host_state {
    const char *root;
    unsigned long long prev_busy, prev_total;
    int have_prev;
} host_state;

static int host_init(void **state, const gp_backend_env *env, gp_health_entry *h)
{
    host_state *st = calloc(1, sizeof *st);
    if (!st) return GP_ENOMEM;
    st->root = env->cfg->sysfs_root[0] ? env->cfg->sysfs_root : "/";
    char buf[256];
    if (gp_backend_read_file(st->root, "/proc/loadavg", buf, sizeof buf) < 0) {
        snprintf(h->reason, sizeof h->reason, "host: %s/proc not readable", st->root);
        h->state = GP_HEALTH_UNAVAILABLE;
        free(st);
        *state = NULL;
        return GP_ENOTFOUND;
    }
    h->state = GP_HEALTH_OK;
    snprintf(h->reason, sizeof h->reason, "host: /proc");
    *state = st;
    return 0;
}

static int host_discover(void *state, gp_dev_info *out, int max, gp_err *err)
{
    host_state *st = state;
    (void)err;
    if (max < 1) return 0;
    gp_dev_info *d = &out[0];
    memset(d, 0, sizeof *d);
    gp_backend_strcpy(d->backend, sizeof d->backend, "host");
    gp_backend_strcpy(d->kind, sizeof d->kind, "host");
    d->present = 1;
    enum { CPUINFO_MAX = 1 << 20 };
    char *buf = malloc(CPUINFO_MAX);
    int n = buf ? gp_backend_read_file(st->root, "/proc/cpuinfo", buf, CPUINFO_MAX) : -1;
    gp_backend_strcpy(d->name, sizeof d->name, "CPU");
    int cpus = 0;
    for (char *p = n > 0 ? buf : NULL; p && *p;) {
        char *nl = strchr(p, '\n');
        if (nl) *nl = 0;
        if (!strncmp(p, "processor", 9)) cpus++;
        if (!strncmp(p, "model name", 10) && !strcmp(d->name, "CPU")) {
            char *c = strchr(p, ':');
            if (c) gp_backend_strcpy(d->name, sizeof d->name, c + 2);
        }
        if (!strncmp(p, "vendor_id", 9) && !d->vendor[0]) {
            char *c = strchr(p, ':');
            if (c) gp_backend_strcpy(d->vendor, sizeof d->vendor, c + 2);
        }
        p = nl ? nl + 1 : NULL;
    }
    free(buf);
    d->compute_units = cpus ? cpus : (int)sysconf(_SC_NPROCESSORS_ONLN);
    return 1;
}

/* Reads "MemTotal:  123 kB"-style entries. */
static int meminfo(const char *text, const char *key, double *bytes)
{
    const char *p = strstr(text, key);
    if (!p) return 0;
    p += strlen(key);
    char *end;
    double kb = strtod(p, &end);
    if (end == p) return 0;
    *bytes = kb * 1024.0;
    return 1;
}

static int host_sample(void *state, int idx, int64_t mono_ns, gp_dev_sample *s, gp_dev_proc *procs,
                       int *nproc, gp_err *err)
{
    host_state *st = state;
    (void)mono_ns, (void)procs, (void)err, (void)idx;
    if (nproc) *nproc = 0;
    char buf[4096];
    if (gp_backend_read_file(st->root, "/proc/stat", buf, sizeof buf) > 0 &&
        !strncmp(buf, "cpu ", 4)) {
        unsigned long long v[10] = {0};
        int k = sscanf(buf + 4, "%llu %llu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1],
                       &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9]);
        if (k >= 4) {
            /* guest time is already counted in user/nice */
            unsigned long long total = 0, idle = v[3] + (k > 4 ? v[4] : 0);
            for (int i = 0; i < k && i < 8; i++) total += v[i];
            unsigned long long busy = total - idle;
            if (st->have_prev && total > st->prev_total && busy >= st->prev_busy)
                gp_sample_set(s, GP_MF_UTIL,
                              100.0 * (double)(busy - st->prev_busy) /
                                  (double)(total - st->prev_total));
            st->prev_busy = busy;
            st->prev_total = total;
            st->have_prev = 1;
        }
    }
    if (gp_backend_read_file(st->root, "/proc/meminfo", buf, sizeof buf) > 0) {
        double tot, avail;
        if (meminfo(buf, "MemTotal:", &tot)) {
            gp_sample_set(s, GP_MF_MEM_TOTAL, tot);
            if (meminfo(buf, "MemAvailable:", &avail)) {
                gp_sample_set(s, GP_MF_MEM_FREE, avail);
                gp_sample_set(s, GP_MF_MEM_USED, tot - avail);
            }
        }
    }
    if (gp_backend_read_file(st->root, "/proc/loadavg", buf, sizeof buf) > 0) {
        double a, b, c;
        if (sscanf(buf, "%lf %lf %lf", &a, &b, &c) == 3) {
            gp_sample_set(s, GP_MF_LOAD1, a);
            gp_sample_set(s, GP_MF_LOAD5, b);
            gp_sample_set(s, GP_MF_LOAD15, c);
        }
    }
    return 0;
}

static void host_fini(void *state)
{
    free(state);
}

const gp_backend gp_backend_host = {
    .name = "host",
    .fallback_for = NULL,
    .is_gpu = 0,
    .init = host_init,
    .discover = host_discover,
    .begin_tick = NULL,
    .sample = host_sample,
    .fini = host_fini,
};
