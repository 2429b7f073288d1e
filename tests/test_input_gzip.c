/* tests/test_input_gzip.c: gzip input inflated in its own thread (isa-l when
 * built with it, zlib with GPUPROF_INFLATE=zlib): the bytes and the imported
 * model equal the plain text's, for one and for concatenated members, in
 * small and large reads; truncated and corrupt streams fail with one line;
 * closing early stops the thread; crafted gzip files (every header field,
 * FHCRC over headers of megabytes, damaged headers and trailers, truncation
 * at every byte, several members) are accepted or refused alike by both
 * inflaters, with the same message, whatever the input is split into. */
#include "test.h"
#include "trace/import.h"
#include "trace/input.h"
#include "trace_digest.h"
#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

/* A trace of ~6 MB (several ring chunks) with varied events. */
static char *make_json(size_t *n)
{
    size_t cap = 8u << 20, k = 0;
    char *j = malloc(cap);
    k += (size_t)snprintf(j + k, cap - k, "{\"traceEvents\":[");
    for (int i = 0; k < (6u << 20); i++)
        k += (size_t)snprintf(j + k, cap - k,
                              "%s{\"ph\":\"X\",\"cat\":\"%s\",\"name\":\"op%d\",\"pid\":1,"
                              "\"tid\":%d,\"ts\":%d.%03d,\"dur\":%d,\"args\":{\"External id\":%d}}",
                              i ? ",\n" : "", i % 3 ? "cpu_op" : "kernel", i % 97, i % 5,
                              1000 + i * 3, i % 1000, 1 + i % 7, i);
    k += (size_t)snprintf(j + k, cap - k, "],\"baseTimeNanoseconds\":1000}");
    *n = k;
    return j;
}

/* gzip of data, cut into `members` concatenated gzip members. */
static unsigned char *gz(const char *data, size_t n, int members, size_t *out_n)
{
    size_t cap = n + 4096 * (size_t)members, k = 0;
    unsigned char *out = malloc(cap);
    for (int m = 0; m < members; m++) {
        size_t a = n * (size_t)m / (size_t)members, b = n * (size_t)(m + 1) / (size_t)members;
        z_stream zs;
        memset(&zs, 0, sizeof zs);
        deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
        zs.next_in = (unsigned char *)(uintptr_t)(data + a);
        zs.avail_in = (uInt)(b - a);
        zs.next_out = out + k;
        zs.avail_out = (uInt)(cap - k);
        deflate(&zs, Z_FINISH);
        k = cap - zs.avail_out;
        deflateEnd(&zs);
    }
    *out_n = k;
    return out;
}

static const char *const inflaters[] = {"zlib", "default"};

static void use(const char *which)
{
    if (strcmp(which, "zlib") == 0)
        setenv("GPUPROF_INFLATE", "zlib", 1);
    else
        unsetenv("GPUPROF_INFLATE");
}

TEST(bytes_equal_plain)
{
    size_t n, zn;
    char *j = make_json(&n);
    char *back = malloc(n + 64);
    for (int members = 1; members <= 3; members += 2) {
        unsigned char *z = gz(j, n, members, &zn);
        ASSERT_CMP_INT(zn, <, n / 3); /* really compressed */
        for (int w = 0; w < 2; w++) {
            use(inflaters[w]);
            for (size_t step = 7; step < (4u << 20); step = step * 97 + 1) {
                gp_input *in;
                gp_err err;
                ASSERT_EQ_INT(gp_input_open_mem(z, zn, "z.gz", &in, &err), 0);
                ASSERT_EQ_INT(gp_input_is_gzip(in), 1);
                size_t got = 0;
                for (;;) {
                    long k = gp_input_read(in, back + got,
                                           n + 64 - got < step ? n + 64 - got : step, &err);
                    ASSERT_CMP_INT(k, >=, 0);
                    if (k == 0) break;
                    got += (size_t)k;
                }
                ASSERT_EQ_INT(gp_input_pos(in), zn);
                gp_input_close(in);
                ASSERT_EQ_INT(got, n);
                ASSERT(memcmp(back, j, n) == 0);
            }
        }
        free(z);
    }
    unsetenv("GPUPROF_INFLATE");
    fprintf(stderr, "  default inflater: %s\n", gp_input_inflater());
    free(back);
    free(j);
}

