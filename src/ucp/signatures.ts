/**
 * RFC 9421 HTTP Message Signatures as UCP specifies them (`docs/specification/signatures.md`):
 * `Content-Digest` (RFC 9530, `sha-256` over the raw body bytes), the covered components of
 * requests (`@method @authority @path [@query] [ucp-agent] [idempotency-key]
 * [content-digest content-type]`) and responses (`@status [content-digest content-type]`),
 * ES256 / ES384 with raw `r||s` signatures (what WebCrypto produces) and Ed25519, keys as JWK.
 * WebCrypto only: it runs in browsers, workers, Deno and Bun.
 */
import { AxUCPError, type AxUCPErrorContext, AxUCPSignatureError } from './errors.js';
import {
  base64Encode,
  isInnerList,
  parseDictionary,
  type SFBareItem,
  type SFInnerList,
  type SFItem,
  SFSyntaxError,
  serializeBareItem,
  serializeInnerList,
} from './structured-fields.js';

/** A public JWK as published in a UCP profile's `keys[]` (the open vocabulary: other members are kept). */
export interface AxUCPPublicKey {
  kid: string;
  kty: string;
  crv?: string;
  x?: string;
  y?: string;
  alg?: string;
  use?: string;
  key_ops?: readonly string[];
  [member: string]: unknown;
}

/** A signing key: what `signing` takes. The private key never leaves this object. */
export interface AxUCPSigningKeyOptions {
  /** The `kid` of the matching public key in your published profile's `keys[]`. */
  keyId: string;
  /** An ECDSA P-256/P-384 or Ed25519 private key: a WebCrypto `CryptoKey` or a private JWK. */
  privateKey: CryptoKey | JsonWebKey;
  /** Add the `created` parameter (default `true`). */
  created?: boolean;
}

/** A signer made by {@link axUCPSigner}: signs signature bases with one key. */
export interface AxUCPSigner {
  readonly keyId: string;
  /** Whether `created` is added to each signature. */
  readonly created: boolean;
  /** Signs bytes; returns the raw signature (`r||s` for ECDSA). */
  sign(data: Uint8Array): Promise<Uint8Array>;
}

type Algorithm = { sign: AlgorithmIdentifier | EcdsaParams; importParams: EcKeyImportParams | Algorithm1 };
type Algorithm1 = { name: string };

function algorithmFor(kty: string | undefined, crv: string | undefined): Algorithm | undefined {
  if (kty === 'EC' && crv === 'P-256') {
    return { sign: { name: 'ECDSA', hash: 'SHA-256' }, importParams: { name: 'ECDSA', namedCurve: 'P-256' } };
  }
  if (kty === 'EC' && crv === 'P-384') {
    return { sign: { name: 'ECDSA', hash: 'SHA-384' }, importParams: { name: 'ECDSA', namedCurve: 'P-384' } };
  }
  if (kty === 'OKP' && crv === 'Ed25519')
    return { sign: { name: 'Ed25519' }, importParams: { name: 'Ed25519' } };
  return undefined;
}

function algorithmOfKey(key: CryptoKey): Algorithm | undefined {
  const algorithm = key.algorithm as { name: string; namedCurve?: string };
  if (algorithm.name === 'ECDSA') return algorithmFor('EC', algorithm.namedCurve);
  if (algorithm.name === 'Ed25519') return algorithmFor('OKP', 'Ed25519');
  return undefined;
}

/**
 * A signer for requests (and, on a business, responses and webhooks). The private key is held
 * in a closure: `toJSON()` and `String()` show the key id only.
 */
