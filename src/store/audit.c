/* store/audit.c: the hash-chained audit log in a store's audit table and an
 * optional append-only JSONL file (see audit.h). SHA-256 from GnuTLS. */
#include "store/audit.h"
#include "store/access.h"
#include "store/store.h"
#include "core/jdom.h"
#include "core/vec.h"
#include "core/redact.h"
#include <errno.h>
#include <fcntl.h>
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <gpuprof/monitor.h>
#include <pwd.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define ZERO_HASH "0000000000000000000000000000000000000000000000000000000000000000"
/* what a JSONL line adds after the canonical JSON (without its closing brace) */
#define SUFFIX_LEN (sizeof ",\"prev_sha256\":\"\",\"sha256\":\"\"}" - 1 + 128)

static const char *const table_sql =
    "CREATE TABLE IF NOT EXISTS audit(time_ns INTEGER, user TEXT, uid INTEGER, host TEXT, pid "
    "INTEGER, action TEXT, target TEXT, result TEXT, prev_sha256 TEXT, sha256 TEXT)";

void gp_audit_canonical(gp_sbuf *b, const gp_audit_rec *r)
{
    gp_sbuf_puts(b, "{\"time_ns\":");
    gp_json_int(b, r->time_ns);
    gp_sbuf_puts(b, ",\"user\":");
    gp_json_str(b, r->user ? r->user : "");
    gp_sbuf_puts(b, ",\"uid\":");
    gp_json_int(b, r->uid);
    gp_sbuf_puts(b, ",\"host\":");
    gp_json_str(b, r->host ? r->host : "");
    gp_sbuf_puts(b, ",\"pid\":");
    gp_json_int(b, r->pid);
    gp_sbuf_puts(b, ",\"action\":");
    gp_json_str(b, r->action ? r->action : "");
    gp_sbuf_puts(b, ",\"target\":");
    gp_json_str(b, r->target ? r->target : "");
    gp_sbuf_puts(b, ",\"result\":");
    gp_json_str(b, r->result ? r->result : "");
    gp_sbuf_putc(b, '}');
}

/* hex SHA-256 of prev + "\n" + canonical into out[65]. 0 or GP_EUNSUPPORTED. */
static int chain_hash(const char *prev, const char *canonical, size_t n, char out[65])
{
    gp_sbuf b = {0};
    unsigned char d[32];
    gp_sbuf_puts(&b, prev);
    gp_sbuf_putc(&b, '\n');
    gp_sbuf_add(&b, canonical, n);
    int rc = gnutls_hash_fast(GNUTLS_DIG_SHA256, b.s, b.n, d);
    gp_sbuf_free(&b);
    if (rc < 0) return GP_EUNSUPPORTED;
    for (int i = 0; i < 32; i++) snprintf(out + 2 * i, 3, "%02x", d[i]);
    return 0;
}

const char *gp_audit_file(void)
{
    static char path[512];
    const char *e = getenv("GPUPROF_AUDIT_FILE");
    if (e) return *e ? e : NULL;
    gp_mon_config c;
    char err[256];
    if (gp_mon_config_auto(&c, err, sizeof err) || !c.audit_file[0]) return NULL;
    snprintf(path, sizeof path, "%s", c.audit_file);
    return path;
}

/* ---- append ---- */

