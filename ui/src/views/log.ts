// Log: hooks.log.1 and hooks.log as one live tail. New lines arrive as `log-appended` events;
// filters (event, outcome, session) and a search narrow what is shown. Only the newest
// MAX_ROWS matches are drawn, so the full 1 MB log stays quick.
//
// Updates keep the person's place: each line's row is built once and reused (so a selection in
// it survives), the tail follows new lines only while "Follow new lines" is on and the person
// is at the bottom; scrolled up, the rows they are reading stay where they are on screen, even
// when the oldest rows drop off the top.

import { h, patchChildren, setText } from '../dom';
import { LOG_OUTCOME_LABELS, logEventLabel, logHostLabel, logOutcomeLabel } from '../labels';
import type { LogLine, LogSnapshot, LogUpdate } from '../types';

export const MAX_ROWS = 500;

/** How close to the bottom (in CSS pixels) still counts as "at the bottom". */
const BOTTOM_SLACK = 4;

export interface LogFilter {
  event: string;
  outcome: string;
  session: string;
  search: string;
}

export function matches(line: LogLine, f: LogFilter): boolean {
  if (f.event && line.event !== f.event) return false;
  if (f.outcome && line.outcome !== f.outcome) return false;
  if (f.session && line.session !== f.session) return false;
  if (f.search && !line.raw.toLowerCase().includes(f.search.toLowerCase())) return false;
  return true;
}

/** The newest `limit` lines that match, oldest first, and how many matched in all. */
export function visible(lines: LogLine[], f: LogFilter, limit = MAX_ROWS): { rows: LogLine[]; total: number } {
  const rows: LogLine[] = [];
  let total = 0;
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i]!;
    if (!matches(line, f)) continue;
    total++;
    if (rows.length < limit) rows.push(line);
  }
  return { rows: rows.reverse(), total };
}

export class LogView {
  private lines: LogLine[] = [];
  private filter: LogFilter = { event: '', outcome: '', session: '', search: '' };
  private readonly eventSel: HTMLSelectElement;
  private readonly outcomeSel: HTMLSelectElement;
  private readonly sessionSel: HTMLSelectElement;
  private readonly searchIn: HTMLInputElement;
  private readonly followBox: HTMLInputElement;
  private readonly body: HTMLTableSectionElement;
  private readonly countEl: HTMLElement;
  private readonly scroller: HTMLElement;
  private readonly pathEl: HTMLElement;
  private pending = false;
  /** Whether the person is at the bottom of the tail (kept from their own scrolling). */
  private atBottom = true;
  /** Each line's row, built once: lines are immutable, so a row never needs patching. */
  private rows = new WeakMap<LogLine, HTMLTableRowElement>();
  private rowCount = 0;

