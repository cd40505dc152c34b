// The package, tested as installed, as a person would meet it (run by run.sh, as root, inside
// dbus-run-session): the control fields and the file list; `apt-get install ./<deb>`; a
// temporary person's HOME with Codex and Claude Code configured for Fabric (the Fabric
// stand-in answers: fabric-fake in $FABRIC_E2E_BIN_DIR, which run.sh sets to cargo's target
// folder); Xvfb + dunst + trayer; the tray started from the autostart entry's Exec, its icon
// in trayer (screenshot); the dashboard started from the desktop entry's Exec through
// tauri-driver; Codex's hooks installed through its Hooks view, pointing at
// /usr/bin/fabric-session; a real hook run of that command; the Claude Code plugin added and
// installed by the real Claude Code when tests/real-hosts has it cached; then
// `apt-get remove`: no process and no file of the package left, the person's host configs
// byte-identical, and a host's hook command silent once the program is gone; then purge.
// Screenshots go to ${FABRIC_E2E_SHOTS:-target/e2e-shots/installed-package}.

import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import zlib from 'node:zlib';

import { Processes, WebDriver, findOnPath, startXvfb, tauriDriverPath, waitFor as waitUntil } from '../test-support/webdriver.mjs';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const DEB = path.resolve(process.argv[2] ?? '');
const FAKE = path.resolve(repo, process.env.FABRIC_E2E_BIN_DIR ?? 'target/debug', 'fabric-fake');
const MODEL = path.resolve(repo, process.env.FABRIC_E2E_BIN_DIR ?? 'target/debug', 'model-stand-in');
const shots = path.resolve(repo, process.env.FABRIC_E2E_SHOTS ?? 'target/e2e-shots/installed-package');
const TAURI_DRIVER = tauriDriverPath();
const HOSTS_ENV = path.join(process.env.FABRIC_TEST_HOSTS_CACHE ?? path.join(os.homedir(), '.cache/fabric-companion-test-hosts'), 'hosts.env');
const SLOW = 90000;
// The command our installer and the shipped plugin write for the package's program.
const GUARDED = '[ ! -x /usr/bin/fabric-session ] || /usr/bin/fabric-session hook ';
// The events our hooks are written for (sorted): the session's four and each host's state
// events (README, "Which session needs you").
const CODEX_EVENTS = ['Interrupt', 'PermissionRequest', 'PostToolUse', 'SessionEnd', 'SessionStart', 'Stop', 'SubagentStop', 'UserPromptSubmit'];
const CLAUDE_EVENTS = ['Notification', 'PermissionRequest', 'PostToolUse', 'PostToolUseFailure', 'SessionEnd', 'SessionStart', 'Stop', 'StopFailure', 'SubagentStop', 'UserPromptSubmit'];
// The events of a `hooks` object whose commands name fabric-session, sorted.
const oursByEvent = (hooks) => Object.entries(hooks)
  .filter(([, groups]) => groups.some((g) => g.hooks.some((h) => h.command.includes('fabric-session'))))
  .map(([event]) => event)
  .sort();
const sameList = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);
// The hook binary for aarch64 remotes (scripts/build-deb.sh).
const AARCH64 = '/usr/lib/fabric-companion/fabric-session-aarch64';
const PROGRAMS = ['/usr/bin/fabric-companion', '/usr/bin/fabric-tray', '/usr/bin/fabric-session', '/usr/lib/fabric-companion/fabric-tray-xembed'];

let home;
let failed = false;
let checks = 0;
const processes = new Processes(() => path.join(home, 'logs'));
const start = (cmd, args, opts) => processes.start(cmd, args, opts);

