/**
 * A node:http response as a web `Response`, for `createNodeFetch`: every header kept, the
 * body a `ReadableStream` that reads only as fast as it is consumed.
 */
import type * as http from 'node:http';
import { redactURL } from '../../net/ssrf.js';
import { AxMCPError, AxMCPTransportError } from '../../protocol/errors.js';
import type { ReceivedResponse } from './client.js';
import { onBodyBreak } from './errors.js';
import { webHeaders } from './headers.js';

const BODY_HIGH_WATER_MARK = 64 * 1024;

/** Settles `received` with a web `Response` (or a typed error when Node's response cannot be one). */
export function readWebResponse(received: ReceivedResponse<Response>): void {
  const { res, status, url } = received;
  try {
    const headers = webHeaders(res.rawHeaders);
    let stream: ReadableStream<Uint8Array> | null = null;
    if (received.bodyless) received.skipBody();
    else {
      const body = bodyStream(res, url, received.done);
      stream = body.stream;
      received.readBody(body.fail);
    }
    const response = new Response(stream, { status, statusText: statusText(res.statusMessage), headers });
    Object.defineProperty(response, 'url', { value: url.href });
    received.resolve(response);
  } catch (error) {
    received.fail(
      error instanceof AxMCPError
        ? error
        : new AxMCPTransportError('transport_error', 'Invalid HTTP response', {
            endpoint: redactURL(url),
            cause: error,
          }),
    );
  }
}

/** A web stream over a Node response that reads only as fast as it is consumed. */
function bodyStream(
  res: http.IncomingMessage,
  url: URL,
  onFinish: () => void,
): { stream: ReadableStream<Uint8Array>; fail: (reason: unknown) => void } {
  let controller: ReadableStreamDefaultController<Uint8Array> | undefined;
  let finished = false;
  const finish = (): boolean => {
    if (finished) return false;
    finished = true;
    onFinish();
    return true;
  };
  const fail = (reason: unknown) => {
    if (!finish()) return;
    res.destroy();
    controller?.error(reason);
  };
  const stream = new ReadableStream<Uint8Array>(
    {
      start(c) {
        controller = c;
        res.on('data', (chunk: Buffer) => {
          if (finished) return;
          c.enqueue(chunk);
          if ((c.desiredSize ?? 0) <= 0) res.pause();
        });
        res.on('end', () => {
          if (finish()) c.close();
        });
        onBodyBreak(res, url, fail);
      },
      pull() {
        res.resume();
      },
      cancel() {
        finish();
        res.destroy();
      },
    },
    { highWaterMark: BODY_HIGH_WATER_MARK, size: (chunk) => chunk.byteLength },
  );
  return { stream, fail };
}

function statusText(message: string | undefined): string {
  // The Response constructor rejects a reason phrase that is not a valid header value.
  return message !== undefined && /^[\t\x20-\x7e\x80-\xff]*$/.test(message) ? message : '';
}
