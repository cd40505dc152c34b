// Overview: Fabric's state, whether the session hooks are active, the live sessions with
// each one's state and since when (those that need you first), and what this desktop lacks
// for the tray icon (GNOME without its AppIndicator extension) or for "Go to" (GNOME Shell
// without our extension on: a button turns it on, at the person's click; out of date for this
// shell, or failed to load with the shell's own error).
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
  SESSION_STATE_LABELS,
  WAIT_REASON_LABELS,
} from '../labels';
import type {
  DesktopView,
  FocusView,
  HostId,
  RemoteSessionView,
  RemoteView,
  SessionStatus,
  StatusView,
  TurnChanges,
} from '../types';

/** The line saying what the last "Go to" did; kept across re-renders. */
let focusNote = '';

/** What this desktop lacks (the Rust side's answer); kept across re-renders. */
let desktop: DesktopView | null = null;

/** Takes the desktop's answer (drawn at the next render). */
export function setDesktop(view: DesktopView | null | undefined): void {
  desktop = view ?? null;
}

/** The notice of what this desktop lacks; `null` when it lacks nothing. */
export function desktopCard(view: DesktopView | null): HTMLElement | null {
  if (!view) return null;
  const lines: HTMLElement[] = [];
  if (view.trayHelp) lines.push(h('p', { 'data-fact': 'tray-help' }, view.trayHelp));
  const jump = view.jump;
  switch (jump.state) {
    case 'works':
      break;
    case 'gnomeExtensionOff':
      lines.push(
        h('p', { 'data-fact': 'jump-help' }, `Go to cannot raise windows yet: ${jump.why}.`),
        h(
          'p',
          {},
          h('button', { type: 'button', 'data-action': 'enable-jump' }, 'Turn on the GNOME Shell extension'),
          ' ',
          h(
            'span',
            { class: 'hint' },
            `or run ${jump.command}. It only brings a session's window to the front when you ask for it.`,
          ),
        ),
      );
      break;
    case 'gnomeExtensionFailed':
      lines.push(
        h('p', { 'data-fact': 'jump-help' }, `Go to cannot raise windows here: ${jump.why}.`),
        h('p', { 'data-fact': 'jump-error' }, `GNOME Shell said: ${jump.error}`),
      );
      break;
    case 'gnomeExtensionOutOfDate':
    case 'gnomeExtensionMissing':
    case 'notPossible':
      lines.push(
        h(
          'p',
          { 'data-fact': 'jump-help' },
          `Go to cannot raise windows here: ${jump.why}. It says where each session is instead.`,
        ),
      );
      break;
  }
  if (lines.length === 0) return null;
  return h(
    'section',
    { class: 'card wide', key: 'desktop', 'aria-labelledby': 'desktop-h' },
    h('h2', { id: 'desktop-h' }, 'This desktop'),
    ...lines,
  );
}

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

/** Wires the rows' "Go to" buttons and the desktop notice's button once (delegated: the
 * view is patched in place). */
