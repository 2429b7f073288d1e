/* tests/test_compare_buffers.c: `gpuprof compare` of two gp_export_json files
 * per tracked buffer (libgpuprof's memory tracker): the importer reads the
 * "gpuprof" memory section, compare matches buffers by name. */
#include "analysis/compare.h"
#include "test.h"
#include "trace/import.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define KB 1024
#define MB (1024 * 1024)

/* Writes an export with tracked buffers through tests/progs/export_buffers
 * (libgpuprof's public header cannot share a file with compare.h). */
static int write_export(const char *path, const char *bufs)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s/tests/export_buffers %s %s", GP_BINARY_DIR, path, bufs);
    return system(cmd);
}

static void paths(char *a, char *b, size_t n)
{
    snprintf(a, n, "/tmp/gp_test_cmpbuf_base_%d.json", (int)getpid());
    snprintf(b, n, "/tmp/gp_test_cmpbuf_cur_%d.json", (int)getpid());
}

static int make_pair(const char *a, const char *b)
{
    char bb[256], cb[256];
    snprintf(bb, sizeof bb, "weights:%d activations:%d old_cache:%d scratch:%d scratch:%d", 4 * MB,
             1 * MB, 256 * KB, 64 * KB, 64 * KB);
    snprintf(cb, sizeof cb, "--peak %d weights:%d activations:%d kv_cache:%d scratch:%d", 16 * MB,
             4 * MB, 1536 * KB, 2 * MB, 64 * KB);
    if (write_export(a, bb)) return -1;
    return write_export(b, cb);
}

static const gp_cmp_buffer *buf_named(const gp_comparison *c, const char *name)
{
    for (size_t i = 0; i < c->nbufs; i++)
        if (!strcmp(gp_strtab_get(c->names, c->bufs[i].name), name)) return &c->bufs[i];
    return NULL;
}

TEST(compare_tracked_buffers)
{
    char a[256], b[256];
    paths(a, b, sizeof a);
    ASSERT_EQ_INT(make_pair(a, b), 0);
    gp_trace *ta, *tb;
    gp_err err = {0};
    ASSERT_EQ_INT(gp_import_json_file(a, NULL, &ta, &err), 0);
    ASSERT_EQ_INT(gp_import_json_file(b, NULL, &tb, &err), 0);
    ASSERT_EQ_INT(ta->meta.has_tracked_memory, 1);
    ASSERT_EQ_INT(ta->tracked_buffers.n, 5);
    ASSERT_EQ_STR(gp_trace_s(ta, ta->tracked_buffers.v[0].name), "weights");
    ASSERT_EQ_STR(gp_trace_s(ta, ta->tracked_buffers.v[0].dtype), "float32");
    ASSERT_EQ_INT(ta->meta.tracked_current_bytes, 5 * MB + 384 * KB);
    ASSERT_EQ_INT(tb->meta.tracked_peak_bytes, 16 * MB);
    gp_compare_opts o;
    gp_compare_opts_default(&o);
    gp_comparison c;
    ASSERT_EQ_INT(gp_compare_runs(&ta, 1, &tb, 1, &o, &c), 0);
    ASSERT_EQ_INT(c.base_tracked.valid, 1);
    ASSERT_EQ_INT(c.cur_tracked.valid, 1);
    ASSERT_EQ_INT(c.base_tracked.peak_bytes, 5 * MB + 384 * KB);
    ASSERT_EQ_INT(c.cur_tracked.peak_bytes, 16 * MB);
    ASSERT_EQ_INT(c.nbufs, 5);
    /* largest change first: kv_cache (+2 MB) */
    ASSERT_EQ_STR(gp_strtab_get(c.names, c.bufs[0].name), "kv_cache");
    const gp_cmp_buffer *w = buf_named(&c, "weights"), *act = buf_named(&c, "activations");
    const gp_cmp_buffer *old = buf_named(&c, "old_cache"), *kv = buf_named(&c, "kv_cache");
    const gp_cmp_buffer *sc = buf_named(&c, "scratch");
    ASSERT(w && act && old && kv && sc);
    ASSERT_EQ_INT(w->base_bytes, 4 * MB);
    ASSERT_EQ_INT(w->cur_bytes, 4 * MB);
    ASSERT_EQ_INT(act->base_bytes, 1 * MB);
    ASSERT_EQ_INT(act->cur_bytes, 1536 * KB);
    ASSERT_EQ_INT(old->base_valid, 1);
    ASSERT_EQ_INT(old->cur_valid, 0);
    ASSERT_EQ_INT(kv->base_valid, 0);
    ASSERT_EQ_INT(kv->cur_bytes, 2 * MB);
    ASSERT_EQ_INT(sc->base_bytes, 128 * KB); /* two buffers of one name */
    ASSERT_EQ_INT(sc->base_count, 2);
    ASSERT_EQ_INT(sc->cur_bytes, 64 * KB);
    ASSERT_EQ_INT(sc->cur_count, 1);
    gp_comparison_free(&c);
    /* the parallel importer (file split in parts) keeps the section too */
    setenv("GPUPROF_SPLIT_MIN_BYTES", "1", 1);
    gp_import_opts io = {0, 4, 0};
    gp_trace *tsplit;
    ASSERT_EQ_INT(gp_import_json_file(b, &io, &tsplit, &err), 0);
    unsetenv("GPUPROF_SPLIT_MIN_BYTES");
    ASSERT_CMP_INT(tsplit->meta.import_parts, >, 1);
    ASSERT_EQ_INT(tsplit->meta.has_tracked_memory, 1);
    ASSERT_EQ_INT(tsplit->meta.tracked_peak_bytes, 16 * MB);
    ASSERT_EQ_INT(tsplit->tracked_buffers.n, 4);
    ASSERT_EQ_STR(gp_trace_s(tsplit, tsplit->tracked_buffers.v[2].name), "kv_cache");
    ASSERT_EQ_INT(tsplit->tracked_buffers.v[2].bytes, 2 * MB);
    ASSERT_EQ_INT(tsplit->slices.n, tb->slices.n);
    gp_trace_destroy(tsplit);
    /* a plain trace has no tracked memory: nothing compared, nothing valid */
    gp_trace *plain;
    const char *js = "{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"k\",\"cat\":\"kernel\",\"pid\":0,"
                     "\"tid\":7,\"ts\":1,\"dur\":5}]}";
    ASSERT_EQ_INT(gp_import_json_mem(js, strlen(js), "plain.json", &plain, &err), 0);
    ASSERT_EQ_INT(plain->meta.has_tracked_memory, 0);
    ASSERT_EQ_INT(gp_compare_runs(&plain, 1, &tb, 1, &o, &c), 0);
    ASSERT_EQ_INT(c.base_tracked.valid, 0);
    ASSERT_EQ_INT(c.nbufs, 4);
    ASSERT_EQ_INT(c.bufs[0].base_valid, 0);
    gp_comparison_free(&c);
    gp_trace_destroy(plain);
    gp_trace_destroy(ta);
    gp_trace_destroy(tb);
    unlink(a);
    unlink(b);
}

