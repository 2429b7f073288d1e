/* trace/import_json.c: streaming importer for Chrome trace JSON as written by
 * the PyTorch profiler (Kineto), Perfetto, chrome://tracing and gpuprof.
 *
 * The text is read in blocks into one buffer and parsed one unit at a time
 * (one trace event, or one top-level key with its value). A unit that runs
 * past the end of the buffer is re-parsed from its start once more bytes are
 * in, so the parser itself works on contiguous memory and the whole text is
 * never held. Nothing of a unit reaches the trace until the unit has been
 * parsed completely. */
#include "trace/import.h"
#include "trace/args_source.h"
#include "core/sketch.h"
#include "core/clock.h"
#include "core/hash.h"
#include "trace/input.h"
#include "trace/jscan.h"
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#define BUF_INIT  (4u << 20)
#define UNIT_MAX  ((size_t)1 << 30) /* largest single event / top-level value */
#define PAD       64                /* zero bytes kept after the data */
#define MAX_ARGS  64
#define MAX_DEPTH 512

enum { JMP_MORE = 1, JMP_ERR = 2 };

typedef struct span {
    const char *s;
    uint32_t n;
} span;

enum { V_NUM, V_STR, V_ARR, V_OTHER, V_LIT };

typedef struct arg {
    span key;
    span val;
    uint8_t type;
    uint8_t arr_n;
    uint8_t is_int; /* V_NUM without fraction/exponent that fits int64: ival */
    int64_t ival;
    int64_t arr[3];
} arg;

/* The argument keys the importer reads, recognised once while an event's
 * args are parsed (arg_key_code) so that reading them is an index, not a
 * search: ev.kidx[AK_x] is the index of the last arg with that key, or -1
 * (a key given twice reads as its last value, as the event's own keys do and
 * as Python's json, hence HTA, reads it). */
#define ARG_KEYS(X)                                                                                \
    X(CORRELATION, "correlation")                                                                  \
    X(EXTERNAL_ID, "External id")                                                                  \
    X(EXTERNAL_ID_LC, "external id")                                                               \
    X(DEVICE, "device")                                                                            \
    X(CONTEXT, "context")                                                                          \
    X(STREAM, "stream")                                                                            \
    X(GRID, "grid")                                                                                \
    X(BLOCK, "block")                                                                              \
    X(REGISTERS, "registers per thread")                                                           \
    X(SHARED_MEM, "shared memory")                                                                 \
    X(BLOCKS_PER_SM, "blocks per SM")                                                              \
    X(WARPS_PER_SM, "warps per SM")                                                                \
    X(OCCUPANCY, "est. achieved occupancy %")                                                      \
    X(BYTES, "bytes")                                                                              \
    X(NAME, "name")                                                                                \
    X(LABELS, "labels")                                                                            \
    X(MEM_ADDR, "Addr")                                                                            \
    X(MEM_BYTES, "Bytes")                                                                          \
    X(MEM_TOTAL_ALLOC, "Total Allocated")                                                          \
    X(MEM_TOTAL_RES, "Total Reserved")                                                             \
    X(MEM_DEV_TYPE, "Device Type")                                                                 \
    X(MEM_DEV_ID, "Device Id")                                                                     \
    X(GPU_TIMERS, "gpu_timers")                                                                    \
    X(INLINE_CHILD, "inline_child_ns")
#define AK_ENUM(id, lit) AK_##id,
enum { ARG_KEYS(AK_ENUM) AK_COUNT };
#undef AK_ENUM

typedef struct ev {
    span ph, cat, name, bp, scope, pid_s, tid_s, id_s;
    int has_pid, has_tid, has_ts, has_dur, has_id, has_args;
    span args_txt; /* the "args" object's text (has_args) */
    int64_t pid, tid, ts, dur, id;
    int nargs;
    int8_t kidx[AK_COUNT]; /* see ARG_KEYS */
    arg args[MAX_ARGS];
} ev;

typedef struct be_frame {
    int64_t ts;
    uint32_t name;
    uint16_t cat;
    int64_t correlation, external_id;
} be_frame;

typedef struct be_stack {
    uint32_t track;
    GP_VEC(be_frame) f;
} be_stack;

enum { S_START, S_OBJ_KEY, S_OBJ_NEXT, S_EV_FIRST, S_EV_ITEM, S_EV_NEXT, S_END, S_DONE };

#define NAME_CACHE 1024 /* str_id's cache */
#define CAT_CACHE  16   /* cat_id's cache */
typedef struct name_slot {
    const char *str; /* the interned copy (stable), NULL when empty */
    uint32_t n, id;
    uint64_t a, b; /* its first and last 8 bytes as str_id reads them */
} name_slot;

typedef struct P {
    gp_input *in;
    gp_err *err;
    const char *name;
    char *buf;
    size_t cap, len, pos;
    size_t unit;       /* start of the unit being parsed (run) */
    uint64_t base_off; /* offset of buf[0] in the uncompressed text */
    /* an input that cannot be read again (gp_input_is_stream): the lines
     * of the text before buf[0], counted by refill for line_col */
    int count_lines;
    /* an input that is not a regular file (a pipe, a device: /dev/null):
     * blank, it reads as "{}" here, as load.c makes a blank file read */
    int blank_doc;
    uint64_t lines_before;      /* newlines before buf[0] */
    uint64_t line_start_before; /* offset after the last of them (0: none) */
    /* stage 1: one bitmap word per 64 bytes of buf[0..len] (see jscan.h),
     * filled on demand after every refill; NULL for the byte-wise reference */
    uint64_t *idx;
    size_t idx_words;  /* allocated */
    size_t idx_blocks; /* blocks of 64 bytes classified so far */
    size_t idx_total;  /* blocks to classify in this fill: through the padding's first NUL */
    gp_jscan_fn scan;
    int eof;
    /* a plain file mapped instead of read (p_map): buf points into the
     * mapping, len is the rest of the file, eof is set from the start */
    char *map;              /* the mapping (page aligned), NULL when reading */
    size_t map_len;         /* bytes mapped: the file's pages and one zero page */
    size_t map_file;        /* of which the file's bytes from the mapping's start */
    uint64_t map_size;      /* the file's size when mapped (truncation check) */
    int map_fd;             /* the file (not owned) */
    size_t map_next;        /* position of the next map_advance */
    char *map_released;     /* pages before it given back */
    size_t map_unit_max;    /* a longer unit goes back to the read path (RUN_READ) */
    size_t scratch_map_len; /* scratch mapped (not malloc'd) when map is set */
    int fast;               /* fast_event first ($GPUPROF_IMPORT_FAST=0: the general path only) */
    int state, array_form;
    int gp_stream;   /* "gpuprofStream" leads the document: a cut in the events is kept */
    int top_keys;    /* top-level keys read so far */
    int seen_events; /* inside or past a "traceEvents" array (a later part starts inside) */
    jmp_buf jb;
    const char *err_at;
    int64_t err_off; /* absolute offset of an error found outside the buffer (merge), or -1 */
    char errmsg[320];
    int err_code;
    gp_trace *t;
    char *scratch;
    size_t scap, sn;
    ev e;
    GP_VEC(be_stack) stacks;
    gp_u64map pid_names; /* pid -> process name string id */
    gp_u64map pid_gpu;   /* pid -> GPU device id, from process_labels "GPU N" */
    name_slot names[NAME_CACHE];
    struct cat_slot {    /* cat_id's cache */
        const char *str; /* the interned name, NULL when empty */
        uint32_t n;
        uint16_t cat;
        uint64_t a, b; /* its bytes 0-7 and 8-15 as head8 reads them */
    } cat_cache[CAT_CACHE];
    struct track_slot { /* track_of's cache of numeric pid/tid pairs */
        int64_t pid, tid;
        uint32_t track, used;
    } tracks[16];
    struct track_slot *track_last; /* the slot of the previous event's pair */
    int progress;
    int keep_args;                 /* keep each event's args text (gp_import_opts.keep_args) */
    _Atomic(uint64_t) *read_bytes; /* gp_import_count_bytes */
    uint64_t counted;              /* input position already added to it */
    int64_t t_start, t_last_progress;
    int progress_shown;
    int64_t progress_after_ns; /* 1 s; $GPUPROF_PROGRESS_AFTER_MS for tests */
    /* split import: stop at the first of bounds[next..nbounds) landed on */
    const uint64_t *bounds;
    int nbounds, next_bound, landed, split_part;
    GP_VEC(struct pending_e {
        uint32_t track;
        uint32_t at; /* slices of this part before it: where a single pass puts its slice */
        int64_t ts;
        uint64_t off;
    })
    pending_e;
} P;

/* ---- errors and buffer refills ------------------------------------------------------------ */

static void more(P *p)
{
    longjmp(p->jb, JMP_MORE);
}

static void bad(P *p, const char *at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void bad(P *p, const char *at, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->errmsg, sizeof p->errmsg, fmt, ap);
    va_end(ap);
    p->err_at = at;
    p->err_code = GP_EPARSE;
    longjmp(p->jb, JMP_ERR);
}

static inline const char *end_of(P *p)
{
    return p->buf + p->len;
}

/* Called when a scan stopped at a NUL byte: the end of the data, or a NUL
 * inside the text (never valid JSON). */
static void at_nul(P *p, const char *s)
{
    if (s >= end_of(p)) more(p);
    bad(p, s, "unexpected NUL byte");
}

#define IDX_CHUNK 256 /* blocks classified at a time, just ahead of the parser (16 KiB) */

/* Classifies the blocks from idx_blocks through at least block w (w <
 * idx_total). Stage 1 runs a little ahead of stage 2 so that both work on
 * bytes that are still in the cache. */
static void __attribute__((noinline)) idx_more(P *p, size_t w)
{
    size_t to = w + IDX_CHUNK;
    if (to > p->idx_total) to = p->idx_total;
    p->scan(p->buf + (p->idx_blocks << 6), to - p->idx_blocks, p->idx + p->idx_blocks);
    p->idx_blocks = to;
}

/* The first string-special byte ('"', '\\', < 0x20) at or after s (s <=
 * buf + len), from the stage-1 bitmap. The zero padding after the data is
 * special, so the walk always ends. */
static inline const char *idx_next(P *p, const char *s)
{
    size_t i = (size_t)(s - p->buf), w = i >> 6;
    if (__builtin_expect(w >= p->idx_blocks, 0)) idx_more(p, w);
    uint64_t m = p->idx[w] >> (i & 63);
    if (m) return s + __builtin_ctzll(m);
    for (;;) {
        if (__builtin_expect(++w >= p->idx_blocks, 0)) idx_more(p, w);
        m = p->idx[w];
        if (m) return p->buf + (w << 6) + __builtin_ctzll(m);
    }
}

/* The first byte at or after s that is not JSON whitespace (the padding's
 * NUL stops it): 16 bytes a step, for the indentation of pretty-printed
 * traces (Kineto writes each event over several indented lines). */
static inline const char *ws_run(const char *s)
{
#ifdef __SSE2__
    const __m128i sp = _mm_set1_epi8(' '), nl = _mm_set1_epi8('\n'), cr = _mm_set1_epi8('\r'),
                  tab = _mm_set1_epi8('\t');
    for (;;) {
        __m128i v = _mm_loadu_si128((const __m128i *)s);
        __m128i m = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, sp), _mm_cmpeq_epi8(v, nl)),
                                 _mm_or_si128(_mm_cmpeq_epi8(v, cr), _mm_cmpeq_epi8(v, tab)));
        unsigned bits = ~(unsigned)_mm_movemask_epi8(m) & 0xffffu;
        if (bits) return s + __builtin_ctz(bits);
        s += 16;
    }
#else
    while (*s == ' ' || *s == '\n' || *s == '\r' || *s == '\t') s++;
    return s;
#endif
}

static inline const char *ws(P *p, const char *s)
{
    if ((unsigned char)*s > ' ') return s; /* the usual case: no whitespace at all */
    s = ws_run(s);
    if (*s == 0 && s >= end_of(p)) more(p);
    return s;
}

static const char *describe(char c, char *tmp)
{
    if (c == 0) return "end of data";
    if ((unsigned char)c < 0x20 || (unsigned char)c >= 0x7f) {
        snprintf(tmp, 16, "byte 0x%02x", (unsigned char)c);
        return tmp;
    }
    snprintf(tmp, 16, "'%c'", c);
    return tmp;
}

/* Like describe() but tells the end of the data from a NUL byte inside it. */
static const char *describe_at(P *p, const char *s, char *tmp)
{
    if (*s == 0 && s < end_of(p)) return "a NUL byte";
    return describe(*s, tmp);
}

static inline const char *expect(P *p, const char *s, char c, const char *what)
{
    s = ws(p, s);
    if (*s != c) {
        char tmp[16];
        bad(p, s, "expected %s, found %s", what, describe_at(p, s, tmp));
    }
    return s + 1;
}

/* ---- strings -------------------------------------------------------------------------------- */

static char *scratch_reserve(P *p, size_t n)
{
    /* The scratch area is sized with the buffer, so unescaped strings of one
     * unit always fit and pointers into it stay valid during the unit. */
    if (p->sn + n > p->scap) bad(p, NULL, "internal: scratch overflow");
    return p->scratch + p->sn;
}

static inline uint64_t haszero(uint64_t v)
{
    return (v - 0x0101010101010101ull) & ~v & 0x8080808080808080ull;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static const char *hex4(P *p, const char *s, unsigned *out)
{
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        if (s[i] == 0 && s + i >= end_of(p)) more(p);
        int h = hexval(s[i]);
        if (h < 0) bad(p, s + i, "invalid \\u escape: expected 4 hex digits");
        v = v << 4 | (unsigned)h;
    }
    *out = v;
    return s + 4;
}

static char *put_utf8(char *d, unsigned cp)
{
    if (cp < 0x80)
        *d++ = (char)cp;
    else if (cp < 0x800) {
        *d++ = (char)(0xc0 | cp >> 6);
        *d++ = (char)(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
        *d++ = (char)(0xe0 | cp >> 12);
        *d++ = (char)(0x80 | ((cp >> 6) & 0x3f));
        *d++ = (char)(0x80 | (cp & 0x3f));
    } else {
        *d++ = (char)(0xf0 | cp >> 18);
        *d++ = (char)(0x80 | ((cp >> 12) & 0x3f));
        *d++ = (char)(0x80 | ((cp >> 6) & 0x3f));
        *d++ = (char)(0x80 | (cp & 0x3f));
    }
    return d;
}

/* Finds the first '"', '\\' or control byte at or after s (the buffer's zero
 * padding guarantees that one is found): from the stage-1 index when there
 * is one, else by testing the bytes (the reference). */
static inline __attribute__((always_inline)) const char *scan_str(P *p, const char *s)
{
    if (p->idx) return idx_next(p, s);
#ifdef __SSE2__
    const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\'),
                  ctl = _mm_set1_epi8(0x1f);
    for (;;) {
        __m128i v = _mm_loadu_si128((const __m128i *)s);
        __m128i m = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, bslash)),
                                 _mm_cmpeq_epi8(_mm_min_epu8(v, ctl), v)); /* v <= 0x1f */
        int bits = _mm_movemask_epi8(m);
        if (bits) return s + __builtin_ctz((unsigned)bits);
        s += 16;
    }
#endif
    for (;;) {
        uint64_t v;
        memcpy(&v, s, 8);
        uint64_t q = haszero(v ^ 0x2222222222222222ull);
        uint64_t b = haszero(v ^ 0x5c5c5c5c5c5c5c5cull);
        uint64_t c = (v - 0x2020202020202020ull) & ~v & 0x8080808080808080ull; /* < 0x20 */
        uint64_t m = q | b | c;
        if (m) return s + (__builtin_ctzll(m) >> 3);
        s += 8;
    }
}

/* s points at the opening quote. */
static const char *parse_string(P *p, const char *s, span *out)
{
    const char *start = s + 1;
    const char *q = scan_str(p, start);
    if (*q == '"') {
        out->s = start;
        out->n = (uint32_t)(q - start);
        return q + 1;
    }
    if (*q != '\\') {
        if (*q == 0) at_nul(p, q);
        bad(p, q, "control character 0x%02x inside a string", (unsigned char)*q);
    }
    /* slow path with escapes: unescape into scratch */
    size_t maxlen = (size_t)(end_of(p) - start);
    char *d0 = scratch_reserve(p, maxlen + 4), *d = d0;
    memcpy(d, start, (size_t)(q - start));
    d += q - start;
    s = q;
    for (;;) {
        char c = *s;
        if (c == '"') break;
        if (c == '\\') {
            char e = s[1];
            if (e == 0 && s + 1 >= end_of(p)) more(p);
            s += 2;
            switch (e) {
            case '"':
                *d++ = '"';
                break;
            case '\\':
                *d++ = '\\';
                break;
            case '/':
                *d++ = '/';
                break;
            case 'b':
                *d++ = '\b';
                break;
            case 'f':
                *d++ = '\f';
                break;
            case 'n':
                *d++ = '\n';
                break;
            case 'r':
                *d++ = '\r';
                break;
            case 't':
                *d++ = '\t';
                break;
            case 'u': {
                unsigned cp;
                s = hex4(p, s, &cp);
                if (cp >= 0xd800 && cp <= 0xdbff) {
                    if (s[0] == 0 && s >= end_of(p)) more(p);
                    if (s[1] == 0 && s + 1 >= end_of(p)) more(p);
                    if (s[0] == '\\' && s[1] == 'u') {
                        unsigned lo;
                        const char *s2 = hex4(p, s + 2, &lo);
                        if (lo >= 0xdc00 && lo <= 0xdfff) {
                            cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
                            s = s2;
                        } else
                            cp = 0xfffd;
                    } else
                        cp = 0xfffd;
                } else if ((cp >= 0xdc00 && cp <= 0xdfff) || cp == 0)
                    cp = 0xfffd; /* a lone low surrogate; U+0000 (no NUL inside a string) */
                d = put_utf8(d, cp);
                break;
            }
            default: {
                char tmp[16];
                bad(p, s - 1, "invalid escape \\%s in string", describe(e, tmp));
            }
            }
            continue;
        }
        if ((unsigned char)c < 0x20) {
            if (c == 0) at_nul(p, s);
            bad(p, s, "control character 0x%02x inside a string", (unsigned char)c);
        }
        const char *r = scan_str(p, s);
        memcpy(d, s, (size_t)(r - s));
        d += r - s;
        s = r;
    }
    out->s = d0;
    out->n = (uint32_t)(d - d0);
    p->sn += (size_t)(d - d0);
    return s + 1;
}

/* ---- numbers -------------------------------------------------------------------------------- */

static const int64_t pow10_i64[19] = {1LL,
                                      10LL,
                                      100LL,
                                      1000LL,
                                      10000LL,
                                      100000LL,
                                      1000000LL,
                                      10000000LL,
                                      100000000LL,
                                      1000000000LL,
                                      10000000000LL,
                                      100000000000LL,
                                      1000000000000LL,
                                      10000000000000LL,
                                      100000000000000LL,
                                      1000000000000000LL,
                                      10000000000000000LL,
                                      100000000000000000LL,
                                      1000000000000000000LL};

/* Parses a JSON number as a decimal: mantissa (up to 19 significant digits)
 * times 10^exp10. Returns the end or NULL on syntax error; *round_up is set
 * when dropped digits were >= 5 at their first position. */
