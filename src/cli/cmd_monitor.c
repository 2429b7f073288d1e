/* cli/cmd_monitor.c: `gpuprof monitor`: a live full-screen view on a terminal
 * (per-device bars, a history sparkline, processes, alerts) or, when the
 * output is not a terminal, one JSON object or CSV row per device and tick
 * plus one per alert; optionally a Prometheus endpoint and/or textfile. */
#include "cli/cli.h"
#include "cli/mon_common.h"
#include "core/clock.h"
#include "core/table.h"
#include "core/vec.h"
#include "monitor/alerts.h"
#include "monitor/fields.h"
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
    char host[256];
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

static int shown(const gp_dev_info *d, const mon_state *ms)
{
    return !ms->gpus_only || (!strcmp(d->kind, "gpu") && strcmp(d->backend, "opencl"));
}

static void csv_str(gp_sbuf *b, const char *s)
{
    gp_sbuf_putc(b, '"');
    for (const char *p = s; *p; p++) {
        if (*p == '"') gp_sbuf_putc(b, '"');
        gp_sbuf_putc(b, *p == '\n' ? ' ' : *p);
    }
    gp_sbuf_putc(b, '"');
}

static void json_str_or_null(gp_sbuf *b, const char *s)
{
    if (s && *s)
        gp_json_str(b, s);
    else
        gp_sbuf_puts(b, "null");
}

/* The alert records of this tick: the events.jsonl record plus the
 * device's uuid, name and the hostname (JSON), or a CSV row whose trailing
 * columns say event, kind, level, value, threshold and message. */
static void print_alerts(gp_monitor *m, mon_state *ms, uint64_t tick, gp_sbuf *b)
{
    for (size_t k = 0; k < ms->pending.n; k++) {
        const gp_event *ev = &ms->pending.v[k];
        gp_dev_info d;
        int have = ev->device >= 0 && gp_monitor_device_info(m, (size_t)ev->device, &d) == 0;
        if (have && !shown(&d, ms)) continue;
        if (ms->csv) {
            gp_sbuf_printf(b, "%lld,%llu,", (long long)ev->wall_ns, (unsigned long long)tick);
            if (ev->device >= 0) gp_sbuf_printf(b, "%d", ev->device);
            gp_sbuf_putc(b, ',');
            if (have) csv_str(b, d.name);
            gp_sbuf_printf(b, ",%s,", have ? d.backend : "");
            if (have) gp_sbuf_puts(b, d.present ? "1" : "0");
            for (int f = 0; f < GP_MF_COUNT; f++) gp_sbuf_putc(b, ',');
            gp_sbuf_putc(b, ',');
            if (have) csv_str(b, d.uuid);
            gp_sbuf_putc(b, ',');
            csv_str(b, ms->host);
            gp_sbuf_printf(b, ",%s,%s,%s,%.17g,%.17g,", gp_event_type_name(ev->type),
                           gp_alert_kind_name(ev->kind), gp_alert_level_name(ev->level), ev->value,
                           ev->threshold);
            csv_str(b, ev->message);
            gp_sbuf_putc(b, '\n');
        } else {
            gp_sbuf pre = {0};
            gp_event_json(&pre, ev);
            /* same record as events.jsonl, with the tick and identity added */
            gp_sbuf_add(b, pre.s, pre.n - 1);
            gp_sbuf_free(&pre);
            gp_json_key(b, "tick", 1);
            gp_json_int(b, (int64_t)tick);
            if (have) {
                gp_json_key(b, "name", 1);
                gp_json_str(b, d.name);
                gp_json_key(b, "uuid", 1);
                json_str_or_null(b, d.uuid);
            }
            gp_json_key(b, "hostname", 1);
            json_str_or_null(b, ms->host);
            gp_sbuf_puts(b, "}\n");
        }
    }
    ms->pending.n = 0;
}

