import { afterEach, describe, expect, it, vi } from 'vitest';
import { clearMocks, mockIPC, mockWindows } from '@tauri-apps/api/mocks';
import { emit } from '@tauri-apps/api/event';
import { logLine, planFixture, servicesFixture, settingsFixture, statusFixture } from '../../mock/fixtures';
import { api } from '../../src/api';
import { startApp } from '../../src/app';

afterEach(() => clearMocks());

describe('app shell over mocked IPC', () => {
  it('loads every view and follows events', async () => {
    const calls: string[] = [];
    let status = statusFixture();
    mockWindows('main');
    mockIPC(
      (cmd) => {
        calls.push(cmd);
        if (cmd === 'get_status') return status;
        if (cmd === 'read_log') return { path: 'hooks.log', rotated: 'hooks.log.1', lines: [logLine(1)] };
        if (cmd === 'list_services') return servicesFixture();
        if (cmd === 'get_settings') return settingsFixture();
        return undefined;
      },
      { shouldMockEvents: true },
    );
    document.body.innerHTML = '<div id="app"></div>';
    const app = startApp(document.getElementById('app')!, api);
    await app.ready;
    expect(document.querySelector('#view-overview [data-col="unread"]')!.textContent).toBe('2 unread');
    expect(document.querySelectorAll('#log tbody tr')).toHaveLength(1);

    await emit('log-appended', { reset: false, lines: [logLine(2, { event: 'session-end' })] });
    await new Promise((r) => setTimeout(r, 50));
    expect(document.querySelectorAll('#log tbody tr')).toHaveLength(2);

    status = statusFixture();
    status.status.sessions[0]!.board!.unread = 7;
    await emit('state-changed', { kinds: ['status'] });
    await new Promise((r) => setTimeout(r, 50));
    expect(document.querySelector('#view-overview [data-col="unread"]')!.textContent).toBe('7 unread');
    expect(calls.filter((c) => c === 'get_status')).toHaveLength(2);
  });

  it("opens the Hooks view with a host's plan when asked at start or by a second start", async () => {
    const calls: Array<{ cmd: string; args: unknown }> = [];
    let request: unknown = { view: 'hooks', host: 'codex' };
    mockWindows('main');
    mockIPC(
      (cmd, args) => {
        calls.push({ cmd, args });
        if (cmd === 'get_status') return statusFixture();
        if (cmd === 'read_log') return { path: 'a', rotated: 'b', lines: [] };
        if (cmd === 'list_services') return servicesFixture();
        if (cmd === 'get_settings') return settingsFixture();
        if (cmd === 'plan_hooks') return planFixture();
        if (cmd === 'take_open_request') {
          const taken = request;
          request = null;
          return taken;
        }
        return undefined;
      },
      { shouldMockEvents: true },
    );
    document.body.innerHTML = '<div id="app"></div>';
    const app = startApp(document.getElementById('app')!, api);
    await app.ready;
    expect(document.getElementById('tab-hooks')!.getAttribute('aria-selected')).toBe('true');
    expect(calls.filter((c) => c.cmd === 'plan_hooks').map((c) => c.args)).toEqual([
      { host: 'codex', operation: 'install' },
    ]);
    expect(calls.some((c) => c.cmd === 'apply_hooks')).toBe(false);
    expect(document.querySelector('[data-action="confirm"]')).not.toBeNull();

    document.getElementById('tab-overview')!.click();
    await emit('open-request', { view: 'hooks', host: 'kimi' });
    await vi.waitFor(() => expect(calls.filter((c) => c.cmd === 'plan_hooks')).toHaveLength(2));
    expect(document.getElementById('tab-hooks')!.getAttribute('aria-selected')).toBe('true');
    expect(calls.filter((c) => c.cmd === 'plan_hooks')[1]!.args).toEqual({ host: 'kimi', operation: 'install' });
    expect(calls.some((c) => c.cmd === 'apply_hooks')).toBe(false);
  });

  it('never draws an older status answer over a newer one', async () => {
    // The first read after the start answers at once; then two events start two reads, and
    // the older one answers last.
    const answers: Array<(value: unknown) => void> = [];
    let reads = 0;
    mockWindows('main');
    mockIPC(
      (cmd) => {
        if (cmd === 'get_status') {
          reads += 1;
          if (reads === 1) return statusFixture();
          return new Promise((resolve) => answers.push(resolve));
        }
        if (cmd === 'read_log') return { path: 'a', rotated: 'b', lines: [] };
        if (cmd === 'list_services') return servicesFixture();
        if (cmd === 'get_settings') return settingsFixture();
        return undefined;
      },
      { shouldMockEvents: true },
    );
    document.body.innerHTML = '<div id="app"></div>';
    const app = startApp(document.getElementById('app')!, api);
    await app.ready;
    await emit('state-changed', { kinds: ['status'] });
    await emit('state-changed', { kinds: ['status'] });
    await vi.waitFor(() => expect(answers).toHaveLength(2));
    const withUnread = (unread: number) => {
      const view = statusFixture();
      view.status.sessions[0]!.board!.unread = unread;
      return view;
    };
    answers[1]!(withUnread(9));
    await new Promise((r) => setTimeout(r, 50));
    expect(document.querySelector('#view-overview [data-col="unread"]')!.textContent).toBe('9 unread');
    answers[0]!(withUnread(4));
    await new Promise((r) => setTimeout(r, 50));
    expect(document.querySelector('#view-overview [data-col="unread"]')!.textContent).toBe('9 unread');
  });

  it('moves between tabs with the arrow keys', async () => {
    mockWindows('main');
    mockIPC(
      (cmd) =>
        ({
          get_status: statusFixture(),
          read_log: { path: 'a', rotated: 'b', lines: [] },
          list_services: servicesFixture(),
          get_settings: settingsFixture(),
        })[cmd],
      { shouldMockEvents: true },
    );
    document.body.innerHTML = '<div id="app"></div>';
    const app = startApp(document.getElementById('app')!, api);
    await app.ready;
    const tab = document.getElementById('tab-overview')!;
    tab.dispatchEvent(new KeyboardEvent('keydown', { key: 'ArrowRight', bubbles: true }));
    expect(document.getElementById('tab-hooks')!.getAttribute('aria-selected')).toBe('true');
    expect(document.getElementById('view-hooks')!.hidden).toBe(false);
    expect(document.activeElement).toBe(document.getElementById('tab-hooks'));
  });
});
