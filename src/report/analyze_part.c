/* report/analyze_part.c: writer and reader of the part files of
 * `gpuprof analyze --shard I/N` (see analyze_part.h, docs/analyze.md). Every
 * field of the per-rank results is written, exactly: integers as JSON
 * numbers (as strings beyond 2^53), doubles with the fewest of 15-17 significant digits that
 * read back exactly
 * (non-finite ones as the strings "nan", "inf", "-inf"), strings as JSON
 * strings ({"hex": ...} when not valid UTF-8). One table of fields serves
 * the writer and the reader. */
#include "report/analyze_part.h"
#include "trace/input.h"
#include "core/jdom.h"
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---- the fields ---------------------------------------------------------------------------- */

typedef struct fld {
    const char *key;
    size_t off;
    char ty; /* i int, l int64, u uint64, b uint8, d double */
} fld;

#define F(T, m, ty)                                                                                \
    {                                                                                              \
#m, offsetof(T, m), ty                                                                     \
    }
#define R(m, ty) F(gp_analyze_rank, m, ty)
#define STATS(p)                                                                                   \
    R(p.count, 'u'), R(p.sum, 'l'), R(p.min, 'l'), R(p.max, 'l'), R(p.sum_overflow, 'i'),          \
        R(p.mean, 'd'), R(p.std, 'd'), R(p.p50, 'd'), R(p.p95, 'd'), R(p.p99, 'd')
#define LAUNCH(s)                                                                                  \
    R(ls[s].launches, 'u'), R(ls[s].short_kernels, 'u'), R(ls[s].runtime_outliers, 'u'),           \
        R(ls[s].launch_delay_outliers, 'u'), STATS(ls[s].cpu_ns), STATS(ls[s].gpu_ns),             \
        STATS(ls[s].delay_ns)

static const fld rank_f[] = {R(step_filtered, 'i'),
                             R(tb.valid, 'i'),
                             R(tb.span_ns, 'l'),
                             R(tb.idle_ns, 'l'),
                             R(tb.compute_ns, 'l'),
                             R(tb.non_compute_ns, 'l'),
                             R(ov_pct, 'd'),
                             R(ov_valid, 'i'),
                             LAUNCH(0),
                             LAUNCH(1),
                             R(tl.span_ns, 'l'),
                             R(tl.cpu_active_ns, 'l'),
                             R(tl.gpu_active_ns, 'l'),
                             R(tl.overlap_ns, 'l'),
                             R(tl.cpu_only_ns, 'l'),
                             R(tl.gpu_only_ns, 'l'),
                             R(tl.idle_ns, 'l'),
                             R(tl.cpu_slices, 'u'),
                             R(tl.gpu_slices, 'u'),
                             R(tl.gpu_valid, 'i')};
static const fld top_f[] = {F(gp_topk, type, 'b'), F(gp_topk, count, 'u'), F(gp_topk, sum, 'l'),
                            F(gp_topk, min, 'l'),  F(gp_topk, max, 'l'),   F(gp_topk, mean, 'd'),
                            F(gp_topk, std, 'd')};
static const fld idle_f[] = {F(gp_idle_row, stream, 'l'), F(gp_idle_row, host_wait_ns, 'l'),
                             F(gp_idle_row, kernel_wait_ns, 'l'), F(gp_idle_row, other_ns, 'l'),
                             F(gp_idle_row, gaps, 'u')};
static const fld queue_f[] = {F(gp_queue_row, stream, 'l'), F(gp_queue_row, max, 'l'),
                              F(gp_queue_row, mean, 'd'), F(gp_queue_row, full_pct, 'd'),
                              F(gp_queue_row, launches, 'u')};
#define B(m, ty) F(gp_bw_row, m, ty)
static const fld bw_f[] = {B(kind, 'b'),
                           B(count, 'u'),
                           B(sized, 'u'),
                           B(bytes, 'l'),
                           B(time_ns, 'l'),
                           B(sized_time_ns, 'l'),
                           B(gbps_valid, 'i'),
                           B(gbps, 'd'),
                           B(per_copy_gbps.count, 'u'),
                           B(per_copy_gbps.sum, 'd'),
                           B(per_copy_gbps.min, 'd'),
                           B(per_copy_gbps.max, 'd'),
                           B(per_copy_gbps.mean, 'd'),
                           B(per_copy_gbps.std, 'd'),
                           B(per_copy_gbps.p50, 'd'),
                           B(per_copy_gbps.p95, 'd'),
                           B(per_copy_gbps.p99, 'd')};
