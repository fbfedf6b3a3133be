/**
 * The UCP MCP binding (`source/services/shopping/mcp.openrpc.json`, overview "Model Context
 * Protocol"): each operation is a `tools/call` of a named tool whose arguments carry `meta`
 * (`ucp-agent.profile`, `idempotency-key`), the resource `id` and the payload under
 * `checkout` / `cart` / `catalog`; the UCP response is `structuredContent`. It runs through an
 * `AxMCPClient` the application made for the business's MCP endpoint, so the MCP client's
 * transport, authentication and SSRF policy apply. For RFC 9421 signatures over MCP, put
 * {@link axUCPSigningAuthentication} last in that transport's `authentication`.
 */
import type { AxMCPAuthentication } from '../auth/index.js';
import type { AxMCPClient } from '../client/index.js';
import { AxMCPError } from '../protocol/errors.js';
import { parseUntrustedJSON } from '../protocol/json.js';
import { AxUCPError, type AxUCPErrorContext, AxUCPResponseError } from './errors.js';
import { readMessages } from './http.js';
import type { AxUCPOperation } from './operations.js';
import { type AxUCPSigningKeyOptions, axUCPSigner, signMessage } from './signatures.js';

/** The tool and payload member of each operation. */
const TOOLS: Readonly<Record<AxUCPOperation, { tool: string; payload?: 'checkout' | 'cart' | 'catalog' }>> = {
  'catalog.search': { tool: 'search_catalog', payload: 'catalog' },
  'catalog.lookup': { tool: 'lookup_catalog', payload: 'catalog' },
  'catalog.product': { tool: 'get_product', payload: 'catalog' },
  'cart.create': { tool: 'create_cart', payload: 'cart' },
  'cart.get': { tool: 'get_cart' },
  'cart.update': { tool: 'update_cart', payload: 'cart' },
  'cart.cancel': { tool: 'cancel_cart' },
  'checkout.create': { tool: 'create_checkout', payload: 'checkout' },
  'checkout.get': { tool: 'get_checkout' },
  'checkout.update': { tool: 'update_checkout', payload: 'checkout' },
  'checkout.complete': { tool: 'complete_checkout', payload: 'checkout' },
  'checkout.cancel': { tool: 'cancel_checkout' },
  'order.get': { tool: 'get_order' },
};

/** The MCP tool name of an operation (`checkout.complete` → `complete_checkout`). */
export function ucpToolName(operation: AxUCPOperation): string {
  return TOOLS[operation].tool;
}

