/* core/hash.c: the u64 -> u64 open-addressing map (linear probing). */
#include "core/hash.h"
#include <gpuprof/common.h>
#include <stdlib.h>

static int grow(gp_u64map *m)
{
    size_t nc = m->cap ? m->cap * 2 : 64;
    gp_u64map nm = {0};
    nm.keys = malloc(nc * sizeof *nm.keys);
    nm.vals = malloc(nc * sizeof *nm.vals);
    nm.used = calloc(nc, 1);
    if (!nm.keys || !nm.vals || !nm.used) {
        free(nm.keys);
        free(nm.vals);
        free(nm.used);
        return GP_ENOMEM;
    }
    nm.cap = nc;
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->used[i]) continue;
        size_t j = gp_hash_u64(m->keys[i]) & (nc - 1);
        while (nm.used[j]) j = (j + 1) & (nc - 1);
        nm.used[j] = 1;
        nm.keys[j] = m->keys[i];
        nm.vals[j] = m->vals[i];
        nm.n++;
    }
    gp_u64map_free(m);
    *m = nm;
    return 0;
}

uint64_t *gp_u64map_slot(gp_u64map *m, uint64_t key, uint64_t init)
{
    if ((m->n + 1) * 4 > m->cap * 3 && grow(m)) return NULL;
    size_t j = gp_hash_u64(key) & (m->cap - 1);
    while (m->used[j]) {
        if (m->keys[j] == key) return &m->vals[j];
        j = (j + 1) & (m->cap - 1);
    }
    m->used[j] = 1;
    m->keys[j] = key;
    m->vals[j] = init;
    m->n++;
    return &m->vals[j];
}

int gp_u64map_put(gp_u64map *m, uint64_t key, uint64_t val)
{
    uint64_t *s = gp_u64map_slot(m, key, val);
    if (!s) return GP_ENOMEM;
    *s = val;
    return 0;
}

int gp_u64map_get(const gp_u64map *m, uint64_t key, uint64_t *val)
{
    if (!m->cap) return 0;
    size_t j = gp_hash_u64(key) & (m->cap - 1);
    while (m->used[j]) {
        if (m->keys[j] == key) {
            if (val) *val = m->vals[j];
            return 1;
        }
        j = (j + 1) & (m->cap - 1);
    }
    return 0;
}

void gp_u64map_free(gp_u64map *m)
{
    free(m->keys);
    free(m->vals);
    free(m->used);
    m->keys = m->vals = NULL;
    m->used = NULL;
    m->cap = m->n = 0;
}
