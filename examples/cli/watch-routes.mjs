// @ts-check
/**
 * A routes module for `ax-mcp watch --routes`: under every notification the CLI prints what each
 * route would do with it, or why not. The runtime is never started, so nothing runs. The same
 * module shape serves `ax-mcp worker --module`. Use it:
 *
 *   npx ax-mcp watch http://127.0.0.1:3000/mcp --allow-localhost --subscribe all \
 *     --routes ./examples/cli/watch-routes.mjs --tenant acme --trust authenticated
 */
import { eventRoute, eventTarget, MCP_EVENT_TYPES } from 'ax-mcp';

const restock = eventTarget('restock')
  .invoke(() => 'restocked')
  .build();

export const routes = [
  eventRoute('berlin-restock')
    .types(MCP_EVENT_TYPES.resourceUpdated)
    .subjects('inventory://warehouse/berlin')
    .authenticated()
    .wake(restock)
    .build(),
  eventRoute('catalog-log')
    .types(MCP_EVENT_TYPES.catalogChanged)
    .observe(() => {})
    .build(),
];
export const targets = [restock]; // targets that routes name by id (optional here)
