// Tiny DOM helpers: build elements with text only (never innerHTML with data), and patch a
// live subtree in place so an update keeps what the person is doing in it: keyboard focus,
// text selection, scroll positions, open disclosures. Views build the tree they want with `h`
// and hand it to `patchChildren`; matching nodes are kept and only their differences written.
// This module never touches a form control's live state (value, checked, selection): those
// belong to the person and to the view that owns the control.

type Attrs = Record<string, string | number | boolean | null | undefined>;
type Child = Node | string | null | undefined | false;

/** Keys given with `h(tag, { key })`: they name an element among its siblings, off the DOM. */
const keys = new WeakMap<Node, string>();

/**
 * Attributes the person changes by interacting, not the view: never removed by a patch.
 * (`<details open>` toggles when the person opens it; the view's tree does not know.)
 */
const PERSON_OWNED: Record<string, readonly string[]> = { DETAILS: ['open'], DIALOG: ['open'] };

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (name === 'key') keys.set(el, String(value));
    else if (name === 'class') el.className = String(value);
    else el.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    el.append(typeof child === 'string' ? document.createTextNode(child) : child);
  }
  return el;
}

/** Sets an element's text, writing only when it differs (keeps a selection inside it). */
export function setText(el: Element, text: string): void {
  const only = el.childNodes.length === 1 ? el.firstChild : null;
  if (only instanceof Text) {
    if (only.data !== text) only.data = text;
  } else if (el.textContent !== text) {
    el.textContent = text;
  }
}

/**
 * Makes `parent`'s children look like `wanted`, reusing the nodes already there:
 * a node of `wanted` that is already a child of `parent` is kept as it is; otherwise a child
 * with the same key (`h`'s `key`, else its `id`) and tag is patched to match; unkeyed nodes
 * pair up by position among the unkeyed ones. Nodes are moved only when out of order. Focus
 * and the text selection are put back if a move took them away.
 */
export function patchChildren(parent: Element, wanted: readonly Node[]): void {
  const focused = document.activeElement;
  const selection = saveSelection();
  reconcile(parent, wanted);
  if (focused instanceof HTMLElement && focused !== document.activeElement && focused.isConnected) {
    focused.focus({ preventScroll: true });
  }
  restoreSelection(selection);
}

function keyOf(node: Node): string | undefined {
  const key = keys.get(node);
  if (key !== undefined) return key;
  return node instanceof Element && node.id ? `#${node.id}` : undefined;
}

function sameKind(a: Node, b: Node): boolean {
  return a.nodeType === b.nodeType && a.nodeName === b.nodeName;
}

function reconcile(parent: Element, wanted: readonly Node[]): void {
  const old = [...parent.childNodes];
  const byKey = new Map<string, Node>();
  const unkeyed: Node[] = [];
  for (const node of old) {
    const key = keyOf(node);
    if (key === undefined) unkeyed.push(node);
    else if (!byKey.has(key)) byKey.set(key, node);
  }
  // Nodes wanted as themselves are spoken for: never patched to look like another node.
  const kept = new Set<Node>(wanted.filter((want) => want.parentNode === parent));
  let nextUnkeyed = 0;
  const placed = wanted.map((want) => {
    if (want.parentNode === parent) return want;
    const key = keyOf(want);
    const candidate = key === undefined ? unkeyed[nextUnkeyed++] : byKey.get(key);
    if (!candidate || kept.has(candidate) || !sameKind(candidate, want)) return want;
    kept.add(candidate);
    morphNode(candidate, want);
    return candidate;
  });
  for (const node of old) if (!kept.has(node)) node.remove();
  let cursor = parent.firstChild;
  for (const node of placed) {
    if (node === cursor) cursor = cursor.nextSibling;
    else parent.insertBefore(node, cursor);
  }
}

function morphNode(target: Node, source: Node): void {
  if (target instanceof CharacterData && source instanceof CharacterData) {
    if (target.data !== source.data) target.data = source.data;
    return;
  }
  if (!(target instanceof Element) || !(source instanceof Element)) return;
  const keep = PERSON_OWNED[target.nodeName] ?? [];
  for (const { name } of [...target.attributes]) {
    if (!source.hasAttribute(name) && !keep.includes(name)) target.removeAttribute(name);
  }
  for (const { name, value } of [...source.attributes]) {
    if (keep.includes(name)) continue;
    if (target.getAttribute(name) !== value) target.setAttribute(name, value);
  }
  reconcile(target, [...source.childNodes]);
}

interface SavedSelection {
  anchor: Node;
  anchorOffset: number;
  focus: Node;
  focusOffset: number;
}

function saveSelection(): SavedSelection | null {
  // A text field keeps its own caret and selection; the document's says nothing useful then.
  const active = document.activeElement;
  if (active instanceof HTMLInputElement || active instanceof HTMLTextAreaElement) return null;
  const sel = document.getSelection();
  if (!sel?.anchorNode || !sel.focusNode || sel.rangeCount === 0) return null;
  return { anchor: sel.anchorNode, anchorOffset: sel.anchorOffset, focus: sel.focusNode, focusOffset: sel.focusOffset };
}

function restoreSelection(saved: SavedSelection | null): void {
  if (!saved || !saved.anchor.isConnected || !saved.focus.isConnected) return;
  const sel = document.getSelection();
  if (!sel) return;
  const same =
    sel.anchorNode === saved.anchor &&
    sel.anchorOffset === saved.anchorOffset &&
    sel.focusNode === saved.focus &&
    sel.focusOffset === saved.focusOffset;
  if (same) return;
  const clamp = (node: Node, offset: number) =>
    Math.min(offset, node instanceof CharacterData ? node.length : node.childNodes.length);
  sel.setBaseAndExtent(
    saved.anchor,
    clamp(saved.anchor, saved.anchorOffset),
    saved.focus,
    clamp(saved.focus, saved.focusOffset),
  );
}

/** `2026-10-01T09:00:00Z` → local `HH:MM` today, else `D Mon HH:MM`. */
export function when(iso: string | null | undefined, now: Date = new Date()): string {
  if (!iso) return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const time = d.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' });
  if (d.toDateString() === now.toDateString()) return time;
  const day = d.toLocaleDateString(undefined, { day: 'numeric', month: 'short' });
  return `${day} ${time}`;
}

/**
 * A badge: a label (`labels.ts`, never a raw enum word) with a state class for colour, and
 * the raw word, when there is one, in `data-state` for styles and tests.
 */
export function badge(label: string, tone: 'good' | 'warn' | 'bad' | 'neutral', state?: string): HTMLSpanElement {
  return h(
    'span',
    state === undefined ? { class: `badge ${tone}` } : { class: `badge ${tone}`, 'data-state': state },
    label,
  );
}
