/**
 * Runs: the store's runs, filtered (status, route, target, search) and paged by cursor — all
 * of them when the store can list runs, else the runs of the events this studio saw, and it
 * says so; the dead letters (redrive, behind a confirmation); the continuations runs wait on,
 * with those expired; and one run in full by id — from the link of an event or typed in.
 * `#/runs/<run or delivery id>`.
 */

import type { VNode } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { RUN_STATUSES } from '../../../src/events/run-listing.js';
import { get, missingRoute, post, seg } from '../api.js';
import type { ViewProps } from '../main.js';
import { ConfirmButton, JsonTree, messageOf, NotOffered, Status, time } from '../ui.js';

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

interface Continuation {
  id: string;
  deliveryId: string;
  runId: string;
  scope: string;
  kind: string;
  value: string;
  expiresAt: number | null;
  expired: boolean;
}

interface RunPage {
  runs: Run[];
  available: boolean;
  complete?: boolean;
  next?: string;
}

const FINISHED = new Set(['succeeded', 'cancelled', 'dead_lettered', 'outcome_unknown', 'waiting_event']);
const PAGE = 50;

interface Filters {
  status: string[];
  route: string;
  target: string;
  q: string;
}

/** The `runs` API query of these filters from this cursor. */
function runQuery(filters: Filters, cursor: string | undefined): string {
  const q = new URLSearchParams({ limit: String(PAGE) });
  if (filters.status.length > 0) q.set('status', filters.status.join(','));
  if (filters.route) q.set('route', filters.route);
  if (filters.target) q.set('target', filters.target);
  if (filters.q) q.set('q', filters.q);
  if (cursor) q.set('before', cursor);
  return q.toString();
}

