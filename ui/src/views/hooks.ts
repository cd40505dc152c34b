// Hooks: per host, whether `fabric` is registered, whether our hooks are installed, whether the
// host runs them (Codex: the person's approval, read from Codex's own record) and its version.
// Install / Remove first show the library's plan (file, current digest, our entries and where
// each goes, never another line of the person's config) and apply only after the person
// confirms, with the plan's digest, so a file that changed in between is refused and left
// untouched.

import { errorText, type Api } from '../api';
import { badge, h, patchChildren } from '../dom';
import { APPROVAL_LABELS, HOOK_STATE_LABELS, SCOPE_LABELS } from '../labels';
import type { ApprovalState, HookStateKind, HostId, HostStatus, Operation, PlanView, StatusView } from '../types';

const CODEX_TRUST =
  'Codex runs a hook only after you approve it in /hooks, and asks again whenever its command or its place in hooks.json changes.';

const APPROVAL_TONE: Record<ApprovalState, 'good' | 'warn' | 'bad' | 'neutral'> = {
  'not-needed': 'neutral',
  approved: 'good',
  waiting: 'warn',
  changed: 'warn',
  'turned-off': 'bad',
  'hooks-off': 'bad',
  unknown: 'neutral',
};

const STATE_TONE: Record<HookStateKind, 'good' | 'warn' | 'bad' | 'neutral'> = {
  installed: 'good',
  'not-installed': 'neutral',
  stale: 'warn',
  incomplete: 'warn',
  unreadable: 'bad',
};

export class HooksView {
  private view: StatusView | null = null;
  private readonly hostsEl: HTMLElement;
  private readonly planEl: HTMLElement;

  constructor(
    root: HTMLElement,
    private readonly api: Pick<Api, 'planHooks' | 'applyHooks'>,
  ) {
    this.hostsEl = h('div', { class: 'grid' });
    this.planEl = h('section', { id: 'plan', class: 'card wide', 'aria-live': 'polite', hidden: true });
    root.replaceChildren(
      h('h1', {}, 'Hooks'),
      h(
        'p',
        { class: 'hint' },
        'Install and Remove show the exact change first and write only after you confirm. The file is backed up before it is changed.',
      ),
      this.hostsEl,
      this.planEl,
    );
  }

  update(view: StatusView): void {
    this.view = view;
    // Patched in place: a focused Install/Remove button stays focused across status events.
    patchChildren(
      this.hostsEl,
      view.status.hosts.map((host) => this.hostCard(host)),
    );
  }

  private hostCard(host: HostStatus): HTMLElement {
    const file = this.view?.hookFiles.find((f) => f.host === host.host)?.file ?? '';
    const installed = host.hooks.state !== 'not-installed';
    return h(
      'section',
      { key: `host:${host.host}`, class: 'card', 'data-host': host.host, 'aria-labelledby': `host-${host.host}` },
      h('h2', { id: `host-${host.host}` }, host.name),
      h(
        'dl',
        {},
        h('dt', {}, 'fabric registered'),
        h(
          'dd',
          { 'data-fact': 'registered' },
          host.fabricRegistered ? `yes (${host.scopes.map((s) => SCOPE_LABELS[s]).join(', ')} scope)` : 'no',
        ),
        h('dt', {}, 'Hooks'),
        h(
          'dd',
          { 'data-fact': 'hook-state' },
          badge(HOOK_STATE_LABELS[host.hooks.state], STATE_TONE[host.hooks.state], host.hooks.state),
        ),
        ...approvalFacts(host),
        h('dt', {}, 'Version'),
        versionFact(host),
        h('dt', {}, 'Config file'),
        h('dd', { class: 'path' }, file),
        host.hooks.commandPath ? h('dt', {}, 'Runs') : null,
        host.hooks.commandPath ? h('dd', { class: 'path' }, host.hooks.commandPath) : null,
      ),
      h('p', { class: 'small' }, host.hooks.description),
      host.hostVersion.olderThanTested
        ? h(
            'p',
            { class: 'warning small', 'data-fact': 'version-warning' },
            `${host.name} ${host.hostVersion.installed ?? ''} is older than ${host.hostVersion.tested}, the version these hooks were tested with: update it.`,
          )
        : null,
      host.host === 'codex' ? h('p', { class: 'caveat small', 'data-fact': 'trust' }, CODEX_TRUST) : null,
      h(
        'div',
        { class: 'actions' },
        h(
          'button',
          { type: 'button', 'data-action': 'install', 'aria-label': `Install hooks for ${host.name}…` },
          installed ? 'Reinstall…' : 'Install…',
        ),
        h(
          'button',
          {
            type: 'button',
            'data-action': 'remove',
            'aria-label': `Remove hooks for ${host.name}…`,
            disabled: !installed,
          },
          'Remove…',
        ),
      ),
    );
  }

  /** Wires the buttons (call once; cards are patched under the same root, never given listeners). */
  bind(): void {
    this.hostsEl.addEventListener('click', (event) => {
      const button = (event.target as HTMLElement).closest('button[data-action]');
      const card = button?.closest('[data-host]');
      if (!button || !card) return;
      void this.showPlan(card.getAttribute('data-host') as HostId, button.getAttribute('data-action') as Operation);
    });
  }

  async showPlan(host: HostId, operation: Operation): Promise<void> {
    this.planEl.hidden = false;
    this.planEl.replaceChildren(h('p', {}, 'Working out the change…'));
    let view: PlanView;
    try {
      view = await this.api.planHooks(host, operation);
    } catch (error) {
      this.showRefusal(errorText(error));
      return;
    }
    this.renderPlan(view);
  }

