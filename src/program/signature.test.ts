import { describe, expect, expectTypeOf, it } from 'vitest';
import { AxSignatureError } from './errors.js';
import { AxSignature } from './signature.js';
import type { AxSignatureInputs, AxSignatureOutputs } from './signature-types.js';

describe('AxSignature', () => {
  it('parses descriptions, optional fields, types, arrays and classes', () => {
    const signature = new AxSignature(
      '"Sorts mail, politely" mail:string "the mail -> body", urgent?:boolean -> ' +
        'priority:class "low, high" "how urgent", tags:string[], score:number, extra?:json, picks:class[] "a, b"',
    );
    expect(signature.description).toBe('Sorts mail, politely');
    expect(signature.inputs).toEqual([
      { name: 'mail', type: 'string', isArray: false, optional: false, description: 'the mail -> body' },
      { name: 'urgent', type: 'boolean', isArray: false, optional: true },
    ]);
    expect(signature.outputs.map((field) => [field.name, field.type, field.isArray, field.optional])).toEqual(
      [
        ['priority', 'class', false, false],
        ['tags', 'string', true, false],
        ['score', 'number', false, false],
        ['extra', 'json', false, true],
        ['picks', 'class', true, false],
      ],
    );
    expect(signature.outputs[0]).toMatchObject({ options: ['low', 'high'], description: 'how urgent' });
    expect(signature.outputs[4]?.options).toEqual(['a', 'b']);
  });

  it('defaults the type to string and round-trips through toString', () => {
    const signature = new AxSignature('question -> answer "the \\"answer\\""');
    expect(signature.inputs[0]?.type).toBe('string');
    expect(signature.outputs[0]?.description).toBe('the "answer"');
    expect(new AxSignature(signature.toString()).toString()).toBe(signature.toString());
  });

  it.each([
    ['', 0, 'input field name'],
    ['-> answer', 0, 'at least one input'],
    ['question:string', 15, '"->"'],
    ['question:string ->', 18, 'at least one output'],
    ['question:strin -> answer', 9, 'unknown type "strin"'],
    ['question:string answer:string', 16, 'expected "," or "->"'],
    ['q -> a, a:number', 8, 'declared twice'],
    ['q -> q', 5, 'declared twice'],
    ['q -> a:class', 12, 'class field lists its values'],
    ['q -> a:class "x, , y"', 13, 'class value is empty'],
    ['q -> a "unclosed', 7, 'no closing quote'],
    ['q -> a -> b', 7, 'only one "->"'],
    ['__proto__ -> a', 0, 'cannot be a field name'],
    ['q, 9lives -> a', 3, 'expected an input field name'],
  ])('rejects %j at position %i', (text, position, problem) => {
    let caught: unknown;
    try {
      new AxSignature(text);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(AxSignatureError);
    expect(caught).toMatchObject({ code: 'invalid_signature', position });
    expect((caught as Error).message).toContain(problem);
  });

  it('types inputs and outputs from a literal', () => {
    type S =
      '"d, x" question:string "q: why, now", n?:number -> answer:string, tags:string[], mood:class "happy, sad" "a, b", data?:json';
    expectTypeOf<AxSignatureInputs<S>>().toEqualTypeOf<{ question: string; n?: number }>();
    expectTypeOf<AxSignatureOutputs<S>>().toEqualTypeOf<{
      answer: string;
      tags: string[];
      mood: 'happy' | 'sad';
      data?: unknown;
    }>();
    expectTypeOf<AxSignatureOutputs<string>>().toEqualTypeOf<Record<string, unknown>>();
  });
});
