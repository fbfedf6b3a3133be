/**
 * The pieces every view uses: a JSON tree, a button that asks once more, a virtualized list,
 * and the hook that redraws a view once per frame with news from the stream. Everything a
 * server sends goes into JSX as a child or a plain attribute, so Preact puts it in the page as
 * text; nothing in the page sets HTML from a string.
 */

import type { ComponentChildren, VNode } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import type { LiveState } from './api.js';

export function time(at: number): string {
  return new Date(at).toISOString().slice(11, 23);
}

export const str = (value: unknown): string => (typeof value === 'string' ? value : '');

export const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/** Redraws the calling component after every frame in which the stream brought something. */
export function useLive(live: LiveState): number {
  const [drawn, setVersion] = useState(live.version);
  useEffect(() => live.listen(() => setVersion(live.version), drawn), [live]);
  return live.version;
}

const MAX_CHILDREN = 200;

/**
 * A JSON value as a collapsible tree of text. A closed node renders no children, so a large
 * result costs what is opened, not what it holds.
 */
export function JsonTree(props: { value: unknown; label?: string; open?: boolean; depth?: number }): VNode {
  const { value, label, open = true, depth = 0 } = props;
  const [expanded, setExpanded] = useState(open && depth < 3);
  const name = label === undefined ? null : <span class="key">{label}: </span>;
  if (value === null || typeof value !== 'object') {
    const kind = value === null ? 'null' : typeof value;
    return (
      <div class="leaf">
        {name}
        <span class={`v-${kind}`}>{JSON.stringify(value) ?? 'undefined'}</span>
      </div>
    );
  }
  const entries = Array.isArray(value)
    ? value.map((v, i) => [String(i), v] as const)
    : Object.entries(value as Record<string, unknown>);
  const summary = Array.isArray(value) ? `[${entries.length}]` : `{${entries.length}}`;
  return (
    <details
      class="tree"
      open={expanded}
      onToggle={(event) => setExpanded((event.currentTarget as HTMLDetailsElement).open)}
    >
      <summary>
        {name}
        <span class="dim">{summary}</span>
      </summary>
      {expanded
        ? entries
            .slice(0, MAX_CHILDREN)
            .map(([k, v]) => <JsonTree key={k} value={v} label={k} open={open} depth={depth + 1} />)
        : null}
      {expanded && entries.length > MAX_CHILDREN ? (
        <div class="dim">… {entries.length - MAX_CHILDREN} more</div>
      ) : null}
    </details>
  );
}

/** The raw JSON of something, folded. */
export function Raw(props: { value: unknown; label?: string; open?: boolean }): VNode {
  return (
    <details class="raw" open={props.open}>
      <summary>{props.label ?? 'raw'}</summary>
      <pre>{JSON.stringify(props.value, null, 2)}</pre>
    </details>
  );
}

/** A button that asks once more, in place, before it acts. */
export function ConfirmButton(props: { label: string; question: string; act: () => Promise<void> }): VNode {
  const [state, setState] = useState<'idle' | 'asking' | 'busy' | { error: string }>('idle');
  if (state === 'busy') return <span class="confirm dim">…</span>;
  if (typeof state === 'object') return <span class="confirm error">{state.error}</span>;
  if (state === 'idle') {
    return (
      <span class="confirm">
        <button type="button" class="danger" data-action={props.label} onClick={() => setState('asking')}>
          {props.label}
        </button>
      </span>
    );
  }
  const yes = async (): Promise<void> => {
    setState('busy');
    try {
      await props.act();
      setState('idle');
    } catch (error) {
      setState({ error: messageOf(error) });
    }
  };
  return (
    <span class="confirm">
      <span class="question">{props.question} </span>
      <button type="button" class="danger" data-confirm={props.label} onClick={() => void yes()}>
        Yes
      </button>{' '}
      <button type="button" onClick={() => setState('idle')}>
        No
      </button>
    </span>
  );
}

const OVERSCAN = 6;

/**
 * A list that renders only the rows in view: fixed row height, one spacer, rows placed
 * absolutely, scroll position read at most once per frame. Ten thousand rows cost what the
 * thirty on screen cost. `onRange` hears which rows are drawn (to fetch what is missing).
 */
export function VirtualList(props: {
  count: number;
  rowHeight: number;
  height: number;
  row: (index: number) => ComponentChildren;
  onRange?: (first: number, last: number) => void;
  label?: string;
}): VNode {
  const { count, rowHeight, height, row, onRange } = props;
  const holder = useRef<HTMLDivElement>(null);
  const frame = useRef(0);
  const [top, setTop] = useState(0);
  useEffect(() => () => cancelAnimationFrame(frame.current), []);
  // A shorter list clamps the scroll position: read it again.
  useEffect(() => {
    if (holder.current && holder.current.scrollTop !== top) setTop(holder.current.scrollTop);
  }, [count]);
  const first = Math.max(0, Math.floor(top / rowHeight) - OVERSCAN);
  const last = Math.min(count, Math.ceil((top + height) / rowHeight) + OVERSCAN);
  useEffect(() => onRange?.(first, last), [first, last, count, onRange]);
  const rows: VNode[] = [];
  for (let i = first; i < last; i++) {
    rows.push(
      <div key={i} class="vrow" style={{ top: `${i * rowHeight}px`, height: `${rowHeight}px` }}>
        {row(i)}
      </div>,
    );
  }
  return (
    <div
      ref={holder}
      class="vlist"
      data-virtual="true"
      data-list={props.label}
      style={{ height: `${height}px` }}
      onScroll={() => {
        if (frame.current !== 0) return;
        frame.current = requestAnimationFrame(() => {
          frame.current = 0;
          setTop(holder.current?.scrollTop ?? 0);
        });
      }}
    >
      <div class="vspacer" style={{ height: `${count * rowHeight}px` }}>
        {rows}
      </div>
    </div>
  );
}

/** A `Loading…`, an error, or nothing. */
export function Status(props: { loading?: boolean; error?: string | undefined }): VNode | null {
  if (props.error !== undefined) return <p class="error">{props.error}</p>;
  if (props.loading) return <p class="dim">Loading…</p>;
  return null;
}

/** What a view says when the studio server is older than the page and lacks a route. */
export function NotOffered(props: { what: string }): VNode {
  return (
    <p class="dim" data-not-offered={props.what}>
      This studio server does not offer {props.what} yet.
    </p>
  );
}
