/**
 * `AxUCPClient`: a UCP platform client over the REST binding. It discovers the business
 * (`/.well-known/ucp`), negotiates the protocol version and the capabilities against the
 * platform profile it advertises in `UCP-Agent`, and runs the operations of the negotiated
 * capabilities. Responses are checked against the published schemas and kept whole.
 *
 * Safety: an operation that commits an order (`checkout.complete`) runs only after
 * `authorizeOperation` allowed it — with no authorizer it is refused, and nothing is sent.
 * Every mutating request carries an `Idempotency-Key`, the same on every retry of one logical
 * call (the body bytes too), so a retry after a cut connection is answered from the
 * business's idempotency store instead of acting twice.
 */

import { AUTHENTICATION_OPTION, authenticationSensitiveHeaders } from '../auth/authentication.js';
import type { AxMCPAuthentication } from '../auth/index.js';
import type { AxMCPClient } from '../client/index.js';
import { type AxMCPFetch, createGuardedFetch } from '../net/guarded-fetch.js';
import { type AxMCPSSRFProtection, redactURL, resolveSSRFPolicy, SSRF_PROTECTION } from '../net/ssrf.js';
import {
  ABORT_SIGNAL,
  array,
  boolean,
  func,
  instance,
  number,
  object,
  record,
  required,
  string,
} from '../options/check.js';
import { describeAnswer } from '../options/hook-answers.js';
import {
  type AxUCPNegotiation,
  type AxUCPPlatformProfile,
  discover,
  fetchProfile,
  keysOf,
} from './discovery.js';
import {
  AxUCPAuthorizationError,
  AxUCPError,
  type AxUCPErrorContext,
  AxUCPOutcomeUnknownError,
  AxUCPResponseError,
  AxUCPSignatureError,
  assertUCPOptions,
  redactCredentials,
} from './errors.js';
import {
  type ExchangeResponse,
  type ExchangeSettings,
  exchange,
  isNetworkFailure,
  readMessages,
} from './http.js';
import { callOverMCP } from './mcp-binding.js';
import { type AxUCPOperation, isUCPOperation, UCP_OPERATIONS } from './operations.js';
import {
  type AxUCPPublicKey,
  type AxUCPSigningKeyOptions,
  axUCPSigner,
  verifyMessage,
} from './signatures.js';
import { assertUCPSchema } from './validate.js';

/** What `authorizeOperation` is asked. Payment credentials in `args` are redacted. */
export interface AxUCPOperationAuthorizationRequest {
  /** The operation (`checkout.complete`). */
  operation: AxUCPOperation;
  /** The client namespace. */
  namespace: string;
  /** The business's origin. */
  business: string;
  /** The resource the operation acts on (the checkout id). */
  resourceId: string | undefined;
  /** The arguments, credentials redacted. */
  args: unknown;
  /** The latest checkout this client saw for `resourceId` (totals, currency), if any. */
  checkout: unknown;
  signal?: AbortSignal;
}

/** What `authorizeOperation` answers: `true`/`false`, or a decision with a reason. */
export type AxUCPAuthorizationDecision = boolean | { allow: boolean; reason?: string };

/** Signing of requests and checking of response signatures. */
export interface AxUCPSigningOptions extends AxUCPSigningKeyOptions {
  /**
   * Response signatures: `'if-present'` (default) verifies a signed response and accepts an
   * unsigned one; `'required'` refuses unsigned ones too; `'off'` ignores them.
   */
  verifyResponses?: 'if-present' | 'required' | 'off';
}

/** Retries of one logical call after a network failure (same idempotency key, same bytes). */
export interface AxUCPRetryOptions {
  /** Attempts in all (default 3; 1 turns retries off). */
  attempts?: number;
  /** Delay before each retry, doubled each time (default 100 ms). */
  delayMs?: number;
}

