import { beforeEach, describe, expect, it, vi } from 'vitest';
import {
  logLine,
  planFixture,
  remoteRemovalFixture,
  remoteSetupFixture,
  servicesFixture,
  settingsFixture,
  statusFixture,
} from '../../mock/fixtures';
import { desktopCard, focusText, renderOverview, setDesktop, waited, wireOverview } from '../../src/views/overview';
import type { FocusView } from '../../src/types';
import { HooksView } from '../../src/views/hooks';
import { LogView, matches, visible } from '../../src/views/log';
import { renderServices } from '../../src/views/services';
import { RemoteSetupView } from '../../src/views/remote_setup';
import { SettingsView } from '../../src/views/settings';

let root: HTMLElement;
beforeEach(() => {
  document.body.innerHTML = '<div id="root"></div>';
  root = document.getElementById('root')!;
});

describe('log filtering', () => {
  const lines = Array.from({ length: 30 }, (_, i) => logLine(i));
  const none = { event: '', outcome: '', session: '', search: '' };

  it('matches by event, outcome, session and search', () => {
    expect(matches(lines[0]!, none)).toBe(true);
    expect(lines.filter((l) => matches(l, { ...none, outcome: 'refused' }))).toHaveLength(6);
    expect(
      lines
        .filter((l) => matches(l, { ...none, event: 'stop', session: 'sess-analytics-1' }))
        .every((l) => l.event === 'stop' && l.session === 'sess-analytics-1'),
    ).toBe(true);
    expect(lines.filter((l) => matches(l, { ...none, search: 'N=17' }))).toHaveLength(1);
  });

  it('keeps the newest rows, oldest first, and counts all matches', () => {
    const { rows, total } = visible(lines, none, 5);
    expect(total).toBe(30);
    expect(rows.map((r) => r.detail)).toEqual(['n=25', 'n=26', 'n=27', 'n=28', 'n=29']);
  });

  it('handles a 1 MB log quickly', () => {
    const big = Array.from({ length: 12000 }, (_, i) => logLine(i));
    const view = new LogView(root);
    const start = performance.now();
    view.load({ path: 'hooks.log', rotated: 'hooks.log.1', lines: big });
    expect(performance.now() - start).toBeLessThan(2000);
    expect(root.querySelectorAll('#log tbody tr')).toHaveLength(500);
    expect(root.querySelector('#log-count')!.textContent).toContain('12000 of 12000');
  });
});

describe('waited', () => {
  it('says how long in the largest whole unit', () => {
    const now = new Date('2026-10-01T10:00:00Z');
    expect(waited('2026-10-01T09:59:48Z', now)).toBe('12 s');
    expect(waited('2026-10-01T09:56:00Z', now)).toBe('4 min');
    expect(waited('2026-10-01T07:00:00Z', now)).toBe('3 h');
    expect(waited('2026-09-28T10:00:00Z', now)).toBe('3 d');
    expect(waited(undefined, now)).toBe('');
  });
});

