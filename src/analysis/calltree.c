/* analysis/calltree.c: slice nesting per track and the merged call tree
 * (flame graph data) from traces or folded stacks. */
#include "analysis/calltree.h"
#include "core/stats.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

unsigned gp_kind_mask_cpu(void)
{
    unsigned m = 0;
    for (int k = 0; k < GP_K__COUNT; k++)
        if (!gp_kind_is_gpu((gp_kind)k) && k != GP_K_TRACE_SPAN) m |= GP_KIND_BIT(k);
    return m;
}

unsigned gp_kind_mask_gpu_work(void)
{
    return GP_KIND_BIT(GP_K_KERNEL) | GP_KIND_BIT(GP_K_MEMCPY) | GP_KIND_BIT(GP_K_MEMSET) |
           GP_KIND_BIT(GP_K_CL_COMMAND);
}

typedef struct sort_key {
    int64_t ts, dur;
    uint32_t idx;
} sort_key;

static int cmp_key(const void *a, const void *b)
{
    const sort_key *x = a, *y = b;
    if (x->ts != y->ts) return x->ts < y->ts ? -1 : 1;
    if (x->dur != y->dur) return x->dur > y->dur ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Sorts k[0..n) by cmp_key (a total order: one result whatever the
 * algorithm) with a natural merge sort: the ascending runs are merged pairwise
 * through tmp (room for n keys) and run (room for n + 1 indexes). A track's
 * slices come in a few time-ordered runs (one per file, tile or event
 * type), so this is linear or nearly; O(n log n) at worst. */
static void nest_sort(sort_key *k, size_t n, sort_key *tmp, size_t *run)
{
    size_t nr = 0;
    run[nr++] = 0;
    for (size_t i = 1; i < n; i++)
        if (cmp_key(&k[i - 1], &k[i]) > 0) run[nr++] = i;
    run[nr] = n;
    sort_key *src = k, *dst = tmp;
    while (nr > 1) {
        size_t out = 0;
        for (size_t r = 0; r < nr; r += 2) {
            size_t a = run[r], m = run[r + 1], b = r + 2 <= nr ? run[r + 2] : m, i = a, j = m,
                   o = a;
            while (i < m && j < b) dst[o++] = cmp_key(&src[j], &src[i]) < 0 ? src[j++] : src[i++];
            memcpy(dst + o, src + i, (m - i) * sizeof *dst);
            o += m - i;
            memcpy(dst + o, src + j, (b - j) * sizeof *dst);
            run[out++] = a;
        }
        run[out] = n;
        nr = out;
        sort_key *sw = src;
        src = dst;
        dst = sw;
    }
    if (src != k) memcpy(k, src, n * sizeof *k);
}

int gp_nesting_build(const gp_trace *t, unsigned kind_mask, gp_nesting *out)
{
    memset(out, 0, sizeof *out);
    size_t nt = t->tracks.n;
    out->ntracks = nt;
    out->track_first = calloc(nt + 2, sizeof *out->track_first);
    if (!out->track_first) return GP_ENOMEM;
    size_t total = 0;
    for (size_t i = 0; i < t->slices.n; i++) {
        const gp_slice *s = &t->slices.v[i];
        if (!(kind_mask & GP_KIND_BIT(gp_slice_kind(t, s))) || s->dur < 0) continue;
        out->track_first[s->track + 1]++;
        total++;
    }
    for (size_t k = 0; k < nt; k++) out->track_first[k + 1] += out->track_first[k];
    sort_key *keys = malloc((total ? total : 1) * sizeof *keys);
    size_t *fill = malloc((nt + 1) * sizeof *fill);
    out->items = malloc((total ? total : 1) * sizeof *out->items);
    if (!keys || !fill || !out->items) {
        free(keys);
        free(fill);
        gp_nesting_free(out);
        return GP_ENOMEM;
    }
    memcpy(fill, out->track_first, (nt + 1) * sizeof *fill);
    for (size_t i = 0; i < t->slices.n; i++) {
        const gp_slice *s = &t->slices.v[i];
        if (!(kind_mask & GP_KIND_BIT(gp_slice_kind(t, s))) || s->dur < 0) continue;
        keys[fill[s->track]++] = (sort_key){s->ts, s->dur, (uint32_t)i};
    }
    free(fill);
    out->n = total;
    /* per track: sort, then one pass with a stack of open items */
    size_t most = 0;
    for (size_t k = 0; k < nt; k++)
        if (out->track_first[k + 1] - out->track_first[k] > most)
            most = out->track_first[k + 1] - out->track_first[k];
    sort_key *tmp = malloc((most ? most : 1) * sizeof *tmp);
    size_t *run = malloc((most + 1) * sizeof *run);
    if (!tmp || !run) {
        free(tmp);
        free(run);
        free(keys);
        gp_nesting_free(out);
        return GP_ENOMEM;
    }
    GP_VEC(uint32_t) stack = {0};
    for (size_t k = 0; k < nt; k++) {
        size_t a = out->track_first[k], b = out->track_first[k + 1];
        if (b - a > 1) nest_sort(keys + a, b - a, tmp, run);
        stack.n = 0;
        for (size_t i = a; i < b; i++) {
            int64_t ts = keys[i].ts, end = ts + keys[i].dur;
            while (stack.n && out->items[stack.v[stack.n - 1]].end <= ts) stack.n--;
            gp_nest_item it = {keys[i].idx, GP_NO_INDEX, end, 0};
            if (stack.n) {
                const gp_nest_item *p = &out->items[stack.v[stack.n - 1]];
                it.parent = stack.v[stack.n - 1];
                it.depth = p->depth + 1;
                if (end > p->end) {
                    it.end = p->end;
                    out->clipped++;
                }
            }
            out->items[i] = it;
            if (GP_VEC_PUSH(stack, (uint32_t)i)) {
                GP_VEC_FREE(stack);
                free(keys);
                free(tmp);
                free(run);
                gp_nesting_free(out);
                return GP_ENOMEM;
            }
        }
    }
    GP_VEC_FREE(stack);
    free(keys);
    free(tmp);
    free(run);
    return 0;
}

void gp_nesting_free(gp_nesting *n)
{
    free(n->items);
    free(n->track_first);
    memset(n, 0, sizeof *n);
}

/* ---- merged call tree ------------------------------------------------- */

static uint64_t node_key(uint32_t parent, uint32_t name, int kind)
{
    return gp_hash_u64(((uint64_t)parent << 32 | name) ^ ((uint64_t)kind << 61));
}

int gp_ftree_init(gp_ftree *f, const char *unit)
{
    memset(f, 0, sizeof *f);
    f->unit = unit;
    f->names = gp_strtab_create();
    if (!f->names) return GP_ENOMEM;
    f->owns_names = 1;
    gp_fnode root = {gp_strtab_intern(f->names, "all", 3),
                     GP_NO_INDEX,
                     GP_NO_INDEX,
                     GP_NO_INDEX,
                     0,
                     GP_FK_ROOT,
                     0,
                     0};
    if (root.name == UINT32_MAX || GP_VEC_PUSH(f->nodes, root)) {
        gp_ftree_fini(f);
        return GP_ENOMEM;
    }
    f->indexed = 1;
    return 0;
}

void gp_ftree_fini(gp_ftree *f)
{
    if (f->owns_names) gp_strtab_destroy(f->names);
    GP_VEC_FREE(f->nodes);
    free(f->slots);
    f->slots = NULL;
    f->cap = f->used = 0;
    f->names = NULL;
}

static int index_grow(gp_ftree *f)
{
    size_t nc = f->cap ? f->cap * 2 : 1024;
    uint64_t *ns = calloc(nc, sizeof *ns);
    if (!ns) return GP_ENOMEM;
    for (size_t i = 0; i < f->cap; i++) {
        uint64_t v = f->slots[i];
        if (!v) continue;
        size_t j = (uint32_t)v & (nc - 1); /* the tag holds the hash's low bits */
        while (ns[j]) j = (j + 1) & (nc - 1);
        ns[j] = v;
    }
    free(f->slots);
    f->slots = ns;
    f->cap = nc;
    return 0;
}

/* Adds nodes [f->indexed, f->nodes.n) to the index (nodes appended by the
 * folded-stacks builder are indexed only when a later lookup needs them). */
static int index_sync(gp_ftree *f)
{
    for (; f->indexed < f->nodes.n; f->indexed++) {
        if ((f->used + 1) * 4 > f->cap * 3 && index_grow(f)) return GP_ENOMEM;
        const gp_fnode *nd = &f->nodes.v[f->indexed];
        uint32_t tag = (uint32_t)node_key(nd->parent, nd->name, nd->kind);
        size_t j = tag & (f->cap - 1);
        while (f->slots[j]) j = (j + 1) & (f->cap - 1);
        f->slots[j] = ((uint64_t)f->indexed + 1) << 32 | tag;
        f->used++;
    }
    return 0;
}

/* The indexed child of parent with string id `id` and kind, or GP_NO_INDEX. */
static uint32_t index_find(const gp_ftree *f, uint32_t parent, uint32_t id, int kind)
{
    if (!f->cap) return GP_NO_INDEX;
    uint32_t tag = (uint32_t)node_key(parent, id, kind);
    for (size_t j = tag & (f->cap - 1);; j = (j + 1) & (f->cap - 1)) {
        uint64_t v = f->slots[j];
        if (!v) return GP_NO_INDEX;
        if ((uint32_t)v != tag) continue;
        const gp_fnode *c = &f->nodes.v[(v >> 32) - 1];
        if (c->parent == parent && c->name == id && c->kind == kind)
            return (uint32_t)((v >> 32) - 1);
    }
}

/* The child of parent with string id `id` and kind, created when absent. One
 * probe sequence over a single array; the 32-bit tag avoids touching nodes
 * that merely share a slot. */
static uint32_t child_id(gp_ftree *f, uint32_t parent, uint32_t id, int kind)
{
    if (f->indexed < f->nodes.n && index_sync(f)) return GP_NO_INDEX;
    if ((f->used + 1) * 4 > f->cap * 3 && index_grow(f)) return GP_NO_INDEX;
    uint64_t h = node_key(parent, id, kind);
    uint32_t tag = (uint32_t)h;
    size_t j = tag & (f->cap - 1);
    for (;; j = (j + 1) & (f->cap - 1)) {
        uint64_t v = f->slots[j];
        if (!v) break;
        if ((uint32_t)v != tag) continue;
        const gp_fnode *c = &f->nodes.v[(v >> 32) - 1];
        if (c->parent == parent && c->name == id && c->kind == kind)
            return (uint32_t)((v >> 32) - 1);
    }
    uint32_t idx = (uint32_t)f->nodes.n;
    gp_fnode nd = {id,
                   parent,
                   GP_NO_INDEX,
                   f->nodes.v[parent].first_child,
                   f->nodes.v[parent].depth + 1,
                   (uint8_t)kind,
                   0,
                   0};
    if (GP_VEC_PUSH(f->nodes, nd)) return GP_NO_INDEX;
    f->nodes.v[parent].first_child = idx;
    f->slots[j] = ((uint64_t)idx + 1) << 32 | tag;
    f->used++;
    f->indexed = f->nodes.n;
    return idx;
}

uint32_t gp_ftree_child(gp_ftree *f, uint32_t parent, const char *name, size_t n, int kind)
{
    uint32_t id = gp_strtab_intern(f->names, name, n);
    if (id == UINT32_MAX) return GP_NO_INDEX;
    return child_id(f, parent, id, kind);
}

void gp_ftree_finish(gp_ftree *f)
{
    /* weights saturate at the int64 limits (hostile traces of century-long
     * events), as every total of the summary does */
    for (size_t i = 0; i < f->nodes.n; i++) f->nodes.v[i].total = f->nodes.v[i].self;
    for (size_t i = f->nodes.n; i-- > 1;) {
        gp_fnode *pa = &f->nodes.v[f->nodes.v[i].parent];
        pa->total = gp_sat_add_i64(pa->total, f->nodes.v[i].total);
    }
}

static uint32_t child_s(gp_ftree *f, uint32_t parent, const char *s, int kind)
{
    return gp_ftree_child(f, parent, s, strlen(s), kind);
}

int gp_ftree_add_trace(gp_ftree *f, const gp_trace *t, const char *prefix)
{
    uint32_t top = 0;
    if (prefix && (top = child_s(f, 0, prefix, GP_FK_THREAD)) == GP_NO_INDEX) return GP_ENOMEM;
    gp_nesting nest;
    if (gp_nesting_build(t, gp_kind_mask_cpu(), &nest)) return GP_ENOMEM;
    f->clipped += nest.clipped;
    uint32_t *node_of = malloc((nest.n ? nest.n : 1) * sizeof *node_of);
    gp_u64map launch = {0}; /* correlation -> tree node of the launching call */
    int rc = GP_ENOMEM;
    if (!node_of) goto done;
    char buf[512];
    for (size_t k = 0; k < nest.ntracks; k++) {
        size_t a = nest.track_first[k], b = nest.track_first[k + 1];
        if (a == b) continue;
        const gp_track *tk = &t->tracks.v[k];
        const char *tn = tk->name ? gp_trace_s(t, tk->name) : "";
        if (*tn)
            snprintf(buf, sizeof buf, "%s (pid %lld tid %lld)", tn, (long long)tk->pid,
                     (long long)tk->tid);
        else
            snprintf(buf, sizeof buf, "thread %lld (pid %lld)", (long long)tk->tid,
                     (long long)tk->pid);
        uint32_t troot = child_s(f, top, buf, GP_FK_THREAD);
        if (troot == GP_NO_INDEX) goto done;
        for (size_t i = a; i < b; i++) {
            const gp_nest_item *it = &nest.items[i];
            const gp_slice *s = &t->slices.v[it->slice];
            gp_kind kind = gp_slice_kind(t, s);
            int fk = (kind == GP_K_RUNTIME || kind == GP_K_DRIVER) ? GP_FK_RUNTIME : GP_FK_CPU;
            uint32_t parent = it->parent == GP_NO_INDEX ? troot : node_of[it->parent];
            uint32_t nd = gp_ftree_child(f, parent, gp_trace_s(t, s->name),
                                         gp_strtab_len(t->strings, s->name), fk);
            if (nd == GP_NO_INDEX) goto done;
            node_of[i] = nd;
            int64_t d = gp_sat_sub_i64(it->end, s->ts);
            f->nodes.v[nd].self = gp_sat_add_i64(f->nodes.v[nd].self, d);
            if (it->parent != GP_NO_INDEX)
                f->nodes.v[parent].self = gp_sat_sub_i64(f->nodes.v[parent].self, d);
            if (fk == GP_FK_RUNTIME && s->correlation != GP_NONE &&
                gp_u64map_put(&launch, (uint64_t)s->correlation, nd))
                goto done;
        }
    }
    unsigned gm = gp_kind_mask_gpu_work();
    for (size_t i = 0; i < t->slices.n; i++) {
        const gp_slice *s = &t->slices.v[i];
        if (!(gm & GP_KIND_BIT(gp_slice_kind(t, s))) || s->dur < 0) continue;
        uint64_t v;
        uint32_t parent;
        if (s->correlation != GP_NONE && gp_u64map_get(&launch, (uint64_t)s->correlation, &v)) {
            parent = (uint32_t)v;
            f->gpu_attached++;
        } else {
            const gp_track *tk = &t->tracks.v[s->track];
            if (tk->type == GP_TRACK_GPU)
                snprintf(buf, sizeof buf, "GPU %d stream %lld (launch not found)", tk->device,
                         gp_stream_shown(tk->stream));
            else
                snprintf(buf, sizeof buf, "GPU pid %lld tid %lld (launch not found)",
                         (long long)tk->pid, (long long)tk->tid);
            parent = child_s(f, top, buf, GP_FK_THREAD);
            if (parent == GP_NO_INDEX) goto done;
            f->gpu_unattributed++;
        }
        uint32_t nd = gp_ftree_child(f, parent, gp_trace_s(t, s->name),
                                     gp_strtab_len(t->strings, s->name), GP_FK_GPU);
        if (nd == GP_NO_INDEX) goto done;
        f->nodes.v[nd].self = gp_sat_add_i64(f->nodes.v[nd].self, s->dur);
    }
    rc = 0;
done:
    free(node_of);
    gp_u64map_free(&launch);
    gp_nesting_free(&nest);
    return rc;
}

/* rank[id] = position of name `id` in byte order (strcmp, then id), for every
 * name of the table; NULL on out of memory. The caller frees. */
static int cmp_name(const void *a, const void *b, void *ctx)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    int c = strcmp(gp_strtab_get(ctx, x), gp_strtab_get(ctx, y));
    return c ? c : (x > y) - (x < y);
}

