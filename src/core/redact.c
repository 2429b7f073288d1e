/* core/redact.c: the redaction table and its application (see redact.h). */
#include "core/redact.h"
#include "core/error.h"
#include "core/sbuf.h"
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- the table ---- */

/* Words that make a name (option, variable, header, parameter) secret. */
static const char *const secret_words[] = {
    "pass",   "pwd",     "token",     "secret",  "key",    "auth",   "credential",
    "cookie", "session", "signature", "private", "bearer", "apikey", "sig",
};
/* Header names whose value is a secret besides those containing a word above. */
static const char *const secret_headers[] = {"x-amz-security-token", "x-csrf-token",
                                             "x-goog-api-key", "proxy-authorization"};
/* Options whose next argument is a secret besides those containing a word
 * above (mysql/sshpass -p, --pw). */
static const char *const secret_short_options[] = {"-p", "-P", "--pw", "-pw"};
/* Options whose next argument is "user:password" (curl -u, --proxy-user). */
static const char *const userpass_options[] = {"-u", "--user", "-U", "--proxy-user"};
/* Scheme words after which the next word is a credential. */
static const char *const auth_schemes[] = {"Bearer", "Basic", "Token", "Digest", "Negotiate"};
/* Known token prefixes and how many token characters must follow. */
static const struct {
    const char *prefix;
    size_t min_tail;
} token_prefixes[] = {
    {"ghp_", 8},     {"gho_", 8},        {"ghu_", 8},     {"ghs_", 8},
    {"ghr_", 8},     {"github_pat_", 8}, {"glpat-", 16},  {"xoxa-", 8},
    {"xoxb-", 8},    {"xoxp-", 8},       {"xoxr-", 8},    {"xoxs-", 8},
    {"xapp-", 8},    {"sk-", 16},        {"sk_live_", 8}, {"sk_test_", 8},
    {"rk_live_", 8}, {"pk_live_", 8},    {"hf_", 16},     {"npm_", 20},
    {"pypi-", 16},   {"AIza", 20},       {"ya29.", 16},   {"dop_v1_", 16},
    {"SG.", 16},     {"shpat_", 16},     {"shpss_", 16},  {"hooks.slack.com/services/", 8},
    {"AKIA", 16},    {"ASIA", 16},
};

/* ---- helpers ---- */

static int has_word(const char *low)
{
    for (size_t i = 0; i < sizeof secret_words / sizeof *secret_words; i++)
        if (strstr(low, secret_words[i])) return 1;
    return 0;
}

int gp_redact_secret_name(const char *s, size_t n)
{
    char low[128];
    if (n >= sizeof low) n = sizeof low - 1;
    for (size_t i = 0; i < n; i++) low[i] = (char)tolower((unsigned char)s[i]);
    low[n] = 0;
    return has_word(low);
}

static int in_list(const char *w, const char *const *l, size_t n, int icase)
{
    for (size_t i = 0; i < n; i++)
        if (icase ? !strcasecmp(w, l[i]) : !strcmp(w, l[i])) return 1;
    return 0;
}
#define IN_LIST(w, l, icase) in_list(w, l, sizeof l / sizeof *l, icase)

static int secret_header(const char *s, size_t n)
{
    char name[64];
    if (!n || n >= sizeof name) return 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (!isalnum(c) && c != '-' && c != '_') return 0;
        name[i] = (char)c;
    }
    name[n] = 0;
    return gp_redact_secret_name(name, n) || IN_LIST(name, secret_headers, 1);
}

static int tokch(unsigned char c)
{
    return isalnum(c) || c == '_' || c == '-';
}

