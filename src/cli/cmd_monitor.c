/* cli/cmd_monitor.c: `gpuprof monitor`: a live full-screen view on a terminal
 * (per-device bars, a history sparkline, processes, alerts) or, when the
 * output is not a terminal, one JSON object or CSV row per device and tick
 * plus one per alert; optionally a Prometheus endpoint and/or textfile. */
#include "cli/cli.h"
#include "cli/mon_common.h"
#include "core/clock.h"
#include "core/vec.h"
#include "report/monitor.h"
#include "serve/metrics.h"
#include "serve/promhttp.h"
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t stop_flag;
static void on_signal(int sig)
{
    (void)sig;
    stop_flag = 1;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: gpuprof monitor [options]\n"
               "  Live view of every device. On a terminal: a full-screen view (q or Ctrl-C\n"
               "  quits); piped: one JSON object per device and tick (or CSV with --csv).\n"
               "  --interval S     seconds between samples (default: the configuration's\n"
               "                   metrics_update_interval_seconds, 1; 0.01 .. 3600)\n"
               "  --count N        stop after N ticks (default: until interrupted)\n"
               "  --json | --csv   force line output (also on a terminal)\n"
               "  --gpus-only      leave out OpenCL and host devices\n"
               "  --config FILE    monitor configuration (YAML; default $GPUPROF_CONFIG)\n"
               "  --set KEY=VALUE  override one configuration key\n"
               "  --prometheus ADDR:PORT  serve the Prometheus exposition on GET /metrics\n"
               "                   (loopback unless --token-file or --no-auth; docs/fleet.md)\n"
               "  --textfile FILE  rewrite FILE (e.g. DIR/gpuprof.prom) atomically every tick\n"
               "  --metric-names dcgm  also expose the dcgm-exporter names and labels\n"
               "  --token-file F   bearer token scrapers must send (first line of F)\n"
               "  --no-auth        allow a non-loopback --prometheus address without a token\n"
               "  With --prometheus or --textfile nothing is printed unless --json/--csv.\n");
}

typedef struct mon_state {
    int json, csv, gpus_only, quiet;
    long count;
    char last_alert[256];
    GP_VEC(gp_event) pending; /* alerts of the current tick, printed after it */
} mon_state;

/* Called on the sampling thread with the monitor locked: only copies. */
static void on_event(const gp_event *ev, void *user)
{
    mon_state *ms = user;
    if (ev->type != GP_EV_ALERT && ev->type != GP_EV_ALERT_CLEARED) return;
    snprintf(ms->last_alert, sizeof ms->last_alert, "%s", ev->message);
    GP_VEC_PUSH(ms->pending, *ev);
}

/* Reads the first line of path into tok (size n); 0 or 2 with a message. */
static int read_token(const char *path, char *tok, size_t n)
{
    FILE *f = fopen(path, "re");
    if (!f) {
        fprintf(stderr, "gpuprof monitor: --token-file %s: %s\n", path, strerror(errno));
        return 2;
    }
    if (!fgets(tok, (int)n, f)) tok[0] = 0;
    fclose(f);
    tok[strcspn(tok, "\r\n")] = 0;
    if (strlen(tok) < 16) {
        fprintf(stderr,
                "gpuprof monitor: --token-file %s: the token must have at least 16 "
                "characters\n",
                path);
        return 2;
    }
    return 0;
}

typedef struct prom_opts {
    const char *listen, *textfile, *token_file;
    int dcgm, no_auth;
} prom_opts;

/* Sleeps until deadline (monotonic ns); on a terminal returns early when 'q'
 * is typed. Returns 1 when the user asked to quit. */
static int wait_until(int64_t deadline, int tty)
{
    for (;;) {
        int64_t left = deadline - gp_clock_mono_ns();
        if (left <= 0 || stop_flag) return 0;
        if (tty && isatty(0)) {
            fd_set fds;
            FD_ZERO(&fds);
            FD_SET(0, &fds);
            struct timeval tv = {(time_t)(left / 1000000000), (long)(left % 1000000000 / 1000)};
            int r = select(1, &fds, NULL, NULL, &tv);
            if (r > 0) {
                char c;
                if (read(0, &c, 1) == 1 && (c == 'q' || c == 'Q')) return 1;
            }
        } else {
            struct timespec ts = {(time_t)(left / 1000000000), (long)(left % 1000000000)};
            nanosleep(&ts, NULL);
        }
    }
}

