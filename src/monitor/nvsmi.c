/* monitor/nvsmi.c: the nvidia-smi fallback backend, used when NVML cannot be
 * (library missing, driver/library version mismatch). It probes which
 * --query-gpu fields this driver knows, then runs one CSV query per tick and
 * parses [N/A] / [Not Supported] tokens as invalid fields. */
#include "core/sbuf.h"
#include "monitor/backend.h"
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

enum { CONV_NUM, CONV_MIB, CONV_PSTATE, CONV_HEX, CONV_ENABLED };
typedef struct smi_field {
    const char *names[2]; /* preferred query name, then an older one */
    int field;            /* gp_mfield */
    int conv;
} smi_field;
static const smi_field smi_fields[] = {
    {{"utilization.gpu", NULL}, GP_MF_UTIL, CONV_NUM},
    {{"utilization.memory", NULL}, GP_MF_MEM_UTIL, CONV_NUM},
    {{"memory.total", NULL}, GP_MF_MEM_TOTAL, CONV_MIB},
    {{"memory.used", NULL}, GP_MF_MEM_USED, CONV_MIB},
    {{"memory.free", NULL}, GP_MF_MEM_FREE, CONV_MIB},
    {{"temperature.gpu", NULL}, GP_MF_TEMP, CONV_NUM},
    {{"power.draw", NULL}, GP_MF_POWER, CONV_NUM},
    {{"enforced.power.limit", "power.limit"}, GP_MF_POWER_LIMIT, CONV_NUM},
    {{"clocks.sm", NULL}, GP_MF_CLOCK_SM, CONV_NUM},
    {{"clocks.mem", NULL}, GP_MF_CLOCK_MEM, CONV_NUM},
    {{"fan.speed", NULL}, GP_MF_FAN, CONV_NUM},
    {{"pstate", NULL}, GP_MF_PSTATE, CONV_PSTATE},
    {{"clocks_event_reasons.active", "clocks_throttle_reasons.active"}, GP_MF_THROTTLE, CONV_HEX},
    {{"ecc.errors.corrected.volatile.total", NULL}, GP_MF_ECC_CORR, CONV_NUM},
    {{"ecc.errors.uncorrected.volatile.total", NULL}, GP_MF_ECC_UNCORR, CONV_NUM},
    {{"mig.mode.current", NULL}, GP_MF_MIG, CONV_ENABLED},
};
#define NSMI (sizeof smi_fields / sizeof smi_fields[0])

typedef struct smi_row {
    int present;
    gp_dev_sample s;
    char uuid[96];
} smi_row;

typedef struct nvsmi_state {
    char exe[512];
    int use[NSMI];    /* which name of smi_fields[i] is known: 0/1, -1 none */
    char query[2048]; /* index + the known dynamic fields */
    int nq;           /* dynamic fields in query */
    int qmap[NSMI];   /* position k in the query -> smi_fields index */
    int ndev;
    char uuid[GP_MAX_DEVS][96];
    smi_row rows[GP_MAX_DEVS];
    int tick_ok;
    char tick_err[256];
    int procs_enabled;
    const char *proc_root;
    gp_dev_proc procs[GP_MAX_PROCS];
    char proc_uuid[GP_MAX_PROCS][96];
    int nprocs;
} nvsmi_state;

/* Runs exe with args, captures stdout into out; returns the exit status, or
 * -1 when it could not be started. */
static int run_capture(const char *exe, const char *const *args, gp_sbuf *out)
{
    char *argv[8];
    int argc = 0;
    argv[argc++] = (char *)exe;
    for (int i = 0; args[i] && argc < 7; i++) argv[argc++] = (char *)args[i];
    argv[argc] = NULL;
    int fd[2];
    if (pipe2(fd, O_CLOEXEC)) return -1;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fd[1], 1);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    pid_t pid;
    int rc = posix_spawnp(&pid, exe, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fd[1]);
    if (rc) {
        close(fd[0]);
        return -1;
    }
    char buf[4096];
    ssize_t k;
    while ((k = read(fd[0], buf, sizeof buf)) > 0 || (k < 0 && errno == EINTR))
        if (k > 0) gp_sbuf_add(out, buf, (size_t)k);
    close(fd[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    return 128;
}

/* Trims spaces in place; returns the start. */
static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t') s++;
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r')) s[--n] = 0;
    return s;
}

/* Splits a CSV line at commas into at most max trimmed cells; returns count. */
static int split_csv(char *line, char **cells, int max)
{
    int n = 0;
    char *p = line;
    while (n < max) {
        char *c = strchr(p, ',');
        if (c) *c = 0;
        cells[n++] = trim(p);
        if (!c) break;
        p = c + 1;
    }
    return n;
}