export function RunsView({ params, live }: ViewProps): VNode {
  const [lookup, setLookup] = useState('');
  const [filters, setFilters] = useState<Filters>({ status: [], route: '', target: '', q: '' });
  // The cursors of the pages before this one, to go back.
  const [cursors, setCursors] = useState<(string | undefined)[]>([undefined]);
  // A page with the query it answers: after a filter or a pager click, the rows of the last
  // query are not shown under the new one's label while it loads.
  const [answered, setAnswered] = useState<{ query: string; page: RunPage }>();
  const [letters, setLetters] = useState<{ deadLetters: DeadLetter[]; available: boolean }>();
  const [continuations, setContinuations] = useState<
    { continuations: Continuation[]; available: boolean } | 'missing'
  >();
  const [error, setError] = useState<string>();
  const [tick, setTick] = useState(0);
  const cursor = cursors[cursors.length - 1];
  const page = answered?.query === runQuery(filters, cursor) ? answered.page : undefined;

  useEffect(() => {
    const query = runQuery(filters, cursor);
    let current = true;
    Promise.all([
      get<RunPage>(`runs?${query}`),
      get<{ deadLetters: DeadLetter[]; available: boolean }>('dead-letters'),
      get<{ continuations: Continuation[]; available: boolean }>('continuations?limit=200').catch(
        (failure: unknown) => {
          if (missingRoute(failure)) return 'missing' as const;
          throw failure;
        },
      ),
    ]).then(
      ([runs, dead, waiting]) => {
        if (!current) return;
        setAnswered({ query, page: runs });
        setLetters(dead);
        setContinuations(waiting);
        setError(undefined);
      },
      (failure: unknown) => current && setError(messageOf(failure)),
    );
    return () => {
      current = false;
    };
  }, [filters, cursor, tick]);
  const refresh = async (): Promise<void> => setTick((n) => n + 1);

  // New events mean new runs; look again, at most every second.
  const seen = useRef(live.received.events);
  const drawnAt = live.version;
  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const stop = live.listen(() => {
      if (live.received.events === seen.current || timer) return;
      seen.current = live.received.events;
      timer = setTimeout(() => {
        timer = undefined;
        setTick((n) => n + 1);
      }, 1000);
    }, drawnAt);
    return () => {
      stop();
      clearTimeout(timer);
    };
  }, []);

  const filter = (change: Partial<Filters>): void => {
    setFilters({ ...filters, ...change });
    setCursors([undefined]);
  };
  return (
    <>
      <h1>Runs</h1>
      <form
        class="row"
        onSubmit={(event) => {
          event.preventDefault();
          if (lookup.trim()) location.hash = `#/runs/${seg(lookup.trim())}`;
        }}
      >
        <input
          type="search"
          placeholder="run or delivery id"
          data-lookup="true"
          value={lookup}
          onInput={(e) => setLookup((e.currentTarget as HTMLInputElement).value)}
        />{' '}
        <button type="submit">open</button>
      </form>
      {params[0] !== undefined ? (
        <RunDetail key={params[0]} id={params[0]} tick={tick} refresh={refresh} />
      ) : null}
      <Status error={error} />
      <h2>Dead letters</h2>
      {!letters ? (
        <Status loading />
      ) : !letters.available ? (
        <p class="dim">No runtime or store was given to the studio.</p>
      ) : letters.deadLetters.length === 0 ? (
        <p class="dim" data-empty="dead-letters">
          None.
        </p>
      ) : (
        <DeadLetterTable letters={letters.deadLetters} refresh={refresh} />
      )}
      <h2>Runs</h2>
      <div class="filters row" data-filters="runs">
        <span class="statuses">
          {RUN_STATUSES.map((status) => (
            <label key={status} class="check">
              <input
                type="checkbox"
                data-status-filter={status}
                checked={filters.status.includes(status)}
                onChange={(e) =>
                  filter({
                    status: (e.currentTarget as HTMLInputElement).checked
                      ? [...filters.status, status]
                      : filters.status.filter((s) => s !== status),
                  })
                }
              />
              {status}
            </label>
          ))}
        </span>
        <input
          type="search"
          placeholder="route"
          data-run-filter="route"
          value={filters.route}
          onChange={(e) => filter({ route: (e.currentTarget as HTMLInputElement).value.trim() })}
        />{' '}
        <input
          type="search"
          placeholder="target"
          data-run-filter="target"
          value={filters.target}
          onChange={(e) => filter({ target: (e.currentTarget as HTMLInputElement).value.trim() })}
        />{' '}
        <input
          type="search"
          placeholder="search ids, errors"
          data-run-filter="q"
          value={filters.q}
          onChange={(e) => filter({ q: (e.currentTarget as HTMLInputElement).value.trim() })}
        />
      </div>
      {page && page.complete !== true ? (
        <p class="dim" data-runs-scope="seen">
          Showing runs this studio saw: the store cannot list all its runs. Find any other by id above.
        </p>
      ) : null}
      {!page ? (
        <Status loading />
      ) : page.runs.length === 0 ? (
        <p class="dim" data-empty="runs">
          {page.available ? 'No runs match.' : 'No runtime or store was given to the studio.'}
        </p>
      ) : (
        <RunTable runs={page.runs} refresh={refresh} />
      )}
      <div class="pager row">
        <button type="button" disabled={cursors.length <= 1} onClick={() => setCursors(cursors.slice(0, -1))}>
          ‹ newer
        </button>{' '}
        <span class="dim">{`page ${cursors.length}`}</span>{' '}
        <button
          type="button"
          data-page="older"
          disabled={!page?.next}
          onClick={() => page?.next && setCursors([...cursors, page.next])}
        >
          older ›
        </button>
      </div>
      <h2>Continuations</h2>
      {continuations === 'missing' ? (
        <NotOffered what="continuations" />
      ) : !continuations ? (
        <Status loading />
      ) : !continuations.available ? (
        <p class="dim">The store does not list continuations.</p>
      ) : continuations.continuations.length === 0 ? (
        <p class="dim" data-empty="continuations">
          No run is waiting.
        </p>
      ) : (
        <ContinuationTable continuations={continuations.continuations} />
      )}
    </>
  );
}

