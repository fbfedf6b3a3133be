import { AxMCPError, RPC } from '../protocol/errors.js';
import { isObject } from '../protocol/json.js';
import type { JSONRPCRequest, JSONRPCResponse } from '../protocol/jsonrpc.js';
import type {
  AxMCPClientCapabilities,
  AxMCPCreateMessageParams,
  AxMCPCreateMessageResult,
  AxMCPElicitParams,
  AxMCPElicitResult,
  AxMCPRoot,
} from '../protocol/messages.js';

/** What a handler of a server request knows about its caller. */
export interface AxMCPServerRequestContext {
  namespace: string;
  signal: AbortSignal;
}

/** Elicitation handlers, one per mode; a mode without a handler is not advertised. */
export interface AxMCPElicitationHandlers {
  form?: (
    params: Extract<AxMCPElicitParams, { requestedSchema: unknown }>,
    context: AxMCPServerRequestContext,
  ) => Promise<AxMCPElicitResult> | AxMCPElicitResult;
  url?: (
    params: Extract<AxMCPElicitParams, { mode: 'url' }>,
    context: AxMCPServerRequestContext,
  ) => Promise<AxMCPElicitResult> | AxMCPElicitResult;
  /** Fill schema defaults into accepted form content the user left out (default true). */
  applyDefaults?: boolean;
}

/** Handlers for requests a server sends to the client. Only installed ones are advertised. */
export interface AxMCPServerRequestHandlers {
  sampling?: (
    params: AxMCPCreateMessageParams,
    context: AxMCPServerRequestContext,
  ) => Promise<AxMCPCreateMessageResult> | AxMCPCreateMessageResult;
  elicitation?: AxMCPElicitationHandlers;
  roots?: AxMCPRoot[] | (() => AxMCPRoot[] | Promise<AxMCPRoot[]>);
}

/** The capabilities to advertise for the installed handlers. */
export function capabilitiesFor(handlers: AxMCPServerRequestHandlers): AxMCPClientCapabilities {
  const capabilities: AxMCPClientCapabilities = {};
  if (handlers.sampling) capabilities.sampling = {};
  const elicitation = handlers.elicitation;
  if (elicitation?.form || elicitation?.url) {
    capabilities.elicitation = {};
    if (elicitation.form)
      capabilities.elicitation.form = elicitation.applyDefaults === false ? {} : { applyDefaults: true };
    if (elicitation.url) capabilities.elicitation.url = {};
  }
  if (handlers.roots) capabilities.roots = { listChanged: false };
  return capabilities;
}

/** Fulfils one server request with the installed handlers. */
export async function fulfilServerRequest(
  handlers: AxMCPServerRequestHandlers,
  method: string,
  params: Record<string, unknown>,
  context: AxMCPServerRequestContext,
): Promise<Record<string, unknown>> {
  switch (method) {
    case 'ping':
      return {};
    case 'sampling/createMessage': {
      if (!handlers.sampling) throw notSupported(method);
      if (!Array.isArray(params.messages) || typeof params.maxTokens !== 'number') {
        throw new ServerRequestError(
          RPC.invalidParams,
          'sampling/createMessage needs messages and maxTokens',
        );
      }
      return { ...(await handlers.sampling(params as AxMCPCreateMessageParams, context)) };
    }
    case 'elicitation/create':
      return elicit(handlers.elicitation, params, context);
    case 'roots/list': {
      if (!handlers.roots) throw notSupported(method);
      const roots = typeof handlers.roots === 'function' ? await handlers.roots() : handlers.roots;
      return { roots: roots.map((root) => ({ ...root })) };
    }
    default:
      throw new ServerRequestError(RPC.methodNotFound, `Client does not handle "${method}"`);
  }
}

async function elicit(
  handlers: AxMCPElicitationHandlers | undefined,
  params: Record<string, unknown>,
  context: AxMCPServerRequestContext,
): Promise<Record<string, unknown>> {
  if (typeof params.message !== 'string')
    throw new ServerRequestError(RPC.invalidParams, 'elicitation needs a message');
  if (params.mode === 'url') {
    if (!handlers?.url) throw notSupported('elicitation/create (url)');
    if (typeof params.url !== 'string')
      throw new ServerRequestError(RPC.invalidParams, 'url elicitation needs a url');
    return { ...(await handlers.url(params as Extract<AxMCPElicitParams, { mode: 'url' }>, context)) };
  }
  if (!handlers?.form) throw notSupported('elicitation/create (form)');
  const schema = params.requestedSchema;
  if (!isObject(schema) || !isObject(schema.properties)) {
    throw new ServerRequestError(RPC.invalidParams, 'form elicitation needs requestedSchema.properties');
  }
  const result = await handlers.form(
    params as Extract<AxMCPElicitParams, { requestedSchema: unknown }>,
    context,
  );
  if (result.action !== 'accept' || handlers.applyDefaults === false) return { ...result };
  const content: Record<string, unknown> = { ...(result.content ?? {}) };
  for (const [name, property] of Object.entries(schema.properties)) {
    if (content[name] === undefined && isObject(property) && property.default !== undefined) {
      content[name] = property.default;
    }
  }
  return { ...result, content };
}

/** A server request the client answers with a JSON-RPC error. */
export class ServerRequestError extends Error {
  readonly rpcCode: number;
  constructor(rpcCode: number, message: string) {
    super(message);
    this.rpcCode = rpcCode;
  }
}

function notSupported(method: string): ServerRequestError {
  return new ServerRequestError(RPC.methodNotFound, `Client has no handler for ${method}`);
}

/** Builds the JSON-RPC answer to a server request from a handler outcome. */
export function answerFor(
  request: JSONRPCRequest,
  outcome: { result: Record<string, unknown> } | { error: unknown },
) {
  if ('result' in outcome)
    return { jsonrpc: '2.0', id: request.id, result: outcome.result } satisfies JSONRPCResponse;
  const error = outcome.error;
  const code = error instanceof ServerRequestError ? error.rpcCode : RPC.internalError;
  // Handler errors of our own are reported by message; anything else stays generic so nothing leaks.
  const message =
    error instanceof ServerRequestError || error instanceof AxMCPError
      ? error.message
      : 'Client failed to handle the request';
  return { jsonrpc: '2.0', id: request.id, error: { code, message } } satisfies JSONRPCResponse;
}
