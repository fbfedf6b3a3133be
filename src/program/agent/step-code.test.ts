import { describe, expect, it } from 'vitest';
import { prepareStep } from './step-code.js';

describe('prepareStep', () => {
  it('exports top-level declarations and lists their names', () => {
    const step = prepareStep(
      'const a = 1;\nlet b = await f()\nvar c\nfunction g() { const inner = 1 }\nasync function h() {}\nclass K {}',
    );
    expect(step.source).toBe(
      'export const a = 1;\nexport let b = await f()\nexport var c\nexport function g() { const inner = 1 }\n' +
        'export async function h() {}\nexport class K {}',
    );
    expect(step.declared).toEqual(['a', 'b', 'c', 'g', 'h', 'K']);
  });

  it('leaves nested declarations, for heads, strings, templates, comments and regexes alone', () => {
    const code = [
      'for (const x of xs) { let y = x }',
      'const s = "const no = 1"; // const nope',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the step's own template literal
      'const t = `a ${ { b: `const q` }.b } const z`',
      '/* let hidden */ const r = /const [}]/g.test(s)',
      'if (ok) { var inner = 2 }',
      'const f = () => { const deep = 1 }',
    ].join('\n');
    const step = prepareStep(code);
    expect(step.declared).toEqual(['s', 't', 'r', 'f']);
    expect(step.source.match(/export /g)).toHaveLength(4);
    expect(step.source).toContain('for (const x of xs)');
    expect(step.source).toContain('"const no = 1"');
  });

  it('does not export continuation lines, repeated names or let used as a name', () => {
    const step = prepareStep('const a =\n  function named() {}\nvar v = 1; var v = 2\nlet = 3');
    expect(step.source).toBe('export const a =\n  function named() {}\nexport var v = 1; var v = 2\nlet = 3');
  });

  it('exports destructuring declarations without listing their names', () => {
    const step = prepareStep('const { a, b } = o\nconst [c] = list');
    expect(step.source).toBe('export const { a, b } = o\nexport const [c] = list');
    expect(step.declared).toEqual([]);
  });

  it('treats a division after a value as division, not a regex', () => {
    const step = prepareStep('const half = total / 2 / 1\nconst next = 1');
    expect(step.declared).toEqual(['half', 'next']);
  });
});
