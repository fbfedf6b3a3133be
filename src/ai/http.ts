import { backoffDelayMs } from '../backoff/backoff.js';
/**
 * HTTP for AI services: a POST with a deadline, retries of rate limits, provider
 * failures and network errors (honouring `Retry-After`), bounded body reads and typed
 * errors. Model requests have no side effects beyond cost, so they may be retried;
 * a response whose body has started to arrive is never retried.
 */
import { func, number } from '../options/check.js';
import { delay } from '../protocol/abort.js';
import { AxAIError, codeForStatus } from './errors.js';

/** Retry and limit settings of an HTTP AI service. */
export interface AxAIHTTPSettings {
  /** The `fetch` to use (default `globalThis.fetch`). */
  fetch?: typeof fetch;
  /** Deadline of one attempt until the response starts, and between streamed chunks (default 120 000 ms). */
  timeoutMs?: number;
  /** Retries after a 429, a 5xx or a network error (default 3). */
  maxRetries?: number;
  /** First backoff delay when the provider gives no `Retry-After` (default 500 ms; doubles, with jitter). */
  retryBaseDelayMs?: number;
  /** Longest wait between attempts; a longer `Retry-After` is not waited for (default 60 000 ms). */
  maxRetryDelayMs?: number;
  /** Largest response body read (default 16 MiB). */
  maxResponseBytes?: number;
}

/** The keys of {@link AxAIHTTPSettings} and their shapes. */
export const HTTP_SETTINGS_KEYS = {
  fetch: func('a fetch function'),
  timeoutMs: number({ min: 0 }),
  maxRetries: number({ integer: true, min: 0 }),
  retryBaseDelayMs: number({ min: 0 }),
  maxRetryDelayMs: number({ min: 0 }),
  maxResponseBytes: number({ integer: true, min: 1 }),
} as const;

/** Who is asking, for error messages. */
export interface RequestLabel {
  provider: string;
  model: string;
}

/** A deadline that can be pushed back (every streamed chunk resets it). */
export class Deadline {
  readonly #controller = new AbortController();
  readonly #ms: number;
  readonly #onParentAbort: () => void;
  readonly #parent: AbortSignal | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  timedOut = false;

