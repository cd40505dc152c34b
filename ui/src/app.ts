// The app shell: a keyboard-navigable tab list over the five views, data loaded through
// `api`, and live updates from the Rust side's events (the page never polls). Every view
// patches itself in place on an event, so focus, selection, typing and scroll survive it.

import { errorText, type Api } from './api';
import type { OpenRequest } from './types';
import { h } from './dom';
import { HooksView } from './views/hooks';
import { LogView } from './views/log';
import { renderOverview, setDesktop, wireOverview } from './views/overview';
import type { StatusView } from './types';
import { renderServices } from './views/services';
import { RemoteSetupView } from './views/remote_setup';
import { SettingsView } from './views/settings';

export const VIEWS = ['overview', 'hooks', 'log', 'services', 'settings'] as const;
export type ViewName = (typeof VIEWS)[number];
const LABELS: Record<ViewName, string> = {
  overview: 'Overview',
  hooks: 'Hooks',
  log: 'Log',
  services: 'Services',
  settings: 'Settings',
};

export interface App {
  show(view: ViewName): void;
  ready: Promise<void>;
}

export function startApp(root: HTMLElement, api: Api): App {
  const tabs = VIEWS.map((v) =>
    h(
      'button',
      {
        type: 'button',
        role: 'tab',
        id: `tab-${v}`,
        'aria-controls': `view-${v}`,
        'aria-selected': 'false',
        tabindex: -1,
      },
      LABELS[v],
    ),
  );
  const panels = VIEWS.map((v) =>
    h('section', { role: 'tabpanel', id: `view-${v}`, 'aria-labelledby': `tab-${v}`, tabindex: 0, hidden: true }),
  );
  const errorBar = h('p', { id: 'error', role: 'alert', hidden: true });
  root.replaceChildren(
    h(
      'nav',
      { 'aria-label': 'Views' },
      h('span', { class: 'brand' }, 'Fabric Companion'),
      h('div', { role: 'tablist', 'aria-label': 'Views' }, ...tabs),
    ),
    h('main', {}, errorBar, ...panels),
  );
  const panel = (v: ViewName) => panels[VIEWS.indexOf(v)]!;
  const hooks = new HooksView(panel('hooks'), api);
  hooks.bind();
  const log = new LogView(panel('log'));
  const remoteSetup = new RemoteSetupView(
    h('section', { id: 'settings-remote-setup', class: 'card wide', 'aria-labelledby': 'remote-setup-h' }),
    api,
    (view) => settings.update(view),
  );
  const settings = new SettingsView(panel('settings'), api, [remoteSetup.el]);

  const show = (view: ViewName) => {
    VIEWS.forEach((v, i) => {
      const selected = v === view;
      tabs[i]!.setAttribute('aria-selected', String(selected));
      tabs[i]!.tabIndex = selected ? 0 : -1;
      panels[i]!.hidden = !selected;
    });
    document.title = `${LABELS[view]} · Fabric Companion`;
    if (view === 'log') log.shown();
  };
  tabs.forEach((tab, i) => {
    tab.addEventListener('click', () => show(VIEWS[i]!));
    tab.addEventListener('keydown', (event) => {
      const moves: Record<string, number> = { ArrowRight: i + 1, ArrowLeft: i - 1, Home: 0, End: VIEWS.length - 1 };
      const to = moves[event.key];
      if (to === undefined) return;
      event.preventDefault();
      const next = (to + VIEWS.length) % VIEWS.length;
      show(VIEWS[next]!);
      tabs[next]!.focus();
    });
  });
  show('overview');

  const fail = (what: string) => (error: unknown) => {
    errorBar.hidden = false;
    errorBar.textContent = `Could not read ${what}: ${errorText(error)}`;
  };

  let lastStatus: StatusView | null = null;
  // What this desktop lacks for the icon and the jump: asked at start, and again after the
  // person turned our GNOME Shell extension on.
  const loadDesktop = () =>
    api.desktopSupport().then(
      (view) => {
        setDesktop(view);
        if (lastStatus) renderOverview(panel('overview'), lastStatus);
      },
      () => setDesktop(null),
    );
  wireOverview(
    panel('overview'),
    (session) => api.focusSession(session),
    () => api.enableJumpExtension().then(() => loadDesktop(), fail('the GNOME Shell extension')),
  );

  // Two events in quick succession start two reads whose answers may come back in either
  // order: each read draws only if no later read has drawn already, so an older answer
  // never replaces a newer one.
  const latest = <T>(read: () => Promise<T>, draw: (value: T) => void, what: string) => {
    let started = 0;
    let drawn = 0;
    return () => {
      const seq = ++started;
      return read().then((value) => {
        if (seq < drawn) return;
        drawn = seq;
        draw(value);
      }, fail(what));
    };
  };
  const loadStatus = latest(
    () => api.getStatus(),
    (view) => {
      lastStatus = view;
      renderOverview(panel('overview'), view);
      hooks.update(view);
    },
    'the status',
  );
  const loadServices = latest(
    () => api.listServices(),
    (view) => renderServices(panel('services'), view),
    'the services',
  );
  const loadSettings = latest(
    () => api.getSettings(),
    (view) => settings.update(view),
    'the settings',
  );

  // `--view hooks --host <host>` (the tray's "Set up hooks for <host>…"): the Hooks view with
  // that host's install plan; nothing is written until the person confirms it there.
  const open = async (request: OpenRequest) => {
    show('hooks');
    if (request.host) await hooks.showPlan(request.host, 'install');
  };

  const ready = (async () => {
    await Promise.all([
      api.onOpenRequest((request) => void open(request)),
      api.onStateChanged((event) => {
        if (event.kinds.includes('status')) void loadStatus();
        if (event.kinds.includes('services')) void loadServices();
        if (event.kinds.includes('settings')) void loadSettings();
      }),
      api.onLogAppended((update) => log.append(update)),
    ]);
    await Promise.all([
      loadStatus(),
      loadDesktop(),
      api.readLog().then((snapshot) => log.load(snapshot), fail('the log')),
      loadSettings(),
      loadServices(),
    ]);
    const request = await api.takeOpenRequest().catch(() => null);
    if (request) await open(request);
    document.body.dataset.ready = 'true';
  })();
  return { show, ready };
}
