/* core/error.c: error strings, error detail formatting, checked allocation. */
#include "core/error.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *gp_strerror(int code)
{
    switch (code) {
    case GP_OK:
        return "success";
    case GP_EINVAL:
        return "invalid argument";
    case GP_ENOMEM:
        return "out of memory";
    case GP_EIO:
        return "input/output error";
    case GP_EPARSE:
        return "malformed input";
    case GP_ENOTFOUND:
        return "not found";
    case GP_EUNSUPPORTED:
        return "not supported";
    case GP_ERANGE:
        return "value out of range";
    case GP_ESTATE:
        return "invalid state";
    case GP_ENODEV:
        return "no device";
    default:
        return "unknown error";
    }
}

const char *gp_version(void)
{
    return GP_VERSION;
}

void gp_err_clear(gp_err *e)
{
    if (!e) return;
    e->code = 0;
    e->msg[0] = 0;
}

int gp_err_set(gp_err *e, int code, const char *fmt, ...)
{
    if (e) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(e->msg, sizeof e->msg, fmt, ap);
        va_end(ap);
        e->code = code;
    }
    return code;
}

static void oom(size_t n)
{
    fprintf(stderr, "gpuprof: out of memory (allocating %zu bytes)\n", n);
    exit(3);
}

void *gp_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) oom(n);
    return p;
}

void *gp_xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p) oom(n * size);
    return p;
}

void *gp_xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q) oom(n);
    return q;
}

char *gp_xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = gp_xmalloc(n);
    memcpy(d, s, n);
    return d;
}
