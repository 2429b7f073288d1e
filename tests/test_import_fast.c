/* tests/test_import_fast.c: the importer's speculative event fast path
 * (fast_event / fast_kineto, $GPUPROF_IMPORT_FAST) and plain files mapped
 * instead of read ($GPUPROF_IMPORT_MMAP) against the general parser and the
 * read path: the same model (field digest), return code and error message
 * (line and column) on generated variations of Kineto events, on their
 * truncations and mutations, and on every shared trace; a file truncated
 * while mapped gives a one-line error, never a crash. */
#include "test.h"
#include "trace/import.h"
#include "input_helpers.h"
#include "trace/input.h"
#include "trace_digest.h"
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char tmpdir[256];

static void remove_tmp(void)
{
    rmdir(tmpdir); /* empty by then: each test removes its files */
}

static void setup_tmp(void)
{
    if (tmpdir[0]) return;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/gp_test_import_fast_%d", (int)getpid());
    mkdir(tmpdir, 0700);
    atexit(remove_tmp);
}

/* Imports a file with the fast path on or off and mapping off, on (1 MiB and
 * up) or for any size. */
static outcome import_file(const char *path, int fast, const char *mmap, int threads)
{
    setenv("GPUPROF_IMPORT_FAST", fast ? "1" : "0", 1);
    setenv("GPUPROF_IMPORT_MMAP", mmap, 1);
    outcome o = import_outcome(path, NULL, 0, threads);
    unsetenv("GPUPROF_IMPORT_FAST");
    unsetenv("GPUPROF_IMPORT_MMAP");
    return o;
}

static int write_file(const char *path, const char *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    size_t k = fwrite(data, 1, n, f);
    return fclose(f) == 0 && k == n ? 0 : -1;
}

/* The general parser read from the file is the reference; the fast path,
 * the mapping and both together must give its outcome. Returns 0 or -1. */
static int same_all_ways(const char *path, int threads)
{
    outcome ref = import_file(path, 0, "0", threads);
    static const struct {
        int fast;
        const char *mmap;
    } ways[] = {{1, "0"}, {0, "always"}, {1, "always"}, {1, "1"}};
    for (size_t i = 0; i < sizeof ways / sizeof *ways; i++) {
        outcome o = import_file(path, ways[i].fast, ways[i].mmap, threads);
        if (o.rc != ref.rc || o.digest != ref.digest || strcmp(o.msg, ref.msg) != 0) {
            fprintf(stderr, "  %s (fast %d, mmap %s, %d threads): rc %d/%d msg '%s' vs '%s'\n",
                    path, ways[i].fast, ways[i].mmap, threads, o.rc, ref.rc, o.msg, ref.msg);
            return -1;
        }
    }
    return 0;
}

/* ---- generated variations of Kineto events -------------------------------------------- */

typedef struct sbuf {
    char *s;
    size_t n, cap;
} sbuf;

