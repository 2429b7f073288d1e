/* trace/jscan.h: stage 1 of the JSON importer: classifies the bytes of the
 * importer's buffer 64 at a time into a bitmap that the parser (stage 2)
 * walks to find the end of each string instead of testing its bytes. One binary carries every
 * implementation (AVX-512BW, AVX2, SSE4.2, scalar); the best one the CPU
 * supports is chosen at run time, and the scalar one is the reference. */
#ifndef GP_TRACE_JSCAN_H
#define GP_TRACE_JSCAN_H
#include <stddef.h>
#include <stdint.h>

/* Which scanning path the importer uses. GP_JSCAN_OFF means no stage 1 at
 * all: the parser tests bytes itself (the original parser, kept as the
 * reference the indexed paths are compared against in tests and fuzzing). */
typedef enum {
    GP_JSCAN_OFF = 0,
    GP_JSCAN_SCALAR,
    GP_JSCAN_SSE42,
    GP_JSCAN_AVX2,
    GP_JSCAN_AVX512,
    GP_JSCAN_COUNT
} gp_jscan_isa;

/* Classifies nblocks blocks of 64 bytes at buf (all readable) into idx[k]:
 * bit i set when byte 64k+i is '"', '\\' or a control byte < 0x20 (NUL
 * included), the bytes that end the fast scan of a string. The bitmap is
 * context-free (no in-string state), so any start offset gives the same
 * bits. */
typedef void (*gp_jscan_fn)(const char *buf, size_t nblocks, uint64_t *idx);

/* 1 when this CPU (and OS) can run `isa`; GP_JSCAN_OFF and SCALAR always. */
int gp_jscan_supported(gp_jscan_isa isa);
/* The classifier for `isa` (NULL for OFF or an unsupported isa). */
gp_jscan_fn gp_jscan_get(gp_jscan_isa isa);
/* "off", "scalar", "sse4.2", "avx2", "avx512". */
const char *gp_jscan_name(gp_jscan_isa isa);
/* The widest supported classifier (AVX-512 > AVX2 > SSE4.2 > scalar). */
gp_jscan_isa gp_jscan_best(void);
/* The path the importer uses: $GPUPROF_SIMD when it names a supported path
 * ("off", "scalar", "sse4.2", "avx2", "avx512"; "auto" = gp_jscan_best()),
 * else GP_JSCAN_OFF: on the traces measured (docs/performance.md) the
 * indexed walk was no faster than the byte-wise scan, so it is opt-in. */
gp_jscan_isa gp_jscan_choose(void);

#endif
