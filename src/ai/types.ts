/**
 * The AI service interface: a provider-neutral chat conversation, tools, structured
 * outputs and streaming, plus the capabilities a service declares. MCP content stays raw
 * in a conversation (see {@link AxAIMCPToolResult}, {@link AxAIMCPContextPart}) until a
 * service maps it to its own parts.
 */
import {
  ABORT_SIGNAL,
  ANY_OBJECT,
  anyOf,
  anything,
  array,
  boolean,
  discriminated,
  instance,
  number,
  object,
  oneOf,
  record,
  required,
  type Shape,
  string,
} from '../options/check.js';
import type {
  AxMCPCallToolResult,
  AxMCPGetPromptResult,
  AxMCPReadResourceResult,
} from '../protocol/messages.js';

/** Which media kinds a service accepts in one place of a conversation. */
export interface AxAIMediaSupport {
  image: boolean;
  audio: boolean;
  file: boolean;
}

/** The shape of a partial {@link AxAIMediaSupport} (a service's `capabilities.userParts`). */
export const MEDIA_SUPPORT = object(
  { image: boolean(), audio: boolean(), file: boolean() },
  { expected: 'an object { image?, audio?, file? } of true or false' },
);

/** What a service can do. Content it cannot take is described to the model, never dropped. */
export interface AxAICapabilities {
  /** Function tools and tool calls. */
  tools: boolean;
  /** `streamingChat` delivers deltas as they arrive (otherwise it yields one final event). */
  streaming: boolean;
  /** `responseFormat: { type: 'json_schema' }` is enforced by the provider. */
  structuredOutputs: boolean;
  /** Media the service takes in user messages (MCP context, user-supplied parts). */
  userParts: AxAIMediaSupport;
  /** Media the service takes from tool results (natively or attached right after them). */
  toolResultParts: AxAIMediaSupport;
  /** The most tools one request may offer (OpenAI's API takes 128); absent when unbounded. */
  maxTools?: number;
}

/** A piece of text. */
export interface AxAITextPart {
  type: 'text';
  text: string;
}

/** An image, base64-encoded. */
export interface AxAIImagePart {
  type: 'image';
  mimeType: string;
  /** Base64 data, never put into text. */
  data: string;
}

/** Audio, base64-encoded. */
export interface AxAIAudioPart {
  type: 'audio';
  mimeType: string;
  data: string;
}

/** A file (a PDF, a binary resource), base64-encoded. */
export interface AxAIFilePart {
  type: 'file';
  mimeType: string;
  data: string;
  filename?: string;
}

const BASE64 = required(string());
const MIME_TYPE = required(string({ nonEmpty: true }));

/** The shapes of the provider parts, by `type`. */
const PROVIDER_PART_KINDS = {
  text: object({ type: required(oneOf('text')), text: required(string()) }),
  image: object({ type: required(oneOf('image')), mimeType: MIME_TYPE, data: BASE64 }),
  audio: object({ type: required(oneOf('audio')), mimeType: MIME_TYPE, data: BASE64 }),
  file: object({ type: required(oneOf('file')), mimeType: MIME_TYPE, data: BASE64, filename: string() }),
} as const;

/** Where MCP content came from: `mcp:<namespace>:<tool|prompt|resource>`. */
export interface AxAIMCPAttribution {
  namespace: string;
  /** `mcp:<namespace>:<name>` for tools and prompts, `mcp:<namespace>:<uri>` for resources. */
  componentId: string;
}

/**
 * Context fetched from an MCP server (a prompt or a resource), kept raw. Services render
 * it as attributed, explicitly untrusted content.
 */
export type AxAIMCPContextPart = AxAIMCPAttribution &
  (
    | { type: 'mcp_context'; kind: 'prompt'; name: string; prompt: AxMCPGetPromptResult }
    | { type: 'mcp_context'; kind: 'resource'; uri: string; resource: AxMCPReadResourceResult }
  );

const ATTRIBUTION_KEYS = {
  namespace: required(string({ nonEmpty: true })),
  componentId: required(string({ nonEmpty: true })),
} as const;

/** The shape of an {@link AxAIMCPContextPart}, by `kind`. */
const MCP_CONTEXT_PART = discriminated(
  'kind',
  {
    prompt: object({
      ...ATTRIBUTION_KEYS,
      type: required(oneOf('mcp_context')),
      kind: required(oneOf('prompt')),
      name: required(string({ nonEmpty: true })),
      prompt: required(ANY_OBJECT),
    }),
    resource: object({
      ...ATTRIBUTION_KEYS,
      type: required(oneOf('mcp_context')),
      kind: required(oneOf('resource')),
      uri: required(string({ nonEmpty: true })),
      resource: required(ANY_OBJECT),
    }),
  },
  'an MCP context part',
);

/** One part of a user message. */
export type AxAIContentPart =
  | AxAITextPart
  | AxAIImagePart
  | AxAIAudioPart
  | AxAIFilePart
  | AxAIMCPContextPart;

