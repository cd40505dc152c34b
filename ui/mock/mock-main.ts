// The built UI with Tauri's IPC mocked, for the browser tests. `window.__fabricMock` holds the
// facts each command answers, records every call, and can push events as the Rust side would.

import { mockIPC, mockWindows } from '@tauri-apps/api/mocks';
import { emit } from '@tauri-apps/api/event';
import {
  logLine,
  planFixture,
  remoteRemovalFixture,
  remoteSetupFixture,
  servicesFixture,
  settingsFixture,
  statusFixture,
} from './fixtures';
import type { InvokeArgs } from '@tauri-apps/api/core';

interface MockState {
  status: ReturnType<typeof statusFixture>;
  plan: ReturnType<typeof planFixture>;
  services: ReturnType<typeof servicesFixture>;
  settings: ReturnType<typeof settingsFixture>;
  logLines: Array<ReturnType<typeof logLine>>;
  applyError: string | null;
  remotePlan: ReturnType<typeof remoteSetupFixture>;
  /** The one line "Set up…" (prepare) or "Apply" (apply) answers with, when set. */
  remotePrepareError: string | null;
  remoteApplyError: string | null;
  /** How long "Set up…" takes to answer (its progress shows meanwhile). */
  remoteDelayMs: number;
  remoteRemoval: ReturnType<typeof remoteRemovalFixture>;
  calls: Array<{ cmd: string; args: unknown }>;
  emit: (event: string, payload: unknown) => Promise<void>;
  logLine: typeof logLine;
}

const count = Number(new URLSearchParams(location.search).get('lines') ?? '40');
const state: MockState = {
  status: statusFixture(),
  plan: planFixture(),
  services: servicesFixture(),
  settings: settingsFixture(),
  logLines: Array.from({ length: count }, (_, i) => logLine(i)),
  applyError: null,
  remotePlan: remoteSetupFixture(),
  remotePrepareError: null,
  remoteApplyError: null,
  remoteDelayMs: 0,
  remoteRemoval: remoteRemovalFixture(),
  calls: [],
  emit: (event, payload) => emit(event, payload),
  logLine,
};
(window as unknown as { __fabricMock: MockState }).__fabricMock = state;

mockWindows('main');
mockIPC(
  (cmd: string, args?: InvokeArgs) => {
    if (!cmd.startsWith('plugin:')) state.calls.push({ cmd, args });
    switch (cmd) {
      case 'get_status':
        return state.status;
      case 'plan_hooks':
        return state.plan;
      case 'apply_hooks':
        if (state.applyError) throw state.applyError;
        return {
          file: state.plan.plan.file,
          backup: `${state.plan.plan.file}.bak-20261001T090000Z`,
          changed: true,
          sha256: 'ff'.repeat(32),
          plan: state.plan.plan,
        };
      case 'read_log':
        return { path: state.status.status.log.path, rotated: state.status.status.log.rotated, lines: state.logLines };
      case 'list_services':
        return state.services;
      case 'get_settings':
        return state.settings;
      case 'save_settings': {
        const form = (args as { form: MockState['settings']['form'] }).form;
        if (form.watchIntervalSecs < 10) throw 'the watch interval must be between 10 seconds and 24 hours';
        state.settings = { ...state.settings, form };
        return state.settings;
      }
      case 'offer_hooks_again': {
        const host = (args as { host: string }).host;
        state.settings = {
          ...state.settings,
          dismissedHookOffers: state.settings.dismissedHookOffers.filter((h) => h !== host),
        };
        return state.settings;
      }
      case 'prepare_remote':
        return new Promise((resolve, reject) =>
          setTimeout(
            () => (state.remotePrepareError ? reject(state.remotePrepareError) : resolve(state.remotePlan)),
            state.remoteDelayMs,
          ),
        );
      case 'apply_remote': {
        if (state.remoteApplyError) throw state.remoteApplyError;
        const { destination, host } = args as { destination: string; host: string };
        const followed = !state.settings.form.remotes.includes(destination);
        if (followed) {
          state.settings = {
            ...state.settings,
            form: { ...state.settings.form, remotes: [...state.settings.form.remotes, destination] },
          };
        }
        return { remote: destination, label: destination, host, followed, settings: state.settings };
      }
      case 'plan_remote_removal': {
        const { destination } = args as { destination: string };
        return { ...state.remoteRemoval, remote: destination, label: destination.replace(/^.*@/, '') };
      }
      case 'take_down_remote': {
        const { destination } = args as { destination: string };
        const unfollowed = state.settings.form.remotes.includes(destination);
        state.settings = {
          ...state.settings,
          form: { ...state.settings.form, remotes: state.settings.form.remotes.filter((r) => r !== destination) },
        };
        return { remote: destination, label: destination.replace(/^.*@/, ''), unfollowed, settings: state.settings };
      }
      case 'send_test_notification':
        return { requested: true, trayRunning: true };
      case 'desktop_support':
        return { trayHelp: null, jump: { state: 'works' } };
      case 'focus_session':
        return {
          outcome: 'notAllowed',
          why: 'there is no display to raise a window on',
          place: 'proj-analytics (Claude Code), tmux work:1.0',
        };
      default:
        return undefined;
    }
  },
  { shouldMockEvents: true },
);

await import('../src/main');
