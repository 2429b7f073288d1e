/* render/timeline.c: the HTML timeline viewer (canvas tracks per CPU thread
 * and GPU stream, zoom/pan, hover, launch->kernel links, memory counters,
 * CPU/GPU activity figures). The JSON and .pftrace exports are
 * render/chrome.c and render/perfetto.c. */
#include "render/timeline.h"
#include "analysis/activity.h"
#include "analysis/calltree.h"
#include "analysis/memory.h"
#include "core/hash.h"
#include "core/table.h"
#include "render/html.h"
#include <gpuprof/common.h>
#include <stdlib.h>
#include <string.h>

#define ALL_KINDS ((1u << GP_K__COUNT) - 1)

static void track_names(const gp_trace *t, size_t k, char *proc, size_t pn, char *thr, size_t tn)
{
    const gp_track *tk = &t->tracks.v[k];
    char pidbuf[64];
    if (tk->pid_str)
        snprintf(pidbuf, sizeof pidbuf, "%s", gp_trace_s(t, tk->pid_str));
    else
        snprintf(pidbuf, sizeof pidbuf, "%lld", (long long)tk->pid);
    if (tk->type == GP_TRACK_GPU) {
        snprintf(proc, pn, "GPU %d", tk->device);
        snprintf(thr, tn, "stream %lld", (long long)tk->stream);
    } else {
        if (tk->process_name)
            snprintf(proc, pn, "%s (pid %s)", gp_trace_s(t, tk->process_name), pidbuf);
        else
            snprintf(proc, pn, "pid %s", pidbuf);
        if (tk->name)
            snprintf(thr, tn, "%s", gp_trace_s(t, tk->name));
        else if (tk->tid_str)
            snprintf(thr, tn, "%s", gp_trace_s(t, tk->tid_str));
        else
            snprintf(thr, tn, "thread %lld", (long long)tk->tid);
    }
}

/* ---- HTML viewer ------------------------------------------------------ */

#define MAX_LEVEL 31

static const char tl_css[] =
    "#tlwrap{position:relative;border:1px solid var(--line);user-select:none}\n"
    "#tl{display:block;width:100%;cursor:grab}#tl.drag{cursor:grabbing}\n";

