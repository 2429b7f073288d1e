/* tests/test_import_simd.c: the importer's stage-1 scanning paths (scalar,
 * SSE4.2, AVX2, AVX-512, chosen by GPUPROF_SIMD) against the byte-wise
 * reference ("off"): identical bitmaps, identical models for every shared
 * trace and every fixture, identical errors (code and line:column). */
#include "test.h"
#include "trace/import.h"
#include "trace/jscan.h"
#include "trace_digest.h"
#include <dirent.h>
#include <sys/stat.h>

static outcome import_with(gp_jscan_isa isa, const char *path, const char *mem, size_t n)
{
    setenv("GPUPROF_SIMD", gp_jscan_name(isa), 1);
    outcome o = import_outcome(path, mem, n, 1);
    unsetenv("GPUPROF_SIMD");
    return o;
}

/* Every supported path gives the reference's outcome; returns the number of
 * paths compared. */
static int same_everywhere(const char *path, const char *mem, size_t n)
{
    outcome ref = import_with(GP_JSCAN_OFF, path, mem, n);
    int k = 0;
    for (int i = GP_JSCAN_SCALAR; i < GP_JSCAN_COUNT; i++) {
        if (!gp_jscan_supported((gp_jscan_isa)i)) continue;
        outcome o = import_with((gp_jscan_isa)i, path, mem, n);
        if (o.rc != ref.rc || o.digest != ref.digest || strcmp(o.msg, ref.msg) != 0)
            fprintf(stderr, "  %s on %s: rc %d/%d msg '%s' vs '%s'\n",
                    gp_jscan_name((gp_jscan_isa)i), path ? path : "mem", o.rc, ref.rc, o.msg,
                    ref.msg);
        ASSERT_EQ_INT(o.rc, ref.rc);
        ASSERT_EQ_STR(o.msg, ref.msg);
        ASSERT_EQ_INT(o.slices, ref.slices);
        ASSERT(o.digest == ref.digest);
        k++;
    }
    return k;
}

/* The classifiers agree with a direct test of each byte, on every byte value
 * at every position of a block. */
TEST(classifiers_agree)
{
    enum { NB = 64 };
    static char buf[NB * 64];
    static uint64_t got[NB];
    unsigned seed = 12345;
    for (size_t i = 0; i < sizeof buf; i++) {
        seed = seed * 1103515245u + 12345u;
        /* every byte value, many specials */
        buf[i] = i < 256 * 8 ? (char)(i / 8) : "\"\\ a\x01\x1f\x20\x7f\x80\xff{"[(seed >> 16) % 12];
    }
    int paths = 0;
    for (int isa = GP_JSCAN_SCALAR; isa < GP_JSCAN_COUNT; isa++) {
        gp_jscan_fn fn = gp_jscan_get((gp_jscan_isa)isa);
        if (!gp_jscan_supported((gp_jscan_isa)isa)) {
            ASSERT(fn == NULL);
            continue;
        }
        ASSERT(fn != NULL);
        memset(got, 0xa5, sizeof got);
        fn(buf, NB, got);
        for (size_t i = 0; i < sizeof buf; i++) {
            unsigned char c = (unsigned char)buf[i];
            int want = c == '"' || c == '\\' || c < 0x20;
            int bit = (int)(got[i / 64] >> (i % 64) & 1);
            if (bit != want)
                fprintf(stderr, "  %s: byte %zu (0x%02x): bit %d\n",
                        gp_jscan_name((gp_jscan_isa)isa), i, c, bit);
            ASSERT_EQ_INT(bit, want);
        }
        paths++;
    }
    ASSERT(gp_jscan_get(GP_JSCAN_OFF) == NULL);
    fprintf(stderr, "  %d classifier(s) on this CPU; importer default: %s\n", paths,
            gp_jscan_name(gp_jscan_choose()));
}

/* GPUPROF_SIMD picks a supported path and ignores anything else. */
TEST(choose_env)
{
    setenv("GPUPROF_SIMD", "scalar", 1);
    ASSERT_EQ_INT(gp_jscan_choose(), GP_JSCAN_SCALAR);
    setenv("GPUPROF_SIMD", "off", 1);
    ASSERT_EQ_INT(gp_jscan_choose(), GP_JSCAN_OFF);
    setenv("GPUPROF_SIMD", "auto", 1);
    gp_jscan_isa best = gp_jscan_choose();
    ASSERT(best != GP_JSCAN_OFF && gp_jscan_supported(best));
    ASSERT_EQ_INT(best, gp_jscan_best());
    for (int i = best + 1; i < GP_JSCAN_COUNT; i++) ASSERT(!gp_jscan_supported((gp_jscan_isa)i));
    setenv("GPUPROF_SIMD", "bogus", 1);
    ASSERT_EQ_INT(gp_jscan_choose(), GP_JSCAN_OFF);
    unsetenv("GPUPROF_SIMD");
    ASSERT_EQ_INT(gp_jscan_choose(), GP_JSCAN_OFF); /* the measured-fastest default */
}

