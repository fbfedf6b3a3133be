/**
 * The table-driven options tests of every layer check a refusal the same way: this is that one
 * check, and the loopback server that proves nothing was sent.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'vitest';

/** A wrong configuration and what its refusal must say. */
export interface OptionsRefusal {
  /** Where the first problem is, as the user writes it. */
  path: string;
  /** The nearest known name, for a misspelled key. */
  suggestion?: string | undefined;
  /** Something else the message must say. */
  message?: RegExp | string | undefined;
}

/** What `run` threw or rejected with; fails the test when it returned. */
export async function refusalOf(run: () => unknown): Promise<unknown> {
  let built: unknown;
  try {
    built = await run();
  } catch (error) {
    return error;
  }
  throw new Error(`expected a refusal, but it built ${Object.prototype.toString.call(built)}`);
}

/**
 * A typed `invalid_options` refusal of class `errorClass` with the expected path and
 * suggestion, naming both in its message, and carrying no secret that matches `secrets`.
 */
export function expectRefusal(
  error: unknown,
  errorClass: abstract new (...args: never[]) => Error,
  expected: OptionsRefusal,
  secrets?: RegExp,
): void {
  expect(error).toBeInstanceOf(errorClass);
  const typed = error as Error & {
    code: string;
    path?: string;
    suggestion?: string;
    issues?: { path: string }[];
  };
  expect(typed.code).toBe('invalid_options');
  expect(typed.path).toBe(expected.path);
  expect(typed.suggestion).toBe(expected.suggestion);
  expect(typed.issues?.[0]?.path).toBe(expected.path);
  if (expected.suggestion !== undefined)
    expect(typed.message).toContain(`did you mean ${expected.suggestion}?`);
  if (typeof expected.message === 'string') expect(typed.message).toContain(expected.message);
  else if (expected.message) expect(typed.message).toMatch(expected.message);
  if (secrets) expect(typed.message).not.toMatch(secrets);
}

/** An HTTP server on 127.0.0.1 that answers every request with an empty JSON-RPC result, and counts them. */
export async function countingServer(): Promise<{ url: string; requests(): number; close(): Promise<void> }> {
  let requests = 0;
  const server = http.createServer((request, response) => {
    requests++;
    request.resume();
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ jsonrpc: '2.0', id: 1, result: {} }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    requests: () => requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
