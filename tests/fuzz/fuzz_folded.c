/* tests/fuzz/fuzz_folded.c: libFuzzer target for the folded-stacks reader
 * (flame input): any input must give a tree or a "NAME:LINE: ..." error. */
#include "analysis/calltree.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gp_ftree t;
    gp_err err;
    if (gp_ftree_init(&t, "samples")) return 0;
    int rc = gp_ftree_add_folded(&t, (const char *)data, size, "fuzz.folded", &err);
    if (rc == 0)
        gp_ftree_finish(&t);
    else if (rc == GP_EPARSE &&
             (strncmp(err.msg, "fuzz.folded:", 12) != 0 || strchr(err.msg, '\n')))
        abort(); /* one line naming the file and line */
    gp_ftree_fini(&t);
    return 0;
}
