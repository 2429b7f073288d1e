// serve_cdp.js: drives headless Chromium over the DevTools protocol (Node's
// built-in WebSocket, node >= 20 with --experimental-websocket; no npm
// package) through the `gpuprof serve` dashboard: opens BASE/#token=TOKEN,
// waits for the traces table, clicks (real mouse events) the Summary button
// of trace ID, waits for its figures, then opens the report view of the trace
// (authorized by the cookie the dashboard set). Collects every console
// message, exception and log entry (CSP violations included).
//
// Usage: node --experimental-websocket serve_cdp.js CHROMIUM BASE ID TOKEN
// Prints one JSON object: {traces, figures: {slices, span_ns}, bottlenecks:
// [{name, total_ns}], views, reportTitle, reportReady, console: [...]}.
'use strict';
const {open, sleep, page} = require('./cdp.js');

const [chrome, base, id, token] = process.argv.slice(2);

async function main() {
  const cdp = await open(chrome);
  const {S} = cdp;
  const {ev, until, console: pageConsole} = await page(cdp);
  const out = {};
  await S('Page.navigate', {url: base + '/#token=' + token});
  out.traces = await until(`document.querySelectorAll('#traces tr[data-trace]').length`, 30000);
  out.views = await ev(`Array.prototype.map.call(document.querySelectorAll('tr[data-trace="${id}"] a[data-view]'), function(a){return a.getAttribute('href');})`);
  const at = await until(`(function(){var b=document.querySelector('button[data-open="${id}"]');
    if(!b)return null;b.scrollIntoView({block:'center'});var r=b.getBoundingClientRect();
    return {x:r.left+r.width/2,y:r.top+r.height/2};})()`, 10000);
  if (at) {
    for (const type of ['mouseMoved', 'mousePressed', 'mouseReleased'])
      await S('Input.dispatchMouseEvent', {type, x: at.x, y: at.y, button: type === 'mouseMoved' ? 'none' : 'left',
        clickCount: type === 'mouseMoved' ? 0 : 1});
  }
  out.figures = await until(`(function(){var s=document.querySelector('#summary [data-fig="span_ns"]');
    if(!s)return null;return {span_ns:Number(s.textContent),
      slices:Number(document.querySelector('#summary [data-fig="slices"]').textContent)};})()`, 60000);
  out.bottlenecks = await ev(`Array.prototype.map.call(document.querySelectorAll('#summary tr[data-bottleneck]'),
    function(r){return {name:r.children[2].textContent,total_ns:Number(r.children[4].getAttribute('data-total-ns'))};})`);
  out.devices = await until(`document.querySelectorAll('#devices tr[data-device]').length`, 20000);
  await S('Page.navigate', {url: base + '/view/report?trace=' + id});
  out.reportReady = await until(`document.body&&document.body.getAttribute('data-ready')==='1'&&document.title`, 30000);
  out.reportTitle = await ev('document.title');
  await sleep(300);
  out.console = pageConsole();
  console.log(JSON.stringify(out));
  await cdp.close();
}

main().catch((e) => { console.error(String(e && e.stack || e)); process.exit(1); });
