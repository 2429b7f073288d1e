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
    "return {fmtDur:fmtDur,fmtBytes:fmtBytes,esc:esc,hash:hash,color:color,tip:tip,data:data};"
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
    gp_sbuf_puts(b, "<script type=\"application/json\" id=\"");
    gp_html_escape(b, id);
    gp_sbuf_puts(b, "\">");
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
