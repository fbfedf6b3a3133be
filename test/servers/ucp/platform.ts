/**
 * The platform side of the UCP tests: a `node:http` server on 127.0.0.1 that serves the
 * platform profile at `/.well-known/ucp` (the document the business fetches from `UCP-Agent`
 * to find the platform's keys and the order capability's `webhook_url`), with a fresh ES256
 * key from `generateUCPSigningKey`. It is shared so that every UCP test negotiates against the
 * same shape of profile, and a test states only what differs: its capabilities, its key id and
 * (for the webhook tests) the handler in front of the profile.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AxEventContext, AxEventTargetDefinition } from '../../../src/events/index.js';
import { type AxUCPClientOptions, generateUCPSigningKey } from '../../../src/ucp/index.js';

const VERSION = '2026-08-25';

/** The shopping capabilities a platform profile can name, each with its spec/schema file name. */
const SHOPPING = {
  'catalog.search': ['catalog_search'],
  'catalog.lookup': ['catalog_lookup'],
  cart: ['cart'],
  checkout: ['checkout'],
  fulfillment: ['fulfillment', { extends: 'dev.ucp.shopping.checkout' }],
  discount: ['discount', { extends: 'dev.ucp.shopping.checkout' }],
  order: ['order'],
} as const satisfies Record<string, readonly [string, Record<string, unknown>?]>;

/** A capability under `dev.ucp.shopping.` (`'cart'` → `dev.ucp.shopping.cart`). */
export type UCPShoppingCapability = keyof typeof SHOPPING;

/** Options of {@link startUCPPlatform}. */
export interface UCPPlatformOptions {
  /** Key id of the platform's signing key (default `'platform-2026'`). */
  keyId?: string;
  /** The shopping capabilities the profile declares, in this order (default none). */
  capabilities?: readonly UCPShoppingCapability[];
  /**
   * Path on the platform that the `order` capability names as its `config.webhook_url`, where
   * the business sends signed order webhooks (default: no config).
   */
  orderWebhookPath?: string;
  /** More capability entries, by full name, after the shopping ones. */
  extraCapabilities?: Record<string, unknown[]>;
  /**
   * Runs first on every request (a webhook handler); its `next` serves the profile, and 404
   * on any other path.
   */
  handler?: (req: IncomingMessage, res: ServerResponse, next: () => void) => void;
}

/** A running platform from {@link startUCPPlatform}. */
export interface UCPPlatform {
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** `<url>/.well-known/ucp` */
  profileURL: string;
  /** The profile document served at `profileURL`. */
  profile: Record<string, unknown>;
  signingKey: Awaited<ReturnType<typeof generateUCPSigningKey>>;
  /**
   * What an AxUCPClient needs to speak as this platform on loopback: the profile (the URL with
   * the document inlined, or the URL alone, fetched when needed) and the signing key.
   */
  clientOptions(
    profile?: 'document' | 'url',
  ): Pick<AxUCPClientOptions, 'profile' | 'ssrfProtection' | 'signing'>;
  close(): Promise<void>;
}

/** Starts the platform on a free port of 127.0.0.1. */
export async function startUCPPlatform(options: UCPPlatformOptions = {}): Promise<UCPPlatform> {
  const signingKey = await generateUCPSigningKey(options.keyId ?? 'platform-2026');
  let document: Record<string, unknown> = {};
  const serve = (req: IncomingMessage, res: ServerResponse) => {
    if (req.url === '/.well-known/ucp')
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(document));
    else res.writeHead(404).end();
  };
  const { handler } = options;
  const server = createServer((req, res) =>
    handler ? handler(req, res, () => serve(req, res)) : serve(req, res),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const capabilities: Record<string, unknown[]> = {};
  for (const name of options.capabilities ?? []) {
    const [file, extra] = SHOPPING[name] as readonly [string, Record<string, unknown>?];
    const config =
      name === 'order' && options.orderWebhookPath
        ? { config: { webhook_url: `${url}${options.orderWebhookPath}` } }
        : {};
    capabilities[`dev.ucp.shopping.${name}`] = [
      {
        version: VERSION,
        spec: `https://ucp.dev/${VERSION}/specification/${file}`,
        schema: `https://ucp.dev/${VERSION}/schemas/shopping/${file}.json`,
        ...extra,
        ...config,
      },
    ];
  }
  Object.assign(capabilities, options.extraCapabilities);
  document = {
    ucp: { version: VERSION, services: {}, capabilities, payment_handlers: {} },
    keys: [signingKey.publicKey],
  };
  const profileURL = `${url}/.well-known/ucp`;
  return {
    url,
    profileURL,
    profile: document,
    signingKey,
    clientOptions: (profile = 'document') => ({
      profile: profile === 'url' ? profileURL : { url: profileURL, document: document as never },
      ssrfProtection: { allowLoopback: true },
      signing: { keyId: signingKey.publicKey.kid, privateKey: signingKey.privateKey },
    }),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * A card payment for `checkout.complete`, tokenized by the test business's
 * `processor_tokenizer`. Tests that check no credential leaks look for its token.
 */
export function testCard(overrides: { id?: string; handler_id?: string; token?: string } = {}): {
  instruments: Array<Record<string, unknown>>;
} {
  const { id = 'instr_1', handler_id = 'processor_tokenizer', token = 'tok_secret_4242' } = overrides;
  return { instruments: [{ id, handler_id, type: 'card', credential: { type: 'token', token } }] };
}

/** The default {@link testCard}: token `tok_secret_4242`. */
export const TEST_CARD = testCard();

/** An idempotent event target that records the context of every event it is invoked with. */
export function recordingTarget(seen: AxEventContext[], id = 'agent'): AxEventTargetDefinition {
  return {
    id,
    retrySafety: 'idempotent',
    invoke: async (_input: unknown, context: AxEventContext) => {
      seen.push(context);
      return 'ok';
    },
  };
}