/* Strings of every length 0..150 with escapes, control bytes and quotes at
 * every offset from a 64-byte block edge, in a trace of ~2 MB so that
 * strings also straddle buffer refills; the decoded names are checked
 * against what was written. */
TEST(strings_at_every_offset)
{
    size_t cap = 4u << 20, n = 0;
    char *j = malloc(cap);
    n += (size_t)snprintf(j + n, cap - n, "{\"traceEvents\":[");
    int ev = 0;
    for (int rep = 0; n < (2u << 20); rep++)
        for (int len = 0; len <= 150 && n + 1024 < cap; len++, ev++) {
            char name[200];
            int k = 0;
            for (int i = 0; i < len; i++) name[k++] = (char)('a' + (i + rep) % 26);
            name[k] = 0;
            /* an escape at a moving position: \" then \u00e9 then \\ */
            int at = (len * 7 + rep) % (len + 1);
            const char *esc = rep % 3 == 0 ? "\\\"" : rep % 3 == 1 ? "\\u00e9" : "\\\\";
            n += (size_t)snprintf(j + n, cap - n,
                                  "%s{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"%.*s%s%s\","
                                  "\"pid\":1,\"tid\":%d,\"ts\":%d.%03d,\"dur\":1,"
                                  "\"args\":{\"k%*s\":\"%s\"}}",
                                  ev ? ",\n" : "", at, name, esc, name + at, rep % 4, ev, len,
                                  rep % 7 + 1, "", name);
        }
    n += (size_t)snprintf(j + n, cap - n, "]}");
    ASSERT_EQ_INT(same_everywhere(NULL, j, n) >= 1, 1);
    /* decoded names, independently */
    setenv("GPUPROF_SIMD", "auto", 1);
    gp_trace *t = NULL;
    gp_err err;
    ASSERT_EQ_INT(gp_import_json_mem(j, n, "mem.json", &t, &err), 0);
    unsetenv("GPUPROF_SIMD");
    ASSERT_EQ_INT(t->slices.n, ev);
    for (int i = 0; i < 151; i++) {
        const char *nm = gp_trace_s(t, t->slices.v[i].name);
        int len = i, at = (len * 7) % (len + 1);
        ASSERT_EQ_INT(strlen(nm), len + 1); /* '"' is one byte */
        ASSERT_EQ_INT(nm[at], '"');
        for (int c = 0; c < len; c++) ASSERT_EQ_INT(nm[c < at ? c : c + 1], 'a' + c % 26);
    }
    gp_trace_destroy(t);
    free(j);
}

/* Malformed strings and values at every offset from a block edge fail the
 * same way (code, line, column, words) on every path. */
TEST(errors_identical)
{
    static const char *const bad[] = {
        "\"na\x01me\"",  /* control byte */
        "\"name\\q\"",   /* invalid escape */
        "\"name\\u12\"", /* short \u */
        "\"name",        /* unterminated */
        "\"nam\\",       /* backslash at the end */
        "12x",           /* junk after a number */
    };
    char j[512];
    for (size_t b = 0; b < sizeof bad / sizeof *bad; b++)
        for (int pad = 0; pad < 70; pad++) {
            int n =
                snprintf(j, sizeof j, "{\"traceEvents\":[{\"ph\":\"X\",\"x\":\"%*s\",\"name\":%s",
                         pad, "", bad[b]);
            ASSERT_CMP_INT(same_everywhere(NULL, j, (size_t)n), >=, 1);
        }
    /* a NUL byte inside a string */
    static const char nul[] = "{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"a\0b\"}]}";
    same_everywhere(NULL, nul, sizeof nul - 1);
}

static int is_json_name(const char *n)
{
    size_t l = strlen(n);
    return (l > 5 && strcmp(n + l - 5, ".json") == 0) ||
           (l > 8 && strcmp(n + l - 8, ".json.gz") == 0);
}

/* Every JSON file under dir (two levels) gives the same outcome on every
 * path; returns the number of files. */
static int walk(const char *dir, int depth)
{
    DIR *d = opendir(dir);
    if (!d) return 0;
    int files = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.') continue;
        char p[4096];
        snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
        struct stat st;
        if (stat(p, &st)) continue;
        if (S_ISDIR(st.st_mode) && depth < 2)
            files += walk(p, depth + 1);
        else if (S_ISREG(st.st_mode) && is_json_name(de->d_name)) {
            same_everywhere(p, NULL, 0);
            files++;
        }
    }
    closedir(d);
    return files;
}

TEST(fixtures_same_model)
{
    ASSERT_CMP_INT(walk(GP_TEST_DATA, 0), >, 0);
}

TEST(shared_traces_same_model)
{
    const char *dir = gp_test_traces_dir();
    if (!dir) SKIP("shared traces not found (GPUPROF_TRACES)");
    int files = walk(dir, 0);
    fprintf(stderr, "  %d shared JSON files compared\n", files);
    ASSERT_CMP_INT(files, >, 0);
}

TEST_MAIN(classifiers_agree, choose_env, strings_at_every_offset, errors_identical,
          fixtures_same_model, shared_traces_same_model)
