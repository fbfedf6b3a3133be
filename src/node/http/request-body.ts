/** Fetch request bodies for node:http, with the `content-type` fetch would give them. */
import { AxMCPError } from '../../protocol/errors.js';
import type { OutgoingHeaders } from './headers.js';

/** What node:http is given to send. */
export type RequestBody = string | Uint8Array | undefined;

/**
 * `body` as text or bytes: string, `Uint8Array`, `ArrayBuffer` (and views), `URLSearchParams`
 * and `Blob`; streams and `FormData` are refused (`unsupported`).
 */
export async function toRequestBody(
  body: RequestInit['body'],
  headers: OutgoingHeaders,
): Promise<RequestBody> {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string') {
    headers['content-type'] ??= 'text/plain;charset=UTF-8';
    return body;
  }
  if (body instanceof Uint8Array) return body;
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  if (ArrayBuffer.isView(body)) return new Uint8Array(body.buffer, body.byteOffset, body.byteLength);
  if (body instanceof URLSearchParams) {
    headers['content-type'] ??= 'application/x-www-form-urlencoded;charset=UTF-8';
    return body.toString();
  }
  if (body instanceof Blob) {
    if (body.type !== '') headers['content-type'] ??= body.type;
    return new Uint8Array(await body.arrayBuffer());
  }
  throw new AxMCPError(
    'unsupported',
    'This fetch sends string, Uint8Array, ArrayBuffer, URLSearchParams or Blob bodies, not streams or FormData',
  );
}
