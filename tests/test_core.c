/* tests/test_core.c: string interning, hash map, stats, JSON escaping. */
#include "test.h"
#include "core/afile.h"
#include "core/error.h"
#include "core/hash.h"
#include "core/sbuf.h"
#include "core/stats.h"
#include "core/strtab.h"
#include "core/table.h"
#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

TEST(strtab_interns_once)
{
    gp_strtab *t = gp_strtab_create();
    ASSERT(t);
    ASSERT_EQ_INT(gp_strtab_intern(t, "", 0), 0);
    uint32_t a = gp_strtab_intern(t, "aten::mm", 8);
    uint32_t b = gp_strtab_intern(t, "aten::add", 9);
    ASSERT_NE_INT(a, b);
    ASSERT_EQ_INT(gp_strtab_intern(t, "aten::mm", 8), a);
    ASSERT_EQ_STR(gp_strtab_get(t, b), "aten::add");
    char name[32];
    for (int i = 0; i < 100000; i++) {
        int n = snprintf(name, sizeof name, "k%d", i);
        ASSERT_EQ_INT(gp_strtab_intern(t, name, (size_t)n), (uint32_t)(i + 3));
    }
    ASSERT_EQ_INT(gp_strtab_find(t, "k777", 4), 780);
    ASSERT_EQ_INT(gp_strtab_find(t, "nope", 4), UINT32_MAX);
    ASSERT_EQ_INT(gp_strtab_count(t), 100003);
    gp_strtab_destroy(t);
}

TEST(u64map_roundtrip)
{
    gp_u64map m = {0};
    for (uint64_t i = 0; i < 50000; i++) ASSERT_EQ_INT(gp_u64map_put(&m, i * 7919, i), 0);
    uint64_t v;
    ASSERT(gp_u64map_get(&m, 7919 * 123, &v));
    ASSERT_EQ_INT(v, 123);
    ASSERT(!gp_u64map_get(&m, 5, &v));
    gp_u64map_free(&m);
}

TEST(stats_match_numpy)
{
    int64_t v[] = {5, 1, 4, 2, 3};
    gp_stats s;
    gp_stats_i64(v, 5, &s);
    ASSERT_EQ_INT(s.count, 5);
    ASSERT_EQ_INT(s.sum, 15);
    ASSERT_EQ_INT(s.min, 1);
    ASSERT_EQ_INT(s.max, 5);
    ASSERT_NEAR(s.mean, 3.0, 1e-12);
    ASSERT_NEAR(s.std, 1.5811388300841898, 1e-12); /* numpy std(ddof=1) */
    ASSERT_NEAR(s.p50, 3.0, 1e-12);
    ASSERT_NEAR(s.p95, 4.8, 1e-12); /* numpy.percentile linear */
    ASSERT_NEAR(s.p99, 4.96, 1e-12);
}

TEST(radix_sort_large)
{
    size_t n = 100000;
    int64_t *v = malloc(n * sizeof *v);
    uint64_t x = 88172645463325252ull;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        v[i] = (int64_t)(x % 2000000) - 1000000;
    }
    gp_sort_i64(v, n);
    for (size_t i = 1; i < n; i++) ASSERT(v[i - 1] <= v[i]);
    free(v);
}

TEST(json_escape_is_valid)
{
    gp_sbuf b = {0};
    gp_json_str(&b, "a\"b\\c\n\x01\xff\xc3\xa9");
    ASSERT_EQ_STR(gp_sbuf_cstr(&b), "\"a\\\"b\\\\c\\n\\u0001\xef\xbf\xbd\xc3\xa9\"");
    gp_sbuf_reset(&b);
    gp_json_num(&b, 0.1);
    gp_json_num(&b, 1.0 / 0.0);
    ASSERT_EQ_STR(gp_sbuf_cstr(&b), "0.1null");
    gp_sbuf_free(&b);
}

TEST(units_per_column)
{
    char buf[32];
    ASSERT_EQ_STR(gp_unit_pick(999).name, "ns");
    ASSERT_EQ_STR(gp_unit_pick(5e6).name, "us");
    ASSERT_EQ_STR(gp_fmt_dur(buf, sizeof buf, 1234567, gp_unit_pick(5e6)), "1234.567");
    ASSERT_EQ_STR(gp_fmt_bytes(buf, sizeof buf, 1536), "1.50 KiB");
}

/* gp_sbuf_spill_to: a document over several GP_SBUF_SPILL pieces reaches
 * the file byte for byte as the whole buffer would, the buffer stays under
 * two pieces, and a failed write is reported by gp_sbuf_spill_end. */
TEST(sbuf_spill_pieces)
{
    gp_sbuf whole = {0}, part = {0};
    FILE *f = tmpfile();
    ASSERT(f);
    gp_sbuf_spill_to(&part, f);
    size_t most = 0;
    for (int i = 0; i < 200000; i++) {
        gp_sbuf *bs[2] = {&whole, &part};
        for (int k = 0; k < 2; k++) {
            gp_sbuf_printf(bs[k], "%s{\"i\":%d,", i ? "," : "[", i);
            gp_json_key(bs[k], "name", 0);
            gp_json_str(bs[k], i % 7 ? "kernel \"x\"" : "caf\xc3\xa9\xff");
            gp_json_key(bs[k], "v", 1);
            gp_json_num(bs[k], i * 0.25);
            gp_sbuf_putc(bs[k], '}');
        }
        if (part.n > most) most = part.n;
    }
    gp_sbuf_putc(&whole, ']');
    gp_sbuf_putc(&part, ']');
    ASSERT_CMP_INT(whole.n, >, 4 * (size_t)GP_SBUF_SPILL);
    ASSERT_CMP_INT(most, <=, (size_t)GP_SBUF_SPILL);
    ASSERT_EQ_INT(gp_sbuf_spill_end(&part), 0);
    ASSERT_EQ_INT(ftell(f), (long)whole.n);
    rewind(f);
    char *got = malloc(whole.n);
    ASSERT(got && fread(got, 1, whole.n, f) == whole.n);
    ASSERT(memcmp(got, whole.s, whole.n) == 0);
    free(got);
    fclose(f);
    /* a stream that cannot be written */
    FILE *ro = fopen("/dev/null", "r");
    ASSERT(ro);
    gp_sbuf bad = {0};
    gp_sbuf_spill_to(&bad, ro);
    for (int i = 0; i < 100000; i++) gp_sbuf_puts(&bad, "0123456789abcdef0123456789");
    ASSERT_EQ_INT(gp_sbuf_spill_end(&bad), GP_EIO);
    fclose(ro);
    gp_sbuf_free(&bad);
    gp_sbuf_free(&whole);
    gp_sbuf_free(&part);
}

