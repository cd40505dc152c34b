// Services: every fabric-service/0.1 descriptor, validated and probed by the Rust side.
// Rendering patches the view in place; each row is keyed by its descriptor file.

import { badge, h, patchChildren } from '../dom';
import { SERVICE_STATE_LABELS } from '../labels';
import type { ServiceState, ServicesView } from '../types';

const TONE: Record<ServiceState, 'good' | 'warn' | 'bad' | 'neutral'> = {
  ready: 'good',
  degraded: 'warn',
  down: 'bad',
  invalid: 'bad',
  foreign: 'bad',
  'not-probed': 'neutral',
};

export function renderServices(root: HTMLElement, view: ServicesView): void {
  const rows =
    view.services.length === 0
      ? [h('tr', {}, h('td', { colspan: 4, class: 'muted' }, 'No service descriptors.'))]
      : view.services.map((s) =>
          h(
            'tr',
            { key: `service:${s.file}`, 'data-service': s.file },
            h(
              'th',
              { scope: 'row' },
              s.name ?? s.file,
              h('div', { class: 'muted small' }, s.id && s.instance ? `${s.id}.${s.instance}` : s.file),
            ),
            h('td', {}, s.origin ?? '—'),
            h(
              'td',
              { 'data-col': 'state' },
              badge(SERVICE_STATE_LABELS[s.state], TONE[s.state], s.state),
              s.version ? h('span', { class: 'muted small' }, ` v${s.version}`) : null,
            ),
            h(
              'td',
              {},
              s.detail,
              s.degraded.length ? h('ul', { class: 'small' }, ...s.degraded.map((d) => h('li', {}, d))) : null,
            ),
          ),
        );
  patchChildren(root, [
    h('h1', {}, 'Services'),
    h(
      'p',
      { class: 'hint' },
      `Descriptors in ${view.dir}. Each local one is asked GET /.well-known/fabric-service (2 s, no redirects). The dashboard never stops a service.`,
    ),
    h(
      'table',
      { id: 'services' },
      h('thead', {}, h('tr', {}, ...['Service', 'Origin', 'State', 'Detail'].map((t) => h('th', { scope: 'col' }, t)))),
      h('tbody', {}, ...rows),
    ),
  ]);
}
