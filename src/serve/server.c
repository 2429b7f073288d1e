/* serve/server.c: the libmicrohttpd front of `gpuprof serve` (see server.h).
 *
 * A request's raw target comes from the URI log callback (before any
 * decoding by libmicrohttpd) and is parsed by serve/router.c. Cheap routes
 * are answered in the network thread; the others suspend the connection and
 * run in a worker thread (at most `jobs` at once, 503 beyond), which resumes
 * it when the response is ready, so that loading a large trace never stalls
 * the other connections. */
#include "serve/server.h"
#include "analysis/compile.h"
#include "serve/metrics.h"
#include "serve/api.h"
#include "serve/auth.h"
#include "serve/router.h"
#include "core/clock.h"
#include "core/error.h"
#include "core/sbuf.h"
#include "store/audit.h"
#include "trace/sanitize.h"
#include "store/store.h"
#include <arpa/inet.h>
#include <errno.h>
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define BODY_MAX   (64 * 1024)
#define IP_SLOTS   1024
#define ROUTES_MAX 64

/* A connection as the request deadline sees it (MHD's socket context). */
typedef struct conn_state {
    struct conn_state *prev, *next;
    struct MHD_Connection *c;
    int64_t ready_ns; /* when it became ready for its current request */
    int receiving;    /* 1 until that request was received whole */
    int shut;         /* shut down by the deadline */
} conn_state;

typedef struct server {
    gp_serve_ctx ctx;
    gp_tokens *tokens;                    /* NULL: no authentication */
    const char *audit_store, *audit_file; /* where control requests are recorded */
    pthread_mutex_t audit_mu;
    int quiet;
    long conn_per_ip;
    atomic_int jobs, max_jobs;
    pthread_mutex_t ip_mu;
    struct {
        unsigned char addr[16];
        int used, count;
    } ip[IP_SLOTS];
    /* the request deadline: every connection, and the thread that shuts
     * down those whose request did not arrive in time (slowloris) */
    pthread_mutex_t conn_mu;
    conn_state conns; /* list head */
    int64_t deadline_ns;
    pthread_t reaper;
    atomic_int stop_reaper;
    /* the answers of static routes without parameters (gp_api_static), made
     * at start, by route id */
    struct MHD_Response *fixed[ROUTES_MAX];
    /* GET /metrics with --monitor: one ready answer per exposition text,
     * plain [0] and gzip [1], swapped when the text changes */
    pthread_mutex_t met_mu;
    struct {
        gp_metrics_text *t; /* held by r */
        struct MHD_Response *r;
    } met[2];
} server;

typedef struct req {
    char *raw; /* the request target as sent */
    size_t rawn;
    int seen;     /* the access handler ran once */
    int over_ip;  /* the client had too many connections when this one opened */
    gp_sbuf body; /* POST body */
    int body_big;
    int done; /* resp holds the answer (after a worker) */
    gp_resp resp;
    gp_target t;
    const gp_route *route;
    unsigned method;
    struct MHD_Connection *conn;
    server *s;
    int64_t t0;
    char ipkey[16];
    char tokid[GP_TOKEN_ID_MAX + 16]; /* who asked (never the token itself) */
} req;

/* ---- client addresses ---------------------------------------------------------------------- */

static int addr_key(struct MHD_Connection *c, unsigned char key[16])
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    memset(key, 0, 16);
    if (!ci || !ci->client_addr) return -1;
    const struct sockaddr *sa = ci->client_addr;
    if (sa->sa_family == AF_INET)
        memcpy(key, &((const struct sockaddr_in *)(const void *)sa)->sin_addr, 4);
    else if (sa->sa_family == AF_INET6)
        memcpy(key, &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr, 16);
    else
        return -1;
    return 0;
}

/* The slot of key: open addressing from the key's hash; a slot keeps its
 * address while its count is 0 (no tombstones) until the table fills up,
 * when the slots of idle addresses are cleared. Called locked; -1 when the
 * table is full of busy addresses. */
static int ip_slot(server *s, const unsigned char key[16], int add)
{
    uint64_t h = 1469598103934665603ULL;
    for (int i = 0; i < 16; i++) h = (h ^ key[i]) * 1099511628211ULL;
    for (int pass = 0; pass < 2; pass++) {
        for (unsigned k = 0; k < IP_SLOTS; k++) {
            unsigned i = (unsigned)(h + k) % IP_SLOTS;
            if (s->ip[i].used && !memcmp(s->ip[i].addr, key, 16)) return (int)i;
            if (!s->ip[i].used) {
                if (!add) return -1;
                s->ip[i].used = 1;
                memcpy(s->ip[i].addr, key, 16);
                s->ip[i].count = 0;
                return (int)i;
            }
        }
        if (!add) return -1;
        /* full: keep the busy addresses only, placed again */
        int busy = 0;
        for (unsigned i = 0; i < IP_SLOTS; i++) busy += s->ip[i].used && s->ip[i].count > 0;
        if (busy >= IP_SLOTS) return -1;
        static __thread struct {
            unsigned char addr[16];
            int count;
        } keep[IP_SLOTS];
        int nk = 0;
        for (unsigned i = 0; i < IP_SLOTS; i++)
            if (s->ip[i].used && s->ip[i].count > 0) {
                memcpy(keep[nk].addr, s->ip[i].addr, 16);
                keep[nk++].count = s->ip[i].count;
            }
        memset(s->ip, 0, sizeof s->ip);
        for (int j = 0; j < nk; j++) {
            int at = ip_slot(s, keep[j].addr, 1);
            if (at >= 0) s->ip[at].count = keep[j].count;
        }
    }
    return -1;
}