#define S(m, ty) F(gp_step_row, m, ty)
static const fld step_f[] = {S(step, 'l'),        S(ts, 'l'),          S(span_ns, 'l'),
                             S(gpu_events, 'u'),  S(kernels, 'u'),     S(gpu_valid, 'i'),
                             S(gpu_span_ns, 'l'), S(gpu_busy_ns, 'l'), S(gpu_idle_ns, 'l'),
                             S(compute_ns, 'l')};
#define NF(a) (sizeof(a) / sizeof(a)[0])

/* the tables of a rank: key, field list, row size, offsets of the array and its count */
typedef struct tbl {
    const char *key;
    const fld *f;
    size_t nf, size, arr, cnt;
} tbl;
#define T(key, f, type, arr, cnt)                                                                  \
    {                                                                                              \
        key, f, NF(f), sizeof(type), offsetof(gp_analyze_rank, arr),                               \
            offsetof(gp_analyze_rank, cnt)                                                         \
    }
static const tbl tables[] = {
    T("top", top_f, gp_topk, top, ntop), T("idle", idle_f, gp_idle_row, idle, nidle),
    T("queue", queue_f, gp_queue_row, queue, nqueue), T("bw", bw_f, gp_bw_row, bw, nbw),
    T("steps", step_f, gp_step_row, steps, nsteps)};

/* ---- writer -------------------------------------------------------------------------------- */

#define EXACT (9007199254740992.0) /* 2^53 */

static void w_i64(gp_sbuf *b, int64_t v)
{
    if (v > -9007199254740992LL && v < 9007199254740992LL)
        gp_sbuf_printf(b, "%lld", (long long)v);
    else
        gp_sbuf_printf(b, "\"%lld\"", (long long)v);
}

static void w_u64(gp_sbuf *b, uint64_t v)
{
    if (v < 9007199254740992ULL)
        gp_sbuf_printf(b, "%llu", (unsigned long long)v);
    else
        gp_sbuf_printf(b, "\"%llu\"", (unsigned long long)v);
}

static void w_dbl(gp_sbuf *b, double v)
{
    if (isnan(v))
        gp_sbuf_puts(b, "\"nan\"");
    else if (isinf(v))
        gp_sbuf_puts(b, v > 0 ? "\"inf\"" : "\"-inf\"");
    else { /* the shortest of 15-17 significant digits that reads back exactly */
        char t[40];
        for (int d = 15; d <= 17; d++) {
            snprintf(t, sizeof t, "%.*g", d, v);
            if (strtod(t, NULL) == v) break;
        }
        gp_sbuf_puts(b, t);
    }
}

static size_t count_fffd(const char *s, size_t n)
{
    size_t c = 0;
    for (const char *p = s; (p = memmem(p, n - (size_t)(p - s), "\xef\xbf\xbd", 3)); p += 3) c++;
    return c;
}

/* a string exactly: JSON text when gp_json_str keeps every byte, else hex */
static void w_str(gp_sbuf *b, const char *s)
{
    if (!s) {
        gp_sbuf_puts(b, "null");
        return;
    }
    size_t at = b->n;
    gp_json_str(b, s);
    if (count_fffd(b->s + at, b->n - at) == count_fffd(s, strlen(s))) return;
    b->n = at;
    gp_sbuf_puts(b, "{\"hex\":\"");
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) gp_sbuf_printf(b, "%02x", *p);
    gp_sbuf_puts(b, "\"}");
}

static void w_fields(gp_sbuf *b, const void *base, const fld *f, size_t nf, int comma)
{
    for (size_t k = 0; k < nf; k++) {
        const char *p = (const char *)base + f[k].off;
        gp_json_key(b, f[k].key, comma || k);
        switch (f[k].ty) {
        case 'i':
            w_i64(b, *(const int *)p);
            break;
        case 'l':
            w_i64(b, *(const int64_t *)p);
            break;
        case 'u':
            w_u64(b, *(const uint64_t *)p);
            break;
        case 'b':
            w_i64(b, *(const uint8_t *)p);
            break;
        default:
            w_dbl(b, *(const double *)p);
            break;
        }
    }
}

