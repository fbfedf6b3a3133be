/**
 * The event envelope (CloudEvents 1.0) and the ingress record the application wraps it
 * in: who the event is attributed to, how far it is trusted, what it correlates with.
 * Identity and trust come from the application's verified authentication, never from the
 * event's content.
 */

import { nearest } from '../options/check.js';
import { AxEventInputError } from './errors.js';
import { type AxJsonValue, assertPlainJson, byteLength, deepFreeze, isUnsafeKey } from './json.js';

/** A scalar CloudEvents extension value. */
export type AxEventExtensionValue = string | number | boolean;

/** A CloudEvents 1.0 envelope. `data` is plain JSON. */
export interface AxEvent {
  /** Always `'1.0'`; filled in when omitted. */
  specversion?: '1.0';
  /** Unique within `source`; the deduplication key together with the source and identity scope. */
  id: string;
  /** A URI-reference naming the context the event happened in (`mcp://inventory`, `app://billing`). */
  source: string;
  /** The event type, reverse-DNS style (`app.order.created`). */
  type: string;
  subject?: string;
  /** RFC 3339 timestamp. */
  time?: string;
  datacontenttype?: string;
  dataschema?: string;
  /** Plain, acyclic, finite JSON, size-capped. */
  data?: unknown;
  /** Scalar extension attributes; names are lowercase letters and digits. */
  extensions?: Readonly<Record<string, AxEventExtensionValue>>;
}

/** A normalized, frozen envelope as the runtime keeps it. */
export interface AxEventEnvelope {
  readonly specversion: '1.0';
  readonly id: string;
  readonly source: string;
  readonly type: string;
  readonly subject?: string;
  readonly time?: string;
  readonly datacontenttype?: string;
  readonly dataschema?: string;
  readonly data?: AxJsonValue;
  readonly extensions?: Readonly<Record<string, AxEventExtensionValue>>;
}

/** Who an event is attributed to, from the application's verified authentication. */
export interface AxEventIdentity {
  tenantId?: string;
  accountId?: string;
  userId?: string;
  sessionId?: string;
}

/** How far the application trusts an event's attribution. */
export type AxEventTrust = 'trusted' | 'authenticated' | 'untrusted';

/** A correlation the event carries, for example `{ kind: 'mcp.task', value: 'inventory:t-1' }`. */
export interface AxEventCorrelation {
  kind: string;
  value: string;
}

/** What a publisher hands to `publish()`: the envelope plus ingress attributes. */
export interface AxEventIngress {
  event: AxEvent;
  /** From verified authentication only. Omitted: the event is anonymous. */
  identity?: AxEventIdentity;
  /** Default `'untrusted'`. */
  trust?: AxEventTrust;
  correlation?: readonly AxEventCorrelation[];
  /** Groups events for ordering; also the default instance key. */
  partitionKey?: string;
}

/** A normalized, deep-frozen ingress record, as stored and as targets see it. */
export interface AxEventIngressRecord {
  readonly event: AxEventEnvelope;
  readonly identity: Readonly<AxEventIdentity>;
  readonly trust: AxEventTrust;
  readonly correlation: readonly Readonly<AxEventCorrelation>[];
  readonly partitionKey?: string;
}

/** Limits applied when an ingress is normalized. */
export interface AxEventLimits {
  /** Maximum size of the serialized ingress in bytes. Default 1 MiB. */
  maxEventBytes?: number;
  /** Maximum nesting depth of `data`. Default 64. */
  maxDataDepth?: number;
}

/** The default per-event size cap: 1 MiB. */
export const DEFAULT_MAX_EVENT_BYTES = 1024 * 1024;
const MAX_ATTRIBUTE_LENGTH = 2048;
const MAX_CORRELATIONS = 32;
const MAX_EXTENSIONS = 64;
const EXTENSION_NAME = /^[a-z0-9]{1,64}$/;
const RESERVED_ATTRIBUTES = new Set([
  'specversion',
  'id',
  'source',
  'type',
  'subject',
  'time',
  'datacontenttype',
  'dataschema',
  'data',
  'data_base64',
]);
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;
const IDENTITY_KEYS = ['tenantId', 'accountId', 'userId', 'sessionId'] as const;
const INGRESS_KEYS = ['event', 'identity', 'trust', 'correlation', 'partitionKey'];
const EVENT_KEYS = [...RESERVED_ATTRIBUTES].filter((k) => k !== 'data_base64').concat('extensions');
const CORRELATION_KEYS = ['kind', 'value'];
const TRUST_LEVELS: ReadonlySet<string> = new Set(['trusted', 'authenticated', 'untrusted']);

