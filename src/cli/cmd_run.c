/* cli/cmd_run.c: `gpuprof run -- CMD ARGS...` records an unmodified program
 * (and the children it starts) into the run store through the OpenCL layer
 * and the CUPTI/NVTX injection library, then prints its summary; also
 * `gpuprof runs`, `gpuprof sql` and `gpuprof export` on the store. */
#include "cli/cli.h"
#include "cli/mon_common.h"
#include "core/redact.h"
#include "report/runs.h"
#include "render/html.h"
#include "report/session_result.h"
#include "report/summary.h"
#include "analysis/session_result.h"
#include <sys/resource.h>
#include "core/clock.h"
#include "core/sbuf.h"
#include "core/table.h"
#include "render/export.h"
#include "store/store.h"
#include <errno.h>
#include <fcntl.h>
#include <gpuprof/monitor.h>
#include <pthread.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void run_usage(FILE *f)
{
    fprintf(f, "usage: gpuprof run [options] -- CMD [ARGS...]\n"
               "  records CMD (and the processes it starts) into an SQLite store, then prints\n"
               "  the summary; exits with CMD's exit status (128+N when killed by signal N)\n"
               "  -o, --output FILE    store (default gpuprof.db; runs are appended)\n"
               "  --opencl/--no-opencl OpenCL layer (default on when built)\n"
               "  --cuda/--no-cuda     CUPTI injection (default on when built)\n"
               "  --nvtx               NVTX ranges through the injection library\n"
               "  --sample-interval MS also sample the devices (GPU/OpenCL/host: utilization,\n"
               "                       memory, power, clocks...) every MS ms into counters, with\n"
               "                       the monitor's configuration (--config FILE or\n"
               "                       $GPUPROF_CONFIG, GPUPROF_* variables, --set KEY=VALUE)\n"
               "  --config FILE        monitor configuration for --sample-interval\n"
               "  --set KEY=VALUE      override one monitor configuration key\n"
               "  --no-summary         do not print the summary and the session result at the\n"
               "                       end\n"
               "  --session-json FILE  write the run's session result (total, CPU, GPU time,\n"
               "                       device memory, top kernels, bottlenecks, advice) as\n"
               "                       JSON (gpuprof-session-1) to FILE\n"
               "  --allow-incomplete   exit with CMD's status even when events were lost\n"
               "                       (default: exit 3 when CMD succeeded but the\n"
               "                       recording is incomplete)\n"
               "  -q, --quiet          no gpuprof messages (the summary still prints)\n");
}

/* Looks for a library built or installed beside the gpuprof binary. */
static int find_lib(const char *env, const char *name, char *out, size_t n)
{
    const char *e = getenv(env);
    if (e && *e) {
        snprintf(out, n, "%s", e);
        return access(out, R_OK) == 0;
    }
    char exe[PATH_MAX];
    ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (k <= 0) return 0;
    exe[k] = 0;
    char *slash = strrchr(exe, '/');
    if (!slash) return 0;
    *slash = 0;
    static const char *const rel[] = {"", "/../lib", "/../lib64", "/../lib/x86_64-linux-gnu"};
    for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
        int w = snprintf(out, n, "%s%s/%s", exe, rel[i], name);
        if (w > 0 && (size_t)w < n && access(out, R_OK) == 0) return 1;
    }
    return 0;
}

static volatile sig_atomic_t child_pid;

/* Signals sent to gpuprof itself go to CMD; terminal signals (Ctrl-C) reach
 * CMD directly because it stays in the same process group. */
static void forward(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    if (child_pid > 0 && (sig != SIGINT && sig != SIGQUIT ? 1 : si->si_code <= 0))
        kill((pid_t)child_pid, sig);
}

static int abs_path(const char *p, char *out, size_t n)
{
    if (p[0] == '/') {
        int w = snprintf(out, n, "%s", p);
        return w > 0 && (size_t)w < n ? 0 : -1;
    }
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd)) return -1;
    int w = snprintf(out, n, "%s/%s", cwd, p);
    return w > 0 && (size_t)w < n ? 0 : -1;
}

