/**
 * Subscriptions: every URI a client holds a subscription for, with its logical owners
 * (`manual`, each event source) and a timeline of the `resources/updated` seen for it, live;
 * and the clients' stream changes (connected, reconnected with `resumed`, disconnected).
 */

import type { VNode } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { get, type Lifecycle, type ResourceUpdate } from '../api.js';
import type { ViewProps } from '../main.js';
import { messageOf, Status, time } from '../ui.js';

interface Subscriptions {
  clients: {
    namespace: string;
    subscriptions: { uri: string; owners: string[]; updates: ResourceUpdate[] }[];
  }[];
  lifecycle: Lifecycle[];
}

const MAX_MARKS = 50;

export function SubscriptionsView({ live }: ViewProps): VNode {
  const [data, setData] = useState<Subscriptions>();
  const [error, setError] = useState<string>();
  // What the stream brought since the last load, per `namespace uri`; bounded like the timeline.
  const [fresh, setFresh] = useState(new Map<string, ResourceUpdate[]>());
  const seen = useRef({ updates: live.received.updates, lifecycle: live.received.lifecycle });
  const drawnAt = live.version;

  const load = (): void => {
    seen.current = { updates: live.received.updates, lifecycle: live.received.lifecycle };
    get<Subscriptions>('subscriptions').then(
      (body) => {
        setFresh(new Map());
        setData(body);
      },
      (failure: unknown) => setError(messageOf(failure)),
    );
  };
  useEffect(load, []);
  useEffect(
    () =>
      live.listen(() => {
        if (live.received.lifecycle !== seen.current.lifecycle) return load();
        const count = Math.min(live.received.updates - seen.current.updates, live.updates.length);
        if (count <= 0 || !data) return;
        seen.current.updates = live.received.updates;
        const known = new Set(
          data.clients.flatMap((c) => c.subscriptions.map((s) => `${c.namespace} ${s.uri}`)),
        );
        const next = new Map(fresh);
        for (const update of live.updates.slice(0, count).reverse()) {
          const key = `${update.namespace} ${update.uri}`;
          // A URI subscribed since the page loaded.
          if (!known.has(key)) return load();
          next.set(key, [...(next.get(key) ?? []), update].slice(-MAX_MARKS));
        }
        setFresh(next);
      }, drawnAt),
    [data, fresh],
  );

  if (!data)
    return (
      <>
        <h1>Subscriptions</h1>
        <Status loading error={error} />
      </>
    );
  return (
    <>
      <h1>Subscriptions</h1>
      {data.clients.map((client) => (
        <section key={client.namespace} class="card">
          <h2>{client.namespace}</h2>
          {client.subscriptions.length === 0 ? (
            <p class="dim">No subscriptions held.</p>
          ) : (
            <table>
              <thead>
                <tr>
                  <th>URI</th>
                  <th>owners</th>
                  <th>updates</th>
                </tr>
              </thead>
              <tbody>
                {client.subscriptions.map((s) => {
                  const marks = [...s.updates, ...(fresh.get(`${client.namespace} ${s.uri}`) ?? [])].slice(
                    -MAX_MARKS,
                  );
                  return (
                    <tr key={s.uri} data-uri={s.uri}>
                      <td>
                        <code>{s.uri}</code>
                      </td>
                      <td>
                        {s.owners.map((owner) => (
                          <span key={owner} class="badge">
                            {owner}
                          </span>
                        ))}
                      </td>
                      <td>
                        <div class="timeline" data-timeline={s.uri}>
                          {marks.map((update, i) => (
                            <span key={i} class="mark" title={update.eventId ?? ''}>
                              {time(update.at)}
                            </span>
                          ))}
                        </div>
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          )}
        </section>
      ))}
      <h2>Streams</h2>
      {data.lifecycle.length === 0 ? (
        <p class="dim">No stream changes seen since the studio started.</p>
      ) : null}
      <ul class="log" data-lifecycle="true">
        {data.lifecycle
          .slice(-50)
          .reverse()
          .map((entry, i) => (
            <li key={i}>
              <span class="dim">{time(entry.at)}</span>
              {` ${entry.namespace} ${entry.state}`}
              {entry.resumed === undefined ? '' : ` resumed: ${entry.resumed}`}
              {entry.error ? <span class="error"> {entry.error}</span> : null}
            </li>
          ))}
      </ul>
    </>
  );
}
