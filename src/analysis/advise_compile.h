/* analysis/advise_compile.h: the checks of the advice engine's torch.compile
 * rules (type "torch-compile" in advise.c's table). Each reads TORCH_TRACE
 * logs and, when its class of graph break / recompile / failure is present,
 * fills one advice with the evidence: compile id, user frame, reason. */
#ifndef GP_ANALYSIS_ADVISE_COMPILE_H
#define GP_ANALYSIS_ADVISE_COMPILE_H
#include "analysis/advise.h"
#include "trace/torch_trace.h"

/* The classes a graph-break / failure reason falls in (first match wins). */
typedef enum gp_break_class {
    GP_BC_DATA_DEPENDENT = 0, /* control flow or .item() on tensor values */
    GP_BC_UNSUPPORTED,        /* builtin / call / object Dynamo does not support */
    GP_BC_SKIPPED,            /* a function Dynamo skips, an explicit graph_break() */
    GP_BC_OTHER,
} gp_break_class;

gp_break_class gp_break_classify(const char *reason);
/* 1 when a recompile reason is about sizes/strides/shapes (dynamic shapes). */
int gp_recompile_is_shape(const char *reason);

/* Checks; each returns 1 with *a filled when it fires, 0 when not. logs[0..n). */
int gp_advc_data_dependent(const gp_tlog *const *logs, size_t n, const double *p, gp_advice *a);
int gp_advc_unsupported(const gp_tlog *const *logs, size_t n, const double *p, gp_advice *a);
int gp_advc_skipped(const gp_tlog *const *logs, size_t n, const double *p, gp_advice *a);
int gp_advc_other_break(const gp_tlog *const *logs, size_t n, const double *p, gp_advice *a);
int gp_advc_dynamic_shapes(const gp_tlog *const *logs, size_t n, const double *p, gp_advice *a);
int gp_advc_guard_recompiles(const gp_tlog *const *logs, size_t n, const double *p, gp_advice *a);
int gp_advc_recompile_limit(const gp_tlog *const *logs, size_t n, const double *p, gp_advice *a);
int gp_advc_failure(const gp_tlog *const *logs, size_t n, const double *p, gp_advice *a);
int gp_advc_cache_miss(const gp_tlog *const *logs, size_t n, const double *p, gp_advice *a);

#endif
