/**
 * `AxStudioRecordingTransport`: a transport the studio can record on demand. It passes
 * everything through to the transport it wraps and keeps nothing but the handshake until
 * `startRecording()`; from then until `stopRecording()` it keeps every message (redacted as
 * `AxMCPRecordingTransport` redacts, up to `maxSteps`), and `recording()` gives the handshake
 * plus those steps in the ax-mcp recording format, so a download replays.
 */

import { number, object } from '../../options/check.js';
import { assertMCPOptions } from '../../protocol/errors.js';
import type {
  JSONRPCMessage,
  JSONRPCNotification,
  JSONRPCRequest,
  JSONRPCResponse,
} from '../../protocol/jsonrpc.js';
import type { AxMCPEra } from '../../protocol/versions.js';
import { recordedEventStream, recordedFailure } from '../../testing/recording.js';
import {
  type AxMCPRecording,
  type AxMCPRecordingStep,
  type AxMCPRedactionOptions,
  REDACTION_KEYS,
  redactRecordedValue,
} from '../../testing/recording-format.js';
import type {
  AxMCPEventStream,
  AxMCPSendOptions,
  AxMCPTransport,
  AxMCPTransportHandlers,
} from '../../transport/types.js';
import { AxMCPWrappingTransport } from '../../transport/wrapping-transport.js';

/** Options of {@link AxStudioRecordingTransport}. */
export interface AxStudioRecordingOptions extends Pick<AxMCPRedactionOptions, 'secrets' | 'keys'> {
  /** Steps one recording keeps (default 10 000); later ones are counted, not kept, and the recording says so. */
  maxSteps?: number;
}

/** A recording made on demand: the recording format, plus how it was cut. */
export interface AxStudioRecording extends AxMCPRecording {
  studio: {
    /** When `startRecording()` and `stopRecording()` were called (ISO 8601; `stoppedAt` absent while it records). */
    startedAt: string;
    stoppedAt?: string;
    /** The handshake steps at the head, recorded before `startRecording()` so the recording replays. */
    handshakeSteps: number;
    maxSteps: number;
    /** Steps past `maxSteps`, not kept: the recording ends early. */
    droppedSteps: number;
  };
}

const OPTIONS = object(
  {
    secrets: REDACTION_KEYS.secrets,
    keys: REDACTION_KEYS.keys,
    maxSteps: number({ integer: true, min: 1, max: 1_000_000 }),
  },
  { expected: 'options { secrets?, keys?, maxSteps? }' },
);

/** What connects (and classifies the era): a new one of these starts a new session. */
const CONNECT = new Set(['initialize', 'server/discover', 'notifications/initialized']);
/** The catalog's lists, page by page. */
const LISTS = new Set(['tools/list', 'prompts/list', 'resources/list', 'resources/templates/list']);
/** Exchanges the head keeps (one per method and cursor). */
const MAX_HEAD = 64;
const MODERN_VERSION_META = 'io.modelcontextprotocol/protocolVersion';

type Step = Omit<AxMCPRecordingStep, 'index'>;
/** A step with its place in the traffic (steps of one millisecond keep their order). */
type Placed = { seq: number; step: Step };

function methodOf(message: JSONRPCMessage): string | undefined {
  return 'method' in message ? message.method : undefined;
}

/**
 * Wraps a client's transport so that the studio (or you) can record its traffic on demand.
 *
 * ```ts
 * const recorder = new AxStudioRecordingTransport(axMCPHTTPTransport(url), { secrets: [token] });
 * const client = new AxMCPClient(recorder, { namespace: 'shop' });
 * await startStudio({ clients: [client] }); // Recordings: start, stop, download
 * ```
 */
export class AxStudioRecordingTransport extends AxMCPWrappingTransport {
  readonly maxSteps: number;
  readonly #redaction: AxMCPRedactionOptions;
  readonly #created = Date.now();
  /**
   * The latest exchange of each connect message and catalog list page, kept whether recording
   * or not: a recording starts with those that came before it, so that its replay connects and
   * finds the catalog the client had.
   */
  readonly #head = new Map<string, Placed[]>();
  #seq = 0;
  #steps: Step[] = [];
  #dropped = 0;
  #startedAt: number | undefined;
  #startedSeq = 0;
  #stoppedAt: number | undefined;
  #era: AxMCPEra | undefined;
  #protocolVersion: string | undefined;

