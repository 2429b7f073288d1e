/* tests/fuzz/fuzz_router.c: libFuzzer target for the request-line parsing of
 * `gpuprof serve` (serve/router.c): any bytes as a request target must parse
 * or fail with a one-line message; a parsed target must keep the promised
 * invariants (absolute path without "."/".." segments, empty segments,
 * backslashes or control bytes; unique [a-z0-9_] keys of at most 32 bytes;
 * values without control bytes, at most GP_QVAL_MAX long), and the typed
 * parameter readers and the route matching must not misbehave on them. */
#include "serve/router.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const gp_route routes[] = {
    {"/", GP_M_GET, GP_SCOPE_NONE, 0},
    {"/api/traces", GP_M_GET, GP_SCOPE_READ, 1},
    {"/api/sessions", GP_M_GET | GP_M_POST, GP_SCOPE_READ, 2},
    {"/files/*", GP_M_GET, GP_SCOPE_READ, 3},
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gp_target t;
    gp_err err = {0};
    if (gp_target_parse((const char *)data, size, &t, &err)) {
        if (!err.msg[0] || strchr(err.msg, '\n')) abort(); /* one line */
        if (t.path || t.q.buf || t.q.n) abort();           /* nothing left */
        return 0;
    }
    const char *p = t.path;
    if (p[0] != '/' || strstr(p, "//") || strstr(p, "/./") || strstr(p, "/../") ||
        strchr(p, '\\'))
        abort();
    size_t pl = strlen(p);
    if ((pl >= 2 && !strcmp(p + pl - 2, "/.")) || (pl >= 3 && !strcmp(p + pl - 3, "/..")))
        abort();
    for (const char *c = p; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f) abort();
    if (t.q.n > GP_QUERY_MAX) abort();
    for (size_t i = 0; i < t.q.n; i++) {
        size_t kl = strlen(t.q.key[i]);
        if (kl < 1 || kl > 32 || strlen(t.q.val[i]) > GP_QVAL_MAX) abort();
        for (const char *c = t.q.key[i]; *c; c++)
            if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '_')) abort();
        for (const char *c = t.q.val[i]; *c; c++)
            if ((unsigned char)*c < 0x20 || *c == 0x7f) abort();
        for (size_t j = 0; j < i; j++)
            if (!strcmp(t.q.key[i], t.q.key[j])) abort();
        if (gp_query_get(&t.q, t.q.key[i]) != t.q.val[i]) abort();
        long l = 0;
        double d = 0;
        long long ns = 0;
        int e = 0;
        static const char *const ch[] = {"a", "hta", NULL};
        gp_query_long(&t.q, t.q.key[i], -5, 1L << 40, &l, &err);
        gp_query_double(&t.q, t.q.key[i], 0, 1e9, &d, &err);
        gp_query_dur(&t.q, t.q.key[i], &ns, &err);
        gp_query_enum(&t.q, t.q.key[i], ch, &e, &err);
        if (ns < 0 || l < -5 || !(d >= 0 && d <= 1e9) || e < 0 || e > 1) abort();
    }
    static const char *const allowed[] = {"trace", "top", NULL};
    gp_query_only(&t.q, allowed, &err);
    int ok;
    for (unsigned m = 1; m <= 4; m <<= 1) {
        const gp_route *r = gp_route_find(routes, sizeof routes / sizeof routes[0], p, m, &ok);
        if (r && r->id == 3 && strncmp(p, "/files/", 7)) abort();
    }
    gp_target_free(&t);
    return 0;
}
