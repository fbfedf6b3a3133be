/**
 * What the OAuth strategy knows per endpoint (discovery results, the client, the tokens), how
 * it is loaded from and saved to the token store, and the rules that keep one endpoint's
 * flows from running over each other: one flow in flight, a bounded number of attempts.
 */
import type { ResolvedClient } from './client-identity.js';
import type { AxMCPAuthorizationServerInfo, AxMCPProtectedResource } from './discovery.js';
import type { DPoPKey } from './dpop.js';
import type { AxMCPOAuthRecord, AxMCPStoredTokens, AxMCPTokenStore } from './token-store.js';

/** What one endpoint has: discovery results, the client, the tokens. */
export interface EndpointState {
  key: string;
  endpoint: URL;
  loaded?: Promise<void>;
  record: AxMCPOAuthRecord;
  prm?: AxMCPProtectedResource | null;
  server?: AxMCPAuthorizationServerInfo;
  client?: ResolvedClient;
  /** Bumped whenever the tokens change. */
  generation: number;
  inflight?: Promise<void>;
  /** Authorization attempts per scope set since the last success. */
  attempts: Map<string, number>;
  /** The resource said it wants DPoP (challenge scheme or metadata). */
  resourceWantsDPoP: boolean;
  /** A DPoP nonce arrived since the last proof. */
  freshNonce: boolean;
  protocolVersion?: string;
}

/** The states of every endpoint one strategy has seen, backed by its token store. */
export class EndpointStates {
  readonly #store: AxMCPTokenStore;
  readonly #states = new Map<string, EndpointState>();
  /** This process's DPoP key, if one was made: stored DPoP-bound tokens need it. */
  readonly #dpopKey: () => Promise<DPoPKey> | undefined;

  constructor(store: AxMCPTokenStore, dpopKey: () => Promise<DPoPKey> | undefined) {
    this.#store = store;
    this.#dpopKey = dpopKey;
  }

  /** The state of `url`'s endpoint, loaded from the store on first use. */
  async get(url: URL): Promise<EndpointState> {
    const key = stateKey(url);
    let state = this.#states.get(key);
    if (!state) {
      const endpoint = new URL(url.href);
      endpoint.search = '';
      endpoint.hash = '';
      state = {
        key,
        endpoint,
        record: {},
        generation: 0,
        attempts: new Map(),
        resourceWantsDPoP: false,
        freshNonce: false,
      };
      const created = state;
      created.loaded = (async () => {
        const record = await this.#store.get(key);
        if (record) created.record = record;
        const tokens = created.record.tokens;
        // A DPoP-bound token is useless without its key, which lives only in this process.
        if (tokens?.tokenType === 'DPoP') {
          const pending = this.#dpopKey();
          const key = pending ? await pending : undefined;
          if (key?.thumbprint !== tokens.dpopJkt) created.record.tokens = undefined;
        }
      })();
      this.#states.set(key, state);
    }
    await state.loaded;
    return state;
  }

  /** The state of `url`'s endpoint if it was ever asked for (nothing is loaded). */
  find(url: URL): EndpointState | undefined {
    return this.#states.get(stateKey(url));
  }

  async setTokens(state: EndpointState, tokens: AxMCPStoredTokens | undefined): Promise<void> {
    if (tokens) state.record.tokens = tokens;
    else delete state.record.tokens;
    state.generation++;
    await this.save(state);
  }

  async save(state: EndpointState): Promise<void> {
    await this.#store.set(state.key, state.record);
  }
}

/** Tokens are kept per endpoint: origin and path (the query and fragment do not count). */
function stateKey(url: URL): string {
  return `${url.origin}${url.pathname}`;
}

/** Waits for the endpoint's flow in flight, if any; its failure belongs to whoever started it. */
export async function flowSettled(state: EndpointState): Promise<void> {
  if (state.inflight) await state.inflight.catch(() => {});
}

/** Makes `running` the endpoint's flow in flight until it settles. */
export async function runAsFlow(state: EndpointState, running: Promise<void>): Promise<void> {
  state.inflight = running;
  try {
    await running;
  } finally {
    if (state.inflight === running) state.inflight = undefined;
  }
}

/**
 * Counts one more authorization for `scopes`. When `max` are already spent it counts nothing
 * and returns how many were made, so that the caller gives up.
 */
export function spendAttempt(
  state: EndpointState,
  scopes: readonly string[],
  max: number,
): number | undefined {
  const key = [...scopes].sort().join(' ');
  const made = state.attempts.get(key) ?? 0;
  if (made + 1 > max) return made;
  state.attempts.set(key, made + 1);
  return undefined;
}