static uint32_t *name_ranks(const gp_strtab *names)
{
    uint32_t n = gp_strtab_count(names);
    uint32_t *ord = malloc((n ? n : 1) * sizeof *ord), *rank = malloc((n ? n : 1) * sizeof *rank);
    if (!ord || !rank) {
        free(ord);
        free(rank);
        return NULL;
    }
    for (uint32_t i = 0; i < n; i++) ord[i] = i;
    qsort_r(ord, n, sizeof *ord, cmp_name, (void *)names);
    for (uint32_t i = 0; i < n; i++) rank[ord[i]] = i;
    free(ord);
    return rank;
}

/* One parsed folded line: its frames are ids[off, off + len); its count is kept apart. */
typedef struct fline {
    uint32_t off, len; /* 8 bytes: the sort visits lines in permuted order */
} fline;

typedef struct frame_ref {
    const char *s;
    size_t len;
    uint32_t id;
} frame_ref;

typedef GP_VEC(uint32_t) u32vec;
typedef GP_VEC(fline) flinevec;
typedef GP_VEC(int64_t) i64vec;

/* The parser's own name -> id cache in front of the string table: one probe
 * touches one entry holding the full hash, the length and the interned copy. */
typedef struct name_slot {
    uint64_t h;
    const char *s; /* the table's copy (stable), NULL when empty */
    uint32_t len, id;
} name_slot;

