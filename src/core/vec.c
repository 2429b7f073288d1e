/* core/vec.c: growth policy for GP_VEC arrays. */
#include "core/vec.h"
#include <stdint.h>

int gp_vec_grow(void **data, size_t *cap, size_t need, size_t elem)
{
    size_t nc = *cap ? *cap : 16;
    while (nc < need) {
        if (nc > SIZE_MAX / 2 / elem) return GP_ENOMEM;
        nc = nc < 1024 * 1024 ? nc * 2 : nc + nc / 2;
    }
    if (nc > SIZE_MAX / elem) return GP_ENOMEM;
    void *p = realloc(*data, nc * elem);
    if (!p) return GP_ENOMEM;
    *data = p;
    *cap = nc;
    return 0;
}