  constructor(root: HTMLElement) {
    this.eventSel = h('select', { id: 'log-event' });
    this.outcomeSel = h('select', { id: 'log-outcome' });
    this.sessionSel = h('select', { id: 'log-session' });
    this.outcomeSel.append(h('option', { value: '' }, 'All outcomes'));
    for (const [value, label] of Object.entries(LOG_OUTCOME_LABELS)) {
      this.outcomeSel.append(h('option', { value }, label));
    }
    this.searchIn = h('input', {
      id: 'log-search',
      type: 'search',
      placeholder: 'Search the log',
      autocomplete: 'off',
    });
    this.followBox = h('input', { id: 'log-follow', type: 'checkbox', checked: true });
    this.body = h('tbody');
    this.countEl = h('p', { class: 'muted small', id: 'log-count', 'aria-live': 'polite' });
    this.pathEl = h('p', { class: 'hint' });
    this.scroller = h(
      'div',
      { class: 'scroller', id: 'log-scroller', tabindex: 0, 'aria-label': 'Log lines' },
      h(
        'table',
        { id: 'log' },
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            ...['Time', 'Event', 'Host', 'Session', 'Outcome', 'Detail'].map((t) => h('th', { scope: 'col' }, t)),
          ),
        ),
        this.body,
      ),
    );
    const field = (label: string, control: HTMLElement) =>
      h('label', { class: 'field' }, h('span', {}, label), control);
    root.replaceChildren(
      h('h1', {}, 'Log'),
      this.pathEl,
      h(
        'div',
        { class: 'filters', role: 'group', 'aria-label': 'Filter the log' },
        field('Event', this.eventSel),
        field('Outcome', this.outcomeSel),
        field('Session', this.sessionSel),
        field('Search', this.searchIn),
        h('label', { class: 'field inline' }, this.followBox, h('span', {}, 'Follow new lines')),
      ),
      this.countEl,
      this.scroller,
    );
    const onChange = () => {
      this.filter = {
        event: this.eventSel.value,
        outcome: this.outcomeSel.value,
        session: this.sessionSel.value,
        search: this.searchIn.value.trim(),
      };
      this.schedule();
    };
    for (const el of [this.eventSel, this.outcomeSel, this.sessionSel]) el.addEventListener('change', onChange);
    this.searchIn.addEventListener('input', onChange);
    this.followBox.addEventListener('change', () => {
      if (this.followBox.checked) this.scrollToEnd();
    });
    this.scroller.addEventListener('scroll', () => {
      // A scroller with no layout box (the tab is hidden) says nothing about the person.
      if (this.scroller.clientHeight > 0) this.atBottom = distanceToEnd(this.scroller) <= BOTTOM_SLACK;
    });
  }

  /** The tab was just shown: a following tail opens at its newest line. */
  shown(): void {
    if (this.followBox.checked && this.atBottom) this.scrollToEnd();
  }

  load(snapshot: LogSnapshot): void {
    setText(this.pathEl, `${snapshot.rotated} and ${snapshot.path}, newest last.`);
    this.lines = snapshot.lines;
    this.refreshOptions();
    this.render();
  }

  append(update: LogUpdate): void {
    this.lines = update.reset ? update.lines : this.lines.concat(update.lines);
    this.refreshOptions();
    this.schedule();
  }

  private schedule(): void {
    if (this.pending) return;
    this.pending = true;
    const run = () => {
      this.pending = false;
      this.render();
    };
    if (typeof requestAnimationFrame === 'function' && !document.hidden) requestAnimationFrame(run);
    else setTimeout(run, 0);
  }

  private refreshOptions(): void {
    setOptions(this.eventSel, 'All events', unique(this.lines.map((l) => l.event)), logEventLabel);
    setOptions(
      this.sessionSel,
      'All sessions',
      unique(this.lines.map((l) => l.session ?? '').filter(Boolean)),
      (session) => session,
    );
  }

  render(): void {
    const { rows, total } = visible(this.lines, this.filter);
    const follow = this.followBox.checked && this.atBottom;
    const anchor = follow ? null : this.anchorRow();
    const anchorTop = anchor?.getBoundingClientRect().top ?? 0;
    patchChildren(
      this.body,
      rows.map((line) => this.row(line)),
    );
    setText(
      this.countEl,
      total > rows.length
        ? `${total} of ${this.lines.length} lines match; showing the newest ${rows.length}.`
        : `${total} of ${this.lines.length} lines match.`,
    );
    if (follow) this.scrollToEnd();
    else if (anchor?.isConnected) this.scroller.scrollTop += anchor.getBoundingClientRect().top - anchorTop;
  }

  private row(line: LogLine): HTMLTableRowElement {
    let row = this.rows.get(line);
    if (!row) {
      row = h(
        'tr',
        { key: `line:${++this.rowCount}`, class: `o-${line.outcome}`, 'data-outcome': line.outcome },
        h('td', { class: 'nowrap' }, line.time),
        h('td', {}, logEventLabel(line.event)),
        h('td', {}, logHostLabel(line.host)),
        h('td', { class: 'mono small' }, line.session ?? '—'),
        h('td', {}, logOutcomeLabel(line.outcome, line.code)),
        h('td', { class: 'small' }, line.outcome === 'unparsed' ? line.raw : line.detail),
      );
      this.rows.set(line, row);
    }
    return row;
  }

  /** The first row the person can see at the top of the scroller, if the tail is on screen. */
  private anchorRow(): HTMLTableRowElement | null {
    if (this.scroller.clientHeight === 0) return null;
    const top = this.scroller.getBoundingClientRect().top;
    const rows = this.body.rows;
    let lo = 0;
    let hi = rows.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (rows[mid]!.getBoundingClientRect().bottom <= top) lo = mid + 1;
      else hi = mid;
    }
    return rows[lo] ?? null;
  }

  private scrollToEnd(): void {
    this.scroller.scrollTop = this.scroller.scrollHeight;
    this.atBottom = true;
  }
}

function distanceToEnd(el: HTMLElement): number {
  return el.scrollHeight - el.clientHeight - el.scrollTop;
}

function unique(values: string[]): string[] {
  return [...new Set(values)].sort();
}

/** Patches a filter's options in place: an open or focused list keeps the person's choice. */
function setOptions(
  select: HTMLSelectElement,
  allLabel: string,
  values: string[],
  labelOf: (value: string) => string,
): void {
  const current = [...select.options].slice(1).map((o) => o.value);
  if (current.length === values.length && current.every((v, i) => v === values[i])) return;
  const chosen = select.value;
  patchChildren(select, [
    h('option', { key: 'all', value: '' }, allLabel),
    ...values.map((v) => h('option', { key: `value:${v}`, value: v }, labelOf(v))),
  ]);
  const value = values.includes(chosen) ? chosen : '';
  if (select.value !== value) select.value = value;
}
