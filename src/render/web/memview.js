/* memview.js: memory-over-time charts, used by the memory page and the
 * report. gpMemCharts(dataId, elId) draws one line chart per device of the
 * JSON in <script id=dataId> into the element elId. */
'use strict';
function gpMemCharts(dataId, elId) {
  var M = gp.data(dataId), host = document.getElementById(elId);
  M.devices.forEach(function (d, i) {
    gp.h('h3', null, 'Device ' + d.label, host);
    var div = gp.h('div', {class: 'memchart', id: elId + '-' + i}, null, host);
    var s = [{name: 'allocated', color: '#4e79a7',
              pts: d.pts.map(function (p) { return [p[0], p[1]]; })}];
    if (d.pts.length && d.pts[0][2] !== null)
      s.push({name: 'reserved', color: '#f28e2b',
              pts: d.pts.map(function (p) { return [p[0], p[2]]; })});
    gp.line(div, s, {xFmt: gp.fmtDur, yFmt: gp.fmtBytes, h: 240,
                     marks: [{x: d.peak_ts, y: d.peak, label: 'peak ' + gp.fmtBytes(d.peak)}]});
  });
}