static void prepend_env(const char *var, const char *val)
{
    const char *old = getenv(var);
    if (old && *old) {
        size_t n = strlen(val) + strlen(old) + 2;
        char *v = gp_xmalloc(n);
        snprintf(v, n, "%s:%s", val, old);
        setenv(var, v, 1);
        free(v);
    } else {
        setenv(var, val, 1);
    }
}

/* Device sampling during the run (--sample-interval): the device monitor
 * (gpuprof/monitor.h) sampled by a thread of gpuprof itself, each valid
 * field written as a counter "DEVICE field (unit)" on one track per device. */
typedef struct sampler {
    gp_monitor *mon;
    gp_store_writer *w;
    long ms;
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int stop;
    uint64_t samples;
} sampler;

static void *sampler_main(void *arg)
{
    sampler *sp = arg;
    gp_store_ev ev[GP_MF_COUNT];
    pthread_mutex_lock(&sp->mu);
    while (!sp->stop) {
        pthread_mutex_unlock(&sp->mu);
        gp_monitor_sample_now(sp->mon);
        int64_t now = gp_clock_mono_ns();
        size_t nd = gp_monitor_device_count(sp->mon);
        for (size_t i = 0; i < nd; i++) {
            gp_dev_info info;
            gp_dev_sample smp;
            if (gp_monitor_device_info(sp->mon, i, &info) ||
                gp_monitor_get_status(sp->mon, i, &smp))
                continue;
            uint32_t track = gp_store_writer_track(sp->w, GP_STORE_TRACK_THREAD, -1 - (int64_t)i,
                                                   GP_NONE, info.name);
            size_t n = 0;
            for (int f = 0; f < GP_MF_COUNT; f++) {
                if (!gp_sample_has(&smp, f) || !gp_mfield_key(f)) continue;
                char name[256];
                const char *unit = gp_mfield_unit(f);
                if (unit && *unit)
                    snprintf(name, sizeof name, "%s %s (%s)", info.name, gp_mfield_key(f), unit);
                else
                    snprintf(name, sizeof name, "%s %s", info.name, gp_mfield_key(f));
                gp_store_ev_init(&ev[n], GP_ST_COUNTER);
                ev[n].name = gp_store_writer_str(sp->w, name);
                ev[n].track = track;
                ev[n].ts = now;
                ev[n].value = smp.v[f];
                n++;
            }
            gp_store_writer_put(sp->w, ev, n);
        }
        pthread_mutex_lock(&sp->mu);
        sp->samples++;
        struct timespec dl;
        clock_gettime(CLOCK_REALTIME, &dl);
        long long ns = dl.tv_nsec + sp->ms * 1000000LL;
        dl.tv_sec += (time_t)(ns / 1000000000);
        dl.tv_nsec = (long)(ns % 1000000000);
        while (!sp->stop && pthread_cond_timedwait(&sp->cv, &sp->mu, &dl) == 0) {
        }
    }
    pthread_mutex_unlock(&sp->mu);
    return NULL;
}

/* c: the monitor configuration (gp_cli_mon_config); the interval is ms. */
static int sampler_start(sampler *sp, const char *db, int64_t run, long ms, gp_mon_config c)
{
    memset(sp, 0, sizeof *sp);
    c.monitoring_interval_seconds = (double)ms / 1000.0;
    /* the run records counters; alerts and their log belong to the monitor */
    c.enable_alerts = 0;
    c.enable_event_log = 0;
    c.enable_snapshot_on_alert = 0;
    c.store_path[0] = 0;
    gp_err err = {0};
    gp_store_writer_opts o = {0, 0, "sampler"};
    sp->ms = ms;
    sp->mon = gp_monitor_create(&c);
    if (!sp->mon) return -1;
    sp->w = gp_store_writer_start(db, run, &o, &err);
    if (!sp->w) {
        fprintf(stderr, "gpuprof: device sampling off: %s\n", err.msg);
        gp_monitor_destroy(sp->mon);
        return -1;
    }
    pthread_mutex_init(&sp->mu, NULL);
    pthread_cond_init(&sp->cv, NULL);
    return 0;
}

/* Starts the sampling thread of a sampler_start'ed sampler; called once the
 * environment of CMD is set (setenv must not run while the thread reads the
 * environment: the nvidia-smi back-end spawns with it). 0, or -1 with the
 * sampler released. */
