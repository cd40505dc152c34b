// End-to-end test of the dashboard through the real webview: tauri-driver + WebKitWebDriver
// under Xvfb, `fabric-companion` started in a temporary HOME against the Fabric stand-in, a
// live session created by running the real hooks. Builds nothing: it expects the binaries in
// $FABRIC_E2E_BIN_DIR (default target/debug). Screenshots go to
// ${FABRIC_E2E_SHOTS:-target/e2e-shots/dashboard}. Every process it starts is stopped.

import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { Processes, WebDriver, freePort, sleep, startXvfb, tauriDriverPath, waitFor as waitUntil } from '../test-support/webdriver.mjs';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const binDir = path.resolve(repo, process.env.FABRIC_E2E_BIN_DIR ?? 'target/debug');
const APP = path.join(binDir, 'fabric-companion');
const SESSION_BIN = path.join(binDir, 'fabric-session');
const FAKE = path.join(binDir, 'fabric-fake');
const shots = path.resolve(repo, process.env.FABRIC_E2E_SHOTS ?? 'target/e2e-shots/dashboard');
const TAURI_DRIVER = tauriDriverPath();
const SLOW = Number(process.env.FABRIC_E2E_TIMEOUT_SECS ?? 90) * 1000;

const results = [];
let home;
let failed = false;
const processes = new Processes(() => home);
const start = (cmd, args, opts) => processes.start(cmd, args, opts);

function log(msg) {
  console.log(`[e2e] ${msg}`);
}

function check(name, ok, detail = '') {
  results.push({ name, ok });
  console.log(`${ok ? 'ok' : 'FAIL'} - ${name}${detail ? ` (${detail})` : ''}`);
  if (!ok) failed = true;
  return ok;
}

const waitFor = (what, fn, limit = SLOW) => waitUntil(what, fn, limit);

// ---------------------------------------------------------------------------------------------
// The temporary HOME, Fabric stand-in and a live session made by the real hooks.

function env(extra = {}) {
  return {
    PATH: process.env.PATH,
    HOME: home,
    XDG_CACHE_HOME: path.join(home, '.cache'),
    XDG_DATA_HOME: path.join(home, '.local/share'),
    XDG_CONFIG_HOME: path.join(home, '.config'),
    XDG_RUNTIME_DIR: path.join(home, 'run'),
    FABRIC_MCP: FAKE,
    FABRIC_FAKE_STATE: path.join(home, 'fabric-state'),
    LANG: 'C.UTF-8',
    ...extra,
  };
}

function write(file, text) {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
}

function sh(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', ...opts });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed: ${r.stderr}`);
  return r.stdout;
}

function payload(session, event, project) {
  return JSON.stringify({
    session_id: session,
    transcript_path: path.join(home, 't.jsonl'),
    cwd: project,
    hook_event_name: event,
    source: 'startup',
    model: 'o4',
    permission_mode: 'default',
  });
}

/** A long-lived "host" (sh, then sleep) that runs hooks for `session`: the hooks' parent. */
function hostRunning(session, events, project) {
  const script = events
    .map(([hook, event], i) => {
      const file = path.join(home, `payload-${session}-${i}.json`);
      write(file, payload(session, event, project));
      return `"$0" hook ${hook} --host codex < "${file}" > /dev/null`;
    })
    .join('; ');
  return start('/bin/sh', ['-c', `${script}; exec sleep 900`, SESSION_BIN], { env: env(), cwd: project });
}

