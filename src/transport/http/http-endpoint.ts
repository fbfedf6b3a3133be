/**
 * One MCP endpoint over HTTP: its URL, the headers and authentication every request carries,
 * the protocol version, and the legacy session the server assigned. Every exchange of the
 * Streamable HTTP transport goes through `send`, which answers authentication challenges
 * (bounded) by sending again.
 */
import { type AxMCPAuthentication, applyAuthentication } from '../../auth/index.js';

export const SESSION_HEADER = 'mcp-session-id';
/** Times one request is sent again after an authentication challenge (step-up included). */
const MAX_CHALLENGES = 3;

type Fetch = (input: string | URL, init?: RequestInit) => Promise<Response>;

export class HTTPEndpoint {
  readonly url: URL;
  /** The legacy session id the server assigned, if any. */
  sessionId: string | undefined;
  protocolVersion: string | undefined;
  readonly #fetch: Fetch;
  readonly #headers: Record<string, string> | undefined;
  readonly #authentication: AxMCPAuthentication | AxMCPAuthentication[] | undefined;

  constructor(
    url: URL,
    fetch: Fetch,
    headers: Record<string, string> | undefined,
    authentication: AxMCPAuthentication | AxMCPAuthentication[] | undefined,
  ) {
    this.url = url;
    this.#fetch = fetch;
    this.#headers = headers;
    this.#authentication = authentication;
  }

  get authenticated(): boolean {
    return this.#authentication !== undefined;
  }

  /** One HTTP exchange, answering authentication challenges (bounded) by sending again. */
  async send(
    method: 'GET' | 'POST' | 'DELETE',
    body: string | undefined,
    extra: Record<string, string>,
    signal: AbortSignal,
  ): Promise<Response> {
    const strategies = this.#strategies;
    for (let attempt = 0; ; attempt++) {
      const response = await this.#sendOnce(method, body, extra, signal);
      const seen = { status: response.status, headers: response.headers, url: this.url };
      for (const strategy of strategies) strategy.observe?.(seen);
      if ((response.status !== 401 && response.status !== 403) || attempt >= MAX_CHALLENGES) return response;
      let retry = false;
      for (const strategy of strategies) {
        if (!strategy.challenge) continue;
        if (await strategy.challenge({ ...seen, method, attempt, signal })) {
          retry = true;
          break;
        }
      }
      if (!retry) return response;
      await response.body?.cancel().catch(() => {});
    }
  }

  /**
   * The headers `send` would send before authentication (a direct POST goes without) with
   * `base` and `extra` (in this order) over the endpoint's own, with lower-case names, as a
   * null-prototype object.
   */
  directHeaders(
    base: Readonly<Record<string, string>>,
    extra: Record<string, string> | undefined,
  ): Record<string, string> {
    const headers: Record<string, string> = Object.create(null);
    addLowerCased(headers, this.#headers);
    // `base` has lower-case names already; `extra` wins over it, as it wins over the endpoint's headers.
    for (const name in base) headers[name] = base[name] as string;
    addLowerCased(headers, extra);
    if (this.sessionId !== undefined) headers[SESSION_HEADER] = this.sessionId;
    if (this.protocolVersion !== undefined && headers['mcp-protocol-version'] === undefined) {
      headers['mcp-protocol-version'] = this.protocolVersion;
    }
    return headers;
  }

  captureSession(response: Response): void {
    this.captureSessionId(response.headers.get(SESSION_HEADER));
  }

  captureSessionId(id: string | null): void {
    if (id !== null && /^[\x21-\x7e]+$/.test(id)) this.sessionId = id;
  }

  get #strategies(): readonly AxMCPAuthentication[] {
    const authentication = this.#authentication;
    if (authentication === undefined) return [];
    return Array.isArray(authentication) ? authentication : [authentication as AxMCPAuthentication];
  }

  async #sendOnce(
    method: 'GET' | 'POST' | 'DELETE',
    body: string | undefined,
    extra: Record<string, string>,
    signal: AbortSignal,
  ): Promise<Response> {
    const headers = new Headers(this.#headers);
    for (const [name, value] of Object.entries(extra)) headers.set(name, value);
    if (this.sessionId !== undefined) headers.set(SESSION_HEADER, this.sessionId);
    if (this.protocolVersion !== undefined && !headers.has('mcp-protocol-version')) {
      headers.set('mcp-protocol-version', this.protocolVersion);
    }
    const authRequest =
      body === undefined ? { method, url: this.url, headers } : { method, url: this.url, headers, body };
    const { url, headers: finalHeaders } = await applyAuthentication(this.#authentication, authRequest);
    const init: RequestInit = { method, headers: finalHeaders, signal };
    if (body !== undefined) init.body = body;
    return this.#fetch(url, init);
  }
}

function addLowerCased(to: Record<string, string>, from: Record<string, string> | undefined): void {
  if (from === undefined) return;
  for (const name of Object.keys(from)) to[name.toLowerCase()] = from[name] as string;
}
