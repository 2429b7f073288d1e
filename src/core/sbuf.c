/* core/sbuf.c: growable text buffer, JSON and HTML escaping. */
#include "core/sbuf.h"
#include "core/error.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

void gp_sbuf_free(gp_sbuf *b)
{
    free(b->s);
    b->s = NULL;
    b->n = b->cap = 0;
}

void gp_sbuf_reset(gp_sbuf *b)
{
    b->n = 0;
}

static void spill(gp_sbuf *b)
{
    if (b->n && fwrite(b->s, 1, b->n, b->spill) != b->n) b->spill_err = 1;
    b->n = 0;
}

static void reserve(gp_sbuf *b, size_t extra)
{
    if (b->spill && b->n && b->n + extra + 1 > GP_SBUF_SPILL) spill(b);
    if (b->n + extra + 1 <= b->cap) return;
    size_t nc = b->cap ? b->cap : 256;
    while (nc < b->n + extra + 1) nc *= 2;
    b->s = gp_xrealloc(b->s, nc);
    b->cap = nc;
}

void gp_sbuf_reserve(gp_sbuf *b, size_t extra)
{
    reserve(b, extra);
}

void gp_sbuf_add(gp_sbuf *b, const char *s, size_t n)
{
    reserve(b, n);
    memcpy(b->s + b->n, s, n);
    b->n += n;
}

void gp_sbuf_puts(gp_sbuf *b, const char *s)
{
    gp_sbuf_add(b, s, strlen(s));
}

void gp_sbuf_putc(gp_sbuf *b, char c)
{
    reserve(b, 1);
    b->s[b->n++] = c;
}

void gp_sbuf_vprintf(gp_sbuf *b, const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    reserve(b, 64);
    int k = vsnprintf(b->s + b->n, b->cap - b->n, fmt, ap);
    if (k < 0) {
        va_end(ap2);
        return;
    }
    if ((size_t)k >= b->cap - b->n) {
        reserve(b, (size_t)k);
        vsnprintf(b->s + b->n, b->cap - b->n, fmt, ap2);
    }
    b->n += (size_t)k;
    va_end(ap2);
}

void gp_sbuf_printf(gp_sbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    gp_sbuf_vprintf(b, fmt, ap);
    va_end(ap);
}

const char *gp_sbuf_cstr(gp_sbuf *b)
{
    reserve(b, 0);
    b->s[b->n] = 0;
    return b->s;
}

int gp_sbuf_write(const gp_sbuf *b, FILE *f)
{
    if (b->n && fwrite(b->s, 1, b->n, f) != b->n) return GP_EIO;
    return 0;
}

void gp_sbuf_spill_to(gp_sbuf *b, FILE *f)
{
    b->spill = f;
    b->spill_err = 0;
}

int gp_sbuf_spill_end(gp_sbuf *b)
{
    if (b->spill) spill(b);
    b->spill = NULL;
    return b->spill_err ? GP_EIO : 0;
}

/* Length of a valid UTF-8 sequence at p (1..4), or 0 if invalid. */
static size_t utf8_len(const unsigned char *p, size_t avail)
{
    unsigned c = p[0];
    size_t n;
    unsigned min;
    if (c < 0x80) return 1;
    if ((c & 0xe0) == 0xc0)
        n = 2, min = 0x80;
    else if ((c & 0xf0) == 0xe0)
        n = 3, min = 0x800;
    else if ((c & 0xf8) == 0xf0)
        n = 4, min = 0x10000;
    else
        return 0;
    if (n > avail) return 0;
    unsigned cp = c & (0x7f >> n);
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xc0) != 0x80) return 0;
        cp = (cp << 6) | (p[i] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
    return n;
}

