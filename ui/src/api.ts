// The only module that talks to the Rust side: typed wrappers over `invoke` and `listen`.

import { invoke } from '@tauri-apps/api/core';
import { listen, type UnlistenFn } from '@tauri-apps/api/event';
import type {
  Applied,
  DesktopView,
  FocusView,
  JumpView,
  HostId,
  LogSnapshot,
  LogUpdate,
  OpenRequest,
  Operation,
  PlanView,
  RemoteRemovalPlan,
  RemoteSetupDone,
  RemoteSetupPlan,
  RemoteTakenDown,
  ServicesView,
  SettingsForm,
  ShownDigest,
  SettingsView,
  StateChanged,
  StatusView,
  TestNotification,
} from './types';

export const api = {
  getStatus: (): Promise<StatusView> => invoke('get_status'),
  planHooks: (host: HostId, operation: Operation): Promise<PlanView> => invoke('plan_hooks', { host, operation }),
  applyHooks: (host: HostId, operation: Operation, expectedSha256: string): Promise<Applied> =>
    invoke('apply_hooks', { host, operation, expectedSha256 }),
  readLog: (): Promise<LogSnapshot> => invoke('read_log'),
  listServices: (): Promise<ServicesView> => invoke('list_services'),
  getSettings: (): Promise<SettingsView> => invoke('get_settings'),
  saveSettings: (form: SettingsForm): Promise<SettingsView> => invoke('save_settings', { form }),
  offerHooksAgain: (host: HostId): Promise<SettingsView> => invoke('offer_hooks_again', { host }),
  sendTestNotification: (): Promise<TestNotification> => invoke('send_test_notification'),
  /** "Set up…": checks the remote's system, copies our program there, reads its hook plan. */
  prepareRemote: (destination: string, host: HostId): Promise<RemoteSetupPlan> =>
    invoke('prepare_remote', { destination, host }),
  /** "Apply" in the consent panel: exactly the plan whose digest was shown; then followed. */
  applyRemote: (destination: string, host: HostId, digest: string): Promise<RemoteSetupDone> =>
    invoke('apply_remote', { destination, host, digest }),
  /** "Take down…": each host's removal plan there (writes nothing). */
  planRemoteRemoval: (destination: string): Promise<RemoteRemovalPlan> =>
    invoke('plan_remote_removal', { destination }),
  /** "Take down" in the consent panel: exactly the removal plans shown, then the program and the following. */
  takeDownRemote: (destination: string, shown: ShownDigest[]): Promise<RemoteTakenDown> =>
    invoke('take_down_remote', { destination, shown }),
  focusSession: (session: string): Promise<FocusView> => invoke('focus_session', { session }),
  /** What this desktop lacks for the tray icon and the jump. */
  desktopSupport: (): Promise<DesktopView | null> => invoke('desktop_support'),
  /** Turns our GNOME Shell extension on: only on the person's click. */
  enableJumpExtension: (): Promise<JumpView> => invoke('enable_jump_extension'),
  onStateChanged: (handler: (e: StateChanged) => void): Promise<UnlistenFn> =>
    listen<StateChanged>('state-changed', (event) => handler(event.payload)),
  onLogAppended: (handler: (e: LogUpdate) => void): Promise<UnlistenFn> =>
    listen<LogUpdate>('log-appended', (event) => handler(event.payload)),
  /** What the command line asked to show at start (`--view hooks --host <host>`), once. */
  takeOpenRequest: async (): Promise<OpenRequest | null> =>
    (await invoke<OpenRequest | null>('take_open_request')) ?? null,
  /** A second start's `--view hooks --host <host>`, handed over. */
  onOpenRequest: (handler: (e: OpenRequest) => void): Promise<UnlistenFn> =>
    listen<OpenRequest>('open-request', (event) => handler(event.payload)),
};

export type Api = typeof api;

/** An error from a command, in plain words. */
export function errorText(error: unknown): string {
  if (typeof error === 'string') return error;
  if (error instanceof Error) return error.message;
  return String(error);
}
