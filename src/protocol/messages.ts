/**
 * MCP message shapes this client reads and writes, with guards for everything that
 * comes from a server. Guards check structure and leave the content untouched, so
 * raw results (every content block, `structuredContent`, `_meta`) reach the caller intact.
 */
import { AxMCPProtocolError, RPC } from './errors.js';
import { isObject } from './json.js';

/** `name`/`version` of a client or server. */
export interface AxMCPImplementation {
  name: string;
  version: string;
  title?: string;
  [key: string]: unknown;
}

/** Capabilities a server advertises. */
export interface AxMCPServerCapabilities {
  experimental?: Record<string, unknown>;
  logging?: Record<string, unknown>;
  completions?: Record<string, unknown>;
  prompts?: { listChanged?: boolean };
  resources?: { subscribe?: boolean; listChanged?: boolean };
  tools?: { listChanged?: boolean };
  tasks?: Record<string, unknown>;
  extensions?: Record<string, unknown>;
  [key: string]: unknown;
}

/** Capabilities this client advertises. */
export interface AxMCPClientCapabilities {
  experimental?: Record<string, unknown>;
  roots?: { listChanged?: boolean };
  sampling?: Record<string, unknown>;
  elicitation?: { form?: Record<string, unknown>; url?: Record<string, unknown> };
  tasks?: Record<string, unknown>;
  extensions?: Record<string, unknown>;
  [key: string]: unknown;
}

export interface AxMCPToolAnnotations {
  title?: string;
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
  [key: string]: unknown;
}

export interface AxMCPTool {
  name: string;
  title?: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  annotations?: AxMCPToolAnnotations;
  execution?: { taskSupport?: 'forbidden' | 'optional' | 'required'; [key: string]: unknown };
  _meta?: Record<string, unknown>;
  [key: string]: unknown;
}

export interface AxMCPPromptArgument {
  name: string;
  description?: string;
  required?: boolean;
  [key: string]: unknown;
}

export interface AxMCPPrompt {
  name: string;
  title?: string;
  description?: string;
  arguments?: AxMCPPromptArgument[];
  [key: string]: unknown;
}

export interface AxMCPResource {
  uri: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  size?: number;
  annotations?: Record<string, unknown>;
  [key: string]: unknown;
}

export interface AxMCPResourceTemplate {
  uriTemplate: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  [key: string]: unknown;
}

export interface AxMCPTextContent {
  type: 'text';
  text: string;
  [key: string]: unknown;
}
export interface AxMCPImageContent {
  type: 'image';
  data: string;
  mimeType: string;
  [key: string]: unknown;
}
export interface AxMCPAudioContent {
  type: 'audio';
  data: string;
  mimeType: string;
  [key: string]: unknown;
}
export interface AxMCPResourceLink {
  type: 'resource_link';
  uri: string;
  name: string;
  mimeType?: string;
  [key: string]: unknown;
}
export type AxMCPResourceContents =
  | { uri: string; mimeType?: string; text: string; [key: string]: unknown }
  | { uri: string; mimeType?: string; blob: string; [key: string]: unknown };
export interface AxMCPEmbeddedResource {
  type: 'resource';
  resource: AxMCPResourceContents;
  [key: string]: unknown;
}
/** Any content block; unknown future kinds pass through untouched. */
export type AxMCPContentBlock =
  | AxMCPTextContent
  | AxMCPImageContent
  | AxMCPAudioContent
  | AxMCPResourceLink
  | AxMCPEmbeddedResource
  | { type: string; [key: string]: unknown };

/** A JSON value, as a server may send it. */
export type AxMCPJSONValue =
  | null
  | boolean
  | number
  | string
  | AxMCPJSONValue[]
  | { [key: string]: AxMCPJSONValue };

/** The raw result of `tools/call`. */
export interface AxMCPCallToolResult {
  content: AxMCPContentBlock[];
  /**
   * The tool's structured result: any JSON value on 2026-07-28 (SEP-2106: an object, an array
   * or a scalar), an object on 2025-11-25. Kept raw.
   */
  structuredContent?: AxMCPJSONValue;
  isError?: boolean;
  _meta?: Record<string, unknown>;
  [key: string]: unknown;
}

export interface AxMCPPromptMessage {
  role: 'user' | 'assistant';
  content: AxMCPContentBlock;
  [key: string]: unknown;
}

export interface AxMCPGetPromptResult {
  description?: string;
  messages: AxMCPPromptMessage[];
  _meta?: Record<string, unknown>;
  [key: string]: unknown;
}

export interface AxMCPReadResourceResult {
  contents: AxMCPResourceContents[];
  _meta?: Record<string, unknown>;
  [key: string]: unknown;
}

export interface AxMCPCompleteResult {
  completion: { values: string[]; total?: number; hasMore?: boolean };
  [key: string]: unknown;
}

