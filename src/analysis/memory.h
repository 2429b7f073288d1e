/* analysis/memory.h: memory over time from [memory] events, per device:
 * allocated and reserved series, the peak with the operations live then,
 * growth, leaks grouped by allocating operation, fragmentation. */
#ifndef GP_ANALYSIS_MEMORY_H
#define GP_ANALYSIS_MEMORY_H
#include "trace/trace.h"
#include <stddef.h>
#include <stdint.h>

typedef struct gp_mem_point {
    int64_t ts;        /* ns since t0 */
    int64_t allocated; /* bytes */
    int64_t reserved;  /* bytes, GP_NONE when the source did not give it */
} gp_mem_point;

typedef struct gp_mem_leak {
    uint32_t op;    /* string id of the allocating operation, GP_NO_INDEX when none */
    uint64_t count; /* allocations never freed */
    int64_t bytes;
} gp_mem_leak;

typedef struct gp_mem_live {
    uint32_t track; /* CPU thread */
    char *stack;    /* "outer > ... > innermost" (owned) */
} gp_mem_live;

typedef struct gp_mem_device {
    int device_type, device_id; /* Kineto: type 0 CPU, 1 CUDA, ... */
    char label[32];             /* "cuda:0", "cpu", "type3:1" */
    gp_mem_point *pts;          /* one per event, in time order */
    size_t n;
    int totals_from_trace; /* 1: allocated = the events' "Total Allocated"; 0: running sum */
    uint64_t allocs, frees;
    int64_t alloc_bytes, free_bytes;
    int64_t start_allocated, end_allocated; /* before the first / after the last event */
    int64_t peak_allocated, peak_ts;        /* first time the peak is reached */
    int reserved_valid;
    int64_t peak_reserved, peak_reserved_ts;
    int64_t frag_at_peak; /* reserved - allocated at the peak (valid with reserved) */
    int64_t frag_max, frag_max_ts, frag_end;
    gp_mem_live *live; /* innermost operations open on each CPU thread at the peak */
    size_t nlive;
    gp_mem_leak *leaks; /* by bytes, descending */
    size_t nleaks;
    uint64_t leak_count;
    int64_t leak_bytes;
} gp_mem_device;

typedef struct gp_memory {
    gp_mem_device *dev; /* sorted by (type, id) */
    size_t n;
    size_t events;
} gp_memory;

/* Analyses t's [memory] events. Returns 0 or GP_ENOMEM; free with gp_memory_free. */
int gp_memory_compute(const gp_trace *t, gp_memory *out);
/* The same devices, series (pts), labels and figures as gp_memory_compute,
 * without the leaks and the live stacks at the peak (nleaks = nlive = 0,
 * leak_count/leak_bytes 0): what a writer of the series needs, cheaper. */
int gp_memory_series(const gp_trace *t, gp_memory *out);
void gp_memory_free(gp_memory *m);

/* Downsamples d's series to at most max points spread over time, keeping
 * each bucket's highest allocation (so the peak is never lost). Fills
 * out[0..k) and returns k. */
size_t gp_memory_downsample(const gp_mem_device *d, gp_mem_point *out, size_t max);

#endif
