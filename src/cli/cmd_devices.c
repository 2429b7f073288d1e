/* cli/cmd_devices.c: `gpuprof devices` (every device the monitor finds, with
 * one sample) and `gpuprof health` (per-backend state with the reason). */
#include "cli/cli.h"
#include "cli/mon_common.h"
#include "report/devices.h"
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static int parse_common(int argc, char **argv, gp_mon_opts *mo, int *json, void (*usage)(FILE *))
{
    static const struct option lo[] = {{"json", no_argument, 0, 'j'},
                                       {"config", required_argument, 0, 'c'},
                                       {"set", required_argument, 0, 's'},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
    int ch;
    optind = 1;
    while ((ch = getopt_long(argc, argv, "jc:s:h", lo, NULL)) != -1) {
        switch (ch) {
        case 'j':
            *json = 1;
            break;
        case 'c':
            mo->config = optarg;
            break;
        case 's':
            if (gp_cli_mon_add_set(mo, optarg)) return 2;
            break;
        case 'h':
            usage(stdout);
            return 1;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "gpuprof %s: unexpected argument '%s'\n", argv[0], argv[optind]);
        return 2;
    }
    return 0;
}

static void devices_usage(FILE *f)
{
    fprintf(f, "usage: gpuprof devices [--json] [--config FILE] [--set KEY=VALUE]...\n"
               "  Lists every device: NVIDIA GPUs (NVML, or nvidia-smi when NVML cannot be\n"
               "  used), AMD/Intel GPUs (sysfs), OpenCL devices and the host, with one sample.\n"
               "  --json           machine-readable output\n"
               "  --config FILE    monitor configuration (YAML; default $GPUPROF_CONFIG)\n"
               "  --set KEY=VALUE  override one configuration key\n");
}

static void health_usage(FILE *f)
{
    fprintf(f, "usage: gpuprof health [--json] [--exit-code] [--config FILE] [--set KEY=VALUE]...\n"
               "  Says for every device backend whether it is ok, degraded or unavailable, and\n"
               "  why. --exit-code: exit 0 when ok, 1 when degraded, 3 when no GPU works.\n"
               "  gpuprof health --bench: quick benchmarks judged against peak and baseline\n"
               "  (gpuprof health --bench --help).\n");
}

/* Samples twice 100 ms apart so that rates (CPU %) have a first value. */
static void two_samples(gp_monitor *m)
{
    gp_monitor_sample_now(m);
    struct timespec ts = {0, 100 * 1000000L};
    nanosleep(&ts, NULL);
    gp_monitor_sample_now(m);
}

int gp_cmd_devices(int argc, char **argv)
{
    gp_mon_opts mo = {0};
    int json = 0;
    int rc = parse_common(argc, argv, &mo, &json, devices_usage);
    if (rc) return rc == 1 ? 0 : rc;
    gp_mon_config cfg;
    if (gp_cli_mon_config(&mo, &cfg)) return 2;
    cfg.enable_event_log = 0;
    gp_monitor *m = gp_monitor_create(&cfg);
    if (!m) {
        fprintf(stderr, "gpuprof: out of memory\n");
        return 3;
    }
    two_samples(m);
    if (json) {
        gp_sbuf b = {0};
        gp_report_devices_json(&b, m);
        gp_sbuf_write(&b, stdout);
        gp_sbuf_free(&b);
    } else {
        gp_report_devices_text(stdout, m);
    }
    gp_monitor_destroy(m);
    return 0;
}

int gp_cmd_health(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--bench") && gp_cmd_bench_health)
            return gp_cmd_bench_health(argc, argv);
    gp_mon_opts mo = {0};
    int json = 0, exit_code = 0;
    /* --exit-code is only for health: strip it before the shared parser */
    char *args[64];
    int na = 0;
    for (int i = 0; i < argc && na < 63; i++) {
        if (!strcmp(argv[i], "--exit-code"))
            exit_code = 1;
        else
            args[na++] = argv[i];
    }
    args[na] = NULL;
    int rc = parse_common(na, args, &mo, &json, health_usage);
    if (rc) return rc == 1 ? 0 : rc;
    gp_mon_config cfg;
    if (gp_cli_mon_config(&mo, &cfg)) return 2;
    cfg.enable_event_log = 0;
    gp_monitor *m = gp_monitor_create(&cfg);
    if (!m) return 3;
    gp_monitor_sample_now(m); /* a lost GPU shows up at its first sample */
    int overall;
    if (json) {
        gp_sbuf b = {0};
        overall = gp_report_health_json(&b, m);
        gp_sbuf_write(&b, stdout);
        gp_sbuf_free(&b);
    } else {
        overall = gp_report_health_text(stdout, m);
    }
    gp_monitor_destroy(m);
    if (!exit_code) return 0;
    return overall == GP_HEALTH_OK ? 0 : overall == GP_HEALTH_DEGRADED ? 1 : 3;
}
