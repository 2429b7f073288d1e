/* cli/cmd_timeline.c: `gpuprof timeline PATH -o OUT`: a Perfetto/Chrome
 * JSON trace (.json) or a self-contained HTML timeline viewer (.html). */
#include "cli/cli.h"
#include "core/error.h"
#include "render/export.h"
#include "render/html.h"
#include "render/timeline.h"
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

static void usage(FILE *f)
{
    fprintf(f, "usage: gpuprof timeline [options] TRACE -o OUT\n"
               "  -o, --output OUT   .json: Chrome trace-event JSON (Kineto's fields, lossless,\n"
               "                     as `gpuprof export --format chrome`); .pftrace: Perfetto\n"
               "                     protobuf; .html: self-contained zoomable viewer\n"
               "  --format F         chrome, perfetto or html (default: from OUT's suffix)\n"
               "  --max-slices N     HTML: slices drawn one by one before short ones are\n"
               "                     aggregated (default 300000)\n" GP_CLI_REDACT_USAGE);
}

int gp_cmd_timeline(int argc, char **argv)
{
    const char *out = NULL;
    long max_slices = 0;
    const char *fmt = NULL;
    static const struct option lo[] = {{"output", required_argument, 0, 'o'},
                                       {"format", required_argument, 0, 'f'},
                                       {"max-slices", required_argument, 0, 'm'},
                                       GP_CLI_REDACT_OPTIONS,
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "o:f:h", lo, NULL)) != -1) {
        switch (c) {
        case 'f':
            fmt = optarg;
            break;
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
        /* say what is missing before the usage */
        if (optind >= argc)
            fprintf(stderr, "gpuprof timeline: no input named\n");
        else
            fprintf(stderr, "gpuprof timeline: -o OUT is missing (the file to write)\n");
        usage(stderr);
        return 2;
    }
    int html = fmt ? !strcmp(fmt, "html") : gp_path_has_suffix(out, ".html");
    int xf = GP_EXPORT_CHROME;
    if (fmt && !html && (xf = gp_export_format_parse(fmt)) < 0) {
        fprintf(stderr, "gpuprof: --format %s: unknown (chrome, perfetto or html)\n", fmt);
        return 2;
    }
    if (!fmt && !html) {
        if (gp_path_has_suffix(out, ".pftrace") || gp_path_has_suffix(out, ".perfetto-trace"))
            xf = GP_EXPORT_PERFETTO;
        else if (!gp_path_has_suffix(out, ".json")) {
            fprintf(stderr, "gpuprof: %s: unknown output type (use .json, .pftrace or .html)\n",
                    out);
            return 2;
        }
    }
    if (argc - optind > 1) {
        fprintf(stderr, "gpuprof: timeline takes one trace\n");
        return 2;
    }
    if (!html) return gp_cli_export(argv[optind], xf, out);
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
    }
    if (!rc && strcmp(out, "-")) {
        fprintf(stderr, "gpuprof: wrote %s (%llu slices", out, (unsigned long long)st.slices);
        if (st.aggregated)
            fprintf(stderr, ", %llu short slices in %llu bins of %lld ns",
                    (unsigned long long)st.aggregated, (unsigned long long)st.bins,
                    (long long)st.bin_ns);
        if (st.clipped)
            fprintf(stderr, "; %llu slices clipped to their parent's end",
                    (unsigned long long)st.clipped);
        fprintf(stderr, ")\n");
    }
    gp_cli_free_traces(traces, n);
    return rc;
}