/* Length of a known-shape token starting at s (0 when none). */
static size_t token_at(const char *s)
{
    for (size_t i = 0; i < sizeof token_prefixes / sizeof *token_prefixes; i++) {
        size_t pl = strlen(token_prefixes[i].prefix);
        if (strncmp(s, token_prefixes[i].prefix, pl)) continue;
        size_t k = pl;
        while (tokch((unsigned char)s[k]) || s[k] == '/' || s[k] == '.' || s[k] == '+' ||
               s[k] == '=')
            k++;
        if (k - pl >= token_prefixes[i].min_tail) return k;
    }
    /* JWT: three base64url parts, the first two starting with eyJ */
    if (!strncmp(s, "eyJ", 3)) {
        size_t k = 0;
        int dots = 0;
        while (tokch((unsigned char)s[k]) || s[k] == '.') {
            if (s[k] == '.') dots++;
            k++;
        }
        const char *d = strchr(s, '.');
        if (dots >= 2 && d && d < s + k && !strncmp(d + 1, "eyJ", 3)) return k;
    }
    return 0;
}

/* Length of a long letter+digit run at s (0 when it is not one). */
static size_t long_run_at(const char *s)
{
    size_t k = 0, letters = 0, digits = 0;
    while (tokch((unsigned char)s[k]) || s[k] == '+' || s[k] == '=') {
        if (isalpha((unsigned char)s[k])) letters++;
        if (isdigit((unsigned char)s[k])) digits++;
        k++;
    }
    return k >= 24 && letters >= 4 && digits >= 4 ? k : 0;
}

/* Redacts one word (no separators inside) into out. */
static void redact_word(gp_sbuf *out, const char *w)
{
    size_t n = strlen(w);
    /* URL credentials: scheme://user:password@host */
    const char *sch = strstr(w, "://");
    const char *at = NULL, *colon = NULL;
    if (sch) {
        const char *hend = sch + 3 + strcspn(sch + 3, "/?#");
        for (const char *p = sch + 3; p < hend; p++) {
            if (*p == '@') at = p;
            if (*p == ':' && !colon) colon = p;
        }
        if (!(at && colon && colon < at)) at = colon = NULL;
    } else {
        /* user:password@host (no scheme): a ':' before the '@', neither
         * after a '/' */
        const char *a = strchr(w, '@'), *c = strchr(w, ':');
        if (a && c && c > w && c < a && a[1] && !memchr(w, '/', (size_t)(a - w)) &&
            !memchr(w, '=', (size_t)(a - w))) {
            at = a;
            colon = c;
        }
    }
    size_t i = 0;
    while (i < n) {
        if (colon && w + i == colon + 1) {
            gp_sbuf_puts(out, GP_REDACTED);
            i = (size_t)(at - w);
            continue;
        }
        /* NAME=VALUE with a secret name: the name ends at '=', starts after a delimiter */
        if (w[i] == '=' && i > 0) {
            size_t a = i;
            while (a > 0 && !strchr("?&;,:/ ", w[a - 1])) a--;
            while (a < i && w[a] == '-') a++;
            if (a < i && gp_redact_secret_name(w + a, i - a)) {
                gp_sbuf_putc(out, '=');
                size_t e = i + 1 + strcspn(w + i + 1, "&#");
                if (e > i + 1) gp_sbuf_puts(out, GP_REDACTED);
                i = e;
                continue;
            }
        }
        int boundary = i == 0 || !tokch((unsigned char)w[i - 1]);
        if (boundary) {
            size_t k = token_at(w + i);
            if (!k) k = long_run_at(w + i);
            if (k) {
                gp_sbuf_puts(out, GP_REDACTED);
                i += k;
                continue;
            }
        }
        gp_sbuf_putc(out, w[i++]);
    }
}

/* The state carried from word to word (and from argument to argument). */
typedef struct rstate {
    int next;     /* the next word is a secret (2: when it has >= 8 characters) */
    int userpass; /* the next word is user:password */
} rstate;

static int is_sep(unsigned char c)
{
    return isspace(c) || strchr("'\"`;&|()<>,", c) != NULL;
}