/* gp_afile: a regular or new file is replaced whole, by rename; a failed
 * output leaves the earlier file and no temporary one; a device, a FIFO and
 * a symbolic link are written in place (never replaced by a file) */
TEST(afile_replaces_whole)
{
    char dir[] = "/tmp/gp_afile_XXXXXX", path[256], link[256], fifo[256];
    ASSERT(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/out.json", dir);
    gp_afile a;
    ASSERT_EQ_INT(gp_afile_open(&a, path), 0);
    ASSERT(a.tmp != NULL);
    fputs("first", a.f);
    ASSERT_EQ_INT(gp_afile_close(&a, 0), 0);
    struct stat s1, s2;
    ASSERT_EQ_INT(stat(path, &s1), 0);
    ASSERT_EQ_INT(s1.st_size, 5);
    ASSERT_EQ_INT(chmod(path, 0600), 0);
    /* a failed output: the earlier file stays, the temporary one goes */
    ASSERT_EQ_INT(gp_afile_open(&a, path), 0);
    fputs("second, cut short", a.f);
    errno = ENOSPC;
    ASSERT_EQ_INT(gp_afile_close(&a, 1), -1);
    ASSERT_EQ_INT(errno, ENOSPC);
    ASSERT_EQ_INT(stat(path, &s2), 0);
    ASSERT_EQ_INT(s2.st_size, 5);
    ASSERT_EQ_INT(s2.st_ino, s1.st_ino);
    /* a good one replaces it and keeps its mode */
    ASSERT_EQ_INT(gp_afile_open(&a, path), 0);
    fputs("second", a.f);
    ASSERT_EQ_INT(gp_afile_close(&a, 0), 0);
    ASSERT_EQ_INT(stat(path, &s2), 0);
    ASSERT_EQ_INT(s2.st_size, 6);
    ASSERT_EQ_INT(s2.st_mode & 0777, 0600);
    /* nothing but the file in the folder */
    char cmd[320];
    snprintf(cmd, sizeof cmd, "test $(ls -A %s | wc -l) = 1", dir);
    ASSERT_EQ_INT(system(cmd), 0);
    /* a symbolic link is written through, and stays a link */
    snprintf(link, sizeof link, "%s/link.json", dir);
    ASSERT_EQ_INT(symlink(path, link), 0);
    ASSERT_EQ_INT(gp_afile_open(&a, link), 0);
    ASSERT(a.tmp == NULL);
    fputs("through the link", a.f);
    ASSERT_EQ_INT(gp_afile_close(&a, 0), 0);
    ASSERT_EQ_INT(lstat(link, &s2), 0);
    ASSERT(S_ISLNK(s2.st_mode));
    ASSERT_EQ_INT(stat(path, &s2), 0);
    ASSERT_EQ_INT(s2.st_size, 16);
    /* /dev/null stays a device */
    ASSERT_EQ_INT(gp_afile_open(&a, "/dev/null"), 0);
    ASSERT(a.tmp == NULL);
    fputs("x", a.f);
    ASSERT_EQ_INT(gp_afile_close(&a, 0), 0);
    ASSERT_EQ_INT(stat("/dev/null", &s2), 0);
    ASSERT(S_ISCHR(s2.st_mode));
    /* a FIFO is written in place (a reader gets the bytes) */
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    ASSERT_EQ_INT(mkfifo(fifo, 0600), 0);
    snprintf(cmd, sizeof cmd, "cat %s > %s/fifo.out &", fifo, dir);
    ASSERT_EQ_INT(system(cmd), 0);
    ASSERT_EQ_INT(gp_afile_open(&a, fifo), 0);
    ASSERT(a.tmp == NULL);
    fputs("piped", a.f);
    ASSERT_EQ_INT(gp_afile_close(&a, 0), 0);
    snprintf(cmd, sizeof cmd,
             "for i in $(seq 50); do grep -q piped %s/fifo.out && exit 0; sleep 0.1; done; exit 1",
             dir);
    ASSERT_EQ_INT(system(cmd), 0);
    ASSERT_EQ_INT(lstat(fifo, &s2), 0);
    ASSERT(S_ISFIFO(s2.st_mode));
    /* no folder to create a file in: the error of the open */
    ASSERT_EQ_INT(gp_afile_open(&a, "/nonexistent/x.json"), -1);
    ASSERT_EQ_INT(errno, ENOENT);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ASSERT_EQ_INT(system(cmd), 0);
}

TEST_MAIN(strtab_interns_once, u64map_roundtrip, stats_match_numpy, radix_sort_large,
          json_escape_is_valid, units_per_column, sbuf_spill_pieces, afile_replaces_whole)