describe('overview', () => {
  it('shows Fabric, the hooks and each session with its unread count', () => {
    renderOverview(root, statusFixture());
    expect(root.querySelector('[data-fact="origin"]')!.textContent).toBe('http://127.0.0.1:47070');
    const row = root.querySelector('[data-session="sess-analytics-1"]')!;
    expect(row.querySelector('[data-col="project"]')!.textContent).toBe('proj-analytics');
    expect(row.querySelector('[data-col="unread"]')!.textContent).toBe('2 unread');
    expect(row.textContent).toContain('4 files, +120 −7');
    const waiting = root.querySelector('[data-session="sess-web-2"] [data-col="state"]')!;
    expect(waiting.getAttribute('data-state')).toBe('needs-you');
    expect(waiting.querySelector('.badge')!.textContent).toBe('Needs you');
    expect(waiting.querySelector('[data-col="why"]')!.textContent).toBe(' permission · Bash');
    expect(waiting.querySelector('[data-col="since"]')!.textContent).toMatch(/^since .+ \(\d+ (s|min|h|d)\)$/);
    const done = root.querySelector('[data-session="sess-analytics-1"] [data-col="state"]')!;
    expect(done.querySelector('.badge')!.textContent).toBe('Finished');
    // The session that needs you comes first.
    const rows = [...root.querySelectorAll('#sessions tbody tr')].map((r) => r.getAttribute('data-session'));
    expect(rows).toEqual(['sess-web-2', 'sess-analytics-1']);
    expect(root.querySelector('[data-session="sess-web-2"] [data-col="board"]')!.textContent).toBe('unknown');
  });

  it("a row's Go to asks for that session and says what happened, kept across re-renders", async () => {
    const focus = vi.fn<(session: string) => Promise<FocusView>>(async () => ({
      outcome: 'notAllowed',
      why: "this Wayland desktop does not let a program raise another's window",
      place: 'proj-analytics (Claude Code), tmux work:1.0',
    }));
    wireOverview(root, focus);
    renderOverview(root, statusFixture());
    root.querySelector<HTMLButtonElement>('[data-session="sess-analytics-1"] button[data-action="focus"]')!.click();
    expect(focus).toHaveBeenCalledWith('sess-analytics-1');
    await vi.waitFor(() =>
      expect(root.querySelector('[data-fact="focus-note"]')!.textContent).toBe(
        "Cannot go there: this Wayland desktop does not let a program raise another's window. The session is proj-analytics (Claude Code), tmux work:1.0.",
      ),
    );
    renderOverview(root, statusFixture());
    expect(root.querySelector('[data-fact="focus-note"]')!.textContent).toContain('tmux work:1.0');
    expect(focusText({ outcome: 'raised', what: 'xterm (pid 7, window 0x40000c)' })).toBe(
      'Raised xterm (pid 7, window 0x40000c).',
    );
    expect(focusText({ outcome: 'gone' })).toBe('That session has ended: its process is gone.');
  });

  it("says what this desktop lacks: GNOME's tray extension, and ours with a button to turn it on", async () => {
    const enable = vi.fn(async () => {
      setDesktop({ trayHelp: null, jump: { state: 'works' } });
      renderOverview(root, statusFixture());
    });
    wireOverview(root, vi.fn(), enable);
    setDesktop({
      trayHelp:
        'GNOME shows no tray icons by itself: to see Fabric Companion\'s icon and unread count in the top bar, turn on its "AppIndicator and KStatusNotifierItem Support" extension (in Extensions, or `gnome-extensions enable ubuntu-appindicators@ubuntu.com`), then log out and in. Notifications and jumping to a session work without it.',
      jump: {
        state: 'gnomeExtensionOff',
        why: "GNOME Shell lets a program raise another's window only through an extension, and Fabric Companion's is installed but off",
        command: 'gnome-extensions enable fabric-companion-focus@passioncode.ai',
      },
    });
    renderOverview(root, statusFixture());
    expect(root.querySelector('[data-fact="tray-help"]')!.textContent).toContain(
      'Notifications and jumping to a session work without it',
    );
    expect(root.querySelector('[data-fact="jump-help"]')!.textContent).toContain('installed but off');
    expect(root.textContent).toContain('gnome-extensions enable fabric-companion-focus@passioncode.ai');
    // Nothing is turned on until the person clicks.
    expect(enable).not.toHaveBeenCalled();
    root.querySelector<HTMLButtonElement>('button[data-action="enable-jump"]')!.click();
    expect(enable).toHaveBeenCalledTimes(1);
    await vi.waitFor(() => expect(root.querySelector('#desktop-h')).toBeNull());
    // A desktop that lacks nothing shows no notice.
    expect(desktopCard({ trayHelp: null, jump: { state: 'works' } })).toBeNull();
    expect(desktopCard({ trayHelp: null, jump: { state: 'notPossible', why: 'no way here' } })!.textContent).toContain(
      'It says where each session is instead',
    );
    setDesktop(null);
  });

  it("tells our GNOME extension out of date from failed, with the shell's own error", () => {
    const outOfDate = desktopCard({
      trayHelp: null,
      jump: { state: 'gnomeExtensionOutOfDate', why: "Fabric Companion's is out of date for this GNOME Shell" },
    })!;
    expect(outOfDate.querySelector('[data-fact="jump-help"]')!.textContent).toContain('out of date');
    expect(outOfDate.querySelector('button[data-action="enable-jump"]')).toBeNull();
    const failed = desktopCard({
      trayHelp: null,
      jump: {
        state: 'gnomeExtensionFailed',
        why: "Fabric Companion's failed to load",
        error: 'An object is already exported',
      },
    })!;
    expect(failed.querySelector('[data-fact="jump-help"]')!.textContent).toContain('failed to load');
    expect(failed.querySelector('[data-fact="jump-error"]')!.textContent).toBe(
      'GNOME Shell said: An object is already exported',
    );
    expect(failed.querySelector('button[data-action="enable-jump"]')).toBeNull();
  });

  it('lists the other machines, their links and their sessions with Go to', () => {
    const focus = vi.fn(() => Promise.resolve({ outcome: 'unknown' } as const));
    wireOverview(root, focus);
    renderOverview(root, statusFixture());
    const remotes = [...root.querySelectorAll('[data-remote]')];
    expect(remotes.map((r) => r.getAttribute('data-remote'))).toEqual(['me@build-box', 'gpu-box']);
    expect(remotes[1]!.querySelector('[data-fact="link"]')!.textContent).toContain('Connection refused');
    const row = remotes[0]!.querySelector('[data-session]')!;
    expect(row.querySelector('[data-col="project"]')!.textContent).toBe('api');
    expect(row.querySelector('[data-col="state"]')!.getAttribute('data-state')).toBe('needs-you');
    (row.querySelector('button[data-action="focus"]') as HTMLButtonElement).click();
    expect(focus).toHaveBeenCalledWith('remote:me@build-box/sess-remote-1');
    const none = statusFixture();
    none.remotes = [];
    renderOverview(root, none);
    expect(root.querySelector('[data-remote]')).toBeNull();
  });

  it('says what to do when Fabric is down', () => {
    const view = statusFixture();
    view.status.fabric = { state: 'down', downReason: 'no hub.json', features: [], hubJson: '/x' };
    view.status.sessionHooks = 'inert';
    renderOverview(root, view);
    expect(root.querySelector('[data-fact="down-reason"]')!.textContent).toBe(
      'Fabric is not running: it has not written its hub.json.',
    );
    expect(root.querySelector('[data-fact="hooks-why"]')!.textContent).toContain('Fabric is down');
  });
});

