/* core/vec.h: typed growable arrays (macros). A vec is {T *v; size_t n, cap}.
 * GP_VEC_PUSH returns 0 or GP_ENOMEM and never loses the existing contents. */
#ifndef GP_CORE_VEC_H
#define GP_CORE_VEC_H
#include <gpuprof/common.h>
#include <stdlib.h>

#define GP_VEC(T)                                                                                  \
    struct {                                                                                       \
        T *v;                                                                                      \
        size_t n, cap;                                                                             \
    }

/* Ensures room for `need` more elements; evaluates to 0 or GP_ENOMEM. */
#define GP_VEC_RESERVE(vec, need)                                                                  \
    ((vec).n + (need) <= (vec).cap                                                                 \
         ? 0                                                                                       \
         : gp_vec_grow((void **)&(vec).v, &(vec).cap, (vec).n + (need), sizeof(*(vec).v)))

/* Appends one element; evaluates to 0 or GP_ENOMEM. */
#define GP_VEC_PUSH(vec, val) (GP_VEC_RESERVE(vec, 1) ? GP_ENOMEM : ((vec).v[(vec).n++] = (val), 0))

#define GP_VEC_FREE(vec)                                                                           \
    do {                                                                                           \
        free((vec).v);                                                                             \
        (vec).v = NULL;                                                                            \
        (vec).n = (vec).cap = 0;                                                                   \
    } while (0)

/* Grows *data to hold at least `need` elements of `elem` bytes (x1.5+). */
int gp_vec_grow(void **data, size_t *cap, size_t need, size_t elem);

#endif
