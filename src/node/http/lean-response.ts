/**
 * The lean response of the node:http stack: the parts of a web `Response` the transport, the
 * guarded fetch and the body readers use, over Node's response as it is.
 */
import type * as http from 'node:http';
import type { ReceivedResponse } from './client.js';
import { NodeHeaders } from './headers.js';
import { NodeBody } from './lean-body.js';

/** `received` as a lean response; its body, if any, is read as it is consumed. */
export function leanResponse(received: ReceivedResponse<unknown>): NodeResponse {
  const { res, status, url } = received;
  let body: NodeBody | null = null;
  if (received.bodyless) received.skipBody();
  else {
    const reading = new NodeBody(res, url, received.done);
    received.readBody((reason) => reading.fail(reason));
    body = reading;
  }
  return new NodeResponse(res, status, url.href, body);
}

/**
 * The parts of a web `Response` the transport, the guarded fetch and the body readers use:
 * status, headers, a body with `getReader()`, and the whole-body readers.
 */
export class NodeResponse {
  readonly status: number;
  readonly statusText: string;
  readonly ok: boolean;
  readonly url: string;
  readonly type = 'basic';
  readonly redirected = false;
  readonly headers: NodeHeaders;
  readonly body: NodeBody | null;

  constructor(res: http.IncomingMessage, status: number, url: string, body: NodeBody | null) {
    this.status = status;
    this.statusText = res.statusMessage ?? '';
    this.ok = status >= 200 && status < 300;
    this.url = url;
    this.headers = new NodeHeaders(res.headers);
    this.body = body;
  }

  get bodyUsed(): boolean {
    return this.body?.locked ?? false;
  }

  async arrayBuffer(): Promise<ArrayBuffer> {
    const bytes = await this.bytes();
    return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  }

  async bytes(): Promise<Uint8Array> {
    if (this.body === null) return new Uint8Array(0);
    const reader = this.body.getReader();
    const chunks: Uint8Array[] = [];
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
    }
    return Buffer.concat(chunks);
  }

  async text(): Promise<string> {
    return Buffer.from(await this.bytes()).toString('utf8');
  }

  async json(): Promise<unknown> {
    return JSON.parse(await this.text());
  }
}
