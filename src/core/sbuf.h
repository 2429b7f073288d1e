/* core/sbuf.h: a growable byte buffer used to build text output (JSON, HTML,
 * tables) before writing it; plus JSON-writing helpers on top of it. */
#ifndef GP_CORE_SBUF_H
#define GP_CORE_SBUF_H
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct gp_sbuf {
    char *s;
    size_t n, cap;
    FILE *spill;   /* gp_sbuf_spill_to: where full contents go (NULL: kept) */
    int spill_err; /* a write to spill failed */
} gp_sbuf;         /* zero-initialise; free with gp_sbuf_free */

void gp_sbuf_free(gp_sbuf *b);
void gp_sbuf_reset(gp_sbuf *b);
void gp_sbuf_add(gp_sbuf *b, const char *s, size_t n);
/* Makes room for `extra` more bytes (b->n + extra < b->cap afterwards). */
void gp_sbuf_reserve(gp_sbuf *b, size_t extra);
void gp_sbuf_puts(gp_sbuf *b, const char *s);
void gp_sbuf_putc(gp_sbuf *b, char c);
void gp_sbuf_printf(gp_sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void gp_sbuf_vprintf(gp_sbuf *b, const char *fmt, va_list ap);
/* Returns a NUL-terminated view (valid until the next change). */
const char *gp_sbuf_cstr(gp_sbuf *b);
/* Writes the contents to f; returns 0 or GP_EIO. */
int gp_sbuf_write(const gp_sbuf *b, FILE *f);
/* From now on, whenever the contents reach GP_SBUF_SPILL bytes they are
 * written to f and dropped, so a long document is written in pieces with
 * bounded memory. Only for writers that append (none may go back into what
 * was written). gp_sbuf_spill_end writes the rest: 0 or GP_EIO (any write
 * failed). */
#define GP_SBUF_SPILL (1u << 20)
void gp_sbuf_spill_to(gp_sbuf *b, FILE *f);
int gp_sbuf_spill_end(gp_sbuf *b);

/* JSON helpers. gp_json_str writes a quoted, escaped string (invalid UTF-8
 * bytes are replaced by U+FFFD so that the output is always valid JSON). */
void gp_json_str(gp_sbuf *b, const char *s);
void gp_json_strn(gp_sbuf *b, const char *s, size_t n);
/* Writes a double with up to 17 significant digits; NaN/Inf become null. */
void gp_json_num(gp_sbuf *b, double v);
void gp_json_int(gp_sbuf *b, int64_t v);
/* Writes `"key":` (with a leading comma when `comma` is set). */
void gp_json_key(gp_sbuf *b, const char *key, int comma);

/* HTML-escapes s into b (&, <, >, ", '). */
void gp_html_escape(gp_sbuf *b, const char *s);

/* Writes s into b for a terminal or a line-oriented text output: control
 * characters (C0, DEL and the C1 range U+0080..U+009F, which some terminals
 * obey) become \n, \r, \t, \xHH or \uHHHH, so that data (a recorded command
 * line, a trace name) can neither drive the terminal nor forge lines. */
void gp_sbuf_put_term(gp_sbuf *b, const char *s);
/* The same as a new string (malloc'ed; caller frees). */
char *gp_term_safe(const char *s);

#endif
