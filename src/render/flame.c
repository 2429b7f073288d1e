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

static const char flame_css[] =
    "#fgwrap{border:1px solid var(--line);overflow-x:hidden}#fg{display:block;width:100%}\n"
    "#fg g.f{cursor:pointer}#fg g.f:hover rect{stroke:#000;stroke-width:.6}\n"
    ".legend span{display:inline-block;width:10px;height:10px;margin:0 4px 0 12px;"
    "border-radius:2px}\n";

static const char flame_js[] =
    "(function(){\n"
    "var D=gp.data('fg-data'),NM=D.names,P=D.p,N=D.n,K=D.k,T=D.t,n=P.length,unit=D.unit;\n"
    "var kids=new Array(n),i;for(i=0;i<n;i++)kids[i]=[];for(i=1;i<n;i++)kids[P[i]].push(i);\n"
    "var svg=document.getElementById('fg'),RH=17,zoom=0,hit=null;\n"
    "var KN=['all','thread / stream','CPU operator or range','runtime call (launch)',"
    "'GPU kernel / copy / memset','small GPU work (grouped)'];\n"
    "function fmt(v){return unit==='ns'?gp.fmtDur(v):v.toLocaleString()+' '+unit;}\n"
    "function self(i){var s=T[i],k=kids[i];for(var c=0;c<k.length;c++)s-=T[k[c]];return s;}\n"
    "function render(){var W=svg.clientWidth||1200,out=[],maxrow=0;\n"
    " if(!(T[zoom]>0)){svg.innerHTML='';document.getElementById('fg-shown').textContent='0';return;"
    "}\n"
    " var "
    "sc=W/T[zoom],anc=[],a=zoom;while(true){anc.push(a);if(a===0)break;a=P[a];}anc.reverse();\n"
    " function box(i,x,w,row){var y=row*RH,c=hit&&hit[i]?'#e040fb':gp.color(NM[N[i]],K[i]),"
    "lbl=NM[N[i]],mc=Math.floor((w-6)/"
    "6.3);if(lbl.length>mc)lbl=mc>3?lbl.slice(0,mc-1)+'\\u2026':'';\n"
    "  out.push('<g class=\"f\" data-i=\"'+i+'\"><rect x=\"'+x.toFixed(1)+'\" y=\"'+y+'\" "
    "width=\"'+"
    "Math.max(w-0.6,0.4).toFixed(1)+'\" height=\"'+(RH-1)+'\" rx=\"2\" "
    "fill=\"'+c+'\"/>'+(lbl?'<text "
    "x=\"'+(x+3).toFixed(1)+'\" "
    "y=\"'+(y+12)+'\">'+gp.esc(lbl)+'</text>':'')+'</g>');if(row>maxrow)maxrow=row;}\n"
    " for(var j=0;j<anc.length;j++)box(anc[j],0,W,j);\n"
    " var st=[[zoom,0,anc.length-1]];while(st.length){var e=st.pop(),i=e[0],x=e[1],row=e[2];"
    "if(i!==zoom)box(i,x,T[i]*sc,row);var cx=x,ks=kids[i];for(var c=0;c<ks.length;c++){"
    "var w=T[ks[c]]*sc;if(w>=0.5)st.push([ks[c],cx,row+1]);cx+=w;}}\n"
    " svg.setAttribute('height',(maxrow+1)*RH+2);svg.innerHTML=out.join('');"
    "document.getElementById('fg-shown').textContent=String(out.length);"
    "document.getElementById('fg-zoom').textContent=zoom?NM[N[zoom]]:'all';}\n"
    "svg.addEventListener('mousemove',function(ev){var "
    "g=ev.target.closest('g.f');if(!g){gp.tip(ev,null);return;}"
    "var i=+g.dataset.i;gp.tip(ev,'<b>'+gp.esc(NM[N[i]])+'</b>\\n'+KN[K[i]]+'\\ntotal "
    "'+fmt(T[i])+' ('+"
    "(100*T[i]/T[0]).toFixed(2)+'% of all'+(i?', '+(T[P[i]]?100*T[i]/T[P[i]]:0).toFixed(2)+'% of "
    "parent':'')+"
    "')\\nself '+fmt(self(i)));});\n"
    "svg.addEventListener('mouseleave',function(ev){gp.tip(ev,null);});\n"
    "svg.addEventListener('click',function(ev){var g=ev.target.closest('g.f');if(!g)return;"
    "zoom=+g.dataset.i;render();});\n"
    "var q=document.getElementById('fg-search'),msg=document.getElementById('fg-matched');\n"
    "function search(){var s=q.value;if(!s){hit=null;msg.textContent='';render();return;}var "
    "re=null;"
    "try{re=new RegExp(s,'i');}catch(e){re=null;}var ls=s.toLowerCase();hit=new Uint8Array(n);"
    "var under=new Uint8Array(n),sum=0,cnt=0;for(var i=1;i<n;i++){var nm=NM[N[i]];"
    "hit[i]=re?re.test(nm):nm.toLowerCase().indexOf(ls)>=0;under[i]=under[P[i]]||hit[P[i]];"
    "if(hit[i]){cnt++;if(!under[i])sum+=T[i];}}msg.textContent='Matched '+cnt+' frames: '+fmt(sum)+"
    "' ('+(T[0]?100*sum/T[0]:0).toFixed(2)+'% of all)';render();}\n"
    "var "
    "tm=null;q.addEventListener('input',function(){clearTimeout(tm);tm=setTimeout(search,150);});\n"
    "document.getElementById('fg-reset').addEventListener('click',function(){zoom=0;q.value='';hit="
    "null;"
    "msg.textContent='';render();});\n"
    "document.addEventListener('keydown',function(e){if(e.key==='Escape'){zoom=0;render();}});\n"
    "window.addEventListener('resize',render);render();"
    "var hs=location.hash.match(/search=([^&]*)/);if(hs){q.value=decodeURIComponent(hs[1]);"
    "search();}var hz=location.hash.match(/zoom=(\\d+)/);if(hz&&+hz[1]<n){zoom=+hz[1];render();}"
    "document.body.setAttribute('data-ready','1')"
    ";\n"
    "})();\n";

void gp_flame_html(const gp_ftree *f, const char *title, const char *note, gp_sbuf *b)
{
    gp_html_begin(b, title, flame_css);
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
    gp_html_script(b, flame_js);
    gp_html_end(b);
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
        snprintf(buf, sizeof buf, "GPU %d stream %lld", tk->device, (long long)tk->stream);
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