  constructor(ms: number, parent: AbortSignal | undefined) {
    this.#ms = ms;
    this.#parent = parent;
    this.#onParentAbort = () => this.#controller.abort(parent?.reason);
    if (parent?.aborted) this.#controller.abort(parent.reason);
    else parent?.addEventListener('abort', this.#onParentAbort, { once: true });
    this.reset();
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  reset(): void {
    clearTimeout(this.#timer);
    if (this.#ms <= 0 || !Number.isFinite(this.#ms) || this.#controller.signal.aborted) return;
    this.#timer = setTimeout(() => {
      this.timedOut = true;
      this.#controller.abort(new DOMException('The request timed out', 'TimeoutError'));
    }, this.#ms);
  }

  dispose(): void {
    clearTimeout(this.#timer);
    this.#parent?.removeEventListener('abort', this.#onParentAbort);
  }

  /** The typed error for a failure while this deadline was active. */
  failure(error: unknown, label: RequestLabel, attempts: number): AxAIError {
    if (error instanceof AxAIError) return error;
    const context = { ...label, attempts, cause: error };
    if (this.#parent?.aborted)
      return new AxAIError('aborted', `${label.provider}: the request was aborted`, context);
    if (this.timedOut) {
      return new AxAIError('timeout', `${label.provider}: no response within ${this.#ms} ms`, context);
    }
    const message = error instanceof Error ? error.message : String(error);
    return new AxAIError('network_error', `${label.provider}: ${message}`, context);
  }
}

/** A successful response and the deadline its body is read under; dispose the deadline when done. */
export interface OpenResponse {
  response: Response;
  deadline: Deadline;
  attempts: number;
}

/** Posts JSON, retrying what may be retried; returns the first 2xx response. */
export async function postJSON(
  url: string,
  headers: Record<string, string>,
  body: string,
  settings: AxAIHTTPSettings,
  label: RequestLabel,
  signal: AbortSignal | undefined,
): Promise<OpenResponse> {
  const doFetch = settings.fetch ?? globalThis.fetch;
  const maxRetries = settings.maxRetries ?? 3;
  const maxDelay = settings.maxRetryDelayMs ?? 60_000;
  const base = settings.retryBaseDelayMs ?? 500;
  for (let attempt = 1; ; attempt++) {
    if (signal?.aborted) {
      throw new AxAIError('aborted', `${label.provider}: the request was aborted`, {
        ...label,
        cause: signal.reason,
      });
    }
    const deadline = new Deadline(settings.timeoutMs ?? 120_000, signal);
    let failure: AxAIError;
    try {
      const response = await doFetch(url, { method: 'POST', headers, body, signal: deadline.signal });
      if (response.ok) return { response, deadline, attempts: attempt };
      failure = await statusError(response, label, attempt, deadline, settings.maxResponseBytes);
      deadline.dispose();
    } catch (error) {
      deadline.dispose();
      failure = deadline.failure(error, label, attempt);
    }
    if (!failure.retryable || attempt > maxRetries) throw failure;
    const backoff = backoffDelayMs(attempt, { baseMs: base, maxMs: maxDelay, jitter: 0.5 });
    const wait = failure.retryAfterMs ?? backoff;
    if (wait > maxDelay) throw failure;
    try {
      await delay(wait, signal);
    } catch (cause) {
      throw new AxAIError('aborted', `${label.provider}: the request was aborted`, { ...label, cause });
    }
  }
}

/** The typed error of a non-2xx response (its body read up to a few KiB for the message). */
async function statusError(
  response: Response,
  label: RequestLabel,
  attempts: number,
  deadline: Deadline,
  maxBytes = 16 * 1024 * 1024,
): Promise<AxAIError> {
  let text = '';
  try {
    text = await readText(response, Math.min(maxBytes, 64 * 1024), deadline, true);
  } catch {
    // The body is only for the message.
  }
  let detail = text.slice(0, 300);
  let providerCode: string | undefined;
  try {
    const parsed = JSON.parse(text) as unknown;
    const error =
      typeof parsed === 'object' && parsed !== null ? (parsed as { error?: unknown }).error : undefined;
    if (typeof error === 'object' && error !== null) {
      const fields = error as { message?: unknown; code?: unknown; type?: unknown };
      if (typeof fields.message === 'string') detail = fields.message.slice(0, 300);
      const code = typeof fields.code === 'string' ? fields.code : fields.type;
      if (typeof code === 'string') providerCode = code.slice(0, 80);
    } else if (typeof error === 'string') {
      detail = error.slice(0, 300);
    }
  } catch {
    // Not JSON: keep the snippet.
  }
  const retryAfterMs = parseRetryAfter(response.headers);
  return new AxAIError(
    codeForStatus(response.status),
    `${label.provider} answered HTTP ${response.status}${detail ? `: ${detail}` : ''}`,
    {
      ...label,
      status: response.status,
      attempts,
      ...(providerCode === undefined ? {} : { providerCode }),
      ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
    },
  );
}

/** `retry-after-ms`, or `Retry-After` in seconds or as an HTTP date. */
export function parseRetryAfter(headers: Headers, now = Date.now()): number | undefined {
  const ms = headers.get('retry-after-ms');
  if (ms !== null && /^\d+(\.\d+)?$/.test(ms.trim())) return Math.ceil(Number(ms));
  const value = headers.get('retry-after')?.trim();
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Math.ceil(Number(value) * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/**
 * Reads a body as text, at most `maxBytes` (more throws `response_too_large`, or is cut
 * when `truncate`). Each chunk pushes the deadline back.
 */
export async function readText(
  response: Response,
  maxBytes: number,
  deadline: Deadline,
  truncate = false,
): Promise<string> {
  if (!response.body) return '';
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let size = 0;
  let text = '';
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      deadline.reset();
      size += value.byteLength;
      if (size > maxBytes) {
        if (truncate) break;
        throw new AxAIError('response_too_large', `The response exceeded ${maxBytes} bytes`);
      }
      text += decoder.decode(value, { stream: true });
    }
    return text + decoder.decode();
  } finally {
    reader.cancel().catch(() => {});
    reader.releaseLock();
  }
}
