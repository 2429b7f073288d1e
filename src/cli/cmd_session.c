/* cli/cmd_session.c: `gpuprof session start|stop|snapshot|list|show`. A
 * started session is a background sampler process (pid file OUTPUT_DIR/
 * NAME.pid) that writes OUTPUT_DIR/NAME.json when stopped. */
#include "cli/cli.h"
#include "core/access.h"
#include "cli/mon_common.h"
#include "core/clock.h"
#include "core/jdom.h"
#include "core/table.h"
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

/* Returns the pid in DIR/NAME.pid when that process is alive, else 0. */
static pid_t running_pid(const char *dir, const char *name)
{
    char path[1200], buf[32] = "";
    snprintf(path, sizeof path, "%s/%s.pid", dir, name);
    FILE *f = fopen(path, "re");
    if (!f) return 0;
    if (!fgets(buf, sizeof buf, f)) buf[0] = 0;
    fclose(f);
    pid_t pid = (pid_t)atol(buf);
    if (pid <= 0 || (kill(pid, 0) && errno == ESRCH)) return 0;
    return pid;
}

static int valid_name(const char *n)
{
    if (!n[0] || strlen(n) > 63 || n[0] == '.') return 0;
    for (const char *p = n; *p; p++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-", *p))
            return 0;
    return 1;
}

/* Reports (NAME.json) in dir, oldest first by modification time. */
typedef struct rep {
    char name[64];
    long long mtime_ns;
} rep;
static size_t list_reports(const char *dir, rep *out, size_t max)
{
    DIR *d = opendir(dir);
    if (!d) return 0;
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < max) {
        size_t k = strlen(e->d_name);
        if (k < 6 || k - 5 >= sizeof out->name || strcmp(e->d_name + k - 5, ".json")) continue;
        char path[1400];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat st;
        if (stat(path, &st)) continue;
        memcpy(out[n].name, e->d_name, k - 5);
        out[n].name[k - 5] = 0;
        out[n].mtime_ns = (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
        n++;
    }
    closedir(d);
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && out[j - 1].mtime_ns > out[j].mtime_ns; j--) {
            rep t = out[j];
            out[j] = out[j - 1];
            out[j - 1] = t;
        }
    return n;
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
    if (running_pid(cfg->output_dir, name)) {
        fprintf(stderr, "gpuprof session: '%s' is already running\n", name);
        return 1;
    }
    if (mkdir_p(cfg->output_dir)) {
        fprintf(stderr, "gpuprof session: %s: %s\n", cfg->output_dir, strerror(errno));
        return 1;
    }
    /* retention: keep at most max_profiling_sessions reports, this one included */
    rep reps[512];
    size_t nr = list_reports(cfg->output_dir, reps, 512);
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
           name, (long)running_pid(cfg->output_dir, name), cfg->monitoring_interval_seconds, name);
    return 0;
}

static int cmd_stop(const gp_mon_config *cfg, const char *name)
{
    pid_t pid = running_pid(cfg->output_dir, name);
    if (!pid) {
        fprintf(stderr, "gpuprof session: '%s' is not running\n", name);
        return 1;
    }
    kill(pid, SIGTERM);
    for (int i = 0; i < 300 && running_pid(cfg->output_dir, name); i++) {
        struct timespec ts = {0, 50 * 1000000L};
        nanosleep(&ts, NULL);
    }
    if (running_pid(cfg->output_dir, name)) {
        fprintf(stderr, "gpuprof session: '%s' (pid %ld) did not stop\n", name, (long)pid);
        return 1;
    }
    printf("session %s stopped; report: %s/%s.json\n", name, cfg->output_dir, name);
    return 0;
}

/* Reads an integer field ("key":N) from JSON text; returns 1 when found. */
static int json_i64(const char *text, const char *key, long long *v)
{
    char pat[80];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *p = strstr(text, pat);
    if (!p || sscanf(p + strlen(pat), "%lld", v) != 1) return 0;
    return 1;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "re");
    if (!f) return NULL;
    gp_sbuf b = {0};
    char buf[8192];
    size_t k;
    while ((k = fread(buf, 1, sizeof buf, f)) > 0) gp_sbuf_add(&b, buf, k);
    fclose(f);
    gp_sbuf_cstr(&b);
    return b.s;
}

