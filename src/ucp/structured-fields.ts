/**
 * The part of RFC 8941 (Structured Field Values) UCP needs: Dictionaries whose members are
 * items or inner lists, with parameters — enough for `UCP-Agent`, `Signature-Input`,
 * `Signature` and `Content-Digest`. Parsing is strict: anything else is a syntax error, and
 * the result lives in `Map`s, so a peer-chosen key never becomes an object property.
 */

/** A byte sequence (`:base64:`), kept apart from strings. */
export interface SFBytes {
  readonly bytes: Uint8Array;
}

/** A bare item. Tokens are `{ token }` so that they round-trip distinct from strings. */
export type SFBareItem = string | number | boolean | SFBytes | { readonly token: string };

/** An item with its parameters. */
export interface SFItem {
  value: SFBareItem;
  params: Map<string, SFBareItem>;
}

/** An inner list with its parameters. */
export interface SFInnerList {
  items: SFItem[];
  params: Map<string, SFBareItem>;
}

/** A parsed Dictionary. */
export type SFDictionary = Map<string, SFItem | SFInnerList>;

/** Thrown on input that is not a valid Structured Field. */
export class SFSyntaxError extends Error {}

/** Parses a Dictionary (RFC 8941 §4.2.2). */
export function parseDictionary(input: string): SFDictionary {
  const p = new Parser(input);
  const out: SFDictionary = new Map();
  p.skipSP();
  if (p.done()) return out;
  for (;;) {
    const key = p.key();
    let member: SFItem | SFInnerList;
    if (p.peek() === '=') {
      p.pos++;
      member = p.peek() === '(' ? p.innerList() : p.item();
    } else {
      member = { value: true, params: p.params() };
    }
    out.set(key, member);
    p.skipOWS();
    if (p.done()) return out;
    if (p.peek() !== ',') throw new SFSyntaxError('expected "," between dictionary members');
    p.pos++;
    p.skipOWS();
    if (p.done()) throw new SFSyntaxError('trailing comma');
  }
}

/** True for an inner list member. */
export function isInnerList(member: SFItem | SFInnerList): member is SFInnerList {
  return 'items' in member;
}

/** Serializes a bare item (RFC 8941 §4.1.3). */
export function serializeBareItem(value: SFBareItem): string {
  if (typeof value === 'string') {
    if (!/^[\x20-\x7e]*$/.test(value)) throw new SFSyntaxError('a string holds a non-ASCII character');
    return `"${value.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
  }
  if (typeof value === 'boolean') return value ? '?1' : '?0';
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new SFSyntaxError('a number is not finite');
    return Number.isInteger(value) ? String(value) : String(Math.round(value * 1000) / 1000);
  }
  if ('bytes' in value) return `:${base64Encode(value.bytes)}:`;
  return value.token;
}

/** Serializes parameters (`;a=1;b="x"`). */
export function serializeParams(params: ReadonlyMap<string, SFBareItem>): string {
  let out = '';
  for (const [key, value] of params)
    out += value === true ? `;${key}` : `;${key}=${serializeBareItem(value)}`;
  return out;
}

/** Serializes an inner list with its parameters. */
export function serializeInnerList(list: SFInnerList): string {
  const items = list.items.map((item) => serializeBareItem(item.value) + serializeParams(item.params));
  return `(${items.join(' ')})${serializeParams(list.params)}`;
}

/** Standard base64 (with padding) of bytes. */
export function base64Encode(bytes: Uint8Array): string {
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(binary);
}

/** Decodes standard base64; throws {@link SFSyntaxError} on anything else. */
export function base64Decode(text: string): Uint8Array {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text)) throw new SFSyntaxError('invalid base64');
  let binary: string;
  try {
    binary = atob(text);
  } catch {
    throw new SFSyntaxError('invalid base64');
  }
  const out = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
  return out;
}

/** base64url without padding (JWK members). */
export function base64urlDecode(text: string): Uint8Array {
  const standard = text.replace(/-/g, '+').replace(/_/g, '/');
  return base64Decode(standard + '='.repeat((4 - (standard.length % 4)) % 4));
}

class Parser {
  pos = 0;
  constructor(readonly s: string) {
    if (s.length > 16_384) throw new SFSyntaxError('field too long');
  }
  done(): boolean {
    return this.pos >= this.s.length;
  }
  peek(): string {
    return this.s[this.pos] ?? '';
  }
  skipSP(): void {
    while (this.peek() === ' ') this.pos++;
  }
  skipOWS(): void {
    while (this.peek() === ' ' || this.peek() === '\t') this.pos++;
  }
  key(): string {
    const match = /^[a-z*][a-z0-9_.*-]*/.exec(this.s.slice(this.pos));
    if (!match) throw new SFSyntaxError('expected a key');
    this.pos += match[0].length;
    return match[0];
  }
  params(): Map<string, SFBareItem> {
    const params = new Map<string, SFBareItem>();
    while (this.peek() === ';') {
      this.pos++;
      this.skipSP();
      const key = this.key();
      let value: SFBareItem = true;
      if (this.peek() === '=') {
        this.pos++;
        value = this.bareItem();
      }
      params.set(key, value);
    }
    return params;
  }
  item(): SFItem {
    const value = this.bareItem();
    return { value, params: this.params() };
  }
  innerList(): SFInnerList {
    this.pos++; // (
    const items: SFItem[] = [];
    for (;;) {
      this.skipSP();
      if (this.peek() === ')') {
        this.pos++;
        return { items, params: this.params() };
      }
      items.push(this.item());
      const next = this.peek();
      if (next !== ' ' && next !== ')') throw new SFSyntaxError('expected " " or ")" in an inner list');
      if (items.length > 64) throw new SFSyntaxError('inner list too long');
    }
  }
  bareItem(): SFBareItem {
    const c = this.peek();
    if (c === '"') return this.string();
    if (c === ':') return this.bytes();
    if (c === '?') {
      const v = this.s[this.pos + 1];
      if (v !== '0' && v !== '1') throw new SFSyntaxError('invalid boolean');
      this.pos += 2;
      return v === '1';
    }
    if (c === '-' || (c >= '0' && c <= '9')) {
      const match = /^-?\d{1,15}(\.\d{1,3})?/.exec(this.s.slice(this.pos));
      if (!match) throw new SFSyntaxError('invalid number');
      this.pos += match[0].length;
      return Number(match[0]);
    }
    const token = /^[A-Za-z*][A-Za-z0-9!#$%&'*+.^_`|~:/-]*/.exec(this.s.slice(this.pos));
    if (!token) throw new SFSyntaxError('expected an item');
    this.pos += token[0].length;
    return { token: token[0] };
  }
  string(): string {
    this.pos++;
    let out = '';
    for (;;) {
      const c = this.s[this.pos++];
      if (c === undefined) throw new SFSyntaxError('unterminated string');
      if (c === '"') return out;
      if (c === '\\') {
        const next = this.s[this.pos++];
        if (next !== '"' && next !== '\\') throw new SFSyntaxError('invalid escape');
        out += next;
      } else if (c < ' ' || c > '~') {
        throw new SFSyntaxError('invalid character in string');
      } else {
        out += c;
      }
    }
  }
  bytes(): SFBytes {
    const end = this.s.indexOf(':', this.pos + 1);
    if (end < 0) throw new SFSyntaxError('unterminated byte sequence');
    const bytes = base64Decode(this.s.slice(this.pos + 1, end));
    this.pos = end + 1;
    return { bytes };
  }
}