typedef struct name_cache {
    name_slot *v;
    size_t cap, n;
} name_cache;

static uint32_t cache_intern(name_cache *c, gp_strtab *names, const char *s, size_t len)
{
    if ((c->n + 1) * 2 > c->cap) {
        size_t nc = c->cap ? c->cap * 2 : 4096;
        name_slot *nv = calloc(nc, sizeof *nv);
        if (!nv) return UINT32_MAX;
        for (size_t i = 0; i < c->cap; i++) {
            if (!c->v[i].s) continue;
            size_t j = c->v[i].h & (nc - 1);
            while (nv[j].s) j = (j + 1) & (nc - 1);
            nv[j] = c->v[i];
        }
        free(c->v);
        c->v = nv;
        c->cap = nc;
    }
    uint64_t h = gp_hash_bytes(s, len);
    size_t j = h & (c->cap - 1);
    for (; c->v[j].s; j = (j + 1) & (c->cap - 1))
        if (c->v[j].h == h && c->v[j].len == len && !memcmp(c->v[j].s, s, len)) return c->v[j].id;
    uint32_t id = gp_strtab_intern(names, s, len);
    if (id == UINT32_MAX || len >= UINT32_MAX) return UINT32_MAX;
    c->v[j] = (name_slot){h, gp_strtab_get(names, id), (uint32_t)len, id};
    c->n++;
    return id;
}

