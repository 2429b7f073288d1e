/* analysis/hta_prep.h: the event view that the `analyze` family (temporal,
 * kernel, idle, launch, queue ... breakdowns) reads: one row per slice with
 * its stream, correlation and kernel type, built either with HTA 0.6.1's
 * preprocessing (--compat hta) or at full nanosecond precision. */
#ifndef GP_ANALYSIS_HTA_PREP_H
#define GP_ANALYSIS_HTA_PREP_H
#include "core/error.h"
#include "trace/trace.h"
#include <stddef.h>
#include <stdint.h>

/* HTA's kernel types (by name), in the bit order of the overlap labels. */
typedef enum gp_ktype {
    GP_KT_COMPUTATION = 0,
    GP_KT_COMMUNICATION = 1,
    GP_KT_MEMORY = 2,
    GP_KT_OTHER = 3,
    GP_KT__COUNT
} gp_ktype;

const char *gp_ktype_name(gp_ktype k);
/* HTA 0.6.1's classification by kernel name: COMMUNICATION ^nccl|^hip|^hccl|
 * ncclKernel, then MEMORY ^(hip)?Memcpy|^(hip)?Memset|^dma, then OTHER for
 * names containing nccl, Memcpy, Memset, dma, Sync, "Stream Wait Event" or
 * cuda\w*LaunchKernel, else COMPUTATION. */
gp_ktype gp_ktype_of_name(const char *name);

/* One event as the analyses see it. Times in ns relative to the trace's t0;
 * in compat mode they are whole microseconds (multiples of 1000). 32 bytes:
 * what the view holds as its own (ts and dur rounded in compat mode, the
 * stream); the name and correlation id are the slice's, read through it
 * (gp_hev_name, gp_hev_corr), which keeps the view of a large trace small
 * beside the trace (issue 19: analyze peak RSS). */
typedef struct gp_hev {
    int64_t ts, dur;
    int64_t stream; /* -1: host side (HTA's "stream == -1") */
    uint32_t slice; /* index into trace->slices */
    uint8_t kind;   /* gp_kind of the slice */
    uint8_t ktype;  /* gp_ktype (meaningful for stream != -1) */
} gp_hev;

typedef struct gp_hview {
    const gp_trace *t;
    int rank;
    int compat;        /* built with HTA's preprocessing */
    int rounded;       /* compat: timestamps were rounded to whole us */
    int step_filtered; /* compat: the last-ProfilerStep filter was applied */
    gp_hev *ev;        /* host and GPU events, source order */
    size_t n;
    /* Shared index, built once by gp_hta_prepare so that the analyses do not
     * each sort and hash the events again (all owned by the view): */
    uint32_t *gpu; /* indices of GPU events (stream != -1) by start; ties in source order */
    size_t ngpu;
    uint32_t *peer; /* per event (corr != -1): the last event of the other side (host for a
                     * GPU event, GPU for a host event) with its correlation id, or
                     * GP_NO_INDEX */
    int corr_multi; /* some correlation id has several host or several GPU events */
    int64_t corr_lo, corr_hi; /* range of the events' correlation ids (-1 included) */
    int reversed;             /* some GPU event ends before it starts (compat rounding) */
    int64_t *merged[4];       /* merged intervals {start,end} of GPU events: [0] all, [1]
                               * COMPUTATION, [2] COMMUNICATION, [3] MEMORY */
    size_t nmerged[4];
} gp_hview;

/* The event's name (string id in the trace) and correlation id (-1 when
 * absent): those of its slice. */
static inline uint32_t gp_hev_name(const gp_hview *v, const gp_hev *e)
{
    return v->t->slices.v[e->slice].name;
}
static inline int64_t gp_hev_corr(const gp_hview *v, const gp_hev *e)
{
    return v->t->slices.v[e->slice].correlation;
}

typedef struct gp_hta_opts {
    int compat; /* 1: HTA 0.6.1 preprocessing; 0: full trace at ns precision */
} gp_hta_opts;

/* Builds views[i] for traces[i] (i < n); ranks[i] is stored in the view.
 * Compat mode drops events HTA drops (no dur / no category / B-E pairs /
 * "Trace"), rounds start up and end down to whole us when any timestamp is
 * fractional (emulating the double arithmetic of HTA's JSON loader), and,
 * when at least two distinct ProfilerStep#N names exist across all ranks,
 * keeps only host events starting before the last ProfilerStep and GPU
 * events correlated to them; for an MTIA trace (gp_hta_is_mtia, decided per
 * trace) HTA's MTIA filter instead: CPU events inside the ProfilerSteps
 * (the last one kept), kernels correlated to them and memory kernels inside
 * a step. Returns 0 or GP_ENOMEM (err set). Free each view with
 * gp_hview_free. */
/* HTA 0.6.1's device type test: the trace is an MTIA trace. */
int gp_hta_is_mtia(const gp_trace *t);

int gp_hta_prepare(gp_trace *const *traces, const int *ranks, size_t n, const gp_hta_opts *o,
                   gp_hview *views, gp_err *err);
void gp_hview_free(gp_hview *v);

/* The steps of gp_hta_prepare for one trace, for callers that see one rank
 * at a time (analyze's worker pool): gp_hta_build makes the view (events
 * only, no index); gp_hta_step_names stores up to max distinct names
 * starting with "ProfilerStep" among its events (pointers into the trace;
 * gp_hta_prepare filters when all ranks together have two or more); then
 * gp_hta_finish applies the last-ProfilerStep filter when filter is set
 * (compat views only; HTA's MTIA filter for an MTIA trace, as
 * gp_hta_prepare) and builds the index. Both return 0 or GP_ENOMEM (the
 * view is then freed). */
int gp_hta_build(const gp_trace *t, int rank, const gp_hta_opts *o, gp_hview *v);
size_t gp_hta_step_names(const gp_hview *v, const char **names, size_t max);
int gp_hta_finish(gp_hview *v, int filter);

/* Merges [ts, ts+dur) intervals in place (HTA's merge_kernel_intervals:
 * touching intervals merge). iv holds pairs {start, end}; returns the number
 * of merged pairs, sorted by start. Same as gp_intervals_merge (activity.h). */
size_t gp_hta_merge(int64_t *iv, size_t n);

/* Fills iv with {ts, end} of the view's GPU events whose kernel type bit is
 * in mask (1 << gp_ktype; ~0u: all GPU events), merged; returns the count.
 * *iv is malloc'd (caller frees); NULL with 0 when none or out of memory. */
size_t gp_hta_merged(const gp_hview *v, unsigned mask, int64_t **iv);
/* The cached merged intervals of the view's GPU events whose kernel type bit
 * is in mask, for mask ~0u (all), 1 << COMPUTATION, COMMUNICATION or MEMORY
 * (owned by the view; NULL with *n = 0 for other masks or when empty). */
const int64_t *gp_hview_merged(const gp_hview *v, unsigned mask, size_t *n);

#endif
