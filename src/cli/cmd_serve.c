/* cli/cmd_serve.c: `gpuprof serve [PATH...]`: the dashboard and the HTTP
 * API (serve/server.h); only option parsing here. */
#ifdef GP_HAVE_SERVE
#include "cli/cli.h"
#include "serve/server.h"
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void usage(FILE *f)
{
    fprintf(
        f,
        "usage: gpuprof serve [options] [PATH...]\n"
        "  PATH: a trace (.json/.json.gz), a folder of rank files, or a run of a store\n"
        "        (gpuprof.db:ID); each is served under a short id (GET /api/traces)\n"
        "  --store FILE         serve the runs of a store (/api/runs; each run is a trace)\n"
        "  --torch-trace PATH   TORCH_TRACE logs (a log or a folder; repeatable): GET\n"
        "                       /api/profiler/compile answers 'gpuprof compile --json PATH...'\n"
        "  --listen ADDR:PORT   address to listen on (default 127.0.0.1:6970; [ADDR]:PORT\n"
        "                       for IPv6; port 0 picks a free one, printed at start)\n"
        "  --token-file F       bearer tokens, one 'TOKEN [read|control]' per line (chmod 600);\n"
        "                       required on a non-loopback address\n"
        "  --no-auth            serve a non-loopback address without tokens (warned about)\n"
        "  --tls-cert F --tls-key F   serve HTTPS with this PEM certificate and key\n"
        "  --cache-mb N         memory for loaded traces and responses (default 1024)\n"
        "  --monitor            run the device sampler; /api/devices shows its latest sample and\n"
        "                       GET /metrics its Prometheus exposition (docs/fleet.md)\n"
        "  --metric-names dcgm  /metrics also carries the dcgm-exporter names and labels\n"
        "  --config FILE        monitor configuration (YAML; default $GPUPROF_CONFIG)\n"
        "  --threads N          network threads (default: one per core)\n"
        "  --max-per-ip N       concurrent requests per client address (default 32; 429 beyond)\n"
        "  --timeout S          idle connection timeout in seconds (default 15); a request\n"
        "                       must arrive whole within 2 x S of the connection being ready\n"
        "  --quiet              no access log on stderr\n" GP_CLI_REDACT_USAGE
        "Stops on SIGINT/SIGTERM. Endpoints: docs/serve.md.\n");
}

int gp_cmd_serve(int argc, char **argv)
{
    gp_serve_opts o;
    memset(&o, 0, sizeof o);
    o.cache_mb = 1024;
    static const struct option lo[] = {{"store", required_argument, 0, 's'},
                                       {"torch-trace", required_argument, 0, 'L'},
                                       {"listen", required_argument, 0, 'l'},
                                       {"token-file", required_argument, 0, 'k'},
                                       {"no-auth", no_argument, 0, 'N'},
                                       {"tls-cert", required_argument, 0, 'C'},
                                       {"tls-key", required_argument, 0, 'K'},
                                       {"cache-mb", required_argument, 0, 'm'},
                                       {"monitor", no_argument, 0, 'M'},
                                       {"metric-names", required_argument, 0, 'n'},
                                       {"config", required_argument, 0, 'c'},
                                       {"threads", required_argument, 0, 't'},
                                       {"max-per-ip", required_argument, 0, 'p'},
                                       {"timeout", required_argument, 0, 'T'},
                                       {"quiet", no_argument, 0, 'q'},
                                       GP_CLI_REDACT_OPTIONS,
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
    int c;
    long v;
    static char *tt[64]; /* --torch-trace paths (pointers into argv) */
    size_t ntt = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "qh", lo, NULL)) != -1) {
        switch (c) {
        case 's':
            o.store = optarg;
            break;
        case 'L':
            if (ntt == sizeof tt / sizeof *tt) {
                fprintf(stderr, "gpuprof serve: --torch-trace: at most %zu\n",
                        sizeof tt / sizeof *tt);
                return 2;
            }
            tt[ntt++] = optarg;
            break;
        case 'l':
            o.listen = optarg;
            break;
        case 'k':
            o.token_file = optarg;
            break;
        case 'N':
            o.no_auth = 1;
            break;
        case 'C':
            o.tls_cert = optarg;
            break;
        case 'K':
            o.tls_key = optarg;
            break;
        case 'm':
            if ((v = gp_cli_parse_count("--cache-mb", optarg)) < 0) return 2;
            o.cache_mb = (uint64_t)v;
            break;
        case 'M':
            o.monitor = 1;
            break;
        case 'n':
            if (strcmp(optarg, "dcgm") && strcmp(optarg, "gpuprof")) {
                fprintf(stderr, "gpuprof serve: --metric-names: gpuprof or dcgm, not '%s'\n",
                        optarg);
                return 2;
            }
            o.metric_dcgm = !strcmp(optarg, "dcgm");
            break;
        case 'c':
            o.config = optarg;
            break;
        case 't':
            if ((v = gp_cli_parse_count("--threads", optarg)) < 0) return 2;
            o.threads = (int)(v > 256 ? 256 : v);
            break;
        case 'p':
            if ((v = gp_cli_parse_count("--max-per-ip", optarg)) < 0) return 2;
            o.conn_per_ip = v;
            break;
        case 'T':
            if ((v = gp_cli_parse_count("--timeout", optarg)) < 0) return 2;
            o.timeout_s = v;
            break;
        case 'q':
            o.quiet = 1;
            break;
            GP_CLI_REDACT_CASES;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    gp_cli_redact_allow();
    o.redact = gp_cli_redact_state(&o.redact_keep);
    o.paths = argv + optind;
    o.npaths = argc - optind;
    o.torch_trace = tt;
    o.ntorch_trace = (int)ntt;
    if (!o.npaths && !o.store && !o.monitor && !o.ntorch_trace)
        fprintf(stderr, "gpuprof serve: note: no trace given; the dashboard lists none\n");
    /* sessions are controlled by running this very program */
    static char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) {
        fprintf(stderr, "gpuprof serve: cannot find this program (/proc/self/exe)\n");
        return 1;
    }
    self[n] = 0;
    return gp_serve_run(&o, self);
}
#endif
