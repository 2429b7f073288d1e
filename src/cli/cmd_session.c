/* cli/cmd_session.c: `gpuprof session start|stop|snapshot|list|show`. A
 * started session is a background sampler process (pid file OUTPUT_DIR/
 * NAME.pid) that writes OUTPUT_DIR/NAME.json when stopped. */
#include "cli/cli.h"
#include "store/access.h"
#include "cli/mon_common.h"
#include "core/clock.h"
#include "core/jdom.h"
#include "core/error.h"
#include "report/sessions.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t stop_req, snap_req;
static void on_stop(int sig)
{
    (void)sig;
    stop_req = 1;
}
static void on_snap(int sig)
{
    (void)sig;
    snap_req = 1;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: gpuprof session start NAME [--description TEXT] [--interval S]\n"
               "       gpuprof session stop NAME\n"
               "       gpuprof session snapshot NAME\n"
               "       gpuprof session list [--json]\n"
               "       gpuprof session show NAME [--json]\n"
               "  start runs a background sampler for the session; stop ends it and writes\n"
               "  the JSON report OUTPUT_DIR/NAME.json (output_dir, default gpuprof-output);\n"
               "  show prints a summary of that report (--json: the report itself).\n"
               "  Common: --config FILE, --set KEY=VALUE.\n");
}

static int mkdir_p(const char *dir)
{
    char tmp[1024];
    snprintf(tmp, sizeof tmp, "%s", dir);
    for (char *p = tmp + 1; *p; p++)
        if (*p == '/') {
            *p = 0;
            if (mkdir(tmp, gp_access_mode(1)) && errno != EEXIST) return -1;
            *p = '/';
        }
    return mkdir(tmp, gp_access_mode(1)) && errno != EEXIST ? -1 : 0;
}

/* The background sampler of one session; never returns. */
static void run_daemon(const gp_mon_config *cfg, const char *name, const char *desc, int ready_fd)
{
    setsid();
    int nul = open("/dev/null", O_RDWR);
    if (nul >= 0) {
        dup2(nul, 0);
        dup2(nul, 1);
        dup2(nul, 2);
        if (nul > 2) close(nul);
    }
    gp_monitor *m = gp_monitor_create(cfg);
    /* after the backends: an OpenCL runtime (PoCL) may install its own handlers */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sa.sa_handler = on_snap;
    sigaction(SIGUSR1, &sa, NULL);
    char status = 1;
    if (m && gp_monitor_session_start(m, name, desc) == 0) {
        char path[1200], tmp[1300];
        snprintf(path, sizeof path, "%s/%s.pid", cfg->output_dir, name);
        snprintf(tmp, sizeof tmp, "%s.tmp", path);
        FILE *f = fopen(tmp, "we");
        if (f) {
            fprintf(f, "%ld\n", (long)getpid());
            if (fclose(f) == 0 && rename(tmp, path) == 0) status = 0;
        }
    }
    if (write(ready_fd, &status, 1) != 1) status = 1;
    close(ready_fd);
    if (status) _exit(1);
    int64_t period = (int64_t)(cfg->monitoring_interval_seconds * 1e9);
    int64_t next = gp_clock_mono_ns();
    while (!stop_req) {
        gp_monitor_sample_now(m);
        if (snap_req) {
            snap_req = 0;
            gp_monitor_snapshot(m, name, "on demand");
        }
        next += period;
        int64_t left = next - gp_clock_mono_ns();
        if (left > 0) {
            struct timespec ts = {(time_t)(left / 1000000000), (long)(left % 1000000000)};
            nanosleep(&ts, NULL); /* a signal ends it early */
        } else
            next = gp_clock_mono_ns();
    }
    gp_monitor_sample_now(m);
    gp_monitor_session_stop(m, name); /* writes the report */
    gp_monitor_destroy(m);
    char path[1200];
    snprintf(path, sizeof path, "%s/%s.pid", cfg->output_dir, name);
    unlink(path);
    _exit(0);
}

