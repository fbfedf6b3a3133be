/**
 * A scripted OpenAI-compatible chat-completions server on 127.0.0.1: the stand-in for an LLM
 * provider in integration tests. It records every request (headers and parsed body) and
 * answers each `POST /v1/chat/completions` with the next scripted reply: tool calls, a final
 * answer, an HTTP error, or a hang. Requests with `stream: true` get SSE chunks (content in
 * small pieces, tool-call arguments split in two, usage in the last chunk, then `[DONE]`).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { listenLoopback, readBody } from './node-http.js';

/** One recorded request. */
export interface RecordedRequest {
  readonly index: number;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  /** The parsed JSON body. */
  readonly body: ChatBody;
}

/** The parts of a chat-completions body tests look at. */
export interface ChatBody {
  model: string;
  messages: { role: string; content: unknown; tool_calls?: unknown[]; tool_call_id?: string }[];
  tools?: { type: 'function'; function: { name: string; description?: string; parameters: unknown } }[];
  tool_choice?: unknown;
  response_format?: { type: string; json_schema?: { name: string; schema: unknown; strict?: boolean } };
  stream?: boolean;
  [key: string]: unknown;
}

/** A scripted answer. A function computes it from the request (and may wait first). */
export type ScriptedReply =
  | { toolCalls: { name: string; arguments?: unknown; id?: string }[]; content?: string }
  | { content: string; refusal?: string }
  | { status: number; body?: unknown; headers?: Record<string, string> }
  /** Never answers; the connection stays open until the client gives up. */
  | { hang: true }
  | ((request: RecordedRequest) => ScriptedReply | Promise<ScriptedReply>);

/** A running scripted provider. */
export interface ScriptedOpenAIServer {
  /** The API root for `baseURL`: `http://127.0.0.1:<port>/v1`. */
  readonly baseURL: string;
  /** Every request received, in order. */
  readonly requests: RecordedRequest[];
  /** Appends replies to the script. */
  script(...replies: ScriptedReply[]): void;
  /** Replies not used yet. */
  readonly pending: number;
  close(): Promise<void>;
}

/** Starts the server (port 0). */
export async function startScriptedOpenAI(): Promise<ScriptedOpenAIServer> {
  const requests: RecordedRequest[] = [];
  const replies: ScriptedReply[] = [];
  let callCounter = 0;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
      return json(res, 404, { error: { message: `no route ${req.method} ${req.url}` } });
    }
    const text = await readBody(req);
    let body: ChatBody;
    try {
      body = JSON.parse(text ?? '') as ChatBody;
    } catch {
      return json(res, 400, { error: { message: 'body is not JSON' } });
    }
    const recorded: RecordedRequest = { index: requests.length, headers: { ...req.headers }, body };
    requests.push(recorded);
    let reply = replies.shift();
    while (typeof reply === 'function') reply = await reply(recorded);
    if (reply === undefined) {
      return json(res, 400, {
        error: { message: `scripted server: no reply for request #${recorded.index}` },
      });
    }
    if ('hang' in reply) return;
    if ('status' in reply) {
      for (const [name, value] of Object.entries(reply.headers ?? {})) res.setHeader(name, value);
      return json(res, reply.status, reply.body ?? { error: { message: `scripted ${reply.status}` } });
    }
    const toolCalls =
      'toolCalls' in reply
        ? reply.toolCalls.map((call) => ({
            id: call.id ?? `call_${++callCounter}`,
            name: call.name,
            arguments:
              typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments ?? {}),
          }))
        : [];
    const content = reply.content ?? null;
    const refusal = 'refusal' in reply ? reply.refusal : undefined;
    if (body.stream) return stream(res, body.model, content, toolCalls);
    json(res, 200, {
      id: `chatcmpl-${recorded.index}`,
      object: 'chat.completion',
      model: body.model,
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content,
            ...(refusal ? { refusal } : {}),
            ...(toolCalls.length > 0
              ? {
                  tool_calls: toolCalls.map((call) => ({
                    id: call.id,
                    type: 'function',
                    function: { name: call.name, arguments: call.arguments },
                  })),
                }
              : {}),
          },
          finish_reason: toolCalls.length > 0 ? 'tool_calls' : 'stop',
        },
      ],
      usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
    });
  }

  const http = await listenLoopback((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) json(res, 500, { error: { message: 'scripted server failed' } });
    });
  });

  return {
    baseURL: http.url('/v1'),
    requests,
    script: (...more) => void replies.push(...more),
    get pending() {
      return replies.length;
    },
    close: () => http.close(),
  };
}

function json(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function stream(
  res: ServerResponse,
  model: string,
  content: string | null,
  toolCalls: { id: string; name: string; arguments: string }[],
): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const send = (chunk: unknown) => res.write(`data: ${JSON.stringify(chunk)}\n\n`);
  const base = { id: 'chatcmpl-stream', object: 'chat.completion.chunk', model };
  send({ ...base, choices: [{ index: 0, delta: { role: 'assistant' }, finish_reason: null }] });
  for (let i = 0; content !== null && i < content.length; i += 7) {
    send({
      ...base,
      choices: [{ index: 0, delta: { content: content.slice(i, i + 7) }, finish_reason: null }],
    });
  }
  toolCalls.forEach((call, index) => {
    const half = Math.ceil(call.arguments.length / 2);
    send({
      ...base,
      choices: [
        {
          index: 0,
          delta: {
            tool_calls: [
              {
                index,
                id: call.id,
                type: 'function',
                function: { name: call.name, arguments: call.arguments.slice(0, half) },
              },
            ],
          },
          finish_reason: null,
        },
      ],
    });
    send({
      ...base,
      choices: [
        {
          index: 0,
          delta: { tool_calls: [{ index, function: { arguments: call.arguments.slice(half) } }] },
          finish_reason: null,
        },
      ],
    });
  });
  send({
    ...base,
    choices: [{ index: 0, delta: {}, finish_reason: toolCalls.length > 0 ? 'tool_calls' : 'stop' }],
  });
  send({ ...base, choices: [], usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } });
  res.end('data: [DONE]\n\n');
}
