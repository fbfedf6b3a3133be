import { describe, expect, it } from 'vitest';
import { AxError } from '../errors/ax-error.js';
import { AxUCPResponseError, AxUCPSchemaError, redactCredentials } from './errors.js';

describe('UCP errors', () => {
  const body = {
    id: 'chk_1',
    payment: { instruments: [{ id: 'i1', credential: { type: 'token', token: 'tok_live_secret' } }] },
    buyer: { token: 'tok_2' },
  };

  it('redacts payment credentials anywhere in a body', () => {
    const text = JSON.stringify(redactCredentials(body));
    expect(text).not.toContain('tok_');
    expect(text).toContain('"credential":"[redacted]"');
    expect(text).toContain('"id":"chk_1"');
  });

  it('keeps bodies out of toJSON and enumeration, redacted even when read', () => {
    const schema = new AxUCPSchemaError(
      'bad',
      [{ instanceLocation: '#', keyword: 'required', message: 'x' }],
      body,
      {
        namespace: 'shop',
        operation: 'checkout.complete',
      },
    );
    const refused = new AxUCPResponseError('http_status', 'no', { status: 402, body }, { namespace: 'shop' });
    for (const error of [schema, refused]) {
      expect(error).toBeInstanceOf(AxError);
      expect(JSON.stringify(error)).not.toContain('tok_');
      expect(Object.keys(error)).not.toContain('body');
      expect(JSON.stringify((error as { body: unknown }).body)).not.toContain('tok_');
    }
    expect(schema.toJSON()).toMatchObject({
      code: 'schema_violation',
      namespace: 'shop',
      operation: 'checkout.complete',
    });
  });
});