static void w_rank(gp_sbuf *b, const gp_analyze_rank *x)
{
    gp_sbuf_putc(b, '{');
    gp_json_key(b, "source", 0);
    w_str(b, x->source);
    w_fields(b, x, rank_f, NF(rank_f), 1);
    for (int w = 0; w < 2; w++) {
        gp_json_key(b, w ? "kt.seen" : "kt.ns", 1);
        gp_sbuf_putc(b, '[');
        for (unsigned s = 0; s < GP_KSTATES; s++) {
            if (s) gp_sbuf_putc(b, ',');
            w_i64(b, w ? x->kt.seen[s] : x->kt.ns[s]);
        }
        gp_sbuf_putc(b, ']');
    }
    for (size_t t = 0; t < NF(tables); t++) {
        const tbl *tb = &tables[t];
        const char *arr = *(char *const *)((const char *)x + tb->arr);
        size_t cnt = *(const size_t *)((const char *)x + tb->cnt);
        gp_json_key(b, tb->key, 1);
        gp_sbuf_putc(b, '[');
        for (size_t r = 0; r < cnt; r++) {
            gp_sbuf_puts(b, r ? ",{" : "{");
            w_fields(b, arr + r * tb->size, tb->f, tb->nf, 0);
            if (tb->f == top_f) {
                gp_json_key(b, "name", 1);
                w_str(b, x->top_name[r]);
            }
            gp_sbuf_putc(b, '}');
        }
        gp_sbuf_putc(b, ']');
    }
    gp_sbuf_putc(b, '}');
}

void gp_analyze_shard_range(size_t n, size_t shard, size_t nshards, size_t *first, size_t *end)
{
    *first = nshards ? n * shard / nshards : 0;
    *end = nshards ? n * (shard + 1) / nshards : n;
}

void gp_analyze_part_inputs(gp_analyze_part *p)
{
    p->bytes = gp_xcalloc(p->ninputs + 1, sizeof *p->bytes);
    p->real = gp_xcalloc(p->ninputs + 1, sizeof *p->real);
    for (size_t i = 0; i < p->ninputs; i++) {
        struct stat st;
        int reg = stat(p->inputs[i], &st) == 0 && S_ISREG(st.st_mode);
        p->bytes[i] = reg ? (int64_t)st.st_size : -1;
        p->real[i] = reg ? realpath(p->inputs[i], NULL) : NULL;
    }
}

void gp_analyze_part_inputs_free(gp_analyze_part *p)
{
    for (size_t i = 0; p->real && i < p->ninputs; i++) free(p->real[i]);
    free(p->real);
    free(p->bytes);
    p->real = NULL;
    p->bytes = NULL;
}

