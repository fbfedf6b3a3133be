/** Small encodings and checks shared by the authentication strategies (internal). */
import { AxMCPError } from '../protocol/errors.js';

const utf8 = new TextEncoder();

/** UTF-8 bytes of a string. */
export function utf8Bytes(text: string): Uint8Array<ArrayBuffer> {
  return utf8.encode(text) as Uint8Array<ArrayBuffer>;
}

/** Standard base64 of bytes; safe for any input because it never sees non-Latin-1 text. */
export function base64(bytes: Uint8Array): string {
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(binary);
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

/** Lower-case hex of bytes. */
export function hex(bytes: ArrayBuffer | Uint8Array): string {
  const view = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  let out = '';
  for (const byte of view) out += HEX[byte];
  return out;
}

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const HEADER_VALUE = /^[\x21-\x7e\x80-\xff]([\x20-\x7e\x80-\xff]*[\x21-\x7e\x80-\xff])?$/;

/** True for an HTTP header name (RFC 9110 token). */
export function isHeaderName(name: unknown): boolean {
  return typeof name === 'string' && HEADER_NAME.test(name);
}

/** True for a non-empty header value without control characters or surrounding spaces. */
export function isHeaderValue(value: unknown): boolean {
  return typeof value === 'string' && HEADER_VALUE.test(value);
}

/** True for a non-empty run of visible ASCII (no spaces). */
export function isToken(value: unknown): boolean {
  return typeof value === 'string' && /^[\x21-\x7e]+$/.test(value);
}

/** Throws `invalid_argument` (naming `what`, never the value) unless `name` is an HTTP header name. */
export function assertHeaderName(name: string, what: string): void {
  if (!isHeaderName(name)) {
    throw new AxMCPError('invalid_argument', `${what} is not a valid HTTP header name`);
  }
}

/** Throws `invalid_argument` (naming `what`, never the value) unless `value` is a non-empty header value. */
export function assertHeaderValue(value: string, what: string): void {
  if (!isHeaderValue(value)) {
    throw new AxMCPError(
      'invalid_argument',
      `${what} must be a non-empty string without control characters or surrounding spaces`,
    );
  }
}

/** Throws `invalid_argument` unless `value` is a non-empty run of visible ASCII (no spaces). */
export function assertToken(value: string, what: string): void {
  if (!isToken(value)) {
    throw new AxMCPError(
      'invalid_argument',
      `${what} must be a non-empty string of visible ASCII characters`,
    );
  }
}
