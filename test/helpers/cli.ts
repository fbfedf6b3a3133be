/**
 * The CLI as users run it: the built bin (`npm test` builds first) in a child process. One
 * runner for every CLI test file.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';

/** The built CLI entry. */
export const CLI_BIN = resolve(import.meta.dirname, '../../dist/cli/main.js');

/** Whether the CLI is built; the CLI tests say so plainly and skip when it is not. */
export const CLI_BUILT = existsSync(CLI_BIN);
if (!CLI_BUILT)
  console.warn(`CLI tests skipped: ${CLI_BIN} is missing — run \`npm run build\` (npm test does).`);

/** What one run printed and how it ended. */
export interface CLIRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `ax-mcp <args>` to its end (killed, and failed, after `timeoutMs`); colours off by default. */
export function runCLI(
  args: readonly string[],
  timeoutMs = 30_000,
  env: NodeJS.ProcessEnv = { NO_COLOR: '1' },
): Promise<CLIRun> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [CLI_BIN, ...args], { env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      fail(new Error(`ax-mcp ${args.join(' ')} did not finish: ${stdout}${stderr}`));
    }, timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      done({ code, stdout, stderr });
    });
  });
}