static int cmd_list(const gp_mon_config *cfg, int json)
{
    rep reps[512];
    size_t nr = list_reports(cfg->output_dir, reps, 512);
    /* running sessions: pid files */
    char running[64][64];
    size_t nrun = 0;
    DIR *d = opendir(cfg->output_dir);
    struct dirent *e;
    while (d && (e = readdir(d)) && nrun < 64) {
        size_t k = strlen(e->d_name);
        if (k < 5 || k - 4 >= 64 || strcmp(e->d_name + k - 4, ".pid")) continue;
        memcpy(running[nrun], e->d_name, k - 4);
        running[nrun][k - 4] = 0;
        if (running_pid(cfg->output_dir, running[nrun])) nrun++;
    }
    if (d) closedir(d);
    gp_sbuf b = {0};
    const char *hdr[] = {"Session", "State", "Samples", "Snapshots", "Inferences", "Duration (s)"};
    gp_table *t = gp_table_create(6, hdr, "llrrrr");
    if (json) gp_sbuf_puts(&b, "{\"sessions\":[");
    int first = 1;
    for (size_t i = 0; i < nrun; i++) {
        if (json) {
            gp_sbuf_puts(&b, first ? "{\"name\":" : ",{\"name\":");
            gp_json_str(&b, running[i]);
            gp_sbuf_puts(&b, ",\"state\":\"running\"}");
            first = 0;
        } else
            gp_table_rowf(t, "%s\trunning\t-\t-\t-\t-", running[i]);
    }
    for (size_t i = 0; i < nr; i++) {
        char path[1200];
        snprintf(path, sizeof path, "%s/%s.json", cfg->output_dir, reps[i].name);
        char *text = slurp(path);
        if (!text) continue;
        long long samples = 0, snaps = 0, inf = 0, start = 0, stop = 0;
        json_i64(text, "samples", &samples);
        json_i64(text, "snapshots", &snaps);
        json_i64(text, "inference_count", &inf);
        json_i64(text, "start_wall_ns", &start);
        json_i64(text, "stop_wall_ns", &stop);
        free(text);
        double dur = stop > start ? (double)(stop - start) / 1e9 : 0;
        if (json) {
            gp_sbuf_puts(&b, first ? "{\"name\":" : ",{\"name\":");
            gp_json_str(&b, reps[i].name);
            gp_sbuf_printf(&b,
                           ",\"state\":\"finished\",\"samples\":%lld,\"snapshots\":%lld,"
                           "\"inferences\":%lld,\"duration_s\":",
                           samples, snaps, inf);
            gp_json_num(&b, dur);
            gp_json_key(&b, "report", 1);
            gp_json_str(&b, path);
            gp_sbuf_putc(&b, '}');
            first = 0;
        } else
            gp_table_rowf(t, "%s\tfinished\t%lld\t%lld\t%lld\t%.1f", reps[i].name, samples, snaps,
                          inf, dur);
    }
    if (json) {
        gp_sbuf_puts(&b, "]}\n");
        gp_sbuf_write(&b, stdout);
    } else if (nr + nrun == 0)
        printf("no sessions in %s\n", cfg->output_dir);
    else
        gp_table_print(t, stdout, 0);
    gp_table_destroy(t);
    gp_sbuf_free(&b);
    return 0;
}

/* "N/A" or the number v formatted with fmt into buf. */
static const char *num_or_na(char *buf, size_t n, const char *fmt, const gp_jv *v)
{
    double d;
    if (!gp_jdom_num(v, &d)) return "N/A";
    snprintf(buf, n, fmt, d);
    return buf;
}

/* A field statistic of a device in the report ("fields":{key:{avg,min,max}}). */
static const gp_jv *dev_stat(const gp_jv *dev, const char *key, const char *which)
{
    return gp_jdom_get(gp_jdom_get(gp_jdom_get(dev, "fields"), key), which);
}

