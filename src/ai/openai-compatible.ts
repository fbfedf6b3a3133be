/**
 * {@link AxAIOpenAICompatible}: any provider that speaks OpenAI chat completions (OpenAI,
 * Azure-style gateways, vLLM, Ollama, LM Studio, OpenRouter, …) over `fetch`.
 */
import { type Span, SpanStatusCode, trace } from '@opentelemetry/api';
import {
  anyOf,
  boolean,
  describeIssues,
  instance,
  number,
  object,
  record,
  required,
  string,
} from '../options/check.js';
import { AxAIError, AxAIOptionsError, assertAIOptions } from './errors.js';
import { type AxAIHTTPSettings, HTTP_SETTINGS_KEYS, postJSON, readText } from './http.js';
import { readChatStream } from './openai-stream.js';
import { parseResponse, requestBody } from './openai-wire.js';
import {
  type AxAICapabilities,
  type AxAIChatRequest,
  type AxAIChatResponse,
  type AxAIChatStreamEvent,
  type AxAIMediaSupport,
  type AxAIService,
  CHAT_REQUEST,
  MEDIA_SUPPORT,
} from './types.js';

/** Options of {@link AxAIOpenAICompatible}. */
export interface AxAIOpenAICompatibleOptions extends AxAIHTTPSettings {
  /**
   * Sent as `Authorization: Bearer <apiKey>`; never logged or put into errors. Default: the
   * `OPENAI_API_KEY` environment variable where there is one (Node, Deno, Bun). Optional for
   * local servers; required for the default OpenAI URL.
   */
  apiKey?: string;
  /**
   * The API root (`/chat/completions` is appended). Default: the `OPENAI_BASE_URL` environment
   * variable, else `https://api.openai.com/v1`.
   */
  baseURL?: string;
  /** The model every request uses unless the request names one. */
  model: string;
  /** Extra headers (for example `OpenAI-Organization`). */
  headers?: Record<string, string>;
  /** A name for errors and traces (default `openai-compatible`). */
  name?: string;
  /**
   * What the provider and model can do. Defaults: tools, streaming and structured outputs on;
   * images on, audio and files off, in user messages and in tool results.
   */
  capabilities?: {
    tools?: boolean;
    streaming?: boolean;
    structuredOutputs?: boolean;
    userParts?: Partial<AxAIMediaSupport>;
    toolResultParts?: Partial<AxAIMediaSupport>;
    /** The most tools one request may offer (default 128, as OpenAI's API; `Infinity` for none). */
    maxTools?: number;
  };
}

/** What {@link AxAIOpenAICompatible} accepts; checked once in the constructor, before anything is sent. */
const OPENAI_COMPATIBLE_OPTIONS = object(
  {
    ...HTTP_SETTINGS_KEYS,
    apiKey: string(),
    baseURL: string({ nonEmpty: true }),
    model: required(string({ nonEmpty: true })),
    headers: record(string(), 'an object of header values (strings)'),
    name: string({ nonEmpty: true }),
    capabilities: object(
      {
        tools: boolean(),
        streaming: boolean(),
        structuredOutputs: boolean(),
        userParts: MEDIA_SUPPORT,
        toolResultParts: MEDIA_SUPPORT,
        maxTools: anyOf(
          number({ integer: true, min: 1 }),
          instance('Infinity', (value) => value === Number.POSITIVE_INFINITY),
        ),
      },
      {
        expected:
          'an object { tools?, streaming?, structuredOutputs?, userParts?, toolResultParts?, maxTools? }',
      },
    ),
  },
  {
    expected: 'an options object { model, baseURL?, apiKey?, … }',
    aliases: {
      baseUrl: 'baseURL',
      apiBase: 'baseURL',
      endpoint: 'baseURL',
      url: 'baseURL',
      api_key: 'apiKey',
      key: 'apiKey',
      timeout: 'timeoutMs',
      retries: 'maxRetries',
    },
  },
);

const LABEL = 'AxAIOpenAICompatible options';

const DEFAULT_MEDIA: AxAIMediaSupport = { image: true, audio: false, file: false };
/** OpenAI's chat completions API refuses more tools than this in one request. */
const DEFAULT_MAX_TOOLS = 128;

const tracer = trace.getTracer('ax-mcp');

