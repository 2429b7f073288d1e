/* store/audit.h: the audit log (issue 16). Every profiling activity is
 * appended as one record: time, user (name and uid), host, pid, action,
 * target, result. Records are kept in the table
 *
 *   audit(time_ns INTEGER, user TEXT, uid INTEGER, host TEXT, pid INTEGER,
 *         action TEXT, target TEXT, result TEXT, prev_sha256 TEXT,
 *         sha256 TEXT)
 *
 * of the store the activity concerns (created with CREATE TABLE IF NOT
 * EXISTS; order = rowid), and, when configured (config key `audit_file`,
 * env GPUPROF_AUDIT_FILE), appended to a JSONL file, one object per line.
 *
 * Chain: sha256 = SHA-256 (hex) of prev_sha256 + "\n" + the record's
 * canonical JSON ({"time_ns":N,"user":S,"uid":N,"host":S,"pid":N,
 * "action":S,"target":S,"result":S}, strings escaped by gp_json_str);
 * prev_sha256 is the sha256 of the record before it in the same table or
 * file (64 zeros for the first). A JSONL line is the canonical JSON with
 * ,"prev_sha256":"..","sha256":".." added before its closing brace. An edit
 * breaks the record's own hash; a deletion, insertion or reordering breaks
 * the next record's prev_sha256. What it cannot show (removal of the last
 * records, a rewrite of the whole chain) is in docs/security.md. */
#ifndef GP_STORE_AUDIT_H
#define GP_STORE_AUDIT_H
#include "core/error.h"
#include "core/sbuf.h"
#include <stddef.h>
#include <stdint.h>

typedef struct gp_audit_rec {
    int64_t time_ns; /* wall clock, ns since the epoch */
    char *user;
    int64_t uid;
    char *host;
    int64_t pid;
    char *action, *target, *result;
    char prev_sha256[65], sha256[65];
    char *canonical; /* the hashed JSON as stored (JSONL) or rebuilt (table) */
} gp_audit_rec;

/* Appends a record of this process (time, user, uid, host, pid filled in)
 * to the audit table of the store at store (NULL: none; the table is
 * created when absent; a store this user cannot write is skipped) and to
 * the JSONL file at file (NULL or "": none; created 0600). target and
 * result are passed through gp_redact_text first. Returns 0, or a GP_E*
 * code with err set when a configured destination could not be written. */
int gp_audit_append(const char *store, const char *file, const char *action, const char *target,
                    const char *result, gp_err *err);

/* The JSONL file configured for this process: $GPUPROF_AUDIT_FILE, else
 * the `audit_file` key of the configuration file $GPUPROF_CONFIG, else
 * NULL. The returned string is static or from the environment. */
const char *gp_audit_file(void);

/* Reads every record of path, a store (its audit table; none = 0 records)
 * or a JSONL audit file, in order. 0 or GP_E* with err set; free with
 * gp_audit_free. */
int gp_audit_read(const char *path, gp_audit_rec **recs, size_t *n, gp_err *err);
void gp_audit_free(gp_audit_rec *recs, size_t n);

/* Checks the chain. Returns the index of the first bad record, or -1 when
 * every record is intact; why gets the reason ("content changed", "does
 * not follow the record before it: a record was deleted, inserted or
 * moved"). */
long gp_audit_verify(const gp_audit_rec *recs, size_t n, char *why, size_t why_n);

/* The canonical JSON of a record (what is hashed after prev + "\n"). */
void gp_audit_canonical(gp_sbuf *b, const gp_audit_rec *r);

#endif