int gp_cmd_monitor(int argc, char **argv)
{
    static const struct option lo[] = {{"interval", required_argument, 0, 'i'},
                                       {"count", required_argument, 0, 'n'},
                                       {"json", no_argument, 0, 'j'},
                                       {"csv", no_argument, 0, 'C'},
                                       {"gpus-only", no_argument, 0, 'g'},
                                       {"config", required_argument, 0, 'c'},
                                       {"set", required_argument, 0, 's'},
                                       {"prometheus", required_argument, 0, 'P'},
                                       {"textfile", required_argument, 0, 'T'},
                                       {"metric-names", required_argument, 0, 'M'},
                                       {"token-file", required_argument, 0, 'K'},
                                       {"no-auth", no_argument, 0, 'A'},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
    gp_mon_opts mo = {0};
    mon_state ms = {0};
    prom_opts po = {0};
    const char *interval = NULL;
    int ch;
    optind = 1;
    while ((ch = getopt_long(argc, argv, "i:n:jCgc:s:h", lo, NULL)) != -1) {
        switch (ch) {
        case 'i':
            interval = optarg;
            break;
        case 'n':
            if ((ms.count = gp_cli_parse_count("--count", optarg)) < 0) return 2;
            break;
        case 'j':
            ms.json = 1;
            break;
        case 'C':
            ms.csv = 1;
            break;
        case 'g':
            ms.gpus_only = 1;
            break;
        case 'c':
            mo.config = optarg;
            break;
        case 's':
            if (gp_cli_mon_add_set(&mo, optarg)) return 2;
            break;
        case 'P':
            po.listen = optarg;
            break;
        case 'T':
            po.textfile = optarg;
            break;
        case 'M':
            if (strcmp(optarg, "dcgm") && strcmp(optarg, "gpuprof")) {
                fprintf(stderr, "gpuprof monitor: --metric-names expects dcgm or gpuprof\n");
                return 2;
            }
            po.dcgm = !strcmp(optarg, "dcgm");
            break;
        case 'K':
            po.token_file = optarg;
            break;
        case 'A':
            po.no_auth = 1;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "gpuprof monitor: unexpected argument '%s'\n", argv[optind]);
        return 2;
    }
    char token[512] = "";
    if (po.token_file && read_token(po.token_file, token, sizeof token)) return 2;
    if ((po.token_file || po.no_auth || po.dcgm) && !po.listen && !po.textfile) {
        fprintf(stderr, "gpuprof monitor: --metric-names, --token-file and --no-auth go with "
                        "--prometheus or --textfile\n");
        return 2;
    }
    gp_mon_config cfg;
    if (gp_cli_mon_config(&mo, &cfg)) return 2;
    /* the view refreshes every metrics_update_interval_seconds unless --interval */
    cfg.monitoring_interval_seconds = cfg.metrics_update_interval_seconds;
    if (interval) {
        char err[256];
        if (gp_mon_config_set(&cfg, "monitoring_interval_seconds", interval, err, sizeof err)) {
            /* name the option given, not the configuration key behind it */
            fprintf(stderr,
                    "gpuprof monitor: --interval expects seconds from 0.01 to 3600, got '%s'\n",
                    interval);
            return 2;
        }
    }
    int exporting = po.listen || po.textfile;
    ms.quiet = exporting && !ms.json && !ms.csv;
    int tty = !exporting && isatty(1) && !ms.json && !ms.csv;
    if (!tty && !ms.csv) ms.json = 1;
    gp_monitor *m = gp_monitor_create(&cfg);
    if (!m) return 3;
    gp_monitor_on_event(m, on_event, &ms);
    gp_monitor_open_event_log(m);
    gp_metrics *mx = NULL;
    gp_promhttp *http = NULL;
    int rc = 0;
    if (exporting) {
        gp_metrics_opts mopt = {0};
        mopt.dcgm = po.dcgm;
        mx = gp_metrics_create(m, &mopt);
        if (!mx) {
            rc = 3;
            goto done;
        }
    }
    if (po.listen) {
        gp_err err = {0};
        gp_promhttp_opts hopt = {token[0] ? token : NULL, po.no_auth};
        gp_monitor_sample_now(m); /* the first scrape already has a sample */
        http = gp_promhttp_start(po.listen, mx, &hopt, &err);
        memset(token, 0, sizeof token);
        if (!http) {
            fprintf(stderr, "gpuprof monitor: --prometheus: %s\n", err.msg);
            rc = 2;
            goto done;
        }
        if (po.no_auth && !hopt.token)
            fprintf(stderr,
                    "gpuprof monitor: WARNING: --no-auth: the metrics on %s are open to "
                    "anyone who can reach it\n",
                    po.listen);
        fprintf(stderr, "gpuprof monitor: metrics on http://%s/metrics (port %d)\n", po.listen,
                gp_promhttp_port(http));
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    /* a hangup stops it as SIGTERM does (its nvidia-smi children are stopped
     * on the way out), unless it was started ignoring hangups (nohup) */
    struct sigaction old_hup;
    if (sigaction(SIGHUP, NULL, &old_hup) == 0 && old_hup.sa_handler != SIG_IGN)
        sigaction(SIGHUP, &sa, NULL);
    if (ms.csv && !ms.quiet) {
        gp_sbuf h = {0};
        gp_report_monitor_csv_header(&h);
        gp_sbuf_write(&h, stdout);
        gp_sbuf_free(&h);
    }
    struct termios saved;
    int raw = 0;
    if (tty && isatty(0) && tcgetattr(0, &saved) == 0) { /* keys without Enter, no echo */
        struct termios t = saved;
        t.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
        t.c_cc[VMIN] = 0;
        t.c_cc[VTIME] = 0;
        raw = tcsetattr(0, TCSANOW, &t) == 0;
    }
    if (tty) printf("\033[?25l"); /* hide the cursor */
    int64_t period = (int64_t)(cfg.monitoring_interval_seconds * 1e9);
    int64_t next = gp_clock_mono_ns();
    gp_sbuf line = {0};
    for (uint64_t tick = 0; !stop_flag && (ms.count == 0 || tick < (uint64_t)ms.count); tick++) {
        gp_monitor_sample_now(m);
        if (po.textfile) {
            gp_err err = {0};
            if (gp_metrics_write_textfile(mx, po.textfile, &err)) {
                fprintf(stderr, "gpuprof monitor: --textfile: %s\n", err.msg);
                rc = 1;
                break;
            }
        }
        if (tty) {
            struct winsize ws;
            int cols = 100;
            if (ioctl(1, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 40) cols = ws.ws_col;
            gp_sbuf scr = {0};
            gp_report_monitor_screen(&scr, m, ms.gpus_only, ms.last_alert,
                                     cfg.monitoring_interval_seconds, cols);
            gp_sbuf_write(&scr, stdout);
            fflush(stdout);
            gp_sbuf_free(&scr);
        } else if (!ms.quiet) {
            gp_sbuf_reset(&line);
            gp_report_monitor_lines(&line, m, ms.csv, ms.gpus_only, tick);
            gp_report_monitor_alerts(&line, m, ms.pending.v, ms.pending.n, ms.csv, ms.gpus_only,
                                     tick);
            if (gp_sbuf_write(&line, stdout) || fflush(stdout)) break; /* reader went away */
        }
        ms.pending.n = 0;
        if (ms.count && tick + 1 >= (uint64_t)ms.count) break;
        next += period;
        if (wait_until(next, tty)) break;
    }
    gp_sbuf_free(&line);
    if (tty) printf("\033[?25h\n");
    if (raw) tcsetattr(0, TCSANOW, &saved);
done:
    gp_promhttp_stop(http);
    gp_metrics_destroy(mx);
    gp_monitor_destroy(m);
    GP_VEC_FREE(ms.pending);
    return rc;
}