/* Counts a request of this address in (+1) or out (-1); returns the count
 * after. A table full of busy addresses counts nothing (no limit then). */
static int ip_count(server *s, const unsigned char key[16], int delta)
{
    pthread_mutex_lock(&s->ip_mu);
    int count = 0, i = ip_slot(s, key, delta > 0);
    if (i >= 0) {
        s->ip[i].count += delta;
        if (s->ip[i].count < 0) s->ip[i].count = 0;
        count = s->ip[i].count;
    }
    pthread_mutex_unlock(&s->ip_mu);
    return count;
}

/* ---- responses ------------------------------------------------------------------------------ */

static void b64(gp_sbuf *b, const unsigned char *d, size_t n)
{
    static const char t[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (size_t i = 0; i < n; i += 3) {
        unsigned v = (unsigned)d[i] << 16;
        if (i + 1 < n) v |= (unsigned)d[i + 1] << 8;
        if (i + 2 < n) v |= d[i + 2];
        gp_sbuf_putc(b, t[(v >> 18) & 63]);
        gp_sbuf_putc(b, t[(v >> 12) & 63]);
        gp_sbuf_putc(b, i + 1 < n ? t[(v >> 6) & 63] : '=');
        gp_sbuf_putc(b, i + 2 < n ? t[v & 63] : '=');
    }
}

/* The Content-Security-Policy of an HTML page: its own inline scripts
 * (exactly "<script>" elements; JSON data blocks carry a type and do not run)
 * by SHA-256, nothing from elsewhere, no inline event handlers. */
static void csp_html(gp_sbuf *csp, const char *html, size_t n)
{
    gp_sbuf_puts(csp, "default-src 'none'; script-src");
    const char *p = html, *lim = html + n;
    int any = 0;
    while (p < lim) {
        const char *o = memmem(p, (size_t)(lim - p), "<script>", 8);
        if (!o) break;
        const char *s = o + 8, *e = memmem(s, (size_t)(lim - s), "</script>", 9);
        if (!e) break;
        unsigned char dg[32];
        if (gnutls_hash_fast(GNUTLS_DIG_SHA256, s, (size_t)(e - s), dg) == 0) {
            gp_sbuf_puts(csp, " 'sha256-");
            b64(csp, dg, 32);
            gp_sbuf_putc(csp, '\'');
            any = 1;
        }
        p = e + 9;
    }
    if (!any) gp_sbuf_puts(csp, " 'none'");
    gp_sbuf_puts(csp, "; style-src 'unsafe-inline'; img-src data:; connect-src 'self'; "
                      "base-uri 'none'; form-action 'none'; frame-ancestors 'none'");
}

/* Appends the audit record of a request that controls something (every
 * POST, answered or refused): the route, the body (redacted by the audit
 * log), the token id and the status. */
static void audit_request(server *s, req *q, const gp_resp *r)
{
    gp_sbuf tg = {0}, res = {0};
    gp_sbuf_printf(&tg, "POST %s", q->t.path ? q->t.path : "-");
    if (q->body.n) {
        gp_sbuf_putc(&tg, ' ');
        for (size_t i = 0; i < q->body.n && i < 400; i++)
            gp_sbuf_putc(&tg, q->body.s[i] == '\n' || q->body.s[i] == '\r' ? ' ' : q->body.s[i]);
    }
    gp_sbuf_printf(&res, "%d", r->status);
    if (r->status >= 300 && r->body.n) {
        gp_sbuf_putc(&res, ' ');
        gp_sbuf_add(&res, r->body.s, r->body.n > 300 ? 300 : r->body.n);
        while (res.n && (res.s[res.n - 1] == '\n' || res.s[res.n - 1] == '\r')) res.n--;
    }
    gp_sbuf_printf(&res, "; by %s", q->tokid[0] ? q->tokid : "none");
    gp_err err = {0};
    pthread_mutex_lock(&s->audit_mu);
    if (gp_audit_append(s->audit_store, s->audit_file, "serve request", gp_sbuf_cstr(&tg),
                        gp_sbuf_cstr(&res), &err))
        fprintf(stderr, "gpuprof serve: warning: %s\n", err.msg);
    pthread_mutex_unlock(&s->audit_mu);
    gp_sbuf_free(&tg);
    gp_sbuf_free(&res);
}

/* The headers of every answer (and the CSP of an HTML page). */
static void add_headers(struct MHD_Response *res, const server *s, int status, const char *ctype,
                        int html, const char *body, size_t n)
{
    MHD_add_response_header(res, "Content-Type", ctype ? ctype : "application/json");
    MHD_add_response_header(res, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(res, "Cache-Control", "no-store");
    MHD_add_response_header(res, "Referrer-Policy", "no-referrer");
    MHD_add_response_header(res, "X-Frame-Options", "DENY");
    gp_sbuf csp = {0};
    if (html)
        csp_html(&csp, body ? body : "", n);
    else
        gp_sbuf_puts(&csp, "default-src 'none'; frame-ancestors 'none'");
    MHD_add_response_header(res, "Content-Security-Policy", gp_sbuf_cstr(&csp));
    gp_sbuf_free(&csp);
    if (status == 401) MHD_add_response_header(res, "WWW-Authenticate", "Bearer realm=\"gpuprof\"");
    if (status == 405) MHD_add_response_header(res, "Allow", "GET, HEAD, POST");
    if (status == 429 || status == 413 || status == 414 || status == 400)
        MHD_add_response_header(res, "Connection", "close");
    if (s->ctx.tls) MHD_add_response_header(res, "Strict-Transport-Security", "max-age=31536000");
}

/* The access log line: the path only (no query values, never a header:
 * tokens). */
static void access_log(const server *s, const req *q, int status)
{
    if (s->quiet || !q) return;
    fprintf(stderr, "gpuprof serve: %s %s %d %.1f ms\n",
            q->method == GP_M_POST   ? "POST"
            : q->method == GP_M_HEAD ? "HEAD"
                                     : "GET",
            q->t.path ? q->t.path : "-", status, (double)(gp_clock_mono_ns() - q->t0) / 1e6);
}

static enum MHD_Result respond(struct MHD_Connection *c, server *s, req *q, gp_resp *r)
{
    if (q && q->method == GP_M_POST) audit_request(s, q, r);
    /* the response takes the body's buffer (a large body, e.g. a timeline,
     * is not copied once more); an empty body is copied */
    struct MHD_Response *res =
        r->body.s ? MHD_create_response_from_buffer_with_free_callback(r->body.n, r->body.s, free)
                  : MHD_create_response_from_buffer(0, "", MHD_RESPMEM_PERSISTENT);
    if (!res) return MHD_NO;
    char *data = r->body.s;
    r->body.s = NULL; /* the response's now */
    r->body.cap = 0;
    add_headers(res, s, r->status, r->ctype, r->html, data, r->body.n);
    enum MHD_Result ok = MHD_queue_response(c, (unsigned)r->status, res);
    MHD_destroy_response(res);
    access_log(s, q, r->status);
    return ok;
}

/* ---- kept answers --------------------------------------------------------------------------- */

/* The ready answer of a kept body (gp_tcache_aux_ops): one libmicrohttpd
 * response with every header (an HTML page's CSP hashed once), queued on
 * every connection that asks for that body; libmicrohttpd counts the
 * connections sending it, this counts the cache and the requests holding
 * it. The body's bytes are freed with the response. */
typedef struct kept_resp {
    atomic_int refs;
    struct MHD_Response *r;
} kept_resp;

static void *kept_make(void *user, char *data, size_t n, int kind)
{
    server *s = user;
    kept_resp *k = malloc(sizeof *k);
    if (!k) return NULL;
    k->r = MHD_create_response_from_buffer_with_free_callback(n, data, free);
    if (!k->r) {
        free(k);
        return NULL;
    }
    int html = kind == GP_API_KEPT_HTML;
    add_headers(k->r, s, 200, html ? "text/html; charset=utf-8" : "application/json", html, data,
                n);
    atomic_init(&k->refs, 1);
    return k;
}

static void kept_ref(void *aux)
{
    atomic_fetch_add(&((kept_resp *)aux)->refs, 1);
}

static void kept_unref(void *aux)
{
    kept_resp *k = aux;
    if (atomic_fetch_sub(&k->refs, 1) == 1) {
        MHD_destroy_response(k->r); /* freed when the last connection sent it */
        free(k);
    }
}

static enum MHD_Result send_error(struct MHD_Connection *c, server *s, req *q, int status,
                                  const char *msg)
{
    gp_resp r = {0};
    gp_api_error(&r, status, msg);
    enum MHD_Result ok = respond(c, s, q, &r);
    gp_sbuf_free(&r.body);
    return ok;
}

/* ---- authentication ------------------------------------------------------------------------- */

/* The scope of the request's token: the Authorization header ("Bearer T"),
 * or for GET/HEAD the gpuprof_token cookie the dashboard sets. */
static int scope_of(server *s, struct MHD_Connection *c, unsigned method, int *presented,
                    char *tokid, size_t tokid_n)
{
    *presented = 0;
    snprintf(tokid, tokid_n, "no token");
    const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
    const char *tok = NULL;
    if (h && !strncasecmp(h, "Bearer ", 7)) tok = h + 7;
    if (!tok && method != GP_M_POST)
        tok = MHD_lookup_connection_value(c, MHD_COOKIE_KIND, "gpuprof_token");
    if (!tok && h) *presented = 1; /* another scheme: still a wrong credential */
    if (!tok) return GP_SCOPE_NONE;
    *presented = 1;
    char id[GP_TOKEN_ID_MAX];
    int scope = gp_tokens_match(s->tokens, tok, strlen(tok), id);
    snprintf(tokid, tokid_n, "%s", scope == GP_SCOPE_NONE ? "an invalid token" : id);
    return scope;
}

/* ---- GET /metrics -----------------------------------------------------------------------------
 */

static void metrics_free(void *cls)
{
    gp_metrics_release(cls);
}

/* The exposition of the running sampler, as `gpuprof monitor --prometheus`
 * answers it: gzip when the scraper accepts it (Prometheus does), one
 * ready response per text shared by every scraper until the text changes. */
static enum MHD_Result queue_metrics(struct MHD_Connection *c, server *s, req *q)
{
    const char *ae = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Accept-Encoding");
    int gz = ae && strstr(ae, "gzip");
    gp_metrics_text *t =
        gz ? gp_metrics_acquire_gzip(s->ctx.metrics) : gp_metrics_acquire(s->ctx.metrics);
    if (!t) return send_error(c, s, q, 503, "out of memory");
    gz = gz && t->gz;
    pthread_mutex_lock(&s->met_mu);
    if (s->met[gz].t == t && s->met[gz].r) {
        gp_metrics_release(t); /* the ready answer holds the text already */
    } else {
        struct MHD_Response *r = MHD_create_response_from_buffer_with_free_callback_cls(
            gz ? t->gz_len : t->len, gz ? t->gz : t->data, metrics_free, t);
        if (!r) {
            pthread_mutex_unlock(&s->met_mu);
            gp_metrics_release(t);
            return send_error(c, s, q, 503, "out of memory");
        }
        add_headers(r, s, 200, GP_METRICS_CONTENT_TYPE, 0, NULL, 0);
        MHD_add_response_header(r, "Vary", "Accept-Encoding");
        if (gz) MHD_add_response_header(r, "Content-Encoding", "gzip");
        if (s->met[gz].r) MHD_destroy_response(s->met[gz].r);
        s->met[gz].r = r;
        s->met[gz].t = t;
    }
    /* queued under the lock: the answer cannot be swapped and destroyed
     * before this connection holds it */
    enum MHD_Result ok = MHD_queue_response(c, 200, s->met[gz].r);
    pthread_mutex_unlock(&s->met_mu);
    access_log(s, q, 200);
    return ok;
}

/* ---- the request deadline ------------------------------------------------------------------- */

/* Every connection is listed from its start to its close; a request that
 * is not received whole within the deadline (twice the --timeout seconds,
 * counted from when the connection became ready for it) gets its socket
 * shut down:
 * libmicrohttpd's own timeout is an idle one, which a client sending a
 * byte now and then (slowloris) never triggers. */
static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe)
{
    server *s = cls;
    if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
        conn_state *cs = calloc(1, sizeof *cs);
        *socket_context = cs;
        if (!cs) return;
        cs->c = c;
        cs->ready_ns = gp_clock_mono_ns();
        cs->receiving = 1;
        pthread_mutex_lock(&s->conn_mu);
        cs->next = s->conns.next;
        cs->prev = &s->conns;
        s->conns.next->prev = cs;
        s->conns.next = cs;
        pthread_mutex_unlock(&s->conn_mu);
    } else {
        conn_state *cs = *socket_context;
        if (!cs) return;
        pthread_mutex_lock(&s->conn_mu);
        cs->prev->next = cs->next;
        cs->next->prev = cs->prev;
        pthread_mutex_unlock(&s->conn_mu);
        free(cs);
        *socket_context = NULL;
    }
}

