/**
 * `AxMCPRecordingTransport`: wraps any transport and records every message in both
 * directions, with timing and era, as a plain-JSON {@link AxMCPRecording} with secrets
 * redacted. Isomorphic: no `node:` imports.
 */
import { AxMCPClient } from '../client/client.js';
import type { AxMCPClientOptions } from '../client/options.js';
import { func, instance, object, oneOf, required } from '../options/check.js';
import { AxMCPError, AxMCPHTTPStatusError, assertMCPOptions } from '../protocol/errors.js';
import { isObject } from '../protocol/json.js';
import type {
  JSONRPCMessage,
  JSONRPCNotification,
  JSONRPCRequest,
  JSONRPCResponse,
} from '../protocol/jsonrpc.js';
import type { AxMCPEra } from '../protocol/versions.js';
import {
  type AxMCPEventStream,
  type AxMCPSendOptions,
  type AxMCPStreamMessage,
  type AxMCPTransport,
  type AxMCPTransportHandlers,
  TRANSPORT,
} from '../transport/types.js';
import { AxMCPWrappingTransport } from '../transport/wrapping-transport.js';
import {
  type AxMCPRecordedFailure,
  type AxMCPRecording,
  type AxMCPRecordingStep,
  type AxMCPRedactionOptions,
  REDACTION_KEYS,
  redactionOptionsOf,
  redactRecordedValue,
} from './recording-format.js';

/**
 * A server event stream whose messages are handed to `record` (with where they came from) as
 * the consumer reads them. Internal: both recording transports use it.
 */
export function recordedEventStream(
  stream: AxMCPEventStream,
  record: (item: AxMCPStreamMessage, extra: { via: 'stream'; eventId?: string }) => void,
): AxMCPEventStream {
  async function* recorded(): AsyncGenerator<AxMCPStreamMessage> {
    for await (const item of stream.messages) {
      record(item, { via: 'stream', ...(item.eventId === undefined ? {} : { eventId: item.eventId }) });
      yield item;
    }
  }
  return {
    messages: recorded(),
    get retryMs() {
      return stream.retryMs;
    },
    get lastEventId() {
      return stream.lastEventId;
    },
  };
}

/** Options of {@link AxMCPRecordingTransport}. */
export interface AxMCPRecordingOptions extends AxMCPRedactionOptions {
  /** The era to write into the recording; by default it is read from the traffic (`initialize` or `server/discover`). */
  era?: AxMCPEra;
  /** The clock, in ms (default `Date.now`). */
  now?: () => number;
}

/**
 * The shape of {@link AxMCPRecordingOptions}, every key of it: those of `AxMCPRedactionOptions`
 * (`recording-format.ts`: `secrets`, `keys`, `redact`) and its own.
 */
const RECORDING_OPTIONS = object(
  {
    ...REDACTION_KEYS,
    era: oneOf('legacy', 'modern'),
    now: func('a clock () => milliseconds'),
  },
  {
    expected: 'an options object { secrets?, keys?, redact?, era?, now? }',
    aliases: { secret: 'secrets', redactKeys: 'keys', secretKeys: 'keys', clock: 'now' },
  },
);

const MODERN_VERSION_META = 'io.modelcontextprotocol/protocolVersion';

/**
 * Records everything that passes through `inner`, which it otherwise leaves untouched.
 * Read the result with {@link AxMCPRecordingTransport.recording} (any time, also after close).
 *
 * @example
 * ```ts
 * const recorder = new AxMCPRecordingTransport(new AxMCPStreamableHTTPTransport(url), { secrets: [token] });
 * const client = new AxMCPClient(recorder, { namespace: 'shop' });
 * await myProgram(client);
 * await client.close();
 * await writeFile('shop.recording.json', JSON.stringify(recorder.recording(), null, 2));
 * ```
 */
