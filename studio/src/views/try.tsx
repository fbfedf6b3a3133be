/**
 * Try: operations through the client, so its own rules still decide (`authorizeToolCall` for
 * calls). Call a tool from a form made from its `inputSchema` — progress and the task's life
 * (working → input_required → completed) live from the stream, the task's input requests
 * answered here, Cancel while it runs; get a prompt from a form of its arguments, with
 * completions as you type; read a resource by URI (a template is never expanded: you type the
 * concrete URI). Form elicitations a server sends wait at the top until answered.
 * `#/try/<client>/<tool>`, `#/try/<client>/prompts/<name>`, `#/try/<client>/resources/<uri>`.
 */

import type { VNode } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import {
  type Elicitation,
  type ElicitationSchema,
  get,
  type LiveState,
  missingRoute,
  type OperationReply,
  post,
  seg,
  type TaskStatus,
} from '../api.js';
import { PromptResult, ReadResult, ToolResult } from '../content.js';
import {
  type ElicitationAction,
  ElicitationForm,
  type Properties,
  readFields,
  SchemaFields,
} from '../form.js';
import type { ViewProps } from '../main.js';
import { ConfirmButton, messageOf, Status, str, useLive } from '../ui.js';
import { keyOf, tryLink } from './servers.js';

interface Tool {
  name: string;
  title?: string;
  description?: string;
  inputSchema?: { properties?: Properties; required?: string[] };
  annotations?: { destructiveHint?: boolean; readOnlyHint?: boolean };
}

interface PromptArgument {
  name: string;
  description?: string;
  required?: boolean;
}

interface Prompt {
  name: string;
  title?: string;
  description?: string;
  arguments?: PromptArgument[];
}

const TERMINAL = new Set(['completed', 'failed', 'cancelled']);

export function TryView({ params, live }: ViewProps): VNode {
  const [namespace, second, third] = params;
  let body: VNode;
  if (!namespace || second === undefined || second === '') body = <Chooser namespace={namespace} />;
  else if (second === 'prompts' && third !== undefined)
    body = <PromptTry namespace={namespace} name={third} />;
  else if (second === 'resources' && third !== undefined)
    body = <ReadTry namespace={namespace} uri={params.slice(2).join('/')} />;
  else body = <ToolTry namespace={namespace} name={second} live={live} />;
  return (
    <>
      <Elicitations live={live} />
      {body}
    </>
  );
}

/** No tool, prompt or resource chosen: a search over a client's catalog. */
function Chooser(props: { namespace: string | undefined }): VNode {
  const [servers, setServers] = useState<string[]>();
  const [client, setClient] = useState(props.namespace ?? '');
  const [kind, setKind] = useState<'tools' | 'prompts' | 'resources' | 'resourceTemplates'>('tools');
  const [query, setQuery] = useState('');
  const [found, setFound] = useState<{ total: number; items: Record<string, unknown>[] }>();
  const [error, setError] = useState<string>();
  useEffect(() => {
    get<{ servers: { namespace: string }[] }>('servers').then(
      ({ servers: list }) => {
        setServers(list.map((s) => s.namespace));
        setClient((current) => current || list[0]?.namespace || '');
      },
      (failure: unknown) => setError(messageOf(failure)),
    );
  }, []);
  useEffect(() => {
    if (!client) return;
    let current = true;
    const q = new URLSearchParams({ q: query, limit: '50' });
    get<{ total: number; items: Record<string, unknown>[] }>(`servers/${seg(client)}/${kind}?${q}`).then(
      (page) => {
        if (current) setFound(page);
      },
      (failure: unknown) => current && setError(messageOf(failure)),
    );
    return () => {
      current = false;
    };
  }, [client, kind, query]);
  return (
    <>
      <h1>Try</h1>
      <p class="dim">Calls, prompts and reads go through the client: its authorizeToolCall decides calls.</p>
      <div class="row">
        <select
          data-client="true"
          value={client}
          onChange={(e) => setClient((e.currentTarget as HTMLSelectElement).value)}
        >
          {(servers ?? []).map((name) => (
            <option key={name} value={name}>
              {name}
            </option>
          ))}
        </select>{' '}
        <select
          data-choose-kind="true"
          value={kind}
          onChange={(e) => setKind((e.currentTarget as HTMLSelectElement).value as typeof kind)}
        >
          <option value="tools">tools</option>
          <option value="prompts">prompts</option>
          <option value="resources">resources</option>
          <option value="resourceTemplates">templates</option>
        </select>{' '}
        <input
          type="search"
          placeholder="name"
          value={query}
          onInput={(e) => setQuery((e.currentTarget as HTMLInputElement).value)}
        />{' '}
        {client ? <a href={`#/try/${seg(client)}/resources/`}>read a URI…</a> : null}
      </div>
      <Status error={error} />
      <div class="items">
        {(found?.items ?? []).map((item) => {
          const key = keyOf(kind, item);
          return (
            <div key={key} class="item">
              <a href={tryLink(client, kind, key)} data-choose={key}>
                {key}
              </a>{' '}
              <span class="dim">{str(item.description)}</span>
            </div>
          );
        })}
        {found && found.total > found.items.length ? (
          <p class="dim">{`${found.total - found.items.length} more: filter`}</p>
        ) : null}
      </div>
    </>
  );
}

