/**
 * Input plans: which fields of an event become a target's input. Raw event data stays in
 * the event context; only the selected fields reach the target, validated against the
 * target's declared input fields.
 */

import { AxEventInputError } from './errors.js';
import { cloneJson, isUnsafeKey } from './json.js';
import { type AxEventPath, type AxEventPathView, isEventPath, resolveEventPath } from './path.js';

/** The value type a declared input field accepts. `json` accepts any JSON value. */
export type AxEventInputFieldType = 'string' | 'number' | 'integer' | 'boolean' | 'object' | 'array' | 'json';

/** A declared input field of a target (a program's input signature, reduced to what the runtime checks). */
export interface AxEventInputField {
  name: string;
  /** Default `json`. */
  type?: AxEventInputFieldType;
  /** An optional field may be absent; a required one must be present. */
  optional?: boolean;
  description?: string;
}

/** One step of an input plan. */
export type AxEventInputStep =
  | { readonly kind: 'project'; readonly path: AxEventPath }
  | { readonly kind: 'field'; readonly name: string; readonly path: AxEventPath };

/**
 * A plan that maps an event to a target's input: `project(path)` copies the fields of the
 * object at `path` whose names the target declares (all safe names when it declares
 * none); `field(name, path)` sets one field and wins over projections.
 */
export class AxEventInputPlan {
  readonly #steps: AxEventInputStep[] = [];
  readonly #names = new Set<string>();

  /** Copy the matching fields of the object at `path`. */
  project(path: AxEventPath): this {
    if (!isEventPath(path)) throw new AxEventInputError('unsafe_path', 'project() takes an eventPath');
    this.#steps.push(Object.freeze({ kind: 'project', path }));
    return this;
  }

  /** Set input field `name` from `path`. A name may be mapped once. */
  field(name: string, path: AxEventPath): this {
    checkFieldName(name);
    if (!isEventPath(path)) throw new AxEventInputError('unsafe_path', `field(${name}) takes an eventPath`);
    if (this.#names.has(name))
      throw new AxEventInputError('invalid_input', `Input field "${name}" is mapped twice`);
    this.#names.add(name);
    this.#steps.push(Object.freeze({ kind: 'field', name, path }));
    return this;
  }

  /** The steps, in order. */
  get steps(): readonly AxEventInputStep[] {
    return this.#steps;
  }
}

/** Start an input plan. */
export function eventInput(): AxEventInputPlan {
  return new AxEventInputPlan();
}

function checkFieldName(name: string): void {
  if (typeof name !== 'string' || name.length === 0 || isUnsafeKey(name)) {
    throw new AxEventInputError('unsafe_path', `Input field name "${String(name)}" is empty or unsafe`);
  }
}

/** Check declared fields once: names safe and unique. Returns them by name. */
export function indexInputFields(fields: readonly AxEventInputField[]): Map<string, AxEventInputField> {
  const byName = new Map<string, AxEventInputField>();
  for (const f of fields) {
    checkFieldName(f.name);
    if (byName.has(f.name))
      throw new AxEventInputError('invalid_input', `Input field "${f.name}" is declared twice`);
    byName.set(f.name, f);
  }
  return byName;
}

function typeMatches(type: AxEventInputFieldType, v: unknown): boolean {
  switch (type) {
    case 'string':
      return typeof v === 'string';
    case 'number':
      return typeof v === 'number' && Number.isFinite(v);
    case 'integer':
      return typeof v === 'number' && Number.isSafeInteger(v);
    case 'boolean':
      return typeof v === 'boolean';
    case 'object':
      return v !== null && typeof v === 'object' && !Array.isArray(v);
    case 'array':
      return Array.isArray(v);
    case 'json':
      return true;
  }
}

/**
 * Validate a candidate input against declared fields: required fields present, types
 * right. With `dropUnknown` extra fields are removed, otherwise they throw. Without
 * declared fields every safe field is kept. Returns a fresh object of cloned values.
 */
export function validateInput(
  candidate: Readonly<Record<string, unknown>>,
  fields: Map<string, AxEventInputField> | undefined,
  options: { dropUnknown: boolean },
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const name of Object.keys(candidate)) {
    const value = candidate[name];
    if (value === undefined || isUnsafeKey(name)) continue;
    const field = fields?.get(name);
    if (fields && !field) {
      if (options.dropUnknown) continue;
      throw new AxEventInputError('invalid_input', `Input field "${name}" is not declared by the target`);
    }
    if (field && !typeMatches(field.type ?? 'json', value)) {
      throw new AxEventInputError('invalid_input', `Input field "${name}" is not of type ${field.type}`);
    }
    out[name] = cloneJson(value);
  }
  if (fields) {
    for (const field of fields.values()) {
      if (!field.optional && out[field.name] === undefined) {
        throw new AxEventInputError('invalid_input', `Required input field "${field.name}" is missing`);
      }
    }
  }
  return out;
}

/** Run an input plan against an event view and validate the result. */
export function applyInputPlan(
  plan: AxEventInputPlan,
  view: AxEventPathView,
  fields: Map<string, AxEventInputField> | undefined,
): Record<string, unknown> {
  const candidate = new Map<string, unknown>();
  for (const step of plan.steps) {
    if (step.kind !== 'project') continue;
    const source = resolveEventPath(step.path, view);
    if (source === undefined) continue;
    if (source === null || typeof source !== 'object' || Array.isArray(source)) {
      throw new AxEventInputError('invalid_input', `project(${step.path.text}) does not select an object`);
    }
    const names = fields ? [...fields.keys()] : Object.keys(source);
    for (const name of names) {
      if (isUnsafeKey(name) || !Object.hasOwn(source, name)) continue;
      candidate.set(name, (source as Record<string, unknown>)[name]);
    }
  }
  for (const step of plan.steps) {
    if (step.kind !== 'field') continue;
    const value = resolveEventPath(step.path, view);
    if (value !== undefined) candidate.set(step.name, value);
  }
  return validateInput(Object.fromEntries(candidate), fields, { dropUnknown: false });
}
