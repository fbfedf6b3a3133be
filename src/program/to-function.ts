/**
 * `toFunction`: an MCP tool as a plain {@link AxFunction}. A **lossy compatibility
 * adapter** for code that only understands functions. Prefer `mcp: client`, which keeps
 * everything this adapter loses:
 *
 * - the result becomes one string: images, audio and binary resources are described,
 *   never shown; `structuredContent` becomes JSON text; the raw result is gone;
 * - the schema is a snapshot: catalog changes are not followed;
 * - progress and task events are not reported, and the result is not attributed to its
 *   server in the conversation.
 *
 * The call still goes through the client, so `authorizeToolCall`, concurrency limits,
 * tasks and cancellation apply.
 */
import { resultParts } from '../ai/mcp-content.js';
import { AxProgramError } from './errors.js';
import { type AxFunction, AxFunctionError } from './functions.js';
import type { AxProgramMCPClient } from './mcp-context.js';
import { providerName } from './tool-bindings.js';

const NO_MEDIA = { image: false, audio: false, file: false } as const;

/** Adapts one MCP tool to an {@link AxFunction} (lossy; see the module comment). */
export async function toFunction(
  client: AxProgramMCPClient,
  tool: string,
  options: { signal?: AbortSignal } = {},
): Promise<AxFunction> {
  const catalog = await client.inspectCatalog(options.signal ? { signal: options.signal } : {});
  const definition = catalog.tools.find((candidate) => candidate.name === tool);
  if (!definition) {
    throw new AxProgramError(
      'invalid_options',
      `The server "${client.namespace}" has no tool named "${tool}"`,
    );
  }
  const componentId = `mcp:${client.namespace}:${tool}`;
  return {
    name: providerName(client.namespace, tool, 'bare'),
    description: definition.description ?? definition.title ?? `MCP tool ${componentId}`,
    parameters: { ...definition.inputSchema, type: 'object' },
    async func(args, context) {
      const outcome = await client.callToolOutcome(tool, args, { signal: context.signal });
      const result =
        outcome.kind === 'complete'
          ? outcome.result
          : await client.waitForTask(outcome.task, { signal: context.signal });
      const text = resultParts(result, NO_MEDIA, componentId)
        .map((part) => (part.type === 'text' ? part.text : ''))
        .join('\n');
      if (result.isError === true) throw new AxFunctionError(text);
      return text;
    },
  };
}
