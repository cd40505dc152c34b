import { beforeEach, describe, expect, it } from 'vitest';
import { h, patchChildren, setText } from '../../src/dom';

let root: HTMLElement;
beforeEach(() => {
  document.body.innerHTML = '<div id="root"></div>';
  root = document.getElementById('root')!;
});

const list = (items: Array<[string, string]>) =>
  items.map(([key, text]) => h('li', { key, 'data-item': key }, h('button', { type: 'button' }, text)));

describe('patchChildren', () => {
  it('keeps matching nodes and writes only what changed', () => {
    patchChildren(root, [h('p', { class: 'a', title: 'old' }, 'one'), h('p', {}, 'two')]);
    const [first, second] = [...root.children];
    const text = first!.firstChild;
    patchChildren(root, [h('p', { class: 'b' }, 'one'), h('p', {}, 'deux'), h('p', {}, 'three')]);
    expect(root.children[0]).toBe(first);
    expect(root.children[0]!.firstChild).toBe(text);
    expect(first!.className).toBe('b');
    expect(first!.hasAttribute('title')).toBe(false);
    expect(root.children[1]).toBe(second);
    expect(second!.textContent).toBe('deux');
    expect([...root.children].map((c) => c.textContent)).toEqual(['one', 'deux', 'three']);
  });

  it('matches keyed children across a reorder, an insertion and a removal', () => {
    patchChildren(
      root,
      list([
        ['a', 'A'],
        ['b', 'B'],
        ['c', 'C'],
      ]),
    );
    const [a, b, c] = [...root.children];
    patchChildren(
      root,
      list([
        ['c', 'C!'],
        ['x', 'X'],
        ['a', 'A'],
      ]),
    );
    expect([...root.children].map((e) => e.getAttribute('data-item'))).toEqual(['c', 'x', 'a']);
    expect(root.children[0]).toBe(c);
    expect(root.children[2]).toBe(a);
    expect(b!.isConnected).toBe(false);
    expect(c!.textContent).toBe('C!');
  });

  it('replaces a node whose tag changed instead of patching it into another element', () => {
    patchChildren(root, [h('dl', {}, 'facts')]);
    const dl = root.firstChild;
    patchChildren(root, [h('p', {}, 'reason')]);
    expect(root.firstChild).not.toBe(dl);
    expect(root.innerHTML).toBe('<p>reason</p>');
  });

  it('keeps focus on a button that had to move', () => {
    patchChildren(
      root,
      list([
        ['a', 'A'],
        ['b', 'B'],
        ['c', 'C'],
      ]),
    );
    const button = root.querySelector<HTMLButtonElement>('[data-item="a"] button')!;
    button.focus();
    patchChildren(
      root,
      list([
        ['b', 'B'],
        ['c', 'C'],
        ['a', 'A moved'],
      ]),
    );
    expect(root.lastElementChild!.getAttribute('data-item')).toBe('a');
    expect(button.textContent).toBe('A moved');
    expect(document.activeElement).toBe(button);
  });

  it('keeps a text selection across a patch that moves its node', () => {
    patchChildren(
      root,
      list([
        ['a', 'alpha'],
        ['b', 'bravo'],
      ]),
    );
    const text = root.querySelector('[data-item="b"] button')!.firstChild!;
    document.getSelection()!.setBaseAndExtent(text, 1, text, 4);
    expect(document.getSelection()!.toString()).toBe('rav');
    patchChildren(
      root,
      list([
        ['b', 'bravo'],
        ['a', 'alpha'],
        ['c', 'charlie'],
      ]),
    );
    expect(document.getSelection()!.toString()).toBe('rav');
    expect(document.getSelection()!.anchorNode).toBe(text);
  });

  it('leaves a disclosure open that the person opened', () => {
    const details = () => h('details', { key: 'd' }, h('summary', {}, 'More'), h('p', {}, 'body'));
    patchChildren(root, [details()]);
    const el = root.querySelector('details')!;
    el.open = true;
    patchChildren(root, [details()]);
    expect(root.querySelector('details')).toBe(el);
    expect(el.open).toBe(true);
  });

  it('reuses a node passed as itself and never patches another node to look like it', () => {
    const keep = h('tr', {}, h('td', {}, 'kept'));
    patchChildren(root, [keep, h('tr', {}, h('td', {}, 'leaving'))]);
    patchChildren(root, [h('tr', {}, h('td', {}, 'fresh')), keep]);
    expect(root.children).toHaveLength(2);
    expect(root.children[1]).toBe(keep);
    expect(keep.textContent).toBe('kept');
    expect(root.children[0]!.textContent).toBe('fresh');
  });
});

describe('setText', () => {
  it('edits the one text node in place', () => {
    const p = h('p', {}, 'before');
    const text = p.firstChild;
    setText(p, 'after');
    expect(p.firstChild).toBe(text);
    expect(p.textContent).toBe('after');
    const mixed = h('p', {}, h('b', {}, 'x'), 'y');
    setText(mixed, 'plain');
    expect(mixed.innerHTML).toBe('plain');
  });
});