static int cmd_start(const gp_mon_config *cfg, const char *name, const char *desc)
{
    if (gp_session_running_pid(cfg->output_dir, name)) {
        fprintf(stderr, "gpuprof session: '%s' is already running\n", name);
        return 1;
    }
    if (mkdir_p(cfg->output_dir)) {
        fprintf(stderr, "gpuprof session: %s: %s\n", cfg->output_dir, strerror(errno));
        return 1;
    }
    /* retention: keep at most max_profiling_sessions reports, this one included */
    gp_session_report reps[512];
    size_t nr = gp_session_reports(cfg->output_dir, reps, 512);
    for (size_t i = 0; i + (size_t)cfg->max_profiling_sessions <= nr; i++) {
        char path[1200];
        snprintf(path, sizeof path, "%.1100s/%.63s.json", cfg->output_dir, reps[i].name);
        unlink(path);
    }
    int fd[2];
    if (pipe(fd)) return 1;
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "gpuprof session: fork: %s\n", strerror(errno));
        return 1;
    }
    if (pid == 0) {
        close(fd[0]);
        if (fork() > 0) _exit(0); /* the grandchild is re-parented to init */
        run_daemon(cfg, name, desc, fd[1]);
    }
    close(fd[1]);
    char status = 1;
    if (read(fd[0], &status, 1) != 1) status = 1;
    close(fd[0]);
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {
    }
    if (status) {
        fprintf(stderr, "gpuprof session: could not start '%s'\n", name);
        return 1;
    }
    printf("session %s started (pid %ld, every %g s); stop it with: gpuprof session stop %s\n",
           name, (long)gp_session_running_pid(cfg->output_dir, name),
           cfg->monitoring_interval_seconds, name);
    return 0;
}

static int cmd_stop(const gp_mon_config *cfg, const char *name)
{
    pid_t pid = gp_session_running_pid(cfg->output_dir, name);
    if (!pid) {
        fprintf(stderr, "gpuprof session: '%s' is not running\n", name);
        return 1;
    }
    kill(pid, SIGTERM);
    for (int i = 0; i < 300 && gp_session_running_pid(cfg->output_dir, name); i++) {
        struct timespec ts = {0, 50 * 1000000L};
        nanosleep(&ts, NULL);
    }
    if (gp_session_running_pid(cfg->output_dir, name)) {
        fprintf(stderr, "gpuprof session: '%s' (pid %ld) did not stop\n", name, (long)pid);
        return 1;
    }
    printf("session %s stopped; report: %s/%s.json\n", name, cfg->output_dir, name);
    return 0;
}

/* Reads an integer field ("key":N) from JSON text; returns 1 when found. */

static int cmd_list(const gp_mon_config *cfg, int json)
{
    gp_session_entry *ents = gp_xcalloc(576, sizeof *ents);
    size_t n = gp_session_list(cfg->output_dir, ents, 576);
    if (json) {
        gp_sbuf b = {0};
        gp_report_sessions_json(&b, ents, n);
        gp_sbuf_write(&b, stdout);
        gp_sbuf_free(&b);
    } else {
        gp_report_sessions_text(stdout, cfg->output_dir, ents, n);
    }
    free(ents);
    return 0;
}

static int cmd_show(const gp_mon_config *cfg, const char *name, int json)
{
    char path[1200];
    int running;
    char *text = gp_session_report_read(cfg->output_dir, name, path, sizeof path, &running);
    if (!text) {
        if (running)
            fprintf(stderr,
                    "gpuprof session: '%s' is still running; its report is written when "
                    "it stops\n",
                    name);
        else
            fprintf(stderr, "gpuprof session: %s: no such report\n", path);
        return 1;
    }
    if (json) {
        fputs(text, stdout);
        free(text);
        return 0;
    }
    gp_jv r;
    gp_err err = {0};
    int rc = gp_jdom_parse(text, strlen(text), &r, &err);
    free(text);
    if (rc || r.type != GP_JOBJ) {
        fprintf(stderr, "gpuprof session: %s: %s\n", path, rc ? err.msg : "not a JSON object");
        gp_jdom_free(&r);
        return 2;
    }
    gp_report_session_text(stdout, &r, path);
    gp_jdom_free(&r);
    return 0;
}

