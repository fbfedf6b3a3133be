/**
 * The UCP response schemas this client checks, written as compact JSON Schema 2020-12 from the
 * published ones (`source/schemas/` of the UCP specification, 2026-08-25 draft, with the
 * 2026-04-08 differences accepted): the required members, types and enumerations that a
 * client relies on. Every object stays open (`additionalProperties` is never `false`), so
 * unknown fields and extensions (fulfillment, discounts, buyer consent, …) pass and are kept.
 */

type Schema = Record<string, unknown>;

const INT = { type: 'integer', minimum: -9007199254740991, maximum: 9007199254740991 };
const AMOUNT = { type: 'integer', minimum: 0, maximum: 9007199254740991 };
const ref = (name: string): Schema => ({ $ref: `#/$defs/${name}` });
const array = (items: Schema, extra: Schema = {}): Schema => ({ type: 'array', items, ...extra });
const registry = (entry: Schema): Schema => ({
  type: 'object',
  propertyNames: ref('reverse_domain_name'),
  additionalProperties: array(entry),
});

/** Shared definitions (`ucp.json`, `common/types/*`, `shopping/types/*`). */
const DEFS: Record<string, Schema> = {
  version: { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}$' },
  reverse_domain_name: {
    type: 'string',
    pattern: '^[a-z](?:[a-z0-9-]*[a-z0-9])?(?:\\.[a-z0-9](?:[a-z0-9_-]*[a-z0-9_])?)+$',
  },
  entity: {
    type: 'object',
    required: ['version'],
    properties: {
      version: ref('version'),
      spec: { type: 'string' },
      schema: { type: 'string' },
      id: { type: 'string' },
      config: { type: 'object' },
    },
  },
  service: {
    allOf: [
      ref('entity'),
      {
        required: ['transport'],
        properties: { transport: { type: 'string' }, endpoint: { type: 'string' } },
      },
    ],
  },
  capability: {
    allOf: [
      ref('entity'),
      {
        properties: {
          extends: {
            oneOf: [ref('reverse_domain_name'), array(ref('reverse_domain_name'), { minItems: 1 })],
          },
        },
      },
    ],
  },
  payment_handler: {
    allOf: [
      ref('entity'),
      { required: ['id'], properties: { available_instruments: array({ type: 'object' }, { minItems: 1 }) } },
    ],
  },
  ucp_response: {
    type: 'object',
    required: ['version'],
    properties: {
      version: ref('version'),
      status: { enum: ['success', 'error'] },
      services: registry(ref('service')),
      capabilities: registry(ref('capability')),
      payment_handlers: registry(ref('payment_handler')),
    },
  },
  jwk: {
    type: 'object',
    required: ['kid', 'kty'],
    properties: { kid: { type: 'string' }, kty: { type: 'string' } },
    // A published key must be public: no private members.
    not: { anyOf: ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'].map((name) => ({ required: [name] })) },
  },
  price: {
    type: 'object',
    required: ['amount', 'currency'],
    properties: { amount: AMOUNT, currency: { type: 'string', pattern: '^[A-Z]{3}$' } },
  },
  total: {
    type: 'object',
    required: ['type', 'amount'],
    properties: { type: { type: 'string' }, display_text: { type: 'string' }, amount: INT },
  },
  totals: {
    type: 'array',
    items: ref('total'),
    allOf: [
      { contains: { properties: { type: { const: 'subtotal' } } }, minContains: 1, maxContains: 1 },
      { contains: { properties: { type: { const: 'total' } } }, minContains: 1, maxContains: 1 },
    ],
  },
  link: {
    type: 'object',
    required: ['type', 'url'],
    properties: { type: { type: 'string' }, url: { type: 'string' } },
  },
  message: {
    type: 'object',
    required: ['type', 'content'],
    properties: {
      type: { enum: ['error', 'warning', 'info'] },
      code: { type: 'string' },
      content: { type: 'string' },
      severity: { type: 'string' },
    },
  },
  item: {
    type: 'object',
    required: ['id', 'title', 'price'],
    properties: { id: { type: 'string' }, title: { type: 'string' }, price: AMOUNT },
  },
  line_item: {
    type: 'object',
    required: ['id', 'item', 'quantity', 'totals'],
    properties: {
      id: { type: 'string' },
      item: ref('item'),
      quantity: { type: 'integer', minimum: 1, maximum: 9007199254740991 },
      totals: array(ref('total')),
    },
  },
  variant: {
    type: 'object',
    required: ['id', 'title', 'description', 'price'],
    properties: { id: { type: 'string' }, title: { type: 'string' }, price: ref('price') },
  },
  product: {
    type: 'object',
    required: ['id', 'title', 'description', 'price_range', 'variants'],
    properties: {
      id: { type: 'string' },
      title: { type: 'string' },
      description: { type: 'object', minProperties: 1 },
      price_range: {
        type: 'object',
        required: ['min', 'max'],
        properties: { min: ref('price'), max: ref('price') },
      },
      variants: array(ref('variant'), { minItems: 1 }),
    },
  },
  order_line_item: {
    type: 'object',
    required: ['id', 'item', 'quantity', 'totals', 'status'],
    properties: {
      id: { type: 'string' },
      item: ref('item'),
      quantity: {
        type: 'object',
        required: ['total', 'fulfilled'],
        properties: { total: AMOUNT, fulfilled: AMOUNT, original: AMOUNT },
      },
      totals: array(ref('total')),
      status: { enum: ['processing', 'partial', 'fulfilled', 'removed'] },
    },
  },
  fulfillment_event: {
    type: 'object',
    required: ['id', 'occurred_at', 'type', 'line_items'],
    properties: { id: { type: 'string' }, type: { type: 'string' }, line_items: array({ type: 'object' }) },
  },
  adjustment: {
    type: 'object',
    required: ['id', 'type', 'occurred_at', 'status'],
    properties: { status: { enum: ['pending', 'completed', 'failed'] } },
  },
};

const withDefs = (root: Schema): Schema => ({ ...root, $defs: DEFS });
const messages = array(ref('message'));

/** The UCP schemas the client validates, by name. */
export const UCP_SCHEMAS = {
  /** `profile.json#/$defs/business_schema`: `/.well-known/ucp`. 2026-04-08 published keys as `signing_keys`. */
  business_profile: withDefs({
    type: 'object',
    required: ['ucp'],
    properties: {
      ucp: {
        allOf: [
          ref('ucp_response'),
          {
            required: ['services', 'payment_handlers'],
            properties: {
              supported_versions: {
                type: 'object',
                propertyNames: ref('version'),
                additionalProperties: { type: 'string' },
              },
            },
          },
        ],
      },
      keys: array(ref('jwk')),
      signing_keys: array(ref('jwk')),
    },
  }),
  /** `shopping/checkout.json` (response). */
  checkout: withDefs({
    type: 'object',
    required: ['ucp', 'id', 'line_items', 'status', 'currency', 'totals', 'links'],
    properties: {
      ucp: ref('ucp_response'),
      id: { type: 'string' },
      line_items: array(ref('line_item')),
      status: {
        enum: [
          'incomplete',
          'requires_escalation',
          'ready_for_complete',
          'complete_in_progress',
          'completed',
          'canceled',
        ],
      },
      currency: { type: 'string' },
      totals: ref('totals'),
      links: array(ref('link')),
      messages,
      continue_url: { type: 'string' },
      order: {
        type: 'object',
        required: ['id', 'permalink_url'],
        properties: { id: { type: 'string' }, permalink_url: { type: 'string' } },
      },
    },
  }),
  /** `shopping/cart.json` (response). */
  cart: withDefs({
    type: 'object',
    required: ['ucp', 'id', 'line_items', 'currency', 'totals'],
    properties: {
      ucp: ref('ucp_response'),
      id: { type: 'string' },
      line_items: array(ref('line_item')),
      currency: { type: 'string' },
      totals: ref('totals'),
      messages,
    },
  }),
  /** `shopping/catalog_search.json#/$defs/search_response`. */
  catalog_search: withDefs({
    type: 'object',
    required: ['ucp', 'products'],
    properties: { ucp: ref('ucp_response'), products: array(ref('product')), messages },
  }),
  /** `shopping/catalog_lookup.json#/$defs/lookup_response`. */
  catalog_lookup: withDefs({
    type: 'object',
    required: ['ucp', 'products'],
    properties: { ucp: ref('ucp_response'), products: array(ref('product')), messages },
  }),
  /** `shopping/catalog_lookup.json#/$defs/get_product_response`. */
  catalog_product: withDefs({
    type: 'object',
    required: ['ucp', 'product'],
    properties: { ucp: ref('ucp_response'), product: ref('product'), messages },
  }),
  /** `shopping/order.json`: Get Order responses and order webhook payloads. */
  order: withDefs({
    type: 'object',
    required: [
      'ucp',
      'id',
      'checkout_id',
      'permalink_url',
      'line_items',
      'fulfillment',
      'currency',
      'totals',
    ],
    properties: {
      ucp: ref('ucp_response'),
      id: { type: 'string' },
      checkout_id: { type: 'string' },
      permalink_url: { type: 'string' },
      line_items: array(ref('order_line_item')),
      fulfillment: {
        type: 'object',
        properties: { expectations: array({ type: 'object' }), events: array(ref('fulfillment_event')) },
      },
      adjustments: array(ref('adjustment')),
      currency: { type: 'string' },
      totals: ref('totals'),
      messages,
    },
  }),
  /** `common/types/error_response.json`, leniently: what a business may say when it refuses. */
  error_response: withDefs({
    type: 'object',
    properties: {
      code: { type: 'string' },
      content: { type: 'string' },
      messages,
      continue_url: { type: 'string' },
    },
  }),
} as const satisfies Record<string, Schema>;

/** A name of {@link UCP_SCHEMAS}. */
export type AxUCPSchemaName = keyof typeof UCP_SCHEMAS;
