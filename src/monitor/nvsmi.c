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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
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

#define SMI_CAPTURE_TIMEOUT_MS 10000
#define SMI_MSG_MAX            120 /* bytes kept of nvidia-smi's message line */

/* A long-running nvidia-smi whose stdout is read without blocking. */
typedef struct smi_stream {
    pid_t pid;       /* 0: not running */
    int fd;          /* read end (non-blocking) */
    char buf[16384]; /* bytes of an incomplete line */
    size_t n;
    int skip;                        /* dropping the rest of a line longer than buf */
    char msg[SMI_MSG_MAX + 1];       /* this instance's first line that was not a row */
    char ended[128];                 /* how the last instance ended ("" while running) */
    char ended_msg[SMI_MSG_MAX + 1]; /* and its message */
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
    int asm_rows_n, asm_open;
    int asm_ignored; /* lines ignored while it was assembled */
    int gpu_ignored; /* lines of the GPU stream ignored since the last snapshot */
    int64_t snap_ns; /* when the last complete snapshot arrived (0 = none) */
    uint64_t snaps;  /* complete snapshots read */
    /* lines that are not rows of the query (messages, garbage, the rest of
     * an over-long line): ignored, counted, shown in health once they recur */
    uint64_t ignored, ignored_snaps, ignored_shown;
    char ignored_last[SMI_MSG_MAX + 1];
    gp_health_entry *health; /* the monitor's entry for this backend (init's h) */
    char health_base[256], health_set[256];
    /* compute-apps group being read (lines of the newest timestamp) */
    gp_dev_proc app_v[GP_MAX_PROCS];
    char app_uuid[GP_MAX_PROCS][96];
    int app_n;
    char app_ts[64];
    int64_t app_last_ns; /* arrival of the group's last line */
    int apps_published;  /* this stream's list was published once */
    int apps_wait_first; /* the next instance's first iteration is waited for:
                          * the first one, and after a re-discovery reset the
                          * list; a restart after an end never waits */
    pid_t reap[SMI_REAP];
} nvsmi_state;

/* Finds exe in PATH when it has no '/' (as posix_spawnp did); 0 or -1. */
static int resolve_exe(const char *exe, char *path, size_t n)
{
    if (strchr(exe, '/')) {
        if (strlen(exe) >= n || access(exe, X_OK)) return -1;
        strcpy(path, exe);
        return 0;
    }
    const char *p = getenv("PATH");
    if (!p || !*p) p = "/usr/local/bin:/usr/bin:/bin";
    while (*p) {
        size_t len = strcspn(p, ":");
        int k = snprintf(path, n, "%.*s%s%s", (int)len, p, len ? "/" : "", exe);
        if (k > 0 && (size_t)k < n && access(path, X_OK) == 0) return 0;
        p += len;
        if (*p == ':') p++;
    }
    return -1;
}

/* Starts exe with argv: stdin from /dev/null, stdout to out_fd, stderr to
 * err_fd (-1: /dev/null). The child is killed (SIGKILL) when the thread that
 * started it ends, so that no nvidia-smi outlives gpuprof, even a SIGKILLed
 * one (PR_SET_PDEATHSIG; the getppid check closes the race with a parent
 * that died before prctl). Returns the pid, or -1 (not found, fork failed). */
