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
import { assertHandlerResult } from './handler-results.js';
import type { ServerTasks } from './server-tasks.js';

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
  /**
   * Accept task-augmented `elicitation/create` from 2025-11-25 servers (default false): the
   * client answers with a task at once and the server polls it (`tasks/get`, `tasks/result`).
   */
  tasks?: boolean;
}

/** A sampling handler: the server's `sampling/createMessage`, answered by your model. */
export type AxMCPSamplingHandler = (
  params: AxMCPCreateMessageParams,
  context: AxMCPServerRequestContext,
) => Promise<AxMCPCreateMessageResult> | AxMCPCreateMessageResult;

/** A sampling handler with what it supports beyond plain messages. */
export interface AxMCPSamplingOptions {
  createMessage: AxMCPSamplingHandler;
  /** The handler takes `tools` and `toolChoice` (declares `sampling.tools`). Default false: a request with tools is refused. */
  tools?: boolean;
  /** The handler honours `includeContext` other than `none` (declares `sampling.context`). Default false. */
  context?: boolean;
  /** Accept task-augmented requests from 2025-11-25 servers (see {@link AxMCPElicitationHandlers.tasks}). Default false. */
  tasks?: boolean;
}

/** Handlers for requests a server sends to the client. Only installed ones are advertised. */
export interface AxMCPServerRequestHandlers {
  /** A handler, or `{ createMessage, tools, context, tasks }` to say what it supports. */
  sampling?: AxMCPSamplingHandler | AxMCPSamplingOptions;
  elicitation?: AxMCPElicitationHandlers;
  /**
   * The client's roots. A function may return different roots over time: call
   * `client.notifyRootsChanged()` when they change (declared as `roots.listChanged`).
   */
  roots?: AxMCPRoot[] | (() => AxMCPRoot[] | Promise<AxMCPRoot[]>);
}

/** The sampling handler and what it supports, whichever form was given. */
export function samplingOf(handlers: AxMCPServerRequestHandlers): AxMCPSamplingOptions | undefined {
  const sampling = handlers.sampling;
  if (sampling === undefined) return undefined;
  return typeof sampling === 'function' ? { createMessage: sampling } : sampling;
}

/** The capabilities to advertise for the installed handlers. */
export function capabilitiesFor(handlers: AxMCPServerRequestHandlers): AxMCPClientCapabilities {
  const capabilities: AxMCPClientCapabilities = {};
  const sampling = samplingOf(handlers);
  if (sampling) {
    capabilities.sampling = {
      ...(sampling.context ? { context: {} } : {}),
      ...(sampling.tools ? { tools: {} } : {}),
    };
  }
  const elicitation = handlers.elicitation;
  if (elicitation?.form || elicitation?.url) {
    capabilities.elicitation = {};
    if (elicitation.form)
      capabilities.elicitation.form = elicitation.applyDefaults === false ? {} : { applyDefaults: true };
    if (elicitation.url) capabilities.elicitation.url = {};
  }
  if (handlers.roots) capabilities.roots = { listChanged: typeof handlers.roots === 'function' };
  const taskRequests: Record<string, unknown> = {};
  if (sampling?.tasks) taskRequests.sampling = { createMessage: {} };
  if (elicitation?.tasks && (elicitation.form || elicitation.url)) taskRequests.elicitation = { create: {} };
  if (Object.keys(taskRequests).length > 0)
    capabilities.tasks = { list: {}, cancel: {}, requests: taskRequests };
  return capabilities;
}

/** Fulfils one server request with the installed handlers. `tasks` receives task-augmented ones (2025-11-25). */
export async function fulfilServerRequest(
  handlers: AxMCPServerRequestHandlers,
  method: string,
  params: Record<string, unknown>,
  context: AxMCPServerRequestContext,
  tasks?: ServerTasks,
): Promise<Record<string, unknown>> {
  if (params.task !== undefined && (method === 'sampling/createMessage' || method === 'elicitation/create')) {
    const optedIn =
      method === 'sampling/createMessage' ? samplingOf(handlers)?.tasks : handlers.elicitation?.tasks;
    if (!optedIn || !tasks) {
      throw new ServerRequestError(
        RPC.invalidParams,
        `This client does not accept task-augmented ${method} (it did not declare tasks.requests for it)`,
      );
    }
    const { task, ...plain } = params;
    // Checked before the task exists, so a malformed request is refused, not a failed task.
    checkServerRequest(handlers, method, plain);
    return tasks.create(task, (signal) =>
      fulfilServerRequest(handlers, method, plain, { ...context, signal }),
    );
  }
  if (method.startsWith('tasks/') && tasks) {
    switch (method) {
      case 'tasks/get':
        return tasks.get(params);
      case 'tasks/result':
        return tasks.result(params);
      case 'tasks/list':
        return tasks.list();
      case 'tasks/cancel':
        return tasks.cancel(params);
    }
  }
  switch (method) {
    case 'ping':
      return {};
    case 'sampling/createMessage': {
      const sampling = checkServerRequest(handlers, method, params) as AxMCPSamplingOptions;
      const result = await sampling.createMessage(params as AxMCPCreateMessageParams, context);
      assertHandlerResult(method, result);
      return { ...result };
    }
    case 'elicitation/create':
      return elicit(handlers.elicitation, params, context);
    case 'roots/list': {
      if (!handlers.roots) throw notSupported(method);
      const roots = typeof handlers.roots === 'function' ? await handlers.roots() : handlers.roots;
      assertHandlerResult(method, roots);
      return { roots: roots.map((root) => ({ ...root })) };
    }
    default:
      throw new ServerRequestError(RPC.methodNotFound, `Client does not handle "${method}"`);
  }
}

/** Refuses a sampling or elicitation request the handlers cannot take; returns the sampling handler. */
function checkServerRequest(
  handlers: AxMCPServerRequestHandlers,
  method: string,
  params: Record<string, unknown>,
): AxMCPSamplingOptions | undefined {
  if (method !== 'sampling/createMessage') {
    if (!handlers.elicitation?.form && !handlers.elicitation?.url) throw notSupported(method);
    return undefined;
  }
  const sampling = samplingOf(handlers);
  if (!sampling) throw notSupported(method);
  if (!Array.isArray(params.messages) || typeof params.maxTokens !== 'number') {
    throw new ServerRequestError(RPC.invalidParams, 'sampling/createMessage needs messages and maxTokens');
  }
  if ((params.tools !== undefined || params.toolChoice !== undefined) && !sampling.tools) {
    throw new ServerRequestError(
      RPC.invalidParams,
      'This client did not declare sampling.tools: send the request without tools',
    );
  }
  if (params.tools !== undefined && !Array.isArray(params.tools)) {
    throw new ServerRequestError(RPC.invalidParams, 'sampling/createMessage tools must be an array');
  }
  return sampling;
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
    const result = await handlers.url(params as Extract<AxMCPElicitParams, { mode: 'url' }>, context);
    assertHandlerResult('elicitation/create', result);
    return { ...result };
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
  assertHandlerResult('elicitation/create', result);
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
