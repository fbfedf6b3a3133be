/**
 * The MCP execution context of a program run: which clients it may use, initialized once
 * per context tree, what nested programs inherit (`mcpInheritance`), and the tasks its
 * tool calls created, so a failed branch can cancel them.
 */
import type { AxMCPClient } from '../client/client.js';
import type { AxMCPTask } from '../client/tasks/task.js';
import { instance, kindOf, object, oneOf, type Shape, string } from '../options/check.js';
import { AxProgramError, assertProgramOptions, programOptionsError } from './errors.js';
import { type AxProgramUCPClient, type AxUCPClients, UCP_CLIENTS } from './ucp-context.js';

/**
 * What programs use of an MCP client. {@link AxMCPClient} satisfies it; programs only call
 * through it, so `authorizeToolCall`, concurrency limits, tasks and cancellation all apply.
 */
export type AxProgramMCPClient = Pick<
  AxMCPClient,
  | 'namespace'
  | 'init'
  | 'inspectCatalog'
  | 'catalogRevision'
  | 'callToolOutcome'
  | 'waitForTask'
  | 'cancelTask'
  | 'getPrompt'
  | 'readResource'
> &
  Partial<Pick<AxMCPClient, 'replaysRecording'>>;

/**
 * How MCP is reached while a program is evaluated: from recordings (`'replay'`, the default) or
 * from live servers (`'live'`), which must be asked for because every run repeats side effects.
 */
export type AxMCPEvaluationMode = 'replay' | 'live';

/** One client or several: the `mcp` option. */
export type AxMCPClients = AxProgramMCPClient | readonly AxProgramMCPClient[];

/** The shape of one MCP client. */
export const MCP_CLIENT: Shape = instance('an MCP client (AxMCPClient)', (value) => isMCPClient(value));

/** The shape of {@link AxMCPClients}: `mcp[1]` names a bad item of a list. */
export const MCP_CLIENTS: Shape = {
  expected: 'an MCP client (AxMCPClient) or an array of them',
  optional: true,
  check(value, path, issues) {
    if (!Array.isArray(value)) return MCP_CLIENT.check(value, path, issues);
    value.forEach((client, index) => {
      MCP_CLIENT.check(client, `${path}[${index}]`, issues);
    });
  },
};

/**
 * What a nested program inherits from its parent's context: `'all'` (default), `'none'`,
 * or an allowlist of namespaces (an empty list inherits nothing). Unknown or repeated
 * namespaces are errors.
 */
export type AxMCPInheritance = 'all' | 'none' | readonly string[];

const INHERITANCE_MODES = oneOf('all', 'none');
const INHERITANCE_WORDS = "'all', 'none' or an array of namespaces";
const NAMESPACE = string({ nonEmpty: true });

/**
 * The shape of {@link AxMCPInheritance} (a misspelled mode gets a suggestion). Unknown and
 * repeated namespaces are rules of the parent context (`invalid_inheritance`), checked per run.
 */
export const MCP_INHERITANCE: Shape = {
  expected: INHERITANCE_WORDS,
  optional: true,
  check(value, path, issues) {
    if (typeof value === 'string') return INHERITANCE_MODES.check(value, path, issues);
    if (!Array.isArray(value)) {
      issues.push({ path: path || '(options)', expected: INHERITANCE_WORDS, received: kindOf(value) });
      return;
    }
    value.forEach((namespace, index) => {
      NAMESPACE.check(namespace, `${path}[${index}]`, issues);
    });
  },
};

/** The shape of `mcpParent`: the context a parent program, flow or function passes. */
export const EXECUTION_CONTEXT: Shape = instance(
  'an AxMCPExecutionContext (from a parent program, flow or function context)',
  (value) => value instanceof AxMCPExecutionContext,
);

const CLIENTS_ARGUMENT = object({ mcp: MCP_CLIENTS });
const UCP_ARGUMENT = object({ ucp: UCP_CLIENTS });
const INHERITANCE_ARGUMENT = object({ mcpInheritance: MCP_INHERITANCE });

interface TrackedTask {
  client: AxProgramMCPClient;
  taskId: string;
}

