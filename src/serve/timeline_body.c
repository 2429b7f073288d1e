/* serve/timeline_body.c: the timeline bodies of the server (see
 * timeline_body.h). */
#include "serve/timeline_body.h"
#include "render/chrome.h"
#include "render/timeline.h"
#include <stdio.h>
#include <stdlib.h>

int gp_serve_timeline(const gp_trace *t, int html, gp_sbuf *b, gp_err *err)
{
    gp_timeline_stats st;
    if (html) {
        if (gp_timeline_html(t, 0, b, &st)) return gp_err_set(err, GP_ENOMEM, "out of memory");
        return 0;
    }
    if (t->meta.args_at_source) /* the caller reads them in first (gp_tentry_args) */
        return gp_err_set(err, GP_ESTATE, "internal: the events' args were not read in");
    /* the JSON writer streams to a FILE: give it one in memory */
    char *mem = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&mem, &len);
    if (!f) return gp_err_set(err, GP_ENOMEM, "out of memory");
    int rc = gp_chrome_write(t, f, NULL); /* the one Chrome writer (render/chrome.c) */
    if (fclose(f) != 0 && !rc) rc = GP_ENOMEM;
    if (!rc && !b->n && mem) { /* the usual case: b takes the buffer (no copy of a large body) */
        free(b->s);
        b->s = mem; /* open_memstream keeps a NUL after the bytes: len + 1 allocated */
        b->n = len;
        b->cap = len + 1;
        mem = NULL;
    } else if (!rc) {
        gp_sbuf_add(b, mem, len);
    }
    free(mem);
    return rc ? gp_err_set(err, GP_ENOMEM, "out of memory") : 0;
}
