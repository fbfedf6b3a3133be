/**
 * Servers: per client its era, protocol version, server info, capabilities, cache hints and
 * catalog counts; then one kind of the catalog at a time, filtered and paged by the server
 * (templates are shown as written, never expanded). `#/servers/<namespace>/<kind>`.
 */

import { get, seg } from '../api.js';
import { h, jsonTree, replace } from '../dom.js';
import type { ViewContext } from '../main.js';

interface ServerSummary {
  namespace: string;
  era?: string;
  protocolVersion?: string;
  serverInfo?: { name?: string; version?: string; title?: string } | null;
  capabilities?: Record<string, unknown>;
  instructions?: string | null;
  revision?: number;
  counts?: Record<string, number>;
  cache?: Record<string, unknown>;
  error?: { code?: string; message: string };
}

type Item = Record<string, unknown>;

const KINDS: [string, string][] = [
  ['tools', 'Tools'],
  ['prompts', 'Prompts'],
  ['resources', 'Resources'],
  ['resourceTemplates', 'Templates'],
];
const PAGE = 50;

const str = (value: unknown): string => (typeof value === 'string' ? value : '');

export function serversView(root: HTMLElement, { params }: ViewContext): undefined {
  const [namespace, kindParam] = params;
  const list = h('div', { class: 'servers' }, h('p', { class: 'dim' }, 'Loading…'));
  replace(root, h('h1', null, 'Servers'), list);
  get<{ servers: ServerSummary[] }>('servers').then(
    ({ servers }) => {
      if (servers.length === 0) {
        replace(list, h('p', { class: 'dim' }, 'No clients were given to the studio.'));
        return;
      }
      const chosen = servers.find((s) => s.namespace === namespace) ?? servers[0];
      replace(
        list,
        h(
          'div',
          { class: 'tabs' },
          servers.map((s) =>
            h(
              'a',
              {
                href: `#/servers/${seg(s.namespace)}`,
                class: s === chosen ? 'active' : '',
                'data-server': s.namespace,
              },
              s.namespace,
            ),
          ),
        ),
        chosen
          ? serverCard(chosen, KINDS.some(([k]) => k === kindParam) ? (kindParam as string) : 'tools')
          : null,
      );
    },
    (error: Error) => replace(list, h('p', { class: 'error' }, error.message)),
  );
  return undefined;
}

function serverCard(server: ServerSummary, kind: string): HTMLElement {
  if (server.error) {
    return h(
      'section',
      { class: 'card' },
      h('h2', null, server.namespace),
      h('p', { class: 'error' }, `${server.error.code ?? 'error'}: ${server.error.message}`),
    );
  }
  const info = server.serverInfo;
  const catalog = h('div', { class: 'catalog' });
  const card = h(
    'section',
    { class: 'card', 'data-namespace': server.namespace },
    h('h2', null, server.namespace),
    h(
      'dl',
      { class: 'facts' },
      h('dt', null, 'era'),
      h('dd', { 'data-field': 'era' }, server.era ?? '?'),
      h('dt', null, 'protocol'),
      h('dd', null, server.protocolVersion ?? '?'),
      h('dt', null, 'server'),
      h('dd', null, info ? `${str(info.title) || str(info.name)} ${str(info.version)}` : '—'),
      h('dt', null, 'catalog revision'),
      h('dd', null, String(server.revision ?? 0)),
    ),
    server.instructions ? h('pre', { class: 'instructions' }, server.instructions) : null,
    h('div', { class: 'row' }, jsonTree(server.capabilities ?? {}, 'capabilities', false)),
    h('div', { class: 'row' }, jsonTree(server.cache ?? {}, 'cache hints', false)),
    h(
      'div',
      { class: 'tabs' },
      KINDS.map(([id, label]) =>
        h(
          'a',
          {
            href: `#/servers/${seg(server.namespace)}/${id}`,
            class: id === kind ? 'active' : '',
            'data-kind': id,
          },
          `${label} (${server.counts?.[id] ?? 0})`,
        ),
      ),
    ),
    catalog,
  );
  catalogList(catalog, server.namespace, kind);
  return card;
}

function catalogList(holder: HTMLElement, namespace: string, kind: string): void {
  let offset = 0;
  let query = '';
  const rows = h('div', { class: 'items' });
  const pager = h('div', { class: 'pager' });
  const filter = h('input', {
    type: 'search',
    placeholder: 'filter by name or description',
    'data-filter': kind,
    oninput: () => {
      query = filter.value;
      offset = 0;
      void load();
    },
  });
  replace(holder, filter, pager, rows);
  const move = (by: number): void => {
    offset = Math.max(0, offset + by);
    void load();
  };
  const load = async (): Promise<void> => {
    const q = new URLSearchParams({ offset: String(offset), limit: String(PAGE), q: query });
    const page = await get<{ total: number; offset: number; items: Item[] }>(
      `servers/${seg(namespace)}/${kind}?${q}`,
    );
    replace(
      pager,
      h('button', { type: 'button', disabled: offset === 0, onclick: () => move(-PAGE) }, '‹ prev'),
      h(
        'span',
        { class: 'dim', 'data-total': page.total },
        ` ${page.total === 0 ? 0 : offset + 1}–${Math.min(offset + PAGE, page.total)} of ${page.total} `,
      ),
      h(
        'button',
        {
          type: 'button',
          disabled: offset + PAGE >= page.total,
          onclick: () => move(PAGE),
        },
        'next ›',
      ),
    );
    replace(
      rows,
      page.items.map((item) => itemRow(namespace, kind, item)),
    );
  };
  void load().catch((error: Error) => replace(rows, h('p', { class: 'error' }, error.message)));
}

function itemRow(namespace: string, kind: string, item: Item): HTMLElement {
  const name = str(
    kind === 'resources' ? item.uri : kind === 'resourceTemplates' ? item.uriTemplate : item.name,
  );
  const annotations = (item.annotations ?? {}) as Record<string, unknown>;
  const badges = [
    annotations.readOnlyHint === true ? h('span', { class: 'badge' }, 'read-only') : null,
    annotations.destructiveHint === true ? h('span', { class: 'badge danger' }, 'destructive') : null,
    annotations.idempotentHint === true ? h('span', { class: 'badge' }, 'idempotent') : null,
  ];
  return h(
    'details',
    { class: 'item', 'data-item': name },
    h(
      'summary',
      null,
      h('code', null, name),
      ' ',
      str(item.title) ? h('span', null, str(item.title)) : null,
      ' ',
      badges,
      kind === 'tools' ? h('a', { href: `#/try/${seg(namespace)}/${seg(name)}`, class: 'try' }, 'try') : null,
    ),
    h('p', { class: 'description', 'data-description': name }, str(item.description)),
    jsonTree(item, kind.replace(/s$/, ''), false),
  );
}