/* Pass 1: every line's count and frame ids (interned in f->names). The
 * previous frame seen at each depth is remembered, so repeated stack
 * prefixes are interned without hashing. */
static int folded_parse(gp_ftree *f, const char *data, size_t n, const char *name, gp_err *err,
                        flinevec *lines, i64vec *cnts, u32vec *ids)
{
    const char *p = data, *lim = data + n;
    size_t line = 0;
    GP_VEC(frame_ref) prev = {0};
    name_cache cache = {0};
    int rc = 0;
    if (GP_VEC_RESERVE(*ids, n / 8 + 16) || GP_VEC_RESERVE(*lines, n / 64 + 16) ||
        GP_VEC_RESERVE(*cnts, n / 64 + 16))
        goto nomem;
    while (p < lim) {
        const char *eol = memchr(p, '\n', (size_t)(lim - p));
        if (!eol) eol = lim;
        line++;
        const char *e = eol;
        if (e > p && e[-1] == '\r') e--;
        while (e > p && (e[-1] == ' ' || e[-1] == '\t')) e--;
        if (e == p || *p == '#') {
            p = eol + 1;
            continue;
        }
        /* the count is the last space-separated field */
        const char *c = e;
        while (c > p && c[-1] != ' ' && c[-1] != '\t') c--;
        if (c == p || c == e) {
            rc = gp_err_set(err, GP_EPARSE, "%s:%zu: expected 'frame;frame;... COUNT'", name, line);
            goto out;
        }
        int64_t cnt = 0, frac_num = 0, frac_den = 1;
        const char *q = c;
        int digits = 0;
        while (q < e && *q >= '0' && *q <= '9') {
            if (cnt > (INT64_MAX - 9) / 10) {
                rc = gp_err_set(err, GP_EPARSE, "%s:%zu: count too large", name, line);
                goto out;
            }
            cnt = cnt * 10 + (*q++ - '0');
            digits++;
        }
        if (q < e && *q == '.') {
            q++;
            while (q < e && *q >= '0' && *q <= '9') {
                if (frac_den < 1000000000) {
                    frac_num = frac_num * 10 + (*q - '0');
                    frac_den *= 10;
                }
                q++;
                digits++;
            }
        }
        if (q != e || !digits) {
            rc = gp_err_set(err, GP_EPARSE, "%s:%zu: the count '%.*s' is not a number", name, line,
                            (int)(e - c), c);
            goto out;
        }
        if (frac_num * 2 >= frac_den) cnt++;
        const char *se = c;
        while (se > p && (se[-1] == ' ' || se[-1] == '\t')) se--;
        fline fl = {(uint32_t)ids->n, 0};
        size_t depth = 0;
        for (const char *s = p; s < se;) {
            const char *semi = memchr(s, ';', (size_t)(se - s));
            if (!semi) semi = se;
            if (semi > s) {
                size_t len = (size_t)(semi - s);
                uint32_t id;
                if (depth < prev.n && prev.v[depth].len == len &&
                    !memcmp(prev.v[depth].s, s, len)) {
                    id = prev.v[depth].id;
                } else {
                    id = cache_intern(&cache, f->names, s, len);
                    if (id == UINT32_MAX) goto nomem;
                    frame_ref fr = {s, len, id};
                    if (depth < prev.n)
                        prev.v[depth] = fr;
                    else if (GP_VEC_PUSH(prev, fr))
                        goto nomem;
                }
                if (GP_VEC_PUSH(*ids, id)) goto nomem;
                depth++;
            }
            s = semi + 1;
        }
        if (ids->n >= UINT32_MAX || lines->n >= UINT32_MAX - 1) {
            rc = gp_err_set(err, GP_EPARSE, "%s:%zu: too many stacks or frames", name, line);
            goto out;
        }
        fl.len = (uint32_t)depth;
        if (GP_VEC_PUSH(*lines, fl) || GP_VEC_PUSH(*cnts, cnt)) goto nomem;
        p = eol + 1;
    }
    goto out;
nomem:
    rc = gp_err_set(err, GP_ENOMEM, "out of memory");
out:
    GP_VEC_FREE(prev);
    free(cache.v);
    return rc;
}

