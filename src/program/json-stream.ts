/**
 * An incremental reader of the top-level JSON object a model streams as its answer: string
 * fields are reported piece by piece as their characters arrive, other values once they are
 * complete. Linear in the input; text before the first `{` (a code fence) is skipped.
 */

/** Receives what {@link JSONObjectStream} reads. */
export interface JSONObjectStreamHandlers {
  /** More characters of the string value of `key`. */
  onStringDelta(key: string, delta: string): void;
  /** The complete non-string value of `key`. */
  onValue(key: string, value: unknown): void;
}

type State = 'before' | 'key-or-end' | 'key' | 'colon' | 'value' | 'string' | 'raw' | 'done';

const ESCAPES: Record<string, string> = {
  '"': '"',
  '\\': '\\',
  '/': '/',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
};

/** Feed it chunks of text with {@link JSONObjectStream.write}. */
export class JSONObjectStream {
  readonly #handlers: JSONObjectStreamHandlers;
  #state: State = 'before';
  #key = '';
  #escape = false;
  #unicode: string | undefined;
  #raw = '';
  #depth = 0;
  #rawInString = false;
  #rawEscape = false;

  constructor(handlers: JSONObjectStreamHandlers) {
    this.#handlers = handlers;
  }

  /** Whether the object has been read to its closing brace. */
  get done(): boolean {
    return this.#state === 'done';
  }

  write(chunk: string): void {
    let delta = '';
    const flush = () => {
      if (delta !== '') this.#handlers.onStringDelta(this.#key, delta);
      delta = '';
    };
    for (const char of chunk) {
      switch (this.#state) {
        case 'before':
          if (char === '{') this.#state = 'key-or-end';
          break;
        case 'key-or-end':
          if (char === '"') {
            this.#key = '';
            this.#state = 'key';
          } else if (char === '}') this.#state = 'done';
          break;
        case 'key':
          if (this.#escape) {
            this.#key += ESCAPES[char] ?? char;
            this.#escape = false;
          } else if (char === '\\') this.#escape = true;
          else if (char === '"') this.#state = 'colon';
          else this.#key += char;
          break;
        case 'colon':
          if (char === ':') this.#state = 'value';
          break;
        case 'value':
          if (/\s/.test(char)) break;
          if (char === '"') this.#state = 'string';
          else {
            this.#state = 'raw';
            this.#raw = '';
            this.#depth = 0;
            this.#rawInString = false;
            this.#rawEscape = false;
            this.#rawChar(char);
          }
          break;
        case 'string':
          if (this.#unicode !== undefined) {
            this.#unicode += char;
            if (this.#unicode.length === 4) {
              const code = Number.parseInt(this.#unicode, 16);
              if (!Number.isNaN(code)) delta += String.fromCharCode(code);
              this.#unicode = undefined;
            }
          } else if (this.#escape) {
            this.#escape = false;
            if (char === 'u') this.#unicode = '';
            else delta += ESCAPES[char] ?? char;
          } else if (char === '\\') this.#escape = true;
          else if (char === '"') {
            flush();
            this.#state = 'key-or-end';
          } else delta += char;
          break;
        case 'raw':
          this.#rawChar(char);
          break;
        case 'done':
          return;
      }
    }
    if (this.#state === 'string') flush();
  }

  #rawChar(char: string): void {
    if (this.#rawInString) {
      if (this.#rawEscape) this.#rawEscape = false;
      else if (char === '\\') this.#rawEscape = true;
      else if (char === '"') this.#rawInString = false;
      this.#raw += char;
      return;
    }
    if (this.#depth === 0 && (char === ',' || char === '}')) {
      this.#finishRaw();
      this.#state = char === '}' ? 'done' : 'key-or-end';
      return;
    }
    if (char === '"') this.#rawInString = true;
    else if (char === '{' || char === '[') this.#depth++;
    else if (char === '}' || char === ']') this.#depth--;
    this.#raw += char;
  }

  #finishRaw(): void {
    try {
      this.#handlers.onValue(this.#key, JSON.parse(this.#raw));
    } catch {
      // Not a value yet (or never): the final parse of the whole answer decides.
    }
  }
}
