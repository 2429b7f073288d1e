/* report.js: the charts of the report page (gpuprof report). Needs
 * common.js and memview.js. Data come from <script type="application/json"
 * class="rdata|mdata"> elements; labels reach the DOM only as text. */
'use strict';

/* The operation timeline: one row per track, one box per top-level slice.
 * T: {span, rows:[{label, s:[[start, dur, kind, name]..]}]}. */
function gpOpTimeline(id, T) {
  var c = document.getElementById(id), W = c.clientWidth || 1000, LW = 170, RH = 18;
  if (!T.rows.length) { gp.none(c, 'No slices.'); return; }
  var sc = (W - LW - 10) / Math.max(T.span, 1);
  gp.clear(c);
  var svg = gp.s('svg', {class: 'chart optl', width: W, height: T.rows.length * RH + 24}, null, c);
  T.rows.forEach(function (r, i) {
    var y = i * RH + 18;
    gp.s('text', {x: 4, y: y + 12}, r.label.slice(0, 26), svg);
    r.s.forEach(function (s) {
      gp.s('rect', {class: 'op', x: (LW + s[0] * sc).toFixed(1), y: y,
                    width: Math.max(s[1] * sc, 0.6).toFixed(1), height: RH - 3,
                    fill: gp.color(s[3], s[2]),
                    'data-t': s[3] + '\nstart ' + gp.fmtDur(s[0]) + '\nduration ' + gp.fmtDur(s[1])},
           null, svg);
    });
  });
  gp.ticks(0, T.span, 6).forEach(function (v) {
    gp.s('text', {x: LW + v * sc, y: 12}, gp.fmtDur(v), svg);
  });
  gp.hover(c);
}

document.querySelectorAll('script.rdata').forEach(function (el) {
  var D = JSON.parse(el.textContent), p = el.dataset.p;
  gp.pie(p + '-pie', D.pie, gp.fmtDur);
  gp.bars(p + '-avg', D.avg, ['mean'], gp.fmtDur);
  gp.bars(p + '-calls', D.calls, ['calls'], function (v) { return v.toLocaleString(); });
  gp.bars(p + '-gpucpu', D.stack, ['CPU', 'GPU kernels', 'transfers'], gp.fmtDur);
  if (D.temporal) gp.bars(p + '-temporal', D.temporal, ['compute', 'non-compute', 'idle'], gp.fmtDur);
  gpOpTimeline(p + '-optl', D.tl);
});
document.querySelectorAll('script.mdata').forEach(function (el) {
  gpMemCharts(el.id, el.dataset.p + '-mem');
});
document.querySelectorAll('table.sortable').forEach(gp.sortable);
document.body.setAttribute('data-ready', '1');
