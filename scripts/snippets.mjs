#!/usr/bin/env node
/**
 * Keeps the code in the documentation identical to the example files it comes from.
 *
 *   node scripts/snippets.mjs --check   fails (exit 1) listing file:line of every JS/TS block that
 *                                       has no snippet marker or differs from its source
 *   node scripts/snippets.mjs --write   rewrites every marked block from its source (unmarked
 *                                       blocks are still reported, and still fail)
 *
 * A backed block is an HTML comment on the line right before its fence:
 *
 *   <!-- snippet: examples/getting-started/first-call.mjs -->        the whole file
 *   <!-- snippet: examples/client/tools.mjs#call -->                 the lines between
 *                                                                    `// #region call` and
 *                                                                    `// #endregion call`
 *
 * The whole file leaves out its header of `// @ts-check` and test directives (`// demo: …`,
 * `// openai: …`, `// requires: …`, `// timeout: …`, `// trigger: …`) and every region marker line. A region leaves
 * out nested region markers and its common indentation. Both collapse runs of blank lines into one,
 * as the formatter does. Sources must be `examples/**\/*.mjs` files, so the docs test runs them.
 *
 * Scanned: README.md, docs/**\/*.md (not the generated docs/api, docs/public, docs/.vitepress) and
 * examples/**\/*.md. Plain node, no dependencies.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
/** Fence languages that must be backed by an example. */
const CODE_LANGUAGES = new Set(['js', 'javascript', 'mjs', 'cjs', 'jsx', 'ts', 'typescript', 'mts', 'tsx']);
const MARKER = /^\s*<!--\s*snippet:\s*(\S+?)\s*-->\s*$/;
const FENCE = /^(\s*)(`{3,}|~{3,})\s*([^\s`]*)[^`]*$/;
const REGION = /^\s*\/\/\s*#(region|endregion)\b\s*(\S*)\s*$/;
const DIRECTIVE = /^\s*\/\/\s*(@ts-check|(demo|openai|requires|timeout|trigger):)/;
const SKIPPED_DIRECTORIES = new Set(['node_modules', '.vitepress', 'api', 'public', 'dist']);

/** The markdown files whose code blocks are checked, relative to the root. */
export function markdownFiles(root = ROOT) {
  const files = existsSync(join(root, 'README.md')) ? ['README.md'] : [];
  for (const top of ['docs', 'examples']) {
    const walk = (directory) => {
      for (const entry of readdirSync(join(root, directory), { withFileTypes: true })) {
        const path = join(directory, entry.name);
        if (entry.isDirectory()) {
          if (!SKIPPED_DIRECTORIES.has(entry.name) && !entry.name.startsWith('.')) walk(path);
        } else if (entry.name.endsWith('.md')) files.push(path);
      }
    };
    if (existsSync(join(root, top))) walk(top);
  }
  return files.sort();
}

/** The code blocks of a markdown text: fence lines, language, indentation and marker. */
export function codeBlocks(text) {
  const lines = text.split('\n');
  const blocks = [];
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i]);
    if (!open) continue;
    const [, indent, fence, language] = open;
    let close = i + 1;
    while (close < lines.length) {
      const candidate = lines[close].trim();
      if (candidate.startsWith(fence) && /^(`+|~+)$/.test(candidate) && candidate[0] === fence[0]) break;
      close++;
    }
    const marker = i > 0 ? MARKER.exec(lines[i - 1]) : null;
    blocks.push({
      open: i,
      close,
      indent,
      language: language.toLowerCase(),
      source: marker ? marker[1] : undefined,
      body: lines
        .slice(i + 1, close)
        .map((line) => (line.startsWith(indent) ? line.slice(indent.length) : line.trimStart())),
    });
    i = close;
  }
  // A marker that no fence follows is a mistake too.
  // (A marker inside a fenced block is text, as in a page that shows how markers are written.)
  const markedLines = new Set(blocks.filter((block) => block.source).map((block) => block.open - 1));
  const inFence = (index) => blocks.some((block) => index > block.open && index < block.close);
  const strayMarkers = [];
  lines.forEach((line, index) => {
    if (MARKER.test(line) && !markedLines.has(index) && !inFence(index)) strayMarkers.push(index);
  });
  return { lines, blocks, strayMarkers };
}

