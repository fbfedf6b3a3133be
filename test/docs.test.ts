/**
 * The documentation cannot rot: (1) every JS/TS block in README.md and docs/ is a snippet of an
 * example file, unchanged (`scripts/snippets.mjs --check`); (2) every example file runs, with
 * plain `node`, against a fresh demo server and a scripted OpenAI-compatible server, and exits 0;
 * (3) every output block the pages show for examples is what they print. The examples import the
 * built package: `npm test` builds before vitest runs.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { documentedOutputs, unprintedLines } from './helpers/documented-output.js';
import {
  built,
  DIST_ENTRY,
  describeRun,
  exampleFiles,
  missingRequirement,
  ROOT,
  readExampleHeader,
  runExample,
} from './helpers/examples.js';

describe('documentation snippets', () => {
  it('every JS/TS block in README.md and docs/ is backed by its example, unchanged', () => {
    const check = spawnSync(process.execPath, [join(ROOT, 'scripts/snippets.mjs'), '--check'], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    expect(check.status, `unbacked or drifted blocks:\n${check.stdout}${check.stderr}`).toBe(0);
  });
});

describe('examples', () => {
  const files = exampleFiles();
  const ran: string[] = [];
  const skipped: string[] = [];
  /** What each example that ran printed, line by line. */
  const printed = new Map<string, string[]>();

  beforeAll(() => {
    if (!built()) {
      throw new Error(
        `${DIST_ENTRY} is missing: the examples import the built package. Run npm run build first.`,
      );
    }
  });
  afterAll(() => {
    for (const line of skipped) console.log(`skipped ${line}`);
    console.log(`ran ${ran.length} examples`);
  });

  it('there are examples, each a checked ES module that imports the package by name', () => {
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) {
      const text = readFileSync(join(ROOT, file), 'utf8');
      expect(text.startsWith('// @ts-check\n'), `${file} must start with // @ts-check`).toBe(true);
      expect(/from '\.\.?\/(\.\.\/)*src\//.test(text), `${file} must import 'ax-mcp', not ../src`).toBe(
        false,
      );
    }
  });

  for (const file of files) {
    const header = readExampleHeader(file);
    const missing = missingRequirement(header);
    if (missing) {
      skipped.push(`${file}: ${missing}`);
      it.skip(`${file} (skipped: ${missing})`, () => {});
      continue;
    }
    it(
      `node ${file} exits 0`,
      async () => {
        const run = await runExample(file);
        expect(run.code, describeRun(run)).toBe(0);
        expect(
          run.openaiPending,
          `${file} left ${run.openaiPending} scripted model replies unused (${run.openaiRequests} requests made)`,
        ).toBe(0);
        ran.push(file);
        printed.set(file, run.stdout.split('\n'));
      },
      header.timeoutMs + 15_000,
    );
  }

  it('every output block the pages show for examples is what they print', () => {
    const outputs = documentedOutputs();
    // The parser found the pages' output blocks (38 when this test was written).
    expect(outputs.length).toBeGreaterThanOrEqual(30);
    const wrong: string[] = [];
    let checked = 0;
    for (const output of outputs) {
      const runs = output.examples.map((file) => printed.get(file));
      if (runs.some((lines) => lines === undefined)) {
        skipped.push(`output block ${output.where}: ${output.examples.join(', ')} did not run here`);
        continue;
      }
      checked++;
      const missing = unprintedLines(output.lines, runs.flat() as string[]);
      if (missing.length > 0) {
        wrong.push(`${output.where} (${output.examples.join(', ')}):\n  ${missing.join('\n  ')}`);
      }
    }
    expect(wrong, `lines the pages show that their examples do not print:\n${wrong.join('\n')}`).toEqual([]);
    expect(checked).toBeGreaterThan(0);
  });
});
