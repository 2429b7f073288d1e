/* render/html.c: the page frame, common CSS/JS and file writing shared by
 * every HTML view. No external resources: everything is inline. */
#include "render/html.h"
#include <errno.h>
#include <gpuprof/common.h>
#include <stdio.h>
#include <string.h>

static const char common_css[] =
    ":root{--fg:#1d2330;--mut:#5b6475;--bg:#fff;--line:#d8dde6;--acc:#2f6fde}\n"
    "*{box-sizing:border-box}body{font:14px/1.4 system-ui,-apple-system,'Segoe "
    "UI',sans-serif;color:var(--fg);background:var(--bg);margin:0;padding:16px 24px}\n"
    "h1{font-size:20px;margin:0 0 8px}h2{font-size:16px;margin:24px 0 8px;border-bottom:1px "
    "solid var(--line);padding-bottom:4px}\n"
    ".figs{display:flex;flex-wrap:wrap;gap:10px;margin:8px "
    "0}.fig{border:1px solid var(--line);border-radius:6px;padding:6px 12px;min-width:120px}\n"
    ".fig .v{font-size:18px;font-weight:600}.fig .k{color:var(--mut);font-size:12px}\n"
    ".tip{position:fixed;pointer-events:none;background:#1d2330;color:#fff;padding:6px "
    "8px;border-radius:4px;font-size:12px;max-width:560px;display:none;z-index:10;"
    "white-space:pre-wrap;word-break:break-all}\n"
    "table{border-collapse:collapse;font-size:12px}th,td{border-bottom:1px solid "
    "var(--line);padding:3px 8px;text-align:right}th{background:#f3f5f9;cursor:pointer;"
    "position:sticky;top:0}td.l,th.l{text-align:left}\n"
    "button,input{font:inherit}.ctl{display:flex;gap:8px;align-items:center;margin:8px 0}\n"
    ".mut{color:var(--mut)}footer{margin-top:24px;color:var(--mut);font-size:12px}\n"
    "svg text{font:11px system-ui,sans-serif}\n"
    "@media print{.ctl,.tip{display:none!important}body{padding:0}h2{break-after:avoid}"
    ".card,svg,table{break-inside:avoid}}\n";

