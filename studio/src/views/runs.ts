/**
 * Runs: the dead letters of the store (redrive, behind a confirmation), the runs of the
 * events the studio saw (cancel, behind a confirmation, while not finished), and one run in
 * full by id — from the link of an event or typed in. `#/runs/<run or delivery id>`.
 * The store has no listing of all runs; runs published before the studio started are found
 * by id.
 */

import { get, post, seg } from '../api.js';
import { confirmButton, h, jsonTree, replace, time } from '../dom.js';
import type { ViewContext } from '../main.js';

interface Run {
  id: string;
  deliveryId: string;
  routeId: string;
  action: string;
  targetId: string | null;
  status: string;
  attempt: number;
  finishedAt: number | null;
  error: { code?: string; message?: string } | null;
}

interface DeadLetter {
  id: string;
  kind: string;
  deliveryId: string;
  runId: string;
  reason: string;
  error: { code?: string; message?: string } | null;
  createdAt: number;
}

const FINISHED = new Set(['succeeded', 'cancelled', 'dead_lettered', 'outcome_unknown', 'waiting_event']);

export function runsView(root: HTMLElement, { params, live }: ViewContext): () => void {
  const one = h('div', { class: 'run-detail' });
  const dead = h('div', null, h('p', { class: 'dim' }, 'Loading…'));
  const runs = h('div', null, h('p', { class: 'dim' }, 'Loading…'));
  const lookup = h('input', { type: 'search', placeholder: 'run or delivery id', 'data-lookup': 'true' });
  replace(
    root,
    h('h1', null, 'Runs'),
    h(
      'form',
      {
        class: 'row',
        onsubmit: (event: Event) => {
          event.preventDefault();
          if (lookup.value.trim()) location.hash = `#/runs/${seg(lookup.value.trim())}`;
        },
      },
      lookup,
      ' ',
      h('button', { type: 'submit' }, 'open'),
    ),
    one,
    h('h2', null, 'Dead letters'),
    dead,
    h('h2', null, 'Recent runs'),
    runs,
  );
  const refresh = async (): Promise<void> => {
    const [letters, recent] = await Promise.all([
      get<{ deadLetters: DeadLetter[]; available: boolean }>('dead-letters'),
      get<{ runs: Run[]; available: boolean }>('runs'),
    ]);
    if (!letters.available)
      replace(dead, h('p', { class: 'dim' }, 'No runtime or store was given to the studio.'));
    else if (letters.deadLetters.length === 0)
      replace(dead, h('p', { class: 'dim', 'data-empty': 'dead-letters' }, 'None.'));
    else replace(dead, deadLetterTable(letters.deadLetters, refresh));
    if (recent.runs.length === 0) replace(runs, h('p', { class: 'dim' }, 'No runs seen yet.'));
    else replace(runs, runTable(recent.runs, refresh));
    if (params[0] !== undefined) await showRun(one, params[0], refresh);
  };
  void refresh().catch((error: Error) => replace(dead, h('p', { class: 'error' }, error.message)));
  let seen = live.received.events;
  let timer: ReturnType<typeof setTimeout> | undefined;
  return live.listen(() => {
    if (live.received.events === seen || timer) return;
    seen = live.received.events;
    // New events mean new runs; look again, at most every second.
    timer = setTimeout(() => {
      timer = undefined;
      void refresh();
    }, 1000);
  });
}

function deadLetterTable(letters: DeadLetter[], refresh: () => Promise<void>): HTMLElement {
  return h(
    'table',
    { 'data-table': 'dead-letters' },
    h(
      'thead',
      null,
      h(
        'tr',
        null,
        ['when', 'run', 'reason', 'error', ''].map((label) => h('th', null, label)),
      ),
    ),
    h(
      'tbody',
      null,
      letters.map((letter) =>
        h(
          'tr',
          { 'data-dead-letter': letter.id },
          h('td', { class: 'dim' }, time(letter.createdAt)),
          h('td', null, h('a', { href: `#/runs/${seg(letter.runId)}` }, letter.runId)),
          h('td', null, letter.reason),
          h('td', null, letter.error ? `${letter.error.code ?? ''} ${letter.error.message ?? ''}` : ''),
          h(
            'td',
            null,
            confirmButton('Redrive', 'Run it again?', async () => {
              await post(`dead-letters/${seg(letter.id)}/redrive`);
              await refresh();
            }),
          ),
        ),
      ),
    ),
  );
}

function runTable(runs: Run[], refresh: () => Promise<void>): HTMLElement {
  return h(
    'table',
    { 'data-table': 'runs' },
    h(
      'thead',
      null,
      h(
        'tr',
        null,
        ['run', 'route', 'action', 'target', 'status', 'attempt', ''].map((label) => h('th', null, label)),
      ),
    ),
    h(
      'tbody',
      null,
      runs.map((run) =>
        h(
          'tr',
          { 'data-run': run.id, 'data-status': run.status },
          h('td', null, h('a', { href: `#/runs/${seg(run.id)}` }, run.id)),
          h('td', null, run.routeId),
          h('td', null, run.action),
          h('td', null, run.targetId ?? '—'),
          h('td', { class: `status status-${run.status}` }, run.status),
          h('td', null, String(run.attempt)),
          h('td', null, FINISHED.has(run.status) ? null : cancelButton(run.id, refresh)),
        ),
      ),
    ),
  );
}

function cancelButton(id: string, refresh: () => Promise<void>): HTMLElement {
  return confirmButton('Cancel', 'Cancel this run?', async () => {
    await post(`runs/${seg(id)}/cancel`);
    await refresh();
  });
}

async function showRun(holder: HTMLElement, id: string, refresh: () => Promise<void>): Promise<void> {
  try {
    const { run } = await get<{ run: Run }>(`runs/${seg(id)}`);
    replace(
      holder,
      h(
        'section',
        { class: 'card', 'data-run-detail': run.id, 'data-status': run.status },
        h('h2', null, 'Run ', h('code', null, run.id)),
        h('p', null, 'status ', h('strong', { class: `status status-${run.status}` }, run.status)),
        FINISHED.has(run.status) ? null : cancelButton(run.id, refresh),
        jsonTree(run, 'run'),
      ),
    );
  } catch (error) {
    replace(holder, h('p', { class: 'error' }, `Run ${id}: ${(error as Error).message}`));
  }
}