static void print_lines(gp_monitor *m, const mon_state *ms, uint64_t tick, gp_sbuf *b)
{
    size_t n = gp_monitor_device_count(m);
    for (size_t i = 0; i < n; i++) {
        gp_dev_info d;
        gp_dev_sample s;
        if (gp_monitor_device_info(m, i, &d) || !shown(&d, ms)) continue;
        int have = gp_monitor_get_status(m, i, &s) == 0;
        if (!have) memset(&s, 0, sizeof s);
        if (ms->csv) {
            gp_sbuf_printf(b, "%lld,%llu,%zu,", (long long)s.wall_ns, (unsigned long long)tick, i);
            csv_str(b, d.name);
            gp_sbuf_printf(b, ",%s,%d", d.backend, d.present);
            for (int f = 0; f < GP_MF_COUNT; f++) {
                if (gp_sample_has(&s, f))
                    gp_sbuf_printf(b, ",%.17g", s.v[f]);
                else
                    gp_sbuf_puts(b, ",");
            }
            gp_sbuf_putc(b, ',');
            if (d.uuid[0]) csv_str(b, d.uuid);
            gp_sbuf_putc(b, ',');
            csv_str(b, ms->host);
            gp_sbuf_puts(b, ",,,,,,\n");
        } else {
            gp_sbuf_puts(b, "{\"tick\":");
            gp_json_int(b, (int64_t)tick);
            gp_json_key(b, "wall_ns", 1);
            if (have)
                gp_json_int(b, s.wall_ns);
            else
                gp_sbuf_puts(b, "null");
            gp_json_key(b, "device", 1);
            gp_json_int(b, (int64_t)i);
            gp_json_key(b, "name", 1);
            gp_json_str(b, d.name);
            gp_json_key(b, "backend", 1);
            gp_json_str(b, d.backend);
            gp_json_key(b, "uuid", 1);
            json_str_or_null(b, d.uuid);
            gp_json_key(b, "hostname", 1);
            json_str_or_null(b, ms->host);
            gp_json_key(b, "present", 1);
            gp_sbuf_puts(b, d.present ? "true" : "false");
            gp_fields_json(b, &s, 1);
            gp_sbuf_puts(b, "}\n");
        }
    }
}

static void bar(gp_sbuf *b, double pct, int width)
{
    if (isnan(pct)) {
        gp_sbuf_printf(b, "[%*s]", width, "N/A");
        return;
    }
    if (pct < 0) pct = 0;
    if (pct > 100) pct = 100;
    int fill = (int)(pct / 100.0 * width + 0.5);
    const char *col = pct >= 90 ? "\033[31m" : pct >= 70 ? "\033[33m" : "\033[32m";
    gp_sbuf_printf(b, "[%s", col);
    for (int i = 0; i < width; i++) gp_sbuf_puts(b, i < fill ? "|" : " ");
    gp_sbuf_puts(b, "\033[0m]");
}

static void sparkline(gp_sbuf *b, gp_monitor *m, size_t dev, int width)
{
    static const char *const lv[] = {" ",      "\u2581", "\u2582", "\u2583", "\u2584",
                                     "\u2585", "\u2586", "\u2587", "\u2588"};
    gp_dev_sample h[128];
    if (width > 128) width = 128;
    size_t n = gp_monitor_history(m, dev, h, (size_t)width);
    for (size_t i = n; i < (size_t)width; i++) gp_sbuf_putc(b, ' ');
    for (size_t i = 0; i < n; i++) {
        if (!gp_sample_has(&h[i], GP_MF_UTIL)) {
            gp_sbuf_putc(b, '.');
            continue;
        }
        int k = (int)(h[i].v[GP_MF_UTIL] / 100.0 * 8 + 0.5);
        gp_sbuf_puts(b, lv[k < 0 ? 0 : k > 8 ? 8 : k]);
    }
}

