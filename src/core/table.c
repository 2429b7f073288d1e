/* core/table.c: terminal table layout and unit formatting. */
#include "core/table.h"
#include "core/error.h"
#include "core/sbuf.h"
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

struct gp_table {
    int ncols;
    char **headers;
    char *align;
    char **cells; /* rows * ncols */
    size_t rows, cap;
};

gp_table *gp_table_create(int ncols, const char *const *headers, const char *align)
{
    gp_table *t = gp_xcalloc(1, sizeof *t);
    t->ncols = ncols;
    t->headers = gp_xcalloc((size_t)ncols, sizeof(char *));
    t->align = gp_xcalloc((size_t)ncols + 1, 1);
    for (int i = 0; i < ncols; i++) {
        t->headers[i] = gp_xstrdup(headers[i]);
        t->align[i] = (align && (int)strlen(align) > i) ? align[i] : 'l';
    }
    return t;
}

void gp_table_destroy(gp_table *t)
{
    if (!t) return;
    for (int i = 0; i < t->ncols; i++) free(t->headers[i]);
    for (size_t i = 0; i < t->rows * (size_t)t->ncols; i++) free(t->cells[i]);
    free(t->headers);
    free(t->align);
    free(t->cells);
    free(t);
}

void gp_table_row(gp_table *t, const char *const *cells)
{
    if (t->rows == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 16;
        t->cells = gp_xrealloc(t->cells, t->cap * (size_t)t->ncols * sizeof(char *));
    }
    for (int i = 0; i < t->ncols; i++)
        t->cells[t->rows * (size_t)t->ncols + (size_t)i] = gp_term_safe(cells[i] ? cells[i] : "");
    t->rows++;
}

void gp_table_rowf(gp_table *t, const char *fmt, ...)
{
    char buf[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    const char *cells[64];
    int n = 0;
    char *p = buf;
    while (n < t->ncols && n < 64) {
        cells[n++] = p;
        char *tab = strchr(p, '\t');
        if (!tab) break;
        *tab = 0;
        p = tab + 1;
    }
    while (n < t->ncols && n < 64) cells[n++] = "";
    gp_table_row(t, cells);
}

/* Display width: counts UTF-8 code points. */
static size_t dwidth(const char *s)
{
    size_t w = 0;
    for (; *s; s++)
        if (((unsigned char)*s & 0xc0) != 0x80) w++;
    return w;
}

static void put_cell(FILE *f, const char *s, size_t width, char align, int last)
{
    size_t w = dwidth(s);
    if (w > width) { /* truncate with an ellipsis */
        size_t keep = width ? width - 1 : 0, seen = 0;
        const char *p = s;
        while (*p && seen < keep) {
            p++;
            while (((unsigned char)*p & 0xc0) == 0x80) p++;
            seen++;
        }
        fwrite(s, 1, (size_t)(p - s), f);
        fputs("\xe2\x80\xa6", f);
        if (!last) fputs("  ", f);
        return;
    }
    if (align == 'r')
        for (size_t i = w; i < width; i++) fputc(' ', f);
    fputs(s, f);
    if (!last) {
        if (align != 'r')
            for (size_t i = w; i < width; i++) fputc(' ', f);
        fputs("  ", f);
    }
}

void gp_table_print(const gp_table *t, FILE *f, int max_width)
{
    size_t *w = gp_xcalloc((size_t)t->ncols, sizeof *w);
    for (int c = 0; c < t->ncols; c++) {
        w[c] = dwidth(t->headers[c]);
        for (size_t r = 0; r < t->rows; r++) {
            size_t x = dwidth(t->cells[r * (size_t)t->ncols + (size_t)c]);
            if (x > w[c]) w[c] = x;
        }
        if (max_width > 0 && w[c] > (size_t)max_width) w[c] = (size_t)max_width;
    }
    for (int c = 0; c < t->ncols; c++)
        put_cell(f, t->headers[c], w[c], t->align[c], c == t->ncols - 1);
    fputc('\n', f);
    for (int c = 0; c < t->ncols; c++) {
        for (size_t i = 0; i < w[c]; i++) fputc('-', f);
        if (c != t->ncols - 1) fputs("  ", f);
    }
    fputc('\n', f);
    for (size_t r = 0; r < t->rows; r++) {
        for (int c = 0; c < t->ncols; c++)
            put_cell(f, t->cells[r * (size_t)t->ncols + (size_t)c], w[c], t->align[c],
                     c == t->ncols - 1);
        fputc('\n', f);
    }
    free(w);
}

gp_unit gp_unit_pick(double max_ns)
{
    if (max_ns < 1e4) return (gp_unit){"ns", 1};
    if (max_ns < 1e7) return (gp_unit){"us", 1e3};
    if (max_ns < 1e10) return (gp_unit){"ms", 1e6};
    return (gp_unit){"s", 1e9};
}

const char *gp_fmt_dur(char *buf, size_t n, double ns, gp_unit u)
{
    if (u.div == 1)
        snprintf(buf, n, "%.0f", ns);
    else
        snprintf(buf, n, "%.3f", ns / u.div);
    return buf;
}

const char *gp_fmt_dur_auto(char *buf, size_t n, double ns)
{
    gp_unit u = gp_unit_pick(ns);
    char tmp[48];
    gp_fmt_dur(tmp, sizeof tmp, ns, u);
    snprintf(buf, n, "%s %s", tmp, u.name);
    return buf;
}

const char *gp_fmt_bytes(char *buf, size_t n, double b)
{
    const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    int i = 0;
    double v = b < 0 ? -b : b;
    while (v >= 1024 && i < 5) {
        v /= 1024;
        i++;
    }
    if (i == 0)
        snprintf(buf, n, "%s%.0f B", b < 0 ? "-" : "", v);
    else
        snprintf(buf, n, "%s%.2f %s", b < 0 ? "-" : "", v, units[i]);
    return buf;
}
