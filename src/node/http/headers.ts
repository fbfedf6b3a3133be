/**
 * Headers between fetch and node:http: outgoing `HeadersInit` to Node's header object, and
 * Node's response headers as web `Headers` or as a lean read-only view.
 */
import type * as http from 'node:http';
import { AxMCPError } from '../../protocol/errors.js';

/** Request headers for node:http: lower-case names, in a null-prototype object. */
export type OutgoingHeaders = Record<string, string>;

/** Fetch `HeadersInit` to a null-prototype object with lower-case names. */
export function outgoingHeaders(init: HeadersInit | undefined): OutgoingHeaders {
  const out: OutgoingHeaders = Object.create(null);
  if (init === undefined) return out;
  if (init instanceof Headers) {
    init.forEach((value, name) => {
      out[name] = value;
    });
    return out;
  }
  const add = (name: string, value: string) => {
    const key = name.toLowerCase();
    const previous = out[key];
    out[key] = previous === undefined ? value : `${previous}, ${value}`;
  };
  if (Array.isArray(init)) {
    for (const pair of init) {
      if (pair.length !== 2)
        throw new AxMCPError('invalid_argument', 'A header pair must have a name and a value');
      add(String(pair[0]), String(pair[1]));
    }
    return out;
  }
  for (const name of Object.keys(init)) add(name, String((init as Record<string, string>)[name]));
  return out;
}

/** Node's raw response headers as web `Headers`, every value kept (`set-cookie` included). */
export function webHeaders(raw: readonly string[]): Headers {
  const headers = new Headers();
  for (let i = 0; i + 1 < raw.length; i += 2) headers.append(raw[i]!, raw[i + 1]!);
  return headers;
}

/** Read-only response headers over Node's parsed (lower-case) header object. */
export class NodeHeaders {
  readonly #raw: http.IncomingHttpHeaders;

  constructor(raw: http.IncomingHttpHeaders) {
    this.#raw = raw;
  }

  get(name: string): string | null {
    const value = this.#raw[name.toLowerCase()];
    if (value === undefined) return null;
    return Array.isArray(value) ? value.join(', ') : value;
  }

  has(name: string): boolean {
    return this.#raw[name.toLowerCase()] !== undefined;
  }

  forEach(callback: (value: string, name: string, headers: NodeHeaders) => void): void {
    for (const [name, value] of this.entries()) callback(value, name, this);
  }

  *entries(): IterableIterator<[string, string]> {
    for (const name of Object.keys(this.#raw).sort()) {
      const value = this.get(name);
      if (value !== null) yield [name, value];
    }
  }

  *keys(): IterableIterator<string> {
    for (const [name] of this.entries()) yield name;
  }

  *values(): IterableIterator<string> {
    for (const [, value] of this.entries()) yield value;
  }

  [Symbol.iterator](): IterableIterator<[string, string]> {
    return this.entries();
  }
}