/* Compares the frames of lines x and y from depth d on (a prefix first). */
static int seq_cmp(const fline *x, const fline *y, const uint32_t *ids, uint32_t d)
{
    uint32_t m = x->len < y->len ? x->len : y->len;
    const uint32_t *a = ids + x->off, *b = ids + y->off;
    for (; d < m; d++)
        if (a[d] != b[d]) return a[d] < b[d] ? -1 : 1;
    return (x->len > y->len) - (x->len < y->len);
}

typedef struct sort_range {
    size_t a, b;
    uint32_t d;
} sort_range;

/* Sorts k[0..n) by their upper 32 bits (< 2^kbits): LSD radix, 8 bits a pass. */
static void sort_keys(uint64_t *k, uint64_t *tmp, size_t n, unsigned kbits)
{
    uint64_t *src = k, *dst = tmp;
    for (unsigned shift = 32; shift < 32 + kbits; shift += 8) {
        size_t cnt[257] = {0};
        for (size_t i = 0; i < n; i++) cnt[((src[i] >> shift) & 255) + 1]++;
        for (int d = 0; d < 256; d++) cnt[d + 1] += cnt[d];
        for (size_t i = 0; i < n; i++) dst[cnt[(src[i] >> shift) & 255]++] = src[i];
        uint64_t *x = src;
        src = dst;
        dst = x;
    }
    if (src != k) memcpy(k, src, n * sizeof *k);
}