const log = (msg) => console.log(`[installed] ${msg}`);
function check(name, ok, detail = '') {
  checks++;
  console.log(`${ok ? 'ok' : 'FAIL'} - ${name}${detail ? ` (${detail})` : ''}`);
  if (!ok) failed = true;
  return ok;
}
const waitFor = (what, fn, limit = SLOW) => waitUntil(what, fn, limit);
function run(cmd, args, opts = {}) {
  return spawnSync(cmd, args, { encoding: 'utf8', ...opts });
}
function sh(cmd, args, opts = {}) {
  const r = run(cmd, args, opts);
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (${r.status}): ${r.stderr}`);
  return r.stdout;
}
function write(file, text) {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
}
const sha = (file) => (fs.existsSync(file) ? crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex') : 'absent');

/** The person's environment: their HOME, the desktop, the Fabric stand-in. No FABRIC_*_BIN. */
function env(extra = {}) {
  return {
    PATH: '/usr/local/bin:/usr/bin:/bin',
    HOME: home,
    USER: 'root',
    XDG_CACHE_HOME: path.join(home, '.cache'),
    XDG_DATA_HOME: path.join(home, '.local/share'),
    XDG_CONFIG_HOME: path.join(home, '.config'),
    XDG_RUNTIME_DIR: path.join(home, 'run'),
    FABRIC_MCP: FAKE,
    FABRIC_FAKE_STATE: path.join(home, 'fabric-state'),
    DBUS_SESSION_BUS_ADDRESS: process.env.DBUS_SESSION_BUS_ADDRESS ?? '',
    LANG: 'C.UTF-8',
    NO_AT_BRIDGE: '1',
    ...extra,
  };
}

/** `Exec=` of a desktop entry, split into words (no field codes in ours). */
function desktopExec(file) {
  const line = fs.readFileSync(file, 'utf8').split('\n').find((l) => l.startsWith('Exec='));
  return line.slice('Exec='.length).replace(/ %[fFuU]/g, '').trim().split(/\s+/).map((w) => w.replace(/^"|"$/g, ''));
}
function resolve(program) {
  return program.includes('/') ? program : findOnPath(program) ?? program;
}

/** What dbus-monitor saw of the Notifications interface so far. */
function monitorLog() {
  const dir = path.join(home, 'logs');
  return fs.readdirSync(dir).filter((f) => f.startsWith('dbus-monitor-')).map((f) => fs.readFileSync(path.join(dir, f), 'utf8')).join('');
}

/** Processes running one of the package's programs (also when the file is deleted). */
function packagePids() {
  const found = [];
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const exe = fs.readlinkSync(`/proc/${name}/exe`).replace(/ \(deleted\)$/, '');
      const state = fs.readFileSync(`/proc/${name}/stat`, 'utf8').split(') ')[1]?.[0];
      if (PROGRAMS.includes(exe) && state !== 'Z') found.push(`${name}:${exe}`);
    } catch {}
  }
  return found;
}

// ---- WebDriver over fetch ------------------------------------------------------------------
const driver = new WebDriver({ shots, log });
const js = (script, ...args) => driver.js(script, ...args);
const click = (css) => driver.click(css);
const shot = (name) => driver.shot(name);
const text = (css) => driver.text(css);

// ---- the checks ----------------------------------------------------------------------------

function checkPackageFile() {
  const field = (name) => sh('dpkg-deb', ['-f', DEB, name]).trim();
  log(`Depends: ${field('Depends')}`);
  check('the file is named fabric-companion_<version>_<arch>.deb', /^fabric-companion_[0-9][^_ ]*_[a-z0-9]+\.deb$/.test(path.basename(DEB)), path.basename(DEB));
  check('Package is fabric-companion', field('Package') === 'fabric-companion');
  const depends = field('Depends');
  for (const want of ['libc6', 'libgtk-3-0', 'libwebkit2gtk-4.1-0', 'libayatana-appindicator3-1 | libappindicator3-1']) {
    check(`Depends names ${want}`, depends.split(/,\s*/).some((d) => d === want || d.startsWith(`${want} (`)), depends);
  }
  check('Depends has no name twice', new Set(depends.split(/,\s*/).map((d) => d.split(' ')[0])).size === depends.split(/,\s*/).length, depends);
  const description = field('Description');
  check('the description is real', !description.includes('(none)') && description.split('\n').length > 3, description.split('\n')[0]);
  check('Maintainer and Homepage are set', /<[^>]+@[^>]+>/.test(field('Maintainer')) && /^https:\/\//.test(field('Homepage')));
  const files = sh('dpkg-deb', ['-c', DEB]);
  for (const f of [
    './usr/bin/fabric-companion',
    './usr/bin/fabric-tray',
    './usr/bin/fabric-session',
    './usr/lib/fabric-companion/fabric-tray-xembed',
    './usr/lib/fabric-companion/fabric-session-aarch64',
    './etc/xdg/autostart/fabric-tray.desktop',
    './usr/share/applications/fabric-companion.desktop',
    './usr/share/fabric-companion/claude-plugin/hooks/hooks.json',
    './usr/share/fabric-companion/claude-plugin/.claude-plugin/plugin.json',
    './usr/share/fabric-companion/claude-plugin/.claude-plugin/marketplace.json',
    './usr/share/fabric-companion/gnome-shell-extension/legacy/fabric-companion-focus@passioncode.ai/metadata.json',
    './usr/share/fabric-companion/gnome-shell-extension/legacy/fabric-companion-focus@passioncode.ai/extension.js',
    './usr/share/fabric-companion/gnome-shell-extension/module/fabric-companion-focus@passioncode.ai/metadata.json',
    './usr/share/fabric-companion/gnome-shell-extension/module/fabric-companion-focus@passioncode.ai/extension.js',
    './usr/share/doc/fabric-companion/copyright',
    './usr/share/doc/fabric-companion/LICENSE-MIT',
    './usr/share/doc/fabric-companion/LICENSE-APACHE',
    './usr/share/doc/fabric-companion/third-party-notices.txt.gz',
  ]) {
    check(`the package holds ${f.slice(1)}`, files.split('\n').some((l) => l.endsWith(` ${f}`)));
  }
}

// The licence notices from a fresh clone (issue 21): build-deb's notices step once needed crates
// only other programs' builds had downloaded (`cargo metadata --offline`), so after run.sh on a
// fresh machine the package could not be built. That step runs here from a cargo home that holds
// nothing, and must give exactly the notices the package ships. (The rest of build-deb builds
// through cargo, which fetches what it lacks; building it all from a fresh cargo home would
// recompile every crate, as cargo keys its builds by the crates' source paths, for no more proof.)
function checkNoticesFromACleanCargoHome() {
  const fresh = fs.mkdtempSync(path.join(os.tmpdir(), 'fabric-clean-cargo-home-'));
  try {
    const started = Date.now();
    const notices = run('python3', [path.join(repo, 'packaging/linux/third-party-notices.py')], {
      env: { ...process.env, CARGO_HOME: fresh },
      maxBuffer: 64 * 1024 * 1024,
    });
    log(`notices from a clean cargo home: exit ${notices.status}, ${Math.round((Date.now() - started) / 1000)} s`);
    check('the notices step works from a clean cargo home', notices.status === 0, (notices.stderr ?? '').trim().split('\n').pop());
    const shipped = zlib
      .gunzipSync(
        spawnSync('sh', ['-c', 'dpkg-deb --fsys-tarfile "$1" | tar -xO ./usr/share/doc/fabric-companion/third-party-notices.txt.gz', 'sh', DEB], {
          maxBuffer: 64 * 1024 * 1024,
        }).stdout,
      )
      .toString('utf8');
    check('the package ships the notices a clean cargo home gives, complete', notices.status === 0 && notices.stdout === shipped && /crates \(Rust\)/.test(shipped), `${shipped.length} characters shipped, ${notices.stdout?.length ?? 0} from a clean home`);
  } finally {
    fs.rmSync(fresh, { recursive: true, force: true });
  }
}

function setupHome(modelUrl) {
  fs.mkdirSync(path.join(home, 'run'), { mode: 0o700 });
  fs.mkdirSync(path.join(home, 'fabric-state'));
  fs.writeFileSync(path.join(home, 'fabric-state/unread'), '2');
  sh(FAKE, ['hub', '--fabric-dir', path.join(home, '.local/share/passioncode-fabric'), '--feature', 'session-hooks/1', '--pid', String(process.pid)]);
  // Codex's model is the stand-in (tests/model-stand-in), so a real Codex session can run.
  write(path.join(home, '.codex/config.toml'), `model = "gpt-stand-in"\nmodel_provider = "standin"\n\n[model_providers.standin]\nname = "model stand-in"\nbase_url = "${modelUrl}/v1"\nwire_api = "responses"\nenv_key = "OPENAI_API_KEY"\n\n[mcp_servers.fabric]\ncommand = "fabric-mcp"\nargs = ["--runner", "codex"]\n`);
  write(path.join(home, '.codex/hooks.json'), '{\n  "hooks": {\n    "Stop": [\n      {"hooks": [{"type": "command", "command": "true a-person-s-hook", "timeout": 3}]}\n    ]\n  }\n}\n');
  write(path.join(home, '.claude/settings.json'), '{\n  "theme": "dark"\n}\n');
  write(path.join(home, '.claude.json'), '{"mcpServers": {"fabric": {"command": "fabric-mcp", "args": ["--runner", "claude"]}}}\n');
  fs.mkdirSync(path.join(home, 'work/proj'), { recursive: true });
}

async function desktop() {
  const d = { DISPLAY: await startXvfb(processes), GDK_BACKEND: 'x11' };
  start('dbus-monitor', ['--session', 'interface=org.freedesktop.Notifications'], { env: env(d) });
  start('dunst', [], { env: env(d) });
  start('trayer', ['--edge', 'bottom', '--align', 'right', '--widthtype', 'request', '--height', '32', '--SetDockType', 'true', '--transparent', 'false'], { env: env(d) });
  await waitFor("trayer's panel", () => run('xwininfo', ['-root', '-tree'], { env: env(d) }).stdout.includes('("panel" "trayer")'), 30000);
  return d;
}

function iconRect(d) {
  const tree = run('xwininfo', ['-root', '-tree'], { env: env(d) }).stdout;
  const line = tree.split('\n').find((l) => l.includes('"tray-icon tray app fabric-tray"'));
  if (!line) return null;
  const words = line.trim().split(/\s+/);
  const [w, h] = words[words.length - 2].split('+')[0].split('x').map(Number);
  const [x, y] = words[words.length - 1].replace(/^\+/, '').split('+').map(Number);
  return w >= 16 && h >= 16 ? { x, y, w, h } : null;
}

/** Distinct colours in the icon's rectangle of a root screenshot (ImageMagick). */
function iconColours(d, rect, name) {
  const file = path.join(shots, `${name}.png`);
  sh('import', ['-window', 'root', file], { env: env(d) });
  const crop = path.join(shots, `${name}-icon.png`);
  sh('convert', [file, '-crop', `${rect.w}x${rect.h}+${rect.x}+${rect.y}`, '+repage', crop]);
  log(`screenshot ${file} (icon: ${crop})`);
  return Number(sh('identify', ['-format', '%k', crop]).trim());
}

/** A host program from tests/real-hosts' cache (`FABRIC_TEST_<NAME>` in its hosts.env). */
function cachedHost(name) {
  const file = fs.existsSync(HOSTS_ENV) ? fs.readFileSync(HOSTS_ENV, 'utf8').match(new RegExp(`^FABRIC_TEST_${name}=(.*)$`, 'm'))?.[1] : null;
  return file && fs.existsSync(file) ? file : null;
}

/** One real `codex exec` turn in the person's HOME (hooks run without an approval record:
 * the approval itself is tests/real-hosts' subject). Its exit status and stderr. */
function codexTurn(codex, tag) {
  const r = run(codex, ['exec', '--skip-git-repo-check', '--dangerously-bypass-hook-trust', `Please reply. Reference: ${tag}.`], {
    env: env({ OPENAI_API_KEY: 'sk-stand-in' }),
    cwd: path.join(home, 'work/proj'),
    timeout: 180000,
  });
  return { status: r.status, stderr: r.stderr ?? '', stdout: r.stdout ?? '' };
}

/** A copy of the package with a higher version (`<version>+upgrade`), for the upgrade check. */
function upgradedCopy() {
  const dir = path.join(home, 'upgrade');
  fs.mkdirSync(dir, { recursive: true });
  sh('dpkg-deb', ['-R', DEB, path.join(dir, 'root')]);
  const control = path.join(dir, 'root/DEBIAN/control');
  fs.writeFileSync(control, fs.readFileSync(control, 'utf8').replace(/^Version: (.*)$/m, 'Version: $1+upgrade'));
  const out = path.join(dir, 'fabric-companion_upgrade_amd64.deb');
  sh('dpkg-deb', ['--root-owner-group', '-Zgzip', '-z1', '-b', path.join(dir, 'root'), out]);
  return out;
}

async function main() {
  if (!fs.existsSync(DEB)) throw new Error(`no package at ${DEB}`);
  for (const [what, file] of [['fabric-fake', FAKE], ['model-stand-in', MODEL], ['tauri-driver', TAURI_DRIVER]]) {
    if (!fs.existsSync(file)) throw new Error(`${what} not found at ${file}: build it first`);
  }
  fs.mkdirSync(shots, { recursive: true });
  checkPackageFile();
  checkNoticesFromACleanCargoHome();

  const t0 = Date.now();
  const install = run('apt-get', ['install', '-y', '-q', '--no-install-recommends', DEB], { env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
  check('apt-get install ./<deb> succeeds', install.status === 0, install.status === 0 ? `${((Date.now() - t0) / 1000).toFixed(1)} s` : install.stderr.slice(-400));
  // Our GNOME Shell extension: the variant this machine's shell loads (Debian 12's GNOME Shell
  // 43 loads scripts: the legacy one), linked where the shell finds system extensions.
  const extensionLink = '/usr/share/gnome-shell/extensions/fabric-companion-focus@passioncode.ai';
  const shellMajor = Number((run('gnome-shell', ['--version']).stdout ?? '').match(/GNOME Shell (\d+)/)?.[1] ?? 0);
  const wantVariant = shellMajor > 0 && shellMajor < 45 ? 'legacy' : 'module';
  let linked = '';
  try {
    linked = fs.readlinkSync(extensionLink);
  } catch {}
  check(`the GNOME Shell extension is the ${wantVariant} variant for GNOME Shell ${shellMajor || '(none)'}`, linked.endsWith(`/${wantVariant}/fabric-companion-focus@passioncode.ai`) && fs.existsSync(path.join(extensionLink, 'extension.js')), linked);
  const installed = sh('dpkg', ['-L', 'fabric-companion']).split('\n').filter(Boolean);
  const ownFiles = installed.filter((f) => fs.existsSync(f) && !fs.statSync(f).isDirectory());
  // The aarch64 program remote add copies to an aarch64 remote (hookbin/tests/aarch64.rs runs
  // it under qemu): installed in the package's lib folder, executable, an aarch64 ELF; not on
  // PATH.
  const arm = fs.existsSync(AARCH64) ? fs.readFileSync(AARCH64) : Buffer.alloc(0);
  check(`${AARCH64} is installed, executable, an aarch64 ELF`, arm.length > 64 && (fs.statSync(AARCH64).mode & 0o111) === 0o111 && arm.subarray(0, 4).toString('latin1') === '\x7fELF' && arm.readUInt16LE(18) === 183, `${arm.length} bytes`);
  check('no fabric-session-aarch64 on PATH', !fs.existsSync('/usr/bin/fabric-session-aarch64'));
  log(`${ownFiles.length} files installed`);

  home = fs.mkdtempSync(path.join(os.tmpdir(), 'fabric-installed-'));
  fs.mkdirSync(path.join(home, 'logs'));
  const urlFile = path.join(home, 'model-url');
  start(MODEL, ['--url-file', urlFile]);
  const modelUrl = await waitFor('the model stand-in', () => fs.existsSync(urlFile) && fs.readFileSync(urlFile, 'utf8').trim(), 30000);
  setupHome(modelUrl);
  log(`the person's HOME: ${home}`);
  const d = await desktop();

  // The tray, as the desktop session starts it at login: the autostart entry's Exec.
  const autostart = '/etc/xdg/autostart/fabric-tray.desktop';
  const trayExec = desktopExec(autostart);
  check("the autostart entry's Exec is the installed tray", resolve(trayExec[0]) === '/usr/bin/fabric-tray', trayExec.join(' '));
  start(resolve(trayExec[0]), trayExec.slice(1), { env: env(d), cwd: home });
  const rect = await waitFor('the tray icon to embed in trayer', () => iconRect(d), SLOW).catch(() => null);
  check('the tray icon appears in the tray host', Boolean(rect), rect ? `${rect.w}x${rect.h}+${rect.x}+${rect.y}` : '');
  if (rect) {
    const colours = await waitFor('the icon to be drawn', () => {
      const n = iconColours(d, rect, '1-tray');
      return n > 4 ? n : null;
    }, 30000).catch(() => 0);
    check('the tray icon is drawn (not a blank square)', colours > 4, `${colours} colours`);
  }
  // The first-run offer: Claude Code and Codex have fabric registered and none of our hooks.
  const notified = await waitFor('the offer notification', () => monitorLog().includes("Set up Fabric's session hooks?"), 30000).catch(() => false);
  check('the tray offers to set up hooks, once, in one notification', Boolean(notified) && monitorLog().split("Set up Fabric's session hooks?").length === 2, monitorLog().match(/string "(Claude Code[^"]*)"/)?.[1] ?? '');
  check('the packaged tray made no stable copy (hooks run /usr/bin/fabric-session)', !fs.existsSync(path.join(home, '.local/share/fabric-companion/bin/fabric-session')));

  // The dashboard, from its desktop entry's Exec, driven through tauri-driver.
  const entries = fs.readdirSync('/usr/share/applications').filter((f) => installed.includes(`/usr/share/applications/${f}`));
  check('one desktop entry is ours, fabric-companion.desktop', entries.length === 1 && entries[0] === 'fabric-companion.desktop', entries.join(','));
  const dashExec = desktopExec(path.join('/usr/share/applications', entries[0]));
  const app = resolve(dashExec[0]);
  check("the desktop entry's Exec is the installed dashboard", app === '/usr/bin/fabric-companion', dashExec.join(' '));
  // Started as the tray's "Set up hooks for Codex…" starts it: the Hooks view on Codex's plan.
  const offerArgs = ['--view', 'hooks', '--host', 'codex'];
  await driver.start(processes, TAURI_DRIVER, env({ ...d, TAURI_WEBVIEW_AUTOMATION: 'true' }), { application: app, args: [...dashExec.slice(1), ...offerArgs] }, SLOW);
  await waitFor('the dashboard to load', () => js('return document.body.dataset.ready === "true"'));
  check('the dashboard opens', true);

  // Codex's hooks through the Hooks view: plan, confirm.
  const hooksFile = path.join(home, '.codex/hooks.json');
  const hooksBefore = fs.readFileSync(hooksFile, 'utf8');
  await waitFor('the plan', () => text('[data-fact="diff"]'), 20000).then(
    () => check("the offer's dashboard opens on Codex's install plan, no click needed", true),
    async () => {
      check("the offer's dashboard opens on Codex's install plan, no click needed", false);
      await click('#tab-hooks');
      await click('[data-host="codex"] [data-action="install"]');
      await waitFor('the plan', () => text('[data-fact="diff"]'));
    },
  );
  check('nothing is written before confirming', fs.readFileSync(hooksFile, 'utf8') === hooksBefore);
  await shot('2-hooks-plan');
  await click('[data-action="confirm"]');
  await waitFor('the install result', () => text('[data-fact="applied"]'));
  const written = JSON.parse(fs.readFileSync(hooksFile, 'utf8'));
  const commands = Object.values(written.hooks).flatMap((groups) => groups.flatMap((g) => g.hooks.map((h) => h.command)));
  const ours = commands.filter((c) => c.includes('fabric-session'));
  // The session's four events and Codex's state events (which session needs you), one each.
  const codexEvents = oursByEvent(written.hooks);
  check("Codex's hooks run /usr/bin/fabric-session, one per event", sameList(codexEvents, CODEX_EVENTS) && ours.length === CODEX_EVENTS.length && ours.every((c) => c.startsWith(GUARDED)), `${codexEvents.join(' ')}: ${ours.join(' | ')}`);
  check("the person's own hook is kept", commands.includes('true a-person-s-hook'));
  await shot('3-hooks-installed');
  await driver.session('DELETE', '/window').catch(() => {});
  await driver.end();

  // A real hook run: the SessionStart command exactly as written, run the way Codex runs it.
  const startCommand = ours.find((c) => c.includes(' session-start'));
  const payload = JSON.stringify({ session_id: 'installed-codex-1', transcript_path: path.join(home, 't.jsonl'), cwd: path.join(home, 'work/proj'), hook_event_name: 'SessionStart', source: 'startup', model: 'o4', permission_mode: 'default' });
  const hook = run('/bin/bash', ['-c', startCommand], { env: env(), cwd: path.join(home, 'work/proj'), input: payload });
  check('the installed hook runs and exits 0', hook.status === 0, `exit ${hook.status} ${hook.stderr.trim()}`);
  check('the installed hook tells the session about Fabric', hook.stdout.trim().length > 0, hook.stdout.trim().slice(0, 80));
  const stop = run('/bin/bash', ['-c', ours.find((c) => c.includes(' stop'))], { env: env(), cwd: path.join(home, 'work/proj'), input: JSON.stringify({ ...JSON.parse(payload), hook_event_name: 'Stop', stop_hook_active: false }) });
  const board = path.join(home, '.cache/fabric-companion/sessions/installed-codex-1/board.json');
  const unread = await waitFor("the hook's worker to read the board", () => fs.existsSync(board) && JSON.parse(fs.readFileSync(board, 'utf8')).unread === 2, 30000).catch(() => false);
  check("the hook's detached worker talks to Fabric (board.json, 2 unread)", stop.status === 0 && Boolean(unread));

  // One real Codex session with the hooks the dashboard wrote, when tests/real-hosts has Codex.
  const codex = cachedHost('CODEX');
  const hookLog = path.join(home, '.cache/fabric-companion/hooks.log');
  if (codex) {
    const linesBefore = fs.readFileSync(hookLog, 'utf8').split('\n').length;
    const turn = codexTurn(codex, 'installed');
    const logged = fs.readFileSync(hookLog, 'utf8').split('\n').slice(linesBefore - 1).join('\n');
    check('a real Codex session runs with the installed hooks', turn.status === 0 && !/hook: \w+ Failed/.test(turn.stderr), `exit ${turn.status} ${turn.stderr.split('\n').filter((l) => /^hook: \w+ (Failed|Completed)/.test(l)).join(' / ')}`);
    // hooks.log: `<time> <event> <host> <session> <outcome> …`; Codex's session ids are UUIDs.
    const real = logged.split('\n').filter((l) => / codex [0-9a-f]{8}-[0-9a-f]{4}-/.test(l));
    check("the installed fabric-session ran the real Codex's hooks (hook log)", real.some((l) => /session.?start/i.test(l)), real.slice(0, 3).join(' / '));
  } else {
    console.log(`not run - a real Codex session (no cached Codex in ${HOSTS_ENV}; tests/real-hosts/install-hosts.sh makes it)`);
  }

  // The Claude Code plugin shipped inside, with the real Claude Code when it is cached.
  const plugin = JSON.parse(fs.readFileSync('/usr/share/fabric-companion/claude-plugin/hooks/hooks.json', 'utf8'));
  const pluginCommands = Object.values(plugin.hooks).flatMap((groups) => groups.flatMap((g) => g.hooks.map((h) => h.command)));
  const pluginEvents = oursByEvent(plugin.hooks);
  check("the plugin's hooks run /usr/bin/fabric-session, one per event", sameList(pluginEvents, CLAUDE_EVENTS) && pluginCommands.length === CLAUDE_EVENTS.length && pluginCommands.every((c) => c.startsWith(GUARDED)), `${pluginEvents.join(' ')}: ${pluginCommands.join(' | ')}`);
  const claude = cachedHost('CLAUDE');
  if (claude) {
    const cenv = env({ CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', DISABLE_AUTOUPDATER: '1' });
    const add = run(claude, ['plugin', 'marketplace', 'add', '/usr/share/fabric-companion/claude-plugin'], { env: cenv, cwd: home, timeout: 60000 });
    check('Claude Code adds the shipped plugin folder as a marketplace', add.status === 0, (add.stdout + add.stderr).trim().split('\n').pop());
    const inst = run(claude, ['plugin', 'install', 'fabric-session@fabric-companion'], { env: cenv, cwd: home, timeout: 60000 });
    check('Claude Code installs the shipped plugin', inst.status === 0, (inst.stdout + inst.stderr).trim().split('\n').pop());
  } else {
    console.log(`not run - the real Claude Code plugin install (no cached Claude Code in ${HOSTS_ENV}; tests/real-hosts/install-hosts.sh makes it)`);
  }

  // An upgrade (the same package with a higher version): the hooks' program is replaced in
  // place, so the person's config is untouched and its commands keep working.
  const hooksWritten = fs.readFileSync(hooksFile);
  const upgraded = upgradedCopy();
  const up = run('apt-get', ['install', '-y', '-q', '--no-install-recommends', upgraded], { env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
  const version = run('dpkg-query', ['-W', '-f', '${Version}', 'fabric-companion']).stdout;
  check('apt-get install of a newer package upgrades it', up.status === 0 && version.endsWith('+upgrade'), version || up.stderr.slice(-300));
  check("the upgrade leaves Codex's hooks.json byte-identical (same commands, same approval)", fs.readFileSync(hooksFile).equals(hooksWritten));
  const again = run('/bin/bash', ['-c', startCommand], { env: env(), cwd: path.join(home, 'work/proj'), input: payload.replace('installed-codex-1', 'installed-codex-2') });
  check('after the upgrade the same hook command runs the new program', again.status === 0 && again.stdout.trim().length > 0, `exit ${again.status}`);

  // Under trayer (XEmbed only) fabric-tray has become its GTK shell, fabric-tray-xembed.
  check('the tray still runs before the removal', packagePids().some((p) => p.endsWith(':/usr/lib/fabric-companion/fabric-tray-xembed')), packagePids().join(' '));

  // Removal: the person's host configs, byte for byte, before and after.
  const hostFiles = ['.codex/hooks.json', '.codex/config.toml', '.claude/settings.json', '.claude.json'].map((f) => path.join(home, f));
  const before = hostFiles.map(sha);
  const t1 = Date.now();
  const remove = run('apt-get', ['remove', '-y', '-q', 'fabric-companion'], { env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
  check('apt-get remove succeeds', remove.status === 0, remove.status === 0 ? `${((Date.now() - t1) / 1000).toFixed(1)} s` : remove.stderr.slice(-400));
  const left = await waitFor('the package processes to end', () => (packagePids().length === 0 ? [] : null), 15000).catch(() => packagePids());
  check('no process of the package is left running', left.length === 0, left.join(' '));
  const files = ownFiles.filter((f) => fs.existsSync(f));
  check('no file of the package is left', files.length === 0, files.join(' '));
  check(`${AARCH64} is gone`, ownFiles.includes(AARCH64) && !fs.existsSync(AARCH64));
  let linkLeft = true;
  try {
    fs.lstatSync(extensionLink);
  } catch {
    linkLeft = false;
  }
  check("the GNOME Shell extension's link is gone", !linkLeft, extensionLink);
  const after = hostFiles.map(sha);
  check("the person's host configs are byte-identical", before.every((h, i) => h === after[i]), hostFiles.filter((_, i) => before[i] !== after[i]).join(' '));
  const data = path.join(home, '.local/share/fabric-companion');
  check('nothing of ours in the person\'s data folder', !fs.existsSync(data), fs.existsSync(data) ? sh('find', [data]).trim() : '');

  // What a host meets now: its hook command with the program gone.
  const gone = run('/bin/bash', ['-c', startCommand], { env: env(), cwd: path.join(home, 'work/proj'), input: payload });
  check("after removal, a host's hook command exits 0 without a word", gone.status === 0 && gone.stdout === '' && gone.stderr === '', `exit ${gone.status} ${gone.stderr.trim()}`);

  if (codex) {
    const turn = codexTurn(codex, 'removed');
    check('after removal a real Codex session shows no failed hook', turn.status === 0 && !/hook: \w+ Failed/.test(turn.stderr), `exit ${turn.status} ${turn.stderr.split('\n').filter((l) => /^hook: \w+ (Failed|Completed)/.test(l)).join(' / ')}`);
  }

  // Nothing is kept after a remove (no conffiles), so dpkg forgets the package; a purge finds
  // nothing more to do.
  const status = run('dpkg-query', ['-W', '-f', '${Status}', 'fabric-companion']).stdout;
  check('after the remove dpkg keeps nothing of the package (no config files to purge)', !/ok installed|config-files/.test(status), status || 'unknown to dpkg');
  const purge = run('dpkg', ['--purge', 'fabric-companion']);
  const after2 = run('dpkg-query', ['-W', '-f', '${Status}', 'fabric-companion']).stdout;
  check('dpkg --purge then leaves no trace', purge.status === 0 && !/ok installed|config-files/.test(after2), `${purge.stderr.trim()} ${after2}`);
}

let code = 0;
try {
  await main();
} catch (e) {
  console.error(`[installed] error: ${e.stack ?? e}`);
  failed = true;
} finally {
  await driver.end();
  await processes.stopAll();
  console.log(`installed package: ${checks} checks${failed ? ', FAILED' : ', all passed'}`);
  if (failed || checks === 0) {
    code = 1;
    if (home) console.log(`[installed] logs kept in ${home}`);
  } else if (home) {
    fs.rmSync(home, { recursive: true, force: true });
  }
}
process.exit(code);
