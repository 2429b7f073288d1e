/* report/audit_out.c: text and JSON writers of the audit log. */
#include "report/audit_out.h"
#include "core/sbuf.h"
#include <stdlib.h>
#include <time.h>

static void utc(char *buf, size_t n, int64_t ns)
{
    time_t s = (time_t)(ns / 1000000000);
    struct tm tm;
    gmtime_r(&s, &tm);
    size_t k = strftime(buf, n, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf + k, n - k, ".%03dZ", (int)((ns / 1000000) % 1000));
}

static void describe(char *buf, size_t n, const gp_audit_rec *r, long i)
{
    char t[48];
    utc(t, sizeof t, r->time_ns);
    snprintf(buf, n, "record %ld (%s %s)", i + 1, t, r->action ? r->action : "?");
}

void gp_audit_write_text(FILE *f, const gp_audit_rec *r, size_t n, long bad, const char *why)
{
    gp_sbuf b = {0};
    for (size_t i = 0; i < n; i++) {
        char t[48];
        utc(t, sizeof t, r[i].time_ns);
        /* one line per record whatever the fields hold (control characters
         * escaped: a recorded command cannot forge or hide a line) */
        gp_sbuf_reset(&b);
        gp_sbuf_printf(&b, "%zu\t%s\t", i + 1, t);
        gp_sbuf_put_term(&b, r[i].user);
        gp_sbuf_printf(&b, "(%lld)@", (long long)r[i].uid);
        gp_sbuf_put_term(&b, r[i].host);
        gp_sbuf_printf(&b, "\tpid %lld\t", (long long)r[i].pid);
        gp_sbuf_put_term(&b, r[i].action);
        gp_sbuf_putc(&b, '\t');
        gp_sbuf_put_term(&b, r[i].target);
        gp_sbuf_putc(&b, '\t');
        gp_sbuf_put_term(&b, r[i].result);
        gp_sbuf_printf(&b, "%s\n", bad == (long)i ? "\t<- BAD" : "");
        gp_sbuf_write(&b, f);
    }
    gp_sbuf_free(&b);
    if (bad == -1) fprintf(f, "audit: %zu records, chain intact\n", n);
    if (bad >= 0) {
        char d[128];
        describe(d, sizeof d, &r[bad], bad);
        char *ds = gp_term_safe(d);
        fprintf(f, "audit: %s is bad: %s\n", ds, why);
        free(ds);
    }
}

void gp_audit_write_json(FILE *f, const gp_audit_rec *r, size_t n, long bad, const char *why)
{
    gp_sbuf b = {0};
    gp_sbuf_puts(&b, "{\"records\":[");
    for (size_t i = 0; i < n; i++) {
        if (i) gp_sbuf_putc(&b, ',');
        gp_sbuf s = {0};
        gp_audit_canonical(&s, &r[i]);
        gp_sbuf_add(&b, s.s, s.n - 1);
        gp_sbuf_free(&s);
        gp_sbuf_printf(&b, ",\"prev_sha256\":\"%s\",\"sha256\":\"%s\"}", r[i].prev_sha256,
                       r[i].sha256);
    }
    gp_sbuf_printf(&b,
                   "],\"verified\":%s,\"intact\":%s,\"first_bad\":", bad == -2 ? "false" : "true",
                   bad == -1 ? "true" : "false");
    if (bad >= 0)
        gp_json_int(&b, bad + 1);
    else
        gp_sbuf_puts(&b, "null");
    gp_sbuf_puts(&b, ",\"reason\":");
    if (bad >= 0)
        gp_json_str(&b, why);
    else
        gp_sbuf_puts(&b, "null");
    gp_sbuf_puts(&b, "}\n");
    gp_sbuf_write(&b, f);
    gp_sbuf_free(&b);
}
