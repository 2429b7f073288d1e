/* serve/promhttp.c: the metrics-only HTTP listener on libmicrohttpd (one
 * internal polling thread: a scrape only takes a reference to the cached
 * exposition, so one thread serves any number of scrapers). */
#include "serve/promhttp.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

int gp_promhttp_token_eq(const char *a, const char *b)
{
    size_t na = strlen(a), nb = strlen(b);
    unsigned char d = (unsigned char)(na != nb);
    /* walk the expected token's length whatever the input is */
    for (size_t i = 0; i < nb; i++) d |= (unsigned char)((i < na ? a[i] : 0) ^ b[i]);
    return d == 0;
}

int gp_promhttp_parse_listen(const char *s, void *ss, int *loopback, gp_err *err)
{
    char host[256];
    const char *port;
    if (!s || !*s) return gp_err_set(err, GP_EINVAL, "empty listen address");
    if (s[0] == '[') {
        const char *e = strchr(s, ']');
        if (!e || e[1] != ':' || (size_t)(e - s - 1) >= sizeof host)
            return gp_err_set(err, GP_EINVAL, "'%s': expected [ADDR]:PORT", s);
        memcpy(host, s + 1, (size_t)(e - s - 1));
        host[e - s - 1] = 0;
        port = e + 2;
    } else {
        const char *c = strrchr(s, ':');
        if (!c) {
            snprintf(host, sizeof host, "127.0.0.1");
            port = s;
        } else {
            if ((size_t)(c - s) >= sizeof host)
                return gp_err_set(err, GP_EINVAL, "'%s': address too long", s);
            memcpy(host, s, (size_t)(c - s));
            host[c - s] = 0;
            port = c + 1;
            if (!host[0]) snprintf(host, sizeof host, "0.0.0.0");
        }
    }
    char *end;
    long p = strtol(port, &end, 10);
    if (!*port || *end || p < 0 || p > 65535)
        return gp_err_set(err, GP_EINVAL, "'%s': bad port '%s'", s, port);
    memset(ss, 0, sizeof(struct sockaddr_storage));
    struct sockaddr_in *a4 = ss;
    struct sockaddr_in6 *a6 = ss;
    if (!strcmp(host, "localhost")) snprintf(host, sizeof host, "127.0.0.1");
    if (inet_pton(AF_INET, host, &a4->sin_addr) == 1) {
        a4->sin_family = AF_INET;
        a4->sin_port = htons((uint16_t)p);
        *loopback = (ntohl(a4->sin_addr.s_addr) >> 24) == 127;
    } else if (inet_pton(AF_INET6, host, &a6->sin6_addr) == 1) {
        a6->sin6_family = AF_INET6;
        a6->sin6_port = htons((uint16_t)p);
        *loopback = IN6_IS_ADDR_LOOPBACK(&a6->sin6_addr);
    } else
        return gp_err_set(err, GP_EINVAL, "'%s': '%s' is not a numeric IPv4/IPv6 address", s, host);
    return 0;
}

#ifdef GP_HAVE_MHD
#include <microhttpd.h>

/* The answer of one exposition text (plain or gzip), made once per text and
 * queued on every scrape until the text changes. Only the daemon's one
 * polling thread touches it. */
typedef struct cached_resp {
    gp_metrics_text *t; /* the text it was made from (held by r) */
    struct MHD_Response *r;
} cached_resp;

struct gp_promhttp {
    struct MHD_Daemon *d;
    gp_metrics *x;
    char *token;
    int port;
    atomic_ulong scrapes;
    cached_resp plain, gz;
};

static enum MHD_Result reply_text(struct MHD_Connection *c, unsigned status, const char *msg,
                                  int auth_hdr)
{
    struct MHD_Response *r =
        MHD_create_response_from_buffer(strlen(msg), (void *)msg, MHD_RESPMEM_PERSISTENT);
    if (!r) return MHD_NO;
    MHD_add_response_header(r, "Content-Type", "text/plain; charset=utf-8");
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    if (auth_hdr) MHD_add_response_header(r, "WWW-Authenticate", "Bearer realm=\"gpuprof\"");
    enum MHD_Result ret = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ret;
}

