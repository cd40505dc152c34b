// Browser tests: the built UI (dist-mock: the real views with Tauri's IPC mocked) in Debian's
// Chromium through playwright-core. Never downloads a browser. Screenshots go to
// $FABRIC_BROWSER_SHOTS (default ../target/browser-shots/dashboard).

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const here = path.dirname(fileURLToPath(import.meta.url));
const dist = path.resolve(here, '../../dist-mock');
const shots = path.resolve(
  process.env.FABRIC_BROWSER_SHOTS ?? path.join(here, '../../../target/browser-shots/dashboard'),
);
const executablePath = process.env.CHROMIUM ?? '/usr/bin/chromium';
const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css' };

let server;
let browser;
let base;

before(async () => {
  assert.ok(fs.existsSync(path.join(dist, 'mock/index.html')), 'run `npm run build:mock` first');
  fs.mkdirSync(shots, { recursive: true });
  server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://x');
    const file = path.join(dist, path.normalize(decodeURIComponent(url.pathname)).replace(/^([/\\])+/, ''));
    if (!file.startsWith(dist) || !fs.existsSync(file) || fs.statSync(file).isDirectory()) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': TYPES[path.extname(file)] ?? 'application/octet-stream' });
    fs.createReadStream(file).pipe(res);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${server.address().port}/mock/index.html`;
  browser = await chromium.launch({
    executablePath,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
});

after(async () => {
  await browser?.close();
  await new Promise((resolve) => (server ? server.close(resolve) : resolve()));
});

async function open(query = '', colorScheme = 'light') {
  const page = await browser.newPage({ viewport: { width: 1100, height: 760 }, colorScheme });
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(base + query);
  await page.waitForSelector('body[data-ready="true"]', { timeout: 15000 });
  return { page, errors };
}

const calls = (page, cmd) => page.evaluate((c) => window.__fabricMock.calls.filter((x) => x.cmd === c), cmd);

test('overview shows Fabric, the hooks and each live session', async () => {
  const { page, errors } = await open();
  assert.equal(await page.textContent('[data-fact="origin"]'), 'http://127.0.0.1:47070');
  assert.equal(await page.textContent('[data-session="sess-analytics-1"] [data-col="unread"]'), '2 unread');
  assert.equal(await page.textContent('[data-session="sess-analytics-1"] [data-col="project"]'), 'proj-analytics');
  assert.match(await page.textContent('[data-session="sess-analytics-1"] [data-col="last-turn"]'), /4 files, \+120 −7/);
  assert.match(
    await page.textContent('[data-session="sess-web-2"] [data-col="state"]'),
    /^Needs you permission · Bash\s*since /,
  );
  assert.match(await page.textContent('#view-overview h2#hooks-h'), /Active/);
  await page.screenshot({ path: path.join(shots, 'overview.png') });
  assert.deepEqual(errors, []);
  await page.close();
});

test('dark mode follows the OS', async () => {
  const { page } = await open('', 'dark');
  const bg = await page.evaluate(() => getComputedStyle(document.documentElement).backgroundColor);
  assert.equal(bg, 'rgb(21, 24, 29)');
  await page.screenshot({ path: path.join(shots, 'overview-dark.png') });
  await page.close();
});

test('hooks: install shows the diff and applies only after confirming', async () => {
  const { page } = await open();
  await page.click('#tab-hooks');
  assert.match(await page.textContent('[data-host="codex"] [data-fact="trust"]'), /approve it in \/hooks/);
  assert.equal(await page.textContent('[data-host="kimi"] [data-fact="hook-state"]'), 'Out of date');
  await page.click('[data-host="codex"] [data-action="install"]');
  await page.waitForSelector('[data-fact="diff"]');
  assert.match(await page.textContent('[data-fact="plan-file"]'), /\.codex\/hooks\.json/);
  assert.match(await page.textContent('[data-fact="plan-digest"]'), /sha256 aa11bb22/);
  assert.match(await page.textContent('.diff .add'), /"hooks": \{/);
  assert.equal((await calls(page, 'plan_hooks')).length, 1);
  assert.equal((await calls(page, 'apply_hooks')).length, 0, 'nothing applied before confirming');
  await page.screenshot({ path: path.join(shots, 'hooks-plan.png'), fullPage: true });
  await page.click('[data-action="confirm"]');
  await page.waitForSelector('[data-fact="applied"]');
  const applied = await calls(page, 'apply_hooks');
  assert.equal(applied.length, 1);
  assert.deepEqual(applied[0].args, {
    host: 'codex',
    operation: 'install',
    expectedSha256: 'aa11bb22cc33dd44ee55ff6600112233445566778899aabbccddeeff00112233',
  });
  assert.match(await page.textContent('[data-fact="applied"]'), /hooks\.json\.bak-/);
  await page.close();
});

test('hooks: cancel writes nothing, a refusal is shown in plain words', async () => {
  const { page } = await open();
  await page.click('#tab-hooks');
  await page.click('[data-host="codex"] [data-action="install"]');
  await page.click('[data-action="cancel"]');
  assert.equal((await calls(page, 'apply_hooks')).length, 0);
  await page.evaluate(
    () =>
      (window.__fabricMock.applyError = '/home/ada/.codex/hooks.json changed since the dry run; run the dry run again'),
  );
  await page.click('[data-host="codex"] [data-action="install"]');
  await page.click('[data-action="confirm"]');
  await page.waitForSelector('[data-fact="refusal"]');
  assert.match(await page.textContent('[data-fact="refusal"]'), /changed since the dry run/);
  assert.match(await page.textContent('#plan-h'), /not changed/);
  await page.close();
});

test('log filters, searches and follows new lines', async () => {
  const { page } = await open();
  await page.click('#tab-log');
  assert.equal(await page.locator('#log tbody tr').count(), 40);
  await page.selectOption('#log-outcome', 'refused');
  await page.waitForFunction(() => document.querySelectorAll('#log tbody tr').length === 8);
  assert.equal(await page.locator('#log tbody tr[data-outcome="ok"]').count(), 0);
  await page.selectOption('#log-outcome', '');
  await page.selectOption('#log-session', 'sess-web-2');
  await page.fill('#log-search', 'n=17');
  await page.waitForFunction(() => document.querySelectorAll('#log tbody tr').length === 1);
  await page.fill('#log-search', '');
  await page.selectOption('#log-session', '');
  await page.waitForFunction(() => document.querySelectorAll('#log tbody tr').length === 40);
  await page.evaluate(() =>
    window.__fabricMock.emit('log-appended', {
      reset: false,
      lines: [window.__fabricMock.logLine(99, { event: 'session-end', detail: 'brand-new' })],
    }),
  );
  await page.waitForFunction(() => document.querySelectorAll('#log tbody tr').length === 41);
  assert.match(await page.textContent('#log tbody tr:last-child'), /brand-new/);
  const atEnd = await page.evaluate(() => {
    const s = document.getElementById('log-scroller');
    return s.scrollHeight - s.clientHeight - s.scrollTop < 4;
  });
  assert.ok(atEnd, 'the tail follows the newest line');
  assert.ok((await page.$$eval('#log-event option', (o) => o.map((x) => x.value))).includes('session-end'));
  await page.screenshot({ path: path.join(shots, 'log.png') });
  await page.close();
});

test('log copes with a full 1 MB log', async () => {
  const { page } = await open('?lines=12000');
  await page.click('#tab-log');
  assert.match(await page.textContent('#log-count'), /12000 of 12000 lines match; showing the newest 500/);
  const ms = await page.evaluate(async () => {
    const t = performance.now();
    const input = document.getElementById('log-search');
    input.value = 'n=11999';
    input.dispatchEvent(new Event('input'));
    await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
    return performance.now() - t;
  });
  assert.equal(await page.locator('#log tbody tr').count(), 1);
  assert.ok(ms < 500, `filtering took ${ms} ms`);
  await page.close();
});

test('events patch the page in place: focus, selection, typing and scroll survive', async () => {
  const { page, errors } = await open('?lines=600');
  const mock = (fn, arg) => page.evaluate(fn, arg);

  // Hooks: the person is on Codex's Install button when the status changes under it.
  await page.click('#tab-hooks');
  await page.focus('[data-host="codex"] [data-action="install"]');
  await mock(() => (window.__focused = document.activeElement));
  await mock(() => {
    const m = window.__fabricMock;
    m.status = structuredClone(m.status);
    m.status.status.hosts[1].hooks = {
      state: 'installed',
      commandPath: '/opt/fabric-session',
      description: 'installed',
    };
    return m.emit('state-changed', { kinds: ['status'] });
  });
  await page.waitForFunction(
    () => document.querySelector('[data-host="codex"] [data-action="install"]').textContent === 'Reinstall…',
  );
  assert.ok(
    await mock(() => document.activeElement === window.__focused && window.__focused.isConnected),
    'the same button keeps the focus',
  );
  assert.equal(await page.isEnabled('[data-host="codex"] [data-action="remove"]'), true);

  // Overview: a selection in a session row survives a new unread count.
  await page.click('#tab-overview');
  await mock(() => {
    const text = document.querySelector('[data-session="sess-analytics-1"] [data-col="project"]').firstChild;
    document.getSelection().setBaseAndExtent(text, 0, text, text.length);
    const m = window.__fabricMock;
    m.status = structuredClone(m.status);
    m.status.status.sessions[0].board.unread = 9;
    return m.emit('state-changed', { kinds: ['status'] });
  });
  await page.waitForFunction(
    () => document.querySelector('[data-session="sess-analytics-1"] [data-col="unread"]').textContent === '9 unread',
  );
  assert.equal(await mock(() => document.getSelection().toString()), 'proj-analytics');

  // Log: opened at the tail; scrolled up, the rows being read stay put on screen even as the
  // oldest drop off the top (500 shown of 600+); back at the bottom, the tail follows.
  await page.click('#tab-log');
  const scroller = '#log-scroller';
  const distance = () => page.$eval(scroller, (s) => s.scrollHeight - s.clientHeight - s.scrollTop);
  assert.ok((await distance()) < 4, 'the tail opens at the newest line');
  const before = await page.$eval(scroller, (s) => {
    s.scrollTop = 2000;
    return new Promise((resolve) =>
      requestAnimationFrame(() => {
        const top = s.getBoundingClientRect().top;
        const row = [...s.querySelectorAll('tbody tr')].find((r) => r.getBoundingClientRect().bottom > top);
        window.__reading = row;
        resolve({ scrollTop: s.scrollTop, offset: row.getBoundingClientRect().top - top, text: row.textContent });
      }),
    );
  });
  await mock(() =>
    window.__fabricMock.emit('log-appended', {
      reset: false,
      lines: [0, 1, 2].map((i) => window.__fabricMock.logLine(700 + i, { detail: `new-${i}` })),
    }),
  );
  await page.waitForFunction(() => document.getElementById('log-count').textContent.startsWith('603 of 603'));
  const after = await page.$eval(scroller, (s) => {
    const row = window.__reading;
    return {
      scrollTop: s.scrollTop,
      offset: row.getBoundingClientRect().top - s.getBoundingClientRect().top,
      text: row.textContent,
    };
  });
  assert.equal(after.text, before.text);
  assert.ok(
    Math.abs(after.offset - before.offset) < 1,
    `the row read stays on screen (${before.offset} → ${after.offset})`,
  );
  assert.ok(after.scrollTop < before.scrollTop, 'the scroller made up for the rows dropped above');
  assert.match(await page.textContent('#log tbody tr:last-child'), /new-2/);
  await page.$eval(scroller, (s) => (s.scrollTop = s.scrollHeight));
  await page.waitForFunction(() => new Promise((r) => requestAnimationFrame(() => r(true))));
  await mock(() =>
    window.__fabricMock.emit('log-appended', {
      reset: false,
      lines: [window.__fabricMock.logLine(710, { detail: 'newest' })],
    }),
  );
  await page.waitForFunction(() => document.querySelector('#log tbody tr:last-child').textContent.includes('newest'));
  assert.ok((await distance()) < 4, 'at the bottom, the tail follows');

  // Log: typing in the search box, with part of it selected, when a line arrives.
  await page.click('#log-search');
  await page.keyboard.type('n=5');
  await page.keyboard.press('Shift+ArrowLeft');
  await page.waitForFunction(
    () =>
      document.getElementById('log-count').textContent.includes('lines match') &&
      document.querySelectorAll('#log tbody tr').length < 200,
  );
  const matched = await page.locator('#log tbody tr').count();
  await mock(() =>
    window.__fabricMock.emit('log-appended', {
      reset: false,
      lines: [window.__fabricMock.logLine(720, { detail: 'n=5-fresh' })],
    }),
  );
  await page.waitForFunction((n) => document.querySelectorAll('#log tbody tr').length === n + 1, matched);
  assert.match(await page.textContent('#log tbody tr:last-child'), /n=5-fresh/);
  const search = await page.$eval('#log-search', (el) => ({
    focused: document.activeElement === el,
    value: el.value,
    sel: [el.selectionStart, el.selectionEnd],
  }));
  assert.deepEqual(search, { focused: true, value: 'n=5', sel: [2, 3] });
  await page.keyboard.type('0');
  assert.equal(
    await page.inputValue('#log-search'),
    'n=0',
    'the next key replaces the selected text, as without the event',
  );

  assert.deepEqual(errors, []);
  await page.close();
});

test('every view says its states in words, never a raw enum word', async () => {
  const { page, errors } = await open();
  // Enum words as the Rust side spells them; the page shows its labels (src/labels.ts).
  const raw =
    /\b(not-installed|not-needed|turned-off|hooks-off|not-probed|session-start|user-prompt-submit|fabric-down)\b/;
  const seen = {};
  for (const tab of ['overview', 'hooks', 'log', 'services', 'settings']) {
    await page.click(`#tab-${tab}`);
    seen[tab] = await page.evaluate((id) => document.getElementById(id).innerText, `view-${tab}`);
    assert.doesNotMatch(seen[tab], raw, `${tab}: ${seen[tab].match(raw)?.[0]}`);
  }
  assert.match(seen.overview, /Fabric\s+Running/);
  assert.equal(await page.textContent('[data-host="codex"] [data-fact="hook-state"]'), 'Not installed');
  assert.equal(
    await page.getAttribute('[data-host="codex"] [data-fact="hook-state"] .badge', 'data-state'),
    'not-installed',
  );
  assert.match(seen.log, /Session start/);
  assert.match(seen.log, /Refused: fabric down/);
  assert.deepEqual(errors, []);
  await page.close();
});

