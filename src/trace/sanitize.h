/* trace/sanitize.h: sanitization for sharing (`--redact`, issue 16). Every
 * string of a trace (names of processes, threads, events, categories,
 * counters, devices, the source path and metadata) is rewritten so that a
 * shared output does not reveal who ran it, where, or with which secrets:
 *
 *  - secrets: always (core/redact.h: option values, headers, URL
 *    credentials, token shapes, ...);
 *  - "user": the user's name ($USER, the passwd entry, names under /home/
 *    and /Users/) becomes <user>;
 *  - "home": /home/NAME, /Users/NAME and /root become ~;
 *  - "host": this host's name (long and short form) becomes <host>;
 *  - "env": NAME=VALUE words (upper-case names) become NAME=<redacted>;
 *  - "paths": absolute and ~/ paths become <path:HASH> (8 hex digits of a
 *    hash of the path, so one file keeps one name within and across
 *    outputs).
 *
 * Ids of strings do not change, so every figure (which groups by id) is
 * the same as without --redact. The allow list (--redact-keep, config key
 * redact_keep) names categories to keep: "user,host,paths,home,env".
 * Event arguments (Kineto "args", kept as JSON text for exports) keep their
 * numbers and shapes; their strings are sanitized like names. */
#ifndef GP_TRACE_SANITIZE_H
#define GP_TRACE_SANITIZE_H
#include "core/strtab.h"
#include "trace/trace.h"

/* Categories of gp_sanitize_opts.keep. */
enum {
    GP_KEEP_USER = 1,
    GP_KEEP_HOME = 2,
    GP_KEEP_HOST = 4,
    GP_KEEP_ENV = 8,
    GP_KEEP_PATHS = 16,
};

/* Parses a --redact-keep list ("user,host"; NULL or "" = nothing kept)
 * into GP_KEEP_* bits. Returns the bits, or -1 for an unknown name (its
 * text in bad[0..nbad)). */
int gp_sanitize_keep_parse(const char *list, char *bad, size_t nbad);

/* One string sanitized (malloc'ed, caller frees). keep: GP_KEEP_* bits. */
char *gp_sanitize_str(const char *s, unsigned keep);

/* Rewrites the events' args objects (the JSON text kept for exports):
 * every string in them, key or value, goes through gp_sanitize_str;
 * numbers and arrays (input shapes, ids, sizes) stay byte for byte. 0 or
 * GP_ENOMEM (the args are then dropped). */
int gp_sanitize_args(gp_trace *t, unsigned keep);

/* Rewrites every string of t (its string table and its args) / of a string
 * table. 0 or GP_ENOMEM. */
int gp_sanitize_trace(gp_trace *t, unsigned keep);
int gp_sanitize_strtab(gp_strtab *st, unsigned keep);

#endif