static pid_t smi_spawn(const char *exe, char *const *argv, int out_fd, int err_fd)
{
    char path[1024];
    if (resolve_exe(exe, path, sizeof path)) return -1;
    int ep[2]; /* the child's exec error, if any (closed by a successful exec) */
    if (pipe2(ep, O_CLOEXEC)) return -1;
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _exit(127);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        struct sigaction dfl; /* a closed pipe ends it (the fork copied gpuprof's handlers) */
        memset(&dfl, 0, sizeof dfl);
        dfl.sa_handler = SIG_DFL;
        sigaction(SIGPIPE, &dfl, NULL);
        /* copies above 2 first: with gpuprof's stdio closed a pipe may be 0..2 */
        int nul = open("/dev/null", O_RDWR | O_CLOEXEC);
        int o = fcntl(out_fd, F_DUPFD_CLOEXEC, 3);
        int e2 = fcntl(err_fd >= 0 ? err_fd : nul, F_DUPFD_CLOEXEC, 3);
        int w = fcntl(ep[1], F_DUPFD_CLOEXEC, 3);
        if (nul < 0 || o < 0 || e2 < 0 || w < 0 || dup2(nul, 0) < 0 || dup2(o, 1) < 0 ||
            dup2(e2, 2) < 0)
            _exit(127);
        execve(path, argv, environ);
        int e = errno;
        if (write(w, &e, sizeof e) < 0) _exit(127);
        _exit(127);
    }
    close(ep[1]);
    if (pid < 0) {
        close(ep[0]);
        return -1;
    }
    int e = 0;
    ssize_t k;
    while ((k = read(ep[0], &e, sizeof e)) < 0 && errno == EINTR) {
    }
    close(ep[0]);
    if (k > 0) { /* exec failed: the child exits at once */
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {
        }
        return -1;
    }
    return pid;
}

/* Copies the first non-empty line of text into msg (size n): control bytes
 * and non-ASCII become '?', at most SMI_MSG_MAX bytes ("..." when cut). */
static void first_line(const char *text, char *msg, size_t n)
{
    msg[0] = 0;
    if (!text || n < 8) return;
    while (*text == '\n' || *text == '\r' || *text == ' ' || *text == '\t') text++;
    size_t len = strcspn(text, "\r\n");
    while (len && (text[len - 1] == ' ' || text[len - 1] == '\t')) len--;
    size_t max = n - 1 < SMI_MSG_MAX ? n - 1 : SMI_MSG_MAX, k = 0;
    int cut = len > max;
    if (cut) len = max - 3;
    for (; k < len; k++) {
        unsigned char c = (unsigned char)text[k];
        msg[k] = c < 0x20 || c >= 0x7f ? '?' : (char)c;
    }
    if (cut) {
        memcpy(msg + k, "...", 3);
        k += 3;
    }
    msg[k] = 0;
}

/* Says why a one-shot query or a stream failed: rc as run_capture returns
 * it (-1 not started, -2 no answer, 128+N killed by signal N, else the exit
 * status) and nvidia-smi's first message line (may be empty). */
static void describe_failure(const char *exe, int rc, const char *msg, char *out, size_t n)
{
    if (rc == -1)
        snprintf(out, n, "nvidia-smi: %.200s not found", exe);
    else if (rc == -2)
        snprintf(out, n, "nvidia-smi: no answer within %d ms", SMI_CAPTURE_TIMEOUT_MS);
    else if (rc > 128)
        snprintf(out, n, "nvidia-smi killed by signal %d%s%s", rc - 128, msg[0] ? ": " : "", msg);
    else
        snprintf(out, n, "nvidia-smi exited with status %d%s%s", rc, msg[0] ? ": " : "", msg);
}

/* Runs exe with args, captures stdout into out (and nvidia-smi's message,
 * the first line of stderr, else of stdout, into msg when not NULL); returns
 * the exit status (128+N when killed by signal N), -1 when it could not be
 * started, -2 when it did not finish within SMI_CAPTURE_TIMEOUT_MS (it is
 * then killed). */