/* Parses one nvidia-smi value; returns 1 with *v set when it is a measurement. */
static int parse_value(const char *tok, int conv, double *v)
{
    if (!*tok || tok[0] == '[' || !strcmp(tok, "N/A") || !strcmp(tok, "Unknown")) return 0;
    char *end;
    switch (conv) {
    case CONV_PSTATE:
        if (tok[0] != 'P') return 0;
        *v = strtol(tok + 1, &end, 10);
        return *end == 0 && end != tok + 1;
    case CONV_HEX:
        *v = (double)strtoull(tok, &end, 16);
        return *end == 0 && end != tok;
    case CONV_ENABLED:
        if (!strcmp(tok, "Enabled"))
            *v = 1;
        else if (!strcmp(tok, "Disabled"))
            *v = 0;
        else
            return 0;
        return 1;
    default:
        *v = strtod(tok, &end);
        if (end == tok || *trim(end)) return 0;
        if (conv == CONV_MIB) *v *= 1024.0 * 1024.0;
        return 1;
    }
}

static int field_known(const char *help, const char *name)
{
    char q[96];
    snprintf(q, sizeof q, "\"%s\"", name);
    return strstr(help, q) != NULL;
}

/* Asks nvidia-smi whether it accepts one query field (drivers without
 * --help-query-gpu). */
static int probe_field(const char *exe, const char *name)
{
    char arg[128];
    snprintf(arg, sizeof arg, "--query-gpu=%s", name);
    const char *args[] = {arg, "--format=csv,noheader,nounits", NULL};
    gp_sbuf out = {0};
    int rc = run_capture(exe, args, &out);
    int ok = rc == 0 && out.n && !strstr(gp_sbuf_cstr(&out), "not a valid field");
    gp_sbuf_free(&out);
    return ok;
}

static void nvsmi_fini(void *state)
{
    free(state);
}

static int nvsmi_init(void **state, const gp_backend_env *env, gp_health_entry *h)
{
    *state = NULL;
    nvsmi_state *st = calloc(1, sizeof *st);
    if (!st) return GP_ENOMEM;
    gp_backend_strcpy(st->exe, sizeof st->exe,
                      env->cfg->nvidia_smi[0] ? env->cfg->nvidia_smi : "nvidia-smi");
    st->procs_enabled = env->cfg->enable_process_monitoring;
    st->proc_root = env->cfg->sysfs_root[0] ? env->cfg->sysfs_root : "/";
    gp_sbuf help = {0};
    const char *hargs[] = {"--help-query-gpu", NULL};
    int rc = run_capture(st->exe, hargs, &help);
    if (rc < 0) {
        snprintf(h->reason, sizeof h->reason, "nvidia-smi: %.200s not found", st->exe);
        gp_sbuf_free(&help);
        free(st);
        h->state = GP_HEALTH_UNAVAILABLE;
        return GP_ENOTFOUND;
    }
    const char *ht = gp_sbuf_cstr(&help);
    int have_help = rc == 0 && strstr(ht, "\"memory.total\"") != NULL;
    size_t len = (size_t)snprintf(st->query, sizeof st->query, "--query-gpu=index,uuid");
    for (size_t i = 0; i < NSMI; i++) {
        st->use[i] = -1;
        for (int k = 0; k < 2 && smi_fields[i].names[k]; k++) {
            const char *nm = smi_fields[i].names[k];
            if (have_help ? field_known(ht, nm) : probe_field(st->exe, nm)) {
                st->use[i] = k;
                break;
            }
        }
        if (st->use[i] < 0) continue;
        len += (size_t)snprintf(st->query + len, sizeof st->query - len, ",%s",
                                smi_fields[i].names[st->use[i]]);
        st->qmap[st->nq++] = (int)i;
    }
    gp_sbuf_free(&help);
    h->state = GP_HEALTH_OK;
    snprintf(h->reason, sizeof h->reason, "nvidia-smi: %d of %d fields known%s", st->nq, (int)NSMI,
             have_help ? "" : " (probed one by one)");
    *state = st;
    return 0;
}

static int nvsmi_discover(void *state, gp_dev_info *out, int max, gp_err *err)
{
    nvsmi_state *st = state;
    const char *args[] = {"--query-gpu=index,name,uuid,pci.bus_id,driver_version",
                          "--format=csv,noheader,nounits", NULL};
    gp_sbuf o = {0};
    int rc = run_capture(st->exe, args, &o);
    if (rc != 0 && o.n == 0) {
        gp_sbuf_free(&o);
        return gp_err_set(err, GP_ENODEV, "nvidia-smi: exit status %d", rc);
    }
    int n = 0;
    char *save = NULL;
    for (char *line = strtok_r((char *)gp_sbuf_cstr(&o), "\n", &save);
         line && n < max && n < GP_MAX_DEVS; line = strtok_r(NULL, "\n", &save)) {
        char *c[5];
        if (split_csv(line, c, 5) != 5) continue; /* e.g. "Unable to determine ..." */
        char *end;
        strtol(c[0], &end, 10);
        if (*end || end == c[0]) continue;
        gp_dev_info *d = &out[n];
        memset(d, 0, sizeof *d);
        gp_backend_strcpy(d->backend, sizeof d->backend, "nvidia-smi");
        gp_backend_strcpy(d->kind, sizeof d->kind, "gpu");
        gp_backend_strcpy(d->vendor, sizeof d->vendor, "NVIDIA");
        gp_backend_strcpy(d->name, sizeof d->name, c[1]);
        gp_backend_strcpy(d->uuid, sizeof d->uuid, c[2]);
        gp_backend_strcpy(d->pci_bus_id, sizeof d->pci_bus_id, c[3]);
        gp_backend_strcpy(d->driver_version, sizeof d->driver_version, c[4][0] == '[' ? "" : c[4]);
        d->present = 1;
        gp_backend_strcpy(st->uuid[n], sizeof st->uuid[n], c[2]);
        n++;
    }
    gp_sbuf_free(&o);
    st->ndev = n;
    return n;
}