  renderPlan(view: PlanView): void {
    const p = view.plan;
    const verb = p.operation === 'install' ? 'Install' : 'Remove';
    const title = h('h2', { id: 'plan-h', tabindex: -1 }, `${verb} hooks: ${p.file}`);
    const nothing = p.action.kind === 'nothing-to-do';
    const entries = p.operation === 'install' ? p.addText : p.removeText;
    const cancel = h('button', { type: 'button', 'data-action': 'cancel' }, nothing ? 'Close' : 'Cancel');
    cancel.addEventListener('click', () => {
      this.planEl.hidden = true;
      this.planEl.replaceChildren();
    });
    const confirm = nothing
      ? null
      : h(
          'button',
          { type: 'button', class: 'primary', 'data-action': 'confirm' },
          `${verb}: write ${fileName(p.file)}`,
        );
    confirm?.addEventListener('click', () => void this.apply(p.host, p.operation, p.digest));
    const parts: Array<Node | null> = [
      title,
      h(
        'dl',
        {},
        h('dt', {}, 'File'),
        h('dd', { class: 'path', 'data-fact': 'plan-file' }, p.file, p.exists ? '' : ' (new file)'),
        h('dt', {}, 'Current digest'),
        h(
          'dd',
          { class: 'path', 'data-fact': 'plan-digest' },
          p.sha256 ? `sha256 ${p.sha256}` : 'absent (no file yet)',
        ),
        p.program ? h('dt', {}, 'Hooks run') : null,
        p.program ? h('dd', { class: 'path' }, p.program) : null,
      ),
      p.action.kind === 'nothing-to-do'
        ? h('p', { 'data-fact': 'nothing' }, `Nothing to do: ${p.action.reason}.`)
        : null,
      !nothing && entries ? h('h3', {}, p.operation === 'install' ? 'Entries to add' : 'Entries to take out') : null,
      !nothing && entries ? h('pre', { class: 'entries' }, entries) : null,
      !nothing && p.operation === 'install' && p.removeText ? h('h3', {}, 'Old entries replaced') : null,
      !nothing && p.operation === 'install' && p.removeText ? h('pre', { class: 'entries' }, p.removeText) : null,
      !nothing ? h('h3', {}, 'The change (our entries only)') : null,
      !nothing ? diffBlock(view.diff) : null,
      ...p.warnings.map((w) => h('p', { class: 'warning' }, `Warning: ${w}`)),
      ...p.notes.map((n) => h('p', { class: 'note' }, n)),
      h('div', { class: 'actions' }, confirm, cancel),
    ];
    this.planEl.replaceChildren(...parts.filter((p): p is Node => p !== null));
    title.focus();
  }

  private async apply(host: HostId, operation: Operation, digest: string): Promise<void> {
    const buttons = this.planEl.querySelectorAll('button');
    buttons.forEach((b) => (b.disabled = true));
    try {
      const applied = await this.api.applyHooks(host, operation, digest);
      const done = h('h2', { id: 'plan-h', tabindex: -1 }, applied.changed ? 'Done' : 'Nothing changed');
      const close = h('button', { type: 'button', 'data-action': 'cancel' }, 'Close');
      close.addEventListener('click', () => {
        this.planEl.hidden = true;
      });
      this.planEl.replaceChildren(
        done,
        h(
          'p',
          { 'data-fact': 'applied' },
          applied.changed ? `Wrote ${applied.file}.` : `${applied.file} already matched.`,
          applied.backup ? ` The previous version is in ${applied.backup}.` : '',
        ),
        ...applied.plan.notes.map((n) => h('p', { class: 'note' }, n)),
        h('div', { class: 'actions' }, close),
      );
      done.focus();
    } catch (error) {
      this.showRefusal(errorText(error));
    }
  }

  private showRefusal(message: string): void {
    const title = h('h2', { id: 'plan-h', tabindex: -1 }, 'Refused: the file was not changed');
    const close = h('button', { type: 'button', 'data-action': 'cancel' }, 'Close');
    close.addEventListener('click', () => {
      this.planEl.hidden = true;
    });
    this.planEl.replaceChildren(
      title,
      h('p', { class: 'refusal', role: 'alert', 'data-fact': 'refusal' }, message),
      h(
        'p',
        { class: 'hint' },
        'Nothing was written. Press Install or Remove again to see the change as the file is now.',
      ),
      h('div', { class: 'actions' }, close),
    );
    title.focus();
  }
}

/** The host's approval of our hooks, when it asks for one and ours are there. */
function approvalFacts(host: HostStatus): HTMLElement[] {
  const approval = host.approval;
  if (!approval || approval.state === 'not-needed') return [];
  return [
    h('dt', {}, 'Approval'),
    h(
      'dd',
      { 'data-fact': 'approval' },
      badge(APPROVAL_LABELS[approval.state], APPROVAL_TONE[approval.state], approval.state),
      approval.description ? ` — ${approval.description}` : '',
    ),
  ];
}

function versionFact(host: HostStatus): HTMLElement {
  const version = host.hostVersion;
  const installed = version.installed ?? 'unknown';
  return h(
    'dd',
    { 'data-fact': 'version' },
    version.olderThanTested ? badge(installed, 'warn') : installed,
    ` (tested with ${version.tested})`,
  );
}

function fileName(path: string): string {
  return path.split(/[\\/]/).pop() ?? path;
}

function diffBlock(diff: string): HTMLElement {
  const pre = h('pre', { class: 'diff', 'data-fact': 'diff', 'aria-label': 'Our entries and where they go' });
  for (const line of diff.split('\n')) {
    const cls = line.startsWith('+') ? 'add' : line.startsWith('-') ? 'del' : 'ctx';
    pre.append(h('span', { class: cls }, line), '\n');
  }
  return pre;
}
