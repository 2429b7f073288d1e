/* cli/cmd_analyze.c: `gpuprof analyze PATH...`: the Holistic Trace Analysis
 * family (temporal / kernel / idle breakdowns, overlap, launch statistics,
 * queue length, memory bandwidth, CPU/GPU timeline, steps, stragglers) per
 * rank, as a text report or JSON; --compat hta gives HTA 0.6.1's numbers. */
#include "cli/cli.h"
#include "core/clock.h"
#include "core/error.h"
#include "report/analyze.h"
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
    fprintf(f, "usage: gpuprof analyze [options] PATH...\n"
               "  PATH: trace file (.json/.json.gz) or folder of rank files\n"
               "  --compat hta            reproduce HTA 0.6.1's preprocessing and numbers\n"
               "  --json                  machine-readable output (keys of expected.hta.json)\n"
               "  --top N                 kernels per type before folding into 'others' (10)\n"
               "  --duration-ratio R      cumulative share kept before folding (0.8)\n"
               "  --kernel-wait-us US     gap below which idle time is kernel_wait (30)\n"
               "  --runtime-cutoff-us US  launch call duration outlier threshold (50)\n"
               "  --delay-cutoff-us US    launch delay outlier threshold (100)\n"
               "  --queue-full N          queue length counted as full (1024)\n"
               "  --straggler-z Z         robust z-score above which a rank is an outlier (3.5)\n"
               "  --wide                  do not shorten kernel names in tables\n");
}

static int parse_us(const char *opt, const char *val, int64_t *ns)
{
    char *end;
    double v = strtod(val, &end);
    if (*end || !(v >= 0) || v > 9e12) {
        fprintf(stderr, "gpuprof: %s expects a non-negative number of microseconds, got '%s'\n",
                opt, val);
        return -1;
    }
    *ns = (int64_t)llround(v * 1000.0);
    return 0;
}

int gp_cmd_analyze(int argc, char **argv)
{
    gp_analyze_opts o;
    gp_analyze_opts_default(&o);
    int json = 0;
    static const struct option lopts[] = {{"compat", required_argument, 0, 'c'},
                                          {"json", no_argument, 0, 'j'},
                                          {"top", required_argument, 0, 't'},
                                          {"duration-ratio", required_argument, 0, 'r'},
                                          {"kernel-wait-us", required_argument, 0, 'k'},
                                          {"runtime-cutoff-us", required_argument, 0, 'R'},
                                          {"delay-cutoff-us", required_argument, 0, 'D'},
                                          {"queue-full", required_argument, 0, 'q'},
                                          {"straggler-z", required_argument, 0, 'z'},
                                          {"wide", no_argument, 0, 'w'},
                                          {"help", no_argument, 0, 'h'},
                                          {0, 0, 0, 0}};
    int ch;
    optind = 1;
    while ((ch = getopt_long(argc, argv, "h", lopts, NULL)) != -1) {
        long lv;
        char *end;
        switch (ch) {
        case 'c':
            if (strcmp(optarg, "hta")) {
                fprintf(stderr, "gpuprof: --compat: only 'hta' is known, got '%s'\n", optarg);
                return 2;
            }
            o.compat = 1;
            break;
        case 'j':
            json = 1;
            break;
        case 'w':
            o.wide = 1;
            break;
        case 't':
            if ((lv = gp_cli_parse_count("--top", optarg)) < 0) return 2;
            o.top = lv;
            break;
        case 'q':
            if ((lv = gp_cli_parse_count("--queue-full", optarg)) < 0) return 2;
            o.queue_full = lv;
            break;
        case 'r':
            o.ratio = strtod(optarg, &end);
            if (*end || !(o.ratio >= 0 && o.ratio <= 1)) {
                fprintf(stderr, "gpuprof: --duration-ratio expects a number in [0, 1], got '%s'\n",
                        optarg);
                return 2;
            }
            break;
        case 'z':
            o.straggler_z = strtod(optarg, &end);
            if (*end || !(o.straggler_z > 0 && o.straggler_z < 1e9)) {
                fprintf(stderr, "gpuprof: --straggler-z expects a positive number, got '%s'\n",
                        optarg);
                return 2;
            }
            break;
        case 'k':
            if (parse_us("--kernel-wait-us", optarg, &o.kernel_wait_ns)) return 2;
            break;
        case 'R':
            if (parse_us("--runtime-cutoff-us", optarg, &o.lo.runtime_cutoff_ns)) return 2;
            break;
        case 'D':
            if (parse_us("--delay-cutoff-us", optarg, &o.lo.launch_delay_cutoff_ns)) return 2;
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
    gp_trace **traces;
    size_t n;
    int64_t t0 = gp_clock_mono_ns(), c0 = gp_clock_thread_cpu_ns();
    int rc = gp_cli_load_traces(argv + optind, argc - optind, &traces, &n);
    if (rc) return rc;
    int64_t t1 = gp_clock_mono_ns(), c1 = gp_clock_thread_cpu_ns();
    gp_analyze_result res;
    gp_err err = {0};
    if (gp_analyze_run(traces, n, &o, &res, &err)) {
        fprintf(stderr, "gpuprof: %s\n", err.msg);
        gp_cli_free_traces(traces, n);
        return 3;
    }
    int64_t t2 = gp_clock_mono_ns(), c2 = gp_clock_thread_cpu_ns();
    if (json) {
        gp_sbuf b = {0};
        gp_report_analyze_json(&b, &res, &o);
        rc = gp_sbuf_write(&b, stdout) ? 1 : 0;
        gp_sbuf_free(&b);
    } else {
        gp_report_analyze_text(stdout, &res, &o);
    }
    if (getenv("GPUPROF_ANALYZE_TIMES")) { /* for bench/: where the time goes */
        static const char *const ph[5] = {"load", "views", "analyses", "wait for timeline",
                                          "output"};
        int64_t out_ns = gp_clock_mono_ns() - t2, out_cpu = gp_clock_thread_cpu_ns() - c2;
        int64_t w[5] = {t1 - t0, res.phase_ns[0], res.phase_ns[1], res.phase_ns[2], out_ns};
        int64_t c[5] = {c1 - c0, res.phase_cpu_ns[0], res.phase_cpu_ns[1], res.phase_cpu_ns[2],
                        out_cpu};
        fprintf(stderr, "analyze times, wall / CPU of the main thread (ms):");
        for (int k = 0; k < 5; k++)
            fprintf(stderr, " %s %.1f / %.1f,", ph[k], (double)w[k] / 1e6, (double)c[k] / 1e6);
        fprintf(stderr, " timeline thread %.1f / %.1f\n", (double)res.tl_ns / 1e6,
                (double)res.tl_cpu_ns / 1e6);
    }
    gp_analyze_free(&res);
    gp_cli_free_traces(traces, n);
    return rc;
}
