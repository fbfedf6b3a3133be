/**
 * Programs: signatures, `ax()`/`AxGen`, flows, `axMCPChat`, and the execution context
 * (`mcp`, `ucp`, `mcpContext`, `mcpInheritance`) with tool bindings that keep client identity.
 * Knows nothing of transports.
 */

export {
  AxAgent,
  type AxAgentActionLogEntry,
  AxAgentClarificationError,
  type AxAgentClientState,
  type AxAgentEvent,
  type AxAgentForwardOptions,
  type AxAgentOptions,
  type AxAgentParked,
  type AxAgentParkedRun,
  type AxAgentSandboxLimits,
  type AxAgentState,
  type AxAgentStreamChunk,
  agent,
  CLARIFICATION_KIND,
} from './agent/index.js';
export { type AxMCPChatOptions, type AxMCPChatResult, axMCPChat } from './chat.js';
export type { AxMCPContextEntry } from './context-entries.js';
export {
  AxProgramError,
  type AxProgramErrorCode,
  AxProgramOptionsError,
  AxSignatureError,
} from './errors.js';
export {
  type AxEvaluableProgram,
  type AxEvaluateOptions,
  type AxEvaluationExample,
  type AxEvaluationResult,
  type AxEvaluationRun,
  axEvaluate,
} from './evaluate.js';
export { type AxOutputReading, fieldSchema, objectSchema, readOutputs, validateInputs } from './fields.js';
export {
  AxFlow,
  type AxFlowForwardOptions,
  type AxFlowNodeForwardOptions,
  type AxFlowNodeOptions,
  type AxFlowOptions,
  type AxFlowProgram,
  type AxFlowState,
  flow,
} from './flow.js';
export { type AxFunction, type AxFunctionContext, AxFunctionError } from './functions.js';
export { AxGen, type AxGenForwardOptions, type AxGenOptions, type AxGenStreamChunk, ax } from './gen.js';
export {
  type AxMCPClients,
  type AxMCPEvaluationMode,
  AxMCPExecutionContext,
  type AxMCPInheritance,
  type AxProgramMCPClient,
} from './mcp-context.js';
export { UNTRUSTED_CONTENT_RULE } from './prompt.js';
export { type AxField, type AxFieldType, AxSignature } from './signature.js';
export type { AxSignatureInputs, AxSignatureOutputs } from './signature-types.js';
export { type AxToFunctionOptions, toFunction } from './to-function.js';
export {
  type AxFunctionBinding,
  type AxMCPToolBinding,
  type AxMCPToolNaming,
  type AxToolBinding,
  type AxToolset,
  AxToolsetBuilder,
  type AxUCPOperationBinding,
} from './tool-bindings.js';
export type { AxMCPProgramEvent } from './tool-calls.js';
export { DEFAULT_MAX_STEPS } from './tool-loop.js';
export type { AxProgramUCPClient, AxUCPClients } from './ucp-context.js';