/* Pass 2: orders lines by their frame sequences (ids hold name ranks < nn):
 * MSD radix, one frame depth at a time, insertion sort for short ranges. */
static int folded_sort(const fline *L, size_t nl, const uint32_t *ids, uint32_t nn, uint32_t *ord)
{
    unsigned kbits = 1;
    while (kbits < 32 && (uint64_t)nn + 1 >= (uint64_t)1 << kbits) kbits++;
    uint64_t *key = malloc((nl ? nl : 1) * sizeof *key), *tmp = malloc((nl ? nl : 1) * sizeof *tmp);
    GP_VEC(sort_range) st = {0};
    if (!key || !tmp || GP_VEC_PUSH(st, ((sort_range){0, nl, 0}))) {
        free(tmp);
        free(key);
        GP_VEC_FREE(st);
        return GP_ENOMEM;
    }
    for (size_t i = 0; i < nl; i++) ord[i] = (uint32_t)i;
    while (st.n) {
        sort_range r = st.v[--st.n];
        size_t a = r.a, b = r.b;
        if (b - a <= 16) {
            for (size_t i = a + 1; i < b; i++) {
                uint32_t v = ord[i];
                size_t j = i;
                while (j > a && seq_cmp(&L[ord[j - 1]], &L[v], ids, r.d) > 0) {
                    ord[j] = ord[j - 1];
                    j--;
                }
                ord[j] = v;
            }
            continue;
        }
        int same = 1;
        for (size_t i = a; i < b; i++) {
            /* lines are visited in permuted order: fetch ahead (line, then its frames) */
            if (i + 32 < b) __builtin_prefetch(&L[ord[i + 32]]);
            if (i + 16 < b) __builtin_prefetch(ids + L[ord[i + 16]].off + r.d);
            const fline *l = &L[ord[i]];
            uint64_t k = r.d < l->len ? (uint64_t)ids[l->off + r.d] + 1 : 0;
            key[i] = k << 32 | ord[i];
            same &= (key[i] >> 32) == (key[a] >> 32);
        }
        if (same) { /* one shared frame at this depth: look one deeper */
            if (key[a] >> 32 && GP_VEC_PUSH(st, ((sort_range){a, b, r.d + 1}))) goto nomem;
            continue;
        }
        sort_keys(key + a, tmp, b - a, kbits);
        for (size_t i = a; i < b;) {
            size_t j = i + 1;
            while (j < b && key[j] >> 32 == key[i] >> 32) j++;
            for (size_t k = i; k < j; k++) ord[k] = (uint32_t)key[k];
            if (j - i > 1 && key[i] >> 32 && GP_VEC_PUSH(st, ((sort_range){i, j, r.d + 1})))
                goto nomem;
            i = j;
        }
    }
    free(key);
    free(tmp);
    GP_VEC_FREE(st);
    return 0;
nomem:
    free(tmp);
    free(key);
    GP_VEC_FREE(st);
    return GP_ENOMEM;
}

