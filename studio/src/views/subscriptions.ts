/**
 * Subscriptions: every URI a client holds a subscription for, with its logical owners
 * (`manual`, each event source) and a timeline of the `resources/updated` seen for it, live;
 * and the clients' stream changes (connected, reconnected with `resumed`, disconnected).
 */

import { get, type Lifecycle, type ResourceUpdate } from '../api.js';
import { h, replace, time } from '../dom.js';
import type { ViewContext } from '../main.js';

interface Subscriptions {
  clients: {
    namespace: string;
    subscriptions: { uri: string; owners: string[]; updates: ResourceUpdate[] }[];
  }[];
  lifecycle: Lifecycle[];
}

const MAX_MARKS = 50;

export function subscriptionsView(root: HTMLElement, { live }: ViewContext): () => void {
  const body = h('div', null, h('p', { class: 'dim' }, 'Loading…'));
  replace(root, h('h1', null, 'Subscriptions'), body);
  let data: Subscriptions | undefined;
  let seen = live.received.updates;
  let seenLifecycle = live.received.lifecycle;
  const timelines = new Map<string, HTMLElement>();

  const load = async (): Promise<void> => {
    data = await get<Subscriptions>('subscriptions');
    seen = live.received.updates;
    seenLifecycle = live.received.lifecycle;
    draw();
  };
  const draw = (): void => {
    if (!data) return;
    timelines.clear();
    replace(
      body,
      data.clients.map((client) =>
        h(
          'section',
          { class: 'card' },
          h('h2', null, client.namespace),
          client.subscriptions.length === 0
            ? h('p', { class: 'dim' }, 'No subscriptions held.')
            : h(
                'table',
                null,
                h(
                  'thead',
                  null,
                  h('tr', null, h('th', null, 'URI'), h('th', null, 'owners'), h('th', null, 'updates')),
                ),
                h(
                  'tbody',
                  null,
                  client.subscriptions.map((s) => {
                    const marks = h('div', { class: 'timeline', 'data-timeline': s.uri });
                    timelines.set(`${client.namespace} ${s.uri}`, marks);
                    for (const update of s.updates.slice(-MAX_MARKS)) addMark(marks, update);
                    return h(
                      'tr',
                      { 'data-uri': s.uri },
                      h('td', null, h('code', null, s.uri)),
                      h(
                        'td',
                        null,
                        s.owners.map((owner) => h('span', { class: 'badge' }, owner)),
                      ),
                      h('td', null, marks),
                    );
                  }),
                ),
              ),
        ),
      ),
      h('h2', null, 'Streams'),
      data.lifecycle.length === 0
        ? h('p', { class: 'dim' }, 'No stream changes seen since the studio started.')
        : null,
      h(
        'ul',
        { class: 'log', 'data-lifecycle': 'true' },
        data.lifecycle
          .slice(-50)
          .reverse()
          .map((entry) =>
            h(
              'li',
              null,
              h('span', { class: 'dim' }, time(entry.at)),
              ` ${entry.namespace} ${entry.state}`,
              entry.resumed === undefined ? '' : ` resumed: ${entry.resumed}`,
              entry.error ? h('span', { class: 'error' }, ` ${entry.error}`) : null,
            ),
          ),
      ),
    );
  };
  void load().catch((error: Error) => replace(body, h('p', { class: 'error' }, error.message)));
  return live.listen(() => {
    const fresh = Math.min(live.received.updates - seen, live.updates.length);
    if (live.received.lifecycle !== seenLifecycle) {
      void load();
      return;
    }
    if (fresh <= 0) return;
    seen = live.received.updates;
    for (const update of live.updates.slice(0, fresh).reverse()) {
      const marks = timelines.get(`${update.namespace} ${update.uri}`);
      if (!marks) {
        // A URI subscribed since the page loaded.
        void load();
        return;
      }
      addMark(marks, update);
    }
  });
}

function addMark(marks: HTMLElement, update: ResourceUpdate): void {
  marks.appendChild(h('span', { class: 'mark', title: update.eventId ?? '' }, time(update.at)));
  while (marks.childElementCount > MAX_MARKS) marks.firstElementChild?.remove();
}
