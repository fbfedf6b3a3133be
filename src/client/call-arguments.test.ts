import { describe, expect, it } from 'vitest';
import type { AxMCPTool } from '../protocol/messages.js';
import { assertPromptArguments, assertToolArguments } from './call-arguments.js';

const tool = (inputSchema: Record<string, unknown>): AxMCPTool =>
  ({ name: 'restock', inputSchema: { type: 'object', ...inputSchema } }) as AxMCPTool;
const props = { properties: { sku: { type: 'string' }, quantity: { type: 'number' } } };
const check = (t: AxMCPTool, args: unknown) => () => assertToolArguments(t, args, {});

describe('assertToolArguments', () => {
  it('refuses a near miss of a declared property, unless the schema takes other keys on purpose', () => {
    expect(check(tool(props), { sku: 'a', quantity: 1 })).not.toThrow();
    expect(check(tool(props), { sku: 'a', quantiy: 1 })).toThrow(/did you mean quantity\?/);
    expect(check(tool(props), { sku: 'a', warehouse: 'berlin' })).not.toThrow();
    expect(check(tool({ ...props, additionalProperties: true }), { sku: 'a', quantiy: 1 })).not.toThrow();
    expect(check(tool({ ...props, additionalProperties: {} }), { sku: 'a', quantiy: 1 })).not.toThrow();
    // Keys declared by pattern or in a branch: this check cannot tell, so it says nothing.
    expect(check(tool({ ...props, patternProperties: { '^quantiy$': {} } }), { quantiy: 1 })).not.toThrow();
    expect(check(tool({ ...props, anyOf: [{ properties: { quantiy: {} } }] }), { quantiy: 1 })).not.toThrow();
    // Both spellings given: the near miss is another key, not a typo of the one present.
    expect(check(tool(props), { quantity: 1, quantiy: 1 })).not.toThrow();
  });

  it('refuses any undeclared key of a closed schema, and arguments that are not an object', () => {
    expect(check(tool({ ...props, additionalProperties: false }), { warehouse: 'berlin' })).toThrow(
      '"warehouse" is not an argument of tool "restock" (it takes sku, quantity)',
    );
    expect(check(tool(props), ['a'])).toThrow(/are an object/);
    expect(check(tool({}), { anything: 1 })).not.toThrow();
  });
});

describe('assertPromptArguments', () => {
  const prompt = {
    name: 'greeting',
    arguments: [{ name: 'name', required: true }, { name: 'style' }],
  };
  const check =
    (args: unknown, listed: typeof prompt | 'unlisted' = prompt) =>
    () =>
      assertPromptArguments('greeting', listed === 'unlisted' ? undefined : listed, args, {});

  it('takes the declared strings; refuses other names, other types and a missing required one', () => {
    expect(check({ name: 'Ada', style: 'formal' })).not.toThrow();
    expect(check({ name: 'Ada', stlye: 'formal' })).toThrow(
      '"stlye" is not an argument of prompt "greeting" (it takes name, style): did you mean style?',
    );
    expect(check({ name: 7 })).toThrow(/is a string/);
    expect(check({ style: 'formal' })).toThrow('Prompt "greeting" needs the argument "name"');
  });

  it('leaves names to the server when the catalog does not list the prompt, but not types', () => {
    expect(check({ anything: 'x' }, 'unlisted')).not.toThrow();
    expect(check({ anything: 1 }, 'unlisted')).toThrow(/is a string/);
  });
});