export class AxMCPRecordingTransport extends AxMCPWrappingTransport {
  readonly #options: AxMCPRecordingOptions;
  readonly #redaction: AxMCPRedactionOptions;
  readonly #now: () => number;
  readonly #started: number;
  readonly #steps: AxMCPRecordingStep[] = [];
  #era: AxMCPEra | undefined;
  #protocolVersion: string | undefined;

  constructor(inner: AxMCPTransport, options: AxMCPRecordingOptions = {}) {
    super(inner);
    assertMCPOptions(RECORDING_OPTIONS, options, 'AxMCPRecordingTransport options');
    this.#options = options;
    this.#redaction = redactionOptionsOf(options);
    this.#now = options.now ?? Date.now;
    this.#started = this.#now();
    this.#era = options.era;
  }

  /** The recording so far: a redacted, JSON-ready deep copy. */
  recording(): AxMCPRecording {
    const steps = structuredClone(this.#steps);
    if (this.#era === 'legacy') {
      // Classification traffic before the handshake: a replay connects straight in the recorded era.
      const handshake = steps.findIndex(
        (step) =>
          step.direction === 'send' &&
          step.message &&
          'method' in step.message &&
          step.message.method === 'initialize',
      );
      for (const step of steps.slice(0, Math.max(0, handshake))) step.probe = true;
    }
    const recording: AxMCPRecording = {
      format: 'ax-mcp-recording',
      version: 1,
      endpoint: this.inner.endpoint,
      transportKind: this.inner.kind,
      era: this.#era,
      recordedAt: new Date(this.#started).toISOString(),
      steps,
    };
    if (this.#protocolVersion !== undefined) recording.protocolVersion = this.#protocolVersion;
    return recording;
  }

  override setHandlers(handlers: AxMCPTransportHandlers): void {
    // Every other handler (onClose, onProtocolError) passes on as it is: one left out here
    // was a message the inner transport dropped that nobody was told of.
    this.inner.setHandlers({
      ...handlers,
      onMessage: (message, context) => {
        const extra: Partial<AxMCPRecordingStep> =
          context.eventId === undefined ? {} : { eventId: context.eventId };
        try {
          this.#record('receive', message, extra);
        } catch (error) {
          // A redact hook that failed: told, and the message still goes to the client.
          handlers.onProtocolError?.(
            error instanceof AxMCPError
              ? error
              : new AxMCPError('invalid_options', 'Recording a received message failed', { cause: error }),
          );
        }
        handlers.onMessage(message, context);
      },
    });
  }

  override async request(message: JSONRPCRequest, options?: AxMCPSendOptions): Promise<JSONRPCResponse> {
    this.#record('send', message);
    this.#learnEra(message);
    let response: JSONRPCResponse;
    try {
      response = await this.inner.request(message, options);
    } catch (error) {
      this.#push({
        direction: 'receive',
        type: 'failure',
        requestId: message.id,
        failure: recordedFailure(error),
      });
      throw error;
    }
    this.#record('receive', response);
    this.#learnFromResponse(message, response);
    return response;
  }

  override async notify(message: JSONRPCNotification, options?: AxMCPSendOptions): Promise<void> {
    this.#record('send', message);
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

  #record(
    direction: 'send' | 'receive',
    message: JSONRPCMessage,
    extra: Partial<AxMCPRecordingStep> = {},
  ): void {
    const type = 'method' in message ? ('id' in message ? 'request' : 'notification') : 'response';
    const redacted = redactRecordedValue(message, this.#redaction) as JSONRPCMessage;
    this.#push({ direction, type, message: redacted, ...extra });
  }

  #push(step: Omit<AxMCPRecordingStep, 'index' | 'atMs'>): void {
    this.#steps.push({ index: this.#steps.length, atMs: this.#now() - this.#started, ...step });
  }

  /** A request carrying the 2026-07-28 envelope means the modern era. */
  #learnEra(message: JSONRPCRequest): void {
    if (this.#options.era) return;
    const meta =
      isObject(message.params) && isObject(message.params._meta) ? message.params._meta : undefined;
    const version = meta?.[MODERN_VERSION_META];
    if (typeof version === 'string' && message.method !== 'server/discover') {
      this.#era = 'modern';
      this.#protocolVersion = version;
    }
  }

  #learnFromResponse(request: JSONRPCRequest, response: JSONRPCResponse): void {
    if (this.#options.era || !('result' in response) || !isObject(response.result)) return;
    if (request.method === 'initialize' && typeof response.result.protocolVersion === 'string') {
      this.#era = 'legacy';
      this.#protocolVersion = response.result.protocolVersion;
    } else if (request.method === 'server/discover' && Array.isArray(response.result.supportedVersions)) {
      this.#era = 'modern';
      const version = isObject(request.params?._meta) ? request.params._meta[MODERN_VERSION_META] : undefined;
      if (typeof version === 'string') this.#protocolVersion = version;
    }
  }
}

/** A transport's failure as a recording keeps it. Internal: both recording transports use it. */
export function recordedFailure(error: unknown): AxMCPRecordedFailure {
  if (error instanceof AxMCPError) {
    const failure: AxMCPRecordedFailure = { name: error.name, code: error.code, message: error.message };
    if (error instanceof AxMCPHTTPStatusError) failure.status = error.status;
    return failure;
  }
  const message = error instanceof Error ? error.message : String(error);
  return { name: error instanceof Error ? error.name : 'Error', code: 'transport_error', message };
}

/** Options of {@link recordAxMCPSession}. */
export interface AxMCPRecordSessionOptions<T> extends AxMCPRecordingOptions {
  /** The transport to the real server; it is wrapped, used and closed. */
  transport: AxMCPTransport;
  /** Options of the client the program gets (`namespace` defaults to `recorded`). */
  client?: Partial<AxMCPClientOptions>;
  /** The program to record. Its result is stored (redacted) in the recording when it is JSON. */
  run: (client: AxMCPClient) => Promise<T>;
}

/** The shape of {@link AxMCPRecordSessionOptions}; `client` is checked by {@link AxMCPClient} itself. */
const RECORD_SESSION_OPTIONS = object(
  {
    ...RECORDING_OPTIONS.keys,
    transport: required(TRANSPORT),
    client: instance(
      'an object of AxMCPClient options',
      (value) => typeof value === 'object' && value !== null && !Array.isArray(value),
    ),
    run: required(func('a function (client) => Promise<result>')),
  },
  {
    expected: 'an options object { transport, run, client?, … }',
    aliases: { secret: 'secrets', clock: 'now', program: 'run', clientOptions: 'client' },
  },
);

/**
 * Runs `run` against a real server and returns its result and the recording of the session —
 * the API behind `ax-mcp record`. The client is closed before returning, also on failure
 * (the error is rethrown; nothing is returned).
 */
export async function recordAxMCPSession<T>(
  options: AxMCPRecordSessionOptions<T>,
): Promise<{ result: T; recording: AxMCPRecording }> {
  assertMCPOptions(RECORD_SESSION_OPTIONS, options, 'recordAxMCPSession options');
  const { transport, client: clientOptions, run, ...recordingOptions } = options;
  const recorder = new AxMCPRecordingTransport(transport, recordingOptions);
  const client = new AxMCPClient(recorder, { namespace: 'recorded', ...clientOptions });
  let result: T;
  try {
    result = await run(client);
  } finally {
    await client.close();
  }
  const recording = recorder.recording();
  const json = jsonValue(result);
  if (json !== undefined) recording.result = redactRecordedValue(json, redactionOptionsOf(recordingOptions));
  return { result, recording };
}

function jsonValue(value: unknown): unknown {
  if (value === undefined) return undefined;
  try {
    return JSON.parse(JSON.stringify(value));
  } catch {
    return undefined;
  }
}
