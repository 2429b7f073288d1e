/* core/redact.h: the one redaction table of gpuprof (issue 16), applied
 * wherever a command line, an environment value, a path or a free-text
 * argument is written: the store (runs.command, run_env), exports, reports,
 * the server and the audit log. docs/security.md lists what it catches:
 *
 *  - option values: `-p X`, `--password X`, `--token=X`, `-api-key X` (any
 *    option whose name contains a secret word, see gp_redact_secret_name),
 *    `-u user:X` / `--user user:X` (curl style);
 *  - NAME=VALUE words and URL query parameters whose name contains a secret
 *    word (`PASSWORD=X`, `?access_token=X&sig=Y`);
 *  - header values: `Authorization: Bearer X`, `Cookie: ...`, `X-Api-Key:
 *    X` and any header whose name contains a secret word, up to the end of
 *    the argument, line or quoted string;
 *  - `Bearer X`, `Basic X`, `Token X` anywhere;
 *  - URL credentials: `scheme://user:X@host`;
 *  - known token shapes anywhere in a word: GitHub (ghp_ gho_ ghu_ ghs_ ghr_
 *    github_pat_), GitLab (glpat-), Slack (xoxa- xoxb- xoxp- xoxr- xoxs-
 *    and hooks.slack.com URLs), AWS key ids (AKIA/ASIA + 16), OpenAI/Stripe
 *    style (sk- sk_live_ rk_live_ pk_live_), Hugging Face (hf_), npm
 *    (npm_), PyPI (pypi-), Google (AIza, ya29.), DigitalOcean (dop_v1_),
 *    SendGrid (SG.), Shopify (shpat_), JWTs (eyJ...eyJ...), PEM private key
 *    blocks, and long letter+digit runs (>= 24 characters, >= 4 letters and
 *    >= 4 digits);
 *  - the same inside shell scripts (`sh -c '...'`): every word of the
 *    script is checked, not only the first secret.
 *
 * Every secret becomes GP_REDACTED; the rest of the text is kept. */
#ifndef GP_CORE_REDACT_H
#define GP_CORE_REDACT_H
#include <stddef.h>

#define GP_REDACTED "<redacted>"

/* 1 when the name s[0..n) (an option, variable, header or parameter name)
 * contains a secret word: pass, pwd, token, secret, key, auth, credential,
 * cookie, session, signature, private, sig= style... (case-insensitive). */
int gp_redact_secret_name(const char *s, size_t n);

/* Free text (a shell script, a header, a log line) with every secret
 * replaced. Returns a malloc'ed string the caller frees (never NULL). */
char *gp_redact_text(const char *s);

/* argv joined into one shell-quoted command line with every secret
 * replaced; an option naming a secret redacts the next argument. Returns a
 * malloc'ed string the caller frees. */
char *gp_redact_argv(char *const *argv, int argc);

/* An environment value: GP_REDACTED when the variable's name contains a
 * secret word, else the value with gp_redact_text. malloc'ed. */
char *gp_redact_env(const char *name, const char *value);

#endif
