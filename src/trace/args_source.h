/* trace/args_source.h: event arguments kept by where they lie in the
 * source file (GP_LOAD_ARGS_AT_SOURCE, gp_import_opts.keep_args =
 * GP_ARGS_AT_SOURCE). Such an import records the byte range of every
 * slice's and instant's "args" object in the file's (uncompressed) text
 * instead of copying the text: gp_args_ref.off is then an offset into the
 * source and trace->args_text stays empty (trace->meta.args_at_source = 1).
 * gp_trace_args_read copies the text in later, in one sequential read of the
 * file, for the one output that repeats it (the lossless Chrome export), so
 * that a server does not hold every event's arguments in memory, nor pay for
 * copying them, before a request needs them. */
#ifndef GP_TRACE_ARGS_SOURCE_H
#define GP_TRACE_ARGS_SOURCE_H
#include "core/error.h"
#include "trace/trace.h"
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

/* Records that the args of slice or instant `owner` (ascending, as
 * gp_trace_add_args) are the n bytes at offset off of the source text.
 * Returns 0 or GP_ENOMEM. */
int gp_trace_add_args_at(gp_trace *t, int instant, uint32_t owner, uint64_t off, size_t n);

/* Reads the args text of a trace imported with its args at the source from
 * `path` (plain or gzip, as imported) into t->args_text and makes the refs
 * point into it (meta.args_at_source becomes 0). A trace whose args are not
 * at the source is left as it is (returns 0). expect (may be NULL): the
 * file's stat at import; the file read must still be that one (device,
 * inode, size, modification time, looked at on the open file before and
 * after the read). Every range must hold one JSON object ("{...}").
 * Returns 0; GP_ESTATE when the file is no longer the one imported (changed,
 * replaced, shorter, or a range that holds no object); GP_EIO / GP_ENOTFOUND
 * / GP_ENOMEM; err set. On error t is unchanged. */
int gp_trace_args_read(gp_trace *t, const char *path, const struct stat *expect, gp_err *err);

#endif
