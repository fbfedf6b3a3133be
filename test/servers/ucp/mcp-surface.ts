/**
 * The test business's UCP MCP binding on the official server SDK (`McpServer`,
 * `createMcpHandler`): one tool per operation of `mcp.openrpc.json`, each taking `meta`
 * (`ucp-agent.profile`, `idempotency-key`), `id` and the payload (`checkout`, `cart`,
 * `catalog`), answering with the UCP response in `structuredContent`.
 */
import { createMcpHandler, McpServer } from '@modelcontextprotocol/server';
import * as z from 'zod';

/** What one tool call asks of the business. */
export interface UCPToolCall {
  operation: string;
  id: string | undefined;
  payload: Record<string, unknown> | undefined;
  profile: string | undefined;
  idempotencyKey: string | undefined;
}

const TOOLS: Array<[tool: string, operation: string, payload?: 'checkout' | 'cart' | 'catalog']> = [
  ['search_catalog', 'catalog.search', 'catalog'],
  ['lookup_catalog', 'catalog.lookup', 'catalog'],
  ['get_product', 'catalog.product', 'catalog'],
  ['create_cart', 'cart.create', 'cart'],
  ['get_cart', 'cart.get'],
  ['update_cart', 'cart.update', 'cart'],
  ['cancel_cart', 'cart.cancel'],
  ['create_checkout', 'checkout.create', 'checkout'],
  ['get_checkout', 'checkout.get'],
  ['update_checkout', 'checkout.update', 'checkout'],
  ['complete_checkout', 'checkout.complete', 'checkout'],
  ['cancel_checkout', 'checkout.cancel'],
  ['get_order', 'order.get'],
];

/** A fetch-style MCP handler whose tools call `serve`. */
export function ucpMCPHandler(serve: (call: UCPToolCall) => Promise<{ status: number; body: unknown }>) {
  const build = () => {
    const mcp = new McpServer(
      { name: 'ucp-test-business', version: '1.0.0' },
      { capabilities: { tools: {} } },
    );
    for (const [tool, operation, payload] of TOOLS) {
      const shape: Record<string, z.ZodType> = {
        meta: z.looseObject({
          'ucp-agent': z.looseObject({ profile: z.string() }),
          'idempotency-key': z.string().optional(),
        }),
        id: z.string().optional(),
      };
      if (payload) shape[payload] = z.record(z.string(), z.unknown());
      mcp.registerTool(
        tool,
        { description: `UCP ${operation}`, inputSchema: z.looseObject(shape) },
        async (args) => {
          const input = args as Record<string, unknown> & {
            meta: { 'ucp-agent': { profile: string }; 'idempotency-key'?: string };
            id?: string;
          };
          const { status, body } = await serve({
            operation,
            id: input.id,
            payload: payload ? (input[payload] as Record<string, unknown>) : undefined,
            profile: input.meta['ucp-agent'].profile,
            idempotencyKey: input.meta['idempotency-key'],
          });
          const structured = body as Record<string, unknown>;
          return {
            content: [{ type: 'text' as const, text: JSON.stringify(body) }],
            structuredContent: structured,
            ...(status >= 400 ? { isError: true } : {}),
          };
        },
      );
    }
    return mcp;
  };
  return createMcpHandler(build);
}
