/* cli/cmd_memory.c: `gpuprof memory PATH`: memory over time from [memory]
 * events: peak with the operations live then, growth, leaks by allocating
 * operation, fragmentation; as text, JSON or an HTML page. */
#include "analysis/memory.h"
#include "cli/cli.h"
#include "render/html.h"
#include "render/memview.h"
#include <getopt.h>
#include <stdio.h>
#include <string.h>

static void usage(FILE *f)
{
    fprintf(f,
            "usage: gpuprof memory [options] TRACE...\n"
            "  --json          machine-readable output (bytes, ns since the trace start)\n"
            "  --points N      JSON: at most N timeline points per device (default 2000; 0 = "
            "all)\n"
            "  --top N         leak groups shown as text (default 15)\n"
            "  -o FILE.html    write the HTML page with the chart instead\n" GP_CLI_REDACT_USAGE);
}

int gp_cmd_memory(int argc, char **argv)
{
    const char *out = NULL;
    int json = 0;
    long points = 2000, top = 15;
    static const struct option lo[] = {{"json", no_argument, 0, 'j'},
                                       {"points", required_argument, 0, 'p'},
                                       {"top", required_argument, 0, 't'},
                                       {"output", required_argument, 0, 'o'},
                                       GP_CLI_REDACT_OPTIONS,
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "o:h", lo, NULL)) != -1) {
        switch (c) {
        case 'j':
            json = 1;
            break;
        case 'p':
            if ((points = gp_cli_parse_count("--points", optarg)) < 0) return 2;
            break;
        case 't':
            if ((top = gp_cli_parse_count("--top", optarg)) < 0) return 2;
            break;
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
    if (optind >= argc) {
        usage(stderr);
        return 2;
    }
    if (out && !gp_path_has_suffix(out, ".html")) {
        fprintf(stderr, "gpuprof: %s: -o expects an .html file (use --json for JSON)\n", out);
        return 2;
    }
    gp_trace **traces;
    size_t n;
    gp_cli_redact_allow();
    int rc = gp_cli_load_traces(argv + optind, argc - optind, &traces, &n);
    if (rc) return rc;
    /* the HTML page shows the first trace only */
    size_t nm = out ? 1 : n, done = 0;
    gp_memory *mems = gp_xcalloc(nm, sizeof *mems);
    for (; done < nm; done++)
        if (gp_memory_compute(traces[done], &mems[done])) {
            fprintf(stderr, "gpuprof: out of memory\n");
            rc = 3;
            break;
        }
    gp_sbuf b = {0};
    if (!rc && out)
        gp_memview_html(traces[0], &mems[0], &b);
    else if (!rc && json)
        gp_memview_json_doc(traces, mems, n, (size_t)points, &b);
    else if (!rc)
        gp_memview_text_doc(traces, mems, n, (size_t)top, stdout);
    for (size_t i = 0; i < done; i++) gp_memory_free(&mems[i]);
    free(mems);
    if (!rc && (json || out)) {
        gp_err err = {0};
        if (gp_write_file(out ? out : "-", &b, &err)) {
            if (out) fprintf(stderr, "gpuprof: %s\n", err.msg); /* stdout: main reports it */
            rc = 1;
        } else if (out) {
            if (n > 1) fprintf(stderr, "gpuprof: the HTML page shows the first trace only\n");
            fprintf(stderr, "gpuprof: wrote %s\n", out);
        }
    }
    gp_sbuf_free(&b);
    gp_cli_free_traces(traces, n);
    if (fflush(stdout) != 0) return 1;
    return rc;
}