static void read_procs(nvsmi_state *st)
{
    st->nprocs = 0;
    const char *args[] = {"--query-compute-apps=gpu_uuid,pid,used_memory",
                          "--format=csv,noheader,nounits", NULL};
    gp_sbuf o = {0};
    if (run_capture(st->exe, args, &o) != 0) {
        gp_sbuf_free(&o);
        return;
    }
    char *save = NULL;
    for (char *line = strtok_r((char *)gp_sbuf_cstr(&o), "\n", &save);
         line && st->nprocs < GP_MAX_PROCS; line = strtok_r(NULL, "\n", &save)) {
        char *c[3];
        if (split_csv(line, c, 3) != 3) continue;
        char *end;
        long pid = strtol(c[1], &end, 10);
        if (*end || pid <= 0) continue;
        gp_dev_proc *p = &st->procs[st->nprocs];
        memset(p, 0, sizeof *p);
        p->pid = (int)pid;
        double v;
        if (parse_value(c[2], CONV_MIB, &v)) {
            p->mem_bytes = (int64_t)v;
            p->valid |= GP_PROC_MEM;
        }
        gp_backend_proc_name(st->proc_root, p->pid, p->name, sizeof p->name);
        gp_backend_strcpy(st->proc_uuid[st->nprocs], 96, c[0]);
        st->nprocs++;
    }
    gp_sbuf_free(&o);
}

static void nvsmi_begin_tick(void *state, int64_t mono_ns)
{
    nvsmi_state *st = state;
    (void)mono_ns;
    for (int i = 0; i < st->ndev; i++) st->rows[i].present = 0;
    const char *args[] = {st->query, "--format=csv,noheader,nounits", NULL};
    gp_sbuf o = {0};
    int rc = run_capture(st->exe, args, &o);
    st->tick_ok = rc >= 0;
    snprintf(st->tick_err, sizeof st->tick_err, "nvidia-smi: exit status %d", rc);
    char *save = NULL;
    for (char *line = strtok_r((char *)gp_sbuf_cstr(&o), "\n", &save); line;
         line = strtok_r(NULL, "\n", &save)) {
        char *c[2 + NSMI];
        int nc = split_csv(line, c, 2 + (int)NSMI);
        if (nc != 2 + st->nq) continue; /* messages such as "GPU is lost" */
        for (int i = 0; i < st->ndev; i++) {
            if (strcmp(st->uuid[i], c[1])) continue;
            smi_row *r = &st->rows[i];
            memset(&r->s, 0, sizeof r->s);
            r->present = 1;
            for (int k = 0; k < st->nq; k++) {
                const smi_field *f = &smi_fields[st->qmap[k]];
                double v;
                if (parse_value(c[2 + k], f->conv, &v)) gp_sample_set(&r->s, f->field, v);
            }
        }
    }
    gp_sbuf_free(&o);
    if (st->procs_enabled) read_procs(st);
}

static int nvsmi_sample(void *state, int idx, int64_t mono_ns, gp_dev_sample *s, gp_dev_proc *procs,
                        int *nproc, gp_err *err)
{
    nvsmi_state *st = state;
    (void)mono_ns;
    int cap = nproc ? *nproc : 0;
    if (nproc) *nproc = 0;
    if (idx < 0 || idx >= st->ndev) return gp_err_set(err, GP_ENODEV, "nvidia-smi: no GPU %d", idx);
    if (!st->tick_ok) return gp_err_set(err, GP_ENODEV, "%s", st->tick_err);
    if (!st->rows[idx].present)
        return gp_err_set(err, GP_ENODEV, "nvidia-smi: GPU %s no longer reported", st->uuid[idx]);
    s->valid |= st->rows[idx].s.valid;
    for (int f = 0; f < GP_MF_COUNT; f++)
        if (gp_sample_has(&st->rows[idx].s, f)) s->v[f] = st->rows[idx].s.v[f];
    if (procs && nproc)
        for (int i = 0; i < st->nprocs && *nproc < cap; i++)
            if (!strcmp(st->proc_uuid[i], st->uuid[idx])) procs[(*nproc)++] = st->procs[i];
    return 0;
}

const gp_backend gp_backend_nvsmi = {
    .name = "nvidia-smi",
    .fallback_for = "nvml",
    .is_gpu = 1,
    .init = nvsmi_init,
    .discover = nvsmi_discover,
    .begin_tick = nvsmi_begin_tick,
    .sample = nvsmi_sample,
    .fini = nvsmi_fini,
};