TEST(model_equal_plain)
{
    size_t n, zn;
    char *j = make_json(&n);
    unsigned char *z = gz(j, n, 2, &zn);
    gp_trace *t = NULL;
    gp_err err;
    ASSERT_EQ_INT(gp_import_json_mem(j, n, "t.json", &t, &err), 0);
    uint64_t want = trace_digest(t);
    size_t slices = t->slices.n;
    gp_trace_destroy(t);
    char path[] = "/tmp/gp_gz_XXXXXX";
    int fd = mkstemp(path);
    ASSERT(fd >= 0);
    ASSERT_EQ_INT(write(fd, z, zn), (long)zn);
    close(fd);
    for (int w = 0; w < 2; w++) {
        use(inflaters[w]);
        ASSERT_EQ_INT(gp_import_json_mem(z, zn, "t.json", &t, &err), 0);
        ASSERT_EQ_INT(t->slices.n, slices);
        ASSERT(trace_digest(t) == want);
        gp_trace_destroy(t);
        gp_import_opts o = {0, 2, 0};
        ASSERT_EQ_INT(gp_import_json_file(path, &o, &t, &err), 0);
        ASSERT_EQ_INT(t->slices.n, slices);
        gp_trace_destroy(t);
    }
    unsetenv("GPUPROF_INFLATE");
    unlink(path);
    free(z);
    free(j);
}

TEST(truncated_and_corrupt)
{
    size_t n, zn;
    char *j = make_json(&n);
    unsigned char *z = gz(j, n, 1, &zn);
    for (int w = 0; w < 2; w++) {
        use(inflaters[w]);
        gp_trace *t = NULL;
        gp_err err;
        for (int cut = 1; cut < 8; cut++) {
            size_t at = zn * (size_t)cut / 8;
            ASSERT_EQ_INT(gp_import_json_mem(z, at, "cut.json.gz", &t, &err), GP_EPARSE);
            ASSERT(t == NULL);
            ASSERT_CONTAINS(err.msg, "cut.json.gz: truncated gzip stream");
            ASSERT(strchr(err.msg, '\n') == NULL);
        }
        /* a flipped bit in the deflate data: an error, never a crash */
        unsigned char *bad = malloc(zn);
        memcpy(bad, z, zn);
        bad[zn / 2] ^= 0x5a;
        ASSERT_EQ_INT(gp_import_json_mem(bad, zn, "bad.json.gz", &t, &err), GP_EPARSE);
        ASSERT_CONTAINS(err.msg, "bad.json.gz");
        /* a wrong CRC in the trailer */
        memcpy(bad, z, zn);
        bad[zn - 6] ^= 0xff;
        ASSERT_EQ_INT(gp_import_json_mem(bad, zn, "crc.json.gz", &t, &err), GP_EPARSE);
        ASSERT_CONTAINS(err.msg, "crc.json.gz: corrupt gzip data");
        free(bad);
    }
    unsetenv("GPUPROF_INFLATE");
    free(z);
    free(j);
}

/* Closing before the end stops the inflate thread (a blocked producer). */
TEST(close_early)
{
    size_t n, zn;
    char *j = make_json(&n);
    unsigned char *z = gz(j, n, 1, &zn);
    for (int w = 0; w < 2; w++) {
        use(inflaters[w]);
        for (int reads = 0; reads < 3; reads++) {
            gp_input *in;
            gp_err err;
            ASSERT_EQ_INT(gp_input_open_mem(z, zn, "z.gz", &in, &err), 0);
            char buf[100];
            for (int r = 0; r < reads; r++)
                ASSERT_EQ_INT(gp_input_read(in, buf, sizeof buf, &err), 100);
            if (reads) ASSERT(memcmp(buf, j + 100 * (reads - 1), 100) == 0);
            gp_input_close(in);
        }
    }
    unsetenv("GPUPROF_INFLATE");
    free(z);
    free(j);
}

