/* tests/test_input_gzip.c: gzip input inflated in its own thread (isa-l when
 * built with it, zlib with GPUPROF_INFLATE=zlib): the bytes and the imported
 * model equal the plain text's, for one and for concatenated members, in
 * small and large reads; truncated and corrupt streams fail with one line;
 * closing early stops the thread. */
#include "test.h"
#include "trace/import.h"
#include "trace/input.h"
#include "trace_digest.h"
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

TEST_MAIN(bytes_equal_plain, model_equal_plain, truncated_and_corrupt, close_early)