export function axUCPSigner(options: AxUCPSigningKeyOptions): AxUCPSigner {
  if (
    typeof options !== 'object' ||
    options === null ||
    typeof options.keyId !== 'string' ||
    !options.keyId
  ) {
    throw new AxUCPError('invalid_options', 'signing needs { keyId, privateKey }');
  }
  const source = options.privateKey;
  let ready: Promise<{ key: CryptoKey; algorithm: Algorithm }> | undefined;
  const load = () => {
    ready ??= (async () => {
      if (typeof CryptoKey !== 'undefined' && source instanceof CryptoKey) {
        const algorithm = algorithmOfKey(source);
        if (!algorithm)
          throw new AxUCPError('invalid_options', 'signing.privateKey: ECDSA P-256/P-384 or Ed25519');
        return { key: source, algorithm };
      }
      const jwk = source as JsonWebKey;
      const algorithm = algorithmFor(jwk.kty, jwk.crv);
      if (!algorithm || typeof jwk.d !== 'string') {
        throw new AxUCPError(
          'invalid_options',
          'signing.privateKey: a private EC (P-256, P-384) or OKP (Ed25519) JWK',
        );
      }
      const key = await crypto.subtle.importKey('jwk', jwk, algorithm.importParams, false, ['sign']);
      return { key, algorithm };
    })();
    return ready;
  };
  const keyId = options.keyId;
  return {
    keyId,
    created: options.created ?? true,
    async sign(data: Uint8Array): Promise<Uint8Array> {
      const { key, algorithm } = await load();
      return new Uint8Array(await crypto.subtle.sign(algorithm.sign, key, data as BufferSource));
    },
    toJSON: () => ({ keyId }),
    toString: () => `AxUCPSigner(${keyId})`,
  } as AxUCPSigner;
}

/**
 * Generates an ES256 key pair for signing: the private `CryptoKey` (not extractable) and the
 * public JWK to publish in your profile's `keys[]`.
 */
export async function generateUCPSigningKey(
  keyId: string,
): Promise<{ privateKey: CryptoKey; publicKey: AxUCPPublicKey }> {
  const pair = (await crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, false, [
    'sign',
    'verify',
  ])) as CryptoKeyPair;
  const jwk = await crypto.subtle.exportKey('jwk', pair.publicKey);
  return {
    privateKey: pair.privateKey,
    publicKey: { kid: keyId, kty: 'EC', crv: 'P-256', x: jwk.x!, y: jwk.y!, use: 'sig', alg: 'ES256' },
  };
}

/** `sha-256=:<base64>:` of the raw bytes (RFC 9530). */
export async function contentDigest(body: Uint8Array): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', body as BufferSource));
  return `sha-256=:${base64Encode(digest)}:`;
}

/** The parts of an HTTP message a signature covers. */
export interface AxUCPMessageParts {
  /** A request (method + URL) or a response (status). */
  method?: string;
  url?: URL;
  status?: number;
  headers: Headers;
  /** The raw body bytes, when there is a body. */
  body?: Uint8Array;
}

function componentValue(name: string, parts: AxUCPMessageParts): string {
  switch (name) {
    case '@method':
      return (parts.method ?? '').toUpperCase();
    case '@authority':
      return (parts.url?.host ?? '').toLowerCase();
    case '@path':
      return parts.url?.pathname || '/';
    case '@query':
      return parts.url?.search || '?';
    case '@status':
      return String(parts.status ?? '');
    default: {
      if (name.startsWith('@')) throw new SFSyntaxError(`unsupported derived component ${name}`);
      const value = parts.headers.get(name);
      if (value === null) throw new SFSyntaxError(`covered header "${name}" is absent`);
      return value.trim();
    }
  }
}

function signatureBase(parts: AxUCPMessageParts, params: SFInnerList): string {
  const lines: string[] = [];
  for (const item of params.items) {
    if (typeof item.value !== 'string' || item.params.size > 0) {
      throw new SFSyntaxError('covered components must be plain strings');
    }
    lines.push(`${serializeBareItem(item.value)}: ${componentValue(item.value, parts)}`);
  }
  lines.push(`"@signature-params": ${serializeInnerList(params)}`);
  return lines.join('\n');
}

/** The components UCP requires a signature of this message to cover. */
export function requiredComponents(parts: AxUCPMessageParts): string[] {
  const hasBody = parts.body !== undefined && parts.body.byteLength > 0;
  if (parts.status !== undefined) {
    return hasBody ? ['@status', 'content-digest', 'content-type'] : ['@status'];
  }
  const out = ['@method', '@authority', '@path'];
  if (parts.url?.search) out.push('@query');
  if (parts.headers.has('ucp-agent')) out.push('ucp-agent');
  if (parts.headers.has('signature-agent')) out.push('signature-agent');
  if (parts.headers.has('idempotency-key')) out.push('idempotency-key');
  if (hasBody) out.push('content-digest', 'content-type');
  return out;
}