/* ---- crafted gzip files: both inflaters read the framing alike ---------------------------- */

typedef struct gzb {
    unsigned char *p;
    size_t n, cap;
} gzb;

static void put(gzb *b, const void *d, size_t n)
{
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2 + 64;
        b->p = realloc(b->p, b->cap);
    }
    memcpy(b->p + b->n, d, n);
    b->n += n;
}

static void put1(gzb *b, unsigned c)
{
    unsigned char x = (unsigned char)c;
    put(b, &x, 1);
}

static void put_le(gzb *b, uint32_t v, int bytes)
{
    for (int i = 0; i < bytes; i++) put1(b, (v >> (8 * i)) & 0xff);
}

/* one gzip member */
typedef struct mspec {
    unsigned flg, cm;                      /* FLG; CM (0 means 8) */
    size_t extra, name, comment;           /* lengths of FEXTRA's data, FNAME, FCOMMENT */
    uint32_t bad_hcrc, bad_crc, bad_isize; /* XORed into the stored values */
    const char *data;
    size_t n;
} mspec;

enum { G_FTEXT = 1, G_FHCRC = 2, G_FEXTRA = 4, G_FNAME = 8, G_FCOMMENT = 16 };

/* Appends a member; returns the offset of its header CRC (or of its data
 * when it has none) and sets *trailer to the offset of its trailer. */
static size_t member(gzb *b, const mspec *m, size_t *trailer)
{
    size_t h0 = b->n;
    put1(b, 0x1f);
    put1(b, 0x8b);
    put1(b, m->cm ? m->cm : 8);
    put1(b, m->flg);
    put_le(b, 0x5f5e1000u, 4); /* MTIME */
    put1(b, 2);                /* XFL */
    put1(b, 3);                /* OS */
    if (m->flg & G_FEXTRA) {
        put_le(b, (uint32_t)m->extra, 2);
        for (size_t i = 0; i < m->extra; i++) put1(b, (unsigned)(i * 7)); /* zeros too */
    }
    for (int f = 0; f < 2; f++) {
        size_t len = f ? m->comment : m->name;
        if (!(m->flg & (f ? G_FCOMMENT : G_FNAME))) continue;
        for (size_t i = 0; i < len; i++) put1(b, 1 + (unsigned)(i % 250));
        put1(b, 0);
    }
    size_t hcrc_at = b->n;
    if (m->flg & G_FHCRC)
        put_le(b, ((uint32_t)crc32(0, b->p + h0, (uInt)(b->n - h0)) & 0xffff) ^ m->bad_hcrc, 2);
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    deflateInit2(&zs, 6, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY);
    size_t cap = deflateBound(&zs, (uLong)m->n);
    unsigned char *z = malloc(cap);
    zs.next_in = (unsigned char *)(uintptr_t)m->data;
    zs.avail_in = (uInt)m->n;
    zs.next_out = z;
    zs.avail_out = (uInt)cap;
    deflate(&zs, Z_FINISH);
    put(b, z, cap - zs.avail_out);
    deflateEnd(&zs);
    free(z);
    *trailer = b->n;
    put_le(b, (uint32_t)crc32(0, (const unsigned char *)m->data, (uInt)m->n) ^ m->bad_crc, 4);
    put_le(b, (uint32_t)m->n ^ m->bad_isize, 4);
    return hcrc_at;
}

/* What reading a gzip input gave: the status, the bytes (length and CRC)
 * and the message without the input's name. */
typedef struct gz_outcome {
    long rc;
    size_t n;
    uint32_t crc;
    char msg[sizeof(((gp_err *)0)->msg)];
} gz_outcome;

