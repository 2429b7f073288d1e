/* serve/api.h: the routes of `gpuprof serve` and their handlers. Every JSON
 * endpoint calls the same analysis and the same result writer as the
 * matching command, so its body is byte-identical to `gpuprof CMD --json`
 * on the same input (docs/serve.md lists the pairs). Errors are
 * {"error":"...","status":N}.
 *
 * To add a route (e.g. /metrics), add one line to the table in api.c with
 * its handler; nothing else changes. */
#ifndef GP_SERVE_API_H
#define GP_SERVE_API_H
#include "core/sbuf.h"
#include "serve/cache.h"
#include "serve/router.h"
#include <gpuprof/monitor.h>

typedef struct gp_serve_ctx {
    gp_tcache *cache;
    const char *store;        /* --store, or NULL */
    char *const *torch_trace; /* --torch-trace paths (/api/profiler/compile) */
    int ntorch_trace;
    gp_monitor *mon;            /* the running sampler with --monitor, else NULL */
    struct gp_metrics *metrics; /* its Prometheus exposition (serve/metrics.h) */
    gp_mon_config moncfg;       /* for one-shot device samples and sessions */
    const char *self_exe;       /* this program, for session control */
    const char *config;         /* --config given to serve, passed to `session` */
    int tls;                    /* served over TLS */
    int redact;                 /* --redact: names, args, paths, runs sanitized */
    unsigned redact_keep;       /* its GP_KEEP_* bits */
} gp_serve_ctx;

typedef struct gp_resp {
    int status;
    const char *ctype; /* static string */
    gp_sbuf body;
    int html; /* an HTML page: the server adds its Content-Security-Policy */
} gp_resp;

/* The route table (built once; thread-safe after gp_api_init). */
void gp_api_init(void);
const gp_route *gp_api_routes(size_t *n);
/* 1 when the route is answered at once (no trace to load or compute, no
 * device to sample: /api/devices and /api/health with --monitor). */
int gp_api_fast(const gp_serve_ctx *ctx, const gp_route *r);

/* 1 when the route's answer to a request without parameters depends on the
 * server's options only (the dashboard page): the server makes it once. */
int gp_api_static(const gp_route *r);

/* The kinds of kept bodies (the `kind` of gp_tentry_body_put). */
enum { GP_API_KEPT_JSON = 1, GP_API_KEPT_HTML = 2 };

/* Answers a request for a trace's result from the bodies already kept,
 * without loading or computing (the network thread calls it before handing
 * the request to a worker); returns 1 when answered: *aux (when aux is not
 * NULL) is the kept body's ready answer made by the cache's aux operations,
 * with a reference for the caller, or out holds status, type and body. */
int gp_api_cached(gp_serve_ctx *ctx, const gp_route *r, const gp_target *t, gp_resp *out,
                  void **aux);

/* Runs the handler of route r. body[0..bn) is the request body (POST). */
void gp_api_handle(gp_serve_ctx *ctx, const gp_route *r, unsigned method, const gp_target *t,
                   const char *body, size_t bn, gp_resp *out);

/* Sets out to the JSON error {"error":msg,"status":status}. */
void gp_api_error(gp_resp *out, int status, const char *msg);

#endif
