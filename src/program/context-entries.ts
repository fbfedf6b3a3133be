/**
 * `mcpContext`: prompts and resources fetched from MCP servers before the first model call.
 * They enter the conversation raw, attributed to their source, and are rendered by the AI
 * layer as explicitly untrusted context — never as instructions.
 */
import type { AxAIMCPContextPart, AxAIMessage } from '../ai/types.js';
import { AxProgramError } from './errors.js';
import { type AxMCPExecutionContext, type AxProgramMCPClient, isMCPClient } from './mcp-context.js';

/** One piece of MCP context: a prompt (with its arguments) or a resource. */
export type AxMCPContextEntry =
  | { client: AxProgramMCPClient; prompt: { name: string; arguments?: Record<string, string> } }
  | { client: AxProgramMCPClient; resource: { uri: string } };

/** Checks the `mcpContext` option; throws `invalid_options`. */
export function checkContextEntries(
  entries: readonly AxMCPContextEntry[] | undefined,
): readonly AxMCPContextEntry[] {
  if (entries === undefined) return [];
  if (!Array.isArray(entries)) throw new AxProgramError('invalid_options', 'mcpContext must be an array');
  for (const entry of entries as readonly unknown[]) {
    const candidate = entry as Partial<{ client: unknown; prompt: unknown; resource: unknown }> | null;
    if (typeof candidate !== 'object' || candidate === null || !isMCPClient(candidate.client)) {
      throw new AxProgramError('invalid_options', 'Each mcpContext entry needs an MCP client');
    }
    const prompt = candidate.prompt as { name?: unknown; arguments?: unknown } | undefined;
    const resource = candidate.resource as { uri?: unknown } | undefined;
    if ((prompt === undefined) === (resource === undefined)) {
      throw new AxProgramError('invalid_options', 'Each mcpContext entry has either a prompt or a resource');
    }
    if (prompt !== undefined && (typeof prompt.name !== 'string' || prompt.name === '')) {
      throw new AxProgramError('invalid_options', 'An mcpContext prompt needs a name');
    }
    if (prompt?.arguments !== undefined) {
      const args = prompt.arguments;
      if (
        typeof args !== 'object' ||
        args === null ||
        Object.values(args).some((v) => typeof v !== 'string')
      ) {
        throw new AxProgramError('invalid_options', 'mcpContext prompt arguments are strings');
      }
    }
    if (resource !== undefined && (typeof resource.uri !== 'string' || resource.uri === '')) {
      throw new AxProgramError('invalid_options', 'An mcpContext resource needs a uri');
    }
  }
  return entries;
}

/**
 * Fetches every entry (concurrently, each client initialized once per context) and returns
 * one user message holding them in order, or `undefined` when there are none.
 */
export async function resolveContextEntries(
  entries: readonly AxMCPContextEntry[],
  context: AxMCPExecutionContext,
  signal: AbortSignal,
): Promise<AxAIMessage | undefined> {
  if (entries.length === 0) return undefined;
  for (const entry of entries) {
    const attached = context.client(entry.client.namespace);
    if (attached && attached !== entry.client) {
      throw new AxProgramError(
        'duplicate_namespace',
        `An mcpContext entry uses a different client with the attached namespace "${entry.client.namespace}"`,
      );
    }
  }
  const parts = await Promise.all(
    entries.map(async (entry): Promise<AxAIMCPContextPart> => {
      const { client } = entry;
      await context.initialize(client, signal);
      const namespace = client.namespace;
      if ('prompt' in entry) {
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
      const uri = entry.resource.uri;
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