int gp_cmd_session(int argc, char **argv)
{
    static const struct option lo[] = {{"description", required_argument, 0, 'd'},
                                       {"interval", required_argument, 0, 'i'},
                                       {"json", no_argument, 0, 'j'},
                                       {"config", required_argument, 0, 'c'},
                                       {"set", required_argument, 0, 's'},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
    gp_mon_opts mo = {0};
    const char *desc = "", *interval = NULL;
    int json = 0, ch;
    optind = 1;
    while ((ch = getopt_long(argc, argv, "d:i:jc:s:h", lo, NULL)) != -1) {
        switch (ch) {
        case 'd':
            desc = optarg;
            break;
        case 'i':
            interval = optarg;
            break;
        case 'j':
            json = 1;
            break;
        case 'c':
            mo.config = optarg;
            break;
        case 's':
            if (gp_cli_mon_add_set(&mo, optarg)) return 2;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (optind >= argc) {
        usage(stderr);
        return 2;
    }
    const char *sub = argv[optind];
    const char *name = optind + 1 < argc ? argv[optind + 1] : NULL;
    gp_mon_config cfg;
    if (gp_cli_mon_config(&mo, &cfg)) return 2;
    if (interval) {
        char err[256];
        if (gp_mon_config_set(&cfg, "monitoring_interval_seconds", interval, err, sizeof err)) {
            /* name the option given, not the configuration key behind it */
            fprintf(stderr,
                    "gpuprof session: --interval expects seconds from 0.01 to 3600, got '%s'\n",
                    interval);
            return 2;
        }
    }
    if (!strcmp(sub, "list")) return cmd_list(&cfg, json);
    if (!name || optind + 2 < argc) {
        fprintf(stderr, "gpuprof session %s: expects one session NAME\n", sub);
        return 2;
    }
    if (!gp_session_valid_name(name)) {
        fprintf(stderr, "gpuprof session: bad name '%s' (letters, digits, '.', '_', '-')\n", name);
        return 2;
    }
    const char *astore = cfg.store_path[0] ? cfg.store_path : NULL;
    /* the configured store takes the session's audit records from its start
     * (created owner-only if the session writes its first report later) */
    if (astore && strcmp(sub, "show") && gp_access_create(astore) < 0) astore = NULL;
    if (!strcmp(sub, "start")) {
        int rc = cmd_start(&cfg, name, desc);
        gp_cli_audit(astore, "session start", name, rc ? "failed" : "ok");
        return rc;
    }
    if (!strcmp(sub, "stop")) {
        int rc = cmd_stop(&cfg, name);
        char res[1200];
        snprintf(res, sizeof res, "%s; report %.1100s/%s.json", rc ? "failed" : "ok",
                 cfg.output_dir, name);
        gp_cli_audit(astore, "session stop", name, res);
        return rc;
    }
    if (!strcmp(sub, "show")) return cmd_show(&cfg, name, json);
    if (!strcmp(sub, "snapshot")) {
        pid_t pid = gp_session_running_pid(cfg.output_dir, name);
        if (!pid) {
            fprintf(stderr, "gpuprof session: '%s' is not running\n", name);
            return 1;
        }
        kill(pid, SIGUSR1);
        gp_cli_audit(astore, "session snapshot", name, "requested");
        printf("snapshot requested from session %s\n", name);
        return 0;
    }
    fprintf(stderr, "gpuprof session: unknown subcommand '%s'\n", sub);
    usage(stderr);
    return 2;
}