function ToolTry(props: { namespace: string; name: string; live: LiveState }): VNode {
  const { namespace, name } = props;
  const [tool, setTool] = useState<Tool>();
  const [error, setError] = useState<string>();
  useEffect(() => {
    get<{ tool: Tool }>(`servers/${seg(namespace)}/tool?name=${seg(name)}`).then(
      (body) => setTool(body.tool),
      (failure: unknown) => setError(messageOf(failure)),
    );
  }, []);
  return (
    <>
      <h1>
        Try <code>{name}</code>
        <span class="dim">{` on ${namespace}`}</span>
      </h1>
      <Status loading={!tool} error={error} />
      {tool ? <ToolForm namespace={namespace} tool={tool} live={props.live} /> : null}
    </>
  );
}

interface Call {
  callId: string;
  reply?: OperationReply;
  error?: string;
}

function ToolForm(props: { namespace: string; tool: Tool; live: LiveState }): VNode {
  const { namespace, tool } = props;
  const form = useRef<HTMLFormElement>(null);
  const [call, setCall] = useState<Call>();
  const [invalid, setInvalid] = useState<string>();
  const properties = tool.inputSchema?.properties ?? {};
  const required = tool.inputSchema?.required ?? [];
  const run = async (): Promise<void> => {
    if (!form.current) return;
    let args: Record<string, unknown>;
    try {
      args = readFields(form.current, properties, required);
    } catch (error) {
      setInvalid(messageOf(error));
      return;
    }
    setInvalid(undefined);
    // The stream tells this call's progress and task apart from others by this id.
    const callId = crypto.randomUUID();
    setCall({ callId });
    try {
      const reply = await post<OperationReply>(`servers/${seg(namespace)}/call`, {
        tool: tool.name,
        arguments: args,
        callId,
      });
      setCall({ callId, reply });
    } catch (error) {
      setCall({ callId, error: messageOf(error) });
    }
  };
  const destructive = tool.annotations?.destructiveHint === true;
  return (
    <div class="try">
      {tool.title ? <h2>{tool.title}</h2> : null}
      {destructive ? (
        <p>
          <span class="badge danger">destructive</span>
        </p>
      ) : null}
      <p class="description">{str(tool.description)}</p>
      <form ref={form} class="form" onSubmit={(event) => event.preventDefault()}>
        <SchemaFields properties={properties} required={required} />
        {destructive ? (
          <ConfirmButton label="Call" question="This tool is marked destructive. Call it?" act={run} />
        ) : (
          <button type="button" class="primary" data-action="Call" onClick={() => void run()}>
            Call
          </button>
        )}
      </form>
      {invalid ? <p class="error">{`Not valid: ${invalid}`}</p> : null}
      {call ? (
        <div class="call" data-call={call.callId}>
          <CallLive
            key={call.callId}
            namespace={namespace}
            callId={call.callId}
            live={props.live}
            done={call.reply !== undefined || call.error !== undefined}
          />
          {call.reply ? (
            <ToolResult reply={call.reply} />
          ) : call.error ? (
            <p class="error">{call.error}</p>
          ) : (
            <div class="result" data-result="pending">
              <p class="dim">Calling…</p>
            </div>
          )}
        </div>
      ) : (
        <div class="result" data-result="none" />
      )}
    </div>
  );
}

