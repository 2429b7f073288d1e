/* trace/input.c: plain/gzip/memory byte sources. Gzip is inflated by isa-l
 * (when built with it; zlib otherwise, or with $GPUPROF_INFLATE=zlib) in a
 * thread of its own that fills a small ring of chunks ahead of the reader, so
 * parsing and inflating overlap and memory stays bounded (RING x CHUNK).
 *
 * The gzip framing (RFC 1952: each member's header with its optional fields
 * and header CRC, the trailer's CRC-32 and ISIZE, concatenated members, what
 * follows the last one) is read here, byte by byte across input chunks of any
 * size; either library inflates only the raw deflate data between header and
 * trailer. So both inflaters accept the same files and report a damaged
 * header or trailer with the same message at the same offset. */
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
#define MEMCHUNK   (1u << 30) /* bytes of a memory input handed to the inflater at a time */
#define RING_N     4          /* inflated chunks in flight */
#define RING_CHUNK (1u << 20)

typedef struct slot {
    unsigned char *buf;
    size_t len, off;
} slot;

/* where the gzip framing parser is (RFC 1952, section 2.3) */
enum {
    GZ_ID1,     /* a member starts: 0x1f */
    GZ_ID2,     /* 0x8b */
    GZ_CM,      /* 8 (deflate) */
    GZ_FLG,     /* no reserved bit set */
    GZ_FIXED,   /* MTIME, XFL, OS: 6 bytes */
    GZ_XLEN,    /* FEXTRA: 2 bytes of length */
    GZ_EXTRA,   /* FEXTRA: its bytes */
    GZ_NAME,    /* FNAME: up to a zero byte */
    GZ_COMMENT, /* FCOMMENT: up to a zero byte */
    GZ_HCRC,    /* FHCRC: 2 bytes, the low half of the CRC-32 of the header before them */
    GZ_DATA,    /* raw deflate data, inflated by isa-l or zlib */
    GZ_TRAILER, /* CRC-32 and ISIZE of the data, 4 bytes each */
    GZ_NEXT     /* after a member: the end, another member, or garbage */
};
enum { FTEXT = 1, FHCRC = 2, FEXTRA = 4, FNAME = 8, FCOMMENT = 16 };

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
    size_t zchunk;       /* compressed bytes taken at a time */
    uint64_t pos, size;  /* pos: raw bytes read so far (written by the inflate thread) */
    uint64_t zpos;       /* compressed bytes consumed, published for progress */
    const char *name;
    /* a pipe, FIFO or terminal (pread fails): its first bytes, read by
     * start() to look for the gzip magic, are handed out again first */
    int stream;
    unsigned char lead[2];
    unsigned lead_n, lead_off;
    /* the gzip framing (inflate thread) */
    int gst;             /* GZ_* */
    unsigned flg;        /* the member's FLG */
    uint32_t need;       /* bytes left of the current field */
    uint32_t val;        /* little-endian field being read (XLEN, HCRC) */
    uint64_t field_off;  /* offset of the current field's first byte */
    uint32_t hcrc;       /* CRC-32 of the member's header so far */
    uint32_t dcrc, dlen; /* CRC-32 and length (mod 2^32) of the member's data */
    unsigned char trailer[8];
    unsigned char pend[8]; /* input isa-l had read past the end of the deflate data */
    unsigned pend_n, pend_off;
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
    if (in->lead_off < in->lead_n && cap) {
        size_t k = in->lead_n - in->lead_off;
        if (k > cap) k = cap;
        memcpy(dst, in->lead + in->lead_off, k);
        in->lead_off += (unsigned)k;
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

/* Offset in the file of the next byte of compressed input not yet taken by
 * the framing parser or the inflater (bits isa-l holds count as not taken). */
static uint64_t zoff(const gp_input *in)
{
    uint64_t off = in->pos - zin_avail(in) - (in->pend_n - in->pend_off);
#ifdef GP_HAVE_ISAL
    if (in->use_isal && in->gst == GZ_DATA) off -= (uint64_t)(in->is->read_in_length / 8);
#endif
    return off;
}

/* One step of raw deflate; ZS_END when the deflate data ended (the input
 * after it is left for the framing parser), ZS_ERR on corrupt data. The
 * message is the same for both libraries: they tell different details. */
static int zstep(gp_input *in)
{
#ifdef GP_HAVE_ISAL
    if (in->use_isal) {
        struct inflate_state *s = in->is;
        if (isal_inflate(s) < 0) return ZS_ERR;
        if (s->block_state != ISAL_BLOCK_FINISH) return ZS_OK;
        /* the whole bytes isa-l had read ahead of the end (at most 8): the
         * trailer's start; the bits of a partly used byte were padding */
        in->dcrc = s->crc;
        in->pend_n = (unsigned)(s->read_in_length / 8);
        uint64_t bits = s->read_in >> (s->read_in_length % 8);
        for (unsigned i = 0; i < in->pend_n && i < sizeof in->pend; i++)
            in->pend[i] = (unsigned char)(bits >> (8 * i));
        in->pend_off = 0;
        s->read_in = 0;
        s->read_in_length = 0;
        return ZS_END;
    }
#endif
    int zr = inflate(&in->zs, Z_NO_FLUSH);
    if (zr == Z_STREAM_END) return ZS_END;
    return zr == Z_OK || zr == Z_BUF_ERROR ? ZS_OK : ZS_ERR;
}

/* Starts the deflate data of a member (input position kept). */
static void zreset(gp_input *in)
{
    in->dcrc = 0;
    in->dlen = 0;
#ifdef GP_HAVE_ISAL
    if (in->use_isal) {
        const unsigned char *p = in->is->next_in;
        size_t n = in->is->avail_in;
        isal_inflate_reset(in->is);
        in->is->crc_flag = ISAL_GZIP_NO_HDR; /* raw deflate; isa-l keeps the data's CRC-32 */
        zin_set(in, p, n);
        return;
    }
#endif
    inflateReset(&in->zs);
}

/* Reads more compressed bytes when the inflater has none. */
static int zfeed(gp_input *in, gp_err *err)
{
    if (zin_avail(in)) return 0;
    if (in->fd < 0) {
        size_t k = in->mem_n - in->mem_pos;
        if (k > in->zchunk) k = in->zchunk;
        zin_set(in, in->mem + in->mem_pos, k);
        in->mem_pos += k;
        in->pos += k;
        return 0;
    }
    long k = raw_read(in, in->zbuf, in->zchunk, err);
    if (k < 0) return (int)k;
    zin_set(in, in->zbuf, (size_t)k);
    return 0;
}

/* Reads gzip framing from p[0..n) (offset off in the file) up to the start
 * of a member's deflate data or the end of its trailer; *used: bytes taken.
 * Returns NULL, or what is wrong with the byte or field at *bad. */
static const char *frame(gp_input *in, const unsigned char *p, size_t n, uint64_t off, size_t *used,
                         uint64_t *bad)
{
    size_t i = 0;
    while (i < n && in->gst != GZ_DATA && in->gst != GZ_NEXT) {
        size_t k = 1;
        int hdr = in->gst < GZ_HCRC; /* bytes covered by the header CRC */
        switch (in->gst) {
        case GZ_ID1:
            in->hcrc = (uint32_t)crc32(0L, Z_NULL, 0);
            in->field_off = off + i;
            if (p[i] != 0x1f) goto bad_magic;
            in->gst = GZ_ID2;
            break;
        case GZ_ID2:
            if (p[i] != 0x8b) goto bad_magic;
            in->gst = GZ_CM;
            break;
        case GZ_CM:
            if (p[i] != 8) {
                *bad = off + i;
                return "unknown compression method";
            }
            in->gst = GZ_FLG;
            break;
        case GZ_FLG:
            if (p[i] & 0xe0) {
                *bad = off + i;
                return "unknown header flags set";
            }
            in->flg = p[i];
            in->gst = GZ_FIXED;
            in->need = 6;
            break;
        case GZ_FIXED:
        case GZ_EXTRA:
            k = n - i < in->need ? n - i : in->need;
            in->need -= (uint32_t)k;
            if (in->need) break;
            if (in->gst == GZ_FIXED && (in->flg & FEXTRA)) {
                in->gst = GZ_XLEN;
                in->need = 2;
                in->val = 0;
            } else {
                in->gst = GZ_NAME;
            }
            break;
        case GZ_XLEN:
            in->val |= (uint32_t)p[i] << (8 * (2 - in->need));
            if (--in->need == 0) {
                in->gst = GZ_EXTRA;
                in->need = in->val;
            }
            break;
        case GZ_NAME:
        case GZ_COMMENT: {
            unsigned f = in->gst == GZ_NAME ? FNAME : FCOMMENT;
            k = 0;
            if (in->flg & f) {
                const unsigned char *z = memchr(p + i, 0, n - i);
                k = z ? (size_t)(z - (p + i)) + 1 : n - i;
                if (!z) break;
            }
            in->gst = f == FNAME ? GZ_COMMENT : GZ_HCRC;
            in->need = 2;
            in->val = 0;
            in->field_off = off + i + k;
            break;
        }
        case GZ_HCRC:
            k = 0;
            if (in->flg & FHCRC) {
                k = 1;
                in->val |= (uint32_t)p[i] << (8 * (2 - in->need));
                if (--in->need) break;
                if (in->val != (in->hcrc & 0xffff)) {
                    *bad = in->field_off;
                    return "header crc mismatch";
                }
            }
            in->gst = GZ_DATA;
            zreset(in);
            break;
        case GZ_TRAILER: {
            in->trailer[8 - in->need] = p[i];
            if (--in->need) break;
            uint32_t crc = 0, isize = 0;
            for (int b = 3; b >= 0; b--) {
                crc = crc << 8 | in->trailer[b];
                isize = isize << 8 | in->trailer[4 + b];
            }
            if (crc != in->dcrc) {
                *bad = in->field_off;
                return "incorrect data check";
            }
            if (isize != in->dlen) {
                *bad = in->field_off + 4;
                return "incorrect length check";
            }
            in->gst = GZ_NEXT;
            break;
        }
        }
        if (hdr && k) in->hcrc = (uint32_t)crc32(in->hcrc, p + i, (uInt)k);
        i += k;
    }
    *used = i;
    return NULL;
bad_magic:
    *bad = off + i;
    return "incorrect header check";
}

/* Inflates into out[0..cap) until it is full or the stream ends (*end).
 * Returns 0 or a GP_E* code with err filled; *len is what was produced even
 * on error (it is delivered before the error). */
static int fill(gp_input *in, unsigned char *out, size_t cap, size_t *len, int *end, gp_err *err)
{
    int rc = 0;
    size_t got = 0;
    while (got < cap) {
        if (in->gst == GZ_DATA) {
            if ((rc = zfeed(in, err))) break;
            if (zin_avail(in) == 0) { /* compressed data ended before the gzip stream did */
                rc = gp_err_set(err, GP_EPARSE, "%s: truncated gzip stream (compressed byte %llu)",
                                in->name, (unsigned long long)in->pos);
                break;
            }
            zout_set(in, out + got, cap - got);
            int r = zstep(in);
            size_t made = cap - got - zout_avail(in);
            if (!in->use_isal) in->dcrc = (uint32_t)crc32(in->dcrc, out + got, (uInt)made);
            in->dlen += (uint32_t)made;
            got += made;
            if (r == ZS_ERR) {
                rc = gp_err_set(err, GP_EPARSE,
                                "%s: corrupt gzip data near compressed byte %llu: invalid deflate "
                                "data",
                                in->name, (unsigned long long)zoff(in));
                break;
            }
            if (r == ZS_END) {
                in->gst = GZ_TRAILER;
                in->need = 8;
                in->field_off = zoff(in);
            }
            __atomic_store_n(&in->zpos, zoff(in), __ATOMIC_RELAXED);
            continue;
        }
        /* framing: first what isa-l read ahead, then the input */
        const unsigned char *p;
        size_t n;
        uint64_t off = zoff(in);
        int ahead = in->pend_off < in->pend_n;
        if (ahead) {
            p = in->pend + in->pend_off;
            n = in->pend_n - in->pend_off;
        } else {
            if ((rc = zfeed(in, err))) break;
            p = zin_next(in);
            n = zin_avail(in);
            off = zoff(in);
            if (n == 0) {
                if (in->gst == GZ_NEXT) { /* the end, after a whole member */
                    *end = 1;
                    break;
                }
                rc = gp_err_set(err, GP_EPARSE, "%s: truncated gzip stream (compressed byte %llu)",
                                in->name, (unsigned long long)in->pos);
                break;
            }
        }
        if (in->gst == GZ_NEXT) {
            if (p[0] != 0x1f) { /* one behaviour for every reader: refused */
                rc = gp_err_set(err, GP_EPARSE,
                                "%s: trailing garbage after the gzip stream (compressed byte %llu)",
                                in->name, (unsigned long long)off);
                break;
            }
            in->gst = GZ_ID1; /* concatenated gzip members continue */
        }
        size_t used = 0;
        uint64_t bad = 0;
        const char *msg = frame(in, p, n, off, &used, &bad);
        if (ahead)
            in->pend_off += (unsigned)used;
        else
            zin_set(in, p + used, n - used);
        __atomic_store_n(&in->zpos, zoff(in), __ATOMIC_RELAXED);
        if (msg) {
            rc = gp_err_set(err, GP_EPARSE, "%s: corrupt gzip data near compressed byte %llu: %s",
                            in->name, (unsigned long long)bad, msg);
            break;
        }
    }
    *len = got;
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

static size_t test_chunk; /* gp_input_test_chunk */

void gp_input_test_chunk(size_t n)
{
    test_chunk = n;
}

/* Sets up the inflater and starts the inflate thread. */
static int gz_start(gp_input *in, gp_err *err)
{
    size_t def = in->fd >= 0 ? ZCHUNK : MEMCHUNK;
    in->zchunk = test_chunk && test_chunk < def ? test_chunk : def;
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
        in->is->crc_flag = ISAL_GZIP_NO_HDR;
    }
#endif
    if (!in->use_isal) {
        memset(&in->zs, 0, sizeof in->zs);
        if (inflateInit2(&in->zs, -15) != Z_OK) /* raw deflate: the framing is read here */
            return gp_err_set(err, GP_ENOMEM, "%s: cannot initialise zlib", in->name);
        in->z_inited = 1;
    }
    if (in->fd >= 0) {
        in->zbuf = malloc(ZCHUNK);
        if (!in->zbuf) return gp_err_set(err, GP_ENOMEM, "%s: out of memory", in->name);
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
        if (k < 0 && errno == ESPIPE) {
            /* not seekable (a pipe: /dev/stdin, <(...), a FIFO): the magic
             * is read from the stream and handed out again by raw_read */
            in->stream = 1;
            while (have < 2) {
                k = read(in->fd, magic + have, 2 - have);
                if (k < 0 && errno == EINTR) continue;
                if (k <= 0) break; /* the end, or an error raw_read meets again */
                have += (size_t)k;
            }
            memcpy(in->lead, magic, have);
            in->lead_n = (unsigned)have;
        }
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

int gp_input_is_stream(const gp_input *in)
{
    return in->stream;
}

int gp_input_blank_file(const char *path)
{
    static const unsigned char bom[3] = {0xef, 0xbb, 0xbf};
    gp_input *in;
    gp_err e;
    if (gp_input_open_file(path, &in, &e)) return 0;
    unsigned char buf[1 << 14];
    uint64_t at = 0;   /* bytes read so far */
    unsigned nbom = 0; /* bytes of a byte order mark at the start */
    int blank = 1;
    for (;;) {
        long k = gp_input_read(in, buf, sizeof buf, &e);
        if (k < 0) blank = 0;
        if (k <= 0) break;
        for (long i = 0; i < k && blank; i++, at++) {
            unsigned char c = buf[i];
            if (at < 3 && nbom == at && c == bom[at]) {
                nbom++;
                continue;
            }
            blank = (nbom == 0 || nbom == 3) && (c == ' ' || c == '\t' || c == '\r' || c == '\n');
        }
        if (!blank) break;
    }
    gp_input_close(in);
    return blank && (nbom == 0 || nbom == 3);
}
