/**
 * The whole rendering layer: `h()` builds elements with properties and children, and every
 * string child becomes a text node. Nothing here, or anywhere in the page, sets HTML from a
 * string: what a server sends (descriptions, results, URIs) can only ever be text.
 */

export type Child = Node | string | number | boolean | null | undefined | Child[];
type Handler = (event: Event) => void;
export type Props = Record<string, string | number | boolean | Handler | null | undefined>;

/** `href` only to routes of this page; `src` only to inline images and audio. */
function safeAttribute(name: string, value: string): boolean {
  if (name === 'href') return value.startsWith('#');
  if (name === 'src')
    return /^data:(image\/(png|jpeg|gif|webp)|audio\/[a-z0-9.+-]+);base64,[A-Za-z0-9+/=]*$/.test(value);
  return !name.startsWith('on') && name !== 'style' && name !== 'srcdoc';
}

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props?: Props | null,
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(props ?? {})) {
    if (value === null || value === undefined || value === false) continue;
    if (typeof value === 'function') {
      if (name.startsWith('on')) element.addEventListener(name.slice(2).toLowerCase(), value);
    } else if (name === 'class') element.className = String(value);
    else if (name === 'value' && 'value' in element) (element as HTMLInputElement).value = String(value);
    else if (name === 'checked' && element instanceof HTMLInputElement) element.checked = value === true;
    else {
      const text = value === true ? '' : String(value);
      if (safeAttribute(name, text)) element.setAttribute(name, text);
    }
  }
  append(element, children);
  return element;
}

export function append(parent: Node, children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false || child === true) continue;
    if (Array.isArray(child)) append(parent, child);
    else if (child instanceof Node) parent.appendChild(child);
    else parent.appendChild(document.createTextNode(String(child)));
  }
}

/** Replace everything inside `parent`. */
export function replace(parent: Element, ...children: Child[]): void {
  parent.replaceChildren();
  append(parent, children);
}

export function time(at: number): string {
  return new Date(at).toISOString().slice(11, 23);
}

const MAX_CHILDREN = 200;

/** A JSON value as a collapsible tree of text. */
export function jsonTree(value: unknown, label?: string, open = true, depth = 0): HTMLElement {
  const name = label === undefined ? null : h('span', { class: 'key' }, label, ': ');
  if (value === null || typeof value !== 'object') {
    const kind = value === null ? 'null' : typeof value;
    return h(
      'div',
      { class: 'leaf' },
      name,
      h('span', { class: `v-${kind}` }, JSON.stringify(value) ?? 'undefined'),
    );
  }
  const entries = Array.isArray(value)
    ? value.map((v, i) => [String(i), v] as const)
    : Object.entries(value as Record<string, unknown>);
  const summary = Array.isArray(value) ? `[${entries.length}]` : `{${entries.length}}`;
  const shown = entries.slice(0, MAX_CHILDREN);
  return h(
    'details',
    { class: 'tree', open: open && depth < 3 },
    h('summary', null, name, h('span', { class: 'dim' }, summary)),
    shown.map(([k, v]) => jsonTree(v, k, open, depth + 1)),
    entries.length > shown.length
      ? h('div', { class: 'dim' }, `… ${entries.length - shown.length} more`)
      : null,
  );
}

/** A button that asks once more, in place, before it acts. */
export function confirmButton(label: string, question: string, act: () => Promise<void>): HTMLElement {
  const holder = h('span', { class: 'confirm' });
  const initial = (): void =>
    replace(
      holder,
      h('button', { type: 'button', class: 'danger', 'data-action': label, onclick: () => ask() }, label),
    );
  const ask = (): void =>
    replace(
      holder,
      h('span', { class: 'question' }, question, ' '),
      h(
        'button',
        {
          type: 'button',
          class: 'danger',
          'data-confirm': label,
          onclick: async () => {
            replace(holder, h('span', { class: 'dim' }, '…'));
            try {
              await act();
              initial();
            } catch (error) {
              replace(
                holder,
                h('span', { class: 'error' }, error instanceof Error ? error.message : String(error)),
              );
            }
          },
        },
        'Yes',
      ),
      ' ',
      h('button', { type: 'button', onclick: () => initial() }, 'No'),
    );
  initial();
  return holder;
}

/**
 * A list that renders only the rows in view: fixed row height, one spacer, rows placed
 * absolutely. Thousands of rows stay as cheap as the thirty on screen.
 */
export class VirtualList<T> {
  readonly element: HTMLElement;
  readonly #spacer: HTMLElement;
  readonly #rowHeight: number;
  readonly #render: (item: T, index: number) => HTMLElement;
  #items: readonly T[] = [];
  #frame = 0;

  constructor(options: {
    rowHeight: number;
    height: number;
    render: (item: T, index: number) => HTMLElement;
  }) {
    this.#rowHeight = options.rowHeight;
    this.#render = options.render;
    this.#spacer = h('div', { class: 'vspacer' });
    this.element = h('div', { class: 'vlist', 'data-virtual': 'true' }, this.#spacer);
    this.element.style.height = `${options.height}px`;
    this.element.addEventListener('scroll', () => this.#schedule());
  }

  set items(items: readonly T[]) {
    this.#items = items;
    this.#schedule();
  }

  #schedule(): void {
    if (this.#frame !== 0) return;
    this.#frame = requestAnimationFrame(() => {
      this.#frame = 0;
      this.draw();
    });
  }

  draw(): void {
    const top = this.element.scrollTop;
    const height = this.element.clientHeight || Number.parseInt(this.element.style.height, 10);
    const first = Math.max(0, Math.floor(top / this.#rowHeight) - 5);
    const last = Math.min(this.#items.length, Math.ceil((top + height) / this.#rowHeight) + 5);
    this.#spacer.style.height = `${this.#items.length * this.#rowHeight}px`;
    const rows: HTMLElement[] = [];
    for (let i = first; i < last; i++) {
      const row = this.#render(this.#items[i] as T, i);
      row.classList.add('vrow');
      row.style.top = `${i * this.#rowHeight}px`;
      row.style.height = `${this.#rowHeight}px`;
      rows.push(row);
    }
    this.#spacer.replaceChildren(...rows);
  }
}
