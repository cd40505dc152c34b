// The page keeps what the person is doing when the Rust side pushes an event: the views are
// patched in place, so focus, typed text, a text selection and scroll positions survive, while
// the content they show does change.

import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { clearMocks, mockIPC, mockWindows } from '@tauri-apps/api/mocks';
import { emit } from '@tauri-apps/api/event';
import { logLine, planFixture, servicesFixture, settingsFixture, statusFixture } from '../../mock/fixtures';
import { api } from '../../src/api';
import { startApp, type App } from '../../src/app';
import type { LogLine } from '../../src/types';

let facts: {
  status: ReturnType<typeof statusFixture>;
  settings: ReturnType<typeof settingsFixture>;
  services: ReturnType<typeof servicesFixture>;
  lines: LogLine[];
};
let app: App;

beforeEach(async () => {
  facts = {
    status: statusFixture(),
    settings: settingsFixture(),
    services: servicesFixture(),
    lines: Array.from({ length: 30 }, (_, i) => logLine(i)),
  };
  mockWindows('main');
  mockIPC(
    (cmd) => {
      if (cmd === 'get_status') return structuredClone(facts.status);
      if (cmd === 'read_log') return { path: 'hooks.log', rotated: 'hooks.log.1', lines: facts.lines };
      if (cmd === 'list_services') return structuredClone(facts.services);
      if (cmd === 'get_settings') return structuredClone(facts.settings);
      if (cmd === 'plan_hooks') return planFixture();
      return undefined;
    },
    { shouldMockEvents: true },
  );
  document.body.innerHTML = '<div id="app"></div>';
  app = startApp(document.getElementById('app')!, api);
  await app.ready;
});

afterEach(() => {
  document.getSelection()?.removeAllRanges();
  clearMocks();
});

const $ = (css: string) => document.querySelector<HTMLElement>(css)!;
const rows = () => [...document.querySelectorAll<HTMLTableRowElement>('#log tbody tr')];

/** Gives the Log scroller a box jsdom does not lay out: 20 px a row, 100 px tall. */
function layOutScroller(): HTMLElement {
  const scroller = $('#log-scroller');
  Object.defineProperty(scroller, 'clientHeight', { configurable: true, get: () => 100 });
  Object.defineProperty(scroller, 'scrollHeight', { configurable: true, get: () => rows().length * 20 });
  return scroller;
}

function scrollTo(scroller: HTMLElement, top: number): void {
  scroller.scrollTop = top;
  scroller.dispatchEvent(new Event('scroll'));
}

describe('a status event', () => {
  it('keeps focus on the Install button the person is on, and updates its card', async () => {
    app.show('hooks');
    const install = $('[data-host="codex"] [data-action="install"]') as HTMLButtonElement;
    const remove = $('[data-host="codex"] [data-action="remove"]') as HTMLButtonElement;
    install.focus();
    expect(install.textContent).toBe('Install…');
    expect(remove.disabled).toBe(true);

    facts.status.status.hosts[1]!.hooks = {
      state: 'installed',
      commandPath: '/opt/fabric-session',
      description: 'installed',
    };
    await emit('state-changed', { kinds: ['status'] });
    await vi.waitFor(() => expect(install.textContent).toBe('Reinstall…'));

    expect(document.activeElement).toBe(install);
    expect(install.isConnected).toBe(true);
    expect($('[data-host="codex"] [data-action="install"]')).toBe(install);
    expect(remove.disabled).toBe(false);
    expect($('[data-host="codex"] [data-fact="hook-state"]').textContent).toBe('Installed');
  });

  it('leaves an open plan open, with focus on its confirm button, while the cards update', async () => {
    app.show('hooks');
    ($('[data-host="codex"] [data-action="install"]') as HTMLButtonElement).click();
    await vi.waitFor(() => expect(document.querySelector('[data-fact="diff"]')).not.toBeNull());
    const confirm = $('[data-action="confirm"]') as HTMLButtonElement;
    confirm.focus();

    facts.status.status.hosts[2]!.hooks = { state: 'installed', description: 'installed' };
    await emit('state-changed', { kinds: ['status'] });
    await vi.waitFor(() => expect($('[data-host="kimi"] [data-fact="hook-state"]').textContent).toBe('Installed'));

    expect($('#plan').hidden).toBe(false);
    expect($('[data-fact="plan-digest"]').textContent).toContain('aa11bb22');
    expect(document.activeElement).toBe(confirm);
  });

  it('keeps a text selection in the Overview while the unread count changes', async () => {
    const project = $('[data-session="sess-analytics-1"] [data-col="project"]').firstChild!;
    document.getSelection()!.setBaseAndExtent(project, 0, project, 4);
    const row = $('[data-session="sess-analytics-1"]');

    facts.status.status.sessions[0]!.board!.unread = 7;
    facts.status.status.sessions.push({ ...facts.status.status.sessions[1]!, id: 'sess-new-3', project: 'new-proj' });
    await emit('state-changed', { kinds: ['status'] });
    await vi.waitFor(() =>
      expect($('[data-session="sess-analytics-1"] [data-col="unread"]').textContent).toBe('7 unread'),
    );

    expect($('[data-session="sess-new-3"] [data-col="project"]').textContent).toBe('new-proj');
    expect($('[data-fact="summary"]').textContent).toContain('3 live sessions, 7 unread');
    expect($('[data-session="sess-analytics-1"]')).toBe(row);
    const selection = document.getSelection()!;
    expect(selection.anchorNode).toBe(project);
    expect(selection.toString()).toBe('proj');
  });

  it('keeps what the person typed into Settings and where they are in it', async () => {
    app.show('settings');
    const interval = $('#set-interval') as HTMLInputElement;
    interval.focus();
    interval.value = '12';
    interval.dispatchEvent(new Event('input', { bubbles: true }));

    facts.settings = {
      ...facts.settings,
      path: '/elsewhere/settings.json',
      form: { ...facts.settings.form, watchIntervalSecs: 300 },
    };
    await emit('state-changed', { kinds: ['settings'] });
    await new Promise((r) => setTimeout(r, 50));

    expect(interval.value).toBe('12');
    expect(document.activeElement).toBe(interval);
  });
});