describe('hooks', () => {
  it('shows the plan and applies only after confirming, with the plan digest', async () => {
    const api = {
      planHooks: vi.fn(async () => planFixture()),
      applyHooks: vi.fn(async () => ({
        file: '/f',
        backup: '/f.bak',
        changed: true,
        sha256: 'x',
        plan: planFixture().plan,
      })),
    };
    const view = new HooksView(root, api);
    view.bind();
    const status = statusFixture();
    const codex = status.status.hosts[1]!;
    expect(codex.host).toBe('codex');
    view.update(status);
    expect(root.querySelector('[data-host="codex"] [data-fact="approval"]')).toBeNull();
    codex.hooks = {
      state: 'installed',
      commandPath: '/opt/fabric-session',
      description: 'installed (/opt/fabric-session)',
    };
    codex.approval = {
      state: 'waiting',
      events: ['SessionStart', 'UserPromptSubmit', 'Stop', 'SessionEnd'],
      approvedElsewhere: false,
      hooks: [],
      description: 'waiting for your approval in Codex: run /hooks',
    };
    view.update(status);
    expect(root.querySelector('[data-host="codex"] [data-fact="trust"]')).not.toBeNull();
    expect(root.querySelector('[data-host="codex"] [data-fact="approval"]')!.textContent).toBe(
      'Waiting — waiting for your approval in Codex: run /hooks',
    );
    expect(root.querySelector('[data-host="claude"] [data-fact="approval"]')).toBeNull();
    expect(root.querySelector('[data-host="codex"] [data-fact="version"]')!.textContent).toBe(
      '0.160.0 (tested with 0.169.0)',
    );
    expect(root.querySelector('[data-host="codex"] [data-fact="version-warning"]')!.textContent).toContain(
      'older than 0.169.0',
    );
    expect(root.querySelector('[data-host="kimi"] [data-fact="version"]')!.textContent).toBe(
      'unknown (tested with 2.1.0)',
    );
    (root.querySelector('[data-host="codex"] [data-action="install"]') as HTMLButtonElement).click();
    await vi.waitFor(() => expect(root.querySelector('[data-fact="diff"]')).not.toBeNull());
    expect(api.planHooks).toHaveBeenCalledWith('codex', 'install');
    expect(api.applyHooks).not.toHaveBeenCalled();
    expect(root.querySelector('[data-fact="plan-digest"]')!.textContent).toContain('aa11bb22');
    expect(root.querySelector('.diff .add')!.textContent).toContain('"hooks": {');
    (root.querySelector('[data-action="confirm"]') as HTMLButtonElement).click();
    await vi.waitFor(() => expect(root.querySelector('[data-fact="applied"]')).not.toBeNull());
    expect(api.applyHooks).toHaveBeenCalledWith('codex', 'install', planFixture().plan.digest);
    expect(root.querySelector('[data-fact="applied"]')!.textContent).toContain('/f.bak');
  });

  it('shows a refusal in plain words', async () => {
    const api = {
      planHooks: vi.fn(async () => planFixture()),
      applyHooks: vi.fn(async () => Promise.reject('hooks.json changed since the dry run')),
    };
    const view = new HooksView(root, api);
    view.update(statusFixture());
    await view.showPlan('codex', 'install');
    (root.querySelector('[data-action="confirm"]') as HTMLButtonElement).click();
    await vi.waitFor(() => expect(root.querySelector('[data-fact="refusal"]')).not.toBeNull());
    expect(root.querySelector('[data-fact="refusal"]')!.textContent).toBe('hooks.json changed since the dry run');
    expect(root.textContent).toContain('the file was not changed');
  });

  it('has no confirm button when there is nothing to do', () => {
    const view = new HooksView(root, { planHooks: vi.fn(), applyHooks: vi.fn() });
    const plan = planFixture();
    plan.plan.action = { kind: 'nothing-to-do', reason: 'already installed' };
    plan.changes = false;
    view.renderPlan(plan);
    expect(root.querySelector('[data-action="confirm"]')).toBeNull();
    expect(root.querySelector('[data-fact="nothing"]')!.textContent).toContain('already installed');
  });
});

