/* serve/router.h: the request line of `gpuprof serve`, parsed without trust:
 * the raw request target (path and query string, as sent) is split,
 * percent-decoded and checked, then matched against a route table. Pure
 * functions (no I/O, no globals): the libFuzzer target tests/fuzz/fuzz_router.c
 * drives them with arbitrary bytes.
 *
 * Limits (each violation is a GP_EINVAL with a one-line message, answered
 * with 400 by the server): a target of at most GP_URL_MAX bytes; at most
 * GP_QUERY_MAX parameters; a key of 1..32 bytes of [a-z0-9_]; a value of at
 * most GP_QVAL_MAX decoded bytes without NUL or control bytes; no repeated
 * key; "%XX" escapes with two hex digits; a path that is absolute, holds no
 * "." or ".." segment, no empty segment, no backslash and no encoded '/'. */
#ifndef GP_SERVE_ROUTER_H
#define GP_SERVE_ROUTER_H
#include "core/error.h"
#include <stddef.h>

#define GP_URL_MAX   4096
#define GP_QUERY_MAX 32
#define GP_QVAL_MAX  1024

typedef struct gp_query {
    size_t n;
    const char *key[GP_QUERY_MAX]; /* point into buf */
    const char *val[GP_QUERY_MAX];
    char *buf; /* owned */
} gp_query;

typedef struct gp_target {
    char *path; /* decoded, owned */
    gp_query q;
} gp_target;

/* Parses the raw request target (origin form "/path?query") of length n.
 * Returns 0 with *t filled (free with gp_target_free), or GP_EINVAL /
 * GP_ENOMEM with err set (t is then empty). */
int gp_target_parse(const char *raw, size_t n, gp_target *t, gp_err *err);
void gp_target_free(gp_target *t);

/* The value of key, or NULL. */
const char *gp_query_get(const gp_query *q, const char *key);
/* GP_EINVAL with err "unknown parameter 'k'" when q holds a key that is not
 * in allowed (NULL-terminated); else 0. */
int gp_query_only(const gp_query *q, const char *const *allowed, gp_err *err);

/* Typed parameters: each returns 0 and sets *out (left unchanged when the
 * key is absent), or GP_EINVAL with err naming the parameter. */
int gp_query_long(const gp_query *q, const char *key, long lo, long hi, long *out, gp_err *err);
int gp_query_double(const gp_query *q, const char *key, double lo, double hi, double *out,
                    gp_err *err);
/* A duration "500ns", "20us", "1.5ms", "2s" or a plain number of ns. */
int gp_query_dur(const gp_query *q, const char *key, long long *out, gp_err *err);
/* One of choices (NULL-terminated): *out is its index. */
int gp_query_enum(const gp_query *q, const char *key, const char *const *choices, int *out,
                  gp_err *err);

/* Methods as bits. */
enum { GP_M_GET = 1, GP_M_POST = 2, GP_M_HEAD = 4 };
/* Scopes a token needs. */
enum { GP_SCOPE_NONE = 0, GP_SCOPE_READ = 1, GP_SCOPE_CONTROL = 2 };

typedef struct gp_route {
    const char *path; /* exact path; a trailing '*' matches any rest made of
                         [A-Za-z0-9._-] (e.g. "/files/" followed by '*') */
    unsigned methods; /* GP_M_* bits */
    int scope;        /* GP_SCOPE_* a token needs for a GET; POSTs need control */
    int id;           /* the route's index in its table (set by the table's owner) */
} gp_route;

/* Parses a method name ("GET", ...) into a GP_M_* bit; 0 when unknown. */
unsigned gp_method_parse(const char *m);

/* The route of path in table[0..n), or NULL (404). *method_ok is 0 when
 * the route exists but does not take method (405). */
const gp_route *gp_route_find(const gp_route *table, size_t n, const char *path, unsigned method,
                              int *method_ok);

#endif
