export type { AxMCPCatalogSnapshot, AxMCPListKind } from './catalog.js';
export {
  AX_MCP_CLIENT_INFO,
  AxMCPClient,
  type AxMCPCompletionReference,
  type AxMCPTaskStatusFilter,
  type AxMCPToolCallOptions,
  MANUAL_OWNER,
} from './client.js';
export {
  type AxMCPEraStore,
  type AxMCPEraVerdict,
  AxMCPMemoryEraStore,
  defaultEraStore,
} from './era-store.js';
export type { AxMCPClientEvent, AxMCPClientEventListener, AxMCPLifecycleState } from './events.js';
export type { AxMCPCallOptions } from './in-flight.js';
export type { AxMCPListening, AxMCPListenOptions } from './listening.js';
export type { AxMCPClientOptions, AxMCPToolCallRequest } from './options.js';
export { type AxMCPOutputSchemaIssue, AxMCPToolOutputError } from './output-schema.js';
export type { AxMCPCacheInfo } from './pagination.js';
export type { AxMCPListPage } from './reads.js';
export type {
  AxMCPElicitationHandlers,
  AxMCPServerRequestContext,
  AxMCPServerRequestHandlers,
} from './server-requests.js';
export {
  type AxMCPLoadedSkill,
  type AxMCPSkill,
  type AxMCPSkillFile,
  AxMCPSkillVerificationError,
  SKILLS_EXTENSION,
} from './skills.js';
export type { AxMCPTaskWaitOptions } from './tasks/protocol.js';
export type { AxMCPTask, AxMCPTaskStatus, AxMCPToolCallOutcome } from './tasks/task.js';
export { TASKS_EXTENSION } from './tool-headers.js';