static conn_state *conn_of(struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return ci ? ci->socket_context : NULL;
}

/* The request of c was received whole (1) or c is ready for the next (0). */
static void conn_receiving(server *s, struct MHD_Connection *c, int receiving)
{
    conn_state *cs = conn_of(c);
    if (!cs) return;
    pthread_mutex_lock(&s->conn_mu);
    cs->receiving = receiving;
    if (receiving) cs->ready_ns = gp_clock_mono_ns();
    pthread_mutex_unlock(&s->conn_mu);
}

static void *reaper_main(void *arg)
{
    server *s = arg;
    while (!atomic_load(&s->stop_reaper)) {
        struct timespec ts = {0, 200 * 1000000L};
        nanosleep(&ts, NULL);
        int64_t now = gp_clock_mono_ns();
        pthread_mutex_lock(&s->conn_mu);
        for (conn_state *cs = s->conns.next; cs != &s->conns; cs = cs->next) {
            if (!cs->receiving || cs->shut || now - cs->ready_ns <= s->deadline_ns) continue;
            const union MHD_ConnectionInfo *ci =
                MHD_get_connection_info(cs->c, MHD_CONNECTION_INFO_CONNECTION_FD);
            /* the socket stays open until the close notification, which
             * waits for this lock: shutdown cannot reach another socket */
            if (ci) shutdown(ci->connect_fd, SHUT_RDWR);
            cs->shut = 1;
        }
        pthread_mutex_unlock(&s->conn_mu);
    }
    return NULL;
}

