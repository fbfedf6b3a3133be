/**
 * The keep-alive agents of the node:http stack, with the guarded DNS lookup: private to one
 * fetch or transport, or shared by every transport with the same settings.
 */
import * as dns from 'node:dns';
import * as http from 'node:http';
import * as https from 'node:https';
import type { LookupFunction } from 'node:net';
import type { AxMCPSSRFPolicy } from '../../net/ssrf.js';
import { boolean, func, number } from '../../options/check.js';
import { guardLookup } from './lookup.js';
import { type ResolvedTLS, TLS_OPTIONS } from './tls.js';

/** The keys of Node's agents and DNS lookup (options of `createNodeFetch` and `AxMCPNodeHTTPTransport`). */
export const NODE_CONNECTION_KEYS = {
  keepAlive: boolean(),
  maxSockets: number({ integer: true, min: 1 }),
  lookup: func('a DNS lookup function (hostname, options, callback), like dns.lookup'),
  tls: TLS_OPTIONS,
} as const;

/** The connection settings, checked: the TLS options resolved. */
export interface NodeConnectionSettings {
  keepAlive?: boolean;
  maxSockets?: number;
  lookup?: LookupFunction;
  tls?: ResolvedTLS;
}

/** The agents requests go through. */
export interface NodeAgents {
  /** The agent for the scheme of `url`, made on first use. */
  for(url: URL): http.Agent;
  /** Destroys the agents and their sockets, unless they are shared. */
  close(): void;
}

interface AgentPair {
  http: http.Agent | undefined;
  https: https.Agent | undefined;
  readonly options: http.AgentOptions;
  /** The HTTPS agent's: `options` and the TLS settings. */
  readonly httpsOptions: https.AgentOptions;
}

/**
 * Agents shared by every transport with the same settings, as `fetch` shares one pool per
 * process: an idle client then holds no agent of its own. Idle pooled sockets are unref'd by
 * Node, so a shared pool never keeps the process alive.
 */
const sharedAgents = new Map<string, AgentPair>();

/**
 * Agents for `settings`. With `share`, they come from the pool of their settings, except that
 * a custom `lookup` or TLS settings (a client certificate is one caller's own) get private
 * ones; private agents are destroyed by `close()`.
 */
export function nodeAgents(
  settings: NodeConnectionSettings,
  policy: AxMCPSSRFPolicy,
  share: boolean,
): NodeAgents {
  const options: http.AgentOptions = { keepAlive: settings.keepAlive ?? true, scheduling: 'lifo' };
  if (settings.maxSockets !== undefined) options.maxSockets = settings.maxSockets;
  const lookup = policy.enabled
    ? guardLookup(settings.lookup ?? (dns.lookup as LookupFunction), policy)
    : settings.lookup;
  // `lookup` is a connection option; agents pass their options through to net.connect.
  if (lookup !== undefined) (options as http.AgentOptions & { lookup: LookupFunction }).lookup = lookup;
  const shared = share && settings.lookup === undefined && settings.tls === undefined;
  const pair = shared
    ? sharedPair(options, policy)
    : {
        http: undefined,
        https: undefined,
        options,
        httpsOptions: { ...options, ...settings.tls?.agentOptions },
      };
  return {
    for(url) {
      return url.protocol === 'https:'
        ? (pair.https ??= new https.Agent(pair.httpsOptions))
        : (pair.http ??= new http.Agent(pair.options));
    },
    close() {
      if (shared) return;
      pair.http?.destroy();
      pair.https?.destroy();
    },
  };
}

function sharedPair(options: http.AgentOptions, policy: AxMCPSSRFPolicy): AgentPair {
  const key = JSON.stringify([
    options.keepAlive,
    options.maxSockets ?? null,
    policy.enabled,
    policy.allowHTTP,
    policy.allowLoopback,
    policy.allowPrivateNetwork,
    policy.allowedHosts,
  ]);
  let pair = sharedAgents.get(key);
  if (!pair) {
    pair = { http: undefined, https: undefined, options, httpsOptions: options };
    sharedAgents.set(key, pair);
  }
  return pair;
}
