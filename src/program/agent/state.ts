/**
 * Agent state: per client namespace, the resource subscriptions the agent owns and the
 * tasks it knows; and a run parked on a clarification question. It holds no credentials
 * and no client objects, only namespaces, URIs and task ids. Restoring revalidates every
 * task with its server and re-acquires every subscription.
 */
import type { AxMCPClient } from '../../client/client.js';
import { isTerminal } from '../../client/tasks/task.js';
import { AxProgramError } from '../errors.js';
import type { AxMCPExecutionContext, AxProgramMCPClient } from '../mcp-context.js';

/** One entry of the action log: an actor step, or a note from the host. */
export type AxAgentActionLogEntry =
  | {
      kind: 'step';
      turn: number;
      code: string;
      output: string;
      error?: string;
      /** The limit that ended the step. */
      limit?: 'time' | 'memory' | 'stack';
      /** The runtime was replaced after this step: its variables are gone. */
      reset?: boolean;
    }
  | { kind: 'note'; text: string };

/** What an agent remembers of one MCP client. */
export interface AxAgentClientState {
  namespace: string;
  /** Resource URIs the agent subscribed to (it owns these subscriptions). */
  subscriptions: string[];
  /** Tasks the agent's calls created or looked at, not known to be finished. */
  tasks: { taskId: string; status?: string }[];
}

/** A run waiting for the answer to a clarification question. */
export interface AxAgentParkedRun {
  runId: string;
  question: string;
  inputs: Record<string, unknown>;
  log: AxAgentActionLogEntry[];
  turns: number;
}

/** The state `getState()` returns and `setState()` restores. Plain JSON. */
export interface AxAgentState {
  schema: 1;
  mcp: { clients: AxAgentClientState[] };
  parked?: AxAgentParkedRun;
}

/** What the agent's runs did with its clients: owned subscriptions and known tasks. */
export class AgentLedger {
  /** The subscription owner, `ax-agent:<id>`. */
  readonly owner: string;
  readonly #clients = new Map<
    string,
    { subscriptions: Set<string>; tasks: Map<string, string | undefined> }
  >();
  /** Restored entries whose namespace no run has attached yet. */
  #unrestored = new Map<string, AxAgentClientState>();

  constructor(owner: string) {
    this.owner = owner;
  }

  #entry(namespace: string) {
    let entry = this.#clients.get(namespace);
    if (!entry) {
      entry = { subscriptions: new Set(), tasks: new Map() };
      this.#clients.set(namespace, entry);
    }
    return entry;
  }

  subscribed(namespace: string, uri: string): void {
    this.#entry(namespace).subscriptions.add(uri);
  }

  unsubscribed(namespace: string, uri: string): void {
    this.#clients.get(namespace)?.subscriptions.delete(uri);
  }

  /** Records a task's status; a finished task is forgotten. */
  task(namespace: string, taskId: string, status: string | undefined): void {
    const entry = this.#entry(namespace);
    if (status !== undefined && isTerminal(status as never)) entry.tasks.delete(taskId);
    else entry.tasks.set(taskId, status);
  }

  /** Every namespace with something to remember, restored-but-unattached ones included. */
  snapshot(): AxAgentClientState[] {
    const out = new Map<string, AxAgentClientState>(this.#unrestored);
    for (const [namespace, entry] of this.#clients) {
      if (entry.subscriptions.size === 0 && entry.tasks.size === 0) continue;
      out.set(namespace, {
        namespace,
        subscriptions: [...entry.subscriptions],
        tasks: [...entry.tasks].map(([taskId, status]) =>
          status === undefined ? { taskId } : { taskId, status },
        ),
      });
    }
    return [...out.values()];
  }

  /** Replaces what the ledger knows with a restored state; restoring happens in {@link restore}. */
  load(clients: readonly AxAgentClientState[]): void {
    this.#clients.clear();
    this.#unrestored = new Map(clients.map((client) => [client.namespace, client]));
  }

  /**
   * Restores the entries whose namespace `context` has: each task is asked for (a finished
   * or unknown one is dropped), each subscription re-acquired. Failures are reported, and
   * the entry is kept so a later run can retry.
   */
  async restore(context: AxMCPExecutionContext, signal?: AbortSignal, onError?: (error: unknown) => void) {
    const work = [...this.#unrestored.values()].flatMap((saved) => {
      const client = context.client(saved.namespace);
      if (!client) return [];
      this.#unrestored.delete(saved.namespace);
      return [this.#restoreClient(client, saved, context, signal, onError)];
    });
    await Promise.all(work);
  }

  async #restoreClient(
    client: AxProgramMCPClient,
    saved: AxAgentClientState,
    context: AxMCPExecutionContext,
    signal: AbortSignal | undefined,
    onError: ((error: unknown) => void) | undefined,
  ): Promise<void> {
    const full = client as Partial<AgentMCPClient>;
    const namespace = saved.namespace;
    await context.initialize(client, signal);
    await Promise.all([
      ...saved.tasks.map(async ({ taskId }) => {
        if (typeof full.getTask !== 'function') return;
        try {
          const task = await full.getTask(taskId, signal ? { signal } : {});
          this.task(namespace, task.taskId, task.status);
        } catch (error) {
          onError?.(error);
        }
      }),
      ...saved.subscriptions.map(async (uri) => {
        if (typeof full.acquireResourceSubscription !== 'function') return;
        try {
          await full.acquireResourceSubscription(uri, this.owner);
          this.subscribed(namespace, uri);
        } catch (error) {
          onError?.(error);
        }
      }),
    ]);
  }

  /** Releases every owned subscription (best effort). */
  async release(
    clientOf: (namespace: string) => AxProgramMCPClient | undefined,
    onError?: (error: unknown) => void,
  ): Promise<void> {
    const work: Promise<void>[] = [];
    for (const [namespace, entry] of this.#clients) {
      const client = clientOf(namespace) as Partial<AgentMCPClient> | undefined;
      if (typeof client?.releaseResourceSubscription !== 'function') continue;
      for (const uri of entry.subscriptions) {
        work.push(
          client.releaseResourceSubscription(uri, this.owner).then(
            () => {
              entry.subscriptions.delete(uri);
            },
            (error: unknown) => onError?.(error),
          ),
        );
      }
    }
    await Promise.all(work);
  }
}