/* ---- requests ------------------------------------------------------------------------------- */

static void *uri_log(void *cls, const char *uri, struct MHD_Connection *c)
{
    req *q = calloc(1, sizeof *q);
    if (!q) return NULL;
    q->s = cls;
    q->conn = c;
    q->t0 = gp_clock_mono_ns();
    size_t n = strnlen(uri, GP_URL_MAX + 1);
    q->rawn = n;
    q->raw = malloc(n + 1);
    if (q->raw) {
        memcpy(q->raw, uri, n);
        q->raw[n] = 0;
    }
    unsigned char key[16];
    if (!addr_key(c, key)) {
        memcpy(q->ipkey, key, 16);
        /* counted per request while it runs: a client holding more
         * requests open at once than allowed gets 429 */
        q->over_ip = ip_count(q->s, key, +1) > q->s->conn_per_ip;
    }
    return q;
}

static void completed(void *cls, struct MHD_Connection *c, void **con_cls,
                      enum MHD_RequestTerminationCode toe)
{
    req *q = *con_cls;
    conn_receiving(cls, c, 1); /* ready for the next request */
    if (!q) return;
    ip_count(q->s, (const unsigned char *)q->ipkey, -1);
    free(q->raw);
    gp_sbuf_free(&q->body);
    gp_sbuf_free(&q->resp.body);
    gp_target_free(&q->t);
    free(q);
    *con_cls = NULL;
}

