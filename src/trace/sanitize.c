/* trace/sanitize.c: sanitization of a trace's strings for sharing (see
 * sanitize.h). */
#include "trace/sanitize.h"
#include "core/error.h"
#include "core/hash.h"
#include "core/jdom.h"
#include "core/redact.h"
#include "core/sbuf.h"
#include <ctype.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

int gp_sanitize_keep_parse(const char *list, char *bad, size_t nbad)
{
    static const struct {
        const char *name;
        unsigned bit;
    } names[] = {{"user", GP_KEEP_USER},
                 {"home", GP_KEEP_HOME},
                 {"host", GP_KEEP_HOST},
                 {"env", GP_KEEP_ENV},
                 {"paths", GP_KEEP_PATHS}};
    unsigned bits = 0;
    const char *p = list ? list : "";
    while (*p) {
        size_t n = strcspn(p, ",");
        int found = 0;
        for (size_t i = 0; i < sizeof names / sizeof *names; i++)
            if (strlen(names[i].name) == n && !strncmp(p, names[i].name, n)) {
                bits |= names[i].bit;
                found = 1;
            }
        if (!found && n) {
            snprintf(bad, nbad, "%.*s", (int)n, p);
            return -1;
        }
        p += n;
        if (*p == ',') p++;
    }
    return (int)bits;
}

static int wordch(unsigned char c)
{
    return isalnum(c) || c == '_' || c == '-' || c == '.';
}

/* Replaces every whole-word occurrence of w in b (from 0) by rep. */
static void replace_word(gp_sbuf *b, const char *w, const char *rep)
{
    size_t wn = strlen(w);
    if (wn < 2 || !b->n) return;
    gp_sbuf out = {0};
    const char *s = gp_sbuf_cstr(b);
    size_t i = 0;
    int changed = 0;
    while (i < b->n) {
        if (!strncmp(s + i, w, wn) && (i == 0 || !wordch((unsigned char)s[i - 1])) &&
            !wordch((unsigned char)s[i + wn])) {
            gp_sbuf_puts(&out, rep);
            i += wn;
            changed = 1;
            continue;
        }
        gp_sbuf_putc(&out, s[i++]);
    }
    if (changed) {
        gp_sbuf_reset(b);
        gp_sbuf_add(b, out.s, out.n);
    }
    gp_sbuf_free(&out);
}

/* 1 when p starts a Windows drive path: a letter, ':', '\\' or '/'. */
static int drive_path(const char *p)
{
    return isalpha((unsigned char)p[0]) && p[1] == ':' && (p[2] == '\\' || p[2] == '/') &&
           (isalnum((unsigned char)p[3]) || p[3] == '.' || p[3] == '_');
}

/* The name after /home/, /Users/ or X:\Users\ at p (length in *n), or NULL. */
static const char *home_user(const char *p, size_t *n)
{
    const char *q =
        !strncmp(p, "/home/", 6)                                                            ? p + 6
        : !strncmp(p, "/Users/", 7)                                                         ? p + 7
        : drive_path(p) && !strncasecmp(p + 3, "Users", 5) && (p[8] == '\\' || p[8] == '/') ? p + 9
                                                                                            : NULL;
    if (!q) return NULL;
    *n = strcspn(q, "/\\ \t\n'\",;)]}>");
    return *n ? q : NULL;
}

static int path_start(const char *s, size_t i)
{
    if (i && !strchr(" \t\n'\"=:(,;[{", s[i - 1])) return 0;
    if (s[i] == '~' && s[i + 1] == '/') return 1;
    if (drive_path(s + i)) return 1;
    return s[i] == '/' && (isalnum((unsigned char)s[i + 1]) || s[i + 1] == '.' || s[i + 1] == '_');
}

