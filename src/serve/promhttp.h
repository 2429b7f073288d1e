/* serve/promhttp.h: a metrics-only HTTP listener (libmicrohttpd) for
 * `gpuprof monitor --prometheus ADDR:PORT`: GET /metrics answers the cached
 * exposition of serve/metrics.h. Loopback by default; any other address
 * needs a bearer token (or an explicit no-auth choice). */
#ifndef GP_SERVE_PROMHTTP_H
#define GP_SERVE_PROMHTTP_H
#include "core/error.h"
#include "serve/metrics.h"

typedef struct gp_promhttp gp_promhttp;

typedef struct gp_promhttp_opts {
    const char *token; /* required bearer token, NULL: none */
    int no_auth;       /* allow a non-loopback address without a token */
} gp_promhttp_opts;

/* Parses "ADDR:PORT", "[V6ADDR]:PORT" or "PORT" (loopback) into a socket
 * address; *loopback tells whether it is a loopback one. 0 or GP_EINVAL. */
int gp_promhttp_parse_listen(const char *s, void *sockaddr_storage, int *loopback, gp_err *err);
/* Starts listening on listen, serving x (not owned). NULL with err set when
 * the address is bad, refused by the rules above, busy, or when this build
 * has no libmicrohttpd (GP_EUNSUPPORTED). */
gp_promhttp *gp_promhttp_start(const char *listen, gp_metrics *x, const gp_promhttp_opts *o,
                               gp_err *err);
/* The port actually bound (useful with port 0). */
int gp_promhttp_port(const gp_promhttp *h);
/* Requests answered so far with a 200 on /metrics. */
unsigned long gp_promhttp_scrapes(gp_promhttp *h);
/* Stops the listener and frees. */
void gp_promhttp_stop(gp_promhttp *h);
/* Compares a and b in time independent of where they differ; 1 when equal. */
int gp_promhttp_token_eq(const char *a, const char *b);

#endif
