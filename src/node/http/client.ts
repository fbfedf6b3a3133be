/**
 * One HTTP exchange over node:http, whatever becomes of its response: the request goes out
 * through the agents, an abort or `close()` destroys it, a failure is typed, a stale
 * keep-alive socket is retried (see `stale-socket.ts`), and the response goes to a reader
 * (a web `Response`, a lean one, a direct answer) that settles the exchange.
 */
import * as http from 'node:http';
import * as https from 'node:https';
import { type AbortSource, whenAborted } from '../../protocol/abort.js';
import type { NodeAgents } from './agents.js';
import { requestError, unexpectedStatus } from './errors.js';
import type { OutgoingHeaders } from './headers.js';
import { failedOnStaleSocket, retriesOnStaleSocket } from './stale-socket.js';

/** Statuses whose responses have no body. */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

/** A request, checked by its sender (URL policy, body type). */
export interface NodeRequest {
  url: URL;
  /** Upper-case. */
  method: string;
  /** `content-length` is added here when there is a body. */
  headers: OutgoingHeaders;
  body?: string | Uint8Array | undefined;
  /** A fetch caller's signal, or the transport's link (followed without making a signal). */
  signal?: AbortSource | undefined;
}

/** A response (its status in 200–599) handed to its reader, which settles the exchange. */
export interface ReceivedResponse<T> {
  readonly res: http.IncomingMessage;
  readonly status: number;
  readonly url: URL;
  /** A HEAD request or a null-body status: there is no body to read. */
  readonly bodyless: boolean;
  resolve(value: T): void;
  /** Fails the exchange, unless it was settled; the response is destroyed. */
  fail(reason: unknown): void;
  /** The body is not read: it is drained, and the exchange is over. */
  skipBody(): void;
  /** The body outlives the exchange's promise: an abort fails it with `fail`, it calls `done` at its end. */
  readBody(fail: (reason: unknown) => void): void;
  /** The body ended (or failed): the exchange is over. */
  readonly done: () => void;
}

/** Requests over one set of agents; `close()` ends the ones in flight. */
export class NodeHTTPClient {
  readonly #agents: NodeAgents;
  readonly #inflight = new Set<http.ClientRequest>();
  #closed = false;

  constructor(agents: NodeAgents) {
    this.#agents = agents;
  }

  get closed(): boolean {
    return this.#closed;
  }

  send<T>(request: NodeRequest, read: (response: ReceivedResponse<T>) => void): Promise<T> {
    const { url, body } = request;
    if (body !== undefined) {
      request.headers['content-length'] = String(
        typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength,
      );
    }
    const options: http.RequestOptions = {
      protocol: url.protocol,
      hostname: url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname,
      path: `${url.pathname}${url.search}`,
      method: request.method,
      headers: request.headers,
      agent: this.#agents.for(url),
    };
    if (url.port !== '') options.port = url.port;
    const transport = url.protocol === 'https:' ? https.request : http.request;
    return this.#exchange(transport, options, request, read, retriesOnStaleSocket(request.method));
  }

  /** Destroys the requests in flight with `reason`, then the agents (unless shared). */
  close(reason: Error): void {
    if (this.#closed) return;
    this.#closed = true;
    // Requests first: a request still waiting for a socket would make the agent open one.
    for (const req of this.#inflight) req.destroy(reason);
    this.#inflight.clear();
    this.#agents.close();
  }

  #exchange<T>(
    transport: typeof http.request,
    options: http.RequestOptions,
    request: NodeRequest,
    read: (response: ReceivedResponse<T>) => void,
    retry: boolean,
  ): Promise<T> {
    const { url, signal } = request;
    const inflight = this.#inflight;
    return new Promise<T>((resolve, reject) => {
      const req = transport(options);
      inflight.add(req);
      let settled = false;
      let res: http.IncomingMessage | undefined;
      let failBody: ((reason: unknown) => void) | undefined;
      let unlisten: (() => void) | undefined;
      const detach = () => {
        inflight.delete(req);
        unlisten?.();
      };
      const fail = (reason: unknown) => {
        detach();
        res?.destroy();
        if (settled) return;
        settled = true;
        reject(reason);
      };
      const onAbort = () => {
        if (failBody !== undefined) {
          failBody(signal?.reason);
          detach();
        } else fail(signal?.reason);
        req.destroy();
      };
      if (signal) unlisten = whenAborted(signal, onAbort);

      req.on('error', (error: NodeJS.ErrnoException) => {
        // Once answered, a broken connection is the body's to report.
        if (settled) return;
        if (retry && failedOnStaleSocket(req, error, signal)) {
          settled = true;
          detach();
          this.#exchange(transport, options, request, read, false).then(resolve, reject);
          return;
        }
        fail(requestError(error, url));
      });

      req.on('response', (incoming) => {
        if (settled) {
          incoming.destroy();
          return;
        }
        res = incoming;
        const status = incoming.statusCode ?? 0;
        if (status < 200 || status > 599) {
          fail(unexpectedStatus(status, url));
          return;
        }
        read({
          res: incoming,
          status,
          url,
          bodyless: options.method === 'HEAD' || NULL_BODY_STATUSES.has(status),
          resolve: (value) => {
            if (settled) return;
            settled = true;
            resolve(value);
          },
          fail,
          skipBody: () => {
            incoming.resume();
            detach();
          },
          readBody: (failWith) => {
            failBody = failWith;
          },
          done: detach,
        });
      });

      if (request.body === undefined) req.end();
      else req.end(request.body);
    });
  }
}