export function wireOverview(
  root: HTMLElement,
  focus: (session: string) => Promise<FocusView>,
  enableJump: () => Promise<void> = () => Promise.resolve(),
): void {
  root.addEventListener('click', (event) => {
    if ((event.target as HTMLElement).closest('button[data-action="enable-jump"]')) {
      void enableJump();
      return;
    }
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

/** How long ago `iso` was, in the largest whole unit (as the tray and `status` say it). */
export function waited(iso: string | undefined, now: Date = new Date()): string {
  if (!iso) return '';
  const at = new Date(iso).getTime();
  if (Number.isNaN(at)) return '';
  const secs = Math.max(0, Math.floor((now.getTime() - at) / 1000));
  if (secs < 60) return `${secs} s`;
  if (secs < 3600) return `${Math.floor(secs / 60)} min`;
  if (secs < 86400) return `${Math.floor(secs / 3600)} h`;
  return `${Math.floor(secs / 86400)} d`;
}

const STATE_TONES: Record<SessionStatus['state'], 'good' | 'warn' | 'bad' | 'neutral'> = {
  idle: 'neutral',
  working: 'good',
  'needs-you': 'warn',
  finished: 'neutral',
  failed: 'bad',
};

/** The session's state and since when: `needs you` (why, the tool, how long), `working`, … */
function stateCell(session: SessionStatus): HTMLElement {
  const word = SESSION_STATE_LABELS[session.state];
  const tone = STATE_TONES[session.state];
  const detail: string[] = [];
  if (session.state === 'needs-you') {
    detail.push(WAIT_REASON_LABELS[session.reason ?? 'permission']);
    if (session.tool) detail.push(session.tool);
    if (session.subagent) detail.push('a subagent asks');
  }
  if (session.state === 'finished' && session.interrupted) detail.push('interrupted');
  const since = session.stateSince;
  return h(
    'td',
    { 'data-col': 'state', 'data-state': session.state },
    badge(word, tone),
    detail.length > 0 ? h('span', { 'data-col': 'why' }, ` ${detail.join(' · ')}`) : null,
    since
      ? h(
          'div',
          { class: 'muted small', 'data-col': 'since', title: since },
          `since ${when(since)}${session.state === 'needs-you' ? ` (${waited(since)})` : ''}`,
        )
      : null,
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
    stateCell(session),
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

/** Sessions that need you first (the longest waiting first), then the rest as listed. */
export function needsYouFirst(sessions: SessionStatus[]): SessionStatus[] {
  const waiting = sessions
    .filter((s) => s.state === 'needs-you')
    .sort((a, b) => (a.stateSince ?? '').localeCompare(b.stateSince ?? ''));
  return [...waiting, ...sessions.filter((s) => s.state !== 'needs-you')];
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
      : needsYouFirst(sessions).map((s) => sessionRow(s, view.turnChanges[s.id]));
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

/** A remote's link in words: `connected`, `connecting…`, `unreachable since 10:42: why`. */
export function linkText(remote: RemoteView): string {
  const link = remote.link;
  switch (link.state) {
    case 'connecting':
      return 'connecting…';
    case 'up':
      return `connected since ${when(link.since)}`;
    case 'down':
      return `since ${when(link.since)}: ${link.why}`;
  }
}

function remoteSessionRow(remote: RemoteView, session: RemoteSessionView): HTMLElement {
  const detail =
    session.state === 'needs-you'
      ? ` ${WAIT_REASON_LABELS[session.reason ?? 'permission']} (${waited(session.stateSince)})`
      : '';
  return h(
    'tr',
    { key: `session:${session.id}`, 'data-session': session.id },
    h('th', { scope: 'row' }, h('span', { 'data-col': 'project' }, session.project || '—')),
    h('td', { 'data-col': 'host' }, hostName(session.host)),
    h(
      'td',
      { 'data-col': 'unread' },
      session.unread === null ? h('span', { class: 'muted' }, 'unknown') : `${session.unread} unread`,
    ),
    h(
      'td',
      { 'data-col': 'state', 'data-state': session.state },
      badge(SESSION_STATE_LABELS[session.state], STATE_TONES[session.state]),
      detail ? h('span', { 'data-col': 'why' }, detail) : null,
      session.tmuxPane ? h('div', { class: 'muted small' }, `tmux ${session.tmuxPane} there`) : null,
    ),
    h(
      'td',
      { 'data-col': 'go' },
      h(
        'button',
        {
          type: 'button',
          'data-action': 'focus',
          'aria-label': `Go to ${session.project || 'this session'} on ${remote.label}`,
          title: 'Select its tmux pane there and raise the terminal here that is connected to it',
        },
        'Go to',
      ),
    ),
  );
}

/** The other machines the tray follows: each link's state and its sessions. */
function remotesCard(view: StatusView): HTMLElement | null {
  if (view.remotes.length === 0) return null;
  return h(
    'section',
    { class: 'card wide', key: 'remotes', 'aria-labelledby': 'remotes-h' },
    h('h2', { id: 'remotes-h' }, 'Other machines'),
    ...view.remotes.map((remote) =>
      h(
        'div',
        { key: `remote:${remote.remote}`, 'data-remote': remote.remote },
        h(
          'h3',
          {},
          remote.label,
          ' ',
          badge(
            remote.link.state === 'up' ? 'connected' : remote.link.state === 'down' ? 'unreachable' : 'connecting',
            remote.link.state === 'up' ? 'good' : remote.link.state === 'down' ? 'bad' : 'neutral',
            remote.link.state,
          ),
        ),
        h('p', { class: 'muted small', 'data-fact': 'link' }, `${remote.remote}: ${linkText(remote)}`),
        remote.sessions.length === 0
          ? h('p', { class: 'muted' }, remote.link.state === 'up' ? 'No live sessions there.' : '')
          : h(
              'table',
              { class: 'remote-sessions' },
              h(
                'thead',
                {},
                h('tr', {}, ...['Project', 'Host', 'Board', 'State', ''].map((t) => h('th', { scope: 'col' }, t))),
              ),
              h('tbody', {}, ...remote.sessions.map((s) => remoteSessionRow(remote, s))),
            ),
      ),
    ),
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
    ...[desktopCard(desktop)].filter((card): card is HTMLElement => card !== null),
    h('div', { class: 'grid' }, fabricCard(view), hooksCard(view)),
    sessionsTable(view),
    ...[remotesCard(view)].filter((card): card is HTMLElement => card !== null),
  ]);
}
