/* cli/common.c: helpers shared by subcommands (trace loading, options). */
#include "cli/cli.h"
#include "trace/load.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

int gp_cli_load_traces(char **paths, int npaths, gp_trace ***out, size_t *n)
{
    gp_err err = {0};
    size_t count = 0;
    char **files = gp_paths_expand(paths, npaths, &count, &err);
    if (!files) {
        fprintf(stderr, "gpuprof: %s\n", err.msg);
        return 2;
    }
    gp_trace **traces = gp_xcalloc(count, sizeof *traces);
    int rc = gp_load_many(files, count, 0, traces, &err);
    gp_paths_free(files);
    if (rc) {
        fprintf(stderr, "gpuprof: %s\n", err.msg);
        free(traces);
        return 2;
    }
    *out = traces;
    *n = count;
    return 0;
}

void gp_cli_free_traces(gp_trace **traces, size_t n)
{
    for (size_t i = 0; i < n; i++) gp_trace_destroy(traces[i]);
    free(traces);
}

long gp_cli_parse_count(const char *opt, const char *val)
{
    char *end;
    errno = 0;
    long v = val ? strtol(val, &end, 10) : -1;
    if (!val || errno || *end || v < 0) {
        fprintf(stderr, "gpuprof: %s expects a non-negative integer, got '%s'\n", opt,
                val ? val : "");
        return -1;
    }
    return v;
}