static const char *parse_decimal(const char *s, const char *lim, int *neg, uint64_t *mant,
                                 int *exp10, int *dropped_half)
{
    const char *p = s;
    *neg = 0;
    *mant = 0;
    *exp10 = 0;
    *dropped_half = 0;
    int sig = 0, any = 0, first_dropped = 1;
    if (p < lim && *p == '-') {
        *neg = 1;
        p++;
    }
    while (p < lim && *p >= '0' && *p <= '9') {
        any = 1;
        if (sig < 19) {
            if (*mant || *p != '0') sig++;
            *mant = *mant * 10 + (uint64_t)(*p - '0');
        } else {
            if (first_dropped) *dropped_half = *p >= '5', first_dropped = 0;
            (*exp10)++;
        }
        p++;
    }
    if (!any) return NULL;
    if (p < lim && *p == '.') {
        p++;
        int fd = 0;
        while (p < lim && *p >= '0' && *p <= '9') {
            fd = 1;
            if (sig < 19) {
                if (*mant || *p != '0') sig++;
                *mant = *mant * 10 + (uint64_t)(*p - '0');
                (*exp10)--;
            } else if (first_dropped) {
                *dropped_half = *p >= '5';
                first_dropped = 0;
            }
            p++;
        }
        if (!fd) return NULL;
    }
    if (p < lim && (*p == 'e' || *p == 'E')) {
        p++;
        int eneg = 0, ed = 0;
        long ex = 0;
        if (p < lim && (*p == '+' || *p == '-')) eneg = *p++ == '-';
        while (p < lim && *p >= '0' && *p <= '9') {
            ed = 1;
            if (ex < 100000) ex = ex * 10 + (*p - '0');
            p++;
        }
        if (!ed) return NULL;
        *exp10 += (int)(eneg ? -ex : ex);
    }
    return p;
}

int gp_parse_us_to_ns(const char *s, const char *lim, int64_t *ns, const char **end)
{
    int neg, half;
    uint64_t m;
    int e;
    const char *p = parse_decimal(s, lim, &neg, &m, &e, &half);
    if (end) *end = p ? p : s;
    if (!p) return GP_EPARSE;
    e += 3; /* microseconds -> nanoseconds */
    uint64_t v;
    if (m == 0)
        v = 0;
    else if (e >= 0) {
        if (e > 18) return GP_ERANGE;
        if (m > ((uint64_t)INT64_MAX + (uint64_t)neg) / (uint64_t)pow10_i64[e]) return GP_ERANGE;
        v = m * (uint64_t)pow10_i64[e];
    } else {
        if (e < -19)
            v = 0;
        else if (e == -19)
            v = m >= 5000000000000000000ull ? 1 : 0;
        else {
            uint64_t d = (uint64_t)pow10_i64[-e];
            v = m / d;
            if (m % d >= d / 2) v++;
        }
        half = 0;
    }
    if (half) v++;
    if (v > (uint64_t)INT64_MAX + (uint64_t)neg) return GP_ERANGE; /* INT64_MIN fits */
    *ns = neg ? (int64_t)(0 - v) : (int64_t)v;
    return 0;
}

static inline int is_digit(char c)
{
    return (unsigned)(c - '0') < 10;
}

/* Parses an exact int64 from a number span ("7", "7.0", "1e3"); 0 or -1. */
static int span_i64(span v, int64_t *out)
{
    int neg, half;
    uint64_t m;
    int e;
    const char *lim = v.s + v.n;
    const char *q = parse_decimal(v.s, lim, &neg, &m, &e, &half);
    if (!q || q != lim) return -1;
    while (e < 0) {
        if (m % 10) return -1;
        m /= 10;
        e++;
    }
    while (e > 0 && m) {
        if (m > (uint64_t)INT64_MAX / 10) return -1;
        m *= 10;
        e--;
    }
    if (m > (uint64_t)INT64_MAX + (uint64_t)neg) return -1;
    *out = neg ? (int64_t)(0 - m) : (int64_t)m;
    return 0;
}

/* Integer from a string value: decimal or 0x-hex ("0x0", "2560"). */
static int span_str_i64(span v, int64_t *out)
{
    if (v.n > 2 && v.s[0] == '0' && (v.s[1] == 'x' || v.s[1] == 'X')) {
        uint64_t x = 0;
        if (v.n > 18) return -1;
        for (uint32_t i = 2; i < v.n; i++) {
            int h = hexval(v.s[i]);
            if (h < 0) return -1;
            x = x << 4 | (uint64_t)h;
        }
        *out = (int64_t)x;
        return 0;
    }
    return v.n ? span_i64(v, out) : -1;
}

/* The value of a JSON number span, as strtod gives it. Numbers of at most 15
 * digits with at most 22 of them after the point and no exponent are exact
 * in a double (mantissa < 2^53, power of ten exact), so one correctly
 * rounded division gives strtod's result (Clinger's fast path); the rest go
 * through strtod. */
static double span_f64(span v)
{
    static const double p10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                   1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                   1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    const char *c = v.s, *lim = v.s + v.n;
    int neg = c < lim && *c == '-';
    c += neg;
    uint64_t m = 0;
    int nd = 0, fd = 0;
    for (; c < lim && is_digit(*c); c++, nd++) m = m * 10 + (uint64_t)(*c - '0');
    if (c < lim && *c == '.')
        for (c++; c < lim && is_digit(*c); c++, nd++, fd++) m = m * 10 + (uint64_t)(*c - '0');
    if (c == lim && nd > 0 && nd <= 15) {
        double d = fd ? (double)m / p10[fd] : (double)m;
        return neg ? -d : d;
    }
    char tmp[64];
    if (v.n == 0 || v.n >= sizeof tmp) return NAN;
    memcpy(tmp, v.s, v.n);
    tmp[v.n] = 0;
    return strtod(tmp, NULL);
}

/* ---- skipping and flat objects -------------------------------------------------------------- */

static const char *parse_value_any(P *p, const char *s, int depth);

static const char *parse_literal(P *p, const char *s)
{
    static const char *const lits[] = {"true", "false", "null"};
    for (int i = 0; i < 3; i++) {
        size_t n = strlen(lits[i]);
        if (*s != lits[i][0]) continue;
        for (size_t k = 0; k < n; k++) {
            if (s[k] == 0 && s + k >= end_of(p)) more(p);
            if (s[k] != lits[i][k]) bad(p, s, "invalid literal, expected %s", lits[i]);
        }
        return s + n;
    }
    char tmp[16];
    bad(p, s, "expected a value, found %s", describe_at(p, s, tmp));
    return s;
}

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
/* The run of digits that starts the 8 bytes w (little-endian: the first
 * byte lowest): *n of them (0-8), and their value. */
static inline __attribute__((always_inline)) uint64_t swar8(uint64_t w, unsigned *n)
{
    /* non-zero bytes where a byte is not a digit: outside 0x30-0x3f, or
     * 0x3a-0x3f (+ 6 reaches 0x40). A carry of the addition only moves
     * to later bytes, so the first flagged byte is the first non-digit. */
    uint64_t bad = ((w & 0xf0f0f0f0f0f0f0f0ull) ^ 0x3030303030303030ull) |
                   (((w + 0x0606060606060606ull) & 0xf0f0f0f0f0f0f0f0ull) ^ 0x3030303030303030ull);
    unsigned k = bad ? (unsigned)__builtin_ctzll(bad) >> 3 : 8;
    *n = k;
    /* the k digits to the top bytes: the bytes below read as leading
     * zeros (a borrow of the subtraction also only moves to later bytes) */
    uint64_t t = w - 0x3030303030303030ull;
    if (k < 8) t <<= (64 - 8 * k) & 63; /* k == 0: t is not used (no shift by 64) */
    t = (t * 10 + (t >> 8)) & 0x00ff00ff00ff00ffull;
    t = (t * 100 + (t >> 16)) & 0x0000ffff0000ffffull;
    return (t * 10000 + (t >> 32)) & 0xffffffffull;
}
#endif

/* The run of decimal digits at q: its value modulo 2^64 in *v (0 for no
 * digit), and the first byte after it. Reads 8 bytes at a time (SWAR),
 * which reads up to 8 bytes past the digits: the buffer's padding. */
static inline __attribute__((always_inline)) const char *digits(const char *q, uint64_t *v)
{
    /* one digit (ids, devices, streams, flags: the most common number) */
    if (is_digit(q[0]) && !is_digit(q[1])) {
        *v = (uint64_t)(q[0] - '0');
        return q + 1;
    }
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    uint64_t w;
    unsigned n;
    memcpy(&w, q, 8);
    uint64_t x = swar8(w, &n);
    if (n == 0) x = 0;
    q += n;
    while (n == 8) {
        memcpy(&w, q, 8);
        uint64_t t = swar8(w, &n);
        if (n == 0) break;
        x = x * (uint64_t)pow10_i64[n] + t;
        q += n;
    }
#else
    uint64_t x = 0;
    while (is_digit(*q)) x = x * 10 + (uint64_t)(*q++ - '0');
#endif
    *v = x;
    return q;
}

/* Lexes and validates one JSON number in a single pass. *is_int is set (and
 * *ival filled) for integers of at most 18 digits. */
static inline const char *lex_number(P *p, const char *s, span *out, int64_t *ival, int *is_int)
{
    const char *q = s;
    int neg = *q == '-';
    q += neg;
    const char *d0 = q;
    uint64_t v = 0;
    q = digits(q, &v);
    size_t nd = (size_t)(q - d0);
    int integral = 1;
    if (nd == 0) goto malformed;
    if (nd > 1 && *d0 == '0') bad(p, s, "malformed number: leading zero"); /* JSON: 0 or 1-9... */
    if (*q == '.') {
        integral = 0;
        const char *f0 = ++q;
        while (is_digit(*q)) q++;
        if (q == f0) goto malformed;
    }
    if (*q == 'e' || *q == 'E') {
        integral = 0;
        q++;
        if (*q == '+' || *q == '-') q++;
        const char *e0 = q;
        while (is_digit(*q)) q++;
        if (q == e0) goto malformed;
    }
    if (*q == 0 && q >= end_of(p)) more(p); /* the number may continue */
    if (out) {
        out->s = s;
        out->n = (uint32_t)(q - s);
    }
    if (is_int) {
        *is_int = integral && nd <= 18;
        *ival = neg ? (int64_t)(0 - v) : (int64_t)v; /* wraps as before, without UB */
    }
    return q;
malformed:
    if (*q == 0 && q >= end_of(p)) more(p);
    bad(p, s, "malformed number");
    return q;
}

static inline const char *check_number(P *p, const char *s, span *out)
{
    return lex_number(p, s, out, NULL, NULL);
}

/* Parses (validating) and discards any JSON value. */
static const char *parse_value_any(P *p, const char *s, int depth)
{
    s = ws(p, s);
    if (depth > MAX_DEPTH) bad(p, s, "nesting deeper than %d levels", MAX_DEPTH);
    char c = *s;
    if (c == '"') {
        span tmp;
        size_t sn = p->sn;
        s = parse_string(p, s, &tmp);
        p->sn = sn; /* discarded: release scratch */
        return s;
    }
    if (c == '{') {
        s = ws(p, s + 1);
        if (*s == '}') return s + 1;
        for (;;) {
            s = ws(p, s);
            if (*s != '"') {
                char tmp[16];
                bad(p, s, "expected a key string, found %s", describe_at(p, s, tmp));
            }
            span k;
            size_t sn = p->sn;
            s = parse_string(p, s, &k);
            p->sn = sn;
            s = expect(p, s, ':', "':' after key");
            s = parse_value_any(p, s, depth + 1);
            s = ws(p, s);
            if (*s == ',') {
                s++;
                continue;
            }
            if (*s == '}') return s + 1;
            char tmp[16];
            bad(p, s, "expected ',' or '}' in object, found %s", describe_at(p, s, tmp));
        }
    }
    if (c == '[') {
        s = ws(p, s + 1);
        if (*s == ']') return s + 1;
        for (;;) {
            s = parse_value_any(p, s, depth + 1);
            s = ws(p, s);
            if (*s == ',') {
                s++;
                continue;
            }
            if (*s == ']') return s + 1;
            char tmp[16];
            bad(p, s, "expected ',' or ']' in array, found %s", describe_at(p, s, tmp));
        }
    }
    if (c == '-' || (c >= '0' && c <= '9')) return check_number(p, s, NULL);
    return parse_literal(p, s);
}

/* Parses a value into an arg slot: numbers and strings keep their text,
 * arrays of up to 3 integers are kept (grid/block), the rest is skipped. */
static const char *parse_arg_value(P *p, const char *s, arg *a)
{
    s = ws(p, s);
    char c = *s;
    a->arr_n = 0;
    if (c == '"') {
        a->type = V_STR;
        return parse_string(p, s, &a->val);
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
        int isint;
        a->type = V_NUM;
        const char *q = lex_number(p, s, &a->val, &a->ival, &isint);
        a->is_int = (uint8_t)isint;
        return q;
    }
    a->is_int = 0;
    if (c == '[') {
        const char *q = ws(p, s + 1);
        int n = 0, ok = 1;
        if (*q == ']') {
            a->type = V_ARR;
            return q + 1;
        }
        for (;;) {
            q = ws(p, q);
            if (ok && n < 3 && (*q == '-' || (*q >= '0' && *q <= '9'))) {
                span v;
                int64_t iv;
                int isint;
                q = lex_number(p, q, &v, &iv, &isint);
                if (isint)
                    a->arr[n++] = iv;
                else if (span_i64(v, &a->arr[n]) == 0)
                    n++;
                else
                    ok = 0;
            } else {
                ok = 0;
                q = parse_value_any(p, q, 2);
            }
            q = ws(p, q);
            if (*q == ',') {
                q++;
                continue;
            }
            if (*q == ']') break;
            char tmp[16];
            bad(p, q, "expected ',' or ']' in array, found %s", describe_at(p, q, tmp));
        }
        a->type = ok ? V_ARR : V_OTHER;
        a->arr_n = (uint8_t)(ok ? n : 0);
        return q + 1;
    }
    if (c == '{') {
        a->type = V_OTHER;
        return parse_value_any(p, s, 1);
    }
    a->type = V_LIT;
    const char *q = parse_literal(p, s);
    a->val.s = s;
    a->val.n = (uint32_t)(q - s);
    return q;
}

/* The n < 8 bytes at s as the low bytes of an integer (little-endian
 * order, as memcpy of 8 bytes gives them), the rest zero. */
static inline uint64_t head8(const char *s, size_t n)
{
    uint64_t w = 0;
    if (n >= 8) {
        memcpy(&w, s, 8);
        return w;
    }
    for (size_t i = 0; i < n; i++) w |= (uint64_t)(unsigned char)s[i] << (8 * i);
    return w;
}

/* The ARG_KEYS code of an (unescaped) argument key, or -1: a table of 256
 * slots indexed by a hash of the length and the first 8 bytes (linear
 * probing; the 24 keys leave most slots empty, so an unknown key usually
 * ends at its first slot). A slot holds the key's length and first 16 bytes
 * as two integers; longer keys compare the rest. */
#define AK_SLOTS 256
typedef struct ak_slot {
    uint64_t w0, w1;
    const char *s;
    uint8_t n, code; /* n = 0: empty */
} ak_slot;
static ak_slot ak_tab[AK_SLOTS];
static pthread_once_t ak_once = PTHREAD_ONCE_INIT;

static inline unsigned ak_hash(uint64_t w0, size_t n)
{
    return (unsigned)(((w0 ^ n) * 0x9e3779b97f4a7c15ull) >> 56);
}

static void ak_init(void)
{
#define AK_TAB(id, lit) {sizeof(lit) - 1, AK_##id, lit},
    static const struct {
        uint8_t n, code;
        const char *s;
    } keys[] = {ARG_KEYS(AK_TAB)};
#undef AK_TAB
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        size_t n = keys[i].n;
        uint64_t w0 = head8(keys[i].s, n < 8 ? n : 8);
        uint64_t w1 = n > 8 ? head8(keys[i].s + 8, n < 16 ? n - 8 : 8) : 0;
        unsigned h = ak_hash(w0, n);
        while (ak_tab[h].n) h = (h + 1) & (AK_SLOTS - 1);
        ak_tab[h] = (ak_slot){w0, w1, keys[i].s, (uint8_t)n, keys[i].code};
    }
}

/* w0, w1: the key's bytes 0-7 and 8-15 as head8 reads them (zero beyond
 * the key) */
static inline int arg_key_code_w(span k, uint64_t w0, uint64_t w1)
{
    for (unsigned h = ak_hash(w0, k.n);; h = (h + 1) & (AK_SLOTS - 1)) {
        const ak_slot *t = &ak_tab[h];
        if (!t->n) return -1;
        if (t->n == k.n && t->w0 == w0 && t->w1 == w1 &&
            (k.n <= 16 || memcmp(t->s + 16, k.s + 16, k.n - 16) == 0))
            return t->code;
    }
}

static int arg_key_code(span k)
{
    pthread_once(&ak_once, ak_init);
    uint64_t w0 = head8(k.s, k.n < 8 ? k.n : 8);
    uint64_t w1 = k.n > 8 ? head8(k.s + 8, k.n < 16 ? k.n - 8 : 8) : 0;
    return arg_key_code_w(k, w0, w1);
}

/* Parses an object of key -> value pairs into args (at most max; further
 * pairs are validated and skipped). s points at '{'. With kidx (AK_COUNT
 * entries, all -1 on entry), records the first arg of every ARG_KEYS key. */
static const char *parse_flat_object(P *p, const char *s, arg *args, int max, int *nargs,
                                     int8_t *kidx)
{
    *nargs = 0;
    s = ws(p, s + 1);
    if (*s == '}') return s + 1;
    for (;;) {
        s = ws(p, s);
        if (*s != '"') {
            char tmp[16];
            bad(p, s, "expected a key string, found %s", describe_at(p, s, tmp));
        }
        if (*nargs < max) {
            arg *a = &args[*nargs];
            s = parse_string(p, s, &a->key);
            if (kidx) {
                int c = arg_key_code(a->key);
                if (c >= 0) kidx[c] = (int8_t)*nargs; /* the last one given */
            }
            s = expect(p, s, ':', "':' after key");
            s = parse_arg_value(p, s, a);
            (*nargs)++;
        } else {
            span k;
            s = parse_string(p, s, &k);
            s = expect(p, s, ':', "':' after key");
            s = parse_value_any(p, s, 1);
        }
        s = ws(p, s);
        if (*s == ',') {
            s++;
            continue;
        }
        if (*s == '}') return s + 1;
        char tmp[16];
        bad(p, s, "expected ',' or '}' in object, found %s", describe_at(p, s, tmp));
    }
}

static inline int key_is(span k, const char *lit, size_t n)
{
    return k.n == n && memcmp(k.s, lit, n) == 0;
}
#define KEY(k, lit) key_is(k, lit, sizeof(lit) - 1)

/* ---- events --------------------------------------------------------------------------------- */