static void free_text(void *cls)
{
    gp_metrics_release(cls);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *upload,
                                  size_t *upload_size, void **con_cls)
{
    gp_promhttp *h = cls;
    (void)version, (void)upload;
    int head = !strcmp(method, "HEAD");
    if (strcmp(method, "GET") && !head) return reply_text(c, 405, "method not allowed\n", 0);
    if (*upload_size) return reply_text(c, 400, "no request body expected\n", 0);
    if (!*con_cls) { /* first call of this request: headers only */
        *con_cls = h;
        return MHD_YES;
    }
    if (h->token) {
        const char *a = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
        if (!a || strncmp(a, "Bearer ", 7) || !gp_promhttp_token_eq(a + 7, h->token))
            return reply_text(c, 401, "a bearer token is required\n", 1);
    }
    if (!strcmp(url, "/")) return reply_text(c, 200, "gpuprof metrics: GET /metrics\n", 0);
    if (strcmp(url, "/metrics")) return reply_text(c, 404, "not found (try /metrics)\n", 0);
    const char *ae = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Accept-Encoding");
    int gz = ae && strstr(ae, "gzip"); /* Prometheus asks for gzip */
    gp_metrics_text *t = gz ? gp_metrics_acquire_gzip(h->x) : gp_metrics_acquire(h->x);
    if (!t) return reply_text(c, 503, "out of memory\n", 0);
    gz = gz && t->gz;
    cached_resp *cr = gz ? &h->gz : &h->plain;
    if (cr->t == t && cr->r) {
        gp_metrics_release(t); /* the cached answer holds the text already */
    } else {
        /* a new text: its answer made once, with every header; the old one
         * lives on while a connection still sends it */
        struct MHD_Response *r = MHD_create_response_from_buffer_with_free_callback_cls(
            gz ? t->gz_len : t->len, gz ? t->gz : t->data, free_text, t);
        if (!r) {
            gp_metrics_release(t);
            return MHD_NO;
        }
        MHD_add_response_header(r, "Content-Type", GP_METRICS_CONTENT_TYPE);
        MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
        MHD_add_response_header(r, "Cache-Control", "no-store");
        MHD_add_response_header(r, "Vary", "Accept-Encoding");
        if (gz) MHD_add_response_header(r, "Content-Encoding", "gzip");
        if (cr->r) MHD_destroy_response(cr->r);
        cr->r = r;
        cr->t = t;
    }
    enum MHD_Result ret = MHD_queue_response(c, 200, cr->r);
    atomic_fetch_add(&h->scrapes, 1);
    return ret;
}

gp_promhttp *gp_promhttp_start(const char *listen, gp_metrics *x, const gp_promhttp_opts *o,
                               gp_err *err)
{
    struct sockaddr_storage ss;
    int loop = 0;
    if (gp_promhttp_parse_listen(listen, &ss, &loop, err)) return NULL;
    const char *token = o && o->token && *o->token ? o->token : NULL;
    if (!loop && !token && !(o && o->no_auth)) {
        gp_err_set(err, GP_EINVAL,
                   "%s is not a loopback address: give --token-file FILE (or --no-auth to "
                   "expose the metrics to anyone who can reach it)",
                   listen);
        return NULL;
    }
    gp_promhttp *h = calloc(1, sizeof *h);
    if (!h || (token && !(h->token = strdup(token)))) {
        free(h);
        gp_err_set(err, GP_ENOMEM, "out of memory");
        return NULL;
    }
    h->x = x;
    atomic_init(&h->scrapes, 0);
    /* one polling thread (no thread pool): the cached answers are its own */
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_TURBO;
    if (ss.ss_family == AF_INET6) flags |= MHD_USE_IPv6;
    h->d = MHD_start_daemon(flags, 0, NULL, NULL, on_request, h, MHD_OPTION_SOCK_ADDR,
                            (struct sockaddr *)&ss, MHD_OPTION_CONNECTION_LIMIT, (unsigned)1024,
                            MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)512,
                            MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)15,
                            MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)8192, MHD_OPTION_END);
    if (!h->d) {
        gp_err_set(err, GP_EIO, "cannot listen on %s (address in use or not available)", listen);
        free(h->token);
        free(h);
        return NULL;
    }
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_BIND_PORT);
    h->port = di ? (int)di->port : -1;
    return h;
}

int gp_promhttp_port(const gp_promhttp *h)
{
    return h->port;
}

unsigned long gp_promhttp_scrapes(gp_promhttp *h)
{
    return atomic_load(&h->scrapes);
}

void gp_promhttp_stop(gp_promhttp *h)
{
    if (!h) return;
    MHD_stop_daemon(h->d);
    if (h->plain.r) MHD_destroy_response(h->plain.r);
    if (h->gz.r) MHD_destroy_response(h->gz.r);
    if (h->token) {
        memset(h->token, 0, strlen(h->token));
        free(h->token);
    }
    free(h);
}

#else /* no libmicrohttpd in this build */

struct gp_promhttp {
    int unused;
};

gp_promhttp *gp_promhttp_start(const char *listen, gp_metrics *x, const gp_promhttp_opts *o,
                               gp_err *err)
{
    (void)listen, (void)x, (void)o;
    gp_err_set(err, GP_EUNSUPPORTED,
               "this gpuprof was built without libmicrohttpd: no HTTP listener (use --textfile)");
    return NULL;
}

int gp_promhttp_port(const gp_promhttp *h)
{
    (void)h;
    return -1;
}

unsigned long gp_promhttp_scrapes(gp_promhttp *h)
{
    (void)h;
    return 0;
}

void gp_promhttp_stop(gp_promhttp *h)
{
    (void)h;
}
#endif