/** The client methods agents use beyond those of every program. */
export type AgentMCPClient = AxProgramMCPClient &
  Pick<
    AxMCPClient,
    | 'getTask'
    | 'provideTaskInput'
    | 'listTasks'
    | 'getTaskResult'
    | 'complete'
    | 'acquireResourceSubscription'
    | 'releaseResourceSubscription'
  >;

const MAX_ITEMS = 10_000;

/** Checks a state value; throws `invalid_state`. */
export function parseState(value: unknown): AxAgentState {
  const fail = (problem: string): never => {
    throw new AxProgramError('invalid_state', `Agent state ${problem}`);
  };
  if (!isRecord(value) || value.schema !== 1) return fail('must be an object with schema 1');
  const mcp = value.mcp;
  if (!isRecord(mcp) || !Array.isArray(mcp.clients) || mcp.clients.length > MAX_ITEMS) {
    return fail('needs mcp.clients (an array)');
  }
  const seen = new Set<string>();
  const clients = mcp.clients.map((client): AxAgentClientState => {
    if (!isRecord(client) || typeof client.namespace !== 'string' || client.namespace === '') {
      return fail('has a client without a namespace');
    }
    if (seen.has(client.namespace)) return fail(`names the namespace "${client.namespace}" twice`);
    seen.add(client.namespace);
    const subscriptions = stringList(client.subscriptions) ?? fail('has subscriptions that are not URIs');
    if (!Array.isArray(client.tasks) || client.tasks.length > MAX_ITEMS)
      return fail('has tasks that are not a list');
    const tasks = client.tasks.map((task) => {
      if (!isRecord(task) || typeof task.taskId !== 'string' || task.taskId === '')
        return fail('has a task without id');
      return typeof task.status === 'string'
        ? { taskId: task.taskId, status: task.status }
        : { taskId: task.taskId };
    });
    return { namespace: client.namespace, subscriptions, tasks };
  });
  const state: AxAgentState = { schema: 1, mcp: { clients } };
  if (value.parked !== undefined) state.parked = parseParked(value.parked, fail);
  return state;
}

function parseParked(value: unknown, fail: (problem: string) => never): AxAgentParkedRun {
  if (
    !isRecord(value) ||
    typeof value.runId !== 'string' ||
    typeof value.question !== 'string' ||
    !isRecord(value.inputs) ||
    !Array.isArray(value.log) ||
    typeof value.turns !== 'number'
  ) {
    return fail('has a parked run that is not runId, question, inputs, log and turns');
  }
  const log = value.log.map((entry): AxAgentActionLogEntry => {
    if (isRecord(entry) && entry.kind === 'note' && typeof entry.text === 'string') {
      return { kind: 'note', text: entry.text };
    }
    if (
      isRecord(entry) &&
      entry.kind === 'step' &&
      typeof entry.turn === 'number' &&
      typeof entry.code === 'string' &&
      typeof entry.output === 'string'
    ) {
      return structuredClone(entry) as AxAgentActionLogEntry;
    }
    return fail('has a malformed action log');
  });
  return {
    runId: value.runId,
    question: value.question,
    inputs: structuredClone(value.inputs),
    log,
    turns: value.turns,
  };
}

function stringList(value: unknown): string[] | undefined {
  if (!Array.isArray(value) || value.length > MAX_ITEMS) return undefined;
  return value.every((item) => typeof item === 'string' && item !== '') ? [...value] : undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
