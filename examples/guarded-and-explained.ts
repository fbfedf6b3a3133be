/**
 * Loud, never silent: a misspelled option is refused before anything is sent; the guard of the
 * specification denies the demo's destructive tool; an input plan in the callback form feeds a
 * program; `runtime.explain()` says why an anonymous notification wakes no authenticated route
 * (and that a verified one does), and `onWarning` says so once, naming what to set.
 *
 * Needs the ax-mcp demo server (`adjust_stock` is destructive, `get_stock` read-only).
 * Run: `AX_MCP_URL=http://127.0.0.1:3000/mcp npx tsx examples/guarded-and-explained.ts` (see README.md).
 */
import { pathToFileURL } from 'node:url';
import {
  type AxEventRouteExplanation,
  AxMCPAuthorizationDeniedError,
  AxMCPClient,
  AxMCPEventSource,
  type AxMCPSSRFOptions,
  AxMCPStreamableHTTPTransport,
  eventPath,
  eventRoute,
  eventRuntime,
  eventTarget,
} from '../src/index.js';

/** What `main` observed. */
export interface GuardedAndExplainedResult {
  /** The code and path of the misspelled option's error, and its suggestion. */
  misspelled: { code: string; path: string; suggestion: string | undefined };
  /** True when the guard denied `adjust_stock`. */
  destructiveDenied: boolean;
  /** `get_stock`'s total, allowed by the same guard. */
  stockTotal: number;
  /** The callback-form plan's input, as the target received it. */
  planned: unknown;
  /** What each route would do with an anonymous `mcp.resource.updated`. */
  explained: AxEventRouteExplanation[];
  /** Warnings the runtime gave about the wiring. */
  warnings: string[];
}

function ssrfFor(url: string): true | AxMCPSSRFOptions {
  const { hostname, protocol } = new URL(url);
  const loopback = hostname === '127.0.0.1' || hostname === 'localhost' || hostname === '[::1]';
  return loopback ? { allowHTTP: protocol === 'http:', allowLoopback: true } : true;
}

export async function main(
  url: string,
  log: (line: string) => void = console.log,
): Promise<GuardedAndExplainedResult> {
  const transport = () => new AxMCPStreamableHTTPTransport(url, { ssrfProtection: ssrfFor(url) });

  // 1. A misspelled guard is refused at construction: nothing is sent, nothing runs unguarded.
  let misspelled = { code: '', path: '', suggestion: undefined as string | undefined };
  try {
    new AxMCPClient(transport(), { namespace: 'inventory', authorizeToolcall: () => false } as never);
  } catch (error) {
    const { code, path, suggestion } = error as { code: string; path: string; suggestion?: string };
    misspelled = { code, path, suggestion };
    log(`refused: ${(error as Error).message}`);
  }

  // 2. The specification's guard, verbatim: the tool object carries its annotations.
  const client = new AxMCPClient(transport(), {
    namespace: 'inventory',
    authorizeToolCall: async ({ tool }) => tool.annotations?.destructiveHint !== true,
  });
  let destructiveDenied = false;
  try {
    await client.callTool('adjust_stock', { warehouseId: 'berlin', sku: 'widget-a', delta: 1 });
  } catch (error) {
    destructiveDenied = error instanceof AxMCPAuthorizationDeniedError;
    log(`denied: ${(error as Error).message}`);
  }
  const stock = await client.callTool('get_stock', { sku: 'widget-a' });
  const stockTotal = (stock.structuredContent as { total: number }).total;
  log(`get_stock allowed: total ${stockTotal}`);

  // 3. An input plan in the callback form, and an authenticated wake route next to an anonymous source.
  let planned: unknown;
  const stockAgent = eventTarget('stock-agent')
    .inputFields([{ name: 'uri', type: 'string' }])
    .input((input) => input.field('uri', eventPath.data('uri')))
    .invoke((input) => {
      planned = input;
      return 'done';
    })
    .build();
  const warnings: string[] = [];
  const source = new AxMCPEventSource({ client, resourceSubscriptions: ['inventory://warehouse/berlin'] });
  const runtime = eventRuntime({
    sources: [source],
    allowVolatile: true,
    onWarning: (message) => warnings.push(message),
    routes: [
      eventRoute('wake-on-stock').types('mcp.resource.updated').authenticated().wake(stockAgent).build(),
    ],
  });
  await runtime.start();
  for (const warning of warnings) log(`warning: ${warning}`);

  // 4. Why an anonymous update wakes nothing, and the same update from a verified tenant does.
  const update = {
    id: 'example-1',
    source: 'mcp://inventory',
    type: 'mcp.resource.updated',
    subject: 'inventory://warehouse/berlin',
    data: { uri: 'inventory://warehouse/berlin' },
  };
  const verified = { identity: { tenantId: 'acme' }, trust: 'authenticated' as const };
  const explained = [...(await runtime.explain(update)), ...(await runtime.explain(update, verified))];
  for (const route of explained) {
    log(
      `${route.routeId}: ${route.matches ? 'would match' : `${route.reason?.code} — ${route.reason?.message}`}`,
    );
  }
  await runtime.publish({ event: update, ...verified });
  const deadline = Date.now() + 5_000;
  while (planned === undefined && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 20));
  log(`the target received ${JSON.stringify(planned)}`);

  await runtime.close();
  await source.close();
  await client.close();
  return { misspelled, destructiveDenied, stockTotal, planned, explained, warnings };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const url = process.env.AX_MCP_URL ?? 'http://127.0.0.1:3000/mcp';
  main(url).catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