static const char *parse_time_slow(P *p, const char *s, int64_t *out, const char *what)
{
    span v;
    const char *q = check_number(p, s, &v);
    const char *e;
    int rc = gp_parse_us_to_ns(s, q, out, &e);
    if (rc == GP_ERANGE) bad(p, s, "\"%s\" out of range (%.*s)", what, (int)(q - s), s);
    if (rc || e != q) bad(p, s, "malformed number for \"%s\"", what);
    for (const char *c = s; c < q; c++)
        if (*c == '.' || *c == 'e' || *c == 'E') {
            p->t->meta.fractional_ts = 1;
            break;
        }
    return q;
}

/* The common form of a time in microseconds (an integer part below 9.2e15,
 * any fraction, no exponent) into exact ns; NULL for any other form (the
 * caller takes gp_parse_us_to_ns). Sets *fractional when there is a point.
 * Reads no further than the first byte after the number. */
static inline __attribute__((always_inline)) const char *time_fast(const char *s, int64_t *out,
                                                                   int *fractional)
{
    const char *q = s;
    int neg = *q == '-';
    q += neg;
    if (!is_digit(*q)) return NULL;
    const char *d0 = q;
    uint64_t us = 0;
    q = digits(q, &us);
    if (q - d0 > 18 || us > (uint64_t)(INT64_MAX - 999) / 1000) return NULL;
    if (*d0 == '0' && q - d0 > 1) return NULL; /* a leading zero: lex_number refuses it */
    uint64_t frac = 0;
    if (*q == '.') {
        const char *f0 = ++q;
        int k = 0;
        while (is_digit(*q)) {
            if (k < 3)
                frac = frac * 10 + (uint64_t)(*q - '0');
            else if (k == 3 && *q >= '5')
                frac++; /* half away from zero */
            k++;
            q++;
        }
        if (q == f0) return NULL;
        for (; k < 3; k++) frac *= 10;
        *fractional = 1;
    }
    if (*q == 'e' || *q == 'E') return NULL;
    int64_t v = (int64_t)(us * 1000 + frac);
    *out = neg ? -v : v;
    return q;
}

/* Parses microseconds into exact ns: time_fast, else gp_parse_us_to_ns. */
static const char *parse_time(P *p, const char *s, int64_t *out, const char *what)
{
    s = ws(p, s);
    const char *q = s + (*s == '-');
    if (!is_digit(*q)) {
        char tmp[16];
        if (*q == 0 && q >= end_of(p)) more(p);
        bad(p, s, "expected a number for \"%s\", found %s", what, describe_at(p, s, tmp));
    }
    int frac = 0;
    q = time_fast(s, out, &frac);
    if (!q) return parse_time_slow(p, s, out, what);
    if (frac && !p->t->meta.fractional_ts) p->t->meta.fractional_ts = 1;
    if (*q == 0 && q >= end_of(p)) more(p);
    return q;
}

static const char *parse_id_value(P *p, const char *s, int64_t *num, span *str, int *is_str,
                                  const char *what)
{
    s = ws(p, s);
    if (*s == '"') {
        *is_str = 1;
        s = parse_string(p, s, str);
        /* numeric strings (e.g. "7") are numbers */
        if (span_str_i64(*str, num) == 0) *is_str = 0;
        return s;
    }
    if (*s == '-' || (*s >= '0' && *s <= '9')) {
        span v;
        int isint;
        s = lex_number(p, s, &v, num, &isint);
        if (!isint && span_i64(v, num)) bad(p, v.s, "expected an integer for \"%s\"", what);
        *is_str = 0;
        return s;
    }
    char tmp[16];
    bad(p, s, "expected a number or string for \"%s\", found %s", what, describe_at(p, s, tmp));
    return s;
}

static const char *parse_str_field(P *p, const char *s, span *out, const char *what)
{
    s = ws(p, s);
    if (*s != '"') {
        char tmp[16];
        bad(p, s, "expected a string for \"%s\", found %s", what, describe_at(p, s, tmp));
    }
    return parse_string(p, s, out);
}

/* 1 when k is one of the keys parse_event reads. */
static inline int event_key_known(span k)
{
    switch (k.n) {
    case 1:
        return k.s[0] == 's';
    case 2:
        return KEY(k, "ph") || KEY(k, "ts") || KEY(k, "id") || KEY(k, "bp");
    case 3:
        return KEY(k, "cat") || KEY(k, "pid") || KEY(k, "tid") || KEY(k, "dur");
    case 4:
        return KEY(k, "name") || KEY(k, "args");
    }
    return 0;
}

/* The state of p->e before an event's keys are read. */
static inline void ev_reset(ev *e)
{
    e->ph.n = e->cat.n = e->name.n = e->bp.n = e->scope.n = 0;
    e->ph.s = e->cat.s = e->name.s = e->bp.s = e->scope.s = "";
    e->has_pid = e->has_tid = e->has_ts = e->has_dur = e->has_id = e->has_args = 0;
    e->pid = e->tid = 0;
    e->pid_s.n = e->tid_s.n = e->id_s.n = 0;
    e->nargs = 0;
    memset(e->kidx, -1, sizeof e->kidx);
}

/* s points at '{'; fills p->e. */
static const char *parse_event(P *p, const char *s)
{
    ev *e = &p->e;
    ev_reset(e);
    s = ws(p, s + 1);
    if (*s == '}') return s + 1;
    for (;;) {
        s = ws(p, s);
        if (*s != '"') {
            char tmp[16];
            bad(p, s, "expected a key string, found %s", describe_at(p, s, tmp));
        }
        span k;
        /* the keys of Kineto events, matched in place when they end with
         * their closing quote within 5 bytes (no escape possible: the
         * literals hold none); anything else takes the general path */
        k.s = s + 1;
        k.n = s[2] == '"' ? 1 : s[3] == '"' ? 2 : s[4] == '"' ? 3 : s[5] == '"' ? 4 : 0;
        if (k.n && event_key_known(k))
            s += k.n + 2;
        else
            s = parse_string(p, s, &k);
        s = expect(p, s, ':', "':' after key");
        int is_str;
        switch (k.n) {
        case 1:
            if (k.s[0] == 's')
                s = parse_str_field(p, s, &e->scope, "s");
            else
                goto skip;
            break;
        case 2:
            if (k.s[0] == 'p' && k.s[1] == 'h')
                s = parse_str_field(p, s, &e->ph, "ph");
            else if (k.s[0] == 't' && k.s[1] == 's') {
                s = parse_time(p, s, &e->ts, "ts");
                e->has_ts = 1;
            } else if (k.s[0] == 'i' && k.s[1] == 'd') {
                s = parse_id_value(p, s, &e->id, &e->id_s, &is_str, "id");
                if (is_str) e->id = (int64_t)(gp_hash_bytes(e->id_s.s, e->id_s.n) >> 1);
                e->has_id = 1;
            } else if (k.s[0] == 'b' && k.s[1] == 'p')
                s = parse_str_field(p, s, &e->bp, "bp");
            else
                goto skip;
            break;
        case 3:
            if (KEY(k, "cat"))
                s = parse_str_field(p, s, &e->cat, "cat");
            else if (KEY(k, "pid")) {
                s = parse_id_value(p, s, &e->pid, &e->pid_s, &is_str, "pid");
                if (!is_str) e->pid_s.n = 0;
                e->has_pid = 1;
            } else if (KEY(k, "tid")) {
                s = parse_id_value(p, s, &e->tid, &e->tid_s, &is_str, "tid");
                if (!is_str) e->tid_s.n = 0;
                e->has_tid = 1;
            } else if (KEY(k, "dur")) {
                s = parse_time(p, s, &e->dur, "dur");
                e->has_dur = 1;
            } else
                goto skip;
            break;
        case 4:
            if (KEY(k, "name"))
                s = parse_str_field(p, s, &e->name, "name");
            else if (KEY(k, "args")) {
                s = ws(p, s);
                if (*s != '{') {
                    char tmp[16];
                    bad(p, s, "expected an object for \"args\", found %s", describe_at(p, s, tmp));
                }
                const char *a0 = s;
                s = parse_flat_object(p, s, e->args, MAX_ARGS, &e->nargs, e->kidx);
                e->has_args = 1;
                e->args_txt.s = a0;
                e->args_txt.n = (uint32_t)(s - a0);
            } else
                goto skip;
            break;
        default:
        skip:
            s = parse_value_any(p, s, 1);
        }
        s = ws(p, s);
        if (*s == ',') {
            s++;
            continue;
        }
        if (*s == '}') return s + 1;
        char tmp[16];
        bad(p, s, "expected ',' or '}' in event, found %s", describe_at(p, s, tmp));
    }
}

/* ---- the speculative fast path for events -------------------------------------------------
 * fast_event reads the events that Kineto and most writers produce (the
 * keys parse_event reads, each once, in any order; string values without
 * escapes; integers of at most 18 digits; times in their common form;
 * "args" of strings, numbers without exponent and arrays of up to 3
 * integers) and fills p->e exactly as parse_event would. At the first byte
 * it does not expect (anything else, a deviation, an error, the end of the
 * buffer: the zero padding never matches) it returns NULL and the event is
 * parsed again from its start by parse_event, which gives every error and
 * asks for more bytes. It never reports, never jumps and never uses the
 * scratch area, so falling back leaves nothing to undo (p->e is reset by
 * parse_event). */

/* skips JSON whitespace; stops at anything else (the padding's NUL too) */
static inline __attribute__((always_inline)) const char *fws(const char *s)
{
    if ((unsigned char)*s > ' ') return s;
    if (*s == ' ' && (unsigned char)s[1] > ' ') return s + 1; /* ", " and ": " */
    return ws_run(s);
}

/* a string without escapes at s (its opening quote), or NULL */
static inline __attribute__((always_inline)) const char *fast_str(P *p, const char *s, span *out)
{
    if (*s != '"') return NULL;
    const char *q = scan_str(p, s + 1);
    if (*q != '"') return NULL;
    out->s = s + 1;
    out->n = (uint32_t)(q - s - 1);
    return q + 1;
}

/* an integer of 1-18 digits (lex_number's is_int case; a fraction or an
 * exponent is left to the general path), or NULL */
static inline __attribute__((always_inline)) const char *fast_int(const char *s, int64_t *out)
{
    int neg = *s == '-';
    const char *d0 = s + neg;
    uint64_t v = 0;
    const char *q = digits(d0, &v);
    if (q == d0 || q - d0 > 18 || *q == '.' || *q == 'e' || *q == 'E') return NULL;
    if (*d0 == '0' && q - d0 > 1) return NULL; /* a leading zero: the general path refuses it */
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return q;
}

/* the low n bytes of the 8 at s (n <= 8; reads 8: the padding) */
static inline __attribute__((always_inline)) uint64_t load_head(const char *s, size_t n)
{
    uint64_t w;
    memcpy(&w, s, 8);
    return n >= 8 ? w : w & ((1ull << (8 * n)) - 1);
}

/* "args" at s ('{') into e (parse_flat_object with kidx), or NULL */
static const char *fast_args(P *p, const char *s, ev *e)
{
    const char *a0 = s;
    int n = 0;
    s = fws(s + 1);
    if (*s != '}')
        for (;;) {
            if (*s != '"' || n >= MAX_ARGS) return NULL;
            arg *a = &e->args[n];
            const char *q = scan_str(p, s + 1);
            if (*q != '"') return NULL;
            a->key.s = s + 1;
            a->key.n = (uint32_t)(q - s - 1);
            const char *cv = q + 1; /* usually ": " and the value */
            size_t kn = a->key.n;
            int c = arg_key_code_w(a->key, load_head(a->key.s, kn < 8 ? kn : 8),
                                   kn > 8 ? load_head(a->key.s + 8, kn < 16 ? kn - 8 : 8) : 0);
            if (c >= 0) e->kidx[c] = (int8_t)n; /* the last one given */
            if (cv[0] == ':' && cv[1] == ' ' && (unsigned char)cv[2] > ' ')
                s = cv + 2;
            else {
                s = fws(cv);
                if (*s != ':') return NULL;
                s = fws(s + 1);
            }
            a->arr_n = 0;
            char ch = *s;
            if (ch == '"') {
                a->type = V_STR;
                if (!(s = fast_str(p, s, &a->val))) return NULL;
            } else if (is_digit(ch) || ch == '-') {
                /* lex_number without the exponent */
                int neg = ch == '-';
                const char *d0 = s + neg;
                uint64_t v = 0;
                q = digits(d0, &v);
                size_t nd = (size_t)(q - d0);
                if (nd == 0 || (nd > 1 && *d0 == '0')) return NULL; /* leading zero: refused */
                int integral = 1;
                if (*q == '.') {
                    integral = 0;
                    const char *f0 = ++q;
                    while (is_digit(*q)) q++;
                    if (q == f0) return NULL;
                }
                if (*q == 'e' || *q == 'E') return NULL;
                a->type = V_NUM;
                a->val.s = s;
                a->val.n = (uint32_t)(q - s);
                a->is_int = (uint8_t)(integral && nd <= 18);
                a->ival = neg ? (int64_t)(0 - v) : (int64_t)v;
                s = q;
            } else if (ch == '[') {
                int k = 0;
                q = fws(s + 1);
                if (*q != ']')
                    for (;;) {
                        if (k >= 3 || !(q = fast_int(q, &a->arr[k]))) return NULL;
                        k++;
                        q = fws(q);
                        if (*q == ',') {
                            q = fws(q + 1);
                            continue;
                        }
                        if (*q == ']') break;
                        return NULL;
                    }
                a->type = V_ARR;
                a->is_int = 0;
                a->arr_n = (uint8_t)k;
                s = q + 1;
            } else
                return NULL;
            n++;
            if (s[0] == ',' && s[1] == ' ' && s[2] == '"') { /* the usual ", " */
                s += 2;
                continue;
            }
            s = fws(s);
            if (*s == ',') {
                s = fws(s + 1);
                continue;
            }
            if (*s == '}') break;
            return NULL;
        }
    e->nargs = n;
    e->has_args = 1;
    e->args_txt.s = a0;
    e->args_txt.n = (uint32_t)(s + 1 - a0);
    return s + 1;
}

/* little-endian bytes of a quoted key as one integer: K4('"', 'p', 'h', '"') */
#define KB(c, i)             ((uint64_t)(unsigned char)(c) << (8 * (i)))
#define K3(a, b, c)          (KB(a, 0) | KB(b, 1) | KB(c, 2))
#define K4(a, b, c, d)       (K3(a, b, c) | KB(d, 3))
#define K5(a, b, c, d, e)    (K4(a, b, c, d) | KB(e, 4))
#define K6(a, b, c, d, e, f) (K5(a, b, c, d, e) | KB(f, 5))
#define M(n)                 ((1ull << (8 * (n))) - 1)

enum { F_PH, F_CAT, F_NAME, F_PID, F_TID, F_TS, F_DUR, F_ARGS, F_ID, F_S, F_BP };

/* The n <= 8 bytes of a literal as one little-endian integer (folded to a
 * constant for a literal argument). */
static inline __attribute__((always_inline)) uint64_t lit_word(const char *lit, size_t n)
{
    uint64_t w = 0;
#pragma GCC unroll 8
    for (size_t i = 0; i < 8; i++)
        if (i < n) w |= (uint64_t)(unsigned char)lit[i] << (8 * i);
    return w;
}

/* 1 when the n <= 8 bytes at s are lit's (one load and compare: s has 8
 * readable bytes, as everywhere on the fast path; a call to memcmp for the
 * 5-7 byte keys cost a call per key) */
static inline __attribute__((always_inline)) int lit_eq(const char *s, const char *lit, size_t n)
{
    return load_head(s, n) == lit_word(lit, n);
}

/* After a value at s: ',' then the key literal lit (its quotes and the
 * colon, n bytes), whitespace anywhere between; the value's start, or NULL. */
static inline __attribute__((always_inline)) const char *next_key(const char *s, const char *lit,
                                                                  size_t n)
{
    if (s[0] == ',' && s[1] == ' ' && lit_eq(s + 2, lit, n)) return fws(s + 2 + n); /* ", " */
    s = fws(s);
    if (*s != ',') return NULL;
    s = fws(s + 1);
    if (!lit_eq(s, lit, n)) return NULL;
    return fws(s + n);
}
#define NEXT_KEY(s, lit) next_key(s, lit, sizeof(lit) - 1)

/* The keys of Kineto's complete, instant and flow events in the order
 * Kineto writes them: {"ph": "X", "cat": "..", ["s": "..",] "name": "..",
 * "pid": N, "tid": N, "ts": T, ["dur": T,] ["args": {..}]} and flows below
 * (any whitespace between the tokens, none between a key and its colon).
 * NULL at the first difference: fast_event then reads the keys one by one. */
static inline const char *fast_kineto(P *p, const char *s)
{
    ev *e = &p->e;
    const char *t;
    s = fws(s + 1);
    if (!lit_eq(s, "\"ph\":", 5)) return NULL;
    s = fws(s + 5);
    char ph = s[1];
    if (s[0] != '"' || s[2] != '"' || ph == '"' || ph == '\\' || (unsigned char)ph < 0x20)
        return NULL;
    ev_reset(e);
    e->ph.s = s + 1;
    e->ph.n = 1;
    int frac = 0;
    if (!(t = NEXT_KEY(s + 3, "\"cat\":"))) {
        /* flows: {"ph": "f", "id": N, "pid": N, "tid": N, "ts": T, "cat": "..",
         * "name": "..", ["bp": ".."]} */
        if (!(t = NEXT_KEY(s + 3, "\"id\":")) || !(s = fast_int(t, &e->id))) return NULL;
        if (!(t = NEXT_KEY(s, "\"pid\":")) || !(s = fast_int(t, &e->pid))) return NULL;
        if (!(t = NEXT_KEY(s, "\"tid\":")) || !(s = fast_int(t, &e->tid))) return NULL;
        if (!(t = NEXT_KEY(s, "\"ts\":")) || !(s = time_fast(t, &e->ts, &frac))) return NULL;
        if (!(t = NEXT_KEY(s, "\"cat\":")) || !(s = fast_str(p, t, &e->cat))) return NULL;
        if (!(t = NEXT_KEY(s, "\"name\":")) || !(s = fast_str(p, t, &e->name))) return NULL;
        if ((t = NEXT_KEY(s, "\"bp\":")) && !(s = fast_str(p, t, &e->bp))) return NULL;
        e->has_id = e->has_pid = e->has_tid = e->has_ts = 1;
        s = fws(s);
        if (*s != '}') return NULL;
        if (frac && !p->t->meta.fractional_ts) p->t->meta.fractional_ts = 1;
        return s + 1;
    }
    if (!(s = fast_str(p, t, &e->cat))) return NULL;
    if ((t = NEXT_KEY(s, "\"s\":")) && !(s = fast_str(p, t, &e->scope))) return NULL;
    if (!(t = NEXT_KEY(s, "\"name\":")) || !(s = fast_str(p, t, &e->name))) return NULL;
    if (!(t = NEXT_KEY(s, "\"pid\":")) || !(s = fast_int(t, &e->pid))) return NULL;
    if (!(t = NEXT_KEY(s, "\"tid\":")) || !(s = fast_int(t, &e->tid))) return NULL;
    if (!(t = NEXT_KEY(s, "\"ts\":")) || !(s = time_fast(t, &e->ts, &frac))) return NULL;
    e->has_pid = e->has_tid = e->has_ts = 1;
    if ((t = NEXT_KEY(s, "\"dur\":"))) {
        if (!(s = time_fast(t, &e->dur, &frac))) return NULL;
        e->has_dur = 1;
    }
    if ((t = NEXT_KEY(s, "\"args\":")) && (*t != '{' || !(s = fast_args(p, t, e)))) return NULL;
    s = fws(s);
    if (*s != '}') return NULL;
    if (frac && !p->t->meta.fractional_ts) p->t->meta.fractional_ts = 1;
    return s + 1;
}
#undef NEXT_KEY