/** Ends an `ax.ai.chat` span with the outcome (never messages or keys). */
function endSpan(span: Span, response: AxAIChatResponse | undefined, error: unknown): void {
  if (response) {
    span.setAttribute('ax.ai.finish_reason', response.finishReason);
    if (response.usage) span.setAttribute('ax.ai.total_tokens', response.usage.totalTokens);
  }
  if (error !== undefined) {
    span.setStatus({
      code: SpanStatusCode.ERROR,
      message: error instanceof AxAIError ? error.code : 'error',
    });
  }
  span.end();
}

const DEFAULT_BASE_URL = 'https://api.openai.com/v1';

/** The process environment where the runtime has one (Node, Deno with permission, Bun); empty elsewhere. */
function environment(): Record<string, string | undefined> {
  try {
    const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env;
    return env ?? {};
  } catch {
    return {};
  }
}

/**
 * An OpenAI-compatible chat-completions service: tools, JSON-schema structured outputs,
 * streaming SSE, typed errors ({@link AxAIError}), and retries of 429 and 5xx answers
 * that honour `Retry-After`.
 *
 * @example
 * ```ts
 * const llm = new AxAIOpenAICompatible({ model: 'gpt-4.1-mini' }); // OPENAI_API_KEY, OPENAI_BASE_URL from the environment
 * const local = new AxAIOpenAICompatible({ baseURL: 'http://127.0.0.1:11434/v1', model: 'qwen3' });
 * ```
 */
export class AxAIOpenAICompatible implements AxAIService {
  readonly name: string;
  readonly capabilities: AxAICapabilities;
  /** The default model. */
  readonly model: string;
  readonly #url: string;
  readonly #headers: Record<string, string>;
  readonly #settings: AxAIHTTPSettings;