static int sampler_go(sampler *sp)
{
    if (pthread_create(&sp->th, NULL, sampler_main, sp) != 0) {
        gp_store_writer_stop(sp->w);
        gp_monitor_destroy(sp->mon);
        pthread_mutex_destroy(&sp->mu);
        pthread_cond_destroy(&sp->cv);
        return -1;
    }
    return 0;
}

static uint64_t sampler_stop(sampler *sp)
{
    pthread_mutex_lock(&sp->mu);
    sp->stop = 1;
    pthread_cond_signal(&sp->cv);
    pthread_mutex_unlock(&sp->mu);
    pthread_join(sp->th, NULL);
    gp_store_writer_stop(sp->w);
    gp_monitor_destroy(sp->mon);
    pthread_mutex_destroy(&sp->mu);
    pthread_cond_destroy(&sp->cv);
    return sp->samples;
}

/* What the recording processes' store writers reported on the status pipe
 * (GPUPROF_STATUS_FD, see store.c): the last line of each pid counts. */
typedef struct writer_status {
    uint64_t dropped; /* summed over processes */
    int failed;       /* some writer could not write */
    int processes;
} writer_status;

static void read_status(int fd, writer_status *ws)
{
    memset(ws, 0, sizeof *ws);
    GP_VEC(char) text = {0};
    char buf[4096];
    for (;;) {
        ssize_t k = read(fd, buf, sizeof buf);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) break; /* EOF, or EAGAIN: a writer still alive keeps it open */
        for (ssize_t i = 0; i < k; i++) GP_VEC_PUSH(text, buf[i]);
    }
    GP_VEC_PUSH(text, 0);
    typedef struct {
        long pid;
        unsigned long long dropped;
        int err;
    } last;
    GP_VEC(last) per = {0};
    for (char *line = text.v, *nl; line && *line; line = nl ? nl + 1 : NULL) {
        nl = strchr(line, '\n');
        if (nl) *nl = 0;
        long pid;
        unsigned long long wr, dr;
        int e;
        if (sscanf(line, "gpuprof-writer %ld %llu %llu %d", &pid, &wr, &dr, &e) != 4) continue;
        size_t j = 0;
        while (j < per.n && per.v[j].pid != pid) j++;
        last l = {pid, dr, e};
        if (j < per.n)
            per.v[j] = l;
        else
            GP_VEC_PUSH(per, l);
    }
    for (size_t j = 0; j < per.n; j++) {
        ws->dropped += per.v[j].dropped;
        if (per.v[j].err) ws->failed = 1;
    }
    ws->processes = (int)per.n;
    GP_VEC_FREE(per);
    GP_VEC_FREE(text);
}

/* What the run prints and writes at the end, from one load of the run:
 * the summary (`gpuprof summary FILE:RUN`'s text, one writer) and the
 * session result (analysis/session_result.c, the computation of libgpuprof's
 * gp_session_end) after it when print is set, and the result as JSON to
 * json_path when given. Returns 0 or 1 (message printed). */
static int run_results(const char *out, int64_t run, int64_t dur, int64_t cpu_ns, int print,
                       const char *json_path)
{
    char spec[PATH_MAX + 32];
    snprintf(spec, sizeof spec, "%s:%lld", out, (long long)run);
    char *specs[] = {spec};
    gp_trace **traces;
    size_t n;
    if (gp_cli_load_traces(specs, 1, &traces, &n)) return 1;
    int rc = 0;
    fflush(NULL);
    if (print) {
        gp_summary_view o;
        gp_summary_view_default(&o, 0);
        gp_summary s;
        if (gp_summary_compute(traces[0], &s) == 0) {
            gp_report_summary_text_doc(stdout, traces, &s, 1, &o);
            gp_summary_free(&s);
        } else {
            rc = 1;
        }
    }
    char name[64];
    snprintf(name, sizeof name, "run %lld", (long long)run);
    gp_session_result r;
    if (rc || gp_session_of_trace(traces[0], name, dur, cpu_ns, &r)) {
        gp_cli_free_traces(traces, n);
        fprintf(stderr, "gpuprof: %s: out of memory\n", spec);
        return 1;
    }
    gp_cli_free_traces(traces, n);
    if (print) {
        printf("\n");
        gp_report_session_result_text(stdout, &r);
        fflush(stdout);
    }
    if (json_path) {
        gp_sbuf b = {0};
        gp_err err = {0};
        gp_report_session_result_json(&b, &r);
        gp_sbuf_putc(&b, '\n');
        if (gp_write_file(json_path, &b, &err)) {
            fprintf(stderr, "gpuprof: %s\n", err.msg);
            rc = 1;
        }
        gp_sbuf_free(&b);
    }
    gp_session_result_free(&r);
    return rc;
}