/* s points at '{'; fills p->e as parse_event would and returns the event's
 * end, or NULL (see above). */
static const char *fast_event(P *p, const char *s)
{
    const char *k = fast_kineto(p, s);
    if (k) return k;
    ev *e = &p->e;
    ev_reset(e);
    unsigned seen = 0;
    int frac = 0;
    s = fws(s + 1);
    for (;;) {
        if (*s != '"') return NULL;
        uint64_t w;
        memcpy(&w, s, 8);
        int f;
        switch (s[1]) {
        case 'p':
            if ((w & M(4)) == K4('"', 'p', 'h', '"'))
                f = F_PH, s += 4;
            else if ((w & M(5)) == K5('"', 'p', 'i', 'd', '"'))
                f = F_PID, s += 5;
            else
                return NULL;
            break;
        case 'c':
            if ((w & M(5)) != K5('"', 'c', 'a', 't', '"')) return NULL;
            f = F_CAT, s += 5;
            break;
        case 'n':
            if ((w & M(6)) != K6('"', 'n', 'a', 'm', 'e', '"')) return NULL;
            f = F_NAME, s += 6;
            break;
        case 't':
            if ((w & M(4)) == K4('"', 't', 's', '"'))
                f = F_TS, s += 4;
            else if ((w & M(5)) == K5('"', 't', 'i', 'd', '"'))
                f = F_TID, s += 5;
            else
                return NULL;
            break;
        case 'd':
            if ((w & M(5)) != K5('"', 'd', 'u', 'r', '"')) return NULL;
            f = F_DUR, s += 5;
            break;
        case 'a':
            if ((w & M(6)) != K6('"', 'a', 'r', 'g', 's', '"')) return NULL;
            f = F_ARGS, s += 6;
            break;
        case 'i':
            if ((w & M(4)) != K4('"', 'i', 'd', '"')) return NULL;
            f = F_ID, s += 4;
            break;
        case 's':
            if ((w & M(3)) != K3('"', 's', '"')) return NULL;
            f = F_S, s += 3;
            break;
        case 'b':
            if ((w & M(4)) != K4('"', 'b', 'p', '"')) return NULL;
            f = F_BP, s += 4;
            break;
        default:
            return NULL;
        }
        if (seen & (1u << f)) return NULL; /* a repeated key: the general path */
        seen |= 1u << f;
        s = fws(s);
        if (*s != ':') return NULL;
        s = fws(s + 1);
        switch (f) {
        case F_PH:
            s = fast_str(p, s, &e->ph);
            break;
        case F_CAT:
            s = fast_str(p, s, &e->cat);
            break;
        case F_NAME:
            s = fast_str(p, s, &e->name);
            break;
        case F_S:
            s = fast_str(p, s, &e->scope);
            break;
        case F_BP:
            s = fast_str(p, s, &e->bp);
            break;
        case F_PID:
            s = fast_int(s, &e->pid);
            e->has_pid = 1;
            break;
        case F_TID:
            s = fast_int(s, &e->tid);
            e->has_tid = 1;
            break;
        case F_ID:
            s = fast_int(s, &e->id);
            e->has_id = 1;
            break;
        case F_TS:
            s = time_fast(s, &e->ts, &frac);
            e->has_ts = 1;
            break;
        case F_DUR:
            s = time_fast(s, &e->dur, &frac);
            e->has_dur = 1;
            break;
        default: /* F_ARGS */
            if (*s != '{') return NULL;
            s = fast_args(p, s, e);
            break;
        }
        if (!s) return NULL;
        s = fws(s);
        if (*s == ',') {
            s = fws(s + 1);
            continue;
        }
        if (*s == '}') break;
        return NULL;
    }
    if (frac && !p->t->meta.fractional_ts) p->t->meta.fractional_ts = 1;
    return s + 1;
}
#undef KB
#undef K3
#undef K4
#undef K5
#undef K6
#undef M

static void oom(P *p)
{
    snprintf(p->errmsg, sizeof p->errmsg, "out of memory");
    p->err_at = NULL;
    p->err_code = GP_ENOMEM;
    longjmp(p->jb, JMP_ERR);
}

/* Interns s. A direct-mapped cache in front of the string table, indexed by
 * the length and the first and last 8 bytes, finds a repeated name (most
 * events repeat one of a few hundred) with one compare instead of hashing
 * the whole string and probing. */
static uint32_t str_id(P *p, span s)
{
    uint64_t a = 0, b = 0;
    if (s.n >= 8) {
        memcpy(&a, s.s, 8);
        memcpy(&b, s.s + s.n - 8, 8);
    } else
        a = head8(s.s, s.n);
    uint64_t h = (a * 0x9e3779b97f4a7c15ull) ^ (b * 0xc2b2ae3d27d4eb4full) ^ s.n;
    name_slot *e = &p->names[(h ^ h >> 29) & (NAME_CACHE - 1)];
    /* the first and last 8 bytes cover a string of up to 16 */
    if (e->str && e->n == s.n && e->a == a && e->b == b &&
        (s.n <= 16 || memcmp(e->str + 8, s.s + 8, s.n - 16) == 0))
        return e->id;
    uint32_t id = gp_trace_str(p->t, s.s, s.n);
    if (id == GP_NO_INDEX) oom(p);
    e->str = gp_trace_s(p->t, id);
    e->n = s.n;
    e->id = id;
    e->a = a;
    e->b = b;
    return id;
}

/* the n <= 8 bytes at s as head8 reads them, reading 8 when n > 0 (s is in
 * the buffer or the scratch area: both have 8 bytes to spare after any
 * string; an empty span may be the literal "" of ev_reset) */
static inline uint64_t head8_padded(const char *s, size_t n)
{
    if (!n) return 0;
    uint64_t w;
    memcpy(&w, s, 8);
    return n >= 8 ? w : w & ((1ull << (8 * n)) - 1);
}

static uint16_t cat_id(P *p, span s)
{
    /* a direct-mapped cache of the categories seen, by the length and the
     * first 16 bytes as two integers (s is in the buffer or the scratch
     * area: 8 bytes to spare after it) */
    uint64_t a = head8_padded(s.s, s.n < 8 ? s.n : 8);
    uint64_t b = s.n > 8 ? head8_padded(s.s + 8, s.n < 16 ? s.n - 8 : 8) : 0;
    uint64_t h = (a * 0x9e3779b97f4a7c15ull) ^ b ^ s.n;
    struct cat_slot *c = &p->cat_cache[(h ^ h >> 29 ^ h >> 47) & (CAT_CACHE - 1)];
    if (c->str && c->n == s.n && c->a == a && c->b == b &&
        (s.n <= 16 || memcmp(s.s + 16, c->str + 16, s.n - 16) == 0))
        return c->cat;
    /* the category of an interned name (from the name cache), else a new one */
    uint32_t sid = str_id(p, s), k = GP_NO_INDEX;
    for (size_t i = 0; i < p->t->cats.n; i++)
        if (p->t->cats.v[i].name == sid) {
            k = (uint32_t)i;
            break;
        }
    if (k == GP_NO_INDEX) k = gp_trace_category(p->t, s.s, s.n);
    if (k == GP_NO_INDEX) oom(p);
    /* remember the interned copy (stable), not the buffer bytes */
    *c = (struct cat_slot){gp_trace_s(p->t, p->t->cats.v[k].name), s.n, (uint16_t)k, a, b};
    return (uint16_t)k;
}

static uint32_t track_of(P *p, const ev *e)
{
    /* numeric pid and tid (the usual case) through a small direct-mapped
     * cache of pairs already seen */
    struct track_slot *c = NULL;
    if (!e->pid_s.n && !e->tid_s.n) {
        /* consecutive events are mostly of one thread: the previous pair
         * first, then the cache */
        c = p->track_last;
        if (c && c->pid == e->pid && c->tid == e->tid) return c->track;
        uint64_t h = ((uint64_t)e->pid * 0x9e3779b97f4a7c15ull) ^ (uint64_t)e->tid;
        c = &p->tracks[(h ^ h >> 32 ^ h >> 8) & 15];
        if (c->used && c->pid == e->pid && c->tid == e->tid) return (p->track_last = c)->track;
    }
    uint32_t ps = e->pid_s.n ? str_id(p, e->pid_s) : 0;
    uint32_t ts = e->tid_s.n ? str_id(p, e->tid_s) : 0;
    uint32_t k = gp_trace_track(p->t, e->pid, e->tid, ps, ts);
    if (k == GP_NO_INDEX) oom(p);
    if (c) {
        *c = (struct track_slot){e->pid, e->tid, k, 1};
        p->track_last = c;
    }
    return k;
}

/* The first arg of an event with ARG_KEYS key AK_x, or NULL. */
static inline const arg *find_arg(const ev *e, int code)
{
    int i = e->kidx[code];
    return i >= 0 ? &e->args[i] : NULL;
}
#define ARG(e, id) find_arg(e, AK_##id)

static int arg_i64(const arg *a, int64_t *v)
{
    if (!a) return -1;
    if (a->type == V_NUM) {
        if (a->is_int) {
            *v = a->ival;
            return 0;
        }
        return span_i64(a->val, v);
    }
    if (a->type == V_STR) return span_str_i64(a->val, v);
    return -1;
}

static inline int64_t arg_i64_or(const ev *e, int code, int64_t dflt)
{
    int64_t v;
    const arg *a = find_arg(e, code);
    if (a && a->type == V_NUM && a->is_int) return a->ival;
    return arg_i64(a, &v) == 0 ? v : dflt;
}
#define ARG_I64(e, id, d) arg_i64_or(e, AK_##id, d)

static float arg_f32(const ev *e, int code)
{
    const arg *a = find_arg(e, code);
    if (!a || a->type != V_NUM) return NAN;
    return (float)span_f64(a->val);
}

static void fill_gpu_info(P *p, const ev *e, gp_slice *sl, gp_kind kind, uint32_t track)
{
    gp_gpu_info g;
    memset(&g, 0, sizeof g);
    g.device = (int32_t)ARG_I64(e, DEVICE, e->pid);
    g.context = (int32_t)ARG_I64(e, CONTEXT, GP_NONE);
    g.stream = ARG_I64(e, STREAM, e->tid);
    const arg *grid = ARG(e, GRID), *block = ARG(e, BLOCK);
    if (grid && grid->type == V_ARR)
        for (int i = 0; i < grid->arr_n; i++) g.grid[i] = (int32_t)grid->arr[i];
    if (block && block->type == V_ARR)
        for (int i = 0; i < block->arr_n; i++) g.block[i] = (int32_t)block->arr[i];
    g.registers = (int32_t)ARG_I64(e, REGISTERS, GP_NONE);
    g.shared_mem = (int32_t)ARG_I64(e, SHARED_MEM, GP_NONE);
    g.blocks_per_sm = arg_f32(e, AK_BLOCKS_PER_SM);
    g.warps_per_sm = arg_f32(e, AK_WARPS_PER_SM);
    /* Kineto writes 0 when it did not compute the occupancy (e.g. kernels
     * with more than 48 KB of shared memory): a kernel that ran had some
     * occupancy, so 0 is unknown, never 0 % (docs/trace-import.md) */
    g.occupancy_pct = arg_f32(e, AK_OCCUPANCY);
    if (g.occupancy_pct == 0.0f) g.occupancy_pct = NAN;
    g.bytes = ARG_I64(e, BYTES, GP_NONE);
    if (kind == GP_K_MEMCPY || kind == GP_K_MEMSET) {
        const char *nm = gp_trace_s(p->t, sl->name);
        g.copy_kind = (uint8_t)(kind == GP_K_MEMSET ? GP_COPY_MEMSET : gp_copy_kind_from_name(nm));
        const char *lp = strchr(nm, '(');
        if (lp) {
            static const char *const mk[] = {"",       "Pageable", "Pinned",
                                             "Device", "Managed",  "Array"};
            const char *arrow = strstr(lp, "->");
            for (int i = 1; i < 6; i++) {
                const char *f = strstr(lp, mk[i]);
                if (f && (!arrow || f < arrow)) g.src_kind = (uint8_t)i;
                if (arrow && strstr(arrow, mk[i])) g.dst_kind = (uint8_t)i;
            }
        }
    }
    if (GP_VEC_PUSH(p->t->gpu_info, g)) oom(p);
    sl->gpu = (uint32_t)(p->t->gpu_info.n - 1);
    gp_track *tk = &p->t->tracks.v[track];
    if (tk->type != GP_TRACK_GPU) {
        tk->type = GP_TRACK_GPU;
        tk->device = g.device;
        tk->stream = g.stream;
    }
}

static be_stack *stack_for(P *p, uint32_t track)
{
    for (size_t i = 0; i < p->stacks.n; i++)
        if (p->stacks.v[i].track == track) return &p->stacks.v[i];
    be_stack st;
    memset(&st, 0, sizeof st);
    st.track = track;
    if (GP_VEC_PUSH(p->stacks, st)) oom(p);
    return &p->stacks.v[p->stacks.n - 1];
}

/* Reads libgpuprof per-entry metrics (the keys gp_entry_sum_json writes)
 * from an args list into *m; 1 when present ("gpu_timers" is always written
 * with them). */
static int entry_keys(const arg *a, int n, gp_entry_sum *m)
{
    int has = 0;
    for (int i = 0; i < n; i++) {
        int64_t v;
        span k = a[i].key;
        if (k.n < 5 || arg_i64(&a[i], &v) != 0 || v < 0) continue;
        if (KEY(k, "gpu_timers")) {
            m->timers = (uint64_t)v;
            has = 1;
        } else if (KEY(k, "gpu_ns")) {
            m->gpu_ns = v;
        } else if (KEY(k, "xfers")) {
            m->xfers = (uint64_t)v;
        } else if (KEY(k, "xfer_ns")) {
            m->xfer_ns = v;
        } else if (KEY(k, "xfer_bytes")) {
            m->xfer_bytes = v;
        } else if (KEY(k, "allocs")) {
            m->allocs = (uint64_t)v;
        } else if (KEY(k, "alloc_bytes")) {
            m->alloc_bytes = v;
        } else if (KEY(k, "frees")) {
            m->frees = (uint64_t)v;
        } else if (KEY(k, "freed_bytes")) {
            m->freed_bytes = v;
        } else if (KEY(k, "peak_bytes")) {
            m->peak_bytes = v;
        }
    }
    return has && (m->timers || m->allocs || m->frees);
}

static int entry_args(const ev *e, gp_entry_sum *m)
{
    if (!ARG(e, GPU_TIMERS)) return 0;
    return entry_keys(e->args, e->nargs, m);
}

/* an "E" event whose time less its "B"'s does not fit int64 ns */
#define BE_RANGE "\"E\" event out of range of its \"B\" (the duration does not fit int64 ns)"

static void push_slice(P *p, gp_slice *sl, const char *at)
{
    if (sl->dur < 0) bad(p, at, "negative \"dur\" (%lld ns)", (long long)sl->dur);
    int64_t endt;
    if (__builtin_add_overflow(sl->ts, sl->dur, &endt)) bad(p, at, "\"ts\" + \"dur\" out of range");
    if (GP_VEC_PUSH(p->t->slices, *sl)) oom(p);
}

/* Keeps the args of the event just committed as gp_import_opts.keep_args
 * asks: their text, or where they lie in the source (trace/args_source.h). */
static void keep_args(P *p, int instant, uint32_t owner, const ev *e)
{
    int rc =
        p->keep_args == GP_ARGS_TEXT
            ? gp_trace_add_args(p->t, instant, owner, e->args_txt.s, e->args_txt.n)
            : gp_trace_add_args_at(p->t, instant, owner,
                                   p->base_off + (uint64_t)(e->args_txt.s - p->buf), e->args_txt.n);
    if (rc) oom(p);
}

static void commit_metadata(P *p, const ev *e)
{
    const arg *a;
    if (KEY(e->name, "thread_name")) {
        a = ARG(e, NAME);
        if (a && a->type == V_STR) {
            uint32_t tk = track_of(p, e);
            p->t->tracks.v[tk].name = str_id(p, a->val);
        }
    } else if (KEY(e->name, "process_name")) {
        a = ARG(e, NAME);
        if (a && a->type == V_STR && !e->pid_s.n)
            if (gp_u64map_put(&p->pid_names, (uint64_t)e->pid, str_id(p, a->val))) oom(p);
    } else if (KEY(e->name, "process_labels")) {
        a = ARG(e, LABELS);
        if (a && a->type == V_STR && a->val.n > 4 && memcmp(a->val.s, "GPU ", 4) == 0 &&
            !e->pid_s.n) {
            span num = {a->val.s + 4, a->val.n - 4};
            int64_t dev;
            if (span_i64(num, &dev) == 0)
                if (gp_u64map_put(&p->pid_gpu, (uint64_t)e->pid, (uint64_t)dev)) oom(p);
        }
    }
}

static void commit_counter(P *p, const ev *e, uint32_t track)
{
    for (int i = 0; i < e->nargs; i++) {
        const arg *a = &e->args[i];
        if (a->type != V_NUM) continue;
        double v = span_f64(a->val);
        if (!isfinite(v)) continue;
        /* series name: "name" for a single "value" key, else "name.key" */
        char tmp[512];
        span nm = e->name;
        if (!(KEY(a->key, "value") ||
              (a->key.n == e->name.n && memcmp(a->key.s, e->name.s, e->name.n) == 0))) {
            int k = snprintf(tmp, sizeof tmp, "%.*s.%.*s", (int)e->name.n, e->name.s, (int)a->key.n,
                             a->key.s);
            nm.s = tmp;
            nm.n = (uint32_t)(k < (int)sizeof tmp ? k : (int)sizeof tmp - 1);
        }
        uint32_t sid = str_id(p, nm);
        uint32_t series = GP_NO_INDEX;
        for (size_t j = p->t->series.n; j-- > 0;)
            if (p->t->series.v[j].name == sid && p->t->series.v[j].track == track) {
                series = (uint32_t)j;
                break;
            }
        if (series == GP_NO_INDEX) {
            gp_series sr = {sid, track};
            if (GP_VEC_PUSH(p->t->series, sr)) oom(p);
            series = (uint32_t)(p->t->series.n - 1);
        }
        gp_counter_sample c = {e->ts, v, series};
        if (GP_VEC_PUSH(p->t->counters, c)) oom(p);
    }
}