static const char tl_js[] =
    "(function(){\n"
    "var D=gp.data('tl-data'),NM=D.names,TR=D.tracks,cv=document.getElementById('tl'),"
    "ctx=cv.getContext('2d'),LW=190,RH=14,AX=22,v0=0,v1=Math.max(D.span,1),hov=null,"
    "corr={};\n"
    "TR.forEach(function(t,ti){t.y=0;for(var i=0;i<t.c.length;i++)if(t.c[i]>=0){var "
    "e=corr[t.c[i]]||"
    "(corr[t.c[i]]={});if(t.k[i]===3)e.l=[ti,i];else if(t.k[i]===4)e.g=[ti,i];}});\n"
    "var MEMH=46;function layout(){var y=AX;TR.forEach(function(t){t.y=y;y+=(t.levels+1)*RH+6;});"
    "D.mem.forEach(function(m){m.y=y;y+=MEMH+6;});return y;}\n"
    "var H=layout();function W(){return cv.parentNode.clientWidth||1200;}\n"
    "function X(ns){return LW+(ns-v0)/(v1-v0)*(W()-LW);}\n"
    "function draw(){var w=W();cv.width=w;cv.height=H;ctx.font='11px system-ui,sans-serif';"
    "ctx.fillStyle='#fff';ctx.fillRect(0,0,w,H);var sc=(w-LW)/(v1-v0);\n"
    " ctx.fillStyle='#5b6475';gp.ticks(v0,v1,8).forEach(function(v){var "
    "x=X(v);ctx.fillRect(x,AX-4,1,"
    "4);ctx.fillText(gp.fmtDur(v),x+2,AX-8);});\n"
    " TR.forEach(function(t){ctx.fillStyle=t.type==='gpu'?'#eef7ef':'#f5f6f9';ctx.fillRect(0,t.y,w,"
    "(t.levels+1)*RH+4);ctx.save();ctx.beginPath();ctx.rect(LW,t.y,w-LW,(t.levels+1)*RH+4);ctx."
    "clip();\n"
    "  var b=t.b;for(var i=0;i<b.length;i+=4){var x=X(b[i+1]*D.bin_ns),bw=Math.max(D.bin_ns*sc,1);"
    "if(x+bw<LW||x>w)continue;ctx.fillStyle='rgba(90,100,120,'+Math.min(1,0.25+0.75*b[i+3]/"
    "D.bin_ns)"
    ".toFixed(2)+')';ctx.fillRect(x,t.y+b[i]*RH,bw,RH-1);}\n"
    "  var last=new Float64Array(t.levels+1).fill(-1);for(var i=0;i<t.s.length;i++){var "
    "s=t.s[i];if(s>v1)"
    "break;var e=s+t.d[i];if(e<v0)continue;var x=X(s),xw=Math.max(t.d[i]*sc,0.8),lv=t.l[i];"
    "if(xw<2&&x-last[lv]<1)continue;last[lv]=x;ctx.fillStyle=gp.color(NM[t.n[i]],t.k[i]);"
    "ctx.fillRect(x,t.y+lv*RH,xw,RH-1);if(xw>40){ctx.fillStyle='#111';var nm=NM[t.n[i]],mc=Math."
    "floor((xw-4)/6.2);ctx.fillText(nm.length>mc?nm.slice(0,Math.max(mc-1,0))+'\\u2026':nm,Math.max"
    "(x,LW)+2,t.y+lv*RH+10);}}ctx.restore();\n"
    "  ctx.fillStyle='#1d2330';ctx.fillText(t.name.length>30?t.name.slice(0,29)+'\\u2026':t.name,4,"
    "t.y+11);});\n"
    " D.mem.forEach(function(m){ctx.fillStyle='#fbf7ef';ctx.fillRect(0,m.y,w,MEMH);ctx.fillStyle="
    "'#1d2330';ctx.fillText('memory '+m.label,4,m.y+11);ctx.fillText(gp.fmtBytes(m.max),4,m.y+25);"
    "ctx.save();ctx.beginPath();ctx.rect(LW,m.y,w-LW,MEMH);ctx.clip();ctx.strokeStyle='#4e79a7';"
    "ctx.beginPath();var p=m.pts;for(var i=0;i<p.length;i++){var "
    "x=X(p[i][0]),y=m.y+MEMH-2-(MEMH-6)*p[i][1]"
    "/(m.max||1);if(i)ctx.lineTo(x,ctx._y);else ctx.moveTo(x,y);ctx.lineTo(x,y);ctx._y=y;}"
    "ctx.stroke();ctx.restore();});\n"
    " if(hov&&hov.link){ctx.strokeStyle='#e15759';ctx.lineWidth=1.5;ctx.beginPath();"
    "ctx.moveTo(hov.link[0],hov.link[1]);ctx.lineTo(hov.link[2],hov.link[3]);ctx.stroke();"
    "ctx.lineWidth=1;}\n"
    " document.getElementById('tl-range').textContent=gp.fmtDur(v0)+' \\u2013 '+gp.fmtDur(v1)+' ('+"
    "gp.fmtDur(v1-v0)+' shown)';}\n"
    "function pos(ti,i){var t=TR[ti];return [X(t.s[i]+t.d[i]/2),t.y+t.l[i]*RH+RH/2];}\n"
    "function find(mx,my){var tn=(mx-LW)/(W()-LW)*(v1-v0)+v0,tol=3*(v1-v0)/(W()-LW);for(var ti=0;"
    "ti<TR.length;ti++){var t=TR[ti];if(my<t.y||my>=t.y+(t.levels+1)*RH)continue;var lv=Math.floor("
    "(my-t.y)/RH),best=-1;for(var i=0;i<t.s.length;i++){if(t.s[i]>tn+tol)break;if(t.l[i]===lv&&"
    "t.s[i]+t.d[i]>=tn-tol)best=i;}if(best>=0)return {ti:ti,i:best};for(var j=0;j<t.b.length;j+=4)"
    "if(t.b[j]===lv&&Math.floor(tn/D.bin_ns)===t.b[j+1])return {ti:ti,bin:j};}return null;}\n"
    "cv.addEventListener('mousemove',function(ev){if(drag){var dx=ev.clientX-drag.x,d=dx/(W()-LW)*"
    "(drag.v1-drag.v0);v0=drag.v0-d;v1=drag.v1-d;draw();return;}var r=cv.getBoundingClientRect(),"
    "f=find(ev.clientX-r.left,ev.clientY-r.top);hov=null;if(!f){gp.tip(ev,null);draw();return;}"
    "var t=TR[f.ti];if(f.bin!==undefined){gp.tip(ev,t.b[f.bin+2]+' slices shorter than '+"
    "gp.fmtDur(D.bin_ns)+' aggregated here\\nbusy '+gp.fmtDur(t.b[f.bin+3]));draw();return;}\n"
    " var i=f.i,h='<b>'+gp.esc(NM[t.n[i]])+'</b>\\n'+gp.esc(t.name)+'\\nstart '+gp.fmtDur(t.s[i])+"
    "'\\nduration '+gp.fmtDur(t.d[i]);var c=t.c[i];if(c>=0&&corr[c]){var "
    "e=corr[c];if(e.l&&e.g){var a="
    "pos(e.l[0],e.l[1]),b=pos(e.g[0],e.g[1]),L=TR[e.l[0]],G=TR[e.g[0]];hov={link:[a[0],a[1],b[0],"
    "b[1]]};h+=t.k[i]===4?'\\nlaunched by '+gp.esc(NM[L.n[e.l[1]]])+' at '+gp.fmtDur(L.s[e.l[1]])+"
    "' (delay '+gp.fmtDur(G.s[e.g[1]]-L.s[e.l[1]])+')':'\\nlaunches '+gp.esc(NM[G.n[e.g[1]]])+' on "
    "'+"
    "gp.esc(G.name);}h+='\\ncorrelation '+c;}gp.tip(ev,h);draw();});\n"
    "cv.addEventListener('mouseleave',function(ev){gp.tip(ev,null);hov=null;draw();});\n"
    "var drag=null;cv.addEventListener('mousedown',function(ev){drag={x:ev.clientX,v0:v0,v1:v1};"
    "cv.classList.add('drag');});window.addEventListener('mouseup',function(){drag=null;"
    "cv.classList.remove('drag');});\n"
    "function zoom(f,cx){var r=cv.getBoundingClientRect(),px=cx===undefined?(W()+LW)/2:cx-r.left,"
    "tc=v0+Math.max(0,px-LW)/(W()-LW)*(v1-v0),nw=Math.max((v1-v0)*f,1000);v0=tc-(tc-v0)*nw/(v1-v0);"
    "v1=v0+nw;draw();}\n"
    "cv.addEventListener('wheel',function(ev){ev.preventDefault();if(ev.shiftKey){var d=(v1-v0)*"
    "ev.deltaY/1000;v0+=d;v1+=d;draw();}else "
    "zoom(ev.deltaY>0?1.25:0.8,ev.clientX);},{passive:false});\n"
    "document.getElementById('tl-in').onclick=function(){zoom(0.5);};document.getElementById"
    "('tl-out').onclick=function(){zoom(2);};document.getElementById('tl-reset').onclick=function()"
    "{"
    "v0=0;v1=Math.max(D.span,1);draw();};window.addEventListener('resize',draw);var "
    "hr=location.hash.match("
    "/range=([0-9.e+]+),([0-9.e+]+)/);if(hr&&+hr[2]>+hr[1]){v0=+hr[1];v1=+hr[2];}draw();"
    "document.body.setAttribute('data-ready','1');\n"
    "})();\n";