int gp_cmd_run(int argc, char **argv)
{
    const char *out = "gpuprof.db", *session_json = NULL;
    int opencl = -1, cuda = -1, nvtx = 0, summary = 1, quiet = 0, allow_incomplete = 0;
    long sample_ms = 0;
    gp_mon_opts mo = {0};
    static const struct option lo[] = {{"output", required_argument, 0, 'o'},
                                       {"opencl", no_argument, 0, 'C'},
                                       {"no-opencl", no_argument, 0, 'c'},
                                       {"cuda", no_argument, 0, 'U'},
                                       {"no-cuda", no_argument, 0, 'u'},
                                       {"nvtx", no_argument, 0, 'n'},
                                       {"sample-interval", required_argument, 0, 's'},
                                       {"no-summary", no_argument, 0, 'S'},
                                       {"session-json", required_argument, 0, 'J'},
                                       {"allow-incomplete", no_argument, 0, 'A'},
                                       {"config", required_argument, 0, 'K'},
                                       {"set", required_argument, 0, 'E'},
                                       {"quiet", no_argument, 0, 'q'},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
    int c;
    optind = 1;
    /* '+': stop at the first non-option, CMD's own options are not ours */
    while ((c = getopt_long(argc, argv, "+o:qh", lo, NULL)) != -1) {
        switch (c) {
        case 'o':
            out = optarg;
            break;
        case 'C':
            opencl = 1;
            break;
        case 'c':
            opencl = 0;
            break;
        case 'U':
            cuda = 1;
            break;
        case 'u':
            cuda = 0;
            break;
        case 'n':
            nvtx = 1;
            break;
        case 's':
            if ((sample_ms = gp_cli_parse_count("--sample-interval", optarg)) < 0) return 2;
            if (sample_ms < 1) {
                fprintf(stderr, "gpuprof: --sample-interval expects at least 1 ms\n");
                return 2;
            }
            break;
        case 'S':
            summary = 0;
            break;
        case 'J':
            session_json = optarg;
            break;
        case 'A':
            allow_incomplete = 1;
            break;
        case 'K':
            mo.config = optarg;
            break;
        case 'E':
            if (gp_cli_mon_add_set(&mo, optarg)) return 2;
            break;
        case 'q':
            quiet = 1;
            break;
        case 'h':
            run_usage(stdout);
            return 0;
        default:
            run_usage(stderr);
            return 2;
        }
    }
    if (optind >= argc) {
        run_usage(stderr);
        return 2;
    }
    char **cmd = argv + optind;
    int ncmd = argc - optind;
    gp_mon_config mcfg;
    gp_mon_config_defaults(&mcfg);
    if (sample_ms > 0 && gp_cli_mon_config(&mo, &mcfg)) return 2;

    char layer[PATH_MAX], inject[PATH_MAX];
    int have_layer = find_lib("GPUPROF_CL_LAYER", "libgpuprof_cl_layer.so", layer, sizeof layer);
    int have_inject =
        find_lib("GPUPROF_CUDA_INJECT", "libgpuprof_cuda_inject.so", inject, sizeof inject);
    if (opencl == 1 && !have_layer) {
        fprintf(stderr, "gpuprof: --opencl: libgpuprof_cl_layer.so not found (this build has "
                        "no OpenCL layer; GPUPROF_CL_LAYER names it)\n");
        return 2;
    }
    if ((cuda == 1 || nvtx) && !have_inject) {
        fprintf(stderr, "gpuprof: --cuda/--nvtx: libgpuprof_cuda_inject.so not found (built "
                        "only with the CUDA toolkit; GPUPROF_CUDA_INJECT names it)\n");
        return 2;
    }
    opencl = opencl != 0 && have_layer;
    cuda = cuda != 0 && have_inject;

    /* gpuprof's own store writes must fail, not kill it, under a file size
     * limit (ulimit -f); CMD gets the default action back before exec */
    signal(SIGXFSZ, SIG_IGN);
    char db[PATH_MAX];
    if (abs_path(out, db, sizeof db)) {
        fprintf(stderr, "gpuprof: %s: cannot resolve the path\n", out);
        return 2;
    }
    gp_err err = {0};
    gp_store *st;
    if (gp_store_open(db, &st, &err)) {
        fprintf(stderr, "gpuprof: %s\n", err.msg);
        char *refused = gp_redact_argv(cmd, ncmd);
        gp_cli_audit(NULL, "run", refused, err.msg);
        free(refused);
        return 2;
    }
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    char *line = gp_redact_argv(cmd, ncmd);
    gp_store_run_info ri = {line, host, gp_clock_wall_ns(), gp_clock_mono_ns(), getpid()};
    int64_t run = gp_store_run_begin(st, &ri, &err);
    free(line);
    if (run < 0) {
        fprintf(stderr, "gpuprof: %s\n", err.msg);
        gp_store_close(st);
        return 2;
    }

    /* the writers' status pipe: what they lost reaches us even when the
     * store cannot be written any more */
    int sfd[2] = {-1, -1};
    if (pipe2(sfd, O_CLOEXEC | O_NONBLOCK) == 0) {
        fcntl(sfd[1], F_SETFD, 0); /* the write end goes to CMD and its children */
        char fdv[16];
        snprintf(fdv, sizeof fdv, "%d", sfd[1]);
        setenv("GPUPROF_STATUS_FD", fdv, 1);
    } else {
        sfd[0] = sfd[1] = -1;
        unsetenv("GPUPROF_STATUS_FD");
    }
    /* the monitor made before the injection environment is set: its own
     * OpenCL calls must not load the layer into gpuprof; its thread starts
     * after the last setenv (sampler_go) */
    sampler smp;
    int sampling = sample_ms > 0 && sampler_start(&smp, db, run, sample_ms, mcfg) == 0;
    char num[32];
    snprintf(num, sizeof num, "%lld", (long long)run);
    setenv("GPUPROF_STORE", db, 1);
    setenv("GPUPROF_RUN_ID", num, 1);
    if (opencl) prepend_env("OPENCL_LAYERS", layer);
    if (cuda) setenv("CUDA_INJECTION64_PATH", inject, 1);
    if (nvtx) setenv("NVTX_INJECTION64_PATH", inject, 1);
    setenv("GPUPROF_CUDA", cuda ? "1" : "0", 1);
    setenv("GPUPROF_NVTX", nvtx ? "1" : "0", 1);
    if (gp_store_run_env(st, run, environ, &err)) /* what CMD gets, redacted */
        fprintf(stderr, "gpuprof: %s (continuing)\n", err.msg);
    if (!quiet)
        fprintf(stderr, "gpuprof: recording run %lld into %s (OpenCL %s, CUDA %s, NVTX %s)\n",
                (long long)run, out, opencl ? "on" : "off", cuda ? "on" : "off",
                nvtx ? "on" : "off");
    if (sampling && sampler_go(&smp)) {
        sampling = 0;
        fprintf(stderr, "gpuprof: device sampling off: cannot start its thread\n");
    }

    fflush(NULL);
    int64_t t0 = gp_clock_mono_ns();
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "gpuprof: fork: %s\n", strerror(errno));
        if (sampling) sampler_stop(&smp);
        gp_store_run_release_reserve(db, run);
        gp_store_close(st);
        return 2;
    }
    if (pid == 0) {
        /* CMD dies with gpuprof (SIGKILL of gpuprof must not leave it running
         * unrecorded); the check after prctl closes the race with an early
         * death of the parent */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _exit(128 + SIGKILL);
        signal(SIGXFSZ, SIG_DFL);
        execvp(cmd[0], cmd);
        fprintf(stderr, "gpuprof: %s: %s\n", cmd[0], strerror(errno));
        _exit(errno == ENOENT ? 127 : 126);
    }
    child_pid = pid;
    struct sigaction sa, old[8];
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = forward;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) sigaction(sigs[i], &sa, &old[i]);
    int status = 0;
    struct rusage ru; /* CMD's CPU time (its waited-for children included) */
    memset(&ru, 0, sizeof ru);
    while (wait4(pid, &status, 0, &ru) < 0 && errno == EINTR) {
    }
    int64_t cmd_cpu_ns = ((int64_t)ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000 +
                         ((int64_t)ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000;
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) sigaction(sigs[i], &old[i], NULL);
    int64_t dur = gp_clock_mono_ns() - t0;
    if (sampling) {
        uint64_t ns = sampler_stop(&smp);
        if (!quiet) fprintf(stderr, "gpuprof: %llu device samples\n", (unsigned long long)ns);
    }
    int code, stored;
    if (WIFSIGNALED(status)) {
        code = 128 + WTERMSIG(status);
        stored = -WTERMSIG(status);
    } else {
        code = stored = WEXITSTATUS(status);
    }
    writer_status ws = {0};
    if (sfd[0] >= 0) {
        close(sfd[1]);
        unsetenv("GPUPROF_STATUS_FD");
        read_status(sfd[0], &ws);
        close(sfd[0]);
    }
    int incomplete = ws.failed || ws.dropped > 0;
    if (gp_store_run_end(st, run, stored, dur, (int64_t)ws.dropped, &err)) {
        fprintf(stderr, "gpuprof: %s\n", err.msg);
        incomplete = 1;
    }
    gp_store_close(st);

    gp_store_run_row *rows = NULL;
    size_t nr = 0;
    int64_t dropped = (int64_t)ws.dropped, events = -1;
    if (gp_store_runs(db, &rows, &nr, &err) == 0) {
        for (size_t i = 0; i < nr; i++)
            if (rows[i].id == run) {
                events = rows[i].events == GP_NONE ? 0 : rows[i].events;
                if (rows[i].dropped != GP_NONE && rows[i].dropped > dropped)
                    dropped = rows[i].dropped;
                if (dropped > 0) incomplete = 1;
                char d[64], res[PATH_MAX + 128];
                snprintf(res, sizeof res, "exit %d, %lld events, %lld dropped, run %s:%lld", stored,
                         (long long)events, (long long)dropped, db, (long long)run);
                gp_cli_audit(db, "run", rows[i].command, res);
                if (quiet) continue;
                fprintf(stderr,
                        "gpuprof: run %lld: %s, exit %d, %lld events from %lld process(es), "
                        "%lld dropped; stored in %s:%lld\n",
                        (long long)run, gp_fmt_dur_auto(d, sizeof d, (double)dur), stored,
                        (long long)events, (long long)rows[i].processes, (long long)dropped, out,
                        (long long)run);
            }
        gp_store_runs_free(rows, nr);
    } else {
        fprintf(stderr, "gpuprof: %s\n", err.msg);
        incomplete = 1;
    }
    if (incomplete) /* printed even with --quiet: the recording is not whole */
        fprintf(stderr,
                "gpuprof: run %lld is INCOMPLETE: %lld events dropped%s (see docs/recording.md)\n",
                (long long)run, (long long)dropped,
                ws.failed ? ", the store could not be written (disk full or file size limit?)"
                          : "");
    if (incomplete && code == 0 && !allow_incomplete) code = 3;
    if (summary && events == 0 && !quiet) /* nothing to summarize: said, not an error */
        fprintf(stderr, "gpuprof: run %lld recorded no events (no summary)\n", (long long)run);
    if ((summary && events != 0) || session_json)
        if (run_results(out, run, dur, cmd_cpu_ns, summary && events != 0, session_json) &&
            code == 0)
            code = 1;
    return code;
}