static int append_store(const char *store, gp_audit_rec *r, gp_err *err)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    int rc = 0;
    if (access(store, W_OK) != 0 || gp_access_foreign(store)) return 0; /* read-only for us */
    if (sqlite3_open_v2(store, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) goto fail;
    sqlite3_busy_timeout(db, 10000);
    if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_exec(db, table_sql, NULL, NULL, NULL) != SQLITE_OK)
        goto fail;
    snprintf(r->prev_sha256, sizeof r->prev_sha256, ZERO_HASH);
    if (sqlite3_prepare_v2(db, "SELECT sha256 FROM audit ORDER BY rowid DESC LIMIT 1", -1, &st,
                           NULL) != SQLITE_OK)
        goto fail;
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
        snprintf(r->prev_sha256, sizeof r->prev_sha256, "%s",
                 (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    st = NULL;
    gp_sbuf c = {0};
    gp_audit_canonical(&c, r);
    int hr = chain_hash(r->prev_sha256, c.s, c.n, r->sha256);
    gp_sbuf_free(&c);
    if (hr) {
        rc = gp_err_set(err, hr, "%s: audit: no SHA-256", store);
        goto done;
    }
    if (sqlite3_prepare_v2(db, "INSERT INTO audit VALUES(?,?,?,?,?,?,?,?,?,?)", -1, &st, NULL) !=
        SQLITE_OK)
        goto fail;
    sqlite3_bind_int64(st, 1, r->time_ns);
    sqlite3_bind_text(st, 2, r->user, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 3, r->uid);
    sqlite3_bind_text(st, 4, r->host, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 5, r->pid);
    sqlite3_bind_text(st, 6, r->action, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 7, r->target, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 8, r->result, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 9, r->prev_sha256, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 10, r->sha256, -1, SQLITE_STATIC);
    if (sqlite3_step(st) != SQLITE_DONE ||
        sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
        goto fail;
    goto done;
fail:
    rc = gp_err_set(err, GP_EIO, "%s: audit: %s", store, db ? sqlite3_errmsg(db) : "cannot open");
done:
    sqlite3_finalize(st);
    if (db) {
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
        sqlite3_close(db);
    }
    return rc;
}

/* The sha256 of the last line of the JSONL file fd (ZERO_HASH when empty). */
static void last_hash(int fd, char out[65])
{
    snprintf(out, 65, ZERO_HASH);
    struct stat st;
    if (fstat(fd, &st) != 0 || st.st_size < (off_t)SUFFIX_LEN) return;
    char buf[4096];
    off_t from = st.st_size > (off_t)sizeof buf ? st.st_size - (off_t)sizeof buf : 0;
    ssize_t n = pread(fd, buf, sizeof buf, from);
    if (n <= 0) return;
    size_t e = (size_t)n;
    while (e && (buf[e - 1] == '\n' || buf[e - 1] == '\r')) e--;
    /* ...,"sha256":"<64 hex>"} */
    if (e < 66 || memcmp(buf + e - 2, "\"}", 2)) return;
    memcpy(out, buf + e - 66, 64);
    out[64] = 0;
}

static int append_file(const char *file, gp_audit_rec *r, gp_err *err)
{
    int fd = open(file, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, gp_access_mode(0));
    if (fd < 0) return gp_err_set(err, GP_EIO, "%s: audit: %s", file, strerror(errno));
    int rc = 0;
    if (flock(fd, LOCK_EX) != 0) {
        rc = gp_err_set(err, GP_EIO, "%s: audit: lock: %s", file, strerror(errno));
        goto done;
    }
    last_hash(fd, r->prev_sha256);
    gp_sbuf line = {0};
    gp_audit_canonical(&line, r);
    if (chain_hash(r->prev_sha256, line.s, line.n, r->sha256)) {
        gp_sbuf_free(&line);
        rc = gp_err_set(err, GP_EUNSUPPORTED, "%s: audit: no SHA-256", file);
        goto done;
    }
    line.n--; /* the closing brace */
    gp_sbuf_printf(&line, ",\"prev_sha256\":\"%s\",\"sha256\":\"%s\"}\n", r->prev_sha256,
                   r->sha256);
    if (write(fd, line.s, line.n) != (ssize_t)line.n)
        rc = gp_err_set(err, GP_EIO, "%s: audit: write: %s", file, strerror(errno));
    gp_sbuf_free(&line);
done:
    close(fd);
    return rc;
}

int gp_audit_append(const char *store, const char *file, const char *action, const char *target,
                    const char *result, gp_err *err)
{
    gp_audit_rec r;
    memset(&r, 0, sizeof r);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    r.time_ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
    r.uid = (int64_t)getuid();
    struct passwd *pw = getpwuid(getuid());
    char uname[64], host[256] = "";
    snprintf(uname, sizeof uname, "%s", pw && pw->pw_name ? pw->pw_name : "?");
    gethostname(host, sizeof host - 1);
    r.user = uname;
    r.host = host;
    r.pid = (int64_t)getpid();
    r.action = (char *)action;
    r.target = gp_redact_text(target ? target : "");
    r.result = gp_redact_text(result ? result : "");
    int rc = 0;
    if (store) rc = append_store(store, &r, err);
    if (file && *file) {
        gp_err e2 = {0};
        int rc2 = append_file(file, &r, rc ? &e2 : err);
        if (!rc) rc = rc2;
    }
    free(r.target);
    free(r.result);
    return rc;
}

/* ---- read and verify ---- */

typedef GP_VEC(gp_audit_rec) recvec;

static char *dup_or_empty(const char *s)
{
    return gp_xstrdup(s ? s : "");
}

static int read_store(const char *path, recvec *v, gp_err *err)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    int rc = 0;
    if (!(db = gp_store_open_reader(path))) {
        rc = gp_err_set(err, GP_EIO, "%s: cannot open: %s", path, strerror(errno));
        goto done;
    }
    sqlite3_busy_timeout(db, 10000);
    int prc = sqlite3_prepare_v2(db,
                                 "SELECT time_ns, user, uid, host, pid, action, target, result, "
                                 "prev_sha256, sha256 FROM audit ORDER BY rowid",
                                 -1, &st, NULL);
    if (prc != SQLITE_OK) {
        if (strstr(sqlite3_errmsg(db), "no such table")) goto done; /* no records yet */
        rc = gp_err_set(err, GP_EPARSE, "%s: %s", path, sqlite3_errmsg(db));
        goto done;
    }
    int s;
    while ((s = sqlite3_step(st)) == SQLITE_ROW) {
        gp_audit_rec r;
        memset(&r, 0, sizeof r);
        r.time_ns = sqlite3_column_int64(st, 0);
        r.user = dup_or_empty((const char *)sqlite3_column_text(st, 1));
        r.uid = sqlite3_column_int64(st, 2);
        r.host = dup_or_empty((const char *)sqlite3_column_text(st, 3));
        r.pid = sqlite3_column_int64(st, 4);
        r.action = dup_or_empty((const char *)sqlite3_column_text(st, 5));
        r.target = dup_or_empty((const char *)sqlite3_column_text(st, 6));
        r.result = dup_or_empty((const char *)sqlite3_column_text(st, 7));
        snprintf(r.prev_sha256, sizeof r.prev_sha256, "%s",
                 sqlite3_column_text(st, 8) ? (const char *)sqlite3_column_text(st, 8) : "");
        snprintf(r.sha256, sizeof r.sha256, "%s",
                 sqlite3_column_text(st, 9) ? (const char *)sqlite3_column_text(st, 9) : "");
        gp_sbuf c = {0};
        gp_audit_canonical(&c, &r);
        r.canonical = gp_xstrdup(gp_sbuf_cstr(&c));
        gp_sbuf_free(&c);
        if (GP_VEC_PUSH(*v, r)) {
            rc = GP_ENOMEM;
            goto done;
        }
    }
    if (s != SQLITE_DONE) /* a damaged store: never a partial log */
        rc = gp_err_set(err, GP_EIO, "%s: %s", path, sqlite3_errmsg(db));
done:
    sqlite3_finalize(st);
    sqlite3_close(db);
    return rc;
}

/* Copies the JSON string value of key in the line (decoded) or "". */
static char *jstr(const gp_jv *o, const char *key)
{
    return gp_xstrdup(gp_jdom_str(gp_jdom_get(o, key), ""));
}

/* The exact integer after "key": in line (0 when absent). */
static int64_t jint(const char *line, const char *key)
{
    char pat[32];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *p = strstr(line, pat);
    return p ? strtoll(p + strlen(pat), NULL, 10) : 0;
}

static int read_jsonl(const char *path, recvec *v, gp_err *err)
{
    FILE *f = fopen(path, "re");
    if (!f) return gp_err_set(err, GP_EIO, "%s: %s", path, strerror(errno));
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    int rc = 0, lineno = 0;
    while ((n = getline(&line, &cap, f)) > 0) {
        lineno++;
        while (n && (line[n - 1] == '\n' || line[n - 1] == '\r')) line[--n] = 0;
        if (!n) continue;
        gp_audit_rec r;
        memset(&r, 0, sizeof r);
        gp_jv o;
        gp_err pe = {0};
        if ((size_t)n < SUFFIX_LEN || gp_jdom_parse(line, (size_t)n, &o, &pe) ||
            o.type != GP_JOBJ) {
            /* kept as a record that cannot verify */
            r.action = gp_xstrdup("(unreadable line)");
            r.user = gp_xstrdup("");
            r.host = gp_xstrdup("");
            r.target = gp_xstrdup(line);
            r.result = gp_xstrdup("");
            r.canonical = gp_xstrdup("");
            if (!pe.code) gp_jdom_free(&o);
        } else {
            r.time_ns = jint(line, "time_ns");
            r.uid = jint(line, "uid");
            r.pid = jint(line, "pid");
            r.user = jstr(&o, "user");
            r.host = jstr(&o, "host");
            r.action = jstr(&o, "action");
            r.target = jstr(&o, "target");
            r.result = jstr(&o, "result");
            snprintf(r.prev_sha256, sizeof r.prev_sha256, "%s",
                     gp_jdom_str(gp_jdom_get(&o, "prev_sha256"), ""));
            snprintf(r.sha256, sizeof r.sha256, "%s", gp_jdom_str(gp_jdom_get(&o, "sha256"), ""));
            gp_jdom_free(&o);
            /* the canonical text is the line without the chain suffix */
            size_t cl = (size_t)n - SUFFIX_LEN;
            r.canonical = gp_xmalloc(cl + 2);
            memcpy(r.canonical, line, cl);
            r.canonical[cl] = '}';
            r.canonical[cl + 1] = 0;
        }
        if (GP_VEC_PUSH(*v, r)) {
            rc = GP_ENOMEM;
            break;
        }
    }
    free(line);
    fclose(f);
    return rc;
}

int gp_audit_read(const char *path, gp_audit_rec **recs, size_t *n, gp_err *err)
{
    recvec v = {0};
    *recs = NULL;
    *n = 0;
    char head[16] = {0};
    FILE *f = fopen(path, "rb");
    if (!f) return gp_err_set(err, GP_ENOTFOUND, "%s: %s", path, strerror(errno));
    size_t got = fread(head, 1, sizeof head, f);
    fclose(f);
    int rc = got == 16 && !memcmp(head, "SQLite format 3", 16) ? read_store(path, &v, err)
                                                               : read_jsonl(path, &v, err);
    if (rc) {
        gp_audit_free(v.v, v.n);
        return rc;
    }
    *recs = v.v;
    *n = v.n;
    return 0;
}

void gp_audit_free(gp_audit_rec *recs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(recs[i].user);
        free(recs[i].host);
        free(recs[i].action);
        free(recs[i].target);
        free(recs[i].result);
        free(recs[i].canonical);
    }
    free(recs);
}

long gp_audit_verify(const gp_audit_rec *recs, size_t n, char *why, size_t why_n)
{
    const char *expect = ZERO_HASH;
    for (size_t i = 0; i < n; i++) {
        const gp_audit_rec *r = &recs[i];
        char h[65];
        if (strcmp(r->prev_sha256, expect)) {
            snprintf(why, why_n,
                     "does not follow the record before it (prev_sha256 mismatch): a record "
                     "was deleted, inserted or moved");
            return (long)i;
        }
        const char *c = r->canonical ? r->canonical : "";
        if (!*c || chain_hash(r->prev_sha256, c, strlen(c), h) || strcmp(h, r->sha256)) {
            snprintf(why, why_n, "content changed (sha256 mismatch)");
            return (long)i;
        }
        expect = r->sha256;
    }
    if (why_n) why[0] = 0;
    return -1;
}
