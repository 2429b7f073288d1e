/* serve/server.h: `gpuprof serve`: an HTTP(S) server on libmicrohttpd (an
 * internal thread pool on epoll) in front of the API of serve/api.h.
 *
 * Security (docs/serve.md): loopback by default, any other address needs a
 * token file (or --no-auth, warned about on every start); bearer tokens with
 * read / control scopes compared in constant time and never logged (401
 * without a valid token, 403 for a read token on a POST); TLS when a
 * certificate is given; limits on the URL (414), headers (431, by
 * libmicrohttpd's per-connection memory), body (413), connections per client
 * address (429) and in total; an idle timeout per connection and a deadline
 * for receiving a whole request (slowloris); traces by id
 * only; every response with X-Content-Type-Options: nosniff and no CORS
 * header; HTML with a Content-Security-Policy allowing exactly its own
 * inline scripts (by hash) and no inline event handlers. */
#ifndef GP_SERVE_SERVER_H
#define GP_SERVE_SERVER_H
#include <stdint.h>

typedef struct gp_serve_opts {
    char *const *paths; /* traces: files, folders of ranks, store runs */
    int npaths;
    const char *store;        /* --store: /api/runs and every run as a trace */
    char *const *torch_trace; /* --torch-trace: TORCH_TRACE logs or folders */
    int ntorch_trace;
    const char *listen;     /* "ADDR:PORT" ("[ADDR]:PORT" for IPv6); default 127.0.0.1:6970 */
    const char *token_file; /* --token-file */
    int no_auth;            /* --no-auth: a non-loopback address without tokens */
    const char *tls_cert, *tls_key;
    uint64_t cache_mb;    /* --cache-mb (default 1024) */
    int monitor;          /* --monitor: run the device sampler, /api/devices from it */
    int metric_dcgm;      /* --metric-names dcgm: /metrics also has dcgm-exporter names */
    const char *config;   /* monitor configuration (--config) */
    int threads;          /* network threads (0 = one per core) */
    int quiet;            /* no access log */
    long conn_per_ip;     /* concurrent connections per client address (default 32) */
    long timeout_s;       /* idle connection timeout (default 15) */
    int redact;           /* --redact (or the configuration's): serve sanitized traces */
    unsigned redact_keep; /* GP_KEEP_* bits (trace/sanitize.h) */
} gp_serve_opts;

/* Runs the server until SIGINT or SIGTERM. Prints one line per failure and
 * returns the exit status: 0 after a clean stop, 2 for bad options or
 * input, 1 when the server cannot start. */
int gp_serve_run(const gp_serve_opts *o, const char *self_exe);

#endif
