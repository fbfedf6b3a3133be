/**
 * `AxMCPReplayTransport`: plays an {@link AxMCPRecording} back, offline and deterministically.
 * Isomorphic: no `node:` imports.
 */
import { boolean, number, object } from '../options/check.js';
import {
  AxMCPError,
  type AxMCPErrorCode,
  AxMCPHTTPStatusError,
  AxMCPSessionExpiredError,
  AxMCPTimeoutError,
  AxMCPTransportError,
  assertMCPOptions,
} from '../protocol/errors.js';
import { isObject } from '../protocol/json.js';
import type {
  JSONRPCId,
  JSONRPCMessage,
  JSONRPCNotification,
  JSONRPCRequest,
  JSONRPCResponse,
} from '../protocol/jsonrpc.js';
import type { AxMCPEra } from '../protocol/versions.js';
import type {
  AxMCPEventStream,
  AxMCPSendOptions,
  AxMCPStreamMessage,
  AxMCPTransport,
  AxMCPTransportHandlers,
} from '../transport/types.js';
import {
  type AxMCPRecordedFailure,
  type AxMCPRecording,
  type AxMCPRecordingStep,
  parseAxMCPRecording,
} from './recording-format.js';
import { AxMCPReplayMismatchError, firstDifference, preview, valueAt } from './replay-match.js';

/** Options of {@link AxMCPReplayTransport}. */
export interface AxMCPReplayOptions {
  /**
   * Params must match the recording too, not only the method (ids, progress tokens, trace
   * context and redacted values excepted). Default `false`.
   */
  strict?: boolean;
  /**
   * How many upcoming recorded messages a sent message may match out of order, for programs that
   * send concurrently (default 32). Past the window, a message that matches none is a mismatch.
   */
  lookahead?: number;
}

/** The shape of {@link AxMCPReplayOptions}; checked once in the constructor. */
const REPLAY_OPTIONS = object(
  { strict: boolean(), lookahead: number({ integer: true, min: 1 }) },
  {
    expected: 'an options object { strict?, lookahead? }',
    aliases: { window: 'lookahead', exact: 'strict' },
  },
);

interface Pending {
  liveId: JSONRPCId;
  resolve(response: JSONRPCResponse): void;
  reject(error: unknown): void;
  cleanup(): void;
}

const SUBSCRIPTION_META = 'io.modelcontextprotocol/subscriptionId';

/**
 * A transport that answers from a recording instead of a server.
 *
 * - **Deterministic.** A recorded server message is delivered as soon as every message the
 *   client sent before it in the recording has been sent again; timing is not replayed.
 * - **Ids rewritten.** Responses, progress tokens and listen subscription ids carry the ids of
 *   this run, whatever the recording had.
 * - **Era from the recording.** `eraHint` tells the client's classification the recorded era:
 *   no probe is sent, and no era store is read or written.
 * - **Mismatches are errors.** A message whose method differs from the recording's next one
 *   (or, with `strict`, whose params differ) fails with {@link AxMCPReplayMismatchError} naming
 *   the step. Concurrent sends may match out of order within `lookahead`; a request recorded
 *   only after an earlier one had its answer (a program that skipped a step) fails at once,
 *   naming the skipped request and the one sent, instead of waiting for the skipped one.
 *
 * @example
 * ```ts
 * const recording = parseAxMCPRecording(JSON.parse(await readFile('shop.recording.json', 'utf8')));
 * const client = new AxMCPClient(new AxMCPReplayTransport(recording, { strict: true }), { namespace: 'shop' });
 * expect(await myProgram(client)).toEqual(recording.result);
 * ```
 */
export class AxMCPReplayTransport implements AxMCPTransport {
  readonly kind: AxMCPTransport['kind'];
  readonly replaysRecording: boolean;
  readonly endpoint: string;
  readonly endpointKey: string;
  /** The recorded era, read by the client's era classification instead of probing. */
  readonly eraHint: AxMCPEra | undefined;
  readonly recording: AxMCPRecording;

  readonly #strict: boolean;
  readonly #lookahead: number;
  readonly #sends: AxMCPRecordingStep[];
  readonly #receives: AxMCPRecordingStep[];
  /** Recorded client requests (by step index) → the index of the step that answered them. */
  readonly #answeredAt = new Map<number, number>();
  readonly #consumed = new Set<number>();
  readonly #pending = new Map<JSONRPCId, Pending>();
  /** Recorded client ids (and progress tokens) → this run's. */
  readonly #ids = new Map<JSONRPCId, JSONRPCId>();
  readonly #liveToRecorded = new Map<JSONRPCId, JSONRPCId>();
  readonly #streamQueue: AxMCPStreamMessage[] = [];
  readonly #streamWaiters = new Set<() => void>();
  #receiveCursor = 0;
  #handlers: AxMCPTransportHandlers | undefined;
  #closed = false;
  #firstMismatch: AxMCPReplayMismatchError | undefined;

