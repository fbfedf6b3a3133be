/**
 * Segment-safe paths into an event (`eventPath.data('order', 'id')`). Paths are checked
 * when built: `__proto__`, `constructor`, `prototype`, empty segments and bad indexes are
 * rejected. Resolution reads own properties only.
 */

import type { AxEventIdentity, AxEventIngressRecord } from './envelope.js';
import { AxEventInputError } from './errors.js';
import { type AxJsonValue, assertPlainJson, cloneJson, deepFreeze, isUnsafeKey } from './json.js';

/** One step of a path: an object key or an array index. */
export type AxEventPathSegment = string | number;

/** Where a path starts. */
export type AxEventPathRoot =
  | 'data'
  | 'id'
  | 'source'
  | 'type'
  | 'subject'
  | 'time'
  | 'extension'
  | 'identity'
  | 'trust'
  | 'correlation'
  | 'partitionKey'
  | 'continuation'
  | 'constant';

/** A checked, immutable path. Build it with {@link eventPath}. */
export interface AxEventPath {
  readonly root: AxEventPathRoot;
  readonly segments: readonly AxEventPathSegment[];
  /** The extension name, identity field or correlation kind, for those roots. */
  readonly name?: string;
  /** The value of a `constant` path. */
  readonly value?: AxJsonValue;
  /** A readable form, for messages. */
  readonly text: string;
}

/** What a path is resolved against. */
export interface AxEventPathView {
  readonly ingress: AxEventIngressRecord;
  /** The metadata of the continuation a resume found, if any. */
  readonly continuationMetadata?: AxJsonValue;
}

function checkSegments(segments: readonly AxEventPathSegment[], text: string): AxEventPathSegment[] {
  return segments.map((s) => {
    if (typeof s === 'number') {
      if (!Number.isSafeInteger(s) || s < 0) {
        throw new AxEventInputError('unsafe_path', `Bad array index ${String(s)} in path ${text}`);
      }
      return s;
    }
    if (typeof s !== 'string' || s.length === 0) {
      throw new AxEventInputError('unsafe_path', `Empty or non-string segment in path ${text}`);
    }
    if (isUnsafeKey(s)) throw new AxEventInputError('unsafe_path', `Unsafe segment "${s}" in path ${text}`);
    return s;
  });
}

function make(root: AxEventPathRoot, segments: readonly AxEventPathSegment[], name?: string): AxEventPath {
  const label = name === undefined ? root : `${root}(${name})`;
  const text = `${label}${segments.map((s) => (typeof s === 'number' ? `[${s}]` : `.${s}`)).join('')}`;
  if (name !== undefined && (typeof name !== 'string' || name.length === 0 || isUnsafeKey(name))) {
    throw new AxEventInputError('unsafe_path', `Unsafe or empty name in path ${text}`);
  }
  const path: AxEventPath = { root, segments: checkSegments(segments, text), text };
  if (name !== undefined) (path as { name?: string }).name = name;
  return Object.freeze(path);
}

const IDENTITY_FIELDS = new Set(['tenantId', 'accountId', 'userId', 'sessionId']);

/** Builders of {@link AxEventPath}s. */
export const eventPath = {
  /** A value inside `event.data`; no segments selects the whole data. */
  data: (...segments: AxEventPathSegment[]): AxEventPath => make('data', segments),
  /** The event id. */
  id: (): AxEventPath => make('id', []),
  /** The event source. */
  source: (): AxEventPath => make('source', []),
  /** The event type. */
  type: (): AxEventPath => make('type', []),
  /** The event subject. */
  subject: (): AxEventPath => make('subject', []),
  /** The event time. */
  time: (): AxEventPath => make('time', []),
  /** A CloudEvents extension attribute. */
  extension: (name: string): AxEventPath => make('extension', [], name),
  /** A field of the verified identity: `tenantId`, `accountId`, `userId` or `sessionId`. */
  identity: (field: keyof AxEventIdentity): AxEventPath => {
    if (!IDENTITY_FIELDS.has(field))
      throw new AxEventInputError('unsafe_path', `Unknown identity field ${field}`);
    return make('identity', [], field);
  },
  /** The trust level. */
  trust: (): AxEventPath => make('trust', []),
  /** The value of the first correlation of this kind. */
  correlation: (kind: string): AxEventPath => make('correlation', [], kind),
  /** The ingress partition key. */
  partitionKey: (): AxEventPath => make('partitionKey', []),
  /** A value inside the metadata of the continuation a resume found. */
  continuation: (...segments: AxEventPathSegment[]): AxEventPath => make('continuation', segments),
  /** A constant JSON value. */
  constant: (value: unknown): AxEventPath => {
    assertPlainJson(value, 'constant');
    const path = { root: 'constant', segments: [], value: deepFreeze(cloneJson(value)), text: 'constant' };
    return Object.freeze(path) as AxEventPath;
  },
};

/** True if `value` is a path built by {@link eventPath}. */
export function isEventPath(value: unknown): value is AxEventPath {
  return (
    value !== null &&
    typeof value === 'object' &&
    typeof (value as AxEventPath).root === 'string' &&
    Array.isArray((value as AxEventPath).segments) &&
    typeof (value as AxEventPath).text === 'string'
  );
}

function walk(start: unknown, segments: readonly AxEventPathSegment[]): unknown {
  let current = start;
  for (const segment of segments) {
    if (current === null || typeof current !== 'object') return undefined;
    if (typeof segment === 'number') {
      if (!Array.isArray(current) || segment >= current.length) return undefined;
      current = current[segment];
    } else {
      if (Array.isArray(current) || !Object.hasOwn(current, segment)) return undefined;
      current = (current as Record<string, unknown>)[segment];
    }
  }
  return current;
}

/** Resolve a path; `undefined` when anything along it is missing. The result may be frozen. */
export function resolveEventPath(path: AxEventPath, view: AxEventPathView): unknown {
  const { ingress } = view;
  const event = ingress.event;
  switch (path.root) {
    case 'data':
      return walk(event.data, path.segments);
    case 'id':
      return event.id;
    case 'source':
      return event.source;
    case 'type':
      return event.type;
    case 'subject':
      return event.subject;
    case 'time':
      return event.time;
    case 'extension': {
      const ext = event.extensions;
      return ext && path.name !== undefined && Object.hasOwn(ext, path.name) ? ext[path.name] : undefined;
    }
    case 'identity':
      return ingress.identity[path.name as keyof AxEventIdentity];
    case 'trust':
      return ingress.trust;
    case 'correlation':
      return ingress.correlation.find((c) => c.kind === path.name)?.value;
    case 'partitionKey':
      return ingress.partitionKey;
    case 'continuation':
      return walk(view.continuationMetadata, path.segments);
    case 'constant':
      return path.value;
  }
}

/** Resolve a path that must give a non-empty string or a finite number (returned as text). */
export function resolveKeyPath(path: AxEventPath, view: AxEventPathView): string | undefined {
  const v = resolveEventPath(path, view);
  if (typeof v === 'string' && v.length > 0) return v;
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  return undefined;
}