/**
 * Signs a message in place: sets `Content-Digest` (when there is a body), `Signature-Input`
 * and `Signature` (label `sig1`), covering the components UCP requires (`@method`,
 * `@authority`, `@path`, … for a request; `@status`, … for a response).
 */
export async function signMessage(
  parts: AxUCPMessageParts,
  signer: AxUCPSigner,
  label = 'sig1',
): Promise<void> {
  if (parts.body !== undefined && parts.body.byteLength > 0) {
    parts.headers.set('content-digest', await contentDigest(parts.body));
    if (!parts.headers.has('content-type')) parts.headers.set('content-type', 'application/json');
  }
  const params = new Map<string, SFBareItem>();
  if (signer.created) params.set('created', Math.floor(Date.now() / 1000));
  params.set('keyid', signer.keyId);
  const list: SFInnerList = {
    items: requiredComponents(parts).map((name) => ({ value: name, params: new Map() })),
    params,
  };
  const base = signatureBase(parts, list);
  const signature = await signer.sign(new TextEncoder().encode(base));
  parts.headers.set('signature-input', `${label}=${serializeInnerList(list)}`);
  parts.headers.set('signature', `${label}=:${base64Encode(signature)}:`);
}

/** What a verified signature proved. */
export interface AxUCPVerifiedSignature {
  /** The signature label (`sig1`). */
  label: string;
  /** The key that verified it. */
  keyId: string;
  /** The `created` parameter, when present (seconds since the epoch). */
  created?: number;
}

/** Options of {@link verifyMessage}. */
export interface AxUCPVerifyOptions {
  /** Refuse signatures whose `created` is older than this many seconds (default: not checked). */
  maxAgeSeconds?: number;
  /** For error attribution. */
  context?: AxUCPErrorContext;
}

type Failure = AxUCPSignatureError;
const FAILURE_ORDER: readonly string[] = [
  'digest_mismatch',
  'signature_invalid',
  'algorithm_unsupported',
  'key_not_found',
];

/**
 * Verifies a message's signatures against the signer's published keys, as UCP's verification
 * algorithm says: the signature must cover the components UCP requires, the `Content-Digest`
 * must match the raw body, and the key is found by `keyid` among signature-capable keys of a
 * supported algorithm. Several signatures: the first that verifies wins; when none does, the
 * most telling failure is thrown (`AxUCPSignatureError`).
 */
export async function verifyMessage(
  parts: AxUCPMessageParts,
  keys: readonly AxUCPPublicKey[],
  options: AxUCPVerifyOptions = {},
): Promise<AxUCPVerifiedSignature> {
  const context = options.context ?? {};
  const inputHeader = parts.headers.get('signature-input');
  const signatureHeader = parts.headers.get('signature');
  if (inputHeader === null || signatureHeader === null) {
    throw new AxUCPSignatureError(
      'signature_missing',
      'The message carries no Signature-Input/Signature',
      context,
    );
  }
  let inputs: ReturnType<typeof parseDictionary>;
  let signatures: ReturnType<typeof parseDictionary>;
  try {
    inputs = parseDictionary(inputHeader);
    signatures = parseDictionary(signatureHeader);
  } catch (error) {
    throw new AxUCPSignatureError('signature_invalid', 'Signature-Input or Signature is malformed', {
      ...context,
      cause: error,
    });
  }
  const failures: Failure[] = [];
  for (const [label, member] of inputs) {
    if (failures.length >= 8) break;
    try {
      return await verifyOne(label, member, signatures.get(label), parts, keys, options, context);
    } catch (error) {
      if (error instanceof AxUCPSignatureError) failures.push(error);
      else throw error;
    }
  }
  failures.sort((a, b) => FAILURE_ORDER.indexOf(a.code) - FAILURE_ORDER.indexOf(b.code));
  throw (
    failures[0] ?? new AxUCPSignatureError('signature_missing', 'Signature-Input names no signature', context)
  );
}