  constructor(recording: AxMCPRecording, options: AxMCPReplayOptions = {}) {
    assertMCPOptions(REPLAY_OPTIONS, options, 'AxMCPReplayTransport options');
    this.recording = parseAxMCPRecording(structuredClone(recording));
    this.kind = this.recording.transportKind;
    this.replaysRecording = true;
    this.endpoint = `replay:${this.recording.endpoint}`;
    this.endpointKey = this.endpoint;
    this.eraHint = this.recording.era;
    this.#strict = options.strict ?? false;
    this.#lookahead = Math.max(1, options.lookahead ?? 32);
    const live = this.recording.steps.filter((step) => !step.probe);
    this.#sends = live.filter((step) => step.direction === 'send');
    this.#receives = live.filter((step) => step.direction === 'receive');
    const asked = new Map<JSONRPCId, number>();
    for (const step of live) {
      if (step.direction === 'send' && step.type === 'request') {
        asked.set((step.message as JSONRPCRequest).id, step.index);
        continue;
      }
      if (step.direction !== 'receive') continue;
      const id =
        step.type === 'failure'
          ? step.requestId
          : step.type === 'response'
            ? (step.message as JSONRPCResponse | undefined)?.id
            : undefined;
      if (id === undefined || id === null) continue;
      const request = asked.get(id);
      if (request === undefined) continue;
      asked.delete(id);
      this.#answeredAt.set(request, step.index);
    }
  }

  /** The first mismatch this replay raised, if any (also when the program swallowed it). */
  get firstMismatch(): AxMCPReplayMismatchError | undefined {
    return this.#firstMismatch;
  }

  /** Recorded client messages the program has not sent (yet). */
  remainingSteps(): AxMCPRecordingStep[] {
    return this.#sends.filter((step) => !this.#consumed.has(step.index));
  }