/** Shared by every context of one execution: one `init()` per client. */
class InitMemo {
  readonly #started = new Map<AxProgramMCPClient, Promise<void>>();

  init(client: AxProgramMCPClient, signal: AbortSignal | undefined): Promise<void> {
    let started = this.#started.get(client);
    if (!started) {
      started = client.init(signal).catch((error: unknown) => {
        this.#started.delete(client);
        throw error;
      });
      this.#started.set(client, started);
    }
    return started;
  }
}

/**
 * The clients a program run may use: MCP clients (`mcp.<namespace>`) and UCP clients
 * (`ucp.<namespace>`), one namespace each across both. Create one with
 * {@link AxMCPExecutionContext.create}; nested programs get {@link AxMCPExecutionContext.derive}d
 * children.
 */
export class AxMCPExecutionContext {
  readonly #clients: readonly AxProgramMCPClient[];
  readonly #byNamespace: ReadonlyMap<string, AxProgramMCPClient>;
  readonly #ucpClients: readonly AxProgramUCPClient[];
  readonly #ucpByNamespace: ReadonlyMap<string, AxProgramUCPClient>;
  readonly #memo: InitMemo;
  readonly #parent: AxMCPExecutionContext | undefined;
  readonly #evaluation: AxMCPEvaluationMode | undefined;
  readonly #tasks = new Set<TrackedTask>();

