/* record/cuda/cupti_conv.h: conversion of CUPTI activity records (kernels,
 * copies, memsets, runtime/driver API calls, synchronization, MEMORY2,
 * overhead) into run-store events. Pure functions over the records, so that
 * they are unit-tested on records built in the test, without a GPU. */
#ifndef GP_RECORD_CUDA_CUPTI_CONV_H
#define GP_RECORD_CUDA_CUPTI_CONV_H
#include "store/store.h"
#include <cupti_activity.h>
#include <cupti_version.h>

/* The record versions this build reads, gated on the CUPTI it was built
 * against (CUDA 13: Kernel10, Memcpy6, Memset4, Memory4, Synchronization2,
 * Overhead3; CUDA 12: the versions before them). */
#if CUPTI_API_VERSION >= 130000
typedef CUpti_ActivityKernel10 gp_cupti_kernel;
typedef CUpti_ActivityMemcpy6 gp_cupti_memcpy;
typedef CUpti_ActivityMemset4 gp_cupti_memset;
typedef CUpti_ActivityMemory4 gp_cupti_memory;
typedef CUpti_ActivitySynchronization2 gp_cupti_sync;
typedef CUpti_ActivityOverhead3 gp_cupti_overhead;
#else
typedef CUpti_ActivityKernel9 gp_cupti_kernel;
typedef CUpti_ActivityMemcpy5 gp_cupti_memcpy;
typedef CUpti_ActivityMemset4 gp_cupti_memset;
typedef CUpti_ActivityMemory3 gp_cupti_memory;
typedef CUpti_ActivitySynchronization gp_cupti_sync;
typedef CUpti_ActivityOverhead gp_cupti_overhead;
#endif

/* Where converted events get their string and track ids (the injection
 * library passes the store writer; tests pass fakes). The cat_* ids are the
 * interned category names "cuda_runtime", "cuda_driver", "gpu_memcpy",
 * "gpu_memset", "cuda_sync", "overhead". */
typedef struct gp_cupti_sink {
    void *ud;
    uint32_t (*str)(void *ud, const char *s);
    uint32_t (*thread_track)(void *ud, uint32_t tid);
    /* device may be UINT32_MAX (unknown: synchronization records) */
    uint32_t (*stream_track)(void *ud, uint32_t device, uint32_t stream);
    /* name of API callback cbid of the runtime (driver = 0) or driver (1) API */
    const char *(*api_name)(void *ud, int driver, uint32_t cbid);
    uint32_t cat_runtime, cat_driver, cat_memcpy, cat_memset, cat_sync, cat_overhead;
} gp_cupti_sink;

/* Converts one activity record into *out. Returns 1 when converted, 0 when
 * the record's kind is not one gpuprof keeps (out untouched). */
int gp_cupti_convert(const CUpti_Activity *rec, const gp_cupti_sink *s, gp_store_ev *out);

/* Kineto-style name of a copy: "Memcpy HtoD (Pageable -> Device)". Writes
 * into buf (n bytes) and returns it. */
const char *gp_cupti_memcpy_name(uint8_t copy_kind, uint8_t src, uint8_t dst, char *buf, size_t n);

/* Maps a CUPTI memory kind onto the trace model's (0 unknown, 1 pageable,
 * 2 pinned, 3 device, 4 managed, 5 array). */
uint8_t gp_cupti_mem_kind(uint32_t cupti_kind);

#endif
