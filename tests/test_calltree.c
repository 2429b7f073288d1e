/* tests/test_calltree.c: slice nesting (clipping of partial overlaps), the
 * merged call tree with GPU work under its launch, folded parsing, pruning. */
#include "analysis/calltree.h"
#include "render/flame.h"
#include "test.h"
#include "trace/import.h"

static gp_trace *load(const char *json)
{
    gp_trace *t = NULL;
    gp_err err = {0};
    if (gp_import_json_mem(json, strlen(json), "mem", &t, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return NULL;
    }
    return t;
}

/* A [0,100) contains B [10,30) and C [30,120) (partial overlap: clipped to 100). */
static const char *nest_json =
    "{\"traceEvents\":["
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"A\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":100},"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"B\",\"pid\":1,\"tid\":1,\"ts\":10,\"dur\":20},"
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,"
    "\"ts\":12,\"dur\":5,\"args\":{\"correlation\":7}},"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"C\",\"pid\":1,\"tid\":1,\"ts\":30,\"dur\":90},"
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k1\",\"pid\":0,\"tid\":7,\"ts\":20,\"dur\":50,"
    "\"args\":{\"correlation\":7,\"device\":0,\"stream\":7}},"
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k2\",\"pid\":0,\"tid\":7,\"ts\":80,\"dur\":3,"
    "\"args\":{\"correlation\":99,\"device\":0,\"stream\":7}}"
    "]}";

TEST(nesting_clips_partial_overlap)
{
    gp_trace *t = load(nest_json);
    ASSERT(t);
    gp_nesting n;
    ASSERT_EQ_INT(gp_nesting_build(t, gp_kind_mask_cpu(), &n), 0);
    ASSERT_EQ_INT(n.n, 4);
    ASSERT_EQ_INT(n.clipped, 1);
    /* order: A, B, launch, C */
    ASSERT_EQ_STR(gp_trace_s(t, t->slices.v[n.items[0].slice].name), "A");
    ASSERT_EQ_INT(n.items[0].depth, 0);
    ASSERT_EQ_INT(n.items[2].depth, 2);
    ASSERT_EQ_INT(n.items[3].parent, 0);
    ASSERT_EQ_INT(n.items[3].end, 100000); /* clipped to A's end (ns) */
    gp_nesting_free(&n);
    gp_trace_destroy(t);
}

TEST(tree_attaches_gpu_under_launch)
{
    gp_trace *t = load(nest_json);
    ASSERT(t);
    gp_ftree f;
    ASSERT_EQ_INT(gp_ftree_init(&f, "ns"), 0);
    ASSERT_EQ_INT(gp_ftree_add_trace(&f, t, NULL), 0);
    gp_ftree_finish(&f);
    /* 100 us of CPU (A) + 53 us of GPU */
    ASSERT_EQ_INT(f.nodes.v[0].total, 153000);
    ASSERT_EQ_INT(f.gpu_attached, 1);
    ASSERT_EQ_INT(f.gpu_unattributed, 1);
    gp_ftree s;
    gp_ftree_prune_opts po = {0, 0, 0};
    ASSERT_EQ_INT(gp_ftree_prune(&f, &po, &s), 0);
    ASSERT_EQ_INT(gp_ftree_sort_children(&s), 0);
    gp_sbuf b = {0};
    gp_flame_folded(&s, &b);
    const char *txt = gp_sbuf_cstr(&b);
    ASSERT_CONTAINS(txt, "thread 1 (pid 1);A 10000\n");
    ASSERT_CONTAINS(txt, "thread 1 (pid 1);A;B 15000\n");
    ASSERT_CONTAINS(txt, "thread 1 (pid 1);A;B;cudaLaunchKernel;k1 50000\n");
    ASSERT_CONTAINS(txt, "thread 1 (pid 1);A;C 70000\n");
    ASSERT_CONTAINS(txt, "(launch not found);k2 3000\n");
    gp_sbuf_free(&b);
    gp_ftree_fini(&s);
    /* grouping small GPU work and a depth limit keep the total */
    gp_ftree_prune_opts po2 = {0, 3, 10000};
    ASSERT_EQ_INT(gp_ftree_prune(&f, &po2, &s), 0);
    ASSERT_EQ_INT(s.nodes.v[0].total, 153000);
    for (size_t i = 0; i < s.nodes.n; i++) ASSERT_CMP_INT(s.nodes.v[i].depth, <=, 3);
    gp_ftree_fini(&s);
    gp_ftree_fini(&f);
    gp_trace_destroy(t);
}

