/**
 * The UCP operations of the REST binding (`source/services/shopping/rest.openapi.json`): the
 * capability each belongs to, its method and path, the schema its response is checked
 * against, and whether it mutates (an `Idempotency-Key` on every attempt) or commits an order
 * (`authorizeOperation` first).
 */
import type { AxUCPSchemaName } from './schemas.js';

/** A UCP operation name, as programs call it: `ucp.<namespace>.<operation>`. */
export type AxUCPOperation =
  | 'catalog.search'
  | 'catalog.lookup'
  | 'catalog.product'
  | 'cart.create'
  | 'cart.get'
  | 'cart.update'
  | 'cart.cancel'
  | 'checkout.create'
  | 'checkout.get'
  | 'checkout.update'
  | 'checkout.complete'
  | 'checkout.cancel'
  | 'order.get';

/** How one operation is sent. */
export interface AxUCPOperationSpec {
  /** The capability that must be negotiated. */
  capability: string;
  method: 'GET' | 'POST' | 'PUT';
  /** The path under the REST endpoint; `{id}` is the resource id. */
  path: string;
  /** Whether the request has a JSON body. */
  body: boolean;
  schema: AxUCPSchemaName;
  /** Sends an `Idempotency-Key`; retried with the same key after a network failure. */
  mutating: boolean;
  /** Moves money or commits an order: `authorizeOperation` decides before anything is sent. */
  commits: boolean;
}

const CHECKOUT = 'dev.ucp.shopping.checkout';
const CART = 'dev.ucp.shopping.cart';

/** Every operation, by name. */
export const UCP_OPERATIONS: Readonly<Record<AxUCPOperation, AxUCPOperationSpec>> = Object.freeze({
  'catalog.search': op('dev.ucp.shopping.catalog.search', 'POST', '/catalog/search', 'catalog_search', false),
  'catalog.lookup': op('dev.ucp.shopping.catalog.lookup', 'POST', '/catalog/lookup', 'catalog_lookup', false),
  'catalog.product': op(
    'dev.ucp.shopping.catalog.lookup',
    'POST',
    '/catalog/product',
    'catalog_product',
    false,
  ),
  'cart.create': op(CART, 'POST', '/carts', 'cart', true),
  'cart.get': op(CART, 'GET', '/carts/{id}', 'cart', false),
  'cart.update': op(CART, 'PUT', '/carts/{id}', 'cart', true),
  'cart.cancel': op(CART, 'POST', '/carts/{id}/cancel', 'cart', true, { body: false }),
  'checkout.create': op(CHECKOUT, 'POST', '/checkout-sessions', 'checkout', true),
  'checkout.get': op(CHECKOUT, 'GET', '/checkout-sessions/{id}', 'checkout', false),
  'checkout.update': op(CHECKOUT, 'PUT', '/checkout-sessions/{id}', 'checkout', true),
  'checkout.complete': op(CHECKOUT, 'POST', '/checkout-sessions/{id}/complete', 'checkout', true, {
    commits: true,
  }),
  'checkout.cancel': op(CHECKOUT, 'POST', '/checkout-sessions/{id}/cancel', 'checkout', true, {
    body: false,
  }),
  'order.get': op('dev.ucp.shopping.order', 'GET', '/orders/{id}', 'order', false),
});

function op(
  capability: string,
  method: 'GET' | 'POST' | 'PUT',
  path: string,
  schema: AxUCPSchemaName,
  mutating: boolean,
  extra: { body?: boolean; commits?: boolean } = {},
): AxUCPOperationSpec {
  return {
    capability,
    method,
    path,
    body: extra.body ?? method !== 'GET',
    schema,
    mutating,
    commits: extra.commits ?? false,
  };
}

/** True for a known operation name. */
export function isUCPOperation(name: string): name is AxUCPOperation {
  return Object.hasOwn(UCP_OPERATIONS, name);
}
