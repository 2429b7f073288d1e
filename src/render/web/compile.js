/* compile.js: the torch.compile page (gpuprof compile -o page.html). Needs
 * common.js. The data is the JSON of `gpuprof compile --json` in
 * <script type="application/json" id="compile-data">; every string from it
 * reaches the DOM only as text (gp.h / gp.s, textContent, attributes). */
'use strict';
(function () {
  var D = gp.data('compile-data'), logs = D.logs || [];
  var root = document.getElementById('compile');

  function fmtS(s) { return s == null ? 'N/A' : gp.fmtDur(s * 1e9); }
  function base(p) { return p == null ? '?' : String(p).split('/').pop(); }
  function logName(l, i) { return l.rank != null ? 'rank ' + l.rank : base(l.file) || 'log ' + i; }
  function ratio(c) {
    var n = c.hit + c.miss + c.bypass;
    return n ? (100 * c.hit / n).toFixed(1) + '%' : 'N/A';
  }
  function frame(f) {
    if (!f || f.file == null) return '?';
    return base(f.file) + (f.line != null ? ':' + f.line : '');
  }
  function section(title, note) {
    var s = gp.h('div', {class: 'sect'}, null, root);
    gp.h('h2', null, title, s);
    if (note) gp.h('p', {class: 'mut'}, note, s);
    return s;
  }
  /* A table: heads, rows of cells; a cell is text or {t: text, v: number,
   * cls: class, title: tooltip}. */
  function table(parent, heads, rows, align) {
    var w = gp.h('div', {class: 'tblwrap'}, null, parent);
    var t = gp.h('table', {class: 'sortable'}, null, w);
    var tr = gp.h('tr', null, null, gp.h('thead', null, null, t));
    heads.forEach(function (hd, i) { gp.h('th', {class: align[i] === 'l' ? 'l' : ''}, hd, tr); });
    var tb = gp.h('tbody', null, null, t);
    rows.forEach(function (r) {
      var row = gp.h('tr', null, null, tb);
      r.forEach(function (c, i) {
        var o = c !== null && typeof c === 'object' ? c : {t: c};
        var a = {class: (align[i] === 'l' ? 'l ' : '') + (o.cls || '')};
        if (o.v != null) a['data-v'] = o.v;
        if (o.title != null) a.title = o.title;
        gp.h('td', a, o.t == null ? 'N/A' : o.t, row);
      });
    });
    gp.sortable(t);
    return t;
  }
  function fig(parent, k, v, cls) {
    var f = gp.h('div', {class: 'fig' + (cls ? ' ' + cls : '')}, null, parent);
    gp.h('div', {class: 'v'}, v, f);
    gp.h('div', {class: 'k'}, k, f);
  }

  /* ---- overview, ranks side by side ---- */
  var div = {};
  (D.divergence || []).forEach(function (d) { div[d.what] = d; });
  if (logs.length) {
    var s = section('Logs', logs.length > 1 ?
      'Ranks side by side; a highlighted row differs between ranks, the red cell is the one ' +
      'farthest from the median.' : null);
    var keys = [['compiles', 'compiles'], ['frames', 'frames'], ['recompiles', 'recompiles'],
                ['graph_breaks', 'graph breaks'], ['failures', 'failures'],
                ['compile_time_s', 'compile time']];
    var heads = ['figure'].concat(logs.map(logName)), al = ['l'];
    logs.forEach(function () { al.push('r'); });
    var rows = keys.map(function (k) {
      var d = div[k[0]], r = [{t: k[1], cls: d ? 'divk' : ''}];
      logs.forEach(function (l, i) {
        var v = l.totals[k[0]];
        r.push({t: k[0] === 'compile_time_s' ? fmtS(v) : String(v), v: v,
                cls: d ? (d.outlier_log === i ? 'divx' : 'divv') : ''});
      });
      return r;
    });
    rows.push(['FX graph cache hit / miss / bypass'].concat(logs.map(function (l) {
      var c = l.totals.fx_graph_cache;
      return {t: c.hit + ' / ' + c.miss + ' / ' + c.bypass + ' (' + ratio(c) + ')'};
    })));
    rows.push(['AOT autograd cache hit / miss / bypass'].concat(logs.map(function (l) {
      var c = l.aotautograd_cache;
      return {t: c.hit + ' / ' + c.miss + ' / ' + c.bypass + ' (' + ratio(c) + ')'};
    })));
    rows.push(['corrupt lines skipped'].concat(logs.map(function (l) {
      return {t: String(l.corrupt_lines), cls: l.corrupt_lines ? 'divx' : '',
              title: l.corrupt.slice(0, 10).map(function (b) {
                return 'line ' + b.line + ': ' + b.what;
              }).join('\n')};
    })));
    rows.push(['file'].concat(logs.map(function (l) { return {t: base(l.file), title: l.file}; })));
    table(s, heads, rows, al);
    var ids = (D.divergence || []).filter(function (d) { return d.what.indexOf('compile id ') === 0; });
    if (ids.length)
      gp.h('p', {class: 'mut'}, 'Compile ids on some ranks only: ' + ids.map(function (d) {
        return d.what.slice(11) + ' (' + d.values.map(function (v, i) {
          return v ? logName(logs[i], i) : null;
        }).filter(function (x) { return x; }).join(', ') + ')';
      }).join('; '), s);
  }

  /* ---- compile phase timeline, one lane per rank ---- */
  var withPh = logs.filter(function (l) { return l.phases && l.phases.length; });
  if (withPh.length) {
    var s2 = section('Compile timeline', 'chromium_event phases of each log (rows: nesting depth); ' +
                     'hover a bar for its name, compile id and duration.');
    var c = gp.h('div', {id: 'ctl'}, null, s2);
    /* logs of one job share a clock: align them; logs recorded far apart
     * (over an hour) each start at their own first phase */
    var o0 = Infinity, o1 = -Infinity;
    withPh.forEach(function (l) { o0 = Math.min(o0, l.phases_t0_us); o1 = Math.max(o1, l.phases_t0_us); });
    var aligned = o1 - o0 <= 3600e6;
    var off = function (l) { return aligned ? (l.phases_t0_us - o0) / 1e6 : 0; };
    if (!aligned)
      s2.insertBefore(gp.h('p', {class: 'mut'}, 'The logs were recorded more than an hour apart: ' +
                           'each lane starts at its own first phase.'), c);
    var t0 = 0, t1 = -Infinity;
    withPh.forEach(function (l) {
      l.phases.forEach(function (p) { t1 = Math.max(t1, off(l) + p.start_s + p.dur_s); });
    });
    var W = Math.max(c.clientWidth || 1100, 600), LW = 120, RH = 14, y = 20;
    var lanes = withPh.map(function (l) {
      var dmax = 0;
      l.phases.forEach(function (p) { dmax = Math.max(dmax, p.depth); });
      return dmax + 1;
    });
    var Hh = 28 + lanes.reduce(function (a, b) { return a + b * RH + 8; }, 0);
    var svg = gp.s('svg', {class: 'chart ctl', width: W, height: Hh}, null, c);
    var sc = (W - LW - 10) / Math.max(t1 - t0, 1e-9);
    withPh.forEach(function (l, i) {
      gp.s('text', {x: 4, y: y + 11}, logName(l, i), svg);
      l.phases.forEach(function (p) {
        var a = off(l) + p.start_s - t0;
        gp.s('rect', {class: 'ph', x: (LW + a * sc).toFixed(1), y: y + p.depth * RH,
                      width: Math.max(p.dur_s * sc, 0.8).toFixed(1), height: RH - 2,
                      fill: gp.color(p.name, 2),
                      'data-t': p.name + (p.compile_id != null ? ' [' + p.compile_id + ']' : '') +
                                '\nstart +' + fmtS(a) + '\nduration ' + fmtS(p.dur_s)},
             null, svg);
      });
      y += lanes[i] * RH + 8;
      gp.s('line', {x1: LW, x2: W - 10, y1: y - 4, y2: y - 4, class: 'sep'}, null, svg);
    });
    gp.ticks(0, t1 - t0, 8).forEach(function (v) {
      gp.s('text', {x: LW + v * sc, y: 12}, fmtS(v), svg);
    });
    gp.hover(c);
  }

  /* ---- compile ids ---- */
  if (logs.length) {
    var s3 = section('Compile ids', 'One row per compile id (frame/compile, _attempt when > 0); ' +
                     'time: entire_frame_compile_time_s, or dynamo_cumulative_compile_time_us.');
    var rows3 = [];
    logs.forEach(function (l, li) {
      l.compiles.forEach(function (c) {
        var tp = c.time_parts_s;
        rows3.push([logName(l, li), c.id, {t: c.status, cls: 'st-' + c.status},
                    c.function == null ? '?' : c.function,
                    {t: frame(c.user_frame), title: c.user_frame.file},
                    {t: fmtS(c.compile_time_s), v: c.compile_time_s},
                    {t: fmtS(tp.aot_autograd_cumulative), v: tp.aot_autograd_cumulative},
                    {t: fmtS(tp.inductor_cumulative != null ? tp.inductor_cumulative : tp.inductor_compile)},
                    {t: c.graph_op_count == null ? 'N/A' : String(c.graph_op_count), v: c.graph_op_count},
                    {t: c.guard_count == null ? 'N/A' : String(c.guard_count), v: c.guard_count},
                    {t: String(c.restart_reasons.length), v: c.restart_reasons.length},
                    {t: String(c.recompile_reasons.length), v: c.recompile_reasons.length},
                    c.fx_graph_cache.hit ? 'hit' : c.fx_graph_cache.miss ? 'miss' :
                      c.fx_graph_cache.bypass ? 'bypass' : '',
                    {t: String(c.kernels.length), v: c.kernels.length,
                     title: c.kernels.map(function (k) {
                       return k.name + ': ' + (k.fused_ops == null ? '?' : k.fused_ops) + ' ATen ops';
                     }).join('\n')}]);
      });
    });
    table(s3, ['log', 'id', 'status', 'function', 'user frame', 'compile time', 'AOT autograd',
               'inductor', 'graph ops', 'guards', 'graph breaks', 'recompile reasons',
               'FX cache', 'kernels'], rows3, 'llllllrrrrrrlr');
  }

  /* ---- graph breaks, recompiles, failures ---- */
  var br = [], rc = [], fl = [];
  logs.forEach(function (l, li) {
    l.compiles.forEach(function (c) {
      c.restart_reasons.forEach(function (r) {
        br.push([logName(l, li), c.id, {t: frame(c.user_frame), title: c.user_frame.file}, r]);
      });
      if (c.recompile_reasons.length)
        rc.push([logName(l, li), c.id, {t: String(c.recompile_reasons.length), v: c.recompile_reasons.length},
                 {t: c.recompile_reasons[0], title: c.recompile_reasons.join('\n')}]);
      if (c.fail_type != null)
        fl.push([logName(l, li), c.id, {t: frame(c.user_frame), title: c.user_frame.file},
                 c.fail_type, {t: String(c.fail_reason || '').split('\n')[0], title: c.fail_reason}]);
    });
  });
  if (br.length) table(section('Graph breaks'), ['log', 'id', 'user frame', 'reason'], br, 'llll');
  if (rc.length)
    table(section('Recompiles', 'The first failed guard of each recompile; hover for all.'),
          ['log', 'id', 'reasons', 'first reason'], rc, 'llrl');
  if (fl.length) table(section('Failures'), ['log', 'id', 'user frame', 'fail_type', 'fail_reason'], fl, 'lllll');

  /* ---- suggestions ---- */
  if (D.advice && D.advice.length) {
    var s4 = section('Suggestions');
    D.advice.forEach(function (a) {
      var box = gp.h('div', {class: 'adv p-' + a.priority}, null, s4);
      var hd = gp.h('div', {class: 'advh'}, null, box);
      gp.h('span', {class: 'prio'}, a.priority, hd);
      gp.h('b', null, a.rule + ': ', hd);
      hd.appendChild(document.createTextNode(a.finding));
      gp.h('div', null, 'fix: ' + a.hint, box);
      if (a.evidence.length)
        table(box, ['compile id, function, user frame', 'reason', 'count'], a.evidence.map(function (e) {
          return [e.compile, {t: String(e.reason).split('\n')[0], title: e.reason}, {t: String(e.count), v: e.count}];
        }), 'llr');
    });
  }

  /* ---- the Kineto trace of the compiled model ---- */
  if (D.trace) {
    var T = D.trace, s5 = section('Compiled model trace', T.file);
    var f5 = gp.h('div', {class: 'figs'}, null, s5);
    fig(f5, 'compiled region calls', String(T.region_calls));
    fig(f5, 'GPU time in regions', gp.fmtDur(T.region_gpu_ns));
    fig(f5, 'GPU time launched outside (eager)', gp.fmtDur(T.eager_gpu_ns));
    fig(f5, 'CPU time outside regions', gp.fmtDur(T.eager_cpu_ns));
    fig(f5, 'Dynamo cache lookups', T.cache_lookups + ' (' + gp.fmtDur(T.cache_lookup_ns) + ')');
    fig(f5, 'fusion ratio (ATen ops per fused kernel)', T.fusion_ratio == null ? 'N/A' : T.fusion_ratio.toFixed(2));
    if (T.steps) fig(f5, 'max compiled regions per step', String(T.max_regions_per_step));
    if (T.regions.length)
      table(s5, ['region', 'calls', 'CPU', 'GPU', 'GPU ops'], T.regions.map(function (r) {
        return [r.name, {t: String(r.count), v: r.count}, {t: gp.fmtDur(r.cpu_ns), v: r.cpu_ns},
                {t: gp.fmtDur(r.gpu_ns), v: r.gpu_ns}, {t: String(r.gpu_ops), v: r.gpu_ops}];
      }), 'lrrrr');
    if (T.fused_kernels.length)
      table(s5, ['fused kernel', 'calls', 'GPU', 'ATen ops replaced'], T.fused_kernels.map(function (k) {
        return [k.name, {t: String(k.count), v: k.count}, {t: gp.fmtDur(k.gpu_ns), v: k.gpu_ns},
                {t: String(k.ops_replaced), v: k.ops_replaced}];
      }), 'lrrr');
  }
  if (D.speedup) {
    var S = D.speedup, s6 = section('Speedup over eager', 'eager: ' + S.eager_file);
    var f6 = gp.h('div', {class: 'figs'}, null, s6);
    var x = function (v) { return v == null ? 'N/A' : v.toFixed(2) + 'x'; };
    fig(f6, 'per step', x(S.step_speedup));
    fig(f6, 'GPU time', x(S.gpu_speedup));
    table(s6, ['op group', 'eager', 'compiled', 'speedup'], S.groups.map(function (g) {
      return [g.group, {t: gp.fmtDur(g.eager_ns), v: g.eager_ns}, {t: gp.fmtDur(g.compiled_ns), v: g.compiled_ns},
              {t: x(g.speedup), v: g.speedup}];
    }), 'lrrr');
  }
  if (!root.firstChild) gp.none(root, 'Nothing to show.');
  document.body.setAttribute('data-ready', '1');
})();