char *gp_sanitize_str(const char *in, unsigned keep)
{
    char *s = gp_redact_text(in ? in : "");
    gp_sbuf b = {0};
    char users[8][64];
    size_t nu = 0;
    /* env words, paths, home folders */
    size_t n = strlen(s), i = 0;
    while (i < n) {
        int start = i == 0 || strchr(" \t\n'\"", s[i - 1]);
        if (!(keep & GP_KEEP_ENV) && start && (isupper((unsigned char)s[i]) || s[i] == '_')) {
            size_t k = i;
            while (isupper((unsigned char)s[k]) || isdigit((unsigned char)s[k]) || s[k] == '_') k++;
            if (s[k] == '=' && k > i) {
                size_t e = k + 1 + strcspn(s + k + 1, " \t\n'\"");
                gp_sbuf_add(&b, s + i, k + 1 - i);
                if (e > k + 1) gp_sbuf_puts(&b, GP_REDACTED);
                i = e;
                continue;
            }
        }
        if (path_start(s, i)) {
            size_t e = i + strcspn(s + i, " \t\n'\",;)]}>");
            size_t un;
            const char *u = home_user(s + i, &un);
            if (u && nu < 8 && un < 64) {
                memcpy(users[nu], u, un);
                users[nu++][un] = 0;
            }
            if (!(keep & GP_KEEP_PATHS)) {
                gp_sbuf_printf(&b, "<path:%08x>",
                               (unsigned)(gp_hash_bytes(s + i, e - i) & 0xffffffffu));
            } else if (!(keep & GP_KEEP_HOME) && (u || !strncmp(s + i, "/root", 5))) {
                const char *rest = u ? u + un : s + i + 5;
                if (u || *rest == '/' || rest == s + e) {
                    gp_sbuf_putc(&b, '~');
                    gp_sbuf_add(&b, rest, (size_t)(s + e - rest));
                } else {
                    gp_sbuf_add(&b, s + i, e - i);
                }
            } else {
                gp_sbuf_add(&b, s + i, e - i);
            }
            i = e;
            continue;
        }
        gp_sbuf_putc(&b, s[i++]);
    }
    free(s);
    if (!(keep & GP_KEEP_USER)) {
        const char *env = getenv("USER");
        struct passwd *pw = getpwuid(getuid());
        if (env) replace_word(&b, env, "<user>");
        if (pw && pw->pw_name) replace_word(&b, pw->pw_name, "<user>");
        for (size_t k = 0; k < nu; k++) replace_word(&b, users[k], "<user>");
    }
    if (!(keep & GP_KEEP_HOST)) {
        char host[256] = "";
        gethostname(host, sizeof host - 1);
        replace_word(&b, host, "<host>");
        char *dot = strchr(host, '.');
        if (dot) {
            *dot = 0;
            replace_word(&b, host, "<host>");
        }
    }
    char *out = gp_xstrdup(b.n ? gp_sbuf_cstr(&b) : "");
    gp_sbuf_free(&b);
    return out;
}

static char *rewrite(void *ctx, const char *s, size_t n)
{
    unsigned keep = *(const unsigned *)ctx;
    char *r = gp_sanitize_str(s, keep);
    if (strlen(r) == n && !memcmp(r, s, n)) {
        free(r);
        return NULL;
    }
    return r;
}

int gp_sanitize_strtab(gp_strtab *st, unsigned keep)
{
    return gp_strtab_rewrite(st, rewrite, &keep) ? GP_ENOMEM : 0;
}

/* Appends the JSON text j[0..n) to out with every string (keys and values)
 * sanitized; numbers, literals and structure are copied byte for byte. */
static void sanitize_json(gp_sbuf *out, const char *j, size_t n, unsigned keep)
{
    size_t i = 0;
    while (i < n) {
        if (j[i] != '"') {
            gp_sbuf_putc(out, j[i++]);
            continue;
        }
        size_t e = i + 1;
        while (e < n && j[e] != '"') e += j[e] == '\\' ? 2 : 1;
        if (e >= n) { /* not JSON: nothing of it is kept */
            gp_sbuf_puts(out, "\"" GP_REDACTED "\"");
            return;
        }
        gp_jv v;
        gp_err err = {0};
        if (gp_jdom_parse(j + i, e + 1 - i, &v, &err) || v.type != GP_JSTR) {
            gp_sbuf_puts(out, "\"" GP_REDACTED "\"");
            if (!err.code) gp_jdom_free(&v);
        } else {
            char *r = gp_sanitize_str(v.str, keep);
            gp_json_str(out, r);
            free(r);
            gp_jdom_free(&v);
        }
        i = e + 1;
    }
}

static void sanitize_refs(gp_args_ref *r, size_t n, const char *text, gp_sbuf *out, unsigned keep)
{
    for (size_t k = 0; k < n; k++) {
        size_t from = out->n;
        sanitize_json(out, text + r[k].off, r[k].len, keep);
        r[k].off = from;
        r[k].len = (uint32_t)(out->n - from);
    }
}

int gp_sanitize_args(gp_trace *t, unsigned keep)
{
    if (!t->args_text.n) return 0;
    gp_sbuf out = {0};
    sanitize_refs(t->slice_args.v, t->slice_args.n, t->args_text.v, &out, keep);
    sanitize_refs(t->instant_args.v, t->instant_args.n, t->args_text.v, &out, keep);
    t->args_text.n = 0;
    if (out.n > UINT32_MAX || GP_VEC_RESERVE(t->args_text, out.n)) {
        gp_sbuf_free(&out);
        t->slice_args.n = t->instant_args.n = 0; /* nothing unsanitized stays */
        return GP_ENOMEM;
    }
    memcpy(t->args_text.v, out.s, out.n);
    t->args_text.n = out.n;
    gp_sbuf_free(&out);
    return 0;
}

int gp_sanitize_trace(gp_trace *t, unsigned keep)
{
    if (gp_sanitize_args(t, keep)) return GP_ENOMEM;
    return gp_sanitize_strtab(t->strings, keep);
}
