/* trace/torch_trace.c: streaming reader of torch.compile structured logs.
 *
 * A log is lines: "V1206 15:18:15.925000 1500233 path.py:1288] {envelope}"
 * and, after an envelope with "has_payload", payload lines that start with a
 * tab. The text is read in blocks; each complete line is handled in place
 * and dropped, so memory stays bounded by the longest line plus the payloads
 * a view asks for (small JSON payloads; output code is scanned line by line,
 * never kept). Envelopes are small JSON objects read with core/jdom. */
#include "trace/torch_trace.h"
#include "core/hash.h"
#include "core/jdom.h"
#include "core/sbuf.h"
#include "trace/input.h"
#include <math.h>
#include <stdio.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif
#include <stdlib.h>
#include <string.h>

#define BLOCK          (1u << 20)
#define LINE_MAX_BYTES ((size_t)256 << 20) /* one line longer than this: not a log */
#define PAYLOAD_MAX    ((size_t)64 << 20)  /* a JSON payload we keep, at most */
#define SNIFF_LINES    64                  /* lines without any envelope before "not a log" */
#define GLOG_PREFIX    512                 /* "] " must appear within this many bytes */

enum { PK_NONE, PK_SKIP, PK_CHROMIUM, PK_RECOMPILE, PK_CODE };

typedef struct open_phase {
    int64_t tid;
    size_t idx;
} open_phase;

typedef struct R {
    gp_tlog *l;
    gp_err *err;
    const char *name;
    gp_tt_opts o;
    GP_VEC(uint32_t) strs; /* interned "str" table: index -> string id */
    gp_u64map keys;        /* hash of a compile key -> latest record index */
    int pk;                /* payload kind of the current envelope */
    size_t prec;           /* its record (PK_RECOMPILE, PK_CODE) */
    uint64_t pline;        /* line of its envelope */
    uint64_t plines;       /* payload lines seen */
    int want_payload;      /* the envelope said has_payload */
    int env_ok;            /* the last non-payload line was a valid envelope */
    uint64_t last_bad;     /* line of the latest corrupt line */
    gp_sbuf pay;
    gp_sbuf env;  /* the skimmed envelope */
    int pay_over; /* payload over PAYLOAD_MAX */
    uint32_t aten_ops;
    int32_t aten_n;
    GP_VEC(open_phase) open;
} R;

const char *gp_tt_status_name(gp_tt_status s)
{
    switch (s) {
    case GP_TT_OK:
        return "ok";
    case GP_TT_FAILED:
        return "failed";
    case GP_TT_RESTARTED:
        return "restarted";
    default:
        return "incomplete";
    }
}

static uint32_t str_n(R *r, const char *s, size_t n)
{
    return gp_strtab_intern(r->l->strings, s, n);
}

static uint32_t str_z(R *r, const char *s)
{
    return s ? str_n(r, s, strlen(s)) : 0;
}

static int oom(R *r)
{
    return gp_err_set(r->err, GP_ENOMEM, "%s: out of memory", r->name);
}

static void bad(R *r, uint64_t line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void bad(R *r, uint64_t line, const char *fmt, ...)
{
    r->l->corrupt++;
    r->last_bad = line;
    if (r->l->bad.n >= GP_TT_MAX_BAD) return;
    gp_tt_bad b = {.line = line};
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b.what, sizeof b.what, fmt, ap);
    va_end(ap);
    (void)GP_VEC_PUSH(r->l->bad, b); /* detail is best effort; the count is kept */
}

/* ---- numbers from jdom values -------------------------------------------- */

static double num_or_nan(const gp_jv *o, const char *key)
{
    double d;
    return gp_jdom_num(gp_jdom_get(o, key), &d) ? d : NAN;
}

static double us_to_s(const gp_jv *o, const char *key)
{
    double d = num_or_nan(o, key);
    return isnan(d) ? d : d / 1e6;
}

static int64_t int_or_none(const gp_jv *o, const char *key)
{
    double d;
    if (!gp_jdom_num(gp_jdom_get(o, key), &d) || !(d >= -9e15 && d <= 9e15)) return GP_TT_NONE;
    return (int64_t)d;
}

static uint32_t str_of(R *r, const gp_jv *o, const char *key)
{
    const gp_jv *v = gp_jdom_get(o, key);
    return v && v->type == GP_JSTR ? str_z(r, v->str) : 0;
}

/* ---- compile records ----------------------------------------------------- */

typedef struct ckey {
    int64_t ca, f, c, a;
} ckey;

static uint64_t key_hash(const ckey *k)
{
    return gp_hash_bytes(k, sizeof *k);
}

static int key_eq(const gp_tt_compile *c, const ckey *k)
{
    return c->autograd_id == k->ca && c->frame_id == k->f && c->frame_compile_id == k->c &&
           c->attempt == k->a;
}

static void compile_init(gp_tt_compile *c, const ckey *k, uint64_t line)
{
    memset(c, 0, sizeof *c);
    c->frame_id = k->f;
    c->frame_compile_id = k->c;
    c->attempt = k->a;
    c->autograd_id = k->ca;
    c->first_line = line;
    c->co_firstlineno = c->fail_line = GP_TT_NONE;
    c->entire_s = c->dynamo_cum_s = c->aot_cum_s = c->inductor_cum_s = c->codegen_cum_s = NAN;
    c->backend_s = c->inductor_s = c->codegen_s = NAN;
    c->graph_op_count = c->graph_node_count = c->graph_input_count = c->guard_count = GP_TT_NONE;
    char *p = c->id;
    size_t cap = sizeof c->id;
    int w = 0;
    if (k->ca != GP_TT_NONE) w = snprintf(p, cap, "!%lld/", (long long)k->ca);
    if (w < 0 || (size_t)w >= cap) w = 0;
    int w2 = snprintf(p + w, cap - (size_t)w, "%lld/%lld", (long long)k->f, (long long)k->c);
    if (w2 > 0 && k->a > 0 && (size_t)(w + w2) < cap)
        snprintf(p + w + w2, cap - (size_t)(w + w2), "_%lld", (long long)k->a);
}

