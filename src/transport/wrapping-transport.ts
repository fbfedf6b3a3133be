import { assertMCPOptions } from '../protocol/errors.js';
import type { JSONRPCNotification, JSONRPCRequest, JSONRPCResponse } from '../protocol/jsonrpc.js';
import type { AxMCPEra } from '../protocol/versions.js';
import {
  type AxMCPEventStream,
  type AxMCPSendOptions,
  type AxMCPTransport,
  type AxMCPTransportHandlers,
  TRANSPORT,
} from './types.js';

/**
 * The base of a transport that wraps another to change one thing (declare an extension,
 * record traffic): every member passes through to `inner` — kind, endpoint, session, era
 * hint, `replaysRecording`, the legacy HTTP+SSE fallback of classification — and a subclass
 * overrides only what it changes, so no wrapper forgets a member the client relies on.
 *
 * @example
 * ```ts
 * class CountingTransport extends AxMCPWrappingTransport {
 *   requests = 0;
 *   override request(message: JSONRPCRequest, options?: AxMCPSendOptions) {
 *     this.requests++;
 *     return super.request(message, options);
 *   }
 * }
 * ```
 */
export class AxMCPWrappingTransport implements AxMCPTransport {
  readonly inner: AxMCPTransport;

  /** Checks that `inner` is a transport (`invalid_options` otherwise) before anything else. */
  constructor(inner: AxMCPTransport) {
    assertMCPOptions(TRANSPORT, inner, `${new.target.name} inner transport`);
    this.inner = inner;
  }

  /** The inner transport's kind (it may change: an HTTP transport can fall back to HTTP+SSE). */
  get kind(): AxMCPTransport['kind'] {
    return this.inner.kind;
  }

  get endpoint(): string {
    return this.inner.endpoint;
  }

  get endpointKey(): string {
    return this.inner.endpointKey;
  }

  get replaysRecording(): boolean {
    return this.inner.replaysRecording === true;
  }

  get sessionId(): string | undefined {
    return this.inner.sessionId;
  }

  /** The inner transport's era hint (a replay's), passed on to classification. */
  get eraHint(): AxMCPEra | undefined {
    return this.inner.eraHint;
  }

  setHandlers(handlers: AxMCPTransportHandlers): void {
    this.inner.setHandlers(handlers);
  }

  async start(signal?: AbortSignal): Promise<void> {
    await this.inner.start?.(signal);
  }

  request(message: JSONRPCRequest, options?: AxMCPSendOptions): Promise<JSONRPCResponse> {
    return this.inner.request(message, options);
  }

  notify(message: JSONRPCNotification, options?: AxMCPSendOptions): Promise<void> {
    return this.inner.notify(message, options);
  }

  respond(message: JSONRPCResponse, options?: AxMCPSendOptions): Promise<void> {
    return this.inner.respond(message, options);
  }

  setProtocolVersion(version: string | undefined): void {
    this.inner.setProtocolVersion?.(version);
  }

  resetSession(): void {
    this.inner.resetSession?.();
  }

  async terminateSession(signal?: AbortSignal): Promise<void> {
    await this.inner.terminateSession?.(signal);
  }

  /** Passes the HTTP+SSE fallback of era classification through to the inner transport. */
  async fallBackToLegacySSE(): Promise<boolean> {
    const inner = this.inner as { fallBackToLegacySSE?: () => boolean | Promise<boolean> };
    return (await inner.fallBackToLegacySSE?.()) ?? false;
  }

  async openEventStream(options: {
    signal: AbortSignal;
    lastEventId?: string;
  }): Promise<AxMCPEventStream | null> {
    return (await this.inner.openEventStream?.(options)) ?? null;
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
