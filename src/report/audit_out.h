/* report/audit_out.h: result writers of `gpuprof audit` (text and JSON),
 * shared by the CLI and the server. */
#ifndef GP_REPORT_AUDIT_OUT_H
#define GP_REPORT_AUDIT_OUT_H
#include "store/audit.h"
#include <stdio.h>

/* One line per record (number, UTC time, user(uid)@host pid, action,
 * target, result), then, when verified (bad = gp_audit_verify's result,
 * or -2 when not verified), a line "audit: N records, chain intact" or
 * "audit: record K (...) is bad: WHY". */
void gp_audit_write_text(FILE *f, const gp_audit_rec *r, size_t n, long bad, const char *why);
/* {"records":[{...,"prev_sha256","sha256"}..],"verified":bool,"intact":bool,
 * "first_bad":K|null,"reason":S|null} */
void gp_audit_write_json(FILE *f, const gp_audit_rec *r, size_t n, long bad, const char *why);

#endif
