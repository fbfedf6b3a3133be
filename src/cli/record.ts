/**
 * `ax-mcp record <endpoint> --out file.json -- <script> [args…]`: runs a script against a real
 * MCP server and writes the session as a replayable recording (secrets redacted).
 *
 * The script is an ES module whose default export receives a connected `AxMCPClient`:
 *
 * ```js
 * export default async function (client, { args }) {
 *   const result = await client.callTool('search', { query: args[0] ?? 'mcp' });
 *   return result.structuredContent; // stored as the recording's `result`
 * }
 * ```
 */
import { writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { AxMCPClient } from '../index.js';
import { MIN_SECRET_LENGTH } from '../testing/recording-format.js';
import { recordAxMCPSession } from '../testing.js';
import { CONNECT_OPTIONS, type ConnectFlags, clientOptionsOf, transportFor, UsageError } from './connect.js';
import { parseFlags } from './flags.js';

/** The usage line for `ax-mcp --help`. */
export const RECORD_HELP = `  ax-mcp record <endpoint> --out FILE [--sse] [--secret VALUE]... -- <script.mjs> [args...]
                                               record a script's MCP session for replay`;

/** What a recorded script exports as default. */
export type AxMCPRecordedScript = (client: AxMCPClient, context: { args: string[] }) => unknown;

const OPTIONS = {
  ...CONNECT_OPTIONS,
  out: { type: 'string' },
  secret: { type: 'string', multiple: true },
} as const;

/** The namespace of a recorded session unless `--namespace` says otherwise (the recorder's own default). */
export const RECORD_NAMESPACE = 'recorded';

/**
 * Runs `ax-mcp record`. `argv` is everything after `record`. Returns the exit code; throws
 * {@link UsageError} for a wrong call. `out` prints the summary.
 */
export async function recordCommand(argv: string[], out: (text: string) => void): Promise<number> {
  const split = argv.indexOf('--');
  if (split < 0) throw new UsageError('record needs -- <script> after its options');
  const [script, ...scriptArgs] = argv.slice(split + 1);
  if (!script) throw new UsageError('record needs a script after --');
  const parsed = parseFlags('record', OPTIONS, argv.slice(0, split));
  const values = parsed.values as ConnectFlags & { out?: string; secret?: string[] };
  const positionals = parsed.positionals;
  const endpoint = positionals[0];
  if (!endpoint) throw new UsageError('record needs an endpoint');
  if (!values.out) throw new UsageError('record needs --out FILE');
  if ((values.secret ?? []).some((secret) => secret.length < MIN_SECRET_LENGTH))
    throw new UsageError(
      `--secret takes values of ${MIN_SECRET_LENGTH} characters or more (a shorter one would be scrubbed out of unrelated text)`,
    );
  const client = clientOptionsOf(values, RECORD_NAMESPACE);

  const run = await loadScript(script);
  const secrets = [...(values.secret ?? [])];
  if (values.bearer) secrets.push(values.bearer);
  // Header values are credentials as often as not: none of them reaches the recording (one
  // too short to be a credential, `X-Env: dev`, would be scrubbed out of unrelated text).
  for (const header of values.header ?? []) {
    const value = header.slice(header.indexOf(':') + 1).trim();
    if (value.length >= MIN_SECRET_LENGTH) secrets.push(value);
  }
  const transport = await transportFor(endpoint, values);
  const { recording } = await recordAxMCPSession({
    transport,
    client,
    secrets,
    run: async (connected) => run(connected, { args: scriptArgs }),
  });
  await writeFile(values.out, `${JSON.stringify(recording, null, 2)}\n`);
  out(`Recorded ${recording.steps.length} messages (${recording.era ?? 'unknown era'}) to ${values.out}`);
  return 0;
}

async function loadScript(path: string): Promise<AxMCPRecordedScript> {
  let module: { default?: unknown };
  try {
    module = (await import(pathToFileURL(resolve(path)).href)) as { default?: unknown };
  } catch (error) {
    throw new UsageError(
      `Could not load the script ${path}: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  if (typeof module.default !== 'function') {
    throw new UsageError(`${path} must export a default function (client, { args }) => result`);
  }
  return module.default as AxMCPRecordedScript;
}
