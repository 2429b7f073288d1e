/* cli/common.c: helpers shared by subcommands (trace loading, options). */
#include "analysis/summary.h"
#include "cli/cli.h"
#include "render/export.h"
#include "store/store.h"
#include "store/audit.h"
#include "trace/sanitize.h"
#include <gpuprof/monitor.h>
#include "trace/load.h"
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int redact(gp_strtab *st, int *active, gp_trace *t);

int gp_cli_load_traces(char **paths, int npaths, gp_trace ***out, size_t *n)
{
    return gp_cli_load_traces_ex(paths, npaths, 0, out, n);
}

int gp_cli_load_traces_ex(char **paths, int npaths, unsigned flags, gp_trace ***out, size_t *n)
{
    gp_err err = {0};
    size_t count = 0;
    char **files = gp_paths_expand(paths, npaths, &count, &err);
    if (!files) {
        fprintf(stderr, "gpuprof: %s\n", err.msg);
        return 2;
    }
    /* which files were named on the command line (the rest came from folders) */
    unsigned char *named = gp_xcalloc(count + 1, 1);
    for (size_t i = 0; i < count; i++)
        for (int j = 0; j < npaths; j++)
            if (!strcmp(files[i], paths[j])) named[i] = 1;
    gp_trace **traces = gp_xcalloc(count + 1, sizeof *traces);
    int rc = gp_load_many_ex(files, count, 0, flags, traces, &err, NULL);
    if (rc) {
        fprintf(stderr, "gpuprof: %s\n", err.msg);
        free(traces);
        free(named);
        gp_paths_free(files);
        return 2;
    }
    /* a file named directly must hold events (docs/trace-import.md) */
    for (size_t i = 0; i < count; i++)
        if (named[i] && gp_cli_check_events(traces[i], files[i])) {
            gp_cli_free_traces(traces, count);
            free(named);
            gp_paths_free(files);
            return 2;
        }
    /* JSON files in a folder that hold no event array (e.g. expected.hta.json
     * beside the traces) are not traces: leave them out */
    size_t k = 0;
    for (size_t i = 0; i < count; i++) {
        if (!named[i] && !traces[i]->meta.has_trace_events) {
            gp_trace_destroy(traces[i]);
            continue;
        }
        traces[k++] = traces[i];
    }
    if (k == 0) {
        fprintf(stderr, "gpuprof: %s: no trace with a \"traceEvents\" array found\n",
                npaths ? paths[0] : "");
        free(traces);
        free(named);
        gp_paths_free(files);
        return 2;
    }
    free(named);
    gp_paths_free(files);
    for (size_t i = 0; i < k; i++) {
        if (gp_cli_redact_trace(traces[i])) {
            gp_cli_free_traces(traces, k);
            return 3;
        }
    }
    *out = traces;
    *n = k;
    return 0;
}

int gp_cli_check_events(const gp_trace *t, const char *path)
{
    gp_err err = {0};
    if (!gp_cli_events_error(t, path, &err)) return 0;
    fprintf(stderr, "gpuprof: %s\n", err.msg);
    return 2;
}

int gp_cli_events_error(const gp_trace *t, const char *path, gp_err *err)
{
#ifdef GP_HAVE_SQLITE
    char *file = NULL;
    int64_t run = 0;
    if (gp_store_spec(path, &file, &run)) { /* a recorded run may hold no events */
        free(file);
        return 0;
    }
#endif
    if (!t->meta.has_trace_events)
        return gp_err_set(err, GP_EINVAL, "%s: not a trace (no \"traceEvents\" array)", path);
    /* ranges known only as statistics (libgpuprof's aggregate sink and
     * rollover rows) are events too: their counts and totals are exact */
    if (!t->slices.n && !t->instants.n && !t->counters.n && !t->mem_events.n && !t->aggs.n)
        return gp_err_set(err, GP_EINVAL, "%s: the trace holds no events", path);
    return 0;
}

