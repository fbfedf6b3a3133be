import { describe, expect, it } from 'vitest';
import { JSONObjectStream } from './json-stream.js';

function run(chunks: string[]) {
  const strings = new Map<string, string>();
  const deltas: [string, string][] = [];
  const values: [string, unknown][] = [];
  const stream = new JSONObjectStream({
    onStringDelta: (key, delta) => {
      deltas.push([key, delta]);
      strings.set(key, (strings.get(key) ?? '') + delta);
    },
    onValue: (key, value) => values.push([key, value]),
  });
  for (const chunk of chunks) stream.write(chunk);
  return { strings, deltas, values, done: stream.done };
}

describe('JSONObjectStream', () => {
  it('streams string fields piece by piece and reports other values whole', () => {
    const text =
      '```json\n{"answer": "Hello \\"world\\" \\u00e9\\n", "n": 42, "list": [1, {"a": "}"}], "ok": true}';
    const whole = JSON.parse(text.slice(text.indexOf('{')));
    for (const size of [1, 2, 5, 100]) {
      const chunks: string[] = [];
      for (let i = 0; i < text.length; i += size) chunks.push(text.slice(i, i + size));
      const result = run(chunks);
      expect(result.strings.get('answer')).toBe(whole.answer);
      expect(result.values).toEqual([
        ['n', 42],
        ['list', [1, { a: '}' }]],
        ['ok', true],
      ]);
      expect(result.done).toBe(true);
    }
    expect(run([text]).deltas.length).toBe(1);
    expect(run(text.split('')).deltas.length).toBeGreaterThan(10);
  });

  it('ignores what follows the object and tolerates an unfinished one', () => {
    const result = run(['{"a":"x"} trailing {"b":"y"}']);
    expect([...result.strings.keys()]).toEqual(['a']);
    const partial = run(['{"a":"inco']);
    expect(partial.strings.get('a')).toBe('inco');
    expect(partial.done).toBe(false);
  });
});
