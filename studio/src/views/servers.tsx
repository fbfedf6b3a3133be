/**
 * Servers: per client its era, protocol version, server info, capabilities, cache hints,
 * catalog counts and the history of its catalog revisions; then one kind of the catalog at a
 * time in a virtualized list that fetches pages of the filtered catalog as they scroll into
 * view (templates are shown as written, never expanded). `#/servers/<namespace>/<kind>`.
 */

import type { VNode } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { get, type LiveState, missingRoute, seg } from '../api.js';
import type { ViewProps } from '../main.js';
import { JsonTree, messageOf, NotOffered, Status, str, time, useLive, VirtualList } from '../ui.js';

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
type Kind = 'tools' | 'prompts' | 'resources' | 'resourceTemplates';

interface Changes {
  added: string[];
  removed: string[];
  changed: string[];
}

interface Revision {
  revision: number;
  at: number;
  changes: Partial<Record<Kind, Changes>>;
}

const KINDS: [Kind, string][] = [
  ['tools', 'Tools'],
  ['prompts', 'Prompts'],
  ['resources', 'Resources'],
  ['resourceTemplates', 'Templates'],
];
/** Rows fetched at a time as the list scrolls. */
const PAGE = 100;
const ROW = 34;
const NAMES_SHOWN = 12;

export function keyOf(kind: string, item: Item): string {
  return str(kind === 'resources' ? item.uri : kind === 'resourceTemplates' ? item.uriTemplate : item.name);
}

/** Where Try opens an item of the catalog. */
export function tryLink(namespace: string, kind: string, key: string): string {
  if (kind === 'tools') return `#/try/${seg(namespace)}/${seg(key)}`;
  if (kind === 'prompts') return `#/try/${seg(namespace)}/prompts/${seg(key)}`;
  return `#/try/${seg(namespace)}/resources/${seg(key)}`;
}

export function ServersView({ params, live }: ViewProps): VNode {
  const [namespace, kindParam] = params;
  const [servers, setServers] = useState<ServerSummary[]>();
  const [error, setError] = useState<string>();
  useEffect(() => {
    get<{ servers: ServerSummary[] }>('servers').then(
      (body) => setServers(body.servers),
      (failure: unknown) => setError(messageOf(failure)),
    );
  }, []);
  const kind = KINDS.find(([k]) => k === kindParam)?.[0] ?? 'tools';
  const chosen = servers?.find((s) => s.namespace === namespace) ?? servers?.[0];
  return (
    <>
      <h1>Servers</h1>
      <Status loading={!servers} error={error} />
      {servers?.length === 0 ? <p class="dim">No clients were given to the studio.</p> : null}
      {servers && servers.length > 0 ? (
        <div class="tabs">
          {servers.map((s) => (
            <a
              key={s.namespace}
              href={`#/servers/${seg(s.namespace)}`}
              class={s === chosen ? 'active' : ''}
              data-server={s.namespace}
            >
              {s.namespace}
            </a>
          ))}
        </div>
      ) : null}
      {chosen ? <ServerCard server={chosen} kind={kind} live={live} /> : null}
    </>
  );
}

function ServerCard(props: { server: ServerSummary; kind: Kind; live: LiveState }): VNode {
  const { server, kind, live } = props;
  if (server.error) {
    return (
      <section class="card">
        <h2>{server.namespace}</h2>
        <p class="error">{`${server.error.code ?? 'error'}: ${server.error.message}`}</p>
      </section>
    );
  }
  const info = server.serverInfo;
  return (
    <section class="card" data-namespace={server.namespace}>
      <h2>{server.namespace}</h2>
      <dl class="facts">
        <dt>era</dt>
        <dd data-field="era">{server.era ?? '?'}</dd>
        <dt>protocol</dt>
        <dd>{server.protocolVersion ?? '?'}</dd>
        <dt>server</dt>
        <dd>{info ? `${str(info.title) || str(info.name)} ${str(info.version)}` : '—'}</dd>
        <dt>catalog revision</dt>
        <dd>{String(server.revision ?? 0)}</dd>
      </dl>
      {server.instructions ? <pre class="instructions">{server.instructions}</pre> : null}
      <div class="row">
        <JsonTree value={server.capabilities ?? {}} label="capabilities" open={false} />
      </div>
      <div class="row">
        <JsonTree value={server.cache ?? {}} label="cache hints" open={false} />
      </div>
      <Revisions namespace={server.namespace} live={live} />
      <div class="tabs">
        {KINDS.map(([id, label]) => (
          <a
            key={id}
            href={`#/servers/${seg(server.namespace)}/${id}`}
            class={id === kind ? 'active' : ''}
            data-kind={id}
          >
            {`${label} (${server.counts?.[id] ?? 0})`}
          </a>
        ))}
      </div>
      <CatalogList key={kind} namespace={server.namespace} kind={kind} live={live} />
    </section>
  );
}

