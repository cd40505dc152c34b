// Settings: the one settings file the tray watches (written atomically by the Rust side), the
// login item, a test notification the tray shows (the dashboard never notifies itself), and
// the hook setup offers the person turned off in the tray ("Don't offer again"), each one a
// click from being offered again. "Set up another machine" (views/remote_setup.ts) sits below
// the form.
// The controls live as long as the view: an update writes a control only when what is on disk
// differs, and never while the person is editing the form.

import { errorText, type Api } from '../api';
import { h, setText } from '../dom';
import { HOST_LABELS } from '../labels';
import type { HostId, SettingsForm, SettingsView as Settings } from '../types';

export class SettingsView {
  private readonly interval: HTMLInputElement;
  private readonly notifications: HTMLInputElement;
  private readonly quietStart: HTMLInputElement;
  private readonly quietEnd: HTMLInputElement;
  private readonly login: HTMLInputElement;
  private readonly muted: HTMLInputElement;
  private readonly remotes: HTMLInputElement;
  private readonly grace: HTMLInputElement;
  private readonly longTurn: HTMLInputElement;
  private readonly rulesEl: HTMLElement;
  private readonly message: HTMLElement;
  private readonly testMessage: HTMLElement;
  private readonly pathEl: HTMLElement;
  private readonly offersEl: HTMLElement;
  private readonly offersList: HTMLElement;
  private readonly offersMessage: HTMLElement;
  private readonly form: HTMLFormElement;
  private dirty = false;

  constructor(
    root: HTMLElement,
    private readonly api: Pick<Api, 'saveSettings' | 'sendTestNotification' | 'offerHooksAgain'>,
    /** Sections shown after the form (Set up another machine). */
    after: Node[] = [],
  ) {
    this.interval = h('input', { id: 'set-interval', type: 'number', min: 10, step: 1, required: true });
    this.notifications = h('input', { id: 'set-notifications', type: 'checkbox' });
    this.quietStart = h('input', { id: 'set-quiet-start', type: 'time' });
    this.quietEnd = h('input', { id: 'set-quiet-end', type: 'time' });
    this.login = h('input', { id: 'set-login', type: 'checkbox' });
    this.muted = h('input', { id: 'set-muted', type: 'text', placeholder: 'project-a, project-b' });
    this.remotes = h('input', { id: 'set-remotes', type: 'text', placeholder: 'build-box, me@10.0.0.2, docker:devc' });
    this.grace = h('input', { id: 'set-grace', type: 'number', min: 0, max: 600, step: 1, required: true });
    this.longTurn = h('input', { id: 'set-long-turn', type: 'number', min: 1, max: 1440, step: 1, placeholder: 'off' });
    this.rulesEl = h('ul', { 'data-fact': 'rules' });
    this.message = h('p', { id: 'settings-message', role: 'status', 'aria-live': 'polite' });
    this.testMessage = h('p', { id: 'test-message', role: 'status', 'aria-live': 'polite' });
    this.pathEl = h('p', { class: 'hint' });
    const row = (id: string, label: string, control: HTMLElement, help?: string) =>
      h(
        'div',
        { class: 'row' },
        h('label', { for: id }, label),
        control,
        help ? h('span', { class: 'muted small' }, help) : null,
      );
    const save = h('button', { type: 'submit', class: 'primary', id: 'settings-save' }, 'Save settings');
    const test = h('button', { type: 'button', id: 'settings-test' }, 'Send a test notification');
    this.form = h(
      'form',
      { id: 'settings-form', class: 'card wide' },
      row('set-interval', 'Watch interval (seconds)', this.interval, 'How often the tray checks for mail.'),
      row('set-notifications', 'Notifications', this.notifications, 'The tray notifies about new mail.'),
      h(
        'fieldset',
        {},
        h('legend', {}, 'Quiet hours (no notifications)'),
        row('set-quiet-start', 'From', this.quietStart),
        row('set-quiet-end', 'Until', this.quietEnd),
        h('span', { class: 'muted small' }, 'Leave both empty for none.'),
      ),
      row(
        'set-muted',
        'Muted projects',
        this.muted,
        'Project folder names, separated by commas: their sessions never notify.',
      ),
      row(
        'set-grace',
        'Needs you after (seconds)',
        this.grace,
        'A session waiting on a permission prompt or a question is notified once it has waited this long.',
      ),
      row(
        'set-long-turn',
        'A long turn finished (minutes)',
        this.longTurn,
        'Say when a turn longer than this finishes. Leave empty for never.',
      ),
      h('fieldset', {}, h('legend', {}, 'How notifications behave'), this.rulesEl),
      row(
        'set-remotes',
        'Sessions on other machines',
        this.remotes,
        'ssh destinations or Host aliases of ~/.ssh/config, docker:<container>, podman:<container> or wsl:<distribution>, separated by commas. The tray follows each over your own ssh and never asks for a password. Set one up below (Set up another machine) or with `fabric-session remote add <destination>`.',
      ),
      row('set-login', 'Launch the tray at login', this.login),
      h('div', { class: 'actions' }, save, test),
      this.message,
      this.testMessage,
    );
    this.offersList = h('ul', { id: 'dismissed-offers' });
    this.offersMessage = h('p', { id: 'offers-message', role: 'status', 'aria-live': 'polite' });
    this.offersEl = h(
      'section',
      { id: 'settings-offers', class: 'card wide', hidden: true },
      h('h2', {}, 'Hook setup offers you turned off'),
      h(
        'p',
        { class: 'muted small' },
        'You chose “Don’t offer again” in the tray for these hosts. Offer again to get “Set up hooks for …” back in the tray’s menu.',
      ),
      this.offersList,
      this.offersMessage,
    );
    root.replaceChildren(h('h1', {}, 'Settings'), this.pathEl, this.form, ...after, this.offersEl);
    this.form.addEventListener('input', () => {
      this.dirty = true;
    });
    this.form.addEventListener('submit', (event) => {
      event.preventDefault();
      void this.save();
    });
    test.addEventListener('click', () => void this.test());
  }