function setupHome() {
  home = fs.mkdtempSync(path.join(os.tmpdir(), 'fabric-e2e-dashboard-'));
  fs.mkdirSync(path.join(home, 'run'), { mode: 0o700 });
  fs.mkdirSync(path.join(home, 'fabric-state'));
  fs.writeFileSync(path.join(home, 'fabric-state/unread'), '3');
  const fabricDir = path.join(home, '.local/share/passioncode-fabric');
  sh(FAKE, ['hub', '--fabric-dir', fabricDir, '--feature', 'session-hooks/1', '--pid', String(process.pid)]);
  write(path.join(home, '.codex/config.toml'), 'model = "o4"\n\n[mcp_servers.fabric]\ncommand = "fabric-mcp"\nargs = ["--runner", "codex"]\n');
  write(path.join(home, '.codex/hooks.json'), USER_HOOKS);
  // A project that is a git repository with a change, so the last turn has numbers.
  const project = path.join(home, 'work/proj-analytics');
  fs.mkdirSync(project, { recursive: true });
  const git = (...args) => sh('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', '-c', 'commit.gpgsign=false', ...args], { cwd: project, env: env() });
  git('init', '-q');
  write(path.join(project, 'a.txt'), 'one\ntwo\n');
  git('add', 'a.txt');
  git('commit', '-q', '-m', 'first');
  write(path.join(project, 'a.txt'), 'one\nTWO\nthree\n');
  write(path.join(project, 'new.txt'), 'fresh\n');
  return { fabricDir, project };
}

const USER_HOOKS = '{\n  "hooks": {\n    "SessionStart": [\n      {"matcher": "startup", "hooks": [{"type": "command", "command": "echo user-hook", "timeout": 3}]}\n    ]\n  }\n}\n';

/** A service that answers the contract's well-known probe (so one shows `ready`). */
async function serviceUp(fabricDir) {
  const port = await freePort();
  // The contract's own positive fixture, answering as ready.
  const fixture = JSON.parse(fs.readFileSync(path.join(repo, 'tests/fabric-contract/fixtures/positive/service-well-known-capabilities.json'), 'utf8'));
  const answer = JSON.stringify({ ...fixture, status: 'ready', degraded: [] });
  const server = http.createServer((req, res) => {
    if (req.url === '/.well-known/fabric-service') res.writeHead(200, { 'content-type': 'application/json' }).end(answer);
    else res.writeHead(404).end();
  });
  await new Promise((r) => server.listen(port, '127.0.0.1', r));
  const dir = path.join(fabricDir, 'services');
  sh(FAKE, ['service', '--dir', dir, '--id', 'example-agent', '--instance', 'default', '--origin', `http://127.0.0.1:${port}`, '--name', 'Example Agent']);
  const gone = await freePort();
  sh(FAKE, ['service', '--dir', dir, '--id', 'gone-agent', '--instance', 'default', '--origin', `http://127.0.0.1:${gone}`, '--name', 'Gone Agent']);
  return server;
}

// ---------------------------------------------------------------------------------------------
// WebDriver over plain fetch.

const driver = new WebDriver({ shots, log });
const js = (script, ...args) => driver.js(script, ...args);
const find = (css) => driver.find(css);
const click = (css) => driver.click(css);
const text = (css) => driver.text(css);
const shot = (name) => driver.shot(name);

function appPids() {
  const pids = [];
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (fs.readlinkSync(`/proc/${name}/exe`) !== APP) continue;
      const state = fs.readFileSync(`/proc/${name}/stat`, 'utf8').split(') ')[1]?.[0];
      const environ = fs.readFileSync(`/proc/${name}/environ`, 'utf8');
      if (state !== 'Z' && environ.includes(`HOME=${home}\0`)) pids.push(Number(name));
    } catch {}
  }
  return pids;
}

// ---------------------------------------------------------------------------------------------

