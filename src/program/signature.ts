/**
 * Signatures: `'"Answers questions" question:string "the question" -> answer:string, sources?:string[]'`.
 * A leading quoted string describes the program; each field is `name`, `?` when optional,
 * `:type` (default `string`) and a quoted description. Types: `string`, `number`,
 * `boolean`, `json`, `class "a, b, c"` (one of the listed values), and arrays of each
 * (`string[]`, `class[] "a, b"`). A malformed signature throws {@link AxSignatureError}
 * with the position of the problem.
 */
import { AxSignatureError } from './errors.js';

/** The value type of a field. */
export type AxFieldType = 'string' | 'number' | 'boolean' | 'json' | 'class';

/** One input or output field of a signature. */
export interface AxField {
  readonly name: string;
  readonly type: AxFieldType;
  /** `string[]` and friends. */
  readonly isArray: boolean;
  /** Declared with `?`: may be absent. */
  readonly optional: boolean;
  readonly description?: string;
  /** The allowed values of a `class` field. */
  readonly options?: readonly string[];
}

const TYPES = new Set<string>(['string', 'number', 'boolean', 'json', 'class']);
const UNSAFE_NAMES = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * A parsed signature: description, input fields and output fields.
 *
 * @example
 * ```ts
 * const signature = new AxSignature('question:string -> answer:string, confidence:number');
 * signature.outputs.map((field) => field.name); // ['answer', 'confidence']
 * ```
 */
export class AxSignature {
  /** What the program does, from the leading quoted string. */
  readonly description: string | undefined;
  readonly inputs: readonly AxField[];
  readonly outputs: readonly AxField[];

  constructor(text: string) {
    if (typeof text !== 'string') throw new AxSignatureError(String(text), 0, 'a signature is a string');
    const parsed = new Parser(text).signature();
    this.description = parsed.description;
    this.inputs = Object.freeze(parsed.inputs.map((field) => Object.freeze(field)));
    this.outputs = Object.freeze(parsed.outputs.map((field) => Object.freeze(field)));
  }

  /** The signature in canonical form. */
  toString(): string {
    const head = this.description === undefined ? '' : `${quote(this.description)} `;
    return `${head}${this.inputs.map(fieldText).join(', ')} -> ${this.outputs.map(fieldText).join(', ')}`;
  }
}

/** One field in signature syntax (`name?:type "description"`). */
export function fieldText(field: AxField): string {
  const type = `${field.type}${field.isArray ? '[]' : ''}`;
  const options = field.options ? ` ${quote(field.options.join(', '))}` : '';
  const description = field.description === undefined ? '' : ` ${quote(field.description)}`;
  return `${field.name}${field.optional ? '?' : ''}:${type}${options}${description}`;
}

