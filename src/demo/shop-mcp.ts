/**
 * The demo shop's UCP MCP binding (`/ucp/mcp`) on the official server SDK: one tool per
 * operation of `mcp.openrpc.json` (`search_catalog`, `complete_checkout`, …), each taking `meta`
 * (`ucp-agent.profile`, `idempotency-key`), the resource `id` and the payload under `checkout`,
 * `cart` or `catalog`, and answering with the UCP response in `structuredContent`.
 */
import { createMcpHandler, McpServer } from '@modelcontextprotocol/server';
import * as z from 'zod';

/** One tool call, as the shop runs it. */
export interface ShopToolCall {
  operation: string;
  id: string | undefined;
  payload: Record<string, unknown>;
  idempotencyKey: string | undefined;
}

const TOOLS: ReadonlyArray<[tool: string, operation: string, payload?: 'checkout' | 'cart' | 'catalog']> = [
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

/** A fetch-style MCP handler whose tools run `serve`. */
export function shopMCPHandler(serve: (call: ShopToolCall) => Promise<[status: number, body: object]>) {
  return createMcpHandler(() => {
    const mcp = new McpServer(
      { name: 'ax-mcp-demo-shop', version: '1.0.0' },
      { capabilities: { tools: {} } },
    );
    for (const [tool, operation, payload] of TOOLS) {
      const shape: Record<string, z.ZodType> = {
        meta: z.looseObject({
          'ucp-agent': z.looseObject({ profile: z.string() }),
          'idempotency-key': z.string().max(200).optional(),
        }),
        id: z.string().max(512).optional(),
      };
      if (payload) shape[payload] = z.record(z.string(), z.unknown());
      mcp.registerTool(
        tool,
        { description: `UCP ${operation} at the demo shop`, inputSchema: z.looseObject(shape) },
        async (args) => {
          const input = args as Record<string, unknown> & {
            meta: { 'idempotency-key'?: string };
            id?: string;
          };
          const [status, body] = await serve({
            operation,
            id: input.id,
            payload: payload ? (input[payload] as Record<string, unknown>) : {},
            idempotencyKey: input.meta['idempotency-key'],
          });
          return {
            content: [{ type: 'text' as const, text: JSON.stringify(body) }],
            structuredContent: body as Record<string, unknown>,
            ...(status >= 400 ? { isError: true } : {}),
          };
        },
      );
    }
    return mcp;
  });
}
