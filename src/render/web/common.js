/* common.js: helpers shared by every gpuprof HTML page, exposed as the
 * global object gp. Embedded at build time (src/render/web/, see
 * docs/security.md).
 *
 * Rule: trace data reaches the DOM only as text. Elements are built with
 * createElement/createElementNS, strings go in through textContent or
 * setAttribute (never innerHTML, outerHTML, insertAdjacentHTML or
 * document.write); tests/t_web_lint.sh enforces it. */
'use strict';
var gp = (function () {
  var SVGNS = 'http://www.w3.org/2000/svg';

  function fmtDur(ns) {
    if (ns == null || isNaN(ns)) return 'N/A';
    var a = Math.abs(ns);
    if (a < 1e4) return ns.toFixed(0) + ' ns';
    if (a < 1e7) return (ns / 1e3).toFixed(3) + ' us';
    if (a < 1e10) return (ns / 1e6).toFixed(3) + ' ms';
    return (ns / 1e9).toFixed(3) + ' s';
  }

  function fmtBytes(b) {
    if (b == null || isNaN(b)) return 'N/A';
    var u = ['B', 'KiB', 'MiB', 'GiB', 'TiB'], i = 0, v = b;
    while (Math.abs(v) >= 1024 && i < 4) { v /= 1024; i++; }
    return (i ? v.toFixed(2) : v.toFixed(0)) + ' ' + u[i];
  }

  function hash(s) {
    var h = 2166136261;
    for (var i = 0; i < s.length; i++) { h ^= s.charCodeAt(i); h = Math.imul(h, 16777619); }
    return h >>> 0;
  }

  function color(name, kind) {
    var h = hash(String(name)), r = (h & 255) / 255, q = ((h >> 8) & 255) / 255;
    switch (kind) {
      case 1: return 'hsl(220,10%,' + (72 + r * 10).toFixed(0) + '%)';
      case 3: return 'hsl(' + (45 + r * 12).toFixed(0) + ',85%,' + (58 + q * 10).toFixed(0) + '%)';
      case 4: return 'hsl(' + (130 + r * 50).toFixed(0) + ',55%,' + (48 + q * 12).toFixed(0) + '%)';
      case 5: return 'hsl(270,40%,70%)';
      case 0: return 'hsl(220,10%,80%)';
      default: return 'hsl(' + (r * 40).toFixed(0) + ',80%,' + (55 + q * 12).toFixed(0) + '%)';
    }
  }

  function el(id) { return typeof id === 'string' ? document.getElementById(id) : id; }

  /* Removes every child of node c. */
  function clear(c) { while (c.firstChild) c.removeChild(c.firstChild); }

  /* Sets attributes from the object attrs (values become strings; names are
   * ours, never data). */
  function setAttrs(e, attrs) {
    if (attrs) Object.keys(attrs).forEach(function (k) { e.setAttribute(k, String(attrs[k])); });
    return e;
  }

  /* An HTML element: tag, attributes, text content (may be null), parent
   * (may be null). */
  function h(tag, attrs, text, parent) {
    var e = setAttrs(document.createElement(tag), attrs);
    if (text != null) e.textContent = String(text);
    if (parent) parent.appendChild(e);
    return e;
  }

  /* The same for an SVG element. */
  function s(tag, attrs, text, parent) {
    var e = setAttrs(document.createElementNS(SVGNS, tag), attrs);
    if (text != null) e.textContent = String(text);
    if (parent) parent.appendChild(e);
    return e;
  }

  /* Replaces the content of c with a muted one-line message. */
  function none(c, msg) { clear(c); h('p', {class: 'mut'}, msg, c); }

  /* The tooltip. t: null hides it; a string is shown as text; {title, text}
   * shows title in bold followed by text on the next lines. */
  var tipEl = null;
  function tip(ev, t) {
    if (!tipEl) tipEl = document.getElementById('tip');
    if (!tipEl) return;
    if (t == null) { tipEl.style.display = 'none'; return; }
    clear(tipEl);
    if (typeof t === 'object') {
      h('b', null, t.title, tipEl);
      tipEl.appendChild(document.createTextNode('\n' + t.text));
    } else {
      tipEl.textContent = String(t);
    }
    tipEl.style.display = 'block';
    var x = ev.clientX + 14, y = ev.clientY + 14, w = tipEl.offsetWidth, hh = tipEl.offsetHeight;
    if (x + w > innerWidth) x = Math.max(0, ev.clientX - w - 8);
    if (y + hh > innerHeight) y = Math.max(0, ev.clientY - hh - 8);
    tipEl.style.left = x + 'px';
    tipEl.style.top = y + 'px';
  }

  /* The JSON value of <script type="application/json" id=ID>. */
  function data(id) { return JSON.parse(document.getElementById(id).textContent); }

  var PAL = ['#4e79a7', '#f28e2b', '#e15759', '#76b7b2', '#59a14f', '#edc948', '#b07aa1',
             '#ff9da7', '#9c755f', '#bab0ac'];

  function ticks(lo, hi, n) {
    var r = hi - lo;
    if (!(r > 0)) return [lo];
    var st = Math.pow(10, Math.floor(Math.log10(r / n))), m = r / n / st;
    st *= m > 5 ? 10 : m > 2 ? 5 : m > 1 ? 2 : 1;
    var out = [];
    for (var v = Math.ceil(lo / st) * st; v <= hi + 1e-9 * r; v += st) out.push(v);
    return out;
  }

  /* Shows the tip stored (as text) in the data-t attribute of the element
   * under the pointer; t is read back with getAttribute and shown with
   * textContent. */
  function hover(c) {
    c.addEventListener('mousemove', function (ev) {
      var t = ev.target.getAttribute && ev.target.getAttribute('data-t');
      tip(ev, t ? t : null);
    });
    c.addEventListener('mouseleave', function (ev) { tip(ev, null); });
  }

  /* Line chart: series [{name,color,pts:[[x,y]..]}], opt {xFmt,yFmt,h,marks:[{x,y,label}]}. */
  function line(id, series, opt) {
    var c = el(id), W = c.clientWidth || 900, H = opt.h || 260, L = 80, R = 16, T = 10, B = 40;
    var x0 = Infinity, x1 = -Infinity, y1 = 0;
    series.forEach(function (sr) {
      sr.pts.forEach(function (p) {
        if (p[0] < x0) x0 = p[0];
        if (p[0] > x1) x1 = p[0];
        if (p[1] > y1) y1 = p[1];
      });
    });
    if (!isFinite(x0)) { none(c, 'No data.'); return; }
    if (x1 <= x0) x1 = x0 + 1;
    if (y1 <= 0) y1 = 1;
    var sx = function (x) { return L + (x - x0) / (x1 - x0) * (W - L - R); };
    var sy = function (y) { return T + (1 - y / y1) * (H - T - B); };
    clear(c);
    var svg = s('svg', {class: 'chart line', width: W, height: H}, null, c);
    ticks(0, y1, 4).forEach(function (v) {
      s('line', {x1: L, x2: W - R, y1: sy(v), y2: sy(v), stroke: '#e3e7ee'}, null, svg);
      s('text', {x: L - 6, y: sy(v) + 4, 'text-anchor': 'end'}, opt.yFmt(v), svg);
    });
    ticks(x0, x1, 6).forEach(function (v) {
      s('text', {x: sx(v), y: H - B + 16, 'text-anchor': 'middle'}, opt.xFmt(v), svg);
    });
    series.forEach(function (sr) {
      var d = sr.pts.map(function (p, i) {
        return i ? 'H' + sx(p[0]).toFixed(1) + 'V' + sy(p[1]).toFixed(1)
                 : 'M' + sx(p[0]).toFixed(1) + ' ' + sy(p[1]).toFixed(1);
      }).join('');
      s('path', {d: d, fill: 'none', stroke: sr.color, 'stroke-width': 1.5}, null, svg);
    });
    (opt.marks || []).forEach(function (m) {
      s('circle', {class: 'mark', cx: sx(m.x), cy: sy(m.y), r: 4, fill: '#e15759'}, null, svg);
      s('text', {x: sx(m.x) + 6, y: sy(m.y) + 4}, m.label, svg);
    });
    series.forEach(function (sr, i) {
      s('rect', {x: L + 10 + i * 170, y: H - 14, width: 10, height: 10, fill: sr.color}, null, svg);
      s('text', {x: L + 24 + i * 170, y: H - 5}, sr.name, svg);
    });
    var cur = s('line', {class: 'cur', y1: T, y2: H - B, stroke: '#888', visibility: 'hidden'},
                null, svg);
    svg.addEventListener('mousemove', function (ev) {
      var r = svg.getBoundingClientRect(), px = ev.clientX - r.left;
      if (px < L || px > W - R) { cur.setAttribute('visibility', 'hidden'); tip(ev, null); return; }
      var x = x0 + (px - L) / (W - L - R) * (x1 - x0);
      cur.setAttribute('x1', px);
      cur.setAttribute('x2', px);
      cur.setAttribute('visibility', 'visible');
      var t = 'at ' + opt.xFmt(x);
      series.forEach(function (sr) {
        var a = 0, b = sr.pts.length - 1;
        if (b < 0) return;
        while (a < b) { var m = (a + b + 1) >> 1; if (sr.pts[m][0] <= x) a = m; else b = m - 1; }
        t += '\n' + sr.name + ': ' + opt.yFmt(sr.pts[a][1]);
      });
      tip(ev, t);
    });
    svg.addEventListener('mouseleave', function (ev) {
      cur.setAttribute('visibility', 'hidden');
      tip(ev, null);
    });
  }

  /* Pie chart: items [{label,value}], fmt formats a value. */
  function pie(id, items, fmt) {
    var c = el(id), tot = 0;
    items.forEach(function (i) { tot += i.value; });
    if (!(tot > 0)) { none(c, 'No data.'); return; }
    var R = 110, cx = 120, cy = 120, a = -Math.PI / 2;
    clear(c);
    var svg = s('svg', {class: 'chart pie', width: Math.max(700, c.clientWidth || 700),
                        height: Math.max(250, 24 + items.length * 18)}, null, c);
    items.forEach(function (it, k) {
      var f = it.value / tot, b = a + f * 2 * Math.PI, col = PAL[k % 10];
      var t = it.label + ': ' + fmt(it.value) + ' (' + (100 * f).toFixed(1) + '%)';
      if (f >= 0.9999) {
        s('circle', {class: 'slice', cx: cx, cy: cy, r: R, fill: col, 'data-t': t}, null, svg);
      } else {
        var d = 'M' + cx + ' ' + cy + 'L' + (cx + R * Math.cos(a)).toFixed(2) + ' ' +
                (cy + R * Math.sin(a)).toFixed(2) + 'A' + R + ' ' + R + ' 0 ' + (f > 0.5 ? 1 : 0) +
                ' 1 ' + (cx + R * Math.cos(b)).toFixed(2) + ' ' + (cy + R * Math.sin(b)).toFixed(2) +
                'Z';
        s('path', {class: 'slice', d: d, fill: col, stroke: '#fff', 'data-t': t}, null, svg);
      }
      s('rect', {x: 260, y: 14 + k * 18, width: 10, height: 10, fill: col}, null, svg);
      s('text', {x: 276, y: 23 + k * 18}, t, svg);
      a = b;
    });
    hover(c);
  }

  /* Horizontal stacked bars: items [{label,parts:[..]}], names of the parts,
   * fmt formats a value. */
  function bars(id, items, names, fmt) {
    var c = el(id), W = c.clientWidth || 900, LW = Math.min(360, W * 0.4), RH = 20, mx = 0;
    if (!items.length) { none(c, 'No data.'); return; }
    items.forEach(function (it) {
      var sum = 0;
      it.parts.forEach(function (v) { sum += v; });
      if (sum > mx) mx = sum;
    });
    if (!(mx > 0)) mx = 1;
    clear(c);
    var svg = s('svg', {class: 'chart bars', width: W,
                        height: items.length * RH + (names.length > 1 ? 30 : 8)}, null, c);
    items.forEach(function (it, k) {
      var y = k * RH + 4, x = LW, sum = 0;
      var lbl = it.label.length > 60 ? it.label.slice(0, 58) + '\u2026' : it.label;
      s('text', {x: LW - 6, y: y + 13, 'text-anchor': 'end'}, lbl, svg);
      it.parts.forEach(function (v, p) {
        var w = v / mx * (W - LW - 110);
        sum += v;
        if (w > 0)
          s('rect', {class: 'bar', x: x.toFixed(1), y: y, width: w.toFixed(1), height: RH - 5,
                     fill: PAL[p % 10], 'data-t': it.label + '\n' + names[p] + ': ' + fmt(v)},
            null, svg);
        x += w;
      });
      s('text', {x: (x + 4).toFixed(1), y: y + 13}, fmt(sum), svg);
    });
    if (names.length > 1)
      names.forEach(function (n, p) {
        s('rect', {x: LW + p * 150, y: items.length * RH + 10, width: 10, height: 10,
                   fill: PAL[p % 10]}, null, svg);
        s('text', {x: LW + 14 + p * 150, y: items.length * RH + 19}, n, svg);
      });
    hover(c);
  }

  /* Sortable table: a click on a header sorts by that column (numeric by
   * data-v when both cells have it, else by text). */
  function sortable(t) {
    var th = t.querySelectorAll('th');
    th.forEach(function (hd, i) {
      hd.addEventListener('click', function () {
        var b = t.tBodies[0], rows = Array.prototype.slice.call(b.rows), asc = hd.dataset.s !== 'a';
        th.forEach(function (x) { delete x.dataset.s; });
        hd.dataset.s = asc ? 'a' : 'd';
        rows.sort(function (p, q) {
          var u = p.cells[i].dataset.v, v = q.cells[i].dataset.v, r;
          if (u !== undefined && v !== undefined) r = (+u) - (+v);
          else r = p.cells[i].textContent.localeCompare(q.cells[i].textContent);
          return asc ? r : -r;
        });
        rows.forEach(function (r) { b.appendChild(r); });
      });
    });
  }

  return {fmtDur: fmtDur, fmtBytes: fmtBytes, hash: hash, color: color, tip: tip, data: data,
          PAL: PAL, ticks: ticks, line: line, pie: pie, bars: bars, sortable: sortable,
          hover: hover, el: el, clear: clear, h: h, s: s, none: none};
})();