void gp_cli_free_traces(gp_trace **traces, size_t n)
{
    for (size_t i = 0; i < n; i++) gp_trace_destroy(traces[i]);
    free(traces);
}

long gp_cli_parse_count(const char *opt, const char *val)
{
    char *end;
    errno = 0;
    /* digits only: strtol alone would take "", " 3" and "+3" */
    long v = val && val[0] >= '0' && val[0] <= '9' ? strtol(val, &end, 10) : -1;
    if (v < 0 || errno || *end) {
        fprintf(stderr, "gpuprof: %s expects a non-negative integer, got '%s'\n", opt,
                val ? val : "");
        return -1;
    }
    return v;
}

int gp_cli_parse_groups(const char *val, unsigned *mask)
{
    char *dup = gp_xstrdup(val), *save = NULL;
    for (char *tok = strtok_r(dup, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int g = gp_group_parse(tok);
        if (g < 0) {
            fprintf(stderr, "gpuprof: unknown category '%s'\n", tok);
            free(dup);
            return -1;
        }
        *mask |= 1u << g;
    }
    free(dup);
    return 0;
}

long long gp_cli_parse_dur(const char *opt, const char *val)
{
    char *end;
    errno = 0;
    double v = val ? strtod(val, &end) : -1;
    double mul = 1;
    if (val && !errno && end != val) {
        if (!*end || !strcmp(end, "ns"))
            mul = 1;
        else if (!strcmp(end, "us"))
            mul = 1e3;
        else if (!strcmp(end, "ms"))
            mul = 1e6;
        else if (!strcmp(end, "s"))
            mul = 1e9;
        else
            mul = -1;
    }
    if (!val || errno || end == val || mul < 0 || !(v >= 0) || v * mul > 9e18) {
        fprintf(stderr, "gpuprof: %s expects a duration such as 500ns, 20us, 1.5ms, 2s; got '%s'\n",
                opt, val ? val : "");
        return -1;
    }
    return (long long)(v * mul + 0.5);
}

int gp_cli_parse_double(const char *opt, const char *s, double lo, double hi, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !(v >= lo && v <= hi)) {
        fprintf(stderr, "gpuprof: %s expects a number in [%g, %g], got '%s'\n", opt, lo, hi, s);
        return -1;
    }
    *out = v;
    return 0;
}

int gp_cli_export(const char *path, int fmt, const char *out)
{
    char *paths[1] = {(char *)path};
    gp_trace **traces;
    size_t n;
    /* the Chrome writer repeats each event's args text; Perfetto's needs none */
    unsigned flags = fmt == GP_EXPORT_CHROME ? GP_LOAD_KEEP_ARGS : 0;
    gp_cli_redact_allow();
    int rc = gp_cli_load_traces_ex(paths, 1, flags, &traces, &n);
    if (rc) return rc;
    if (n != 1) {
        fprintf(stderr, "gpuprof: export takes one run or trace, %s holds %zu\n", path, n);
        gp_cli_free_traces(traces, n);
        return 2;
    }
    gp_export_stats st;
    gp_err err = {0};
    rc = gp_export_write(traces[0], fmt, out, &st, &err);
    if (rc && !(rc == GP_EIO && !strcmp(out, "-"))) /* stdout: main reports it, once */
        fprintf(stderr, "gpuprof: %s\n", err.msg);
    else if (strcmp(out, "-"))
        fprintf(stderr,
                "gpuprof: wrote %s (%llu slices, %llu instants, %llu memory events, %llu counter "
                "samples, %llu flow %s)\n",
                out, (unsigned long long)st.slices, (unsigned long long)st.instants,
                (unsigned long long)st.mem_events, (unsigned long long)st.counters,
                (unsigned long long)st.flows, fmt == GP_EXPORT_PERFETTO ? "links" : "events");
    gp_cli_free_traces(traces, n);
    return rc ? (rc == GP_ENOMEM ? 3 : 1) : 0;
}

