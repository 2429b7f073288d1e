/* tests/fuzz/fuzz_import_simd.c: libFuzzer target comparing the importer's
 * stage-1 scanning paths: every path this CPU supports (GPUPROF_SIMD scalar,
 * sse4.2, avx2, avx512) must give exactly the byte-wise reference's outcome
 * ("off"): the same return code, the same error line, the same model.
 * Built and run by scripts/fuzz.sh. */
#include "../trace_digest.h"
#include "trace/import.h"
#include "trace/jscan.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int rc0, rc;
    uint64_t d0, d;
    static gp_err e0, e;
    one(GP_JSCAN_OFF, data, size, &rc0, &d0, &e0);
    for (int i = GP_JSCAN_SCALAR; i < GP_JSCAN_COUNT; i++) {
        if (!gp_jscan_supported((gp_jscan_isa)i)) continue;
        one((gp_jscan_isa)i, data, size, &rc, &d, &e);
        if (rc != rc0 || d != d0) abort();
        if (rc && strcmp(e.msg, e0.msg) != 0) abort();
    }
    return 0;
}