typedef struct binacc {
    uint32_t track, level;
    int64_t bin;
    uint64_t count;
    int64_t busy;
} binacc;

static int cmp_bin(const void *a, const void *b)
{
    const binacc *x = a, *y = b;
    if (x->track != y->track) return x->track < y->track ? -1 : 1;
    if (x->bin != y->bin) return x->bin < y->bin ? -1 : 1;
    return (x->level > y->level) - (x->level < y->level);
}

static int kind_code(gp_kind k)
{
    if (k == GP_K_RUNTIME || k == GP_K_DRIVER) return 3;
    if (gp_kind_is_gpu(k)) return 4;
    return 2;
}

static void fig(gp_sbuf *b, const char *id, const char *v, const char *k)
{
    gp_sbuf_printf(b, "<div class=\"fig\"><div class=\"v\" id=\"%s\">", id);
    gp_html_escape(b, v);
    gp_sbuf_puts(b, "</div><div class=\"k\">");
    gp_html_escape(b, k);
    gp_sbuf_puts(b, "</div></div>");
}

int gp_timeline_html(const gp_trace *t, uint64_t max_slices, gp_sbuf *b, gp_timeline_stats *st)
{
    memset(st, 0, sizeof *st);
    if (!max_slices) max_slices = 300000;
    gp_nesting ns = {0};
    gp_memory mem = {0};
    gp_activity act;
    gp_u64map nameidx = {0}, binidx = {0};
    GP_VEC(binacc) bins = {0};
    gp_sbuf d = {0}, names = {0};
    uint32_t nnames = 0;
    int rc = GP_ENOMEM;
    unsigned mask = ALL_KINDS & ~GP_KIND_BIT(GP_K_TRACE_SPAN);
    if (gp_nesting_build(t, mask, &ns) || gp_memory_compute(t, &mem) ||
        gp_activity_compute(t, &act))
        goto done;
    st->clipped = ns.clipped;
    int64_t span = t->t_end > 0 ? t->t_end : 1;
    /* the aggregation width: none when everything fits, else grow from span/20000 */
    int64_t bin_ns = 0;
    if (ns.n > max_slices) {
        bin_ns = span / 20000 > 0 ? span / 20000 : 1;
        for (;;) {
            uint64_t big = 0;
            for (size_t i = 0; i < ns.n; i++)
                if (ns.items[i].end - t->slices.v[ns.items[i].slice].ts >= bin_ns) big++;
            if (big <= max_slices) break;
            bin_ns *= 2;
        }
    }
    st->bin_ns = bin_ns;
    gp_sbuf_printf(&d, "{\"span\":%lld,\"bin_ns\":%lld,\"tracks\":[", (long long)span,
                   (long long)(bin_ns ? bin_ns : 1));
    int firstt = 1;
    for (size_t k = 0; k < ns.ntracks; k++) {
        size_t a = ns.track_first[k], e = ns.track_first[k + 1];
        if (a == e) continue;
        char proc[256], thr[256], label[600];
        track_names(t, k, proc, sizeof proc, thr, sizeof thr);
        snprintf(label, sizeof label, "%s, %s", thr, proc);
        uint32_t levels = 0;
        bins.n = 0;
        gp_u64map_free(&binidx);
        gp_sbuf cols[6] = {{0}};
        int firsti = 1;
        for (size_t i = a; i < e; i++) {
            const gp_nest_item *it = &ns.items[i];
            const gp_slice *s = &t->slices.v[it->slice];
            uint32_t lv = it->depth > MAX_LEVEL ? MAX_LEVEL : it->depth;
            if (lv > levels) levels = lv;
            int64_t dur = it->end - s->ts;
            if (bin_ns && dur < bin_ns) {
                int64_t bi = s->ts / bin_ns;
                uint64_t key = gp_hash_u64(((uint64_t)bi << 6) | lv);
                for (;;) {
                    uint64_t *slot = gp_u64map_slot(&binidx, key, UINT64_MAX);
                    if (!slot) goto done;
                    if (*slot == UINT64_MAX) {
                        binacc ba = {(uint32_t)k, lv, bi, 0, 0};
                        *slot = bins.n;
                        if (GP_VEC_PUSH(bins, ba)) goto done;
                    } else if (bins.v[*slot].bin != bi || bins.v[*slot].level != lv) {
                        key++;
                        continue;
                    }
                    bins.v[*slot].count++;
                    bins.v[*slot].busy += dur;
                    break;
                }
                st->aggregated++;
                continue;
            }
            uint64_t *ni = gp_u64map_slot(&nameidx, s->name, UINT64_MAX);
            if (!ni) goto done;
            if (*ni == UINT64_MAX) {
                *ni = nnames++;
                if (nnames > 1) gp_sbuf_putc(&names, ',');
                gp_json_str(&names, gp_trace_s(t, s->name));
            }
            const char *sep = firsti ? "" : ",";
            firsti = 0;
            gp_sbuf_printf(&cols[0], "%s%lld", sep, (long long)s->ts);
            gp_sbuf_printf(&cols[1], "%s%lld", sep, (long long)dur);
            gp_sbuf_printf(&cols[2], "%s%u", sep, lv);
            gp_sbuf_printf(&cols[3], "%s%llu", sep, (unsigned long long)*ni);
            gp_kind kd = gp_slice_kind(t, s);
            int kc = kind_code(kd);
            long long corr = (kc == 3 || (gp_kind_mask_gpu_work() & GP_KIND_BIT(kd)))
                                 ? (long long)s->correlation
                                 : -1;
            gp_sbuf_printf(&cols[4], "%s%d", sep, kc);
            gp_sbuf_printf(&cols[5], "%s%lld", sep, corr < 0 ? -1 : corr);
            st->slices++;
        }
        if (!firstt) gp_sbuf_putc(&d, ',');
        firstt = 0;
        gp_sbuf_puts(&d, "{\"name\":");
        gp_json_str(&d, label);
        gp_sbuf_printf(&d, ",\"type\":\"%s\",\"levels\":%u,\"s\":[",
                       t->tracks.v[k].type == GP_TRACK_GPU ? "gpu" : "cpu", levels);
        if (cols[0].n) gp_sbuf_add(&d, cols[0].s, cols[0].n);
        gp_sbuf_puts(&d, "],\"d\":[");
        if (cols[1].n) gp_sbuf_add(&d, cols[1].s, cols[1].n);
        gp_sbuf_puts(&d, "],\"l\":[");
        if (cols[2].n) gp_sbuf_add(&d, cols[2].s, cols[2].n);
        gp_sbuf_puts(&d, "],\"n\":[");
        if (cols[3].n) gp_sbuf_add(&d, cols[3].s, cols[3].n);
        gp_sbuf_puts(&d, "],\"k\":[");
        if (cols[4].n) gp_sbuf_add(&d, cols[4].s, cols[4].n);
        gp_sbuf_puts(&d, "],\"c\":[");
        if (cols[5].n) gp_sbuf_add(&d, cols[5].s, cols[5].n);
        for (int c = 0; c < 6; c++) gp_sbuf_free(&cols[c]);
        gp_sbuf_puts(&d, "],\"b\":[");
        if (bins.n > 1) qsort(bins.v, bins.n, sizeof *bins.v, cmp_bin);
        for (size_t j = 0; j < bins.n; j++)
            gp_sbuf_printf(&d, "%s%u,%lld,%llu,%lld", j ? "," : "", bins.v[j].level,
                           (long long)bins.v[j].bin, (unsigned long long)bins.v[j].count,
                           (long long)bins.v[j].busy);
        st->bins += bins.n;
        gp_sbuf_puts(&d, "]}");
    }
    gp_sbuf_puts(&d, "],\"mem\":[");
    for (size_t i = 0; i < mem.n; i++) {
        const gp_mem_device *dv = &mem.dev[i];
        gp_mem_point *pts = malloc(4000 * sizeof *pts);
        if (!pts) goto done;
        size_t k = gp_memory_downsample(dv, pts, 4000);
        gp_sbuf_printf(&d, "%s{\"label\":", i ? "," : "");
        gp_json_str(&d, dv->label);
        gp_sbuf_printf(&d, ",\"max\":%lld,\"pts\":[", (long long)dv->peak_allocated);
        for (size_t j = 0; j < k; j++)
            gp_sbuf_printf(&d, "%s[%lld,%lld]", j ? "," : "", (long long)pts[j].ts,
                           (long long)pts[j].allocated);
        gp_sbuf_puts(&d, "]}");
        free(pts);
    }
    gp_sbuf_puts(&d, "],\"names\":[");
    if (names.n) gp_sbuf_add(&d, names.s, names.n);
    gp_sbuf_puts(&d, "]}");

    /* the page */
    const char *src = gp_trace_s(t, t->meta.source);
    const char *base = strrchr(src, '/');
    char title[512], v[64];
    snprintf(title, sizeof title, "Timeline: %s", base ? base + 1 : src);
    gp_html_begin(b, title, tl_css);
    gp_sbuf_puts(b, "<div class=\"figs\">");
    fig(b, "tl-span", gp_fmt_dur_auto(v, sizeof v, (double)act.span_ns), "traced span");
    char k1[64];
    fig(b, "tl-cpu", gp_fmt_dur_auto(v, sizeof v, (double)act.cpu_active_ns), "CPU active");
    if (act.gpu_valid) {
        snprintf(k1, sizeof k1, "GPU active (%.1f%% of span)",
                 act.span_ns ? 100.0 * (double)act.gpu_active_ns / (double)act.span_ns : 0.0);
        fig(b, "tl-gpu", gp_fmt_dur_auto(v, sizeof v, (double)act.gpu_active_ns), k1);
        fig(b, "tl-overlap", gp_fmt_dur_auto(v, sizeof v, (double)act.overlap_ns),
            "CPU and GPU both active");
    } else {
        fig(b, "tl-gpu", "N/A", "GPU active (no GPU work in trace)");
        fig(b, "tl-overlap", "N/A", "CPU and GPU both active");
    }
    snprintf(v, sizeof v, "%llu", (unsigned long long)st->slices);
    fig(b, "tl-slices", v, "slices drawn");
    if (bin_ns) {
        char w[64], kk[160];
        snprintf(kk, sizeof kk, "slices shorter than %s aggregated",
                 gp_fmt_dur_auto(w, sizeof w, (double)bin_ns));
        snprintf(v, sizeof v, "%llu", (unsigned long long)st->aggregated);
        fig(b, "tl-aggregated", v, kk);
    }
    gp_sbuf_puts(b,
                 "</div>\n<div class=\"ctl\"><button id=\"tl-in\">Zoom in</button><button "
                 "id=\"tl-out\">Zoom out</button><button id=\"tl-reset\">Reset</button><span "
                 "class=\"mut\">Wheel: zoom at the cursor; drag or shift+wheel: pan; hover: "
                 "details and the launch&#8594;kernel link. <span id=\"tl-range\"></span></span>"
                 "</div>\n<div id=\"tlwrap\"><canvas id=\"tl\" height=\"200\"></canvas></div>\n");
    gp_html_json(b, "tl-data", d.s, d.n);
    gp_html_script(b, tl_js);
    gp_html_end(b);
    rc = 0;
done:
    gp_sbuf_free(&d);
    gp_sbuf_free(&names);
    GP_VEC_FREE(bins);
    gp_u64map_free(&binidx);
    gp_u64map_free(&nameidx);
    gp_nesting_free(&ns);
    gp_memory_free(&mem);
    return rc;
}
