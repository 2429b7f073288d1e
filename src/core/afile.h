/* core/afile.h: an output file replaced whole or not at all. The text is
 * written to a temporary file next to PATH and renamed over PATH only when
 * every write and the close succeeded, so a failed write (full disk, ulimit
 * -f) leaves an earlier PATH as it was and no partial file behind. Where
 * that cannot be done (PATH is a device, a FIFO, a symbolic link or another
 * non-regular file such as /dev/stdout, or no file can be created beside it) the file is
 * written in place, as fopen(PATH, "w") would. */
#ifndef GP_CORE_AFILE_H
#define GP_CORE_AFILE_H
#include <stdio.h>

typedef struct gp_afile {
    FILE *f;          /* write here */
    const char *path; /* the destination (the caller's string, kept until the close) */
    char *tmp;        /* the temporary file, or NULL when writing in place */
    int sync;         /* set by the caller: fsync before the rename */
} gp_afile;

/* Opens the output; 0, or -1 with errno set (nothing created). path must
 * stay valid until gp_afile_close. */
int gp_afile_open(gp_afile *a, const char *path);
/* Closes and renames into place; 0, or -1 with errno set (the temporary
 * file removed, PATH untouched). `failed`: a write already failed (the
 * output is discarded; errno is kept). */
int gp_afile_close(gp_afile *a, int failed);

#endif
