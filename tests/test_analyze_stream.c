/* tests/test_analyze_stream.c (issue 19, part 5): analyze's worker pool
 * (gp_analyze_files: one rank at a time per worker, only its results kept)
 * gives the same JSON as the analysis of all the traces in memory
 * (gp_analyze_run), with 1, 2 and 5 workers, on synthetic rank folders
 * (bench/gen_ranks.py) and the shared traces; the compat step filter, which
 * the pool decides after the fact from each rank's ProfilerStep names, agrees
 * with gp_hta_prepare's decision over all the views at once; a --shard part
 * reads back to the same bytes, and the parts of any shard count join into
 * the single run's JSON; and the peak RSS of `gpuprof analyze` over 64 ranks
 * (ru_maxrss of the child from wait4, the child forked by this small
 * process) stays within 2 x workers x that of the largest rank alone. */
#include "analysis/analyze.h"
#include "report/analyze.h"
#include "report/analyze_part.h"
#include "test.h"
#include "trace/load.h"
#include <dirent.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char tmpdir[256];

static void gen(const char *sub, const char *args)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "python3 %s/bench/gen_ranks.py %s/%s %s", GP_SOURCE_DIR, tmpdir, sub,
             args);
    if (system(cmd) != 0) {
        fprintf(stderr, "cannot run %s\n", cmd);
        exit(1);
    }
}

static void cleanup(void)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    if (tmpdir[0] && system(cmd)) fprintf(stderr, "cannot remove %s\n", tmpdir);
}

static void setup(void)
{
    if (tmpdir[0]) return;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/gp_analyze_stream_XXXXXX");
    if (!mkdtemp(tmpdir)) exit(1);
    atexit(cleanup);
    gen("syn", "--ranks 30 --mb 0.1 --variety --jobs 1");
}

/* JSON of the in-memory analysis of every trace of folder (as the CLI
 * counts them: files holding an event array) */
static char *json_in_memory(const char *folder, int compat)
{
    gp_err err = {0};
    size_t n = 0;
    char *p = (char *)folder;
    char **files = gp_paths_expand(&p, 1, &n, &err);
    if (!files) return NULL;
    gp_trace **t = calloc(n + 1, sizeof *t);
    if (gp_load_many(files, n, 0, t, &err)) return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (t[i]->meta.has_trace_events)
            t[k++] = t[i];
        else
            gp_trace_destroy(t[i]);
    }
    gp_analyze_opts o;
    gp_analyze_opts_default(&o);
    o.compat = compat;
    gp_analyze_result r;
    char *out = NULL;
    if (!gp_analyze_run(t, k, &o, &r, &err)) {
        gp_sbuf b = {0};
        gp_report_analyze_json(&b, &r, &o);
        out = strdup(gp_sbuf_cstr(&b));
        gp_sbuf_free(&b);
        gp_analyze_free(&r);
    }
    for (size_t i = 0; i < k; i++) gp_trace_destroy(t[i]);
    free(t);
    gp_paths_free(files);
    return out;
}

/* JSON of the worker pool over folder's files, or of its nshards parts
 * written, read back (checked to rewrite to the same bytes) and joined */
