/* core/strtab.h: string interning. Each distinct string is stored once and
 * named by a dense uint32 id; id 0 is always the empty string. */
#ifndef GP_CORE_STRTAB_H
#define GP_CORE_STRTAB_H
#include <stddef.h>
#include <stdint.h>

typedef struct gp_strtab gp_strtab;

/* Creates an empty table (caller frees with gp_strtab_destroy); NULL on OOM. */
gp_strtab *gp_strtab_create(void);
void gp_strtab_destroy(gp_strtab *t);
/* Interns s[0..n) and returns its id, or UINT32_MAX on out of memory. */
uint32_t gp_strtab_intern(gp_strtab *t, const char *s, size_t n);
/* Returns the id of s[0..n) if interned, else UINT32_MAX. */
uint32_t gp_strtab_find(const gp_strtab *t, const char *s, size_t n);
/* Returns the NUL-terminated string for id (owned by the table). */
const char *gp_strtab_get(const gp_strtab *t, uint32_t id);
/* Returns the byte length of string id. */
size_t gp_strtab_len(const gp_strtab *t, uint32_t id);
/* Number of distinct strings. */
uint32_t gp_strtab_count(const gp_strtab *t);
/* Rewrites every string in place: fn(ctx, s, n) returns a malloc'ed
 * replacement (NUL-terminated) or NULL to keep s. Ids stay what they were
 * (several ids may then hold the same text; gp_strtab_find returns one of
 * them). Returns 0, or -1 on out of memory (the table stays usable). */
int gp_strtab_rewrite(gp_strtab *t, char *(*fn)(void *ctx, const char *s, size_t n), void *ctx);
/* Bytes of memory held (for accounting). */
size_t gp_strtab_bytes(const gp_strtab *t);

#endif