async function main() {
  for (const [what, file] of [['fabric-companion', APP], ['fabric-session', SESSION_BIN], ['fabric-fake', FAKE], ['tauri-driver', TAURI_DRIVER]]) {
    if (!fs.existsSync(file)) throw new Error(`${what} not found at ${file}: build it first (see the README)`);
  }
  fs.mkdirSync(shots, { recursive: true });
  const { fabricDir, project } = setupHome();
  log(`temporary HOME ${home}`);
  const service = await serviceUp(fabricDir);

  // The session: session-start then a Stop (the detached worker writes board.json).
  hostRunning('e2e-codex-1', [['session-start', 'SessionStart'], ['stop', 'Stop']], project);
  const board = path.join(home, '.cache/fabric-companion/sessions/e2e-codex-1/board.json');
  await waitFor('the worker to write board.json', () => fs.existsSync(board) && JSON.parse(fs.readFileSync(board, 'utf8')).unread === 3);
  log('session e2e-codex-1 is live with 3 unread');

  const display = await startXvfb(processes);
  const driverEnv = env({
    DISPLAY: display,
    TAURI_WEBVIEW_AUTOMATION: 'true',
    FABRIC_COMPANION_NO_TRAY: '1',
    FABRIC_SESSION_BIN: SESSION_BIN,
    DBUS_SESSION_BUS_ADDRESS: process.env.DBUS_SESSION_BUS_ADDRESS ?? '',
    GDK_BACKEND: 'x11',
    NO_AT_BRIDGE: '1',
  });
  log(`WebDriver session ${await driver.start(processes, TAURI_DRIVER, driverEnv, { application: APP }, SLOW)}`);
  await driver.session('POST', '/window/rect', { width: 1180, height: 820 }).catch(() => {});
  await waitFor('the dashboard to load', () => js('return document.body.dataset.ready === "true"'));

  // The page is granted our commands and the event listener, nothing else of Tauri's core:
  // calls it never makes (harmless ones: a version, a title, an image from a missing path, an
  // empty menu) are refused by the capability, while our own command answers.
  const ipc = (cmd, args = {}) =>
    js(
      'return window.__TAURI_INTERNALS__.invoke(arguments[0], arguments[1]).then(() => "allowed", (e) => "refused: " + String(e));',
      cmd,
      args,
    );
  check('the page may call our commands', (await ipc('get_status')) === 'allowed');
  for (const [cmd, args] of [
    ['plugin:app|version', {}],
    ['plugin:window|title', { label: 'main' }],
    ['plugin:image|from_path', { path: path.join(home, 'no-such-image.png') }],
    ['plugin:menu|new', { kind: 'Menu', options: {} }],
  ]) {
    const answer = await ipc(cmd, args);
    check(`the page may not call ${cmd}`, /not allowed/.test(answer), answer);
  }

  // Overview.
  await waitFor('the session row', () => text('[data-session="e2e-codex-1"] [data-col="unread"]'));
  check('Overview lists the stand-in session with its unread count', (await text('[data-session="e2e-codex-1"] [data-col="unread"]')) === '3 unread');
  check('Overview shows the project', (await text('[data-session="e2e-codex-1"] [data-col="project"]')) === 'proj-analytics');
  check('Overview shows Fabric running', /Fabric\s*Running/.test(await text('#fabric-h')));
  check('Overview shows the session hooks active', /Active/.test(await text('#hooks-h')));
  await waitFor('turn numbers', () => js('return /files?, \\+/.test(document.querySelector(\'[data-session="e2e-codex-1"] [data-col="last-turn"]\').textContent)'), 20000).then(
    () => check('Overview shows the last turn\'s changes', true),
    () => check('Overview shows the last turn\'s changes', false),
  );
  await shot('1-overview');

  // Hooks: install Codex's hooks through plan → confirm → apply.
  await click('#tab-hooks');
  await click('[data-host="codex"] [data-action="install"]');
  await waitFor('the plan', () => text('[data-fact="diff"]'));
  const before = fs.readFileSync(path.join(home, '.codex/hooks.json'), 'utf8');
  check('the plan shows the current digest', (await text('[data-fact="plan-digest"]')).includes(crypto.createHash('sha256').update(before).digest('hex')));
  check('nothing is written before confirming', before === USER_HOOKS);
  await shot('2-hooks-plan');
  await click('[data-action="confirm"]');
  await waitFor('the install result', () => text('[data-fact="applied"]'));
  const written = fs.readFileSync(path.join(home, '.codex/hooks.json'), 'utf8');
  const backups = fs.readdirSync(path.join(home, '.codex')).filter((f) => f.startsWith('hooks.json') && f !== 'hooks.json');
  check('a backup of hooks.json was made', backups.length === 1 && fs.readFileSync(path.join(home, '.codex', backups[0]), 'utf8') === USER_HOOKS, backups.join(','));
  check('hooks.json now runs fabric-session and keeps the user hook', written.includes(SESSION_BIN) && written.includes('echo user-hook'));
  // The command line, on a copy of the same file, must write the same bytes.
  const cliHome = fs.mkdtempSync(path.join(os.tmpdir(), 'fabric-e2e-cli-'));
  write(path.join(cliHome, '.codex/hooks.json'), USER_HOOKS);
  const cliEnv = { PATH: process.env.PATH, HOME: cliHome, XDG_CACHE_HOME: path.join(cliHome, '.cache'), XDG_DATA_HOME: path.join(cliHome, '.local/share'), XDG_CONFIG_HOME: path.join(cliHome, '.config') };
  // As a person does: the dry run, then the apply with the plan digest it printed.
  const cliArgs = ['install-host-hooks', '--host', 'codex', '--script', SESSION_BIN];
  const { digest } = JSON.parse(sh(SESSION_BIN, [...cliArgs, '--json'], { env: cliEnv }));
  sh(SESSION_BIN, [...cliArgs, '--apply', '--expect-sha256', digest], { env: cliEnv });
  check('the dashboard wrote hooks.json exactly as the command line does', fs.readFileSync(path.join(cliHome, '.codex/hooks.json'), 'utf8') === written);
  fs.rmSync(cliHome, { recursive: true, force: true });
  await waitFor('the Codex card to say installed', () => js('return document.querySelector(\'[data-host="codex"] [data-fact="hook-state"]\').textContent === "Installed"'), 20000).then(
    () => check('the Hooks view updates live to installed', true),
    () => check('the Hooks view updates live to installed', false),
  );
  await waitFor('the Codex card to say what is left to approve', () => js('return /waiting for your approval in Codex: run \\/hooks/.test(document.querySelector(\'[data-host="codex"] [data-fact="approval"]\')?.textContent ?? "")'), 20000).then(
    () => check('the Hooks view says Codex waits for the approval in /hooks, from Codex\'s own record', true),
    () => check('the Hooks view says Codex waits for the approval in /hooks, from Codex\'s own record', false),
  );
  await shot('3-hooks-installed');

  // A file that changes between the plan and the confirmation is refused and left untouched.
  await click('[data-host="codex"] [data-action="remove"]');
  await waitFor('the removal plan', () => text('[data-fact="diff"]'));
  const hooksFile = path.join(home, '.codex/hooks.json');
  const edited = fs.readFileSync(hooksFile, 'utf8') + '\n';
  fs.writeFileSync(hooksFile, edited);
  await click('[data-action="confirm"]');
  await waitFor('the refusal', () => text('[data-fact="refusal"]'));
  check('a file changed since the plan is refused in plain words', /changed since the dry run/.test(await text('[data-fact="refusal"]')));
  check('the refused file is untouched', fs.readFileSync(hooksFile, 'utf8') === edited);
  await shot('3b-hooks-refused');

  // Log: a hook event that happens while the view is open.
  await click('#tab-log');
  await waitFor('log rows', () => js('return document.querySelectorAll("#log tbody tr").length > 0'));
  const rowsBefore = await js('return document.querySelectorAll("#log tbody tr").length');
  hostRunning('e2e-codex-live', [['session-start', 'SessionStart']], project);
  const seen = await waitFor('the new hook line in the Log view', () => js('return [...document.querySelectorAll("#log tbody tr")].some(r => r.textContent.includes("e2e-codex-live"))'), SLOW).catch(() => false);
  check('the Log view shows a hook event that happened while it was open', Boolean(seen));
  check('the Log view appended (not replaced) lines', (await js('return document.querySelectorAll("#log tbody tr").length')) > rowsBefore);
  await shot('4-log');
  // Filter by session.
  await js('const s = document.getElementById("log-session"); s.value = "e2e-codex-live"; s.dispatchEvent(new Event("change"));');
  await sleep(300);
  check('the Log view filters by session', await js('const rows=[...document.querySelectorAll("#log tbody tr")]; return rows.length > 0 && rows.every(r => r.textContent.includes("e2e-codex-live"))'));

  // Services.
  await click('#tab-services');
  await waitFor('service rows', () => js('return document.querySelectorAll("#services [data-col=state] .badge").length === 2'));
  const states = await js('return [...document.querySelectorAll("#services tr[data-service]")].map(r => r.dataset.service + "=" + r.querySelector("[data-col=state] .badge").dataset.state)');
  check('Services probes one ready and one down', states.includes('example-agent.default.json=ready') && states.includes('gone-agent.default.json=down'), states.join(' '));
  await shot('5-services');

  // Settings: written atomically to the one settings file.
  await click('#tab-settings');
  const interval = await find('#set-interval');
  await driver.session('POST', `/element/${interval}/clear`, {});
  await driver.session('POST', `/element/${interval}/value`, { text: '90' });
  await click('#settings-save');
  await waitFor('the save', () => text('#settings-message').then((t) => t?.startsWith('Saved')));
  const settingsFile = path.join(home, '.config/fabric-companion/settings.json');
  check('Settings writes the settings file', fs.existsSync(settingsFile) && JSON.parse(fs.readFileSync(settingsFile, 'utf8')).watchIntervalSecs === 90);
  await shot('6-settings');
  await click('#tab-overview');
  await waitFor('the second session in the Overview', () => text('[data-session="e2e-codex-live"] [data-col="project"]'), 20000).catch(() => null);
  await shot('7-overview-two-sessions');

  // One instance only: a second start hands over to the first and exits.
  const pids = appPids();
  check('the dashboard process is found', pids.length === 1, pids.join(','));
  const second = start(APP, [], { env: env({ DISPLAY: display, FABRIC_COMPANION_NO_TRAY: '1', NO_AT_BRIDGE: '1', DBUS_SESSION_BUS_ADDRESS: process.env.DBUS_SESSION_BUS_ADDRESS ?? '' }) });
  const secondExited = await waitFor('the second instance to exit', () => second.exitCode !== null || second.signalCode !== null, 30000).catch(() => false);
  check('a second start exits and leaves the first running', Boolean(secondExited) && appPids().join() === pids.join(), `exit ${second.exitCode} signal ${second.signalCode}`);

  // The memory rule: closing the window ends the process.
  await driver.session('DELETE', '/window').catch(() => {});
  const exited = await waitFor('the app to exit after its window closed', () => appPids().length === 0, 30000).catch(() => false);
  check('the dashboard exits when its window closes', Boolean(exited));
  await driver.end();
  service.close();
}

let code = 0;
try {
  await main();
} catch (e) {
  console.error(`[e2e] error: ${e.stack ?? e}`);
  failed = true;
} finally {
  await driver.end();
  await processes.stopAll();
  const passed = results.filter((r) => r.ok).length;
  console.log(`[e2e] ${passed}/${results.length} checks passed${failed ? ', FAILED' : ''}`);
  console.log(`dashboard: ${passed} passed, ${results.length - passed} failed`);
  if (failed || results.length === 0) {
    code = 1;
    console.log(`[e2e] logs kept in ${home}`);
  } else if (home) {
    fs.rmSync(home, { recursive: true, force: true });
  }
}
process.exit(code);