/** Options of {@link AxUCPClient}. */
export interface AxUCPClientOptions {
  /** The name programs call it by: `ucp.<namespace>.<operation>`. */
  namespace: string;
  /** Your platform profile; its URL is sent as `UCP-Agent: profile="…"`. */
  profile: AxUCPPlatformProfile | string;
  /** Authentication strategies (`axMCPBearerAuthentication`, API keys, OAuth), applied in order. */
  authentication?: AxMCPAuthentication | AxMCPAuthentication[];
  /** RFC 9421 request signing with your key (published in your profile's `keys[]`). */
  signing?: AxUCPSigningOptions;
  /** SSRF protection (default on: HTTPS, no loopback or private networks). */
  ssrfProtection?: AxMCPSSRFProtection;
  /**
   * Decides every operation that moves money or commits an order (`checkout.complete`, and any
   * listed in `requireAuthorization`) before anything is sent. Without it those are refused.
   */
  authorizeOperation?: (
    request: AxUCPOperationAuthorizationRequest,
  ) => AxUCPAuthorizationDecision | Promise<AxUCPAuthorizationDecision>;
  /** More operations that need `authorizeOperation` (for example `checkout.cancel`). */
  requireAuthorization?: readonly AxUCPOperation[];
  /**
   * Supplies the payment of `checkout.complete` (its instruments, credentials included) after
   * `authorizeOperation` allowed it. With it, no credential passes through a program, an
   * agent or their state: the model completes a checkout by its id alone, and a `payment` in
   * the arguments is refused with nothing sent. The payment is resolved once per call, so a
   * retry sends the same bytes under the same idempotency key.
   */
  payment?: (request: AxUCPPaymentRequest) => Record<string, unknown> | Promise<Record<string, unknown>>;
  /** The underlying fetch (default: the global `fetch`); wrapped in the SSRF guard. */
  fetch?: AxMCPFetch;
  /** Deadline of one HTTP exchange (default 30 000 ms). */
  timeoutMs?: number;
  /** Largest response body accepted (default 4 MiB; profiles: 256 KiB). */
  maxResponseBytes?: number;
  /** Retries after network failures. */
  retry?: AxUCPRetryOptions;
  /** Extra headers on every request (`Accept-Language`, …). */
  headers?: Record<string, string>;
  /**
   * Run operations over the UCP MCP binding through this client (made for the business's
   * `negotiation.mcpEndpoint`) instead of REST. Discovery still reads `/.well-known/ucp`.
   * Sign its requests with `axUCPSigningAuthentication` in its transport's `authentication`.
   */
  mcp?: AxMCPClient;
}

/** What {@link AxUCPClientOptions.payment} is asked for: the checkout about to be completed. */
export interface AxUCPPaymentRequest {
  namespace: string;
  /** The business's origin. */
  business: string;
  checkoutId: string;
  /** The checkout as this client last saw it, credentials redacted (if it saw it). */
  checkout: unknown;
  signal?: AbortSignal;
}

/** Per-call options. */
export interface AxUCPCallOptions {
  signal?: AbortSignal;
  /**
   * The idempotency key of this logical call (a UUID). Give the key of an earlier call that
   * ended in `outcome_unknown` to retry it safely; by default a new one is made per call.
   */
  idempotencyKey?: string;
}

/**
 * Checked on every call: a misspelt `idempotencyKey` made a fresh key, so retrying a call that
 * ended `outcome_unknown` could place the order twice.
 */
const CALL_OPTIONS = object(
  { signal: ABORT_SIGNAL, idempotencyKey: string({ nonEmpty: true }) },
  { expected: 'options { signal?, idempotencyKey? }' },
);
const SIGNAL_OPTIONS = object({ signal: ABORT_SIGNAL }, { expected: 'options { signal? }' });
const KEY_OPTIONS = object(
  { refresh: boolean(), signal: ABORT_SIGNAL },
  { expected: 'options { refresh?, signal? }' },
);

/** A UCP response object: the published members typed loosely, every other member kept. */
export type AxUCPResource = Record<string, unknown> & { ucp: { version: string; [member: string]: unknown } };