static char *json_streamed(const char *folder, int compat, int workers, size_t nshards)
{
    gp_err err = {0};
    size_t n = 0;
    char *p = (char *)folder;
    char **files = gp_paths_expand(&p, 1, &n, &err);
    if (!files) return NULL;
    gp_analyze_opts o;
    gp_analyze_opts_default(&o);
    o.compat = compat;
    gp_analyze_file *fr = NULL;
    char *out = NULL;
    if (!nshards) {
        fr = calloc(n + 1, sizeof *fr);
        if (gp_analyze_files(files, n, 0, n, workers, &o, NULL, NULL, fr, &err)) goto done;
    } else {
        gp_analyze_part *parts = calloc(nshards, sizeof *parts);
        const char **names = calloc(nshards, sizeof *names);
        char(*paths)[512] = calloc(nshards, sizeof *paths);
        int64_t *bytes = calloc(n + 1, sizeof *bytes);
        int bad = 0;
        for (size_t s = 0; s < nshards && !bad; s++) {
            size_t first, end;
            gp_analyze_shard_range(n, s, nshards, &first, &end);
            gp_analyze_file *sf = calloc(end - first + 1, sizeof *sf);
            bad = gp_analyze_files(files, n, first, end, workers, &o, NULL, NULL, sf, &err);
            gp_analyze_part part = {o, s, nshards, n, files, bytes, NULL, first, end, sf};
            gp_sbuf b = {0}, b2 = {0};
            if (!bad) gp_analyze_part_write(&b, &part);
            snprintf(paths[s], sizeof paths[s], "%s/part%zu.json", tmpdir, s);
            names[s] = paths[s];
            FILE *f = fopen(paths[s], "wb");
            if (!bad && f) fwrite(b.s, 1, b.n, f);
            if (f) fclose(f);
            bad = bad || !f || gp_analyze_part_read(paths[s], &parts[s], &err);
            if (!bad) gp_analyze_part_write(&b2, &parts[s]);
            if (!bad && (b.n != b2.n || memcmp(b.s, b2.s, b.n))) {
                fprintf(stderr, "  part %zu/%zu of %s does not read back to the same bytes\n", s,
                        nshards, folder);
                bad = 1;
            }
            gp_sbuf_free(&b);
            gp_sbuf_free(&b2);
            for (size_t i = 0; i < end - first; i++) gp_analyze_file_free(&sf[i]);
            free(sf);
            unlink(paths[s]);
        }
        size_t nf = 0;
        gp_analyze_opts jo;
        if (!bad) bad = gp_analyze_parts_join(parts, names, nshards, &jo, &fr, &nf, &err);
        if (!bad && nf != n) bad = 1;
        for (size_t s = 0; s < nshards; s++) gp_analyze_part_free(&parts[s]);
        free(parts);
        free(names);
        free(paths);
        free(bytes);
        if (bad) {
            fprintf(stderr, "  %s\n", err.msg);
            goto done;
        }
    }
    gp_analyze_result r;
    if (!gp_analyze_assemble(fr, n, &o, &r, &err)) {
        gp_sbuf b = {0};
        gp_report_analyze_json(&b, &r, &o);
        out = strdup(gp_sbuf_cstr(&b));
        gp_sbuf_free(&b);
        gp_analyze_free(&r);
    }
done:
    for (size_t i = 0; fr && i < n; i++) gp_analyze_file_free(&fr[i]);
    free(fr);
    gp_paths_free(files);
    return out;
}

static void same_everywhere(const char *folder)
{
    for (int compat = 0; compat < 2; compat++) {
        char *ref = json_in_memory(folder, compat);
        ASSERT(ref != NULL);
        static const int workers[] = {1, 2, 5};
        for (int w = 0; w < 3; w++) {
            char *s = json_streamed(folder, compat, workers[w], 0);
            ASSERT(s != NULL);
            if (strcmp(s, ref)) GP_FAIL_("%s compat %d workers %d: differs", folder, compat, w);
            free(s);
        }
        static const size_t shards[] = {1, 2, 3, 7, 40};
        for (int k = 0; k < 5; k++) {
            char *s = json_streamed(folder, compat, 2, shards[k]);
            ASSERT(s != NULL);
            if (strcmp(s, ref))
                GP_FAIL_("%s compat %d: %zu parts differ", folder, compat, shards[k]);
            free(s);
        }
        free(ref);
    }
}

TEST(pool_and_parts_equal_in_memory)
{
    setup();
    char d[512];
    snprintf(d, sizeof d, "%s/syn", tmpdir);
    same_everywhere(d);
    const char *shared[] = {"../shared/traces/sampled_2rank", "../shared/traces/df_index_resolver"};
    for (int i = 0; i < 2; i++) {
        char s[1024];
        snprintf(s, sizeof s, "%s/%s", GP_SOURCE_DIR, shared[i]);
        struct stat st;
        if (stat(s, &st) == 0) same_everywhere(s);
    }
}

/* The compat step filter as gp_hta_prepare decides it over all views at
 * once; the pool's ranks must agree rank by rank. */
