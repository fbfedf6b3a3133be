/** The stateful protocol revision ax-mcp sends in `initialize`. */
export const LEGACY_PROTOCOL_VERSION = '2025-11-25';

/** The stateless protocol revision (no `initialize`, per-request `_meta`). */
export const MODERN_PROTOCOL_VERSION = '2026-07-28';

/** Stateful revisions a server may answer `initialize` with, newest first. */
export const LEGACY_PROTOCOL_VERSIONS: readonly string[] = [
  '2025-11-25',
  '2025-06-18',
  '2025-03-26',
  '2024-11-05',
];

/** Stateless revisions this client speaks, newest first. */
export const MODERN_PROTOCOL_VERSIONS: readonly string[] = ['2026-07-28'];

/** Which protocol generation an endpoint speaks. */
export type AxMCPEra = 'legacy' | 'modern';
