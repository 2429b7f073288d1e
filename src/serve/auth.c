/* serve/auth.c: bearer tokens of `gpuprof serve` (see auth.h). */
#include "serve/auth.h"
#include "serve/router.h"
#include <errno.h>
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct tok {
    char s[GP_TOKEN_MAX];
    size_t n;
    int scope;
    char id[GP_TOKEN_ID_MAX]; /* "tok-" + 12 hex digits of its SHA-256 */
} tok;

struct gp_tokens {
    tok *v;
    size_t n;
};

int gp_ct_equal(const char *a, size_t an, const char *b, size_t bn)
{
    volatile unsigned char d = (unsigned char)(an != bn);
    for (size_t i = 0; i < GP_TOKEN_MAX; i++) {
        unsigned char x = i < an ? (unsigned char)a[i] : 0;
        unsigned char y = i < bn ? (unsigned char)b[i] : 0;
        d |= (unsigned char)(x ^ y);
    }
    return d == 0;
}

gp_tokens *gp_tokens_load(const char *path, gp_err *err)
{
    struct stat st;
    FILE *f = fopen(path, "re");
    if (!f) {
        gp_err_set(err, GP_EIO, "%s: %s", path, strerror(errno));
        return NULL;
    }
    if (fstat(fileno(f), &st) == 0 && (st.st_mode & 077)) {
        fclose(f);
        gp_err_set(err, GP_EINVAL,
                   "%s: the token file must not be readable by others (chmod 600 %s)", path, path);
        return NULL;
    }
    gp_tokens *t = calloc(1, sizeof *t);
    char line[1024];
    int ln = 0;
    while (t && fgets(line, sizeof line, f)) {
        ln++;
        char *p = line, *save = NULL;
        while (*p == ' ' || *p == '\t') p++;
        if (*p == '#' || *p == '\n' || *p == '\r' || !*p) continue;
        char *tk = strtok_r(p, " \t\r\n", &save), *sc = strtok_r(NULL, " \t\r\n", &save);
        size_t n = strlen(tk);
        int scope = !sc || !strcmp(sc, "read") ? GP_SCOPE_READ
                    : !strcmp(sc, "control")   ? GP_SCOPE_CONTROL
                                               : -1;
        int ok = n >= 16 && n <= GP_TOKEN_MAX && scope > 0 && !strtok_r(NULL, " \t\r\n", &save);
        /* RFC 6265 cookie-octets: the dashboard carries the token in a
         * cookie, where ; , " \ would end the value or add attributes */
        for (size_t i = 0; ok && i < n; i++)
            ok = tk[i] > 0x20 && tk[i] < 0x7f && !strchr(";,\"\\", tk[i]);
        if (!ok) {
            gp_err_set(err, GP_EINVAL,
                       "%s:%d: expected 'TOKEN [read|control]' with a token of 16..256 "
                       "printable characters other than ; , \" \\",
                       path, ln);
            gp_tokens_free(t);
            fclose(f);
            return NULL;
        }
        tok *nv = realloc(t->v, (t->n + 1) * sizeof *nv);
        if (!nv) {
            gp_tokens_free(t);
            t = NULL;
            break;
        }
        t->v = nv;
        memset(&t->v[t->n], 0, sizeof *t->v);
        memcpy(t->v[t->n].s, tk, n);
        t->v[t->n].n = n;
        t->v[t->n].scope = scope;
        gp_token_id(tk, n, t->v[t->n].id);
        t->n++;
    }
    fclose(f);
    if (!t) {
        gp_err_set(err, GP_ENOMEM, "out of memory");
        return NULL;
    }
    if (!t->n) {
        gp_tokens_free(t);
        gp_err_set(err, GP_EINVAL, "%s: no token in the file", path);
        return NULL;
    }
    return t;
}

void gp_tokens_free(gp_tokens *t)
{
    if (!t) return;
    if (t->v) memset(t->v, 0, t->n * sizeof *t->v);
    free(t->v);
    free(t);
}

int gp_tokens_scope(const gp_tokens *t, const char *s, size_t n)
{
    return gp_tokens_match(t, s, n, NULL);
}

int gp_tokens_match(const gp_tokens *t, const char *s, size_t n, char id[GP_TOKEN_ID_MAX])
{
    int scope = GP_SCOPE_NONE;
    if (id) id[0] = 0;
    if (n > GP_TOKEN_MAX) n = GP_TOKEN_MAX + 1; /* never equal; same work */
    for (size_t i = 0; i < t->n; i++) {
        int eq = gp_ct_equal(t->v[i].s, t->v[i].n, s, n > GP_TOKEN_MAX ? GP_TOKEN_MAX : n) &&
                 n <= GP_TOKEN_MAX;
        if (eq && t->v[i].scope > scope) {
            scope = t->v[i].scope;
            if (id) memcpy(id, t->v[i].id, GP_TOKEN_ID_MAX);
        }
    }
    return scope;
}

void gp_token_id(const char *token, size_t n, char id[GP_TOKEN_ID_MAX])
{
    unsigned char d[32];
    snprintf(id, GP_TOKEN_ID_MAX, "tok-?");
    if (gnutls_hash_fast(GNUTLS_DIG_SHA256, token, n, d) < 0) return;
    snprintf(id, GP_TOKEN_ID_MAX, "tok-%02x%02x%02x%02x%02x%02x", d[0], d[1], d[2], d[3], d[4],
             d[5]);
}
