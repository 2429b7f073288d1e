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
    'about:blank'], {stdio: ['ignore', 'ignore', 'pipe'], detached: true});
  // detached: the browser leads a process group of its own, so that close()
  // can end its helpers (renderer, zygote, crashpad) too, which may still
  // write into the profile after the main process has exited
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
      const gone = () => proc.exitCode !== null || proc.signalCode !== null;
      const signal = (sig) => {
        try { process.kill(-proc.pid, sig); } catch (e) { /* the group is gone */ }
      };
      signal('SIGTERM');
      for (let i = 0; i < 100 && !gone(); i++) await sleep(100);
      signal('SIGKILL'); // helpers that outlived the main process
      for (let i = 0; i < 50 && !gone(); i++) await sleep(100);
      // the profile is a temporary folder: a removal that still fails on a
      // loaded machine is reported on stderr, never a failed test (it made
      // t_serve_browser fail in CI once, after every check had passed)
      for (let i = 0; ; i++) {
        try {
          fs.rmSync(prof, {recursive: true, force: true, maxRetries: 10, retryDelay: 100});
          break;
        } catch (e) {
          if (i >= 4) {
            process.stderr.write('cdp.js: profile ' + prof + ' not removed: ' + e.message + '\n');
            break;
          }
          await sleep(500);
        }
      }
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
