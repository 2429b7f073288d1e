// cdp.js: starts headless Chromium with the DevTools protocol and opens one
// page session over Node's built-in WebSocket (node >= 20 with
// --experimental-websocket; no npm package). Shared by the browser tests'
// drivers (xss_cdp.js, serve_cdp.js, serve_cdp_live.js).
//
// const c = await require('./cdp.js').open(CHROMIUM);
//   c.S(method, params): a command in the page session; c.send(...): any;
//   c.listeners: functions called with every event; c.sid: the session id;
//   await c.close().
'use strict';
const {spawn} = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

function sleep(ms) { return new Promise((r) => setTimeout(r, ms)); }

async function open(chrome) {
  const prof = fs.mkdtempSync(path.join(os.tmpdir(), 'gp_cdp_'));
  const proc = spawn(chrome, ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync',
    '--remote-debugging-port=0', '--user-data-dir=' + prof, '--window-size=1400,1000',
    'about:blank'], {stdio: ['ignore', 'ignore', 'pipe']});
  const wsUrl = await new Promise((resolve, reject) => {
    let buf = '';
    const t = setTimeout(() => reject(new Error('chromium did not start: ' + buf.slice(-500))), 60000);
    proc.stderr.on('data', (d) => {
      buf += d;
      const m = buf.match(/DevTools listening on (ws:\/\/\S+)/);
      if (m) { clearTimeout(t); resolve(m[1]); }
    });
    proc.on('exit', () => reject(new Error('chromium exited: ' + buf.slice(-500))));
  });
  const ws = new WebSocket(wsUrl);
  await new Promise((r, j) => { ws.onopen = r; ws.onerror = j; });
  let nextId = 1;
  const waiting = new Map(), listeners = [];
  ws.onmessage = (m) => {
    const msg = JSON.parse(m.data);
    if (msg.id && waiting.has(msg.id)) {
      const w = waiting.get(msg.id);
      waiting.delete(msg.id);
      if (msg.error) w.j(new Error(JSON.stringify(msg.error))); else w.r(msg.result);
    } else if (msg.method) {
      listeners.forEach((f) => f(msg));
    }
  };
  function send(method, params, sessionId) {
    const id = nextId++;
    ws.send(JSON.stringify({id, method, params: params || {}, sessionId}));
    return new Promise((r, j) => {
      waiting.set(id, {r, j});
      setTimeout(() => { if (waiting.delete(id)) j(new Error('timeout: ' + method)); }, 60000);
    });
  }
  const {targetId} = await send('Target.createTarget', {url: 'about:blank'});
  const {sessionId: sid} = await send('Target.attachToTarget', {targetId, flatten: true});
  return {
    send, sid, listeners,
    S: (m, p) => send(m, p, sid),
    close: async () => {
      ws.close();
      proc.kill();
      // the browser may still be writing its profile while it exits (a
      // loaded machine): wait for it, and retry the removal
      for (let i = 0; i < 50 && proc.exitCode === null && proc.signalCode === null; i++) await sleep(100);
      fs.rmSync(prof, {recursive: true, force: true, maxRetries: 10, retryDelay: 100});
    },
  };
}

// The page helpers of the serve drivers: enables Page, Runtime and Log on
// c's session and keeps its events; returns ev(expr) (the value of an
// expression in the page), until(expr, ms) (the first truthy value of expr,
// polled every 100 ms, or null after ms) and console() (every console
// message, exception and log entry of the session, one line each).
async function page(c) {
  const events = [];
  c.listeners.push((msg) => events.push(msg));
  await c.S('Page.enable');
  await c.S('Runtime.enable');
  await c.S('Log.enable');
  const ev = async (expr) => {
    const r = await c.S('Runtime.evaluate', {expression: expr, returnByValue: true});
    return r.result ? r.result.value : undefined;
  };
  const until = async (expr, ms) => {
    for (let t = 0; t < ms; t += 100) {
      const v = await ev(expr);
      if (v) return v;
      await sleep(100);
    }
    return null;
  };
  const console = () => events.filter((e) => e.sessionId === c.sid &&
    (e.method === 'Runtime.consoleAPICalled' || e.method === 'Runtime.exceptionThrown' ||
     e.method === 'Log.entryAdded')).map((e) => {
    const p = e.params;
    if (e.method === 'Log.entryAdded') return p.entry.level + ': ' + p.entry.text;
    if (e.method === 'Runtime.exceptionThrown') return 'exception: ' + JSON.stringify(p.exceptionDetails).slice(0, 300);
    return p.type + ': ' + (p.args || []).map((a) => a.value).join(' ');
  });
  return {ev, until, console};
}

module.exports = {open, sleep, page};
