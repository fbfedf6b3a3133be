/**
 * `mcpContext`: prompts and resources fetched from MCP servers before the first model call.
 * They enter the conversation raw, attributed to their source, and are rendered by the AI
 * layer as explicitly untrusted context — never as instructions.
 */
import type { AxAIMCPContextPart, AxAIMessage } from '../ai/types.js';
import {
  type AxOptionsIssue,
  array,
  nearest,
  object,
  record,
  refine,
  required,
  type Shape,
  string,
} from '../options/check.js';
import { AxProgramError, programOptionsError, shownValue } from './errors.js';
import {
  type AxMCPExecutionContext,
  type AxProgramMCPClient,
  isMCPClient,
  refuseLiveIn,
} from './mcp-context.js';

/**
 * One piece of MCP context: a prompt (with its arguments) or a resource. `client` is an MCP
 * client, or the namespace of a client the program has attached (its `mcp` option or a
 * parent's context): `{ client: 'docs', resource: { uri: 'docs://guide' } }`.
 */
export type AxMCPContextEntry =
  | { client: AxProgramMCPClient | string; prompt: { name: string; arguments?: Record<string, string> } }
  | { client: AxProgramMCPClient | string; resource: { uri: string } };

const CLIENT_WORDS = 'an MCP client or the namespace of an attached one';

const CLIENT_OR_NAMESPACE: Shape = {
  expected: CLIENT_WORDS,
  optional: true,
  check(value, path, issues) {
    const ok = typeof value === 'string' ? value.trim() !== '' : isMCPClient(value);
    if (!ok) issues.push({ path, expected: CLIENT_WORDS, received: shownValue(value) });
  },
};

const ENTRY_KEYS = object(
  {
    client: required(CLIENT_OR_NAMESPACE),
    prompt: object(
      {
        name: required(string({ nonEmpty: true })),
        arguments: record(string(), 'an object of string arguments'),
      },
      { expected: 'a prompt { name, arguments? }', aliases: { args: 'arguments' } },
    ),
    resource: object({ uri: required(string({ nonEmpty: true })) }, { expected: 'a resource { uri }' }),
  },
  {
    expected: 'an entry { client, prompt } or { client, resource }',
    aliases: { uri: 'resource', namespace: 'client', server: 'client', mcp: 'client' },
  },
);

/** One `mcpContext` entry: its keys, and exactly one of `prompt` and `resource`. */
const ENTRY = refine(ENTRY_KEYS, (value, path, issues) => {
  const entry = value as { prompt?: unknown; resource?: unknown };
  if ((entry.prompt === undefined) === (entry.resource === undefined)) {
    issues.push({
      path,
      expected: 'either prompt or resource',
      received: entry.prompt === undefined ? 'neither' : 'both',
    });
  }
});

/** The shape of the `mcpContext` option. */
export const MCP_CONTEXT: Shape = array(ENTRY, {
  expected: 'an array of entries { client, prompt } or { client, resource }',
});

/**
 * Fetches every entry (concurrently, each client initialized once per context) and returns
 * one user message holding them in order, or `undefined` when there are none. The entries'
 * shapes were checked with the options ({@link MCP_CONTEXT}); namespaces are resolved here,
 * against the run's context, before anything is sent. `label` names the options in errors.
 */
export async function resolveContextEntries(
  entries: readonly AxMCPContextEntry[] | undefined,
  context: AxMCPExecutionContext,
  signal: AbortSignal,
  label: string,
): Promise<AxAIMessage | undefined> {
  if (entries === undefined || entries.length === 0) return undefined;
  // Every entry is bound to its client before anything is sent.
  const bound = entries.map((entry, index) => ({
    ...entry,
    client: bindClient(entry, index, context, label),
  }));
  const parts = await Promise.all(
    bound.map(async (entry): Promise<AxAIMCPContextPart> => {
      const { client } = entry;
      await context.initialize(client, signal);
      const namespace = client.namespace;
      if ('prompt' in entry && entry.prompt !== undefined) {
        const prompt = await client.getPrompt(entry.prompt.name, entry.prompt.arguments ?? {}, { signal });
        const name = entry.prompt.name;
        return {
          type: 'mcp_context',
          kind: 'prompt',
          namespace,
          componentId: `mcp:${namespace}:${name}`,
          name,
          prompt,
        };
      }
      const uri = (entry as { resource: { uri: string } }).resource.uri;
      const resource = await client.readResource(uri, { signal });
      return {
        type: 'mcp_context',
        kind: 'resource',
        namespace,
        componentId: `mcp:${namespace}:${uri}`,
        uri,
        resource,
      };
    }),
  );
  return { role: 'user', content: parts };
}

/**
 * The client of an entry: a namespace resolves against the run's attached clients (unknown:
 * `invalid_options` at `mcpContext[i].client`, naming the known ones); a client object must
 * not clash with a different attached client of its namespace.
 */
function bindClient(
  entry: AxMCPContextEntry,
  index: number,
  context: AxMCPExecutionContext,
  label: string,
): AxProgramMCPClient {
  const path = `mcpContext[${index}].client`;
  if (typeof entry.client === 'string') {
    const client = context.client(entry.client);
    if (client) return client;
    const known = context.namespaces;
    const issue: AxOptionsIssue = {
      path,
      expected:
        known.length === 0
          ? 'an MCP client: no client is attached (the mcp option, or a parent context)'
          : `the namespace of an attached client: ${known.map((name) => `'${name}'`).join(', ')}`,
      received: shownValue(entry.client),
    };
    const near = nearest(entry.client, known);
    if (near !== undefined) issue.suggestion = `'${near}'`;
    throw programOptionsError(label, issue);
  }
  const client = entry.client;
  if (!isMCPClient(client)) {
    throw programOptionsError(label, { path, expected: CLIENT_WORDS, received: shownValue(client) });
  }
  const attached = context.client(client.namespace);
  if (attached && attached !== client) {
    throw new AxProgramError(
      'duplicate_namespace',
      `${path} is a different client with the attached namespace "${client.namespace}"`,
    );
  }
  if (!attached) refuseLiveIn(context, client);
  return client;
}
