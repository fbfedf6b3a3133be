/**
 * UCP clients in programs: the `ucp` option, the operations a client offers once its
 * negotiation is known (read lazily, like MCP catalogs), the argument schema of each, and one
 * way to run an operation for the model or the actor. `authorizeOperation` stays with the
 * client: a denial comes back as a refusal the model can read, never as a thrown run. What
 * reaches the model, the actor or state is the business's response with payment credentials
 * redacted (`redactUCPCredentials`).
 */

import { instance, type Shape } from '../options/check.js';
import type { AxUCPClient } from '../ucp/client.js';
import { AxUCPError, AxUCPResponseError, redactCredentials } from '../ucp/errors.js';
import { type AxUCPOperation, isUCPOperation, UCP_OPERATIONS } from '../ucp/operations.js';

/**
 * What programs use of a UCP client. {@link AxUCPClient} satisfies it; programs only call
 * through it, so `authorizeOperation`, idempotency keys, signatures and SSRF rules apply.
 */
export type AxProgramUCPClient = Pick<AxUCPClient, 'namespace' | 'connect' | 'call'> &
  Partial<Pick<AxUCPClient, 'suppliesPayment'>>;

/** One UCP client or several: the `ucp` option of programs, agents, flows and `axMCPChat`. */
export type AxUCPClients = AxProgramUCPClient | readonly AxProgramUCPClient[];

/** Whether a value looks like a UCP client. */
export function isUCPClient(value: unknown): value is AxProgramUCPClient {
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as Partial<AxProgramUCPClient> & { callToolOutcome?: unknown };
  return (
    typeof candidate.namespace === 'string' &&
    typeof candidate.call === 'function' &&
    typeof candidate.connect === 'function' &&
    candidate.callToolOutcome === undefined
  );
}

/** The shape of one UCP client. */
export const UCP_CLIENT: Shape = instance('a UCP client (AxUCPClient)', (value) => isUCPClient(value));

/** The shape of {@link AxUCPClients}: `ucp[1]` names a bad item of a list. */
export const UCP_CLIENTS: Shape = {
  expected: 'a UCP client (AxUCPClient) or an array of them',
  optional: true,
  check(value, path, issues) {
    if (!Array.isArray(value)) return UCP_CLIENT.check(value, path, issues);
    value.forEach((client, index) => {
      UCP_CLIENT.check(client, `${path}[${index}]`, issues);
    });
  },
};

const ID = { type: 'string', description: 'The id of the resource the operation acts on' } as const;
const LINE_ITEMS = {
  type: 'array',
  description: 'What to buy: the catalog item id and a quantity per line',
  items: {
    type: 'object',
    properties: {
      item: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
      quantity: { type: 'integer', minimum: 1 },
    },
    required: ['item'],
  },
} as const;
const BUYER = {
  type: 'object',
  description: 'The buyer (email, first_name, last_name, phone_number)',
  properties: {
    email: { type: 'string' },
    first_name: { type: 'string' },
    last_name: { type: 'string' },
    phone_number: { type: 'string' },
  },
} as const;
const CHECKOUT_FIELDS = {
  line_items: LINE_ITEMS,
  buyer: BUYER,
  fulfillment: {
    type: 'object',
    description: 'Fulfillment extension: { methods: [{ type: "shipping", destinations: [...] }] }',
  },
  discounts: {
    type: 'object',
    description: 'Discount extension: { codes: ["CODE"] }',
    properties: { codes: { type: 'array', items: { type: 'string' } } },
  },
} as const;

