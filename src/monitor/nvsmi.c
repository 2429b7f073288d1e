/* monitor/nvsmi.c: the nvidia-smi fallback backend, used when NVML cannot be
 * (library missing, driver/library version mismatch). It probes which
 * --query-gpu fields this driver knows, then keeps one
 * `nvidia-smi --query-gpu=... -lms N` running and reads its stream (and one
 * `--query-compute-apps=... -lms N` for processes), restarting a stream that
 * died or went silent; [N/A] / [Not Supported] tokens are invalid fields.
 * GPUPROF_NVIDIA_SMI_MODE=per-tick runs one query process per tick instead
 * (the former behaviour, kept as the benchmark's baseline).
 * docs/monitoring.md, "nvidia-smi fallback". */
#include "core/sbuf.h"
#include "monitor/backend.h"
#include "core/clock.h"
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
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

/* A long-running nvidia-smi whose stdout is read without blocking. */
typedef struct smi_stream {
    pid_t pid;       /* 0: not running */
    int fd;          /* read end (non-blocking) */
    char buf[16384]; /* bytes of an incomplete line */
    size_t n;
    int64_t started_ns, last_data_ns, next_start_ns;
    int delivered;      /* this instance produced a complete snapshot */
    int prev_delivered; /* the previous instance did (or this is the first) */
    unsigned starts;
} smi_stream;

#define SMI_REAP 16

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
    /* streaming (the default) */
    int per_tick;     /* GPUPROF_NVIDIA_SMI_MODE=per-tick */
    int has_ts;       /* the query starts with timestamp */
    int apps_stream;  /* compute-apps know timestamp: streamed, else per tick */
    int64_t lms;      /* the streams' period, ms */
    char lms_arg[24]; /* "N" for -lms */
    char apps_query[128];
    smi_stream gpu, apps;
    /* GPU snapshot being assembled from the stream, and the last complete one */
    smi_row asm_rows[GP_MAX_DEVS];
    char asm_ts[64];
    int asm_lines, asm_open;
    int snap_lines;  /* lines in the largest complete snapshot (>= ndev) */
    int64_t snap_ns; /* when the last complete snapshot arrived (0 = none) */
    uint64_t snaps;  /* complete snapshots read */
    /* compute-apps group being read (lines of the newest timestamp) */
    gp_dev_proc app_v[GP_MAX_PROCS];
    char app_uuid[GP_MAX_PROCS][96];
    int app_n;
    char app_ts[64];
    int64_t app_last_ns; /* arrival of the group's last line */
    int apps_published;  /* this stream's list was published once */
    pid_t reap[SMI_REAP];
} nvsmi_state;

#define SMI_CAPTURE_TIMEOUT_MS 10000

/* Runs exe with args, captures stdout into out; returns the exit status, -1
 * when it could not be started, -2 when it did not finish within
 * SMI_CAPTURE_TIMEOUT_MS (it is then killed). */
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
    ssize_t k = 0;
    int64_t until = gp_clock_mono_ns() + SMI_CAPTURE_TIMEOUT_MS * 1000000LL;
    int timed_out = 0;
    for (;;) {
        int64_t left = until - gp_clock_mono_ns();
        struct pollfd pf = {fd[0], POLLIN, 0};
        int pr = left > 0 ? poll(&pf, 1, (int)((left + 999999) / 1000000)) : 0;
        if (pr < 0 && errno == EINTR) continue;
        if (pr == 0) {
            timed_out = 1;
            break;
        }
        k = read(fd[0], buf, sizeof buf);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) break;
        gp_sbuf_add(out, buf, (size_t)k);
    }
    close(fd[0]);
    if (timed_out) kill(pid, SIGKILL);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (timed_out) return -2;
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

/* One GPU's row from the query's value cells (cells[k] is query field k);
 * a value that is absent, [N/A] or not supported stays unknown. */