/* The record of key k: the latest one, or a new one when there is none or
 * when `opens` and the latest already has its metrics (a repeated id in a
 * concatenated log). Returns the index, or -1 on out of memory. */
static long record(R *r, const ckey *k, int opens, uint64_t line)
{
    gp_tlog *l = r->l;
    uint64_t h = key_hash(k), idx;
    long found = -1;
    if (gp_u64map_get(&r->keys, h, &idx) && key_eq(&l->compiles.v[idx], k))
        found = (long)idx;
    else if (gp_u64map_get(&r->keys, h, &idx)) /* hash collision: look from the end */
        for (size_t i = l->compiles.n; i-- > 0;)
            if (key_eq(&l->compiles.v[i], k)) {
                found = (long)i;
                break;
            }
    if (found >= 0 && !(opens && l->compiles.v[found].n_metrics > 0)) return found;
    gp_tt_compile c;
    compile_init(&c, k, line);
    if (GP_VEC_PUSH(l->compiles, c)) return -1;
    if (gp_u64map_put(&r->keys, h, l->compiles.n - 1)) return -1;
    return (long)(l->compiles.n - 1);
}

/* Appends string id `id` to the id vector vec; 0 or GP_ENOMEM (reported). */
#define PUSH_ID(r, vec, id) (GP_VEC_PUSH(vec, id) ? oom(r) : 0)

static int on_metrics(R *r, gp_tt_compile *c, const gp_jv *m)
{
    c->n_metrics++;
    r->l->metrics_records++;
    uint32_t s;
    if ((s = str_of(r, m, "co_name"))) c->co_name = s;
    if ((s = str_of(r, m, "co_filename"))) c->co_filename = s;
    int64_t v;
    if ((v = int_or_none(m, "co_firstlineno")) != GP_TT_NONE) c->co_firstlineno = v;
    c->fail_type = str_of(r, m, "fail_type");
    c->fail_reason = str_of(r, m, "fail_reason");
    c->fail_file = str_of(r, m, "fail_user_frame_filename");
    c->fail_line = int_or_none(m, "fail_user_frame_lineno");
    c->status = c->fail_type ? GP_TT_FAILED : GP_TT_OK;
    c->entire_s = num_or_nan(m, "entire_frame_compile_time_s");
    c->dynamo_cum_s = us_to_s(m, "dynamo_cumulative_compile_time_us");
    c->aot_cum_s = us_to_s(m, "aot_autograd_cumulative_compile_time_us");
    c->inductor_cum_s = us_to_s(m, "inductor_cumulative_compile_time_us");
    c->codegen_cum_s = us_to_s(m, "inductor_code_gen_cumulative_compile_time_us");
    c->backend_s = num_or_nan(m, "backend_compile_time_s");
    c->inductor_s = num_or_nan(m, "inductor_compile_time_s");
    c->codegen_s = num_or_nan(m, "code_gen_time_s");
    c->graph_op_count = int_or_none(m, "graph_op_count");
    c->graph_node_count = int_or_none(m, "graph_node_count");
    c->graph_input_count = int_or_none(m, "graph_input_count");
    c->guard_count = int_or_none(m, "guard_count");
    const gp_jv *rr = gp_jdom_get(m, "restart_reasons");
    if (rr && rr->type == GP_JARR)
        for (size_t i = 0; i < rr->n; i++)
            if (PUSH_ID(
                    r, c->restart_reasons,
                    str_z(r, rr->items[i].type == GP_JSTR ? rr->items[i].str : "(not a string)")))
                return GP_ENOMEM;
    return 0;
}

static int on_dynamo_start(R *r, gp_tt_compile *c, const gp_jv *d)
{
    const gp_jv *st = gp_jdom_get(d, "stack");
    if (!st || st->type != GP_JARR) return 0;
    c->stack.n = 0;
    for (size_t i = 0; i < st->n; i++) {
        const gp_jv *f = &st->items[i];
        gp_tt_frame fr = {0, 0, 0, GP_TT_NONE};
        int64_t fi = int_or_none(f, "filename");
        if (fi >= 0 && (size_t)fi < r->strs.n)
            fr.file = r->strs.v[fi];
        else if ((fr.file = str_of(r, f, "filename")) == 0 && fi != GP_TT_NONE) {
            char tmp[32];
            snprintf(tmp, sizeof tmp, "<str %lld>", (long long)fi);
            fr.file = str_z(r, tmp);
        }
        fr.name = str_of(r, f, "name");
        fr.loc = str_of(r, f, "loc");
        fr.line = int_or_none(f, "line");
        if (GP_VEC_PUSH(c->stack, fr)) return oom(r);
    }
    return 0;
}

static int on_str(R *r, const gp_jv *v)
{
    if (!v || v->type != GP_JARR || v->n != 2 || v->items[0].type != GP_JSTR) return 0;
    double d;
    if (!gp_jdom_num(&v->items[1], &d) || !(d >= 0 && d < 1e7)) return 0;
    size_t i = (size_t)d;
    if (GP_VEC_RESERVE(r->strs, i + 1 > r->strs.n ? i + 1 - r->strs.n : 0)) return oom(r);
    while (r->strs.n <= i) r->strs.v[r->strs.n++] = 0;
    r->strs.v[i] = str_z(r, v->items[0].str);
    return 0;
}

/* ---- payloads ------------------------------------------------------------ */

