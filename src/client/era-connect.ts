import { AxMCPError, AxMCPHTTPStatusError, AxMCPProtocolError, RPC } from '../protocol/errors.js';
import type { AxMCPEra } from '../protocol/versions.js';
import type { AxMCPTransport } from '../transport/types.js';
import type { AxMCPEraStore, AxMCPEraVerdict } from './era-store.js';
import type { LegacyWire } from './legacy-wire.js';
import type { ModernWire } from './modern-wire.js';
import type { ServerIdentity } from './wire.js';

/** Recognised 2026-07-28 errors: an endpoint that answers with one speaks the modern era. */
const MODERN_ERRORS = new Set<number>([RPC.headerMismatch, RPC.missingCapability, RPC.unsupportedVersion]);

export interface EraConnectOptions {
  transport: AxMCPTransport;
  era: 'auto' | AxMCPEra;
  store: AxMCPEraStore;
  /** Deadline of the stdio probe; silence means legacy (default 5 000 ms). */
  probeTimeoutMs: number;
  legacy: () => LegacyWire;
  modern: (cachedDiscover?: Record<string, unknown>) => ModernWire;
  signal?: AbortSignal;
  /**
   * Told of an era store that failed. The store is a cache: a verdict it cannot read means a
   * probe, one it cannot keep means a probe next time, and neither fails the connection.
   */
  report: (error: unknown) => void;
}

export type ConnectedWire = { wire: LegacyWire | ModernWire; identity: ServerIdentity };

/**
 * Optional transport hooks classification reads (duck-typed; `AxMCPTransport` does not require them).
 * `eraHint`: the era the transport is known to carry (a replay knows it from its recording) —
 * no probe, nothing remembered. `fallBackToLegacySSE`: switch to the 2024-11-05 HTTP+SSE
 * transport after Streamable HTTP was refused in both eras; resolves `true` if it switched.
 */

/**
 * Chooses the era: pinned, remembered, or classified by probing with
 * `server/discover` (mcp-wire §1.5), then remembers the verdict per endpoint URL.
 * A remembered verdict that fails is forgotten and the endpoint classified again once.
 */
export async function connectWithEra(options: EraConnectOptions): Promise<ConnectedWire> {
  const { transport } = options;
  const store = bestEffort(options.store, options.report);
  const key = transport.endpointKey;
  if (options.era !== 'auto') {
    const connected = await connectAs(options, options.era, undefined);
    await remember(store, key, connected);
    return connected;
  }
  const hint = transport.eraHint;
  if (hint === 'legacy' || hint === 'modern') return connectAs(options, hint, undefined);
  // The 2024-11-05 HTTP+SSE transport predates server/discover: it is legacy by construction.
  if (transport.kind === 'sse') return connectAs(options, 'legacy', undefined);
  const known = await store.get(key);
  if (known) {
    try {
      return await connectAs(options, known.era, known.discover);
    } catch (error) {
      if (!(error instanceof AxMCPError) || error.code === 'aborted') throw error;
      await store.delete?.(key);
    }
  }
  const connected = await classify(options);
  await remember(store, key, connected);
  return connected;
}

async function connectAs(
  options: EraConnectOptions,
  era: AxMCPEra,
  cachedDiscover: Record<string, unknown> | undefined,
): Promise<ConnectedWire> {
  const wire = era === 'modern' ? options.modern(cachedDiscover) : options.legacy();
  return { wire, identity: await wire.connect(options.signal) };
}

async function classify(options: EraConnectOptions): Promise<ConnectedWire> {
  const modern = options.modern();
  let status: number | undefined;
  const probe = new AbortController();
  const onAbort = () => probe.abort(options.signal?.reason);
  options.signal?.addEventListener('abort', onAbort, { once: true });
  const stdio = options.transport.kind !== 'http';
  const timer = stdio ? setTimeout(() => probe.abort(new ProbeTimeout()), options.probeTimeoutMs) : undefined;
  try {
    await modern.discover(probe.signal, (code) => {
      status = code;
    });
  } catch (error) {
    if (options.signal?.aborted) throw error;
    if (!looksLegacy(error, status, stdio, probe.signal.reason)) throw error;
    return await connectLegacyOrSSE(options);
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', onAbort);
  }
  return { wire: modern, identity: await modern.connect(options.signal) };
}

/** Legacy Streamable HTTP; when it is refused too (400/404/405), HTTP+SSE if the transport may fall back. */
async function connectLegacyOrSSE(options: EraConnectOptions): Promise<ConnectedWire> {
  const legacy = options.legacy();
  try {
    return { wire: legacy, identity: await legacy.connect(options.signal) };
  } catch (error) {
    const refused = error instanceof AxMCPHTTPStatusError && [400, 404, 405].includes(error.status);
    if (!refused || options.signal?.aborted || !(await options.transport.fallBackToLegacySSE?.()))
      throw error;
    const sse = options.legacy();
    return { wire: sse, identity: await sse.connect(options.signal) };
  }
}

class ProbeTimeout extends Error {}

/** Reads a failed probe: which failures mean "this endpoint speaks the legacy era". */
function looksLegacy(
  error: unknown,
  status: number | undefined,
  stdio: boolean,
  abortReason: unknown,
): boolean {
  if (abortReason instanceof ProbeTimeout) return stdio;
  if (error instanceof AxMCPProtocolError) {
    if (MODERN_ERRORS.has(error.rpcCode)) return false;
    // A success that is no discover result comes from a server that does not know the method.
    if (error.code !== 'protocol_error') return true;
    if (error.rpcCode === RPC.methodNotFound && status === 404) return false;
    return true;
  }
  if (error instanceof AxMCPHTTPStatusError) return error.status >= 400 && error.status < 500;
  return false;
}

async function remember(store: AxMCPEraStore, key: string, connected: ConnectedWire): Promise<void> {
  const verdict: AxMCPEraVerdict = {
    era: connected.wire.era,
    protocolVersion: connected.identity.protocolVersion,
    decidedAt: Date.now(),
  };
  if (connected.wire.era === 'modern' && connected.wire.discoverResult)
    verdict.discover = connected.wire.discoverResult;
  await store.set(key, verdict);
}

/**
 * The era store as a cache: a failed read is a verdict not known, a failed write or delete is
 * told and passed over. Before, a store that failed after the handshake failed `init()` with
 * the server connected and its session left open.
 */
function bestEffort(store: AxMCPEraStore, report: (error: unknown) => void): Required<AxMCPEraStore> {
  const told = <T>(work: () => Promise<T> | T, otherwise: T): Promise<T> =>
    Promise.resolve()
      .then(work)
      .catch((error: unknown) => {
        report(error);
        return otherwise;
      });
  return {
    get: (key) => told(() => store.get(key), undefined),
    set: (key, verdict) => told(() => store.set(key, verdict), undefined),
    delete: (key) => told(() => store.delete?.(key), undefined),
  };
}