async function verifyOne(
  label: string,
  member: SFItem | SFInnerList,
  signatureMember: SFItem | SFInnerList | undefined,
  parts: AxUCPMessageParts,
  keys: readonly AxUCPPublicKey[],
  options: AxUCPVerifyOptions,
  context: AxUCPErrorContext,
): Promise<AxUCPVerifiedSignature> {
  const fail = (code: ConstructorParameters<typeof AxUCPSignatureError>[0], why: string) =>
    new AxUCPSignatureError(code, `Signature ${label}: ${why}`, context);
  if (!isInnerList(member)) throw fail('signature_invalid', 'Signature-Input member is not an inner list');
  if (!signatureMember || isInnerList(signatureMember) || typeof signatureMember.value !== 'object') {
    throw fail('signature_missing', 'no matching Signature member');
  }
  const sigValue = signatureMember.value;
  if (!('bytes' in sigValue)) throw fail('signature_invalid', 'the Signature member is not a byte sequence');
  const keyId = member.params.get('keyid');
  if (typeof keyId !== 'string') throw fail('signature_invalid', 'no keyid parameter');
  const key = keys.find((k) => k.kid === keyId && signatureCapable(k));
  if (!key) throw fail('key_not_found', `key "${keyId}" is not among the signer's published keys`);
  const algorithm = algorithmFor(key.kty, key.crv);
  if (!algorithm) throw fail('algorithm_unsupported', `key "${keyId}" uses an unsupported algorithm`);
  const covered = new Set(member.items.map((item) => item.value));
  for (const name of requiredComponents(parts)) {
    if (!covered.has(name)) throw fail('signature_invalid', `the signature does not cover ${name}`);
  }
  const created = member.params.get('created');
  if (options.maxAgeSeconds !== undefined) {
    if (typeof created !== 'number') throw fail('signature_invalid', 'no created parameter');
    if (Math.abs(Date.now() / 1000 - created) > options.maxAgeSeconds)
      throw fail('signature_invalid', 'too old');
  }
  const expires = member.params.get('expires');
  if (typeof expires === 'number' && Date.now() / 1000 > expires) throw fail('signature_invalid', 'expired');
  if (covered.has('content-digest')) {
    const expected = await contentDigest(parts.body ?? new Uint8Array(0));
    if (!digestMatches(parts.headers.get('content-digest'), expected)) {
      throw fail('digest_mismatch', 'Content-Digest does not match the body');
    }
  }
  let base: string;
  try {
    base = signatureBase(parts, member);
  } catch (error) {
    throw new AxUCPSignatureError(
      'signature_invalid',
      `Signature ${label}: ${(error as Error).message}`,
      context,
    );
  }
  let publicKey: CryptoKey;
  try {
    const jwk: JsonWebKey = { kty: key.kty, crv: key.crv, x: key.x };
    if (key.y !== undefined) jwk.y = key.y;
    publicKey = await crypto.subtle.importKey('jwk', jwk, algorithm.importParams, false, ['verify']);
  } catch (error) {
    throw new AxUCPSignatureError(
      'algorithm_unsupported',
      `Signature ${label}: key "${keyId}" cannot be used`,
      {
        ...context,
        cause: error,
      },
    );
  }
  const ok = await crypto.subtle.verify(
    algorithm.sign,
    publicKey,
    sigValue.bytes as BufferSource,
    new TextEncoder().encode(base) as BufferSource,
  );
  if (!ok) throw fail('signature_invalid', 'the signature does not verify');
  const out: AxUCPVerifiedSignature = { label, keyId };
  if (typeof created === 'number') out.created = created;
  return out;
}

function signatureCapable(key: AxUCPPublicKey): boolean {
  if (key.use !== undefined && key.use !== 'sig') return false;
  if (Array.isArray(key.key_ops) && !key.key_ops.includes('verify')) return false;
  return true;
}

function digestMatches(header: string | null, expected: string): boolean {
  if (header === null) return false;
  try {
    const member = parseDictionary(header).get('sha-256');
    if (!member || isInnerList(member) || typeof member.value !== 'object' || !('bytes' in member.value)) {
      return false;
    }
    return `sha-256=:${base64Encode(member.value.bytes)}:` === expected;
  } catch {
    return false;
  }
}
