/* tests/test_args_source.c: an import that keeps only where each event's
 * args lie in the file (GP_ARGS_AT_SOURCE), read in later with
 * gp_trace_args_read, gives the same args text and the same Chrome export
 * as an import that copies the text (GP_ARGS_TEXT): plain and gzip files,
 * object and array form, sequential and split over threads. A file that is
 * no longer the one imported (changed, replaced, shorter, shifted) is
 * refused with GP_ESTATE and the trace left as it was. */
#include "test.h"
#include "core/sbuf.h"
#include "render/chrome.h"
#include "trace/args_source.h"
#include "trace/import.h"
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>
#include <zlib.h>

/* A trace with args on complete events and instants (strings with braces,
 * escapes and unicode, nested arrays and objects), events without args,
 * B/E pairs, metadata and counters; seeded. Written plain or gzipped. */
static void write_trace(const char *path, int array_form, int gz, uint64_t seed, int nev)
{
    gp_sbuf b = {0};
    gp_sbuf_puts(&b, "\xef\xbb\xbf \n"); /* a BOM and spaces before the text */
    gp_sbuf_puts(&b, array_form ? "[\n" : "{\"schemaVersion\":1,\"traceEvents\":[\n");
    gp_sbuf_puts(&b, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":2,"
                     "\"args\":{\"name\":\"main\"}}");
    for (int i = 0; i < nev; i++) {
        uint64_t r = gp_test_xorshift(&seed);
        int ts = 1000 + i * 10;
        switch (r % 6) {
        case 0:
        case 1:
            gp_sbuf_printf(&b,
                           ",\n{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"op%d\",\"pid\":1,"
                           "\"tid\":%d,\"ts\":%d.%03d,\"dur\":3,\"args\":{\"External id\":%d,"
                           "\"s\":\"a}{\\\"b\\\\ \\u00e9 %llu\",\"Input Dims\":[[1,%d],[]],"
                           "\"o\":{\"k\":[{\"a\":1}, {\"b\":2}]}}}",
                           i % 9, 2 + i % 3, ts, i % 1000, i, (unsigned long long)(r >> 40),
                           (int)(r >> 20 & 255));
            break;
        case 2:
            gp_sbuf_printf(&b,
                           ",\n{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k%d\",\"pid\":0,"
                           "\"tid\":7,\"ts\":%d,\"dur\":2,\"args\" : { \"correlation\" : %d ,"
                           "\"stream\":7,\"grid\":[1,1,1]}}",
                           i % 5, ts, i);
            break;
        case 3:
            gp_sbuf_printf(&b,
                           ",\n{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"bare%d\",\"pid\":1,"
                           "\"tid\":2,\"ts\":%d,\"dur\":1}",
                           i % 4, ts);
            break;
        case 4:
            gp_sbuf_printf(&b,
                           ",\n{\"ph\":\"i\",\"s\":\"t\",\"name\":\"mark%d\",\"pid\":1,\"tid\":2,"
                           "\"ts\":%d,\"args\":{\"note\":\"n%llu\",\"v\":%d.5}}",
                           i % 3, ts, (unsigned long long)(r >> 50), i);
            break;
        default:
            gp_sbuf_printf(&b,
                           ",\n{\"ph\":\"B\",\"name\":\"range%d\",\"cat\":\"user_annotation\","
                           "\"pid\":1,\"tid\":9,\"ts\":%d,\"args\":{\"x\":1}},\n"
                           "{\"ph\":\"E\",\"pid\":1,\"tid\":9,\"ts\":%d},\n"
                           "{\"ph\":\"C\",\"name\":\"q\",\"pid\":1,\"tid\":2,\"ts\":%d,"
                           "\"args\":{\"depth\":%d}},\n"
                           "{\"ph\":\"i\",\"name\":\"plain\",\"pid\":1,\"tid\":2,\"ts\":%d}",
                           i, ts, ts + 5, ts, i, ts + 1);
        }
    }
    gp_sbuf_puts(&b, array_form ? "\n]\n" : "\n],\"baseTimeNanoseconds\":7000}\n");
    if (gz) {
        gzFile f = gzopen(path, "wb");
        ASSERT(f != NULL);
        ASSERT_EQ_INT(gzwrite(f, b.s, (unsigned)b.n), (int64_t)b.n);
        gzclose(f);
    } else {
        FILE *f = fopen(path, "wb");
        ASSERT(f != NULL);
        ASSERT_EQ_INT(fwrite(b.s, 1, b.n, f), b.n);
        fclose(f);
    }
    gp_sbuf_free(&b);
}

