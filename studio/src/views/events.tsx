/**
 * Events: the live stream of events published into the runtime, newest first, in a
 * virtualized list redrawn at most once per frame (only the rows in view are in the page,
 * however fast events come); and for the selected one its envelope, identity and trust, the
 * decision of every route (`explain()`), and links to the runs its deliveries became.
 * `#/events/<seq>`.
 */

import type { VNode } from 'preact';
import type { EventRecord } from '../api.js';
import type { ViewProps } from '../main.js';
import { JsonTree, time, useLive, VirtualList } from '../ui.js';

const ROW = 28;

function identityText(identity: Record<string, unknown>): string {
  const parts = Object.entries(identity).map(([key, value]) => `${key}=${String(value)}`);
  return parts.length === 0 ? 'anonymous' : parts.join(' ');
}

function EventRow(props: { record: EventRecord; active: boolean }): VNode {
  const { record } = props;
  const matched = record.decisions?.filter((d) => d.matches).length;
  return (
    <a
      href={`#/events/${record.seq}`}
      class={`event-row${props.active ? ' active' : ''}`}
      data-seq={record.seq}
      data-type={record.event.type ?? ''}
    >
      <span class="dim">{time(record.at)}</span>
      <span class="etype">{record.event.type ?? '?'}</span>
      <span class="esubject">{record.event.subject ?? record.event.source ?? ''}</span>
      <span class={`trust trust-${record.trust}`}>{record.trust}</span>
      <span class="dim">
        {matched === undefined ? 'not explained' : `${matched} route${matched === 1 ? '' : 's'}`}
      </span>
    </a>
  );
}

export function EventsView({ live, params }: ViewProps): VNode {
  useLive(live);
  const selected = params[0] === undefined ? undefined : Number(params[0]);
  const events = live.events;
  const record = selected === undefined ? undefined : events.find((r) => r.seq === selected);
  return (
    <>
      <h1>
        Events{' '}
        <span class="dim">
          {`${events.length} shown${live.dropped ? `, ${live.dropped} dropped by the stream` : ''}`}
        </span>
      </h1>
      <div class="split">
        <VirtualList
          label="events"
          count={events.length}
          rowHeight={ROW}
          height={520}
          row={(i) => {
            const item = events[i] as EventRecord;
            return <EventRow record={item} active={item.seq === selected} />;
          }}
        />
        {record ? (
          <EventDetail key={record.seq} record={record} />
        ) : (
          <div class="detail" data-detail="none">
            <p class="dim">{selected === undefined ? 'Select an event.' : 'No longer in the buffer.'}</p>
          </div>
        )}
      </div>
    </>
  );
}

function EventDetail({ record }: { record: EventRecord }): VNode {
  const decisions = record.decisions;
  const deliveries = record.receipt?.deliveryIds ?? [];
  return (
    <div class="detail" data-detail={String(record.seq)}>
      <h2>{record.event.type ?? '?'}</h2>
      <dl class="facts">
        <dt>id</dt>
        <dd>{record.event.id ?? ''}</dd>
        <dt>source</dt>
        <dd>{record.event.source ?? ''}</dd>
        <dt>subject</dt>
        <dd>{record.event.subject ?? '—'}</dd>
        <dt>identity</dt>
        <dd data-field="identity">{identityText(record.identity)}</dd>
        <dt>trust</dt>
        <dd data-field="trust">{record.trust}</dd>
        <dt>outcome</dt>
        <dd>
          {record.error ? (
            <span class="error">{`${record.error.code ?? record.error.name}: ${record.error.message}`}</span>
          ) : record.receipt?.duplicate ? (
            'duplicate'
          ) : (
            'published'
          )}
        </dd>
      </dl>
      <h3>Routing decisions</h3>
      {decisions === null ? (
        <p class="dim">Not explained: the studio was busy with other events.</p>
      ) : decisions.length === 0 ? (
        <p class="dim">No routes.</p>
      ) : (
        <table class="decisions">
          <thead>
            <tr>
              <th>route</th>
              <th>decision</th>
              <th>why not</th>
            </tr>
          </thead>
          <tbody>
            {decisions.map((d) => (
              <tr key={d.routeId} data-route={d.routeId} data-matches={String(d.matches)}>
                <td>
                  <code>{d.routeId}</code>
                </td>
                <td class={d.matches ? 'ok' : 'dim'}>{d.matches ? '✓ takes it' : '· skips it'}</td>
                <td>{d.reason ? `${d.reason.code}: ${d.reason.message}` : ''}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <h3>Runs</h3>
      {deliveries.length === 0 ? (
        <p class="dim">No deliveries.</p>
      ) : (
        <ul>
          {deliveries.map((id) => (
            <li key={id}>
              <a href={`#/runs/${encodeURIComponent(id)}`} data-run-link={id}>
                {id}
              </a>
            </li>
          ))}
        </ul>
      )}
      {record.dataBytes ? <p class="dim">{`data: ${record.dataBytes} bytes, not kept`}</p> : null}
      <JsonTree value={record.event} label="event" open={false} />
      {record.correlation.length > 0 ? (
        <JsonTree value={record.correlation} label="correlation" open={false} />
      ) : null}
    </div>
  );
}