function DeadLetterTable(props: { letters: DeadLetter[]; refresh: () => Promise<void> }): VNode {
  return (
    <table data-table="dead-letters">
      <thead>
        <tr>
          <th>when</th>
          <th>run</th>
          <th>reason</th>
          <th>error</th>
          <th />
        </tr>
      </thead>
      <tbody>
        {props.letters.map((letter) => (
          <tr key={letter.id} data-dead-letter={letter.id}>
            <td class="dim">{time(letter.createdAt)}</td>
            <td>
              <a href={`#/runs/${seg(letter.runId)}`}>{letter.runId}</a>
            </td>
            <td>{letter.reason}</td>
            <td>{letter.error ? `${letter.error.code ?? ''} ${letter.error.message ?? ''}` : ''}</td>
            <td>
              <ConfirmButton
                label="Redrive"
                question="Run it again?"
                act={async () => {
                  await post(`dead-letters/${seg(letter.id)}/redrive`);
                  await props.refresh();
                }}
              />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function CancelRun(props: { id: string; refresh: () => Promise<void> }): VNode {
  return (
    <ConfirmButton
      label="Cancel"
      question="Cancel this run?"
      act={async () => {
        await post(`runs/${seg(props.id)}/cancel`);
        await props.refresh();
      }}
    />
  );
}

function RunTable(props: { runs: Run[]; refresh: () => Promise<void> }): VNode {
  return (
    <table data-table="runs">
      <thead>
        <tr>
          {['run', 'route', 'action', 'target', 'status', 'attempt', ''].map((label) => (
            <th key={label}>{label}</th>
          ))}
        </tr>
      </thead>
      <tbody>
        {props.runs.map((run) => (
          <tr key={run.id} data-run={run.id} data-status={run.status}>
            <td>
              <a href={`#/runs/${seg(run.id)}`}>{run.id}</a>
            </td>
            <td>{run.routeId}</td>
            <td>{run.action}</td>
            <td>{run.targetId ?? '—'}</td>
            <td class={`status status-${run.status}`}>{run.status}</td>
            <td>{String(run.attempt)}</td>
            <td>{FINISHED.has(run.status) ? null : <CancelRun id={run.id} refresh={props.refresh} />}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function ContinuationTable(props: { continuations: Continuation[] }): VNode {
  return (
    <table data-table="continuations">
      <thead>
        <tr>
          {['continuation', 'run', 'kind', 'value', 'scope', 'expires', 'state'].map((label) => (
            <th key={label}>{label}</th>
          ))}
        </tr>
      </thead>
      <tbody>
        {props.continuations.map((c) => (
          <tr key={c.id} data-continuation={c.id} data-expired={String(c.expired)}>
            <td>
              <code>{c.id}</code>
            </td>
            <td>
              <a href={`#/runs/${seg(c.runId)}`}>{c.runId}</a>
            </td>
            <td>{c.kind}</td>
            <td>
              <code>{c.value}</code>
            </td>
            <td>{c.scope}</td>
            <td class="dim">{c.expiresAt === null ? 'never' : new Date(c.expiresAt).toISOString()}</td>
            <td class={c.expired ? 'error' : 'ok'}>{c.expired ? 'expired' : 'waiting'}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function RunDetail(props: { id: string; tick: number; refresh: () => Promise<void> }): VNode {
  const [run, setRun] = useState<Run>();
  const [error, setError] = useState<string>();
  useEffect(() => {
    get<{ run: Run }>(`runs/${seg(props.id)}`).then(
      (body) => setRun(body.run),
      (failure: unknown) => setError(`Run ${props.id}: ${messageOf(failure)}`),
    );
  }, [props.tick]);
  if (!run) return <div class="run-detail">{error ? <p class="error">{error}</p> : null}</div>;
  return (
    <div class="run-detail">
      <section class="card" data-run-detail={run.id} data-status={run.status}>
        <h2>
          Run <code>{run.id}</code>
        </h2>
        <p>
          status <strong class={`status status-${run.status}`}>{run.status}</strong>
        </p>
        {FINISHED.has(run.status) ? null : <CancelRun id={run.id} refresh={props.refresh} />}
        <JsonTree value={run} label="run" />
      </section>
    </div>
  );
}
