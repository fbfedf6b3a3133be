/**
 * The lean response body of the node:http stack: `ReadableStream`-reader-shaped, or pushing
 * decoded text to a synchronous reader, without the web-streams machinery per message.
 */
import type * as http from 'node:http';
import { StringDecoder } from 'node:string_decoder';
import { type AxMCPChunkPushingBody, DRAIN_LIMITS } from '../../transport/http/message-stream.js';
import { onBodyBreak } from './errors.js';

/** Bytes buffered ahead of the reader before the socket is paused. */
const HIGH_WATER_MARK = 64 * 1024;

interface Waiter {
  resolve(result: ReadableStreamReadResult<Uint8Array>): void;
  reject(reason: unknown): void;
}

/** A synchronous reader the body pushes its text to (`forEachText`). */
interface Sink {
  onText(text: string): boolean | undefined;
  text: StringDecoder;
  resolve(): void;
  reject(reason: unknown): void;
}

/**
 * A response body read as fast as it is consumed: chunks queue up to a high-water mark,
 * then the socket pauses. `getReader()` gives the reader shape `ReadableStream` readers
 * have (`read`, `cancel`, `releaseLock`), without the web-streams machinery; `forEachText`
 * pushes text to a synchronous reader as it arrives, without a promise per chunk.
 */
export class NodeBody implements AxMCPChunkPushingBody {
  readonly #res: http.IncomingMessage;
  readonly #onFinish: () => void;
  readonly #queue: Uint8Array[] = [];
  #head = 0;
  #queuedBytes = 0;
  #ended = false;
  #error: unknown;
  #failed = false;
  #finished = false;
  #waiter: Waiter | undefined;
  #sink: Sink | undefined;
  #locked = false;
  /** Bytes read away since the reader let go, or undefined while someone reads. */
  #drained: number | undefined;
  #drainTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(res: http.IncomingMessage, url: URL, onFinish: () => void) {
    this.#res = res;
    this.#onFinish = onFinish;
    res.on('data', (chunk: Buffer) => this.#push(chunk));
    res.on('end', () => {
      this.#ended = true;
      this.#finish();
      this.#wake();
    });
    onBodyBreak(res, url, (error) => this.fail(error));
  }

  get locked(): boolean {
    return this.#locked;
  }

