// serve_cdp_live.js: the live parts of the `gpuprof serve --monitor --store`
// dashboard in headless Chromium over the DevTools protocol (no npm
// package): waits for the devices panel, marks its table, waits until the
// page's poll replaced it (the panel is live), and reads the devices and the
// runs the page shows. Collects every console message and exception.
//
// Usage: node --experimental-websocket serve_cdp_live.js CHROMIUM BASE
// Prints one JSON object: {devices: [[index, backend, name, util]], refreshed,
// devicesAfter: [...], runs: [ids], console: [...]}.
'use strict';
const {open, sleep, page} = require('./cdp.js');

const [chrome, base] = process.argv.slice(2);

async function main() {
  const cdp = await open(chrome);
  const {S} = cdp;
  const {ev, until, console: pageConsole} = await page(cdp);
  const rows = `Array.prototype.map.call(document.querySelectorAll('#devices tr[data-device]'),
    function(r){return [Number(r.children[0].textContent), r.children[1].textContent,
      r.children[3].textContent, r.children[4].textContent];})`;
  const out = {};
  await S('Page.navigate', {url: base + '/'});
  await until(`document.querySelectorAll('#devices tr[data-device]').length`, 30000);
  out.devices = await ev(rows);
  await ev(`document.querySelector('#devices table').setAttribute('data-mark', '1')`);
  out.refreshed = !!(await until(`(function(){var t=document.querySelector('#devices table');
    return t && !t.hasAttribute('data-mark');})()`, 10000));
  out.devicesAfter = await ev(rows);
  out.runs = await until(`(function(){var r=document.querySelectorAll('#runs tr[data-run]');
    return r.length ? Array.prototype.map.call(r, function(x){return Number(x.getAttribute('data-run'));}) : null;})()`,
    10000);
  await sleep(300);
  out.console = pageConsole();
  console.log(JSON.stringify(out));
  await cdp.close();
}

main().catch((e) => { console.error(String(e && e.stack || e)); process.exit(1); });