/* ---- gpuprof runs ---- */

int gp_cmd_runs(int argc, char **argv)
{
    int json = 0;
    static const struct option lo[] = {
        {"json", no_argument, 0, 'j'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "jh", lo, NULL)) != -1) {
        if (c == 'j')
            json = 1;
        else if (c == 'h') {
            printf("usage: gpuprof runs [--json] [STORE]   (default gpuprof.db)\n");
            return 0;
        } else
            return 2;
    }
    const char *path = optind < argc ? argv[optind] : "gpuprof.db";
    gp_store_run_row *rows;
    size_t n;
    gp_err err = {0};
    struct stat sb;
    if (stat(path, &sb) != 0) {
        fprintf(stderr, "gpuprof: %s: no such file\n", path);
        return 2;
    }
    if (gp_store_runs(path, &rows, &n, &err)) {
        fprintf(stderr, "gpuprof: %s\n", err.msg);
        return 2;
    }
    if (json) {
        gp_sbuf b = {0};
        gp_report_runs_json(&b, path, rows, n);
        gp_sbuf_write(&b, stdout);
        gp_sbuf_free(&b);
    } else {
        gp_report_runs_text(stdout, rows, n);
    }
    gp_store_runs_free(rows, n);
    return fflush(stdout) ? 1 : 0;
}

