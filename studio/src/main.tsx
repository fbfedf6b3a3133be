/**
 * The studio page: a hash router over six views (`#/<view>/<part>/…`). The live stream keeps
 * running across views; each view redraws from it at most once per frame.
 */

import { type FunctionComponent, render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { LiveState } from './api.js';
import { useLive } from './ui.js';
import { EventsView } from './views/events.js';
import { RecordView } from './views/record.js';
import { RunsView } from './views/runs.js';
import { ServersView } from './views/servers.js';
import { SubscriptionsView } from './views/subscriptions.js';
import { TryView } from './views/try.js';

export interface ViewProps {
  live: LiveState;
  /** The route's parts after the view name, decoded. */
  params: string[];
}

const VIEWS: [string, string, FunctionComponent<ViewProps>][] = [
  ['servers', 'Servers', ServersView],
  ['try', 'Try', TryView],
  ['subscriptions', 'Subscriptions', SubscriptionsView],
  ['events', 'Events', EventsView],
  ['runs', 'Runs', RunsView],
  ['record', 'Record', RecordView],
];

function parseHash(): string[] {
  return location.hash
    .replace(/^#\/?/, '')
    .split('/')
    .map((part) => {
      try {
        return decodeURIComponent(part);
      } catch {
        return part;
      }
    });
}

function StreamStatus(props: { live: LiveState }) {
  const { live } = props;
  useLive(live);
  const waiting = live.waiting.length;
  return (
    <>
      {waiting > 0 ? (
        <a class="waiting" href="#/try" data-elicitations={waiting}>
          {`${waiting} elicitation${waiting === 1 ? '' : 's'} waiting`}
        </a>
      ) : null}
      <span class="status" data-stream={live.connected ? 'live' : 'offline'}>
        {live.connected ? `live${live.dropped ? ` (${live.dropped} dropped)` : ''}` : 'offline'}
      </span>
    </>
  );
}

function App(props: { live: LiveState }) {
  const [parts, setParts] = useState(parseHash);
  useEffect(() => {
    const changed = (): void => setParts(parseHash());
    window.addEventListener('hashchange', changed);
    // A navigation between the first draw and this effect fired its event before anyone listened.
    if (parseHash().join('/') !== parts.join('/')) changed();
    return () => window.removeEventListener('hashchange', changed);
  }, []);
  const found = VIEWS.find(([id]) => id === (parts[0] || 'servers')) ?? VIEWS[0];
  const [id, , View] = found as (typeof VIEWS)[number];
  return (
    <>
      <header id="top">
        <strong>ax-mcp studio</strong>
        <nav>
          {VIEWS.map(([view, label]) => (
            <a key={view} href={`#/${view}`} data-view={view} class={view === id ? 'active' : ''}>
              {label}
            </a>
          ))}
        </nav>
        <StreamStatus live={props.live} />
      </header>
      <main id="view" data-view={id}>
        {/* A new route is a new view: its state starts over. */}
        <View key={parts.join('/')} live={props.live} params={parts.slice(1)} />
      </main>
    </>
  );
}

const live = new LiveState();
live.start();
render(<App live={live} />, document.getElementById('app') as HTMLElement);