  getReader() {
    if (this.#locked) throw new TypeError('The body is locked to a reader');
    this.#locked = true;
    return {
      read: () => this.#read(),
      cancel: (reason?: unknown) => this.cancel(reason),
      releaseLock: () => {
        this.#locked = false;
      },
    };
  }

  forEachText(onText: (text: string) => boolean | undefined): Promise<void> {
    if (this.#locked) return Promise.reject(new TypeError('The body is locked to a reader'));
    this.#locked = true;
    return new Promise((resolve, reject) => {
      this.#sink = { onText, text: new StringDecoder('utf8'), resolve, reject };
      this.#wake();
    });
  }

  /** Stops reading: the connection is dropped unless the body had already ended. */
  async cancel(_reason?: unknown): Promise<void> {
    this.#queue.length = 0;
    this.#head = 0;
    this.#queuedBytes = 0;
    if (!this.#ended && !this.#failed) {
      this.#ended = true;
      this.#res.destroy();
    }
    this.#finish();
    this.#wake();
  }

  /** Ends the body with an error (an abort, a broken connection). */
  fail(reason: unknown): void {
    if (this.#ended || this.#failed) return;
    this.#failed = true;
    this.#error = reason;
    this.#res.destroy();
    this.#finish();
    this.#wake();
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<Uint8Array> {
    const reader = this.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        yield value;
      }
    } finally {
      reader.releaseLock();
    }
  }

  #push(chunk: Buffer): void {
    if (this.#ended || this.#failed) return;
    if (this.#drained !== undefined) {
      this.#drained += chunk.byteLength;
      if (this.#drained > DRAIN_LIMITS.bytes) void this.cancel();
      return;
    }
    if (this.#sink !== undefined && this.#head >= this.#queue.length) {
      this.#deliver(this.#sink, chunk);
      return;
    }
    this.#queue.push(chunk);
    this.#queuedBytes += chunk.byteLength;
    if (this.#queuedBytes >= HIGH_WATER_MARK) this.#res.pause();
    this.#wake();
  }

  #read(): Promise<ReadableStreamReadResult<Uint8Array>> {
    const next = this.#take();
    if (next !== undefined) return Promise.resolve({ done: false, value: next });
    if (this.#failed) return Promise.reject(this.#error);
    if (this.#ended) return Promise.resolve({ done: true, value: undefined });
    return new Promise((resolve, reject) => {
      this.#waiter = { resolve, reject };
    });
  }

  #take(): Uint8Array | undefined {
    const queue = this.#queue;
    if (this.#head >= queue.length) return undefined;
    let chunk = queue[this.#head++] as Uint8Array;
    if (this.#head < queue.length) {
      // Chunks that queued up while the reader was busy (the HTTP parser emits one per chunk of
      // the chunked encoding) go out together, bounded: one read, one decode, one parse.
      const parts = [chunk];
      let size = chunk.byteLength;
      while (this.#head < queue.length) {
        const next = queue[this.#head] as Uint8Array;
        if (size + next.byteLength > HIGH_WATER_MARK) break;
        parts.push(next);
        size += next.byteLength;
        this.#head++;
      }
      if (parts.length > 1) chunk = Buffer.concat(parts, size);
    }
    if (this.#head > 64 && this.#head * 2 > queue.length) {
      this.#queue.splice(0, this.#head);
      this.#head = 0;
    }
    this.#queuedBytes -= chunk.byteLength;
    if (this.#queuedBytes < HIGH_WATER_MARK && this.#res.isPaused() && !this.#ended) this.#res.resume();
    return chunk;
  }

  /** One chunk to the sink; the sink stopping or throwing cancels the body and settles it. */
  #deliver(sink: Sink, chunk: Uint8Array): boolean {
    let stop: boolean | undefined;
    try {
      stop = sink.onText(sink.text.write(chunk as Buffer));
    } catch (error) {
      this.#sink = undefined;
      void this.cancel();
      sink.reject(error);
      return true;
    }
    if (!stop) return false;
    this.#sink = undefined;
    this.#letGo();
    sink.resolve();
    return true;
  }

  /** The reader has what it needs: the rest is read away within `DRAIN_LIMITS`, as in the core. */
  #letGo(): void {
    if (this.#ended || this.#failed) return;
    this.#queue.length = 0;
    this.#head = 0;
    this.#queuedBytes = 0;
    this.#drained = 0;
    this.#drainTimer = setTimeout(() => void this.cancel(), DRAIN_LIMITS.ms);
    this.#drainTimer.unref?.();
    if (this.#res.isPaused()) this.#res.resume();
  }

  #wake(): void {
    const sink = this.#sink;
    if (sink !== undefined) {
      for (let next = this.#take(); next !== undefined; next = this.#take()) {
        if (this.#deliver(sink, next)) return;
      }
      if (this.#failed) {
        this.#sink = undefined;
        sink.reject(this.#error);
      } else if (this.#ended) {
        this.#sink = undefined;
        sink.resolve();
      }
      return;
    }
    const waiter = this.#waiter;
    if (waiter === undefined) return;
    const next = this.#take();
    if (next !== undefined) {
      this.#waiter = undefined;
      waiter.resolve({ done: false, value: next });
    } else if (this.#failed) {
      this.#waiter = undefined;
      waiter.reject(this.#error);
    } else if (this.#ended) {
      this.#waiter = undefined;
      waiter.resolve({ done: true, value: undefined });
    }
  }

  #finish(): void {
    if (this.#finished) return;
    this.#finished = true;
    clearTimeout(this.#drainTimer);
    this.#onFinish();
  }
}