static void *job_main(void *arg)
{
    req *q = arg;
    server *s = q->s;
    gp_api_handle(&s->ctx, q->route, q->method, &q->t, q->body.s, q->body.n, &q->resp);
    q->done = 1;
    MHD_resume_connection(q->conn);
    atomic_fetch_sub(&s->jobs, 1);
    return NULL;
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *c, const char *url,
                               const char *method, const char *version, const char *upload_data,
                               size_t *upload_data_size, void **con_cls)
{
    server *s = cls;
    req *q = *con_cls;
    if (!q || !q->raw) return MHD_NO; /* out of memory: drop the connection */
    if (q->done) return respond(c, s, q, &q->resp);
    if (!q->seen) {
        q->seen = 1;
        q->method = gp_method_parse(method);
        if (q->over_ip) return send_error(c, s, q, 429, "too many connections from this address");
        if (!q->method) return send_error(c, s, q, 405, "method not allowed");
        if (q->rawn > GP_URL_MAX) return send_error(c, s, q, 414, "URL too long");
        const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
        if (cl && strtoull(cl, NULL, 10) > BODY_MAX)
            return send_error(c, s, q, 413, "request body too large");
        return MHD_YES;
    }
    if (*upload_data_size) {
        if (q->body.n + *upload_data_size > BODY_MAX)
            q->body_big = 1;
        else
            gp_sbuf_add(&q->body, upload_data, *upload_data_size);
        *upload_data_size = 0;
        return MHD_YES;
    }
    conn_receiving(s, c, 0); /* received whole: the deadline no longer applies */
    if (q->body_big) return send_error(c, s, q, 413, "request body too large");
    gp_err err = {0};
    if (gp_target_parse(q->raw, q->rawn, &q->t, &err))
        return send_error(c, s, q, err.code == GP_ENOMEM ? 503 : 400, err.msg);
    size_t nr;
    const gp_route *routes = gp_api_routes(&nr);
    int mok;
    q->route = gp_route_find(routes, nr, q->t.path, q->method, &mok);
    if (!q->route) return send_error(c, s, q, 404, "no such route");
    if (!mok) return send_error(c, s, q, 405, "method not allowed on this route");
    if (q->method != GP_M_POST && q->body.n)
        return send_error(c, s, q, 400, "a GET request has no body");
    int need = q->method == GP_M_POST ? GP_SCOPE_CONTROL : q->route->scope;
    if (!s->tokens) snprintf(q->tokid, sizeof q->tokid, "anyone (no token file)");
    if (s->tokens && need != GP_SCOPE_NONE) {
        int presented;
        int have = scope_of(s, c, q->method, &presented, q->tokid, sizeof q->tokid);
        if (have == GP_SCOPE_NONE)
            return send_error(c, s, q, 401,
                              presented ? "invalid token" : "a bearer token is required");
        if (have < need) return send_error(c, s, q, 403, "this token lacks the control scope");
    }
    if (q->method == GP_M_POST) {
        const char *ct = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Type");
        if (!ct || strncmp(ct, "application/json", 16))
            return send_error(c, s, q, 415, "POST bodies must be application/json");
    }
    if (s->ctx.metrics && !q->t.q.n && !strcmp(q->route->path, "/metrics"))
        return queue_metrics(c, s, q);
    if (q->route->id < ROUTES_MAX && s->fixed[q->route->id] && !q->t.q.n) {
        enum MHD_Result ok = MHD_queue_response(c, 200, s->fixed[q->route->id]);
        access_log(s, q, 200);
        return ok;
    }
    void *aux = NULL;
    if (gp_api_cached(&s->ctx, q->route, &q->t, &q->resp, &aux)) {
        if (!aux) return respond(c, s, q, &q->resp);
        enum MHD_Result ok = MHD_queue_response(c, 200, ((kept_resp *)aux)->r);
        kept_unref(aux);
        access_log(s, q, 200);
        return ok;
    }
    if (gp_api_fast(&s->ctx, q->route)) {
        gp_api_handle(&s->ctx, q->route, q->method, &q->t, q->body.s, q->body.n, &q->resp);
        return respond(c, s, q, &q->resp);
    }
    if (atomic_fetch_add(&s->jobs, 1) >= s->max_jobs) {
        atomic_fetch_sub(&s->jobs, 1);
        return send_error(c, s, q, 503, "busy: too many requests being computed, retry");
    }
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    MHD_suspend_connection(c);
    pthread_t th;
    int rc = pthread_create(&th, &at, job_main, q);
    pthread_attr_destroy(&at);
    if (rc) {
        atomic_fetch_sub(&s->jobs, 1);
        gp_api_error(&q->resp, 503, "cannot start a worker thread");
        q->done = 1;
        MHD_resume_connection(c);
    }
    return MHD_YES;
}

