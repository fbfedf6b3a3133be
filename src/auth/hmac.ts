/**
 * HMAC request signing with WebCrypto (works in every runtime with `crypto.subtle`).
 */
import { AxMCPError } from '../protocol/errors.js';
import type { AxMCPAuthenticationRequest } from './authentication.js';
import { assertToken, hex, utf8Bytes } from './encoding.js';
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

/**
 * Signs each request with HMAC-SHA-256 over
 * `METHOD "\n" path?query "\n" hex(sha256(body)) "\n" timestamp "\n" nonce`
 * (an absent body hashes as the empty string; the timestamp is whole seconds since the
 * epoch) and sends `X-Signature: keyId=<id>,algorithm=hmac-sha256,signature=<hex>`,
 * `X-Timestamp` and `X-Nonce`. Put it last in a strategy list so the signature covers the
 * query parameters other strategies add.
 */
export function axMCPHMACAuthentication(options: AxMCPHMACOptions): AxMCPRedactedAuthentication {
  const { keyId, secret } = options ?? ({} as AxMCPHMACOptions);
  assertToken(keyId, 'The HMAC keyId');
  if (/[,=]/.test(keyId))
    throw new AxMCPError('invalid_argument', 'The HMAC keyId cannot contain "," or "="');
  let secretBytes: Uint8Array<ArrayBuffer>;
  if (typeof secret === 'string') secretBytes = utf8Bytes(secret);
  else if (secret instanceof Uint8Array) secretBytes = new Uint8Array(secret);
  else throw new AxMCPError('invalid_argument', 'The HMAC secret must be a string or a Uint8Array');
  if (secretBytes.byteLength === 0) throw new AxMCPError('invalid_argument', 'The HMAC secret is empty');
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