static void read_all(const unsigned char *z, size_t zn, const char *file, gz_outcome *o)
{
    gp_input *in;
    gp_err err;
    memset(o, 0, sizeof *o);
    const char *name = file ? file : "case.json.gz";
    int rc = file ? gp_input_open_file(file, &in, &err) : gp_input_open_mem(z, zn, name, &in, &err);
    if (rc) {
        o->rc = rc;
        snprintf(o->msg, sizeof o->msg, "open: %.480s", err.msg);
        return;
    }
    static unsigned char buf[1 << 16];
    o->crc = (uint32_t)crc32(0, NULL, 0);
    for (;;) {
        long k = gp_input_read(in, buf, sizeof buf, &err);
        if (k < 0) {
            o->rc = k;
            size_t l = strlen(name);
            ASSERT(strncmp(err.msg, name, l) == 0 && err.msg[l] == ':');
            ASSERT(strchr(err.msg, '\n') == NULL);
            snprintf(o->msg, sizeof o->msg, "%s", err.msg + l + 2);
            break;
        }
        if (k == 0) break;
        o->crc = (uint32_t)crc32(o->crc, buf, (uInt)k);
        o->n += (size_t)k;
    }
    gp_input_close(in);
}

/* The offset in "corrupt gzip data near compressed byte N: invalid deflate
 * data" is where the library stopped reading, some bytes apart (isa-l reads
 * ahead): N is not compared, only that it lies in [lo, hi]. */
static size_t deflate_lo, deflate_hi;

static int deflate_error(const char *msg, unsigned long long *at)
{
    char rest[64];
    return sscanf(msg, "corrupt gzip data near compressed byte %llu: %63[^\n]", at, rest) == 2 &&
           !strcmp(rest, "invalid deflate data");
}

static int same(const gz_outcome *a, const gz_outcome *b)
{
    unsigned long long x, y;
    if (a->rc && a->rc == b->rc && deflate_error(a->msg, &x) && deflate_error(b->msg, &y))
        return x >= deflate_lo && x <= deflate_hi && y >= deflate_lo && y <= deflate_hi;
    if (a->rc != b->rc || strcmp(a->msg, b->msg)) return 0;
    return a->rc || (a->n == b->n && a->crc == b->crc); /* bytes before an error may differ */
}

/* Reads z[0..zn) with both inflaters, split into input chunks of several
 * sizes (all of them unless `big`) and from a file; every reading must give
 * the same gz_outcome, returned in *o. */
static void read_every_way(const unsigned char *z, size_t zn, int big, gz_outcome *o)
{
    static const size_t chunks[] = {0, 65521, 4096, 13, 8, 7, 3, 2, 1};
    size_t nchunks = big ? 2 : sizeof chunks / sizeof *chunks;
    char path[] = "/tmp/gp_gzcase_XXXXXX";
    int fd = mkstemp(path);
    ASSERT(fd >= 0);
    ASSERT_EQ_INT(write(fd, z, zn), (long)zn);
    close(fd);
    gz_outcome first, got;
    int have = 0;
    for (int w = 0; w < 2; w++) {
        use(inflaters[w]);
        for (size_t c = 0; c <= nchunks; c++) {
            gp_input_test_chunk(c < nchunks ? chunks[c] : 0);
            if (c < nchunks)
                read_all(z, zn, NULL, &got);
            else
                read_all(NULL, 0, path, &got);
            if (!have) {
                first = got;
                have = 1;
            } else if (!same(&first, &got)) {
                fprintf(stderr, "  %s, chunk %zu%s: rc %ld n %zu '%s' vs rc %ld n %zu '%s'\n",
                        inflaters[w], c < nchunks ? chunks[c] : 0, c < nchunks ? "" : " (file)",
                        got.rc, got.n, got.msg, first.rc, first.n, first.msg);
                unlink(path);
                gp_input_test_chunk(0);
                unsetenv("GPUPROF_INFLATE");
                ASSERT(!"both inflaters and every split read the file alike");
            }
        }
    }
    gp_input_test_chunk(0);
    unsetenv("GPUPROF_INFLATE");
    unlink(path);
    *o = first;
}

static const char payload[] =
    "{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k1\",\"pid\":0,\"tid\":7,"
    "\"ts\":10,\"dur\":5,\"args\":{\"stream\":7}},\n{\"ph\":\"X\",\"cat\":\"cpu_op\","
    "\"name\":\"aten::mm\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":30}]}";

