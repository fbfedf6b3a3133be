/**
 * RFC 9421 signing and verification for the test business, written apart from `src/ucp` (on
 * `node:crypto`, reading the raw `Signature-Input` text instead of re-serializing it), so that
 * the client's signatures are checked by code that does not share its mistakes.
 */
import { createHash, createPublicKey, type KeyObject, sign, verify } from 'node:crypto';

/** A message as seen on the wire. */
export interface WireMessage {
  method?: string;
  /** Host header value (authority). */
  authority?: string;
  path?: string;
  query?: string;
  status?: number;
  headers: Record<string, string | undefined>;
  body: Buffer;
}

/** `sha-256=:…:` of the body. */
export function digestOf(body: Buffer): string {
  return `sha-256=:${createHash('sha256').update(body).digest('base64')}:`;
}

function value(name: string, message: WireMessage): string {
  if (name === '@method') return message.method ?? '';
  if (name === '@authority') return (message.authority ?? '').toLowerCase();
  if (name === '@path') return message.path ?? '/';
  if (name === '@query') return message.query || '?';
  if (name === '@status') return String(message.status);
  const header = message.headers[name];
  if (header === undefined) throw new Error(`missing header ${name}`);
  return header.trim();
}

function base(components: string[], rawParams: string, message: WireMessage): string {
  const lines = components.map((c) => `"${c}": ${value(c, message)}`);
  lines.push(`"@signature-params": ${rawParams}`);
  return lines.join('\n');
}

/** Signs a message (ES256, raw r||s): returns the headers to add. */
export function signWire(
  message: WireMessage,
  components: string[],
  key: { privateKey: KeyObject; kid: string },
): Record<string, string> {
  const headers: Record<string, string> = {};
  if (message.body.length > 0) {
    headers['content-digest'] = digestOf(message.body);
    message.headers['content-digest'] = headers['content-digest'];
  }
  const params = `(${components.map((c) => `"${c}"`).join(' ')});created=${Math.floor(Date.now() / 1000)};keyid="${key.kid}"`;
  const signature = sign('sha256', Buffer.from(base(components, params, message)), {
    key: key.privateKey,
    dsaEncoding: 'ieee-p1363',
  });
  headers['signature-input'] = `sig1=${params}`;
  headers.signature = `sig1=:${signature.toString('base64')}:`;
  return headers;
}

/** Why a message does not verify, or undefined when it does. */
export function verifyWire(
  message: WireMessage,
  keys: ReadonlyArray<Record<string, unknown>>,
  required: string[],
): { ok: true; kid: string } | { ok: false; code: string } {
  const input = message.headers['signature-input'];
  const sig = message.headers.signature;
  if (!input || !sig) return { ok: false, code: 'signature_missing' };
  const match = /^([a-z0-9_-]+)=(\(([^)]*)\)(.*))$/.exec(input.trim());
  if (!match) return { ok: false, code: 'signature_invalid' };
  const [, label, rawParams, list, params] = match as unknown as [string, string, string, string, string];
  const components = list
    .split(' ')
    .filter(Boolean)
    .map((c) => c.replace(/^"|"$/g, ''));
  const kid = /;keyid="([^"]*)"/.exec(params)?.[1];
  const key = keys.find((k) => k.kid === kid);
  if (!key) return { ok: false, code: 'key_not_found' };
  for (const name of required)
    if (!components.includes(name)) return { ok: false, code: 'signature_invalid' };
  if (components.includes('content-digest') && message.headers['content-digest'] !== digestOf(message.body)) {
    return { ok: false, code: 'digest_mismatch' };
  }
  const sigMatch = new RegExp(`(?:^|,\\s*)${label}=:([A-Za-z0-9+/=]*):`).exec(sig);
  if (!sigMatch) return { ok: false, code: 'signature_invalid' };
  let text: string;
  try {
    text = base(components, rawParams, message);
  } catch {
    return { ok: false, code: 'signature_invalid' };
  }
  const publicKey = createPublicKey({ key: key as never, format: 'jwk' });
  const ok = verify(
    'sha256',
    Buffer.from(text),
    { key: publicKey, dsaEncoding: 'ieee-p1363' },
    Buffer.from(sigMatch[1]!, 'base64'),
  );
  return ok ? { ok: true, kid: kid! } : { ok: false, code: 'signature_invalid' };
}