static int64_t us_to_ns(double us)
{
    if (!(us > -9e15 && us < 9e15)) return GP_TT_NONE;
    double w = floor(us);
    return (int64_t)w * 1000 + (int64_t)llround((us - w) * 1000.0);
}

static int on_chromium(R *r, const gp_jv *e)
{
    gp_tlog *l = r->l;
    const char *ph = gp_jdom_str(gp_jdom_get(e, "ph"), "");
    double ts;
    if (!gp_jdom_num(gp_jdom_get(e, "ts"), &ts)) return 0;
    int64_t ns = us_to_ns(ts);
    if (ns == GP_TT_NONE) return 0;
    int64_t tid = int_or_none(e, "tid");
    const gp_jv *args = gp_jdom_get(e, "args");
    const char *cid = gp_jdom_str(gp_jdom_get(args, "compile_id"), NULL);
    uint32_t cid_s = cid && strcmp(cid, "None") ? str_z(r, cid) : 0;
    uint32_t name = str_of(r, e, "name");
    if (!strcmp(ph, "B") || !strcmp(ph, "X")) {
        int depth = 0;
        for (size_t i = 0; i < r->open.n; i++) depth += r->open.v[i].tid == tid;
        gp_tt_phase p = {name, str_of(r, e, "cat"), cid_s, ns, GP_TT_NONE, tid, depth};
        if (ph[0] == 'X') {
            double dur;
            p.end_ns = gp_jdom_num(gp_jdom_get(e, "dur"), &dur) ? ns + us_to_ns(dur) : ns;
        }
        if (GP_VEC_PUSH(l->phases, p)) return oom(r);
        if (ph[0] == 'B') {
            open_phase op = {tid, l->phases.n - 1};
            if (GP_VEC_PUSH(r->open, op)) return oom(r);
        }
    } else if (!strcmp(ph, "E")) {
        /* the innermost open B of this thread with the same name */
        for (size_t i = r->open.n; i-- > 0;) {
            gp_tt_phase *p = &l->phases.v[r->open.v[i].idx];
            if (r->open.v[i].tid == tid && p->name == name) {
                p->end_ns = ns;
                memmove(&r->open.v[i], &r->open.v[i + 1], (r->open.n - i - 1) * sizeof *r->open.v);
                r->open.n--;
                return 0;
            }
        }
        l->unmatched_phase_ends++;
    }
    return 0;
}

/* Parses the collected JSON payload; a payload that is not JSON is counted
 * as corrupt with the line of its first bad byte. */
static int skim_chromium(const char *s, size_t n, gp_sbuf *b, size_t *off, const char **what);

static int finish_payload(R *r)
{
    int rc = 0;
    if (r->pk == PK_CHROMIUM || r->pk == PK_RECOMPILE) {
        gp_jv v;
        gp_err e;
        size_t off = 0;
        const char *what = NULL, *text = r->pay.s ? r->pay.s : "";
        int bad_json = 0;
        if (r->pay_over) {
            bad(r, r->pline, "JSON payload longer than %zu bytes, skipped", PAYLOAD_MAX);
        } else if (r->pk == PK_CHROMIUM && skim_chromium(text, r->pay.n, &r->env, &off, &what)) {
            bad_json = 1; /* big args are only validated, never decoded */
        } else if (r->pk == PK_CHROMIUM ? gp_jdom_parse(r->env.s, r->env.n, &v, &e)
                                        : gp_jdom_parse_at(text, r->pay.n, &v, &e, &off)) {
            if (e.code == GP_ENOMEM) return oom(r);
            what = strstr(e.msg, "expected ") ? strstr(e.msg, "expected ") + 9 : e.msg;
            bad_json = 1;
        } else {
            if (r->pk == PK_CHROMIUM)
                rc = on_chromium(r, &v);
            else if (v.type == GP_JARR) {
                gp_tt_compile *c = &r->l->compiles.v[r->prec];
                for (size_t i = 0; i < v.n && !rc; i++)
                    if (v.items[i].type == GP_JSTR)
                        rc = PUSH_ID(r, c->recompile_reasons, str_z(r, v.items[i].str));
            }
            gp_jdom_free(&v);
        }
        if (bad_json) {
            uint64_t line = r->pline + 1;
            for (size_t i = 0; i < off && i < r->pay.n; i++) line += r->pay.s[i] == '\n';
            if (!r->plines) line = r->pline;
            bad(r, line, "corrupt JSON payload of the envelope at line %llu: expected %s",
                (unsigned long long)r->pline, what);
        }
    }
    r->pk = PK_NONE;
    r->want_payload = 0;
    gp_sbuf_reset(&r->pay);
    r->pay_over = 0;
    r->aten_n = GP_TT_NONE;
    r->aten_ops = 0;
    return rc;
}

/* "... Original ATen: [aten.add, aten.cos, aten.sin]" */
static void code_comment(R *r, const char *s, size_t n)
{
    static const char tag[] = "Original ATen: [";
    const char *p = memmem(s, n, tag, sizeof tag - 1);
    if (!p) return;
    p += sizeof tag - 1;
    const char *end = memchr(p, ']', (size_t)(s + n - p));
    if (!end) return;
    int32_t k = 0;
    for (const char *q = p; q < end; q++)
        if (*q != ' ' && *q != ',' && (q == p || q[-1] == ',' || q[-1] == ' ')) k++;
    r->aten_n = k;
    r->aten_ops = str_n(r, p, (size_t)(end - p));
}

/* A kernel definition "NAME = async_compile.triton('NAME', ..." (or
 * .cpp_pybinding(, ...) at the top level of the output code. */