describe('a log-appended event', () => {
  it('keeps the search box focused with its text and selection, and shows the new match', async () => {
    app.show('log');
    const search = $('#log-search') as HTMLInputElement;
    search.focus();
    search.value = 'n=1';
    search.dispatchEvent(new Event('input'));
    search.setSelectionRange(1, 3);
    await vi.waitFor(() => expect(rows()).toHaveLength(11)); // n=1, n=10 … n=19
    const firstRow = rows()[0];

    await emit('log-appended', {
      reset: false,
      lines: [logLine(100, { detail: 'n=100' }), logLine(200, { detail: 'n=200' })],
    });
    await vi.waitFor(() => expect(rows()).toHaveLength(12));

    expect(rows().at(-1)!.textContent).toContain('n=100');
    expect(rows()[0]).toBe(firstRow);
    expect(document.activeElement).toBe(search);
    expect(search.value).toBe('n=1');
    expect([search.selectionStart, search.selectionEnd]).toEqual([1, 3]);
  });

  it('keeps the chosen session in a focused filter while a new session appears in it', async () => {
    app.show('log');
    const sessions = $('#log-session') as HTMLSelectElement;
    sessions.focus();
    sessions.value = 'sess-web-2';
    sessions.dispatchEvent(new Event('change'));
    const chosen = sessions.selectedOptions[0];

    await emit('log-appended', { reset: false, lines: [logLine(31, { session: 'sess-aaa-0' })] });
    await vi.waitFor(() => expect([...sessions.options].map((o) => o.value)).toContain('sess-aaa-0'));

    expect(sessions.value).toBe('sess-web-2');
    expect(sessions.selectedOptions[0]).toBe(chosen);
    expect(document.activeElement).toBe(sessions);
  });

  it('leaves the person where they scrolled to, and follows the tail when they are at the bottom', async () => {
    app.show('log');
    const scroller = layOutScroller();
    scrollTo(scroller, 120);
    await emit('log-appended', { reset: false, lines: [logLine(40)] });
    await vi.waitFor(() => expect(rows()).toHaveLength(31));
    expect(scroller.scrollTop).toBe(120);

    scrollTo(scroller, scroller.scrollHeight - scroller.clientHeight);
    await emit('log-appended', { reset: false, lines: [logLine(41), logLine(42)] });
    await vi.waitFor(() => expect(rows()).toHaveLength(33));
    expect(scroller.scrollTop).toBeGreaterThanOrEqual(33 * 20 - 100); // jsdom does not clamp
    expect(rows().at(-1)!.textContent).toContain('n=42');
  });

  it('does not follow when "Follow new lines" is off, even at the bottom', async () => {
    app.show('log');
    const scroller = layOutScroller();
    ($('#log-follow') as HTMLInputElement).click();
    scrollTo(scroller, scroller.scrollHeight - scroller.clientHeight);
    await emit('log-appended', { reset: false, lines: [logLine(40)] });
    await vi.waitFor(() => expect(rows()).toHaveLength(31));
    expect(scroller.scrollTop).toBe(30 * 20 - 100);
  });
});