static void put(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(sbuf *b, const char *fmt, ...)
{
    va_list ap;
    for (;;) {
        va_start(ap, fmt);
        int k = vsnprintf(b->s + b->n, b->cap - b->n, fmt, ap);
        va_end(ap);
        if (k >= 0 && (size_t)k < b->cap - b->n) {
            b->n += (size_t)k;
            return;
        }
        b->cap = b->cap * 2 + (size_t)k + 64;
        b->s = realloc(b->s, b->cap);
        if (!b->s) abort();
    }
}

static uint64_t rnd(uint64_t *seed, uint64_t n)
{
    return gp_test_xorshift(seed) % n;
}

/* whitespace between tokens: mostly Kineto's, sometimes none, newlines or
 * tabs */
static const char *gap(uint64_t *seed)
{
    static const char *const g[] = {" ", " ", " ", "", "\n    ", "\t", "  ", "\r\n"};
    return g[rnd(seed, 8)];
}

/* 1 while a document is generated without the forms that make most events
 * invalid (negative or huge times, dropped keys, args not an object) */
static int clean;

/* a number of many forms: integers of 1-20 digits, negative, fractions,
 * exponents, leading zeros */
static void number_(sbuf *b, uint64_t *seed, int edges)
{
    static const char *const edge[] = {"9223372036854775807",
                                       "9223372036854775808",
                                       "-9223372036854775808",
                                       "9999999999999999999",
                                       "18446744073709551615",
                                       "18446744073709551616",
                                       "999999999999999999",
                                       "-999999999999999999",
                                       "1000000000000000000",
                                       "0.0",
                                       "-0",
                                       "007",
                                       "1e400",
                                       "9223372036854775.807",
                                       "0.00049999"};
    int form = (int)rnd(seed, 12);
    if (clean && (form == 0 || form == 5 || (form >= 10 && !edges))) form = 9;
    if (form >= 10) {
        put(b, "%s", edge[rnd(seed, sizeof edge / sizeof *edge)]);
        return;
    }
    if (form == 0) put(b, "-");
    int nd = 1 + (int)rnd(seed, clean ? 12 : 20);
    if (form == 1) nd = 1 + (int)rnd(seed, 4);
    for (int i = 0; i < nd; i++)
        put(b, "%c",
            (char)('0' + (i == 0 && nd > 1 && form != 2 ? 1 + rnd(seed, 9) : rnd(seed, 10))));
    if (form == 3 || form == 4) {
        put(b, ".");
        int fd = 1 + (int)rnd(seed, 7);
        for (int i = 0; i < fd; i++) put(b, "%c", (char)('0' + rnd(seed, 10)));
    }
    if (form == 5) put(b, "e%d", (int)rnd(seed, 5));
    if (form == 6) put(b, "E-%d", (int)rnd(seed, 3));
}

static void number(sbuf *b, uint64_t *seed)
{
    number_(b, seed, 0);
}

static void string(sbuf *b, uint64_t *seed, const char *base)
{
    int form = (int)rnd(seed, 12);
    if (form == 0)
        put(b, "\"%s\\u0041\"", base); /* an escape */
    else if (form == 1)
        put(b, "\"%s\\\"q\\\\\"", base);
    else if (form == 2)
        put(b, "\"\"");
    else
        put(b, "\"%s\"", base);
}

static void value(sbuf *b, uint64_t *seed, int depth)
{
    switch (rnd(seed, depth ? 6 : 10)) {
    case 0:
    case 1:
        number_(b, seed, 1); /* argument values: the edge cases in clean documents too */
        break;
    case 2:
    case 3:
        string(b, seed, "v");
        break;
    case 4:
        put(b, "%s", rnd(seed, 3) == 0 ? "true" : rnd(seed, 2) ? "false" : "null");
        break;
    case 5: {
        int n = (int)rnd(seed, 5);
        put(b, "[");
        for (int i = 0; i < n; i++) {
            if (i) put(b, ",%s", gap(seed));
            if (rnd(seed, 5) == 0)
                value(b, seed, depth + 1);
            else
                put(b, "%d", (int)rnd(seed, 300) - 10);
        }
        put(b, "]");
        break;
    }
    default:
        if (depth < 2) {
            put(b, "{\"k\":%s", gap(seed));
            value(b, seed, depth + 1);
            put(b, "}");
        } else
            put(b, "7");
    }
}

static const char *const arg_keys[] = {"External id",
                                       "correlation",
                                       "device",
                                       "context",
                                       "stream",
                                       "grid",
                                       "block",
                                       "registers per thread",
                                       "shared memory",
                                       "blocks per SM",
                                       "warps per SM",
                                       "est. achieved occupancy %",
                                       "bytes",
                                       "Ev Idx",
                                       "queued",
                                       "cbid",
                                       "Addr",
                                       "Bytes",
                                       "Total Allocated",
                                       "Device Type",
                                       "Device Id",
                                       "name",
                                       "labels",
                                       "external id",
                                       "memory bandwidth (GB/s)"};

static void args(sbuf *b, uint64_t *seed)
{
    int n = (int)rnd(seed, 14);
    if (rnd(seed, 40) == 0) n = 70; /* more than MAX_ARGS */
    put(b, "{%s", rnd(seed, 4) == 0 ? "\n      " : "");
    for (int i = 0; i < n; i++) {
        if (i) put(b, ",%s", gap(seed));
        const char *k = arg_keys[rnd(seed, sizeof arg_keys / sizeof *arg_keys)];
        if (rnd(seed, 15) == 0)
            put(b, "\"%s\\u0020\"", k); /* an escaped key */
        else
            put(b, "\"%s\"", k);
        put(b, "%s:%s", rnd(seed, 20) == 0 ? " " : "", gap(seed));
        if (!strcmp(k, "grid") || !strcmp(k, "block"))
            rnd(seed, 4)
                ? put(b, "[%d,%s%d, %d]", (int)rnd(seed, 99), gap(seed), (int)rnd(seed, 9), 1)
                : value(b, seed, 0);
        else
            value(b, seed, 0);
    }
    put(b, "%s}", rnd(seed, 4) == 0 ? "\n    " : "");
}

/* One event: Kineto's keys in Kineto's order most of the time, otherwise
 * shuffled, dropped, repeated or joined by unknown keys, with values of any
 * form (times as integers, fractions, exponents; ids as strings). */
static void event(sbuf *b, uint64_t *seed)
{
    static const char *const phs[] = {"X", "X", "X", "i", "B", "E", "s", "f", "M", "C", "I", "XX"};
    static const char *const cats[] = {"cpu_op",          "kernel",    "cuda_runtime",
                                       "gpu_memcpy",      "ac2g",      "cpu_instant_event",
                                       "user_annotation", "gpu_memset"};
    static const char *const names[] = {"aten::empty",
                                        "void kernel<4>(float*)",
                                        "[memory]",
                                        "cudaLaunchKernel",
                                        "process_name",
                                        "thread_name",
                                        "Memcpy HtoD (Pageable -> Device)",
                                        "process_labels"};
    const char *order[12] = {"ph", "cat", "s",    "name", "pid", "tid",
                             "ts", "dur", "args", "id",   "bp",  "zz"};
    int nk = 9;
    int form = (int)rnd(seed, 6);
    if (form == 0) { /* shuffled, sometimes with id/bp/unknown keys */
        nk = 9 + (int)rnd(seed, 4);
        for (int i = nk - 1; i > 0; i--) {
            int j = (int)rnd(seed, (uint64_t)i + 1);
            const char *t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
    }
    put(b, "{%s", rnd(seed, 3) == 0 ? "\n    " : "");
    int first = 1;
    for (int i = 0; i < nk; i++) {
        const char *k = order[i];
        if (form == 1 && !clean && rnd(seed, 6) == 0) continue;     /* dropped */
        if (!strcmp(k, "s") && form != 0 && rnd(seed, 3)) continue; /* optional */
        if (!first) put(b, ",%s", gap(seed));
        first = 0;
        int rep = form == 2 && rnd(seed, 8) == 0; /* a repeated key */
        for (int r = 0; r <= rep; r++) {
            if (r) put(b, ",%s", gap(seed));
            if (form == 3 && rnd(seed, 12) == 0)
                put(b, "\"%c\\u00%02x\"", k[0], (unsigned char)k[1]); /* escaped key */
            else
                put(b, "\"%s\"", k);
            put(b, "%s:%s", form == 4 && rnd(seed, 4) == 0 ? " " : "", gap(seed));
            if (!strcmp(k, "ph"))
                put(b, "\"%s\"", phs[rnd(seed, sizeof phs / sizeof *phs)]);
            else if (!strcmp(k, "cat"))
                string(b, seed, cats[rnd(seed, sizeof cats / sizeof *cats)]);
            else if (!strcmp(k, "name"))
                string(b, seed, names[rnd(seed, sizeof names / sizeof *names)]);
            else if (!strcmp(k, "s") || !strcmp(k, "bp"))
                put(b, "\"%s\"", rnd(seed, 2) ? "t" : "e");
            else if (!strcmp(k, "pid") || !strcmp(k, "tid") || !strcmp(k, "id")) {
                int f = (int)rnd(seed, 8);
                if (f == 0)
                    put(b, "\"%d\"", (int)rnd(seed, 100));
                else if (f == 1)
                    put(b, "\"Spans %d\"", (int)rnd(seed, 3));
                else if (f == 2)
                    number(b, seed);
                else
                    put(b, "%d", (int)rnd(seed, 1000000));
            } else if (!strcmp(k, "ts") || !strcmp(k, "dur")) {
                int f = (int)rnd(seed, 6);
                if (f == 0)
                    number(b, seed);
                else if (f == 1)
                    put(b, "%llu.%03d", (unsigned long long)rnd(seed, 2000000000000000ull),
                        (int)rnd(seed, 1000));
                else
                    put(b, "%llu", (unsigned long long)rnd(seed, 2000000000000000ull));
            } else if (!strcmp(k, "args"))
                rnd(seed, 12) || clean ? args(b, seed) : value(b, seed, 0);
            else
                value(b, seed, 0);
        }
    }
    put(b, "%s}", rnd(seed, 3) == 0 ? "\n  " : "");
}

static void document(sbuf *b, uint64_t *seed, int nev)
{
    b->n = 0;
    put(b, "{\"schemaVersion\": 1,\n  \"traceEvents\": [\n");
    for (int i = 0; i < nev; i++) {
        if (i) put(b, ",\n  ");
        event(b, seed);
    }
    put(b, "\n]}\n");
}

/* Many documents of generated events: each whole, cut short at a random
 * byte and with one byte changed; every way agrees with the general parser
 * read from the file. */
TEST(generated_events_agree)
{
    setup_tmp();
    char path[512];
    snprintf(path, sizeof path, "%s/gen.json", tmpdir);
    uint64_t seed = 0x5eed19ull;
    sbuf b = {0};
    int failures = 0, docs = 0, ok_docs = 0;
    for (int d = 0; d < 300; d++) {
        clean = d % 2;
        document(&b, &seed, 1 + (int)rnd(&seed, 40));
        for (int v = 0; v < 3; v++) {
            size_t n = b.n;
            char saved = 0;
            size_t at = 0;
            if (v == 1) n = 1 + rnd(&seed, b.n); /* truncated */
            if (v == 2) {                        /* one byte changed */
                static const char alpha[] = "{}[]\":, \n0123456789.-eE\\tfnu\x01x";
                at = rnd(&seed, b.n);
                saved = b.s[at];
                b.s[at] = alpha[rnd(&seed, sizeof alpha - 1)];
            }
            ASSERT_EQ_INT(write_file(path, b.s, n), 0);
            if (same_all_ways(path, 1)) failures++;
            if (failures == 1 && getenv("GP_TEST_KEEP")) {
                fprintf(stderr, "  kept %s\n", path);
                exit(1);
            }
            if (v == 0 && import_file(path, 0, "0", 1).rc == 0) ok_docs++;
            if (v == 2) b.s[at] = saved;
            docs++;
        }
    }
    fprintf(stderr, "  %d documents compared (%d of the whole ones valid)\n", docs, ok_docs);
    free(b.s);
    unlink(path);
    ASSERT_EQ_INT(failures, 0);
    ASSERT_CMP_INT(ok_docs, >, 30); /* the generator does make valid traces too */
}

/* The fast path must be taken, and must read what the general path reads:
 * Kineto's shape, with every integer and time form that it accepts. */
TEST(kineto_shape_values)
{
    setup_tmp();
    char path[512];
    snprintf(path, sizeof path, "%s/kineto.json", tmpdir);
    uint64_t seed = 0x4b1e70ull;
    sbuf b = {0};
    put(&b, "{\"traceEvents\": [\n");
    /* integers at the edges of int64 and of the 18-digit fast case */
    static const char *const edge[] = {"9999999999999999999",
                                       "9223372036854775808",
                                       "18446744073709551615",
                                       "-9223372036854775808",
                                       "999999999999999999",
                                       "1000000000000000000",
                                       "0",
                                       "-1"};
    for (int i = 0; i < 4000; i++) {
        unsigned long long ts = gp_test_xorshift(&seed) >> (i % 50 + 14);
        int pd = (int)rnd(&seed, 19);
        put(&b,
            "%s  {\"ph\": \"%s\", \"cat\": \"%s\", %s\"name\": \"n%d\", \"pid\": %s%lld, \"tid\": "
            "%lld, "
            "\"ts\": %llu%s%.*s, \"dur\": %d.%d, \"args\": {\"External id\": %lld, "
            "\"correlation\": %d, "
            "\"grid\": [%d, 1, 1], \"blocks per SM\": 0.%d, \"device\": %d, \"stream\": \"%d\", "
            "\"bytes\": %s}}",
            i ? ",\n" : "", i % 7 ? "X" : "i", i % 3 ? "kernel" : "cpu_op",
            i % 7 ? "" : "\"s\": \"t\", ", i % 97, i % 5 ? "" : "-",
            (long long)(gp_test_xorshift(&seed) >> (i % 63 + 1)),
            (long long)(gp_test_xorshift(&seed) % 100000), ts, pd ? "." : "", pd,
            "1234567890123456789", i % 1000, i % 10,
            (long long)(gp_test_xorshift(&seed) >> (i % 63 + 1)), i, i % 100, i % 1000, i % 8,
            i % 16, edge[i % 8]);
    }
    /* flows in Kineto's order, ids at the edges of the 18-digit case */
    for (int i = 0; i < 1000; i++)
        put(&b,
            ",\n  {\"ph\": \"%s\", \"id\": %s%lld, \"pid\": %d, \"tid\": %d, \"ts\": %llu%s, "
            "\"cat\": \"ac2g\", \"name\": \"ac2g\"%s}",
            i % 2 ? "s" : "f", i % 9 ? "" : "-",
            (long long)(gp_test_xorshift(&seed) >> (i % 63 + 1)), i % 3, i % 5,
            (unsigned long long)(gp_test_xorshift(&seed) >> 20), i % 4 ? "" : ".5",
            i % 2 ? "" : ", \"bp\": \"e\"");
    put(&b, "\n]}\n");
    ASSERT_EQ_INT(write_file(path, b.s, b.n), 0);
    ASSERT_EQ_INT(same_all_ways(path, 1), 0);
    outcome o = import_file(path, 1, "1", 1);
    if (o.rc) fprintf(stderr, "  %s\n", o.msg);
    ASSERT_EQ_INT(o.rc, 0);
    ASSERT_CMP_INT(o.slices, >, 3000);
    free(b.s);
    unlink(path);
}

/* Events without "cat" (its span is then the literal "", which the
 * category cache must not read past: found by fuzz_import under ASan). */
TEST(events_without_cat)
{
    setup_tmp();
    char path[512];
    snprintf(path, sizeof path, "%s/nocat.json", tmpdir);
    const char *doc =
        "{\"traceEvents\": [{\"ph\": \"X\", \"name\": \"a\", \"pid\": 1, \"tid\": 1, "
        "\"ts\": 1, \"dur\": 1}, {\"ph\": \"i\", \"name\": \"b\", \"pid\": 1, \"tid\": 1, "
        "\"ts\": 2}, {\"ph\": \"f\", \"id\": 3, \"pid\": 1, \"tid\": 1, \"ts\": 3}, "
        "{\"ph\": \"X\", \"cat\": \"\", \"name\": \"c\", \"pid\": 1, \"tid\": 1, \"ts\": 4, "
        "\"dur\": 1}]}";
    ASSERT_EQ_INT(write_file(path, doc, strlen(doc)), 0);
    ASSERT_EQ_INT(same_all_ways(path, 1), 0);
    outcome o = import_file(path, 1, "always", 1);
    ASSERT_EQ_INT(o.rc, 0);
    ASSERT_EQ_INT(o.slices, 2);
    unlink(path);
}

/* ---- shared traces: plain copies, mapped and read, 1 and 2 threads ------------------------ */

static int walk(const char *dir, int depth, int *files)
{
    DIR *d = opendir(dir);
    if (!d) return 0;
    int failures = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.') continue;
        char p[4096], plain[4096];
        snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
        struct stat st;
        if (stat(p, &st)) continue;
        size_t l = strlen(de->d_name);
        if (S_ISDIR(st.st_mode) && depth < 2)
            failures += walk(p, depth + 1, files);
        else if (S_ISREG(st.st_mode) && ((l > 5 && !strcmp(de->d_name + l - 5, ".json")) ||
                                         (l > 8 && !strcmp(de->d_name + l - 8, ".json.gz")))) {
            snprintf(plain, sizeof plain, "%s/plain.json", tmpdir);
            if (gp_test_inflate_to(p, plain)) {
                failures++;
                continue;
            }
            setenv("GPUPROF_SPLIT_MIN_BYTES", "100000", 1);
            for (int th = 1; th <= 2; th++)
                if (same_all_ways(plain, th)) failures++;
            unsetenv("GPUPROF_SPLIT_MIN_BYTES");
            unlink(plain);
            (*files)++;
        }
    }
    closedir(d);
    return failures;
}

TEST(fixtures_agree)
{
    setup_tmp();
    int files = 0;
    ASSERT_EQ_INT(walk(GP_TEST_DATA, 0, &files), 0);
    ASSERT_CMP_INT(files, >, 0);
}

TEST(shared_traces_agree)
{
    const char *dir = gp_test_traces_dir();
    if (!dir) SKIP("shared traces not found (GPUPROF_TRACES)");
    setup_tmp();
    int files = 0;
    ASSERT_EQ_INT(walk(dir, 0, &files), 0);
    fprintf(stderr, "  %d shared traces compared (plain copies, 1 and 2 threads)\n", files);
    ASSERT_CMP_INT(files, >, 0);
}

/* A unit longer than the mapped path's limit (UNIT_MAX / 2; lowered here
 * with $GPUPROF_IMPORT_MMAP_UNIT) sends the import back to the read path,
 * from the start, alone and split: the read path's outcome, valid or not. */
TEST(long_unit_goes_back_to_reading)
{
    setup_tmp();
    char path[512];
    snprintf(path, sizeof path, "%s/long.json", tmpdir);
    sbuf b = {0};
    put(&b, "{\"deviceProperties\": [");
    for (int i = 0; i < 2000; i++)
        put(&b, "%s{\"id\": %d, \"name\": \"gpu\"}", i ? ", " : "", i % 8);
    put(&b, "],\n \"traceEvents\": [\n");
    /* about 20 MiB: the limit is checked at the 8 MiB window boundaries,
     * which any unit longer than a window crosses */
    for (int i = 0; i < 130000; i++)
        put(&b,
            "%s  {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"op%d\", \"pid\": 1, \"tid\": %d, "
            "\"ts\": %d, \"dur\": 3, \"args\": {\"External id\": %d, \"long\": \"%0*d\"}}",
            i ? ",\n" : "", i % 50, i % 4, i * 10, i, i == 100000 ? 3000 : 1, 7);
    put(&b, "\n]}\n");
    setenv("GPUPROF_SPLIT_MIN_BYTES", "100000", 1);
    for (int cut = 0; cut < 2; cut++) {
        size_t n = cut ? b.n - 40 : b.n; /* whole, or cut inside the last event */
        ASSERT_EQ_INT(write_file(path, b.s, n), 0);
        for (int th = 1; th <= 2; th++) {
            outcome ref = import_file(path, 0, "0", th);
            ASSERT_EQ_INT(ref.rc != 0, cut);
            static const char *const lim[] = {"2000", "100", "1"};
            for (size_t k = 0; k < sizeof lim / sizeof *lim; k++) {
                setenv("GPUPROF_IMPORT_MMAP_UNIT", lim[k], 1);
                outcome o = import_file(path, 1, "1", th);
                unsetenv("GPUPROF_IMPORT_MMAP_UNIT");
                if (o.rc != ref.rc || o.digest != ref.digest || strcmp(o.msg, ref.msg))
                    fprintf(stderr, "  limit %s, %d threads, cut %d: rc %d/%d '%s' / '%s'\n",
                            lim[k], th, cut, o.rc, ref.rc, o.msg, ref.msg);
                ASSERT_EQ_INT(o.rc, ref.rc);
                ASSERT(o.digest == ref.digest);
                ASSERT_EQ_STR(o.msg, ref.msg);
            }
        }
    }
    unsetenv("GPUPROF_SPLIT_MIN_BYTES");
    free(b.s);
    unlink(path);
}

/* ---- a file truncated while it is mapped ------------------------------------------------ */

typedef struct trunc_at {
    const char *path;
    uint64_t when, to;
    int done;
} trunc_at;

static void truncate_hook(void *arg, uint64_t pos)
{
    trunc_at *t = arg;
    if (!t->done && pos >= t->when) {
        t->done = truncate(t->path, (off_t)t->to) == 0 ? 1 : -1;
    }
}

/* A ~40 MiB trace, cut by another writer after the parser passed 8 MiB, to
 * sizes inside the part not yet read (page-aligned or not, or empty): the
 * import must end with one line that says so, with 1 and 2 threads, and
 * never die of SIGBUS. */
TEST(truncated_while_mapped)
{
    setup_tmp();
    char path[512];
    snprintf(path, sizeof path, "%s/trunc.json", tmpdir);
    sbuf b = {0};
    put(&b, "{\"traceEvents\": [\n");
    for (int i = 0; b.n < (40u << 20); i++)
        put(&b,
            "%s  {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"op%d\", \"pid\": 1, \"tid\": %d, "
            "\"ts\": %d, \"dur\": 3, \"args\": {\"External id\": %d}}",
            i ? ",\n" : "", i % 50, i % 4, i * 10, i);
    put(&b, "\n]}\n");
    /* with 2 threads the second part starts near 20 MiB and may be done
     * before the first passes 8 MiB: only cuts before 20 MiB are sure to be
     * read after they happen */
    const uint64_t to[] = {16u << 20, (12u << 20) + 777, 0, 30u << 20, (30u << 20) + 777};
    setenv("GPUPROF_SPLIT_MIN_BYTES", "1000000", 1);
    for (size_t k = 0; k < sizeof to / sizeof *to; k++)
        for (int th = 1; th <= (to[k] < (20u << 20) ? 2 : 1); th++) {
            ASSERT_EQ_INT(write_file(path, b.s, b.n), 0);
            trunc_at t = {path, 8u << 20, to[k], 0};
            gp_import_test_window_hook(truncate_hook, &t);
            outcome o = import_file(path, 1, "1", th);
            gp_import_test_window_hook(NULL, NULL);
            ASSERT_EQ_INT(t.done, 1);
            if (o.rc == 0)
                fprintf(stderr, "  to %llu, %d threads: imported\n", (unsigned long long)to[k], th);
            ASSERT_NE_INT(o.rc, 0);
            ASSERT(strchr(o.msg, '\n') == NULL);
            ASSERT_CONTAINS(o.msg, "truncated while being read");
        }
    unsetenv("GPUPROF_SPLIT_MIN_BYTES");
    /* the same file whole, mapped, is imported */
    ASSERT_EQ_INT(write_file(path, b.s, b.n), 0);
    ASSERT_EQ_INT(import_file(path, 1, "1", 1).rc, 0);
    free(b.s);
    unlink(path);
}

/* A SIGBUS that is not from a mapped trace still ends the process (the
 * handler passes it on): checked in a child. */
TEST(foreign_sigbus_not_swallowed)
{
    setup_tmp();
    char path[512];
    snprintf(path, sizeof path, "%s/small.json", tmpdir);
    const char *doc =
        "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"a\", \"name\": \"b\", \"pid\": 1, "
        "\"tid\": 1, \"ts\": 1, \"dur\": 1}]}";
    ASSERT_EQ_INT(write_file(path, doc, strlen(doc)), 0);
    ASSERT_EQ_INT(import_file(path, 1, "always", 1).rc, 0); /* the handler is installed */
    pid_t pid = fork();
    ASSERT(pid >= 0);
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        if (null >= 0) dup2(null, 2); /* a sanitizer's report of it */
        raise(SIGBUS);
        _exit(0);
    }
    int st = 0;
    ASSERT_EQ_INT(waitpid(pid, &st, 0), pid);
    /* killed by SIGBUS (or, under a sanitizer, its report and exit code) */
    ASSERT(!(WIFEXITED(st) && WEXITSTATUS(st) == 0));
    if (!GP_TEST_SANITIZED) ASSERT(WIFSIGNALED(st) && WTERMSIG(st) == SIGBUS);
    unlink(path);
}

TEST_MAIN(generated_events_agree, kineto_shape_values, events_without_cat, fixtures_agree,
          shared_traces_agree, long_unit_goes_back_to_reading, truncated_while_mapped,
          foreign_sigbus_not_swallowed)