/** The progress and task states the stream carried for one call, and what it asks of you. */
function CallLive(props: {
  namespace: string;
  callId: string;
  live: LiveState;
  done: boolean;
}): VNode | null {
  const { namespace, live } = props;
  useLive(live);
  const [answered, setAnswered] = useState<string[]>([]);
  const state = live.calls.get(props.callId);
  const task: TaskStatus | undefined = state?.tasks[state.tasks.length - 1];
  const taskId = task?.taskId;
  // Its questions are answered here, not in the list of waiting elicitations.
  useEffect(() => (taskId === undefined ? undefined : live.showTask(taskId)), [taskId]);
  if (!state) return null;
  const progress = state.progress;
  const open = task !== undefined && !TERMINAL.has(task.status) && !props.done;
  const requests = Object.entries(task?.inputRequests ?? {}).filter(
    ([key]) => !answered.includes(`${task?.taskId} ${key}`),
  );
  const answer = async (
    key: string,
    action: ElicitationAction,
    content?: Record<string, unknown>,
  ): Promise<void> => {
    if (!task) return;
    await post(`servers/${seg(namespace)}/tasks/${seg(task.taskId)}/input`, {
      responses: { [key]: content === undefined ? { action } : { action, content } },
    });
    setAnswered((keys) => [...keys, `${task.taskId} ${key}`]);
  };
  return (
    <div class="call-live">
      {progress ? (
        <div class="progress" data-progress={progress.progress}>
          <progress value={progress.progress} max={progress.total ?? undefined} />{' '}
          <span class="dim">
            {progress.total === undefined
              ? `${progress.progress}`
              : `${progress.progress} / ${progress.total}`}
            {progress.message ? ` — ${progress.message}` : ''}
          </span>
        </div>
      ) : null}
      {task ? (
        <div class="task" data-task={task.taskId} data-task-status={task.status}>
          <h3>
            Task <code>{task.taskId}</code> <span class={`status status-${task.status}`}>{task.status}</span>
          </h3>
          <ol class="task-states">
            {state.tasks.map((t, i) => (
              <li key={i} data-state={t.status}>
                <span class={`status status-${t.status}`}>{t.status}</span>
                {t.statusMessage ? <span class="dim">{` ${t.statusMessage}`}</span> : null}
              </li>
            ))}
          </ol>
          {open && task.status === 'input_required'
            ? requests.map(([key, request]) => (
                <section key={`${task.taskId} ${key}`} class="card" data-input-request={key}>
                  <h3>The task asks</h3>
                  <ElicitationForm
                    message={str(request.params?.message)}
                    schema={request.params?.requestedSchema as ElicitationSchema | undefined}
                    answer={(action, content) => answer(key, action, content)}
                  />
                </section>
              ))
            : null}
          {open ? (
            <ConfirmButton
              label="Cancel task"
              question="Cancel this task?"
              act={async () => {
                await post(`servers/${seg(namespace)}/tasks/${seg(task.taskId)}/cancel`);
              }}
            />
          ) : null}
        </div>
      ) : null}
    </div>
  );
}

