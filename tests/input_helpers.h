/* tests/input_helpers.h: trace inputs in the importer tests. */
#ifndef GP_TEST_INPUT_HELPERS_H
#define GP_TEST_INPUT_HELPERS_H
#include "trace/input.h"
#include <stdio.h>
#include <stdlib.h>

/* Writes the bytes of trace file src (inflated when it is gzip) to dst:
 * the plain copy of a shared .json.gz trace. 0 or -1. */
static inline int gp_test_inflate_to(const char *src, const char *dst)
{
    gp_input *in;
    gp_err err;
    if (gp_input_open_file(src, &in, &err)) return -1;
    FILE *f = fopen(dst, "wb");
    char *blk = malloc(1 << 20);
    long k;
    int rc = f && blk ? 0 : -1;
    while (rc == 0 && (k = gp_input_read(in, blk, 1 << 20, &err)) > 0)
        if (fwrite(blk, 1, (size_t)k, f) != (size_t)k) rc = -1;
    if (f && fclose(f)) rc = -1;
    free(blk);
    gp_input_close(in);
    return rc;
}

#endif