/* Common helpers, exposed as the global object gp. */
static const char common_js[] =
    "var gp=(function(){\n"
    "function fmtDur(ns){if(ns==null||isNaN(ns))return 'N/A';var a=Math.abs(ns);"
    "if(a<1e4)return ns.toFixed(0)+' ns';if(a<1e7)return (ns/1e3).toFixed(3)+' us';"
    "if(a<1e10)return (ns/1e6).toFixed(3)+' ms';return (ns/1e9).toFixed(3)+' s';}\n"
    "function fmtBytes(b){if(b==null||isNaN(b))return 'N/A';var u=['B','KiB','MiB','GiB','TiB'],"
    "i=0,v=b;while(Math.abs(v)>=1024&&i<4){v/=1024;i++;}return (i?v.toFixed(2):v.toFixed(0))+' "
    "'+u[i];}\n"
    "function esc(s){return String(s).replace(/[&<>\"']/g,function(c){return "
    "{'&':'&amp;','<':'&lt;','>':'&gt;','\"':'&quot;',\"'\":'&#39;'}[c];});}\n"
    "function hash(s){var h=2166136261;for(var i=0;i<s.length;i++){h^=s.charCodeAt(i);"
    "h=Math.imul(h,16777619);}return h>>>0;}\n"
    "function color(name,kind){var h=hash(name),r=(h&255)/255,q=((h>>8)&255)/255;"
    "switch(kind){case 1:return 'hsl(220,10%,'+(72+r*10).toFixed(0)+'%)';"
    "case 3:return 'hsl('+(45+r*12).toFixed(0)+',85%,'+(58+q*10).toFixed(0)+'%)';"
    "case 4:return 'hsl('+(130+r*50).toFixed(0)+',55%,'+(48+q*12).toFixed(0)+'%)';"
    "case 5:return 'hsl(270,40%,70%)';case 0:return 'hsl(220,10%,80%)';"
    "default:return 'hsl('+(r*40).toFixed(0)+',80%,'+(55+q*12).toFixed(0)+'%)';}}\n"
    "var tipEl=null;function tip(ev,html){if(!tipEl)tipEl=document.getElementById('tip');"
    "if(!tipEl)return;if(html==null){tipEl.style.display='none';return;}tipEl.innerHTML=html;"
    "tipEl.style.display='block';var x=ev.clientX+14,y=ev.clientY+14,w=tipEl.offsetWidth,"
    "h=tipEl.offsetHeight;if(x+w>innerWidth)x=Math.max(0,ev.clientX-w-8);"
    "if(y+h>innerHeight)y=Math.max(0,ev.clientY-h-8);tipEl.style.left=x+'px';"
    "tipEl.style.top=y+'px';}\n"
    "function data(id){return JSON.parse(document.getElementById(id).textContent);}\n"
    "var PAL=['#4e79a7','#f28e2b','#e15759','#76b7b2','#59a14f','#edc948','#b07aa1','#ff9da7',"
    "'#9c755f','#bab0ac'];\n"
    "function el(id){return typeof id==='string'?document.getElementById(id):id;}\n"
    "function ticks(lo,hi,n){var r=hi-lo;if(!(r>0))return [lo];var s=Math.pow(10,Math.floor("
    "Math.log10(r/n))),m=r/n/s;s*=m>5?10:m>2?5:m>1?2:1;var out=[];for(var v=Math.ceil(lo/s)*s;"
    "v<=hi+1e-9*r;v+=s)out.push(v);return out;}\n"
    /* line chart: series [{name,color,pts:[[x,y]..]}], opt {xFmt,yFmt,h,marks:[{x,y,label}]} */
    "function line(id,series,opt){var c=el(id),W=c.clientWidth||900,H=opt.h||260,L=80,R=16,T=10,"
    "B=40,x0=Infinity,x1=-Infinity,y1=0;series.forEach(function(s){s.pts.forEach(function(p){"
    "if(p[0]<x0)x0=p[0];if(p[0]>x1)x1=p[0];if(p[1]>y1)y1=p[1];});});if(!isFinite(x0)){c.innerHTML="
    "'<p class=\"mut\">No data.</p>';return;}if(x1<=x0)x1=x0+1;if(y1<=0)y1=1;var sx=function(x){"
    "return L+(x-x0)/(x1-x0)*(W-L-R);},sy=function(y){return T+(1-y/y1)*(H-T-B);},o=[];\n"
    "ticks(0,y1,4).forEach(function(v){o.push('<line x1=\"'+L+'\" x2=\"'+(W-R)+'\" y1=\"'+sy(v)+"
    "'\" y2=\"'+sy(v)+'\" stroke=\"#e3e7ee\"/><text x=\"'+(L-6)+'\" y=\"'+(sy(v)+4)+'\" "
    "text-anchor=\"end\">'+esc(opt.yFmt(v))+'</text>');});ticks(x0,x1,6).forEach(function(v){"
    "o.push('<text x=\"'+sx(v)+'\" y=\"'+(H-B+16)+'\" text-anchor=\"middle\">'+esc(opt.xFmt(v))+"
    "'</text>');});series.forEach(function(s){var d=s.pts.map(function(p,i){return "
    "i?'H'+sx(p[0]).toFixed(1)+"
    "'V'+sy(p[1]).toFixed(1):'M'+sx(p[0]).toFixed(1)+' "
    "'+sy(p[1]).toFixed(1);}).join('');o.push('<path d=\"'+d+'\" "
    "fill=\"none\" "
    "stroke=\"'+s.color+'\" stroke-width=\"1.5\"/>');});(opt.marks||[]).forEach(function(m){"
    "o.push('<circle class=\"mark\" cx=\"'+sx(m.x)+'\" cy=\"'+sy(m.y)+'\" r=\"4\" "
    "fill=\"#e15759\"/>"
    "<text x=\"'+(sx(m.x)+6)+'\" y=\"'+(sy(m.y)+4)+'\">'+esc(m.label)+'</text>');});\n"
    "var lg=series.map(function(s,i){return '<rect x=\"'+(L+10+i*170)+'\" y=\"'+(H-14)+'\" "
    "width=\"10\" "
    "height=\"10\" fill=\"'+s.color+'\"/><text x=\"'+(L+24+i*170)+'\" "
    "y=\"'+(H-5)+'\">'+esc(s.name)+"
    "'</text>';}).join('');c.innerHTML='<svg class=\"chart line\" width=\"'+W+'\" "
    "height=\"'+H+'\">'+"
    "o.join('')+lg+'<line class=\"cur\" y1=\"'+T+'\" y2=\"'+(H-B)+'\" stroke=\"#888\" "
    "visibility=\"hidden\"/></svg>';var svg=c.firstChild,cur=svg.lastChild;\n"
    "svg.addEventListener('mousemove',function(ev){var "
    "r=svg.getBoundingClientRect(),px=ev.clientX-r.left;"
    "if(px<L||px>W-R){cur.setAttribute('visibility','hidden');tip(ev,null);return;}var x=x0+(px-L)/"
    "(W-L-R)*(x1-x0);cur.setAttribute('x1',px);cur.setAttribute('x2',px);cur.setAttribute('"
    "visibility',"
    "'visible');var h='at '+esc(opt.xFmt(x));series.forEach(function(s){var a=0,b=s.pts.length-1;"
    "if(b<0)return;while(a<b){var m=(a+b+1)>>1;if(s.pts[m][0]<=x)a=m;else "
    "b=m-1;}h+='\\n'+esc(s.name)+"
    "': "
    "'+esc(opt.yFmt(s.pts[a][1]));});tip(ev,h);});svg.addEventListener('mouseleave',function(ev){"
    "cur.setAttribute('visibility','hidden');tip(ev,null);});}\n"
    /* pie: items [{label,value}] */
    "function pie(id,items,fmt){var c=el(id),tot=0;items.forEach(function(i){tot+=i.value;});"
    "if(!(tot>0)){c.innerHTML='<p class=\"mut\">No data.</p>';return;}var "
    "R=110,cx=120,cy=120,a=-Math.PI/2,"
    "o=[];items.forEach(function(it,k){var "
    "f=it.value/tot,b=a+f*2*Math.PI,col=PAL[k%10],t=esc(it.label)+"
    "': '+esc(fmt(it.value))+' ('+(100*f).toFixed(1)+'%)';if(f>=0.9999)o.push('<circle "
    "class=\"slice\" "
    "cx=\"'+cx+'\" cy=\"'+cy+'\" r=\"'+R+'\" fill=\"'+col+'\" data-t=\"'+t+'\"/>');else "
    "o.push('<path "
    "class=\"slice\" d=\"M'+cx+' '+cy+'L'+(cx+R*Math.cos(a)).toFixed(2)+' "
    "'+(cy+R*Math.sin(a)).toFixed(2)+"
    "'A'+R+' '+R+' 0 '+(f>0.5?1:0)+' 1 '+(cx+R*Math.cos(b)).toFixed(2)+' "
    "'+(cy+R*Math.sin(b)).toFixed(2)+"
    "'Z\" fill=\"'+col+'\" stroke=\"#fff\" data-t=\"'+t+'\"/>');o.push('<rect x=\"260\" "
    "y=\"'+(14+k*18)+"
    "'\" width=\"10\" height=\"10\" fill=\"'+col+'\"/><text x=\"276\" "
    "y=\"'+(23+k*18)+'\">'+t+'</text>');"
    "a=b;});c.innerHTML='<svg class=\"chart pie\" width=\"'+Math.max(700,c.clientWidth||700)+'\" "
    "height=\"'+Math.max(250,24+items.length*18)+'\">'+o.join('')+'</svg>';hover(c);}\n"
    "function hover(c){c.addEventListener('mousemove',function(ev){var t=ev.target.getAttribute&&"
    "ev.target.getAttribute('data-t');tip(ev,t?t:null);});c.addEventListener('mouseleave',function("
    "ev){"
    "tip(ev,null);});}\n"
    /* horizontal bars, each with parts: items [{label,parts:[..]}], names, fmt */
    "function bars(id,items,names,fmt){var c=el(id),W=c.clientWidth||900,LW=Math.min(360,W*0.4),"
    "RH=20,mx=0,o=[];items.forEach(function(it){var s=0;it.parts.forEach(function(v){s+=v;});"
    "if(s>mx)mx=s;});if(!items.length){c.innerHTML='<p class=\"mut\">No data.</p>';return;}"
    "if(!(mx>0))mx=1;items.forEach(function(it,k){var y=k*RH+4,x=LW,s=0,lbl=it.label.length>60?"
    "it.label.slice(0,58)+'\\u2026':it.label;o.push('<text x=\"'+(LW-6)+'\" y=\"'+(y+13)+'\" "
    "text-anchor=\"end\">'+esc(lbl)+'</text>');it.parts.forEach(function(v,p){var "
    "w=v/mx*(W-LW-110);"
    "s+=v;if(w>0)o.push('<rect class=\"bar\" x=\"'+x.toFixed(1)+'\" y=\"'+y+'\" "
    "width=\"'+w.toFixed(1)+"
    "'\" height=\"'+(RH-5)+'\" fill=\"'+PAL[p%10]+'\" data-t=\"'+esc(it.label)+'\\n'+esc(names[p])+"
    "': '+esc(fmt(v))+'\"/>');x+=w;});o.push('<text x=\"'+(x+4).toFixed(1)+'\" y=\"'+(y+13)+'\">'+"
    "esc(fmt(s))+'</text>');});var lg=names.length>1?names.map(function(n,p){return '<rect x=\"'+"
    "(LW+p*150)+'\" y=\"'+(items.length*RH+10)+'\" width=\"10\" height=\"10\" "
    "fill=\"'+PAL[p%10]+'\"/>"
    "<text x=\"'+(LW+14+p*150)+'\" "
    "y=\"'+(items.length*RH+19)+'\">'+esc(n)+'</text>';}).join(''):'';"
    "c.innerHTML='<svg class=\"chart bars\" width=\"'+W+'\" height=\"'+(items.length*RH+(lg?30:8))+"
    "'\">'+o.join('')+lg+'</svg>';hover(c);}\n"
    /* sortable tables: click a header */
    "function sortable(t){var "
    "th=t.querySelectorAll('th');th.forEach(function(h,i){h.addEventListener("
    "'click',function(){var "
    "b=t.tBodies[0],rows=Array.prototype.slice.call(b.rows),asc=h.dataset.s!=="
    "'a';th.forEach(function(x){delete "
    "x.dataset.s;});h.dataset.s=asc?'a':'d';rows.sort(function(p,q){"
    "var "
    "u=p.cells[i].dataset.v,v=q.cells[i].dataset.v,r;if(u!==undefined&&v!==undefined)r=(+u)-(+v);"
    "else r=p.cells[i].textContent.localeCompare(q.cells[i].textContent);return "
    "asc?r:-r;});rows.forEach("
    "function(r){b.appendChild(r);});});});}\n"
    "return {fmtDur:fmtDur,fmtBytes:fmtBytes,esc:esc,hash:hash,color:color,tip:tip,data:data,"
    "PAL:PAL,ticks:ticks,line:line,pie:pie,bars:bars,sortable:sortable,hover:hover};"
    "})();\n";

