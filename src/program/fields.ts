/**
 * What a signature's fields mean at run time: JSON Schemas for structured outputs,
 * validation of inputs, and reading the model's answer into typed outputs.
 */
import type { AxEventInputField } from '../events/input.js';
import { AxProgramError } from './errors.js';
import type { AxField } from './signature.js';

/** The JSON Schema of one field's value. With `nullable`, `null` stands for "absent". */
export function fieldSchema(field: AxField, nullable = false): Record<string, unknown> {
  const item: Record<string, unknown> = scalarSchema(field);
  let schema: Record<string, unknown> = field.isArray ? { type: 'array', items: item } : item;
  if (nullable) {
    if (typeof schema.type === 'string') schema = { ...schema, type: [schema.type, 'null'] };
    else schema = { anyOf: [schema, { type: 'null' }] };
    if (Array.isArray(schema.enum)) schema.enum = [...schema.enum, null];
  }
  if (field.description !== undefined) schema.description = field.description;
  return schema;
}

function scalarSchema(field: AxField): Record<string, unknown> {
  switch (field.type) {
    case 'string':
      return { type: 'string' };
    case 'number':
      return { type: 'number' };
    case 'boolean':
      return { type: 'boolean' };
    case 'class':
      return { type: 'string', enum: [...(field.options ?? [])] };
    case 'json':
      return {};
  }
}

/** Whether the provider's strict schema subset can express these fields (no free-form `json`). */
export function strictCompatible(fields: readonly AxField[]): boolean {
  return fields.every((field) => field.type !== 'json');
}

/**
 * The JSON Schema of an object with these fields. In strict mode every property is
 * required and optional ones accept `null`, as strict structured outputs demand.
 */
export function objectSchema(fields: readonly AxField[], strict: boolean): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  for (const field of fields) properties[field.name] = fieldSchema(field, strict && field.optional);
  return {
    type: 'object',
    properties,
    required: fields.filter((field) => strict || !field.optional).map((field) => field.name),
    additionalProperties: false,
  };
}

/** The fields as the event runtime's declared input fields. */
export function eventInputFields(fields: readonly AxField[]): AxEventInputField[] {
  return fields.map((field) => ({
    name: field.name,
    type: field.isArray ? 'array' : field.type === 'class' ? 'string' : field.type,
    optional: field.optional,
    ...(field.description === undefined ? {} : { description: field.description }),
  }));
}

/** Checks inputs against the input fields; returns a fresh object of the declared fields. */
export function validateInputs(fields: readonly AxField[], values: unknown): Record<string, unknown> {
  if (typeof values !== 'object' || values === null || Array.isArray(values)) {
    throw new AxProgramError('invalid_input', 'Inputs must be an object');
  }
  const record = values as Record<string, unknown>;
  const problems: string[] = [];
  const out: Record<string, unknown> = {};
  const known = new Set(fields.map((field) => field.name));
  for (const key of Object.keys(record)) {
    if (!known.has(key)) problems.push(`"${key.slice(0, 60)}" is not an input field`);
  }
  for (const field of fields) {
    const value = Object.hasOwn(record, field.name) ? record[field.name] : undefined;
    if (value === undefined || value === null) {
      if (!field.optional) problems.push(`"${field.name}" is required`);
      continue;
    }
    const problem = valueProblem(field, value);
    if (problem) problems.push(`"${field.name}" ${problem}`);
    else out[field.name] = value;
  }
  if (problems.length > 0)
    throw new AxProgramError('invalid_input', `Invalid inputs: ${problems.join('; ')}`);
  return out;
}

/** The outcome of reading a model's answer. */
export type AxOutputReading =
  | { ok: true; value: Record<string, unknown> }
  | { ok: false; problems: string[] };

/**
 * Reads the model's final text as the output fields: a JSON object (fences and text around
 * it are tolerated). `null` means absent; numbers and booleans written as strings are accepted;
 * unknown keys are dropped.
 */
export function readOutputs(fields: readonly AxField[], text: string): AxOutputReading {
  const parsed = parseJSONObject(text);
  if (parsed === undefined) return { ok: false, problems: ['the answer is not a JSON object'] };
  const problems: string[] = [];
  const value: Record<string, unknown> = {};
  for (const field of fields) {
    let entry = Object.hasOwn(parsed, field.name) ? parsed[field.name] : undefined;
    if (entry === undefined || entry === null) {
      if (!field.optional) problems.push(`"${field.name}" is missing`);
      continue;
    }
    entry = coerce(field, entry);
    const problem = valueProblem(field, entry);
    if (problem) problems.push(`"${field.name}" ${problem}`);
    else value[field.name] = entry;
  }
  return problems.length > 0 ? { ok: false, problems } : { ok: true, value };
}

/** The first JSON object in `text`, or `undefined`. */
export function parseJSONObject(text: string): Record<string, unknown> | undefined {
  const start = text.indexOf('{');
  const end = text.lastIndexOf('}');
  if (start < 0 || end < start) return undefined;
  try {
    const value: unknown = JSON.parse(text.slice(start, end + 1));
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

function coerce(field: AxField, value: unknown): unknown {
  if (field.isArray) return Array.isArray(value) ? value.map((item) => coerceScalar(field, item)) : value;
  return coerceScalar(field, value);
}

function coerceScalar(field: AxField, value: unknown): unknown {
  if (typeof value !== 'string') return value;
  if (field.type === 'number' && value.trim() !== '' && Number.isFinite(Number(value))) return Number(value);
  if (field.type === 'boolean' && (value === 'true' || value === 'false')) return value === 'true';
  if (field.type === 'class') return value.trim();
  return value;
}

function valueProblem(field: AxField, value: unknown): string | undefined {
  if (field.isArray) {
    if (!Array.isArray(value)) return 'must be an array';
    for (const [index, item] of value.entries()) {
      const problem = scalarProblem(field, item);
      if (problem) return `[${index}] ${problem}`;
    }
    return undefined;
  }
  return scalarProblem(field, value);
}

function scalarProblem(field: AxField, value: unknown): string | undefined {
  switch (field.type) {
    case 'string':
      return typeof value === 'string' ? undefined : 'must be a string';
    case 'number':
      return typeof value === 'number' && Number.isFinite(value) ? undefined : 'must be a finite number';
    case 'boolean':
      return typeof value === 'boolean' ? undefined : 'must be true or false';
    case 'class':
      return typeof value === 'string' && field.options?.includes(value)
        ? undefined
        : `must be one of ${(field.options ?? []).map((option) => JSON.stringify(option)).join(', ')}`;
    case 'json':
      return jsonProblem(value);
  }
}

function jsonProblem(value: unknown, depth = 0): string | undefined {
  if (depth > 64) return 'is nested too deeply';
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return undefined;
  if (typeof value === 'number') return Number.isFinite(value) ? undefined : 'must be JSON';
  if (Array.isArray(value)) {
    for (const item of value) {
      const problem = jsonProblem(item, depth + 1);
      if (problem) return problem;
    }
    return undefined;
  }
  if (typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    for (const item of Object.values(value)) {
      const problem = jsonProblem(item, depth + 1);
      if (problem) return problem;
    }
    return undefined;
  }
  return 'must be JSON';
}
