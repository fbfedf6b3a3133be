/** `ax-mcp/demo` entry point: the dual-era demo MCP server. Node only. */
export * from './demo/index.js';