static int code_line(R *r, const char *s, size_t n)
{
    size_t i = 0;
    while (i < n && s[i] == ' ') i++;
    if (i < n && s[i] == '#') {
        code_comment(r, s + i, n - i);
        return 0;
    }
    if (i != 0 || n < 8) return 0;
    size_t id = 0;
    while (id < n && (s[id] == '_' || (s[id] >= 'a' && s[id] <= 'z') ||
                      (s[id] >= 'A' && s[id] <= 'Z') || (s[id] >= '0' && s[id] <= '9')))
        id++;
    static const char def[] = " = async_compile.";
    if (!id || n - id < sizeof def - 1 || memcmp(s + id, def, sizeof def - 1)) return 0;
    /* triton(, cpp_pybinding(, cuda(, halide(, ... */
    const char *rest = s + id + sizeof def - 1;
    size_t rn = n - id - (sizeof def - 1), m = 0;
    while (m < rn && (rest[m] == '_' || (rest[m] >= 'a' && rest[m] <= 'z'))) m++;
    if (!m || m >= rn || rest[m] != '(') return 0;
    gp_tt_kernel k = {str_n(r, s, id), r->aten_ops, r->aten_n};
    r->aten_ops = 0;
    r->aten_n = GP_TT_NONE;
    gp_tt_compile *c = &r->l->compiles.v[r->prec];
    return GP_VEC_PUSH(c->kernels, k) ? oom(r) : 0;
}

static int payload_line(R *r, const char *s, size_t n)
{
    r->plines++;
    if (r->pk == PK_CHROMIUM || r->pk == PK_RECOMPILE) {
        if (r->pay_over || r->pay.n + n + 1 > PAYLOAD_MAX) {
            r->pay_over = 1;
            return 0;
        }
        gp_sbuf_add(&r->pay, s, n);
        gp_sbuf_putc(&r->pay, '\n');
        return 0;
    }
    if (r->pk == PK_CODE) return code_line(r, s, n);
    return 0;
}

/* ---- skimming envelopes ---------------------------------------------------
 * An envelope is validated in one pass without decoding it; only the keys a
 * figure needs are copied into a small JSON text for core/jdom. The big
 * values (compilation_metrics' dynamo_config, describe_* bodies) are only
 * skipped. */

#define SK_MAX_DEPTH 512
#define SK_MAX_KV    160

typedef struct sk {
    const char *p, *e;
    const char *what; /* the first error: what was expected */
    const char *at;   /* where */
} sk;

typedef struct skv {
    const char *k, *v; /* key with its quotes; value */
    size_t kn, vn;
} skv;

static unsigned char sk_stop[256]; /* '"', '\\' and control characters */

static void sk_init_table(void)
{
    if (sk_stop['"']) return;
    for (int i = 0; i < 0x20; i++) sk_stop[i] = 1;
    sk_stop['\\'] = 1;
    sk_stop['"'] = 1; /* set last: marks the table ready */
}

static int sk_fail(sk *k, const char *what)
{
    if (!k->what) {
        k->what = what;
        k->at = k->p;
    }
    return -1;
}

static void sk_ws(sk *k)
{
    while (k->p < k->e && (*k->p == ' ' || *k->p == '\t' || *k->p == '\n' || *k->p == '\r')) k->p++;
}

static int is_hex(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static int sk_string(sk *k)
{
    const char *p = k->p + 1, *e = k->e;
    for (;;) {
#ifdef __SSE2__
        /* 16 bytes at a time to the next '"', '\\' or control character */
        const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\'),
                      ctl = _mm_set1_epi8(0x1f), zero = _mm_setzero_si128();
        while (e - p >= 16) {
            __m128i x = _mm_loadu_si128((const __m128i *)(const void *)p);
            __m128i hit =
                _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, quote), _mm_cmpeq_epi8(x, bslash)),
                             _mm_cmpeq_epi8(_mm_subs_epu8(x, ctl), zero));
            int m = _mm_movemask_epi8(hit);
            if (m) {
                p += __builtin_ctz((unsigned)m);
                break;
            }
            p += 16;
        }
#endif
        while (p < e && !sk_stop[(unsigned char)*p]) p++;
        k->p = p;
        if (p >= e) return sk_fail(k, "closing '\"'");
        if (*p == '"') {
            k->p = p + 1;
            return 0;
        }
        if (*p != '\\') return sk_fail(k, "no control character in a string");
        if (p + 1 >= e) return sk_fail(k, "an escape");
        char c = p[1];
        if (c == 'u') {
            if (e - p < 6 || !is_hex(p[2]) || !is_hex(p[3]) || !is_hex(p[4]) || !is_hex(p[5]))
                return sk_fail(k, "4 hex digits");
            p += 6;
        } else if (c == '"' || c == '\\' || c == '/' || c == 'b' || c == 'f' || c == 'n' ||
                   c == 'r' || c == 't') {
            p += 2;
        } else {
            return sk_fail(k, "an escape (\\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)");
        }
    }
}

static int sk_digits(sk *k)
{
    const char *s = k->p;
    while (k->p < k->e && *k->p >= '0' && *k->p <= '9') k->p++;
    return k->p > s ? 0 : sk_fail(k, "a digit");
}

static int sk_number(sk *k)
{
    if (k->p < k->e && *k->p == '-') k->p++;
    if (k->p < k->e && *k->p == '0')
        k->p++;
    else if (sk_digits(k))
        return -1;
    if (k->p < k->e && *k->p == '.') {
        k->p++;
        if (sk_digits(k)) return -1;
    }
    if (k->p < k->e && (*k->p == 'e' || *k->p == 'E')) {
        k->p++;
        if (k->p < k->e && (*k->p == '+' || *k->p == '-')) k->p++;
        if (sk_digits(k)) return -1;
    }
    return 0;
}

static int sk_lit(sk *k, const char *w, size_t n)
{
    if ((size_t)(k->e - k->p) < n || memcmp(k->p, w, n)) return sk_fail(k, w);
    k->p += n;
    return 0;
}