function PromptTry(props: { namespace: string; name: string }): VNode {
  const { namespace, name } = props;
  const [prompt, setPrompt] = useState<Prompt | 'missing'>();
  const [error, setError] = useState<string>();
  useEffect(() => {
    get<{ prompt: Prompt }>(`servers/${seg(namespace)}/prompt?name=${seg(name)}`).then(
      (body) => setPrompt(body.prompt),
      (failure: unknown) => (missingRoute(failure) ? setPrompt('missing') : setError(messageOf(failure))),
    );
  }, []);
  return (
    <>
      <h1>
        Get <code>{name}</code>
        <span class="dim">{` on ${namespace}`}</span>
      </h1>
      <Status loading={prompt === undefined} error={error} />
      {prompt === 'missing' ? (
        <p class="dim" data-not-offered="prompts">
          This studio server cannot get prompts yet.
        </p>
      ) : null}
      {prompt && prompt !== 'missing' ? <PromptForm namespace={namespace} prompt={prompt} /> : null}
    </>
  );
}

const COMPLETE_DELAY_MS = 120;

function PromptForm(props: { namespace: string; prompt: Prompt }): VNode {
  const { namespace, prompt } = props;
  const args = prompt.arguments ?? [];
  const [values, setValues] = useState<Record<string, string>>({});
  const [suggestions, setSuggestions] = useState<{ field: string; values: string[]; total?: number }>();
  const [reply, setReply] = useState<OperationReply | 'pending'>();
  const [error, setError] = useState<string>();
  const timer = useRef<ReturnType<typeof setTimeout>>();
  const asked = useRef(0);
  useEffect(() => () => clearTimeout(timer.current), []);

  const complete = (field: string, value: string, all: Record<string, string>): void => {
    clearTimeout(timer.current);
    timer.current = setTimeout(() => {
      const ask = ++asked.current;
      post<OperationReply<{ completion?: { values?: string[]; total?: number } }>>(
        `servers/${seg(namespace)}/complete`,
        {
          ref: { type: 'ref/prompt', name: prompt.name },
          argument: { name: field, value },
          context: { arguments: all },
        },
      ).then(
        (answer) => {
          if (ask !== asked.current) return;
          const found = answer.ok ? (answer.result.completion?.values ?? []) : [];
          setSuggestions({
            field,
            values: found.slice(0, 20),
            total: answer.ok ? answer.result.completion?.total : undefined,
          });
        },
        // No completion (an older studio server, or none offered) is no suggestion, not an error.
        () => setSuggestions(undefined),
      );
    }, COMPLETE_DELAY_MS);
  };
  const change = (field: string, value: string): void => {
    const next = { ...values, [field]: value };
    setValues(next);
    complete(field, value, next);
  };
  const send = async (): Promise<void> => {
    setReply('pending');
    setError(undefined);
    const filled = Object.fromEntries(Object.entries(values).filter(([, v]) => v !== ''));
    try {
      setReply(
        await post<OperationReply>(`servers/${seg(namespace)}/prompt`, {
          name: prompt.name,
          arguments: filled,
        }),
      );
    } catch (failure) {
      setReply(undefined);
      setError(messageOf(failure));
    }
  };
  return (
    <div class="try">
      {prompt.title ? <h2>{prompt.title}</h2> : null}
      <p class="description">{str(prompt.description)}</p>
      <form
        class="form"
        onSubmit={(event) => {
          event.preventDefault();
          void send();
        }}
      >
        {args.map((arg) => (
          <label key={arg.name} class="field">
            <span class="fname">
              {arg.name}
              {arg.required ? ' *' : ''}
              <span class="dim"> string</span>
            </span>
            <input
              type="text"
              name={arg.name}
              autocomplete="off"
              value={values[arg.name] ?? ''}
              onInput={(event) => change(arg.name, (event.currentTarget as HTMLInputElement).value)}
              onFocus={(event) => complete(arg.name, (event.currentTarget as HTMLInputElement).value, values)}
            />
            {arg.description ? <span class="dim">{arg.description}</span> : null}
            {suggestions?.field === arg.name && suggestions.values.length > 0 ? (
              <div class="suggestions" data-suggestions={arg.name}>
                {suggestions.values.map((value) => (
                  <button
                    key={value}
                    type="button"
                    class="suggestion"
                    data-suggestion={value}
                    onClick={() => {
                      setValues({ ...values, [arg.name]: value });
                      setSuggestions(undefined);
                    }}
                  >
                    {value}
                  </button>
                ))}
                {suggestions.total !== undefined && suggestions.total > suggestions.values.length ? (
                  <span class="dim">{` of ${suggestions.total}`}</span>
                ) : null}
              </div>
            ) : null}
          </label>
        ))}
        <button type="submit" class="primary" data-action="Get">
          Get prompt
        </button>
      </form>
      {error ? <p class="error">{error}</p> : null}
      {reply === 'pending' ? (
        <div class="result" data-result="pending">
          <p class="dim">Getting…</p>
        </div>
      ) : reply ? (
        <PromptResult reply={reply} />
      ) : null}
    </div>
  );
}