static int run_capture(const char *exe, const char *const *args, gp_sbuf *out, char *msg,
                       size_t msgn)
{
    char *argv[8];
    int argc = 0;
    argv[argc++] = (char *)exe;
    for (int i = 0; args[i] && argc < 7; i++) argv[argc++] = (char *)args[i];
    argv[argc] = NULL;
    if (msg) msg[0] = 0;
    int fd[2], efd[2];
    if (pipe2(fd, O_CLOEXEC)) return -1;
    if (pipe2(efd, O_CLOEXEC)) {
        close(fd[0]);
        close(fd[1]);
        return -1;
    }
    pid_t pid = smi_spawn(exe, argv, fd[1], efd[1]);
    close(fd[1]);
    close(efd[1]);
    if (pid < 0) {
        close(fd[0]);
        close(efd[0]);
        return -1;
    }
    char buf[4096];
    gp_sbuf err = {0};
    int64_t until = gp_clock_mono_ns() + SMI_CAPTURE_TIMEOUT_MS * 1000000LL;
    int timed_out = 0, open_fds = 2;
    struct pollfd pf[2] = {{fd[0], POLLIN, 0}, {efd[0], POLLIN, 0}};
    while (open_fds) {
        int64_t left = until - gp_clock_mono_ns();
        int pr = left > 0 ? poll(pf, 2, (int)((left + 999999) / 1000000)) : 0;
        if (pr < 0 && errno == EINTR) continue;
        if (pr <= 0) { /* no answer in time (or poll failed): killed */
            timed_out = 1;
            break;
        }
        for (int i = 0; i < 2; i++) {
            if (pf[i].fd < 0 || !pf[i].revents) continue;
            ssize_t k = read(pf[i].fd, buf, sizeof buf);
            if (k < 0 && errno == EINTR) continue;
            if (k <= 0) {
                pf[i].fd = -1; /* poll skips it */
                open_fds--;
            } else if (i == 0) {
                gp_sbuf_add(out, buf, (size_t)k);
            } else if (err.n < 4096) {
                gp_sbuf_add(&err, buf, (size_t)k);
            }
        }
    }
    close(fd[0]);
    close(efd[0]);
    if (timed_out) kill(pid, SIGKILL);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (msg) {
        first_line(gp_sbuf_cstr(&err), msg, msgn);
        if (!msg[0]) first_line(gp_sbuf_cstr(out), msg, msgn);
    }
    gp_sbuf_free(&err);
    if (timed_out) return -2;
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
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

/* What the one-shot queries of init met: the first failure other than "not
 * a valid field" (its description), and whether a probe got no answer. */
typedef struct smi_probe {
    char fail[256];
    int stopped;   /* a probe failed: the fields after it are not probed */
    int timed_out; /* ... because it got no answer */
} smi_probe;

/* Asks nvidia-smi whether it accepts one query field (drivers without
 * --help-query-gpu): 1 known, 0 not. After a probe that failed other than
 * with "not a valid field" (no answer, the driver's error) no more are run:
 * each would fail the same way (a hung one after 10 s), and the fields left
 * are unknown. */
static int probe_field(const char *exe, const char *name, smi_probe *pr)
{
    if (pr->stopped) return 0;
    char arg[128], msg[SMI_MSG_MAX + 1];
    snprintf(arg, sizeof arg, "--query-gpu=%s", name);
    const char *args[] = {arg, "--format=csv,noheader,nounits", NULL};
    gp_sbuf out = {0};
    int rc = run_capture(exe, args, &out, msg, sizeof msg);
    int invalid =
        strstr(gp_sbuf_cstr(&out), "not a valid field") || strstr(msg, "not a valid field");
    int ok = rc == 0 && out.n && !invalid;
    if (!ok && !invalid) {
        pr->stopped = 1;
        pr->timed_out = rc == -2;
        if (rc == 0) gp_backend_strcpy(msg, sizeof msg, "no output");
        describe_failure(exe, rc, msg, pr->fail, sizeof pr->fail);
    }
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
    char msg[SMI_MSG_MAX + 1];
    int rc = run_capture(st->exe, hargs, &help, msg, sizeof msg);
    if (rc == -1 || rc == -2) { /* not there, or hung: probes would hang as long */
        describe_failure(st->exe, rc, msg, h->reason, sizeof h->reason);
        if (rc == -2)
            gp_backend_strcpy(h->reason + strlen(h->reason), sizeof h->reason - strlen(h->reason),
                              " (--help-query-gpu)");
        gp_sbuf_free(&help);
        free(st);
        h->state = GP_HEALTH_UNAVAILABLE;
        return rc == -1 ? GP_ENOTFOUND : GP_ENODEV;
    }
    const char *ht = gp_sbuf_cstr(&help);
    int have_help = rc == 0 && strstr(ht, "\"memory.total\"") != NULL;
    smi_probe pr = {{0}, 0, 0};
    char help_fail[256] = "";
    if (rc != 0) describe_failure(st->exe, rc, msg, help_fail, sizeof help_fail);
    const char *mode = getenv("GPUPROF_NVIDIA_SMI_MODE");
    st->per_tick = mode && !strcmp(mode, "per-tick");
    st->gpu.fd = st->apps.fd = -1;
    int64_t ms = env->interval_ns / 1000000;
    st->lms = ms < 10 ? 10 : ms > 60000 ? 60000 : ms;
    st->apps_wait_first = 1;
    snprintf(st->lms_arg, sizeof st->lms_arg, "%lld", (long long)st->lms);
    /* the timestamp column tells one iteration of the stream from the next */
    st->has_ts = have_help ? field_known(ht, "timestamp") : probe_field(st->exe, "timestamp", &pr);
    size_t len = (size_t)snprintf(st->query, sizeof st->query, "--query-gpu=%sindex,uuid",
                                  st->has_ts ? "timestamp," : "");
    for (size_t i = 0; i < NSMI; i++) {
        st->use[i] = -1;
        for (int k = 0; k < 2 && smi_fields[i].names[k]; k++) {
            const char *nm = smi_fields[i].names[k];
            if (have_help ? field_known(ht, nm) : probe_field(st->exe, nm, &pr)) {
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
    if (st->nq == 0 && !pr.timed_out && (pr.fail[0] || help_fail[0])) {
        /* every query failed (e.g. "NVIDIA-SMI has failed because it
         * couldn't communicate with the NVIDIA driver"): say so */
        gp_backend_strcpy(h->reason, sizeof h->reason, pr.fail[0] ? pr.fail : help_fail);
        free(st);
        h->state = GP_HEALTH_UNAVAILABLE;
        return GP_ENODEV;
    }
    if (st->procs_enabled && !st->per_tick && !pr.timed_out) {
        gp_sbuf ah = {0};
        const char *aargs[] = {"--help-query-compute-apps", NULL};
        st->apps_stream = run_capture(st->exe, aargs, &ah, NULL, 0) == 0 &&
                          field_known(gp_sbuf_cstr(&ah), "timestamp");
        gp_sbuf_free(&ah);
        snprintf(st->apps_query, sizeof st->apps_query,
                 "--query-compute-apps=timestamp,gpu_uuid,pid,used_memory");
    }
    h->state = GP_HEALTH_OK;
    snprintf(h->reason, sizeof h->reason, "nvidia-smi: %d of %d fields known%s, %s", st->nq,
             (int)NSMI,
             pr.timed_out ? " (probed one by one; no answer within 10000 ms: the rest not probed)"
             : pr.stopped ? " (probed one by one; a probe failed: the rest not probed)"
             : !have_help ? " (probed one by one)"
                          : "",
             st->per_tick ? "one process per tick" : "streamed (-lms)");
    st->health = h;
    *state = st;
    return 0;
}

static int nvsmi_discover(void *state, gp_dev_info *out, int max, gp_err *err)
{
    nvsmi_state *st = state;
    const char *args[] = {"--query-gpu=index,name,uuid,pci.bus_id,driver_version",
                          "--format=csv,noheader,nounits", NULL};
    gp_sbuf o = {0};
    char msg[SMI_MSG_MAX + 1];
    int rc = run_capture(st->exe, args, &o, msg, sizeof msg);
    int n = 0, changed = 0;
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
        if (n >= st->ndev || strcmp(st->uuid[n], c[2])) changed = 1;
        gp_backend_strcpy(st->uuid[n], sizeof st->uuid[n], c[2]);
        n++;
    }
    gp_sbuf_free(&o);
    if (rc != 0 && n == 0) { /* e.g. the driver's "NVIDIA-SMI has failed ..." */
        char why[256];
        describe_failure(st->exe, rc, msg, why, sizeof why);
        return gp_err_set(err, GP_ENODEV, "%s", why);
    }
    if (n != st->ndev) changed = 1;
    st->ndev = n;
    if (changed && !st->per_tick && st->gpu.starts) {
        /* the GPUs changed (one appeared, went or moved): a running stream
         * keeps the set it started with, and its snapshot the old indices,
         * so both streams are restarted at the next tick, whose snapshot
         * is then the new stream's first */
        stream_stop(st, &st->gpu);
        stream_stop(st, &st->apps);
        st->gpu.next_start_ns = st->apps.next_start_ns = 0;
        st->apps_wait_first = 1;
        st->asm_open = 0;
        st->snap_ns = 0;
        for (int i = 0; i < GP_MAX_DEVS; i++) st->rows[i].present = 0;
    }
    return n;
}

static void read_procs(nvsmi_state *st)
{
    st->nprocs = 0;
    const char *args[] = {"--query-compute-apps=gpu_uuid,pid,used_memory",
                          "--format=csv,noheader,nounits", NULL};
    gp_sbuf o = {0};
    if (run_capture(st->exe, args, &o, NULL, 0) != 0) {
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
    s->skip = 0;
}

/* The stream's output ended: the process is reaped (it exits as it closes
 * its output; waited for up to 20 ms, else killed) and how it ended is kept
 * in s->ended with its first message line, e.g. "nvidia-smi exited with
 * status 9: NVIDIA-SMI has failed because ...". */
static void stream_end(nvsmi_state *st, smi_stream *s)
{
    int status = 0, rc = -3;
    for (int i = 0; i < 20 && s->pid > 0; i++) {
        pid_t r = waitpid(s->pid, &status, WNOHANG);
        if (r == s->pid) {
            rc = WIFEXITED(status)     ? WEXITSTATUS(status)
                 : WIFSIGNALED(status) ? 128 + WTERMSIG(status)
                                       : 128;
            s->pid = 0; /* reaped: stream_stop neither kills nor waits */
            break;
        }
        if (r < 0) break;
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    if (rc == -3)
        gp_backend_strcpy(s->ended, sizeof s->ended, "nvidia-smi closed its output");
    else
        describe_failure(st->exe, rc, "", s->ended, sizeof s->ended);
    gp_backend_strcpy(s->ended_msg, sizeof s->ended_msg, s->msg);
    stream_stop(st, s);
}

/* Starts `exe query --format=csv,noheader,nounits -lms N`; 0 or -1. */
static int stream_start(nvsmi_state *st, smi_stream *s, const char *query, int64_t now)
{
    char *argv[] = {st->exe, (char *)query, "--format=csv,noheader,nounits",
                    "-lms",  st->lms_arg,   NULL};
    int fd[2];
    s->next_start_ns = now + 1000000000LL; /* at most one start a second */
    if (pipe2(fd, O_CLOEXEC)) return -1;
    pid_t pid = smi_spawn(st->exe, argv, fd[1], -1);
    close(fd[1]);
    if (pid < 0) {
        close(fd[0]);
        return -1;
    }
    fcntl(fd[0], F_SETFL, fcntl(fd[0], F_GETFL) | O_NONBLOCK);
    s->prev_delivered = s->starts == 0 || s->delivered;
    s->pid = pid;
    s->fd = fd[0];
    s->n = 0;
    s->skip = 0;
    s->msg[0] = 0;
    s->started_ns = s->last_data_ns = now;
    s->delivered = 0;
    s->starts++;
    return 0;
}

/* One line of a stream; toolong: the line was longer than the buffer (line
 * holds a note saying so, its text is gone). */
typedef void (*line_fn)(nvsmi_state *st, char *line, int toolong, int64_t now);

/* Reads what the stream has without blocking and hands each complete line
 * to fn; a line longer than the buffer is dropped whole (its start, and its
 * rest up to the next newline) and handed over as one "too long" line.
 * Returns 0, or -1 when the stream ended (the process died). */
static int stream_read(nvsmi_state *st, smi_stream *s, line_fn fn, int64_t now)
{
    if (s->pid <= 0) return -1;
    for (;;) {
        ssize_t k = read(s->fd, s->buf + s->n, sizeof s->buf - 1 - s->n);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK) return 0;
            snprintf(s->ended, sizeof s->ended, "nvidia-smi: reading its output: %s",
                     strerror(errno));
            s->ended_msg[0] = 0;
            stream_stop(st, s);
            return -1;
        }
        if (k == 0) {
            stream_end(st, s);
            return -1;
        }
        s->n += (size_t)k;
        s->last_data_ns = now;
        if (s->skip) { /* the rest of an over-long line */
            char *nl = memchr(s->buf, '\n', s->n);
            if (!nl) {
                s->n = 0;
                continue;
            }
            s->skip = 0;
            s->n -= (size_t)(nl + 1 - s->buf);
            memmove(s->buf, nl + 1, s->n);
        }
        s->buf[s->n] = 0;
        char *p = s->buf, *nl;
        while ((nl = memchr(p, '\n', s->n - (size_t)(p - s->buf)))) {
            *nl = 0;
            fn(st, p, 0, now);
            p = nl + 1;
        }
        size_t rest = s->n - (size_t)(p - s->buf);
        if (rest == sizeof s->buf - 1) { /* a line longer than the buffer */
            char note[64];
            snprintf(note, sizeof note, "(a line longer than %zu bytes)", sizeof s->buf - 1);
            fn(st, note, 1, now);
            s->skip = 1;
            rest = 0;
        }
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
    st->asm_open = 0;
    st->snap_ns = now;
    st->snaps++;
    st->gpu.delivered = 1;
    st->gpu.ended[0] = 0;
    if (st->asm_ignored) st->ignored_snaps++;
    st->asm_ignored = 0;
    st->gpu_ignored = 0;
}

/* Counts a line that is not a row of the query and keeps its text (the
 * stream's first one is also its message, should it end). */
static void note_ignored(nvsmi_state *st, const char *line, smi_stream *s)
{
    st->ignored++;
    st->asm_ignored++;
    first_line(line, st->ignored_last, sizeof st->ignored_last);
    if (s && !s->msg[0]) gp_backend_strcpy(s->msg, sizeof s->msg, st->ignored_last);
}

/* Which discovered GPU a line of the query is a row of: its index, -2 for a
 * row of a GPU not discovered (left for re-discovery), -1 when it is no row
 * of this query (a message, garbage, a cut line): not the query's number of
 * cells, or a timestamp, index or uuid cell that is not one. Values may be
 * anything ([N/A], [Not Supported]: unknown fields of a row). The line is
 * split into c in place. */
static int row_device(const nvsmi_state *st, char *line, char **c)
{
    int lead = st->has_ts ? 3 : 2;
    if (split_csv(line, c, lead + (int)NSMI + 1) != lead + st->nq) return -1;
    int y, mo, d, h, mi, sec;
    char tail;
    if (st->has_ts &&
        (sscanf(c[0], "%4d/%2d/%2d %2d:%2d:%2d%c", &y, &mo, &d, &h, &mi, &sec, &tail) < 6 ||
         mo < 1 || mo > 12 || d < 1 || d > 31))
        return -1;
    const char *idx = c[lead - 2], *uuid = c[lead - 1];
    if (!*idx || strspn(idx, "0123456789") != strlen(idx)) return -1;
    if (!*uuid || uuid[0] == '[' || strpbrk(uuid, " \t")) return -1;
    for (int i = 0; i < st->ndev; i++)
        if (!strcmp(st->uuid[i], uuid)) return i;
    return -2;
}

/* One line of the --query-gpu stream. An iteration (snapshot) is the rows
 * of one pass over the GPUs: it ends when every discovered GPU has its row,
 * or when a GPU already in it appears again (the next pass began; a GPU
 * without a row in it, e.g. one nvidia-smi reports lost with a message, is
 * then "no longer reported"). Lines that are no row of the query (messages,
 * warnings, garbage, the rest of an over-long line) are counted and
 * ignored: they never end a snapshot nor stand for a GPU, as in per-tick
 * mode. */
static void gpu_line(nvsmi_state *st, char *line, int toolong, int64_t now)
{
    char *c[4 + NSMI], copy[SMI_MSG_MAX + 1];
    if (!*trim(line)) return; /* an empty line */
    gp_backend_strcpy(copy, sizeof copy, line);
    int dev = toolong ? -1 : row_device(st, line, c);
    if (dev == -1) {
        note_ignored(st, copy, &st->gpu);
        st->gpu_ignored++;
        return;
    }
    if (dev < 0) return;
    if (!st->asm_open || st->asm_rows[dev].present) {
        snap_finish(st, now);
        memset(st->asm_rows, 0, sizeof st->asm_rows);
        st->asm_rows_n = 0;
        st->asm_open = 1;
    }
    fill_row(st, &st->asm_rows[dev], c + (st->has_ts ? 3 : 2));
    if (++st->asm_rows_n >= st->ndev) snap_finish(st, now);
}

/* Shows the ignored lines in the health reason once they came in 3
 * iterations or more. The entry is the monitor's, which reads it under the
 * lock begin_tick runs under; a reason the monitor has changed since (a
 * lost GPU, a failed discovery) is left alone. */
static void health_note(nvsmi_state *st)
{
    gp_health_entry *h = st->health;
    if (!h) return;
    if (!st->health_set[0]) { /* the first tick: the reason as the monitor made it */
        gp_backend_strcpy(st->health_base, sizeof st->health_base, h->reason);
        gp_backend_strcpy(st->health_set, sizeof st->health_set, h->reason);
    }
    if (st->ignored_snaps < 3 || st->ignored == st->ignored_shown) return;
    if (strcmp(h->reason, st->health_set)) return;
    snprintf(h->reason, sizeof h->reason,
             "%.120s; %llu lines not rows of the query ignored (the last: %.60s)", st->health_base,
             (unsigned long long)st->ignored, st->ignored_last);
    gp_backend_strcpy(st->health_set, sizeof st->health_set, h->reason);
    st->ignored_shown = st->ignored;
}

/* One line of the --query-compute-apps stream (timestamp, gpu_uuid, pid,
 * used_memory): lines with the newest timestamp form the process list. A
 * line of another shape (a warning such as "WARNING: infoROM is corrupted
 * ...", garbage) is no row: it is ignored, as in per-tick mode, and neither
 * empties the list nor counts as a row for its timing (an iteration without
 * processes prints no row, which max(3 periods, 1 s) of silence stands
 * for). */
static void app_line(nvsmi_state *st, char *line, int toolong, int64_t now)
{
    if (toolong) return; /* no row */
    char *c[4];
    int nc = split_csv(line, c, 4);
    if (nc == 1 && !*c[0]) return;
    st->apps.delivered = 1; /* the stream answers */
    char *end;
    long pid = nc == 4 ? strtol(c[2], &end, 10) : 0;
    if (nc != 4 || *end || pid <= 0) return;
    st->app_last_ns = now;
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

/* How long the newest GPU snapshot stands for the ticks, and how long a new
 * stream's first one is waited for: max(3 s, 3 periods). */
static int64_t snap_valid_for(const nvsmi_state *st)
{
    int64_t three = 3 * st->lms * 1000000;
    return three > 3000000000LL ? three : 3000000000LL;
}

static int64_t apps_quiet(const nvsmi_state *st)
{
    int64_t q = st->lms * 1000000 / 2;
    return q > 100000000 ? 100000000 : q;
}

/* How long the newest group of process rows stands for the list: max(3
 * periods, 1 s) while a stream runs that has printed (nvidia-smi prints no
 * line for an iteration without processes; a late iteration must not look
 * empty); max(3 s, 3 periods), the GPU snapshot's bound, while the stream
 * has ended or a restarted one has printed nothing yet (a restart does not
 * wait for its first iteration, so the list it had stands meanwhile). */
static int64_t apps_valid_for(const nvsmi_state *st)
{
    int64_t three = 3 * st->lms * 1000000;
    if (st->apps.pid > 0 && st->apps.delivered) return three > 1000000000 ? three : 1000000000;
    return snap_valid_for(st);
}

/* Publishes the process list: the newest group once the stream has been
 * quiet for a while after it (an iteration is printed at once), at once
 * when the stream ended (nothing more comes); nothing when no row came for
 * apps_valid_for. Returns 0 while a group is arriving (the previous list
 * stays). */
static int apps_publish(nvsmi_state *st, int64_t now)
{
    if (st->app_n && st->apps.pid > 0 && now - st->app_last_ns < apps_quiet(st)) return 0;
    int n = st->app_n && now - st->app_last_ns < apps_valid_for(st) ? st->app_n : 0;
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
        /* a restart keeps the list published while it is young, and then
         * does not wait for the new instance's first iteration (which
         * would stall every back-end's sampling) */
        if (!(st->apps_published && st->app_n && now - st->app_last_ns < apps_valid_for(st))) {
            st->app_n = 0;
            st->app_ts[0] = 0;
            st->app_last_ns = 0;
            st->apps_published = 0;
        }
        stream_start(st, &st->apps, st->apps_query, now);
    }
    stream_read(st, &st->gpu, gpu_line, now);
    /* the first snapshot of a stream is waited for (bounded), unless the
     * previous instance never answered (then the tick does not wait again),
     * or the last snapshot is young enough to stand for this tick (a
     * restart after a stream died: waiting would stall every back-end's
     * sampling for nothing) */
    int64_t wait = snap_valid_for(st);
    int bridged = st->snaps > 0 && st->snap_ns > 0 && now - st->snap_ns < wait;
    while (st->gpu.pid > 0 && !st->gpu.delivered && st->gpu.prev_delivered && !bridged &&
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
        unsigned restarts = st->gpu.starts ? st->gpu.starts - 1 : 0;
        if (st->gpu.ended[0]) /* an instance ended since the last snapshot: how */
            snprintf(st->tick_err, sizeof st->tick_err, "%.90s (stream restarted %u times)%s%s",
                     st->gpu.ended, restarts, st->gpu.ended_msg[0] ? ": " : "", st->gpu.ended_msg);
        else if ((st->gpu.pid > 0 || st->gpu.starts) && st->gpu_ignored)
            /* it prints, but no row of the query: say what it prints */
            snprintf(st->tick_err, sizeof st->tick_err,
                     "nvidia-smi: no rows of the query for %lld ms, %d other lines ignored (the "
                     "last: %.60s) (stream restarted %u times)",
                     (long long)((now - since) / 1000000), st->gpu_ignored, st->ignored_last,
                     restarts);
        else if (st->gpu.pid > 0 || st->gpu.starts)
            snprintf(st->tick_err, sizeof st->tick_err,
                     "nvidia-smi: no output for %lld ms (stream restarted %u times)",
                     (long long)((now - since) / 1000000), restarts);
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
    if (st->apps.pid > 0 && !st->apps_published && st->apps.prev_delivered && st->apps_wait_first) {
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
    if (st->apps.pid > 0) st->apps_wait_first = 0;
    apps_publish(st, gp_clock_mono_ns());
}

/* GPUPROF_NVIDIA_SMI_MODE=per-tick: one query process per tick (and one for
 * the processes), as before streaming. */
static void tick_per_process(nvsmi_state *st)
{
    for (int i = 0; i < st->ndev; i++) st->rows[i].present = 0;
    const char *args[] = {st->query, "--format=csv,noheader,nounits", NULL};
    gp_sbuf o = {0};
    char msg[SMI_MSG_MAX + 1];
    int rc = run_capture(st->exe, args, &o, msg, sizeof msg);
    int rows = 0;
    char *save = NULL;
    for (char *line = strtok_r((char *)gp_sbuf_cstr(&o), "\n", &save); line;
         line = strtok_r(NULL, "\n", &save)) {
        char *c[4 + NSMI], copy[SMI_MSG_MAX + 1];
        if (!*trim(line)) continue;
        gp_backend_strcpy(copy, sizeof copy, line);
        int dev = row_device(st, line, c);
        if (dev == -1) { /* messages such as "GPU is lost", garbage */
            note_ignored(st, copy, NULL);
            continue;
        }
        rows++;
        if (dev >= 0) fill_row(st, &st->rows[dev], c + (st->has_ts ? 3 : 2));
    }
    gp_sbuf_free(&o);
    if (st->asm_ignored) st->ignored_snaps++;
    st->asm_ignored = 0;
    /* a failed query that printed no row fails the tick with its reason */
    st->tick_ok = rc == 0 || rows > 0;
    if (!st->tick_ok) describe_failure(st->exe, rc, msg, st->tick_err, sizeof st->tick_err);
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
    health_note(st);
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