/** The text a marker names, or an error message. */
export function snippetText(reference, root = ROOT) {
  const [path, region, extra] = reference.split('#');
  if (extra !== undefined) return { error: `"${reference}" has more than one #` };
  if (!/^examples\/.+\.mjs$/.test(path)) {
    return { error: `snippet source "${path}" must be an examples/**/*.mjs file (the docs test runs those)` };
  }
  const file = join(root, path);
  if (!existsSync(file)) return { error: `snippet source ${path} does not exist` };
  const lines = readFileSync(file, 'utf8').replace(/\r\n/g, '\n').split('\n');
  let selected;
  if (region === undefined) {
    let start = 0;
    while (start < lines.length && (DIRECTIVE.test(lines[start]) || lines[start].trim() === '')) start++;
    selected = lines.slice(start).filter((line) => !REGION.test(line));
  } else {
    if (!/^[\w-]+$/.test(region)) return { error: `region name "${region}" must be letters, digits, _ or -` };
    const starts = [];
    const ends = [];
    lines.forEach((line, index) => {
      const match = REGION.exec(line);
      if (match?.[2] === region) (match[1] === 'region' ? starts : ends).push(index);
    });
    if (starts.length !== 1 || ends.length !== 1 || ends[0] < starts[0]) {
      return {
        error: `${path} needs exactly one "// #region ${region}" followed by one "// #endregion ${region}" (found ${starts.length} and ${ends.length})`,
      };
    }
    selected = lines.slice(starts[0] + 1, ends[0]).filter((line) => !REGION.test(line));
    const indents = selected.filter((line) => line.trim() !== '').map((line) => /^ */.exec(line)[0].length);
    const common = indents.length > 0 ? Math.min(...indents) : 0;
    selected = selected.map((line) => line.slice(Math.min(common, /^ */.exec(line)[0].length)));
  }
  const collapsed = [];
  for (const line of selected.map((candidate) => candidate.trimEnd())) {
    if (line === '' && (collapsed.length === 0 || collapsed.at(-1) === '')) continue;
    collapsed.push(line);
  }
  while (collapsed.at(-1) === '') collapsed.pop();
  if (collapsed.length === 0) return { error: `${reference} is empty` };
  return { lines: collapsed };
}

/**
 * Checks (and with `write`, rewrites) every markdown file. Returns the problems, each
 * `{ file, line, message }` with a 1-based line, and the files it rewrote.
 */
export function runSnippets({ write = false, root = ROOT } = {}) {
  const problems = [];
  const rewritten = [];
  for (const file of markdownFiles(root)) {
    const text = readFileSync(join(root, file), 'utf8');
    const { lines, blocks, strayMarkers } = codeBlocks(text);
    for (const index of strayMarkers) {
      problems.push({ file, line: index + 1, message: 'snippet marker not followed by a ```js block' });
    }
    let changed = false;
    // Last block first, so earlier line numbers stay valid while rewriting.
    for (const block of [...blocks].reverse()) {
      const code = CODE_LANGUAGES.has(block.language);
      if (!block.source) {
        if (code) {
          problems.push({
            file,
            line: block.open + 1,
            message: `\`\`\`${block.language} block has no <!-- snippet: examples/… --> marker on the line before it`,
          });
        }
        continue;
      }
      if (!code) {
        problems.push({
          file,
          line: block.open + 1,
          message: `snippet marker before a \`\`\`${block.language || '(no language)'} block: use \`\`\`js`,
        });
        continue;
      }
      const snippet = snippetText(block.source, root);
      if (snippet.error) {
        problems.push({ file, line: block.open, message: snippet.error });
        continue;
      }
      const same = block.language === 'js' && snippet.lines.join('\n') === block.body.join('\n');
      if (same) continue;
      if (write) {
        const fence = lines[block.open].replace(/^(\s*)(`{3,}|~{3,})\s*[^\s`]*/, '$1$2js');
        const body = snippet.lines.map((line) => (line === '' ? '' : block.indent + line));
        lines.splice(block.open, block.close - block.open, fence, ...body);
        changed = true;
      } else {
        problems.push({
          file,
          line: block.open + 1,
          message:
            block.language === 'js'
              ? `block differs from ${block.source} (run npm run docs:snippets:write)`
              : `use \`\`\`js for the block from ${block.source}`,
        });
      }
    }
    if (changed) {
      writeFileSync(join(root, file), lines.join('\n'));
      rewritten.push(file);
    }
  }
  problems.sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line);
  return { problems, rewritten };
}

function main(argv) {
  const write = argv.includes('--write');
  const check = argv.includes('--check');
  if (write === check || argv.some((arg) => arg !== '--write' && arg !== '--check')) {
    process.stderr.write('usage: node scripts/snippets.mjs --check | --write\n');
    return 2;
  }
  const { problems, rewritten } = runSnippets({ write });
  for (const file of rewritten) process.stdout.write(`rewrote ${file}\n`);
  for (const problem of problems)
    process.stdout.write(`${problem.file}:${problem.line}: ${problem.message}\n`);
  const files = markdownFiles();
  const backed = files.reduce(
    (count, file) =>
      count +
      codeBlocks(readFileSync(join(ROOT, file), 'utf8')).blocks.filter((block) => block.source).length,
    0,
  );
  if (problems.length > 0) {
    process.stdout.write(`${problems.length} snippet problem(s)\n`);
    return 1;
  }
  process.stdout.write(`${backed} snippets in ${files.length} markdown files match their examples\n`);
  return 0;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = main(process.argv.slice(2));
}
