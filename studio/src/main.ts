/**
 * The studio page: a hash router over five views. Each view is a function that fills the
 * main element and may return a cleanup; the live stream keeps running across views.
 */

import { LiveState } from './api.js';
import { h, replace } from './dom.js';
import { eventsView } from './views/events.js';
import { runsView } from './views/runs.js';
import { serversView } from './views/servers.js';
import { subscriptionsView } from './views/subscriptions.js';
import { tryView } from './views/try.js';

export interface ViewContext {
  live: LiveState;
  /** The route's parts after the view name, decoded. */
  params: string[];
}

type View = (root: HTMLElement, context: ViewContext) => (() => void) | undefined;

const VIEWS: [string, string, View][] = [
  ['servers', 'Servers', serversView],
  ['try', 'Try', tryView],
  ['subscriptions', 'Subscriptions', subscriptionsView],
  ['events', 'Events', eventsView],
  ['runs', 'Runs', runsView],
];

const live = new LiveState();
const top = document.getElementById('top') as HTMLElement;
const root = document.getElementById('view') as HTMLElement;
const status = h('span', { class: 'status', 'data-stream': 'connecting' }, 'connecting…');
let cleanup: (() => void) | undefined;

function route(): void {
  cleanup?.();
  cleanup = undefined;
  const parts = location.hash
    .replace(/^#\/?/, '')
    .split('/')
    .map((part) => {
      try {
        return decodeURIComponent(part);
      } catch {
        return part;
      }
    });
  const name = parts[0] || 'servers';
  const found = VIEWS.find(([id]) => id === name) ?? VIEWS[0];
  const [id, , view] = found as [string, string, View];
  for (const link of top.querySelectorAll('nav a')) {
    link.classList.toggle('active', link.getAttribute('data-view') === id);
  }
  root.replaceChildren();
  root.setAttribute('data-view', id);
  cleanup = view(root, { live, params: parts.slice(1) }) ?? undefined;
}

replace(
  top,
  h('strong', null, 'ax-mcp studio'),
  h(
    'nav',
    null,
    VIEWS.map(([id, label]) => h('a', { href: `#/${id}`, 'data-view': id }, label)),
  ),
  status,
);
live.listen(() => {
  status.textContent = live.connected ? `live${live.dropped ? ` (${live.dropped} dropped)` : ''}` : 'offline';
  status.setAttribute('data-stream', live.connected ? 'live' : 'offline');
});
live.start();
window.addEventListener('hashchange', route);
route();