const CLIENT_OPTIONS = object(
  {
    namespace: required(string({ nonEmpty: true })),
    profile: required(
      instance(
        'a profile URL or { url, document? }',
        (v) =>
          typeof v === 'string' ||
          (typeof v === 'object' && v !== null && typeof (v as { url?: unknown }).url === 'string'),
      ),
    ),
    authentication: AUTHENTICATION_OPTION,
    signing: instance('signing options { keyId, privateKey, created?, verifyResponses? }', (v) => {
      if (typeof v !== 'object' || v === null) return false;
      const s = v as Record<string, unknown>;
      const known = new Set(['keyId', 'privateKey', 'created', 'verifyResponses']);
      return (
        typeof s.keyId === 'string' &&
        typeof s.privateKey === 'object' &&
        Object.keys(s).every((k) => known.has(k)) &&
        (s.verifyResponses === undefined ||
          ['if-present', 'required', 'off'].includes(s.verifyResponses as string))
      );
    }),
    ssrfProtection: SSRF_PROTECTION,
    authorizeOperation: func('a function (request) => boolean | { allow, reason? }'),
    payment: func('a function (request) => the payment object'),
    requireAuthorization: array(
      instance('a UCP operation name', (v) => typeof v === 'string' && isUCPOperation(v)),
    ),
    fetch: func('a fetch function (url, init) => Promise<Response>'),
    timeoutMs: number({ integer: true, min: 1 }),
    maxResponseBytes: number({ integer: true, min: 1024 }),
    retry: object({ attempts: number({ integer: true, min: 1, max: 10 }), delayMs: number({ min: 0 }) }),
    headers: record(string()),
    mcp: instance(
      'an AxMCPClient',
      (v) =>
        typeof v === 'object' && v !== null && typeof (v as { callTool?: unknown }).callTool === 'function',
    ),
  },
  { aliases: { authorize: 'authorizeOperation', ssrf: 'ssrfProtection', auth: 'authentication' } },
);

const KEY_REFRESH_FLOOR_MS = 60_000;

/** A UCP client for one business. See the module comment for its safety rules. */
export class AxUCPClient {
  /** The namespace programs call it by. */
  readonly namespace: string;
  /** The business profile URL (`…/.well-known/ucp`), without credentials. */
  readonly endpoint: string;
  readonly #profileURL: URL;
  readonly #platform: AxUCPPlatformProfile;
  readonly #options: AxUCPClientOptions;
  readonly #settings: ExchangeSettings;
  readonly #verifyResponses: 'if-present' | 'required' | 'off';
  readonly #commits: ReadonlySet<string>;
  readonly #attempts: number;
  readonly #delayMs: number;
  /** Latest checkout per id (for `authorizeOperation`), bounded. */
  readonly #checkouts = new Map<string, unknown>();
  /** Orders this client placed (for webhook ownership checks), bounded. */
  readonly #orders = new Set<string>();
  #negotiation: Promise<AxUCPNegotiation> | undefined;
  #negotiated: AxUCPNegotiation | undefined;
  #keysRefreshedAt = 0;
  #closed = false;

  /** `endpoint` is the business origin (`https://shop.example`) or its profile URL. */
  constructor(endpoint: string | URL, options: AxUCPClientOptions) {
    assertUCPOptions(CLIENT_OPTIONS, options, 'AxUCPClient options');
    let url: URL;
    try {
      url = new URL(endpoint);
    } catch (error) {
      throw new AxUCPError('invalid_options', 'AxUCPClient: the endpoint is not an absolute URL', {
        cause: error,
      });
    }
    if (url.username || url.password) {
      throw new AxUCPError('invalid_options', 'Put credentials in `authentication`, not in the URL');
    }
    if (!url.pathname.endsWith('/.well-known/ucp')) url = new URL('/.well-known/ucp', url);
    url.hash = '';
    this.#profileURL = url;
    this.endpoint = redactURL(url);
    this.namespace = options.namespace;
    this.#options = options;
    this.#platform = typeof options.profile === 'string' ? { url: options.profile } : options.profile;
    const agent = this.#platform.url;
    if (!/^https?:\/\/[\x21-\x7e]+$/.test(agent) || /["\\]/.test(agent)) {
      throw new AxUCPError('invalid_options', 'AxUCPClient: profile.url must be an http(s) URL');
    }
    const policy = resolveSSRFPolicy(options.ssrfProtection ?? true);
    const guard: Parameters<typeof createGuardedFetch>[0] = {
      ssrfProtection: policy,
      // Profiles and schemas: no redirects (the specification forbids following them).
      maxRedirects: 0,
      sensitiveHeaders: authenticationSensitiveHeaders(options.authentication),
    };
    if (options.fetch) guard.fetch = options.fetch;
    this.#settings = {
      fetch: createGuardedFetch(guard),
      agent: `profile="${agent}"`,
      authentication: options.authentication,
      signer: options.signing ? axUCPSigner(options.signing) : undefined,
      timeoutMs: options.timeoutMs ?? 30_000,
      maxResponseBytes: options.maxResponseBytes ?? 4 * 1024 * 1024,
      headers: { ...(options.headers ?? {}) },
      namespace: options.namespace,
    };
    this.#verifyResponses = options.signing?.verifyResponses ?? 'if-present';
    this.#commits = new Set(['checkout.complete', ...(options.requireAuthorization ?? [])]);
    this.#attempts = options.retry?.attempts ?? 3;
    this.#delayMs = options.retry?.delayMs ?? 100;
  }

