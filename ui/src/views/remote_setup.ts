// Settings' "Set up another machine": a destination set up the way `fabric-session remote add`
// does it. "Set up…" checks the remote's system, copies our program there and shows the host's
// hook plan with its digest in a consent panel; only the person's "Apply" applies exactly that
// plan (by the digest shown) and has the tray follow the remote. "Take down…" shows each host's
// removal plan there; only "Take down" takes exactly those out, removes our program and stops
// following it (`remote remove`). Cancel changes nothing.

import { errorText, type Api } from '../api';
import { h } from '../dom';
import { HOST_LABELS } from '../labels';
import type { HostId, RemoteRemovalPlan, RemoteSetupPlan, SettingsView } from '../types';

export class RemoteSetupView {
  private readonly destination: HTMLInputElement;
  private readonly host: HTMLSelectElement;
  private readonly start: HTMLButtonElement;
  private readonly takeDown: HTMLButtonElement;
  private readonly panel: HTMLElement;
  /** The destination being set up: a later click replaces an earlier answer. */
  private current = 0;

  constructor(
    readonly el: HTMLElement,
    private readonly api: Pick<Api, 'prepareRemote' | 'applyRemote' | 'planRemoteRemoval' | 'takeDownRemote'>,
    private readonly onSettings: (view: SettingsView) => void,
  ) {
    this.destination = h('input', {
      id: 'remote-destination',
      type: 'text',
      placeholder: 'build-box',
      autocomplete: 'off',
      spellcheck: 'false',
    });
    this.host = h(
      'select',
      { id: 'remote-host' },
      ...(Object.keys(HOST_LABELS) as HostId[]).map((host) => h('option', { value: host }, HOST_LABELS[host])),
    );
    this.start = h('button', { type: 'submit', class: 'primary', id: 'remote-setup' }, 'Set up…');
    this.takeDown = h('button', { type: 'button', id: 'remote-take-down' }, 'Take down…');
    this.takeDown.addEventListener('click', () => void this.planRemoval(this.destination.value.trim()));
    this.panel = h('div', {
      id: 'remote-setup-panel',
      role: 'region',
      'aria-label': 'Setting a machine up',
      hidden: true,
    });
    const form = h(
      'form',
      { id: 'remote-setup-form' },
      h('div', { class: 'row' }, h('label', { for: 'remote-destination' }, 'Destination'), this.destination),
      h('div', { class: 'row' }, h('label', { for: 'remote-host' }, 'Hooks for'), this.host),
      h('div', { class: 'actions' }, this.start, this.takeDown),
    );
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      void this.prepare(this.destination.value.trim(), this.host.value as HostId);
    });
    el.replaceChildren(
      h('h2', { id: 'remote-setup-h' }, 'Set up another machine'),
      h(
        'p',
        { class: 'muted small' },
        'An ssh destination or Host alias of ~/.ssh/config, docker:<container>, podman:<container> or wsl:<distribution>. Set up… checks its system, copies fabric-session there over your own ssh (checksum verified) and shows the hook plan there. Nothing in its config is written until you click Apply; then the tray follows it. Take down… shows which hooks of ours it would take out there; only your click takes them out, removes fabric-session there and stops following it.',
      ),
      form,
      this.panel,
    );
  }

  /** Step 1: the remote's system checked, our program copied, its plan shown for consent. */
  async prepare(destination: string, host: HostId): Promise<void> {
    const ticket = ++this.current;
    if (destination === '') {
      this.refused('Type a destination first (an ssh destination or Host alias).', false);
      return;
    }
    this.start.disabled = true;
    this.panel.hidden = false;
    this.panel.replaceChildren(
      h(
        'p',
        { role: 'status', 'aria-live': 'polite', 'data-fact': 'remote-progress' },
        `Checking ${destination}’s system, copying fabric-session there and reading ${HOST_LABELS[host]}’s hook plan there…`,
      ),
    );
    let plan: RemoteSetupPlan;
    try {
      plan = await this.api.prepareRemote(destination, host);
    } catch (error) {
      if (ticket === this.current) this.refused(errorText(error), false);
      return;
    } finally {
      if (ticket === this.current) this.start.disabled = false;
    }
    if (ticket === this.current) this.consent(plan);
  }

  /** "Take down…": each host's removal plan there, for consent. */
  async planRemoval(destination: string): Promise<void> {
    const ticket = ++this.current;
    if (destination === '') {
      this.refused('Type a destination first (an ssh destination or Host alias).', false);
      return;
    }
    this.takeDown.disabled = true;
    this.panel.hidden = false;
    this.panel.replaceChildren(
      h(
        'p',
        { role: 'status', 'aria-live': 'polite', 'data-fact': 'remote-progress' },
        `Reading which hooks of ours ${destination} runs…`,
      ),
    );
    let plan: RemoteRemovalPlan;
    try {
      plan = await this.api.planRemoteRemoval(destination);
    } catch (error) {
      if (ticket === this.current) this.refused(errorText(error), false);
      return;
    } finally {
      if (ticket === this.current) this.takeDown.disabled = false;
    }
    if (ticket === this.current) this.removalConsent(plan);
  }

  private removalConsent(plan: RemoteRemovalPlan): void {
    const title = h('h3', { id: 'remote-plan-h', tabindex: -1 }, `Take fabric-session off ${plan.label}`);
    const go = h(
      'button',
      { type: 'button', class: 'primary', 'data-action': 'remote-take-down-apply' },
      `Take down ${plan.label}`,
    );
    const cancel = h('button', { type: 'button', 'data-action': 'remote-cancel' }, 'Cancel');
    go.addEventListener('click', () => void this.applyRemoval(plan));
    cancel.addEventListener('click', () => {
      this.current++;
      this.finished('Cancelled', `Nothing was changed on ${plan.label}.`, '');
    });
    const parts: HTMLElement[] = [title];
    if (plan.hosts.length === 0) {
      parts.push(h('p', { 'data-fact': 'remote-no-hooks' }, `No hooks of ours on ${plan.label}.`));
    }
    for (const host of plan.hosts) {
      parts.push(
        h(
          'pre',
          {
            class: 'entries',
            'data-fact': 'remote-removal-plan',
            'data-host': host.host,
            'aria-label': `${HOST_LABELS[host.host]}’s removal plan on ${plan.label}`,
          },
          host.planText,
        ),
      );
    }
    parts.push(
      h(
        'p',
        { class: 'note' },
        `Take down takes these hooks out, removes fabric-session from ${plan.label} and stops following it. Nothing changes until you click it.`,
      ),
      h('div', { class: 'actions' }, go, cancel),
    );
    this.panel.replaceChildren(...parts);
    title.focus();
  }

  private async applyRemoval(plan: RemoteRemovalPlan): Promise<void> {
    const ticket = ++this.current;
    this.panel.querySelectorAll('button').forEach((b) => (b.disabled = true));
    try {
      const done = await this.api.takeDownRemote(
        plan.remote,
        plan.hosts.map(({ host, digest }) => ({ host, digest })),
      );
      if (ticket !== this.current) return;
      this.onSettings(done.settings);
      this.finished(
        'Done',
        `fabric-session is off ${done.label}${done.unfollowed ? ', and the tray no longer follows it' : ''}.`,
        'ok',
      );
    } catch (error) {
      if (ticket === this.current) this.refused(errorText(error), true);
    }
  }

  /** The consent panel: the plan as the remote gives it, its digest, Apply and Cancel. */
  private consent(plan: RemoteSetupPlan): void {
    const title = h('h3', { id: 'remote-plan-h', tabindex: -1 }, `${HOST_LABELS[plan.host]} on ${plan.label}`);
    const apply = h(
      'button',
      { type: 'button', class: 'primary', 'data-action': 'remote-apply' },
      plan.changes ? `Apply on ${plan.label}` : `Follow ${plan.label}`,
    );
    const cancel = h('button', { type: 'button', 'data-action': 'remote-cancel' }, 'Cancel');
    apply.addEventListener('click', () => void this.apply(plan));
    cancel.addEventListener('click', () => this.cancelled(plan));
    this.panel.replaceChildren(
      title,
      h(
        'dl',
        {},
        h('dt', {}, 'System'),
        h('dd', { 'data-fact': 'remote-machine' }, `Linux ${plan.machine}`),
        h('dt', {}, 'fabric-session there'),
        h('dd', { class: 'path', 'data-fact': 'remote-program' }, `copied, sha256 ${plan.programSha256}`),
        h('dt', {}, 'Plan digest'),
        h('dd', { class: 'path', 'data-fact': 'remote-digest' }, plan.digest),
      ),
      h(
        'pre',
        { class: 'entries', 'data-fact': 'remote-plan', 'aria-label': `The hook plan on ${plan.label}` },
        plan.planText,
      ),
      h(
        'p',
        { class: 'note' },
        plan.changes
          ? `Nothing in ${HOST_LABELS[plan.host]}’s config on ${plan.label} is written until you click Apply. If it changes before then, ${plan.label} refuses the plan.`
          : `Nothing to change there. Follow adds ${plan.label} to the machines the tray follows.`,
      ),
      h('div', { class: 'actions' }, apply, cancel),
    );
    title.focus();
  }

  /** Step 2, on the person's click only: exactly the plan shown, by its digest. */
  private async apply(plan: RemoteSetupPlan): Promise<void> {
    const ticket = ++this.current;
    this.panel.querySelectorAll('button').forEach((b) => (b.disabled = true));
    try {
      const done = await this.api.applyRemote(plan.remote, plan.host, plan.digest);
      if (ticket !== this.current) return;
      this.onSettings(done.settings);
      this.finished(
        'Done',
        [
          plan.changes ? `${HOST_LABELS[done.host]}’s hooks on ${done.label} are ours now.` : '',
          done.followed ? `The tray follows ${done.label} now.` : `The tray already followed ${done.label}.`,
        ]
          .filter((s) => s !== '')
          .join(' '),
        'ok',
      );
    } catch (error) {
      if (ticket === this.current) this.refused(errorText(error), true);
    }
  }

  private cancelled(plan: RemoteSetupPlan): void {
    this.current++;
    this.finished(
      'Cancelled',
      `Nothing was applied on ${plan.label}. fabric-session stays copied there; \`fabric-session remote remove ${plan.remote}\` takes it off.`,
      '',
    );
  }

  private refused(message: string, applying: boolean): void {
    this.panel.hidden = false;
    const title = h('h3', { id: 'remote-plan-h', tabindex: -1 }, applying ? 'Refused' : 'Not done');
    const close = h('button', { type: 'button', 'data-action': 'remote-close' }, 'Close');
    close.addEventListener('click', () => (this.panel.hidden = true));
    const parts: Array<HTMLElement | null> = [
      title,
      h('p', { class: 'refusal', role: 'alert', 'data-fact': 'remote-refusal' }, message),
      applying
        ? h('p', { class: 'hint' }, 'Press Set up… or Take down… again to see the plan as it is there now.')
        : null,
      h('div', { class: 'actions' }, close),
    ];
    this.panel.replaceChildren(...parts.filter((p): p is HTMLElement => p !== null));
    title.focus();
  }

  private finished(heading: string, text: string, tone: string): void {
    const title = h('h3', { id: 'remote-plan-h', tabindex: -1 }, heading);
    const close = h('button', { type: 'button', 'data-action': 'remote-close' }, 'Close');
    close.addEventListener('click', () => (this.panel.hidden = true));
    this.panel.replaceChildren(
      title,
      h('p', { class: tone || null, role: 'status', 'data-fact': 'remote-result' }, text),
      h('div', { class: 'actions' }, close),
    );
    title.focus();
  }
}
