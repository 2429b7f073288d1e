/* tests/fuzz/fuzz_jdom.c: libFuzzer target for the small JSON document
 * reader (session reports): parse or a positioned error, never a crash. */
#include "core/jdom.h"
#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gp_jv v;
    gp_err err;
    if (gp_jdom_parse((const char *)data, size, &v, &err) == 0) gp_jdom_free(&v);
    return 0;
}
