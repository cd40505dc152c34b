// The shapes the Rust commands return (see src-tauri/src/commands.rs and the library's
// `fabric-session-status/1`). Kept by hand; the browser and unit tests use them as fixtures.

export type HostId = 'claude' | 'codex' | 'kimi';

export interface BoardRecord {
  unread: number;
  state: 'ready' | 'degraded' | 'unavailable';
  observedAt: string;
}

export interface SessionStatus {
  id: string;
  host: HostId;
  project: string;
  startedAt: string;
  hostPid: number;
  inTurn: boolean;
  lastTurn?: { seq: number; at: string };
  board: BoardRecord | null;
}

export interface HookSummary {
  state: 'installed' | 'not-installed' | 'stale' | 'incomplete' | 'unreadable' | string;
  commandPath?: string;
  description: string;
}

export type ApprovalState = 'not-needed' | 'approved' | 'waiting' | 'changed' | 'turned-off' | 'hooks-off' | 'unknown';

export interface HookApproval {
  event: string;
  key: string;
  hash: string;
  verdict: 'approved' | 'waiting' | 'changed' | 'turned-off';
  approvedElsewhere: boolean;
}

/** The host's own record of the person's approval of our hooks (Codex asks; the others do not). */
export interface ApprovalSummary {
  state: ApprovalState;
  events?: string[];
  approvedElsewhere?: boolean;
  cause?: 'feature-off';
  reason?: string;
  hooks: HookApproval[];
  /** What is left to do, in words; absent when the host needs no approval. */
  description?: string;
}

export interface HostVersion {
  installed: string | null;
  tested: string;
  olderThanTested: boolean;
  program?: string;
}

export interface HostStatus {
  host: HostId;
  name: string;
  fabricRegistered: boolean;
  scopes: Array<'user' | 'local' | 'project'>;
  hooks: HookSummary;
  approval?: ApprovalSummary;
  hostVersion: HostVersion;
}

export interface FabricStatus {
  state: 'running' | 'down';
  downReason?: string;
  origin?: string;
  pid?: number;
  startedAt?: string;
  features: string[];
  hubJson: string;
}

export interface Status {
  schema: string;
  fabric: FabricStatus;
  sessionHooks: 'active' | 'inert';
  hosts: HostStatus[];
  services: { dir: string; descriptors: number; local: number };
  log: { path: string; rotated: string };
  sessions: SessionStatus[];
}

export interface TurnChanges {
  filesChanged: number | null;
  linesAdded: number | null;
  linesRemoved: number | null;
}

export interface StatusView {
  status: Status;
  turnChanges: Record<string, TurnChanges>;
  hookFiles: Array<{ host: HostId; file: string }>;
  trayRunning: boolean;
}

export interface HookEntry {
  event: string;
  matcher: string | null;
  command: string;
  timeout: number | null;
}

export type Operation = 'install' | 'remove';

export interface Plan {
  host: HostId;
  operation: Operation;
  file: string;
  exists: boolean;
  sha256: string | null;
  digest: string;
  action: { kind: 'install' | 'remove' | 'nothing-to-do'; reason?: string };
  add: HookEntry[];
  remove: HookEntry[];
  add_text: string;
  remove_text: string;
  program: string | null;
  apply_command: string | null;
  warnings: string[];
  notes: string[];
}

export interface PlanView {
  plan: Plan;
  diff: string;
  changes: boolean;
}

export interface Applied {
  file: string;
  backup: string | null;
  changed: boolean;
  sha256: string;
  plan: Plan;
}

export interface LogLine {
  file: 'hooks.log' | 'hooks.log.1';
  time: string;
  event: string;
  host: string;
  session: string | null;
  outcome: 'ok' | 'refused' | 'unknown' | 'unparsed';
  code: string | null;
  detail: string;
  raw: string;
}

export interface LogSnapshot {
  path: string;
  rotated: string;
  lines: LogLine[];
}

export interface LogUpdate {
  reset: boolean;
  lines: LogLine[];
}

export type ServiceState = 'ready' | 'degraded' | 'down' | 'invalid' | 'foreign' | 'not-probed';

export interface ServiceView {
  file: string;
  id: string | null;
  instance: string | null;
  name: string | null;
  origin: string | null;
  placement: string;
  manager: string | null;
  state: ServiceState;
  detail: string;
  reported: string | null;
  version: string | null;
  degraded: string[];
}

export interface ServicesView {
  dir: string;
  services: ServiceView[];
}

export interface SettingsForm {
  watchIntervalSecs: number;
  notifications: boolean;
  quietStart: string | null;
  quietEnd: string | null;
  launchAtLogin: boolean;
}

export interface SettingsView {
  path: string;
  form: SettingsForm;
  notificationsPausedUntil: string | null;
  minIntervalSecs: number;
  autostartFile: string;
  autostartPresent: boolean;
}

export interface TestNotification {
  requested: boolean;
  trayRunning: boolean;
}

export interface StateChanged {
  kinds: Array<'status' | 'services' | 'settings'>;
}