function ReadTry(props: { namespace: string; uri: string }): VNode {
  const { namespace } = props;
  // A template is a hint: the library never expands one, so the URI is typed in full.
  const template = props.uri.includes('{') ? props.uri : undefined;
  const [uri, setUri] = useState(props.uri);
  const [reply, setReply] = useState<OperationReply | 'pending' | 'missing'>();
  const [error, setError] = useState<string>();
  const read = async (): Promise<void> => {
    setReply('pending');
    setError(undefined);
    try {
      setReply(await post<OperationReply>(`servers/${seg(namespace)}/read`, { uri }));
    } catch (failure) {
      if (missingRoute(failure)) setReply('missing');
      else {
        setReply(undefined);
        setError(messageOf(failure));
      }
    }
  };
  return (
    <>
      <h1>
        Read a resource<span class="dim">{` on ${namespace}`}</span>
      </h1>
      {template ? (
        <p class="dim" data-template={template}>
          From the template <code>{template}</code>: replace each {'{variable}'} with a value.
        </p>
      ) : null}
      <form
        class="form"
        onSubmit={(event) => {
          event.preventDefault();
          void read();
        }}
      >
        <label class="field">
          <span class="fname">URI</span>
          <input
            type="text"
            name="uri"
            data-read-uri="true"
            value={uri}
            onInput={(e) => setUri((e.currentTarget as HTMLInputElement).value)}
          />
        </label>
        <button type="submit" class="primary" data-action="Read" disabled={uri.trim() === ''}>
          Read
        </button>
      </form>
      {error ? <p class="error">{error}</p> : null}
      {reply === 'missing' ? (
        <p class="dim" data-not-offered="read">
          This studio server cannot read resources yet.
        </p>
      ) : null}
      {reply === 'pending' ? (
        <div class="result" data-result="pending">
          <p class="dim">Reading…</p>
        </div>
      ) : reply && reply !== 'missing' ? (
        <ReadResult reply={reply} />
      ) : null}
    </>
  );
}

/** Form elicitations servers sent through the studio, waiting for an answer. */
function Elicitations(props: { live: LiveState }): VNode | null {
  const { live } = props;
  useLive(live);
  useEffect(() => {
    get<{ pending: Elicitation[] }>('elicitations').then(
      (body) => live.pending(body.pending),
      () => {},
    );
  }, []);
  const waiting = live.waiting;
  if (waiting.length === 0) return null;
  return (
    <div class="elicitations">
      {waiting.map((elicitation) => (
        <section key={elicitation.id} class="card asking" data-elicitation={elicitation.id}>
          <h2>
            <code>{elicitation.namespace}</code> asks
          </h2>
          <ElicitationForm
            message={elicitation.message}
            schema={elicitation.requestedSchema}
            answer={async (action, content) => {
              await post(
                `elicitations/${seg(elicitation.id)}`,
                content === undefined ? { action } : { action, content },
              );
              live.settle(elicitation.id);
            }}
          />
        </section>
      ))}
    </div>
  );
}
