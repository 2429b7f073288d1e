/* cli/cli.h: the subcommand registry's entry type and shared CLI helpers. */
#ifndef GP_CLI_CLI_H
#define GP_CLI_CLI_H
#include "core/error.h"
#include "trace/trace.h"
#include <stddef.h>

/* Subcommands are declared weak: a command whose source is not part of a
 * build (an optional part, or work in progress) is left out of the registry
 * (its pointer is NULL) instead of breaking the link. */
#define GP_CMD_FN(name) int name(int argc, char **argv) __attribute__((weak))

typedef struct gp_command {
    const char *name;
    const char *help;
    int (*fn)(int argc, char **argv); /* argv[0] is the command name */
} gp_command;

GP_CMD_FN(gp_cmd_summary);
GP_CMD_FN(gp_cmd_audit);   /* cmd_audit.c (issue 16) */
GP_CMD_FN(gp_cmd_analyze); /* cmd_analyze.c (issue 3) */
GP_CMD_FN(gp_cmd_merge);   /* cmd_analyze.c (issue 19): combines analyze --shard parts */
GP_CMD_FN(gp_cmd_compare); /* cmd_compare.c (issue 8) */
GP_CMD_FN(gp_cmd_advise);  /* cmd_advise.c (issue 8) */
GP_CMD_FN(gp_cmd_history); /* cmd_history.c (issue 8) */
GP_CMD_FN(gp_cmd_devices); /* cmd_devices.c (issue 6) */
GP_CMD_FN(gp_cmd_health);  /* cmd_devices.c (issue 6) */
GP_CMD_FN(gp_cmd_monitor); /* cmd_monitor.c (issue 6) */
GP_CMD_FN(gp_cmd_session); /* cmd_session.c (issue 6) */

/* Loads every trace named by paths (files, or folders of .json and .json.gz
 * files), in parallel, one thread per core. On error prints the one-line
 * message and returns 2; else 0 with *out and *n set (free with
 * gp_cli_free_traces). */
int gp_cli_load_traces(char **paths, int npaths, gp_trace ***out, size_t *n);
/* Same with GP_LOAD_* flags (trace/load.h), e.g. GP_LOAD_KEEP_ARGS for exports. */
int gp_cli_load_traces_ex(char **paths, int npaths, unsigned flags, gp_trace ***out, size_t *n);
void gp_cli_free_traces(gp_trace **traces, size_t n);
/* A trace file named directly on the command line must hold events: prints
 * "gpuprof: PATH: ..." and returns 2 when it has no "traceEvents" array or
 * no event at all (issue 15: an empty input is an error everywhere); 0 else.
 * A recorded run of a store (FILE.db[:ID]) may hold none. */
int gp_cli_check_events(const gp_trace *t, const char *path);
/* The same check without printing: 0, or GP_EINVAL with err set to
 * "PATH: ..." (the line gp_cli_check_events prints after "gpuprof: "). */
int gp_cli_events_error(const gp_trace *t, const char *path, gp_err *err);

/* Loads one trace or run (keeping its args text) and writes it to out ("-" =
 * stdout) in fmt (a gp_export_format, render/export.h); prints the one-line
 * outcome. Returns the exit status (0, 1 write failed, 2 bad input, 3 OOM). */
int gp_cli_export(const char *path, int fmt, const char *out);

/* Parses a non-negative integer option value or prints an error; -1 on error. */
long gp_cli_parse_count(const char *opt, const char *val);

/* Parses a comma list of summary category groups ("kernel,memory", see
 * gp_group_parse) and ORs their bits (1 << group) into *mask. Prints an error
 * and returns -1 on an unknown name; 0 otherwise. */
int gp_cli_parse_groups(const char *val, unsigned *mask);

/* Visualisation commands (issue 7): cmd_flame.c, cmd_timeline.c, cmd_memory.c, cmd_report.c. */
GP_CMD_FN(gp_cmd_flame);
GP_CMD_FN(gp_cmd_timeline);
GP_CMD_FN(gp_cmd_memory);
GP_CMD_FN(gp_cmd_report);
/* Parses a duration option ("500ns", "20us", "1.5ms", "2s"; a plain number
 * is ns) into ns or prints an error; -1 on error. */
