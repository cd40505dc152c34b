// Every enum word the page shows, in the words a person reads ("Not installed", never
// `not-installed`): the one place of labels. Each table is keyed by the type generated from
// the Rust side (`types.ts`), so a new variant does not compile until it has its label. The
// raw word stays in the markup where a test or a style needs it (`data-state`), never in text.

import type {
  ApprovalState,
  BoardState,
  DownReason,
  FabricRunState,
  HookStateKind,
  HostId,
  LogOutcome,
  Scope,
  ServiceState,
  SessionHooks,
} from './types';

export const HOST_LABELS: Record<HostId, string> = {
  claude: 'Claude Code',
  codex: 'Codex',
  kimi: 'Kimi Code',
};

export const FABRIC_STATE_LABELS: Record<FabricRunState, string> = {
  running: 'Running',
  down: 'Not running',
};

export const DOWN_REASON_LABELS: Record<DownReason, string> = {
  'no hub.json': 'Fabric is not running: it has not written its hub.json.',
  'hub.json unreadable': 'Fabric is not running: its hub.json cannot be read.',
  'its process is gone': 'Fabric is not running: the process its hub.json names is gone.',
};

export const SESSION_HOOKS_LABELS: Record<SessionHooks, string> = {
  active: 'Active',
  inert: 'Inert',
};

export const BOARD_STATE_LABELS: Record<BoardState, string> = {
  ready: 'Ready',
  degraded: 'Degraded',
  unavailable: 'Unavailable',
};

export const HOOK_STATE_LABELS: Record<HookStateKind, string> = {
  installed: 'Installed',
  'not-installed': 'Not installed',
  stale: 'Out of date',
  incomplete: 'Incomplete',
  unreadable: 'Unreadable',
};

export const APPROVAL_LABELS: Record<ApprovalState, string> = {
  'not-needed': 'Not needed',
  approved: 'Approved',
  waiting: 'Waiting',
  changed: 'Changed',
  'turned-off': 'Turned off',
  'hooks-off': 'Hooks off',
  unknown: 'Unknown',
};

export const SCOPE_LABELS: Record<Scope, string> = {
  user: 'user',
  local: 'local',
  project: 'project',
};

export const SERVICE_STATE_LABELS: Record<ServiceState, string> = {
  ready: 'Ready',
  degraded: 'Degraded',
  down: 'Down',
  invalid: 'Invalid',
  foreign: 'Another service answers',
  'not-probed': 'Not probed',
};

export const LOG_OUTCOME_LABELS: Record<LogOutcome, string> = {
  ok: 'OK',
  refused: 'Refused',
  unknown: 'Unknown',
  unparsed: 'Unparsed',
};

/** The hook log's events: its lines name them in the log's own words. */
const LOG_EVENT_LABELS: Record<string, string> = {
  'session-start': 'Session start',
  'user-prompt-submit': 'Prompt',
  stop: 'Stop',
  'session-end': 'Session end',
  worker: 'Worker',
  'observe-turn': 'Turn sent',
  'observe-end': 'End sent',
  release: 'Release',
  status: 'Board read',
  'watch-mail': 'Watch mail',
};

/** A word of the log's own (`not_available`, `files-skipped`) as words: "Not available". */
export function wordsOf(word: string): string {
  const spaced = word.replace(/[-_]+/g, ' ').trim();
  return spaced ? spaced.charAt(0).toUpperCase() + spaced.slice(1) : word;
}

/** A log line's event: known ones by name; the log may grow others, shown as words. */
export function logEventLabel(event: string): string {
  return Object.hasOwn(LOG_EVENT_LABELS, event) ? LOG_EVENT_LABELS[event]! : wordsOf(event);
}

/** A log line's host (`claude`, or `-` when none). */
export function logHostLabel(host: string): string {
  return Object.hasOwn(HOST_LABELS, host) ? HOST_LABELS[host as HostId] : host === '-' ? '—' : host;
}

/** A log line's outcome, with its refusal code for a refusal ("Refused: not available"). */
export function logOutcomeLabel(outcome: LogOutcome, code: string | null): string {
  const label = LOG_OUTCOME_LABELS[outcome];
  return outcome === 'refused' && code ? `${label}: ${wordsOf(code).toLowerCase()}` : label;
}