function invalid(message: string): AxEventInputError {
  return new AxEventInputError('invalid_event', message);
}

function requiredString(value: unknown, what: string): string {
  if (typeof value !== 'string' || value.length === 0) throw invalid(`${what} must be a non-empty string`);
  if (value.length > MAX_ATTRIBUTE_LENGTH) throw invalid(`${what} is longer than ${MAX_ATTRIBUTE_LENGTH}`);
  return value;
}

function optionalString(value: unknown, what: string): string | undefined {
  return value === undefined ? undefined : requiredString(value, what);
}

/**
 * Refuses a field that normalizing would drop without a word: a misspelt `identity` would make
 * the event anonymous (so no authenticated route matches it), a misspelt `data` would route an
 * event without its payload. `where` names the object in the message (`event.`, `identity.`).
 */
function refuseUnknownFields(value: object, known: readonly string[], where: string, hint = ''): void {
  for (const key in value) {
    if (!Object.hasOwn(value, key) || known.includes(key)) continue;
    if ((value as Record<string, unknown>)[key] === undefined) continue;
    const name = `${where}${key.slice(0, 64)}`;
    if (key === 'data_base64') {
      throw invalid(
        `${name} is not supported: put binary data base64-encoded in event.data, with its datacontenttype`,
      );
    }
    const suggestion = nearest(key, known);
    const meant = suggestion === undefined ? '' : ` (did you mean ${where}${suggestion}?)`;
    throw invalid(`${name} is not a field ax-mcp keeps${meant}; the fields are ${known.join(', ')}${hint}`);
  }
}

/** A name an event can carry an extension under: lower-case letters and digits, no attribute's name. */
export function isExtensionName(name: string): boolean {
  return EXTENSION_NAME.test(name) && !isUnsafeKey(name) && !RESERVED_ATTRIBUTES.has(name);
}

function normalizeExtensions(value: unknown): Record<string, AxEventExtensionValue> | undefined {
  if (value === undefined) return undefined;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw invalid('event.extensions must be an object of scalars');
  }
  const names = Object.keys(value);
  if (names.length > MAX_EXTENSIONS)
    throw invalid(`event.extensions has more than ${MAX_EXTENSIONS} entries`);
  const out: Record<string, AxEventExtensionValue> = Object.create(null);
  for (const name of names) {
    if (!isExtensionName(name)) {
      throw invalid(
        `event.extensions name "${name.slice(0, 64)}" is not a lowercase alphanumeric extension name`,
      );
    }
    const v = (value as Record<string, unknown>)[name];
    if (typeof v === 'string') {
      if (v.length > MAX_ATTRIBUTE_LENGTH) throw invalid(`event.extensions.${name} is too long`);
    } else if (typeof v === 'number') {
      if (!Number.isFinite(v)) throw invalid(`event.extensions.${name} is not finite`);
    } else if (typeof v !== 'boolean') {
      throw invalid(`event.extensions.${name} must be a string, number or boolean`);
    }
    out[name] = v as AxEventExtensionValue;
  }
  return out;
}

function normalizeIdentity(value: unknown): AxEventIdentity {
  if (value === undefined) return {};
  if (value === null || typeof value !== 'object') throw invalid('identity must be an object');
  refuseUnknownFields(value, IDENTITY_KEYS, 'identity.');
  const out: AxEventIdentity = {};
  for (const key of IDENTITY_KEYS) {
    const v = (value as Record<string, unknown>)[key];
    if (v !== undefined) out[key] = requiredString(v, `identity.${key}`);
  }
  return out;
}

function normalizeCorrelation(value: unknown): AxEventCorrelation[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw invalid('correlation must be an array of { kind, value }');
  if (value.length > MAX_CORRELATIONS) throw invalid(`correlation has more than ${MAX_CORRELATIONS} entries`);
  return value.map((c: unknown, i) => {
    if (c === null || typeof c !== 'object') throw invalid(`correlation[${i}] must be { kind, value }`);
    refuseUnknownFields(c, CORRELATION_KEYS, `correlation[${i}].`);
    const entry = c as Record<string, unknown>;
    return {
      kind: requiredString(entry.kind, `correlation[${i}].kind`),
      value: requiredString(entry.value, `correlation[${i}].value`),
    };
  });
}

/**
 * Validate and normalize an ingress into a deep-frozen record the runtime owns (nothing
 * is shared with the caller's objects). Throws {@link AxEventInputError} with code
 * `invalid_event` or `event_too_large`. Returns the record and its serialized size.
 */
