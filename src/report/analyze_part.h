/* report/analyze_part.h: the "part" file of `gpuprof analyze --shard I/N`
 * (the results of its share of the input files, gp_analyze_file) and its
 * reader for `gpuprof merge`, which joins the parts of a job and assembles
 * the same result as one `gpuprof analyze` of all the files. The format
 * (JSON, versioned) is documented in docs/analyze.md. */
#ifndef GP_REPORT_ANALYZE_PART_H
#define GP_REPORT_ANALYZE_PART_H
#include "analysis/analyze.h"
#include "core/sbuf.h"

#define GP_ANALYZE_PART_FORMAT  "gpuprof analyze part"
#define GP_ANALYZE_PART_VERSION 1

typedef struct gp_analyze_part {
    gp_analyze_opts o;      /* the options that change results (not .wide) */
    size_t shard, nshards;  /* this part is shard `shard` of 0 .. nshards-1 */
    size_t ninputs;         /* every input file of the job, in order: */
    char **inputs;          /*   its path as expanded */
    int64_t *bytes;         /*   and its size (-1: not a plain file) */
    char **real;            /*   its resolved path (realpath) when a plain file, else NULL
                                 (NULL array: none): what merge compares */
    size_t first, end;      /* the files of this share: inputs[first, end) */
    gp_analyze_file *files; /* their results, [end - first] */
} gp_analyze_part;

/* The files of shard `shard` of nshards over n files: a contiguous range,
 * shares differing by at most one file. */
void gp_analyze_shard_range(size_t n, size_t shard, size_t nshards, size_t *first, size_t *end);

/* Writes the part as one JSON document ending in a newline. */
/* Fills p->bytes and p->real from p->inputs[0, p->ninputs) (a plain
 * file's size and resolved path; -1 and NULL for anything else), as a
 * part records them; gp_analyze_part_inputs_free frees those two arrays
 * (the caller owns inputs). */
void gp_analyze_part_inputs(gp_analyze_part *p);
void gp_analyze_part_inputs_free(gp_analyze_part *p);
void gp_analyze_part_write(gp_sbuf *b, const gp_analyze_part *p);
/* Reads the part at path. Returns 0, GP_EIO, GP_ENOMEM or GP_EPARSE with a
 * one-line err ("PATH: ..."). Free with gp_analyze_part_free. */
int gp_analyze_part_read(const char *path, gp_analyze_part *p, gp_err *err);
void gp_analyze_part_free(gp_analyze_part *p);

/* Checks that parts[0..n) (read from names[i]) are all the shards of one job
 * (the same input files, options and shard count; each shard once) and
 * moves their files, in input order, into *files (n = the job's input
 * count; free each with gp_analyze_file_free, then the array); *o receives
 * the job's options. Returns 0 or GP_EINVAL with a one-line err. */
int gp_analyze_parts_join(gp_analyze_part *parts, const char *const *names, size_t n,
                          gp_analyze_opts *o, gp_analyze_file **files, size_t *nfiles, gp_err *err);

#endif
