/* dashboard.js: the `gpuprof serve` dashboard: traces (state, load progress,
 * links to the report, flame, timeline and memory views rendered by the
 * server with the same code as the files), a trace's summary figures from
 * /api/summary, the runs of the store and the devices (polled while the
 * server runs the device sampler). Everything from the server reaches the
 * DOM as text (gp.h / textContent).
 *
 * A token given as "#token=..." in the address is kept in sessionStorage,
 * sent as "Authorization: Bearer" and set as a same-site cookie so that the
 * view pages (plain links) are authorized too; it is then removed from the
 * address bar. */
'use strict';
(function () {
  var cfg = gp.data('gp-config');
  var token = null;
  (function takeToken() {
    /* the server's token characters: printable ASCII but ; , " \ (a cookie
     * value), so a crafted link cannot add cookie attributes */
    var m = /^#token=([\x21\x23-\x2b\x2d-\x3a\x3c-\x5b\x5d-\x7e]{16,256})$/.exec(location.hash);
    if (m) {
      sessionStorage.setItem('gpuprof_token', m[1]);
      history.replaceState(null, '', location.pathname);
    }
    token = sessionStorage.getItem('gpuprof_token');
    if (token) document.cookie = 'gpuprof_token=' + token + '; path=/; SameSite=Strict' +
      (location.protocol === 'https:' ? '; Secure' : '');
  })();

  function api(path) {
    var headers = token ? {Authorization: 'Bearer ' + token} : {};
    return fetch(path, {headers: headers, credentials: 'same-origin'}).then(function (r) {
      return r.json().then(function (j) {
        if (!r.ok) throw new Error((j && j.error) || ('HTTP ' + r.status));
        return j;
      });
    });
  }

  function fail(c, e) { gp.none(c, 'error: ' + e.message); }

  function table(parent, heads) {
    var t = gp.h('table', null, null, parent), tr = gp.h('tr', null, null, gp.h('thead', null, null, t));
    heads.forEach(function (x, i) { gp.h('th', i === 0 || x === 'Name' ? {class: 'l'} : null, x, tr); });
    return gp.h('tbody', null, null, t);
  }

  /* ---- traces ---- */
  var traceBox = gp.el('traces'), detail = gp.el('detail'), polling = false;

  function views(td, id) {
    [['report', 'Report'], ['flame', 'Flame'], ['timeline', 'Timeline'], ['memory', 'Memory']]
      .forEach(function (v) {
        gp.h('a', {class: 'view', href: '/view/' + v[0] + '?trace=' + encodeURIComponent(id),
                   target: '_blank', rel: 'noopener', 'data-view': v[0]}, v[1], td);
      });
  }

  function showTraces(doc) {
    gp.clear(traceBox);
    if (!doc.traces.length) { gp.none(traceBox, 'No trace is served (gpuprof serve PATH...).'); return; }
    var tb = table(traceBox, ['Id', 'Name', 'Kind', 'Files', 'State', 'Loaded %', 'Views', '']);
    var loading = false;
    doc.traces.forEach(function (t) {
      var tr = gp.h('tr', {'data-trace': t.id}, null, tb);
      gp.h('td', {class: 'l'}, t.id, tr);
      gp.h('td', {class: 'l'}, t.name, tr);
      gp.h('td', {class: 'l'}, t.kind, tr);
      gp.h('td', null, t.files, tr);
      gp.h('td', {class: 'l state-' + t.state, title: t.error || ''}, t.state, tr);
      gp.h('td', {class: 'pct'}, t.percent, tr);
      views(gp.h('td', {class: 'l'}, null, tr), t.id);
      var b = gp.h('button', {class: 'open', 'data-open': t.id}, 'Summary', gp.h('td', null, null, tr));
      b.addEventListener('click', function () { openTrace(t); });
      if (t.state === 'loading') loading = true;
    });
    if (loading && !polling) {
      polling = true;
      setTimeout(function () { polling = false; loadTraces(); }, 500);
    }
  }

  function loadTraces() {
    return api('/api/traces').then(showTraces, function (e) { fail(traceBox, e); });
  }

  function openTrace(t) {
    gp.clear(detail);
    gp.h('h2', null, 'Trace ' + t.id + ': ' + t.name, detail);
    var box = gp.h('div', {id: 'summary', 'data-trace': t.id}, 'loading...', detail);
    loadTraces();
    api('/api/summary?trace=' + encodeURIComponent(t.id) + '&top=5').then(function (doc) {
      gp.clear(box);
      doc.traces.forEach(function (tr) {
        gp.h('h3', null, tr.file + (tr.rank == null ? '' : ' (rank ' + tr.rank + ')'), box);
        var figs = gp.h('div', {class: 'figs'}, null, box);
        function fig(k, v, key) {
          var f = gp.h('div', {class: 'fig'}, null, figs);
          gp.h('div', {class: 'v', 'data-fig': key}, v, f);
          gp.h('div', {class: 'k'}, k, f);
        }
        fig('traced span', gp.fmtDur(tr.span_ns), 'span');
        fig('slices', tr.slices, 'slices');
        fig('span (ns)', tr.span_ns, 'span_ns');
        var tb = table(box, ['#', 'Category', 'Name', 'Count', 'Total', 'Span %']);
        tr.bottlenecks.forEach(function (r, i) {
          var row = gp.h('tr', {'data-bottleneck': i}, null, tb);
          gp.h('td', null, i + 1, row);
          gp.h('td', {class: 'l'}, r.category, row);
          gp.h('td', {class: 'l'}, r.name, row);
          gp.h('td', null, r.count, row);
          gp.h('td', {'data-total-ns': r.total_ns}, gp.fmtDur(r.total_ns), row);
          gp.h('td', null, r.span_pct.toFixed(2), row);
        });
      });
    }, function (e) { fail(box, e); });
  }

  /* ---- runs ---- */
  function loadRuns() {
    var c = gp.el('runs');
    if (!cfg.store) { gp.none(c, 'No store is served (gpuprof serve --store FILE).'); return null; }
    return api('/api/runs').then(function (doc) {
      gp.clear(c);
      if (!doc.runs.length) { gp.none(c, 'The store holds no run.'); return; }
      var tb = table(c, ['Run', 'Start', 'Duration', 'Exit', 'Events', 'Command', 'Views']);
      doc.runs.forEach(function (r) {
        var tr = gp.h('tr', {'data-run': r.id}, null, tb);
        gp.h('td', null, r.id, tr);
        gp.h('td', {class: 'l'}, r.start_unix_ns == null ? 'N/A' : new Date(r.start_unix_ns / 1e6).toISOString(), tr);
        gp.h('td', null, r.duration_ns == null ? 'N/A' : gp.fmtDur(r.duration_ns), tr);
        gp.h('td', null, r.exit_status == null ? 'running?' : r.exit_status, tr);
        gp.h('td', null, r.events == null ? 0 : r.events, tr);
        gp.h('td', {class: 'l'}, r.command, tr);
        gp.h('td', {class: 'l'}, 'see the traces above', tr);
      });
    }, function (e) { fail(c, e); });
  }

  /* ---- devices ---- */
  function loadDevices() {
    var c = gp.el('devices');
    return api('/api/devices').then(function (doc) {
      gp.clear(c);
      gp.h('p', {class: 'mut'}, doc.gpu_count + ' GPU(s); backends ' + doc.health +
        (cfg.monitor ? '; live (every 2 s)' : '; one sample (start with --monitor for a live panel)'), c);
      var tb = table(c, ['#', 'Backend', 'Kind', 'Name', 'Util %', 'Mem used', 'Mem total', 'Temp C', 'Power W']);
      doc.devices.forEach(function (d) {
        var s = d.sample || {}, tr = gp.h('tr', {'data-device': d.index}, null, tb);
        gp.h('td', null, d.index, tr);
        gp.h('td', {class: 'l'}, d.backend, tr);
        gp.h('td', {class: 'l'}, d.kind, tr);
        gp.h('td', {class: 'l'}, d.name, tr);
        gp.h('td', {'data-util': ''}, s.util_pct == null ? 'N/A' : s.util_pct, tr);
        gp.h('td', null, gp.fmtBytes(s.mem_used_bytes), tr);
        gp.h('td', null, gp.fmtBytes(s.mem_total_bytes), tr);
        gp.h('td', null, s.temp_c == null ? 'N/A' : s.temp_c, tr);
        gp.h('td', null, s.power_w == null ? 'N/A' : s.power_w, tr);
      });
    }, function (e) { fail(c, e); });
  }

  /* data-ready on the body once the three panels were filled (tests) */
  Promise.all([loadTraces(), loadRuns(), loadDevices()]).then(function () {
    document.body.setAttribute('data-ready', '1');
  });
  if (cfg.monitor) setInterval(loadDevices, 2000);
})();
