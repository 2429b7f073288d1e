/* tests/fuzz/fuzz_import.c: libFuzzer target for the trace importer: any
 * input must import or fail with a one-line positioned message; never crash,
 * hang, leak or read out of bounds. Built and run by scripts/fuzz.sh. */
#include "analysis/summary.h"
#include "trace/import.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gp_trace *t = NULL;
    gp_err err;
    int rc = gp_import_json_mem(data, size, "fuzz.json", &t, &err);
    if (rc == 0) {
        gp_summary s;
        if (gp_summary_compute(t, &s) == 0) gp_summary_free(&s);
        gp_trace_destroy(t);
    } else {
        if (t) abort();                                     /* no trace on error */
        if (strncmp(err.msg, "fuzz.json", 9) != 0) abort(); /* message names the file */
        if (strchr(err.msg, '\n')) abort();                 /* one line */
    }
    return 0;
}