static gp_trace *import(const char *path, int threads, int args)
{
    gp_err err = {0};
    gp_trace *t = NULL;
    gp_import_opts o = {0, threads, args};
    int rc = gp_import_json_file(path, &o, &t, &err);
    if (rc) fprintf(stderr, "  %s\n", err.msg);
    ASSERT_EQ_INT(rc, 0);
    return t;
}

/* The Chrome export of t, in memory (malloc'ed). */
static char *chrome(const gp_trace *t, size_t *n)
{
    char *mem = NULL;
    FILE *f = open_memstream(&mem, n);
    ASSERT(f != NULL);
    ASSERT_EQ_INT(gp_chrome_write(t, f, NULL), 0);
    fclose(f);
    return mem;
}

static void same_args(const gp_trace *a, const gp_trace *b)
{
    ASSERT_EQ_INT(a->slice_args.n, b->slice_args.n);
    ASSERT_EQ_INT(a->instant_args.n, b->instant_args.n);
    for (int k = 0; k < 2; k++) {
        const gp_args_ref *ra = k ? a->instant_args.v : a->slice_args.v;
        const gp_args_ref *rb = k ? b->instant_args.v : b->slice_args.v;
        size_t n = k ? a->instant_args.n : a->slice_args.n;
        for (size_t i = 0; i < n; i++) {
            ASSERT_EQ_INT(ra[i].owner, rb[i].owner);
            ASSERT_EQ_INT(ra[i].len, rb[i].len);
            ASSERT(memcmp(a->args_text.v + ra[i].off, b->args_text.v + rb[i].off, ra[i].len) == 0);
        }
    }
}

static void check_form(int array_form, int gz, int nev)
{
    char path[] = "/tmp/gp_argsrc_XXXXXX";
    int fd = mkstemp(path);
    ASSERT(fd >= 0);
    close(fd);
    write_trace(path, array_form, gz, 0x9e3779b97f4a7c15ull + (uint64_t)(array_form * 2 + gz), nev);
    setenv("GPUPROF_SPLIT_MIN_BYTES", "1", 1); /* small files split too (plain ones) */
    gp_trace *text = import(path, 1, GP_ARGS_TEXT);
    ASSERT_CMP_INT(text->slice_args.n, >, 1000);
    ASSERT_CMP_INT(text->instant_args.n, >, 500);
    size_t nwant;
    char *want = chrome(text, &nwant);
    for (int threads = 1; threads <= 4; threads += 3) {
        gp_trace *t = import(path, threads, GP_ARGS_AT_SOURCE);
        if (threads > 1 && !gz) ASSERT_CMP_INT(t->meta.import_parts, >, 1);
        ASSERT_EQ_INT(t->meta.args_at_source, 1);
        ASSERT_EQ_INT(t->args_text.n, 0);
        ASSERT_EQ_INT(t->slice_args.n, text->slice_args.n);
        struct stat st;
        ASSERT_EQ_INT(stat(path, &st), 0);
        gp_err err = {0};
        int rc = gp_trace_args_read(t, path, &st, &err);
        if (rc) fprintf(stderr, "  %s\n", err.msg);
        ASSERT_EQ_INT(rc, 0);
        ASSERT_EQ_INT(t->meta.args_at_source, 0);
        ASSERT_EQ_INT(t->args_text.n, text->args_text.n);
        same_args(t, text);
        size_t ngot;
        char *got = chrome(t, &ngot);
        ASSERT_EQ_INT(ngot, nwant);
        ASSERT(memcmp(got, want, nwant) == 0);
        free(got);
        /* a second read changes nothing */
        ASSERT_EQ_INT(gp_trace_args_read(t, "/nonexistent/x.json", &st, &err), 0);
        gp_trace_destroy(t);
    }
    free(want);
    gp_trace_destroy(text);
    unsetenv("GPUPROF_SPLIT_MIN_BYTES");
    unlink(path);
}

TEST(plain_object)
{
    check_form(0, 0, 6000);
}
TEST(plain_array)
{
    check_form(1, 0, 6000);
}
TEST(gzip_object)
{
    check_form(0, 1, 6000);
}
TEST(gzip_array)
{
    check_form(1, 1, 6000);
}
/* larger than the reader's 4 MiB chunks: ranges cut by a chunk's end */
TEST(large)
{
    check_form(0, 0, 60000);
    check_form(0, 1, 60000);
}

static char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    ASSERT(f != NULL);
    fseek(f, 0, SEEK_END);
    *n = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc(*n + 1);
    ASSERT_EQ_INT(fread(s, 1, *n, f), *n);
    fclose(f);
    return s;
}