static void commit_event(P *p, const char *at)
{
    ev *e = &p->e;
    gp_trace *t = p->t;
    t->meta.events_read++;
    if (e->ph.n != 1) {
        if (e->ph.n == 0) bad(p, at, "event without \"ph\"");
        return; /* unknown multi-letter phase: ignored */
    }
    char ph = e->ph.s[0];
    if (ph == 'M') {
        commit_metadata(p, e);
        return;
    }
    if (!(ph == 'X' || ph == 'B' || ph == 'E' || ph == 'i' || ph == 'I' || ph == 'C' || ph == 's' ||
          ph == 't' || ph == 'f'))
        return; /* async, sample, object events: not modelled */
    if (!e->has_ts) bad(p, at, "event without \"ts\"");
    uint32_t track = track_of(p, e);
    switch (ph) {
    case 'X': {
        if (!e->has_dur) {
            t->meta.events_dropped_no_dur++;
            return;
        }
        gp_slice sl;
        sl.ts = e->ts;
        sl.dur = e->dur;
        sl.name = str_id(p, e->name);
        sl.track = track;
        sl.cat = cat_id(p, e->cat);
        sl.flags = 0;
        sl.gpu = GP_NO_INDEX;
        sl.correlation = GP_NONE;
        sl.external_id = GP_NONE;
        if (e->nargs) {
            sl.correlation = ARG_I64(e, CORRELATION, GP_NONE);
            sl.external_id = ARG_I64(e, EXTERNAL_ID, GP_NONE);
            if (sl.external_id == GP_NONE) sl.external_id = ARG_I64(e, EXTERNAL_ID_LC, GP_NONE);
        }
        gp_kind kind = (gp_kind)t->cats.v[sl.cat].kind;
        if (kind == GP_K_KERNEL || kind == GP_K_MEMCPY || kind == GP_K_MEMSET ||
            kind == GP_K_SYNC || kind == GP_K_CL_COMMAND)
            fill_gpu_info(p, e, &sl, kind, track);
        else if (kind == GP_K_GPU_ANNOTATION && t->tracks.v[track].type != GP_TRACK_GPU) {
            t->tracks.v[track].type = GP_TRACK_GPU;
            t->tracks.v[track].device = (int32_t)e->pid;
            t->tracks.v[track].stream = e->tid;
        }
        int has_em = 0;
        gp_entry_metrics em = {0};
        int64_t inl = 0;
        if (kind == GP_K_RANGE && e->nargs) {
            const arg *da = ARG(e, DEVICE);
            if (da && da->type == V_STR && KEY(da->val, "gpu")) sl.flags |= GP_SLICE_DEV_GPU;
            if (da && da->type == V_STR && KEY(da->val, "cpu")) sl.flags |= GP_SLICE_DEV_CPU;
            has_em = entry_args(e, &em.m);     /* libgpuprof per-entry metrics */
            inl = ARG_I64(e, INLINE_CHILD, 0); /* children aggregated inline */
            if (inl > sl.dur) inl = sl.dur;
        }
        if (sl.gpu == GP_NO_INDEX && e->nargs) {
            const arg *sa = ARG(e, STREAM);
            int64_t sv;
            if (sa && sa->type == V_NUM && span_i64(sa->val, &sv) == 0) {
                gp_arg_stream as = {(uint32_t)t->slices.n, sv};
                if (GP_VEC_PUSH(t->arg_streams, as)) oom(p);
            }
        }
        push_slice(p, &sl, at);
        if (has_em) {
            em.slice = (uint32_t)(t->slices.n - 1);
            if (GP_VEC_PUSH(t->entry_metrics, em)) oom(p);
        }
        if (inl > 0) {
            gp_inline_child ic = {(uint32_t)(t->slices.n - 1), inl};
            if (GP_VEC_PUSH(t->inline_children, ic)) oom(p);
        }
        if (p->keep_args && e->has_args) keep_args(p, 0, (uint32_t)(t->slices.n - 1), e);
        return;
    }
    case 'B': {
        be_stack *st = stack_for(p, track);
        be_frame f = {e->ts, str_id(p, e->name), cat_id(p, e->cat),
                      ARG_I64(e, CORRELATION, GP_NONE), ARG_I64(e, EXTERNAL_ID, GP_NONE)};
        if (GP_VEC_PUSH(st->f, f)) oom(p);
        return;
    }
    case 'E': {
        be_stack *st = stack_for(p, track);
        if (st->f.n == 0) {
            if (p->split_part) {
                /* a later part of a split import: the B may be in an earlier part */
                struct pending_e pe = {track, (uint32_t)t->slices.n, e->ts,
                                       p->base_off + (uint64_t)(at - p->buf)};
                if (GP_VEC_PUSH(p->pending_e, pe)) oom(p);
                return;
            }
            t->meta.unmatched_end++;
            return;
        }
        be_frame f = st->f.v[--st->f.n];
        gp_slice sl = {f.ts,  0,           f.correlation, f.external_id,   f.name,
                       track, GP_NO_INDEX, f.cat,         GP_SLICE_FROM_BE};
        if (__builtin_sub_overflow(e->ts, f.ts, &sl.dur)) bad(p, at, BE_RANGE);
        if (sl.dur < 0) bad(p, at, "\"E\" event earlier than its \"B\"");
        push_slice(p, &sl, at);
        return;
    }
    case 'i':
    case 'I': {
        if (KEY(e->name, "[memory]")) {
            gp_mem_event m;
            m.ts = e->ts;
            m.addr = (uint64_t)ARG_I64(e, MEM_ADDR, 0);
            m.bytes = ARG_I64(e, MEM_BYTES, 0);
            m.total_allocated = ARG_I64(e, MEM_TOTAL_ALLOC, GP_NONE);
            m.total_reserved = ARG_I64(e, MEM_TOTAL_RES, GP_NONE);
            m.track = track;
            m.device_type = (int16_t)ARG_I64(e, MEM_DEV_TYPE, GP_NONE);
            m.device_id = (int16_t)ARG_I64(e, MEM_DEV_ID, GP_NONE);
            if (GP_VEC_PUSH(t->mem_events, m)) oom(p);
            return;
        }
        gp_instant in = {e->ts, str_id(p, e->name), track, cat_id(p, e->cat),
                         e->scope.n ? e->scope.s[0] : 't'};
        if (GP_VEC_PUSH(t->instants, in)) oom(p);
        if (p->keep_args && e->has_args) keep_args(p, 1, (uint32_t)(t->instants.n - 1), e);
        return;
    }
    case 'C':
        commit_counter(p, e, track);
        return;
    default: { /* flows */
        gp_flow f = {e->ts,
                     e->has_id ? e->id : GP_NONE,
                     track,
                     e->name.n ? str_id(p, e->name) : 0,
                     cat_id(p, e->cat),
                     ph,
                     (char)(e->bp.n == 1 && e->bp.s[0] == 'e')};
        if (GP_VEC_PUSH(t->flows, f)) oom(p);
        return;
    }
    }
}

/* ---- top-level metadata ---------------------------------------------------------------------- */

static void meta_distributed(P *p, const char *s)
{
    arg a[MAX_ARGS];
    int n;
    s = ws(p, s);
    if (*s != '{') {
        parse_value_any(p, s, 1);
        return;
    }
    parse_flat_object(p, s, a, MAX_ARGS, &n, NULL);
    for (int i = 0; i < n; i++) {
        int64_t v;
        if (KEY(a[i].key, "rank") && arg_i64(&a[i], &v) == 0)
            p->t->meta.rank = (int32_t)v;
        else if (KEY(a[i].key, "world_size") && arg_i64(&a[i], &v) == 0)
            p->t->meta.world_size = (int32_t)v;
        else if (KEY(a[i].key, "backend") && a[i].type == V_STR)
            p->t->meta.backend = str_id(p, a[i].val);
    }
}

/* The members of distributedInfo other than the three read above
 * (pg_count, pg_config, nccl_version, ...), kept as their JSON text so that
 * the Chrome export writes them back unchanged. s..e was validated. */
static void meta_distributed_extra(P *p, const char *s, const char *e)
{
    s = ws(p, s);
    if (*s != '{') return;
    const gp_trace_meta *m = &p->t->meta;
    size_t cap = 2 * (size_t)(e - s) + 16, n = 0;
    char *buf = malloc(cap);
    if (!buf) oom(p);
    const char *q = ws(p, s + 1);
    while (*q == '"') {
        span k;
        q = parse_string(p, q, &k);
        q = ws(p, expect(p, q, ':', "':' after key"));
        const char *v0 = q;
        q = parse_value_any(p, q, 1);
        int known = (KEY(k, "rank") && m->rank != GP_NONE) ||
                    (KEY(k, "world_size") && m->world_size != GP_NONE) ||
                    (KEY(k, "backend") && m->backend);
        if (!known && n + k.n + (size_t)(q - v0) + 8 <= cap) {
            if (n) {
                buf[n++] = ',';
                buf[n++] = ' ';
            }
            buf[n++] = '"';
            memcpy(buf + n, k.s, k.n);
            n += k.n;
            memcpy(buf + n, "\": ", 3);
            n += 3;
            memcpy(buf + n, v0, (size_t)(q - v0));
            n += (size_t)(q - v0);
        }
        q = ws(p, q);
        if (*q != ',') break;
        q = ws(p, q + 1);
    }
    if (n) {
        uint32_t id = gp_trace_str(p->t, buf, n);
        free(buf);
        if (id == GP_NO_INDEX) oom(p);
        p->t->meta.dist_extra = id;
    } else {
        free(buf);
    }
}

static const char *meta_devices(P *p, const char *s)
{
    s = ws(p, s);
    if (*s != '[') return parse_value_any(p, s, 1);
    s = ws(p, s + 1);
    if (*s == ']') return s + 1;
    for (;;) {
        s = ws(p, s);
        if (*s != '{') {
            s = parse_value_any(p, s, 1);
        } else {
            arg a[MAX_ARGS];
            int n;
            s = parse_flat_object(p, s, a, MAX_ARGS, &n, NULL);
            gp_device_prop d;
            memset(&d, 0, sizeof d);
            d.id = GP_NONE;
            for (int i = 0; i < n; i++) {
                int64_t v = 0;
                int ok = arg_i64(&a[i], &v) == 0;
                span k = a[i].key;
                if (KEY(k, "name") && a[i].type == V_STR)
                    d.name = str_id(p, a[i].val);
                else if (!ok)
                    continue;
                else if (KEY(k, "id"))
                    d.id = (int32_t)v;
                else if (KEY(k, "totalGlobalMem"))
                    d.total_global_mem = v;
                else if (KEY(k, "computeMajor"))
                    d.compute_major = (int32_t)v;
                else if (KEY(k, "computeMinor"))
                    d.compute_minor = (int32_t)v;
                else if (KEY(k, "numSms"))
                    d.num_sms = (int32_t)v;
                else if (KEY(k, "warpSize"))
                    d.warp_size = (int32_t)v;
                else if (KEY(k, "maxThreadsPerBlock"))
                    d.max_threads_per_block = (int32_t)v;
                else if (KEY(k, "maxThreadsPerMultiprocessor"))
                    d.max_threads_per_sm = (int32_t)v;
                else if (KEY(k, "regsPerBlock"))
                    d.regs_per_block = (int32_t)v;
                else if (KEY(k, "regsPerMultiprocessor"))
                    d.regs_per_sm = (int32_t)v;
                else if (KEY(k, "sharedMemPerBlock"))
                    d.smem_per_block = v;
                else if (KEY(k, "sharedMemPerMultiprocessor"))
                    d.smem_per_sm = v;
                else if (KEY(k, "sharedMemPerBlockOptin"))
                    d.smem_per_block_optin = v;
            }
            if (GP_VEC_PUSH(p->t->devices, d)) oom(p);
        }
        s = ws(p, s);
        if (*s == ',') {
            s++;
            continue;
        }
        if (*s == ']') return s + 1;
        char tmp[16];
        bad(p, s, "expected ',' or ']' in array, found %s", describe_at(p, s, tmp));
    }
}

/* Parses a "sketch" string ("INDEX:COUNT,...") into a new bucket array;
 * NULL when malformed or out of memory (the row then has no sketch). */
static uint64_t *parse_sketch(span v)
{
    uint64_t *bk = calloc(GP_SKETCH_BUCKETS, sizeof *bk);
    if (!bk) return NULL;
    const char *c = v.s, *e = v.s + v.n;
    while (c < e) {
        uint64_t i = 0, n = 0;
        const char *d = c;
        while (c < e && is_digit(*c)) i = i * 10 + (uint64_t)(*c++ - '0');
        if (c == d || c >= e || *c++ != ':' || i >= GP_SKETCH_BUCKETS) goto bad;
        d = c;
        while (c < e && is_digit(*c) && n < UINT64_MAX / 10) n = n * 10 + (uint64_t)(*c++ - '0');
        if (c == d) goto bad;
        bk[i] += n;
        if (c < e && *c++ != ',') goto bad;
    }
    return bk;
bad:
    free(bk);
    return NULL;
}

/* Reads "rollover": libgpuprof ranges known only as per-name statistics
 * (gp_agg_row). s points at '['; elements that are not objects, or lack a
 * name or a positive count, are skipped. */
static const char *meta_rollover(P *p, const char *s)
{
    s = ws(p, s + 1);
    while (*s != ']') { /* validated by the caller's parse_value_any */
        if (*s != '{') {
            s = ws(p, parse_value_any(p, s, 4));
            if (*s == ',') s = ws(p, s + 1);
            continue;
        }
        arg a[MAX_ARGS];
        int n;
        s = ws(p, parse_flat_object(p, s, a, MAX_ARGS, &n, NULL));
        gp_agg_row r = {0};
        int64_t pid = 0, tid = 0, v;
        int has_name = 0, has_first = 0, has_last = 0;
        span cat = {"gpuprof_range", 13};
        r.bytes = -1;
        r.track = GP_NO_INDEX;
        for (int i = 0; i < n; i++) {
            span k = a[i].key;
            if (KEY(k, "name") && a[i].type == V_STR) {
                r.name = str_id(p, a[i].val);
                has_name = 1;
            } else if (KEY(k, "cat") && a[i].type == V_STR) {
                cat = a[i].val;
            } else if (KEY(k, "sketch") && a[i].type == V_STR && !r.sketch) {
                r.sketch = parse_sketch(a[i].val);
            } else if ((KEY(k, "first_us") || KEY(k, "last_us")) && a[i].type == V_NUM) {
                const char *e;
                int64_t ns;
                if (gp_parse_us_to_ns(a[i].val.s, a[i].val.s + a[i].val.n, &ns, &e) == 0 &&
                    e == a[i].val.s + a[i].val.n) {
                    if (k.s[0] == 'f') {
                        r.first_ns = ns;
                        has_first = 1;
                    } else {
                        r.last_ns = ns;
                        has_last = 1;
                    }
                }
            } else if (KEY(k, "gpu_timers")) {
                entry_keys(a, n, &r.em);
            } else if (KEY(k, "m2_ns2") && a[i].type == V_NUM) {
                r.m2 = strtod(a[i].val.s, NULL);
                if (!(r.m2 >= 0) || r.m2 > 1e300) r.m2 = 0;
            } else if (arg_i64(&a[i], &v) == 0) {
                if (KEY(k, "count") && v > 0)
                    r.count = (uint64_t)v;
                else if (KEY(k, "total_ns"))
                    r.total_ns = v;
                else if (KEY(k, "self_ns"))
                    r.self_ns = v;
                else if (KEY(k, "min_ns"))
                    r.min_ns = v;
                else if (KEY(k, "max_ns"))
                    r.max_ns = v;
                else if (KEY(k, "bytes"))
                    r.bytes = v;
                else if (KEY(k, "pid"))
                    pid = v;
                else if (KEY(k, "tid"))
                    tid = v;
                else if (KEY(k, "device") && v >= 0 && v < 256)
                    r.device = (uint8_t)v;
                else if (KEY(k, "backend") && v >= 0 && v < 256)
                    r.backend = (uint8_t)v;
            }
        }
        if (!has_name || r.count == 0 || !has_first || !has_last || r.min_ns > r.max_ns) {
            free(r.sketch);
        } else {
            uint32_t c = gp_trace_category(p->t, cat.s, cat.n);
            r.cat = (uint16_t)(c == GP_NO_INDEX ? 0 : c);
            if (c == GP_NO_INDEX) oom(p);
            r.track = gp_trace_track(p->t, pid, tid, 0, 0);
            if (GP_VEC_PUSH(p->t->aggs, r)) {
                free(r.sketch);
                oom(p);
            }
        }
        if (*s == ',') s = ws(p, s + 1);
    }
    return s + 1;
}

/* Reads a gp_export_json "gpuprof" section: its memory tracker figures and
 * the buffers still tracked (the rest of the section is skipped). The value
 * is validated whole first, so that a refill cannot repeat the pushes. */
static const char *meta_gpuprof(P *p, const char *s)
{
    const char *end = parse_value_any(p, s, 1);
    s = ws(p, s);
    if (*s != '{') return end;
    s = ws(p, s + 1);
    while (*s == '"') {
        span k;
        s = parse_string(p, s, &k);
        s = ws(p, expect(p, s, ':', "':' after key"));
        if (KEY(k, "rollover") && *s == '[') {
            s = ws(p, meta_rollover(p, s));
        } else if (KEY(k, "dropped") && *s >= '0' && *s <= '9') {
            span v;
            int64_t x;
            s = ws(p, check_number(p, s, &v));
            if (span_i64(v, &x) == 0 && x > 0) p->t->meta.lib_dropped = (uint64_t)x;
        } else if (!KEY(k, "memory") || *s != '{') {
            s = ws(p, parse_value_any(p, s, 2));
        } else {
            s = ws(p, s + 1);
            p->t->meta.has_tracked_memory = 1;
            while (*s == '"') {
                span mk;
                s = parse_string(p, s, &mk);
                s = ws(p, expect(p, s, ':', "':' after key"));
                if (KEY(mk, "buffers") && *s == '[') {
                    s = ws(p, s + 1);
                    while (*s != ']') { /* validated: elements, commas, then ']' */
                        if (*s != '{') {
                            s = ws(p, parse_value_any(p, s, 4));
                            if (*s == ',') s = ws(p, s + 1);
                            continue;
                        }
                        arg a[MAX_ARGS];
                        int n;
                        s = ws(p, parse_flat_object(p, s, a, MAX_ARGS, &n, NULL));
                        gp_tracked_buffer b = {0, 0, 0};
                        for (int i = 0; i < n; i++) {
                            int64_t v;
                            if (KEY(a[i].key, "name") && a[i].type == V_STR)
                                b.name = str_id(p, a[i].val);
                            else if (KEY(a[i].key, "dtype") && a[i].type == V_STR)
                                b.dtype = str_id(p, a[i].val);
                            else if (KEY(a[i].key, "bytes") && arg_i64(&a[i], &v) == 0)
                                b.bytes = v;
                        }
                        if (GP_VEC_PUSH(p->t->tracked_buffers, b)) oom(p);
                        if (*s == ',') s = ws(p, s + 1);
                    }
                    s = ws(p, s + 1); /* ']' (validated above) */
                } else if ((KEY(mk, "current_bytes") || KEY(mk, "peak_bytes")) &&
                           (*s == '-' || (*s >= '0' && *s <= '9'))) {
                    span v;
                    int64_t x;
                    s = ws(p, check_number(p, s, &v));
                    if (span_i64(v, &x) == 0) {
                        if (mk.n == 13)
                            p->t->meta.tracked_current_bytes = x;
                        else
                            p->t->meta.tracked_peak_bytes = x;
                    }
                } else {
                    s = ws(p, parse_value_any(p, s, 3));
                }
                if (*s == ',') s = ws(p, s + 1);
            }
            s = ws(p, s + 1); /* '}' */
        }
        if (*s == ',') s = ws(p, s + 1);
    }
    return end;
}

