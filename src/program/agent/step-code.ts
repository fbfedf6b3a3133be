/**
 * Preparing one actor step for the sandbox. A step runs as an ES module, so top-level
 * `await` works; its top-level declarations (`const`, `let`, `var`, `function`, `class`)
 * are prefixed with `export` so the session can carry them into later steps as globals.
 * Only the keyword positions are rewritten: the code is otherwise untouched (line numbers
 * in errors stay right). The scanner knows strings, templates, comments and regular
 * expressions well enough to find statement starts at depth 0; it never evaluates code.
 */

const DECLARATIONS = new Set(['const', 'let', 'var', 'function', 'class', 'async']);
/** Keywords after which a `/` starts a regular expression, not a division. */
const REGEX_AFTER = new Set([
  'return',
  'typeof',
  'instanceof',
  'in',
  'of',
  'new',
  'delete',
  'void',
  'throw',
  'case',
  'do',
  'else',
  'yield',
  'await',
]);

type Token = { kind: 'word'; value: string } | { kind: 'punct'; value: string } | { kind: 'value' };

/** The code of a step, ready to run as a module, and the names it declares at the top level. */
export interface PreparedStep {
  source: string;
  /** Simple names declared at the top level (destructuring patterns are not listed). */
  declared: string[];
}

/** Adds `export` before every top-level declaration of a step. */
export function prepareStep(code: string): PreparedStep {
  const inserts: number[] = [];
  const declared = new Set<string>();
  const scanner = new Scanner(code);
  let previous: Token | undefined;
  let newline = false;
  for (;;) {
    const next = scanner.next();
    if (next === undefined) break;
    const { token, start, depth, lineBreakBefore } = next;
    newline = newline || lineBreakBefore;
    if (
      token.kind === 'word' &&
      depth === 0 &&
      DECLARATIONS.has(token.value) &&
      atStatementStart(previous, newline)
    ) {
      const name = declarationName(code, start, token.value);
      if (name !== null && (name === undefined || !declared.has(name))) {
        inserts.push(start);
        if (name !== undefined) declared.add(name);
      }
    }
    previous = token;
    newline = false;
  }
  let source = code;
  for (const at of inserts.reverse()) source = `${source.slice(0, at)}export ${source.slice(at)}`;
  return { source, declared: [...declared] };
}

function atStatementStart(previous: Token | undefined, newline: boolean): boolean {
  if (previous === undefined) return true;
  if (previous.kind === 'punct') {
    return (
      previous.value === ';' ||
      previous.value === '}' ||
      (newline && (previous.value === ')' || previous.value === ']'))
    );
  }
  if (previous.kind === 'word' && (previous.value === 'export' || previous.value === 'default')) return false;
  return (
    newline && (previous.kind === 'value' || (previous.kind === 'word' && !REGEX_AFTER.has(previous.value)))
  );
}

/**
 * The name a declaration at `start` introduces: a string for `const x`, `function f`,
 * `class C`; `undefined` for patterns; `null` when the word is not a declaration here
 * (`let` used as a name, `async` not followed by `function`).
 */
