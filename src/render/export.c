/* render/export.c: gp_export_write (see export.h). */
#include "core/afile.h"
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
    gp_afile af; /* a file is replaced whole or not at all (core/afile.h) */
    if (!to_stdout && gp_afile_open(&af, path))
        return gp_err_set(err, GP_EIO, "%s: %s", path, strerror(errno));
    FILE *f = to_stdout ? stdout : af.f;
    int rc = fmt == GP_EXPORT_PERFETTO ? gp_perfetto_write(t, f, st) : gp_chrome_write(t, f, st);
    int e = 0;
    if (!to_stdout) {
        long pos = ftell(f);
        if (pos > 0) st->bytes = (uint64_t)pos;
        if (gp_afile_close(&af, rc != 0) != 0 && !rc) {
            rc = GP_EIO;
            e = errno;
        }
    } else if (fflush(f) != 0 && !rc) {
        rc = GP_EIO;
    }
    if (rc)
        return gp_err_set(err, rc, "%s: %s", path,
                          rc == GP_ENOMEM ? "out of memory"
                          : e             ? strerror(e)
                                          : "write failed");
    return 0;
}
