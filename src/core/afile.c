/* core/afile.c: an output file replaced whole or not at all (afile.h). */
#include "core/afile.h"
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int gp_afile_open(gp_afile *a, const char *path)
{
    memset(a, 0, sizeof *a);
    struct stat st;
    int exists = lstat(path, &st) == 0; /* a symbolic link is written through, in place */
    if (!exists || S_ISREG(st.st_mode)) {
        size_t n = strlen(path) + 40;
        char *tmp = malloc(n);
        if (tmp) {
            static unsigned seq;
            snprintf(tmp, n, "%s.%ld.%u.tmp", path, (long)getpid(),
                     __atomic_fetch_add(&seq, 1, __ATOMIC_RELAXED));
            /* 0666 less the umask, as fopen; an existing file keeps its mode */
            int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
                          exists ? (st.st_mode & 07777) : 0666);
            if (fd >= 0) {
                if (exists) (void)fchmod(fd, st.st_mode & 07777);
                a->f = fdopen(fd, "w");
                if (a->f) {
                    a->tmp = tmp;
                    a->path = path;
                    return 0;
                }
                close(fd);
                unlink(tmp);
            }
            free(tmp);
        }
    }
    /* in place: a device, a FIFO, or no room for a file beside it */
    a->f = fopen(path, "w");
    return a->f ? 0 : -1;
}

int gp_afile_close(gp_afile *a, int failed)
{
    int e = failed ? errno : 0;
    int rc = failed ? -1 : 0;
    if (a->f) {
        if (!failed && (fflush(a->f) != 0 || (a->sync && fsync(fileno(a->f)) != 0))) {
            e = errno;
            rc = -1;
        }
        if (fclose(a->f) != 0 && !rc) {
            e = errno;
            rc = -1;
        }
        a->f = NULL;
    }
    if (a->tmp) {
        if (!rc && rename(a->tmp, a->path) != 0) {
            e = errno;
            rc = -1;
        }
        if (rc) unlink(a->tmp);
    }
    free(a->tmp);
    a->tmp = NULL;
    a->path = NULL;
    if (rc) errno = e;
    return rc;
}