static void fill_row(const nvsmi_state *st, smi_row *r, char *const *cells)
{
    memset(&r->s, 0, sizeof r->s);
    r->present = 1;
    for (int k = 0; k < st->nq; k++) {
        const smi_field *f = &smi_fields[st->qmap[k]];
        double v;
        if (parse_value(cells[k], f->conv, &v)) gp_sample_set(&r->s, f->field, v);
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

static void stream_stop(nvsmi_state *st, smi_stream *s);
static void reap_pending(nvsmi_state *st);

static void nvsmi_fini(void *state)
{
    nvsmi_state *st = state;
    if (!st) return;
    stream_stop(st, &st->gpu);
    stream_stop(st, &st->apps);
    for (int k = 0; k < 20; k++) { /* killed: reaped at once unless stuck in the driver */
        reap_pending(st);
        int left = 0;
        for (int i = 0; i < SMI_REAP; i++) left |= st->reap[i] > 0;
        if (!left) break;
        struct timespec ts = {0, 10000000};
        nanosleep(&ts, NULL);
    }
    free(st);
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
    const char *mode = getenv("GPUPROF_NVIDIA_SMI_MODE");
    st->per_tick = mode && !strcmp(mode, "per-tick");
    st->gpu.fd = st->apps.fd = -1;
    int64_t ms = env->interval_ns / 1000000;
    st->lms = ms < 10 ? 10 : ms > 60000 ? 60000 : ms;
    snprintf(st->lms_arg, sizeof st->lms_arg, "%lld", (long long)st->lms);
    /* the timestamp column tells one iteration of the stream from the next */
    st->has_ts = have_help ? field_known(ht, "timestamp") : probe_field(st->exe, "timestamp");
    size_t len = (size_t)snprintf(st->query, sizeof st->query, "--query-gpu=%sindex,uuid",
                                  st->has_ts ? "timestamp," : "");
    if (st->procs_enabled && !st->per_tick) {
        gp_sbuf ah = {0};
        const char *aargs[] = {"--help-query-compute-apps", NULL};
        st->apps_stream =
            run_capture(st->exe, aargs, &ah) == 0 && field_known(gp_sbuf_cstr(&ah), "timestamp");
        gp_sbuf_free(&ah);
        snprintf(st->apps_query, sizeof st->apps_query,
                 "--query-compute-apps=timestamp,gpu_uuid,pid,used_memory");
    }
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
    snprintf(h->reason, sizeof h->reason, "nvidia-smi: %d of %d fields known%s, %s", st->nq,
             (int)NSMI, have_help ? "" : " (probed one by one)",
             st->per_tick ? "one process per tick" : "streamed (-lms)");
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
        if (rc == -2)
            return gp_err_set(err, GP_ENODEV, "nvidia-smi: no answer within %d ms",
                              SMI_CAPTURE_TIMEOUT_MS);
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

/* ---- streaming ---- */

/* Reaps stopped streams without blocking (a process stuck in the driver is
 * retried at the next tick, never waited for). */
static void reap_pending(nvsmi_state *st)
{
    for (int i = 0; i < SMI_REAP; i++)
        if (st->reap[i] > 0 && waitpid(st->reap[i], NULL, WNOHANG) != 0) st->reap[i] = 0;
}

static void stream_stop(nvsmi_state *st, smi_stream *s)
{
    if (s->pid > 0) {
        kill(s->pid, SIGKILL);
        if (waitpid(s->pid, NULL, WNOHANG) == 0) {
            int k = 0;
            while (k < SMI_REAP && st->reap[k] > 0) k++;
            if (k < SMI_REAP) st->reap[k] = s->pid; /* else left to the process's exit */
        }
    }
    if (s->fd >= 0) close(s->fd);
    s->fd = -1;
    s->pid = 0;
    s->n = 0;
}

/* Starts `exe query --format=csv,noheader,nounits -lms N`; 0 or -1. */
static int stream_start(nvsmi_state *st, smi_stream *s, const char *query, int64_t now)
{
    char *argv[] = {st->exe, (char *)query, "--format=csv,noheader,nounits",
                    "-lms",  st->lms_arg,   NULL};
    int fd[2];
    s->next_start_ns = now + 1000000000LL; /* at most one start a second */
    if (pipe2(fd, O_CLOEXEC)) return -1;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fd[1], 1);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    pid_t pid;
    int rc = posix_spawnp(&pid, st->exe, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fd[1]);
    if (rc) {
        close(fd[0]);
        return -1;
    }
    fcntl(fd[0], F_SETFL, fcntl(fd[0], F_GETFL) | O_NONBLOCK);
    s->prev_delivered = s->starts == 0 || s->delivered;
    s->pid = pid;
    s->fd = fd[0];
    s->n = 0;
    s->started_ns = s->last_data_ns = now;
    s->delivered = 0;
    s->starts++;
    return 0;
}

typedef void (*line_fn)(nvsmi_state *st, char *line, int64_t now);

/* Reads what the stream has without blocking and hands each complete line
 * to fn. Returns 0, or -1 when the stream ended (the process died). */
static int stream_read(nvsmi_state *st, smi_stream *s, line_fn fn, int64_t now)
{
    if (s->pid <= 0) return -1;
    for (;;) {
        ssize_t k = read(s->fd, s->buf + s->n, sizeof s->buf - 1 - s->n);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : (stream_stop(st, s), -1);
        if (k == 0) {
            stream_stop(st, s);
            return -1;
        }
        s->n += (size_t)k;
        s->last_data_ns = now;
        s->buf[s->n] = 0;
        char *p = s->buf, *nl;
        while ((nl = memchr(p, '\n', s->n - (size_t)(p - s->buf)))) {
            *nl = 0;
            fn(st, p, now);
            p = nl + 1;
        }
        size_t rest = s->n - (size_t)(p - s->buf);
        if (rest == sizeof s->buf - 1) rest = 0; /* a line longer than the buffer: dropped */
        memmove(s->buf, p, rest);
        s->n = rest;
    }
}

/* Waits (poll) up to until_ns for the stream to have data. */
static void stream_poll(smi_stream *s, int64_t until_ns)
{
    int64_t left = until_ns - gp_clock_mono_ns();
    if (s->pid <= 0 || left <= 0) return;
    struct pollfd pf = {s->fd, POLLIN, 0};
    int ms = (int)((left + 999999) / 1000000);
    while (poll(&pf, 1, ms) < 0 && errno == EINTR) {
    }
}

static void snap_finish(nvsmi_state *st, int64_t now)
{
    if (!st->asm_open) return;
    memcpy(st->rows, st->asm_rows, sizeof st->rows);
    if (st->asm_lines > st->snap_lines) st->snap_lines = st->asm_lines;
    st->asm_open = 0;
    st->snap_ns = now;
    st->snaps++;
    st->gpu.delivered = 1;
}

/* One line of the --query-gpu stream: a row of values, or a message such as
 * "Unable to determine the device handle for GPU...: GPU is lost" standing
 * for a GPU in that iteration. An iteration (snapshot) ends when it has as
 * many lines as the largest one before (at least the discovered GPUs), or
 * when a line of the next one arrives (a new timestamp, or a GPU again). */
static void gpu_line(nvsmi_state *st, char *line, int64_t now)
{
    char *c[3 + NSMI];
    int lead = st->has_ts ? 3 : 2;
    int nc = split_csv(line, c, lead + (int)NSMI);
    if (nc == 1 && !*c[0]) return; /* an empty line */
    int row = nc == lead + st->nq;
    const char *ts = row && st->has_ts ? c[0] : NULL;
    const char *uuid = row ? c[lead - 1] : NULL;
    int dev = -1;
    for (int i = 0; uuid && i < st->ndev; i++)
        if (!strcmp(st->uuid[i], uuid)) dev = i;
    int next = !st->asm_open || (ts && st->asm_ts[0] && strcmp(ts, st->asm_ts)) ||
               (dev >= 0 && st->asm_rows[dev].present);
    if (next) {
        snap_finish(st, now);
        memset(st->asm_rows, 0, sizeof st->asm_rows);
        st->asm_ts[0] = 0;
        st->asm_lines = 0;
        st->asm_open = 1;
    }
    if (ts && !st->asm_ts[0]) gp_backend_strcpy(st->asm_ts, sizeof st->asm_ts, ts);
    st->asm_lines++;
    if (dev >= 0) {
        fill_row(st, &st->asm_rows[dev], c + lead);
    }
    int want = st->snap_lines > st->ndev ? st->snap_lines : st->ndev;
    if (st->asm_lines >= want) snap_finish(st, now);
}

/* One line of the --query-compute-apps stream (timestamp, gpu_uuid, pid,
 * used_memory): lines with the newest timestamp form the process list; a
 * line of another shape (e.g. "No running processes found") empties it. */
static void app_line(nvsmi_state *st, char *line, int64_t now)
{
    char *c[4];
    int nc = split_csv(line, c, 4);
    if (nc == 1 && !*c[0]) return;
    st->app_last_ns = now;
    st->apps.delivered = 1; /* the stream answers */
    char *end;
    long pid = nc == 4 ? strtol(c[2], &end, 10) : 0;
    if (nc != 4 || *end || pid <= 0) {
        st->app_n = 0;
        st->app_ts[0] = 0;
        return;
    }
    if (strcmp(c[0], st->app_ts)) { /* a new iteration */
        st->app_n = 0;
        gp_backend_strcpy(st->app_ts, sizeof st->app_ts, c[0]);
    }
    if (st->app_n >= GP_MAX_PROCS) return;
    gp_dev_proc *p = &st->app_v[st->app_n];
    memset(p, 0, sizeof *p);
    p->pid = (int)pid;
    double v;
    if (parse_value(c[3], CONV_MIB, &v)) {
        p->mem_bytes = (int64_t)v;
        p->valid |= GP_PROC_MEM;
    }
    gp_backend_strcpy(st->app_uuid[st->app_n], 96, c[1]);
    st->app_n++;
}

static int64_t apps_quiet(const nvsmi_state *st)
{
    int64_t q = st->lms * 1000000 / 2;
    return q > 100000000 ? 100000000 : q;
}

/* Publishes the process list: the newest group once the stream has been
 * quiet for a while after it (an iteration is printed at once); nothing
 * when no line came for max(3 periods, 1 s) (nvidia-smi prints no line for
 * an iteration without processes; a late iteration must not look empty). Returns 0 while a group is
 * arriving (the previous list stays). */
static int apps_publish(nvsmi_state *st, int64_t now)
{
    if (st->app_n && now - st->app_last_ns < apps_quiet(st)) return 0;
    int64_t empty_after = 3 * st->lms * 1000000 > 1000000000 ? 3 * st->lms * 1000000 : 1000000000;
    int n = st->app_n && now - st->app_last_ns < empty_after ? st->app_n : 0;
    st->nprocs = 0;
    for (int i = 0; i < n; i++) {
        st->procs[i] = st->app_v[i];
        gp_backend_proc_name(st->proc_root, st->procs[i].pid, st->procs[i].name,
                             sizeof st->procs[i].name);
        gp_backend_strcpy(st->proc_uuid[i], 96, st->app_uuid[i]);
        st->nprocs++;
    }
    st->apps_published = 1;
    return 1;
}

static void tick_stream(nvsmi_state *st)
{
    int64_t now = gp_clock_mono_ns();
    reap_pending(st);
    if (st->gpu.pid <= 0 && now >= st->gpu.next_start_ns) {
        st->asm_open = 0; /* a dead stream's partial snapshot is dropped */
        stream_start(st, &st->gpu, st->query, now);
    }
    /* a compute-apps stream silent for a minute is restarted: silence is
     * also what "no process" looks like, so only rarely */
    int64_t alast = st->app_last_ns > st->apps.started_ns ? st->app_last_ns : st->apps.started_ns;
    if (st->apps.pid > 0 && now - alast >= 60000000000LL) stream_stop(st, &st->apps);
    int apps = st->procs_enabled && st->apps_stream;
    if (apps && st->apps.pid <= 0 && now >= st->apps.next_start_ns) { /* both start together */
        st->app_n = 0;
        st->app_ts[0] = 0;
        st->app_last_ns = 0;
        st->apps_published = 0;
        stream_start(st, &st->apps, st->apps_query, now);
    }
    stream_read(st, &st->gpu, gpu_line, now);
    /* the first snapshot of a stream is waited for (bounded), unless the
     * previous instance never answered: then the tick does not wait again */
    int64_t wait = 3000000000LL > 3 * st->lms * 1000000 ? 3000000000LL : 3 * st->lms * 1000000;
    while (st->gpu.pid > 0 && !st->gpu.delivered && st->gpu.prev_delivered &&
           (now = gp_clock_mono_ns()) < st->gpu.started_ns + wait) {
        stream_poll(&st->gpu, st->gpu.started_ns + wait);
        stream_read(st, &st->gpu, gpu_line, gp_clock_mono_ns());
    }
    now = gp_clock_mono_ns();
    int64_t stale = wait; /* no complete snapshot for this long: restart */
    int64_t since = st->snap_ns > st->gpu.started_ns ? st->snap_ns : st->gpu.started_ns;
    if (st->gpu.pid > 0 && now - since >= stale) {
        stream_stop(st, &st->gpu);
        st->gpu.delivered = 0;
        st->gpu.next_start_ns = now; /* restart at the next tick */
    }
    /* rows hold the last complete snapshot: used while it is younger than
     * `stale` (a restarted stream takes over without a gap) */
    st->tick_ok = st->snaps > 0 && now - st->snap_ns < stale;
    if (!st->tick_ok) {
        for (int i = 0; i < st->ndev; i++) st->rows[i].present = 0;
        if (st->gpu.pid > 0 || st->gpu.starts)
            snprintf(st->tick_err, sizeof st->tick_err,
                     "nvidia-smi: no output for %lld ms (stream restarted %u times)",
                     (long long)((now - since) / 1000000), st->gpu.starts ? st->gpu.starts - 1 : 0);
        else
            snprintf(st->tick_err, sizeof st->tick_err, "nvidia-smi: %.200s could not be started",
                     st->exe);
    }
    if (!st->procs_enabled) return;
    if (!st->apps_stream) {
        read_procs(st);
        return;
    }
    stream_read(st, &st->apps, app_line, now);
    /* a new stream's first iteration is waited for up to max(1 s, twice
     * what the GPU stream took for its first snapshot) (both start
     * together), unless the previous instance never printed */
    if (st->apps.pid > 0 && !st->apps_published && st->apps.prev_delivered) {
        int64_t lat = st->gpu.delivered && st->snap_ns > st->gpu.started_ns
                          ? st->snap_ns - st->gpu.started_ns
                          : 0;
        int64_t span = 2 * lat + apps_quiet(st);
        if (span < 1000000000) span = 1000000000; /* no line yet may mean no process */
        int64_t until = st->apps.started_ns + span;
        if (until > st->apps.started_ns + wait) until = st->apps.started_ns + wait;
        for (int64_t t = gp_clock_mono_ns(); st->apps.pid > 0 && t < until;
             t = gp_clock_mono_ns()) {
            if (st->app_n && t - st->app_last_ns >= apps_quiet(st)) break;
            int64_t step = t + 10000000;
            stream_poll(&st->apps, step < until ? step : until);
            stream_read(st, &st->apps, app_line, gp_clock_mono_ns());
        }
    }
    if (!apps_publish(st, gp_clock_mono_ns()) && st->apps.pid <= 0) st->nprocs = 0;
}

/* GPUPROF_NVIDIA_SMI_MODE=per-tick: one query process per tick (and one for
 * the processes), as before streaming. */
static void tick_per_process(nvsmi_state *st)
{
    for (int i = 0; i < st->ndev; i++) st->rows[i].present = 0;
    const char *args[] = {st->query, "--format=csv,noheader,nounits", NULL};
    gp_sbuf o = {0};
    int rc = run_capture(st->exe, args, &o);
    st->tick_ok = rc >= 0;
    if (rc == -2)
        snprintf(st->tick_err, sizeof st->tick_err, "nvidia-smi: no answer within %d ms",
                 SMI_CAPTURE_TIMEOUT_MS);
    else
        snprintf(st->tick_err, sizeof st->tick_err, "nvidia-smi: exit status %d", rc);
    char *save = NULL;
    for (char *line = strtok_r((char *)gp_sbuf_cstr(&o), "\n", &save); line;
         line = strtok_r(NULL, "\n", &save)) {
        char *c[3 + NSMI];
        int lead = st->has_ts ? 3 : 2;
        int nc = split_csv(line, c, lead + (int)NSMI);
        if (nc != lead + st->nq) continue; /* messages such as "GPU is lost" */
        for (int i = 0; i < st->ndev; i++) {
            if (strcmp(st->uuid[i], c[lead - 1])) continue;
            fill_row(st, &st->rows[i], c + lead);
        }
    }
    gp_sbuf_free(&o);
    if (st->procs_enabled) read_procs(st);
}

static void nvsmi_begin_tick(void *state, int64_t mono_ns)
{
    nvsmi_state *st = state;
    (void)mono_ns;
    if (st->per_tick)
        tick_per_process(st);
    else
        tick_stream(st);
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
