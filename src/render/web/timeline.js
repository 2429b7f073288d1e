/* timeline.js: the canvas timeline viewer (gpuprof timeline --html). Data in
 * <script type="application/json" id="tl-data">. Names are drawn on the
 * canvas or shown as text in the tooltip. */
'use strict';
(function () {
  var D = gp.data('tl-data'), NM = D.names, TR = D.tracks, cv = document.getElementById('tl');
  var ctx = cv.getContext('2d'), LW = 190, RH = 14, AX = 22, v0 = 0, v1 = Math.max(D.span, 1);
  var hov = null, corr = {}, drag = null, lastY = 0, MEMH = 46;
  TR.forEach(function (t, ti) {
    t.y = 0;
    for (var i = 0; i < t.c.length; i++)
      if (t.c[i] >= 0) {
        var e = corr[t.c[i]] || (corr[t.c[i]] = {});
        if (t.k[i] === 3) e.l = [ti, i];
        else if (t.k[i] === 4) e.g = [ti, i];
      }
  });
  function layout() {
    var y = AX;
    TR.forEach(function (t) { t.y = y; y += (t.levels + 1) * RH + 6; });
    D.mem.forEach(function (m) { m.y = y; y += MEMH + 6; });
    return y;
  }
  var H = layout();
  function W() { return cv.parentNode.clientWidth || 1200; }
  function X(ns) { return LW + (ns - v0) / (v1 - v0) * (W() - LW); }

  function draw() {
    var w = W();
    cv.width = w;
    cv.height = H;
    ctx.font = '11px system-ui,sans-serif';
    ctx.fillStyle = '#fff';
    ctx.fillRect(0, 0, w, H);
    var sc = (w - LW) / (v1 - v0);
    ctx.fillStyle = '#5b6475';
    gp.ticks(v0, v1, 8).forEach(function (v) {
      var x = X(v);
      ctx.fillRect(x, AX - 4, 1, 4);
      ctx.fillText(gp.fmtDur(v), x + 2, AX - 8);
    });
    TR.forEach(function (t) {
      ctx.fillStyle = t.type === 'gpu' ? '#eef7ef' : '#f5f6f9';
      ctx.fillRect(0, t.y, w, (t.levels + 1) * RH + 4);
      ctx.save();
      ctx.beginPath();
      ctx.rect(LW, t.y, w - LW, (t.levels + 1) * RH + 4);
      ctx.clip();
      var b = t.b, i;
      for (i = 0; i < b.length; i += 4) {
        var bx = X(b[i + 1] * D.bin_ns), bw = Math.max(D.bin_ns * sc, 1);
        if (bx + bw < LW || bx > w) continue;
        ctx.fillStyle = 'rgba(90,100,120,' + Math.min(1, 0.25 + 0.75 * b[i + 3] / D.bin_ns).toFixed(2) + ')';
        ctx.fillRect(bx, t.y + b[i] * RH, bw, RH - 1);
      }
      var last = new Float64Array(t.levels + 1).fill(-1);
      for (i = 0; i < t.s.length; i++) {
        var s = t.s[i];
        if (s > v1) break;
        if (s + t.d[i] < v0) continue;
        var x = X(s), xw = Math.max(t.d[i] * sc, 0.8), lv = t.l[i];
        if (xw < 2 && x - last[lv] < 1) continue;
        last[lv] = x;
        ctx.fillStyle = gp.color(NM[t.n[i]], t.k[i]);
        ctx.fillRect(x, t.y + lv * RH, xw, RH - 1);
        if (xw > 40) {
          ctx.fillStyle = '#111';
          var nm = NM[t.n[i]], mc = Math.floor((xw - 4) / 6.2);
          ctx.fillText(nm.length > mc ? nm.slice(0, Math.max(mc - 1, 0)) + '\u2026' : nm,
                       Math.max(x, LW) + 2, t.y + lv * RH + 10);
        }
      }
      ctx.restore();
      ctx.fillStyle = '#1d2330';
      ctx.fillText(t.name.length > 30 ? t.name.slice(0, 29) + '\u2026' : t.name, 4, t.y + 11);
    });
    D.mem.forEach(function (m) {
      ctx.fillStyle = '#fbf7ef';
      ctx.fillRect(0, m.y, w, MEMH);
      ctx.fillStyle = '#1d2330';
      ctx.fillText('memory ' + m.label, 4, m.y + 11);
      ctx.fillText(gp.fmtBytes(m.max), 4, m.y + 25);
      ctx.save();
      ctx.beginPath();
      ctx.rect(LW, m.y, w - LW, MEMH);
      ctx.clip();
      ctx.strokeStyle = '#4e79a7';
      ctx.beginPath();
      var p = m.pts;
      for (var i = 0; i < p.length; i++) {
        var x = X(p[i][0]), y = m.y + MEMH - 2 - (MEMH - 6) * p[i][1] / (m.max || 1);
        if (i) ctx.lineTo(x, lastY);
        else ctx.moveTo(x, y);
        ctx.lineTo(x, y);
        lastY = y;
      }
      ctx.stroke();
      ctx.restore();
    });
    if (hov && hov.link) {
      ctx.strokeStyle = '#e15759';
      ctx.lineWidth = 1.5;
      ctx.beginPath();
      ctx.moveTo(hov.link[0], hov.link[1]);
      ctx.lineTo(hov.link[2], hov.link[3]);
      ctx.stroke();
      ctx.lineWidth = 1;
    }
    document.getElementById('tl-range').textContent =
        gp.fmtDur(v0) + ' \u2013 ' + gp.fmtDur(v1) + ' (' + gp.fmtDur(v1 - v0) + ' shown)';
  }

  function pos(ti, i) {
    var t = TR[ti];
    return [X(t.s[i] + t.d[i] / 2), t.y + t.l[i] * RH + RH / 2];
  }

  function find(mx, my) {
    var tn = (mx - LW) / (W() - LW) * (v1 - v0) + v0, tol = 3 * (v1 - v0) / (W() - LW);
    for (var ti = 0; ti < TR.length; ti++) {
      var t = TR[ti];
      if (my < t.y || my >= t.y + (t.levels + 1) * RH) continue;
      var lv = Math.floor((my - t.y) / RH), best = -1;
      for (var i = 0; i < t.s.length; i++) {
        if (t.s[i] > tn + tol) break;
        if (t.l[i] === lv && t.s[i] + t.d[i] >= tn - tol) best = i;
      }
      if (best >= 0) return {ti: ti, i: best};
      for (var j = 0; j < t.b.length; j += 4)
        if (t.b[j] === lv && Math.floor(tn / D.bin_ns) === t.b[j + 1]) return {ti: ti, bin: j};
    }
    return null;
  }

  cv.addEventListener('mousemove', function (ev) {
    if (drag) {
      var dx = ev.clientX - drag.x, d = dx / (W() - LW) * (drag.v1 - drag.v0);
      v0 = drag.v0 - d;
      v1 = drag.v1 - d;
      draw();
      return;
    }
    var r = cv.getBoundingClientRect(), f = find(ev.clientX - r.left, ev.clientY - r.top);
    hov = null;
    if (!f) { gp.tip(ev, null); draw(); return; }
    var t = TR[f.ti];
    if (f.bin !== undefined) {
      gp.tip(ev, t.b[f.bin + 2] + ' slices shorter than ' + gp.fmtDur(D.bin_ns) +
                 ' aggregated here\nbusy ' + gp.fmtDur(t.b[f.bin + 3]));
      draw();
      return;
    }
    var i = f.i, txt = t.name + '\nstart ' + gp.fmtDur(t.s[i]) + '\nduration ' + gp.fmtDur(t.d[i]);
    var c = t.c[i];
    if (c >= 0 && corr[c]) {
      var e = corr[c];
      if (e.l && e.g) {
        var a = pos(e.l[0], e.l[1]), b = pos(e.g[0], e.g[1]), L = TR[e.l[0]], G = TR[e.g[0]];
        hov = {link: [a[0], a[1], b[0], b[1]]};
        txt += t.k[i] === 4
                   ? '\nlaunched by ' + NM[L.n[e.l[1]]] + ' at ' + gp.fmtDur(L.s[e.l[1]]) +
                         ' (delay ' + gp.fmtDur(G.s[e.g[1]] - L.s[e.l[1]]) + ')'
                   : '\nlaunches ' + NM[G.n[e.g[1]]] + ' on ' + G.name;
      }
      txt += '\ncorrelation ' + c;
    }
    gp.tip(ev, {title: NM[t.n[i]], text: txt});
    draw();
  });
  cv.addEventListener('mouseleave', function (ev) { gp.tip(ev, null); hov = null; draw(); });
  cv.addEventListener('mousedown', function (ev) {
    drag = {x: ev.clientX, v0: v0, v1: v1};
    cv.classList.add('drag');
  });
  window.addEventListener('mouseup', function () { drag = null; cv.classList.remove('drag'); });

  function zoom(f, cx) {
    var r = cv.getBoundingClientRect(), px = cx === undefined ? (W() + LW) / 2 : cx - r.left;
    var tc = v0 + Math.max(0, px - LW) / (W() - LW) * (v1 - v0), nw = Math.max((v1 - v0) * f, 1000);
    v0 = tc - (tc - v0) * nw / (v1 - v0);
    v1 = v0 + nw;
    draw();
  }
  cv.addEventListener('wheel', function (ev) {
    ev.preventDefault();
    if (ev.shiftKey) {
      var d = (v1 - v0) * ev.deltaY / 1000;
      v0 += d;
      v1 += d;
      draw();
    } else {
      zoom(ev.deltaY > 0 ? 1.25 : 0.8, ev.clientX);
    }
  }, {passive: false});
  document.getElementById('tl-in').onclick = function () { zoom(0.5); };
  document.getElementById('tl-out').onclick = function () { zoom(2); };
  document.getElementById('tl-reset').onclick = function () { v0 = 0; v1 = Math.max(D.span, 1); draw(); };
  window.addEventListener('resize', draw);
  var hr = location.hash.match(/range=([0-9.e+]+),([0-9.e+]+)/);
  if (hr && +hr[2] > +hr[1]) { v0 = +hr[1]; v1 = +hr[2]; }
  draw();
  document.body.setAttribute('data-ready', '1');
})();