/** The catalog's revisions, newest first: what each `list_changed` added, removed or changed. */
function Revisions(props: { namespace: string; live: LiveState }): VNode {
  const { namespace, live } = props;
  useLive(live);
  const announced = live.catalogs.get(namespace);
  const [revisions, setRevisions] = useState<Revision[] | 'missing'>();
  const [error, setError] = useState<string>();
  useEffect(() => {
    get<{ revisions: Revision[] }>(`servers/${seg(namespace)}/revisions`).then(
      (body) => setRevisions(body.revisions),
      (failure: unknown) => (missingRoute(failure) ? setRevisions('missing') : setError(messageOf(failure))),
    );
  }, [namespace, announced]);
  return (
    <details class="revisions" data-revisions={namespace}>
      <summary>
        Revision history <span class="dim">{Array.isArray(revisions) ? `(${revisions.length})` : ''}</span>
      </summary>
      <Status loading={revisions === undefined} error={error} />
      {revisions === 'missing' ? <NotOffered what="the revision history" /> : null}
      {Array.isArray(revisions) ? (
        <table data-table="revisions">
          <thead>
            <tr>
              <th>revision</th>
              <th>when</th>
              <th>changes</th>
            </tr>
          </thead>
          <tbody>
            {revisions.map((revision) => (
              <tr key={revision.revision} data-revision={revision.revision}>
                <td>{revision.revision}</td>
                <td class="dim">{time(revision.at)}</td>
                <td>
                  <RevisionChanges changes={revision.changes} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </details>
  );
}

function RevisionChanges({ changes }: { changes: Revision['changes'] }): VNode {
  const parts = KINDS.flatMap(([kind, label]) => {
    const change = changes[kind];
    if (!change) return [];
    const lists = (
      [
        ['added', '+', change.added],
        ['removed', '−', change.removed],
        ['changed', '~', change.changed],
      ] as const
    ).filter(([, , names]) => names.length > 0);
    if (lists.length === 0) return [];
    return [
      <div key={kind} class="change" data-change-kind={kind}>
        <span class="dim">{label}: </span>
        {lists.map(([what, sign, names]) => (
          <span key={what} class={`changes changes-${what}`} data-changes={what} data-count={names.length}>
            {names.slice(0, NAMES_SHOWN).map((name) => (
              <code key={name} class={`badge change-${what}`}>
                {sign}
                {name}
              </code>
            ))}
            {names.length > NAMES_SHOWN ? (
              <span class="dim">{` … ${names.length - NAMES_SHOWN} more ${what}`}</span>
            ) : null}{' '}
          </span>
        ))}
      </div>,
    ];
  });
  return parts.length === 0 ? <span class="dim">list_changed, nothing changed</span> : <div>{parts}</div>;
}

/**
 * One kind of the catalog, filtered by the studio server, fetched `PAGE` rows at a time as
 * they come into view. A new filter or a new catalog revision starts over.
 */
function CatalogList(props: { namespace: string; kind: Kind; live: LiveState }): VNode {
  const { namespace, kind, live } = props;
  const [query, setQuery] = useState('');
  const [total, setTotal] = useState<number>();
  const [error, setError] = useState<string>();
  const [selected, setSelected] = useState<Item>();
  const [, setLoaded] = useState(0);
  const pages = useRef(new Map<number, Item[]>());
  const pending = useRef(new Set<number>());
  // Answers to an older filter (or revision) are dropped.
  const generation = useRef(0);
  const revision = useRef(live.catalogs.get(namespace));
  const drawnAt = live.version;
  const currentQuery = useRef(query);

  const fetchPage = useCallback(
    (page: number): void => {
      if (pages.current.has(page) || pending.current.has(page)) return;
      pending.current.add(page);
      const asked = generation.current;
      const q = new URLSearchParams({
        offset: String(page * PAGE),
        limit: String(PAGE),
        q: currentQuery.current,
      });
      get<{ total: number; items: Item[] }>(`servers/${seg(namespace)}/${kind}?${q}`).then(
        (body) => {
          if (asked !== generation.current) return;
          pending.current.delete(page);
          pages.current.set(page, body.items);
          setTotal(body.total);
          setLoaded((n) => n + 1);
        },
        (failure: unknown) => {
          if (asked !== generation.current) return;
          pending.current.delete(page);
          setError(messageOf(failure));
        },
      );
    },
    [namespace, kind],
  );
  const restart = useCallback((): void => {
    generation.current++;
    pages.current = new Map();
    pending.current = new Set();
    setTotal(undefined);
    setError(undefined);
    fetchPage(0);
  }, [fetchPage]);
  useEffect(() => {
    currentQuery.current = query;
    restart();
  }, [query, restart]);
  useEffect(
    () =>
      live.listen(() => {
        const now = live.catalogs.get(namespace);
        if (now === revision.current) return;
        revision.current = now;
        restart();
      }, drawnAt),
    [restart],
  );
  const onRange = useCallback(
    (first: number, last: number): void => {
      for (let page = Math.floor(first / PAGE); page <= Math.floor(Math.max(first, last - 1) / PAGE); page++)
        fetchPage(page);
    },
    [fetchPage],
  );

  const itemAt = (index: number): Item | undefined =>
    pages.current.get(Math.floor(index / PAGE))?.[index % PAGE];
  return (
    <div class="catalog">
      <div class="row">
        <input
          type="search"
          placeholder="filter by name or description"
          data-filter={kind}
          value={query}
          onInput={(event) => setQuery((event.currentTarget as HTMLInputElement).value)}
        />{' '}
        <span class="dim" data-total={total ?? ''} data-state={total === undefined ? 'loading' : 'ready'}>
          {total === undefined ? 'loading…' : `${total} ${total === 1 ? 'match' : 'matches'}`}
        </span>
      </div>
      <Status error={error} />
      {total === undefined ? null : total === 0 ? (
        <p class="dim">Nothing matches.</p>
      ) : (
        <div class="items">
          <VirtualList
            key={query}
            label={kind}
            count={total}
            rowHeight={ROW}
            height={Math.min(total * ROW + 2, 480)}
            onRange={onRange}
            row={(index) => {
              const item = itemAt(index);
              if (!item) return <div class="item-row dim">…</div>;
              const key = keyOf(kind, item);
              return (
                <ItemRow
                  namespace={namespace}
                  kind={kind}
                  item={item}
                  active={selected !== undefined && keyOf(kind, selected) === key}
                  select={() => setSelected(item)}
                />
              );
            }}
          />
        </div>
      )}
      {selected ? (
        <ItemDetail key={keyOf(kind, selected)} namespace={namespace} kind={kind} item={selected} />
      ) : null}
    </div>
  );
}

function Badges({ item }: { item: Item }): VNode {
  const annotations = (item.annotations ?? {}) as Record<string, unknown>;
  return (
    <>
      {annotations.readOnlyHint === true ? <span class="badge">read-only</span> : null}
      {annotations.destructiveHint === true ? <span class="badge danger">destructive</span> : null}
      {annotations.idempotentHint === true ? <span class="badge">idempotent</span> : null}
    </>
  );
}

function ItemRow(props: {
  namespace: string;
  kind: Kind;
  item: Item;
  active: boolean;
  select: () => void;
}): VNode {
  const { namespace, kind, item } = props;
  const key = keyOf(kind, item);
  return (
    <div class={`item-row${props.active ? ' active' : ''}`} data-item={key}>
      <button type="button" class="item-name" onClick={props.select}>
        <code>{key}</code>
      </button>
      {str(item.title) ? <span class="item-title">{str(item.title)}</span> : null}
      <Badges item={item} />
      <span class="description" data-description={key}>
        {str(item.description)}
      </span>
      <a href={tryLink(namespace, kind, key)} class="try">
        {kind === 'tools' ? 'try' : kind === 'prompts' ? 'get' : 'read'}
      </a>
    </div>
  );
}

function ItemDetail(props: { namespace: string; kind: Kind; item: Item }): VNode {
  const { namespace, kind, item } = props;
  const key = keyOf(kind, item);
  return (
    <section class="item-detail" data-selected={key}>
      <h3>
        <code>{key}</code> {str(item.title)} <Badges item={item} />{' '}
        <a href={tryLink(namespace, kind, key)} class="try">
          {kind === 'tools' ? 'try it' : kind === 'prompts' ? 'get it' : 'read it'}
        </a>
      </h3>
      <p class="description" data-description-full={key}>
        {str(item.description)}
      </p>
      <JsonTree value={item} label={kind === 'resourceTemplates' ? 'template' : kind.replace(/s$/, '')} />
    </section>
  );
}