  /** Throws the first mismatch, or an {@link AxMCPReplayMismatchError} naming the first recorded message never sent. */
  assertComplete(): void {
    if (this.#firstMismatch) throw this.#firstMismatch;
    const [next] = this.remainingSteps();
    if (next) {
      throw new AxMCPReplayMismatchError(
        { step: next, sent: 'nothing' },
        'the program ended before sending it',
        {
          endpoint: this.endpoint,
        },
      );
    }
  }

  setHandlers(handlers: AxMCPTransportHandlers): void {
    this.#handlers = handlers;
  }

  async start(): Promise<void> {
    this.#assertOpen();
  }

  request(message: JSONRPCRequest, options: AxMCPSendOptions = {}): Promise<JSONRPCResponse> {
    if (this.#closed) return Promise.reject(this.#closedError());
    const { signal } = options;
    if (signal?.aborted) return Promise.reject(abortError(message.method, signal));
    let step: AxMCPRecordingStep;
    try {
      step = this.#match(message);
    } catch (error) {
      return Promise.reject(error);
    }
    const recordedId = (step.message as JSONRPCRequest).id;
    this.#ids.set(recordedId, message.id);
    this.#liveToRecorded.set(message.id, recordedId);
    const recordedToken = progressToken(step.message);
    const liveToken = progressToken(message);
    if (recordedToken !== undefined && liveToken !== undefined) this.#ids.set(recordedToken, liveToken);
    const answer = new Promise<JSONRPCResponse>((resolve, reject) => {
      const onAbort = () => {
        if (this.#pending.get(recordedId)?.liveId !== message.id) return;
        this.#pending.delete(recordedId);
        reject(abortError(message.method, signal as AbortSignal));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      const cleanup = () => signal?.removeEventListener('abort', onAbort);
      this.#pending.set(recordedId, { liveId: message.id, resolve, reject, cleanup });
    });
    this.#release();
    return answer;
  }

  async notify(message: JSONRPCNotification): Promise<void> {
    this.#assertOpen();
    this.#match(message);
    this.#release();
  }

  async respond(message: JSONRPCResponse): Promise<void> {
    this.#assertOpen();
    this.#match(message);
    this.#release();
  }

  setProtocolVersion(): void {}

  resetSession(): void {}

  async terminateSession(): Promise<void> {}

  /** Recorded standalone-stream messages, delivered in order; `null` when the recording has none. */
  async openEventStream(options: { signal: AbortSignal }): Promise<AxMCPEventStream | null> {
    this.#assertOpen();
    if (!this.#receives.some((step) => step.via === 'stream')) return null;
    const queue = this.#streamQueue;
    const waiters = this.#streamWaiters;
    const isOver = () => options.signal.aborted || this.#closed;
    let lastEventId: string | undefined;
    async function* messages(): AsyncGenerator<AxMCPStreamMessage> {
      while (!isOver()) {
        const next = queue.shift();
        if (next) {
          lastEventId = next.eventId ?? lastEventId;
          yield next;
          continue;
        }
        await new Promise<void>((resolve) => {
          const wake = () => {
            waiters.delete(wake);
            options.signal.removeEventListener('abort', wake);
            resolve();
          };
          waiters.add(wake);
          options.signal.addEventListener('abort', wake, { once: true });
        });
      }
    }
    return {
      messages: messages(),
      retryMs: undefined,
      get lastEventId() {
        return lastEventId;
      },
    };
  }

  /** Rejects what is pending with code `closed` and ends open streams. Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const pending of [...this.#pending.values()]) {
      pending.cleanup();
      pending.reject(this.#closedError());
    }
    this.#pending.clear();
    for (const wake of [...this.#streamWaiters]) wake();
  }

  /** Finds the recorded step `message` replays, or throws the mismatch. */
  #match(message: JSONRPCMessage): AxMCPRecordingStep {
    const type = 'method' in message ? ('id' in message ? 'request' : 'notification') : 'response';
    const sent = 'method' in message ? `${type} "${message.method}"` : `response id ${String(message.id)}`;
    const window = this.remainingSteps().slice(0, this.#lookahead);
    const comparable = this.#comparable(message);
    const sameKind = window.filter(
      (step) => step.type === type && sameTarget(step.message, message, this.#liveToRecorded),
    );
    const exact = sameKind.find((step) => !firstDifference(payload(step.message), payload(comparable)));
    const chosen = exact ?? (this.#strict ? undefined : sameKind[0]);
    let error: AxMCPReplayMismatchError;
    if (chosen) {
      const skipped = this.#skippedBefore(chosen, window);
      if (!skipped) {
        this.#consumed.add(chosen.index);
        return chosen;
      }
      // Its answer would only be released once the skipped request was sent: fail now, not at the timeout.
      error = new AxMCPReplayMismatchError(
        { step: skipped, sent },
        `the program sent ${sent} (recorded at step ${chosen.index}) without sending this first; the recording has its answer before that ${sent}`,
        { endpoint: this.endpoint },
      );
      this.#firstMismatch ??= error;
      throw error;
    }
    const near = sameKind[0];
    if (near) {
      const path = firstDifference(payload(near.message), payload(comparable)) ?? '$';
      const recorded = valueAt(payload(near.message), path);
      const actual = valueAt(payload(comparable), path);
      error = new AxMCPReplayMismatchError(
        { step: near, sent, path, recorded, actual },
        `${sent} differs at ${path}: recorded ${preview(recorded)}, sent ${preview(actual)}`,
        { endpoint: this.endpoint },
      );
    } else {
      const [expected] = window;
      error = new AxMCPReplayMismatchError(
        { step: expected, sent },
        expected
          ? `the program sent ${sent} instead`
          : `the program sent ${sent}, but the recording has nothing more`,
        { endpoint: this.endpoint },
      );
    }
    this.#firstMismatch ??= error;
    throw error;
  }

  /**
   * An unsent recorded request before `chosen` that the recording answered before `chosen` was
   * sent: the recorded program waited for that answer, so sending `chosen` now skipped it.
   * (Requests that were in flight together may come in any order.)
   */
  #skippedBefore(chosen: AxMCPRecordingStep, window: AxMCPRecordingStep[]): AxMCPRecordingStep | undefined {
    for (const step of window) {
      if (step.index >= chosen.index) return undefined;
      if (step.type !== 'request') continue;
      const answer = this.#answeredAt.get(step.index);
      if (answer !== undefined && answer < chosen.index) return step;
    }
    return undefined;
  }

  /** The message as the recording would hold it: this run's ids mapped back to the recorded ones. */
  #comparable(message: JSONRPCMessage): JSONRPCMessage {
    const copy = structuredClone(message) as JSONRPCMessage & { params?: Record<string, unknown> };
    const params = copy.params;
    if ('method' in copy && copy.method === 'notifications/cancelled' && isObject(params)) {
      const id = params.requestId;
      if (typeof id === 'string' || typeof id === 'number')
        params.requestId = this.#liveToRecorded.get(id) ?? id;
    }
    return copy;
  }

  /** Delivers every recorded server message whose preceding client messages have all been sent. */
  #release(): void {
    const firstUnsent = this.remainingSteps()[0]?.index ?? Number.POSITIVE_INFINITY;
    while (!this.#closed) {
      const step = this.#receives[this.#receiveCursor];
      if (!step || step.index > firstUnsent) return;
      this.#receiveCursor++;
      this.#deliver(step);
    }
  }

  #deliver(step: AxMCPRecordingStep): void {
    if (step.type === 'failure') {
      const recordedId = step.requestId;
      const pending = recordedId === undefined ? undefined : this.#pending.get(recordedId);
      if (recordedId === undefined || !pending) return;
      this.#pending.delete(recordedId);
      pending.cleanup();
      pending.reject(rebuildFailure(step.failure, this.endpoint));
      return;
    }
    const message = structuredClone(step.message) as JSONRPCMessage;
    if (!('method' in message)) {
      const pending = this.#pending.get(message.id as JSONRPCId);
      if (!pending) return;
      this.#pending.delete(message.id as JSONRPCId);
      pending.cleanup();
      pending.resolve({ ...message, id: pending.liveId } as JSONRPCResponse);
      return;
    }
    this.#rewriteIds(message);
    if (step.via === 'stream') {
      this.#streamQueue.push(step.eventId === undefined ? { message } : { message, eventId: step.eventId });
      for (const wake of [...this.#streamWaiters]) wake();
      return;
    }
    this.#handlers?.onMessage(message, step.eventId === undefined ? {} : { eventId: step.eventId });
  }

  /** Progress tokens and listen subscription ids name this run's requests. */
  #rewriteIds(message: JSONRPCRequest | JSONRPCNotification): void {
    const params = message.params;
    if (!isObject(params)) return;
    const token = params.progressToken;
    if (
      message.method === 'notifications/progress' &&
      (typeof token === 'string' || typeof token === 'number')
    ) {
      params.progressToken = this.#ids.get(token) ?? token;
    }
    const meta = params._meta;
    if (isObject(meta)) {
      const subscription = meta[SUBSCRIPTION_META];
      if (typeof subscription === 'string' || typeof subscription === 'number') {
        meta[SUBSCRIPTION_META] = this.#ids.get(subscription) ?? subscription;
      }
    }
  }

  #assertOpen(): void {
    if (this.#closed) throw this.#closedError();
  }

  #closedError(): AxMCPTransportError {
    return new AxMCPTransportError('closed', 'The replay transport was closed', { endpoint: this.endpoint });
  }
}

/** A response matches the recorded one with the same (server-chosen) id; messages with a method match by method. */
function sameTarget(
  recorded: JSONRPCMessage | undefined,
  sent: JSONRPCMessage,
  _ids: Map<JSONRPCId, JSONRPCId>,
): boolean {
  if (!recorded) return false;
  if ('method' in sent) return 'method' in recorded && recorded.method === sent.method;
  return !('method' in recorded) && recorded.id === sent.id;
}

/** What is compared: method and params of a request or notification, the outcome of a response (ids never). */
function payload(message: JSONRPCMessage | undefined): Record<string, unknown> {
  if (!message) return {};
  if ('method' in message) return { method: message.method, params: message.params ?? {} };
  return 'error' in message ? { error: message.error } : { result: message.result };
}

function progressToken(message: JSONRPCMessage | undefined): JSONRPCId | undefined {
  if (!message || !('params' in message) || !isObject(message.params) || !isObject(message.params._meta))
    return undefined;
  const token = message.params._meta.progressToken;
  return typeof token === 'string' || typeof token === 'number' ? token : undefined;
}

function abortError(method: string, signal: AbortSignal): AxMCPError {
  const reason: unknown = signal.reason;
  if (reason instanceof AxMCPError) return reason;
  return new AxMCPTimeoutError(`"${method}" was aborted`, { aborted: true, cause: reason });
}

const TRANSPORT_CODES = new Set<AxMCPErrorCode>([
  'transport_error',
  'stream_ended',
  'message_too_large',
  'closed',
  'ssrf_blocked',
]);

/** The recorded failure as a typed error again. */
function rebuildFailure(failure: AxMCPRecordedFailure | undefined, endpoint: string): AxMCPError {
  const message = failure?.message ?? 'The recorded request failed';
  const code = failure?.code as AxMCPErrorCode | undefined;
  if (code === 'http_status' && failure?.status !== undefined) {
    return new AxMCPHTTPStatusError(failure.status, message, { endpoint });
  }
  if (code === 'session_expired') return new AxMCPSessionExpiredError(message, { endpoint });
  if (code && TRANSPORT_CODES.has(code)) {
    return new AxMCPTransportError(code as 'transport_error', message, { endpoint });
  }
  return new AxMCPError(code ?? 'transport_error', message, { endpoint });
}