/* Parses one top-level "key": value pair (the key at s). Returns the end, or
 * sets *events when the key is traceEvents (s then points after '['). */
static const char *top_key(P *p, const char *s, int *events)
{
    span k;
    *events = 0;
    if (*s != '"') {
        char tmp[16];
        bad(p, s, "expected a key string or '}', found %s", describe_at(p, s, tmp));
    }
    s = parse_string(p, s, &k);
    s = expect(p, s, ':', "':' after key");
    s = ws(p, s);
    p->top_keys++;
    if (KEY(k, "traceEvents")) {
        if (*s != '[') {
            char tmp[16];
            bad(p, s, "expected '[' for \"traceEvents\", found %s", describe_at(p, s, tmp));
        }
        /* readers differ on a repeated key (Python's json, hence HTA, and
         * JSON.parse keep the last; a streaming reader sees both): refused */
        if (p->seen_events)
            bad(p, s, "\"traceEvents\" given twice (JSON readers differ on which one counts)");
        *events = 1;
        p->seen_events = 1;
        p->t->meta.has_trace_events = 1;
        return s + 1;
    }
    gp_trace_meta *m = &p->t->meta;
    if (KEY(k, "distributedInfo")) {
        const char *e = parse_value_any(p, s, 1); /* validate first, then read */
        meta_distributed(p, s);
        meta_distributed_extra(p, s, e);
        return e;
    }
    if (KEY(k, "deviceProperties")) return meta_devices(p, s);
    if (KEY(k, "gpuprof")) return meta_gpuprof(p, s);
    if (KEY(k, "gpuprofStream")) { /* a libgpuprof stream when it is the first key */
        if (p->top_keys == 1) p->gp_stream = m->gp_stream = 1;
        return parse_value_any(p, s, 1);
    }
    if (KEY(k, "baseTimeNanoseconds") || KEY(k, "schemaVersion")) {
        span v;
        if (!(*s == '-' || (*s >= '0' && *s <= '9'))) return parse_value_any(p, s, 1);
        const char *e = check_number(p, s, &v);
        int64_t x;
        if (span_i64(v, &x)) bad(p, s, "expected an integer for \"%.*s\"", (int)k.n, k.s);
        if (k.n == 19) {
            m->has_base_time = 1;
            m->base_time_ns = x;
        } else
            m->schema_version = (int32_t)x;
        return e;
    }
    if ((KEY(k, "displayTimeUnit") || KEY(k, "traceName")) && *s == '"') {
        span v;
        const char *e = parse_string(p, s, &v);
        if (k.n == 15)
            m->display_time_unit = str_id(p, v);
        else
            m->trace_name = str_id(p, v);
        return e;
    }
    return parse_value_any(p, s, 1);
}

/* ---- driver ---------------------------------------------------------------------------------- */

static void progress(P *p, int final)
{
    if (!p->progress) return;
    int64_t now = gp_clock_mono_ns();
    if (final) {
        if (p->progress_shown) fprintf(stderr, "\r\033[K");
        return;
    }
    if (now - p->t_start < p->progress_after_ns || now - p->t_last_progress < 250000000LL) return;
    p->t_last_progress = now;
    p->progress_shown = 1;
    uint64_t size = gp_input_size(p->in), pos = gp_input_pos(p->in);
    double mb = (double)(p->base_off + p->len) / 1e6;
    if (p->map) {
        pos = p->base_off + p->pos;
        mb = (double)pos / 1e6;
    }
    if (size)
        fprintf(stderr, "\r\033[Kimporting %s: %3.0f%% (%.0f MB parsed, %.1f s)", p->name,
                100.0 * (double)pos / (double)size, mb, (double)(now - p->t_start) / 1e9);
    else
        fprintf(stderr, "\r\033[Kimporting %s: %.0f MB", p->name, mb);
    fflush(stderr);
}

/* Moves unparsed bytes [keep..len) to the front and reads more. Returns 0 or
 * a GP_E* code (err already filled). Sets eof when no more bytes come. */
static int refill(P *p, size_t keep)
{
    size_t live = p->len - keep;
    if (keep && p->count_lines)
        for (const char *c = p->buf, *e = p->buf + keep; (c = memchr(c, '\n', (size_t)(e - c)));) {
            p->lines_before++;
            c++;
            p->line_start_before = p->base_off + (uint64_t)(c - p->buf);
        }
    if (keep) {
        memmove(p->buf, p->buf + keep, live);
        p->base_off += keep;
        p->len = live;
    }
    if (p->cap - p->len < p->cap / 4) { /* a unit larger than 3/4 of the buffer: grow */
        if (p->cap >= UNIT_MAX) {
            snprintf(p->errmsg, sizeof p->errmsg, "a single value larger than %zu MiB",
                     UNIT_MAX >> 20);
            p->err_at = p->buf;
            p->err_code = GP_ERANGE;
            return GP_ERANGE;
        }
        size_t nc = p->cap * 2;
        char *nb = realloc(p->buf, nc + PAD);
        char *ns = nb ? realloc(p->scratch, nc + PAD + 8) : NULL; /* + 8: see p_create */
        if (!nb || !ns) {
            if (nb) p->buf = nb;
            return gp_err_set(p->err, GP_ENOMEM, "%s: out of memory", p->name);
        }
        p->buf = nb;
        p->scratch = ns;
        p->cap = nc;
        p->scap = nc + PAD;
    }
    while (p->len < p->cap) {
        long k = gp_input_read(p->in, p->buf + p->len, p->cap - p->len, p->err);
        if (k < 0) return (int)k;
        if (k == 0) {
            p->eof = 1;
            break;
        }
        p->len += (size_t)k;
        if (p->len >= p->cap / 2) break;
    }
    memset(p->buf + p->len, 0, PAD);
    if (p->scan) {
        size_t nblocks = (p->len >> 6) + 1; /* through the padding's first NUL */
        if (nblocks > p->idx_words) {
            uint64_t *ni = realloc(p->idx, nblocks * sizeof *ni);
            if (!ni) return gp_err_set(p->err, GP_ENOMEM, "%s: out of memory", p->name);
            p->idx = ni;
            p->idx_words = nblocks;
        }
        p->idx_total = nblocks;
        p->idx_blocks = 0; /* classified on demand by idx_more */
    }
    progress(p, 0);
    if (p->read_bytes) {
        uint64_t pos = gp_input_pos(p->in);
        if (pos > p->counted) atomic_fetch_add(p->read_bytes, pos - p->counted);
        if (pos > p->counted) p->counted = pos;
    }
    return 0;
}

/* Line and column of byte offset `off` in the uncompressed text, found by
 * reading the source again (only on error). */
static void line_col(const char *path, const void *mem, size_t memn, uint64_t off, uint64_t *line,
                     uint64_t *col)
{
    gp_input *in = NULL;
    gp_err e;
    *line = 1;
    *col = off + 1;
    if ((mem ? gp_input_open_mem(mem, memn, path, &in, &e) : gp_input_open_file(path, &in, &e)) !=
        0)
        return;
    char *blk = malloc(1 << 16);
    uint64_t pos = 0, line_start = 0;
    if (!blk) {
        gp_input_close(in);
        return;
    }
    while (pos < off) {
        long k = gp_input_read(in, blk, 1 << 16, &e);
        if (k <= 0) break;
        for (long i = 0; i < k && pos < off; i++, pos++)
            if (blk[i] == '\n') {
                (*line)++;
                line_start = pos + 1;
            }
    }
    *col = off - line_start + 1;
    free(blk);
    gp_input_close(in);
}

/* ---- plain files mapped instead of read --------------------------------------------------
 * A plain file of MAP_MIN_BYTES or more is mapped (whole, read-only, private)
 * instead of copied by read() into the buffer: the parser reads the page
 * cache in place. A zero page mapped after the file's last page is the
 * padding the scanners stop at. Pages are faulted in by the kernel's
 * fault-around (populating windows ahead with MADV_POPULATE_READ or
 * MAP_POPULATE measured slower) and given back (MADV_DONTNEED) behind the
 * parser every MAP_WINDOW, so the mapping's resident part stays small.
 *
 * A file truncated while mapped makes a read past its new end raise SIGBUS.
 * The handler (installed once, chaining to the one before it for any other
 * fault) maps zero pages over the rest of the file for the thread whose
 * mapping faulted (thread-local bounds: SIGBUS from a memory access goes to
 * the faulting thread), so the parser stops at a NUL byte; run_mapped then
 * reports the truncation as the error. A unit longer than half the read
 * path's limit (UNIT_MAX) goes back to the read path (RUN_READ), which gives
 * the same result or error as before for such units. */

#define MAP_MIN_BYTES ((uint64_t)1 << 20)
#define MAP_WINDOW    ((size_t)8 << 20)
#define RUN_READ      (-1000) /* run_mapped: import this input by reading instead */

typedef struct bus_guard {
    char *lo, *hi; /* the file's bytes in this thread's current mapping */
    volatile sig_atomic_t hit;
} bus_guard;
static _Thread_local bus_guard tls_bus;
static struct sigaction bus_old;
static pthread_once_t bus_once = PTHREAD_ONCE_INIT;
static int bus_ready;
static size_t page_size;

static void bus_handler(int sig, siginfo_t *si, void *uc)
{
    bus_guard *g = &tls_bus;
    char *a = si ? (char *)si->si_addr : NULL;
    if (g->lo && a >= g->lo && a < g->hi) {
        char *pg = (char *)((uintptr_t)a & ~(uintptr_t)(page_size - 1));
        if (pg < g->lo) pg = g->lo;
        if (mmap(pg, (size_t)(g->hi - pg), PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1,
                 0) != MAP_FAILED) {
            g->hit = 1;
            return; /* the access is repeated and reads zeros */
        }
    }
    /* not ours: what would have happened without this handler */
    if (bus_old.sa_flags & SA_SIGINFO) {
        if (bus_old.sa_sigaction) {
            bus_old.sa_sigaction(sig, si, uc);
            return;
        }
    } else if (bus_old.sa_handler != SIG_DFL && bus_old.sa_handler != SIG_IGN) {
        bus_old.sa_handler(sig);
        return;
    }
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigaction(SIGBUS, &dfl, NULL);
    raise(sig); /* pending until the handler returns; then it ends the process */
}

static void bus_install(void)
{
    long k = sysconf(_SC_PAGESIZE);
    page_size = k > 0 ? (size_t)k : 4096;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = bus_handler;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    bus_ready = sigaction(SIGBUS, &sa, &bus_old) == 0;
}

/* The smallest plain file that is mapped: MAP_MIN_BYTES; 0: none
 * ($GPUPROF_IMPORT_MMAP=0: files are read), 1 ($GPUPROF_IMPORT_MMAP=always:
 * every non-empty file, for tests). */
static uint64_t map_min_bytes(void)
{
    const char *e = getenv("GPUPROF_IMPORT_MMAP");
    if (e && strcmp(e, "0") == 0) return 0;
    if (e && strcmp(e, "always") == 0) return 1;
    return MAP_MIN_BYTES;
}

static _Thread_local void (*tls_window_hook)(void *, uint64_t);
static _Thread_local void *tls_window_arg;

void gp_import_test_window_hook(void (*fn)(void *, uint64_t), void *fn_arg)
{
    tls_window_hook = fn;
    tls_window_arg = fn_arg;
}

/* Maps the plain file fd from byte off to its end as p's buffer. Returns 0,
 * or -1 (p unchanged: it reads) when the input is not a large regular file,
 * the stage-1 index is on (it is sized by the buffer), or mapping fails. */
static int p_map(P *p, int fd, uint64_t off)
{
    struct stat st;
    uint64_t min = map_min_bytes();
    if (fd < 0 || p->scan || !min || fstat(fd, &st) || !S_ISREG(st.st_mode)) return -1;
    uint64_t size = (uint64_t)st.st_size;
    if (off >= size || size - off < min || size - off > (uint64_t)SIZE_MAX / 2) return -1;
    pthread_once(&bus_once, bus_install);
    if (!bus_ready) return -1;
    uint64_t a = off & ~(uint64_t)(page_size - 1);
    size_t file = (size_t)(size - a);
    size_t len = ((file + page_size - 1) & ~(page_size - 1)) + page_size;
    char *m = mmap(NULL, len, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) return -1;
    if (mmap(m, file, PROT_READ, MAP_PRIVATE | MAP_FIXED, fd, (off_t)a) == MAP_FAILED) {
        munmap(m, len);
        return -1;
    }
    madvise(m, file, MADV_SEQUENTIAL); /* read-ahead and fault-around sized for a scan */
    /* scratch: an unescaped string is never longer than its unit, which may
     * now be the whole file; only the pages used are ever touched */
    size_t slen = (size_t)(size - off) + PAD + 8;
    char *sc = mmap(NULL, slen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                    -1, 0);
    if (sc == MAP_FAILED) {
        munmap(m, len);
        return -1;
    }
    free(p->buf);
    free(p->scratch);
    p->map = m;
    p->map_len = len;
    p->map_file = file;
    p->map_size = size;
    p->map_fd = fd;
    p->map_released = m;
    p->scratch = sc;
    p->scratch_map_len = slen;
    p->scap = (size_t)(size - off) + PAD;
    p->buf = m + (off - a);
    p->len = p->cap = (size_t)(size - off);
    p->eof = 1;
    p->map_next = 0;
    /* UNIT_MAX / 2; $GPUPROF_IMPORT_MMAP_UNIT (bytes) for tests */
    const char *um = getenv("GPUPROF_IMPORT_MMAP_UNIT");
    p->map_unit_max = um && *um ? (size_t)strtoull(um, NULL, 10) : UNIT_MAX / 2;
    return 0;
}

static void p_unmap(P *p)
{
    if (!p->map) return;
    munmap(p->map, p->map_len);
    munmap(p->scratch, p->scratch_map_len);
    p->map = NULL;
    p->buf = p->scratch = NULL;
}

/* Counts the bytes parsed so far (gp_import_count_bytes). */
static void map_count(P *p, uint64_t upto)
{
    if (p->read_bytes && upto > p->counted) {
        atomic_fetch_add(p->read_bytes, upto - p->counted);
        p->counted = upto;
    }
}

/* At a unit boundary (p->pos) at or past map_next: gives back the pages
 * before the previous unit, counts progress.
 * Returns 1 when the unit just parsed ([unit, pos)) was too long for the
 * mapped path to promise the read path's outcome. Only the unit that
 * crosses a window boundary is checked: one longer than MAP_WINDOW always
 * does, and the limit (map_unit_max, UNIT_MAX / 2) is far longer. */
static int map_advance(P *p)
{
    if (p->pos - p->unit > p->map_unit_max) return 1;
    char *done = (char *)((uintptr_t)(p->buf + p->pos) & ~(uintptr_t)(page_size - 1));
    if (done - p->map_released >= (ptrdiff_t)MAP_WINDOW) {
        madvise(p->map_released, (size_t)(done - p->map_released), MADV_DONTNEED);
        p->map_released = done;
    }
    p->map_next = p->pos + MAP_WINDOW;
    map_count(p, p->base_off + p->pos);
    progress(p, 0);
    if (tls_window_hook) tls_window_hook(tls_window_arg, p->base_off + p->pos);
    return 0;
}

static int run(P *p);

/* run() over a mapped buffer with the SIGBUS guard; RUN_READ, or run's
 * result with a truncated file reported as such. */
static int run_mapped(P *p)
{
    bus_guard *g = &tls_bus;
    g->hit = 0;
    g->hi = p->map + p->map_file;
    g->lo = p->map;
    int rc = run(p);
    g->lo = g->hi = NULL;
    if (rc == RUN_READ) return rc;
    struct stat st;
    uint64_t now = fstat(p->map_fd, &st) == 0 ? (uint64_t)st.st_size : 0;
    if (g->hit || (rc && now < p->map_size)) {
        gp_err_set(p->err, GP_EIO,
                   "%s: the file was truncated while being read (%llu bytes, now %llu)", p->name,
                   (unsigned long long)p->map_size, (unsigned long long)now);
        return GP_EIO;
    }
    /* a unit still open at the end (an error or a truncated trace) */
    if (rc && (size_t)((p->err_at ? p->err_at : end_of(p)) - (p->buf + p->unit)) > p->map_unit_max)
        return RUN_READ;
    if (!rc) map_count(p, p->base_off + (p->landed >= 0 ? p->pos : p->len));
    return rc;
}

static int run_any(P *p)
{
    return p->map ? run_mapped(p) : run(p);
}

