/* cli/cmd_report.c: `gpuprof report PATH... -o report.html`: the
 * self-contained HTML dashboard of one or more traces. */
#include "cli/cli.h"
#include "render/html.h"
#include "render/report.h"
#include <getopt.h>
#include <stdio.h>
#include <string.h>

static void usage(FILE *f)
{
    fprintf(f, "usage: gpuprof report [options] TRACE... -o report.html\n"
               "  TRACE: .json / .json.gz traces or folders of rank files (one section each)\n"
               "  -o, --output FILE.html   the page to write (self-contained, prints "
               "well)\n" GP_CLI_REDACT_USAGE);
}

int gp_cmd_report(int argc, char **argv)
{
    const char *out = NULL;
    static const struct option lo[] = {{"output", required_argument, 0, 'o'},
                                       GP_CLI_REDACT_OPTIONS,
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "o:h", lo, NULL)) != -1) {
        switch (c) {
        case 'o':
            out = optarg;
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
    if (optind >= argc || !out) {
        /* say what is missing before the usage */
        if (optind >= argc)
            fprintf(stderr, "gpuprof report: no input named\n");
        else
            fprintf(stderr, "gpuprof report: -o OUT is missing (the file to write)\n");
        usage(stderr);
        return 2;
    }
    if (!gp_path_has_suffix(out, ".html") && strcmp(out, "-")) {
        fprintf(stderr, "gpuprof: %s: the report is an .html file\n", out);
        return 2;
    }
    gp_trace **traces;
    size_t n;
    gp_cli_redact_allow();
    int rc = gp_cli_load_traces(argv + optind, argc - optind, &traces, &n);
    if (rc) return rc;
    gp_sbuf b = {0};
    gp_err err = {0};
    if (gp_report_html(traces, n, &b)) {
        fprintf(stderr, "gpuprof: out of memory\n");
        rc = 3;
    } else if (gp_write_file(out, &b, &err)) {
        fprintf(stderr, "gpuprof: %s\n", err.msg);
        rc = 1;
    } else if (strcmp(out, "-")) {
        fprintf(stderr, "gpuprof: wrote %s (%zu trace%s)\n", out, n, n == 1 ? "" : "s");
    }
    gp_sbuf_free(&b);
    gp_cli_free_traces(traces, n);
    return rc;
}