function quote(text: string): string {
  return `"${text.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

interface Parsed {
  description: string | undefined;
  inputs: AxField[];
  outputs: AxField[];
}

/** A recursive-descent parser that reports the offset of the first problem. */
class Parser {
  #pos = 0;
  readonly #text: string;
  readonly #names = new Map<string, number>();

  constructor(text: string) {
    this.#text = text;
  }

  signature(): Parsed {
    this.#space();
    let description: string | undefined;
    if (this.#peek() === '"') {
      description = this.#string('the program description');
      this.#space();
    }
    if (this.#text.startsWith('->', this.#pos)) this.#fail('expected at least one input field before "->"');
    const inputs = this.#fields('input');
    this.#space();
    if (!this.#text.startsWith('->', this.#pos)) {
      this.#fail(
        this.#atEnd() ? 'expected "->" and output fields' : `expected "," or "->", found ${this.#found()}`,
      );
    }
    this.#pos += 2;
    this.#space();
    if (this.#atEnd()) this.#fail('expected at least one output field after "->"');
    const outputs = this.#fields('output');
    this.#space();
    if (!this.#atEnd()) {
      this.#fail(
        this.#text.startsWith('->', this.#pos)
          ? 'a signature has only one "->"'
          : `expected "," or the end, found ${this.#found()}`,
      );
    }
    return { description, inputs, outputs };
  }

  #fields(side: 'input' | 'output'): AxField[] {
    const fields = [this.#field(side)];
    for (;;) {
      this.#space();
      if (this.#peek() !== ',') return fields;
      this.#pos++;
      this.#space();
      fields.push(this.#field(side));
    }
  }

  #field(side: 'input' | 'output'): AxField {
    const start = this.#pos;
    const name = this.#identifier(`an ${side} field name`);
    if (UNSAFE_NAMES.has(name)) this.#fail(`"${name}" cannot be a field name`, start);
    const previous = this.#names.get(name);
    if (previous !== undefined)
      this.#fail(`the field "${name}" is declared twice (first at position ${previous})`, start);
    this.#names.set(name, start);
    let optional = false;
    if (this.#peek() === '?') {
      optional = true;
      this.#pos++;
    }
    this.#space();
    let type: AxFieldType = 'string';
    let isArray = false;
    let options: string[] | undefined;
    if (this.#peek() === ':') {
      this.#pos++;
      this.#space();
      const typeStart = this.#pos;
      const word = this.#identifier('a type');
      if (!TYPES.has(word)) {
        this.#fail(`unknown type "${word}" (use string, number, boolean, json or class "a, b")`, typeStart);
      }
      type = word as AxFieldType;
      if (this.#text.startsWith('[]', this.#pos)) {
        isArray = true;
        this.#pos += 2;
      }
      if (type === 'class') {
        this.#space();
        if (this.#peek() !== '"') this.#fail('a class field lists its values in quotes: class "a, b"');
        const listStart = this.#pos;
        options = this.#classOptions(this.#string('the class values'), listStart);
      }
    }
    this.#space();
    let description: string | undefined;
    if (this.#peek() === '"') description = this.#string(`the description of "${name}"`);
    const field: AxField = {
      name,
      type,
      isArray,
      optional,
      ...(description === undefined ? {} : { description }),
      ...(options === undefined ? {} : { options: Object.freeze(options) as string[] }),
    };
    return field;
  }

  #classOptions(list: string, at: number): string[] {
    const options = list.split(',').map((value) => value.trim());
    if (options.some((value) => value === '')) this.#fail('a class value is empty', at);
    if (new Set(options).size !== options.length) this.#fail('a class value is listed twice', at);
    return options;
  }

  #identifier(what: string): string {
    const match = /^[A-Za-z_][A-Za-z0-9_]*/.exec(this.#text.slice(this.#pos));
    if (!match) this.#fail(`expected ${what}, found ${this.#found()}`);
    this.#pos += (match as RegExpExecArray)[0].length;
    return (match as RegExpExecArray)[0];
  }

  #string(what: string): string {
    const start = this.#pos;
    this.#pos++;
    let value = '';
    while (!this.#atEnd()) {
      const char = this.#text[this.#pos] as string;
      if (char === '\\' && this.#pos + 1 < this.#text.length) {
        value += this.#text[this.#pos + 1];
        this.#pos += 2;
        continue;
      }
      this.#pos++;
      if (char === '"') {
        if (value.trim() === '') this.#fail(`${what} is empty`, start);
        return value;
      }
      value += char;
    }
    return this.#fail(`${what} has no closing quote`, start);
  }

  #space(): void {
    while (!this.#atEnd() && /\s/.test(this.#text[this.#pos] as string)) this.#pos++;
  }

  #peek(): string | undefined {
    return this.#text[this.#pos];
  }

  #atEnd(): boolean {
    return this.#pos >= this.#text.length;
  }

  #found(): string {
    return this.#atEnd() ? 'the end' : JSON.stringify(this.#text.slice(this.#pos, this.#pos + 12));
  }

  #fail(problem: string, at = this.#pos): never {
    throw new AxSignatureError(this.#text, at, problem);
  }
}
