/* trace/args_source.c: args kept by where they lie in the source, and read
 * in on demand (see args_source.h). */
#include "trace/args_source.h"
#include "trace/input.h"
#include <stdlib.h>
#include <string.h>

int gp_trace_add_args_at(gp_trace *t, int instant, uint32_t owner, uint64_t off, size_t n)
{
    if (n > UINT32_MAX) return GP_ENOMEM;
    gp_args_ref r = {owner, (uint32_t)n, off};
    return instant ? GP_VEC_PUSH(t->instant_args, r) : GP_VEC_PUSH(t->slice_args, r);
}

static int cmp_off(const void *a, const void *b)
{
    const gp_args_ref *x = *(const gp_args_ref *const *)a, *y = *(const gp_args_ref *const *)b;
    return x->off < y->off ? -1 : x->off > y->off;
}

/* 1 when st is still the file `expect` describes. */
static int same_file(const struct stat *st, const struct stat *expect)
{
    return st->st_dev == expect->st_dev && st->st_ino == expect->st_ino &&
           st->st_size == expect->st_size && st->st_mtim.tv_sec == expect->st_mtim.tv_sec &&
           st->st_mtim.tv_nsec == expect->st_mtim.tv_nsec;
}

#define CHUNK (4u << 20)

int gp_trace_args_read(gp_trace *t, const char *path, const struct stat *expect, gp_err *err)
{
    if (!t->meta.args_at_source) return 0;
    size_t ns = t->slice_args.n, n = ns + t->instant_args.n;
    /* the refs in source order (an import records them in that order per
     * kind; slices and instants interleave) */
    gp_args_ref **by = malloc((n ? n : 1) * sizeof *by);
    uint64_t *at = malloc((n ? n : 1) * sizeof *at); /* new offset of by[j] */
    char *chunk = malloc(CHUNK);
    char *text = NULL;
    gp_input *in = NULL;
    int rc = 0;
    if (!by || !at || !chunk) {
        rc = gp_err_set(err, GP_ENOMEM, "%s: out of memory", path);
        goto out;
    }
    int sorted = 1;
    for (size_t j = 0; j < n; j++) {
        by[j] = j < ns ? &t->slice_args.v[j] : &t->instant_args.v[j - ns];
        if (j && by[j]->off < by[j - 1]->off) sorted = 0;
    }
    if (!sorted) qsort(by, n, sizeof *by, cmp_off);
    uint64_t total = 0;
    for (size_t j = 0; j < n; j++) {
        if (j && by[j]->off < by[j - 1]->off + by[j - 1]->len) {
            rc = gp_err_set(err, GP_ESTATE, "%s: overlapping args ranges", path);
            goto out;
        }
        at[j] = total;
        total += by[j]->len;
    }
    text = malloc(total ? total : 1);
    if (!text) {
        rc = gp_err_set(err, GP_ENOMEM, "%s: out of memory", path);
        goto out;
    }
    rc = gp_input_open_file(path, &in, err);
    if (rc) goto out;
    struct stat st;
    if (expect && (fstat(gp_input_fd(in), &st) || !same_file(&st, expect))) {
        rc = gp_err_set(err, GP_ESTATE, "%s: the file changed since it was loaded", path);
        goto out;
    }
    /* one pass over the text: copy every range as it goes by */
    uint64_t pos = 0; /* source offset of chunk[0] */
    size_t j = 0, done = 0;
    while (j < n) {
        long k = gp_input_read(in, chunk, CHUNK, err);
        if (k < 0) {
            rc = (int)k;
            goto out;
        }
        if (k == 0) break;
        uint64_t end = pos + (uint64_t)k;
        while (j < n) {
            uint64_t a = by[j]->off + done, b = by[j]->off + by[j]->len;
            if (a >= end) break;
            uint64_t m = (b < end ? b : end) - a;
            memcpy(text + at[j] + done, chunk + (a - pos), m);
            done += m;
            if (a + m < b) break; /* continues in the next chunk */
            j++;
            done = 0;
        }
        pos = end;
    }
    if (expect && (fstat(gp_input_fd(in), &st) || !same_file(&st, expect))) {
        rc = gp_err_set(err, GP_ESTATE, "%s: the file changed while its args were read", path);
        goto out;
    }
    if (j < n) {
        rc = gp_err_set(err, GP_ESTATE, "%s: the file is shorter than when it was loaded", path);
        goto out;
    }
    for (j = 0; j < n; j++) {
        const char *s = text + at[j];
        if (by[j]->len < 2 || s[0] != '{' || s[by[j]->len - 1] != '}') {
            rc = gp_err_set(err, GP_ESTATE,
                            "%s: no args object at byte %llu (the file changed since it was "
                            "loaded)",
                            path, (unsigned long long)by[j]->off);
            goto out;
        }
    }
    /* done: the refs point into the text */
    for (j = 0; j < n; j++) by[j]->off = at[j];
    GP_VEC_FREE(t->args_text);
    t->args_text.v = text;
    t->args_text.n = t->args_text.cap = total;
    text = NULL;
    t->meta.args_at_source = 0;
out:
    gp_input_close(in);
    free(text);
    free(chunk);
    free(at);
    free(by);
    return rc;
}