function declarationName(code: string, start: number, keyword: string): string | undefined | null {
  let rest = code.slice(start + keyword.length);
  if (keyword === 'async') {
    const match = /^[ \t]+function\b/.exec(rest);
    if (!match) return null;
    rest = rest.slice(match[0].length);
    keyword = 'function';
  }
  if (keyword === 'function') rest = rest.replace(/^\s*\*/, '');
  const name = /^\s*([A-Za-z_$][\w$]*)/.exec(rest);
  if (name?.[1] !== undefined) return name[1];
  if (keyword === 'function' || keyword === 'class') return null;
  return /^\s*[[{]/.test(rest) ? undefined : null;
}

interface Scanned {
  token: Token;
  start: number;
  depth: number;
  lineBreakBefore: boolean;
}

/** A tokenizer just precise enough to track nesting depth and statement starts. */
class Scanner {
  readonly #code: string;
  #pos = 0;
  #depth = 0;
  /** Depths at which a template's `${` was opened. */
  readonly #templates: number[] = [];
  #previous: Token | undefined;

  constructor(code: string) {
    this.#code = code;
  }

  next(): Scanned | undefined {
    const code = this.#code;
    let lineBreakBefore = false;
    while (this.#pos < code.length) {
      const start = this.#pos;
      const ch = code[start] as string;
      if (ch === '\n' || ch === '\r' || ch === '\u2028' || ch === '\u2029') {
        lineBreakBefore = true;
        this.#pos++;
      } else if (/\s/.test(ch)) {
        this.#pos++;
      } else if (code.startsWith('//', start)) {
        const end = code.indexOf('\n', start);
        this.#pos = end < 0 ? code.length : end;
      } else if (code.startsWith('/*', start)) {
        const end = code.indexOf('*/', start + 2);
        this.#pos = end < 0 ? code.length : end + 2;
        if (code.slice(start, this.#pos).includes('\n')) lineBreakBefore = true;
      } else {
        const token = this.#token(start);
        this.#previous = token;
        return { token, start, depth: this.#depth, lineBreakBefore };
      }
    }
    return undefined;
  }

  #token(start: number): Token {
    const code = this.#code;
    const ch = code[start] as string;
    if (ch === '"' || ch === "'") {
      this.#pos = skipString(code, start, ch);
      return { kind: 'value' };
    }
    if (ch === '`') {
      this.#pos = this.#template(start + 1);
      return { kind: 'value' };
    }
    const word = /^[A-Za-z_$\\\u00a0-\uffff][\w$\\\u00a0-\uffff]*/.exec(code.slice(start, start + 256));
    if (word) {
      this.#pos = start + word[0].length;
      return { kind: 'word', value: word[0] };
    }
    const number = /^\.?\d[\w.]*/.exec(code.slice(start, start + 256));
    if (number) {
      this.#pos = start + number[0].length;
      return { kind: 'value' };
    }
    if (ch === '/' && this.#regexAllowed()) {
      this.#pos = skipRegex(code, start);
      return { kind: 'value' };
    }
    this.#pos = start + 1;
    if (ch === '(' || ch === '[' || ch === '{') this.#depth++;
    else if (ch === ')' || ch === ']') this.#depth = Math.max(0, this.#depth - 1);
    else if (ch === '}') {
      this.#depth = Math.max(0, this.#depth - 1);
      if (this.#templates.length > 0 && this.#templates.at(-1) === this.#depth) {
        this.#templates.pop();
        this.#pos = this.#template(this.#pos);
        return { kind: 'value' };
      }
    }
    return { kind: 'punct', value: ch };
  }

  /** Scans a template body from `from` to its end or to a `${` (whose depth is recorded). */
  #template(from: number): number {
    const code = this.#code;
    let i = from;
    while (i < code.length) {
      const ch = code[i];
      if (ch === '\\') i += 2;
      else if (ch === '`') return i + 1;
      else if (ch === '$' && code[i + 1] === '{') {
        this.#templates.push(this.#depth);
        this.#depth++;
        return i + 2;
      } else i++;
    }
    return i;
  }

  #regexAllowed(): boolean {
    const previous = this.#previous;
    if (previous === undefined) return true;
    if (previous.kind === 'value') return false;
    if (previous.kind === 'word') return REGEX_AFTER.has(previous.value);
    return previous.value !== ')' && previous.value !== ']' && previous.value !== '}';
  }
}

function skipString(code: string, start: number, quote: string): number {
  let i = start + 1;
  while (i < code.length) {
    const ch = code[i];
    if (ch === '\\') i += 2;
    else if (ch === quote || ch === '\n') return i + 1;
    else i++;
  }
  return i;
}

function skipRegex(code: string, start: number): number {
  let i = start + 1;
  let inClass = false;
  while (i < code.length) {
    const ch = code[i];
    if (ch === '\\') i += 2;
    else if (ch === '\n') return i;
    else if (inClass) {
      if (ch === ']') inClass = false;
      i++;
    } else if (ch === '[') {
      inClass = true;
      i++;
    } else if (ch === '/') {
      i++;
      while (i < code.length && /[a-z]/i.test(code[i] as string)) i++;
      return i;
    } else i++;
  }
  return i;
}
