/** `ax-mcp/demo` entry point: the dual-era demo MCP server. Node only. */
export {
  AX_MCP_DEMO_CACHE_HINTS,
  AX_MCP_DEMO_CURRENT_URI,
  AX_MCP_DEMO_WAREHOUSE_TEMPLATE,
  type AxMCPDemoCacheHints,
  type AxMCPDemoControls,
  type AxMCPDemoEra,
  AxMCPDemoError,
  type AxMCPDemoHeaderViolation,
  type AxMCPDemoListenStream,
  type AxMCPDemoResource,
  AxMCPDemoServer,
  type AxMCPDemoServerOptions,
  type AxMCPDemoSessionState,
  type AxMCPDemoState,
  type AxMCPDemoTask,
  type AxMCPDemoTaskStatus,
} from './demo/index.js';
