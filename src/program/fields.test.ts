import { describe, expect, it } from 'vitest';
import { eventInputFields, objectSchema, readOutputs, strictCompatible, validateInputs } from './fields.js';
import { AxSignature } from './signature.js';

const signature = new AxSignature(
  'text:string, n?:number -> label:class "spam, ham", score:number, tags?:string[], ok:boolean, extra?:json',
);

describe('fields', () => {
  it('builds strict schemas: every property required, optional ones nullable', () => {
    const outputs = signature.outputs.filter((field) => field.type !== 'json');
    expect(strictCompatible(outputs)).toBe(true);
    expect(strictCompatible(signature.outputs)).toBe(false);
    expect(objectSchema(outputs, true)).toEqual({
      type: 'object',
      properties: {
        label: { type: 'string', enum: ['spam', 'ham'] },
        score: { type: 'number' },
        tags: { type: ['array', 'null'], items: { type: 'string' } },
        ok: { type: 'boolean' },
      },
      required: ['label', 'score', 'tags', 'ok'],
      additionalProperties: false,
    });
    expect(objectSchema(signature.outputs, false).required).toEqual(['label', 'score', 'ok']);
  });

  it('validates inputs and reports every problem', () => {
    expect(validateInputs(signature.inputs, { text: 'hi', n: 2 })).toEqual({ text: 'hi', n: 2 });
    expect(() => validateInputs(signature.inputs, { n: 'two', other: 1 })).toThrow(
      /"other" is not an input field; "text" is required; "n" must be a finite number/,
    );
    expect(() => validateInputs(signature.inputs, null)).toThrow(/must be an object/);
  });

  it('reads answers: fences, coercion, null as absent, unknown keys dropped', () => {
    const reading = readOutputs(
      signature.outputs,
      'Here:\n```json\n{"label":" ham","score":"0.5","tags":null,"ok":"true","junk":1,"extra":{"a":[1]}}\n```',
    );
    expect(reading).toEqual({ ok: true, value: { label: 'ham', score: 0.5, ok: true, extra: { a: [1] } } });
    expect(readOutputs(signature.outputs, '{"label":"eggs","ok":1}')).toEqual({
      ok: false,
      problems: ['"label" must be one of "spam", "ham"', '"score" is missing', '"ok" must be true or false'],
    });
    expect(readOutputs(signature.outputs, 'no json here')).toEqual({
      ok: false,
      problems: ['the answer is not a JSON object'],
    });
  });

  it('declares input fields for the event runtime', () => {
    expect(eventInputFields(new AxSignature('a:string[], b?:class "x, y", c:json -> d').inputs)).toEqual([
      { name: 'a', type: 'array', optional: false },
      { name: 'b', type: 'string', optional: true },
      { name: 'c', type: 'json', optional: false },
    ]);
  });
});
