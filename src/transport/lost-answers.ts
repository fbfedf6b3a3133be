/**
 * Answers a message-stream transport dropped unread (a line or frame over its size limit), and
 * whose they were, so that the waiting request fails at once instead of timing out:
 *
 * - {@link peekMessage} reads the start of the dropped message, never the whole of it: is it a
 *   response (`result` or `error` at the top level, no `method`), and which id does it carry,
 *   if the id comes before anything too large to skip.
 * - {@link LostAnswers} keeps the answers that were lost without a readable id. Each one belongs
 *   to one of the requests that were still waiting when it arrived; a request that gets its
 *   answer later is ruled out. A request is named as the owner only when that is certain: it is
 *   the last one left for a lost answer, or as many requests are left as answers were lost
 *   among them. A request whose answer may still come is never named.
 *
 * Isomorphic: no `node:` imports.
 */
import type { JSONRPCId } from '../protocol/jsonrpc.js';

/** How much of a dropped message is read to find its id, in bytes (or UTF-16 units). */
export const OVERSIZED_PREFIX_BYTES = 4096;

/** What the start of a message says about it. */
export type PeekedMessage =
  /** A response; `id` is `undefined` when it could not be read from the start. */
  | { kind: 'response'; id: JSONRPCId | null | undefined }
  /** A request, a notification, or not a JSON-RPC object at all: it answered no request. */
  | { kind: 'other' }
  /** The start does not tell. */
  | { kind: 'unknown' };

const UNKNOWN: PeekedMessage = Object.freeze({ kind: 'unknown' });
const OTHER: PeekedMessage = Object.freeze({ kind: 'other' });
/** A value that does not end within the prefix (or is not valid JSON). */
const CUT = Symbol('cut');

/** Reads the top-level members of a JSON object from its start, stopping at the first one that does not fit. */
export function peekMessage(prefix: string): PeekedMessage {
  const scan = new Scanner(prefix);
  scan.space();
  const first = scan.peek();
  if (first === undefined) return UNKNOWN;
  if (first === '[') return UNKNOWN; // A batch: which of its answers was lost cannot be told.
  if (first !== '{') return OTHER;
  scan.next();
  let response = false;
  let id: JSONRPCId | null | undefined;
  for (;;) {
    scan.space();
    if (scan.peek() !== '"') break;
    const key = scan.string();
    if (key === CUT) break;
    scan.space();
    if (scan.peek() !== ':') break;
    scan.next();
    scan.space();
    if (key === 'method') return OTHER;
    if (key === 'id') {
      const value = scan.primitive();
      if (value === CUT) break;
      if (value !== null && typeof value !== 'string' && typeof value !== 'number') return OTHER;
      id = value;
    } else {
      if (key === 'result' || key === 'error') response = true;
      if (!scan.skipValue()) break;
    }
    scan.space();
    if (scan.peek() !== ',') break;
    scan.next();
  }
  return response ? { kind: 'response', id } : UNKNOWN;
}

class Scanner {
  #i = 0;
  readonly #text: string;

  constructor(text: string) {
    this.#text = text;
  }

  peek(): string | undefined {
    return this.#i < this.#text.length ? this.#text[this.#i] : undefined;
  }

  next(): void {
    this.#i++;
  }

  space(): void {
    const text = this.#text;
    while (this.#i < text.length) {
      const c = text.charCodeAt(this.#i);
      if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) return;
      this.#i++;
    }
  }

  /** A string starting at the cursor, decoded. */
  string(): string | typeof CUT {
    const start = this.#i;
    if (!this.#skipString()) return CUT;
    try {
      return JSON.parse(this.#text.slice(start, this.#i)) as string;
    } catch {
      return CUT;
    }
  }

  /** A string, number, `true`, `false` or `null` at the cursor; objects and arrays are {@link CUT}. */
  primitive(): string | number | boolean | null | typeof CUT {
    const start = this.#i;
    if (this.peek() === '"') return this.string();
    if (!this.#skipLiteral()) return CUT;
    try {
      const value: unknown = JSON.parse(this.#text.slice(start, this.#i));
      return typeof value === 'object' && value !== null ? CUT : (value as string | number | boolean | null);
    } catch {
      return CUT;
    }
  }

  /** Moves past one JSON value; false when it does not end within the text. */
  skipValue(): boolean {
    const c = this.peek();
    if (c === '"') return this.#skipString();
    if (c !== '{' && c !== '[') return this.#skipLiteral();
    const text = this.#text;
    let depth = 0;
    while (this.#i < text.length) {
      const d = text[this.#i];
      if (d === '"') {
        if (!this.#skipString()) return false;
        continue;
      }
      if (d === '{' || d === '[') depth++;
      else if (d === '}' || d === ']') {
        depth--;
        if (depth === 0) {
          this.#i++;
          return true;
        }
      }
      this.#i++;
    }
    return false;
  }

  #skipString(): boolean {
    const text = this.#text;
    let i = this.#i + 1;
    while (i < text.length) {
      const c = text[i];
      if (c === '\\') i += 2;
      else if (c === '"') {
        this.#i = i + 1;
        return true;
      } else i++;
    }
    return false;
  }

  /** A number or keyword: it ends at a delimiter, which must be within the text. */
  #skipLiteral(): boolean {
    const text = this.#text;
    let i = this.#i;
    while (i < text.length && !/[\s,}\]]/.test(text[i] as string)) i++;
    if (i === this.#i || i >= text.length) return false;
    this.#i = i;
    return true;
  }
}

/** At most this many unattributed lost answers are remembered; forgetting one never names a wrong owner. */
const MAX_LOST = 64;

/**
 * Lost answers without a readable id, each with the requests it may belong to (known by a
 * number unique per request, never by the id, which a caller may reuse).
 */
export class LostAnswers {
  #groups: Set<number>[] = [];

  /** True when no lost answer is waiting to be attributed. */
  get empty(): boolean {
    return this.#groups.length === 0;
  }

  /** An answer was lost; it belongs to one of `candidates` (the requests waiting when it arrived). */
  add(candidates: Iterable<number>): void {
    const group = new Set(candidates);
    if (group.size === 0) return;
    this.#groups.push(group);
    if (this.#groups.length > MAX_LOST) this.#groups.shift();
  }

  /** Request `key` got its answer (or was never sent): none of the lost answers is its. */
  answered(key: number): void {
    for (const group of this.#groups) group.delete(key);
  }

  /** The requests now certain to have lost their answer; they leave the bookkeeping. */
  owners(): number[] {
    const owners: number[] = [];
    for (;;) {
      // An answer every candidate of which got its own answer was nobody's we know: forget it.
      this.#groups = this.#groups.filter((group) => group.size > 0);
      const single = this.#groups.find((group) => group.size === 1);
      if (single) {
        const [owner] = single as Set<number> & Iterable<number>;
        this.#groups = this.#groups.filter((group) => group !== single);
        // A request has one answer: it owns no other lost one.
        for (const group of this.#groups) group.delete(owner as number);
        owners.push(owner as number);
        continue;
      }
      const union = new Set<number>();
      for (const group of this.#groups) for (const key of group) union.add(key);
      if (union.size > 0 && union.size === this.#groups.length) {
        // As many answers lost as requests could own them: each of them lost its own.
        owners.push(...union);
        this.#groups = [];
      }
      return owners;
    }
  }

  clear(): void {
    this.#groups = [];
  }
}
