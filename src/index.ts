/**
 * ax-mcp: the isomorphic core. Web standards only — no `node:` imports — so it runs
 * in Node, browsers, Deno, Bun and workers. Node-only pieces live in `ax-mcp/node`.
 */
export * from './ai/index.js';
export * from './apps/index.js';
export * from './auth/index.js';
export * from './backoff/index.js';
export * from './client/index.js';
export * from './errors/index.js';
export * from './events/index.js';
export * from './mcp-events/index.js';
export * from './net/index.js';
export type { AxOptionsIssue } from './options/index.js';
export * from './program/index.js';
export * from './protocol/index.js';
export * from './transport/index.js';