/** One operation over MCP; returns the UCP response (the tool's `structuredContent`). */
export async function callOverMCP(
  mcp: AxMCPClient,
  request: {
    operation: AxUCPOperation;
    profileURL: string;
    id: string | undefined;
    body: Record<string, unknown> | undefined;
    idempotencyKey: string | undefined;
    signal: AbortSignal | undefined;
  },
  context: AxUCPErrorContext,
): Promise<unknown> {
  const { tool, payload } = TOOLS[request.operation];
  const meta: Record<string, unknown> = { 'ucp-agent': { profile: request.profileURL } };
  if (request.idempotencyKey !== undefined) meta['idempotency-key'] = request.idempotencyKey;
  const args: Record<string, unknown> = { meta };
  if (request.id !== undefined) args.id = request.id;
  if (payload !== undefined) args[payload] = request.body ?? {};
  let result: Awaited<ReturnType<AxMCPClient['callTool']>>;
  try {
    result = await mcp.callTool(tool, args, request.signal ? { signal: request.signal } : {});
  } catch (error) {
    if (request.signal?.aborted) throw new AxUCPError('aborted', `${request.operation} was aborted`, context);
    if (error instanceof AxMCPError) {
      if (error.code === 'timeout')
        throw new AxUCPError('timeout', `${request.operation}: no answer`, context);
      if (['transport_error', 'stream_ended', 'closed', 'session_expired'].includes(error.code)) {
        throw new AxUCPError('transport_error', `${request.operation}: the MCP call failed`, {
          ...context,
          cause: error,
        });
      }
      if (error.code === 'unsafe_key') {
        throw new AxUCPError(
          'unsafe_key',
          `${request.operation}: the answer carries a "__proto__" key`,
          context,
        );
      }
      if (error.code === 'message_too_large') {
        throw new AxUCPError('message_too_large', `${request.operation}: ${error.message}`, context);
      }
      const data = (error as { data?: unknown }).data as Record<string, unknown> | undefined;
      const details: ConstructorParameters<typeof AxUCPResponseError>[2] = { status: 0, body: data };
      if (typeof data?.code === 'string') details.ucpCode = data.code.slice(0, 100);
      if (typeof data?.continue_url === 'string') details.continueURL = data.continue_url;
      throw new AxUCPResponseError(
        'http_status',
        `${request.operation}: the business refused (${error.message.slice(0, 200)})`,
        details,
        {
          ...context,
          cause: error,
        },
      );
    }
    throw new AxUCPError('transport_error', `${request.operation}: the MCP call failed`, {
      ...context,
      cause: error,
    });
  }
  let value: unknown = result.structuredContent;
  if (value === undefined) {
    const text = result.content.find((block) => block.type === 'text') as { text?: string } | undefined;
    if (typeof text?.text === 'string') {
      try {
        value = parseUntrustedJSON(text.text);
      } catch (error) {
        const unsafe = error instanceof AxMCPError && error.code === 'unsafe_key';
        throw new AxUCPError(
          unsafe ? 'unsafe_key' : 'invalid_response',
          `${request.operation}: the tool result is not UCP JSON`,
          {
            ...context,
            cause: error,
          },
        );
      }
    }
  }
  if (result.isError === true) {
    const body = (typeof value === 'object' && value !== null ? value : {}) as Record<string, unknown>;
    const messages = readMessages(body.messages);
    const details: ConstructorParameters<typeof AxUCPResponseError>[2] = { status: 0, messages, body };
    const ucpCode =
      typeof body.code === 'string' ? body.code : messages.find((m) => m.type === 'error')?.code;
    if (ucpCode !== undefined) details.ucpCode = ucpCode.slice(0, 100);
    const code = ucpCode === 'idempotency_conflict' ? 'idempotency_conflict' : 'business_error';
    throw new AxUCPResponseError(
      code,
      `${request.operation}: the business reported an error`,
      details,
      context,
    );
  }
  if (value === undefined) {
    throw new AxUCPError(
      'invalid_response',
      `${request.operation}: the tool result has no structuredContent`,
      context,
    );
  }
  return value;
}

/**
 * An authentication strategy that signs every HTTP request of an MCP transport per RFC 9421
 * as UCP specifies for MCP (`Content-Digest` over the JSON-RPC body, `UCP-Agent` covered).
 * Put it last in the transport's `authentication`; it sets `UCP-Agent` itself.
 */
export function axUCPSigningAuthentication(options: {
  signing: AxUCPSigningKeyOptions;
  /** Your profile URL, sent as `UCP-Agent`. */
  profile: string;
}): AxMCPAuthentication {
  const signer = axUCPSigner(options.signing);
  const agent = `profile="${options.profile}"`;
  return {
    async authenticate(request) {
      const headers = new Headers();
      request.headers.forEach((value, name) => {
        headers.set(name, value);
      });
      headers.set('ucp-agent', agent);
      const parts: Parameters<typeof signMessage>[0] = { method: request.method, url: request.url, headers };
      if (request.body !== undefined && request.body.length > 0) {
        parts.body = new TextEncoder().encode(request.body);
        headers.set('content-type', 'application/json');
      }
      await signMessage(parts, signer);
      const out: Record<string, string> = {
        'ucp-agent': agent,
        'signature-input': headers.get('signature-input')!,
        signature: headers.get('signature')!,
      };
      const digest = headers.get('content-digest');
      if (digest !== null) {
        out['content-digest'] = digest;
        out['content-type'] = 'application/json';
      }
      return { headers: out };
    },
    toJSON: () => ({ strategy: 'ucp-signature', keyId: signer.keyId }),
  } as AxMCPAuthentication;
}
