// Overview: Fabric's state, whether the session hooks are active, and the live sessions.
// Rendering patches the view in place (`patchChildren`), so a status event keeps the person's
// selection and scroll; each session row is keyed by its id. A row's "Go to" raises the
// window the session runs in (the same code as the tray and `fabric-session focus`); what it
// did, or where the session is when it could not, is said in the line under the table.

import { badge, h, patchChildren, setText, when } from '../dom';
import {
  BOARD_STATE_LABELS,
  DOWN_REASON_LABELS,
  FABRIC_STATE_LABELS,
  HOST_LABELS,
  SESSION_HOOKS_LABELS,
} from '../labels';
import type { FocusView, HostId, SessionStatus, StatusView, TurnChanges } from '../types';

/** The line saying what the last "Go to" did; kept across re-renders. */
let focusNote = '';

/** One line for a jump's outcome. */
export function focusText(result: FocusView): string {
  switch (result.outcome) {
    case 'raised':
      return `Raised ${result.what}.`;
    case 'gone':
      return 'That session has ended: its process is gone.';
    case 'unknown':
      return 'That session is no longer listed.';
    case 'notAllowed':
      return `Cannot go there: ${result.why}. The session is ${result.place}.`;
  }
}

/** Wires the rows' "Go to" buttons once (delegated: rows are patched in place). */
export function wireOverview(root: HTMLElement, focus: (session: string) => Promise<FocusView>): void {
  root.addEventListener('click', (event) => {
    const button = (event.target as HTMLElement).closest('button[data-action="focus"]');
    const session = button?.closest('[data-session]')?.getAttribute('data-session');
    if (!session) return;
    void focus(session).then(
      (result) => showFocusNote(root, focusText(result)),
      (error: unknown) => showFocusNote(root, `Cannot go to the session: ${String(error)}`),
    );
  });
}

function showFocusNote(root: HTMLElement, text: string): void {
  focusNote = text;
  const note = root.querySelector('[data-fact="focus-note"]');
  if (note) setText(note, text);
}

export function hostName(host: HostId): string {
  return HOST_LABELS[host];
}

function fabricCard(view: StatusView): HTMLElement {
  const f = view.status.fabric;
  if (f.state === 'running') {
    return h(
      'section',
      { class: 'card', 'aria-labelledby': 'fabric-h' },
      h('h2', { id: 'fabric-h' }, 'Fabric ', badge(FABRIC_STATE_LABELS.running, 'good', 'running')),
      h(
        'dl',
        {},
        h('dt', {}, 'Origin'),
        h('dd', { 'data-fact': 'origin' }, f.origin ?? '—'),
        h('dt', {}, 'Started'),
        h('dd', { 'data-fact': 'started' }, when(f.startedAt)),
        h('dt', {}, 'Process'),
        h('dd', {}, f.pid !== undefined ? String(f.pid) : '—'),
      ),
    );
  }
  return h(
    'section',
    { class: 'card', 'aria-labelledby': 'fabric-h' },
    h('h2', { id: 'fabric-h' }, 'Fabric ', badge(FABRIC_STATE_LABELS.down, 'bad', 'down')),
    h('p', { 'data-fact': 'down-reason' }, f.downReason ? DOWN_REASON_LABELS[f.downReason] : 'Fabric is not running.'),
    h('p', { class: 'hint' }, 'Start the Fabric app. The hooks stay quiet until it runs; nothing is lost.'),
  );
}

function hooksCard(view: StatusView): HTMLElement {
  const s = view.status;
  const active = s.sessionHooks === 'active';
  let why: string;
  if (active) why = 'Fabric offers session-hooks/1: turns, unread counts and releases are reported.';
  else if (s.fabric.state === 'down') why = 'Inert because Fabric is down.';
  else why = 'Inert because this Fabric does not offer session-hooks/1 yet; only session start runs.';
  const installed = s.hosts.filter((host) => host.hooks.state === 'installed').map((host) => host.name);
  return h(
    'section',
    { class: 'card', 'aria-labelledby': 'hooks-h' },
    h(
      'h2',
      { id: 'hooks-h' },
      'Session hooks ',
      badge(SESSION_HOOKS_LABELS[s.sessionHooks], active ? 'good' : 'warn', s.sessionHooks),
    ),
    h('p', { 'data-fact': 'hooks-why' }, why),
    h(
      'p',
      {},
      installed.length ? `Installed for ${installed.join(', ')}.` : 'Not installed for any host yet: see Hooks.',
    ),
  );
}