static int sk_value(sk *k, int depth, skv *kv, size_t max, size_t *nkv);

/* An object or array at k->p; for an object, records up to max key/value
 * pairs in kv (when kv is not NULL). */
static int sk_container(sk *k, int depth, skv *kv, size_t max, size_t *nkv)
{
    char close = *k->p == '{' ? '}' : ']';
    int obj = close == '}';
    if (depth >= SK_MAX_DEPTH) return sk_fail(k, "less nesting");
    k->p++;
    sk_ws(k);
    if (k->p < k->e && *k->p == close) {
        k->p++;
        return 0;
    }
    for (;;) {
        sk_ws(k);
        const char *key = k->p;
        size_t keyn = 0;
        if (obj) {
            if (k->p >= k->e || *k->p != '"') return sk_fail(k, "'\"'");
            if (sk_string(k)) return -1;
            keyn = (size_t)(k->p - key);
            sk_ws(k);
            if (k->p >= k->e || *k->p != ':') return sk_fail(k, "':'");
            k->p++;
            sk_ws(k);
        }
        const char *v = k->p;
        if (sk_value(k, depth + 1, NULL, 0, NULL)) return -1;
        if (obj && kv && *nkv < max) kv[(*nkv)++] = (skv){key, v, keyn, (size_t)(k->p - v)};
        sk_ws(k);
        if (k->p < k->e && *k->p == ',') {
            k->p++;
            continue;
        }
        if (k->p < k->e && *k->p == close) {
            k->p++;
            return 0;
        }
        return sk_fail(k, obj ? "',' or '}'" : "',' or ']'");
    }
}

static int sk_value(sk *k, int depth, skv *kv, size_t max, size_t *nkv)
{
    sk_ws(k);
    if (k->p >= k->e) return sk_fail(k, "a value");
    switch (*k->p) {
    case '{':
    case '[':
        return sk_container(k, depth, kv, max, nkv);
    case '"':
        return sk_string(k);
    case 't':
        return sk_lit(k, "true", 4);
    case 'f':
        return sk_lit(k, "false", 5);
    case 'n':
        return sk_lit(k, "null", 4);
    default:
        return sk_number(k);
    }
}

static int key_is(const skv *kv, const char *name)
{
    size_t n = strlen(name);
    return kv->kn == n + 2 && !memcmp(kv->k + 1, name, n);
}

/* compilation_metrics keys the records use */
static const char *const metric_keys[] = {"co_name",
                                          "co_filename",
                                          "co_firstlineno",
                                          "fail_type",
                                          "fail_reason",
                                          "fail_user_frame_filename",
                                          "fail_user_frame_lineno",
                                          "entire_frame_compile_time_s",
                                          "dynamo_cumulative_compile_time_us",
                                          "aot_autograd_cumulative_compile_time_us",
                                          "inductor_cumulative_compile_time_us",
                                          "inductor_code_gen_cumulative_compile_time_us",
                                          "backend_compile_time_s",
                                          "inductor_compile_time_s",
                                          "code_gen_time_s",
                                          "graph_op_count",
                                          "graph_node_count",
                                          "graph_input_count",
                                          "guard_count",
                                          "restart_reasons",
                                          NULL};

/* envelope types whose body is kept whole (small) */
static const char *const kept_types[] = {
    "str", "dynamo_start", "artifact", "chromium_event", "inductor_output_code", NULL};

static int is_meta_key(const char *k);

static void put_kv(gp_sbuf *b, const skv *kv, int *first)
{
    if (!*first) gp_sbuf_putc(b, ',');
    *first = 0;
    gp_sbuf_add(b, kv->k, kv->kn);
    gp_sbuf_putc(b, ':');
    gp_sbuf_add(b, kv->v, kv->vn);
}

/* Validates the envelope text s[0..n) and writes into b the JSON object
 * the handlers read: the meta keys, the type key, and the type's body (or
 * its needed keys, or {}). Returns 0, or -1 with *col and *what set. */
static int skim_envelope(const char *s, size_t n, gp_sbuf *b, size_t *col, const char **what)
{
    skv kv[SK_MAX_KV];
    size_t nkv = 0;
    sk k = {s, s + n, NULL, NULL};
    sk_init_table();
    sk_ws(&k);
    if (k.p >= k.e || *k.p != '{') {
        sk_fail(&k, "'{'");
    } else if (!sk_value(&k, 0, kv, SK_MAX_KV, &nkv)) {
        sk_ws(&k);
        if (k.p < k.e) sk_fail(&k, "end of input");
    }
    if (k.what) {
        *col = (size_t)(k.at - s);
        *what = k.what;
        return -1;
    }
    gp_sbuf_reset(b);
    gp_sbuf_putc(b, '{');
    int first = 1, typed = 0;
    char key[64];
    for (size_t i = 0; i < nkv; i++) {
        size_t kn = kv[i].kn - 2 < sizeof key - 1 ? kv[i].kn - 2 : sizeof key - 1;
        memcpy(key, kv[i].k + 1, kn);
        key[kn] = 0;
        if (is_meta_key(key) || typed) {
            put_kv(b, &kv[i], &first);
            continue;
        }
        typed = 1; /* the first other key is the type */
        int keep = 0;
        for (int t = 0; kept_types[t]; t++) keep |= !strcmp(key, kept_types[t]);
        if (keep) {
            put_kv(b, &kv[i], &first);
            continue;
        }
        skv body = {kv[i].k, "{}", kv[i].kn, 2};
        if (strcmp(key, "compilation_metrics") || *kv[i].v != '{') {
            put_kv(b, &body, &first);
            continue;
        }
        /* compilation_metrics: only the keys the records use */
        skv m[SK_MAX_KV];
        size_t nm = 0;
        sk mk = {kv[i].v, kv[i].v + kv[i].vn, NULL, NULL};
        (void)sk_value(&mk, 1, m, SK_MAX_KV, &nm); /* validated above */
        if (!first) gp_sbuf_putc(b, ',');
        first = 0;
        gp_sbuf_add(b, kv[i].k, kv[i].kn);
        gp_sbuf_puts(b, ":{");
        int mfirst = 1;
        for (size_t j = 0; j < nm; j++)
            for (int t = 0; metric_keys[t]; t++)
                if (key_is(&m[j], metric_keys[t])) {
                    put_kv(b, &m[j], &mfirst);
                    break;
                }
        gp_sbuf_putc(b, '}');
    }
    gp_sbuf_putc(b, '}');
    return 0;
}