static int run(P *p)
{
    int rc;
    size_t unit;
    if (!p->map && (rc = refill(p, 0))) return rc;
    /* skip a UTF-8 byte order mark */
    if (p->len >= 3 && memcmp(p->buf, "\xef\xbb\xbf", 3) == 0) p->pos = 3;
    for (;;) {
        /* one setjmp per buffer fill, not per unit: p->unit is where the
         * unit being parsed started */
        int j = setjmp(p->jb);
        unit = p->unit;
        if (j == JMP_MORE) {
            if (p->eof) {
                if (p->array_form && (p->state == S_EV_NEXT || p->state == S_EV_ITEM) &&
                    p->pos == unit) {
                    /* bare array without its closing ']' (crashed writer):
                     * valid per the trace-event format; keep what was read */
                    const char *s = p->buf + unit;
                    while (s < end_of(p) && (*s == ' ' || *s == '\n' || *s == '\r' || *s == '\t'))
                        s++;
                    if (s == end_of(p)) {
                        p->t->meta.unterminated = 1;
                        return 0;
                    }
                }
                /* a libgpuprof stream whose writer died (killed, crashed):
                 * the events before the cut stay, a partly written last
                 * one is dropped (nothing of it was committed) */
                if (p->gp_stream &&
                    (p->state == S_EV_NEXT || p->state == S_EV_ITEM || p->state == S_EV_FIRST)) {
                    p->t->meta.unterminated = 1;
                    p->t->meta.gp_stream = 1;
                    return 0;
                }
                if (p->state == S_END || p->state == S_DONE) return 0;
                /* a pipe that held only JSON whitespace (a byte order mark
                 * aside) reads as "{}", a document without an event array,
                 * as a blank file does (load.c reads a file again to tell;
                 * a pipe cannot be read again) */
                if (p->state == S_START && p->blank_doc) {
                    const char *s = p->buf + unit;
                    while (s < end_of(p) && (*s == ' ' || *s == '\n' || *s == '\r' || *s == '\t'))
                        s++;
                    if (s == end_of(p)) {
                        p->state = S_END;
                        return 0;
                    }
                }
                snprintf(p->errmsg, sizeof p->errmsg, "unexpected end of file%s",
                         p->state == S_EV_NEXT || p->state == S_EV_ITEM || p->state == S_EV_FIRST
                             ? " inside \"traceEvents\" (truncated trace?)"
                             : " (truncated trace?)");
                p->err_at = end_of(p);
                p->err_code = GP_EPARSE;
                return GP_EPARSE;
            }
            p->sn = 0;
            if ((rc = refill(p, unit))) return rc;
            p->pos = 0;
            continue;
        }
        if (j == JMP_ERR) return p->err_code;
        for (;;) {
            if (p->map && p->pos >= p->map_next && map_advance(p)) return RUN_READ;
            p->unit = p->pos;
            p->sn = 0;
            const char *s = p->buf + p->pos;
            switch (p->state) {
            case S_START:
                s = ws(p, s);
                if (*s == '{') {
                    p->state = S_OBJ_KEY;
                    s = ws(p, s + 1);
                    if (*s == '}') {
                        s++;
                        p->state = S_END;
                    }
                } else if (*s == '[') {
                    p->array_form = 1;
                    p->t->meta.has_trace_events = 1;
                    p->state = S_EV_FIRST;
                    s++;
                } else {
                    char tmp[16];
                    bad(p, s, "expected '{' or '[' at the start of a trace, found %s",
                        describe_at(p, s, tmp));
                }
                break;
            case S_OBJ_KEY: {
                int events;
                s = ws(p, s);
                s = top_key(p, s, &events);
                p->state = events ? S_EV_FIRST : S_OBJ_NEXT;
                break;
            }
            case S_OBJ_NEXT:
                s = ws(p, s);
                if (*s == ',') {
                    s++;
                    p->state = S_OBJ_KEY;
                } else if (*s == '}') {
                    s++;
                    p->state = S_END;
                } else {
                    char tmp[16];
                    bad(p, s, "expected ',' or '}' after a top-level value, found %s",
                        describe_at(p, s, tmp));
                }
                break;
            case S_EV_FIRST:
            case S_EV_ITEM:
                s = ws(p, s);
                if (p->bounds && p->state == S_EV_ITEM) {
                    uint64_t abs = p->base_off + (uint64_t)(s - p->buf);
                    while (p->next_bound < p->nbounds && abs > p->bounds[p->next_bound])
                        p->next_bound++;
                    if (p->next_bound < p->nbounds && abs == p->bounds[p->next_bound]) {
                        p->landed = p->next_bound; /* the next part starts here */
                        p->pos = (size_t)(s - p->buf);
                        return 0;
                    }
                }
                if (*s == ']' && p->state == S_EV_FIRST) {
                    s++;
                    p->state = p->array_form ? S_END : S_OBJ_NEXT;
                    break;
                }
                if (*s == ']' && p->state == S_EV_ITEM) { /* trailing comma: tolerated */
                    s++;
                    p->state = p->array_form ? S_END : S_OBJ_NEXT;
                    break;
                }
                if (*s != '{') {
                    char tmp[16];
                    bad(p, s, "expected an event object '{', found %s", describe_at(p, s, tmp));
                }
                {
                    const char *start = s, *f = p->fast ? fast_event(p, s) : NULL;
                    s = f ? f : parse_event(p, s);
                    commit_event(p, start);
                }
                p->state = S_EV_NEXT;
                break;
            case S_EV_NEXT:
                s = ws(p, s);
                if (*s == ',') {
                    s++;
                    p->state = S_EV_ITEM;
                } else if (*s == ']') {
                    s++;
                    p->state = p->array_form ? S_END : S_OBJ_NEXT;
                } else {
                    char tmp[16];
                    bad(p, s, "expected ',' or ']' after an event, found %s",
                        describe_at(p, s, tmp));
                }
                break;
            case S_END:
                s = ws(p, s); /* returns only at a non-space byte */
                {
                    char tmp[16];
                    bad(p, s, "found %s after the end of the trace", describe_at(p, s, tmp));
                }
                break;
            case S_DONE:
                return 0;
            }
            p->pos = (size_t)(s - p->buf);
        }
    }
}

static void free_stacks(P *p)
{
    for (size_t i = 0; i < p->stacks.n; i++) GP_VEC_FREE(p->stacks.v[i].f);
    GP_VEC_FREE(p->stacks);
}

static void apply_track_meta(P *p)
{
    gp_trace *t = p->t;
    for (size_t i = 0; i < t->tracks.n; i++) {
        gp_track *k = &t->tracks.v[i];
        uint64_t v;
        if (!k->pid_str && gp_u64map_get(&p->pid_names, (uint64_t)k->pid, &v))
            k->process_name = (uint32_t)v;
        if (!k->pid_str && gp_u64map_get(&p->pid_gpu, (uint64_t)k->pid, &v) &&
            k->type != GP_TRACK_GPU) {
            /* a GPU process row: its tracks are streams even without kernels */
            k->type = GP_TRACK_GPU;
            k->device = (int32_t)v;
            k->stream = k->tid;
        }
    }
    for (size_t i = 0; i < p->stacks.n; i++) t->meta.unmatched_begin += p->stacks.v[i].f.n;
    free_stacks(p);
    gp_u64map_free(&p->pid_names);
    gp_u64map_free(&p->pid_gpu);
}

/* Creates a parser over `in` (not owned). NULL on out of memory. */
/* prog: bit 0 progress on stderr, bit 1 (PROG_KEEP_ARGS) keep args text,
 * bit 2 (PROG_ARGS_AT_SOURCE) keep where the args lie in the source */
#define PROG_KEEP_ARGS      2
#define PROG_ARGS_AT_SOURCE 4
/* gp_import_count_bytes of this thread: every P of one import is created on
 * the thread that called gp_import_json_file */
static _Thread_local _Atomic(uint64_t) *tls_read_bytes;

void gp_import_count_bytes(_Atomic(uint64_t) *read_bytes)
{
    tls_read_bytes = read_bytes;
}

/* Gives an empty large array of the model room for about n elements on
 * transparent huge pages (2 MiB aligned, MADV_HUGEPAGE: one page fault per
 * 2 MiB instead of per 4 KiB as it fills; pages never touched cost
 * nothing). It stays an ordinary malloc'd block (realloc/free). */
#define HUGE_BYTES ((size_t)2 << 20)
static void huge_reserve(void **v, size_t *cap, size_t n, size_t elem)
{
    if (*v || n > SIZE_MAX / 2 / elem || n * elem < 4 * HUGE_BYTES) return;
    size_t bytes = (n * elem + HUGE_BYTES - 1) & ~(HUGE_BYTES - 1);
    void *m = aligned_alloc(HUGE_BYTES, bytes);
    if (!m) return;
#ifdef MADV_HUGEPAGE
    madvise(m, bytes, MADV_HUGEPAGE);
#endif
    *v = m;
    *cap = bytes / elem;
}
#define HUGE_RESERVE(vec, n) huge_reserve((void **)&(vec).v, &(vec).cap, (n), sizeof *(vec).v)

static P *p_create(gp_input *in, const char *name, int prog, gp_err *err)
{
    P *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->in = in;
    p->err = err;
    p->name = name;
    p->err_off = -1;
    p->landed = -1;
    p->count_lines = gp_input_is_stream(in);
    struct stat isb;
    int ifd = gp_input_fd(in);
    p->blank_doc = p->count_lines || (ifd >= 0 && fstat(ifd, &isb) == 0 && !S_ISREG(isb.st_mode));
    /* small inputs get a small buffer; it grows when one unit needs more */
    uint64_t src = gp_input_size(in) * (gp_input_is_gzip(in) ? 10 : 1);
    p->cap = BUF_INIT;
    if (src && src < BUF_INIT) p->cap = src < (64u << 10) ? (64u << 10) : (size_t)src;
    p->buf = malloc(p->cap + PAD);
    p->scap = p->cap + PAD;
    p->scan = gp_jscan_get(gp_jscan_choose()); /* NULL: the byte-wise reference */
    p->scratch = malloc(p->scap + 8);          /* + 8: cat_id reads 8 bytes of a string */
    p->t = gp_trace_create();
    p->progress = prog & 1;
    p->keep_args = prog & PROG_KEEP_ARGS        ? GP_ARGS_TEXT
                   : prog & PROG_ARGS_AT_SOURCE ? GP_ARGS_AT_SOURCE
                                                : 0;
    pthread_once(&ak_once, ak_init); /* fast_args reads the table directly */
    const char *fe = getenv("GPUPROF_IMPORT_FAST");
    p->fast = !(fe && strcmp(fe, "0") == 0);
    p->read_bytes = tls_read_bytes;
    p->counted = gp_input_pos(in);
    p->t_start = gp_clock_mono_ns();
    p->t_last_progress = 0;
    const char *after = getenv("GPUPROF_PROGRESS_AFTER_MS");
    p->progress_after_ns = after && *after ? atoll(after) * 1000000LL : 1000000000LL;
    if (!p->buf || !p->scratch || !p->t) {
        gp_trace_destroy(p->t);
        free(p->buf);
        free(p->scratch);
        free(p);
        return NULL;
    }
    /* the model's large arrays from the input's size (a gzip file inflates
     * about 10x): Kineto writes 150-300 bytes an event, most of them slices */
    if (src) {
        HUGE_RESERVE(p->t->slices, src / 128);
        HUGE_RESERVE(p->t->flows, src / 512);
        HUGE_RESERVE(p->t->instants, src / 1024);
        HUGE_RESERVE(p->t->gpu_info, src / 1024);
    }
    p->t->meta.source = gp_trace_str(p->t, name, strlen(name));
    p->t->meta.import_parts = 1;
    p->t->meta.args_at_source = p->keep_args == GP_ARGS_AT_SOURCE;
    return p;
}

static void p_destroy(P *p)
{
    if (!p) return;
    free_stacks(p);
    gp_u64map_free(&p->pid_names);
    gp_u64map_free(&p->pid_gpu);
    GP_VEC_FREE(p->pending_e);
    gp_trace_destroy(p->t);
    if (p->map) {
        p_unmap(p);
    } else {
        free(p->buf);
        free(p->scratch);
    }
    free(p->idx);
    free(p);
}

/* Turns a failed run's state into the one-line message in p->err. */
static void format_error(P *p, int rc, const void *mem, size_t memn)
{
    gp_err *err = p->err;
    if (err->code != 0 && err->msg[0] != 0) return; /* already a whole message (I/O, zlib) */
    uint64_t off = p->err_off >= 0 ? (uint64_t)p->err_off
                                   : p->base_off + (uint64_t)(p->err_at ? p->err_at - p->buf : 0);
    uint64_t line, col;
    if (p->count_lines && p->err_off < 0) {
        /* the text cannot be read again: the lines before the buffer were
         * counted as it was refilled, the rest are in it */
        line = 1 + p->lines_before;
        uint64_t start = p->line_start_before;
        for (const char *c = p->buf, *e = p->buf + (off - p->base_off);
             (c = memchr(c, '\n', (size_t)(e - c)));) {
            line++;
            c++;
            start = p->base_off + (uint64_t)(c - p->buf);
        }
        col = off - start + 1;
    } else
        line_col(p->name, mem, memn, off, &line, &col);
    gp_err_set(err, rc, "%s:%llu:%llu: %s", p->name, (unsigned long long)line,
               (unsigned long long)col, p->errmsg);
}

/* 0 when gp_trace_finish can rebase t without overflow: t0 (the earliest
 * time floored to a whole microsecond), every time less t0, and t0 plus
 * baseTimeNanoseconds fit int64 ns; else a one-line GP_EPARSE in err. Each
 * time fits int64 on its own (parse_time), but two far apart may not fit as
 * a difference. */
static int check_span(const gp_trace *t, const char *name, gp_err *err)
{
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (size_t i = 0; i < t->slices.n; i++) {
        if (t->slices.v[i].ts < lo) lo = t->slices.v[i].ts;
        if (t->slices.v[i].ts + t->slices.v[i].dur > hi)
            hi = t->slices.v[i].ts + t->slices.v[i].dur;
    }
#define SPAN(vec, f1, f2)                                                                          \
    for (size_t i = 0; i < t->vec.n; i++) {                                                        \
        if (t->vec.v[i].f1 < lo) lo = t->vec.v[i].f1;                                              \
        if (t->vec.v[i].f2 > hi) hi = t->vec.v[i].f2;                                              \
    }
    SPAN(aggs, first_ns, last_ns)
    SPAN(flows, ts, ts)
    SPAN(instants, ts, ts)
    SPAN(mem_events, ts, ts)
    SPAN(counters, ts, ts)
#undef SPAN
    if (lo == INT64_MAX) return 0; /* no timed events */
    int64_t t0 = lo / 1000 * 1000, d, abs0;
    if ((lo % 1000 < 0 && __builtin_sub_overflow(t0, 1000, &t0)) ||
        __builtin_sub_overflow(hi, t0, &d))
        return gp_err_set(err, GP_EPARSE,
                          "%s: the times (from %lld to %lld ns) do not fit int64 nanoseconds "
                          "from the trace start",
                          name, (long long)lo, (long long)hi);
    if (t->meta.has_base_time && __builtin_add_overflow(t0, t->meta.base_time_ns, &abs0))
        return gp_err_set(err, GP_EPARSE,
                          "%s: baseTimeNanoseconds %lld plus the earliest time (%lld ns) does not "
                          "fit int64 nanoseconds",
                          name, (long long)t->meta.base_time_ns, (long long)lo);
    return 0;
}

/* Finishes a successful parse into a trace owned by the caller (*out), or
 * returns GP_EPARSE with err set (times too far apart). */
static int p_finish(P *p, gp_trace **out)
{
    if (check_span(p->t, p->name, p->err)) return p->err->code;
    apply_track_meta(p);
    gp_trace_finish(p->t);
    *out = p->t;
    p->t = NULL;
    return 0;
}

static int import(gp_input *in, const char *name, const void *mem, size_t memn, int prog,
                  gp_trace **out, gp_err *err)
{
    *out = NULL;
    gp_err_clear(err);
    P *p = p_create(in, name, prog, err);
    if (!p) return gp_err_set(err, GP_ENOMEM, "%s: out of memory", name);
    if (!mem && !gp_input_is_gzip(in)) p_map(p, gp_input_fd(in), 0);
    int rc = run_any(p);
    if (rc == RUN_READ) { /* a unit too long for the mapped path: read the file instead */
        uint64_t counted = p->counted; /* progress already counted: not again */
        p_destroy(p);
        gp_err_clear(err);
        if (gp_input_seek(in, 0, err)) return err->code;
        p = p_create(in, name, prog, err);
        if (!p) return gp_err_set(err, GP_ENOMEM, "%s: out of memory", name);
        p->counted = counted;
        rc = run(p);
    }
    progress(p, 1);
    if (rc)
        format_error(p, rc, mem, memn);
    else
        rc = p_finish(p, out);
    p_destroy(p);
    return rc;
}

/* ---- parallel import of large plain files ---------------------------------------------------
 * The file is cut at N-1 candidate event starts (',' then '{' in the middle
 * of the file); part k parses from its candidate until it lands exactly on a
 * later candidate. A landing proves that the sequential parse passes there in
 * the same state, so the parts chained from part 0 by their landings give the
 * sequential result; a part that is never landed on is ignored (its
 * candidate was inside a string, say) because the part before it went on. */

#define SPLIT_MIN_BYTES (64u << 20)
#define SPLIT_MAX       8

typedef struct part {
    P *p;
    gp_input *in;
    gp_err err;
    int rc;
    pthread_t th;
    int started;
} part;

static void *part_main(void *warg)
{
    part *w = warg;
    w->rc = run_any(w->p);
    return NULL;
}

/* Finds the first ',' ws* '{' at or after off; returns its '{' offset or 0. */
static uint64_t find_candidate(int fd, uint64_t off, uint64_t size)
{
    char win[1 << 16];
    while (off < size) {
        ssize_t k = pread(fd, win, sizeof win, (off_t)off);
        if (k <= 0) return 0;
        for (ssize_t i = 0; i < k; i++) {
            if (win[i] != ',') continue;
            ssize_t j = i + 1;
            while (j < k && (win[j] == ' ' || win[j] == '\n' || win[j] == '\r' || win[j] == '\t'))
                j++;
            if (j == k) break; /* reread from this comma */
            if (win[j] == '{') return off + (uint64_t)j;
            i = j - 1;
        }
        off += (uint64_t)k > 64 ? (uint64_t)k - 64 : (uint64_t)k;
    }
    return 0;
}

/* A later part's arrays are copied into the head's in chunks, and the pages
 * of the source already copied are given back at once (and the array freed
 * when done), so that a split import peaks at about one model, not one
 * model plus the later parts' copies (issue 19: analyze RSS). */
#define MERGE_CHUNK_BYTES ((size_t)1 << 20)

/* Returns to the kernel the whole pages of [v, v + done) (already copied;
 * never read again before the array is freed). */
static void release_copied(const void *v, size_t done)
{
    static size_t pg;
    if (!pg) {
        long k = sysconf(_SC_PAGESIZE);
        pg = k > 0 ? (size_t)k : 4096;
    }
    uintptr_t a = ((uintptr_t)v + pg - 1) & ~(uintptr_t)(pg - 1);
    uintptr_t e = ((uintptr_t)v + done) & ~(uintptr_t)(pg - 1);
    if (e > a) madvise((void *)a, e - a, MADV_DONTNEED);
}

/* Appends the n elements of vector svec to dvec (room reserved), applying
 * FIX(x) to each copied element x, releasing the copied source pages as it
 * goes; frees svec. */
#define MERGE_MOVE(dvec, svec, FIX)                                                                \
    do {                                                                                           \
        size_t chunk_ = MERGE_CHUNK_BYTES / sizeof *(svec).v + 1;                                  \
        for (size_t i0_ = 0; i0_ < (svec).n; i0_ += chunk_) {                                      \
            size_t i1_ = i0_ + chunk_ < (svec).n ? i0_ + chunk_ : (svec).n;                        \
            for (size_t i_ = i0_; i_ < i1_; i_++) {                                                \
                __typeof__(*(svec).v) x = (svec).v[i_];                                            \
                FIX;                                                                               \
                (dvec).v[(dvec).n++] = x;                                                          \
            }                                                                                      \
            release_copied((svec).v, i1_ * sizeof *(svec).v);                                      \
        }                                                                                          \
        GP_VEC_FREE(svec);                                                                         \
    } while (0)

/* MERGE_MOVE for arrays copied unchanged (one memcpy per chunk). */
#define MERGE_MOVE_RAW(dvec, svec)                                                                 \
    do {                                                                                           \
        size_t chunk_ = MERGE_CHUNK_BYTES / sizeof *(svec).v + 1;                                  \
        for (size_t i0_ = 0; i0_ < (svec).n; i0_ += chunk_) {                                      \
            size_t k_ = i0_ + chunk_ < (svec).n ? chunk_ : (svec).n - i0_;                         \
            memcpy((dvec).v + (dvec).n, (svec).v + i0_, k_ * sizeof *(svec).v);                    \
            (dvec).n += k_;                                                                        \
            release_copied((svec).v, (i0_ + k_) * sizeof *(svec).v);                               \
        }                                                                                          \
        GP_VEC_FREE(svec);                                                                         \
    } while (0)

/* Where slice k of a later part lands in the merged trace: after the sbase
 * slices before the part and after the replayed E slices (pending_e) that a
 * single pass would have pushed before it, so that a split import orders its
 * slices exactly as a sequential one. Called with ascending k. */
typedef struct slice_map {
    uint32_t sbase;
    const uint32_t *at; /* the replayed slices' part-local positions, ascending */
    size_t n, i;
} slice_map;

static inline uint32_t slice_map_at(slice_map *m, uint32_t k)
{
    while (m->i < m->n && m->at[m->i] <= k) m->i++;
    return m->sbase + k + (uint32_t)m->i;
}

