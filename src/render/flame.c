/* render/flame.c: folded stacks, nested JSON, the interactive HTML flame
 * graph and speedscope files. */
#include "render/flame.h"
#include "core/table.h"
#include "render/html.h"
#include <gpuprof/common.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef GP_VEC(uint32_t) u32vec;

/* Pre-order walk helpers over first_child/next_sibling/parent links. */
static uint32_t next_preorder(const gp_ftree *f, uint32_t i)
{
    if (f->nodes.v[i].first_child != GP_NO_INDEX) return f->nodes.v[i].first_child;
    while (i != 0 && f->nodes.v[i].next_sibling == GP_NO_INDEX) i = f->nodes.v[i].parent;
    return i == 0 ? GP_NO_INDEX : f->nodes.v[i].next_sibling;
}

static void add_frame_name(gp_sbuf *b, const char *s, size_t n)
{
    size_t start = b->n;
    gp_sbuf_add(b, s, n);
    for (size_t k = start; k < b->n; k++) {
        if (b->s[k] == ';')
            b->s[k] = ',';
        else if (b->s[k] == '\n' || b->s[k] == '\r')
            b->s[k] = ' ';
    }
}

void gp_flame_folded(const gp_ftree *f, gp_sbuf *b)
{
    gp_sbuf path = {0};
    GP_VEC(size_t) len = {0}; /* path length after depth d */
    /* names that need ';' / newline replaced, found once rather than per line */
    uint32_t nn = gp_strtab_count(f->names);
    unsigned char *dirty = calloc(nn ? nn : 1, 1);
    if (!dirty || GP_VEC_PUSH(len, 0)) goto done;
    for (uint32_t k = 0; k < nn; k++) {
        const char *s = gp_strtab_get(f->names, k);
        size_t n = gp_strtab_len(f->names, k);
        dirty[k] = memchr(s, ';', n) || memchr(s, '\n', n) || memchr(s, '\r', n);
    }
    for (uint32_t i = next_preorder(f, 0); i != GP_NO_INDEX; i = next_preorder(f, i)) {
        const gp_fnode *nd = &f->nodes.v[i];
        path.n = len.v[nd->depth - 1];
        if (nd->depth > 1) gp_sbuf_putc(&path, ';');
        if (dirty[nd->name])
            add_frame_name(&path, gp_strtab_get(f->names, nd->name),
                           gp_strtab_len(f->names, nd->name));
        else
            gp_sbuf_add(&path, gp_strtab_get(f->names, nd->name),
                        gp_strtab_len(f->names, nd->name));
        len.n = nd->depth;
        if (GP_VEC_PUSH(len, path.n)) goto done;
        if (nd->self > 0) {
            gp_sbuf_add(b, path.s, path.n);
            gp_sbuf_putc(b, ' ');
            gp_json_int(b, nd->self);
            gp_sbuf_putc(b, '\n');
        }
    }
done:
    free(dirty);
    GP_VEC_FREE(len);
    gp_sbuf_free(&path);
}

static const char *const kind_names[] = {"root", "thread", "cpu", "runtime", "gpu", "group"};

static void json_open(const gp_ftree *f, uint32_t i, gp_sbuf *b)
{
    const gp_fnode *nd = &f->nodes.v[i];
    gp_sbuf_puts(b, "{\"name\":");
    gp_json_str(b, gp_strtab_get(f->names, nd->name));
    gp_sbuf_puts(b, ",\"kind\":\"");
    gp_sbuf_puts(b, kind_names[nd->kind]);
    gp_sbuf_puts(b, "\",\"value\":");
    gp_json_int(b, nd->total);
    gp_sbuf_puts(b, ",\"self\":");
    gp_json_int(b, nd->self);
    gp_sbuf_puts(b, ",\"children\":[");
}

void gp_flame_json(const gp_ftree *f, gp_sbuf *b)
{
    gp_sbuf_puts(b, "{\"unit\":");
    gp_json_str(b, f->unit);
    gp_sbuf_puts(b, ",\"total\":");
    gp_json_int(b, f->nodes.v[0].total);
    gp_sbuf_puts(b, ",\"frames\":");
    gp_json_int(b, (int64_t)f->nodes.n - 1);
    gp_sbuf_puts(b, ",\"clipped_slices\":");
    gp_json_int(b, (int64_t)f->clipped);
    gp_sbuf_puts(b, ",\"gpu_attached\":");
    gp_json_int(b, (int64_t)f->gpu_attached);
    gp_sbuf_puts(b, ",\"gpu_unattributed\":");
    gp_json_int(b, (int64_t)f->gpu_unattributed);
    gp_sbuf_puts(b, ",\"root\":");
    uint32_t i = 0;
    json_open(f, 0, b);
    for (;;) {
        if (f->nodes.v[i].first_child != GP_NO_INDEX) {
            i = f->nodes.v[i].first_child;
            json_open(f, i, b);
            continue;
        }
        gp_sbuf_puts(b, "]}");
        while (i != 0 && f->nodes.v[i].next_sibling == GP_NO_INDEX) {
            i = f->nodes.v[i].parent;
            gp_sbuf_puts(b, "]}");
        }
        if (i == 0) break;
        i = f->nodes.v[i].next_sibling;
        gp_sbuf_putc(b, ',');
        json_open(f, i, b);
    }
    gp_sbuf_puts(b, "}\n");
}

