/**
 * DPoP (RFC 9449): one ES256 key pair per OAuth strategy (the private key never leaves
 * WebCrypto), proofs for MCP requests with `ath` and the server's latest nonce, and the
 * same key for token requests through oauth4webapi.
 */
import * as oauth from 'oauth4webapi';
import { base64, utf8Bytes } from '../encoding.js';

const ALG = 'ES256';

/** A DPoP key and the nonces resource servers handed out, per origin. */
export class DPoPKey {
  readonly #keyPair: CryptoKeyPair;
  readonly #jwk: JsonWebKey;
  readonly thumbprint: string;
  readonly #nonces = new Map<string, string>();
  /** The oauth4webapi handle (token, registration requests), sharing the key pair. */
  readonly handle: oauth.DPoPHandle;

  private constructor(keyPair: CryptoKeyPair, jwk: JsonWebKey, thumbprint: string) {
    this.#keyPair = keyPair;
    this.#jwk = jwk;
    this.thumbprint = thumbprint;
    this.handle = oauth.DPoP({}, keyPair);
  }

  static async generate(): Promise<DPoPKey> {
    const keyPair = (await crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, false, [
      'sign',
      'verify',
    ])) as CryptoKeyPair;
    const full = await crypto.subtle.exportKey('jwk', keyPair.publicKey);
    const jwk: JsonWebKey = { kty: 'EC', crv: full.crv!, x: full.x!, y: full.y! };
    // RFC 7638: the required members in lexicographic order, no spaces.
    const canonical = `{"crv":"${jwk.crv}","kty":"EC","x":"${jwk.x}","y":"${jwk.y}"}`;
    const thumbprint = base64url(new Uint8Array(await crypto.subtle.digest('SHA-256', utf8Bytes(canonical))));
    return new DPoPKey(keyPair, jwk, thumbprint);
  }

  /** Remembers a `DPoP-Nonce` a resource server sent; `true` when it is new. */
  rememberNonce(url: URL, nonce: string | null): boolean {
    if (nonce === null || !/^[\x21-\x7e]{1,512}$/.test(nonce)) return false;
    if (this.#nonces.get(url.origin) === nonce) return false;
    this.#nonces.delete(url.origin);
    this.#nonces.set(url.origin, nonce);
    if (this.#nonces.size > 100) {
      const oldest = this.#nonces.keys().next().value;
      if (oldest !== undefined) this.#nonces.delete(oldest);
    }
    return true;
  }

  /** A fresh proof for one request to a resource server, bound to `accessToken`. */
  async proof(method: string, url: URL, accessToken: string): Promise<string> {
    const header = { typ: 'dpop+jwt', alg: ALG, jwk: this.#jwk };
    const ath = base64url(new Uint8Array(await crypto.subtle.digest('SHA-256', utf8Bytes(accessToken))));
    const payload: Record<string, unknown> = {
      jti: base64url(crypto.getRandomValues(new Uint8Array(16))),
      htm: method.toUpperCase(),
      htu: `${url.protocol}//${url.host}${url.pathname}`,
      iat: Math.floor(Date.now() / 1000),
      ath,
    };
    const nonce = this.#nonces.get(url.origin);
    if (nonce !== undefined) payload.nonce = nonce;
    const input = `${base64url(utf8Bytes(JSON.stringify(header)))}.${base64url(utf8Bytes(JSON.stringify(payload)))}`;
    const signature = await crypto.subtle.sign(
      { name: 'ECDSA', hash: 'SHA-256' },
      this.#keyPair.privateKey,
      utf8Bytes(input),
    );
    return `${input}.${base64url(new Uint8Array(signature))}`;
  }

  toJSON(): Record<string, unknown> {
    return { kind: 'dpop-key', alg: ALG, thumbprint: this.thumbprint };
  }
}

function base64url(bytes: Uint8Array): string {
  return base64(bytes).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}