/** Argument schema and description of each operation (the REST binding's request bodies). */
const OPERATION_DOCS: Readonly<Record<AxUCPOperation, { description: string; schema: object }>> = {
  'catalog.search': {
    description: 'Searches the catalog',
    schema: {
      properties: {
        query: { type: 'string', description: 'Words to search for' },
        filters: { type: 'object' },
        pagination: {
          type: 'object',
          properties: { cursor: { type: 'string' }, limit: { type: 'integer' } },
        },
      },
    },
  },
  'catalog.lookup': {
    description: 'Looks products up by id',
    schema: { properties: { ids: { type: 'array', items: { type: 'string' } } }, required: ['ids'] },
  },
  'catalog.product': {
    description: 'Reads one product',
    schema: { properties: { id: { type: 'string', description: 'The product id' } }, required: ['id'] },
  },
  'cart.create': {
    description: 'Creates a cart',
    schema: { properties: { line_items: LINE_ITEMS, buyer: BUYER }, required: ['line_items'] },
  },
  'cart.get': { description: 'Reads a cart', schema: { properties: { id: ID }, required: ['id'] } },
  'cart.update': {
    description: 'Replaces the contents of a cart',
    schema: { properties: { id: ID, line_items: LINE_ITEMS, buyer: BUYER }, required: ['id'] },
  },
  'cart.cancel': { description: 'Cancels a cart', schema: { properties: { id: ID }, required: ['id'] } },
  'checkout.create': {
    description: 'Starts a checkout session',
    schema: { properties: { ...CHECKOUT_FIELDS }, required: ['line_items'] },
  },
  'checkout.get': {
    description: 'Reads a checkout session',
    schema: { properties: { id: ID }, required: ['id'] },
  },
  'checkout.update': {
    description: 'Updates a checkout session (buyer, fulfillment, discounts, line items)',
    schema: { properties: { id: ID, ...CHECKOUT_FIELDS }, required: ['id'] },
  },
  'checkout.complete': {
    description:
      'Places the order and pays: the host decides first (authorizeOperation) and may refuse; a refused call was not sent',
    schema: {
      properties: {
        id: ID,
        payment: {
          type: 'object',
          description: 'The payment: { instruments: [{ id, handler_id, type, credential }] }',
        },
      },
      required: ['id', 'payment'],
    },
  },
  'checkout.cancel': {
    description: 'Cancels a checkout session',
    schema: { properties: { id: ID }, required: ['id'] },
  },
  'order.get': { description: 'Reads an order', schema: { properties: { id: ID }, required: ['id'] } },
};

/** One operation a UCP client offers, as programs see it. */
export interface UCPOperationInfo {
  readonly operation: AxUCPOperation;
  readonly description: string;
  /** The JSON schema of its arguments (an object schema). */
  readonly parameters: Record<string, unknown>;
}

const INFO: ReadonlyMap<AxUCPOperation, UCPOperationInfo> = new Map(
  (Object.keys(UCP_OPERATIONS) as AxUCPOperation[]).map((operation) => {
    const docs = OPERATION_DOCS[operation];
    const info: UCPOperationInfo = Object.freeze({
      operation,
      description: docs.description,
      parameters: Object.freeze({ type: 'object', ...docs.schema }),
    });
    return [operation, info];
  }),
);

/**
 * `checkout.complete` of a client that supplies the payment itself: the model gives the
 * checkout id alone, and never holds a credential.
 */
const COMPLETE_WITH_SUPPLIED_PAYMENT: UCPOperationInfo = Object.freeze({
  operation: 'checkout.complete',
  description:
    'Places the order and pays with the payment the host supplies: the host decides first (authorizeOperation) and may refuse; a refused call was not sent',
  parameters: Object.freeze({ type: 'object', properties: { id: ID }, required: ['id'] }),
});

/** The documentation of one operation, as offered by `client`. */
export function operationInfo(operation: AxUCPOperation, client?: AxProgramUCPClient): UCPOperationInfo {
  if (operation === 'checkout.complete' && client?.suppliesPayment) return COMPLETE_WITH_SUPPLIED_PAYMENT;
  return INFO.get(operation)!;
}

/** Offered operations per client, read once per client (negotiation does not change). */
const offered = new WeakMap<AxProgramUCPClient, Promise<readonly AxUCPOperation[]>>();

/**
 * The operations a client's negotiation allows, in `UCP_OPERATIONS` order. Connects on
 * first use (`connect()` is shared by all callers); a failed discovery is thrown and tried
 * again next time.
 */