long long gp_cli_parse_dur(const char *opt, const char *val);

/* Parses a number in [lo, hi] for option opt into *out, or prints an error
 * and returns -1. */
int gp_cli_parse_double(const char *opt, const char *s, double lo, double hi, double *out);

/* Recording (issue 5): cmd_run.c. */
GP_CMD_FN(gp_cmd_run);
GP_CMD_FN(gp_cmd_runs);
GP_CMD_FN(gp_cmd_sql);
GP_CMD_FN(gp_cmd_export);

/* Appends an audit record (store/audit.h) to the store at store (NULL:
 * none) and to the configured JSONL file; a failure is a warning on
 * stderr, never the command's failure (the action already happened). */
void gp_cli_audit(const char *store, const char *action, const char *target, const char *result);
/* As gp_cli_audit after a command that may have failed (failed != 0): then
 * an audit record its store cannot take is not reported again. */
void gp_cli_audit_after(int failed, const char *store, const char *action, const char *target,
                        const char *result);
/* Sanitization for sharing (--redact, trace/sanitize.h) in export, report,
 * timeline, flame and memory: add GP_CLI_REDACT_OPTIONS to the option
 * table, GP_CLI_REDACT_CASES to the switch and call gp_cli_redact_allow()
 * (so that the configuration's default applies); gp_cli_load_traces then
 * sanitizes every trace it loads. */
enum { GP_OPT_REDACT = 0x1601, GP_OPT_REDACT_KEEP, GP_OPT_NO_REDACT };
#define GP_CLI_REDACT_OPTIONS                                                                      \
    {"redact", no_argument, 0, GP_OPT_REDACT},                                                     \
        {"redact-keep", required_argument, 0, GP_OPT_REDACT_KEEP},                                 \
    {                                                                                              \
        "no-redact", no_argument, 0, GP_OPT_NO_REDACT                                              \
    }
#define GP_CLI_REDACT_CASES                                                                        \
    case GP_OPT_REDACT:                                                                            \
    case GP_OPT_REDACT_KEEP:                                                                       \
    case GP_OPT_NO_REDACT:                                                                         \
        if (gp_cli_redact_opt(c, optarg)) return 2;                                                \
        break
#define GP_CLI_REDACT_USAGE                                                                        \
    "  --redact           sanitize for sharing: user, home, host, env values, paths,\n"            \
    "                     secrets (docs/security.md); default: config key redact\n"                \
    "  --redact-keep LIST keep these categories (user,home,host,env,paths); implies --redact\n"    \
    "  --no-redact        do not sanitize even when the configuration says so\n"
/* Handles one of the GP_OPT_REDACT* options; 0 or 2 (message printed). */
int gp_cli_redact_opt(int c, const char *arg);
void gp_cli_redact_allow(void);
/* Sanitizes a string table when this command redacts; 0 or 3 (OOM). */
int gp_cli_redact_strtab(gp_strtab *st);
/* The same for a trace: its strings and its args. */
int gp_cli_redact_trace(gp_trace *t);
/* Whether this command redacts (option or configuration); *keep (may be
 * NULL) receives the GP_KEEP_* bits then. */
int gp_cli_redact_state(unsigned *keep);

/* The store a RUN argument names ("db", "db:ID") copied into buf, or NULL
 * when it names a trace file, not a store. */
const char *gp_cli_store_of(const char *spec, char *buf, size_t n);
/* Device benchmarks (issue 14): cmd_bench.c; health --bench lands there too. */
GP_CMD_FN(gp_cmd_bench);
GP_CMD_FN(gp_cmd_bench_health);

/* torch.compile analysis (issue 13): cmd_compile.c. */
GP_CMD_FN(gp_cmd_compile);

/* The server (issue 11): cmd_serve.c, built with libmicrohttpd. */
GP_CMD_FN(gp_cmd_serve);

#endif
