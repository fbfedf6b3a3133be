import { describe, expect, it } from 'vitest';
import {
  anyOf,
  array,
  findOptionsProblem,
  func,
  nearest,
  number,
  object,
  oneOf,
  record,
  required,
  string,
} from './check.js';

const SCHEMA = object(
  {
    name: required(string({ nonEmpty: true })),
    mode: oneOf('fast', 'safe'),
    retries: number({ integer: true, min: 0, max: 10 }),
    hooks: object({ before: func(), after: func() }),
    list: array(object({ id: required(string()) })),
    either: anyOf(func(), object({ run: required(func()) })),
    map: record(number()),
  },
  { aliases: { hook: 'hooks' } },
);

function issues(value: unknown) {
  return findOptionsProblem(SCHEMA, value, 'Test options')?.issues ?? [];
}

describe('options check', () => {
  it('accepts a fitting object and undefined optional keys', () => {
    expect(issues({ name: 'a', mode: undefined, retries: 3, either: () => {} })).toEqual([]);
  });

  it('names unknown keys with the nearest known name, aliases first', () => {
    expect(issues({ name: 'a', Mode: 'fast' })).toEqual([
      { path: 'Mode', expected: 'no such option', received: 'a string', suggestion: 'mode' },
    ]);
    expect(issues({ name: 'a', hook: {} })[0]?.suggestion).toBe('hooks');
    expect(issues({ name: 'a', retires: 1 })[0]?.suggestion).toBe('retries');
    expect(issues({ name: 'a', zzzzzz: 1 })[0]?.suggestion).toBeUndefined();
  });

  it('reports missing required keys, wrong types and bounds with paths', () => {
    expect(issues({}).map((i) => i.path)).toEqual(['name']);
    expect(issues({ name: 'a', retries: 11 })[0]).toMatchObject({ path: 'retries', received: '11' });
    expect(issues({ name: 'a', retries: 1.5 })[0]?.path).toBe('retries');
    expect(issues({ name: 'a', hooks: { before: 'x' } })[0]?.path).toBe('hooks.before');
    expect(issues({ name: 'a', list: [{ id: 'x' }, {}] })[0]?.path).toBe('list[1].id');
    expect(issues({ name: 'a', map: { a: 1, b: 'x' } })[0]?.path).toBe('map.b');
  });

  it('suggests the enumeration value and never echoes long or non-enumeration values', () => {
    expect(issues({ name: 'a', mode: 'fsat' })[0]).toMatchObject({
      received: "'fsat'",
      suggestion: "'fast'",
    });
    const secret = 'sk-live-0123456789abcdef0123456789abcdef0123456789';
    const found = issues({ name: secret, mode: secret, retries: secret });
    expect(JSON.stringify(found)).not.toContain(secret);
  });

  it('anyOf reports the deeper issue of the object branch', () => {
    expect(issues({ name: 'a', either: { run: 1 } })[0]?.path).toBe('either.run');
    expect(issues({ name: 'a', either: 3 })[0]).toMatchObject({ path: 'either', received: 'a number' });
  });

  it('refuses prototype keys in records and non-objects at the top', () => {
    const polluted = JSON.parse('{"name":"a","map":{"__proto__":1}}');
    expect(issues(polluted)[0]?.path).toBe('map.__proto__');
    expect(issues(null)[0]).toMatchObject({ path: '(options)', received: 'null' });
    expect(issues([])[0]?.received).toBe('an array');
  });

  it('the message lists the issues with their hints', () => {
    const problem = findOptionsProblem(SCHEMA, { name: 'a', mdoe: 'fast', retries: -1 }, 'Test options');
    expect(problem?.message).toBe(
      'Test options: mdoe is not an option (did you mean mode?); retries: expected an integer ≥ 0 ≤ 10, got -1',
    );
  });

  it('nearest: case, prefix, small edits; nothing when far', () => {
    expect(nearest('authorizeToolcall', ['authorizeToolCall', 'onError'])).toBe('authorizeToolCall');
    expect(nearest('maxStep', ['maxSteps', 'maxTokens'])).toBe('maxSteps');
    expect(nearest('warn', ['warning', 'error'])).toBe('warning');
    expect(nearest('tiemoutMs', ['timeoutMs'])).toBe('timeoutMs');
    expect(nearest('x', ['timeoutMs'])).toBeUndefined();
  });
});
