import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

// The API reference (`npm run docs` builds it with TypeDoc) is part of the documentation: a
// `{@link}` to something users cannot see, or two conflicting comments on one merged
// interface, rendered as a dead reference or an arbitrary comment, and the build still
// succeeded. typedoc.json treats every warning as an error; this runs the same check.
const root = fileURLToPath(new URL('..', import.meta.url));

it('builds the API reference with no warning', async () => {
  const { code, output } = await new Promise<{ code: number | null; output: string }>((resolve) => {
    execFile(
      process.execPath,
      ['node_modules/typedoc/bin/typedoc', '--emit', 'none'],
      { cwd: root, timeout: 170_000, env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' } },
      (error, stdout, stderr) => {
        const exit = error ? (typeof error.code === 'number' ? error.code : null) : 0;
        resolve({ code: exit, output: stdout + stderr });
      },
    );
  });
  expect(output).not.toMatch(/\[(warning|error)\]/);
  expect(code, output).toBe(0);
}, 180_000);