describe('services and settings', () => {
  it('lists each service with its state', () => {
    renderServices(root, servicesFixture());
    const states = [...root.querySelectorAll('[data-col="state"] .badge')].map((b) => b.textContent);
    expect(states).toEqual(['Ready', 'Degraded', 'Down', 'Invalid']);
  });

  it('reads the form and shows a refused save', async () => {
    const api = {
      saveSettings: vi.fn(async () => Promise.reject('quiet hours need both a start and an end, or neither')),
      sendTestNotification: vi.fn(),
      offerHooksAgain: vi.fn(),
    };
    const view = new SettingsView(root, api);
    view.update(settingsFixture());
    expect(view.read()).toEqual(settingsFixture().form);
    (root.querySelector('#set-quiet-end') as HTMLInputElement).value = '';
    root.querySelector('form')!.dispatchEvent(new Event('submit', { cancelable: true }));
    await vi.waitFor(() => expect(root.querySelector('#settings-message')!.textContent).toContain('Not saved'));
    expect(api.saveSettings).toHaveBeenCalledWith({ ...settingsFixture().form, quietEnd: null });
  });

  it('says each notification rule in one line and reads muted projects as a list', () => {
    const view = new SettingsView(root, {
      saveSettings: vi.fn(),
      sendTestNotification: vi.fn(),
      offerHooksAgain: vi.fn(),
    });
    view.update(settingsFixture());
    const rules = [...root.querySelectorAll('[data-fact="rules"] li')].map((li) => li.textContent);
    expect(rules).toEqual(settingsFixture().rules);
    expect((root.querySelector('#set-muted') as HTMLInputElement).value).toBe('proj-noisy');
    (root.querySelector('#set-muted') as HTMLInputElement).value = ' web ,, api ';
    expect(view.read().mutedProjects).toEqual(['web', 'api']);
    expect((root.querySelector('#set-remotes') as HTMLInputElement).value).toBe('me@build-box, gpu-box');
    (root.querySelector('#set-remotes') as HTMLInputElement).value = ' build-box ,, docker:devc ';
    expect(view.read().remotes).toEqual(['build-box', 'docker:devc']);
  });

  it('reads the needs-you grace and the long-turn minutes (empty: never)', () => {
    const view = new SettingsView(root, {
      saveSettings: vi.fn(),
      sendTestNotification: vi.fn(),
      offerHooksAgain: vi.fn(),
    });
    view.update({ ...settingsFixture(), form: { ...settingsFixture().form, longTurnMinutes: 15 } });
    expect((root.querySelector('#set-grace') as HTMLInputElement).value).toBe('5');
    expect((root.querySelector('#set-long-turn') as HTMLInputElement).value).toBe('15');
    (root.querySelector('#set-grace') as HTMLInputElement).value = '12';
    (root.querySelector('#set-long-turn') as HTMLInputElement).value = ' ';
    expect(view.read().needsYouGraceSecs).toBe(12);
    expect(view.read().longTurnMinutes).toBeNull();
  });

  it('lists the hook setup offers turned off, each offered again by one click', async () => {
    const offerHooksAgain = vi.fn(async () => ({ ...settingsFixture(), dismissedHookOffers: ['kimi' as const] }));
    const view = new SettingsView(root, { saveSettings: vi.fn(), sendTestNotification: vi.fn(), offerHooksAgain });
    view.update(settingsFixture());
    expect((root.querySelector('#settings-offers') as HTMLElement).hidden).toBe(true);
    view.update({ ...settingsFixture(), dismissedHookOffers: ['codex', 'kimi'] }, true);
    const section = root.querySelector('#settings-offers') as HTMLElement;
    expect(section.hidden).toBe(false);
    expect([...section.querySelectorAll('li span')].map((s) => s.textContent)).toEqual(['Codex', 'Kimi Code']);
    (section.querySelector('[data-offer-again="codex"]') as HTMLButtonElement).click();
    await vi.waitFor(() => expect(root.querySelector('#offers-message')!.textContent).toContain('again'));
    expect(offerHooksAgain).toHaveBeenCalledWith('codex');
    expect([...section.querySelectorAll('li')].map((li) => (li as HTMLElement).dataset.host)).toEqual(['kimi']);
  });
});