  private constructor(
    clients: readonly AxProgramMCPClient[],
    ucpClients: readonly AxProgramUCPClient[],
    memo: InitMemo,
    parent: AxMCPExecutionContext | undefined,
    evaluation: AxMCPEvaluationMode | undefined,
  ) {
    this.#byNamespace = indexClients(clients);
    this.#clients = Object.freeze([...this.#byNamespace.values()]);
    this.#ucpByNamespace = indexUCPClients(ucpClients, this.#byNamespace);
    this.#ucpClients = Object.freeze([...this.#ucpByNamespace.values()]);
    this.#memo = memo;
    this.#parent = parent;
    this.#evaluation = evaluation;
    if (evaluation === 'replay') {
      for (const client of this.#clients) refuseLive(client);
      for (const client of this.#ucpClients) refuseLiveUCP(client);
    }
  }

  /**
   * A root context. Duplicate MCP namespaces throw `duplicate_namespace`; a UCP client whose
   * namespace another client (MCP or UCP) has throws `invalid_options`. With `evaluation`, it
   * and every context derived from it belong to an evaluation: in `'replay'` mode a client
   * with a live server behind it, given here or to any nested program, throws
   * `live_mcp_in_evaluation` before anything is sent (every UCP client: a business is live).
   */
  static create(
    clients?: AxMCPClients,
    options: { evaluation?: AxMCPEvaluationMode; ucp?: AxUCPClients } = {},
  ): AxMCPExecutionContext {
    return new AxMCPExecutionContext(
      clientList(clients),
      ucpClientList(options.ucp),
      new InitMemo(),
      undefined,
      options.evaluation,
    );
  }

  /** The evaluation this context belongs to, if any. */
  get evaluation(): AxMCPEvaluationMode | undefined {
    return this.#evaluation;
  }

  /**
   * A child context: what `inheritance` lets through from this one (MCP and UCP namespaces
   * alike), plus `own` clients and `ownUCP` clients. The same client object may be both
   * inherited and owned; two different MCP clients with one namespace throw
   * `duplicate_namespace`, a UCP client sharing a namespace with another client
   * `invalid_options`.
   */
  derive(
    inheritance: AxMCPInheritance = 'all',
    own?: AxMCPClients,
    ownUCP?: AxUCPClients,
  ): AxMCPExecutionContext {
    assertProgramOptions(
      INHERITANCE_ARGUMENT,
      { mcpInheritance: inheritance },
      'AxMCPExecutionContext.derive',
    );
    const inherited = this.#select(inheritance);
    const inheritedUCP = this.#selectUCP(inheritance);
    return new AxMCPExecutionContext(
      [...inherited, ...clientList(own)],
      [...inheritedUCP, ...ucpClientList(ownUCP)],
      this.#memo,
      this,
      this.#evaluation,
    );
  }

  /** The UCP clients, one per namespace, in the order they were given. */
  get ucpClients(): readonly AxProgramUCPClient[] {
    return this.#ucpClients;
  }

  /** The namespaces of the UCP clients. */
  get ucpNamespaces(): string[] {
    return [...this.#ucpByNamespace.keys()];
  }

  /** The UCP client of a namespace. */
  ucpClient(namespace: string): AxProgramUCPClient | undefined {
    return this.#ucpByNamespace.get(namespace);
  }

  /** The clients, one per namespace, in the order they were given. */
  get clients(): readonly AxProgramMCPClient[] {
    return this.#clients;
  }

  /** The namespaces of the clients. */
  get namespaces(): string[] {
    return [...this.#byNamespace.keys()];
  }

  /** The client of a namespace. */
  client(namespace: string): AxProgramMCPClient | undefined {
    return this.#byNamespace.get(namespace);
  }

  /** Initializes a client once for this whole context tree (concurrent callers share it). */
  initialize(client: AxProgramMCPClient, signal?: AbortSignal): Promise<void> {
    return this.#memo.init(client, signal);
  }

  /** Tasks created by tool calls in this context and its children, not known to be finished. */
  get openTasks(): { namespace: string; taskId: string }[] {
    return [...this.#tasks].map((task) => ({ namespace: task.client.namespace, taskId: task.taskId }));
  }

  /** Records a task a tool call created; the returned function forgets it once it ended. */
  trackTask(client: AxProgramMCPClient, task: AxMCPTask): () => void {
    const tracked: TrackedTask = { client, taskId: task.taskId };
    const owners: AxMCPExecutionContext[] = [];
    for (let context: AxMCPExecutionContext | undefined = this; context; context = context.#parent) {
      context.#tasks.add(tracked);
      owners.push(context);
    }
    return () => {
      for (const owner of owners) owner.#tasks.delete(tracked);
    };
  }

  /**
   * Asks the servers to cancel every open task of this context and its children (best
   * effort: a failure to cancel is reported, not thrown). Returns the tasks it asked about.
   */
  async cancelOpenTasks(
    onError?: (error: unknown) => void,
  ): Promise<{ namespace: string; taskId: string }[]> {
    const tasks = [...this.#tasks];
    await Promise.all(
      tasks.map(async (task) => {
        try {
          await task.client.cancelTask(task.taskId);
        } catch (error) {
          onError?.(error);
        }
      }),
    );
    return tasks.map((task) => ({ namespace: task.client.namespace, taskId: task.taskId }));
  }

  #selectUCP(inheritance: AxMCPInheritance): AxProgramUCPClient[] {
    if (inheritance === 'all') return [...this.#ucpClients];
    if (inheritance === 'none') return [];
    return this.#ucpClients.filter((client) => (inheritance as readonly string[]).includes(client.namespace));
  }

  #select(inheritance: AxMCPInheritance): AxProgramMCPClient[] {
    if (inheritance === 'all') return [...this.#clients];
    if (inheritance === 'none') return [];
    const seen = new Set<string>();
    const selected: AxProgramMCPClient[] = [];
    for (const namespace of inheritance as readonly string[]) {
      if (seen.has(namespace)) {
        throw new AxProgramError('invalid_inheritance', `mcpInheritance names "${namespace}" twice`);
      }
      seen.add(namespace);
      if (this.#ucpByNamespace.has(namespace)) continue;
      const client = this.#byNamespace.get(namespace);
      if (!client) {
        const known =
          [...this.namespaces, ...this.ucpNamespaces].map((name) => `"${name}"`).join(', ') || 'none';
        throw new AxProgramError(
          'invalid_inheritance',
          `mcpInheritance names "${namespace}", which the parent context does not have (it has ${known})`,
        );
      }
      selected.push(client);
    }
    return selected;
  }
}

/** The `mcp` option as a list; a value that is not a client throws `invalid_options` (path `mcp[1]`). */
export function clientList(clients: AxMCPClients | undefined): AxProgramMCPClient[] {
  if (clients === undefined) return [];
  assertProgramOptions(CLIENTS_ARGUMENT, { mcp: clients }, 'AxMCPExecutionContext');
  return Array.isArray(clients) ? [...clients] : [clients as AxProgramMCPClient];
}

/** Whether a value looks like an MCP client. */
export function isMCPClient(value: unknown): value is AxProgramMCPClient {
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as Partial<AxProgramMCPClient>;
  return (
    typeof candidate.namespace === 'string' &&
    typeof candidate.callToolOutcome === 'function' &&
    typeof candidate.inspectCatalog === 'function'
  );
}

/** The `ucp` option as a list; a value that is not a UCP client throws `invalid_options` (path `ucp[1]`). */
export function ucpClientList(clients: AxUCPClients | undefined): AxProgramUCPClient[] {
  if (clients === undefined) return [];
  assertProgramOptions(UCP_ARGUMENT, { ucp: clients }, 'AxMCPExecutionContext');
  return Array.isArray(clients) ? [...clients] : [clients as AxProgramUCPClient];
}

/** UCP clients by namespace; a namespace an MCP client or another UCP client has is an options error. */
function indexUCPClients(
  clients: readonly AxProgramUCPClient[],
  mcp: ReadonlyMap<string, AxProgramMCPClient>,
): Map<string, AxProgramUCPClient> {
  const byNamespace = new Map<string, AxProgramUCPClient>();
  for (const client of clients) {
    const existing = byNamespace.get(client.namespace);
    if (existing === client) continue;
    if (existing || mcp.has(client.namespace)) {
      const other = existing ? 'another UCP client' : 'an MCP client';
      throw programOptionsError(
        'Program options',
        {
          path: 'ucp',
          expected: 'a namespace no other client of the run has',
          received: `'${client.namespace.slice(0, 64)}', which ${other} has too`,
        },
        `The UCP client "${client.namespace}" and ${other} share the namespace "${client.namespace}"; ` +
          'give each client its own namespace',
      );
    }
    byNamespace.set(client.namespace, client);
  }
  return byNamespace;
}

function indexClients(clients: readonly AxProgramMCPClient[]): Map<string, AxProgramMCPClient> {
  const byNamespace = new Map<string, AxProgramMCPClient>();
  for (const client of clients) {
    const existing = byNamespace.get(client.namespace);
    if (existing === client) continue;
    if (existing) {
      throw new AxProgramError(
        'duplicate_namespace',
        `Two different MCP clients use the namespace "${client.namespace}"; give each client its own namespace`,
      );
    }
    byNamespace.set(client.namespace, client);
  }
  return byNamespace;
}

/**
 * In an evaluation that replays recordings, a client with a live server behind it throws
 * `live_mcp_in_evaluation` (also one an `mcpContext` entry names that is not attached).
 */
export function refuseLiveIn(context: AxMCPExecutionContext, client: AxProgramMCPClient): void {
  if (context.evaluation === 'replay') refuseLive(client);
}

function refuseLive(client: AxProgramMCPClient): void {
  if (client.replaysRecording === true) return;
  throw new AxProgramError(
    'live_mcp_in_evaluation',
    `Evaluation replays recorded MCP sessions: the client "${client.namespace}" talks to a live server, ` +
      'and every run would repeat its side effects. Give it an AxMCPReplayTransport (record one with ' +
      "`ax-mcp record` or recordAxMCPSession), or evaluate with evaluationMode: 'live' on purpose.",
  );
}

function refuseLiveUCP(client: AxProgramUCPClient): void {
  throw new AxProgramError(
    'live_mcp_in_evaluation',
    `Evaluation replays recorded sessions: the UCP client "${client.namespace}" talks to a live business, ` +
      "and every run would repeat its side effects (orders, payments). Evaluate with evaluationMode: 'live' on purpose.",
  );
}

/**
 * The context of one program run: the parent's (or an empty root's) clients filtered by
 * `inheritance`, plus the program's own MCP and UCP clients. Callers have checked
 * `mcpParent`'s shape.
 */
export function runContext(
  own: AxMCPClients | undefined,
  parent: AxMCPExecutionContext | undefined,
  inheritance: AxMCPInheritance | undefined,
  ownUCP?: AxUCPClients,
): AxMCPExecutionContext {
  return (parent ?? AxMCPExecutionContext.create()).derive(inheritance ?? 'all', own, ownUCP);
}