  /** The negotiation, once {@link connect} finished. */
  /** Whether `checkout.complete` takes its payment from the `payment` option (not from arguments). */
  get suppliesPayment(): boolean {
    return this.#options.payment !== undefined;
  }

  get negotiation(): AxUCPNegotiation | undefined {
    return this.#negotiated;
  }

  /** Discovers and negotiates (once; later calls share the result). Operations call it themselves. */
  connect(options: { signal?: AbortSignal } = {}): Promise<AxUCPNegotiation> {
    this.#assertOpen();
    assertUCPOptions(SIGNAL_OPTIONS, options, 'connect options');
    if (!this.#negotiation) {
      const input = {
        settings: this.#settings,
        profileURL: this.#profileURL,
        platform: this.#platform,
        overMCP: this.#options.mcp !== undefined,
        context: { namespace: this.namespace, endpoint: this.endpoint, operation: 'discovery' },
      };
      const pending = discover(input, options.signal);
      this.#negotiation = pending;
      pending.then(
        (n) => {
          this.#negotiated = n;
        },
        () => {
          if (this.#negotiation === pending) this.#negotiation = undefined;
        },
      );
    }
    return this.#negotiation;
  }

  /** Catalog operations (`dev.ucp.shopping.catalog.*`). */
  readonly catalog = {
    /** `POST /catalog/search`. */
    search: (request: Record<string, unknown>, options?: AxUCPCallOptions) =>
      this.call('catalog.search', request, options),
    /** `POST /catalog/lookup` (`{ ids: [...] }`). */
    lookup: (request: Record<string, unknown>, options?: AxUCPCallOptions) =>
      this.call('catalog.lookup', request, options),
    /** `POST /catalog/product` (`{ id }`). */
    product: (request: Record<string, unknown>, options?: AxUCPCallOptions) =>
      this.call('catalog.product', request, options),
  };

  /** Cart operations (`dev.ucp.shopping.cart`). */
  readonly cart = {
    create: (cart: Record<string, unknown>, options?: AxUCPCallOptions) =>
      this.call('cart.create', cart, options),
    get: (id: string, options?: AxUCPCallOptions) => this.call('cart.get', { id }, options),
    update: (id: string, cart: Record<string, unknown>, options?: AxUCPCallOptions) =>
      this.call('cart.update', { ...cart, id }, options),
    cancel: (id: string, options?: AxUCPCallOptions) => this.call('cart.cancel', { id }, options),
  };

  /** Checkout operations (`dev.ucp.shopping.checkout` and its extensions). */
  readonly checkout = {
    create: (checkout: Record<string, unknown>, options?: AxUCPCallOptions) =>
      this.call('checkout.create', checkout, options),
    get: (id: string, options?: AxUCPCallOptions) => this.call('checkout.get', { id }, options),
    update: (id: string, checkout: Record<string, unknown>, options?: AxUCPCallOptions) =>
      this.call('checkout.update', { ...checkout, id }, options),
    /** Commits the order: `authorizeOperation` decides first. `request` holds `payment`. */
    complete: (id: string, request: Record<string, unknown>, options?: AxUCPCallOptions) =>
      this.call('checkout.complete', { ...request, id }, options),
    cancel: (id: string, options?: AxUCPCallOptions) => this.call('checkout.cancel', { id }, options),
  };

  /** Order operations (`dev.ucp.shopping.order`). */
  readonly order = {
    get: (id: string, options?: AxUCPCallOptions) => this.call('order.get', { id }, options),
  };

  /**
   * Runs one operation by name (what `ucp.<namespace>.<operation>(args)` resolves to).
   * `args.id` names the resource for operations on one; the rest is the request body.
   */
  async call(operation: AxUCPOperation, args: Record<string, unknown> = {}, options: AxUCPCallOptions = {}) {
    this.#assertOpen();
    assertUCPOptions(CALL_OPTIONS, options, `${String(operation)} options`);
    const context: AxUCPErrorContext = { namespace: this.namespace, endpoint: this.endpoint, operation };
    if (!isUCPOperation(operation)) {
      throw new AxUCPError('invalid_argument', `Unknown UCP operation "${String(operation)}"`, context);
    }
    if (typeof args !== 'object' || args === null || Array.isArray(args)) {
      throw new AxUCPError('invalid_argument', `${operation}: the arguments must be an object`, context);
    }
    const spec = UCP_OPERATIONS[operation];
    const onResource = spec.path.includes('{id}');
    // `id` names the resource of `/…/{id}` operations; elsewhere (`catalog.product`) it is body.
    const { id: resourceId, ...rest } = args;
    const id = onResource ? resourceId : undefined;
    const body = onResource ? rest : args;
    if (onResource && (typeof id !== 'string' || id.length === 0 || id.length > 512)) {
      throw new AxUCPError('invalid_argument', `${operation} needs a resource id`, context);
    }
    const negotiation = await this.connect(options.signal ? { signal: options.signal } : {});
    if (!negotiation.capabilities.has(spec.capability)) {
      throw new AxUCPError(
        'capability_unsupported',
        `${operation}: the business does not offer ${spec.capability} at a version both sides support`,
        context,
      );
    }
    const supplied = operation === 'checkout.complete' ? this.#options.payment : undefined;
    if (supplied && 'payment' in body) {
      throw new AxUCPError(
        'invalid_argument',
        `${operation}: the payment comes from the client's payment option, not from the arguments: nothing was sent`,
        context,
      );
    }
    if (this.#commits.has(operation))
      await this.#authorize(operation, id as string | undefined, body, options);
    let sent = body;
    if (supplied) {
      const checkoutId = id as string;
      const request: AxUCPPaymentRequest = {
        namespace: this.namespace,
        business: this.#profileURL.origin,
        checkoutId,
        checkout: redactCredentials(this.#checkouts.get(checkoutId)),
      };
      if (options.signal) request.signal = options.signal;
      let payment: unknown;
      try {
        payment = await supplied(request);
      } catch (cause) {
        throw new AxUCPError(
          'invalid_argument',
          `${operation}: the payment option failed: nothing was sent`,
          {
            ...context,
            cause,
          },
        );
      }
      if (typeof payment !== 'object' || payment === null || Array.isArray(payment)) {
        throw new AxUCPError(
          'invalid_argument',
          `${operation}: the payment option must return an object: nothing was sent`,
          context,
        );
      }
      sent = { ...body, payment };
    }
    const idempotencyKey = spec.mutating ? (options.idempotencyKey ?? crypto.randomUUID()) : undefined;
    let json: unknown;
    let status = 200;
    const mcp = this.#options.mcp;
    if (mcp) {
      if (negotiation.mcpEndpoint === undefined) {
        throw new AxUCPError(
          'capability_unsupported',
          `The business has no MCP service for UCP ${negotiation.version}`,
          context,
        );
      }
      const request = {
        operation,
        profileURL: this.#platform.url,
        id: id as string | undefined,
        body: spec.body ? sent : undefined,
        idempotencyKey,
        signal: options.signal,
      };
      json = await this.#withRetries(operation, idempotencyKey, options.signal, context, () =>
        callOverMCP(mcp, request, context),
      );
    } else {
      const url = new URL(
        negotiation.restEndpoint.replace(/\/$/, '') +
          spec.path.replace('{id}', encodeURIComponent((id as string | undefined) ?? '')),
      );
      const request: Parameters<typeof exchange>[1] = { method: spec.method, url, operation };
      if (options.signal) request.signal = options.signal;
      if (spec.body) request.body = new TextEncoder().encode(JSON.stringify(sent));
      if (idempotencyKey !== undefined) request.idempotencyKey = idempotencyKey;
      const response = await this.#withRetries(operation, idempotencyKey, options.signal, context, () =>
        exchange(this.#settings, request),
      );
      await this.#checkResponseSignature(response, context);
      json = response.json;
      status = response.status;
    }
    assertUCPSchema(spec.schema, json, context);
    const resource = json as AxUCPResource;
    if (resource.ucp.status === 'error') {
      const messages = readMessages(resource.messages);
      const details: ConstructorParameters<typeof AxUCPResponseError>[2] = {
        status,
        messages,
        body: resource,
      };
      const ucpCode = messages.find((m) => m.type === 'error')?.code;
      if (ucpCode !== undefined) details.ucpCode = ucpCode;
      throw new AxUCPResponseError(
        'business_error',
        `${operation}: the business reported an error`,
        details,
        context,
      );
    }
    if (spec.schema === 'checkout' && typeof resource.id === 'string') this.#remember(resource.id, resource);
    const placed = (resource.order as { id?: unknown } | undefined)?.id;
    if (operation === 'checkout.complete' && typeof placed === 'string') {
      this.#orders.add(placed);
      if (this.#orders.size > 10_000) this.#orders.delete(this.#orders.values().next().value!);
    }
    return resource;
  }

  /** Whether this client placed the order (a `checkout.complete` it ran returned it). */
  hasPlacedOrder(orderId: string): boolean {
    return this.#orders.has(orderId);
  }

  /** Stops the client: later calls fail with `closed`. Nothing keeps running. */
  close(): void {
    this.#closed = true;
    this.#checkouts.clear();
  }

  /** The business's signing keys, refreshed from its profile at most once a minute (for webhooks). */
  async businessKeys(
    options: { refresh?: boolean; signal?: AbortSignal } = {},
  ): Promise<readonly AxUCPPublicKey[]> {
    assertUCPOptions(KEY_OPTIONS, options, 'businessKeys options');
    const negotiation = await this.connect(options.signal ? { signal: options.signal } : {});
    if (!options.refresh || Date.now() - this.#keysRefreshedAt < KEY_REFRESH_FLOOR_MS)
      return negotiation.keys;
    this.#keysRefreshedAt = Date.now();
    const fresh = await fetchProfile(this.#settings, this.#profileURL, options.signal);
    const keys = keysOf(fresh);
    if (this.#negotiated) this.#negotiated = { ...this.#negotiated, keys };
    return keys;
  }

  /** A compact description, without secrets. */
  toJSON(): Record<string, unknown> {
    return { namespace: this.namespace, endpoint: this.endpoint, version: this.#negotiated?.version };
  }

  async #authorize(
    operation: AxUCPOperation,
    id: string | undefined,
    body: unknown,
    options: AxUCPCallOptions,
  ) {
    const context = { namespace: this.namespace, endpoint: this.endpoint, operation };
    const authorize = this.#options.authorizeOperation;
    if (!authorize) {
      throw new AxUCPAuthorizationError(
        `${operation} commits an order and no authorizeOperation is configured: nothing was sent`,
        context,
      );
    }
    const request: AxUCPOperationAuthorizationRequest = {
      operation,
      namespace: this.namespace,
      business: this.#profileURL.origin,
      resourceId: id,
      args: redactCredentials(body),
      checkout: id === undefined ? undefined : redactCredentials(this.#checkouts.get(id)),
    };
    if (options.signal) request.signal = options.signal;
    let decision: AxUCPAuthorizationDecision;
    try {
      decision = await authorize(request);
    } catch (error) {
      throw new AxUCPAuthorizationError(`${operation}: authorizeOperation failed, so it was denied`, {
        ...context,
        cause: error,
      });
    }
    const allow =
      typeof decision === 'object' && decision !== null ? decision.allow === true : decision === true;
    if (!allow) {
      const reason = typeof decision === 'object' && decision !== null ? decision.reason : undefined;
      const detail: typeof context & { reason?: string } = { ...context };
      if (typeof reason === 'string') detail.reason = reason.slice(0, 500);
      // Failing closed is right; leaving the caller to guess why every order is denied is not.
      const misuse = isDenial(decision)
        ? ''
        : ` (it answered ${describeDecision(decision)}, not true, false or { allow, reason? })`;
      throw new AxUCPAuthorizationError(
        `${operation} was denied by authorizeOperation${misuse}: nothing was sent`,
        detail,
      );
    }
  }

  /**
   * Runs one logical call with retries: network failures and 502/503/504 (and timeouts of a
   * mutating call), every attempt with the same idempotency key and the same bytes.
   */
  async #withRetries<T>(
    operation: string,
    idempotencyKey: string | undefined,
    signal: AbortSignal | undefined,
    context: AxUCPErrorContext,
    attemptOnce: () => Promise<T>,
  ): Promise<T> {
    let last: unknown;
    for (let attempt = 1; attempt <= this.#attempts; attempt++) {
      if (attempt > 1) await sleep(this.#delayMs * 2 ** (attempt - 2), signal);
      try {
        return await attemptOnce();
      } catch (error) {
        last = error;
        const retryable =
          isNetworkFailure(error) ||
          (error instanceof AxUCPResponseError && [502, 503, 504].includes(error.status)) ||
          (error instanceof AxUCPError && error.code === 'timeout' && idempotencyKey !== undefined);
        if (!retryable) throw error;
      }
    }
    if (idempotencyKey !== undefined && last instanceof AxUCPError && last.code !== 'http_status') {
      throw Object.assign(
        new AxUCPOutcomeUnknownError(
          `${operation}: the outcome is unknown after ${this.#attempts} attempts; retry with the same idempotencyKey`,
          idempotencyKey,
          context,
        ),
        { cause: last },
      );
    }
    throw last;
  }

  async #checkResponseSignature(response: ExchangeResponse, context: AxUCPErrorContext): Promise<void> {
    if (this.#verifyResponses === 'off') return;
    if (!response.headers.has('signature-input')) {
      if (this.#verifyResponses === 'required') {
        throw new AxUCPSignatureError(
          'signature_missing',
          `${context.operation}: the response is not signed`,
          context,
        );
      }
      return;
    }
    const keys = this.#negotiated?.keys ?? [];
    try {
      await verifyMessage(response.parts, keys, { context });
    } catch (error) {
      if (!(error instanceof AxUCPSignatureError) || error.code !== 'key_not_found') throw error;
      const fresh = await this.businessKeys({ refresh: true });
      if (fresh === keys) throw error;
      await verifyMessage(response.parts, fresh, { context });
    }
  }

  #remember(id: string, checkout: unknown): void {
    this.#checkouts.delete(id);
    this.#checkouts.set(id, checkout);
    if (this.#checkouts.size > 100) this.#checkouts.delete(this.#checkouts.keys().next().value!);
  }

  #assertOpen(): void {
    if (this.#closed) {
      throw new AxUCPError('closed', 'The UCP client is closed', {
        namespace: this.namespace,
        endpoint: this.endpoint,
      });
    }
  }
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** A decision that says no in the documented way: `false`, or `{ allow: false }`. */
function isDenial(decision: unknown): boolean {
  if (decision === false) return true;
  return (
    typeof decision === 'object' && decision !== null && (decision as { allow?: unknown }).allow === false
  );
}

/** What a decision that is neither a boolean nor `{ allow: boolean }` was, in words. */
function describeDecision(decision: unknown): string {
  if (typeof decision !== 'object' || decision === null) return describeAnswer(decision);
  const allow = (decision as { allow?: unknown }).allow;
  return allow === undefined ? 'an object without allow' : `{ allow: ${describeAnswer(allow)} }`;
}