describe('labels', () => {
  /** Every word of the page's text, for a look at what a person reads. */
  const shown = () => root.textContent;
  /** Enum words as the Rust side spells them, which a person should never read. */
  const RAW =
    /\b(not-installed|not-needed|turned-off|hooks-off|not-probed|session-start|user-prompt-submit|fabric-down|not_available)\b/;

  it('every enum word the page shows reads as a person says it', () => {
    const status = statusFixture();
    status.status.hosts[1]!.approval = {
      state: 'waiting',
      events: ['SessionStart'],
      approvedElsewhere: false,
      hooks: [],
    } as never;
    renderOverview(root, status);
    expect(root.querySelector('#fabric-h .badge')!.textContent).toBe('Running');
    expect(root.querySelector('#hooks-h .badge')!.textContent).toBe('Active');
    expect(root.querySelector('[data-session="sess-analytics-1"] [data-col="board"] .badge')!.textContent).toBe(
      'Ready',
    );
    expect(shown()).not.toMatch(RAW);

    const hooks = new HooksView(root, { planHooks: vi.fn(), applyHooks: vi.fn() });
    hooks.update(status);
    const hookStates = [...root.querySelectorAll('[data-fact="hook-state"] .badge')].map((b) => b.textContent);
    expect(hookStates).toEqual(['Installed', 'Not installed', 'Out of date']);
    expect(root.querySelector('[data-host="codex"] [data-fact="hook-state"]')!.textContent).toBe('Not installed');
    expect(root.querySelector('[data-host="codex"] [data-fact="approval"] .badge')!.textContent).toBe('Waiting');
    // The raw word stays in the markup for styles and tests, never in the text.
    expect(root.querySelector('[data-host="codex"] [data-fact="hook-state"] .badge')!.getAttribute('data-state')).toBe(
      'not-installed',
    );
    expect(shown()).not.toMatch(RAW);

    renderServices(root, servicesFixture());
    const states = [...root.querySelectorAll('[data-col="state"] .badge')].map((b) => b.textContent);
    expect(states).toEqual(['Ready', 'Degraded', 'Down', 'Invalid']);

    const log = new LogView(root);
    log.load({
      path: 'hooks.log',
      rotated: 'hooks.log.1',
      lines: [
        logLine(0, { event: 'user-prompt-submit', host: 'claude', outcome: 'refused', code: 'not_available' }),
        logLine(1, { event: 'session-start', host: 'kimi', outcome: 'ok' }),
      ],
    });
    const cells = [...root.querySelectorAll('#log tbody tr')].map((r) =>
      [...r.querySelectorAll('td')].slice(1, 5).map((td) => td.textContent),
    );
    expect(cells).toEqual([
      ['Prompt', 'Claude Code', 'sess-analytics-1', 'Refused: not available'],
      ['Session start', 'Kimi Code', 'sess-web-2', 'OK'],
    ]);
    const options = [...root.querySelectorAll('#log-event option, #log-outcome option')].map((o) => o.textContent);
    expect(options).toContain('Session start');
    expect(options).toContain('Refused');
    expect(shown()).not.toMatch(RAW);
  });
});