void gp_flame_html(const gp_ftree *f, const char *title, const char *note, gp_sbuf *b)
{
    gp_html_page_begin(b, title, "flame.css");
    if (note) {
        gp_sbuf_puts(b, "<p class=\"mut\">");
        gp_html_escape(b, note);
        gp_sbuf_puts(b, "</p>\n");
    }
    char tmp[64];
    const gp_fnode *root = &f->nodes.v[0];
    gp_sbuf_puts(b, "<div class=\"figs\"><div class=\"fig\"><div class=\"v\" id=\"fg-total\">");
    if (!strcmp(f->unit, "ns"))
        gp_fmt_dur_auto(tmp, sizeof tmp, (double)root->total);
    else
        snprintf(tmp, sizeof tmp, "%lld %s", (long long)root->total, f->unit);
    gp_html_escape(b, tmp);
    gp_sbuf_printf(b,
                   "</div><div class=\"k\">total weight</div></div>"
                   "<div class=\"fig\"><div class=\"v\" id=\"fg-frames\">%zu</div><div "
                   "class=\"k\">frames</div></div>",
                   f->nodes.n - 1);
    if (!strcmp(f->unit, "ns"))
        gp_sbuf_printf(
            b,
            "<div class=\"fig\"><div class=\"v\">%llu</div><div class=\"k\">GPU "
            "slices under their launch</div></div><div class=\"fig\"><div "
            "class=\"v\">%llu</div><div class=\"k\">GPU slices without launch</div></div>",
            (unsigned long long)f->gpu_attached, (unsigned long long)f->gpu_unattributed);
    gp_sbuf_puts(
        b, "</div>\n<div class=\"ctl\"><input id=\"fg-search\" size=\"40\" placeholder=\"Search "
           "frames (regular expression)\"><button id=\"fg-reset\">Reset zoom</button><span "
           "id=\"fg-matched\" class=\"mut\"></span></div>\n<div class=\"ctl mut\">Zoom: <span "
           "id=\"fg-zoom\">all</span>; <span id=\"fg-shown\">0</span> frames drawn. Click a frame "
           "to zoom, Esc to reset.<span class=\"legend\"><span "
           "style=\"background:hsl(20,80%,60%)\"></span>CPU op/range<span "
           "style=\"background:hsl(50,85%,62%)\"></span>runtime call<span "
           "style=\"background:hsl(150,55%,54%)\"></span>GPU work<span "
           "style=\"background:hsl(220,10%,76%)\"></span>thread</span></div>\n"
           "<div id=\"fgwrap\"><svg id=\"fg\" xmlns=\"http://www.w3.org/2000/svg\" "
           "height=\"20\"></svg></div>\n");
    /* data: names by id, nodes in pre-order with parent positions */
    gp_sbuf d = {0};
    gp_sbuf_puts(&d, "{\"unit\":");
    gp_json_str(&d, f->unit);
    gp_sbuf_puts(&d, ",\"names\":[");
    uint32_t nn = gp_strtab_count(f->names);
    for (uint32_t k = 0; k < nn; k++) {
        if (k) gp_sbuf_putc(&d, ',');
        gp_json_str(&d, gp_strtab_get(f->names, k));
    }
    uint32_t *pos = malloc(f->nodes.n * sizeof *pos);
    if (!pos) {
        gp_sbuf_free(&d);
        return;
    }
    uint32_t cnt = 0;
    for (uint32_t i = 0; i != GP_NO_INDEX; i = next_preorder(f, i)) pos[i] = cnt++;
#define ARRAY(key, expr)                                                                           \
    do {                                                                                           \
        gp_sbuf_puts(&d, "],\"" key "\":[");                                                       \
        int first_ = 1;                                                                            \
        for (uint32_t i = 0; i != GP_NO_INDEX; i = next_preorder(f, i)) {                          \
            if (!first_) gp_sbuf_putc(&d, ',');                                                    \
            first_ = 0;                                                                            \
            gp_json_int(&d, (int64_t)(expr));                                                      \
        }                                                                                          \
    } while (0)
    ARRAY("p", i ? (long long)pos[f->nodes.v[i].parent] : -1);
    ARRAY("n", f->nodes.v[i].name);
    ARRAY("k", f->nodes.v[i].kind);
    ARRAY("t", f->nodes.v[i].total);
#undef ARRAY
    gp_sbuf_puts(&d, "]}");
    free(pos);
    gp_html_json(b, "fg-data", d.s, d.n);
    gp_sbuf_free(&d);
    static const char *const js[] = {"flame.js", NULL};
    gp_html_page_end(b, js);
}

