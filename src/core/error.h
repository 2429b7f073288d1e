/* core/error.h: the error-detail object every fallible internal call fills. */
#ifndef GP_CORE_ERROR_H
#define GP_CORE_ERROR_H
#include <gpuprof/common.h>
#include <stddef.h>

/* Holds the last error's code and a one-line message. Callers own it (stack). */
typedef struct gp_err {
    int code;
    char msg[512];
} gp_err;

/* Clears e (may be NULL). */
void gp_err_clear(gp_err *e);
/* Formats a message into e (may be NULL), stores code and returns code. */
int gp_err_set(gp_err *e, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Allocation helpers for small, bounded allocations: on failure they print
 * one line and exit(3). Input-sized allocations use malloc and report
 * GP_ENOMEM instead. */
void *gp_xmalloc(size_t n);
void *gp_xcalloc(size_t n, size_t size);
void *gp_xrealloc(void *p, size_t n);
char *gp_xstrdup(const char *s);

#endif