static void fmt_wall(char *buf, size_t n, const gp_jv *v)
{
    double ns;
    if (!gp_jdom_num(v, &ns)) {
        snprintf(buf, n, "N/A");
        return;
    }
    time_t t = (time_t)(ns / 1e9);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, n, "%Y-%m-%d %H:%M:%S UTC", &tm);
}

/* Prints the readable summary of a session report. */
static void print_report(const gp_jv *r, const char *path, FILE *o)
{
    char a[64], b[64], c[64], d[64], e[64];
    const gp_jv *tot = gp_jdom_get(r, "totals");
    fprintf(o, "Session %s", gp_jdom_str(gp_jdom_get(r, "session"), "?"));
    const char *desc = gp_jdom_str(gp_jdom_get(r, "description"), "");
    if (desc[0]) fprintf(o, ": %s", desc);
    const gp_jv *act = gp_jdom_get(r, "active");
    fprintf(o, "%s\n", act && act->type == GP_JBOOL && act->boolean ? " (running)" : "");
    fmt_wall(a, sizeof a, gp_jdom_get(r, "start_wall_ns"));
    fmt_wall(b, sizeof b, gp_jdom_get(r, "stop_wall_ns"));
    fprintf(o, "  from %s to %s (%s s)\n", a, b,
            num_or_na(c, sizeof c, "%.1f", gp_jdom_get(r, "duration_s")));
    fprintf(o, "  samples %s, GPUs %s, snapshots %s (%s dropped), inferences %s\n",
            num_or_na(a, sizeof a, "%.0f", gp_jdom_get(tot, "samples")),
            num_or_na(b, sizeof b, "%.0f", gp_jdom_get(tot, "gpus")),
            num_or_na(c, sizeof c, "%.0f", gp_jdom_get(tot, "snapshots")),
            num_or_na(d, sizeof d, "%.0f", gp_jdom_get(tot, "snapshots_dropped")),
            num_or_na(e, sizeof e, "%.0f", gp_jdom_get(tot, "inference_count")));
    double pm;
    if (gp_jdom_num(gp_jdom_get(tot, "peak_memory_used_bytes"), &pm))
        gp_fmt_bytes(d, sizeof d, pm);
    else
        snprintf(d, sizeof d, "N/A");
    fprintf(o,
            "  GPU utilization avg %s %%, max temperature %s C, energy %s J, peak memory used %s\n",
            num_or_na(a, sizeof a, "%.1f", gp_jdom_get(gp_jdom_get(r, "averages"), "gpu_util_pct")),
            num_or_na(b, sizeof b, "%.0f", gp_jdom_get(r, "max_temperature_c")),
            num_or_na(c, sizeof c, "%.0f", gp_jdom_get(tot, "energy_j")), d);

    const gp_jv *devs = gp_jdom_get(r, "devices");
    if (devs && devs->type == GP_JARR && devs->n) {
        const char *hdr[] = {"#",          "Device",     "Backend",     "Kind",
                             "Samples",    "Util avg %", "Util max %",  "Mem peak",
                             "Mem peak %", "Temp max C", "Power avg W", "Power max W"};
        gp_table *t = gp_table_create(12, hdr, "rlllrrrrrrrr");
        for (size_t i = 0; i < devs->n; i++) {
            const gp_jv *dv = &devs->items[i];
            char cells[12][64];
            const char *cp[12];
            snprintf(cells[0], 64, "%s", num_or_na(a, sizeof a, "%.0f", gp_jdom_get(dv, "index")));
            snprintf(cells[1], 64, "%s", gp_jdom_str(gp_jdom_get(dv, "name"), "?"));
            snprintf(cells[2], 64, "%s", gp_jdom_str(gp_jdom_get(dv, "backend"), "?"));
            snprintf(cells[3], 64, "%s", gp_jdom_str(gp_jdom_get(dv, "kind"), "?"));
            snprintf(cells[4], 64, "%s",
                     num_or_na(a, sizeof a, "%.0f", gp_jdom_get(dv, "samples")));
            snprintf(cells[5], 64, "%s",
                     num_or_na(a, sizeof a, "%.1f", dev_stat(dv, "util_pct", "avg")));
            snprintf(cells[6], 64, "%s",
                     num_or_na(a, sizeof a, "%.0f", dev_stat(dv, "util_pct", "max")));
            double mb;
            if (gp_jdom_num(dev_stat(dv, "mem_used_bytes", "max"), &mb))
                gp_fmt_bytes(cells[7], 64, mb);
            else
                snprintf(cells[7], 64, "N/A");
            snprintf(cells[8], 64, "%s",
                     num_or_na(a, sizeof a, "%.0f", gp_jdom_get(dv, "peak_mem_pct")));
            snprintf(cells[9], 64, "%s",
                     num_or_na(a, sizeof a, "%.0f", dev_stat(dv, "temp_c", "max")));
            snprintf(cells[10], 64, "%s",
                     num_or_na(a, sizeof a, "%.1f", dev_stat(dv, "power_w", "avg")));
            snprintf(cells[11], 64, "%s",
                     num_or_na(a, sizeof a, "%.1f", dev_stat(dv, "power_w", "max")));
            for (int k = 0; k < 12; k++) cp[k] = cells[k];
            gp_table_row(t, cp);
        }
        fprintf(o, "\nDevices\n");
        gp_table_print(t, o, 40);
        gp_table_destroy(t);
    }

    const gp_jv *inf = gp_jdom_get(r, "inference");
    double ninf = 0;
    if (gp_jdom_num(gp_jdom_get(inf, "count"), &ninf) && ninf > 0) {
        fprintf(o, "\nInference latency (ms): count %.0f, mean %s, p50 %s, p95 %s, p99 %s", ninf,
                num_or_na(a, sizeof a, "%.2f", gp_jdom_get(inf, "mean_ms")),
                num_or_na(b, sizeof b, "%.2f", gp_jdom_get(inf, "p50_ms")),
                num_or_na(c, sizeof c, "%.2f", gp_jdom_get(inf, "p95_ms")),
                num_or_na(d, sizeof d, "%.2f", gp_jdom_get(inf, "p99_ms")));
        fprintf(o, ", max %s\n", num_or_na(a, sizeof a, "%.2f", gp_jdom_get(inf, "max_ms")));
    }

    const gp_jv *al = gp_jdom_get(r, "alerts");
    fprintf(o, "\nAlerts:");
    int nal = 0;
    for (size_t i = 0; al && al->type == GP_JOBJ && i < al->n; i++) {
        double k;
        if (!gp_jdom_num(&al->items[i], &k) || k <= 0) continue;
        fprintf(o, "%s %s %.0f", nal++ ? "," : "", al->keys[i], k);
    }
    fprintf(o, "%s\n", nal ? "" : " none");

    const gp_jv *sug = gp_jdom_get(r, "suggestions");
    fprintf(o, "\nSuggestions:%s\n", sug && sug->type == GP_JARR && sug->n ? "" : " none");
    for (size_t i = 0; sug && sug->type == GP_JARR && i < sug->n; i++)
        fprintf(o, "  - [%s] %s\n", gp_jdom_str(gp_jdom_get(&sug->items[i], "kind"), "?"),
                gp_jdom_str(gp_jdom_get(&sug->items[i], "message"), ""));
    fprintf(o, "\nReport: %s (the full JSON with --json)\n", path);
}

static int cmd_show(const gp_mon_config *cfg, const char *name, int json)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/%s.json", cfg->output_dir, name);
    char *text = slurp(path);
    if (!text) {
        if (running_pid(cfg->output_dir, name))
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
    print_report(&r, path, stdout);
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
            fprintf(stderr, "gpuprof session: --interval: %s\n", err);
            return 2;
        }
    }
    if (!strcmp(sub, "list")) return cmd_list(&cfg, json);
    if (!name || optind + 2 < argc) {
        fprintf(stderr, "gpuprof session %s: expects one session NAME\n", sub);
        return 2;
    }
    if (!valid_name(name)) {
        fprintf(stderr, "gpuprof session: bad name '%s' (letters, digits, '.', '_', '-')\n", name);
        return 2;
    }
    const char *astore = cfg.store_path[0] ? cfg.store_path : NULL;
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
        pid_t pid = running_pid(cfg.output_dir, name);
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