/* ---- start and stop ------------------------------------------------------------------------- */

static char *slurp(const char *path, gp_err *err)
{
    FILE *f = fopen(path, "re");
    if (!f) {
        gp_err_set(err, GP_EIO, "%s: %s", path, strerror(errno));
        return NULL;
    }
    gp_sbuf b = {0};
    char buf[8192];
    size_t k;
    while ((k = fread(buf, 1, sizeof buf, f)) > 0) gp_sbuf_add(&b, buf, k);
    fclose(f);
    gp_sbuf_cstr(&b);
    return b.s;
}

/* Parses "ADDR:PORT" / "[ADDR]:PORT" (numeric only) into ss. */
static int parse_listen(const char *l, struct sockaddr_storage *ss, socklen_t *len, int *loopback,
                        gp_err *err)
{
    char host[128], port[16];
    const char *colon;
    if (l[0] == '[') {
        const char *rb = strchr(l, ']');
        if (!rb || rb[1] != ':' || (size_t)(rb - l - 1) >= sizeof host) goto bad;
        memcpy(host, l + 1, (size_t)(rb - l - 1));
        host[rb - l - 1] = 0;
        colon = rb + 1;
    } else {
        colon = strrchr(l, ':');
        if (!colon || (size_t)(colon - l) >= sizeof host) goto bad;
        memcpy(host, l, (size_t)(colon - l));
        host[colon - l] = 0;
    }
    if (strlen(colon + 1) >= sizeof port || !colon[1]) goto bad;
    snprintf(port, sizeof port, "%s", colon + 1);
    char *end;
    long p = strtol(port, &end, 10);
    if (*end || p < 0 || p > 65535) goto bad;
    struct addrinfo hints = {0}, *ai = NULL;
    hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE;
    hints.ai_socktype = SOCK_STREAM;
    if (getaddrinfo(host[0] ? host : NULL, port, &hints, &ai) || !ai) goto bad;
    memcpy(ss, ai->ai_addr, ai->ai_addrlen);
    *len = ai->ai_addrlen;
    freeaddrinfo(ai);
    if (ss->ss_family == AF_INET) {
        const struct sockaddr_in *a = (const void *)ss;
        *loopback = (ntohl(a->sin_addr.s_addr) >> 24) == 127;
    } else {
        const struct sockaddr_in6 *a = (const void *)ss;
        *loopback = IN6_IS_ADDR_LOOPBACK(&a->sin6_addr);
    }
    return 0;
bad:
    return gp_err_set(err, GP_EINVAL,
                      "--listen expects ADDR:PORT or [ADDR]:PORT with a numeric address, got '%s'",
                      l);
}

static int load_mon_config(gp_mon_config *c, const char *path, gp_err *err)
{
    char e[256];
    gp_mon_config_defaults(c);
    const char *p = path ? path : getenv("GPUPROF_CONFIG");
    if (p && *p && gp_mon_config_load(c, p, e, sizeof e))
        return gp_err_set(err, GP_EINVAL, "%s", e);
    if (gp_mon_config_env(c, e, sizeof e)) return gp_err_set(err, GP_EINVAL, "%s", e);
    return 0;
}

/* Appends a record of the server itself (start, stop) to the audit log. */
static void serve_audit(server *s, const char *action, const char *target, const char *result)
{
    gp_err err = {0};
    if (gp_audit_append(s->audit_store, s->audit_file, action, target, result, &err))
        fprintf(stderr, "gpuprof serve: warning: %s\n", err.msg);
}

