/** The stdio transport: an MCP server run as a child process. */
export type { AxMCPStdioTransportOptions } from './options.js';
export { AxMCPProcessExitError } from './process-exit-error.js';
export { AxMCPStdioTransport } from './transport.js';