/** The shape of an {@link AxAIContentPart} (user messages, program `attachments`). */
export const CONTENT_PART: Shape = discriminated(
  'type',
  { ...PROVIDER_PART_KINDS, mcp_context: MCP_CONTEXT_PART },
  "a content part { type: 'text' | 'image' | 'audio' | 'file' | 'mcp_context', … }",
);

/** A media or text part after mapping: what a provider adapter finally sends. */
export type AxAIProviderPart = AxAITextPart | AxAIImagePart | AxAIAudioPart | AxAIFilePart;

const PROVIDER_PART: Shape = discriminated(
  'type',
  PROVIDER_PART_KINDS,
  "a part { type: 'text' | 'image' | 'audio' | 'file', … }",
);

/** The raw result of an MCP tool call, with the identity of the tool that produced it. */
export interface AxAIMCPToolResult extends AxAIMCPAttribution {
  type: 'mcp_tool_result';
  tool: string;
  /** The server's result untouched: every block, `structuredContent`, `isError`, `_meta`. */
  result: AxMCPCallToolResult;
}

const MCP_TOOL_RESULT = object(
  {
    ...ATTRIBUTION_KEYS,
    type: required(oneOf('mcp_tool_result')),
    tool: required(string({ nonEmpty: true })),
    result: required(ANY_OBJECT),
  },
  { expected: "an MCP tool result { type: 'mcp_tool_result', namespace, componentId, tool, result }" },
);

/** A tool call the model asked for. */
export interface AxAIToolCall {
  /** The provider's id, echoed back in the tool message. */
  id: string;
  /** The tool's name as the provider saw it. */
  name: string;
  /** The arguments as the model wrote them (JSON text, possibly invalid). */
  arguments: string;
}

// A conversation handed back (a previous chat's `messages`) holds what the model wrote: no
// stricter than strings here.
const TOOL_CALL = object({
  id: required(string()),
  name: required(string()),
  arguments: required(string()),
});

/** A system message (instructions the program controls). */
export interface AxAISystemMessage {
  role: 'system';
  content: string;
}

/** A user message. */
export interface AxAIUserMessage {
  role: 'user';
  content: string | readonly AxAIContentPart[];
}

/** What the model said: text, tool calls, or both. */
export interface AxAIAssistantMessage {
  role: 'assistant';
  content: string | null;
  toolCalls?: readonly AxAIToolCall[];
  /** The provider's refusal text (structured outputs), when it refused. */
  refusal?: string;
}

/** The answer to one tool call. */
export interface AxAIToolMessage {
  role: 'tool';
  toolCallId: string;
  /** The tool's provider name. */
  name: string;
  /** Text, parts, or a raw MCP result mapped only by the provider adapter. */
  content: string | readonly AxAIProviderPart[] | AxAIMCPToolResult;
  /** The call failed or was refused; the content says why. */
  isError?: boolean;
}

/** One message of a conversation. */
export type AxAIMessage = AxAISystemMessage | AxAIUserMessage | AxAIAssistantMessage | AxAIToolMessage;

/** The shape of an {@link AxAIMessage}, by `role`. */
export const MESSAGE: Shape = discriminated(
  'role',
  {
    system: object({ role: required(oneOf('system')), content: required(string()) }),
    user: object({
      role: required(oneOf('user')),
      content: required(anyOf(string(), array(CONTENT_PART))),
    }),
    assistant: object({
      role: required(oneOf('assistant')),
      content: required(
        anyOf(
          string(),
          instance('null', (value) => value === null),
        ),
      ),
      toolCalls: array(TOOL_CALL),
      refusal: string(),
    }),
    tool: object({
      role: required(oneOf('tool')),
      toolCallId: required(string()),
      name: required(string()),
      content: required(anyOf(string(), array(PROVIDER_PART), MCP_TOOL_RESULT)),
      isError: boolean(),
    }),
  },
  "a message { role: 'system' | 'user' | 'assistant' | 'tool', content, … }",
);

/** A tool the model may call. */
export interface AxAITool {
  /** Unique within the request; providers restrict it (OpenAI: `[A-Za-z0-9_-]{1,64}`). */
  name: string;
  description?: string;
  /** JSON Schema of the arguments object. */
  parameters: Record<string, unknown>;
  /** Ask the provider to enforce the schema exactly (only for schemas that allow it). */
  strict?: boolean;
}

/** The shape of an {@link AxAITool}. */
export const TOOL = object({
  name: required(string({ nonEmpty: true })),
  description: string(),
  parameters: required(record(anything(), 'a JSON Schema object')),
  strict: boolean(),
});

/** Which tool the model must call, if any. */
export type AxAIToolChoice = 'auto' | 'none' | 'required' | { name: string };

const TOOL_CHOICE_MODES = oneOf('auto', 'none', 'required');
const TOOL_CHOICE_NAMED = object({ name: required(string({ nonEmpty: true })) });

/** The shape of an {@link AxAIToolChoice}: a mode (with a suggestion when misspelled) or `{ name }`. */
export const TOOL_CHOICE: Shape = {
  expected: "'auto', 'none', 'required' or { name }",
  optional: true,
  check(value, path, issues) {
    (typeof value === 'string' ? TOOL_CHOICE_MODES : TOOL_CHOICE_NAMED).check(value, path, issues);
  },
};

