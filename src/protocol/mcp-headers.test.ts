import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AxMCPError, AxMCPProtocolError, RPC } from './errors.js';
import {
  decodeHeaderValue,
  encodeHeaderValue,
  MCP_NAME_SOURCES,
  mcpNameFor,
  modernHeaders,
  paramHeaderValues,
  type ToolParamHeader,
  toolParamHeaders,
} from './mcp-headers.js';

/** An independent oracle: the platform's btoa over the UTF-8 bytes. */
function sentinel(value: string): string {
  let binary = '';
  for (const byte of new TextEncoder().encode(value)) binary += String.fromCharCode(byte);
  return `=?base64?${btoa(binary)}?=`;
}

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}

describe('encodeHeaderValue', () => {
  // Vectors from the spec's Value Encoding table and SEP-2243's conformance cases.
  it.each([
    ['us-west1', 'us-west1'],
    ['Hello, 世界', '=?base64?SGVsbG8sIOS4lueVjA==?='],
    [' padded ', '=?base64?IHBhZGRlZCA=?='],
    ['line1\nline2', '=?base64?bGluZTEKbGluZTI=?='],
    ['=?base64?literal?=', '=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?='],
    [' us-west1', '=?base64?IHVzLXdlc3Qx?='],
    ['us-west1 ', '=?base64?dXMtd2VzdDEg?='],
    [' us-west1 ', '=?base64?IHVzLXdlc3QxIA==?='],
    ['日本語', '=?base64?5pel5pys6Kqe?='],
    ['line1\r\nline2', '=?base64?bGluZTENCmxpbmUy?='],
    ['\tindented', '=?base64?CWluZGVudGVk?='],
  ])('spec vector %j → %s', (input, expected) => {
    expect(encodeHeaderValue(input)).toBe(expected);
  });

  it.each([
    ['plain token', 'get_weather'],
    ['internal spaces', 'us west 1'],
    [
      'every visible ASCII character',
      Array.from({ length: 94 }, (_, i) => String.fromCharCode(0x21 + i)).join(''),
    ],
    ['empty string', ''],
    ['URI with query and percent-escapes', 'https://example.com/r?id=123&x=file%20name.txt'],
    ['one visible character', 'x'],
    ['prefix only', '=?base64?abc'],
    ['suffix only', 'abc?='],
    ['upper-case markers (not the sentinel)', '=?BASE64?SGVsbG8=?='],
    ['sentinel inside a longer value', 'x=?base64?SGVsbG8=?='],
  ])('keeps a plain value as is: %s', (_label, input) => {
    expect(encodeHeaderValue(input)).toBe(input);
  });

  it.each([
    ['single space', ' '],
    ['only spaces', '   '],
    ['tab inside', 'a\tb'],
    ['trailing tab', 'a\t'],
    ['CR', 'a\rb'],
    ['LF at the end', 'a\n'],
    ['NUL', 'a\u0000b'],
    ['DEL (0x7F)', 'a\u007fb'],
    ['C1 control (0x85)', 'a\u0085b'],
    ['Latin-1 letter', 'Région'],
    ['emoji (surrogate pair)', 'deploy 🚀'],
    ['non-breaking space at the end', 'x\u00a0'],
    ['leading byte-order mark', '\ufeffx'],
    ['the bare sentinel shape', '=?base64??='],
    ['sentinel prefix and suffix overlapping', '=?base64?='],
    ['sentinel with valid Base64 inside', '=?base64?SGVsbG8=?='],
  ])('Base64-encodes an unsafe value: %s', (_label, input) => {
    const encoded = encodeHeaderValue(input);
    expect(encoded).toBe(sentinel(input));
    expect(decodeHeaderValue(encoded)).toBe(input);
  });

  it('refuses an unpaired surrogate, which has no UTF-8 form', () => {
    const error = thrown(() => encodeHeaderValue('a\ud800b'));
    expect(error).toBeInstanceOf(AxMCPError);
    expect((error as AxMCPError).code).toBe('invalid_argument');
  });

  it('always yields a header-safe value that decodes back (property)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 40 }), (value) => {
        const encoded = encodeHeaderValue(value);
        expect(encoded).toMatch(/^(?:[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?)?$/);
        expect(decodeHeaderValue(encoded)).toBe(value);
        if (encoded !== value) expect(encoded).toBe(sentinel(value));
      }),
      { numRuns: 500 },
    );
  });

  it('sends plain ASCII unchanged unless it has edge spaces or the sentinel shape (property)', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)) }),
        (v) => {
          const plain =
            !v.startsWith(' ') && !v.endsWith(' ') && !(v.startsWith('=?base64?') && v.endsWith('?='));
          expect(encodeHeaderValue(v) === v).toBe(plain);
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe('decodeHeaderValue', () => {
  it.each([
    ['=?base64?SGVsbG8=?=', 'Hello'],
    ['=?base64??=', ''],
    ['SGVsbG8=', 'SGVsbG8='],
    ['=?base64?SGVsbG8=', '=?base64?SGVsbG8='],
    ['=?BASE64?SGVsbG8=?=', '=?BASE64?SGVsbG8=?='],
    ['=?base64?=', '=?base64?='],
    ['  foo ', 'foo'],
    ['\tfoo\t', 'foo'],
    ['a\tb', 'a\tb'],
    ['', ''],
    [' =?base64?SGVsbG8=?= ', 'Hello'],
    ['=?base64?77u/eA==?=', '\ufeffx'],
  ])('%j → %j', (input, expected) => {
    expect(decodeHeaderValue(input)).toBe(expected);
  });

  it.each([
    ['missing padding', '=?base64?SGVsbG8?='],
    ['invalid characters', '=?base64?SGVs!!!bG8=?='],
    ['URL-safe alphabet', '=?base64?-_-_?='],
    ['embedded whitespace', '=?base64?SGVs bG8=?='],
    ['padding in the middle', '=?base64?SG==bG8=?='],
    ['three padding characters', '=?base64?S===?='],
    ['non-canonical pad bits (one =)', '=?base64?SGVsbG9=?='],
    ['non-canonical pad bits (two =)', '=?base64?QR==?='],
    ['invalid UTF-8', '=?base64?/w==?='],
    ['raw LF', 'a\nb'],
    ['raw non-ASCII', 'Région'],
    ['raw DEL', 'a\u007f'],
  ])('rejects %s with HeaderMismatch', (_label, input) => {
    const error = thrown(() => decodeHeaderValue(input));
    expect(error).toBeInstanceOf(AxMCPProtocolError);
    expect((error as AxMCPProtocolError).rpcCode).toBe(RPC.headerMismatch);
  });
});

describe('mcpNameFor', () => {
  it.each([
    ['tools/call', { name: 'get_weather', arguments: {} }, 'get_weather'],
    ['prompts/get', { name: 'code_review' }, 'code_review'],
    ['resources/read', { uri: 'file:///a.txt', name: 'ignored' }, 'file:///a.txt'],
    ['tasks/get', { taskId: 't-1' }, 't-1'],
    ['tasks/update', { taskId: 't-2', inputResponses: {} }, 't-2'],
    ['tasks/cancel', { taskId: 't-3' }, 't-3'],
    ['tools/list', { name: 'x' }, undefined],
    ['server/discover', {}, undefined],
    ['subscriptions/listen', { notifications: {} }, undefined],
    ['completion/complete', { ref: { name: 'x' } }, undefined],
    ['resources/read', { name: 'no uri' }, undefined],
    ['tools/call', { name: 42 }, undefined],
    ['tools/call', undefined, undefined],
    ['TOOLS/CALL', { name: 'x' }, undefined],
  ] as const)('%s %j → %j', (method, params, expected) => {
    expect(mcpNameFor(method, params as Record<string, unknown> | undefined)).toBe(expected);
  });

  it('does not read inherited properties', () => {
    const params = Object.create({ name: 'inherited' }) as Record<string, unknown>;
    expect(mcpNameFor('tools/call', params)).toBeUndefined();
  });

  it('lists exactly the six methods that carry Mcp-Name', () => {
    expect([...MCP_NAME_SOURCES.keys()].sort()).toEqual([
      'prompts/get',
      'resources/read',
      'tasks/cancel',
      'tasks/get',
      'tasks/update',
      'tools/call',
    ]);
  });
});

describe('modernHeaders', () => {
  it('sets version, method and name', () => {
    expect(modernHeaders('tools/call', { name: 'get_weather' }, '2026-07-28')).toEqual({
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/call',
      'mcp-name': 'get_weather',
    });
  });

  it('encodes Mcp-Name', () => {
    const headers = modernHeaders('resources/read', { uri: 'file:///données/α.txt' }, '2026-07-28');
    expect(headers['mcp-name']).toBe(sentinel('file:///données/α.txt'));
  });

  it('omits Mcp-Name for methods without one', () => {
    const headers = modernHeaders('tools/list', { cursor: 'abc' }, '2026-07-28');
    expect(headers).toEqual({ 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/list' });
    expect('mcp-name' in headers).toBe(false);
  });

  it.each([
    ['tools/call without a name', 'tools/call', {}, '2026-07-28'],
    ['tasks/get with a numeric taskId', 'tasks/get', { taskId: 7 }, '2026-07-28'],
    ['an empty method', '', {}, '2026-07-28'],
    ['a method with CRLF', 'tools/list\r\nX-Evil: 1', {}, '2026-07-28'],
    ['a non-ASCII method', 'tööls/list', {}, '2026-07-28'],
    ['an empty version', 'tools/list', {}, ''],
    ['a version with a trailing space', 'tools/list', {}, '2026-07-28 '],
  ])('rejects %s', (_label, method, params, version) => {
    const error = thrown(() => modernHeaders(method, params, version));
    expect(error).toBeInstanceOf(AxMCPError);
    expect((error as AxMCPError).code).toBe('invalid_argument');
  });
});

function headersOf(schema: unknown): readonly ToolParamHeader[] {
  const result = toolParamHeaders(schema);
  if (!result.ok) throw new Error(`unexpected rejection: ${result.reason}`);
  return result.headers;
}

function reasonOf(schema: unknown): string {
  const result = toolParamHeaders(schema);
  if (result.ok) throw new Error(`expected a rejection, got ${JSON.stringify(result.headers)}`);
  return result.reason;
}

const str = (header: string) => ({ type: 'string', 'x-mcp-header': header });

describe('toolParamHeaders: valid schemas', () => {
  it('derives the spec example', () => {
    expect(
      headersOf({
        type: 'object',
        properties: {
          region: { type: 'string', description: 'Region', 'x-mcp-header': 'Region' },
          query: { type: 'string' },
        },
        required: ['region', 'query'],
      }),
    ).toEqual([{ header: 'Region', fieldName: 'Mcp-Param-Region', path: ['region'], type: 'string' }]);
  });

  it('follows nested properties chains and keeps document order', () => {
    expect(
      headersOf({
        type: 'object',
        properties: {
          tenant: { type: 'integer', 'x-mcp-header': 'TenantId' },
          options: {
            type: 'object',
            properties: {
              deep: { type: 'object', properties: { flag: { type: 'boolean', 'x-mcp-header': 'Flag' } } },
              limit: { type: 'integer', 'x-mcp-header': 'Limit' },
            },
          },
          last: str('Last'),
        },
      }).map((h) => [h.header, h.path, h.type]),
    ).toEqual([
      ['TenantId', ['tenant'], 'integer'],
      ['Flag', ['options', 'deep', 'flag'], 'boolean'],
      ['Limit', ['options', 'limit'], 'integer'],
      ['Last', ['last'], 'string'],
    ]);
  });

  it.each([
    ['no properties', { type: 'object' }],
    ['no annotations', { type: 'object', properties: { a: { type: 'number' }, b: { type: 'array' } } }],
    ['boolean property schemas', { type: 'object', properties: { a: true, b: false } }],
    ['a property named x-mcp-header', { type: 'object', properties: { 'x-mcp-header': { type: 'object' } } }],
    ['an annotation-shaped value in const', { type: 'object', const: { 'x-mcp-header': 'A' } }],
    ['an annotation-shaped value in examples', { type: 'object', examples: [{ 'x-mcp-header': 'A' }] }],
    ['an annotation-shaped value in default', { type: 'object', default: { 'x-mcp-header': 'A' } }],
    ['an annotation-shaped value in enum', { type: 'object', enum: [{ 'x-mcp-header': 'A' }] }],
    ['an unknown keyword', { type: 'object', 'x-vendor': { 'x-mcp-header': 'A' } }],
  ])('accepts a schema with %s and no headers', (_label, schema) => {
    expect(headersOf(schema)).toEqual([]);
  });

  it.each([
    ['["string", "null"]', { type: ['string', 'null'] }, 'string'],
    ['["null", "integer"]', { type: ['null', 'integer'] }, 'integer'],
    ['["boolean"]', { type: ['boolean'] }, 'boolean'],
    ['anyOf string|null', { anyOf: [{ type: 'string' }, { type: 'null' }] }, 'string'],
    ['oneOf integer|null', { oneOf: [{ type: 'integer', minimum: 0 }, { type: 'null' }] }, 'integer'],
    ['integer with enum', { type: 'integer', enum: [1, 2] }, 'integer'],
  ])('accepts a property typed %s', (_label, property, type) => {
    const [header] = headersOf({ type: 'object', properties: { p: { ...property, 'x-mcp-header': 'P' } } });
    expect(header?.type).toBe(type);
  });

  it.each(['Method', 'Name', 'Protocol-Version', "!#$%&'*+-.^_`|~", 'a', '0', 'X'.repeat(300)])(
    'accepts the token %j',
    (name) => {
      const [header] = headersOf({ type: 'object', properties: { p: str(name) } });
      expect(header?.fieldName).toBe(`Mcp-Param-${name}`);
    },
  );

  it('accepts property keys that are not identifiers, and escapes them in messages', () => {
    expect(
      headersOf({ type: 'object', properties: { 'a/b~c': str('A'), 'd e': str('B') } }).map((h) => h.path),
    ).toEqual([['a/b~c'], ['d e']]);
    expect(
      reasonOf({ type: 'object', properties: { 'a/b~c': { type: 'number', 'x-mcp-header': 'A' } } }),
    ).toContain('/properties/a~1b~0c');
  });

  it('freezes the cached result', () => {
    const headers = headersOf({ type: 'object', properties: { a: str('A') } });
    expect(Object.isFrozen(headers)).toBe(true);
    expect(Object.isFrozen(headers[0])).toBe(true);
    expect(Object.isFrozen(headers[0]?.path)).toBe(true);
  });

  it('terminates on a cyclic schema built in code', () => {
    const node: Record<string, unknown> = { type: 'object' };
    node.properties = { self: node, a: str('A') };
    expect(headersOf(node).map((h) => h.header)).toEqual(['A']);
  });

  it('handles very deep schemas without recursion', () => {
    let schema: Record<string, unknown> = str('Deep');
    for (let i = 0; i < 20_000; i++) schema = { type: 'object', properties: { n: schema } };
    const [header] = headersOf(schema);
    expect(header?.path).toHaveLength(20_000);
  });
});

describe('toolParamHeaders: invalid schemas', () => {
  const obj = (properties: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
    type: 'object',
    properties,
    ...extra,
  });

  it.each([
    // Header name
    ['an empty name', obj({ a: str('') }), 'is empty'],
    ['a name with a space', obj({ a: str('My Region') }), 'not an HTTP token'],
    ['a name with a colon', obj({ a: str('Region:Primary') }), 'not an HTTP token'],
    ['a non-ASCII name', obj({ a: str('Région') }), 'not an HTTP token'],
    ['a name with a tab', obj({ a: str('Region\t1') }), 'not an HTTP token'],
    ['a name with CRLF', obj({ a: str('A\r\nX-Evil: 1') }), 'not an HTTP token'],
    ['a name with a slash', obj({ a: str('a/b') }), 'not an HTTP token'],
    ['a name with quotes', obj({ a: str('"a"') }), 'not an HTTP token'],
    ['a numeric name', obj({ a: { type: 'string', 'x-mcp-header': 42 } }), 'is not a string'],
    ['a null name', obj({ a: { type: 'string', 'x-mcp-header': null } }), 'is not a string'],
    // Uniqueness
    ['a duplicate name', obj({ a: str('Region'), b: str('Region') }), 'duplicates'],
    ['a duplicate name in another case', obj({ a: str('Region'), b: str('REGION') }), 'case-insensitive'],
    ['a duplicate across nesting', obj({ a: str('x'), o: obj({ b: str('X') }) }), 'duplicates'],
    // Types
    ['type number', obj({ a: { type: 'number', 'x-mcp-header': 'A' } }), 'type "number", which'],
    [
      'type ["integer","number"]',
      obj({ a: { type: ['integer', 'number'], 'x-mcp-header': 'A' } }),
      'type "number", which',
    ],
    ['type object', obj({ a: { type: 'object', 'x-mcp-header': 'A' } }), '"object"'],
    ['type array', obj({ a: { type: 'array', 'x-mcp-header': 'A' } }), '"array"'],
    ['type null', obj({ a: { type: 'null', 'x-mcp-header': 'A' } }), 'only type "null"'],
    [
      'type ["string","integer"]',
      obj({ a: { type: ['string', 'integer'], 'x-mcp-header': 'A' } }),
      'several',
    ],
    ['no type', obj({ a: { 'x-mcp-header': 'A' } }), 'no "type"'],
    ['only an enum', obj({ a: { enum: ['x', 'y'], 'x-mcp-header': 'A' } }), 'no "type"'],
    ['a type number (not a string)', obj({ a: { type: 5, 'x-mcp-header': 'A' } }), 'malformed'],
    [
      'an anyOf branch with $ref',
      obj({ a: { anyOf: [{ $ref: '#/$defs/S' }], 'x-mcp-header': 'A' } }),
      'anyOf',
    ],
    [
      'anyOf string|integer',
      obj({ a: { anyOf: [{ type: 'string' }, { type: 'integer' }], 'x-mcp-header': 'A' } }),
      'several',
    ],
    ['an unknown type name', obj({ a: { type: 'str', 'x-mcp-header': 'A' } }), '"str"'],
    // Placement
    ['the root', { type: 'string', 'x-mcp-header': 'A' }, 'the schema root'],
    ['items', obj({ l: { type: 'array', items: str('A') } }), '/properties/l/items'],
    ['items (array form)', obj({ l: { type: 'array', items: [str('A')] } }), '/items/0'],
    ['prefixItems', obj({ l: { type: 'array', prefixItems: [str('A')] } }), '/prefixItems/0'],
    [
      'properties under items',
      obj({ l: { type: 'array', items: obj({ b: str('A') }) } }),
      '/items/properties/b',
    ],
    ['additionalProperties', obj({}, { additionalProperties: str('A') }), '/additionalProperties'],
    ['patternProperties', obj({}, { patternProperties: { '^a': str('A') } }), '/patternProperties/^a'],
    ['allOf', obj({}, { allOf: [obj({ a: str('A') })] }), '/allOf/0/properties/a'],
    ['anyOf', obj({}, { anyOf: [obj({ a: str('A') })] }), '/anyOf/0'],
    ['oneOf', obj({}, { oneOf: [obj({ a: str('A') })] }), '/oneOf/0'],
    ['not', obj({}, { not: obj({ a: str('A') }) }), '/not'],
    ['if', obj({}, { if: obj({ a: str('A') }) }), '/if'],
    // biome-ignore lint/suspicious/noThenProperty: `then` is a JSON Schema keyword here
    ['then', obj({}, { then: obj({ a: str('A') }) }), '/then'],
    ['else', obj({}, { else: obj({ a: str('A') }) }), '/else'],
    ['$defs behind $ref', obj({ a: { $ref: '#/$defs/R' } }, { $defs: { R: str('A') } }), '/$defs/R'],
    ['definitions', obj({}, { definitions: { R: str('A') } }), '/definitions/R'],
    ['dependentSchemas', obj({}, { dependentSchemas: { a: obj({ b: str('A') }) } }), '/dependentSchemas/a'],
    ['dependencies', obj({}, { dependencies: { a: obj({ b: str('A') }), c: ['a'] } }), '/dependencies/a'],
    ['contains', obj({ l: { type: 'array', contains: str('A') } }), '/contains'],
    ['propertyNames', obj({}, { propertyNames: str('A') }), '/propertyNames'],
    ['unevaluatedProperties', obj({}, { unevaluatedProperties: str('A') }), '/unevaluatedProperties'],
    [
      'a nested allOf',
      obj({ o: { type: 'object', allOf: [obj({ b: str('A') })] } }),
      '/properties/o/allOf/0',
    ],
    // ax-mcp rule
    [
      '__proto__ in the path',
      JSON.parse('{"properties":{"__proto__":{"type":"string","x-mcp-header":"A"}}}'),
      '__proto__',
    ],
    ['constructor in the path', obj({ constructor: obj({ a: str('A') }) }), 'constructor'],
    ['prototype in the path', obj({ prototype: str('A') }), 'prototype'],
  ])('rejects an annotation with %s', (_label, schema, fragment) => {
    expect(reasonOf(schema)).toContain(fragment);
  });

  it.each([
    ['undefined', undefined],
    ['null', null],
    ['an array', [{ type: 'object' }]],
    ['a string', 'object'],
  ])('rejects an inputSchema that is %s', (_label, schema) => {
    expect(reasonOf(schema)).toContain('not a JSON object');
  });

  it('rejects even when a valid annotation comes first', () => {
    expect(reasonOf(obj({ ok: str('Ok') }, { $defs: { later: str('Later') } }))).toContain('/$defs/later');
  });

  it('escapes control characters of server strings in the reason', () => {
    const reason = reasonOf(obj({ a: str('A\r\nX-Evil: 1') }));
    expect(reason).not.toMatch(/[\r\n]/);
    expect(reason).toContain('\\r\\n');
  });
});

describe('paramHeaderValues', () => {
  const spec = headersOf({
    type: 'object',
    properties: {
      region: str('Region'),
      priority: { type: 'integer', 'x-mcp-header': 'Priority' },
      verbose: { type: 'boolean', 'x-mcp-header': 'Verbose' },
      options: { type: 'object', properties: { tenant: str('Tenant') } },
      query: { type: 'string' },
    },
  });

  it('mirrors the conformance-suite arguments', () => {
    const values = paramHeaderValues(spec, {
      region: 'us-west1',
      priority: 42,
      verbose: false,
      options: { tenant: 'Ünïcode' },
      query: 'SELECT 1',
    });
    expect({ ...values }).toEqual({
      'Mcp-Param-Region': 'us-west1',
      'Mcp-Param-Priority': '42',
      'Mcp-Param-Verbose': 'false',
      'Mcp-Param-Tenant': sentinel('Ünïcode'),
    });
    expect(Object.getPrototypeOf(values)).toBeNull();
  });

  it.each([
    ['true', { verbose: true }, { 'Mcp-Param-Verbose': 'true' }],
    ['negative integer', { priority: -7 }, { 'Mcp-Param-Priority': '-7' }],
    ['zero and negative zero', { priority: -0 }, { 'Mcp-Param-Priority': '0' }],
    ['largest safe integer', { priority: 2 ** 53 - 1 }, { 'Mcp-Param-Priority': '9007199254740991' }],
    ['smallest safe integer', { priority: -(2 ** 53 - 1) }, { 'Mcp-Param-Priority': '-9007199254740991' }],
    ['empty string', { region: '' }, { 'Mcp-Param-Region': '' }],
    ['string needing Base64', { region: ' padded ' }, { 'Mcp-Param-Region': '=?base64?IHBhZGRlZCA=?=' }],
    ['null', { region: null, priority: null }, {}],
    ['absent', {}, {}],
    ['undefined', { region: undefined }, {}],
    ['NaN (JSON null)', { priority: Number.NaN }, {}],
    ['Infinity (JSON null)', { priority: Number.POSITIVE_INFINITY }, {}],
    ['null parent', { options: null }, {}],
    ['string parent', { options: 'tenant' }, {}],
    ['array parent', { options: [{ tenant: 'x' }] }, {}],
    ['string for an integer property', { priority: '42' }, { 'Mcp-Param-Priority': '42' }],
    ['number for a string property', { region: 5 }, { 'Mcp-Param-Region': '5' }],
    ['fraction for an integer property', { priority: 3.5 }, { 'Mcp-Param-Priority': '3.5' }],
    ['boolean for a string property', { region: true }, { 'Mcp-Param-Region': 'true' }],
  ])('%s', (_label, args, expected) => {
    expect({ ...paramHeaderValues(spec, args as Record<string, unknown>) }).toEqual(expected);
  });

  it('sends numbers with the same digits as the JSON body (property)', () => {
    fc.assert(
      fc.property(fc.oneof(fc.maxSafeInteger(), fc.double({ noNaN: true, noDefaultInfinity: true })), (n) => {
        fc.pre(!Number.isInteger(n) || Number.isSafeInteger(n));
        const values = paramHeaderValues(spec, { priority: n });
        expect(values['Mcp-Param-Priority']).toBe(JSON.stringify(n));
      }),
    );
  });

  it('returns nothing without arguments', () => {
    expect({ ...paramHeaderValues(spec, undefined) }).toEqual({});
  });

  it('ignores inherited properties', () => {
    expect({ ...paramHeaderValues(spec, Object.create({ region: 'proto' })) }).toEqual({});
  });

  it.each([
    ['an unsafe integer', { priority: 2 ** 53 }, 'safe range'],
    ['a negative unsafe integer', { priority: -(2 ** 53) }, 'safe range'],
    ['1e21', { priority: 1e21 }, 'safe range'],
    ['an object', { region: { a: 1 } }, 'an object'],
    ['an array', { region: ['a'] }, 'an array'],
    ['a bigint', { priority: 42n }, 'a bigint'],
    ['an unpaired surrogate', { region: '\udc00' }, 'surrogate'],
  ])('refuses %s', (_label, args, fragment) => {
    const error = thrown(() => paramHeaderValues(spec, args as Record<string, unknown>));
    expect(error).toBeInstanceOf(AxMCPError);
    expect((error as AxMCPError).code).toBe('invalid_argument');
    expect((error as AxMCPError).message).toContain(fragment);
  });
});
