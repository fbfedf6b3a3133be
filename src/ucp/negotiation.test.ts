import { describe, expect, it } from 'vitest';
import { authorityBindingProblem, intersectCapabilities, selectVersion } from './negotiation.js';

describe('authority binding', () => {
  // The table of docs/specification/overview/index.md, "Derivation algorithm".
  const cases: Array<[string, string, boolean]> = [
    ['dev.ucp.shopping.checkout', 'ucp.dev', true],
    ['dev.ucp.shopping.checkout', 'shopping.ucp.dev', true],
    ['com.example.payments.installments', 'example.com', true],
    ['com.example.pay', 'pay.example.com', true],
    ['com.example.pay', 'example.com', true],
    ['com.example.pay', 'evil.example', false],
    ['dev.ucp.shopping.checkout', 'evil.example', false],
    ['com.examplecorp.pay', 'example.com', false],
    ['com.example.pay', 'cdn.example.com', false],
  ];
  it.each(cases)('%s served from %s: %s', (name, host, ok) => {
    expect(authorityBindingProblem(name, `https://${host}/schema.json`) === undefined).toBe(ok);
  });
  it('refuses userinfo tricks, IP literals, single labels and plain http', () => {
    expect(authorityBindingProblem('dev.ucp.x', 'https://ucp.dev@evil.example/x.json')).toBeDefined();
    expect(authorityBindingProblem('dev.ucp.x', 'https://203.0.113.10/x.json')).toBeDefined();
    expect(authorityBindingProblem('localhost.x', 'https://localhost/x.json')).toBeDefined();
    expect(authorityBindingProblem('dev.ucp.x', 'http://ucp.dev/x.json')).toBeDefined();
  });
});

describe('intersection', () => {
  const s = (name: string) => `https://ucp.dev/schemas/${name}.json`;
  it('selects the highest mutual version and prunes orphaned extensions transitively', () => {
    const business = new Map([
      [
        'dev.ucp.shopping.checkout',
        [
          { version: '2026-04-08', schema: s('checkout') },
          { version: '2026-08-25', schema: s('checkout') },
        ],
      ],
      [
        'dev.ucp.shopping.fulfillment',
        [{ version: '2026-08-25', schema: s('f'), extends: 'dev.ucp.shopping.checkout' }],
      ],
      ['dev.ucp.shopping.cart', [{ version: '2026-08-25', schema: s('cart') }]],
      [
        'dev.ucp.shopping.discount',
        [{ version: '2026-08-25', schema: s('d'), extends: ['dev.ucp.shopping.cart'] }],
      ],
      [
        'dev.ucp.shopping.x',
        [{ version: '2026-08-25', schema: s('x'), extends: 'dev.ucp.shopping.discount' }],
      ],
    ]);
    const platform = new Map([
      ['dev.ucp.shopping.checkout', ['2026-04-08']],
      ['dev.ucp.shopping.fulfillment', ['2026-08-25']],
      ['dev.ucp.shopping.discount', ['2026-08-25']],
      ['dev.ucp.shopping.x', ['2026-08-25']],
    ]);
    const { capabilities, rejected } = intersectCapabilities(business, platform);
    expect([...capabilities.keys()].sort()).toEqual([
      'dev.ucp.shopping.checkout',
      'dev.ucp.shopping.fulfillment',
    ]);
    expect(capabilities.get('dev.ucp.shopping.checkout')?.version).toBe('2026-04-08');
    expect(rejected.map((r) => r.name).sort()).toEqual(['dev.ucp.shopping.discount', 'dev.ucp.shopping.x']);
  });
  it('selectVersion picks the latest date both sides list', () => {
    expect(selectVersion(['2026-01-23', '2026-08-25', '2026-04-08'], ['2026-04-08', '2026-01-23'])).toBe(
      '2026-04-08',
    );
    expect(selectVersion(['2026-08-25'], ['2026-01-11'])).toBeUndefined();
  });
});