void gp_html_begin(gp_sbuf *b, const char *title, const char *extra_css)
{
    gp_sbuf_puts(b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
                    "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\n"
                    "<meta name=\"generator\" content=\"gpuprof ");
    gp_html_escape(b, gp_version());
    gp_sbuf_puts(b, "\">\n<title>");
    gp_html_escape(b, title);
    gp_sbuf_puts(b, "</title>\n<style>\n");
    gp_sbuf_puts(b, common_css);
    if (extra_css) gp_sbuf_puts(b, extra_css);
    gp_sbuf_puts(b, "</style></head>\n<body>\n<h1>");
    gp_html_escape(b, title);
    gp_sbuf_puts(b, "</h1>\n<div id=\"tip\" class=\"tip\"></div>\n");
}

void gp_html_json(gp_sbuf *b, const char *id, const char *json, size_t n)
{
    gp_html_json_attrs(b, id, NULL, json, n);
}

void gp_html_json_attrs(gp_sbuf *b, const char *id, const char *attrs, const char *json, size_t n)
{
    gp_sbuf_puts(b, "<script type=\"application/json\" id=\"");
    gp_html_escape(b, id);
    gp_sbuf_puts(b, "\"");
    if (attrs) {
        gp_sbuf_putc(b, ' ');
        gp_sbuf_puts(b, attrs);
    }
    gp_sbuf_puts(b, ">");
    const char *p = json, *lim = json + n;
    while (p < lim) {
        const char *lt = memchr(p, '<', (size_t)(lim - p));
        if (!lt) {
            gp_sbuf_add(b, p, (size_t)(lim - p));
            break;
        }
        gp_sbuf_add(b, p, (size_t)(lt - p) + 1);
        if (lt + 1 < lim && (lt[1] == '/' || lt[1] == '!')) {
            /* "<\/" and "<\u0021" keep the JSON value and cannot end the element */
            gp_sbuf_puts(b, lt[1] == '/' ? "\\/" : "\\u0021");
            p = lt + 2;
        } else {
            p = lt + 1;
        }
    }
    gp_sbuf_puts(b, "</script>\n");
}