  /** Shows what is on disk, unless the person is editing. */
  update(view: Settings, force = false): void {
    if (this.dirty && !force) return;
    setText(this.pathEl, `Saved in ${view.path}; the tray reads it when it changes.`);
    if (this.interval.min !== String(view.minIntervalSecs)) this.interval.min = String(view.minIntervalSecs);
    if (this.interval.max !== String(view.maxIntervalSecs)) this.interval.max = String(view.maxIntervalSecs);
    setValue(this.interval, String(view.form.watchIntervalSecs));
    setChecked(this.notifications, view.form.notifications);
    setValue(this.quietStart, view.form.quietStart ?? '');
    setValue(this.quietEnd, view.form.quietEnd ?? '');
    setChecked(this.login, view.form.launchAtLogin);
    setValue(this.muted, view.form.mutedProjects.join(', '));
    setValue(this.remotes, view.form.remotes.join(', '));
    if (this.grace.max !== String(view.maxGraceSecs)) this.grace.max = String(view.maxGraceSecs);
    setValue(this.grace, String(view.form.needsYouGraceSecs));
    setValue(this.longTurn, view.form.longTurnMinutes === null ? '' : String(view.form.longTurnMinutes));
    if (this.rulesEl.textContent !== view.rules.join('')) {
      this.rulesEl.replaceChildren(...view.rules.map((rule) => h('li', {}, rule)));
    }
    this.showOffers(view.dismissedHookOffers);
    this.dirty = false;
  }

  /** The dismissed offers, each with its "Offer again" button; hidden when there are none. */
  private showOffers(hosts: HostId[]): void {
    const shown = Array.from(this.offersList.children, (li) => (li as HTMLElement).dataset.host);
    if (shown.join(',') === hosts.join(',')) return;
    this.offersEl.hidden = hosts.length === 0;
    this.offersList.replaceChildren(
      ...hosts.map((host) => {
        const again = h('button', { type: 'button', 'data-offer-again': host }, 'Offer again');
        again.addEventListener('click', () => void this.offerAgain(host));
        return h('li', { 'data-host': host }, h('span', {}, HOST_LABELS[host]), ' ', again);
      }),
    );
  }

  private async offerAgain(host: HostId): Promise<void> {
    try {
      const view = await this.api.offerHooksAgain(host);
      this.showOffers(view.dismissedHookOffers);
      this.offersMessage.textContent = `The tray offers to set up ${HOST_LABELS[host]}’s hooks again.`;
      this.offersMessage.className = 'ok';
    } catch (error) {
      this.offersMessage.textContent = `Not changed: ${errorText(error)}`;
      this.offersMessage.className = 'refusal';
    }
  }

  read(): SettingsForm {
    return {
      watchIntervalSecs: Number(this.interval.value),
      notifications: this.notifications.checked,
      quietStart: this.quietStart.value || null,
      quietEnd: this.quietEnd.value || null,
      launchAtLogin: this.login.checked,
      mutedProjects: this.muted.value
        .split(',')
        .map((p) => p.trim())
        .filter((p) => p !== ''),
      remotes: this.remotes.value
        .split(',')
        .map((r) => r.trim())
        .filter((r) => r !== ''),
      needsYouGraceSecs: Number(this.grace.value),
      longTurnMinutes: this.longTurn.value.trim() === '' ? null : Number(this.longTurn.value),
    };
  }

  private async save(): Promise<void> {
    try {
      const saved = await this.api.saveSettings(this.read());
      this.dirty = false;
      this.update(saved, true);
      this.message.textContent = saved.form.launchAtLogin
        ? `Saved. The tray starts at login (${saved.autostartFile}).`
        : 'Saved.';
      this.message.className = 'ok';
    } catch (error) {
      this.message.textContent = `Not saved: ${errorText(error)}`;
      this.message.className = 'refusal';
    }
  }

  private async test(): Promise<void> {
    try {
      const result = await this.api.sendTestNotification();
      this.testMessage.textContent = result.trayRunning
        ? 'Asked the tray: a test notification should appear in a moment.'
        : 'Asked the tray, but it is not running: start Fabric Companion’s tray to see notifications.';
    } catch (error) {
      this.testMessage.textContent = `Could not ask the tray: ${errorText(error)}`;
    }
  }
}

/** Writing a control's value moves its caret to the end, so write only a real change. */
function setValue(input: HTMLInputElement, value: string): void {
  if (input.value !== value) input.value = value;
}

function setChecked(input: HTMLInputElement, checked: boolean): void {
  if (input.checked !== checked) input.checked = checked;
}
