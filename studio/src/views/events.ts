/**
 * Events: the live stream of events published into the runtime, newest first, in a
 * virtualized list redrawn at most once per frame; and for the selected one its envelope,
 * identity and trust, the decision of every route (`explain()`), and links to the runs its
 * deliveries became. `#/events/<seq>`.
 */

import type { EventRecord } from '../api.js';
import { h, jsonTree, replace, time, VirtualList } from '../dom.js';
import type { ViewContext } from '../main.js';

const ROW = 28;

function identityText(identity: Record<string, unknown>): string {
  const parts = Object.entries(identity).map(([key, value]) => `${key}=${String(value)}`);
  return parts.length === 0 ? 'anonymous' : parts.join(' ');
}

export function eventsView(root: HTMLElement, { live, params }: ViewContext): () => void {
  const selected = params[0] === undefined ? undefined : Number(params[0]);
  const detail = h(
    'div',
    { class: 'detail', 'data-detail': 'none' },
    h('p', { class: 'dim' }, 'Select an event.'),
  );
  const count = h('span', { class: 'dim' });
  const list = new VirtualList<EventRecord>({
    rowHeight: ROW,
    height: 520,
    render: (record) => {
      const matched = record.decisions?.filter((d) => d.matches).length;
      return h(
        'a',
        {
          href: `#/events/${record.seq}`,
          class: `event-row${record.seq === selected ? ' active' : ''}`,
          'data-seq': record.seq,
          'data-type': record.event.type ?? '',
        },
        h('span', { class: 'dim' }, time(record.at)),
        h('span', { class: 'etype' }, record.event.type ?? '?'),
        h('span', { class: 'esubject' }, record.event.subject ?? record.event.source ?? ''),
        h('span', { class: `trust trust-${record.trust}` }, record.trust),
        h(
          'span',
          { class: 'dim' },
          matched === undefined ? 'not explained' : `${matched} route${matched === 1 ? '' : 's'}`,
        ),
      );
    },
  });
  replace(root, h('h1', null, 'Events ', count), h('div', { class: 'split' }, list.element, detail));
  const draw = (): void => {
    count.textContent = `${live.events.length} shown${live.dropped ? `, ${live.dropped} dropped by the stream` : ''}`;
    list.items = live.events;
    const record = live.events.find((r) => r.seq === selected);
    if (record && detail.getAttribute('data-detail') !== String(record.seq)) showDetail(detail, record);
  };
  draw();
  return live.listen(draw);
}

function showDetail(holder: HTMLElement, record: EventRecord): void {
  holder.setAttribute('data-detail', String(record.seq));
  const decisions = record.decisions;
  replace(
    holder,
    h('h2', null, record.event.type ?? '?'),
    h(
      'dl',
      { class: 'facts' },
      h('dt', null, 'id'),
      h('dd', null, record.event.id ?? ''),
      h('dt', null, 'source'),
      h('dd', null, record.event.source ?? ''),
      h('dt', null, 'subject'),
      h('dd', null, record.event.subject ?? '—'),
      h('dt', null, 'identity'),
      h('dd', { 'data-field': 'identity' }, identityText(record.identity)),
      h('dt', null, 'trust'),
      h('dd', { 'data-field': 'trust' }, record.trust),
      h('dt', null, 'outcome'),
      h(
        'dd',
        null,
        record.error
          ? h(
              'span',
              { class: 'error' },
              `${record.error.code ?? record.error.name}: ${record.error.message}`,
            )
          : record.receipt?.duplicate
            ? 'duplicate'
            : 'published',
      ),
    ),
    h('h3', null, 'Routing decisions'),
    decisions === null
      ? h('p', { class: 'dim' }, 'Not explained: the studio was busy with other events.')
      : decisions.length === 0
        ? h('p', { class: 'dim' }, 'No routes.')
        : h(
            'table',
            { class: 'decisions' },
            h(
              'thead',
              null,
              h('tr', null, h('th', null, 'route'), h('th', null, 'decision'), h('th', null, 'why not')),
            ),
            h(
              'tbody',
              null,
              decisions.map((d) =>
                h(
                  'tr',
                  { 'data-route': d.routeId, 'data-matches': String(d.matches) },
                  h('td', null, h('code', null, d.routeId)),
                  h('td', { class: d.matches ? 'ok' : 'dim' }, d.matches ? '✓ takes it' : '· skips it'),
                  h('td', null, d.reason ? `${d.reason.code}: ${d.reason.message}` : ''),
                ),
              ),
            ),
          ),
    h('h3', null, 'Runs'),
    (record.receipt?.deliveryIds ?? []).length === 0
      ? h('p', { class: 'dim' }, 'No deliveries.')
      : h(
          'ul',
          null,
          (record.receipt?.deliveryIds ?? []).map((id) =>
            h('li', null, h('a', { href: `#/runs/${encodeURIComponent(id)}`, 'data-run-link': id }, id)),
          ),
        ),
    record.dataBytes ? h('p', { class: 'dim' }, `data: ${record.dataBytes} bytes, not kept`) : null,
    jsonTree(record.event, 'event', false),
    record.correlation.length > 0 ? jsonTree(record.correlation, 'correlation', false) : null,
  );
}