/* Validates a chromium_event payload s[0..n) and writes into b the keys a
 * phase needs (name, cat, ph, ts, dur, tid, args.compile_id). Returns 0, or
 * -1 with *off (byte offset) and *what set. */
static int skim_chromium(const char *s, size_t n, gp_sbuf *b, size_t *off, const char **what)
{
    static const char *const keys[] = {"name", "cat", "ph", "ts", "dur", "tid", NULL};
    skv kv[SK_MAX_KV];
    size_t nkv = 0;
    sk k = {s, s + n, NULL, NULL};
    sk_init_table();
    sk_ws(&k);
    if (k.p >= k.e || *k.p != '{') {
        sk_fail(&k, "'{'");
    } else if (!sk_value(&k, 0, kv, SK_MAX_KV, &nkv)) {
        sk_ws(&k);
        if (k.p < k.e) sk_fail(&k, "end of input");
    }
    if (k.what) {
        *off = (size_t)(k.at - s);
        *what = k.what;
        return -1;
    }
    gp_sbuf_reset(b);
    gp_sbuf_putc(b, '{');
    int first = 1;
    for (size_t i = 0; i < nkv; i++) {
        for (int t = 0; keys[t]; t++)
            if (key_is(&kv[i], keys[t])) put_kv(b, &kv[i], &first);
        if (!key_is(&kv[i], "args") || *kv[i].v != '{') continue;
        skv a[SK_MAX_KV];
        size_t na = 0;
        sk ak = {kv[i].v, kv[i].v + kv[i].vn, NULL, NULL};
        (void)sk_value(&ak, 1, a, SK_MAX_KV, &na); /* validated above */
        for (size_t j = 0; j < na; j++)
            if (key_is(&a[j], "compile_id")) {
                if (!first) gp_sbuf_putc(b, ',');
                first = 0;
                gp_sbuf_puts(b, "\"args\":{");
                int af = 1;
                put_kv(b, &a[j], &af);
                gp_sbuf_putc(b, '}');
                break;
            }
    }
    gp_sbuf_putc(b, '}');
    return 0;
}

/* ---- envelopes ----------------------------------------------------------- */

static int is_meta_key(const char *k)
{
    return !strcmp(k, "frame_id") || !strcmp(k, "frame_compile_id") || !strcmp(k, "attempt") ||
           !strcmp(k, "compiled_autograd_id") || !strcmp(k, "has_payload") || !strcmp(k, "rank") ||
           !strcmp(k, "payload_filename");
}

static int on_envelope(R *r, const gp_jv *env, uint64_t line)
{
    gp_tlog *l = r->l;
    l->envelopes++;
    const char *type = NULL;
    const gp_jv *body = NULL;
    for (size_t i = 0; i < env->n; i++)
        if (!is_meta_key(env->keys[i])) {
            type = env->keys[i];
            body = &env->items[i];
            break;
        }
    int64_t rank = int_or_none(env, "rank");
    if (rank != GP_TT_NONE && rank >= 0 && rank < INT32_MAX && l->rank == GP_TT_NONE)
        l->rank = (int32_t)rank;
    r->want_payload = gp_jdom_get(env, "has_payload") != NULL;
    r->env_ok = 1;
    r->pline = line;
    r->plines = 0;
    r->pk = r->want_payload ? PK_SKIP : PK_NONE;
    if (!type) return 0;
    if (!strcmp(type, "str")) return on_str(r, body);
    if (!strcmp(type, "chromium_event")) {
        if (r->want_payload) r->pk = PK_CHROMIUM;
        return 0;
    }
    ckey k = {int_or_none(env, "compiled_autograd_id"), int_or_none(env, "frame_id"),
              int_or_none(env, "frame_compile_id"), int_or_none(env, "attempt")};
    if (k.f == GP_TT_NONE || k.c == GP_TT_NONE) return 0;
    if (k.a == GP_TT_NONE) k.a = 0;
    int is_metrics = !strcmp(type, "compilation_metrics");
    int opens = is_metrics || !strcmp(type, "dynamo_start");
    long ci = record(r, &k, opens, line);
    if (ci < 0) return oom(r);
    gp_tt_compile *c = &l->compiles.v[ci];
    if (is_metrics) return on_metrics(r, c, body);
    if (!strcmp(type, "dynamo_start")) return on_dynamo_start(r, c, body);
    if (!strcmp(type, "artifact")) {
        const char *an = gp_jdom_str(gp_jdom_get(body, "name"), "");
        if (!strcmp(an, "fx_graph_cache_hit"))
            c->fx_hit++;
        else if (!strcmp(an, "fx_graph_cache_miss"))
            c->fx_miss++;
        else if (!strcmp(an, "fx_graph_cache_bypass"))
            c->fx_bypass++;
        else if (!strcmp(an, "aotautograd_cache_hit"))
            c->aot_hit++;
        else if (!strcmp(an, "aotautograd_cache_miss"))
            c->aot_miss++;
        else if (!strcmp(an, "aotautograd_cache_bypass"))
            c->aot_bypass++;
        else if (!strcmp(an, "recompile_reasons") && r->want_payload) {
            r->pk = PK_RECOMPILE;
            r->prec = (size_t)ci;
        }
        return 0;
    }
    if (!strcmp(type, "inductor_output_code") && r->want_payload && r->o.payloads) {
        r->pk = PK_CODE;
        r->prec = (size_t)ci;
        r->aten_n = GP_TT_NONE;
        r->aten_ops = 0;
    }
    return 0;
}