test('services show each state', async () => {
  const { page } = await open();
  await page.click('#tab-services');
  const states = await page.$$eval('#services [data-col="state"] .badge', (b) => b.map((x) => x.textContent));
  assert.deepEqual(states, ['Ready', 'Degraded', 'Down', 'Invalid']);
  await page.screenshot({ path: path.join(shots, 'services.png') });
  await page.close();
});

test('settings save through the command and are keyboard reachable', async () => {
  const { page } = await open();
  await page.focus('#tab-overview');
  await page.keyboard.press('End');
  assert.equal(await page.getAttribute('#tab-settings', 'aria-selected'), 'true');
  assert.equal(await page.inputValue('#set-quiet-start'), '22:00');
  await page.fill('#set-interval', '120');
  await page.uncheck('#set-notifications');
  await page.check('#set-login');
  await page.fill('#set-grace', '8');
  await page.fill('#set-long-turn', '15');
  await page.fill('#set-remotes', 'me@build-box,  docker:devc');
  await page.click('#settings-save');
  await page.waitForFunction(() => document.getElementById('settings-message').textContent.startsWith('Saved'));
  const saved = await calls(page, 'save_settings');
  assert.deepEqual(saved.at(-1).args.form, {
    watchIntervalSecs: 120,
    notifications: false,
    quietStart: '22:00',
    quietEnd: '07:30',
    launchAtLogin: true,
    mutedProjects: ['proj-noisy'],
    remotes: ['me@build-box', 'docker:devc'],
    needsYouGraceSecs: 8,
    longTurnMinutes: 15,
  });
  await page.click('#settings-test');
  await page.waitForFunction(() => document.getElementById('test-message').textContent.includes('Asked the tray'));
  for (const id of [
    'set-interval',
    'set-notifications',
    'set-quiet-start',
    'set-quiet-end',
    'set-grace',
    'set-long-turn',
    'set-login',
    'set-muted',
    'set-remotes',
  ]) {
    assert.ok(await page.$(`label[for="${id}"]`), `${id} has a label`);
  }
  await page.screenshot({ path: path.join(shots, 'settings.png') });
  await page.close();
});

