/**
 * The studio's Try view, server side: get a prompt, read a resource, ask for completions, call
 * a tool — always through the client, so `authorizeToolCall` decides — with the call's progress
 * and task statuses on the SSE stream (`kind: 'call'`), a task's input and cancellation, and the
 * page's answers to the elicitation bridge. Every request is bounded in time; a failure on the
 * MCP side is `200 { ok: false, error }`, a bad body is a 400 that says what is wrong.
 */

import type {
  AxMCPCatalogSnapshot,
  AxMCPClient,
  AxMCPCompletionReference,
  AxMCPElicitResult,
  AxMCPTask,
} from '../../index.js';
import type { StudioReply } from './api.js';
import type { AxStudioElicitation, AxStudioPendingElicitation } from './elicitation.js';
import { errorOf, type StudioObserver, type StudioTaskView } from './observe.js';

/** A plain request (prompt, read, completion, the call until it becomes a task). */
const REQUEST_TIMEOUT_MS = 60_000;
/** A call that became a task may wait for a person (input, an elicitation) this long. */
const TASK_TIMEOUT_MS = 10 * 60_000;
const MAX_CALL_ID = 64;
const MAX_RUNNING_CALLS = 32;
const MAX_KEYS = 100;
const FORBIDDEN = new Set(['__proto__', 'constructor', 'prototype']);
const ACTIONS = new Set(['accept', 'decline', 'cancel']);

const ok = (body: unknown): StudioReply => ({ status: 200, body });
const fail = (status: number, message: string): StudioReply => ({ status, body: { error: { message } } });

type JSONObject = Record<string, unknown>;

function isObject(value: unknown): value is JSONObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** An object of at most {@link MAX_KEYS} safe keys whose values pass `test`; else what is wrong. */
function checkRecord(
  value: unknown,
  what: string,
  test?: (v: unknown) => boolean,
  expected = '',
): string | undefined {
  if (!isObject(value)) return `${what} must be a JSON object`;
  const keys = Object.keys(value);
  if (keys.length > MAX_KEYS) return `${what} has more than ${MAX_KEYS} keys`;
  for (const key of keys) {
    if (FORBIDDEN.has(key)) return `${what} has a forbidden key "${key}"`;
    if (test && !test(value[key])) return `${what}.${key} must be ${expected}`;
  }
  return undefined;
}

const isString = (v: unknown) => typeof v === 'string';
/** A form elicitation's content: strings, numbers, booleans, arrays of strings. */
const isFormValue = (v: unknown) =>
  typeof v === 'string' ||
  typeof v === 'number' ||
  typeof v === 'boolean' ||
  (Array.isArray(v) && v.every((item) => typeof item === 'string'));

function nonEmptyString(value: unknown): value is string {
  return typeof value === 'string' && value !== '';
}

function taskView(task: AxMCPTask): StudioTaskView {
  return {
    taskId: task.taskId,
    status: task.status,
    ...(task.statusMessage === undefined ? {} : { statusMessage: task.statusMessage }),
    ...(task.inputRequests === undefined ? {} : { inputRequests: structuredClone(task.inputRequests) }),
  };
}

/** A studio call while it runs: what the elicitation bridge matches its requests against. */
interface RunningCall {
  namespace: string;
  task: AxMCPTask | undefined;
}

/** A bridge request tied to a task's input request (so the task's input answers it). */
interface TaskLink {
  namespace: string;
  taskId: string;
  key: string | undefined;
}

export interface StudioTryOptions {
  observer: StudioObserver;
  elicitation: AxStudioElicitation | undefined;
  snapshot: (client: AxMCPClient) => Promise<AxMCPCatalogSnapshot>;
  closing: AbortSignal;
}

export class StudioTry {
  readonly #observer: StudioObserver;
  readonly #elicitation: AxStudioElicitation | undefined;
  readonly #snapshot: (client: AxMCPClient) => Promise<AxMCPCatalogSnapshot>;
  readonly #closing: AbortSignal;
  readonly #running = new Set<RunningCall>();
  readonly #links = new Map<string, TaskLink>();
  readonly #stop: () => void;

