/**
 * The fetch `AxMCPNodeHTTPTransport` gives its core: fetch-shaped, answering with lean
 * responses, string bodies only. Only for the transport's own use (the guarded fetch in
 * front of it follows redirects and checks each hop).
 */
import { type AxMCPSSRFPolicy, checkURL } from '../../net/ssrf.js';
import { AxMCPError, AxMCPTransportError } from '../../protocol/errors.js';
import type { NodeHTTPClient } from './client.js';
import { outgoingHeaders } from './headers.js';
import { leanResponse, type NodeResponse } from './lean-response.js';

/** A fetch-shaped function over `client`; the URL is checked against `policy`, its addresses by the agents. */
export type LeanFetch = (input: string | URL, init?: RequestInit) => Promise<NodeResponse>;

export function leanFetch(client: NodeHTTPClient, policy: AxMCPSSRFPolicy): LeanFetch {
  return (input, init = {}) => {
    if (client.closed) return Promise.reject(new AxMCPTransportError('closed', 'The transport was closed'));
    const url = input instanceof URL ? input : new URL(input);
    // The guarded fetch in front of this one checked the URL with `validateURL`; the
    // synchronous rules are checked again here, the addresses by the agents' lookup.
    checkURL(url, policy);
    const signal = init.signal ?? undefined;
    if (signal?.aborted) return Promise.reject(signal.reason);
    const method = (init.method ?? 'GET').toUpperCase();
    const headers = outgoingHeaders(init.headers);
    const body = init.body ?? undefined;
    if (body !== undefined && typeof body !== 'string') {
      return Promise.reject(new AxMCPError('unsupported', 'This transport sends string bodies only'));
    }
    return client.send({ url, method, headers, body, signal }, (received) =>
      received.resolve(leanResponse(received)),
    );
  };
}
