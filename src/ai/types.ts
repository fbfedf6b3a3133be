/**
 * The AI service interface: a provider-neutral chat conversation, tools, structured
 * outputs and streaming, plus the capabilities a service declares. MCP content stays raw
 * in a conversation (see {@link AxAIMCPToolResult}, {@link AxAIMCPContextPart}) until a
 * service maps it to its own parts.
 */
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

/** One part of a user message. */
export type AxAIContentPart =
  | AxAITextPart
  | AxAIImagePart
  | AxAIAudioPart
  | AxAIFilePart
  | AxAIMCPContextPart;

/** A media or text part after mapping: what a provider adapter finally sends. */
export type AxAIProviderPart = AxAITextPart | AxAIImagePart | AxAIAudioPart | AxAIFilePart;

/** The raw result of an MCP tool call, with the identity of the tool that produced it. */
export interface AxAIMCPToolResult extends AxAIMCPAttribution {
  type: 'mcp_tool_result';
  tool: string;
  /** The server's result untouched: every block, `structuredContent`, `isError`, `_meta`. */
  result: AxMCPCallToolResult;
}

/** A tool call the model asked for. */
export interface AxAIToolCall {
  /** The provider's id, echoed back in the tool message. */
  id: string;
  /** The tool's name as the provider saw it. */
  name: string;
  /** The arguments as the model wrote them (JSON text, possibly invalid). */
  arguments: string;
}

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

/** Which tool the model must call, if any. */
export type AxAIToolChoice = 'auto' | 'none' | 'required' | { name: string };

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