int gp_ftree_add_folded(gp_ftree *f, const char *data, size_t n, const char *name, gp_err *err)
{
    flinevec lines = {0};
    i64vec cnts = {0};
    u32vec ids = {0}, path = {0};
    uint32_t *rank = NULL, *inv = NULL, *ord = NULL;
    int rc = folded_parse(f, data, n, name, err, &lines, &cnts, &ids);
    if (rc) goto out;
    /* frames as name ranks, so that sorted lines give children in name order */
    uint32_t nn = gp_strtab_count(f->names);
    rank = name_ranks(f->names);
    inv = malloc((nn ? nn : 1) * sizeof *inv);
    ord = malloc((lines.n ? lines.n : 1) * sizeof *ord);
    if (!rank || !inv || !ord) goto nomem;
    for (uint32_t i = 0; i < nn; i++) inv[rank[i]] = i;
    for (size_t i = 0; i < ids.n; i++) ids.v[i] = rank[ids.v[i]];
    if (folded_sort(lines.v, lines.n, ids.v, nn, ord) || index_sync(f)) goto nomem;
    /* Pass 3: merge in sorted order. A line shares its first `common` frames
     * with the previous one (same nodes). Below an existing node a frame is
     * looked up in the index; below a node made by this call it cannot exist
     * yet (its stacks are contiguous in sorted order), so it is appended,
     * after the previous line's node at that depth (its older sibling). */
    size_t base = f->nodes.n;
    uint32_t plen = 0;
    const uint32_t *pq = NULL;
    for (size_t r = 0; r < lines.n; r++) {
        if (r + 32 < lines.n) __builtin_prefetch(&lines.v[ord[r + 32]]);
        if (r + 16 < lines.n) __builtin_prefetch(ids.v + lines.v[ord[r + 16]].off);
        const fline *l = &lines.v[ord[r]];
        const uint32_t *q = ids.v + l->off;
        uint32_t common = 0, m = l->len < plen ? l->len : plen;
        while (common < m && q[common] == pq[common]) common++;
        if (GP_VEC_RESERVE(path, l->len)) goto nomem;
        uint32_t nd = common ? path.v[common - 1] : 0;
        for (uint32_t d = common; d < l->len; d++) {
            uint32_t id = inv[q[d]], c = GP_NO_INDEX;
            if (nd < base) c = index_find(f, nd, id, GP_FK_CPU);
            if (c == GP_NO_INDEX) {
                c = (uint32_t)f->nodes.n;
                gp_fnode node = {
                    id, nd, GP_NO_INDEX, GP_NO_INDEX, f->nodes.v[nd].depth + 1, GP_FK_CPU, 0, 0};
                if (c == GP_NO_INDEX || GP_VEC_PUSH(f->nodes, node)) goto nomem;
                gp_fnode *sib = d == common && d < plen ? &f->nodes.v[path.v[d]] : NULL;
                if (sib && sib->parent == nd) {
                    f->nodes.v[c].next_sibling = sib->next_sibling;
                    sib->next_sibling = c;
                } else {
                    f->nodes.v[c].next_sibling = f->nodes.v[nd].first_child;
                    f->nodes.v[nd].first_child = c;
                }
            }
            path.v[d] = c;
            nd = c;
        }
        path.n = l->len;
        f->nodes.v[nd].self = gp_sat_add_i64(f->nodes.v[nd].self, cnts.v[ord[r]]);
        pq = q;
        plen = l->len;
    }
    goto out;
nomem:
    rc = gp_err_set(err, GP_ENOMEM, "out of memory");
out:
    GP_VEC_FREE(lines);
    GP_VEC_FREE(cnts);
    GP_VEC_FREE(ids);
    GP_VEC_FREE(path);
    free(rank);
    free(inv);
    free(ord);
    return rc;
}

/* Iterative DFS over `in`, mapping each node to the node of `out` that
 * receives its weight. out shares in's names, so nodes are found by id. */
int gp_ftree_prune(gp_ftree *in, const gp_ftree_prune_opts *o, gp_ftree *out)
{
    memset(out, 0, sizeof *out);
    out->unit = in->unit;
    out->names = in->names;
    out->owns_names = 0;
    out->clipped = in->clipped;
    out->gpu_attached = in->gpu_attached;
    out->gpu_unattributed = in->gpu_unattributed;
    uint32_t group = gp_strtab_intern(in->names, "[small GPU work]", 16);
    uint32_t other = gp_strtab_intern(in->names, "(other)", 7);
    gp_fnode root = in->nodes.v[0];
    root.first_child = root.next_sibling = GP_NO_INDEX;
    root.total = 0;
    uint32_t *map = malloc(in->nodes.n * sizeof *map);
    GP_VEC(uint32_t) stack = {0};
    int rc = GP_ENOMEM;
    if (!map || group == UINT32_MAX || other == UINT32_MAX || GP_VEC_PUSH(out->nodes, root))
        goto done;
    out->indexed = 1;
    map[0] = 0;
    for (uint32_t c = in->nodes.v[0].first_child; c != GP_NO_INDEX; c = in->nodes.v[c].next_sibling)
        if (GP_VEC_PUSH(stack, c)) goto done;
    while (stack.n) {
        uint32_t i = stack.v[--stack.n];
        const gp_fnode *nd = &in->nodes.v[i];
        uint32_t pm = map[nd->parent];
        if (nd->total < o->min_total || (o->max_depth && nd->depth > o->max_depth)) {
            /* the whole subtree's weight goes to the kept ancestor; a
             * top-level frame (a thread, a GPU stream, a short trace) has
             * none but the root, which no output draws: "(other)" keeps it */
            uint32_t to = pm;
            if (pm == 0 && (to = child_id(out, 0, other, GP_FK_GROUP)) == GP_NO_INDEX) goto done;
            out->nodes.v[to].self = gp_sat_add_i64(out->nodes.v[to].self, nd->total);
            continue;
        }
        if (nd->kind == GP_FK_GPU && o->group_gpu_below > 0 && nd->total < o->group_gpu_below) {
            uint32_t g = child_id(out, pm, group, GP_FK_GROUP);
            if (g == GP_NO_INDEX) goto done;
            out->nodes.v[g].self = gp_sat_add_i64(out->nodes.v[g].self, nd->total);
            continue;
        }
        uint32_t m = child_id(out, pm, nd->name, nd->kind);
        if (m == GP_NO_INDEX) goto done;
        map[i] = m;
        out->nodes.v[m].self = gp_sat_add_i64(out->nodes.v[m].self, nd->self);
        for (uint32_t c = nd->first_child; c != GP_NO_INDEX; c = in->nodes.v[c].next_sibling)
            if (GP_VEC_PUSH(stack, c)) goto done;
    }
    gp_ftree_finish(out);
    rc = 0;
done:
    free(map);
    GP_VEC_FREE(stack);
    if (rc) gp_ftree_fini(out);
    return rc;
}

