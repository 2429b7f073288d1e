/* serve/router.c: request target parsing, typed query parameters and route
 * matching for `gpuprof serve` (see router.h for the rules). */
#include "serve/router.h"
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Decodes s[0..n) into out (room for n + 1 bytes); '+' is a space when
 * plus_space. Returns the decoded length, or -1 on a bad escape, a NUL or a
 * control byte; *slash is set when an encoded '/' was seen. */
static long decode(const char *s, size_t n, char *out, int plus_space, int *slash)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '%') {
            if (i + 2 >= n) return -1;
            int h = hexval(s[i + 1]), l = h < 0 ? -1 : hexval(s[i + 2]);
            if (h < 0 || l < 0) return -1;
            c = (unsigned char)(h * 16 + l);
            if (c == '/' && slash) *slash = 1;
            i += 2;
        } else if (c == '+' && plus_space) {
            c = ' ';
        }
        if (c < 0x20 || c == 0x7f) return -1;
        out[k++] = (char)c;
    }
    out[k] = 0;
    return (long)k;
}

static int bad(gp_err *err, const char *what)
{
    return gp_err_set(err, GP_EINVAL, "%s", what);
}

static int check_path(const char *p, gp_err *err)
{
    if (p[0] != '/') return bad(err, "the path must start with '/'");
    if (strchr(p, '\\')) return bad(err, "backslash in the path");
    const char *seg = p + 1;
    for (;;) {
        const char *e = strchr(seg, '/');
        size_t len = e ? (size_t)(e - seg) : strlen(seg);
        if (len == 0 && e) return bad(err, "empty path segment");
        if ((len == 1 && seg[0] == '.') || (len == 2 && seg[0] == '.' && seg[1] == '.'))
            return bad(err, "'.' or '..' in the path");
        if (!e) break;
        seg = e + 1;
    }
    return 0;
}

static int valid_key(const char *k)
{
    size_t n = strlen(k);
    if (n < 1 || n > 32) return 0;
    for (; *k; k++)
        if (!((*k >= 'a' && *k <= 'z') || (*k >= '0' && *k <= '9') || *k == '_')) return 0;
    return 1;
}

int gp_target_parse(const char *raw, size_t n, gp_target *t, gp_err *err)
{
    memset(t, 0, sizeof *t);
    if (n == 0 || n > GP_URL_MAX) return bad(err, n ? "URL too long" : "empty request target");
    if (memchr(raw, 0, n)) return bad(err, "NUL byte in the request target");
    const char *qm = memchr(raw, '?', n);
    size_t plen = qm ? (size_t)(qm - raw) : n;
    const char *hash = memchr(raw, '#', n);
    if (hash) return bad(err, "fragment in the request target");
    t->path = malloc(plen + 1);
    if (!t->path) return gp_err_set(err, GP_ENOMEM, "out of memory");
    int slash = 0;
    if (decode(raw, plen, t->path, 0, &slash) < 0) {
        gp_target_free(t);
        return bad(err, "bad escape or control byte in the path");
    }
    if (slash) {
        gp_target_free(t);
        return bad(err, "encoded '/' in the path");
    }
    int rc = check_path(t->path, err);
    if (rc) {
        gp_target_free(t);
        return rc;
    }
    if (!qm || plen + 1 >= n) return 0;
    const char *qs = qm + 1;
    size_t qn = n - plen - 1;
    /* each parameter takes its key, a NUL, its value and a NUL: at most one
     * byte more than its text ("k" without '=') */
    t->q.buf = malloc(2 * qn + 2);
    if (!t->q.buf) {
        gp_target_free(t);
        return gp_err_set(err, GP_ENOMEM, "out of memory");
    }
    char *w = t->q.buf;
    size_t i = 0;
    while (i < qn) {
        size_t j = i;
        while (j < qn && qs[j] != '&') j++;
        if (j > i) {
            const char *eq = memchr(qs + i, '=', j - i);
            size_t kl = eq ? (size_t)(eq - (qs + i)) : j - i;
            if (t->q.n >= GP_QUERY_MAX) {
                gp_target_free(t);
                return bad(err, "too many query parameters");
            }
            long k = decode(qs + i, kl, w, 1, NULL);
            if (k < 0 || !valid_key(w)) {
                gp_target_free(t);
                return bad(err, "bad query parameter name");
            }
            for (size_t m = 0; m < t->q.n; m++)
                if (!strcmp(t->q.key[m], w)) {
                    gp_target_free(t);
                    return bad(err, "repeated query parameter");
                }
            t->q.key[t->q.n] = w;
            w += k + 1;
            size_t vs = eq ? kl + 1 : j - i;
            long v = decode(qs + i + vs, j - i - vs, w, 1, NULL);
            if (v < 0 || v > GP_QVAL_MAX) {
                gp_target_free(t);
                return bad(err, v < 0 ? "bad escape or control byte in a query value"
                                      : "query value too long");
            }
            t->q.val[t->q.n++] = w;
            w += v + 1;
        }
        i = j + 1;
    }
    return 0;
}