void gp_analyze_part_write(gp_sbuf *b, const gp_analyze_part *p)
{
    const gp_analyze_opts *o = &p->o;
    gp_sbuf_puts(b, "{\"format\":");
    gp_json_str(b, GP_ANALYZE_PART_FORMAT);
    gp_sbuf_printf(b,
                   ",\"version\":%d,\"options\":{\"compat\":%d,\"top\":", GP_ANALYZE_PART_VERSION,
                   o->compat);
    w_i64(b, o->top);
    gp_sbuf_puts(b, ",\"duration_ratio\":");
    w_dbl(b, o->ratio);
    gp_sbuf_puts(b, ",\"kernel_wait_ns\":");
    w_i64(b, o->kernel_wait_ns);
    gp_sbuf_puts(b, ",\"queue_full\":");
    w_i64(b, o->queue_full);
    gp_sbuf_puts(b, ",\"straggler_z\":");
    w_dbl(b, o->straggler_z);
    gp_sbuf_puts(b, ",\"runtime_cutoff_ns\":");
    w_i64(b, o->lo.runtime_cutoff_ns);
    gp_sbuf_puts(b, ",\"delay_cutoff_ns\":");
    w_i64(b, o->lo.launch_delay_cutoff_ns);
    gp_sbuf_puts(b, "},\n\"inputs\":[");
    for (size_t i = 0; i < p->ninputs; i++) {
        gp_sbuf_puts(b, i ? ",{\"path\":" : "{\"path\":");
        w_str(b, p->inputs[i]);
        gp_sbuf_puts(b, ",\"bytes\":");
        w_i64(b, p->bytes[i]);
        if (p->real && p->real[i]) {
            gp_sbuf_puts(b, ",\"real\":");
            w_str(b, p->real[i]);
        }
        gp_sbuf_putc(b, '}');
    }
    gp_sbuf_printf(b, "],\n\"shard\":{\"index\":%zu,\"count\":%zu,\"first\":%zu,\"end\":%zu},\n",
                   p->shard, p->nshards, p->first, p->end);
    gp_sbuf_puts(b, "\"files\":[");
    for (size_t i = 0; i < p->end - p->first; i++) {
        const gp_analyze_file *f = &p->files[i];
        gp_sbuf_printf(b, "%s\n{\"index\":%zu,\"is_trace\":%d,\"has_events\":%d,\"rank_hint\":%d,",
                       i ? "," : "", p->first + i, f->is_trace, f->has_events, f->rank_hint);
        gp_sbuf_puts(b, "\"steps\":[");
        for (size_t s = 0; s < f->nstep; s++) {
            if (s) gp_sbuf_putc(b, ',');
            w_str(b, f->step[s]);
        }
        gp_sbuf_puts(b, "],\"results\":[");
        for (size_t v = 0; v < f->nvar; v++) {
            if (v) gp_sbuf_putc(b, ',');
            w_rank(b, &f->var[v]);
        }
        gp_sbuf_puts(b, "]}");
    }
    gp_sbuf_puts(b, "]}\n");
}

/* ---- reader -------------------------------------------------------------------------------- */

typedef struct rd {
    const char *path;
    gp_err *err;
    int bad;
} rd;

static int bad(rd *r, const char *what, const char *key)
{
    if (!r->bad)
        gp_err_set(r->err, GP_EPARSE, "%s: corrupt analyze part: %s%s%s", r->path, what,
                   key ? " " : "", key ? key : "");
    r->bad = 1;
    return GP_EPARSE;
}

static const gp_jv *get(rd *r, const gp_jv *o, const char *key, gp_jtype ty)
{
    const gp_jv *v = gp_jdom_get(o, key);
    if (!v || v->type != ty) {
        bad(r, ty == GP_JARR ? "no array" : ty == GP_JOBJ ? "no object" : "no value", key);
        return NULL;
    }
    return v;
}

/* an integer in [lo, hi], from a number or a decimal string */
static int r_int(rd *r, const gp_jv *v, const char *key, long double lo, long double hi, int64_t *s,
                 uint64_t *u)
{
    if (!v) return bad(r, "no value", key);
    if (v->type == GP_JNUM) {
        if (v->num != floor(v->num) || !(v->num >= (double)lo && v->num <= (double)hi) ||
            fabs(v->num) >= EXACT)
            return bad(r, "not an exact integer:", key);
        if (u)
            *u = (uint64_t)v->num;
        else
            *s = (int64_t)v->num;
        return 0;
    }
    if (v->type != GP_JSTR || !v->str[0]) return bad(r, "not an integer:", key);
    char *end;
    errno = 0;
    if (u) {
        if (v->str[0] == '-') return bad(r, "not an integer:", key);
        *u = strtoull(v->str, &end, 10);
    } else {
        *s = strtoll(v->str, &end, 10);
        if (!errno && ((long double)*s < lo || (long double)*s > hi)) errno = ERANGE;
    }
    if (errno || *end) return bad(r, "not an integer:", key);
    return 0;
}

static int r_dbl(rd *r, const gp_jv *v, const char *key, double *out)
{
    if (v && v->type == GP_JNUM) {
        *out = v->num;
        return 0;
    }
    if (v && v->type == GP_JSTR) {
        if (!strcmp(v->str, "nan")) return *out = NAN, 0;
        if (!strcmp(v->str, "inf")) return *out = INFINITY, 0;
        if (!strcmp(v->str, "-inf")) return *out = -INFINITY, 0;
    }
    return bad(r, "not a number:", key);
}

