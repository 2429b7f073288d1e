/* trace/torch_trace.h: the streaming reader of torch.compile's structured
 * log (TORCH_TRACE=DIR, the input of tlparse) and the model it fills: one
 * record per compile id with what the log says about it, the chromium_event
 * compile phases and the log's corrupt lines. The reader computes no
 * statistics; analysis/compile.c does. */
#ifndef GP_TRACE_TORCH_TRACE_H
#define GP_TRACE_TORCH_TRACE_H
#include "core/error.h"
#include "core/strtab.h"
#include "core/vec.h"
#include <stddef.h>
#include <stdint.h>

#define GP_TT_NONE (-1) /* absent integer */

typedef enum gp_tt_status {
    GP_TT_INCOMPLETE = 0, /* no compilation_metrics for this id (log cut, or still compiling) */
    GP_TT_OK,             /* compilation_metrics with a null fail_type */
    GP_TT_FAILED,         /* compilation_metrics with a fail_type */
    GP_TT_RESTARTED,      /* no metrics, and a later attempt of the same frame/compile exists */
} gp_tt_status;

/* "incomplete", "ok", "failed", "restarted". */
const char *gp_tt_status_name(gp_tt_status s);

typedef struct gp_tt_frame {
    uint32_t file, name, loc; /* string ids in gp_tlog.strings (0 = unknown) */
    int64_t line;             /* GP_TT_NONE when unknown */
} gp_tt_frame;

/* A kernel defined in inductor_output_code ("NAME = async_compile.triton(")
 * with the ATen ops of its "Original ATen: [...]" comment. */
typedef struct gp_tt_kernel {
    uint32_t name;
    uint32_t ops;  /* "aten.add, aten.cos" (string id; 0 = no comment seen) */
    int32_t n_ops; /* ops in the list; GP_TT_NONE when no comment preceded the kernel */
} gp_tt_kernel;

/* One compile id: (compiled_autograd_id, frame_id, frame_compile_id,
 * attempt). A concatenated log may repeat an id: a dynamo_start or a second
 * compilation_metrics for an id that already has metrics opens a new record. */
typedef struct gp_tt_compile {
    char id[64]; /* "F/C", "F/C_A" when attempt > 0, "!CA/F/C" with compiled autograd */
    int64_t frame_id, frame_compile_id, attempt, autograd_id; /* GP_TT_NONE when absent */
    uint64_t first_line;                                      /* line of the first envelope */
    int n_metrics; /* compilation_metrics records for this id (normally 0 or 1) */
    gp_tt_status status;
    uint32_t co_name, co_filename; /* string ids */
    int64_t co_firstlineno;
    uint32_t fail_type, fail_reason, fail_file; /* string ids (0 = null) */
    int64_t fail_line;
    /* seconds; NaN when absent or null in the log */
    double entire_s;       /* entire_frame_compile_time_s (older logs) */
    double dynamo_cum_s;   /* dynamo_cumulative_compile_time_us / 1e6 */
    double aot_cum_s;      /* aot_autograd_cumulative_compile_time_us / 1e6 */
    double inductor_cum_s; /* inductor_cumulative_compile_time_us / 1e6 */
    double codegen_cum_s;  /* inductor_code_gen_cumulative_compile_time_us / 1e6 */
    double backend_s;      /* backend_compile_time_s (older logs) */
    double inductor_s;     /* inductor_compile_time_s (older logs) */
    double codegen_s;      /* code_gen_time_s (older logs) */
    int64_t graph_op_count, graph_node_count, graph_input_count, guard_count; /* GP_TT_NONE */
    GP_VEC(gp_tt_frame) stack;        /* dynamo_start's user stack, outermost first */
    GP_VEC(uint32_t) restart_reasons; /* graph breaks (compilation_metrics) */
    GP_VEC(uint32_t) recompile_reasons;
    GP_VEC(gp_tt_kernel) kernels;
    uint32_t fx_hit, fx_miss, fx_bypass;    /* fx_graph_cache_* artifacts */
    uint32_t aot_hit, aot_miss, aot_bypass; /* aotautograd_cache_* artifacts */
} gp_tt_compile;

/* A compile phase: a chromium_event B/E pair (or an X event). */
typedef struct gp_tt_phase {
    uint32_t name, cat;
    uint32_t compile_id;      /* string id of args.compile_id ("0/0"; 0 = none/"None") */
    int64_t begin_ns, end_ns; /* epoch ns; end_ns == GP_TT_NONE when no E was seen */
    int64_t tid;
    int depth; /* nesting level within its thread at its start */
} gp_tt_phase;

typedef struct gp_tt_bad {
    uint64_t line;
    char what[160];
} gp_tt_bad;

#define GP_TT_MAX_BAD 1000 /* corrupt lines kept with their detail (all are counted) */

typedef struct gp_tlog {
    gp_strtab *strings;
    uint32_t file;         /* the path read */
    int32_t rank;          /* from an envelope "rank" or the file name (rank_N); GP_TT_NONE */
    uint64_t lines;        /* lines read */
    uint64_t bytes;        /* bytes read (uncompressed) */
    uint64_t envelopes;    /* valid envelopes */
    uint64_t corrupt;      /* corrupt envelope lines / JSON payloads (skipped) */
    GP_VEC(gp_tt_bad) bad; /* the first GP_TT_MAX_BAD of them */
    GP_VEC(gp_tt_compile) compiles; /* in order of first appearance */
    GP_VEC(gp_tt_phase) phases;     /* in order of their B */
    uint64_t metrics_records;       /* compilation_metrics envelopes */
    uint64_t unmatched_phase_ends;  /* E without a B */
} gp_tlog;

typedef struct gp_tt_opts {
    int payloads; /* 1: read the payloads views need (kernels from output code);
                     0: only what the totals need (chromium events, recompile reasons) */
} gp_tt_opts;

/* Reads the TORCH_TRACE log at path (plain or gzip) into *out (caller frees
 * with gp_tlog_destroy). Corrupt envelope lines and unreadable JSON payloads
 * are skipped and counted (out->bad holds their line numbers). Returns 0, or
 * GP_ENOTFOUND / GP_EIO (unreadable), GP_EPARSE when the file is not a
 * TORCH_TRACE log (binary, no envelope in its first lines) or is truncated
 * (its last line has no end), GP_ENOMEM; err->msg is one line "PATH[:LINE]: why". */
int gp_tlog_read_file(const char *path, const gp_tt_opts *o, gp_tlog **out, gp_err *err);
/* Same from memory (name used in messages and as the file). */
int gp_tlog_read_mem(const void *data, size_t n, const char *name, const gp_tt_opts *o,
                     gp_tlog **out, gp_err *err);
void gp_tlog_destroy(gp_tlog *l);

static inline const char *gp_tlog_s(const gp_tlog *l, uint32_t id)
{
    return gp_strtab_get(l->strings, id);
}

#endif
