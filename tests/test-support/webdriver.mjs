// What the two WebDriver runners share (tests/e2e-dashboard/run.mjs, the dashboard built
// here; tests/installed-package/run.mjs, the package as installed): finding tauri-driver,
// waits, free ports, the processes a run starts (each in its own process group, its output
// in a log, all stopped at the end), Xvfb on a free display, tauri-driver started and a
// WebDriver session on it (plain fetch), and the few WebDriver calls the checks make
// (script, find, click, text, screenshot). What a runner checks stays in the runner.

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export function findOnPath(name) {
  for (const dir of (process.env.PATH ?? '').split(':')) {
    const p = path.join(dir, name);
    if (dir && fs.existsSync(p)) return p;
  }
  return null;
}

/** tauri-driver: $TAURI_DRIVER, else on PATH, else where scripts/test.sh installs it
 * ($CARGO_HOME/bin, which need not be on PATH). */
export function tauriDriverPath() {
  return process.env.TAURI_DRIVER ?? findOnPath('tauri-driver') ?? path.join(process.env.CARGO_HOME ?? path.join(os.homedir(), '.cargo'), 'bin/tauri-driver');
}

/** Polls `fn` every 300 ms until it gives something truthy (an exception counts as not yet);
 * throws after `limit` ms naming `what` and the last error. */
export async function waitFor(what, fn, limit) {
  const start = Date.now();
  let last;
  while (Date.now() - start < limit) {
    try {
      last = await fn();
      if (last) return last;
    } catch (e) {
      last = e;
    }
    await sleep(300);
  }
  throw new Error(`gave up waiting for ${what}${last instanceof Error ? `: ${last.message}` : ''}`);
}

export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/** The processes a run starts: each detached (a process group of its own), stdout and stderr
 * into `<logDir>/<program>-<pid>.log`; `stopAll` ends them all, last started first. */
export class Processes {
  constructor(logDir) {
    this.logDir = logDir;
    this.children = [];
  }

  start(cmd, args, opts = {}) {
    const child = spawn(cmd, args, { detached: true, stdio: ['ignore', 'pipe', 'pipe'], ...opts });
    const out = fs.createWriteStream(path.join(this.logDir(), `${path.basename(cmd)}-${child.pid}.log`));
    // Both into one log, ended once the child's output is all in (stdout closing first must
    // not end the log while stderr still writes: a write after end throws and ends the run).
    child.stdout?.pipe(out, { end: false });
    child.stderr?.pipe(out, { end: false });
    child.on('close', () => out.end());
    out.on('error', () => {});
    this.children.push(child);
    return child;
  }

  /** SIGTERM to every group still running, then SIGKILL to what is left. */
  async stopAll() {
    for (const signal of ['SIGTERM', 'SIGKILL']) {
      for (const child of [...this.children].reverse()) {
        if (child.exitCode !== null || child.signalCode !== null) continue;
        try {
          process.kill(-child.pid, signal);
        } catch {}
      }
      await sleep(1000);
    }
  }
}

/** Xvfb (1280x900) on the first display number free here, once its socket is there; gives
 * `:N`. */
export async function startXvfb(processes) {
  // Xvfb picks a free display itself and writes its number once it takes connections
  // (-displayfd): no race with another suite's X server between finding a free number and
  // taking it (one lost that race once: its clients found no server).
  const xvfb = processes.start('Xvfb', ['-displayfd', '3', '-screen', '0', '1280x900x24', '-nolisten', 'tcp'], {
    stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
  });
  let said = '';
  xvfb.stdio[3].on('data', (chunk) => {
    said += chunk;
  });
  const display = await waitFor('Xvfb to say its display', () => (said.includes('\n') ? said.trim() : null), 30000);
  return `:${display}`;
}

const ELEMENT = 'element-6066-11e4-a52f-4a4e5c0c3a9a';

/** A WebDriver client over fetch: `start` runs tauri-driver (with `env`) on free ports, waits
 * for it, and opens a session on `options` (`tauri:options`); the calls then act on it. */
export class WebDriver {
  constructor({ shots, log }) {
    this.shots = shots;
    this.log = log;
    this.url = null;
    this.sid = null;
  }

  async start(processes, driver, env, options, limit) {
    const port = await freePort();
    const nativePort = await freePort();
    this.url = `http://127.0.0.1:${port}`;
    processes.start(driver, ['--port', String(port), '--native-port', String(nativePort)], { env });
    await waitFor('tauri-driver', () => fetch(`${this.url}/status`).then((r) => r.ok), 30000);
    const session = await waitFor('a WebDriver session', () => this.wd('POST', '/session', { capabilities: { alwaysMatch: { 'tauri:options': options } } }), limit);
    this.sid = session.sessionId;
    return this.sid;
  }

  async wd(method, url, body) {
    const res = await fetch(`${this.url}${url}`, {
      method,
      headers: { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = await res.json().catch(() => ({}));
    if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${JSON.stringify(json.value ?? json).slice(0, 300)}`);
    return json.value;
  }

  /** A call on the session: `session('POST', '/element/…')`. */
  session(method, url, body) {
    return this.wd(method, `/session/${this.sid}${url}`, body);
  }

  js(script, ...args) {
    return this.session('POST', '/execute/sync', { script, args });
  }

  async find(css) {
    const found = await this.session('POST', '/element', { using: 'css selector', value: css });
    const id = found?.[ELEMENT] ?? (found && Object.values(found)[0]);
    if (!id) throw new Error(`no element for ${css}: ${JSON.stringify(found)}`);
    return id;
  }

  async click(css) {
    return this.session('POST', `/element/${await this.find(css)}/click`, {});
  }

  text(css) {
    return this.js('const e = document.querySelector(arguments[0]); return e ? e.textContent : null;', css);
  }

  /** A screenshot of the window into `<shots>/<name>.png`, once WebKit painted what the
   * checks just read. */
  async shot(name) {
    await this.js('return new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))').catch(() => {});
    await sleep(400);
    const png = await this.session('GET', '/screenshot');
    const file = path.join(this.shots, `${name}.png`);
    fs.writeFileSync(file, Buffer.from(png, 'base64'));
    this.log(`screenshot ${file}`);
  }

  /** Ends the session, if one is open (errors ignored). */
  async end() {
    if (this.sid) await this.wd('DELETE', `/session/${this.sid}`).catch(() => {});
    this.sid = null;
  }
}