TEST(folded_parse)
{
    gp_ftree f;
    gp_err err = {0};
    ASSERT_EQ_INT(gp_ftree_init(&f, "samples"), 0);
    const char *in = "# comment\nmain;foo;bar 10\nmain;foo 5\r\n\nmain;baz 2.5\nmain;foo;bar 1\n";
    ASSERT_EQ_INT(gp_ftree_add_folded(&f, in, strlen(in), "x", &err), 0);
    gp_ftree_finish(&f);
    ASSERT_EQ_INT(f.nodes.v[0].total, 19);
    ASSERT_EQ_INT(f.nodes.n, 5); /* all, main, foo, bar, baz */
    const char *bad = "a;b 1\na;b\n";
    ASSERT_EQ_INT(gp_ftree_add_folded(&f, bad, strlen(bad), "x", &err), GP_EPARSE);
    ASSERT_CONTAINS(err.msg, "x:2:");
    gp_ftree_fini(&f);
}

/* Adds one folded line the slow, obvious way: a hash lookup per frame. */
static void naive_add(gp_ftree *f, const char *line)
{
    const char *sp = strrchr(line, ' ');
    uint32_t nd = 0;
    for (const char *s = line; s < sp;) {
        const char *e = memchr(s, ';', (size_t)(sp - s));
        if (!e) e = sp;
        if (e > s) nd = gp_ftree_child(f, nd, s, (size_t)(e - s), GP_FK_CPU);
        s = e + 1;
    }
    f->nodes.v[nd].self += atoll(sp + 1);
}

/* The sorted, hash-free folded builder gives the same tree as per-frame
 * lookups, also when merged into a tree that already has frames, and the
 * index still finds its frames afterwards (no duplicates). */
TEST(folded_matches_naive_build)
{
    static const char *const names[] = {"a", "ab", "a b", "a!", "b", "main", "m.f1", "zz", "A"};
    const size_t nnames = sizeof names / sizeof *names;
    gp_sbuf in1 = {0}, in2 = {0}, line = {0};
    gp_ftree f, ref;
    ASSERT_EQ_INT(gp_ftree_init(&f, "samples"), 0);
    ASSERT_EQ_INT(gp_ftree_init(&ref, "samples"), 0);
    uint64_t rnd = 12345;
    for (int i = 0; i < 4000; i++) {
        gp_sbuf_reset(&line);
        rnd = rnd * 6364136223846793005ull + 1442695040888963407ull;
        int depth = (int)(rnd >> 60) % 7;
        for (int d = 0; d < depth; d++) {
            rnd = rnd * 6364136223846793005ull + 1442695040888963407ull;
            if (d)
                gp_sbuf_puts(&line, (rnd >> 20) % 13 ? ";" : ";;"); /* empty frames are skipped */
            gp_sbuf_puts(&line, names[(rnd >> 33) % (d < 2 ? 3 : nnames)]);
        }
        gp_sbuf_printf(&line, " %d", (int)((rnd >> 40) % 100) + 1);
        naive_add(&ref, gp_sbuf_cstr(&line));
        gp_sbuf *in = i < 2500 ? &in1 : &in2;
        gp_sbuf_add(in, line.s, line.n);
        gp_sbuf_putc(in, '\n');
    }
    gp_err err = {0};
    ASSERT_EQ_INT(gp_ftree_add_folded(&f, in1.s, in1.n, "one", &err), 0);
    ASSERT_EQ_INT(gp_ftree_add_folded(&f, in2.s, in2.n, "two", &err), 0);
    ASSERT_EQ_INT(f.nodes.n, ref.nodes.n);
    /* a path that exists is found through the (lazily completed) index */
    uint32_t nd = gp_ftree_child(&f, 0, "a", 1, GP_FK_CPU);
    nd = gp_ftree_child(&f, nd, "ab", 2, GP_FK_CPU);
    ASSERT(nd != GP_NO_INDEX);
    ASSERT_EQ_INT(f.nodes.n, ref.nodes.n);
    gp_ftree_finish(&f);
    gp_ftree_finish(&ref);
    ASSERT_EQ_INT(f.nodes.v[0].total, ref.nodes.v[0].total);
    ASSERT_EQ_INT(gp_ftree_sort_children(&f), 0);
    ASSERT_EQ_INT(gp_ftree_sort_children(&ref), 0);
    gp_sbuf a = {0}, b = {0};
    gp_flame_folded(&f, &a);
    gp_flame_folded(&ref, &b);
    ASSERT_EQ_STR(gp_sbuf_cstr(&a), gp_sbuf_cstr(&b));
    ASSERT_CONTAINS(gp_sbuf_cstr(&a), "a b;");
    gp_sbuf_free(&a);
    gp_sbuf_free(&b);
    gp_sbuf_free(&in1);
    gp_sbuf_free(&in2);
    gp_sbuf_free(&line);
    gp_ftree_fini(&f);
    gp_ftree_fini(&ref);
}

