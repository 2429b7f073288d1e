/* analysis/hta_prep.c: builds the event view of the analyze family, with
 * HTA 0.6.1's preprocessing in compat mode (see hta_prep.h). */
#include "analysis/hta_prep.h"
#include "analysis/activity.h"
#include "core/hash.h"
#include "core/stats.h"
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const ktype_names[GP_KT__COUNT] = {"COMPUTATION", "COMMUNICATION", "MEMORY",
                                                      "OTHER"};

const char *gp_ktype_name(gp_ktype k)
{
    return (unsigned)k < GP_KT__COUNT ? ktype_names[k] : "OTHER";
}

static int starts(const char *s, const char *p)
{
    return strncmp(s, p, strlen(p)) == 0;
}

static int is_word(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* cuda\w*LaunchKernel anywhere in s */
static int cuda_launch(const char *s)
{
    for (const char *p = strstr(s, "cuda"); p; p = strstr(p + 1, "cuda")) {
        const char *w = p + 4, *e = w;
        while (is_word(*e)) e++;
        for (const char *q = w; q + 12 <= e; q++)
            if (memcmp(q, "LaunchKernel", 12) == 0) return 1;
    }
    return 0;
}

gp_ktype gp_ktype_of_name(const char *s)
{
    if (starts(s, "nccl") || starts(s, "hip") || starts(s, "hccl") || strstr(s, "ncclKernel"))
        return GP_KT_COMMUNICATION;
    if (starts(s, "Memcpy") || starts(s, "Memset") || starts(s, "hipMemcpy") ||
        starts(s, "hipMemset") || starts(s, "dma"))
        return GP_KT_MEMORY;
    if (strstr(s, "nccl") || strstr(s, "Memcpy") || strstr(s, "Memset") || strstr(s, "dma") ||
        strstr(s, "Sync") || strstr(s, "Stream Wait Event") || cuda_launch(s))
        return GP_KT_OTHER;
    return GP_KT_COMPUTATION;
}

size_t gp_hta_merge(int64_t *iv, size_t n)
{
    return gp_intervals_merge(iv, n);
}

static int merged_slot(unsigned mask)
{
    if (mask == ~0u) return 0;
    for (int k = 0; k < 3; k++)
        if (mask == 1u << k) return k + 1;
    return -1;
}

const int64_t *gp_hview_merged(const gp_hview *v, unsigned mask, size_t *n)
{
    int k = merged_slot(mask);
    *n = k < 0 ? 0 : v->nmerged[k];
    return k < 0 ? NULL : v->merged[k];
}

size_t gp_hta_merged(const gp_hview *v, unsigned mask, int64_t **out)
{
    *out = NULL;
    int slot = merged_slot(mask);
    if (slot >= 0 && v->merged[slot]) { /* a copy of the cached list */
        size_t n = v->nmerged[slot];
        if (!n || !(*out = malloc(2 * n * sizeof **out))) return 0;
        memcpy(*out, v->merged[slot], 2 * n * sizeof **out);
        return n;
    }
    size_t m = 0;
    for (size_t i = 0; i < v->n; i++)
        if (v->ev[i].stream != -1 && (mask >> v->ev[i].ktype & 1u)) m++;
    if (!m) return 0;
    int64_t *iv = malloc(2 * m * sizeof *iv);
    if (!iv) return 0;
    m = 0;
    for (size_t i = 0; i < v->n; i++) {
        const gp_hev *e = &v->ev[i];
        if (e->stream == -1 || !(mask >> e->ktype & 1u)) continue;
        iv[2 * m] = e->ts;
        iv[2 * m + 1] = e->ts + e->dur;
        m++;
    }
    *out = iv;
    return gp_hta_merge(iv, m);
}

/* The double HTA's JSON loader holds for a value of `ns` nanoseconds written
 * as microseconds with three decimals: correctly rounded, as strtod. */
static double us_double(int64_t ns)
{
    const int64_t lim = (int64_t)1 << 53;
    if (ns > -lim && ns < lim) return (double)ns / 1000.0; /* exact / exact: correctly rounded */
    char buf[48];
    int64_t a = ns < 0 ? -ns : ns;
    snprintf(buf, sizeof buf, "%s%lld.%03lld", ns < 0 ? "-" : "", (long long)(a / 1000),
             (long long)(a % 1000));
    return strtod(buf, NULL);
}

static int has_fraction(const gp_trace *t)
{
#define FRAC(vec)                                                                                  \
    for (size_t i = 0; i < t->vec.n; i++)                                                          \
        if (t->vec.v[i].ts % 1000) return 1;
    FRAC(slices)
    FRAC(flows)
    FRAC(instants)
    FRAC(mem_events)
    FRAC(counters)
#undef FRAC
    return 0;
}

static gp_ktype ktype_of(const gp_trace *t, const gp_slice *s, int compat)
{
    if (!compat) {
        gp_kind k = gp_slice_kind(t, s);
        if (k == GP_K_SYNC) return GP_KT_OTHER;
        if (k == GP_K_MEMCPY || k == GP_K_MEMSET) return GP_KT_MEMORY;
    }
    return gp_ktype_of_name(gp_trace_s(t, s->name));
}

static int build_one(const gp_trace *t, int compat, gp_hview *v)
{
    v->t = t;
    v->compat = compat;
    v->corr_lo = INT64_MAX;
    v->corr_hi = INT64_MIN;
    v->ev = malloc((t->slices.n ? t->slices.n : 1) * sizeof *v->ev);
    /* kernel type by name id, classified once per distinct name (0xff: not yet) */
    uint32_t nstr = gp_strtab_count(t->strings);
    uint8_t *kt_of = malloc(nstr ? nstr : 1);
    if (!v->ev || !kt_of) {
        free(kt_of);
        return GP_ENOMEM;
    }
    memset(kt_of, 0xff, nstr);
    v->rounded = compat && has_fraction(t);
    int64_t off = t->meta.t0_abs_ns - (t->meta.has_base_time ? t->meta.base_time_ns : 0);
    size_t as = 0, n = 0;
    for (size_t i = 0; i < t->slices.n; i++) {
        const gp_slice *s = &t->slices.v[i];
        int64_t stream = -1;
        while (as < t->arg_streams.n && t->arg_streams.v[as].slice < i) as++;
        if (s->gpu != GP_NO_INDEX)
            stream = t->gpu_info.v[s->gpu].stream;
        else if (compat && as < t->arg_streams.n && t->arg_streams.v[as].slice == i)
            stream = t->arg_streams.v[as].stream;
        gp_kind kind = gp_slice_kind(t, s);
        if (compat) {
            if ((s->flags & GP_SLICE_FROM_BE) || kind == GP_K_TRACE_SPAN) continue;
            if (t->cats.v[s->cat].name == 0) continue; /* no category */
        }
        gp_hev e;
        e.ts = s->ts;
        e.dur = s->dur;
        if (v->rounded) {
            double a = us_double(s->ts + off), d = us_double(s->dur);
            int64_t b = (int64_t)ceil(a), en = (int64_t)floor(a + d);
            /* b * 1000 passes INT64_MAX when a time within a microsecond
             * of it rounds up (UB; aborted the sanitizer build): off's whole
             * microseconds go first. A value that still does not fit (a
             * start or end, relative to t0, or a duration within a
             * microsecond of the limit, which the double rounds past it)
             * keeps its exact time, which fits */
            int64_t rts, rdur, rend;
            if (!__builtin_mul_overflow(b - off / 1000, 1000, &rts) &&
                !__builtin_sub_overflow(rts, off % 1000, &rts) &&
                !__builtin_mul_overflow(en - b, 1000, &rdur) &&
                !__builtin_add_overflow(rts, rdur, &rend)) {
                e.ts = rts;
                e.dur = rdur;
            }
        }
        e.stream = stream;
        e.slice = (uint32_t)i;
        e.kind = (uint8_t)kind;
        if (!compat && (kind == GP_K_SYNC || kind == GP_K_MEMCPY || kind == GP_K_MEMSET)) {
            e.ktype = (uint8_t)ktype_of(t, s, compat);
        } else {
            if (kt_of[s->name] == 0xff) kt_of[s->name] = (uint8_t)ktype_of(t, s, 1);
            e.ktype = kt_of[s->name];
        }
        if (s->correlation < v->corr_lo) v->corr_lo = s->correlation;
        if (s->correlation > v->corr_hi) v->corr_hi = s->correlation;
        v->ev[n++] = e;
    }
    free(kt_of);
    v->n = n;
    return 0;
}

/* correlation id -> uint32: an array indexed by id - lo when the ids are
 * dense enough (Kineto numbers them 1, 2, 3, ... and writes events roughly
 * in that order, so the accesses are nearly sequential; 4 bytes per id in
 * range), else a hash map. */
typedef struct corrtab {
    int64_t lo;
    uint64_t n;
    uint32_t *a;
    gp_u64map m;
} corrtab;

static int ct_init(corrtab *c, const gp_hview *v)
{
    memset(c, 0, sizeof *c);
    if (v->corr_lo > v->corr_hi) return 0;
    uint64_t range = (uint64_t)v->corr_hi - (uint64_t)v->corr_lo + 1;
    if (range == 0 || range > 4 * (uint64_t)v->n + 4096) return 0;
    c->a = calloc(range, sizeof *c->a);
    c->lo = v->corr_lo;
    c->n = range;
    return c->a ? 0 : GP_ENOMEM;
}

/* every id of the view is in the array's range */
static int ct_put(corrtab *c, int64_t k, uint32_t val)
{
    if (c->a) {
        c->a[(uint64_t)k - (uint64_t)c->lo] = val;
        return 0;
    }
    return gp_u64map_put(&c->m, (uint64_t)k, val);
}

static uint32_t ct_get(const corrtab *c, int64_t k)
{
    uint64_t x = 0;
    if (c->a) {
        uint64_t i = (uint64_t)k - (uint64_t)c->lo;
        return i < c->n ? c->a[i] : 0;
    }
    gp_u64map_get(&c->m, (uint64_t)k, &x);
    return (uint32_t)x;
}

static void ct_free(corrtab *c)
{
    free(c->a);
    gp_u64map_free(&c->m);
    memset(c, 0, sizeof *c);
}

/* How many times the step filter keeps event e: a host event once when it
 * starts before the last step, a GPU event once per host event before it
 * with its correlation id (cnt). */
static uint64_t step_keeps(const gp_hview *v, const corrtab *cnt, const gp_hev *e, int64_t last)
{
    return e->stream == -1 ? (uint64_t)(e->ts < last) : ct_get(cnt, gp_hev_corr(v, e));
}

/* HTA's _filter_irrelevant_gpu_kernels: host events before the last
 * ProfilerStep, GPU events joined (inner, with multiplicity) on correlation. */
static int step_filter(gp_hview *v)
{
    int64_t last = INT64_MIN, first = INT64_MAX;
    size_t ncpu = 0;
    uint32_t nstr = gp_strtab_count(v->t->strings);
    uint8_t *isstep = malloc(nstr ? nstr : 1); /* per name id: 0/1, 0xff unknown */
    if (!isstep) return GP_ENOMEM;
    memset(isstep, 0xff, nstr);
    /* every host event's correlation id counted while the last step is
     * looked for (one read of each host event's slice); those from the
     * last step on are taken off after, reading only the view */
    corrtab cnt;
    if (ct_init(&cnt, v)) {
        free(isstep);
        return GP_ENOMEM;
    }
    for (size_t i = 0; i < v->n; i++) {
        const gp_hev *e = &v->ev[i];
        if (e->stream != -1) continue;
        ncpu++;
        if (e->ts < first) first = e->ts;
        uint32_t nm = gp_hev_name(v, e);
        if (isstep[nm] == 0xff) isstep[nm] = (uint8_t)starts(gp_trace_s(v->t, nm), "ProfilerStep");
        if (isstep[nm] && e->ts > last) last = e->ts;
        int64_t corr = gp_hev_corr(v, e);
        if (ct_put(&cnt, corr, ct_get(&cnt, corr) + 1)) {
            free(isstep);
            goto oom;
        }
    }
    free(isstep);
    if (!ncpu) {
        ct_free(&cnt);
        return 0;
    }
    if (last == INT64_MIN) last = first;
    for (size_t i = 0; i < v->n; i++) {
        const gp_hev *e = &v->ev[i];
        if (e->stream != -1 || e->ts < last) continue;
        int64_t corr = gp_hev_corr(v, e);
        if (ct_put(&cnt, corr, ct_get(&cnt, corr) - 1)) goto oom;
    }
    /* no duplicated GPU event (the usual case): compact in place, which
     * keeps the peak memory at one view; at the first GPU event that appears
     * more than once the rest is counted and the output copied out */
    gp_hev *out = v->ev;
    size_t m = 0, i = 0;
    for (; i < v->n; i++) {
        const gp_hev *e = &v->ev[i];
        uint64_t c = step_keeps(v, &cnt, e, last);
        if (c > 1) break;
        if (c) out[m++] = *e;
    }
    if (i < v->n) {
        size_t total = m;
        for (size_t k = i; k < v->n; k++) total += step_keeps(v, &cnt, &v->ev[k], last);
        out = malloc(total * sizeof *out);
        if (!out) goto oom;
        memcpy(out, v->ev, m * sizeof *out);
        for (; i < v->n; i++) {
            const gp_hev *e = &v->ev[i];
            for (uint64_t c = step_keeps(v, &cnt, e, last); c; c--) out[m++] = *e;
        }
    }
    if (out != v->ev) free(v->ev);
    v->ev = out;
    v->n = m;
    v->step_filtered = 1;
    ct_free(&cnt);
    return 0;
oom:
    ct_free(&cnt);
    return GP_ENOMEM;
}

/* HTA 0.6.1's infer_gpu_type: MTIA when distributedInfo.backend holds
 * "mtia:hccl", else when no event is named cudaLaunchKernel or
 * hipLaunchKernel and one is named "runFunction - job_prep_and_submit_for_
 * execution". HTA takes the device type of its first rank for all. */
int gp_hta_is_mtia(const gp_trace *t)
{
    if (t->meta.backend && strstr(gp_trace_s(t, t->meta.backend), "mtia:hccl")) return 1;
    uint32_t cuda = gp_strtab_find(t->strings, "cudaLaunchKernel", 16);
    uint32_t hip = gp_strtab_find(t->strings, "hipLaunchKernel", 15);
    static const char run[] = "runFunction - job_prep_and_submit_for_execution";
    uint32_t mtia = gp_strtab_find(t->strings, run, sizeof run - 1);
    if (mtia == GP_NO_INDEX) return 0;
    int has_mtia = 0;
    for (size_t i = 0; i < t->slices.n; i++) {
        uint32_t nm = t->slices.v[i].name;
        if (nm == cuda || nm == hip) return 0;
        if (nm == mtia) has_mtia = 1;
    }
    return has_mtia;
}

/* HTA's category patterns (re.match, so anchored at the start):
 * CPU_EVENTS (^cpu_op)|(^user_annotation$)|(^(.+)_runtime) and
 * KERNEL (kernel)|(gpu_mem.+)|(mtia_ccp_events). */
static int hta_cpu_cat(const char *c)
{
    return starts(c, "cpu_op") || !strcmp(c, "user_annotation") ||
           (c[0] && strstr(c + 1, "_runtime"));
}

static int hta_kernel_cat(const char *c)
{
    return starts(c, "kernel") || (starts(c, "gpu_mem") && c[7]) || starts(c, "mtia_ccp_events");
}

/* ^ProfilerStep#(\d+) */
static int hta_step_name(const char *s)
{
    return starts(s, "ProfilerStep#") && s[13] >= '0' && s[13] <= '9';
}

/* MemoryKernelGroupingPattern: (^(hip)?Memcpy)|(^(hip)?Memset)|(^dma) */
static int hta_memory_name(const char *s)
{
    return starts(s, "Memcpy") || starts(s, "Memset") || starts(s, "hipMemcpy") ||
           starts(s, "hipMemset") || starts(s, "dma");
}

/* HTA's filter_mtia_kernels_for_one_rank (trace.py): CPU events (by
 * category) inside [first ProfilerStep start, last ProfilerStep end], the
 * kernels (by category) whose correlation one of them has, and memory
 * kernels (by name) starting inside a ProfilerStep, whose stream -1 becomes
 * their tid (_fix_mtia_memory_kernels); each event once, in source order.
 * Unlike the CUDA filter, the last step is kept. */
static int mtia_filter(gp_hview *v)
{
    const gp_trace *t = v->t;
    uint32_t nstr = gp_strtab_count(t->strings);
    uint8_t *cat = calloc(t->cats.n ? t->cats.n : 1, 1); /* bit 0 CPU, bit 1 kernel */
    uint8_t *nm = malloc(nstr ? nstr : 1);               /* bit 0 step, bit 1 memory; 0xff */
    int64_t *steps = NULL;
    size_t nsteps = 0;
    corrtab keep = {0};
    int rc = GP_ENOMEM;
    if (!cat || !nm) goto done;
    memset(nm, 0xff, nstr);
    for (size_t c = 0; c < t->cats.n; c++) {
        const char *s = gp_trace_s(t, t->cats.v[c].name);
        cat[c] = (uint8_t)(hta_cpu_cat(s) | hta_kernel_cat(s) << 1);
    }
    steps = malloc((v->n ? v->n : 1) * 2 * sizeof *steps);
    if (!steps) goto done;
    int64_t t0 = INT64_MAX, t1 = INT64_MIN;
    for (size_t i = 0; i < v->n; i++) {
        const gp_hev *e = &v->ev[i];
        uint32_t name = gp_hev_name(v, e);
        if (nm[name] == 0xff) {
            const char *s = gp_trace_s(t, name);
            nm[name] = (uint8_t)(hta_step_name(s) | hta_memory_name(s) << 1);
        }
        if (!(nm[name] & 1)) continue;
        steps[2 * nsteps] = e->ts;
        steps[2 * nsteps + 1] = e->ts + e->dur;
        nsteps++;
        if (cat[t->slices.v[e->slice].cat] & 1) {
            if (e->ts < t0) t0 = e->ts;
            if (e->ts + e->dur > t1) t1 = e->ts + e->dur;
        }
    }
    if (ct_init(&keep, v)) goto done;
    for (size_t i = 0; i < v->n; i++) { /* correlations of the CPU events kept */
        const gp_hev *e = &v->ev[i];
        int64_t corr = gp_hev_corr(v, e);
        if ((cat[t->slices.v[e->slice].cat] & 1) && e->ts >= t0 && e->ts + e->dur <= t1 &&
            corr != -1 && ct_put(&keep, corr, 1))
            goto done;
    }
    size_t m = 0;
    for (size_t i = 0; i < v->n; i++) {
        gp_hev e = v->ev[i];
        uint8_t c = cat[t->slices.v[e.slice].cat];
        int in = (c & 1) && e.ts >= t0 && e.ts + e.dur <= t1;
        int64_t corr = gp_hev_corr(v, &e);
        if (!in && (c & 2) && corr != -1 && ct_get(&keep, corr)) in = 1;
        if (nm[gp_hev_name(v, &e)] & 2) {
            int mem = 0;
            for (size_t k = 0; k < nsteps && !mem; k++)
                mem = e.ts >= steps[2 * k] && e.ts <= steps[2 * k + 1];
            if (mem && e.stream == -1) e.stream = t->tracks.v[t->slices.v[e.slice].track].tid;
            in |= mem;
        }
        if (in) v->ev[m++] = e;
    }
    v->n = m;
    v->step_filtered = 1;
    rc = 0;
done:
    ct_free(&keep);
    free(steps);
    free(cat);
    free(nm);
    return rc;
}

/* Distinct ProfilerStep* names over all views (HTA's global symbol table). */
static size_t count_steps(const gp_hview *views, size_t n)
{
    char **seen = NULL;
    size_t ns = 0, cap = 0;
    for (size_t r = 0; r < n; r++) {
        const gp_hview *v = &views[r];
        for (size_t i = 0; i < v->n; i++) {
            const char *s = gp_trace_s(v->t, gp_hev_name(v, &v->ev[i]));
            if (!starts(s, "ProfilerStep")) continue;
            size_t j = 0;
            while (j < ns && strcmp(seen[j], s)) j++;
            if (j < ns) continue;
            if (ns == cap) {
                cap = cap ? 2 * cap : 8;
                seen = gp_xrealloc(seen, cap * sizeof *seen);
            }
            seen[ns++] = (char *)s;
            if (ns >= 2) {
                free(seen);
                return ns;
            }
        }
    }
    free(seen);
    return ns;
}

/* Appends [a, b) to the merged list iv[0..2*c) of intervals taken by start. */
static void merge_push(int64_t *iv, size_t *c, int64_t a, int64_t b)
{
    if (*c && a <= iv[2 * *c - 1]) {
        if (b > iv[2 * *c - 1]) iv[2 * *c - 1] = b;
    } else {
        iv[2 * *c] = a;
        iv[2 * *c + 1] = b;
        (*c)++;
    }
}

/* The shared index: GPU events by start, correlation peers, merged
 * intervals per kernel type (see gp_hview). */
/* Correlation peers, general case: correlation -> (last host + 1) | (last
 * GPU + 1) << 32 in a hash map, then each event takes the last event of the
 * other side. Sets corr_multi. */
static int peers_general(gp_hview *v)
{
    gp_u64map m = {0};
    for (size_t i = 0; i < v->n; i++) {
        const gp_hev *e = &v->ev[i];
        int64_t corr = gp_hev_corr(v, e);
        if (corr == -1) continue;
        uint64_t *p = gp_u64map_slot(&m, (uint64_t)corr, 0);
        if (!p) {
            gp_u64map_free(&m);
            return GP_ENOMEM;
        }
        int gpu = e->stream != -1;
        if (gpu ? *p >> 32 : *p & 0xffffffffu) v->corr_multi = 1;
        *p = gpu ? (*p & 0xffffffffu) | (uint64_t)(i + 1) << 32
                 : (*p & ~(uint64_t)0xffffffffu) | (uint64_t)(i + 1);
    }
    for (size_t i = 0; i < v->n; i++) {
        const gp_hev *e = &v->ev[i];
        uint64_t x = 0;
        v->peer[i] = GP_NO_INDEX;
        int64_t corr = gp_hev_corr(v, e);
        if (corr == -1 || !gp_u64map_get(&m, (uint64_t)corr, &x)) continue;
        uint64_t o = e->stream != -1 ? x & 0xffffffffu : x >> 32;
        if (o) v->peer[i] = (uint32_t)(o - 1);
    }
    gp_u64map_free(&m);
    return 0;
}

/* Correlation peers when the ids are dense: one uint32 per id (the first
 * event seen + 1); the second event of the other side pairs with it. A
 * second event of the same side, or a third event, means duplicated ids:
 * the general path then does the work. */
static int peers_dense(gp_hview *v)
{
    corrtab m;
    if (ct_init(&m, v)) return GP_ENOMEM;
    if (!m.a) return peers_general(v);
    int multi = 0;
    for (size_t i = 0; i < v->n; i++) v->peer[i] = GP_NO_INDEX;
    for (size_t i = 0; i < v->n && !multi; i++) {
        const gp_hev *e = &v->ev[i];
        int64_t corr = gp_hev_corr(v, e);
        if (corr == -1) continue;
        uint32_t *p = &m.a[(uint64_t)corr - (uint64_t)m.lo];
        if (!*p) {
            *p = (uint32_t)(i + 1);
            continue;
        }
        uint32_t j = *p - 1;
        if ((v->ev[j].stream == -1) == (e->stream == -1) || v->peer[j] != GP_NO_INDEX) {
            multi = 1;
        } else {
            v->peer[i] = j;
            v->peer[j] = (uint32_t)i;
        }
    }
    ct_free(&m);
    return multi ? peers_general(v) : 0;
}

static int build_index(gp_hview *v)
{
    int rc = GP_ENOMEM;
    int64_t *pairs = NULL;
    size_t ng = 0, cnt[4] = {0};
    for (size_t i = 0; i < v->n; i++) ng += v->ev[i].stream != -1;
    v->peer = malloc((v->n ? v->n : 1) * sizeof *v->peer);
    v->gpu = malloc((ng ? ng : 1) * sizeof *v->gpu);
    pairs = malloc((ng ? ng : 1) * 2 * sizeof *pairs);
    if (!v->peer || !v->gpu || !pairs) goto done;
    if (peers_dense(v)) goto done;
    /* GPU events (start, index), by start (stable) */
    ng = 0;
    for (size_t i = 0; i < v->n; i++) {
        const gp_hev *e = &v->ev[i];
        if (e->stream == -1) continue;
        pairs[2 * ng] = e->ts;
        pairs[2 * ng + 1] = (int64_t)i;
        ng++;
        cnt[0]++;
        if (e->ktype < 3) cnt[e->ktype + 1]++;
        if (e->dur < 0) v->reversed = 1;
    }
    gp_sort_pairs_i64(pairs, ng);
    for (size_t i = 0; i < ng; i++) v->gpu[i] = (uint32_t)pairs[2 * i + 1];
    v->ngpu = ng;
    free(pairs);
    pairs = NULL;
    /* merged intervals per type in one pass over the sorted events; with
     * reversed intervals the order of equal starts matters, so those views
     * merge through gp_hta_merge's (start, end) order instead */
    for (int s = 0; s < 4; s++) {
        v->merged[s] = malloc((cnt[s] ? cnt[s] : 1) * 2 * sizeof *v->merged[s]);
        if (!v->merged[s]) goto done;
        v->nmerged[s] = 0;
    }
    if (v->reversed) {
        for (int s = 0; s < 4; s++) {
            size_t c = 0;
            for (size_t i = 0; i < ng; i++) {
                const gp_hev *e = &v->ev[v->gpu[i]];
                if (s && e->ktype != s - 1) continue;
                v->merged[s][2 * c] = e->ts;
                v->merged[s][2 * c + 1] = e->ts + e->dur;
                c++;
            }
            v->nmerged[s] = gp_hta_merge(v->merged[s], c);
        }
    } else {
        for (size_t i = 0; i < ng; i++) {
            const gp_hev *e = &v->ev[v->gpu[i]];
            int64_t a = e->ts, b = e->ts + e->dur;
            merge_push(v->merged[0], &v->nmerged[0], a, b);
            if (e->ktype < 3) merge_push(v->merged[e->ktype + 1], &v->nmerged[e->ktype + 1], a, b);
        }
    }
    for (int s = 0; s < 4; s++) { /* give back the unused tail */
        int64_t *p = realloc(v->merged[s], (v->nmerged[s] ? v->nmerged[s] : 1) * 2 * sizeof *p);
        if (p) v->merged[s] = p;
    }
    rc = 0;
done:
    free(pairs);
    return rc;
}

/* Work on the views of several ranks, one thread per core (stage 0: build,
 * stage 1: the step filter when asked, then the index). */
/* The step filter of one view: HTA's MTIA filter for an MTIA trace, else
 * the CUDA/ROCm last-ProfilerStep filter. HTA takes the device type of the
 * first rank for every rank; here each rank's own type decides, which is
 * the same for every job that runs on one kind of accelerator, and lets the
 * worker pool decide it one rank at a time (docs/analyze.md). */
static int apply_filter(gp_hview *v)
{
    return gp_hta_is_mtia(v->t) ? mtia_filter(v) : step_filter(v);
}

typedef struct prep_job {
    gp_trace *const *traces;
    gp_hview *views;
    size_t n, first, stride;
    int stage, compat, filter, failed;
} prep_job;

static void *prep_main(void *arg)
{
    prep_job *j = arg;
    for (size_t i = j->first; i < j->n; i += j->stride) {
        gp_hview *v = &j->views[i];
        if (j->stage == 0)
            j->failed |= build_one(j->traces[i], j->compat, v) != 0;
        else
            j->failed |= (j->filter && apply_filter(v)) || build_index(v);
    }
    return NULL;
}

static int prep_stage(gp_trace *const *traces, gp_hview *views, size_t n, int stage, int compat,
                      int filter)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    size_t nth = cores > 1 ? (size_t)cores : 1;
    if (nth > n) nth = n;
    if (nth > 64) nth = 64;
    prep_job jobs[64];
    pthread_t th[64];
    int started[64] = {0}, failed = 0;
    for (size_t k = 0; k < nth; k++) {
        jobs[k] = (prep_job){traces, views, n, k, nth, stage, compat, filter, 0};
        started[k] = k > 0 && pthread_create(&th[k], NULL, prep_main, &jobs[k]) == 0;
    }
    if (nth) prep_main(&jobs[0]);
    for (size_t k = 1; k < nth; k++) {
        if (started[k])
            pthread_join(th[k], NULL);
        else
            prep_main(&jobs[k]);
    }
    for (size_t k = 0; k < nth; k++) failed |= jobs[k].failed;
    return failed ? GP_ENOMEM : 0;
}