int64_t gp_ftree_threshold_for(const gp_ftree *f, size_t max_nodes)
{
    size_t n = f->nodes.n - 1;
    if (n <= max_nodes) return 0;
    int64_t *v = malloc(n * sizeof *v);
    if (!v) return f->nodes.v[0].total; /* keep the root only rather than fail */
    for (size_t i = 0; i < n; i++) v[i] = f->nodes.v[i + 1].total;
    gp_sort_i64(v, n);
    /* v[n - max_nodes - 1] is the largest total that must go; one above it
     * keeps at most max_nodes frames */
    int64_t thr = v[n - max_nodes - 1] + 1;
    free(v);
    return thr;
}

typedef struct child_key {
    uint64_t key; /* name rank << 8 | kind */
    uint32_t node;
} child_key;

static int cmp_child(const void *a, const void *b)
{
    const child_key *x = a, *y = b;
    return (x->key > y->key) - (x->key < y->key);
}

int gp_ftree_sort_children(gp_ftree *f)
{
    uint32_t *rank = name_ranks(f->names);
    if (!rank) return GP_ENOMEM;
    GP_VEC(child_key) kids = {0};
    gp_fnode *v = f->nodes.v;
#define CHILD_KEY(c) ((uint64_t)rank[v[c].name] << 8 | v[c].kind)
    for (size_t i = 0; i < f->nodes.n; i++) {
        uint32_t c = v[i].first_child;
        while (c != GP_NO_INDEX && v[c].next_sibling != GP_NO_INDEX &&
               CHILD_KEY(c) < CHILD_KEY(v[c].next_sibling))
            c = v[c].next_sibling;
        if (c == GP_NO_INDEX || v[c].next_sibling == GP_NO_INDEX) continue; /* in order */
        kids.n = 0;
        for (c = v[i].first_child; c != GP_NO_INDEX; c = v[c].next_sibling)
            if (GP_VEC_PUSH(kids, ((child_key){CHILD_KEY(c), c}))) {
                GP_VEC_FREE(kids);
                free(rank);
                return GP_ENOMEM;
            }
        qsort(kids.v, kids.n, sizeof *kids.v, cmp_child);
        v[i].first_child = kids.v[0].node;
        for (size_t j = 0; j + 1 < kids.n; j++) v[kids.v[j].node].next_sibling = kids.v[j + 1].node;
        v[kids.v[kids.n - 1].node].next_sibling = GP_NO_INDEX;
    }
#undef CHILD_KEY
    GP_VEC_FREE(kids);
    free(rank);
    return 0;
}

int gp_ftree_build_traces(gp_ftree *f, gp_trace *const *t, size_t n)
{
    if (gp_ftree_init(f, "ns")) return GP_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        const char *pre = NULL;
        if (n > 1) {
            const char *src = gp_trace_s(t[i], t[i]->meta.source), *sl = strrchr(src, '/');
            pre = sl ? sl + 1 : src;
        }
        if (gp_ftree_add_trace(f, t[i], pre)) {
            gp_ftree_fini(f);
            return GP_ENOMEM;
        }
    }
    gp_ftree_finish(f);
    return 0;
}

int gp_ftree_select(gp_ftree *tree, const gp_ftree_prune_opts *o, gp_ftree *prt, gp_ftree **use)
{
    int pruned = o->min_total || o->max_depth || o->group_gpu_below;
    if (pruned && gp_ftree_prune(tree, o, prt)) return GP_ENOMEM;
    *use = pruned ? prt : tree;
    if (gp_ftree_sort_children(*use)) {
        if (pruned) gp_ftree_fini(prt);
        return GP_ENOMEM;
    }
    return 0;
}
