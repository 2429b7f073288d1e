/* core/jdom.c: a small recursive-descent JSON reader producing a tree of
 * gp_jv values (RFC 8259: strings with escapes and surrogate pairs, numbers
 * through strtod, depth-limited). */
#include "core/jdom.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 256

typedef struct jp {
    const char *s;
    size_t n, i;
    gp_err *err;
    int rc;
    size_t eoff; /* where the first error was found */
} jp;

static int fail(jp *p, const char *what)
{
    if (!p->rc) {
        p->eoff = p->i;
        p->rc = gp_err_set(p->err, GP_EPARSE, "byte %zu: expected %s", p->i, what);
    }
    return p->rc;
}

static int oom(jp *p)
{
    if (!p->rc) p->rc = gp_err_set(p->err, GP_ENOMEM, "out of memory");
    return p->rc;
}

static void ws(jp *p)
{
    while (p->i < p->n && strchr(" \t\r\n", p->s[p->i]) && p->s[p->i]) p->i++;
}

static int lit(jp *p, const char *w)
{
    size_t k = strlen(w);
    if (p->n - p->i < k || memcmp(p->s + p->i, w, k)) return fail(p, w);
    p->i += k;
    return 0;
}

static int hex4(jp *p, unsigned *out)
{
    if (p->n - p->i < 4) return fail(p, "4 hex digits");
    unsigned v = 0;
    for (int k = 0; k < 4; k++) {
        char c = p->s[p->i + (size_t)k];
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f')
            v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            v |= (unsigned)(c - 'A' + 10);
        else
            return fail(p, "4 hex digits");
    }
    p->i += 4;
    *out = v;
    return 0;
}