  constructor(inner: AxMCPTransport, options: AxStudioRecordingOptions = {}) {
    super(inner);
    assertMCPOptions(OPTIONS, options, 'AxStudioRecordingTransport options');
    this.maxSteps = options.maxSteps ?? 10_000;
    this.#redaction = {
      ...(options.secrets ? { secrets: [...options.secrets] } : {}),
      ...(options.keys ? { keys: [...options.keys] } : {}),
    };
  }

  /** True between `startRecording()` and `stopRecording()`. */
  get isRecording(): boolean {
    return this.#startedAt !== undefined && this.#stoppedAt === undefined;
  }

  /** Steps kept since the last `startRecording()` (the handshake not counted). */
  get recordedSteps(): number {
    return this.#steps.length;
  }

  /** Starts a new recording (the previous one is dropped); recording already, it goes on. */
  startRecording(): void {
    if (this.isRecording) return;
    this.#steps = [];
    this.#dropped = 0;
    this.#startedAt = Date.now();
    this.#startedSeq = this.#seq;
    this.#stoppedAt = undefined;
  }

  stopRecording(): void {
    if (this.isRecording) this.#stoppedAt = Date.now();
  }

  /** The last recording (so far, while it runs); `undefined` before the first `startRecording()`. */
  recording(): AxStudioRecording | undefined {
    if (this.#startedAt === undefined) return undefined;
    const started = this.#startedSeq;
    const head = [...this.#head.values()]
      .filter((exchange) => exchange.every(({ seq }) => seq <= started))
      .flat()
      .sort((a, b) => a.seq - b.seq)
      .map(({ step }) => structuredClone(step));
    if (this.#era === 'legacy') {
      // Classification before the handshake: a replay connects straight in the recorded era.
      const initialize = head.findIndex((step) => step.message && methodOf(step.message) === 'initialize');
      for (const step of head.slice(0, Math.max(0, initialize))) step.probe = true;
    }
    const steps = [...head, ...structuredClone(this.#steps)].map((step, index) => ({ index, ...step }));
    const recording: AxStudioRecording = {
      format: 'ax-mcp-recording',
      version: 1,
      endpoint: this.inner.endpoint,
      transportKind: this.inner.kind,
      era: this.#era,
      recordedAt: new Date(this.#created).toISOString(),
      steps,
      studio: {
        startedAt: new Date(this.#startedAt).toISOString(),
        ...(this.#stoppedAt === undefined ? {} : { stoppedAt: new Date(this.#stoppedAt).toISOString() }),
        handshakeSteps: head.length,
        maxSteps: this.maxSteps,
        droppedSteps: this.#dropped,
      },
    };
    if (this.#protocolVersion !== undefined) recording.protocolVersion = this.#protocolVersion;
    return recording;
  }

  override setHandlers(handlers: AxMCPTransportHandlers): void {
    this.inner.setHandlers({
      ...handlers,
      onMessage: (message, context) => {
        this.#record('receive', message, context.eventId === undefined ? {} : { eventId: context.eventId });
        handlers.onMessage(message, context);
      },
    });
  }

  override async request(message: JSONRPCRequest, options?: AxMCPSendOptions): Promise<JSONRPCResponse> {
    const sent = this.#record('send', message);
    let response: JSONRPCResponse;
    try {
      response = await this.inner.request(message, options);
    } catch (error) {
      const failed = this.#push({
        direction: 'receive',
        type: 'failure',
        requestId: message.id,
        failure: recordedFailure(error),
      });
      this.#keep(message, [sent, failed]);
      throw error;
    }
    this.#learn(message, response);
    this.#keep(message, [sent, this.#record('receive', response)]);
    return response;
  }

  override async notify(message: JSONRPCNotification, options?: AxMCPSendOptions): Promise<void> {
    this.#keep(message, [this.#record('send', message)]);
    await this.inner.notify(message, options);
  }

  override async respond(message: JSONRPCResponse, options?: AxMCPSendOptions): Promise<void> {
    this.#record('send', message);
    await this.inner.respond(message, options);
  }

  override async openEventStream(options: {
    signal: AbortSignal;
    lastEventId?: string;
  }): Promise<AxMCPEventStream | null> {
    const stream = (await this.inner.openEventStream?.(options)) ?? null;
    return (
      stream && recordedEventStream(stream, (item, extra) => this.#record('receive', item.message, extra))
    );
  }

  #record(direction: 'send' | 'receive', message: JSONRPCMessage, extra: Partial<Step> = {}): Placed {
    const type = 'method' in message ? ('id' in message ? 'request' : 'notification') : 'response';
    const redacted = redactRecordedValue(message, this.#redaction) as JSONRPCMessage;
    return this.#push({ direction, type, message: redacted, ...extra });
  }

  #push(step: Omit<Step, 'atMs'>): Placed {
    const placed: Placed = { seq: ++this.#seq, step: { atMs: Date.now() - this.#created, ...step } as Step };
    if (this.isRecording) {
      if (this.#steps.length >= this.maxSteps) this.#dropped++;
      else this.#steps.push(placed.step);
    }
    return placed;
  }

  /** The head's key of a message: its method (and a list's cursor); `undefined` when not kept there. */
  #headKey(message: JSONRPCMessage): string | undefined {
    const method = methodOf(message);
    if (method === undefined) return undefined;
    if (CONNECT.has(method)) return method;
    if (!LISTS.has(method)) return undefined;
    const cursor = (message as JSONRPCRequest).params?.cursor;
    return `${method} ${typeof cursor === 'string' ? cursor : ''}`;
  }

  #keep(message: JSONRPCMessage, exchange: Placed[]): void {
    const key = this.#headKey(message);
    if (key === undefined) return;
    // A new session: the lists of the old one are fetched again after it.
    if (key === 'initialize' || key === 'server/discover')
      for (const old of [...this.#head.keys()]) if (!CONNECT.has(old)) this.#head.delete(old);
    if (!this.#head.has(key) && this.#head.size >= MAX_HEAD) return;
    this.#head.set(key, exchange);
  }

  /** The era and version, from the handshake's answer (or a 2026-07-28 request's envelope). */
  #learn(request: JSONRPCRequest, response: JSONRPCResponse): void {
    const meta = request.params?._meta as Record<string, unknown> | undefined;
    const version = meta?.[MODERN_VERSION_META];
    if (!('result' in response)) return;
    const result = response.result as Record<string, unknown>;
    if (request.method === 'initialize' && typeof result.protocolVersion === 'string') {
      this.#era = 'legacy';
      this.#protocolVersion = result.protocolVersion;
    } else if (typeof version === 'string' && this.#era === undefined) {
      this.#era = 'modern';
      this.#protocolVersion = version;
    }
  }
}
