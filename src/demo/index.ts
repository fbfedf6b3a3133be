/**
 * `ax-mcp/demo`: the dual-era demo MCP server (inventory resources, stock tools, a reindex task,
 * control endpoints, a small UCP shop), built on the official server SDK.
 */
export { type AxMCPDemoControls, AxMCPDemoError } from './control.js';
export type { AxMCPDemoHeaderViolation } from './headers.js';
export {
  type AxMCPDemoResource,
  CURRENT_URI as AX_MCP_DEMO_CURRENT_URI,
  WAREHOUSE_TEMPLATE as AX_MCP_DEMO_WAREHOUSE_TEMPLATE,
} from './inventory.js';
export {
  DEFAULT_CACHE_HINTS as AX_MCP_DEMO_CACHE_HINTS,
  type DemoCacheHints as AxMCPDemoCacheHints,
} from './mcp-surface.js';
export type { AxMCPDemoListenStream } from './modern-leg.js';
export {
  type AxMCPDemoEra,
  AxMCPDemoServer,
  type AxMCPDemoServerOptions,
  type AxMCPDemoSessionState,
  type AxMCPDemoState,
} from './server.js';
export type { AxMCPDemoShopState, AxMCPDemoShopWebhook } from './shop.js';
export type { AxMCPDemoTask, AxMCPDemoTaskStatus } from './tasks.js';