static void draw_screen(gp_monitor *m, const mon_state *ms, double interval)
{
    struct winsize ws;
    int cols = 100;
    if (ioctl(1, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 40) cols = ws.ws_col;
    int bw = cols >= 120 ? 20 : 12, sw = cols >= 120 ? 40 : 24;
    gp_sbuf b = {0};
    gp_sbuf_puts(&b, "\033[H\033[2J");
    char ts[32];
    time_t now = time(NULL);
    struct tm tm;
    localtime_r(&now, &tm);
    strftime(ts, sizeof ts, "%H:%M:%S", &tm);
    gp_sbuf_printf(&b, "\033[1mgpuprof monitor\033[0m  %s  every %.2f s  (q or Ctrl-C quits)\n", ts,
                   interval);
    size_t n = gp_monitor_device_count(m);
    int gpus = 0;
    for (size_t i = 0; i < n; i++) {
        gp_dev_info d;
        gp_dev_sample s;
        if (gp_monitor_device_info(m, i, &d) || !shown(&d, ms)) continue;
        if (!strcmp(d.kind, "gpu") && strcmp(d.backend, "opencl")) gpus++;
        int have = gp_monitor_get_status(m, i, &s) == 0;
        if (!have) memset(&s, 0, sizeof s);
        gp_sbuf_printf(&b, "\n\033[1m%zu %.50s\033[0m  (%s%s%s)\n", i, d.name, d.backend,
                       d.present ? "" : ", LOST: ", d.present ? "" : d.status);
        double util = gp_sample_has(&s, GP_MF_UTIL) ? s.v[GP_MF_UTIL] : NAN;
        double memp = gp_sample_has(&s, GP_MF_MEM_USED) && gp_sample_has(&s, GP_MF_MEM_TOTAL) &&
                              s.v[GP_MF_MEM_TOTAL] > 0
                          ? 100.0 * s.v[GP_MF_MEM_USED] / s.v[GP_MF_MEM_TOTAL]
                          : NAN;
        char t1[48], t2[48], t3[48], t4[48], t5[48];
        gp_sbuf_puts(&b, "  util ");
        bar(&b, util, bw);
        gp_sbuf_printf(&b, " %-6s  mem ", gp_fields_fmt(&s, GP_MF_UTIL, t1, sizeof t1));
        bar(&b, memp, bw);
        gp_sbuf_printf(&b, " %s / %s\n", gp_fields_fmt(&s, GP_MF_MEM_USED, t2, sizeof t2),
                       gp_fields_fmt(&s, GP_MF_MEM_TOTAL, t3, sizeof t3));
        if (!strcmp(d.backend, "host"))
            gp_sbuf_printf(&b, "  load %s %s %s", gp_fields_fmt(&s, GP_MF_LOAD1, t1, sizeof t1),
                           gp_fields_fmt(&s, GP_MF_LOAD5, t2, sizeof t2),
                           gp_fields_fmt(&s, GP_MF_LOAD15, t3, sizeof t3));
        else if (strcmp(d.backend, "opencl"))
            gp_sbuf_printf(&b, "  temp %s  power %s / %s  sm %s  mem %s  %s",
                           gp_fields_fmt(&s, GP_MF_TEMP, t1, sizeof t1),
                           gp_fields_fmt(&s, GP_MF_POWER, t2, sizeof t2),
                           gp_fields_fmt(&s, GP_MF_POWER_LIMIT, t3, sizeof t3),
                           gp_fields_fmt(&s, GP_MF_CLOCK_SM, t4, sizeof t4),
                           gp_fields_fmt(&s, GP_MF_CLOCK_MEM, t5, sizeof t5),
                           gp_sample_has(&s, GP_MF_THROTTLE) &&
                                   ((uint64_t)s.v[GP_MF_THROTTLE] & ~(uint64_t)GP_THR_GPU_IDLE)
                               ? "THROTTLED"
                               : "");
        else
            gp_sbuf_printf(&b, "  %d compute units, %d MHz, %s", d.compute_units, d.max_clock_mhz,
                           d.platform);
        gp_sbuf_puts(&b, "\n  util history ");
        sparkline(&b, m, i, sw);
        gp_sbuf_putc(&b, '\n');
        gp_dev_proc p[8];
        size_t np = gp_monitor_processes(m, i, p, 8);
        for (size_t k = 0; k < np; k++) {
            gp_sbuf_printf(&b, "    pid %-8d %-20.20s", p[k].pid, p[k].name);
            if (p[k].valid & GP_PROC_MEM)
                gp_sbuf_printf(&b, " mem %s", gp_fmt_bytes(t1, sizeof t1, (double)p[k].mem_bytes));
            if (p[k].valid & GP_PROC_UTIL) gp_sbuf_printf(&b, " util %.0f %%", p[k].util_pct);
            gp_sbuf_putc(&b, '\n');
        }
    }
    if (!gpus && !ms->gpus_only) {
        gp_health_entry h[16];
        size_t nh = 0;
        gp_monitor_health(m, h, 16, &nh);
        gp_sbuf_puts(&b, "\nNo GPU found:");
        for (size_t i = 0; i < nh && i < 16; i++)
            if (strcmp(h[i].backend, "host") && strcmp(h[i].backend, "opencl"))
                gp_sbuf_printf(&b, " %s.", h[i].reason);
        gp_sbuf_putc(&b, '\n');
    }
    if (ms->last_alert[0]) gp_sbuf_printf(&b, "\n\033[33mlast alert: %s\033[0m\n", ms->last_alert);
    gp_sbuf_write(&b, stdout);
    fflush(stdout);
    gp_sbuf_free(&b);
}

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
            fprintf(stderr, "gpuprof monitor: --interval: %s\n", err);
            return 2;
        }
    }
    int exporting = po.listen || po.textfile;
    ms.quiet = exporting && !ms.json && !ms.csv;
    int tty = !exporting && isatty(1) && !ms.json && !ms.csv;
    if (!tty && !ms.csv) ms.json = 1;
    if (gethostname(ms.host, sizeof ms.host - 1)) ms.host[0] = 0;
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
        snprintf(mopt.hostname, sizeof mopt.hostname, "%s", ms.host);
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
    if (ms.csv && !ms.quiet) {
        printf("wall_ns,tick,device,name,backend,present");
        for (int f = 0; f < GP_MF_COUNT; f++) printf(",%s", gp_mfield_key(f));
        printf(",uuid,hostname,event,alert_kind,alert_level,alert_value,alert_threshold,"
               "message\n");
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
        if (tty)
            draw_screen(m, &ms, cfg.monitoring_interval_seconds);
        else if (!ms.quiet) {
            gp_sbuf_reset(&line);
            print_lines(m, &ms, tick, &line);
            print_alerts(m, &ms, tick, &line);
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
