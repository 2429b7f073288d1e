// xss_cdp.js: drives headless Chromium over the DevTools protocol (no npm
// package: Node's built-in WebSocket, node >= 20 with --experimental-websocket)
// and exercises every interactive element of the given pages with real
// input events: a mouse move over and a click on each element (every
// element of the page's charts, buttons, table headers, inputs), a grid of
// hovers and clicks over each canvas, typing into every text input, Escape.
// Before any page script runs, alert/confirm/prompt/print are replaced by
// functions that set window.__xss; an injected payload sets window.__xss
// itself. After the page, the DOM is searched for elements and attributes
// no gpuprof page creates (img, iframe, on* attributes, ...).
//
// Usage: node --experimental-websocket xss_cdp.js CHROMIUM PAGE.html[#frag]|URL...
// Prints one JSON line per page: {page, ready, xss, injected, hovers,
// clicks, tipPayload, textPayload, exceptions}.
'use strict';
const path = require('path');
const {open, sleep} = require('./cdp.js');

const chrome = process.argv[2];
const pages = process.argv.slice(3);
const MAX_ELEMS = 3000;  // per page: evenly sampled when there are more (a bound on time)

const HOOK = `(function(){window.__xss=0;
  ['alert','confirm','prompt','print'].forEach(function(f){
    window[f]=function(){window.__xss=(window.__xss||0)+1;};});})();`;

// Elements a user can point at or click in a gpuprof page.
const PICK = `window.__gpList=function(){return Array.prototype.filter.call(
  document.querySelectorAll('svg g.f, [data-t], svg.chart, button, th, input, canvas'),
  function(e){var r=e.getBoundingClientRect();return r.width>0&&r.height>0;});};
window.__gpAt=function(i){var l=__gpList();if(i>=l.length)return null;var e=l[i];
  e.scrollIntoView({block:'center',inline:'center'});var r=e.getBoundingClientRect();
  return {x:r.left+Math.min(r.width/2,Math.max(1,r.width-1)),y:r.top+r.height/2,w:r.width,h:r.height,
          canvas:e.tagName==='CANVAS',input:e.tagName==='INPUT'};};`;

const SCAN = `(function(){var bad=[],tags={IMG:1,IFRAME:1,OBJECT:1,EMBED:1,VIDEO:1,AUDIO:1,SOURCE:1,
  MARQUEE:1,DETAILS:1,MATH:1,NOSCRIPT:1,TEXTAREA:1,ANIMATE:1,SET:1};
  document.querySelectorAll('*').forEach(function(e){
    if(tags[e.tagName.toUpperCase()])bad.push(e.tagName);
    if(e.tagName==='SCRIPT'&&e.type!=='application/json'&&(e.src||/__xss/.test(e.textContent)))bad.push('script');
    if(e.tagName==='INPUT'&&e.id!=='fg-search')bad.push('input');
    Array.prototype.forEach.call(e.attributes,function(a){
      if(/^on/i.test(a.name))bad.push(e.tagName+'['+a.name+']');
      if(/javascript:/i.test(a.value)&&a.name!=='data-t')bad.push(e.tagName+'['+a.name+'=javascript:]');});});
  return {xss:window.__xss||0,bad:bad.slice(0,10),nbad:bad.length,
          text:/onerror|__xss/.test(document.body.textContent)};})()`;

async function main() {
  const cdp = await open(chrome);
  const {S, sid, listeners} = cdp;
  let exceptions = 0, loaded = false;
  listeners.push((msg) => {
    if (msg.sessionId !== sid) return;
    if (msg.method === 'Runtime.exceptionThrown') exceptions++;
    if (msg.method === 'Page.loadEventFired') loaded = true;
  });
  await S('Page.enable');
  await S('Runtime.enable');
  await S('Page.addScriptToEvaluateOnNewDocument', {source: HOOK});
  await S('Emulation.setDeviceMetricsOverride', {width: 1400, height: 1000, deviceScaleFactor: 1, mobile: false});
  const ev = async (expr) => {
    const r = await S('Runtime.evaluate', {expression: expr, returnByValue: true});
    return r.result ? r.result.value : undefined;
  };
  const mouse = (type, x, y, extra) => S('Input.dispatchMouseEvent',
    Object.assign({type, x, y, button: 'none', clickCount: 0}, extra || {}));
  const click = async (x, y) => {
    await mouse('mousePressed', x, y, {button: 'left', clickCount: 1});
    await mouse('mouseReleased', x, y, {button: 'left', clickCount: 1});
  };
  const escape = () => S('Input.dispatchKeyEvent', {type: 'rawKeyDown', key: 'Escape', code: 'Escape',
    windowsVirtualKeyCode: 27}).then(() => S('Input.dispatchKeyEvent', {type: 'keyUp', key: 'Escape',
    code: 'Escape', windowsVirtualKeyCode: 27}));
  const TIP = `(function(){var t=document.getElementById('tip');return t&&t.style.display!=='none'?t.textContent:'';})()`;

  for (const page of pages) {
    const [file, frag] = page.split('#');
    loaded = false;
    exceptions = 0;
    const url = /^https?:/.test(file) ? file : 'file://' + path.resolve(file);
    await S('Page.navigate', {url: url + (frag ? '#' + frag : '')});
    for (let i = 0; i < 600 && !loaded; i++) await sleep(50);  // slow CI machines
    let ready = false;
    for (let i = 0; i < 600 && !ready; i++) {
      ready = (await ev(`document.body&&document.body.getAttribute('data-ready')`)) === '1';
      if (!ready) await sleep(50);
    }
    await ev(PICK);
    const n = await ev('__gpList().length');
    const step = n > MAX_ELEMS ? n / MAX_ELEMS : 1;
    let hovers = 0, clicks = 0, tipPayload = 0;
    const noteTip = async () => { if (/<(img|script|svg|iframe)/i.test(await ev(TIP))) tipPayload++; };
    for (let k = 0; k * step < n; k++) {
      const i = Math.floor(k * step);
      const at = await ev(`__gpAt(${i})`);
      if (!at) continue;
      if (at.canvas) {  // a grid of points over the canvas, in view
        const top = await ev(`(function(){var r=__gpList()[${i}].getBoundingClientRect();return [r.left,r.top,r.width,r.height];})()`);
        for (let y = Math.max(top[1], 0) + 3; y < Math.min(top[1] + top[3], 1000); y += 9)
          for (let x = top[0] + 195; x < top[0] + top[2]; x += 41) {
            await mouse('mouseMoved', x, y);
            hovers++;
            await noteTip();
          }
        await click(top[0] + top[2] / 2, Math.max(top[1], 0) + 30);
        clicks++;
        continue;
      }
      if (at.input) {
        await click(at.x, at.y);
        await S('Input.insertText', {text: '<img src=x onerror=window.__xss=1>'});
        await sleep(200);
        clicks++;
        continue;
      }
      await mouse('mouseMoved', at.x, at.y);
      hovers++;
      await noteTip();
      await click(at.x, at.y);
      clicks++;
      await escape();
    }
    await sleep(300);
    const scan = await ev(SCAN);
    const text = await ev(`document.body.textContent.indexOf('onerror')>=0`);
    console.log(JSON.stringify({page, ready, n, hovers, clicks, tipPayload, textPayload: text,
      xss: scan.xss, injected: scan.nbad, injectedSample: scan.bad, exceptions}));
  }
  await cdp.close();
}

main().then(() => process.exit(0), (e) => { console.error('xss_cdp: ' + e.message); process.exit(2); });
