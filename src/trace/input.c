/* trace/input.c: plain/gzip/memory byte sources. Gzip is inflated by isa-l
 * (when built with it; zlib otherwise, or with $GPUPROF_INFLATE=zlib) in a
 * thread of its own that fills a small ring of chunks ahead of the reader, so
 * parsing and inflating overlap and memory stays bounded (RING x CHUNK). */
#include "trace/input.h"
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#ifdef GP_HAVE_ISAL
#include <isa-l/igzip_lib.h>
#endif

#define ZCHUNK     (1u << 20) /* compressed bytes read at a time */
#define RING_N     4          /* inflated chunks in flight */
#define RING_CHUNK (1u << 20)

typedef struct slot {
    unsigned char *buf;
    size_t len, off;
} slot;

struct gp_input {
    int fd; /* -1 for memory */
    const unsigned char *mem;
    size_t mem_n, mem_pos;
    int gz;
    /* the inflater (owned by the inflate thread once it runs) */
    int use_isal;
    z_stream zs;
    int z_inited;
#ifdef GP_HAVE_ISAL
    struct inflate_state *is;
#endif
    unsigned char *zbuf; /* compressed read buffer (files) */
    uint64_t pos, size;  /* pos: raw bytes read so far (written by the inflate thread) */
    uint64_t zpos;       /* compressed bytes consumed, published for progress */
    const char *name;
    /* the ring between the inflate thread (producer) and gp_input_read */
    pthread_t th;
    int th_started;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    slot ring[RING_N];
    int head, count; /* consumer's slot, filled slots */
    int done, stop;  /* producer finished (end or error); reader closing */
    int err_code;
    char err_msg[sizeof(((gp_err *)0)->msg)];
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

/* ---- the inflater: isa-l or zlib behind the same few steps ------------------------------- */

enum { ZS_OK, ZS_END, ZS_ERR };

static size_t zin_avail(const gp_input *in)
{
#ifdef GP_HAVE_ISAL
    if (in->use_isal) return in->is->avail_in;
#endif
    return in->zs.avail_in;
}

static const unsigned char *zin_next(const gp_input *in)
{
#ifdef GP_HAVE_ISAL
    if (in->use_isal) return in->is->next_in;
#endif
    return in->zs.next_in;
}

static void zin_set(gp_input *in, const unsigned char *p, size_t n)
{
#ifdef GP_HAVE_ISAL
    if (in->use_isal) {
        in->is->next_in = (uint8_t *)(uintptr_t)p;
        in->is->avail_in = (uint32_t)n;
        return;
    }
#endif
    in->zs.next_in = (unsigned char *)(uintptr_t)p;
    in->zs.avail_in = (uInt)n;
}

static void zout_set(gp_input *in, unsigned char *p, size_t n)
{
#ifdef GP_HAVE_ISAL
    if (in->use_isal) {
        in->is->next_out = p;
        in->is->avail_out = (uint32_t)n;
        return;
    }
#endif
    in->zs.next_out = p;
    in->zs.avail_out = (uInt)n;
}

static size_t zout_avail(const gp_input *in)
{
#ifdef GP_HAVE_ISAL
    if (in->use_isal) return in->is->avail_out;
#endif
    return in->zs.avail_out;
}

/* One inflate step; ZS_END when a gzip member ended, ZS_ERR with *msg. */
static int zstep(gp_input *in, const char **msg)
{
#ifdef GP_HAVE_ISAL
    if (in->use_isal) {
        int r = isal_inflate(in->is);
        if (r < 0) {
            *msg = r == ISAL_INVALID_BLOCK        ? "invalid deflate block"
                   : r == ISAL_INVALID_SYMBOL     ? "invalid deflate symbol"
                   : r == ISAL_INVALID_LOOKBACK   ? "invalid distance too far back"
                   : r == ISAL_INVALID_WRAPPER    ? "invalid gzip header"
                   : r == ISAL_UNSUPPORTED_METHOD ? "unknown compression method"
                   : r == ISAL_INCORRECT_CHECKSUM ? "incorrect data check"
                                                  : "inflate error";
            return ZS_ERR;
        }
        return in->is->block_state == ISAL_BLOCK_FINISH ? ZS_END : ZS_OK;
    }
#endif
    int zr = inflate(&in->zs, Z_NO_FLUSH);
    if (zr == Z_STREAM_END) return ZS_END;
    if (zr != Z_OK && zr != Z_BUF_ERROR) {
        *msg = in->zs.msg ? in->zs.msg : "inflate error";
        return ZS_ERR;
    }
    return ZS_OK;
}

/* Starts the next concatenated gzip member (input position kept). */
static void zreset(gp_input *in)
{
#ifdef GP_HAVE_ISAL
    if (in->use_isal) {
        const unsigned char *p = in->is->next_in;
        size_t n = in->is->avail_in;
        isal_inflate_reset(in->is);
        in->is->crc_flag = ISAL_GZIP;
        zin_set(in, p, n);
        return;
    }
#endif
    inflateReset(&in->zs);
}

/* Reads more compressed bytes when the inflater has none (files only). */
static int zfeed(gp_input *in, gp_err *err)
{
    if (zin_avail(in) || in->fd < 0) return 0;
    long k = raw_read(in, in->zbuf, ZCHUNK, err);
    if (k < 0) return (int)k;
    zin_set(in, in->zbuf, (size_t)k);
    return 0;
}

/* Inflates into out[0..cap) until it is full or the stream ends (*end).
 * Returns 0 or a GP_E* code with err filled; *len is what was produced even
 * on error (it is delivered before the error). */
static int fill(gp_input *in, unsigned char *out, size_t cap, size_t *len, int *end, gp_err *err)
{
    int rc = 0;
    zout_set(in, out, cap);
    while (zout_avail(in) > 0) {
        if ((rc = zfeed(in, err))) break;
        if (zin_avail(in) == 0) { /* compressed data ended before the gzip stream did */
            rc = gp_err_set(err, GP_EPARSE, "%s: truncated gzip stream (compressed byte %llu)",
                            in->name, (unsigned long long)in->pos);
            break;
        }
        const char *msg = NULL;
        int r = zstep(in, &msg);
        __atomic_store_n(&in->zpos, in->pos - zin_avail(in), __ATOMIC_RELAXED);
        if (r == ZS_ERR) {
            rc = gp_err_set(err, GP_EPARSE, "%s: corrupt gzip data near compressed byte %llu: %s",
                            in->name, (unsigned long long)(in->pos - zin_avail(in)), msg);
            break;
        }
        if (r == ZS_END) {
            /* concatenated gzip members continue; otherwise the end */
            if ((rc = zfeed(in, err))) break;
            if (zin_avail(in) > 0 && zin_next(in)[0] == 0x1f) {
                zreset(in);
                continue;
            }
            if (zin_avail(in) > 0) { /* one behaviour for every reader: refused */
                rc = gp_err_set(err, GP_EPARSE,
                                "%s: trailing garbage after the gzip stream (compressed byte %llu)",
                                in->name, (unsigned long long)(in->pos - zin_avail(in)));
                break;
            }
            *end = 1;
            break;
        }
    }
    *len = cap - zout_avail(in);
    return rc;
}

static void *gz_main(void *arg)
{
    gp_input *in = arg;
    for (;;) {
        pthread_mutex_lock(&in->mu);
        while (in->count == RING_N && !in->stop) pthread_cond_wait(&in->cv, &in->mu);
        int tail = (in->head + in->count) % RING_N, stop = in->stop;
        pthread_mutex_unlock(&in->mu);
        if (stop) break;
        slot *sl = &in->ring[tail]; /* not the reader's: the ring is not full */
        size_t len = 0;
        int end = 0;
        gp_err e;
        e.code = 0;
        int rc = fill(in, sl->buf, RING_CHUNK, &len, &end, &e);
        pthread_mutex_lock(&in->mu);
        if (len) {
            sl->len = len;
            sl->off = 0;
            in->count++;
        }
        if (rc) {
            in->err_code = rc;
            snprintf(in->err_msg, sizeof in->err_msg, "%s", e.msg);
        }
        if (rc || end) in->done = 1;
        stop = in->done;
        pthread_cond_broadcast(&in->cv);
        pthread_mutex_unlock(&in->mu);
        if (stop) break;
    }
    return NULL;
}

/* Sets up the inflater and starts the inflate thread. */
static int gz_start(gp_input *in, gp_err *err)
{
    pthread_mutex_init(&in->mu, NULL);
    pthread_cond_init(&in->cv, NULL);
    const char *force = getenv("GPUPROF_INFLATE");
    (void)force;
#ifdef GP_HAVE_ISAL
    in->use_isal = !(force && strcmp(force, "zlib") == 0);
    if (in->use_isal) {
        in->is = malloc(sizeof *in->is);
        if (!in->is) return gp_err_set(err, GP_ENOMEM, "%s: out of memory", in->name);
        isal_inflate_init(in->is);
        in->is->crc_flag = ISAL_GZIP;
    }
#endif
    if (!in->use_isal) {
        memset(&in->zs, 0, sizeof in->zs);
        if (inflateInit2(&in->zs, 15 + 32) != Z_OK)
            return gp_err_set(err, GP_ENOMEM, "%s: cannot initialise zlib", in->name);
        in->z_inited = 1;
    }
    if (in->fd >= 0) {
        in->zbuf = malloc(ZCHUNK);
        if (!in->zbuf) return gp_err_set(err, GP_ENOMEM, "%s: out of memory", in->name);
    } else {
        size_t n = in->mem_n > UINT32_MAX ? UINT32_MAX : in->mem_n;
        zin_set(in, in->mem, n);
        in->mem_pos = n;
        in->pos = n;
    }
    for (int i = 0; i < RING_N; i++)
        if (!(in->ring[i].buf = malloc(RING_CHUNK)))
            return gp_err_set(err, GP_ENOMEM, "%s: out of memory", in->name);
    if (pthread_create(&in->th, NULL, gz_main, in) != 0)
        return gp_err_set(err, GP_ENOMEM, "%s: cannot start the inflate thread", in->name);
    in->th_started = 1;
    return 0;
}

/* 'inflate' or 'isa-l': what a gzip input of this build uses now. */
const char *gp_input_inflater(void)
{
#ifdef GP_HAVE_ISAL
    const char *force = getenv("GPUPROF_INFLATE");
    if (!(force && strcmp(force, "zlib") == 0)) return "isa-l";
#endif
    return "zlib";
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
    if (in->gz) return gz_start(in, err);
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
    size_t got = 0;
    pthread_mutex_lock(&in->mu);
    while (got < cap) {
        while (in->count == 0 && !in->done) pthread_cond_wait(&in->cv, &in->mu);
        if (in->count == 0) break; /* finished: end or error */
        slot *sl = &in->ring[in->head];
        size_t k = sl->len - sl->off;
        if (k > cap - got) k = cap - got;
        pthread_mutex_unlock(&in->mu); /* the slot is ours until released */
        memcpy((char *)dst + got, sl->buf + sl->off, k);
        pthread_mutex_lock(&in->mu);
        got += k;
        sl->off += k;
        if (sl->off == sl->len) {
            in->head = (in->head + 1) % RING_N;
            in->count--;
            pthread_cond_broadcast(&in->cv);
        }
        if (in->count == 0 && got) break; /* deliver what is here; never wait with data */
    }
    int code = in->count == 0 && in->done ? in->err_code : 0;
    pthread_mutex_unlock(&in->mu);
    if (got) return (long)got;
    if (code) return gp_err_set(err, code, "%s", in->err_msg);
    return 0;
}

uint64_t gp_input_pos(const gp_input *in)
{
    return in->gz ? __atomic_load_n(&in->zpos, __ATOMIC_RELAXED) : in->pos;
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
    if (in->th_started) {
        pthread_mutex_lock(&in->mu);
        in->stop = 1;
        pthread_cond_broadcast(&in->cv);
        pthread_mutex_unlock(&in->mu);
        pthread_join(in->th, NULL);
    }
    if (in->gz) {
        pthread_mutex_destroy(&in->mu);
        pthread_cond_destroy(&in->cv);
        for (int i = 0; i < RING_N; i++) free(in->ring[i].buf);
    }
    if (in->z_inited) inflateEnd(&in->zs);
#ifdef GP_HAVE_ISAL
    free(in->is);
#endif
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