int gp_hta_build(const gp_trace *t, int rank, const gp_hta_opts *o, gp_hview *v)
{
    memset(v, 0, sizeof *v);
    v->rank = rank;
    if (build_one(t, o->compat, v)) {
        gp_hview_free(v);
        return GP_ENOMEM;
    }
    return 0;
}

size_t gp_hta_step_names(const gp_hview *v, const char **names, size_t max)
{
    size_t ns = 0;
    for (size_t i = 0; i < v->n && ns < max; i++) {
        const char *s = gp_trace_s(v->t, gp_hev_name(v, &v->ev[i]));
        if (!starts(s, "ProfilerStep")) continue;
        size_t j = 0;
        while (j < ns && strcmp(names[j], s)) j++;
        if (j == ns) names[ns++] = s;
    }
    return ns;
}

int gp_hta_finish(gp_hview *v, int filter)
{
    if ((filter && apply_filter(v)) || build_index(v)) {
        gp_hview_free(v);
        return GP_ENOMEM;
    }
    return 0;
}

int gp_hta_prepare(gp_trace *const *traces, const int *ranks, size_t n, const gp_hta_opts *o,
                   gp_hview *views, gp_err *err)
{
    memset(views, 0, n * sizeof *views);
    for (size_t i = 0; i < n; i++) views[i].rank = ranks[i];
    if (prep_stage(traces, views, n, 0, o->compat, 0)) goto oom;
    int filter = o->compat && count_steps(views, n) >= 2;
    if (prep_stage(traces, views, n, 1, o->compat, filter)) goto oom;
    return 0;
oom:
    for (size_t i = 0; i < n; i++) gp_hview_free(&views[i]);
    return gp_err_set(err, GP_ENOMEM, "out of memory while preparing the analysis view");
}

void gp_hview_free(gp_hview *v)
{
    if (!v) return;
    free(v->ev);
    free(v->gpu);
    free(v->peer);
    for (int s = 0; s < 4; s++) {
        free(v->merged[s]);
        v->merged[s] = NULL;
        v->nmerged[s] = 0;
    }
    v->ev = NULL;
    v->gpu = NULL;
    v->peer = NULL;
    v->n = v->ngpu = 0;
}
