/* core/jdom.h: a small JSON document reader (whole text into a tree) for
 * gpuprof's own small JSON files, e.g. monitor session reports. Traces are
 * read by the streaming importer (trace/import.h), never with this. */
#ifndef GP_CORE_JDOM_H
#define GP_CORE_JDOM_H
#include "core/error.h"
#include <stddef.h>

typedef enum gp_jtype { GP_JNULL, GP_JBOOL, GP_JNUM, GP_JSTR, GP_JARR, GP_JOBJ } gp_jtype;

/* One JSON value. Objects keep their keys in order (duplicates kept). */
typedef struct gp_jv {
    gp_jtype type;
    int boolean;         /* GP_JBOOL */
    double num;          /* GP_JNUM */
    char *str;           /* GP_JSTR: decoded UTF-8, NUL-terminated */
    char **keys;         /* GP_JOBJ: n keys */
    struct gp_jv *items; /* GP_JARR, GP_JOBJ: n values */
    size_t n;
} gp_jv;

/* Parses the JSON text (len bytes; one value, then only white space) into
 * *out (caller frees with gp_jdom_free). Nesting deeper than 256 levels is
 * refused. Returns 0, GP_EPARSE ("byte N: expected ..." in err) or
 * GP_ENOMEM. On error *out is left as null. */
int gp_jdom_parse(const char *text, size_t len, gp_jv *out, gp_err *err);
/* Same; on a parse error *err_off (may be NULL) receives the byte offset
 * where the text stopped making sense (for line numbers in messages). */
int gp_jdom_parse_at(const char *text, size_t len, gp_jv *out, gp_err *err, size_t *err_off);
/* Frees what v owns (v itself is the caller's) and sets it to null. */
void gp_jdom_free(gp_jv *v);
/* The value of key in object o (first match); NULL when o is NULL, not an
 * object, or has no such key. */
const gp_jv *gp_jdom_get(const gp_jv *o, const char *key);
/* Number of v; 1 with *out set when v is a number, else 0 (null, absent). */
int gp_jdom_num(const gp_jv *v, double *out);
/* String of v, or `dflt` when v is NULL or not a string. */
const char *gp_jdom_str(const gp_jv *v, const char *dflt);

#endif