describe('setting another machine up', () => {
  it('applies nothing until Apply, then exactly the digest shown', async () => {
    const plan = remoteSetupFixture();
    const prepareRemote = vi.fn(async () => plan);
    const applyRemote = vi.fn(async () => ({
      remote: plan.remote,
      label: plan.label,
      host: plan.host,
      followed: true,
      settings: settingsFixture(),
    }));
    const onSettings = vi.fn();
    const view = new RemoteSetupView(
      root,
      { prepareRemote, applyRemote, planRemoteRemoval: vi.fn(), takeDownRemote: vi.fn() },
      onSettings,
    );
    await view.prepare('build-box', 'codex');
    expect(prepareRemote).toHaveBeenCalledWith('build-box', 'codex');
    expect(root.querySelector('[data-fact="remote-digest"]')!.textContent).toBe(plan.digest);
    (root.querySelector('[data-action="remote-cancel"]') as HTMLButtonElement).click();
    expect(applyRemote).not.toHaveBeenCalled();
    expect(root.querySelector('[data-action="remote-apply"]')).toBeNull();
    await view.prepare('build-box', 'claude');
    (root.querySelector('[data-action="remote-apply"]') as HTMLButtonElement).click();
    await vi.waitFor(() => expect(root.querySelector('[data-fact="remote-result"]')).not.toBeNull());
    expect(applyRemote).toHaveBeenCalledExactlyOnceWith('build-box', 'claude', plan.digest);
    expect(onSettings).toHaveBeenCalledWith(settingsFixture());
  });

  it('says a refusal in its one line, with no Apply', async () => {
    const line = 'build-box: ssh needs a password or a key it does not have: run `ssh build-box` once';
    const view = new RemoteSetupView(
      root,
      {
        prepareRemote: vi.fn(async () => Promise.reject(line)),
        applyRemote: vi.fn(),
        planRemoteRemoval: vi.fn(),
        takeDownRemote: vi.fn(),
      },
      vi.fn(),
    );
    await view.prepare('build-box', 'claude');
    expect(root.querySelector('[data-fact="remote-refusal"]')!.textContent).toBe(line);
    expect(root.querySelector('[data-action="remote-apply"]')).toBeNull();
  });

  it('takes down exactly the removal plans shown, only on Take down', async () => {
    const plan = remoteRemovalFixture();
    const takeDownRemote = vi.fn(async () => ({
      remote: plan.remote,
      label: plan.label,
      unfollowed: true,
      settings: settingsFixture(),
    }));
    const view = new RemoteSetupView(
      root,
      { prepareRemote: vi.fn(), applyRemote: vi.fn(), planRemoteRemoval: vi.fn(async () => plan), takeDownRemote },
      vi.fn(),
    );
    await view.planRemoval('build-box');
    expect(root.querySelectorAll('[data-fact="remote-removal-plan"]')).toHaveLength(2);
    (root.querySelector('[data-action="remote-cancel"]') as HTMLButtonElement).click();
    expect(takeDownRemote).not.toHaveBeenCalled();
    await view.planRemoval('build-box');
    (root.querySelector('[data-action="remote-take-down-apply"]') as HTMLButtonElement).click();
    await vi.waitFor(() => expect(root.querySelector('[data-fact="remote-result"]')).not.toBeNull());
    expect(takeDownRemote).toHaveBeenCalledExactlyOnceWith(
      'build-box',
      plan.hosts.map(({ host, digest }) => ({ host, digest })),
    );
  });
});
