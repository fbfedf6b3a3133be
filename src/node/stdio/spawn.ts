/**
 * Spawning a server process: no shell, a minimal inherited environment, and on POSIX a
 * process group of its own (so that its whole tree can be ended).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import process from 'node:process';
import { AxMCPTransportError } from '../../protocol/errors.js';
import type { AxMCPStdioTransportOptions } from './options.js';
import { IS_WINDOWS, within } from './process-group.js';

const INHERITED_ENV = IS_WINDOWS
  ? [
      'APPDATA',
      'HOMEDRIVE',
      'HOMEPATH',
      'LOCALAPPDATA',
      'PATH',
      'PROCESSOR_ARCHITECTURE',
      'SYSTEMDRIVE',
      'SYSTEMROOT',
      'TEMP',
      'USERNAME',
      'USERPROFILE',
      'PROGRAMFILES',
    ]
  : ['HOME', 'LOGNAME', 'PATH', 'SHELL', 'TERM', 'USER'];

/** The command line: `endpoint` names it in errors (long arguments cut), `endpointKey` whole. */
export function commandLineOf(options: AxMCPStdioTransportOptions): {
  endpoint: string;
  endpointKey: string;
} {
  const commandLine = [options.command, ...(options.args ?? [])].map(quoteArg);
  return { endpoint: commandLine.map(clipArg).join(' '), endpointKey: `stdio:${commandLine.join(' ')}` };
}

/** Spawns the server and waits until it runs; one that cannot start is a typed error naming the command. */
export async function spawnServer(
  options: AxMCPStdioTransportOptions,
  endpoint: string,
): Promise<ChildProcess> {
  const { command, args = [], cwd } = options;
  let child: ChildProcess;
  try {
    child = spawn(command, [...args], {
      cwd,
      env: childEnvironment(options.env),
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: !IS_WINDOWS,
      windowsHide: true,
      shell: false,
    });
  } catch (error) {
    throw spawnError(error, options, endpoint);
  }
  try {
    await new Promise<void>((resolve, reject) => {
      const onSpawn = () => {
        child.off('error', onError);
        resolve();
      };
      const onError = (error: Error) => {
        child.off('spawn', onSpawn);
        reject(error);
      };
      child.once('spawn', onSpawn);
      child.once('error', onError);
    });
  } catch (error) {
    // Node still closes the failed child's pipes and handle; let it, so nothing lingers.
    const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
    for (const stream of [child.stdin, child.stdout, child.stderr]) stream?.destroy();
    await within(closed, 1000);
    throw spawnError(error, options, endpoint);
  }
  return child;
}

function spawnError(
  error: unknown,
  options: AxMCPStdioTransportOptions,
  endpoint: string,
): AxMCPTransportError {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const hint =
    code === 'ENOENT'
      ? options.cwd
        ? ` (command not found, or working directory ${JSON.stringify(options.cwd)} missing)`
        : ' (command not found)'
      : code === 'EACCES'
        ? ' (not executable)'
        : '';
  return new AxMCPTransportError(
    'transport_error',
    `Could not start the MCP server command ${JSON.stringify(options.command)}: ${code ?? String(error)}${hint}`,
    { endpoint, cause: error },
  );
}

function childEnvironment(extra: Record<string, string> | undefined): Record<string, string> {
  const env: Record<string, string> = {};
  for (const key of INHERITED_ENV) {
    const value = process.env[key];
    // Exported shell functions (`() { …`) are a known injection vector; never pass them on.
    if (value !== undefined && !value.startsWith('()')) env[key] = value;
  }
  return { ...env, ...extra };
}

function quoteArg(arg: string): string {
  return /^[\w@%+=:,./-]+$/.test(arg) ? arg : JSON.stringify(arg);
}

function clipArg(arg: string): string {
  return arg.length > 200 ? `${arg.slice(0, 200)}…` : arg;
}
