/**
 * AI services: the provider-neutral chat interface, the OpenAI-compatible client, and the
 * mapping of MCP content to provider parts. Knows nothing of the MCP wire.
 */
export {
  AxAIError,
  type AxAIErrorCode,
  type AxAIErrorContext,
  AxAIOptionsError,
} from './errors.js';
export type { AxAIHTTPSettings } from './http.js';
export {
  base64Bytes,
  mcpContextParts,
  mcpToolResultParts,
  resultParts as mcpResultParts,
} from './mcp-content.js';
export {
  AxAIOpenAICompatible,
  type AxAIOpenAICompatibleOptions,
  axOpenAICompatible,
} from './openai-compatible.js';
export {
  type AxAIAssistantMessage,
  type AxAIAudioPart,
  type AxAICapabilities,
  type AxAIChatRequest,
  type AxAIChatResponse,
  type AxAIChatStreamEvent,
  type AxAIContentPart,
  type AxAIFilePart,
  type AxAIFinishReason,
  type AxAIImagePart,
  type AxAIMCPAttribution,
  type AxAIMCPContextPart,
  type AxAIMCPToolResult,
  type AxAIMediaSupport,
  type AxAIMessage,
  type AxAIProviderPart,
  type AxAIResponseFormat,
  type AxAIService,
  type AxAISystemMessage,
  type AxAITextPart,
  type AxAITool,
  type AxAIToolCall,
  type AxAIToolChoice,
  type AxAIToolMessage,
  type AxAIUsage,
  type AxAIUserMessage,
  isAIService,
} from './types.js';
