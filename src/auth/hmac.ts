/**
 * HMAC request signing with WebCrypto (works in every runtime with `crypto.subtle`).
 */
import { anyOf, func, instance, object, required } from '../options/check.js';
import { AxMCPError, assertMCPOptions } from '../protocol/errors.js';
import type { AxMCPAuthenticationRequest } from './authentication.js';
import { assertToken, hex, isToken, utf8Bytes } from './encoding.js';
import { type AxMCPRedactedAuthentication, redactedAuthentication } from './strategies.js';

/** Options of {@link axMCPHMACAuthentication}. */
export interface AxMCPHMACOptions {
  /** Names the key to the server; visible ASCII without `,` or `=`. */
  keyId: string;
  /** The shared secret: UTF-8 text or raw bytes (copied). */
  secret: string | Uint8Array;
  /** The clock, in milliseconds since the epoch (default `Date.now`). */
  now?: () => number;
  /** A fresh nonce per request (default: 16 random bytes, hex). */
  nonce?: () => string;
}

/** The shape of {@link AxMCPHMACOptions}. */
const HMAC_OPTIONS = object(
  {
    keyId: required(
      instance(
        'a non-empty string of visible ASCII without "," or "="',
        (value) => isToken(value) && !/[,=]/.test(value as string),
      ),
    ),
    secret: required(
      anyOf(
        instance('a non-empty string', (value) => typeof value === 'string' && value.length > 0),
        instance('a non-empty Uint8Array', (value) => value instanceof Uint8Array && value.byteLength > 0),
      ),
    ),
    now: func('a clock () => milliseconds since the epoch'),
    nonce: func('a function () => a fresh nonce'),
  },
  {
    expected: 'an object { keyId, secret, now?, nonce? }',
    aliases: { key: 'secret', id: 'keyId', clock: 'now' },
  },
);

/**
 * Signs each request with HMAC-SHA-256 over
 * `METHOD "\n" path?query "\n" hex(sha256(body)) "\n" timestamp "\n" nonce`
 * (an absent body hashes as the empty string; the timestamp is whole seconds since the
 * epoch) and sends `X-Signature: keyId=<id>,algorithm=hmac-sha256,signature=<hex>`,
 * `X-Timestamp` and `X-Nonce`. Put it last in a strategy list so the signature covers the
 * query parameters other strategies add.
 */
export function axMCPHMACAuthentication(options: AxMCPHMACOptions): AxMCPRedactedAuthentication {
  assertMCPOptions(HMAC_OPTIONS, options, 'axMCPHMACAuthentication options');
  const { keyId, secret } = options;
  const secretBytes: Uint8Array<ArrayBuffer> =
    typeof secret === 'string' ? utf8Bytes(secret) : new Uint8Array(secret);
  const subtle = globalThis.crypto?.subtle;
  if (subtle === undefined) {
    throw new AxMCPError('unsupported', 'HMAC authentication needs WebCrypto (crypto.subtle)');
  }
  const now = options.now ?? Date.now;
  const nonce = options.nonce ?? randomNonce;
  let key: Promise<CryptoKey> | undefined;
  const signingKey = () => {
    key ??= subtle.importKey('raw', secretBytes, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
    return key;
  };

  return redactedAuthentication(
    'hmac',
    { keyId, secret: '[redacted]' },
    ['x-signature'],
    async (request: AxMCPAuthenticationRequest) => {
      const timestamp = String(Math.floor(now() / 1000));
      const once = nonce();
      assertToken(once, 'The HMAC nonce');
      const bodyHash = hex(await subtle.digest('SHA-256', utf8Bytes(request.body ?? '')));
      const canonical = `${request.method.toUpperCase()}\n${request.url.pathname}${request.url.search}\n${bodyHash}\n${timestamp}\n${once}`;
      const signature = hex(await subtle.sign('HMAC', await signingKey(), utf8Bytes(canonical)));
      return {
        headers: {
          'X-Signature': `keyId=${keyId},algorithm=hmac-sha256,signature=${signature}`,
          'X-Timestamp': timestamp,
          'X-Nonce': once,
        },
      };
    },
  );
}

function randomNonce(): string {
  return hex(globalThis.crypto.getRandomValues(new Uint8Array(16)));
}
