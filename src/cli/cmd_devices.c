/* cli/cmd_devices.c: `gpuprof devices` (every device the monitor finds, with
 * one sample) and `gpuprof health` (per-backend state with the reason). */
#include "cli/cli.h"
#include "cli/mon_common.h"
#include "core/table.h"
#include "monitor/fields.h"
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

static size_t count_gpus(gp_monitor *m)
{
    size_t n = gp_monitor_device_count(m), g = 0;
    for (size_t i = 0; i < n; i++) {
        gp_dev_info d;
        if (!gp_monitor_device_info(m, i, &d) && d.present && !strcmp(d.kind, "gpu") &&
            strcmp(d.backend, "opencl"))
            g++;
    }
    return g;
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
    size_t n = gp_monitor_device_count(m), gpus = count_gpus(m);
    if (json) {
        gp_sbuf b = {0};
        int overall;
        gp_sbuf_puts(&b, "{\"gpu_count\":");
        gp_json_int(&b, (int64_t)gpus);
        gp_json_key(&b, "backends", 1);
        gp_cli_mon_health_json(m, &b, &overall);
        gp_json_key(&b, "health", 1);
        gp_json_str(&b, gp_health_name(overall));
        gp_json_key(&b, "devices", 1);
        gp_sbuf_putc(&b, '[');
        for (size_t i = 0; i < n; i++) {
            if (i) gp_sbuf_putc(&b, ',');
            gp_cli_mon_device_json(m, i, &b);
        }
        gp_sbuf_puts(&b, "]}\n");
        gp_sbuf_write(&b, stdout);
        gp_sbuf_free(&b);
        gp_monitor_destroy(m);
        return 0;
    }
    if (!gpus) {
        gp_health_entry h[16];
        size_t nh = 0;
        gp_monitor_health(m, h, 16, &nh);
        printf("No GPU found.");
        for (size_t i = 0; i < nh && i < 16; i++)
            if (strcmp(h[i].backend, "host") && strcmp(h[i].backend, "opencl"))
                printf(" %s.", h[i].reason);
        printf("\n");
        if (n) printf("Other devices:\n");
    }
    const char *hdr[] = {"#",    "Backend", "Kind",  "Name",  "Memory", "Used",
                         "Util", "Temp",    "Power", "Units", "Driver", "Bus ID"};
    gp_table *t = gp_table_create(12, hdr, "rllllrrrrrll");
    for (size_t i = 0; i < n; i++) {
        gp_dev_info d;
        gp_dev_sample s;
        gp_monitor_device_info(m, i, &d);
        int have = gp_monitor_get_status(m, i, &s) == 0;
        if (!have) memset(&s, 0, sizeof s);
        char c[12][160];
        snprintf(c[0], sizeof c[0], "%zu", i);
        snprintf(c[1], sizeof c[1], "%s", d.backend);
        snprintf(c[2], sizeof c[2], "%s", d.kind);
        snprintf(c[3], sizeof c[3], "%s%s", d.name, d.present ? "" : " (lost)");
        gp_fields_fmt(&s, GP_MF_MEM_TOTAL, c[4], sizeof c[4]);
        gp_fields_fmt(&s, GP_MF_MEM_USED, c[5], sizeof c[5]);
        gp_fields_fmt(&s, GP_MF_UTIL, c[6], sizeof c[6]);
        gp_fields_fmt(&s, GP_MF_TEMP, c[7], sizeof c[7]);
        gp_fields_fmt(&s, GP_MF_POWER, c[8], sizeof c[8]);
        if (d.compute_units)
            snprintf(c[9], sizeof c[9], "%d", d.compute_units);
        else
            snprintf(c[9], sizeof c[9], "N/A");
        snprintf(c[10], sizeof c[10], "%s", d.driver_version[0] ? d.driver_version : "-");
        snprintf(c[11], sizeof c[11], "%s", d.pci_bus_id[0] ? d.pci_bus_id : "-");
        const char *cp[12];
        for (int k = 0; k < 12; k++) cp[k] = c[k];
        gp_table_row(t, cp);
    }
    gp_table_print(t, stdout, 48);
    gp_table_destroy(t);
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
        gp_sbuf_puts(&b, "{\"backends\":");
        gp_cli_mon_health_json(m, &b, &overall);
        gp_json_key(&b, "overall", 1);
        gp_json_str(&b, gp_health_name(overall));
        gp_sbuf_puts(&b, "}\n");
        gp_sbuf_write(&b, stdout);
        gp_sbuf_free(&b);
    } else {
        gp_health_entry h[16];
        size_t nh = 0;
        overall = gp_monitor_health(m, h, 16, &nh);
        const char *hdr[] = {"Backend", "State", "Devices", "Reason"};
        gp_table *t = gp_table_create(4, hdr, "llrl");
        for (size_t i = 0; i < nh && i < 16; i++)
            gp_table_rowf(t, "%s\t%s\t%d\t%s", h[i].backend, gp_health_name(h[i].state),
                          h[i].devices, h[i].reason);
        gp_table_print(t, stdout, 0);
        gp_table_destroy(t);
        printf("overall: %s%s\n", gp_health_name(overall),
               overall == GP_HEALTH_UNAVAILABLE ? " (no GPU backend has a device)" : "");
    }
    gp_monitor_destroy(m);
    if (!exit_code) return 0;
    return overall == GP_HEALTH_OK ? 0 : overall == GP_HEALTH_DEGRADED ? 1 : 3;
}
