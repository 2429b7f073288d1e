/* render/export.c: gp_export_write (see export.h). */
#include "render/export.h"
#include "render/chrome.h"
#include "render/perfetto.h"
#include <errno.h>
#include <string.h>

int gp_export_format_parse(const char *name)
{
    if (!strcmp(name, "chrome") || !strcmp(name, "json") || !strcmp(name, "kineto"))
        return GP_EXPORT_CHROME;
    if (!strcmp(name, "perfetto") || !strcmp(name, "pftrace") || !strcmp(name, "protobuf"))
        return GP_EXPORT_PERFETTO;
    return -1;
}

int gp_export_write(const gp_trace *t, gp_export_format fmt, const char *path, gp_export_stats *st,
                    gp_err *err)
{
    gp_export_stats dummy;
    if (!st) st = &dummy;
    int to_stdout = !strcmp(path, "-");
    FILE *f = to_stdout ? stdout : fopen(path, "wb");
    if (!f) return gp_err_set(err, GP_EIO, "%s: %s", path, strerror(errno));
    int rc = fmt == GP_EXPORT_PERFETTO ? gp_perfetto_write(t, f, st) : gp_chrome_write(t, f, st);
    if (!to_stdout) {
        long pos = ftell(f);
        if (pos > 0) st->bytes = (uint64_t)pos;
        if (fclose(f) != 0 && !rc) rc = GP_EIO;
    } else if (fflush(f) != 0 && !rc) {
        rc = GP_EIO;
    }
    if (rc)
        return gp_err_set(err, rc, "%s: %s", path,
                          rc == GP_ENOMEM ? "out of memory" : "write failed");
    return 0;
}
