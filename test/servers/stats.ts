/**
 * What a test peer observed, read by tests for assertions. The object is live: fields change as
 * requests arrive, so read them at assertion time.
 */

/** Observations of a legacy (sessionful) test peer. */
export interface PeerStats {
  /** Count of every JSON-RPC method received over HTTP (requests and notifications). */
  readonly methods: Map<string, number>;
  /** Number of `initialize` requests received. */
  initializeCount: number;
  /** Names of called tools, in arrival order. */
  readonly toolCalls: string[];
  /** Params of every `notifications/cancelled` received. */
  readonly cancellations: Array<{ requestId: unknown; reason?: unknown }>;
  /** Tool calls that observed their abort signal (cancelled while running). */
  cancelledToolCalls: number;
  /** Session ids currently alive. */
  readonly sessions: Set<string>;
  /** Subscribed resource URIs per live session. */
  readonly subscriptions: Map<string, Set<string>>;
  /** Last `logging/setLevel` level per session. */
  readonly logLevels: Map<string, string>;
  /** Open GET (SSE) streams per session: wait for one before expecting unsolicited notifications. */
  readonly getStreams: Map<string, number>;
  /** `Last-Event-ID` values of GET requests, in arrival order. */
  readonly lastEventIds: string[];
  /** HTTP statuses answered, in order (bounded). */
  readonly httpStatuses: number[];
}

export function createPeerStats(): PeerStats {
  return {
    methods: new Map(),
    initializeCount: 0,
    toolCalls: [],
    cancellations: [],
    cancelledToolCalls: 0,
    sessions: new Set(),
    subscriptions: new Map(),
    logLevels: new Map(),
    getStreams: new Map(),
    lastEventIds: [],
    httpStatuses: [],
  };
}

const MAX_LOG = 10_000;

function push<T>(list: T[], value: T): void {
  if (list.length >= MAX_LOG) list.shift();
  list.push(value);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Records the JSON-RPC messages of one POST body (a message or a batch). */
export function recordMessages(stats: PeerStats, body: unknown, sessionId: string | undefined): void {
  const messages = Array.isArray(body) ? body : [body];
  for (const message of messages) {
    if (!isRecord(message) || typeof message.method !== 'string') continue;
    const { method } = message;
    stats.methods.set(method, (stats.methods.get(method) ?? 0) + 1);
    const params = isRecord(message.params) ? message.params : {};
    if (method === 'initialize') stats.initializeCount++;
    if (method === 'tools/call' && typeof params.name === 'string') push(stats.toolCalls, params.name);
    if (method === 'notifications/cancelled') {
      push(stats.cancellations, { requestId: params.requestId, reason: params.reason });
    }
    if (method === 'logging/setLevel' && sessionId !== undefined && typeof params.level === 'string') {
      stats.logLevels.set(sessionId, params.level);
    }
  }
}

/** Records the HTTP-level facts of one request/response. */
export function recordHttp(stats: PeerStats, lastEventId: string | undefined, status: number | undefined) {
  if (lastEventId !== undefined) push(stats.lastEventIds, lastEventId);
  if (status !== undefined) push(stats.httpStatuses, status);
}

/** Counts an open GET stream of `sessionId` until `closed` fires. */
export function trackGetStream(
  stats: PeerStats,
  sessionId: string,
  onClose: (listener: () => void) => void,
): void {
  stats.getStreams.set(sessionId, (stats.getStreams.get(sessionId) ?? 0) + 1);
  onClose(() => {
    const left = (stats.getStreams.get(sessionId) ?? 1) - 1;
    if (left > 0) stats.getStreams.set(sessionId, left);
    else stats.getStreams.delete(sessionId);
  });
}

/** Forgets a session that ended. */
export function forgetSession(stats: PeerStats, sessionId: string): void {
  stats.sessions.delete(sessionId);
  stats.subscriptions.delete(sessionId);
  stats.logLevels.delete(sessionId);
}

/** True when the body is (or, as a batch, contains) an `initialize` request. */
export function isInitializeBody(body: unknown): boolean {
  const messages = Array.isArray(body) ? body : [body];
  return messages.some((m) => isRecord(m) && m.method === 'initialize' && m.id !== undefined);
}