export type AxMCPLoggingLevel =
  | 'debug'
  | 'info'
  | 'notice'
  | 'warning'
  | 'error'
  | 'critical'
  | 'alert'
  | 'emergency';

export const LOGGING_LEVELS: readonly AxMCPLoggingLevel[] = [
  'debug',
  'info',
  'notice',
  'warning',
  'error',
  'critical',
  'alert',
  'emergency',
];

export interface AxMCPLoggingMessage {
  level: AxMCPLoggingLevel;
  logger?: string;
  data: unknown;
}

export interface AxMCPProgress {
  progressToken: string | number;
  progress: number;
  total?: number;
  message?: string;
}

export interface AxMCPInitializeResult {
  protocolVersion: string;
  capabilities: AxMCPServerCapabilities;
  serverInfo: AxMCPImplementation;
  instructions?: string;
  [key: string]: unknown;
}

/** `sampling/createMessage` parameters (server → client). */
export interface AxMCPCreateMessageParams {
  messages: { role: 'user' | 'assistant'; content: unknown }[];
  maxTokens: number;
  systemPrompt?: string;
  modelPreferences?: Record<string, unknown>;
  includeContext?: string;
  temperature?: number;
  stopSequences?: string[];
  metadata?: Record<string, unknown>;
  tools?: unknown[];
  toolChoice?: unknown;
  [key: string]: unknown;
}

export interface AxMCPCreateMessageResult {
  role: 'assistant';
  content: unknown;
  model: string;
  stopReason?: string;
  [key: string]: unknown;
}

/** `elicitation/create` parameters (server → client). */
export type AxMCPElicitParams =
  | {
      mode?: 'form';
      message: string;
      requestedSchema: {
        type: 'object';
        properties: Record<string, Record<string, unknown>>;
        required?: string[];
      };
      [key: string]: unknown;
    }
  | { mode: 'url'; message: string; url: string; elicitationId?: string; [key: string]: unknown };

export interface AxMCPElicitResult {
  action: 'accept' | 'decline' | 'cancel';
  content?: Record<string, unknown>;
  [key: string]: unknown;
}

export interface AxMCPRoot {
  uri: string;
  name?: string;
  [key: string]: unknown;
}

function bad(what: string): AxMCPProtocolError {
  return new AxMCPProtocolError(RPC.invalidParams, `Server sent an invalid ${what}`, undefined, {
    code: 'invalid_message',
  });
}

function checkArray<T>(value: unknown, what: string, item: (entry: unknown, index: number) => void): T[] {
  if (!Array.isArray(value)) throw bad(`${what} (expected an array)`);
  value.forEach(item);
  return value as T[];
}

function requireString(object: Record<string, unknown>, key: string, what: string): void {
  if (typeof object[key] !== 'string') throw bad(`${what} (missing string "${key}")`);
}

function optionalCursor(result: Record<string, unknown>): string | undefined {
  const cursor = result.nextCursor;
  if (cursor === undefined || cursor === null) return undefined;
  if (typeof cursor !== 'string') throw bad('nextCursor (expected a string)');
  return cursor;
}

/** One page of a paginated list. */
export interface AxMCPPage<T> {
  items: T[];
  nextCursor?: string;
  /** The whole result, for cache hints (`ttlMs`, `cacheScope`) and `_meta`. */
  result: Record<string, unknown>;
}

function page<T>(
  result: Record<string, unknown>,
  key: string,
  check: (entry: unknown, i: number) => void,
): AxMCPPage<T> {
  const items = checkArray<T>(result[key], key, check);
  const nextCursor = optionalCursor(result);
  return nextCursor === undefined ? { items, result } : { items, nextCursor, result };
}

export function parseToolsPage(result: Record<string, unknown>): AxMCPPage<AxMCPTool> {
  return page(result, 'tools', (entry, i) => {
    if (!isObject(entry)) throw bad(`tool #${i}`);
    requireString(entry, 'name', `tool #${i}`);
    if (!isObject(entry.inputSchema))
      throw bad(`tool "${String(entry.name)}" (inputSchema must be an object)`);
    if (entry.annotations !== undefined && !isObject(entry.annotations))
      throw bad(`tool "${entry.name}" annotations`);
  });
}

export function parsePromptsPage(result: Record<string, unknown>): AxMCPPage<AxMCPPrompt> {
  return page(result, 'prompts', (entry, i) => {
    if (!isObject(entry)) throw bad(`prompt #${i}`);
    requireString(entry, 'name', `prompt #${i}`);
    if (entry.arguments !== undefined) {
      checkArray(entry.arguments, `prompt "${entry.name}" arguments`, (arg, j) => {
        if (!isObject(arg)) throw bad(`prompt "${entry.name}" argument #${j}`);
        requireString(arg, 'name', `prompt "${entry.name}" argument #${j}`);
      });
    }
  });
}