/* Children come out in byte order of their names whatever the input order. */
TEST(folded_children_in_name_order)
{
    gp_ftree f;
    gp_err err = {0};
    ASSERT_EQ_INT(gp_ftree_init(&f, "samples"), 0);
    const char *in = "r;b 1\nr;a;y 2\nr;B 3\nr;a;x 4\nr 5\nr;a 6\n";
    ASSERT_EQ_INT(gp_ftree_add_folded(&f, in, strlen(in), "x", &err), 0);
    gp_ftree_finish(&f);
    ASSERT_EQ_INT(gp_ftree_sort_children(&f), 0);
    gp_sbuf b = {0};
    gp_flame_folded(&f, &b);
    ASSERT_EQ_STR(gp_sbuf_cstr(&b), "r 5\nr;B 3\nr;a 6\nr;a;x 4\nr;a;y 2\nr;b 1\n");
    gp_sbuf_free(&b);
    gp_ftree_fini(&f);
}

/* Nesting order (ts ascending, longer first, then trace order) on slices
 * given in every arrangement the sort has to handle: time-ordered runs (a
 * file's tiles, event types), shuffled, reversed, with equal starts and
 * equal durations; checked against the definition on every track. */
TEST(nesting_order_any_input_order)
{
    uint64_t rng = 0x5eed17;
    for (int round = 0; round < 40; round++) {
        int n = 1 + (int)(gp_test_xorshift(&rng) % 2500), pattern = round % 4;
        int nruns = 1 + (int)(gp_test_xorshift(&rng) % 9);
        int64_t *ts = malloc((size_t)n * sizeof *ts), *dur = malloc((size_t)n * sizeof *dur);
        int *tid = malloc((size_t)n * sizeof *tid);
        ASSERT(ts && dur && tid);
        for (int i = 0; i < n; i++) { /* few distinct values: many ties */
            ts[i] = (int64_t)(gp_test_xorshift(&rng) % (uint64_t)(n / 3 + 2));
            dur[i] = (int64_t)(gp_test_xorshift(&rng) % 5);
            tid[i] = 1 + (int)(gp_test_xorshift(&rng) % 3);
        }
        if (pattern == 0 || pattern == 2) { /* sorted runs, or one reversed run */
            for (int r = 0; r < nruns; r++) {
                int a = n * r / nruns, b = n * (r + 1) / nruns;
                for (int i = a + 1; i < b; i++)
                    for (int j = i; j > a && ts[j - 1] > ts[j]; j--) {
                        int64_t x = ts[j];
                        ts[j] = ts[j - 1];
                        ts[j - 1] = x;
                    }
            }
            if (pattern == 2)
                for (int i = 0, j = n - 1; i < j; i++, j--) {
                    int64_t x = ts[i];
                    ts[i] = ts[j];
                    ts[j] = x;
                }
        } /* 1, 3: random order */
        gp_sbuf b = {0};
        gp_sbuf_puts(&b, "{\"traceEvents\":[");
        for (int i = 0; i < n; i++)
            gp_sbuf_printf(&b,
                           "%s{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"s%d\",\"pid\":1,"
                           "\"tid\":%d,\"ts\":%lld,\"dur\":%lld}",
                           i ? "," : "", i, tid[i], (long long)ts[i], (long long)dur[i]);
        gp_sbuf_puts(&b, "]}");
        gp_trace *t = load(gp_sbuf_cstr(&b));
        gp_sbuf_free(&b);
        ASSERT(t);
        gp_nesting ns;
        ASSERT_EQ_INT(gp_nesting_build(t, gp_kind_mask_cpu(), &ns), 0);
        ASSERT_EQ_INT(ns.n, n);
        size_t bad = 0;
        for (size_t k = 0; k < ns.ntracks; k++)
            for (size_t i = ns.track_first[k] + 1; i < ns.track_first[k + 1]; i++) {
                const gp_slice *x = &t->slices.v[ns.items[i - 1].slice];
                const gp_slice *y = &t->slices.v[ns.items[i].slice];
                int ok = x->track == k && y->track == k &&
                         (x->ts < y->ts ||
                          (x->ts == y->ts &&
                           (x->dur > y->dur ||
                            (x->dur == y->dur && ns.items[i - 1].slice < ns.items[i].slice))));
                bad += !ok;
            }
        ASSERT_EQ_INT(bad, 0);
        gp_nesting_free(&ns);
        gp_trace_destroy(t);
        free(ts);
        free(dur);
        free(tid);
    }
}

TEST_MAIN(nesting_clips_partial_overlap, nesting_order_any_input_order,
          tree_attaches_gpu_under_launch, folded_parse, folded_matches_naive_build,
          folded_children_in_name_order)
