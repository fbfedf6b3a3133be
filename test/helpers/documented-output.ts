/**
 * The output the documentation shows for its examples: a ```text block right after one or more
 * snippet-backed code blocks (blank lines between) is what those examples print. A block the
 * examples do not print themselves (what a CLI prints while it runs one of them as a module) says
 * so with a marker on the line before it: `<!-- output: npx ax-mcp watch … -->`.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './examples.js';

const SNIPPET = /^\s*<!--\s*snippet:\s*([^\s#]+)(#\S+)?\s*-->\s*$/;
const OUTPUT_MARKER = /^\s*<!--\s*output:/;
const FENCE = /^\s*(`{3,}|~{3,})\s*([^\s`]*)/;

/** One output block of the documentation and the examples whose output it shows. */
export interface DocumentedOutput {
  /** `docs/testing.md:211`: where the block starts. */
  where: string;
  examples: string[];
  lines: string[];
}

function markdownFiles(): string[] {
  const docs = readdirSync(join(ROOT, 'docs'), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.md') && !/(^|\/)(api|public|\.vitepress)\//.test(file))
    .map((file) => `docs/${file}`);
  return ['README.md', ...docs.sort()];
}

/** Every output block in README.md and docs/ that follows snippet-backed code. */
export function documentedOutputs(): DocumentedOutput[] {
  const found: DocumentedOutput[] = [];
  for (const file of markdownFiles()) {
    const lines = readFileSync(join(ROOT, file), 'utf8').split('\n');
    let examples: string[] = [];
    let backed = false; // the next fence has a snippet marker
    let marked = false; // the next fence has an output marker
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i] as string;
      const snippet = SNIPPET.exec(line);
      const fence = FENCE.exec(line);
      if (snippet) {
        if (!examples.includes(snippet[1] as string)) examples.push(snippet[1] as string);
        backed = true;
      } else if (OUTPUT_MARKER.test(line)) {
        marked = true;
      } else if (fence) {
        const end = lines.findIndex((l, j) => j > i && l.trim().startsWith(fence[1] as string));
        const last = end < 0 ? lines.length : end;
        if (fence[2] === 'text' && examples.length > 0 && !marked) {
          found.push({ where: `${file}:${i + 1}`, examples, lines: lines.slice(i + 1, last) });
        }
        // Backed code keeps the run of examples going; an output block or other code ends it.
        if (!backed) examples = [];
        backed = false;
        marked = false;
        i = last;
      } else if (line.trim() !== '') {
        examples = [];
        backed = false;
        marked = false;
      }
    }
  }
  return found;
}

/** What changes from run to run (ids, ports, times) replaced, and spaces collapsed. */
function normalized(line: string): string {
  return line
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, '<uuid>')
    .replace(/(127\.0\.0\.1|localhost|\[::1\]):\d+/g, '<host>')
    .replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/g, '<time>')
    .replace(/\b(?=[0-9a-f]*\d)[0-9a-f]{8,}\b/g, '<hex>')
    .replace(/\s+/g, ' ')
    .trim();
}

/**
 * The documented lines no printed line matches (after {@link normalized}; a `…` in a documented
 * line stands for anything).
 */
export function unprintedLines(documented: readonly string[], printed: readonly string[]): string[] {
  const seen = printed.map(normalized);
  return documented.filter((line) => {
    if (line.trim() === '') return false;
    const parts = normalized(line)
      .split('…')
      .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
    const pattern = new RegExp(`^${parts.join('.*')}$`);
    return !seen.some((candidate) => pattern.test(candidate));
  });
}
