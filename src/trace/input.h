/* trace/input.h: a byte source for importers: a plain file, a gzip file
 * (detected by its magic bytes, inflated by isa-l or zlib in a thread of its
 * own, ahead of the reader) or a memory block. */
#ifndef GP_TRACE_INPUT_H
#define GP_TRACE_INPUT_H
#include "core/error.h"
#include <stddef.h>
#include <stdint.h>

typedef struct gp_input gp_input;

/* Opens path (gzip or plain). Caller closes. Returns 0 or GP_ENOTFOUND/GP_EIO. */
int gp_input_open_file(const char *path, gp_input **out, gp_err *err);
/* Wraps a memory block (not copied; must outlive the input). Gzip is
 * detected. `name` (kept by pointer) names the source in messages. */
int gp_input_open_mem(const void *data, size_t n, const char *name, gp_input **out, gp_err *err);
/* Reads up to cap uncompressed bytes. Returns bytes read (0 at end) or a
 * negative GP_E* code with err filled (corrupt gzip, read error). */
long gp_input_read(gp_input *in, void *dst, size_t cap, gp_err *err);
/* Compressed bytes consumed so far and the source's total size (0 if unknown). */
uint64_t gp_input_pos(const gp_input *in);
uint64_t gp_input_size(const gp_input *in);
int gp_input_is_gzip(const gp_input *in);
void gp_input_close(gp_input *in);
/* Positions a plain (not gzip) file input at byte off before the first read.
 * Returns 0 or GP_EUNSUPPORTED / GP_EIO. */
int gp_input_seek(gp_input *in, uint64_t off, gp_err *err);
/* The file descriptor of a file input (-1 for memory). */
int gp_input_fd(const gp_input *in);
/* 1 for a file input that cannot be read again from its start (a pipe,
 * FIFO or terminal: `/dev/stdin`, `<(...)`): what was read is gone, so a
 * second gp_input_open_file of its path does not see it. */
int gp_input_is_stream(const gp_input *in);
/* 1 when the file at path, inflated if gzip, is empty or holds only JSON
 * whitespace (space, tab, CR, LF; a UTF-8 byte order mark at its start
 * aside); 0 otherwise, also when it cannot be read or its gzip stream is
 * damaged. Reads up to the first other byte. */
int gp_input_blank_file(const char *path);
/* Tests only: compressed bytes handed to the inflater at a time by gzip
 * inputs opened from now on (0: the default, 1 MiB of a file, up to 1 GiB of
 * memory), so that gzip framing can be split at every byte. */
void gp_input_test_chunk(size_t n);
/* The inflater gzip inputs use in this build and environment: "isa-l" (when
 * built with it, unless $GPUPROF_INFLATE=zlib) or "zlib". */
const char *gp_input_inflater(void);

#endif