  constructor(options: StudioTryOptions) {
    this.#observer = options.observer;
    this.#elicitation = options.elicitation;
    this.#snapshot = options.snapshot;
    this.#closing = options.closing;
    this.#stop =
      options.elicitation?.listen((change) => {
        if (change.type === 'pending') {
          const link = this.#link(change.request, change.params);
          if (link) this.#links.set(change.request.id, link);
          this.#observer.note({ kind: 'elicitation', ...this.#shown(change.request) });
        } else {
          this.#links.delete(change.id);
          const { id, namespace, action, by } = change;
          this.#observer.note({ kind: 'elicitation_settled', id, namespace, action, by });
        }
      }) ?? (() => {});
  }

  close(): void {
    this.#stop();
  }

  /** The routes under `servers/:ns/` this file answers; `undefined` for the others. */
  async server(
    client: AxMCPClient,
    method: string,
    rest: readonly (string | undefined)[],
    query: URLSearchParams,
    body: unknown,
  ): Promise<StudioReply | undefined> {
    const [what, id, action, extra] = rest;
    if (extra !== undefined) return undefined;
    if (id === undefined) {
      if (method === 'GET' && what === 'prompt') return this.#prompt(client, query.get('name') ?? '');
      if (method === 'POST' && what === 'prompt') return this.#getPrompt(client, body);
      if (method === 'POST' && what === 'read') return this.#read(client, body);
      if (method === 'POST' && what === 'complete') return this.#complete(client, body);
      if (method === 'POST' && what === 'call') return this.call(client, body);
    }
    if (method === 'POST' && what === 'tasks' && id !== undefined && action === 'input')
      return this.#taskInput(client, id, body);
    if (method === 'POST' && what === 'tasks' && id !== undefined && action === 'cancel')
      return this.#taskCancel(client, id);
    return undefined;
  }

  /** `GET elicitations`, `POST elicitations/:id`; `undefined` for other paths. */
  elicitations(
    method: string,
    path: readonly (string | undefined)[],
    body: unknown,
  ): StudioReply | undefined {
    const [first, id, extra] = path;
    if (first !== 'elicitations' || extra !== undefined) return undefined;
    const bridge = this.#elicitation;
    if (method === 'GET' && id === undefined)
      return ok({
        pending: bridge?.pending().map((request) => this.#shown(request)) ?? [],
        available: !!bridge,
      });
    if (method !== 'POST' || id === undefined) return undefined;
    if (!bridge) return fail(404, 'this studio has no elicitation bridge (startStudio({ elicitation }))');
    const answer = body as { action?: unknown; content?: unknown } | null;
    if (!isObject(answer) || typeof answer.action !== 'string' || !ACTIONS.has(answer.action))
      return fail(400, 'action must be "accept", "decline" or "cancel"');
    if (answer.content !== undefined) {
      if (answer.action !== 'accept') return fail(400, 'content goes only with action "accept"');
      const problem = checkRecord(
        answer.content,
        'content',
        isFormValue,
        'a string, number, boolean or string[]',
      );
      if (problem) return fail(400, problem);
    }
    const result: AxMCPElicitResult = {
      action: answer.action as AxMCPElicitResult['action'],
      ...(answer.content === undefined ? {} : { content: answer.content as JSONObject }),
    };
    return bridge.answer(id, result)
      ? ok({ ok: true })
      : fail(404, 'no such elicitation (answered or timed out)');
  }

  async #prompt(client: AxMCPClient, name: string): Promise<StudioReply> {
    const snapshot = await this.#snapshot(client);
    const prompt = snapshot.prompts.find((candidate) => candidate.name === name);
    return prompt ? ok({ prompt }) : fail(404, 'no such prompt');
  }