void gp_json_strn(gp_sbuf *b, const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    reserve(b, n + 2);
    b->s[b->n++] = '"';
    size_t i = 0;
    while (i < n) {
        unsigned char c = p[i];
        if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
            size_t j = i + 1;
            while (j < n && p[j] >= 0x20 && p[j] < 0x80 && p[j] != '"' && p[j] != '\\') j++;
            gp_sbuf_add(b, s + i, j - i);
            i = j;
            continue;
        }
        if (c == '"')
            gp_sbuf_add(b, "\\\"", 2);
        else if (c == '\\')
            gp_sbuf_add(b, "\\\\", 2);
        else if (c == '\n')
            gp_sbuf_add(b, "\\n", 2);
        else if (c == '\t')
            gp_sbuf_add(b, "\\t", 2);
        else if (c == '\r')
            gp_sbuf_add(b, "\\r", 2);
        else if (c < 0x20)
            gp_sbuf_printf(b, "\\u%04x", c);
        else {
            size_t k = utf8_len(p + i, n - i);
            if (k == 0) {
                gp_sbuf_add(b, "\xef\xbf\xbd", 3);
                i++;
                continue;
            }
            gp_sbuf_add(b, s + i, k);
            i += k;
            continue;
        }
        i++;
    }
    gp_sbuf_putc(b, '"');
}

void gp_json_str(gp_sbuf *b, const char *s)
{
    gp_json_strn(b, s ? s : "", s ? strlen(s) : 0);
}

void gp_json_num(gp_sbuf *b, double v)
{
    if (!isfinite(v)) {
        gp_sbuf_puts(b, "null");
        return;
    }
    if (v == (double)(int64_t)v && fabs(v) < 9e15) {
        gp_sbuf_printf(b, "%lld", (long long)v);
        return;
    }
    char tmp[40];
    /* shortest round-tripping representation among %.15g/%.17g */
    snprintf(tmp, sizeof tmp, "%.15g", v);
    if (strtod(tmp, NULL) != v) snprintf(tmp, sizeof tmp, "%.17g", v);
    gp_sbuf_puts(b, tmp);
}

void gp_json_int(gp_sbuf *b, int64_t v)
{
    /* no printf: big outputs (flame graphs, timelines) write millions of these */
    char tmp[24], *e = tmp + sizeof tmp, *q = e;
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    do *--q = (char)('0' + u % 10);
    while (u /= 10);
    if (v < 0) *--q = '-';
    gp_sbuf_add(b, q, (size_t)(e - q));
}

void gp_json_key(gp_sbuf *b, const char *key, int comma)
{
    if (comma) gp_sbuf_putc(b, ',');
    gp_json_str(b, key);
    gp_sbuf_putc(b, ':');
}

void gp_html_escape(gp_sbuf *b, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '&':
            gp_sbuf_puts(b, "&amp;");
            break;
        case '<':
            gp_sbuf_puts(b, "&lt;");
            break;
        case '>':
            gp_sbuf_puts(b, "&gt;");
            break;
        case '"':
            gp_sbuf_puts(b, "&quot;");
            break;
        case '\'':
            gp_sbuf_puts(b, "&#39;");
            break;
        default:
            gp_sbuf_putc(b, *s);
        }
    }
}

void gp_sbuf_put_term(gp_sbuf *b, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        if (*p == '\n')
            gp_sbuf_puts(b, "\\n");
        else if (*p == '\r')
            gp_sbuf_puts(b, "\\r");
        else if (*p == '\t')
            gp_sbuf_puts(b, "\\t");
        else if (*p < 0x20 || *p == 0x7f)
            gp_sbuf_printf(b, "\\x%02x", *p);
        else if (*p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f)
            gp_sbuf_printf(b, "\\u%04x", (unsigned)*++p);
        else
            gp_sbuf_putc(b, (char)*p);
    }
}

char *gp_term_safe(const char *s)
{
    gp_sbuf b = {0};
    gp_sbuf_put_term(&b, s);
    char *out = gp_xstrdup(b.n ? gp_sbuf_cstr(&b) : "");
    gp_sbuf_free(&b);
    return out;
}
