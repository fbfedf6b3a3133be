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
import { ABORT_SIGNAL, nearest, object, required, string } from '../options/check.js';
import { assertProgramOptions, programOptionsError, shownValue } from './errors.js';
import { type AxFunction, AxFunctionError } from './functions.js';
import { type AxProgramMCPClient, MCP_CLIENT } from './mcp-context.js';
import { providerName } from './tool-bindings.js';

/** Options of {@link toFunction}. */
export interface AxToFunctionOptions {
  /** Aborts reading the catalog. */
  signal?: AbortSignal;
}

/** The arguments of {@link toFunction}; checked once per adapted tool, before the catalog is read. */
const TO_FUNCTION_ARGUMENTS = object({
  client: required(MCP_CLIENT),
  tool: required(string({ nonEmpty: true })),
  options: object(
    { signal: ABORT_SIGNAL },
    { expected: 'an options object { signal? }', aliases: { abortSignal: 'signal' } },
  ),
});

const NO_MEDIA = { image: false, audio: false, file: false } as const;

/** Adapts one MCP tool to an {@link AxFunction} (lossy; see the module comment). */
export async function toFunction(
  client: AxProgramMCPClient,
  tool: string,
  options: AxToFunctionOptions = {},
): Promise<AxFunction> {
  assertProgramOptions(TO_FUNCTION_ARGUMENTS, { client, tool, options }, 'toFunction');
  const catalog = await client.inspectCatalog(options.signal ? { signal: options.signal } : {});
  const definition = catalog.tools.find((candidate) => candidate.name === tool);
  if (!definition) {
    const names = catalog.tools.map((candidate) => candidate.name);
    const near = nearest(tool, names);
    throw programOptionsError(
      'toFunction',
      {
        path: 'tool',
        expected: `a tool of the server "${client.namespace}"`,
        received: shownValue(tool),
        ...(near === undefined ? {} : { suggestion: `'${near}'` }),
      },
      `The server "${client.namespace}" has no tool named "${tool}"${near === undefined ? '' : ` (did you mean '${near}'?)`}`,
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