void gp_target_free(gp_target *t)
{
    free(t->path);
    free(t->q.buf);
    memset(t, 0, sizeof *t);
}

const char *gp_query_get(const gp_query *q, const char *key)
{
    for (size_t i = 0; i < q->n; i++)
        if (!strcmp(q->key[i], key)) return q->val[i];
    return NULL;
}

int gp_query_only(const gp_query *q, const char *const *allowed, gp_err *err)
{
    for (size_t i = 0; i < q->n; i++) {
        size_t k = 0;
        while (allowed[k] && strcmp(allowed[k], q->key[i])) k++;
        if (!allowed[k]) return gp_err_set(err, GP_EINVAL, "unknown parameter '%.32s'", q->key[i]);
    }
    return 0;
}

int gp_query_long(const gp_query *q, const char *key, long lo, long hi, long *out, gp_err *err)
{
    const char *v = gp_query_get(q, key);
    if (!v) return 0;
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (!*v || *end || errno || x < lo || x > hi)
        return gp_err_set(err, GP_EINVAL, "%s expects an integer in [%ld, %ld]", key, lo, hi);
    *out = x;
    return 0;
}

int gp_query_double(const gp_query *q, const char *key, double lo, double hi, double *out,
                    gp_err *err)
{
    const char *v = gp_query_get(q, key);
    if (!v) return 0;
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (!*v || *end || errno || !(x >= lo && x <= hi))
        return gp_err_set(err, GP_EINVAL, "%s expects a number in [%g, %g]", key, lo, hi);
    *out = x;
    return 0;
}

int gp_query_dur(const gp_query *q, const char *key, long long *out, gp_err *err)
{
    const char *v = gp_query_get(q, key);
    if (!v) return 0;
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    double mul = -1;
    if (*v && !errno && end != v) {
        if (!*end || !strcmp(end, "ns"))
            mul = 1;
        else if (!strcmp(end, "us"))
            mul = 1e3;
        else if (!strcmp(end, "ms"))
            mul = 1e6;
        else if (!strcmp(end, "s"))
            mul = 1e9;
    }
    if (mul < 0 || !(x >= 0) || x * mul > 9e18)
        return gp_err_set(err, GP_EINVAL, "%s expects a duration such as 500ns, 20us, 1.5ms, 2s",
                          key);
    *out = (long long)(x * mul + 0.5);
    return 0;
}

int gp_query_enum(const gp_query *q, const char *key, const char *const *choices, int *out,
                  gp_err *err)
{
    const char *v = gp_query_get(q, key);
    if (!v) return 0;
    for (int i = 0; choices[i]; i++)
        if (!strcmp(choices[i], v)) {
            *out = i;
            return 0;
        }
    return gp_err_set(err, GP_EINVAL, "%s: unknown value", key);
}

unsigned gp_method_parse(const char *m)
{
    if (!strcmp(m, "GET")) return GP_M_GET;
    if (!strcmp(m, "POST")) return GP_M_POST;
    if (!strcmp(m, "HEAD")) return GP_M_HEAD;
    return 0;
}

static int match(const char *pat, const char *path)
{
    size_t pl = strlen(pat);
    if (pl && pat[pl - 1] == '*') {
        if (strncmp(pat, path, pl - 1)) return 0;
        const char *rest = path + pl - 1;
        if (!*rest) return 0;
        for (; *rest; rest++)
            if (!((*rest >= 'a' && *rest <= 'z') || (*rest >= 'A' && *rest <= 'Z') ||
                  (*rest >= '0' && *rest <= '9') || *rest == '.' || *rest == '_' || *rest == '-'))
                return 0;
        return 1;
    }
    return !strcmp(pat, path);
}

const gp_route *gp_route_find(const gp_route *table, size_t n, const char *path, unsigned method,
                              int *method_ok)
{
    *method_ok = 0;
    for (size_t i = 0; i < n; i++)
        if (match(table[i].path, path)) {
            unsigned m = method == GP_M_HEAD ? GP_M_GET : method;
            *method_ok = (table[i].methods & m) != 0;
            return &table[i];
        }
    return NULL;
}