static void put(const char *path, const char *s, size_t n)
{
    FILE *f = fopen(path, "wb");
    ASSERT(f != NULL);
    ASSERT_EQ_INT(fwrite(s, 1, n, f), n);
    fclose(f);
}

/* The refs of t as they were (to see that a refused read changed nothing). */
static uint64_t refs_sum(const gp_trace *t)
{
    uint64_t h = 0;
    for (size_t i = 0; i < t->slice_args.n; i++)
        h = h * 31 + t->slice_args.v[i].off + t->slice_args.v[i].len;
    for (size_t i = 0; i < t->instant_args.n; i++)
        h = h * 31 + t->instant_args.v[i].off + t->instant_args.v[i].len;
    return h;
}

static void refused(gp_trace *t, const char *path, const struct stat *expect, const char *what)
{
    uint64_t h = refs_sum(t);
    gp_err err = {0};
    ASSERT_EQ_INT(gp_trace_args_read(t, path, expect, &err), GP_ESTATE);
    ASSERT_CONTAINS(err.msg, what);
    ASSERT_EQ_INT(t->meta.args_at_source, 1);
    ASSERT_EQ_INT(t->args_text.n, 0);
    ASSERT_EQ_INT(refs_sum(t), h);
}

TEST(changed_file)
{
    char path[] = "/tmp/gp_argsrc_XXXXXX";
    int fd = mkstemp(path);
    ASSERT(fd >= 0);
    close(fd);
    write_trace(path, 0, 0, 42, 6000);
    size_t n;
    char *orig = slurp(path, &n);
    gp_trace *text = import(path, 1, GP_ARGS_TEXT);
    gp_trace *t = import(path, 1, GP_ARGS_AT_SOURCE);
    struct stat st;
    ASSERT_EQ_INT(stat(path, &st), 0);
    /* the same bytes written again, a later modification time */
    put(path, orig, n);
    struct timeval tv[2] = {{st.st_atim.tv_sec, 0}, {st.st_mtim.tv_sec + 5, 0}};
    ASSERT_EQ_INT(utimes(path, tv), 0);
    refused(t, path, &st, "changed since it was loaded");
    /* replaced by another file (another inode) */
    char other[sizeof path + 4];
    snprintf(other, sizeof other, "%s.new", path);
    put(other, orig, n);
    ASSERT_EQ_INT(rename(other, path), 0);
    refused(t, path, &st, "changed since it was loaded");
    /* without a stat to compare: a shorter file, a shifted one */
    put(path, orig, n / 2);
    refused(t, path, NULL, "shorter");
    char *shifted = malloc(n + 1);
    shifted[0] = ' ';
    memcpy(shifted + 1, orig, n);
    put(path, shifted, n + 1);
    refused(t, path, NULL, "no args object");
    /* a missing file: not found, nothing changed */
    unlink(path);
    gp_err err = {0};
    ASSERT_EQ_INT(gp_trace_args_read(t, path, NULL, &err), GP_ENOTFOUND);
    ASSERT_EQ_INT(t->meta.args_at_source, 1);
    /* the original bytes back: read, the same args as the copying import */
    put(path, orig, n);
    ASSERT_EQ_INT(stat(path, &st), 0);
    ASSERT_EQ_INT(gp_trace_args_read(t, path, &st, &err), 0);
    same_args(t, text);
    free(shifted);
    free(orig);
    gp_trace_destroy(t);
    gp_trace_destroy(text);
    unlink(path);
}

TEST(not_at_source)
{
    /* an import that copied the text, or kept no args: nothing to read */
    char path[] = "/tmp/gp_argsrc_XXXXXX";
    int fd = mkstemp(path);
    ASSERT(fd >= 0);
    close(fd);
    write_trace(path, 0, 0, 7, 6000);
    for (int mode = 0; mode <= GP_ARGS_TEXT; mode++) {
        gp_trace *t = import(path, 1, mode);
        ASSERT_EQ_INT(t->meta.args_at_source, 0);
        size_t before = t->args_text.n;
        ASSERT_EQ_INT(mode == 0 ? t->slice_args.n : 1, mode == 0 ? 0 : 1);
        gp_err err = {0};
        ASSERT_EQ_INT(gp_trace_args_read(t, "/nonexistent/x.json", NULL, &err), 0);
        ASSERT_EQ_INT(t->args_text.n, before);
        gp_trace_destroy(t);
    }
    unlink(path);
}

TEST_MAIN(plain_object, plain_array, gzip_object, gzip_array, large, changed_file, not_at_source)