void gp_cli_audit(const char *store, const char *action, const char *target, const char *result)
{
    gp_err err = {0};
    if (gp_audit_append(store, gp_audit_file(), action, target, result, &err))
        fprintf(stderr, "gpuprof: warning: %s\n", err.msg);
}

void gp_cli_audit_after(int failed, const char *store, const char *action, const char *target,
                        const char *result)
{
    gp_err err = {0};
    /* a command that failed has printed its one line; a store it could not
     * read cannot take the record either (the audit file still does) */
    if (gp_audit_append(store, gp_audit_file(), action, target, result, &err) && !failed)
        fprintf(stderr, "gpuprof: warning: %s\n", err.msg);
}

const char *gp_cli_store_of(const char *spec, char *buf, size_t n)
{
    for (int pass = 0; pass < 2; pass++) {
        snprintf(buf, n, "%s", spec);
        if (pass) {
            char *c = strrchr(buf, ':');
            if (!c) return NULL;
            *c = 0;
        }
        char head[16] = {0};
        /* a store is a regular file: a FIFO would block this open for a
         * writer that is gone (the trace was read from it) */
        struct stat st;
        if (stat(buf, &st) != 0 || !S_ISREG(st.st_mode)) continue;
        FILE *f = fopen(buf, "rb");
        if (!f) continue;
        size_t got = fread(head, 1, sizeof head, f);
        fclose(f);
        if (got == 16 && !memcmp(head, "SQLite format 3", 16)) return buf;
    }
    return NULL;
}

/* --redact state of this command (one command per process). */
static struct {
    int allowed, set, on;
    unsigned keep, keep_now; /* --redact-keep; what applies (with the configuration's) */
} redact_opt;

int gp_cli_redact_opt(int c, const char *arg)
{
    redact_opt.allowed = 1;
    redact_opt.set = 1;
    redact_opt.on = c != GP_OPT_NO_REDACT;
    if (c == GP_OPT_REDACT_KEEP) {
        char bad[64];
        int k = gp_sanitize_keep_parse(arg, bad, sizeof bad);
        if (k < 0) {
            fprintf(stderr,
                    "gpuprof: --redact-keep: unknown category '%s' (user, home, host, env, "
                    "paths)\n",
                    bad);
            return 2;
        }
        redact_opt.keep |= (unsigned)k;
    }
    return 0;
}

void gp_cli_redact_allow(void)
{
    redact_opt.allowed = 1;
}

int gp_cli_redact_strtab(gp_strtab *st)
{
    return redact(st, NULL, NULL);
}

int gp_cli_redact_trace(gp_trace *t)
{
    return redact(t->strings, NULL, t);
}

int gp_cli_redact_state(unsigned *keep)
{
    int on = 0;
    redact(NULL, &on, NULL);
    if (keep) *keep = redact_opt.keep_now;
    return on;
}

/* Redacts st and the args of t (when not NULL) if redaction applies;
 * *active (when not NULL) says whether it does. */
static int redact(gp_strtab *st, int *active, gp_trace *t)
{
    if (active) *active = 0;
    if (!redact_opt.allowed) return 0;
    int on = redact_opt.on;
    unsigned keep = redact_opt.keep;
    if (!redact_opt.set) { /* the configuration's default (config key redact, redact_keep) */
        gp_mon_config c;
        char err[256];
        if (gp_mon_config_auto(&c, err, sizeof err) == 0 && c.redact) {
            int k = gp_sanitize_keep_parse(c.redact_keep, err, sizeof err);
            on = 1;
            keep = k > 0 ? (unsigned)k : 0;
        }
    }
    if (!on) return 0;
    redact_opt.keep_now = keep;
    if (active) *active = 1;
    if (t && gp_sanitize_args(t, keep)) {
        fprintf(stderr, "gpuprof: out of memory\n");
        return 3;
    }
    if (!st) return 0;
    if (gp_sanitize_strtab(st, keep)) {
        fprintf(stderr, "gpuprof: out of memory\n");
        return 3;
    }
    return 0;
}
