import { describe, expect, it } from 'vitest';
import type { AxMCPCallToolResult, AxMCPTool } from '../protocol/messages.js';
import { AxMCPToolOutputError, checkToolOutput, patternProblem } from './output-schema.js';

function tool(outputSchema: unknown): AxMCPTool {
  return { name: 't', inputSchema: { type: 'object' }, outputSchema } as AxMCPTool;
}

function failure(t: AxMCPTool, result: AxMCPCallToolResult): AxMCPToolOutputError | undefined {
  try {
    checkToolOutput(t, result, { namespace: 'ns' });
  } catch (error) {
    if (error instanceof AxMCPToolOutputError) return error;
    throw error;
  }
  return undefined;
}

describe('outputSchema checks', () => {
  const object = tool({
    type: 'object',
    properties: { sku: { type: 'string' }, total: { type: 'number' } },
    required: ['sku', 'total'],
  });

  it('passes a fitting result and an error result, and any JSON value against a fitting schema', () => {
    expect(failure(object, { content: [], structuredContent: { sku: 'a', total: 1 } })).toBeUndefined();
    expect(failure(object, { content: [], isError: true })).toBeUndefined();
    expect(
      failure(tool({ type: 'array', items: { type: 'number' } }), { content: [], structuredContent: [1, 2] }),
    ).toBeUndefined();
    expect(failure(tool({ type: 'integer' }), { content: [], structuredContent: 42 })).toBeUndefined();
    expect(failure(tool(undefined), { content: [], structuredContent: 'free' })).toBeUndefined();
  });

  it('a mismatch is output_schema_mismatch with the raw result and where it failed', () => {
    const result = { content: [{ type: 'text', text: 'x' }], structuredContent: { sku: 'a', total: 'many' } };
    const error = failure(object, result);
    expect(error?.code).toBe('output_schema_mismatch');
    expect(error?.result).toBe(result);
    expect(error?.namespace).toBe('ns');
    expect(error?.issues.some((issue) => issue.instanceLocation === '#/total')).toBe(true);
    expect(error?.message).toContain('#/total');
  });

  it('a declared schema with no structuredContent is a mismatch', () => {
    expect(failure(object, { content: [{ type: 'text', text: 'x' }] })?.code).toBe('output_schema_mismatch');
  });

  it('2020-12 keywords apply ($defs, prefixItems)', () => {
    const t = tool({
      $defs: { n: { type: 'number' } },
      type: 'array',
      prefixItems: [{ type: 'string' }, { $ref: '#/$defs/n' }],
    });
    expect(failure(t, { content: [], structuredContent: ['a', 1] })).toBeUndefined();
    expect(failure(t, { content: [], structuredContent: ['a', 'b'] })?.code).toBe('output_schema_mismatch');
  });

  it('unbounded schemas are refused as invalid_output_schema, quickly, with the result kept', () => {
    const cases: unknown[] = [
      { $ref: '#' },
      { type: 'string', pattern: '^(a+)+$' },
      { type: 'object', patternProperties: { '^(\\w+\\s?)*$': { type: 'string' } } },
      { type: 'string', pattern: '(a|aa)*b' },
      { type: 'string', pattern: '^(x)\\1$' },
      JSON.parse(`${'{"items":'.repeat(100)}{}${'}'.repeat(100)}`),
      { enum: Array.from({ length: 30_000 }, (_, i) => `value-${i}`) },
    ];
    for (const schema of cases) {
      const started = Date.now();
      const result = { content: [], structuredContent: 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!' };
      const error = failure(tool(schema), result);
      expect(error?.code, JSON.stringify(schema).slice(0, 80)).toBe('invalid_output_schema');
      expect(error?.result).toBe(result);
      expect(Date.now() - started).toBeLessThan(2_000);
    }
  });

  it('a deeply nested result is refused before validation', () => {
    const deep = JSON.parse(`${'['.repeat(1_000)}${']'.repeat(1_000)}`);
    expect(failure(tool({ type: 'array' }), { content: [], structuredContent: deep })?.code).toBe(
      'invalid_output_schema',
    );
  });

  it('common safe patterns pass; ambiguous repetition does not', () => {
    for (const safe of [
      '^[a-z]+(-[a-z]+)*$',
      '^(\\d{1,3}\\.){3}\\d{1,3}$',
      '^\\w+$',
      '^(https?|ftp)://',
      '^[A-Z]{2}(\\.\\d+)*$',
      '(?:-[a-z]+)*',
    ])
      expect(patternProblem(safe), safe).toBeUndefined();
    for (const bad of ['(a+)+', '(a*)*', '(?:\\s*,\\s*\\w+)*', '((a+)b)*', '(a|b)+', '(.*a){1,}', '(x+x+)+y'])
      expect(patternProblem(bad), bad).toBeDefined();
  });
});
