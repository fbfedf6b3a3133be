/**
 * What `ax-mcp worker` tells its operators: one line per event, each with an ISO-8601 time and
 * a level, as text or as one JSON object per line for log shippers. A failure that repeats (the
 * database unreachable, every lane failing each second) is one incident: its first failure is
 * logged, repeats are counted, and one line says when it recovered. Passwords never appear.
 */

/** `text`: `2026-12-01T23:40:12.345Z info  worker w-1 started: …`; `json`: `{"time","level","msg",…}`. */
export type WorkerLogFormat = 'text' | 'json';

/** The formats `--log-format` accepts. */
export const WORKER_LOG_FORMATS: readonly WorkerLogFormat[] = ['text', 'json'];

export type WorkerLogLevel = 'info' | 'warn' | 'error';

/** Extra fields of a line (JSON keys; in text the message says what matters). */
export type WorkerLogFields = Record<string, string | number | boolean | undefined>;

/** Options of {@link WorkerLog}. */
export interface WorkerLogOptions {
  /** The worker id, on every line. */
  worker: string;
  format?: WorkerLogFormat;
  /** Where a finished line goes (the CLI: info to stdout, warn and error to stderr). */
  write: (line: string, level: WorkerLogLevel) => void;
  /** Strings never printed (a password): replaced by `…` wherever they occur. */
  secrets?: readonly (string | undefined)[];
  /** Milliseconds since the epoch. Default `Date.now`. */
  now?: () => number;
  /**
   * An incident nothing reported as recovered and that has been quiet this long is over: its
   * next failure is logged again. Default 60,000 ms.
   */
  quietMs?: number;
  /**
   * Failures of an incident's key and cause this soon after it recovered are its late notices
   * (connections that died with it, reporting a moment later), not a new incident: they are
   * not printed. Default 1000 ms.
   */
  graceMs?: number;
}

/** Why something failed, as far as an operator cares: is it unreachable, and what code. */
interface Cause {
  /** Same id, same incident: `unreachable` for every way of losing the connection, else the code. */
  id: string;
  unreachable: boolean;
  /** The most specific message, with its code. */
  text: string;
}

interface Incident {
  key: string;
  cause: Cause;
  failures: number;
  since: number;
  last: number;
}

/** System error codes of a peer that cannot be reached or dropped the connection. */
const NETWORK = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ENETDOWN',
]);

/** PostgreSQL SQLSTATEs that mean the connection is gone or cannot be made. */
const CONNECTION_STATES = new Map([
  ['57P01', 'admin shutdown'],
  ['57P02', 'crash shutdown'],
  ['57P03', 'cannot connect now'],
  ['57P05', 'idle session timeout'],
  ['25P03', 'idle-in-transaction timeout'],
  ['08000', 'connection exception'],
  ['08001', 'cannot connect'],
  ['08003', 'connection does not exist'],
  ['08004', 'connection rejected'],
  ['08006', 'connection failure'],
  ['08P01', 'protocol violation'],
]);

/** What `pg` and the store say, without a code, when a connection ends or cannot be had. */
const CONNECTION_LOST =
  /connection terminated|terminating connection|timeout exceeded when trying to connect|not queryable|LISTEN connection ended|not currently accepting connections|database system is (starting up|shutting down|in recovery mode)/i;

/** The errors down a cause chain, outermost first (`cause`, and the first of an AggregateError). */
function chain(error: unknown): unknown[] {
  const found: unknown[] = [];
  let current = error;
  for (let depth = 0; depth < 6 && current !== undefined && current !== null; depth++) {
    found.push(current);
    const errors = (current as { errors?: unknown }).errors;
    current = Array.isArray(errors) && errors.length > 0 ? errors[0] : (current as { cause?: unknown }).cause;
  }
  return found;
}

const codeOf = (error: unknown): string | undefined => {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.length > 0 ? code : undefined;
};

const messageOf = (error: unknown): string =>
  error instanceof Error ? error.message : typeof error === 'string' ? error : String(error);

/** The cause of a failure: its deepest message and code, and whether it means "unreachable". */
export function causeOf(error: unknown): Cause {
  const errors = chain(error);
  const codes = errors.map(codeOf).filter((c): c is string => c !== undefined);
  const message =
    [...errors]
      .reverse()
      .map(messageOf)
      .find((m) => m.trim().length > 0) ?? 'unknown error';
  // The innermost code is the most specific: a SQLSTATE or a system code under a store_error.
  const code = codes.at(-1);
  const connectionCode = codes.find(
    (c) => NETWORK.has(c) || CONNECTION_STATES.has(c) || /^08[0-9A-Z]{3}$/.test(c),
  );
  const unreachable = connectionCode !== undefined || errors.some((e) => CONNECTION_LOST.test(messageOf(e)));
  const named = connectionCode ?? code;
  const label =
    named && !message.includes(named) ? `${named} ${CONNECTION_STATES.get(named) ?? ''}`.trim() : '';
  return {
    // A code of the innermost error names the cause; a wrapper's code alone (store_error) does not.
    id: unreachable
      ? 'unreachable'
      : (codeOf(errors.at(-1)) ?? (code ? `${code}: ${message.slice(0, 80)}` : message.slice(0, 80))),
    unreachable,
    text: label ? `${message} (${label})` : message,
  };
}

/** `212 ms`, `3.4 s`, `5 min 3 s`, `2 h 5 min`. */
export function duration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const s = Math.round(ms / 1000);
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
}