static int hexval(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* a string written by w_str (NULL allowed when nullable) */
static int r_str(rd *r, const gp_jv *v, const char *key, int nullable, char **out)
{
    *out = NULL;
    if (v && v->type == GP_JNULL && nullable) return 0;
    if (v && v->type == GP_JSTR) {
        *out = gp_xstrdup(v->str);
        return 0;
    }
    const gp_jv *h = v && v->type == GP_JOBJ ? gp_jdom_get(v, "hex") : NULL;
    if (!h || h->type != GP_JSTR || strlen(h->str) % 2 || !h->str[0])
        return bad(r, "not a string:", key);
    size_t n = strlen(h->str) / 2;
    char *s = gp_xmalloc(n + 1);
    for (size_t i = 0; i < n; i++) {
        int a = hexval(h->str[2 * i]), c = hexval(h->str[2 * i + 1]);
        if (a < 0 || c < 0 || (a | c) == 0) {
            free(s);
            return bad(r, "not a string:", key);
        }
        s[i] = (char)(a * 16 + c);
    }
    s[n] = 0;
    *out = s;
    return 0;
}

static int r_fields(rd *r, const gp_jv *o, void *base, const fld *f, size_t nf)
{
    if (!o || o->type != GP_JOBJ) return bad(r, "not an object", NULL);
    for (size_t k = 0; k < nf; k++) {
        char *p = (char *)base + f[k].off;
        const gp_jv *v = gp_jdom_get(o, f[k].key);
        int64_t s = 0;
        uint64_t u = 0;
        int e = 0;
        switch (f[k].ty) {
        case 'i':
            if (!(e = r_int(r, v, f[k].key, -2147483648.0L, 2147483647.0L, &s, NULL)))
                *(int *)p = (int)s;
            break;
        case 'l':
            if (!(e = r_int(r, v, f[k].key, (long double)INT64_MIN, (long double)INT64_MAX, &s,
                            NULL)))
                *(int64_t *)p = s;
            break;
        case 'u':
            if (!(e = r_int(r, v, f[k].key, 0, 18446744073709551615.0L, NULL, &u)))
                *(uint64_t *)p = u;
            break;
        case 'b':
            if (!(e = r_int(r, v, f[k].key, 0, 255, &s, NULL))) *(uint8_t *)p = (uint8_t)s;
            break;
        default:
            e = r_dbl(r, v, f[k].key, (double *)p);
            break;
        }
        if (e) return e;
    }
    return 0;
}

static int r_rank(rd *r, const gp_jv *o, gp_analyze_rank *x)
{
    memset(x, 0, sizeof *x);
    if (!o || o->type != GP_JOBJ) return bad(r, "a result is not an object", NULL);
    if (r_str(r, gp_jdom_get(o, "source"), "source", 0, &x->source) ||
        r_fields(r, o, x, rank_f, NF(rank_f)))
        return GP_EPARSE;
    for (int w = 0; w < 2; w++) {
        const char *key = w ? "kt.seen" : "kt.ns";
        const gp_jv *a = get(r, o, key, GP_JARR);
        if (!a) return GP_EPARSE;
        if (a->n != GP_KSTATES) return bad(r, "wrong length of", key);
        for (unsigned s = 0; s < GP_KSTATES; s++) {
            int64_t v;
            if (r_int(r, &a->items[s], key, w ? 0 : (long double)INT64_MIN,
                      w ? 1 : (long double)INT64_MAX, &v, NULL))
                return GP_EPARSE;
            if (w)
                x->kt.seen[s] = (int)v;
            else
                x->kt.ns[s] = v;
        }
    }
    for (size_t t = 0; t < NF(tables); t++) {
        const tbl *tb = &tables[t];
        const gp_jv *a = get(r, o, tb->key, GP_JARR);
        if (!a) return GP_EPARSE;
        char *arr = gp_xcalloc(a->n ? a->n : 1, tb->size);
        *(char **)((char *)x + tb->arr) = arr;
        *(size_t *)((char *)x + tb->cnt) = a->n;
        if (tb->f == top_f) x->top_name = gp_xcalloc(a->n ? a->n : 1, sizeof *x->top_name);
        for (size_t k = 0; k < a->n; k++) {
            if (r_fields(r, &a->items[k], arr + k * tb->size, tb->f, tb->nf)) return GP_EPARSE;
            if (tb->f == top_f) {
                if (r_str(r, gp_jdom_get(&a->items[k], "name"), "name", 1, &x->top_name[k]))
                    return GP_EPARSE;
                x->top[k].name = x->top_name[k] ? 0 : GP_NO_INDEX;
            }
        }
    }
    return 0;
}

static int r_size(rd *r, const gp_jv *o, const char *key, size_t *out)
{
    uint64_t u;
    if (r_int(r, gp_jdom_get(o, key), key, 0, 1e15L, NULL, &u)) return GP_EPARSE;
    *out = (size_t)u;
    return 0;
}

static int r_part(rd *r, const gp_jv *doc, gp_analyze_part *p)
{
    const gp_jv *fmt = gp_jdom_get(doc, "format");
    if (doc->type != GP_JOBJ || !fmt || fmt->type != GP_JSTR ||
        strcmp(fmt->str, GP_ANALYZE_PART_FORMAT))
        return gp_err_set(r->err, GP_EPARSE,
                          "%s: not a gpuprof analyze part (no \"format\": \"%s\")", r->path,
                          GP_ANALYZE_PART_FORMAT);
    double ver = 0;
    const gp_jv *vj = gp_jdom_get(doc, "version");
    if (!vj) return gp_err_set(r->err, GP_EPARSE, "%s: analyze part without \"version\"", r->path);
    if (!gp_jdom_num(vj, &ver))
        return gp_err_set(r->err, GP_EPARSE,
                          "%s: analyze part whose \"version\" is not a number; this gpuprof "
                          "reads version %d",
                          r->path, GP_ANALYZE_PART_VERSION);
    if (ver != GP_ANALYZE_PART_VERSION)
        return gp_err_set(r->err, GP_EPARSE,
                          "%s: analyze part of format version %g; this gpuprof reads version %d",
                          r->path, ver, GP_ANALYZE_PART_VERSION);
    const gp_jv *o = get(r, doc, "options", GP_JOBJ);
    if (!o) return GP_EPARSE;
    gp_analyze_opts_default(&p->o);
    int64_t v;
    if (r_int(r, gp_jdom_get(o, "compat"), "compat", 0, 1, &v, NULL)) return GP_EPARSE;
    p->o.compat = (int)v;
    if (r_int(r, gp_jdom_get(o, "top"), "top", 0, 2147483647.0L, &v, NULL)) return GP_EPARSE;
    p->o.top = (long)v;
    if (r_dbl(r, gp_jdom_get(o, "duration_ratio"), "duration_ratio", &p->o.ratio) ||
        r_int(r, gp_jdom_get(o, "kernel_wait_ns"), "kernel_wait_ns", 0, 9e18L, &p->o.kernel_wait_ns,
              NULL) ||
        r_int(r, gp_jdom_get(o, "queue_full"), "queue_full", 0, 9e18L, &p->o.queue_full, NULL) ||
        r_dbl(r, gp_jdom_get(o, "straggler_z"), "straggler_z", &p->o.straggler_z) ||
        r_int(r, gp_jdom_get(o, "runtime_cutoff_ns"), "runtime_cutoff_ns", 0, 9e18L,
              &p->o.lo.runtime_cutoff_ns, NULL) ||
        r_int(r, gp_jdom_get(o, "delay_cutoff_ns"), "delay_cutoff_ns", 0, 9e18L,
              &p->o.lo.launch_delay_cutoff_ns, NULL))
        return GP_EPARSE;
    const gp_jv *in = get(r, doc, "inputs", GP_JARR);
    if (!in) return GP_EPARSE;
    p->ninputs = in->n;
    p->inputs = gp_xcalloc(in->n + 1, sizeof *p->inputs);
    p->bytes = gp_xcalloc(in->n + 1, sizeof *p->bytes);
    p->real = gp_xcalloc(in->n + 1, sizeof *p->real);
    for (size_t i = 0; i < in->n; i++) {
        const gp_jv *rp = gp_jdom_get(&in->items[i], "real"); /* optional */
        if (r_str(r, gp_jdom_get(&in->items[i], "path"), "path", 0, &p->inputs[i]) ||
            r_int(r, gp_jdom_get(&in->items[i], "bytes"), "bytes", -1, 9e18L, &p->bytes[i], NULL) ||
            (rp && r_str(r, rp, "real", 0, &p->real[i])))
            return GP_EPARSE;
    }
    const gp_jv *sh = get(r, doc, "shard", GP_JOBJ);
    if (!sh || r_size(r, sh, "index", &p->shard) || r_size(r, sh, "count", &p->nshards) ||
        r_size(r, sh, "first", &p->first) || r_size(r, sh, "end", &p->end))
        return GP_EPARSE;
    size_t first, end;
    gp_analyze_shard_range(p->ninputs, p->shard, p->nshards, &first, &end);
    if (!p->nshards || p->nshards > 1000000 || p->shard >= p->nshards || p->first != first ||
        p->end != end)
        return bad(r, "shard index, count and file range disagree", NULL);
    const gp_jv *fs = get(r, doc, "files", GP_JARR);
    if (!fs) return GP_EPARSE;
    if (fs->n != end - first) return bad(r, "wrong number of files for its shard", NULL);
    p->files = gp_xcalloc(fs->n ? fs->n : 1, sizeof *p->files);
    for (size_t i = 0; i < fs->n; i++) {
        const gp_jv *e = &fs->items[i];
        gp_analyze_file *f = &p->files[i];
        size_t idx;
        int64_t a, b, c;
        if (r_size(r, e, "index", &idx) ||
            r_int(r, gp_jdom_get(e, "is_trace"), "is_trace", 0, 1, &a, NULL) ||
            r_int(r, gp_jdom_get(e, "has_events"), "has_events", 0, 1, &b, NULL) ||
            r_int(r, gp_jdom_get(e, "rank_hint"), "rank_hint", -1, 2147483647.0L, &c, NULL))
            return GP_EPARSE;
        if (idx != first + i) return bad(r, "files out of order", NULL);
        f->is_trace = (int)a;
        f->has_events = (int)b;
        f->rank_hint = (int)c;
        const gp_jv *st = get(r, e, "steps", GP_JARR), *rs = get(r, e, "results", GP_JARR);
        if (!st || !rs) return GP_EPARSE;
        if (st->n > 2 || rs->n > 2) return bad(r, "too many steps or results", NULL);
        /* the results a file must have (see gp_analyze_file) */
        size_t want = !f->is_trace ? 0 : (p->o.compat && st->n < 2 && p->ninputs > 1) ? 2 : 1;
        if (rs->n != want) return bad(r, "wrong number of results for a file", NULL);
        for (size_t s = 0; s < st->n; s++) {
            if (r_str(r, &st->items[s], "steps", 0, &f->step[s])) return GP_EPARSE;
            f->nstep++;
        }
        for (size_t k = 0; k < rs->n; k++) {
            f->nvar++;
            if (r_rank(r, &rs->items[k], &f->var[k])) return GP_EPARSE;
        }
    }
    return 0;
}

int gp_analyze_part_read(const char *path, gp_analyze_part *p, gp_err *err)
{
    memset(p, 0, sizeof *p);
    /* through the importers' input: a part compressed with gzip for the
     * trip between machines, or given on a pipe, reads as the plain file */
    gp_input *in;
    int orc = gp_input_open_file(path, &in, err);
    if (orc) return orc;
    gp_sbuf text = {0};
    char buf[65536];
    long got;
    while ((got = gp_input_read(in, buf, sizeof buf, err)) > 0)
        gp_sbuf_add(&text, buf, (size_t)got);
    gp_input_close(in);
    if (got < 0) {
        gp_sbuf_free(&text);
        return (int)got;
    }
    gp_jv doc;
    gp_err je = {0};
    int rc = gp_jdom_parse(text.s ? text.s : "", text.n, &doc, &je);
    gp_sbuf_free(&text);
    if (rc) return gp_err_set(err, rc, "%s: not a gpuprof analyze part: %s", path, je.msg);
    rd r = {path, err, 0};
    rc = r_part(&r, &doc, p);
    gp_jdom_free(&doc);
    if (rc) gp_analyze_part_free(p);
    return rc;
}

void gp_analyze_part_free(gp_analyze_part *p)
{
    for (size_t i = 0; p->inputs && i < p->ninputs; i++) free(p->inputs[i]);
    free(p->inputs);
    gp_analyze_part_inputs_free(p);
    for (size_t i = 0; p->files && i < p->end - p->first; i++) gp_analyze_file_free(&p->files[i]);
    free(p->files);
    memset(p, 0, sizeof *p);
}

static int same_opts(const gp_analyze_opts *a, const gp_analyze_opts *b)
{
    return a->compat == b->compat && a->top == b->top && a->ratio == b->ratio &&
           a->kernel_wait_ns == b->kernel_wait_ns && a->queue_full == b->queue_full &&
           a->straggler_z == b->straggler_z && a->lo.runtime_cutoff_ns == b->lo.runtime_cutoff_ns &&
           a->lo.launch_delay_cutoff_ns == b->lo.launch_delay_cutoff_ns;
}

/* What identifies input k of a part: its resolved path when the part has
 * one (a relative and an absolute path to one file are one input), else
 * the path as expanded (a pipe, a part of an older gpuprof). */
static const char *input_key(const gp_analyze_part *p, size_t k)
{
    return p->real && p->real[k] ? p->real[k] : p->inputs[k];
}

int gp_analyze_parts_join(gp_analyze_part *parts, const char *const *names, size_t n,
                          gp_analyze_opts *o, gp_analyze_file **files, size_t *nfiles, gp_err *err)
{
    if (!n) return gp_err_set(err, GP_EINVAL, "no part given");
    const gp_analyze_part *p0 = &parts[0];
    size_t ns = p0->nshards;
    const char **by = gp_xcalloc(ns, sizeof *by); /* the part of each shard */
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        const gp_analyze_part *p = &parts[i];
        if (p->nshards != ns)
            rc = gp_err_set(err, GP_EINVAL, "%s is shard %zu/%zu, but %s is of %zu shards",
                            names[i], p->shard, p->nshards, names[0], ns);
        else if (!same_opts(&p->o, &p0->o))
            rc = gp_err_set(err, GP_EINVAL, "%s was made with other analyze options than %s",
                            names[i], names[0]);
        else if (p->ninputs != p0->ninputs)
            rc = gp_err_set(err, GP_EINVAL,
                            "%s was made from other input files than %s (%zu, not %zu)", names[i],
                            names[0], p->ninputs, p0->ninputs);
        for (size_t k = 0; !rc && k < p->ninputs; k++)
            if (strcmp(input_key(p, k), input_key(p0, k)) || p->bytes[k] != p0->bytes[k])
                rc = gp_err_set(err, GP_EINVAL,
                                "%s was made from other input files than %s (%s, %lld bytes)",
                                names[i], names[0], p->inputs[k], (long long)p->bytes[k]);
        if (!rc && by[p->shard])
            rc = gp_err_set(err, GP_EINVAL, "%s and %s are both shard %zu/%zu (overlapping shards)",
                            by[p->shard], names[i], p->shard, ns);
        if (!rc) by[p->shard] = names[i];
    }
    for (size_t s = 0; s < ns && !rc; s++)
        if (!by[s])
            rc = gp_err_set(err, GP_EINVAL, "shard %zu/%zu is missing (no part given for it)", s,
                            ns);
    free(by);
    if (rc) return rc;
    *o = p0->o;
    *nfiles = p0->ninputs;
    *files = gp_xcalloc(p0->ninputs ? p0->ninputs : 1, sizeof **files);
    for (size_t i = 0; i < n; i++) {
        gp_analyze_part *p = &parts[i];
        for (size_t k = 0; k < p->end - p->first; k++) {
            (*files)[p->first + k] = p->files[k];
            memset(&p->files[k], 0, sizeof p->files[k]);
        }
    }
    return 0;
}