/* a member whose header ends `off` bytes after byte 1 MiB (the file's read
 * size) by the length of the given field */
static mspec around_mib(unsigned flg, int field, long off)
{
    mspec m = {.flg = flg | G_FHCRC, .data = payload, .n = sizeof payload - 1};
    size_t fixed = 10 + 2 /* HCRC */ + (flg & G_FEXTRA ? 2 : 0) + (flg & G_FNAME ? 1 : 0) +
                   (flg & G_FCOMMENT ? 1 : 0);
    size_t len = (size_t)((long)(1u << 20) + off) - fixed;
    if (field == G_FNAME) m.name = len;
    if (field == G_FCOMMENT) m.comment = len;
    return m;
}

static void expect_ok(const unsigned char *z, size_t zn, int big, const char *data, size_t n)
{
    gz_outcome o;
    read_every_way(z, zn, big, &o);
    if (o.rc) fprintf(stderr, "  refused: %s\n", o.msg);
    ASSERT_EQ_INT(o.rc, 0);
    ASSERT_EQ_INT(o.n, n);
    ASSERT_EQ_INT(o.crc, crc32(0, (const unsigned char *)data, (uInt)n));
}

static void expect_err(const unsigned char *z, size_t zn, int big, const char *want)
{
    gz_outcome o;
    read_every_way(z, zn, big, &o);
    ASSERT_EQ_INT(o.rc, GP_EPARSE);
    ASSERT_EQ_STR(o.msg, want);
}

/* Valid members: every optional field, FHCRC over headers of megabytes
 * (isa-l refused them: its header CRC check failed past its first input
 * chunk), headers ending around the 1 MiB read size. */
TEST(crafted_valid)
{
    size_t pn = sizeof payload - 1, t;
    const mspec good[] = {
        {.data = payload, .n = pn},
        {.flg = G_FTEXT, .data = payload, .n = pn},
        {.flg = 0x1f, .extra = 9, .name = 5, .comment = 300, .data = payload, .n = pn},
        {.flg = G_FHCRC, .data = payload, .n = pn},
        {.flg = G_FEXTRA | G_FHCRC, .extra = 0, .data = payload, .n = pn},
        {.flg = G_FEXTRA | G_FHCRC, .extra = 65535, .data = payload, .n = pn},
        {.flg = G_FNAME | G_FHCRC, .name = 0, .data = payload, .n = pn},
        {.flg = G_FCOMMENT | G_FHCRC, .comment = 1u << 20, .data = payload, .n = pn},
        {.flg = G_FNAME | G_FHCRC, .name = 2u << 20, .data = payload, .n = pn},
        {.flg = 0x1f,
         .extra = 65535,
         .name = 1u << 20,
         .comment = 3u << 19,
         .data = payload,
         .n = pn},
        {.flg = G_FHCRC, .data = "", .n = 0}, /* an empty member */
    };
    for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
        gzb b = {0};
        member(&b, &good[i], &t);
        expect_ok(b.p, b.n, b.n > 60000, good[i].data, good[i].n);
        free(b.p);
    }
    /* headers (their CRC included) ending on either side of 1 MiB */
    for (long off = -3; off <= 3; off++)
        for (int f = 0; f < 2; f++) {
            mspec m =
                around_mib(f ? G_FCOMMENT : G_FNAME | G_FEXTRA, f ? G_FCOMMENT : G_FNAME, off);
            gzb b = {0};
            member(&b, &m, &t);
            expect_ok(b.p, b.n, 1, payload, pn);
            free(b.p);
        }
}