static size_t put_utf8(char *o, unsigned cp)
{
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (char)(0xc0 | cp >> 6);
        o[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xe0 | cp >> 12);
        o[1] = (char)(0x80 | (cp >> 6 & 0x3f));
        o[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    o[0] = (char)(0xf0 | cp >> 18);
    o[1] = (char)(0x80 | (cp >> 12 & 0x3f));
    o[2] = (char)(0x80 | (cp >> 6 & 0x3f));
    o[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

/* Parses a string at p->i (the opening quote) into a new malloc'd buffer. */
static int str(jp *p, char **out)
{
    if (p->i >= p->n || p->s[p->i] != '"') return fail(p, "'\"'");
    p->i++;
    /* decoded text is never longer than the source */
    size_t end = p->i;
    while (end < p->n && p->s[end] != '"') end += p->s[end] == '\\' ? 2 : 1;
    if (end >= p->n) return fail(p, "closing '\"'");
    char *o = malloc(end - p->i + 1);
    if (!o) return oom(p);
    size_t k = 0;
    while (p->s[p->i] != '"') {
        unsigned char c = (unsigned char)p->s[p->i];
        if (c < 0x20) {
            free(o);
            return fail(p, "no control character in a string");
        }
        if (c != '\\') {
            o[k++] = (char)c;
            p->i++;
            continue;
        }
        char e = p->s[++p->i];
        p->i++;
        const char *from = "\"\\/bfnrt", *to = "\"\\/\b\f\n\r\t";
        const char *q = e ? strchr(from, e) : NULL;
        if (q) {
            o[k++] = to[q - from];
            continue;
        }
        if (e != 'u') {
            p->i--;
            free(o);
            return fail(p, "an escape (\\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)");
        }
        unsigned cp;
        if (hex4(p, &cp)) {
            free(o);
            return p->rc;
        }
        if (cp >= 0xd800 && cp < 0xdc00) { /* high surrogate: needs its low half */
            unsigned lo;
            if (p->n - p->i < 6 || p->s[p->i] != '\\' || p->s[p->i + 1] != 'u') {
                free(o);
                return fail(p, "a low surrogate \\uDC00-\\uDFFF");
            }
            p->i += 2;
            if (hex4(p, &lo) || lo < 0xdc00 || lo > 0xdfff) {
                free(o);
                return fail(p, "a low surrogate \\uDC00-\\uDFFF");
            }
            cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
        } else if (cp >= 0xdc00 && cp < 0xe000) {
            free(o);
            return fail(p, "no lone low surrogate");
        }
        k += put_utf8(o + k, cp); /* at most 4 bytes for 6 or 12 source bytes */
    }
    p->i++;
    o[k] = 0;
    *out = o;
    return 0;
}

static int value(jp *p, gp_jv *v, int depth);

static int push(jp *p, gp_jv *v, size_t *cap, char *key)
{
    if (v->n == *cap) {
        size_t nc = *cap ? *cap * 2 : 4;
        gp_jv *ni = realloc(v->items, nc * sizeof *ni);
        if (!ni) return oom(p);
        v->items = ni;
        if (v->type == GP_JOBJ) {
            char **nk = realloc(v->keys, nc * sizeof *nk);
            if (!nk) return oom(p);
            v->keys = nk;
        }
        *cap = nc;
    }
    memset(&v->items[v->n], 0, sizeof v->items[v->n]);
    if (v->type == GP_JOBJ) v->keys[v->n] = key;
    v->n++;
    return 0;
}

static int container(jp *p, gp_jv *v, int depth)
{
    int obj = p->s[p->i] == '{';
    char close = obj ? '}' : ']';
    v->type = obj ? GP_JOBJ : GP_JARR;
    if (depth >= MAX_DEPTH) return fail(p, "nesting of at most 256 levels");
    p->i++;
    ws(p);
    if (p->i < p->n && p->s[p->i] == close) {
        p->i++;
        return 0;
    }
    size_t cap = 0;
    for (;;) {
        char *key = NULL;
        ws(p);
        if (obj) {
            if (str(p, &key)) return p->rc;
            ws(p);
            if (p->i >= p->n || p->s[p->i] != ':') {
                free(key);
                return fail(p, "':'");
            }
            p->i++;
        }
        if (push(p, v, &cap, key)) {
            free(key);
            return p->rc;
        }
        if (value(p, &v->items[v->n - 1], depth + 1)) return p->rc;
        ws(p);
        if (p->i < p->n && p->s[p->i] == ',') {
            p->i++;
            continue;
        }
        if (p->i < p->n && p->s[p->i] == close) {
            p->i++;
            return 0;
        }
        return fail(p, obj ? "',' or '}'" : "',' or ']'");
    }
}

static int number(jp *p, gp_jv *v)
{
    size_t j = p->i;
    if (j < p->n && p->s[j] == '-') j++;
    if (j >= p->n || p->s[j] < '0' || p->s[j] > '9') return fail(p, "a value");
    while (j < p->n && strchr("0123456789+-.eE", p->s[j]) && p->s[j]) j++;
    char buf[64];
    if (j - p->i >= sizeof buf) return fail(p, "a number of at most 63 characters");
    memcpy(buf, p->s + p->i, j - p->i);
    buf[j - p->i] = 0;
    char *end;
    v->num = strtod(buf, &end);
    if (*end) return fail(p, "a number");
    v->type = GP_JNUM;
    p->i = j;
    return 0;
}

static int value(jp *p, gp_jv *v, int depth)
{
    ws(p);
    if (p->i >= p->n) return fail(p, "a value");
    switch (p->s[p->i]) {
    case '{':
    case '[':
        return container(p, v, depth);
    case '"':
        v->type = GP_JSTR;
        return str(p, &v->str);
    case 't':
        v->type = GP_JBOOL;
        v->boolean = 1;
        return lit(p, "true");
    case 'f':
        v->type = GP_JBOOL;
        return lit(p, "false");
    case 'n':
        return lit(p, "null");
    default:
        return number(p, v);
    }
}

int gp_jdom_parse_at(const char *text, size_t len, gp_jv *out, gp_err *err, size_t *err_off)
{
    jp p = {text, len, 0, err, 0, 0};
    memset(out, 0, sizeof *out);
    if (!value(&p, out, 0)) {
        ws(&p);
        if (p.i < p.n) fail(&p, "end of input");
    }
    if (p.rc) gp_jdom_free(out);
    if (err_off) *err_off = p.rc ? p.eoff : 0;
    return p.rc;
}

int gp_jdom_parse(const char *text, size_t len, gp_jv *out, gp_err *err)
{
    return gp_jdom_parse_at(text, len, out, err, NULL);
}

void gp_jdom_free(gp_jv *v)
{
    if (!v) return;
    for (size_t i = 0; i < v->n; i++) {
        gp_jdom_free(&v->items[i]);
        if (v->keys) free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
    free(v->str);
    memset(v, 0, sizeof *v);
}

const gp_jv *gp_jdom_get(const gp_jv *o, const char *key)
{
    if (!o || o->type != GP_JOBJ) return NULL;
    for (size_t i = 0; i < o->n; i++)
        if (!strcmp(o->keys[i], key)) return &o->items[i];
    return NULL;
}

int gp_jdom_num(const gp_jv *v, double *out)
{
    if (!v || v->type != GP_JNUM) return 0;
    *out = v->num;
    return 1;
}

const char *gp_jdom_str(const gp_jv *v, const char *dflt)
{
    return v && v->type == GP_JSTR ? v->str : dflt;
}