/* Appends src's trace to dst's (remapping strings, categories, tracks,
 * series), replays src's unmatched E events on dst's B stacks and moves
 * src's open B frames and metadata maps over. Returns 0 or a GP_E* code
 * with dst's error state set. */
static int merge_part(P *dst, P *src)
{
    gp_trace *d = dst->t, *s = src->t;
    uint32_t nstr = gp_strtab_count(s->strings);
    uint32_t *smap = malloc((size_t)nstr * sizeof *smap);
    uint32_t *cmap = malloc((s->cats.n + 1) * sizeof *cmap);
    uint32_t *tmap = malloc((s->tracks.n + 1) * sizeof *tmap);
    uint32_t *rmap = malloc((s->series.n + 1) * sizeof *rmap);
    int rc = GP_ENOMEM;
    GP_VEC(gp_slice) rep = {0};    /* slices of the E events replayed on dst's stacks */
    GP_VEC(uint32_t) rep_at = {0}; /* their part-local positions (pending_e.at) */
    if (!smap || !cmap || !tmap || !rmap) goto done;
    for (uint32_t i = 0; i < nstr; i++) {
        smap[i] = gp_trace_str(d, gp_strtab_get(s->strings, i), gp_strtab_len(s->strings, i));
        if (smap[i] == GP_NO_INDEX) goto done;
    }
    for (size_t i = 0; i < s->cats.n; i++) {
        uint32_t nm = s->cats.v[i].name;
        cmap[i] =
            gp_trace_category(d, gp_strtab_get(s->strings, nm), gp_strtab_len(s->strings, nm));
        if (cmap[i] == GP_NO_INDEX) goto done;
    }
    for (size_t i = 0; i < s->tracks.n; i++) {
        const gp_track *k = &s->tracks.v[i];
        tmap[i] = gp_trace_track(d, k->pid, k->tid, smap[k->pid_str], smap[k->tid_str]);
        if (tmap[i] == GP_NO_INDEX) goto done;
        gp_track *dk = &d->tracks.v[tmap[i]];
        if (k->name) dk->name = smap[k->name];
        if (k->type == GP_TRACK_GPU && dk->type != GP_TRACK_GPU) {
            dk->type = GP_TRACK_GPU;
            dk->device = k->device;
            dk->stream = k->stream;
        }
    }
    for (size_t i = 0; i < s->series.n; i++) {
        uint32_t nm = smap[s->series.v[i].name], tk = tmap[s->series.v[i].track];
        rmap[i] = GP_NO_INDEX;
        for (size_t j = 0; j < d->series.n; j++)
            if (d->series.v[j].name == nm && d->series.v[j].track == tk) rmap[i] = (uint32_t)j;
        if (rmap[i] == GP_NO_INDEX) {
            gp_series sr = {nm, tk};
            if (GP_VEC_PUSH(d->series, sr)) goto done;
            rmap[i] = (uint32_t)(d->series.n - 1);
        }
    }
    /* E events whose B came before this part, in order: their slices go
     * where a single pass puts them (slice_map) */
    for (size_t i = 0; i < src->pending_e.n; i++) {
        const struct pending_e *pe = &src->pending_e.v[i];
        uint32_t track = tmap[pe->track];
        be_stack *st = NULL;
        for (size_t j = 0; j < dst->stacks.n; j++)
            if (dst->stacks.v[j].track == track) st = &dst->stacks.v[j];
        if (!st || st->f.n == 0) {
            d->meta.unmatched_end++;
            continue;
        }
        be_frame f = st->f.v[--st->f.n];
        gp_slice sl = {f.ts,  0,           f.correlation, f.external_id,   f.name,
                       track, GP_NO_INDEX, f.cat,         GP_SLICE_FROM_BE};
        int over = __builtin_sub_overflow(pe->ts, f.ts, &sl.dur);
        if (over || sl.dur < 0) {
            snprintf(dst->errmsg, sizeof dst->errmsg, "%s",
                     over ? BE_RANGE : "\"E\" event earlier than its \"B\"");
            dst->err_off = (int64_t)pe->off;
            rc = GP_EPARSE;
            goto done;
        }
        if (GP_VEC_PUSH(rep, sl) || GP_VEC_PUSH(rep_at, pe->at)) goto done;
    }
    uint32_t gbase = (uint32_t)d->gpu_info.n, sbase = (uint32_t)d->slices.n;
    uint32_t ibase = (uint32_t)d->instants.n;
    uint64_t abase = d->args_text.n;
    if (GP_VEC_RESERVE(d->gpu_info, s->gpu_info.n) ||
        GP_VEC_RESERVE(d->slices, s->slices.n + rep.n) || GP_VEC_RESERVE(d->flows, s->flows.n) ||
        GP_VEC_RESERVE(d->instants, s->instants.n) ||
        GP_VEC_RESERVE(d->mem_events, s->mem_events.n) ||
        GP_VEC_RESERVE(d->counters, s->counters.n) ||
        GP_VEC_RESERVE(d->arg_streams, s->arg_streams.n) ||
        GP_VEC_RESERVE(d->args_text, s->args_text.n) ||
        GP_VEC_RESERVE(d->slice_args, s->slice_args.n) ||
        GP_VEC_RESERVE(d->instant_args, s->instant_args.n))
        goto done;
    MERGE_MOVE_RAW(d->args_text, s->args_text);
    slice_map sm_args = {sbase, rep_at.v, rep_at.n, 0}, sm_str = sm_args, sm_em = sm_args,
              sm_ic = sm_args;
    MERGE_MOVE(d->slice_args, s->slice_args,
               (x.owner = slice_map_at(&sm_args, x.owner), x.off += abase));
    MERGE_MOVE(d->instant_args, s->instant_args, (x.owner += ibase, x.off += abase));
    MERGE_MOVE_RAW(d->gpu_info, s->gpu_info);
#define FIX_SLICE                                                                                  \
    (x.name = smap[x.name], x.track = tmap[x.track], x.cat = (uint16_t)cmap[x.cat],                \
     x.gpu = x.gpu != GP_NO_INDEX ? x.gpu + gbase : x.gpu)
    if (!rep.n) {
        MERGE_MOVE(d->slices, s->slices, FIX_SLICE);
    } else { /* interleave the replayed slices (few: one per range open across the cut) */
        size_t r = 0;
        for (size_t k = 0; k < s->slices.n; k++) {
            while (r < rep.n && rep_at.v[r] <= k) d->slices.v[d->slices.n++] = rep.v[r++];
            gp_slice x = s->slices.v[k];
            FIX_SLICE;
            d->slices.v[d->slices.n++] = x;
        }
        while (r < rep.n) d->slices.v[d->slices.n++] = rep.v[r++];
        GP_VEC_FREE(s->slices);
    }
#undef FIX_SLICE
    MERGE_MOVE(d->arg_streams, s->arg_streams, x.slice = slice_map_at(&sm_str, x.slice));
    for (size_t i = 0; i < s->entry_metrics.n; i++) {
        gp_entry_metrics x = s->entry_metrics.v[i];
        x.slice = slice_map_at(&sm_em, x.slice);
        if (GP_VEC_PUSH(d->entry_metrics, x)) goto done;
    }
    for (size_t i = 0; i < s->inline_children.n; i++) {
        gp_inline_child x = s->inline_children.v[i];
        x.slice = slice_map_at(&sm_ic, x.slice);
        if (GP_VEC_PUSH(d->inline_children, x)) goto done;
    }
    MERGE_MOVE(d->flows, s->flows,
               (x.name = smap[x.name], x.track = tmap[x.track], x.cat = (uint16_t)cmap[x.cat]));
    MERGE_MOVE(d->instants, s->instants,
               (x.name = smap[x.name], x.track = tmap[x.track], x.cat = (uint16_t)cmap[x.cat]));
    MERGE_MOVE(d->mem_events, s->mem_events, x.track = tmap[x.track]);
    MERGE_MOVE(d->counters, s->counters, x.series = rmap[x.series]);
    for (size_t i = 0; i < s->devices.n; i++) {
        gp_device_prop x = s->devices.v[i];
        x.name = smap[x.name];
        if (GP_VEC_PUSH(d->devices, x)) goto done;
    }
    for (size_t i = 0; i < s->tracked_buffers.n; i++) {
        gp_tracked_buffer x = s->tracked_buffers.v[i];
        x.name = smap[x.name];
        x.dtype = smap[x.dtype];
        if (GP_VEC_PUSH(d->tracked_buffers, x)) goto done;
    }
    for (size_t i = 0; i < s->aggs.n; i++) {
        gp_agg_row x = s->aggs.v[i];
        x.name = smap[x.name];
        x.cat = (uint16_t)cmap[x.cat];
        if (x.track != GP_NO_INDEX) x.track = tmap[x.track];
        if (GP_VEC_PUSH(d->aggs, x)) goto done;
        s->aggs.v[i].sketch = NULL; /* moved */
    }
    /* metadata: what the later part saw (top-level keys after the events) */
    gp_trace_meta *dm = &d->meta, *sm = &s->meta;
    if (sm->rank != GP_NONE) dm->rank = sm->rank;
    if (sm->world_size != GP_NONE) dm->world_size = sm->world_size;
    if (sm->backend) dm->backend = smap[sm->backend];
    if (sm->dist_extra) dm->dist_extra = smap[sm->dist_extra];
    if (sm->trace_name) dm->trace_name = smap[sm->trace_name];
    if (sm->display_time_unit) dm->display_time_unit = smap[sm->display_time_unit];
    if (sm->schema_version != GP_NONE) dm->schema_version = sm->schema_version;
    if (sm->has_tracked_memory) {
        dm->has_tracked_memory = 1;
        dm->tracked_current_bytes = sm->tracked_current_bytes;
        dm->tracked_peak_bytes = sm->tracked_peak_bytes;
    }
    if (sm->has_base_time) {
        dm->has_base_time = 1;
        dm->base_time_ns = sm->base_time_ns;
    }
    dm->fractional_ts |= sm->fractional_ts;
    dm->has_trace_events |= sm->has_trace_events;
    dm->unterminated = sm->unterminated;
    dm->gp_stream |= sm->gp_stream;
    if (sm->lib_dropped) dm->lib_dropped = sm->lib_dropped;
    dm->events_read += sm->events_read;
    dm->events_dropped_no_dur += sm->events_dropped_no_dur;
    dm->unmatched_end += sm->unmatched_end;
    /* open B frames of this part continue on dst's stacks */
    for (size_t i = 0; i < src->stacks.n; i++) {
        be_stack *ss = &src->stacks.v[i];
        uint32_t track = tmap[ss->track];
        be_stack *st = NULL;
        for (size_t j = 0; j < dst->stacks.n; j++)
            if (dst->stacks.v[j].track == track) st = &dst->stacks.v[j];
        if (!st) {
            be_stack ns;
            memset(&ns, 0, sizeof ns);
            ns.track = track;
            if (GP_VEC_PUSH(dst->stacks, ns)) goto done;
            st = &dst->stacks.v[dst->stacks.n - 1];
        }
        for (size_t j = 0; j < ss->f.n; j++) {
            be_frame f = ss->f.v[j];
            f.name = smap[f.name];
            f.cat = (uint16_t)cmap[f.cat];
            if (GP_VEC_PUSH(st->f, f)) goto done;
        }
    }
    /* process metadata seen later overrides earlier */
    for (size_t i = 0; i < src->pid_names.cap; i++)
        if (src->pid_names.used[i] &&
            gp_u64map_put(&dst->pid_names, src->pid_names.keys[i], smap[src->pid_names.vals[i]]))
            goto done;
    for (size_t i = 0; i < src->pid_gpu.cap; i++)
        if (src->pid_gpu.used[i] &&
            gp_u64map_put(&dst->pid_gpu, src->pid_gpu.keys[i], src->pid_gpu.vals[i]))
            goto done;
    rc = 0;
done:
    if (rc == GP_ENOMEM) {
        snprintf(dst->errmsg, sizeof dst->errmsg, "out of memory");
        dst->err_off = 0;
    }
    free(smap);
    free(cmap);
    free(tmap);
    free(rmap);
    GP_VEC_FREE(rep);
    GP_VEC_FREE(rep_at);
    return rc;
}

/* Imports a large plain file in nparts parallel parts (mapped when may_map).
 * Returns 1 when the split could not be set up (the caller then imports
 * sequentially), 2 when a part met a unit too long for the mapped path (the
 * caller then splits again, reading). */
static int import_split(const char *path, int nparts, int prog, int may_map, gp_trace **out,
                        gp_err *err)
{
    uint64_t bounds[SPLIT_MAX + 1];
    part parts[SPLIT_MAX];
    memset(parts, 0, sizeof parts);
    gp_input *probe;
    if (gp_input_open_file(path, &probe, err)) return 1;
    uint64_t size = gp_input_size(probe);
    int fd = gp_input_fd(probe);
    int nb = 0;
    bounds[nb++] = 0;
    for (int k = 1; k < nparts; k++) {
        uint64_t c = find_candidate(fd, size / (uint64_t)nparts * (uint64_t)k, size);
        if (c && c > bounds[nb - 1]) bounds[nb++] = c;
    }
    gp_input_close(probe);
    if (nb < 2) return 1;
    int rc = 0;
    for (int k = 0; k < nb; k++) {
        part *w = &parts[k];
        if (gp_input_open_file(path, &w->in, &w->err) ||
            (k && gp_input_seek(w->in, bounds[k], &w->err))) {
            rc = 1;
            break;
        }
        w->p = p_create(w->in, path,
                        k == 0 ? prog : (prog & (PROG_KEEP_ARGS | PROG_ARGS_AT_SOURCE)), &w->err);
        if (!w->p) {
            rc = 1;
            break;
        }
        if (may_map) p_map(w->p, gp_input_fd(w->in), bounds[k]);
        w->p->bounds = bounds;
        w->p->nbounds = nb;
        w->p->next_bound = k + 1;
        if (k) {
            w->p->split_part = 1;
            w->p->top_keys = 2; /* never sees the document's first key */
            w->p->seen_events = 1;
            w->p->base_off = bounds[k];
            w->p->state = S_EV_ITEM;
            w->p->array_form = -1; /* decided below from part 0's first byte */
        }
    }
    if (rc) goto cleanup;
    /* from the file's first bytes, what part 0 learns by parsing: the array
     * form (the first byte after whitespace and a byte order mark is '['),
     * and a libgpuprof stream ("gpuprofStream" is the object's first key,
     * as top_key decides) */
    {
        char head[256];
        ssize_t k = pread(gp_input_fd(parts[0].in), head, sizeof head, 0), i = 0;
        while (i < k && (head[i] == ' ' || head[i] == '\n' || head[i] == '\r' || head[i] == '\t' ||
                         (unsigned char)head[i] == 0xef || (unsigned char)head[i] == 0xbb ||
                         (unsigned char)head[i] == 0xbf))
            i++;
        int af = i < k && head[i] == '[', gs = 0;
        if (i < k && head[i] == '{') {
            static const char key[] = "\"gpuprofStream\"";
            i++;
            while (i < k &&
                   (head[i] == ' ' || head[i] == '\n' || head[i] == '\r' || head[i] == '\t'))
                i++;
            gs = k - i >= (ssize_t)sizeof key - 1 && memcmp(head + i, key, sizeof key - 1) == 0;
        }
        for (int j = 1; j < nb; j++) {
            parts[j].p->array_form = af;
            parts[j].p->gp_stream = gs;
        }
    }
    for (int k = 1; k < nb; k++)
        parts[k].started = pthread_create(&parts[k].th, NULL, part_main, &parts[k]) == 0;
    parts[0].rc = run_any(parts[0].p);
    for (int k = 1; k < nb; k++) {
        if (parts[k].started)
            pthread_join(parts[k].th, NULL);
        else
            parts[k].rc = run_any(parts[k].p); /* could not start a thread: run here */
    }
    progress(parts[0].p, 1);
    for (int k = 0; k < nb; k++)
        if (parts[k].rc == RUN_READ) { /* a unit too long for the mapped path */
            rc = 2;
            goto cleanup;
        }
    /* follow the chain of landings from part 0 */
    P *head = parts[0].p;
    int cur = 0, final_rc = parts[0].rc;
    while (final_rc == 0 && parts[cur].p->landed > 0) {
        int nx = parts[cur].p->landed;
        if (parts[nx].rc) {
            final_rc = parts[nx].rc;
            format_error(parts[nx].p, final_rc, NULL, 0);
            *err = parts[nx].err;
            goto cleanup_rc;
        }
        final_rc = merge_part(head, parts[nx].p);
        head->t->meta.import_parts++;
        cur = nx;
    }
    if (final_rc) {
        format_error(head, final_rc, NULL, 0);
        *err = parts[0].err;
        goto cleanup_rc;
    }
    if ((final_rc = p_finish(head, out))) *err = parts[0].err;
cleanup_rc:
    rc = final_rc;
cleanup:
    for (int k = 0; k < nb; k++) {
        p_destroy(parts[k].p);
        gp_input_close(parts[k].in);
    }
    return rc;
}

int gp_import_json_file(const char *path, const gp_import_opts *opts, gp_trace **out, gp_err *err)
{
    gp_input *in;
    int rc = gp_input_open_file(path, &in, err);
    if (rc) return rc;
    int prog = opts ? opts->progress : -1;
    if (prog < 0) prog = isatty(2);
    prog = (prog ? 1 : 0) | (opts && opts->keep_args == GP_ARGS_TEXT        ? PROG_KEEP_ARGS
                             : opts && opts->keep_args == GP_ARGS_AT_SOURCE ? PROG_ARGS_AT_SOURCE
                                                                            : 0);
    int threads = opts ? opts->threads : 0;
    const char *env = getenv("GPUPROF_IMPORT_THREADS");
    if (threads <= 0 && env && *env) threads = atoi(env);
    if (threads <= 0) {
        long c = sysconf(_SC_NPROCESSORS_ONLN);
        threads = c > 0 ? (int)c : 1;
    }
    if (threads > SPLIT_MAX) threads = SPLIT_MAX;
    uint64_t split_min = SPLIT_MIN_BYTES;
    const char *smin = getenv("GPUPROF_SPLIT_MIN_BYTES"); /* tests use small files */
    if (smin && *smin) split_min = strtoull(smin, NULL, 10);
    if (threads > 1 && !gp_input_is_gzip(in) && gp_input_size(in) >= split_min) {
        gp_input_close(in);
        *out = NULL;
        gp_err_clear(err);
        rc = import_split(path, threads, prog, 1, out, err);
        if (rc == 2) {
            gp_err_clear(err);
            rc = import_split(path, threads, prog, 0, out, err);
        }
        if (rc != 1) return rc;
        if ((rc = gp_input_open_file(path, &in, err))) return rc;
    }
    rc = import(in, path, NULL, 0, prog, out, err);
    gp_input_close(in);
    return rc;
}

int gp_import_json_mem(const void *data, size_t n, const char *name, gp_trace **out, gp_err *err)
{
    gp_input *in;
    int rc = gp_input_open_mem(data, n, name, &in, err);
    if (rc) return rc;
    rc = import(in, name, data, n, 0, out, err);
    gp_input_close(in);
    return rc;
}