/* Several members (one empty, one with every field), each read alike. */
TEST(crafted_members)
{
    size_t n, t;
    char *j = make_json(&n);
    n = 200000; /* a piece of it: members of ~200 KB */
    const mspec parts[] = {
        {.data = j, .n = n / 3},
        {.flg = G_FHCRC, .data = "", .n = 0},
        {.flg = 0x1f, .extra = 3, .name = 7, .comment = 11, .data = j + n / 3, .n = n - n / 3},
    };
    gzb b = {0};
    for (size_t i = 0; i < 3; i++) member(&b, &parts[i], &t);
    expect_ok(b.p, b.n, 0, j, n);
    size_t whole = b.n;
    /* what may follow the last member: nothing, another member, or garbage */
    char want[200];
    put(&b, "\0\0\0\0", 4);
    snprintf(want, sizeof want, "trailing garbage after the gzip stream (compressed byte %zu)",
             whole);
    expect_err(b.p, b.n, 0, want);
    b.n = whole;
    put(&b, "garbage\n", 8);
    expect_err(b.p, b.n, 0, want);
    b.n = whole;
    put1(&b, 0x1f); /* the start of a member cut short */
    snprintf(want, sizeof want, "truncated gzip stream (compressed byte %zu)", whole + 1);
    expect_err(b.p, b.n, 0, want);
    put1(&b, 0x8c); /* not a member */
    snprintf(want, sizeof want,
             "corrupt gzip data near compressed byte %zu: incorrect header check", whole + 1);
    expect_err(b.p, b.n, 0, want);
    free(b.p);
    free(j);
}

/* Damaged headers and trailers: one message and offset for both inflaters
 * (before, reserved flags were accepted by isa-l only, and a wrong ISIZE or
 * header CRC had one message per inflater). */
TEST(crafted_damaged)
{
    size_t pn = sizeof payload - 1, t;
    char want[200];
    for (unsigned bit = 0x20; bit <= 0x80; bit <<= 1) { /* reserved FLG bits */
        gzb b = {0};
        mspec m = {.flg = G_FNAME | bit, .name = 3, .data = payload, .n = pn};
        member(&b, &m, &t);
        expect_err(b.p, b.n, 0,
                   "corrupt gzip data near compressed byte 3: unknown header flags set");
        free(b.p);
    }
    for (unsigned cm = 0; cm < 256; cm += 7) { /* only 8, deflate, is known */
        if (cm == 8) continue;
        gzb b = {0};
        mspec m = {.cm = cm ? cm : 9, .data = payload, .n = pn};
        member(&b, &m, &t);
        expect_err(b.p, b.n, 0,
                   "corrupt gzip data near compressed byte 2: unknown compression method");
        free(b.p);
    }
    const struct {
        mspec m;
        int field; /* 0 header CRC, 1 data CRC, 2 ISIZE */
        const char *what;
    } bad[] = {
        {{.flg = G_FHCRC, .bad_hcrc = 1, .data = payload, .n = pn}, 0, "header crc mismatch"},
        {{.flg = 0x1f,
          .extra = 4,
          .name = 2,
          .comment = 2u << 20,
          .bad_hcrc = 0x8000,
          .data = payload,
          .n = pn},
         0,
         "header crc mismatch"},
        {{.bad_crc = 1u << 31, .data = payload, .n = pn}, 1, "incorrect data check"},
        {{.flg = G_FHCRC, .bad_crc = 0xffffffffu, .data = "", .n = 0}, 1, "incorrect data check"},
        {{.bad_isize = 1, .data = payload, .n = pn}, 2, "incorrect length check"},
        {{.bad_isize = 1u << 24, .data = "", .n = 0}, 2, "incorrect length check"},
        {{.bad_crc = 1, .bad_isize = 1, .data = payload, .n = pn}, 1, "incorrect data check"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        for (int second = 0; second < 2; second++) { /* alone, or after a good member */
            gzb b = {0};
            mspec ok = {.flg = G_FNAME, .name = 4, .data = payload, .n = pn};
            if (second) member(&b, &ok, &t);
            size_t hcrc = member(&b, &bad[i].m, &t);
            size_t at = bad[i].field == 0 ? hcrc : bad[i].field == 1 ? t : t + 4;
            snprintf(want, sizeof want, "corrupt gzip data near compressed byte %zu: %s", at,
                     bad[i].what);
            expect_err(b.p, b.n, b.n > 60000, want);
            free(b.p);
        }
    }
}

/* Cut at every byte of a header with every field and of a trailer, and at
 * a few places in the deflate data: truncated, with the same offset. */
TEST(crafted_truncated)
{
    size_t pn = sizeof payload - 1, t;
    mspec m = {.flg = 0x1f, .extra = 5, .name = 4, .comment = 3, .data = payload, .n = pn};
    gzb b = {0};
    member(&b, &m, &t);
    char want[200];
    for (size_t cut = 2; cut < b.n; cut++) {
        if (cut > 40 && cut < t - 3 && cut % 17) continue; /* the deflate data: some */
        snprintf(want, sizeof want, "truncated gzip stream (compressed byte %zu)", cut);
        expect_err(b.p, cut, 0, want);
    }
    expect_ok(b.p, b.n, 0, payload, pn);
    free(b.p);
}

/* Damaged deflate data: whatever each library finds, the same gz_outcome
 * (accepted only if the bytes are right; one message). */
TEST(crafted_deflate_damage)
{
    size_t n, t;
    char *j = make_json(&n);
    n = 100000;
    mspec m = {.flg = G_FNAME, .name = 6, .data = j, .n = n};
    gzb b = {0};
    member(&b, &m, &t);
    deflate_lo = 17; /* the deflate data */
    deflate_hi = t;
    uint64_t seed = 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < 60; i++) {
        size_t at = 17 + gp_test_xorshift(&seed) % (t - 17);
        unsigned char save = b.p[at];
        b.p[at] ^= (unsigned char)(1u << (gp_test_xorshift(&seed) % 8));
        gz_outcome o;
        read_every_way(b.p, b.n, 0, &o);
        ASSERT(o.rc == GP_EPARSE || (o.n == n && o.crc == crc32(0, (unsigned char *)j, (uInt)n)));
        if (o.rc)
            ASSERT(strncmp(o.msg, "corrupt gzip data near compressed byte ", 39) == 0 ||
                   strncmp(o.msg, "truncated gzip stream", 21) == 0 ||
                   strncmp(o.msg, "trailing garbage", 16) == 0);
        b.p[at] = save;
    }
    deflate_lo = deflate_hi = 0;
    free(b.p);
    free(j);
}

