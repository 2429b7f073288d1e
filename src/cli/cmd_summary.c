/* cli/cmd_summary.c: `gpuprof summary FILE...`: per-operation statistics by
 * category and the top bottlenecks, as tables or JSON. */
#include "cli/cli.h"
#include "core/error.h"
#include "report/summary.h"
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
    fprintf(f,
            "usage: gpuprof summary [options] TRACE...\n"
            "  TRACE: .json / .json.gz Chrome or PyTorch-profiler trace, or a folder of them\n"
            "  --top N          operations per category (default 15; JSON: all)\n"
            "  --bottlenecks N  bottleneck rows (default 10)\n"
            "  --category C     only these categories (repeatable or comma list):\n"
            "                   kernel, memory, cpu_op, runtime, annotation, python, sync, other\n"
            "  --json           machine-readable output (times in ns, keys carry units)\n"
            "  --wide           do not shorten long names\n");
}

int gp_cmd_summary(int argc, char **argv)
{
    gp_summary_view o;
    gp_summary_view_default(&o, 0);
    o.top = -2;
    int json = 0;
    unsigned cat_mask = 0;
    static const struct option lo[] = {{"top", required_argument, 0, 't'},
                                       {"bottlenecks", required_argument, 0, 'b'},
                                       {"category", required_argument, 0, 'c'},
                                       {"json", no_argument, 0, 'j'},
                                       {"wide", no_argument, 0, 'w'},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "n:c:jwh", lo, NULL)) != -1) {
        switch (c) {
        case 't':
        case 'n':
            if ((o.top = gp_cli_parse_count("--top", optarg)) < 0) return 2;
            break;
        case 'b':
            if ((o.bottlenecks = gp_cli_parse_count("--bottlenecks", optarg)) < 0) return 2;
            break;
        case 'c':
            if (gp_cli_parse_groups(optarg, &cat_mask)) return 2;
            break;
        case 'j':
            json = 1;
            break;
        case 'w':
            o.wide = 1;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (cat_mask) o.mask = cat_mask;
    if (o.top == -2) o.top = json ? -1 : 15;
    if (optind >= argc) {
        usage(stderr);
        return 2;
    }
    gp_trace **traces;
    size_t n;
    int rc = gp_cli_load_traces(argv + optind, argc - optind, &traces, &n);
    if (rc) return rc;
    gp_summary *sums = gp_xcalloc(n, sizeof *sums);
    size_t done = 0;
    for (; done < n; done++)
        if (gp_summary_compute(traces[done], &sums[done])) {
            fprintf(stderr, "gpuprof: out of memory\n");
            rc = 3;
            break;
        }
    if (!rc && json) {
        gp_sbuf b = {0};
        gp_report_summary_json_doc(&b, traces, sums, n, &o);
        gp_sbuf_write(&b, stdout);
        gp_sbuf_free(&b);
    } else if (!rc) {
        gp_report_summary_text_doc(stdout, traces, sums, n, &o);
    }
    for (size_t i = 0; i < done; i++) gp_summary_free(&sums[i]);
    free(sums);
    gp_cli_free_traces(traces, n);
    if (fflush(stdout) != 0) return 1;
    return rc;
}