/** The shape of the final answer. */
export type AxAIResponseFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | {
      type: 'json_schema';
      /** `[A-Za-z0-9_-]{1,64}`. */
      name: string;
      description?: string;
      schema: Record<string, unknown>;
      /** Enforce the schema exactly; the schema must then follow the provider's strict subset. */
      strict?: boolean;
    };

/** The shape of an {@link AxAIResponseFormat}, by `type`. */
export const RESPONSE_FORMAT: Shape = discriminated(
  'type',
  {
    text: object({ type: required(oneOf('text')) }),
    json_object: object({ type: required(oneOf('json_object')) }),
    json_schema: object({
      type: required(oneOf('json_schema')),
      name: required(string({ nonEmpty: true })),
      description: string(),
      schema: required(record(anything(), 'a JSON Schema object')),
      strict: boolean(),
    }),
  },
  "a response format { type: 'text' | 'json_object' | 'json_schema', … }",
);

/** One chat request. */
export interface AxAIChatRequest {
  messages: readonly AxAIMessage[];
  tools?: readonly AxAITool[];
  toolChoice?: AxAIToolChoice;
  responseFormat?: AxAIResponseFormat;
  /** Overrides the service's model for this request. */
  model?: string;
  temperature?: number;
  maxTokens?: number;
  signal?: AbortSignal;
}

/** The keys of an {@link AxAIChatRequest} and their shapes. */
const CHAT_REQUEST_KEYS = {
  messages: required(array(MESSAGE)),
  tools: array(TOOL),
  toolChoice: TOOL_CHOICE,
  responseFormat: RESPONSE_FORMAT,
  model: string({ nonEmpty: true }),
  temperature: number(),
  maxTokens: number({ integer: true, min: 1 }),
  signal: ABORT_SIGNAL,
} as const;

/** The names other APIs give a chat request's fields, suggested when one is used. */
export const CHAT_REQUEST_ALIASES = {
  abortSignal: 'signal',
  tool_choice: 'toolChoice',
  max_tokens: 'maxTokens',
  response_format: 'responseFormat',
};

/**
 * What a chat request may hold; the OpenAI-compatible client checks it on every call, since a
 * misspelt field (`maxToken`, `temprature`, `toolChoise`) would be left out of the body.
 */
export const CHAT_REQUEST = object(CHAT_REQUEST_KEYS, {
  expected:
    'a chat request { messages, tools?, toolChoice?, responseFormat?, model?, temperature?, maxTokens?, signal? }',
  aliases: CHAT_REQUEST_ALIASES,
});

/** Why the model stopped. */
export type AxAIFinishReason = 'stop' | 'tool_calls' | 'length' | 'content_filter' | 'other';

/** Token accounting, when the provider reports it. */
export interface AxAIUsage {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
}

/** The answer to one chat request. */
export interface AxAIChatResponse {
  message: AxAIAssistantMessage;
  finishReason: AxAIFinishReason;
  usage?: AxAIUsage;
  /** The model that answered, as the provider names it. */
  model?: string;
  /** The provider's response id. */
  id?: string;
}

/** One event of a streaming chat. The last one is always `finish`. */
export type AxAIChatStreamEvent =
  | { type: 'text'; delta: string }
  | {
      type: 'tool_call';
      /** Position of the call in the message; deltas of one call share it. */
      index: number;
      id?: string;
      name?: string;
      argumentsDelta?: string;
    }
  | { type: 'finish'; response: AxAIChatResponse };

/**
 * An AI service: one provider and model behind a provider-neutral chat interface.
 *
 * @example
 * ```ts
 * const llm = axOpenAICompatible({ apiKey: process.env.OPENAI_API_KEY, model: 'gpt-4.1-mini' });
 * const { message } = await llm.chat({ messages: [{ role: 'user', content: 'Hello' }] });
 * ```
 */
export interface AxAIService {
  /** A short name for errors and traces, for example `openai-compatible`. */
  readonly name: string;
  readonly capabilities: AxAICapabilities;
  /** Sends the conversation and returns the model's answer. */
  chat(request: AxAIChatRequest): Promise<AxAIChatResponse>;
  /** Sends the conversation and yields deltas as they arrive, ending with `finish`. */
  streamingChat(request: AxAIChatRequest): AsyncIterable<AxAIChatStreamEvent>;
}

/** The shape of an {@link AxAIService} option (an agent's `ai`). */
export const AI_SERVICE: Shape = instance(
  'an AI service { name, capabilities, chat, streamingChat }',
  (value) => isAIService(value),
);

/** Whether a value looks like an {@link AxAIService}. */
export function isAIService(value: unknown): value is AxAIService {
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as Partial<AxAIService>;
  return (
    typeof candidate.chat === 'function' &&
    typeof candidate.streamingChat === 'function' &&
    typeof candidate.capabilities === 'object' &&
    candidate.capabilities !== null
  );
}
