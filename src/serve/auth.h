/* serve/auth.h: bearer tokens of `gpuprof serve`. A token file holds one
 * token per line, "TOKEN [read|control]" (default read; control also reads),
 * '#' comments and blank lines; tokens are 16..256 bytes of printable ASCII
 * without spaces. A presented token is compared with every configured one in
 * constant time (no early exit on the first differing byte or on a length
 * mismatch), and is never logged. */
#ifndef GP_SERVE_AUTH_H
#define GP_SERVE_AUTH_H
#include "core/error.h"
#include <stddef.h>

#define GP_TOKEN_MAX    256
#define GP_TOKEN_ID_MAX 24

typedef struct gp_tokens gp_tokens;

/* Reads the token file. The file must not be readable by group or others
 * (like ssh keys); returns NULL with err set otherwise, on a bad line or
 * when it holds no token. */
gp_tokens *gp_tokens_load(const char *path, gp_err *err);
void gp_tokens_free(gp_tokens *t);

/* The scope of token tok[0..n) (GP_SCOPE_READ / GP_SCOPE_CONTROL from
 * serve/router.h), or GP_SCOPE_NONE when it matches no configured token. */
int gp_tokens_scope(const gp_tokens *t, const char *tok, size_t n);

/* The same, and when it matches, the id of the matching token in id (else
 * ""): "tok-" and the first 12 hex digits of the token's SHA-256 (what the
 * audit log records: it names a token without revealing it; compute it
 * with `printf %s TOKEN | sha256sum | cut -c1-12`). id may be NULL. */
int gp_tokens_match(const gp_tokens *t, const char *tok, size_t n, char id[GP_TOKEN_ID_MAX]);

/* The id of token tok[0..n) (see gp_tokens_match). */
void gp_token_id(const char *tok, size_t n, char id[GP_TOKEN_ID_MAX]);

/* Constant-time equality of a[0..an) and b[0..bn) (both <= GP_TOKEN_MAX):
 * the time depends only on GP_TOKEN_MAX. */
int gp_ct_equal(const char *a, size_t an, const char *b, size_t bn);

#endif