static void filter_oracle(const char *folder, int expect)
{
    gp_err err = {0};
    size_t n = 0;
    char *p = (char *)folder;
    char **files = gp_paths_expand(&p, 1, &n, &err);
    ASSERT(files != NULL);
    gp_trace **t = calloc(n + 1, sizeof *t);
    ASSERT_EQ_INT(gp_load_many(files, n, 0, t, &err), 0);
    int *ranks = calloc(n + 1, sizeof *ranks);
    gp_hview *v = calloc(n + 1, sizeof *v);
    gp_hta_opts ho = {1};
    ASSERT_EQ_INT(gp_hta_prepare(t, ranks, n, &ho, v, &err), 0);
    gp_analyze_opts o;
    gp_analyze_opts_default(&o);
    o.compat = 1;
    gp_analyze_result r;
    ASSERT_EQ_INT(gp_analyze_run(t, n, &o, &r, &err), 0);
    ASSERT_EQ_INT(r.n, n);
    for (size_t i = 0; i < n; i++) {
        /* the result is in rank order: find the rank of trace i by source */
        const char *src = gp_trace_s(t[i], t[i]->meta.source);
        size_t j = 0;
        while (j < r.n && strcmp(r.r[j].source, src)) j++;
        ASSERT(j < r.n);
        ASSERT_EQ_INT(r.r[j].step_filtered, v[i].step_filtered);
        ASSERT_EQ_INT(v[i].step_filtered, expect);
        gp_temporal tb;
        ASSERT_EQ_INT(gp_temporal_compute(&v[i], &tb), 0);
        ASSERT_EQ_INT(r.r[j].tb.span_ns, tb.span_ns);
        ASSERT_EQ_INT(r.r[j].tb.idle_ns, tb.idle_ns);
        ASSERT_EQ_INT(r.r[j].tb.compute_ns, tb.compute_ns);
    }
    gp_analyze_free(&r);
    for (size_t i = 0; i < n; i++) {
        gp_hview_free(&v[i]);
        gp_trace_destroy(t[i]);
    }
    free(v);
    free(t);
    free(ranks);
    gp_paths_free(files);
}

static void subset(const char *name, const char *const *members, size_t n)
{
    char d[512], cmd[2048];
    snprintf(d, sizeof d, "%s/%s", tmpdir, name);
    mkdir(d, 0755);
    for (size_t i = 0; i < n; i++) {
        snprintf(cmd, sizeof cmd, "cp %s/syn/%s %s/", tmpdir, members[i], d);
        if (system(cmd)) exit(1);
    }
}

TEST(compat_step_filter_across_ranks)
{
    setup();
    /* rank 3 and 10 each have one ProfilerStep name, different: on; 3 and
     * 17 the same one, 4 none: off; the full folder has many: on */
    static const char *const on[] = {"rank_0003.json", "rank_0010.json"};
    static const char *const off[] = {"rank_0003.json", "rank_0017.json", "rank_0004.json.gz"};
    subset("on", on, 2);
    subset("off", off, 3);
    char d[512];
    snprintf(d, sizeof d, "%s/on", tmpdir);
    filter_oracle(d, 1);
    same_everywhere(d);
    snprintf(d, sizeof d, "%s/off", tmpdir);
    filter_oracle(d, 0);
    same_everywhere(d);
}

/* ru_maxrss (KB) of `gpuprof analyze --json --workers W path` */
/* An ASan build keeps freed memory in a quarantine (256 MB by default)
 * instead of reusing it, so a process that frees each rank before the next
 * one would look as if it kept them all: the measured children run without
 * it, as a normal build reuses freed memory. */
static void no_quarantine(void)
{
    const char *o = getenv("ASAN_OPTIONS");
    char buf[1024];
    snprintf(buf, sizeof buf, "%s%squarantine_size_mb=0", o && *o ? o : "", o && *o ? ":" : "");
    setenv("ASAN_OPTIONS", buf, 1);
}

static long child_rss(const char *bin, const char *workers, const char *path)
{
    pid_t pid = fork();
    if (pid == 0) {
        no_quarantine(); /* no effect without ASan */
        int fd = open("/dev/null", O_WRONLY);
        dup2(fd, 1);
        execl(bin, bin, "analyze", "--json", "--workers", workers, path, (char *)NULL);
        _exit(127);
    }
    int st = 0;
    struct rusage ru;
    if (pid < 0 || wait4(pid, &st, 0, &ru) != pid || !WIFEXITED(st) || WEXITSTATUS(st)) return -1;
    return ru.ru_maxrss;
}