export function offeredOperations(
  client: AxProgramUCPClient,
  signal?: AbortSignal,
): Promise<readonly AxUCPOperation[]> {
  let pending = offered.get(client);
  if (!pending) {
    pending = client
      .connect(signal ? { signal } : {})
      .then((negotiation) =>
        Object.freeze(
          (Object.keys(UCP_OPERATIONS) as AxUCPOperation[]).filter((operation) =>
            negotiation.capabilities.has(UCP_OPERATIONS[operation].capability),
          ),
        ),
      );
    offered.set(client, pending);
    pending.catch(() => {
      if (offered.get(client) === pending) offered.delete(client);
    });
  }
  return pending;
}

/** How one operation ended, as the model or the actor is told. */
export type UCPOperationOutcome =
  /** The business's response, credentials redacted. */
  | { kind: 'result'; value: unknown }
  /** `authorizeOperation` refused it (nothing was sent). */
  | { kind: 'refused'; reason: string }
  /** Nothing was done, and the model may act on why (fix the arguments, pick another operation). */
  | { kind: 'error'; message: string; code: string };

/**
 * Runs one operation through the client. A denial, arguments the client or the business
 * refused, and an operation the business does not offer come back as outcomes; anything
 * else (an unknown outcome, a transport failure, a schema violation, an abort) is thrown.
 */
export async function runUCPOperation(
  client: AxProgramUCPClient,
  operation: string,
  args: Record<string, unknown>,
  signal: AbortSignal,
): Promise<UCPOperationOutcome> {
  const componentId = `ucp:${client.namespace}:${operation}`;
  if (!isUCPOperation(operation)) {
    return {
      kind: 'error',
      code: 'unknown_operation',
      message: unknownOperation(client.namespace, operation),
    };
  }
  try {
    const value = await client.call(operation, args, { signal });
    return { kind: 'result', value: redactCredentials(value) };
  } catch (error) {
    if (signal.aborted || !(error instanceof AxUCPError)) throw error;
    if (error.code === 'authorization_denied') {
      const given = (error as { reason?: unknown }).reason;
      const why = typeof given === 'string' && given !== '' ? ` (${given.slice(0, 200)})` : '';
      return {
        kind: 'refused',
        reason: `The host refused ${componentId}${why}; it was not sent to the business. Do not retry it.`,
      };
    }
    if (error.code === 'invalid_argument' || error.code === 'capability_unsupported') {
      return { kind: 'error', code: error.code, message: `${componentId} was not sent: ${error.message}` };
    }
    if (refusedByBusiness(error)) {
      return { kind: 'error', code: error.code, message: businessRefusal(componentId, error) };
    }
    throw error;
  }
}

/** The business answered definitively that it did nothing the model could not fix. */
function refusedByBusiness(error: AxUCPError): error is AxUCPResponseError {
  if (!(error instanceof AxUCPResponseError)) return false;
  if (error.code === 'business_error') return true;
  return (
    error.code === 'http_status' &&
    error.status >= 400 &&
    error.status < 500 &&
    ![401, 403, 407].includes(error.status)
  );
}

function businessRefusal(componentId: string, error: AxUCPResponseError): string {
  const messages = error.messages
    .slice(0, 5)
    .map((message) => [message.code, message.content].filter(Boolean).join(': ').slice(0, 200))
    .filter(Boolean);
  const ucpCode = error.ucpCode ? ` ${error.ucpCode}` : '';
  const detail = messages.length > 0 ? `: ${messages.join('; ')}` : '';
  return `The business refused ${componentId} (HTTP ${error.status}${ucpCode})${detail}`;
}

/** `ucp.shop has no operation "checkout.refund"`, naming the known ones. */
export function unknownOperation(namespace: string, operation: string, offered?: readonly string[]): string {
  const shown = JSON.stringify(operation.slice(0, 80));
  const known = offered ?? Object.keys(UCP_OPERATIONS);
  return `ucp.${namespace} has no operation ${shown} (it offers: ${known.join(', ') || 'none'})`;
}