/* "V1206 15:18:15.925000 1500233 file.py:1288] {": the offset of the "{",
 * or 0 when the line has no glog prefix. */
static size_t glog_prefix(const char *s, size_t n)
{
    if (n < 8 || !strchr("VIWEFD", s[0]) || s[0] == 0) return 0;
    for (int i = 1; i <= 4; i++)
        if (s[i] < '0' || s[i] > '9') return 0;
    size_t lim = n < GLOG_PREFIX ? n : GLOG_PREFIX;
    for (size_t i = 5; i + 2 < lim; i++)
        if (s[i] == ']' && s[i + 1] == ' ') return s[i + 2] == '{' ? i + 2 : 0;
    return 0;
}

static int on_line(R *r, const char *s, size_t n, uint64_t line)
{
    if (n && s[n - 1] == '\r') n--;
    if (n && s[0] == '\t') {
        if (r->pk == PK_NONE && !r->want_payload) {
            if (r->l->envelopes) bad(r, line, "payload line without an envelope with has_payload");
            r->pk = PK_SKIP; /* count the orphan block once */
            return 0;
        }
        return payload_line(r, s + 1, n - 1);
    }
    int rc = finish_payload(r);
    if (rc) return rc;
    r->env_ok = 0;
    if (!n) return 0;
    size_t at = glog_prefix(s, n);
    if (!at) {
        bad(r, line, "not a glog-prefixed envelope line");
        return 0;
    }
    gp_jv env;
    gp_err e;
    size_t col;
    const char *what;
    if (skim_envelope(s + at, n - at, &r->env, &col, &what)) {
        bad(r, line, "corrupt JSON envelope: column %zu: expected %s", at + col + 1, what);
        r->pk = PK_SKIP; /* its payload goes with it */
        r->want_payload = 1;
        r->plines = 0;
        return 0;
    }
    if (gp_jdom_parse(r->env.s, r->env.n, &env, &e)) {
        if (e.code == GP_ENOMEM) return oom(r);
        bad(r, line, "envelope not read: %s", e.msg); /* valid JSON that jdom refuses (depth) */
        r->pk = PK_SKIP;
        r->want_payload = 1;
        r->plines = 0;
        return 0;
    }
    if (env.type != GP_JOBJ) {
        bad(r, line, "envelope is not a JSON object");
        gp_jdom_free(&env);
        return 0;
    }
    rc = on_envelope(r, &env, line);
    gp_jdom_free(&env);
    return rc;
}

/* ---- the driver ---------------------------------------------------------- */

static int rank_from_name(const char *path)
{
    const char *hit = NULL;
    for (const char *p = strstr(path, "rank_"); p; p = strstr(p + 1, "rank_")) hit = p;
    if (!hit) return GP_TT_NONE;
    hit += 5;
    if (*hit < '0' || *hit > '9') return GP_TT_NONE;
    long v = 0;
    while (*hit >= '0' && *hit <= '9' && v < 100000000) v = v * 10 + (*hit++ - '0');
    return (int)v;
}

static void resolve_status(gp_tlog *l)
{
    /* an attempt without metrics followed by a later attempt was restarted */
    for (size_t i = 0; i < l->compiles.n; i++) {
        gp_tt_compile *c = &l->compiles.v[i];
        if (c->n_metrics) continue;
        for (size_t j = i + 1; j < l->compiles.n; j++) {
            const gp_tt_compile *d = &l->compiles.v[j];
            if (d->frame_id == c->frame_id && d->frame_compile_id == c->frame_compile_id &&
                d->autograd_id == c->autograd_id && d->attempt > c->attempt) {
                c->status = GP_TT_RESTARTED;
                break;
            }
        }
    }
    /* a later attempt inherits the user stack of the attempt that started it */
    for (size_t i = 0; i < l->compiles.n; i++) {
        gp_tt_compile *c = &l->compiles.v[i];
        if (c->stack.n || c->attempt <= 0) continue;
        for (size_t j = i; j-- > 0;) {
            gp_tt_compile *d = &l->compiles.v[j];
            if (d->frame_id == c->frame_id && d->frame_compile_id == c->frame_compile_id &&
                d->autograd_id == c->autograd_id && d->stack.n) {
                if (!GP_VEC_RESERVE(c->stack, d->stack.n)) {
                    memcpy(c->stack.v, d->stack.v, d->stack.n * sizeof *d->stack.v);
                    c->stack.n = d->stack.n;
                }
                break;
            }
        }
    }
}

