/* core/hash.h: fast non-cryptographic hashes and an open-addressing
 * u64 -> u64 map (for correlation ids, pids, external ids). */
#ifndef GP_CORE_HASH_H
#define GP_CORE_HASH_H
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Hashes n bytes (8 bytes at a time, then a murmur-style finalizer). */
static inline uint64_t gp_hash_bytes(const void *data, size_t n)
{
    const unsigned char *p = data;
    uint64_t h = 0x9e3779b97f4a7c15ull ^ (n * 0xff51afd7ed558ccdull);
    while (n >= 8) {
        uint64_t k;
        memcpy(&k, p, 8);
        k *= 0x87c37b91114253d5ull;
        k = (k << 31) | (k >> 33);
        h ^= k * 0x4cf5ad432745937full;
        h = ((h << 27) | (h >> 37)) * 5 + 0x52dce729;
        p += 8;
        n -= 8;
    }
    uint64_t t = 0;
    memcpy(&t, p, n);
    h ^= t * 0x87c37b91114253d5ull;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 33;
    return h;
}

static inline uint64_t gp_hash_u64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return x;
}

/* Open-addressing map from uint64 keys to uint64 values. Zero-initialise. */
typedef struct gp_u64map {
    uint64_t *keys;
    uint64_t *vals;
    unsigned char *used;
    size_t cap, n;
} gp_u64map;

/* Inserts or replaces; returns 0 or GP_ENOMEM. */
int gp_u64map_put(gp_u64map *m, uint64_t key, uint64_t val);
/* Returns 1 and stores *val when present, 0 otherwise. */
int gp_u64map_get(const gp_u64map *m, uint64_t key, uint64_t *val);
/* Returns a pointer to the value slot for key, inserting `init` first when
 * absent (NULL on out of memory). The pointer is valid until the next insert. */
uint64_t *gp_u64map_slot(gp_u64map *m, uint64_t key, uint64_t init);
void gp_u64map_free(gp_u64map *m);

#endif