/* Redacts text s into out, word by word, keeping separators. */
static void redact_into(gp_sbuf *out, const char *s, rstate *st)
{
    gp_sbuf w = {0};
    char quote = 0;
    size_t i = 0, n = strlen(s);
    while (i < n) {
        /* PEM private key blocks, wherever they start */
        if (!strncmp(s + i, "-----BEGIN ", 11)) {
            const char *e = strstr(s + i, "-----END ");
            const char *f = e ? strstr(e + 9, "-----") : NULL;
            gp_sbuf_puts(out, GP_REDACTED);
            i = f ? (size_t)(f + 5 - s) : n;
            continue;
        }
        /* already redacted text stays as it is (redaction is idempotent) */
        if (!strncmp(s + i, GP_REDACTED, sizeof GP_REDACTED - 1)) {
            gp_sbuf_puts(out, GP_REDACTED);
            i += sizeof GP_REDACTED - 1;
            st->next = st->userpass = 0;
            continue;
        }
        unsigned char c = (unsigned char)s[i];
        if (is_sep(c)) {
            if (c == '\'' || c == '"') quote = quote == (char)c ? 0 : quote ? quote : (char)c;
            gp_sbuf_putc(out, (char)c);
            i++;
            continue;
        }
        size_t j = i, wstart = i;
        while (j < n && !is_sep((unsigned char)s[j]) && strncmp(s + j, "-----BEGIN ", 11)) j++;
        gp_sbuf_reset(&w);
        gp_sbuf_add(&w, s + i, j - i);
        const char *word = gp_sbuf_cstr(&w);
        i = j;
        if (st->next == 1 && strspn(word, ":") == strlen(word)) { /* "password": value */
            gp_sbuf_puts(out, word);
            continue;
        }
        if (st->next || st->userpass) {
            if (IN_LIST(word, auth_schemes, 1)) {
                gp_sbuf_puts(out, word);
                continue;
            }
            int up = st->userpass, weak = st->next == 2;
            st->next = st->userpass = 0;
            if (weak ? strlen(word) >= 8 : !up || strchr(word, ':')) {
                gp_sbuf_puts(out, GP_REDACTED);
                continue;
            }
        }
        /* a header: NAME: value, the value up to the end of the quoted
         * string, the line or the text */
        const char *hc = strchr(word, ':');
        const char *hn = word; /* the header name starts after an '=' (--header=NAME:) */
        for (const char *q = word; hc && q < hc; q++)
            if (*q == '=') hn = q + 1;
        if (hc && hc > hn && secret_header(hn, (size_t)(hc - hn)) && strncmp(hc, "://", 3)) {
            /* the value ends with the quoted string, with the argument when
             * the header is the whole argument, else (a word in a script)
             * at the end of the shell command */
            gp_sbuf_add(out, word, (size_t)(hc - word) + 1);
            gp_sbuf_puts(out, " " GP_REDACTED);
            if (quote)
                while (i < n && s[i] != '\n' && s[i] != quote) i++;
            else if (wstart == 0)
                while (i < n && s[i] != '\n') i++;
            else
                while (i < n && !strchr("\n;&|", s[i])) i++;
            continue;
        }
        /* NAME=Bearer X with a secret NAME: the credential is the next word */
        const char *e1 = strchr(word, '=');
        if (e1 && e1 > word && IN_LIST(e1 + 1, auth_schemes, 1)) {
            const char *nm = word;
            while (*nm == '-') nm++;
            if (nm < e1 && gp_redact_secret_name(nm, (size_t)(e1 - nm))) {
                gp_sbuf_add(out, word, (size_t)(e1 - word) + 1);
                gp_sbuf_puts(out, e1 + 1);
                st->next = 1;
                continue;
            }
        }
        /* mysql -pSECRET: a value glued to -p, unless it is a plain
         * lower-case word (-pthread, -pedantic, -pipe) */
        if (word[0] == '-' && word[1] == 'p' && word[2] && !strchr(word, '=')) {
            int plain = 1;
            for (const char *q = word + 2; *q; q++)
                if (!islower((unsigned char)*q)) plain = 0;
            if (!plain) {
                gp_sbuf_puts(out, "-p" GP_REDACTED);
                continue;
            }
        }
        if (IN_LIST(word, auth_schemes, 1)) {
            /* "Bearer X": X is a credential; in another case ("a bearer
             * token is required") only a word of 8 characters or more is */
            gp_sbuf_puts(out, word);
            st->next = IN_LIST(word, auth_schemes, 0) ? 1 : 2;
            continue;
        }
        const char *eq = strchr(word, '=');
        if (word[0] == '-' && eq) { /* --user=name:password */
            char opt[32];
            size_t ol = (size_t)(eq - word);
            const char *pc = strchr(eq, ':');
            if (ol < sizeof opt && pc) {
                memcpy(opt, word, ol);
                opt[ol] = 0;
                if (IN_LIST(opt, userpass_options, 0)) {
                    gp_sbuf_add(out, word, (size_t)(pc - word) + 1);
                    gp_sbuf_puts(out, GP_REDACTED);
                    continue;
                }
            }
        }
        if (word[0] == '-' && eq && !eq[1]) { /* --token= VALUE */
            const char *nm = word;
            while (*nm == '-') nm++;
            if (nm < eq && gp_redact_secret_name(nm, (size_t)(eq - nm))) {
                gp_sbuf_puts(out, word);
                st->next = 1;
                continue;
            }
        }
        if (word[0] == '-' && !eq) {
            const char *nm = word;
            while (*nm == '-') nm++;
            if (IN_LIST(word, userpass_options, 0)) {
                gp_sbuf_puts(out, word);
                st->userpass = 1;
                continue;
            }
            if (IN_LIST(word, secret_short_options, 0) ||
                (strlen(nm) > 1 && gp_redact_secret_name(nm, strlen(nm)))) {
                gp_sbuf_puts(out, word);
                st->next = 1;
                continue;
            }
        }
        redact_word(out, word);
        /* a quoted key with a secret name before ':' (JSON, YAML flow):
         * its value is the next word */
        if (i < n && (s[i] == '"' || s[i] == '\'')) {
            size_t k = i + 1;
            while (k < n && (s[k] == ' ' || s[k] == '\t')) k++;
            if (k < n && s[k] == ':' && gp_redact_secret_name(word, strlen(word))) st->next = 1;
        }
    }
    gp_sbuf_free(&w);
}