/**
 * A connection string as it may be printed: no user, no password, no password parameter
 * (`postgres://…@db.internal:5432/events`).
 */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    const userinfo = u.username || u.password ? '…@' : '';
    return redactText(`${u.protocol}//${userinfo}${u.host}${u.pathname}${u.search}`);
  } catch {
    return '(connection string)';
  }
}

/** Credentials in any URL or `password=` parameter of a text, replaced by `…`. */
function redactText(text: string): string {
  return text
    .replace(/\b([a-z][a-z0-9+.-]*:\/\/)[^\s/@]*@/gi, '$1…@')
    .replace(/([?&;\s](?:ssl)?password=)[^&\s]*/gi, '$1…');
}

/** The log of one `ax-mcp worker` process. */
export class WorkerLog {
  readonly #o: WorkerLogOptions;
  readonly #secrets: string[];
  readonly #now: () => number;
  readonly #quietMs: number;
  readonly #graceMs: number;
  /** Open incidents by key and cause. */
  readonly #open = new Map<string, Incident>();
  /** When incidents recovered, by key and cause, while their late notices may still come. */
  readonly #ended = new Map<string, number>();

  constructor(options: WorkerLogOptions) {
    this.#o = options;
    this.#now = options.now ?? Date.now;
    this.#quietMs = options.quietMs ?? 60_000;
    this.#graceMs = options.graceMs ?? 1000;
    // Longest first, so that a secret containing another is replaced whole.
    this.#secrets = [...new Set((options.secrets ?? []).filter((s): s is string => !!s))].sort(
      (a, b) => b.length - a.length,
    );
  }

  info(msg: string, fields?: WorkerLogFields): void {
    this.#line('info', msg, fields);
  }

  warn(msg: string, fields?: WorkerLogFields): void {
    this.#line('warn', msg, fields);
  }

  error(msg: string, fields?: WorkerLogFields): void {
    this.#line('error', msg, fields);
  }

  /**
   * A failure of `key` (`database`, `source mcp-1`). The first of an incident (this key and this
   * cause; every way of being unreachable is one cause) logs an error line naming the cause;
   * repeats are counted until {@link recovered}. Another cause is another incident, with its line.
   */
  incident(key: string, error: unknown, fields?: WorkerLogFields): void {
    const cause = causeOf(error);
    const id = `${key}\u0000${cause.id}`;
    const now = this.#now();
    const open = this.#open.get(id);
    if (open && now - open.last < this.#quietMs) {
      open.failures++;
      open.last = now;
      return;
    }
    const ended = this.#ended.get(id);
    if (ended !== undefined && now - ended < this.#graceMs) return;
    this.#ended.delete(id);
    if (this.#open.size >= 256) this.#forget(now);
    const unprinted = open ? open.failures - 1 : 0;
    this.#open.set(id, { key, cause, failures: 1, since: now, last: now });
    const where = fields?.where;
    this.error(
      `${key} ${cause.unreachable ? 'unreachable' : 'error'}: ${cause.text}${where ? `; seen by ${where}` : ''}` +
        (unprinted > 0 ? `; ${unprinted} earlier repeats were not printed` : '') +
        '; repeats are counted until it recovers',
      { ...fields, incident: key, cause: cause.id, ...(unprinted > 0 ? { unprinted } : {}) },
    );
  }

  /** `key` works again: each of its open incidents ends with one info line (failures, how long). */
  recovered(key: string): void {
    if (this.#open.size === 0) return;
    const now = this.#now();
    for (const [id, incident] of this.#open) {
      if (incident.key !== key) continue;
      this.#open.delete(id);
      this.#ended.set(id, now);
      const { failures, since, cause } = incident;
      this.info(
        `${key} recovered after ${failures} ${failures === 1 ? 'failure' : 'failures'} in ${duration(now - since)}` +
          ` (${cause.unreachable ? 'unreachable' : cause.id})`,
        { incident: key, cause: cause.id, failures, durationMs: now - since },
      );
    }
  }

  /** Drop what can no longer matter (causes with ids in their messages would pile up). */
  #forget(now: number): void {
    for (const [id, incident] of this.#open) if (now - incident.last >= this.#quietMs) this.#open.delete(id);
    for (const [id, at] of this.#ended) if (now - at >= this.#graceMs) this.#ended.delete(id);
    for (const id of this.#open.keys()) {
      if (this.#open.size < 1024) break;
      this.#open.delete(id);
    }
  }

  #redact(text: string): string {
    let clean = text;
    for (const secret of this.#secrets) clean = clean.split(secret).join('…');
    return redactText(clean);
  }

  #line(level: WorkerLogLevel, msg: string, fields: WorkerLogFields = {}): void {
    const time = new Date(this.#now()).toISOString();
    const text = this.#redact(msg);
    if (this.#o.format === 'json') {
      const record: Record<string, string | number | boolean> = {
        time,
        level,
        msg: text,
        worker: this.#redact(this.#o.worker),
      };
      for (const [name, value] of Object.entries(fields)) {
        if (value === undefined || name in record) continue;
        record[name] = typeof value === 'string' ? this.#redact(value) : value;
      }
      this.#o.write(JSON.stringify(record), level);
      return;
    }
    // One record, one line: a message with line breaks stays on its line.
    const flat = text.replace(/\s*[\r\n]+\s*/g, ' ');
    this.#o.write(`${time} ${level.padEnd(5)} worker ${this.#redact(this.#o.worker)} ${flat}`, level);
  }
}
