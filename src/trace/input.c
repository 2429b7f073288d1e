/* trace/input.c: plain/gzip/memory byte sources. */
#include "trace/input.h"
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define ZCHUNK (1u << 20)

struct gp_input {
    int fd; /* -1 for memory */
    const unsigned char *mem;
    size_t mem_n, mem_pos;
    int gz;
    z_stream zs;
    int z_inited, z_end;
    unsigned char *zbuf; /* compressed read buffer (files) */
    uint64_t pos, size;
    const char *name;
};

static long raw_read(gp_input *in, void *dst, size_t cap, gp_err *err)
{
    if (in->fd < 0) {
        size_t k = in->mem_n - in->mem_pos;
        if (k > cap) k = cap;
        memcpy(dst, in->mem + in->mem_pos, k);
        in->mem_pos += k;
        in->pos += k;
        return (long)k;
    }
    for (;;) {
        ssize_t k = read(in->fd, dst, cap);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) return gp_err_set(err, GP_EIO, "%s: read error: %s", in->name, strerror(errno));
        in->pos += (uint64_t)k;
        return (long)k;
    }
}

static int start(gp_input *in, gp_err *err)
{
    unsigned char magic[2];
    size_t have = 0;
    if (in->fd < 0) {
        have = in->mem_n < 2 ? in->mem_n : 2;
        memcpy(magic, in->mem, have);
    } else {
        ssize_t k = pread(in->fd, magic, 2, 0);
        have = k > 0 ? (size_t)k : 0;
    }
    in->gz = have == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
    if (in->gz) {
        memset(&in->zs, 0, sizeof in->zs);
        if (inflateInit2(&in->zs, 15 + 32) != Z_OK)
            return gp_err_set(err, GP_ENOMEM, "%s: cannot initialise zlib", in->name);
        in->z_inited = 1;
        if (in->fd >= 0) {
            in->zbuf = malloc(ZCHUNK);
            if (!in->zbuf) return gp_err_set(err, GP_ENOMEM, "%s: out of memory", in->name);
        } else {
            in->zs.next_in = (unsigned char *)in->mem;
            in->zs.avail_in = (uInt)(in->mem_n > UINT32_MAX ? UINT32_MAX : in->mem_n);
            in->mem_pos = in->zs.avail_in;
            in->pos = in->mem_pos;
        }
    }
    return 0;
}

int gp_input_open_file(const char *path, gp_input **out, gp_err *err)
{
    *out = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return gp_err_set(err, errno == ENOENT ? GP_ENOTFOUND : GP_EIO, "%s: cannot open: %s", path,
                          strerror(errno));
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
        close(fd);
        return gp_err_set(err, GP_EINVAL, "%s: is a directory", path);
    }
    gp_input *in = calloc(1, sizeof *in);
    if (!in) {
        close(fd);
        return gp_err_set(err, GP_ENOMEM, "%s: out of memory", path);
    }
    in->fd = fd;
    in->size = (uint64_t)st.st_size;
    in->name = path;
#ifdef POSIX_FADV_SEQUENTIAL
    posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
#endif
    int rc = start(in, err);
    if (rc) {
        gp_input_close(in);
        return rc;
    }
    *out = in;
    return 0;
}

int gp_input_open_mem(const void *data, size_t n, const char *name, gp_input **out, gp_err *err)
{
    gp_input *in = calloc(1, sizeof *in);
    if (!in) return gp_err_set(err, GP_ENOMEM, "out of memory");
    in->fd = -1;
    in->mem = data;
    in->mem_n = n;
    in->size = n;
    in->name = name ? name : "<memory>";
    int rc = start(in, err);
    if (rc) {
        gp_input_close(in);
        return rc;
    }
    *out = in;
    return 0;
}

long gp_input_read(gp_input *in, void *dst, size_t cap, gp_err *err)
{
    if (!in->gz) return raw_read(in, dst, cap, err);
    if (in->z_end) return 0;
    if (cap > UINT32_MAX) cap = UINT32_MAX;
    in->zs.next_out = dst;
    in->zs.avail_out = (uInt)cap;
    while (in->zs.avail_out == cap) {
        if (in->zs.avail_in == 0 && in->fd >= 0) {
            long k = raw_read(in, in->zbuf, ZCHUNK, err);
            if (k < 0) return k;
            in->zs.next_in = in->zbuf;
            in->zs.avail_in = (uInt)k;
        }
        if (in->zs.avail_in == 0) {
            /* compressed data ended before the gzip stream did */
            return gp_err_set(err, GP_EPARSE, "%s: truncated gzip stream (compressed byte %llu)",
                              in->name, (unsigned long long)in->pos);
        }
        int zr = inflate(&in->zs, Z_NO_FLUSH);
        if (zr == Z_STREAM_END) {
            /* concatenated gzip members continue; otherwise the end */
            if (in->zs.avail_in == 0 && in->fd >= 0) {
                long k = raw_read(in, in->zbuf, ZCHUNK, err);
                if (k < 0) return k;
                in->zs.next_in = in->zbuf;
                in->zs.avail_in = (uInt)k;
            }
            if (in->zs.avail_in > 0 && in->zs.next_in[0] == 0x1f) {
                inflateReset(&in->zs);
                continue;
            }
            if (in->zs.avail_in > 0) /* one behaviour for every reader: refused */
                return gp_err_set(err, GP_EPARSE,
                                  "%s: trailing garbage after the gzip stream (compressed byte "
                                  "%llu)",
                                  in->name, (unsigned long long)(in->pos - in->zs.avail_in));
            in->z_end = 1;
            break;
        }
        if (zr != Z_OK && zr != Z_BUF_ERROR)
            return gp_err_set(err, GP_EPARSE, "%s: corrupt gzip data near compressed byte %llu: %s",
                              in->name, (unsigned long long)(in->pos - in->zs.avail_in),
                              in->zs.msg ? in->zs.msg : "inflate error");
    }
    return (long)(cap - in->zs.avail_out);
}

uint64_t gp_input_pos(const gp_input *in)
{
    return in->gz ? in->pos - in->zs.avail_in : in->pos;
}

uint64_t gp_input_size(const gp_input *in)
{
    return in->size;
}

int gp_input_is_gzip(const gp_input *in)
{
    return in->gz;
}

void gp_input_close(gp_input *in)
{
    if (!in) return;
    if (in->z_inited) inflateEnd(&in->zs);
    if (in->fd >= 0) close(in->fd);
    free(in->zbuf);
    free(in);
}

int gp_input_seek(gp_input *in, uint64_t off, gp_err *err)
{
    if (in->fd < 0 || in->gz)
        return gp_err_set(err, GP_EUNSUPPORTED, "%s: cannot seek in this input", in->name);
    if (lseek(in->fd, (off_t)off, SEEK_SET) < 0)
        return gp_err_set(err, GP_EIO, "%s: seek failed: %s", in->name, strerror(errno));
    in->pos = off;
    return 0;
}

int gp_input_fd(const gp_input *in)
{
    return in->fd;
}
