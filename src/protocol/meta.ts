/**
 * The registered names of the protocol: the `_meta` keys of 2026-07-28 requests, results and
 * notifications, and the identifiers of the extensions ax-mcp speaks. One place, so no layer
 * spells them twice.
 */

/** `_meta` keys. */
export const META = {
  protocolVersion: 'io.modelcontextprotocol/protocolVersion',
  clientCapabilities: 'io.modelcontextprotocol/clientCapabilities',
  clientInfo: 'io.modelcontextprotocol/clientInfo',
  logLevel: 'io.modelcontextprotocol/logLevel',
  serverInfo: 'io.modelcontextprotocol/serverInfo',
  subscriptionId: 'io.modelcontextprotocol/subscriptionId',
  /** A result that belongs to a task (2025-11-25 `tasks/result`). */
  relatedTask: 'io.modelcontextprotocol/related-task',
} as const;

/** The Tasks extension (2026-07-28). */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/** The Skills extension (SEP-2640). */
export const SKILLS_EXTENSION = 'io.modelcontextprotocol/skills';

/** The MCP Apps extension. */
export const AX_MCP_APPS_EXTENSION = 'io.modelcontextprotocol/ui';