int gp_serve_run(const gp_serve_opts *o, const char *self_exe)
{
    gp_err err = {0};
    struct sockaddr_storage ss;
    socklen_t sslen = 0;
    int loopback = 0, rc = 2;
    server *s = calloc(1, sizeof *s);
    char *cert = NULL, *key = NULL;
    struct MHD_Daemon *d = NULL;
    if (!s) {
        fprintf(stderr, "gpuprof: out of memory\n");
        return 3;
    }
    pthread_mutex_init(&s->ip_mu, NULL);
    pthread_mutex_init(&s->conn_mu, NULL);
    pthread_mutex_init(&s->met_mu, NULL);
    s->conns.next = s->conns.prev = &s->conns;
    /* twice the idle timeout from when the connection was ready for the
     * request: an idle connection is closed by the idle timeout first, and a
     * request whose first byte came before it has at least --timeout s */
    s->deadline_ns = 2 * (int64_t)(o->timeout_s > 0 ? o->timeout_s : 15) * 1000000000LL;
    atomic_init(&s->stop_reaper, 0);
    pthread_mutex_init(&s->audit_mu, NULL);
    s->audit_store = o->store;
    s->audit_file = gp_audit_file();
    s->quiet = o->quiet;
    s->conn_per_ip = o->conn_per_ip > 0 ? o->conn_per_ip : 32;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    atomic_init(&s->jobs, 0);
    atomic_init(&s->max_jobs, (int)(cores > 4 ? cores * 4 : 16));
    if (parse_listen(o->listen ? o->listen : "127.0.0.1:6970", &ss, &sslen, &loopback, &err))
        goto fail;
    if (o->token_file && !(s->tokens = gp_tokens_load(o->token_file, &err))) goto fail;
    if (!loopback && !s->tokens && !o->no_auth) {
        gp_err_set(&err, GP_EINVAL,
                   "%s is not a loopback address: give --token-file (or --no-auth to serve "
                   "every client without authentication)",
                   o->listen);
        goto fail;
    }
    if (!loopback && !s->tokens)
        fprintf(stderr,
                "gpuprof serve: WARNING: --no-auth on %s: every client that reaches this "
                "address can read every served trace\n",
                o->listen);
    if ((o->tls_cert != NULL) != (o->tls_key != NULL)) {
        gp_err_set(&err, GP_EINVAL, "--tls-cert and --tls-key go together");
        goto fail;
    }
    if (o->tls_cert && (!(cert = slurp(o->tls_cert, &err)) || !(key = slurp(o->tls_key, &err))))
        goto fail;
    if (load_mon_config(&s->ctx.moncfg, o->config, &err)) goto fail;
    /* the audit file of --config (GPUPROF_AUDIT_FILE still wins) */
    if (!getenv("GPUPROF_AUDIT_FILE") && s->ctx.moncfg.audit_file[0])
        s->audit_file = s->ctx.moncfg.audit_file;
    s->ctx.cache = gp_tcache_create((o->cache_mb ? o->cache_mb : 1024) << 20);
    s->ctx.store = o->store;
    s->ctx.torch_trace = o->torch_trace;
    s->ctx.ntorch_trace = o->ntorch_trace;
    s->ctx.self_exe = self_exe;
    s->ctx.config = o->config;
    s->ctx.tls = cert != NULL;
    s->ctx.redact = o->redact;
    s->ctx.redact_keep = o->redact_keep;
    if (s->ctx.cache && o->redact) gp_tcache_set_redact(s->ctx.cache, 1, o->redact_keep);
    if (!s->ctx.cache) {
        gp_err_set(&err, GP_ENOMEM, "out of memory");
        goto fail;
    }
    gp_tcache_aux_ops ops = {kept_make, kept_ref, kept_unref, s};
    gp_tcache_set_aux(s->ctx.cache, &ops);
    for (int i = 0; i < o->npaths; i++)
        if (gp_tcache_add(s->ctx.cache, o->paths[i], NULL, &err)) goto fail;
    for (int i = 0; i < o->ntorch_trace; i++) { /* a log or a folder of logs, now */
        gp_compile_logs cl = {0};
        int bad = gp_compile_logs_add(&cl, o->torch_trace[i], &err);
        gp_compile_logs_free(&cl);
        if (bad) goto fail;
    }
    if (o->store) {
        gp_store_run_row *rows;
        size_t n;
        if (access(o->store, R_OK)) {
            gp_err_set(&err, GP_EIO, "%s: %s", o->store, strerror(errno));
            goto fail;
        }
        if (gp_store_runs(o->store, &rows, &n, &err)) goto fail;
        for (size_t i = 0; i < n; i++) {
            char spec[4200];
            snprintf(spec, sizeof spec, "%s:%lld", o->store, (long long)rows[i].id);
            if (gp_tcache_add(s->ctx.cache, spec, NULL, &err)) break;
        }
        gp_store_runs_free(rows, n);
        if (err.code) goto fail;
    }
    gp_api_init();
    if (o->monitor) {
        gp_mon_config mc = s->ctx.moncfg;
        mc.enable_event_log = 0;
        s->ctx.mon = gp_monitor_create(&mc);
        if (!s->ctx.mon || gp_monitor_start(s->ctx.mon)) {
            gp_err_set(&err, GP_EIO, "--monitor: the device sampler could not start");
            rc = 1;
            goto fail;
        }
        gp_metrics_opts mo;
        memset(&mo, 0, sizeof mo);
        mo.dcgm = o->metric_dcgm;
        if (o->redact && !(o->redact_keep & GP_KEEP_HOST)) /* --redact: no host name */
            snprintf(mo.hostname, sizeof mo.hostname, "<host>");
        if (!(s->ctx.metrics = gp_metrics_create(s->ctx.mon, &mo))) {
            gp_err_set(&err, GP_ENOMEM, "--monitor: out of memory");
            rc = 1;
            goto fail;
        }
    }
    {
        size_t nr;
        const gp_route *routes = gp_api_routes(&nr);
        for (size_t i = 0; i < nr && i < ROUTES_MAX; i++) {
            if (!gp_api_static(&routes[i])) continue;
            gp_target t0;
            memset(&t0, 0, sizeof t0);
            t0.path = (char *)routes[i].path;
            gp_resp r;
            memset(&r, 0, sizeof r);
            gp_api_handle(&s->ctx, &routes[i], GP_M_GET, &t0, NULL, 0, &r);
            if (r.status == 200) {
                s->fixed[i] =
                    MHD_create_response_from_buffer(r.body.n, r.body.s, MHD_RESPMEM_MUST_COPY);
                if (s->fixed[i])
                    add_headers(s->fixed[i], s, 200, r.ctype, r.html, r.body.s, r.body.n);
            }
            gp_sbuf_free(&r.body);
        }
    }
    /* signals: waited for by this thread only */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME |
                     MHD_USE_ERROR_LOG;
    if (ss.ss_family == AF_INET6) flags |= MHD_USE_IPv6;
    if (cert) flags |= MHD_USE_TLS;
    int threads = o->threads > 0 ? o->threads : (int)(cores > 0 ? cores : 1);
    struct MHD_OptionItem tls_opts[] = {
        {cert ? MHD_OPTION_HTTPS_MEM_CERT : MHD_OPTION_END, 0, cert},
        {cert ? MHD_OPTION_HTTPS_MEM_KEY : MHD_OPTION_END, 0, key},
        {MHD_OPTION_END, 0, NULL}};
    d = MHD_start_daemon(
        flags, 0, NULL, NULL, handler, s, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
        MHD_OPTION_THREAD_POOL_SIZE, (unsigned)threads, MHD_OPTION_CONNECTION_LIMIT, 1024u,
        MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)(2 * s->conn_per_ip),
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(32 * 1024), MHD_OPTION_CONNECTION_TIMEOUT,
        (unsigned)(o->timeout_s > 0 ? o->timeout_s : 15), MHD_OPTION_URI_LOG_CALLBACK, uri_log, s,
        MHD_OPTION_NOTIFY_COMPLETED, completed, s, MHD_OPTION_NOTIFY_CONNECTION, on_connection, s,
        MHD_OPTION_STRICT_FOR_CLIENT, 1, MHD_OPTION_ARRAY, tls_opts, MHD_OPTION_END);
    if (!d) {
        gp_err_set(&err, GP_EIO, "cannot listen on %s: %s",
                   o->listen ? o->listen : "127.0.0.1:6970",
                   errno ? strerror(errno) : "libmicrohttpd refused the options");
        rc = 1;
        goto fail;
    }
    int reaper = pthread_create(&s->reaper, NULL, reaper_main, s) == 0;
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    char host[INET6_ADDRSTRLEN] = "?";
    if (ss.ss_family == AF_INET)
        inet_ntop(AF_INET, &((struct sockaddr_in *)(void *)&ss)->sin_addr, host, sizeof host);
    else
        inet_ntop(AF_INET6, &((struct sockaddr_in6 *)(void *)&ss)->sin6_addr, host, sizeof host);
    gp_sbuf where = {0};
    gp_sbuf_printf(&where, "%s://%s%s%s:%u/ (%d traces%s%s; %s)", cert ? "https" : "http",
                   ss.ss_family == AF_INET6 ? "[" : "", host, ss.ss_family == AF_INET6 ? "]" : "",
                   di ? di->port : 0, o->npaths, o->store ? ", store " : "",
                   o->store ? o->store : "",
                   s->tokens    ? "tokens required"
                   : o->no_auth ? "--no-auth"
                                : "loopback, no tokens");
    serve_audit(s, "serve start", gp_sbuf_cstr(&where), "listening");
    fprintf(stderr, "gpuprof serve: listening on %s://%s%s%s:%u/ (%d traces%s%s%s)\n",
            cert ? "https" : "http", ss.ss_family == AF_INET6 ? "[" : "", host,
            ss.ss_family == AF_INET6 ? "]" : "", di ? di->port : 0, o->npaths,
            o->store ? ", store " : "", o->store ? o->store : "",
            s->tokens ? ", tokens required" : "");
    fflush(stderr);
    int sig;
    sigwait(&set, &sig);
    fprintf(stderr, "gpuprof serve: stopping\n");
    /* suspended connections must be resumed before the daemon stops */
    while (atomic_load(&s->jobs) > 0) {
        struct timespec ts = {0, 10 * 1000000L};
        nanosleep(&ts, NULL);
    }
    atomic_store(&s->stop_reaper, 1);
    if (reaper) pthread_join(s->reaper, NULL);
    MHD_stop_daemon(d);
    serve_audit(s, "serve stop", gp_sbuf_cstr(&where),
                sig == SIGINT ? "stopped (SIGINT)" : "stopped (SIGTERM)");
    gp_sbuf_free(&where);
    rc = 0;
    goto done;
fail:
    fprintf(stderr, "gpuprof serve: %s\n", err.msg);
    serve_audit(s, "serve start", o->listen ? o->listen : "127.0.0.1:6970", err.msg);
done:
    for (int i = 0; i < ROUTES_MAX; i++)
        if (s->fixed[i]) MHD_destroy_response(s->fixed[i]);
    for (int i = 0; i < 2; i++)
        if (s->met[i].r) MHD_destroy_response(s->met[i].r);
    if (s->ctx.metrics) gp_metrics_destroy(s->ctx.metrics);
    if (s->ctx.mon) {
        gp_monitor_stop(s->ctx.mon);
        gp_monitor_destroy(s->ctx.mon);
    }
    gp_tcache_destroy(s->ctx.cache);
    gp_tokens_free(s->tokens);
    if (key) memset(key, 0, strlen(key));
    free(cert);
    free(key);
    pthread_mutex_destroy(&s->ip_mu);
    pthread_mutex_destroy(&s->conn_mu);
    pthread_mutex_destroy(&s->met_mu);
    pthread_mutex_destroy(&s->audit_mu);
    free(s);
    return rc;
}