char *gp_redact_text(const char *s)
{
    gp_sbuf b = {0};
    rstate st = {0, 0};
    redact_into(&b, s ? s : "", &st);
    char *out = gp_xstrdup(b.n ? gp_sbuf_cstr(&b) : "");
    gp_sbuf_free(&b);
    return out;
}

static void put_word(gp_sbuf *b, const char *w)
{
    if (b->n) gp_sbuf_putc(b, ' ');
    int quote = !*w || strpbrk(w, " \t\n\"'\\$<>|&;()*?`") != NULL;
    if (!quote) {
        gp_sbuf_puts(b, w);
        return;
    }
    gp_sbuf_putc(b, '\'');
    for (const char *p = w; *p; p++)
        if (*p == '\'')
            gp_sbuf_puts(b, "'\\''");
        else
            gp_sbuf_putc(b, *p);
    gp_sbuf_putc(b, '\'');
}

char *gp_redact_argv(char *const *argv, int argc)
{
    gp_sbuf b = {0}, w = {0};
    rstate st = {0, 0};
    for (int i = 0; i < argc; i++) {
        gp_sbuf_reset(&w);
        redact_into(&w, argv[i] ? argv[i] : "", &st);
        put_word(&b, w.n ? gp_sbuf_cstr(&w) : "");
    }
    gp_sbuf_free(&w);
    char *out = gp_xstrdup(b.n ? gp_sbuf_cstr(&b) : "");
    gp_sbuf_free(&b);
    return out;
}

char *gp_redact_env(const char *name, const char *value)
{
    if (name && gp_redact_secret_name(name, strlen(name))) return gp_xstrdup(GP_REDACTED);
    return gp_redact_text(value ? value : "");
}