export function normalizeIngress(
  ingress: AxEventIngress,
  limits: AxEventLimits = {},
): { record: AxEventIngressRecord; text: string; bytes: number } {
  if (ingress === null || typeof ingress !== 'object')
    throw invalid('publish() takes { event, identity?, trust? }');
  refuseUnknownFields(ingress, INGRESS_KEYS, '');
  const e = ingress.event as unknown as Record<string, unknown> | undefined;
  if (e === null || typeof e !== 'object') throw invalid('ingress.event must be a CloudEvents object');
  refuseUnknownFields(e, EVENT_KEYS, 'event.', '; extension attributes go in event.extensions');
  if (e.specversion !== undefined && e.specversion !== '1.0')
    throw invalid('event.specversion must be "1.0"');
  const time = optionalString(e.time, 'event.time');
  if (time !== undefined && (!RFC3339.test(time) || Number.isNaN(Date.parse(time)))) {
    throw invalid('event.time must be an RFC 3339 timestamp');
  }
  if (e.data !== undefined) assertPlainJson(e.data, 'event.data', limits.maxDataDepth);
  const trust = ingress.trust ?? 'untrusted';
  if (!TRUST_LEVELS.has(trust)) throw invalid('trust must be trusted, authenticated or untrusted');
  const event: Record<string, unknown> = {
    specversion: '1.0',
    id: requiredString(e.id, 'event.id'),
    source: requiredString(e.source, 'event.source'),
    type: requiredString(e.type, 'event.type'),
  };
  const optional = {
    subject: optionalString(e.subject, 'event.subject'),
    time,
    datacontenttype: optionalString(e.datacontenttype, 'event.datacontenttype'),
    dataschema: optionalString(e.dataschema, 'event.dataschema'),
  };
  for (const [k, v] of Object.entries(optional)) if (v !== undefined) event[k] = v;
  if (e.data !== undefined) event.data = e.data;
  const extensions = normalizeExtensions(e.extensions);
  if (extensions) event.extensions = { ...extensions };
  const record: Record<string, unknown> = {
    event,
    identity: normalizeIdentity(ingress.identity),
    trust,
    correlation: normalizeCorrelation(ingress.correlation),
  };
  if (ingress.partitionKey !== undefined)
    record.partitionKey = requiredString(ingress.partitionKey, 'partitionKey');
  // One serialization gives the size and a copy that shares nothing with the caller.
  const text = JSON.stringify(record);
  const bytes = byteLength(text);
  const max = limits.maxEventBytes ?? DEFAULT_MAX_EVENT_BYTES;
  if (bytes > max)
    throw new AxEventInputError('event_too_large', `The event is ${bytes} bytes; the cap is ${max}`);
  return { record: parseIngressRecord(text), text, bytes };
}

/** Rebuild a deep-frozen ingress record from its stored JSON text. */
export function parseIngressRecord(text: string): AxEventIngressRecord {
  const parsed = JSON.parse(text) as { event: { extensions?: object } };
  if (parsed.event.extensions) {
    parsed.event.extensions = Object.assign(Object.create(null), parsed.event.extensions);
  }
  return deepFreeze(parsed) as unknown as AxEventIngressRecord;
}

/**
 * True when no identity field is set. Throws {@link AxEventInputError} (`invalid_event`) for a
 * field an identity does not have (`tenantid`), which would otherwise read as anonymous.
 */
export function isAnonymous(identity: AxEventIdentity): boolean {
  // A misspelt field (`tenantid`) would make any identity anonymous here.
  refuseUnknownFields(identity, IDENTITY_KEYS, 'identity.');
  return IDENTITY_KEYS.every((k) => identity[k] === undefined);
}

/**
 * The identity scope of an ingress: `anonymous`, or the URI-encoded
 * `tenant/account/user/session` (missing parts empty) prefixed with `id:`. Two identities
 * have the same scope exactly when all four fields are equal. Throws as {@link isAnonymous} does.
 */
export function identityScope(identity: AxEventIdentity): string {
  if (isAnonymous(identity)) return 'anonymous';
  return `id:${IDENTITY_KEYS.map((k) => encodeURIComponent(identity[k] ?? '')).join('/')}`;
}

/** Options of {@link createEvent}. */
export type AxEventDraft = Omit<AxEvent, 'id' | 'specversion'> & { id?: string; time?: string };

/** Build an envelope with a random id (WebCrypto) and the current time, unless given. */
export function createEvent(draft: AxEventDraft, now: number = Date.now()): AxEvent {
  return {
    specversion: '1.0',
    ...draft,
    id: draft.id ?? crypto.randomUUID(),
    time: draft.time ?? new Date(now).toISOString(),
  };
}