/* ---- speedscope ------------------------------------------------------- */

#define SPEEDSCOPE_HEAD "{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\","

static void profile_events(gp_sbuf *b, const gp_trace *t, const gp_nesting *ns, size_t k,
                           const uint32_t *frame_of_name, u32vec *stack)
{
    size_t a = ns->track_first[k], e = ns->track_first[k + 1];
    int64_t lo = t->slices.v[ns->items[a].slice].ts, hi = lo;
    for (size_t i = a; i < e; i++)
        if (ns->items[i].end > hi) hi = ns->items[i].end;
    gp_sbuf_puts(b, ",\"unit\":\"nanoseconds\",\"startValue\":");
    gp_json_int(b, lo);
    gp_sbuf_puts(b, ",\"endValue\":");
    gp_json_int(b, hi);
    gp_sbuf_puts(b, ",\"events\":[");
    stack->n = 0;
    int first = 1;
    for (size_t i = a; i <= e; i++) {
        uint32_t parent = i < e ? ns->items[i].parent : GP_NO_INDEX;
        while (stack->n && stack->v[stack->n - 1] != parent) {
            uint32_t c = stack->v[--stack->n];
            gp_sbuf_printf(b, ",{\"type\":\"C\",\"frame\":%u,\"at\":%lld}",
                           frame_of_name[t->slices.v[ns->items[c].slice].name],
                           (long long)ns->items[c].end);
        }
        if (i == e) break;
        const gp_slice *s = &t->slices.v[ns->items[i].slice];
        gp_sbuf_printf(b, "%s{\"type\":\"O\",\"frame\":%u,\"at\":%lld}", first ? "" : ",",
                       frame_of_name[s->name], (long long)s->ts);
        first = 0;
        if (GP_VEC_PUSH(*stack, (uint32_t)i)) return;
    }
    gp_sbuf_puts(b, "]}");
}

static void track_label(const gp_trace *t, size_t k, int gpu, gp_sbuf *b)
{
    const gp_track *tk = &t->tracks.v[k];
    char buf[256];
    if (gpu && tk->type == GP_TRACK_GPU)
        snprintf(buf, sizeof buf, "GPU %d stream %lld", tk->device, gp_stream_shown(tk->stream));
    else if (tk->name)
        snprintf(buf, sizeof buf, "%s (pid %lld tid %lld)", gp_trace_s(t, tk->name),
                 (long long)tk->pid, (long long)tk->tid);
    else
        snprintf(buf, sizeof buf, "pid %lld tid %lld", (long long)tk->pid, (long long)tk->tid);
    gp_sbuf_puts(b, buf);
}

int gp_speedscope_trace(const gp_trace *const *traces, size_t n, gp_sbuf *b)
{
    int rc = GP_ENOMEM;
    gp_sbuf frames = {0};
    u32vec stack = {0};
    uint32_t nframes = 0;
    gp_sbuf_puts(b, SPEEDSCOPE_HEAD "\"exporter\":\"gpuprof ");
    gp_sbuf_puts(b, gp_version());
    gp_sbuf_puts(b, "\",\"name\":");
    gp_json_str(b, n ? gp_trace_s(traces[0], traces[0]->meta.source) : "");
    gp_sbuf_puts(b, ",\"activeProfileIndex\":0,\"profiles\":[");
    int firstp = 1;
    for (size_t ti = 0; ti < n; ti++) {
        const gp_trace *t = traces[ti];
        uint32_t ns_count = gp_strtab_count(t->strings);
        uint32_t *frame_of = malloc((ns_count ? ns_count : 1) * sizeof *frame_of);
        if (!frame_of) goto done;
        for (uint32_t s = 0; s < ns_count; s++) frame_of[s] = UINT32_MAX;
        for (int pass = 0; pass < 2; pass++) {
            gp_nesting ns;
            if (gp_nesting_build(t, pass ? gp_kind_mask_gpu_work() : gp_kind_mask_cpu(), &ns)) {
                free(frame_of);
                goto done;
            }
            for (size_t i = 0; i < ns.n; i++) {
                uint32_t nm = t->slices.v[ns.items[i].slice].name;
                if (frame_of[nm] != UINT32_MAX) continue;
                frame_of[nm] = nframes++;
                gp_sbuf_puts(&frames, nframes > 1 ? ",{\"name\":" : "{\"name\":");
                gp_json_str(&frames, gp_trace_s(t, nm));
                gp_sbuf_putc(&frames, '}');
            }
            for (size_t k = 0; k < ns.ntracks; k++) {
                if (ns.track_first[k] == ns.track_first[k + 1]) continue;
                if (!firstp) gp_sbuf_putc(b, ',');
                firstp = 0;
                gp_sbuf_puts(b, "{\"type\":\"evented\",\"name\":");
                gp_sbuf lbl = {0};
                if (n > 1) gp_sbuf_printf(&lbl, "%s: ", gp_trace_s(t, t->meta.source));
                track_label(t, k, pass, &lbl);
                gp_json_str(b, gp_sbuf_cstr(&lbl));
                gp_sbuf_free(&lbl);
                profile_events(b, t, &ns, k, frame_of, &stack);
            }
            gp_nesting_free(&ns);
        }
        free(frame_of);
    }
    gp_sbuf_puts(b, "],\"shared\":{\"frames\":[");
    if (frames.n) gp_sbuf_add(b, frames.s, frames.n);
    gp_sbuf_puts(b, "]}}\n");
    rc = 0;
done:
    GP_VEC_FREE(stack);
    gp_sbuf_free(&frames);
    return rc;
}

