/* cli/cmd_timeline.c: `gpuprof timeline PATH -o OUT`: a Perfetto/Chrome
 * JSON trace (.json) or a self-contained HTML timeline viewer (.html). */
#include "cli/cli.h"
#include "core/error.h"
#include "render/html.h"
#include "render/timeline.h"
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

static void usage(FILE *f)
{
    fprintf(f, "usage: gpuprof timeline [options] TRACE -o OUT\n"
               "  -o, --output OUT   .json: Chrome trace-event JSON for ui.perfetto.dev and\n"
               "                     chrome://tracing; .html: self-contained zoomable viewer\n"
               "  --max-slices N     HTML: slices drawn one by one before short ones are\n"
               "                     aggregated (default 300000)\n" GP_CLI_REDACT_USAGE);
}

int gp_cmd_timeline(int argc, char **argv)
{
    const char *out = NULL;
    long max_slices = 0;
    static const struct option lo[] = {{"output", required_argument, 0, 'o'},
                                       {"max-slices", required_argument, 0, 'm'},
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
        case 'm':
            if ((max_slices = gp_cli_parse_count("--max-slices", optarg)) < 0) return 2;
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
        usage(stderr);
        return 2;
    }
    int html = gp_path_has_suffix(out, ".html");
    if (!html && !gp_path_has_suffix(out, ".json")) {
        fprintf(stderr, "gpuprof: %s: unknown output type (use .json or .html)\n", out);
        return 2;
    }
    if (argc - optind > 1) {
        fprintf(stderr, "gpuprof: timeline takes one trace\n");
        return 2;
    }
    gp_trace **traces;
    size_t n;
    gp_cli_redact_allow();
    int rc = gp_cli_load_traces(argv + optind, argc - optind, &traces, &n);
    if (rc) return rc;
    if (n != 1) {
        fprintf(stderr, "gpuprof: timeline takes one trace (%zu found)\n", n);
        gp_cli_free_traces(traces, n);
        return 2;
    }
    gp_timeline_stats st;
    gp_err err = {0};
    if (html) {
        gp_sbuf b = {0};
        if (gp_timeline_html(traces[0], (uint64_t)max_slices, &b, &st)) {
            fprintf(stderr, "gpuprof: out of memory\n");
            rc = 3;
        } else if (gp_write_file(out, &b, &err)) {
            fprintf(stderr, "gpuprof: %s\n", err.msg);
            rc = 1;
        }
        gp_sbuf_free(&b);
    } else {
        FILE *f = strcmp(out, "-") ? fopen(out, "wb") : stdout;
        if (!f) {
            fprintf(stderr, "gpuprof: %s: %s\n", out, strerror(errno));
            gp_cli_free_traces(traces, n);
            return 1;
        }
        int e = gp_timeline_json(traces[0], f, &st);
        if (f != stdout && fclose(f) != 0 && !e) e = GP_EIO;
        if (e) {
            fprintf(stderr, "gpuprof: %s: %s\n", out,
                    e == GP_ENOMEM ? "out of memory" : "write failed");
            rc = e == GP_ENOMEM ? 3 : 1;
        }
    }
    if (!rc && strcmp(out, "-")) {
        fprintf(stderr, "gpuprof: wrote %s (%llu slices", out, (unsigned long long)st.slices);
        if (st.aggregated)
            fprintf(stderr, ", %llu short slices in %llu bins of %lld ns",
                    (unsigned long long)st.aggregated, (unsigned long long)st.bins,
                    (long long)st.bin_ns);
        if (!html)
            fprintf(stderr, ", %llu flows, %llu counter samples", (unsigned long long)st.flows,
                    (unsigned long long)st.counters);
        if (st.clipped)
            fprintf(stderr, "; %llu slices clipped to their parent's end",
                    (unsigned long long)st.clipped);
        fprintf(stderr, ")\n");
    }
    gp_cli_free_traces(traces, n);
    return rc;
}
