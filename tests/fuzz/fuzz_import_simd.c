/* tests/fuzz/fuzz_import_simd.c: libFuzzer target comparing the importer's
 * stage-1 scanning paths: every path this CPU supports (GPUPROF_SIMD scalar,
 * sse4.2, avx2, avx512) must give exactly the byte-wise reference's outcome
 * ("off"): the same return code, the same error line, the same model.
 * The reference parses events with the general parser only
 * ($GPUPROF_IMPORT_FAST=0); every path runs with the event fast path, and
 * the input written to a file is imported mapped ($GPUPROF_IMPORT_MMAP=always)
 * as well as read. Built and run by scripts/fuzz.sh. */
#include "../trace_digest.h"
#include "trace/import.h"
#include "trace/jscan.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void one(gp_jscan_isa isa, const uint8_t *data, size_t size, int *rc, uint64_t *dg,
                gp_err *err)
{
    setenv("GPUPROF_SIMD", gp_jscan_name(isa), 1);
    gp_trace *t = NULL;
    memset(err, 0, sizeof *err);
    *rc = gp_import_json_mem(data, size, "fuzz.json", &t, err);
    *dg = t ? trace_digest(t) : 0;
    gp_trace_destroy(t);
}

/* The input as a file (path), imported with the given $GPUPROF_IMPORT_FAST
 * and $GPUPROF_IMPORT_MMAP, the byte-wise scan. */
static void one_file(const char *path, const char *fast, const char *mmap, int *rc, uint64_t *dg,
                     gp_err *err)
{
    setenv("GPUPROF_SIMD", "off", 1);
    setenv("GPUPROF_IMPORT_FAST", fast, 1);
    setenv("GPUPROF_IMPORT_MMAP", mmap, 1);
    gp_trace *t = NULL;
    memset(err, 0, sizeof *err);
    gp_import_opts o = {0, 1, 0};
    *rc = gp_import_json_file(path, &o, &t, err);
    *dg = t ? trace_digest(t) : 0;
    gp_trace_destroy(t);
    unsetenv("GPUPROF_IMPORT_FAST");
    unsetenv("GPUPROF_IMPORT_MMAP");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int rc0, rc;
    uint64_t d0, d;
    static gp_err e0, e;
    /* the reference: the byte-wise scan and the general event parser */
    setenv("GPUPROF_IMPORT_FAST", "0", 1);
    one(GP_JSCAN_OFF, data, size, &rc0, &d0, &e0);
    unsetenv("GPUPROF_IMPORT_FAST");
    for (int i = GP_JSCAN_OFF; i < GP_JSCAN_COUNT; i++) { /* each with the event fast path */
        if (!gp_jscan_supported((gp_jscan_isa)i)) continue;
        one((gp_jscan_isa)i, data, size, &rc, &d, &e);
        if (rc != rc0 || d != d0) abort();
        if (rc && strcmp(e.msg, e0.msg) != 0) abort();
    }
    /* a file mapped as a file read (the model names its source, so the
     * reference is the same file read by the general parser) */
    static char path[64];
    if (!path[0]) snprintf(path, sizeof path, "/tmp/fuzz_import_simd_%d.json", (int)getpid());
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, size, f) != size || fclose(f)) abort();
    int rcr;
    uint64_t dr;
    static gp_err er;
    one_file(path, "0", "0", &rcr, &dr, &er);
    one_file(path, "1", "always", &rc, &d, &e);
    if (rc != rcr || d != dr || rc != rc0) abort();
    if (rc && strcmp(e.msg, er.msg) != 0) abort();
    return 0;
}