/* The imported model of a crafted file equals the plain text's for both
 * inflaters (a file: the input is read in 1 MiB pieces). */
TEST(crafted_model)
{
    size_t pn = sizeof payload - 1, t;
    gp_trace *tr = NULL;
    gp_err err;
    char path[] = "/tmp/gp_gzmodel_XXXXXX";
    int fd = mkstemp(path);
    ASSERT(fd >= 0);
    ASSERT_EQ_INT(write(fd, payload, pn), (long)pn);
    close(fd);
    gp_import_opts o = {0, 1, 0};
    ASSERT_EQ_INT(gp_import_json_file(path, &o, &tr, &err), 0);
    uint64_t want = trace_digest(tr);
    ASSERT_EQ_INT(tr->slices.n, 2);
    gp_trace_destroy(tr);
    mspec m = around_mib(G_FCOMMENT, G_FCOMMENT, -1);
    gzb b = {0};
    member(&b, &m, &t);
    mspec m2 = {.flg = 0x1f, .extra = 65535, .name = 2u << 20, .comment = 5, .data = "", .n = 0};
    member(&b, &m2, &t);
    fd = open(path, O_WRONLY | O_TRUNC);
    ASSERT(fd >= 0);
    ASSERT_EQ_INT(write(fd, b.p, b.n), (long)b.n);
    close(fd);
    for (int w = 0; w < 2; w++) {
        use(inflaters[w]);
        int rc = gp_import_json_file(path, &o, &tr, &err);
        if (rc) fprintf(stderr, "  %s: %s\n", inflaters[w], err.msg);
        ASSERT_EQ_INT(rc, 0);
        ASSERT(trace_digest(tr) == want);
        gp_trace_destroy(tr);
    }
    unsetenv("GPUPROF_INFLATE");
    unlink(path);
    free(b.p);
}

TEST_MAIN(bytes_equal_plain, model_equal_plain, truncated_and_corrupt, close_early, crafted_valid,
          crafted_members, crafted_damaged, crafted_truncated, crafted_deflate_damage,
          crafted_model)