void gp_html_script(gp_sbuf *b, const char *js)
{
    gp_sbuf_puts(b, "<script>\n");
    gp_sbuf_puts(b, common_js);
    if (js) gp_sbuf_puts(b, js);
    gp_sbuf_puts(b, "</script>\n");
}

void gp_html_end(gp_sbuf *b)
{
    gp_sbuf_puts(b, "<footer>Written by gpuprof ");
    gp_html_escape(b, gp_version());
    gp_sbuf_puts(b, "; self-contained page, no network access.</footer>\n</body></html>\n");
}

int gp_write_file(const char *path, const gp_sbuf *b, gp_err *err)
{
    if (!strcmp(path, "-")) {
        if (gp_sbuf_write(b, stdout) || fflush(stdout))
            return gp_err_set(err, GP_EIO, "stdout: write failed");
        return 0;
    }
    FILE *f = fopen(path, "wb");
    if (!f) return gp_err_set(err, GP_EIO, "%s: %s", path, strerror(errno));
    int bad = gp_sbuf_write(b, f) != 0;
    if (fclose(f) != 0) bad = 1;
    if (bad) return gp_err_set(err, GP_EIO, "%s: write failed", path);
    return 0;
}

int gp_path_has_suffix(const char *path, const char *suffix)
{
    size_t n = strlen(path), m = strlen(suffix);
    return n >= m && !memcmp(path + n - m, suffix, m);
}