  #getPrompt(client: AxMCPClient, body: unknown): Promise<StudioReply> | StudioReply {
    if (!isObject(body) || !nonEmptyString(body.name)) return fail(400, 'name must be a non-empty string');
    const args = body.arguments ?? {};
    const problem = checkRecord(args, 'arguments', isString, 'a string');
    if (problem) return fail(400, problem);
    const name = body.name;
    return this.#timed((signal) => client.getPrompt(name, args as Record<string, string>, { signal }));
  }

  #read(client: AxMCPClient, body: unknown): Promise<StudioReply> | StudioReply {
    if (!isObject(body) || !nonEmptyString(body.uri)) return fail(400, 'uri must be a non-empty string');
    const uri = body.uri;
    return this.#timed((signal) => client.readResource(uri, { signal }));
  }

  #complete(client: AxMCPClient, body: unknown): Promise<StudioReply> | StudioReply {
    if (!isObject(body)) return fail(400, 'the body must be a JSON object { ref, argument, context? }');
    const { ref, argument, context } = body;
    let reference: AxMCPCompletionReference;
    if (isObject(ref) && ref.type === 'ref/prompt' && nonEmptyString(ref.name))
      reference = { type: 'ref/prompt', name: ref.name };
    else if (isObject(ref) && ref.type === 'ref/resource' && nonEmptyString(ref.uri))
      reference = { type: 'ref/resource', uri: ref.uri };
    else return fail(400, "ref must be { type: 'ref/prompt', name } or { type: 'ref/resource', uri }");
    if (!isObject(argument) || !nonEmptyString(argument.name) || typeof argument.value !== 'string')
      return fail(400, 'argument must be { name: string, value: string }');
    let given: { arguments?: Record<string, string> } | undefined;
    if (context !== undefined) {
      if (!isObject(context)) return fail(400, 'context must be { arguments? }');
      if (context.arguments !== undefined) {
        const problem = checkRecord(context.arguments, 'context.arguments', isString, 'a string');
        if (problem) return fail(400, problem);
      }
      given =
        context.arguments === undefined ? {} : { arguments: context.arguments as Record<string, string> };
    }
    const completing = { name: argument.name, value: argument.value };
    return this.#timed((signal) => client.complete(reference, completing, given, { signal }));
  }

  /** `POST servers/:ns/call {tool, arguments, callId?}`: answers when the call (and its task) ends. */
  async call(client: AxMCPClient, body: unknown): Promise<StudioReply> {
    const request = body as { tool?: unknown; arguments?: unknown; callId?: unknown } | null;
    if (typeof request?.tool !== 'string') return fail(400, 'tool must be a string');
    const args = request.arguments ?? {};
    if (!isObject(args)) return fail(400, 'arguments must be a JSON object');
    const callId = request.callId;
    if (callId !== undefined && !(nonEmptyString(callId) && callId.length <= MAX_CALL_ID))
      return fail(400, `callId must be a non-empty string of at most ${MAX_CALL_ID} characters`);
    if (this.#running.size >= MAX_RUNNING_CALLS)
      return fail(429, `${MAX_RUNNING_CALLS} calls are running already: wait for one to end`);
    const namespace = client.namespace;
    const running: RunningCall = { namespace, task: undefined };
    const deadline = new AbortController();
    let timer = setTimeout(() => deadline.abort(new Error('the call took too long')), REQUEST_TIMEOUT_MS);
    const started = Date.now();
    this.#running.add(running);
    try {
      const result = await client.callTool(request.tool, args, {
        signal: AbortSignal.any([this.#closing, deadline.signal]),
        ...(callId === undefined
          ? {}
          : {
              onProgress: ({ progress, total, message }) =>
                this.#observer.note({
                  kind: 'call',
                  callId,
                  namespace,
                  state: 'progress',
                  progress: {
                    progress,
                    ...(total === undefined ? {} : { total }),
                    ...(message === undefined ? {} : { message }),
                  },
                }),
            }),
        onStatus: (task) => {
          if (running.task === undefined) {
            // A task may wait for a person: it gets the longer deadline from now on.
            clearTimeout(timer);
            timer = setTimeout(() => deadline.abort(new Error('the task took too long')), TASK_TIMEOUT_MS);
          }
          running.task = task;
          if (callId !== undefined)
            this.#observer.note({ kind: 'call', callId, namespace, state: 'task', task: taskView(task) });
        },
      });
      return ok({ ok: true, result, ms: Date.now() - started });
    } catch (error) {
      return ok({ ok: false, error: errorOf(error), ms: Date.now() - started });
    } finally {
      clearTimeout(timer);
      this.#running.delete(running);
    }
  }

  /**
   * `POST servers/:ns/tasks/:taskId/input {responses}`. A response to an input request the
   * waiting call has put to the elicitation bridge answers it there (the call then sends it);
   * the others go to the server at once (`tasks/update`).
   */
  async #taskInput(client: AxMCPClient, taskId: string, body: unknown): Promise<StudioReply> {
    const responses = isObject(body) ? body.responses : undefined;
    const problem = checkRecord(responses, 'responses');
    if (problem || !isObject(responses)) return fail(400, problem ?? 'responses must be a JSON object');
    if (Object.keys(responses).length === 0) return fail(400, 'responses is empty');
    const direct: JSONObject = {};
    for (const [key, response] of Object.entries(responses)) {
      const id = this.#linked(client.namespace, taskId, key);
      const answered =
        id !== undefined &&
        isObject(response) &&
        typeof response.action === 'string' &&
        ACTIONS.has(response.action) &&
        this.#elicitation?.answer(id, response as AxMCPElicitResult, 'task_input');
      if (!answered) direct[key] = response;
    }
    const started = Date.now();
    if (Object.keys(direct).length === 0) return ok({ ok: true, ms: 0 });
    const reply = await this.#timed(async (signal) => {
      await client.provideTaskInput(taskId, direct, { signal });
      return undefined;
    });
    const { result: _none, ...rest } = reply.body as JSONObject;
    return ok({ ...rest, ms: Date.now() - started });
  }

  async #taskCancel(client: AxMCPClient, taskId: string): Promise<StudioReply> {
    // Requests the task put to the page end with it.
    for (const [id, link] of [...this.#links]) {
      if (link.namespace === client.namespace && link.taskId === taskId)
        this.#elicitation?.answer(id, { action: 'cancel' });
    }
    const reply = await this.#timed(async (signal) => {
      await client.cancelTask(taskId, { signal });
      return undefined;
    });
    const { result: _none, ...rest } = reply.body as JSONObject;
    return ok(rest);
  }

  /** One bounded request: `{ ok: true, result, ms }`, or `{ ok: false, error, ms }` when it failed. */
  async #timed(run: (signal: AbortSignal) => Promise<unknown>): Promise<StudioReply> {
    const started = Date.now();
    try {
      const result = await run(AbortSignal.any([this.#closing, AbortSignal.timeout(REQUEST_TIMEOUT_MS)]));
      return ok(
        result === undefined
          ? { ok: true, ms: Date.now() - started }
          : { ok: true, result, ms: Date.now() - started },
      );
    } catch (error) {
      return ok({ ok: false, error: errorOf(error), ms: Date.now() - started });
    }
  }

  /** A bridge request as the page gets it, with the task that asks when known. */
  #shown(request: AxStudioPendingElicitation): AxStudioPendingElicitation {
    const taskId = request.taskId ?? this.#links.get(request.id)?.taskId;
    return { ...request, ...(taskId === undefined ? {} : { taskId }) };
  }

  /**
   * Which task (and input request) a bridge request comes from: a 2025-11-25 request says so in
   * its `_meta`; a 2026-07-28 task's input request is one the waiting call has just seen in the
   * task's `inputRequests` (the client hands over that very object).
   */
  #link(request: AxStudioPendingElicitation, params: JSONObject): TaskLink | undefined {
    const json = JSON.stringify(params);
    for (const running of this.#running) {
      const task = running.task;
      if (running.namespace !== request.namespace || !task?.inputRequests) continue;
      for (const [key, input] of Object.entries(task.inputRequests)) {
        const asked = isObject(input) ? input.params : undefined;
        if (asked === params || (isObject(asked) && JSON.stringify(asked) === json))
          return { namespace: request.namespace, taskId: task.taskId, key };
      }
    }
    return request.taskId === undefined
      ? undefined
      : { namespace: request.namespace, taskId: request.taskId, key: undefined };
  }

  #linked(namespace: string, taskId: string, key: string): string | undefined {
    for (const [id, link] of this.#links)
      if (link.namespace === namespace && link.taskId === taskId && link.key === key) return id;
    return undefined;
  }
}