int gp_speedscope_tree(const gp_ftree *f, const char *name, gp_sbuf *b)
{
    gp_sbuf_puts(b, SPEEDSCOPE_HEAD "\"exporter\":\"gpuprof ");
    gp_sbuf_puts(b, gp_version());
    gp_sbuf_puts(b, "\",\"name\":");
    gp_json_str(b, name);
    gp_sbuf_puts(b, ",\"activeProfileIndex\":0,\"shared\":{\"frames\":[");
    /* one speedscope frame per distinct name */
    uint32_t nn = gp_strtab_count(f->names);
    for (uint32_t k = 0; k < nn; k++) {
        if (k) gp_sbuf_putc(b, ',');
        gp_sbuf_puts(b, "{\"name\":");
        gp_json_str(b, gp_strtab_get(f->names, k));
        gp_sbuf_putc(b, '}');
    }
    gp_sbuf_puts(b, "]},\"profiles\":[{\"type\":\"sampled\",\"name\":");
    gp_json_str(b, name);
    gp_sbuf_puts(b, ",\"unit\":");
    gp_json_str(b, !strcmp(f->unit, "ns") ? "nanoseconds" : "none");
    gp_sbuf_puts(b, ",\"startValue\":0,\"endValue\":");
    gp_json_int(b, f->nodes.v[0].total);
    gp_sbuf_puts(b, ",\"samples\":[");
    GP_VEC(uint32_t) path = {0};
    int first = 1;
    for (uint32_t i = next_preorder(f, 0); i != GP_NO_INDEX; i = next_preorder(f, i)) {
        const gp_fnode *nd = &f->nodes.v[i];
        path.n = nd->depth - 1;
        if (GP_VEC_PUSH(path, nd->name)) {
            GP_VEC_FREE(path);
            return GP_ENOMEM;
        }
        if (nd->self <= 0) continue;
        gp_sbuf_puts(b, first ? "[" : ",[");
        first = 0;
        for (size_t k = 0; k < path.n; k++) gp_sbuf_printf(b, k ? ",%u" : "%u", path.v[k]);
        gp_sbuf_putc(b, ']');
    }
    gp_sbuf_puts(b, "],\"weights\":[");
    first = 1;
    for (uint32_t i = next_preorder(f, 0); i != GP_NO_INDEX; i = next_preorder(f, i)) {
        if (f->nodes.v[i].self <= 0) continue;
        gp_sbuf_printf(b, first ? "%lld" : ",%lld", (long long)f->nodes.v[i].self);
        first = 0;
    }
    gp_sbuf_puts(b, "]}]}\n");
    GP_VEC_FREE(path);
    return 0;
}

void gp_flame_page_limit(const gp_ftree *tree, gp_ftree_prune_opts *po)
{
    int64_t thr = gp_ftree_threshold_for(tree, 300000);
    if (thr > po->min_total) po->min_total = thr;
}

void gp_flame_page_note(const gp_ftree *tree, const gp_ftree *use, const gp_ftree_prune_opts *po,
                        int64_t requested, char *note, size_t n)
{
    note[0] = 0;
    if (!(po->min_total > requested && use->nodes.n < tree->nodes.n)) return;
    char w[64];
    if (!strcmp(tree->unit, "ns"))
        gp_fmt_dur_auto(w, sizeof w, (double)po->min_total);
    else
        snprintf(w, sizeof w, "%lld %s", (long long)po->min_total, tree->unit);
    snprintf(note, n,
             "%zu frames with a total below %s are folded into their parent to keep the page "
             "fast (see --min-duration).",
             tree->nodes.n - use->nodes.n, w);
}