/* ---- gpuprof sql ---- */

int gp_cmd_sql(int argc, char **argv)
{
    int json = 0;
    static const struct option lo[] = {
        {"json", no_argument, 0, 'j'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "jh", lo, NULL)) != -1) {
        if (c == 'j')
            json = 1;
        else if (c == 'h') {
            printf("usage: gpuprof sql [--json] STORE \"SELECT ...\"\n"
                   "  tables: runs processes devices strings tracks api_calls kernels copies\n"
                   "          slices instants counters memory; views with names resolved:\n"
                   "          kernel_v copy_v api_v (see docs/recording.md)\n");
            return 0;
        } else
            return 2;
    }
    if (argc - optind != 2) {
        fprintf(stderr, "usage: gpuprof sql [--json] STORE \"SELECT ...\"\n");
        return 2;
    }
    struct stat sb;
    if (stat(argv[optind], &sb) != 0) {
        fprintf(stderr, "gpuprof: %s: no such file\n", argv[optind]);
        return 2;
    }
    gp_err err = {0};
    int rc = gp_store_sql(argv[optind], argv[optind + 1], json, stdout, &err);
    gp_cli_audit_after(rc, argv[optind], "sql", argv[optind + 1], rc ? err.msg : "ok");
    if (rc) {
        fprintf(stderr, "gpuprof: %s\n", err.msg);
        return 2;
    }
    return fflush(stdout) ? 1 : 0;
}

