// Browser side of the console: a few DOM builders. Text always goes in as text nodes, never as HTML, so
// addresses, reasons and other strings from the API cannot inject markup.
/// <reference lib="dom" />

export type Child = Node | string | number | null | undefined | false;
export type Attrs = Readonly<Record<string, string | number | boolean | undefined>>;

export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === false) continue;
    node.setAttribute(name, value === true ? '' : String(value));
  }
  append(node, children);
  return node;
}

export function append(parent: Node, children: readonly Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(
      typeof child === 'string' || typeof child === 'number' ? document.createTextNode(String(child)) : child,
    );
  }
}

/** Replaces the content of the element with id `id`. */
export function replace(id: string, ...children: Child[]): void {
  const target = byId(id);
  target.replaceChildren();
  append(target, children);
}

export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const node = document.getElementById(id);
  if (node === null) throw new Error(`the console page has no element #${id}`);
  return node as T;
}

export function table(
  headers: readonly string[],
  rows: ReadonlyArray<readonly Child[]>,
  attrs: Attrs = {},
): HTMLTableElement {
  return el(
    'table',
    attrs,
    el('thead', {}, el('tr', {}, ...headers.map((header) => el('th', {}, header)))),
    el('tbody', {}, ...rows.map((cells) => el('tr', {}, ...cells.map((cell) => el('td', {}, cell))))),
  );
}

export function button(label: string, onClick: () => void, attrs: Attrs = {}): HTMLButtonElement {
  const node = el('button', { type: 'button', ...attrs }, label);
  node.addEventListener('click', onClick);
  return node;
}

export function badge(label: string, kind = '', title?: string): HTMLSpanElement {
  return el('span', { class: `badge ${kind}`.trim(), title }, label);
}