static int read_input(R *r, gp_input *in)
{
    gp_tlog *l = r->l;
    size_t cap = BLOCK * 2, len = 0;
    uint64_t total = gp_input_size(in); /* small inputs get a small buffer */
    if (total && !gp_input_is_gzip(in) && total + 4096 < cap) cap = (size_t)total + 4096;
    char *buf = malloc(cap + 1);
    if (!buf) return oom(r);
    uint64_t line = 0;
    int rc = 0, first = 1;
    for (;;) {
        if (cap - len < cap / 4) { /* a line longer than 3/4 of the buffer */
            if (cap >= LINE_MAX_BYTES) {
                rc = gp_err_set(r->err, GP_EPARSE,
                                "%s:%llu: not a TORCH_TRACE log (a line longer than %zu MiB)",
                                r->name, (unsigned long long)line + 1, LINE_MAX_BYTES >> 20);
                goto out;
            }
            char *nb = realloc(buf, cap * 2 + 1);
            if (!nb) {
                rc = oom(r);
                goto out;
            }
            buf = nb;
            cap *= 2;
        }
        long got = gp_input_read(in, buf + len, cap - len, r->err);
        if (got < 0) {
            rc = (int)got;
            goto out;
        }
        if (first && got >= 3 && !memcmp(buf, "\xef\xbb\xbf", 3)) {
            /* a UTF-8 byte order mark is skipped, as in every other input */
            memmove(buf, buf + 3, (size_t)got - 3);
            got -= 3;
            l->bytes += 3;
        }
        if (first && got > 0) {
            size_t look = (size_t)got < 65536 ? (size_t)got : 65536;
            const char *z = memchr(buf, 0, look);
            if (z) {
                rc = gp_err_set(r->err, GP_EPARSE,
                                "%s: not a TORCH_TRACE log (binary data at byte %zu)", r->name,
                                (size_t)(z - buf));
                goto out;
            }
            first = 0;
        }
        l->bytes += (uint64_t)got;
        len += (size_t)got;
        size_t pos = 0;
        for (;;) {
            char *nl = memchr(buf + pos, '\n', len - pos);
            if (!nl) break;
            size_t n = (size_t)(nl - (buf + pos));
            line++;
            if ((rc = on_line(r, buf + pos, n, line))) goto out;
            pos += n + 1;
            if (!l->envelopes && line >= SNIFF_LINES) {
                rc = gp_err_set(r->err, GP_EPARSE,
                                "%s: not a TORCH_TRACE log (no glog-prefixed JSON envelope in "
                                "its first %d lines)",
                                r->name, SNIFF_LINES);
                goto out;
            }
        }
        memmove(buf, buf + pos, len - pos);
        len -= pos;
        if (got == 0) break;
    }
    /* the last line may lack its newline (PyTorch ends logs that way); a
     * log cut short shows as a last envelope or JSON payload that does not
     * parse, or an envelope whose payload never came */
    uint64_t bad_before = l->corrupt;
    if (len) {
        line++;
        if ((rc = on_line(r, buf, len, line))) goto out;
    }
    if (r->env_ok && r->want_payload && !r->plines) {
        rc = gp_err_set(r->err, GP_EPARSE,
                        "%s:%llu: truncated log: the last envelope's payload is missing", r->name,
                        (unsigned long long)r->pline);
        goto out;
    }
    if ((rc = finish_payload(r))) goto out;
    if (l->corrupt > bad_before && l->envelopes) {
        rc = gp_err_set(r->err, GP_EPARSE,
                        "%s:%llu: truncated log: the last envelope or payload is incomplete",
                        r->name, (unsigned long long)r->last_bad);
        goto out;
    }
    l->lines = line;
    if (!l->envelopes) {
        rc = gp_err_set(r->err, GP_EPARSE,
                        "%s: not a TORCH_TRACE log (no glog-prefixed JSON envelope line)", r->name);
        goto out;
    }
    resolve_status(l);
out:
    free(buf);
    return rc;
}

static int read_any(gp_input *in, const char *name, const gp_tt_opts *o, gp_tlog **out, gp_err *err)
{
    *out = NULL;
    gp_tlog *l = calloc(1, sizeof *l);
    R r;
    memset(&r, 0, sizeof r);
    if (!l || !(l->strings = gp_strtab_create())) {
        free(l);
        return gp_err_set(err, GP_ENOMEM, "%s: out of memory", name);
    }
    r.l = l;
    r.err = err;
    r.name = name;
    if (o) r.o = *o;
    r.aten_n = GP_TT_NONE;
    l->rank = GP_TT_NONE;
    l->file = gp_strtab_intern(l->strings, name, strlen(name));
    int rc = read_input(&r, in);
    if (!rc && l->rank == GP_TT_NONE) l->rank = rank_from_name(name);
    GP_VEC_FREE(r.strs);
    GP_VEC_FREE(r.open);
    gp_u64map_free(&r.keys);
    gp_sbuf_free(&r.pay);
    gp_sbuf_free(&r.env);
    if (rc) {
        gp_tlog_destroy(l);
        return rc;
    }
    *out = l;
    return 0;
}

int gp_tlog_read_file(const char *path, const gp_tt_opts *o, gp_tlog **out, gp_err *err)
{
    gp_input *in;
    *out = NULL;
    int rc = gp_input_open_file(path, &in, err);
    if (rc) return rc;
    rc = read_any(in, path, o, out, err);
    gp_input_close(in);
    return rc;
}

int gp_tlog_read_mem(const void *data, size_t n, const char *name, const gp_tt_opts *o,
                     gp_tlog **out, gp_err *err)
{
    gp_input *in;
    *out = NULL;
    int rc = gp_input_open_mem(data, n, name, &in, err);
    if (rc) return rc;
    rc = read_any(in, name, o, out, err);
    gp_input_close(in);
    return rc;
}

void gp_tlog_destroy(gp_tlog *l)
{
    if (!l) return;
    for (size_t i = 0; i < l->compiles.n; i++) {
        gp_tt_compile *c = &l->compiles.v[i];
        GP_VEC_FREE(c->stack);
        GP_VEC_FREE(c->restart_reasons);
        GP_VEC_FREE(c->recompile_reasons);
        GP_VEC_FREE(c->kernels);
    }
    GP_VEC_FREE(l->compiles);
    GP_VEC_FREE(l->phases);
    GP_VEC_FREE(l->bad);
    gp_strtab_destroy(l->strings);
    free(l);
}
