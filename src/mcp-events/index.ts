export { AxMCPEventSource, type AxMCPEventSourceOptions } from './event-source.js';
export { MCP_EVENT_TYPES, MCP_TASK_CORRELATION, mcpSource, mcpTaskKey } from './normalize.js';
export { type AxMCPResourceSubscriptionPolicy, selectResources } from './policy.js';
export { type AxMCPEventRoutesOptions, axMCPEventRoutes } from './routes.js';