test('settings: Set up another machine shows the plan and its digest, and applies only on Apply', async () => {
  const { page, errors } = await open();
  const mock = (fn, arg) => page.evaluate(fn, arg);
  await page.click('#tab-settings');
  for (const id of ['remote-destination', 'remote-host']) {
    assert.ok(await page.$(`label[for="${id}"]`), `${id} has a label`);
  }
  const shown = await mock(() => window.__fabricMock.remotePlan.digest);

  // Set up…: progress while the remote answers, then the plan and its digest; nothing applied.
  await mock(() => (window.__fabricMock.remoteDelayMs = 500));
  await page.fill('#remote-destination', '  build-box ');
  await page.click('#remote-setup');
  await page.waitForSelector('[data-fact="remote-progress"]');
  assert.match(await page.textContent('[data-fact="remote-progress"]'), /^Checking build-box’s system, copying/);
  assert.equal(await page.isDisabled('#remote-setup'), true, 'Set up… is off while it runs');
  await page.waitForSelector('[data-fact="remote-digest"]');
  assert.equal(await page.isDisabled('#remote-setup'), false);
  assert.equal(await page.textContent('[data-fact="remote-digest"]'), shown);
  assert.match(await page.textContent('[data-fact="remote-plan"]'), /^Claude Code on build-box: .*\n {2}Would add:/);
  assert.ok((await page.textContent('[data-fact="remote-plan"]')).includes(`Plan digest: ${shown}`));
  assert.equal(await page.textContent('[data-fact="remote-machine"]'), 'Linux x86_64');
  assert.deepEqual(
    (await calls(page, 'prepare_remote')).map((c) => c.args),
    [{ destination: 'build-box', host: 'claude' }],
  );
  assert.equal(await page.textContent('[data-action="remote-apply"]'), 'Apply on build-box');
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'remote-plan-h', 'the panel takes the focus');
  await page.locator('#settings-remote-setup').screenshot({ path: path.join(shots, 'remote-setup-consent.png') });

  // Cancel: nothing applied, nothing followed.
  await page.click('[data-action="remote-cancel"]');
  await page.waitForSelector('[data-fact="remote-result"]');
  assert.match(await page.textContent('[data-fact="remote-result"]'), /^Nothing was applied on build-box\./);
  assert.equal((await calls(page, 'apply_remote')).length, 0, 'Cancel applied');
  assert.equal(await page.inputValue('#set-remotes'), 'me@build-box, gpu-box');

  // Set up… again, then Apply: exactly the digest shown; the remotes field follows it.
  await mock(() => (window.__fabricMock.remoteDelayMs = 0));
  await page.click('#remote-setup');
  await page.waitForSelector('[data-fact="remote-digest"]');
  assert.equal((await calls(page, 'apply_remote')).length, 0, 'applied before the click');
  await page.click('[data-action="remote-apply"]');
  await page.waitForSelector('[data-fact="remote-result"]');
  assert.deepEqual(
    (await calls(page, 'apply_remote')).map((c) => c.args),
    [{ destination: 'build-box', host: 'claude', digest: shown }],
  );
  assert.equal(
    await page.textContent('[data-fact="remote-result"]'),
    'Claude Code’s hooks on build-box are ours now. The tray follows build-box now.',
  );
  assert.equal(await page.inputValue('#set-remotes'), 'me@build-box, gpu-box, build-box');

  // A remote that needs a person: its one line, shown as it came.
  const line = 'build-box: its host key is not known yet: run `ssh build-box` once';
  await mock((l) => (window.__fabricMock.remotePrepareError = l), line);
  await page.click('#remote-setup');
  await page.waitForSelector('[data-fact="remote-refusal"]');
  assert.equal(await page.textContent('[data-fact="remote-refusal"]'), line);
  assert.equal(await page.$('[data-action="remote-apply"]'), null, 'no Apply without a plan');

  // Apply refused there (the config changed since): its line; nothing more was applied.
  const changed = 'build-box: the plan digest changed: the file changed since the plan was read';
  await mock((l) => {
    window.__fabricMock.remotePrepareError = null;
    window.__fabricMock.remoteApplyError = l;
  }, changed);
  await page.click('#remote-setup');
  await page.waitForSelector('[data-fact="remote-digest"]');
  await page.click('[data-action="remote-apply"]');
  await page.waitForSelector('[data-fact="remote-refusal"]');
  assert.equal(await page.textContent('[data-fact="remote-refusal"]'), changed);
  assert.equal(await page.textContent('#remote-plan-h'), 'Refused');
  assert.equal((await calls(page, 'apply_remote')).length, 2, 'one Apply, one click each');
  assert.deepEqual(errors, []);
  await page.close();
});