function changesText(changes: TurnChanges | undefined): string {
  const filesChanged = changes?.filesChanged ?? null;
  if (!changes || filesChanged === null) return '';
  const files = `${filesChanged} file${filesChanged === 1 ? '' : 's'}`;
  return `${files}, +${changes.linesAdded ?? 0} −${changes.linesRemoved ?? 0}`;
}

function boardCell(session: SessionStatus): HTMLElement {
  const b = session.board;
  if (!b) return h('td', { 'data-col': 'board' }, h('span', { class: 'muted' }, 'unknown'));
  const tone = b.state === 'ready' ? 'good' : b.state === 'degraded' ? 'warn' : 'bad';
  return h(
    'td',
    { 'data-col': 'board' },
    badge(BOARD_STATE_LABELS[b.state], tone, b.state),
    ' ',
    h('strong', { 'data-col': 'unread', class: b.unread > 0 ? 'unread' : '' }, `${b.unread} unread`),
  );
}

function shortId(id: string): string {
  return id.length > 12 ? `${id.slice(0, 8)}…` : id;
}

function sessionRow(session: SessionStatus, changes: TurnChanges | undefined): HTMLElement {
  const turn = session.lastTurn;
  return h(
    'tr',
    { key: `session:${session.id}`, 'data-session': session.id },
    h(
      'th',
      { scope: 'row' },
      h('span', { 'data-col': 'project' }, session.project || '—'),
      h('div', { class: 'muted small mono', title: session.id }, shortId(session.id)),
    ),
    h('td', { 'data-col': 'host' }, hostName(session.host)),
    h('td', { 'data-col': 'started' }, when(session.startedAt)),
    h(
      'td',
      { 'data-col': 'last-turn' },
      turn ? `${when(turn.at)} (#${turn.seq})` : h('span', { class: 'muted' }, 'no turn yet'),
      turn && changesText(changes) ? h('div', { class: 'muted small' }, changesText(changes)) : null,
    ),
    boardCell(session),
    h('td', { 'data-col': 'activity' }, session.inTurn ? badge('In a turn', 'warn') : badge('Idle', 'neutral')),
    h(
      'td',
      { 'data-col': 'go' },
      h(
        'button',
        {
          type: 'button',
          'data-action': 'focus',
          'aria-label': `Go to the window of ${session.project || 'this session'}`,
          title: 'Raise the window (and tmux pane) this session runs in',
        },
        'Go to',
      ),
    ),
  );
}

function sessionsTable(view: StatusView): HTMLElement {
  const sessions = view.status.sessions;
  const body =
    sessions.length === 0
      ? [
          h(
            'tr',
            {},
            h(
              'td',
              { colspan: 7, class: 'muted' },
              'No live sessions. They appear here when a host starts one with the hooks installed.',
            ),
          ),
        ]
      : sessions.map((s) => sessionRow(s, view.turnChanges[s.id]));
  return h(
    'section',
    { class: 'card wide', 'aria-labelledby': 'sessions-h' },
    h('h2', { id: 'sessions-h' }, `Live sessions (${sessions.length})`),
    h(
      'table',
      { id: 'sessions' },
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          ...['Project', 'Host', 'Started', 'Last turn', 'Board', 'State', ''].map((t) => h('th', { scope: 'col' }, t)),
        ),
      ),
      h('tbody', {}, ...body),
    ),
    h('p', { class: 'muted small', role: 'status', 'data-fact': 'focus-note' }, focusNote),
  );
}

export function renderOverview(root: HTMLElement, view: StatusView): void {
  const totalUnread = view.status.sessions.reduce((n, s) => n + (s.board?.unread ?? 0), 0);
  patchChildren(root, [
    h('h1', {}, 'Overview'),
    h(
      'p',
      { class: 'summary', 'data-fact': 'summary' },
      `${view.status.sessions.length} live session${view.status.sessions.length === 1 ? '' : 's'}, ${totalUnread} unread`,
      view.trayRunning ? '' : ' · the tray is not running',
    ),
    h('div', { class: 'grid' }, fabricCard(view), hooksCard(view)),
    sessionsTable(view),
  ]);
}
