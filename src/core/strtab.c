/* core/strtab.c: interning with an arena of string bytes and an open-addressing
 * index of ids keyed by hash. */
#include "core/strtab.h"
#include "core/hash.h"
#include <stdlib.h>
#include <string.h>

#define CHUNK (1u << 20)

typedef struct chunk {
    struct chunk *next;
    size_t used, cap;
    char data[];
} chunk;

struct gp_strtab {
    chunk *chunks;
    const char **str; /* id -> string */
    uint32_t *len;    /* id -> length */
    uint32_t *hash32; /* id -> low hash bits (fast reject) */
    uint32_t n, cap;
    uint32_t *index; /* hash slot -> id + 1 (0 = empty) */
    size_t icap;
    size_t bytes;
};

static char *arena_alloc(gp_strtab *t, size_t n)
{
    chunk *c = t->chunks;
    if (!c || c->cap - c->used < n) {
        size_t cap = n > CHUNK ? n : CHUNK;
        c = malloc(sizeof *c + cap);
        if (!c) return NULL;
        c->next = t->chunks;
        c->used = 0;
        c->cap = cap;
        t->chunks = c;
        t->bytes += sizeof *c + cap;
    }
    char *p = c->data + c->used;
    c->used += n;
    return p;
}

static int reindex(gp_strtab *t, size_t nc)
{
    uint32_t *ni = calloc(nc, sizeof *ni);
    if (!ni) return -1;
    for (uint32_t id = 0; id < t->n; id++) {
        size_t j = gp_hash_bytes(t->str[id], t->len[id]) & (nc - 1);
        while (ni[j]) j = (j + 1) & (nc - 1);
        ni[j] = id + 1;
    }
    free(t->index);
    t->index = ni;
    t->icap = nc;
    return 0;
}

static int rehash(gp_strtab *t)
{
    return reindex(t, t->icap ? t->icap * 2 : 1024);
}

gp_strtab *gp_strtab_create(void)
{
    gp_strtab *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    if (gp_strtab_intern(t, "", 0) != 0) {
        gp_strtab_destroy(t);
        return NULL;
    }
    return t;
}

void gp_strtab_destroy(gp_strtab *t)
{
    if (!t) return;
    for (chunk *c = t->chunks, *nx; c; c = nx) {
        nx = c->next;
        free(c);
    }
    free(t->str);
    free(t->len);
    free(t->hash32);
    free(t->index);
    free(t);
}

static uint32_t lookup(const gp_strtab *t, const char *s, size_t n, uint64_t h, size_t *slot)
{
    size_t j = h & (t->icap - 1);
    while (t->index[j]) {
        uint32_t id = t->index[j] - 1;
        if (t->hash32[id] == (uint32_t)(h >> 32) && t->len[id] == n &&
            memcmp(t->str[id], s, n) == 0)
            return id;
        j = (j + 1) & (t->icap - 1);
    }
    *slot = j;
    return UINT32_MAX;
}

uint32_t gp_strtab_find(const gp_strtab *t, const char *s, size_t n)
{
    if (!t->icap) return UINT32_MAX;
    size_t slot;
    return lookup(t, s, n, gp_hash_bytes(s, n), &slot);
}

uint32_t gp_strtab_intern(gp_strtab *t, const char *s, size_t n)
{
    if (n > UINT32_MAX - 1) return UINT32_MAX;
    if ((size_t)(t->n + 1) * 2 > t->icap && rehash(t)) return UINT32_MAX;
    uint64_t h = gp_hash_bytes(s, n);
    size_t slot;
    uint32_t id = lookup(t, s, n, h, &slot);
    if (id != UINT32_MAX) return id;
    if (t->n == t->cap) {
        uint32_t nc = t->cap ? t->cap * 2 : 256;
        const char **ns = realloc(t->str, nc * sizeof *ns);
        if (!ns) return UINT32_MAX;
        t->str = ns;
        uint32_t *nl = realloc(t->len, nc * sizeof *nl);
        if (!nl) return UINT32_MAX;
        t->len = nl;
        uint32_t *nh = realloc(t->hash32, nc * sizeof *nh);
        if (!nh) return UINT32_MAX;
        t->hash32 = nh;
        t->cap = nc;
    }
    char *d = arena_alloc(t, n + 1);
    if (!d) return UINT32_MAX;
    memcpy(d, s, n);
    d[n] = 0;
    id = t->n++;
    t->str[id] = d;
    t->len[id] = (uint32_t)n;
    t->hash32[id] = (uint32_t)(h >> 32);
    t->index[slot] = id + 1;
    return id;
}

const char *gp_strtab_get(const gp_strtab *t, uint32_t id)
{
    return id < t->n ? t->str[id] : "";
}

size_t gp_strtab_len(const gp_strtab *t, uint32_t id)
{
    return id < t->n ? t->len[id] : 0;
}

uint32_t gp_strtab_count(const gp_strtab *t)
{
    return t->n;
}

size_t gp_strtab_bytes(const gp_strtab *t)
{
    return t->bytes + (size_t)t->cap * 16 + t->icap * 4;
}

int gp_strtab_rewrite(gp_strtab *t, char *(*fn)(void *ctx, const char *s, size_t n), void *ctx)
{
    int rc = 0;
    for (uint32_t id = 1; id < t->n; id++) {
        char *r = fn(ctx, t->str[id], t->len[id]);
        if (!r) continue;
        size_t n = strlen(r);
        char *d = n <= t->len[id] ? (char *)t->str[id] : arena_alloc(t, n + 1);
        if (!d) {
            free(r);
            rc = -1;
            break;
        }
        memcpy(d, r, n + 1);
        free(r);
        t->str[id] = d;
        t->len[id] = (uint32_t)n;
        t->hash32[id] = (uint32_t)(gp_hash_bytes(d, n) >> 32);
    }
    if (reindex(t, t->icap ? t->icap : 1024)) rc = -1;
    return rc;
}
