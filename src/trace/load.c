/* trace/load.c: path expansion and parallel import of several traces. */
#include "trace/load.h"
#include "trace/import.h"
#include "trace/input.h"
#ifdef GP_HAVE_SQLITE
#include "store/store.h"
#endif
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int is_trace_name(const char *n)
{
    size_t l = strlen(n);
    return (l > 5 && !strcmp(n + l - 5, ".json")) || (l > 8 && !strcmp(n + l - 8, ".json.gz"));
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

char **gp_paths_expand(char *const *paths, int n, size_t *count, gp_err *err)
{
    size_t cap = 16, k = 0;
    char **out = gp_xmalloc(cap * sizeof *out);
    for (int i = 0; i < n; i++) {
        struct stat st;
#ifdef GP_HAVE_SQLITE
        /* a run store, "gpuprof.db" or "gpuprof.db:ID", is one trace */
        char *dbfile;
        int64_t run;
        if (gp_store_spec(paths[i], &dbfile, &run)) {
            free(dbfile);
            if (k + 1 >= cap) out = gp_xrealloc(out, (cap *= 2) * sizeof *out);
            out[k++] = gp_xstrdup(paths[i]);
            continue;
        }
#endif
        if (stat(paths[i], &st) != 0) {
            gp_err_set(err, GP_ENOTFOUND, "%s: no such file or folder", paths[i]);
            goto fail;
        }
        if (!S_ISDIR(st.st_mode)) {
            if (k + 1 >= cap) out = gp_xrealloc(out, (cap *= 2) * sizeof *out);
            out[k++] = gp_xstrdup(paths[i]);
            continue;
        }
        DIR *d = opendir(paths[i]);
        if (!d) {
            gp_err_set(err, GP_EIO, "%s: cannot read folder", paths[i]);
            goto fail;
        }
        size_t first = k;
        struct dirent *de;
        while ((de = readdir(d))) {
            if (de->d_name[0] == '.' || !is_trace_name(de->d_name)) continue;
            if (k + 1 >= cap) out = gp_xrealloc(out, (cap *= 2) * sizeof *out);
            /* "DIR/" and "DIR" name the same files ("DIR/x.json", not
             * "DIR//x.json"): outputs, and analyze parts to merge, agree */
            size_t dl = strlen(paths[i]);
            while (dl > 1 && paths[i][dl - 1] == '/') dl--;
            size_t len = dl + strlen(de->d_name) + 2;
            out[k] = gp_xmalloc(len);
            snprintf(out[k], len, "%.*s/%s", (int)dl, paths[i], de->d_name);
            k++;
        }
        closedir(d);
        qsort(out + first, k - first, sizeof *out, cmp_str);
        if (k == first) {
            gp_err_set(err, GP_ENOTFOUND, "%s: folder holds no .json or .json.gz trace", paths[i]);
            goto fail;
        }
    }
    out[k] = NULL;
    *count = k;
    return out;
fail:
    out[k] = NULL;
    gp_paths_free(out);
    return NULL;
}

void gp_paths_free(char **paths)
{
    if (!paths) return;
    for (char **p = paths; *p; p++) free(*p);
    free(paths);
}

/* Imports one JSON trace file. A file that is empty or holds only JSON
 * whitespace (after inflating) reads as a document without an event array,
 * as "{}" does: in a folder it is left out like other files without events,
 * named directly it is refused by the same check (docs/trace-import.md). A
 * file with other content keeps its import error (a truncated trace). */
static int import_file(const char *path, const gp_import_opts *o, gp_trace **out, gp_err *err)
{
    int rc = gp_import_json_file(path, o, out, err);
    /* only a regular file can be read again: a pipe's content is gone (the
     * importer itself reads a blank pipe as "{}") */
    struct stat st;
    if (rc != GP_EPARSE || stat(path, &st) != 0 || !S_ISREG(st.st_mode) ||
        !gp_input_blank_file(path))
        return rc;
    gp_err e = {0};
    if (gp_import_json_mem("{}", 2, path, out, &e)) return rc;
    gp_err_clear(err);
    return 0;
}

typedef struct job {
    char *const *paths;
    size_t n;
    gp_trace **traces;
    int *rcs;
    gp_err *errs;
    size_t next;
    int progress;
    int split;      /* threads each import may split a large plain file over */
    unsigned flags; /* GP_LOAD_* */
    _Atomic(uint64_t) *read_bytes;
    pthread_mutex_t mu;
} job;

/* gp_import_opts.keep_args of GP_LOAD_* flags */
static int import_args(unsigned flags)
{
    return flags & GP_LOAD_KEEP_ARGS        ? GP_ARGS_TEXT
           : flags & GP_LOAD_ARGS_AT_SOURCE ? GP_ARGS_AT_SOURCE
                                            : 0;
}

static void *worker(void *arg)
{
    job *j = arg;
    for (;;) {
        pthread_mutex_lock(&j->mu);
        size_t i = j->next++;
        pthread_mutex_unlock(&j->mu);
        if (i >= j->n) return NULL;
#ifdef GP_HAVE_SQLITE
        char *dbfile;
        int64_t run;
        if (gp_store_spec(j->paths[i], &dbfile, &run)) {
            j->rcs[i] = gp_store_load(dbfile, run, &j->traces[i], &j->errs[i]);
            struct stat st;
            if (j->read_bytes && !stat(dbfile, &st))
                atomic_fetch_add(j->read_bytes, (uint64_t)st.st_size);
            free(dbfile);
            continue;
        }
#endif
        gp_import_opts o = {j->progress, j->n == 1 ? 0 : j->split, import_args(j->flags)};
        gp_import_count_bytes(j->read_bytes);
        j->rcs[i] = import_file(j->paths[i], &o, &j->traces[i], &j->errs[i]);
        gp_import_count_bytes(NULL);
    }
}

int gp_load_one(const char *path, int threads, unsigned flags, int progress, gp_trace **out,
                gp_err *err)
{
    *out = NULL;
#ifdef GP_HAVE_SQLITE
    char *dbfile;
    int64_t run;
    if (gp_store_spec(path, &dbfile, &run)) {
        int rc = gp_store_load(dbfile, run, out, err);
        free(dbfile);
        return rc;
    }
#endif
    gp_import_opts o = {progress, threads, import_args(flags)};
    return import_file(path, &o, out, err);
}

int gp_load_many(char *const *paths, size_t n, int threads, gp_trace **traces, gp_err *err)
{
    return gp_load_many_ex(paths, n, threads, 0, traces, err, NULL);
}

int gp_load_many_progress(char *const *paths, size_t n, int threads, gp_trace **traces, gp_err *err,
                          _Atomic(uint64_t) *read_bytes)
{
    return gp_load_many_ex(paths, n, threads, 0, traces, err, read_bytes);
}

int gp_load_many_ex(char *const *paths, size_t n, int threads, unsigned flags, gp_trace **traces,
                    gp_err *err, _Atomic(uint64_t) *read_bytes)
{
    if (threads <= 0) {
        long c = sysconf(_SC_NPROCESSORS_ONLN);
        threads = c > 0 ? (int)c : 1;
    }
    /* fewer files than threads (e.g. compare's two sides on 16 cores): each
     * import splits its file over its share of the cores */
    int split = (size_t)threads > n ? (int)((size_t)threads / n) : 1;
    if ((size_t)threads > n) threads = (int)n;
    job j = {paths,
             n,
             traces,
             gp_xcalloc(n, sizeof(int)),
             gp_xcalloc(n, sizeof(gp_err)),
             0,
             n == 1 ? -1 : 0,
             split,
             flags,
             read_bytes,
             PTHREAD_MUTEX_INITIALIZER};
    for (size_t i = 0; i < n; i++) traces[i] = NULL;
    pthread_t *th = gp_xcalloc((size_t)threads, sizeof *th);
    int started = 0;
    for (int i = 1; i < threads; i++)
        if (pthread_create(&th[i], NULL, worker, &j) == 0)
            started++;
        else
            break;
    worker(&j);
    for (int i = 1; i <= started; i++) pthread_join(th[i], NULL);
    int rc = 0;
    for (size_t i = 0; i < n; i++)
        if (j.rcs[i] && !rc) {
            rc = j.rcs[i];
            *err = j.errs[i];
        }
    if (rc)
        for (size_t i = 0; i < n; i++) {
            gp_trace_destroy(traces[i]);
            traces[i] = NULL;
        }
    free(th);
    free(j.rcs);
    free(j.errs);
    return rc;
}
