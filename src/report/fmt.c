/* report/fmt.c: small formatting helpers shared by the result writers. */
#include "report/fmt.h"
#include "trace/trace.h"
#include <gpuprof/common.h>
#include <math.h>
#include <stdio.h>
#include <time.h>

const char *gp_fmt_pct(char *buf, size_t n, double pct)
{
    if (isnan(pct))
        snprintf(buf, n, "N/A");
    else
        snprintf(buf, n, "%+.1f%%", pct);
    return buf;
}

const char *gp_fmt_p(char *buf, size_t n, double p)
{
    if (isnan(p))
        snprintf(buf, n, "N/A");
    else if (p < 1e-4)
        snprintf(buf, n, "<1e-4");
    else
        snprintf(buf, n, "%.4f", p);
    return buf;
}

const char *gp_fmt_wall_utc(char *buf, size_t n, int64_t ns)
{
    if (ns == GP_NONE || ns <= 0) {
        snprintf(buf, n, "N/A");
        return buf;
    }
    time_t s = (time_t)(ns / 1000000000);
    struct tm tm;
    gmtime_r(&s, &tm);
    strftime(buf, n, "%Y-%m-%d %H:%M:%S", &tm);
    return buf;
}

void gp_report_doc_begin(gp_sbuf *b)
{
    gp_sbuf_puts(b, "{\"gpuprof_version\":");
    gp_json_str(b, gp_version());
    gp_sbuf_puts(b, ",\"traces\":[");
}

void gp_report_doc_end(gp_sbuf *b)
{
    gp_sbuf_puts(b, "]}\n");
}