  constructor(options: AxAIOpenAICompatibleOptions) {
    assertAIOptions(OPENAI_COMPATIBLE_OPTIONS, options, LABEL, {
      provider: typeof options?.name === 'string' ? options.name : 'openai-compatible',
    });
    const env = environment();
    const apiKey = options.apiKey ?? env.OPENAI_API_KEY;
    const base = options.baseURL ?? env.OPENAI_BASE_URL ?? DEFAULT_BASE_URL;
    let url: URL | undefined;
    try {
      url = new URL(base.endsWith('/') ? base : `${base}/`);
    } catch {
      url = undefined;
    }
    if (url?.protocol !== 'https:' && url?.protocol !== 'http:') {
      // A rule beyond shapes. The URL stays out of the message: its query may carry a key.
      const issue = {
        path: 'baseURL',
        expected: 'an http(s) URL',
        received: url ? `a ${url.protocol} URL` : 'a string that is not a URL',
      };
      throw new AxAIOptionsError({ issues: [issue], message: `${LABEL}: ${describeIssues([issue])}` });
    }
    if (!apiKey && url.hostname === new URL(DEFAULT_BASE_URL).hostname) {
      // Without a key the provider answers 401 to every request: say so before the first one.
      const issue = {
        path: 'apiKey',
        expected: 'an API key (apiKey, or OPENAI_API_KEY) for api.openai.com',
        received: 'nothing',
      };
      throw new AxAIOptionsError({ issues: [issue], message: `${LABEL}: ${describeIssues([issue])}` });
    }
    this.#url = new URL('chat/completions', url).href;
    this.name = options.name ?? 'openai-compatible';
    this.model = options.model;
    const caps = options.capabilities ?? {};
    this.capabilities = Object.freeze({
      tools: caps.tools ?? true,
      streaming: caps.streaming ?? true,
      structuredOutputs: caps.structuredOutputs ?? true,
      userParts: Object.freeze({ ...DEFAULT_MEDIA, ...caps.userParts }),
      toolResultParts: Object.freeze({ ...DEFAULT_MEDIA, ...caps.toolResultParts }),
      maxTools: caps.maxTools ?? DEFAULT_MAX_TOOLS,
    });
    this.#headers = {
      ...options.headers,
      'content-type': 'application/json',
      ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}),
    };
    const {
      apiKey: _key,
      baseURL: _url,
      model: _model,
      headers: _headers,
      name: _name,
      capabilities: _caps,
      ...settings
    } = options;
    this.#settings = settings;
  }

  /** Sends the conversation and returns the model's answer. */
  async chat(request: AxAIChatRequest): Promise<AxAIChatResponse> {
    this.#check(request);
    const span = this.#span(request, false);
    try {
      const response = await this.#chat(request);
      endSpan(span, response, undefined);
      return response;
    } catch (error) {
      endSpan(span, undefined, error);
      throw error;
    }
  }

  /** A request that does not fit is refused before anything is sent (`invalid_options`). */
  #check(request: AxAIChatRequest): void {
    assertAIOptions(CHAT_REQUEST, request, `${this.name} chat request`, {
      provider: this.name,
      model: typeof request?.model === 'string' ? request.model : this.model,
    });
  }

  #span(request: AxAIChatRequest, stream: boolean): Span {
    return tracer.startSpan('ax.ai.chat', {
      attributes: {
        'ax.ai.provider': this.name,
        'ax.ai.model': request.model ?? this.model,
        'ax.ai.stream': stream,
        'ax.ai.tools': request.tools?.length ?? 0,
      },
    });
  }

  async #chat(request: AxAIChatRequest): Promise<AxAIChatResponse> {
    const label = { provider: this.name, model: request.model ?? this.model };
    const body = JSON.stringify(requestBody(request, this.model, this.capabilities, false));
    const open = await postJSON(this.#url, this.#headers, body, this.#settings, label, request.signal);
    let text: string;
    try {
      text = await readText(
        open.response,
        this.#settings.maxResponseBytes ?? 16 * 1024 * 1024,
        open.deadline,
      );
    } catch (error) {
      throw open.deadline.failure(error, label, open.attempts);
    } finally {
      open.deadline.dispose();
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (cause) {
      throw new AxAIError('invalid_response', `${this.name} sent a body that is not JSON`, {
        ...label,
        cause,
      });
    }
    return parseResponse(parsed, this.name);
  }

  /** Streams the answer over SSE; yields text and tool-call deltas, then `finish`. */
  async *streamingChat(request: AxAIChatRequest): AsyncGenerator<AxAIChatStreamEvent> {
    this.#check(request);
    if (!this.capabilities.streaming) {
      yield { type: 'finish', response: await this.chat(request) };
      return;
    }
    const span = this.#span(request, true);
    let finished: AxAIChatResponse | undefined;
    let failure: unknown;
    try {
      for await (const event of this.#stream(request)) {
        if (event.type === 'finish') finished = event.response;
        yield event;
      }
    } catch (error) {
      failure = error;
      throw error;
    } finally {
      endSpan(span, finished, failure);
    }
  }

  async *#stream(request: AxAIChatRequest): AsyncGenerator<AxAIChatStreamEvent> {
    const label = { provider: this.name, model: request.model ?? this.model };
    const body = JSON.stringify(requestBody(request, this.model, this.capabilities, true));
    const open = await postJSON(this.#url, this.#headers, body, this.#settings, label, request.signal);
    try {
      const type = open.response.headers.get('content-type') ?? '';
      if (!open.response.body) throw new AxAIError('invalid_response', `${this.name} sent no body`, label);
      if (!type.includes('text/event-stream')) {
        // Some gateways ignore `stream: true` and answer with one JSON body.
        const text = await readText(
          open.response,
          this.#settings.maxResponseBytes ?? 16 * 1024 * 1024,
          open.deadline,
        );
        let parsed: unknown;
        try {
          parsed = JSON.parse(text);
        } catch (cause) {
          throw new AxAIError('invalid_response', `${this.name} sent a body that is not JSON`, {
            ...label,
            cause,
          });
        }
        const response = parseResponse(parsed, this.name);
        if (response.message.content) yield { type: 'text', delta: response.message.content };
        yield { type: 'finish', response };
        return;
      }
      yield* readChatStream(
        open.response.body,
        open.deadline,
        this.name,
        this.#settings.maxResponseBytes ?? 16 * 1024 * 1024,
      );
    } catch (error) {
      throw open.deadline.failure(error, label, open.attempts);
    } finally {
      open.deadline.dispose();
    }
  }
}

/** Creates an {@link AxAIOpenAICompatible} service. */
export function axOpenAICompatible(options: AxAIOpenAICompatibleOptions): AxAIOpenAICompatible {
  return new AxAIOpenAICompatible(options);
}
