/* trace/jscan.c: stage-1 byte classification for the JSON importer (see
 * jscan.h): a scalar reference and 128/256/512-bit versions compiled with
 * target attributes into the same binary, chosen at run time. */
#include "trace/jscan.h"
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define GP_JSCAN_X86 1
#endif

/* ---- scalar reference ---------------------------------------------------------------------- */

static void scan_scalar(const char *buf, size_t nblocks, uint64_t *idx)
{
    const unsigned char *s = (const unsigned char *)buf;
    for (size_t k = 0; k < nblocks; k++, s += 64) {
        uint64_t sp = 0;
        for (unsigned i = 0; i < 64; i++)
            sp |= (uint64_t)(s[i] == '"' || s[i] == '\\' || s[i] < 0x20) << i;
        idx[k] = sp;
    }
}

#ifdef GP_JSCAN_X86

/* ---- 128 bit ------------------------------------------------------------------------------- */

__attribute__((target("sse4.2"))) static inline uint64_t special16(const char *s)
{
    const __m128i v = _mm_loadu_si128((const __m128i *)s);
    __m128i x = _mm_or_si128(
        _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))),
        _mm_cmpeq_epi8(_mm_min_epu8(v, _mm_set1_epi8(0x1f)), v)); /* v <= 0x1f */
    return (uint64_t)(uint16_t)_mm_movemask_epi8(x);
}

__attribute__((target("sse4.2"))) static void scan_sse42(const char *buf, size_t nblocks,
                                                         uint64_t *idx)
{
    for (size_t k = 0; k < nblocks; k++, buf += 64)
        idx[k] = special16(buf) | special16(buf + 16) << 16 | special16(buf + 32) << 32 |
                 special16(buf + 48) << 48;
}

/* ---- 256 bit ------------------------------------------------------------------------------- */

__attribute__((target("avx2"))) static inline uint64_t special32(const char *s)
{
    const __m256i v = _mm256_loadu_si256((const __m256i *)s);
    __m256i x = _mm256_or_si256(_mm256_or_si256(_mm256_cmpeq_epi8(v, _mm256_set1_epi8('"')),
                                                _mm256_cmpeq_epi8(v, _mm256_set1_epi8('\\'))),
                                _mm256_cmpeq_epi8(_mm256_min_epu8(v, _mm256_set1_epi8(0x1f)), v));
    return (uint64_t)(uint32_t)_mm256_movemask_epi8(x);
}

__attribute__((target("avx2"))) static void scan_avx2(const char *buf, size_t nblocks,
                                                      uint64_t *idx)
{
    for (size_t k = 0; k < nblocks; k++, buf += 64)
        idx[k] = special32(buf) | special32(buf + 32) << 32;
}

/* ---- 512 bit ------------------------------------------------------------------------------- */

__attribute__((target("avx512f,avx512bw"))) static void scan_avx512(const char *buf, size_t nblocks,
                                                                    uint64_t *idx)
{
    const __m512i qu = _mm512_set1_epi8('"'), bs = _mm512_set1_epi8('\\'),
                  c20 = _mm512_set1_epi8(0x20);
    for (size_t k = 0; k < nblocks; k++, buf += 64) {
        const __m512i v = _mm512_loadu_si512((const void *)buf);
        idx[k] = (uint64_t)(_mm512_cmpeq_epi8_mask(v, qu) | _mm512_cmpeq_epi8_mask(v, bs) |
                            _mm512_cmplt_epu8_mask(v, c20));
    }
}

#endif /* GP_JSCAN_X86 */

/* ---- dispatch ------------------------------------------------------------------------------ */

int gp_jscan_supported(gp_jscan_isa isa)
{
    switch (isa) {
    case GP_JSCAN_OFF:
    case GP_JSCAN_SCALAR:
        return 1;
#ifdef GP_JSCAN_X86
    case GP_JSCAN_SSE42:
        return __builtin_cpu_supports("sse4.2") != 0;
    case GP_JSCAN_AVX2:
        return __builtin_cpu_supports("avx2") != 0;
    case GP_JSCAN_AVX512:
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw");
#endif
    default:
        return 0;
    }
}

gp_jscan_fn gp_jscan_get(gp_jscan_isa isa)
{
    if (!gp_jscan_supported(isa)) return NULL;
    switch (isa) {
    case GP_JSCAN_SCALAR:
        return scan_scalar;
#ifdef GP_JSCAN_X86
    case GP_JSCAN_SSE42:
        return scan_sse42;
    case GP_JSCAN_AVX2:
        return scan_avx2;
    case GP_JSCAN_AVX512:
        return scan_avx512;
#endif
    default:
        return NULL;
    }
}

static const char *const names[GP_JSCAN_COUNT] = {"off", "scalar", "sse4.2", "avx2", "avx512"};

const char *gp_jscan_name(gp_jscan_isa isa)
{
    return (unsigned)isa < GP_JSCAN_COUNT ? names[isa] : "?";
}

gp_jscan_isa gp_jscan_best(void)
{
    for (int i = GP_JSCAN_COUNT - 1; i > GP_JSCAN_SCALAR; i--)
        if (gp_jscan_supported((gp_jscan_isa)i)) return (gp_jscan_isa)i;
    return GP_JSCAN_SCALAR;
}

gp_jscan_isa gp_jscan_choose(void)
{
    const char *env = getenv("GPUPROF_SIMD");
    if (env && strcmp(env, "auto") == 0) return gp_jscan_best();
    if (env && *env)
        for (int i = 0; i < GP_JSCAN_COUNT; i++)
            if (strcmp(env, names[i]) == 0 && gp_jscan_supported((gp_jscan_isa)i))
                return (gp_jscan_isa)i;
    /* bench/results/import.txt: the indexed paths measured no faster than
     * the byte-wise one on real traces, so it stays the default */
    return GP_JSCAN_OFF;
}