static int run_cli(const char *args, char *out, size_t n)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s %s 2>&1", getenv("GPUPROF_BIN"), args);
    FILE *p = popen(cmd, "r");
    if (!p) return -1;
    size_t k = fread(out, 1, n - 1, p);
    out[k] = 0;
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

TEST(compare_tracked_buffers_cli)
{
    if (!getenv("GPUPROF_BIN")) SKIP("GPUPROF_BIN not set (run through ctest)");
    char a[256], b[256], args[700];
    static char out[1 << 16];
    paths(a, b, sizeof a);
    ASSERT_EQ_INT(make_pair(a, b), 0);
    snprintf(args, sizeof args, "compare --json %s %s", a, b);
    ASSERT_EQ_INT(run_cli(args, out, sizeof out), 0);
    ASSERT_CONTAINS(out, "\"tracked_memory\":{\"baseline\":{\"peak_bytes\":5636096,"
                         "\"current_bytes\":5636096},\"current\":{\"peak_bytes\":16777216,");
    ASSERT_CONTAINS(out, "{\"name\":\"kv_cache\",\"baseline_bytes\":null,\"current_bytes\":2097152,"
                         "\"difference_bytes\":2097152,\"change_pct\":null");
    ASSERT_CONTAINS(out, "{\"name\":\"activations\",\"baseline_bytes\":1048576,\"current_bytes\":"
                         "1572864,\"difference_bytes\":524288,\"change_pct\":50,");
    ASSERT_CONTAINS(out, "{\"name\":\"old_cache\",\"baseline_bytes\":262144,\"current_bytes\":null,"
                         "\"difference_bytes\":-262144,");
    snprintf(args, sizeof args, "compare %s %s", a, b);
    ASSERT_EQ_INT(run_cli(args, out, sizeof out), 0);
    ASSERT_CONTAINS(out, "tracked memory (libgpuprof gp_mem_track): peak 5.38 MiB -> 16.00 MiB "
                         "(+197.7%); tracked at export 5.38 MiB -> 7.56 MiB");
    ASSERT_CONTAINS(out, "Tracked buffers (5):");
    ASSERT_CONTAINS(out, "activations");
    ASSERT_CONTAINS(out, "+50.0%");
    unlink(a);
    unlink(b);
}

TEST_MAIN(compare_tracked_buffers, compare_tracked_buffers_cli)