test('settings: Take down… shows each host’s removal plan and takes exactly those out on its click', async () => {
  const { page, errors } = await open();
  await page.click('#tab-settings');
  await page.fill('#remote-destination', 'me@build-box');
  await page.click('#remote-take-down');
  await page.waitForSelector('[data-fact="remote-removal-plan"]');
  const shown = await page.$$eval('[data-fact="remote-removal-plan"]', (pres) =>
    pres.map((p) => [p.dataset.host, p.getAttribute('aria-label')]),
  );
  assert.deepEqual(shown, [
    ['claude', 'Claude Code’s removal plan on build-box'],
    ['codex', 'Codex’s removal plan on build-box'],
  ]);
  assert.deepEqual(
    (await calls(page, 'plan_remote_removal')).map((c) => c.args),
    [{ destination: 'me@build-box' }],
  );
  await page.locator('#settings-remote-setup').screenshot({ path: path.join(shots, 'remote-take-down-consent.png') });
  await page.click('[data-action="remote-cancel"]');
  await page.waitForSelector('[data-fact="remote-result"]');
  assert.equal((await calls(page, 'take_down_remote')).length, 0, 'Cancel took something down');

  await page.click('#remote-take-down');
  await page.waitForSelector('[data-action="remote-take-down-apply"]');
  await page.click('[data-action="remote-take-down-apply"]');
  await page.waitForSelector('[data-fact="remote-result"]');
  const [taken] = await calls(page, 'take_down_remote');
  assert.deepEqual(taken.args, {
    destination: 'me@build-box',
    shown: await page.evaluate(() =>
      window.__fabricMock.remoteRemoval.hosts.map(({ host, digest }) => ({ host, digest })),
    ),
  });
  assert.equal(
    await page.textContent('[data-fact="remote-result"]'),
    'fabric-session is off build-box, and the tray no longer follows it.',
  );
  assert.equal(await page.inputValue('#set-remotes'), 'gpu-box');
  assert.deepEqual(errors, []);
  await page.close();
});