export function parseResourcesPage(result: Record<string, unknown>): AxMCPPage<AxMCPResource> {
  return page(result, 'resources', (entry, i) => {
    if (!isObject(entry)) throw bad(`resource #${i}`);
    requireString(entry, 'uri', `resource #${i}`);
    requireString(entry, 'name', `resource #${i}`);
  });
}

export function parseResourceTemplatesPage(
  result: Record<string, unknown>,
): AxMCPPage<AxMCPResourceTemplate> {
  return page(result, 'resourceTemplates', (entry, i) => {
    if (!isObject(entry)) throw bad(`resource template #${i}`);
    requireString(entry, 'uriTemplate', `resource template #${i}`);
    requireString(entry, 'name', `resource template #${i}`);
  });
}

function checkContentBlock(entry: unknown, what: string): void {
  if (!isObject(entry) || typeof entry.type !== 'string') throw bad(`${what} (content block without a type)`);
}

export function parseCallToolResult(result: Record<string, unknown>): AxMCPCallToolResult {
  checkArray(result.content ?? [], 'tool result content', (entry, i) =>
    checkContentBlock(entry, `content #${i}`),
  );
  if (result.content === undefined) result.content = [];
  // Any JSON value (SEP-2106): the transport already parsed it from JSON, so it is one.
  if (result.isError !== undefined && typeof result.isError !== 'boolean') throw bad('tool result (isError)');
  return result as AxMCPCallToolResult;
}

export function parseGetPromptResult(result: Record<string, unknown>): AxMCPGetPromptResult {
  checkArray(result.messages, 'prompt messages', (entry, i) => {
    if (!isObject(entry) || (entry.role !== 'user' && entry.role !== 'assistant'))
      throw bad(`prompt message #${i}`);
    checkContentBlock(entry.content, `prompt message #${i}`);
  });
  return result as AxMCPGetPromptResult;
}

export function parseReadResourceResult(result: Record<string, unknown>): AxMCPReadResourceResult {
  checkArray(result.contents, 'resource contents', (entry, i) => {
    if (!isObject(entry) || typeof entry.uri !== 'string') throw bad(`resource contents #${i}`);
    if (typeof entry.text !== 'string' && typeof entry.blob !== 'string') {
      throw bad(`resource contents #${i} (needs "text" or "blob")`);
    }
  });
  return result as AxMCPReadResourceResult;
}

export function parseCompleteResult(result: Record<string, unknown>): AxMCPCompleteResult {
  const completion = result.completion;
  if (!isObject(completion)) throw bad('completion result');
  checkArray(completion.values, 'completion values', (value) => {
    if (typeof value !== 'string') throw bad('completion value');
  });
  return result as AxMCPCompleteResult;
}

export function parseInitializeResult(result: Record<string, unknown>): AxMCPInitializeResult {
  if (typeof result.protocolVersion !== 'string') throw bad('initialize result (protocolVersion)');
  if (!isObject(result.capabilities)) throw bad('initialize result (capabilities)');
  if (!isObject(result.serverInfo) || typeof result.serverInfo.name !== 'string') {
    throw bad('initialize result (serverInfo)');
  }
  if (result.instructions !== undefined && typeof result.instructions !== 'string') {
    throw bad('initialize result (instructions)');
  }
  return result as AxMCPInitializeResult;
}

export function parseLoggingMessage(params: Record<string, unknown> | undefined): AxMCPLoggingMessage {
  if (
    !params ||
    typeof params.level !== 'string' ||
    !LOGGING_LEVELS.includes(params.level as AxMCPLoggingLevel)
  ) {
    throw bad('logging notification');
  }
  if (params.logger !== undefined && typeof params.logger !== 'string')
    throw bad('logging notification (logger)');
  return params as unknown as AxMCPLoggingMessage;
}

/** The `uri` of `notifications/resources/updated`; throws `invalid_message` without one. */
export function parseResourceUpdated(params: Record<string, unknown> | undefined): string {
  const uri = params?.uri;
  if (typeof uri !== 'string' || uri === '') throw bad('resource update notification (uri)');
  return uri;
}

export function parseProgress(params: Record<string, unknown> | undefined): AxMCPProgress {
  if (!params) throw bad('progress notification');
  const token = params.progressToken;
  if (typeof token !== 'string' && typeof token !== 'number')
    throw bad('progress notification (progressToken)');
  if (typeof params.progress !== 'number') throw bad('progress notification (progress)');
  if (params.total !== undefined && typeof params.total !== 'number')
    throw bad('progress notification (total)');
  if (params.message !== undefined && typeof params.message !== 'string')
    throw bad('progress notification (message)');
  return params as unknown as AxMCPProgress;
}