/* ---- gpuprof export ---- */

static void export_usage(FILE *f)
{
    fprintf(
        f,
        "usage: gpuprof export RUN [--format chrome|perfetto] [-o OUT]\n"
        "  RUN: gpuprof.db (latest run), gpuprof.db:ID, or any trace gpuprof reads\n"
        "  -f, --format chrome    Chrome trace-event JSON with Kineto's fields (default;\n"
        "                         HTA, ui.perfetto.dev, chrome://tracing)\n"
        "  -f, --format perfetto  Perfetto protobuf (.pftrace) for ui.perfetto.dev and\n"
        "                         trace_processor\n"
        "  -o, --output OUT       file to write (default: standard output)\n" GP_CLI_REDACT_USAGE);
}

int gp_cmd_export(int argc, char **argv)
{
    const char *fmt = "chrome", *out = "-";
    static const struct option lo[] = {{"format", required_argument, 0, 'f'},
                                       {"output", required_argument, 0, 'o'},
                                       GP_CLI_REDACT_OPTIONS,
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "f:o:h", lo, NULL)) != -1) {
        switch (c) {
        case 'f':
            fmt = optarg;
            break;
        case 'o':
            out = optarg;
            break;
            GP_CLI_REDACT_CASES;
        case 'h':
            export_usage(stdout);
            return 0;
        default:
            export_usage(stderr);
            return 2;
        }
    }
    int f = gp_export_format_parse(fmt);
    if (f < 0) {
        fprintf(stderr, "gpuprof: --format %s: unknown (chrome or perfetto)\n", fmt);
        return 2;
    }
    if (argc - optind != 1) {
        export_usage(stderr);
        return 2;
    }
    int rc = gp_cli_export(argv[optind], f, out);
    char spec[4096], res[600];
    snprintf(res, sizeof res, "%s; to %s", rc ? "failed" : "ok", strcmp(out, "-") ? out : "stdout");
    gp_cli_audit_after(rc, gp_cli_store_of(argv[optind], spec, sizeof spec), "export", argv[optind],
                       res);
    return rc;
}
