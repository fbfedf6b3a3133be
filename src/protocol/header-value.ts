/**
 * The value codec of the 2026-07-28 request headers (`Mcp-Name`, `Mcp-Param-{Name}`): plain
 * ASCII as is, anything else as `=?base64?{Base64 of the UTF-8 bytes}?=`.
 *
 * Pure and isomorphic: web-standard `TextEncoder`/`TextDecoder` only, no `node:` imports.
 */
import { AxMCPError, AxMCPProtocolError, RPC } from './errors.js';

const SENTINEL_PREFIX = '=?base64?';
const SENTINEL_SUFFIX = '?=';
/** The shortest encoded value, `=?base64??=` (the empty string). */
const SENTINEL_MIN_LENGTH = SENTINEL_PREFIX.length + SENTINEL_SUFFIX.length;

const utf8Encoder = new TextEncoder();
const utf8Decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

const BASE64_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const BASE64_VALUES = new Int8Array(128).fill(-1);
for (let i = 0; i < BASE64_ALPHABET.length; i++) BASE64_VALUES[BASE64_ALPHABET.charCodeAt(i)] = i;

/** An unpaired UTF-16 surrogate: a string that has no UTF-8 form. */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

function base64Encode(bytes: Uint8Array): string {
  let out = '';
  let i = 0;
  for (; i + 2 < bytes.length; i += 3) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8) | bytes[i + 2]!;
    out +=
      BASE64_ALPHABET[n >>> 18]! +
      BASE64_ALPHABET[(n >>> 12) & 63]! +
      BASE64_ALPHABET[(n >>> 6) & 63]! +
      BASE64_ALPHABET[n & 63]!;
  }
  const rest = bytes.length - i;
  if (rest === 1) {
    const n = bytes[i]! << 16;
    out += BASE64_ALPHABET[n >>> 18]! + BASE64_ALPHABET[(n >>> 12) & 63]! + '==';
  } else if (rest === 2) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8);
    out +=
      BASE64_ALPHABET[n >>> 18]! + BASE64_ALPHABET[(n >>> 12) & 63]! + BASE64_ALPHABET[(n >>> 6) & 63]! + '=';
  }
  return out;
}

/** Strict RFC 4648 §4 decoding: padding required, no whitespace, canonical (zero) pad bits. */
function base64Decode(text: string): Uint8Array | undefined {
  if (text.length % 4 !== 0) return undefined;
  const pad = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0;
  const bytes = new Uint8Array((text.length / 4) * 3 - pad);
  let o = 0;
  for (let i = 0; i < text.length; i += 4) {
    const last = i + 4 === text.length;
    let n = 0;
    for (let j = 0; j < 4; j++) {
      const c = text.charCodeAt(i + j);
      if (last && j >= 4 - pad) {
        n <<= 6; // '=' stands for zero bits
        continue;
      }
      const v = c < 128 ? BASE64_VALUES[c]! : -1;
      if (v < 0) return undefined;
      n = (n << 6) | v;
    }
    if (last && pad === 2 && (n & 0xffff) !== 0) return undefined;
    if (last && pad === 1 && (n & 0xff) !== 0) return undefined;
    bytes[o++] = n >>> 16;
    if (o < bytes.length) bytes[o++] = (n >>> 8) & 0xff;
    if (o < bytes.length) bytes[o++] = n & 0xff;
  }
  return bytes;
}

/** Whether every character is visible ASCII or space, with no space at either end. */
export function isPlainASCII(value: string): boolean {
  const n = value.length;
  for (let i = 0; i < n; i++) {
    const c = value.charCodeAt(i);
    if (c < 0x20 || c > 0x7e) return false;
  }
  return n === 0 || (value.charCodeAt(0) !== 0x20 && value.charCodeAt(n - 1) !== 0x20);
}

function looksLikeSentinel(value: string): boolean {
  return value.startsWith(SENTINEL_PREFIX) && value.endsWith(SENTINEL_SUFFIX);
}

/** A server string quoted for an error message: escaped (no raw control characters) and bounded. */
export function quote(value: string): string {
  return JSON.stringify(value.length > 64 ? `${value.slice(0, 64)}…` : value);
}

/**
 * Encode a value for the `Mcp-Name` or an `Mcp-Param-{Name}` header.
 *
 * The value is returned unchanged when it is plain: only visible ASCII and space
 * (0x20–0x7E), no space at either end, and not shaped like the sentinel. The empty string
 * is plain and stays empty. Anything else — non-ASCII, any control character (tab, CR, LF,
 * NUL, DEL…), a leading or trailing space, or a value that starts with `=?base64?` and ends
 * with `?=` — is sent as `=?base64?{Base64 of the UTF-8 bytes}?=` (standard alphabet,
 * padded, lowercase markers).
 *
 * @throws {AxMCPError} `invalid_argument` when the string holds an unpaired UTF-16
 *   surrogate, which has no UTF-8 form and could never match the request body.
 */
export function encodeHeaderValue(value: string): string {
  if (isPlainASCII(value) && !looksLikeSentinel(value)) return value;
  if (LONE_SURROGATE.test(value)) {
    throw new AxMCPError(
      'invalid_argument',
      'A header value contains an unpaired UTF-16 surrogate and cannot be encoded as UTF-8',
    );
  }
  return SENTINEL_PREFIX + base64Encode(utf8Encoder.encode(value)) + SENTINEL_SUFFIX;
}

/**
 * Decode an `Mcp-Name` or `Mcp-Param-{Name}` header value as a server receives it: the
 * inverse of {@link encodeHeaderValue}.
 *
 * Optional whitespace (space, tab) around the field value is removed first, as HTTP does.
 * A value of the form `=?base64?…?=` (lowercase markers only) is decoded as strict Base64
 * (padding required, canonical) of well-formed UTF-8; any other value is literal.
 *
 * @throws {AxMCPProtocolError} with `rpcCode` `-32020` (HeaderMismatch) when the value holds
 *   characters outside tab and 0x20–0x7E, or its Base64 or UTF-8 is malformed.
 */
export function decodeHeaderValue(value: string): string {
  let start = 0;
  let end = value.length;
  while (start < end && (value.charCodeAt(start) === 0x20 || value.charCodeAt(start) === 0x09)) start++;
  while (end > start && (value.charCodeAt(end - 1) === 0x20 || value.charCodeAt(end - 1) === 0x09)) end--;
  const field = value.slice(start, end);
  for (let i = 0; i < field.length; i++) {
    const c = field.charCodeAt(i);
    if ((c < 0x20 && c !== 0x09) || c > 0x7e) {
      throw new AxMCPProtocolError(RPC.headerMismatch, 'Header value contains invalid characters');
    }
  }
  if (field.length < SENTINEL_MIN_LENGTH || !looksLikeSentinel(field)) return field;
  const bytes = base64Decode(field.slice(SENTINEL_PREFIX.length, -SENTINEL_SUFFIX.length));
  if (bytes === undefined) {
    throw new AxMCPProtocolError(RPC.headerMismatch, 'Header value has malformed Base64');
  }
  try {
    return utf8Decoder.decode(bytes);
  } catch (cause) {
    throw new AxMCPProtocolError(RPC.headerMismatch, 'Header value is not valid UTF-8', undefined, { cause });
  }
}