TEST(rss_bounded_by_workers)
{
    const char *bin = getenv("GPUPROF_BIN");
    if (!bin) SKIP("GPUPROF_BIN not set");
    setup();
    gen("many", "--ranks 64 --mb 1.5 --seed 7");
    char d[512], big[1024] = "";
    snprintf(d, sizeof d, "%s/many", tmpdir);
    DIR *dir = opendir(d);
    ASSERT(dir != NULL);
    off_t most = -1;
    for (struct dirent *e; (e = readdir(dir));) {
        char f[1024];
        struct stat st;
        snprintf(f, sizeof f, "%s/%s", d, e->d_name);
        if (e->d_name[0] != '.' && stat(f, &st) == 0 && st.st_size > most) {
            most = st.st_size;
            snprintf(big, sizeof big, "%s", f);
        }
    }
    closedir(dir);
    struct rusage self;
    getrusage(RUSAGE_SELF, &self);
    long one = child_rss(bin, "1", big), many = child_rss(bin, "2", d);
    printf("# peak RSS: largest rank alone %ld KB; 64 ranks, 2 workers %ld KB = %.2f x workers x "
           "one (this process: %ld KB)\n",
           one, many, (double)many / (2.0 * (double)one), self.ru_maxrss);
    /* above what a child inherits from this process: a real measurement */
    ASSERT_CMP_INT(one, >, self.ru_maxrss);
    ASSERT_CMP_INT(many, >, 0);
    ASSERT_CMP_INT(many, <=, 2 * 2 * one);
}

/* A corrupt part is refused with one line or, when the change happens to
 * leave a valid part (a digit changed), read and assembled: never a crash
 * (run under ASan+UBSan in CI). Random byte changes, truncations and cut
 * ranges of a real part. */
TEST(part_reader_survives_corruption)
{
    setup();
    char d[512];
    snprintf(d, sizeof d, "%s/syn", tmpdir);
    gp_err err = {0};
    size_t n = 0;
    char *p = d;
    char **files = gp_paths_expand(&p, 1, &n, &err);
    ASSERT(files != NULL);
    gp_analyze_opts o;
    gp_analyze_opts_default(&o);
    o.compat = 1;
    size_t first, end;
    gp_analyze_shard_range(n, 1, 3, &first, &end);
    gp_analyze_file *sf = calloc(end - first + 1, sizeof *sf);
    ASSERT_EQ_INT(gp_analyze_files(files, n, first, end, 2, &o, NULL, NULL, sf, &err), 0);
    int64_t *bytes = calloc(n + 1, sizeof *bytes);
    gp_analyze_part part = {o, 1, 3, n, files, bytes, NULL, first, end, sf};
    gp_sbuf b = {0};
    gp_analyze_part_write(&b, &part);
    for (size_t i = 0; i < end - first; i++) gp_analyze_file_free(&sf[i]);
    free(sf);
    free(bytes);
    char path[600];
    snprintf(path, sizeof path, "%s/mutant.json", tmpdir);
    char *m = malloc(b.n + 1);
    unsigned seed = 12345;
    static const char pool[] = "0123456789-.eE\"{}[],:nult \\x\xff";
    int refused = 0, accepted = 0;
    for (int it = 0; it < 600; it++) {
        size_t len = b.n;
        memcpy(m, b.s, b.n);
        seed = seed * 1103515245u + 12345u;
        size_t at = (seed >> 4) % b.n;
        switch (it % 3) {
        case 0:
            m[at] = pool[(seed >> 20) % (sizeof pool - 1)];
            break;
        case 1:
            len = at;
            break;
        default: {
            size_t cut = 1 + (seed >> 22) % 40;
            if (at + cut > len) cut = len - at;
            memmove(m + at, m + at + cut, len - at - cut);
            len -= cut;
        }
        }
        FILE *f = fopen(path, "wb");
        ASSERT(f != NULL);
        fwrite(m, 1, len, f);
        fclose(f);
        gp_analyze_part q;
        gp_err e = {0};
        if (gp_analyze_part_read(path, &q, &e)) {
            ASSERT(e.msg[0] != 0 && strchr(e.msg, '\n') == NULL);
            refused++;
            continue;
        }
        accepted++;
        gp_analyze_result r;
        if (!gp_analyze_assemble(q.files, q.end - q.first, &q.o, &r, &e)) {
            gp_sbuf j = {0};
            gp_report_analyze_json(&j, &r, &q.o);
            FILE *null = fopen("/dev/null", "w");
            gp_report_analyze_text(null, &r, &q.o);
            fclose(null);
            gp_sbuf_free(&j);
            gp_analyze_free(&r);
        }
        gp_analyze_part_free(&q);
    }
    printf("# corrupt parts: %d refused, %d still valid\n", refused, accepted);
    ASSERT_CMP_INT(refused, >, 300);
    free(m);
    gp_sbuf_free(&b);
    gp_paths_free(files);
}

/* the RSS test first: a child inherits the peak RSS of this process through
 * exec, which must still be small then */
TEST_MAIN(rss_bounded_by_workers, pool_and_parts_equal_in_memory, compat_step_filter_across_ranks,
          part_reader_survives_corruption)
