/* flame.js: the interactive flame graph (gpuprof flame --html). Data in
 * <script type="application/json" id="fg-data">: names, and per node in
 * pre-order its parent position p, name id n, kind k and total t. Frame
 * names reach the DOM only as text. */
'use strict';
(function () {
  var D = gp.data('fg-data'), NM = D.names, P = D.p, N = D.n, K = D.k, T = D.t, n = P.length;
  var unit = D.unit, kids = new Array(n), i;
  for (i = 0; i < n; i++) kids[i] = [];
  for (i = 1; i < n; i++) kids[P[i]].push(i);
  var svg = document.getElementById('fg'), RH = 17, zoom = 0, hit = null;
  var KN = ['all', 'thread / stream', 'CPU operator or range', 'runtime call (launch)',
            'GPU kernel / copy / memset', 'small GPU work (grouped)'];

  function fmt(v) { return unit === 'ns' ? gp.fmtDur(v) : v.toLocaleString() + ' ' + unit; }

  function selfOf(i) {
    var s = T[i], k = kids[i];
    for (var c = 0; c < k.length; c++) s -= T[k[c]];
    return s;
  }

  function render() {
    var W = svg.clientWidth || 1200, drawn = 0, maxrow = 0;
    gp.clear(svg);
    if (!(T[zoom] > 0)) {
      document.getElementById('fg-shown').textContent = '0';
      return;
    }
    var sc = W / T[zoom], anc = [], a = zoom;
    for (;;) { anc.push(a); if (a === 0) break; a = P[a]; }
    anc.reverse();
    function box(i, x, w, row) {
      var y = row * RH, c = hit && hit[i] ? '#e040fb' : gp.color(NM[N[i]], K[i]);
      var lbl = NM[N[i]], mc = Math.floor((w - 6) / 6.3);
      if (lbl.length > mc) lbl = mc > 3 ? lbl.slice(0, mc - 1) + '\u2026' : '';
      var g = gp.s('g', {class: 'f', 'data-i': i}, null, svg);
      gp.s('rect', {x: x.toFixed(1), y: y, width: Math.max(w - 0.6, 0.4).toFixed(1),
                    height: RH - 1, rx: 2, fill: c}, null, g);
      if (lbl) gp.s('text', {x: (x + 3).toFixed(1), y: y + 12}, lbl, g);
      drawn++;
      if (row > maxrow) maxrow = row;
    }
    for (var j = 0; j < anc.length; j++) box(anc[j], 0, W, j);
    var st = [[zoom, 0, anc.length - 1]];
    while (st.length) {
      var e = st.pop(), x = e[1], row = e[2];
      i = e[0];
      if (i !== zoom) box(i, x, T[i] * sc, row);
      var cx = x, ks = kids[i];
      for (var c = 0; c < ks.length; c++) {
        var w = T[ks[c]] * sc;
        if (w >= 0.5) st.push([ks[c], cx, row + 1]);
        cx += w;
      }
    }
    svg.setAttribute('height', (maxrow + 1) * RH + 2);
    document.getElementById('fg-shown').textContent = String(drawn);
    document.getElementById('fg-zoom').textContent = zoom ? NM[N[zoom]] : 'all';
  }

  svg.addEventListener('mousemove', function (ev) {
    var g = ev.target.closest('g.f');
    if (!g) { gp.tip(ev, null); return; }
    var i = +g.dataset.i;
    gp.tip(ev, {title: NM[N[i]],
                text: KN[K[i]] + '\ntotal ' + fmt(T[i]) + ' (' + (100 * T[i] / T[0]).toFixed(2) +
                      '% of all' +
                      (i ? ', ' + (T[P[i]] ? 100 * T[i] / T[P[i]] : 0).toFixed(2) + '% of parent'
                         : '') +
                      ')\nself ' + fmt(selfOf(i))});
  });
  svg.addEventListener('mouseleave', function (ev) { gp.tip(ev, null); });
  svg.addEventListener('click', function (ev) {
    var g = ev.target.closest('g.f');
    if (!g) return;
    zoom = +g.dataset.i;
    render();
  });

  var q = document.getElementById('fg-search'), msg = document.getElementById('fg-matched');
  /* literal: match the text as typed, never as a regular expression (a
   * search that comes from a link: a crafted pattern could freeze the page) */
  function search(literal) {
    var s = q.value;
    if (!s) { hit = null; msg.textContent = ''; render(); return; }
    var re = null;
    if (literal !== true) {
      try { re = new RegExp(s, 'i'); } catch (e) { re = null; }
    }
    var ls = s.toLowerCase(), under = new Uint8Array(n), sum = 0, cnt = 0;
    hit = new Uint8Array(n);
    for (var i = 1; i < n; i++) {
      var nm = NM[N[i]];
      hit[i] = re ? re.test(nm) : nm.toLowerCase().indexOf(ls) >= 0;
      under[i] = under[P[i]] || hit[P[i]];
      if (hit[i]) { cnt++; if (!under[i]) sum += T[i]; }
    }
    msg.textContent = 'Matched ' + cnt + ' frames: ' + fmt(sum) + ' (' +
                      (T[0] ? 100 * sum / T[0] : 0).toFixed(2) + '% of all)';
    render();
  }
  var tm = null;
  q.addEventListener('input', function () { clearTimeout(tm); tm = setTimeout(search, 150); });
  document.getElementById('fg-reset').addEventListener('click', function () {
    zoom = 0; q.value = ''; hit = null; msg.textContent = ''; render();
  });
  document.addEventListener('keydown', function (e) {
    if (e.key === 'Escape') { zoom = 0; render(); }
  });
  window.addEventListener('resize', render);
  render();
  var hs = location.hash.match(/search=([^&]*)/);
  if (hs) {
    var text = hs[1];
    try { text = decodeURIComponent(text); } catch (e) { /* malformed escape: as written */ }
    q.value = text;
    search(true);
  }
  var hz = location.hash.match(/zoom=(\d+)/);
  if (hz && +hz[1] < n) { zoom = +hz[1]; render(); }
  document.body.setAttribute('data-ready', '1');
})();
