import { describe, expect, it } from 'vitest';
import { AxMCPError, AxMCPSSRFError } from '../protocol/errors.js';
import {
  type AxMCPSSRFProtection,
  assertAddressAllowed,
  assertURLAllowed,
  redactURL,
  resolveSSRFPolicy,
} from './ssrf.js';

type Case = [url: string, option: AxMCPSSRFProtection | undefined, expected: 'allowed' | RegExp];

const loopback = { allowLoopback: true };
const privateNet = { allowPrivateNetwork: true, allowHTTP: true };

const cases: Case[] = [
  // Public HTTPS endpoints pass.
  ['https://mcp.example.com/mcp', undefined, 'allowed'],
  ['https://8.8.8.8/', true, 'allowed'],
  ['https://[2606:4700:4700::1111]/mcp', undefined, 'allowed'],
  // The HTTPS rule.
  ['http://mcp.example.com/', undefined, /plain http: is refused/],
  ['http://mcp.example.com/', { allowHTTP: true }, 'allowed'],
  ['http://127.0.0.1:3000/mcp', loopback, 'allowed'],
  ['http://localhost:3000/mcp', loopback, 'allowed'],
  ['http://[::1]:3000/', loopback, 'allowed'],
  ['http://10.0.0.1/', { allowPrivateNetwork: true }, /plain http: is refused/],
  // Schemes and userinfo, even with protection off.
  ['ftp://example.com/', undefined, /scheme "ftp:"/],
  ['file:///etc/passwd', false, /scheme "file:"/],
  ['data:text/plain,hi', false, /scheme "data:"/],
  ['https://user:secret@example.com/', undefined, /credentials in the URL/],
  ['https://user:secret@example.com/', false, /credentials in the URL/],
  // Loopback in its many spellings.
  [
    'https://127.0.0.1/',
    undefined,
    /loopback address \(allow it with ssrfProtection: \{ allowLoopback: true \}\)/,
  ],
  ['https://127.8.9.10/', undefined, /loopback address/],
  ['http://2130706433/', { allowHTTP: true }, /loopback address/],
  ['http://0x7f.1/', { allowHTTP: true }, /loopback address/],
  ['http://017700000001/', { allowHTTP: true }, /loopback address/],
  ['http://127%2E0%2E0%2E1/', { allowHTTP: true }, /loopback address/],
  ['http://127.0.0.1./', { allowHTTP: true }, /loopback address/],
  ['https://[::1]/', undefined, /loopback address/],
  ['https://localhost/', undefined, /localhost name/],
  ['https://LOCALHOST./', undefined, /localhost name/],
  ['https://\u24dbocalhost/', undefined, /localhost name/],
  ['https://api.localhost/', undefined, /localhost name/],
  // IPv6 forms that embed a forbidden IPv4 address.
  [
    'http://[::ffff:127.0.0.1]/',
    { allowHTTP: true },
    /IPv4-mapped IPv6 address embedding 127\.0\.0\.1, a loopback/,
  ],
  ['http://[::ffff:7f00:1]/', { allowHTTP: true }, /IPv4-mapped IPv6 address embedding 127\.0\.0\.1/],
  ['https://[::127.0.0.1]/', undefined, /IPv4-compatible IPv6 address embedding 127\.0\.0\.1/],
  ['https://[::ffff:0:a00:1]/', undefined, /IPv4-translated IPv6 address embedding 10\.0\.0\.1, a private/],
  ['https://[64:ff9b::a9fe:a9fe]/', undefined, /NAT64 IPv6 address embedding 169\.254\.169\.254, a cloud/],
  ['https://[2002:c0a8:101::1]/', undefined, /6to4 IPv6 address embedding 192\.168\.1\.1, a private/],
  ['https://[::ffff:8.8.8.8]/', undefined, 'allowed'],
  ['https://[2002:808:808::1]/', undefined, 'allowed'],
  ['https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/', undefined, /Teredo/],
  // Private networks.
  [
    'https://10.1.2.3/',
    undefined,
    /private network address \(allow it with ssrfProtection: \{ allowPrivateNetwork: true \}\)/,
  ],
  ['https://172.16.5.4/', undefined, /private network address/],
  ['https://192.168.0.10/', undefined, /private network address/],
  ['http://192.168.0.10/', privateNet, 'allowed'],
  ['https://100.64.0.1/', undefined, /carrier-grade NAT address/],
  ['https://169.254.10.10/', undefined, /link-local address/],
  ['https://[fe80::1]/', undefined, /link-local address/],
  ['https://[fd12:3456::1]/', undefined, /unique-local address/],
  ['https://[fd12:3456::1]/', { allowPrivateNetwork: true }, 'allowed'],
  ['https://db.corp.internal/', undefined, /private-use name/],
  ['https://printer.local/', { allowPrivateNetwork: true }, 'allowed'],
  // Cloud metadata: never, whatever the flags.
  ['http://169.254.169.254/latest/meta-data/', privateNet, /cloud metadata address/],
  ['https://[fd00:ec2::254]/', { allowPrivateNetwork: true }, /cloud metadata address/],
  ['https://100.100.100.200/', { allowPrivateNetwork: true }, /cloud metadata address/],
  ['https://metadata.google.internal/computeMetadata/v1/', privateNet, /cloud metadata hostname/],
  ['https://metadata/', undefined, /cloud metadata hostname/],
  ['https://instance-data/', undefined, /cloud metadata hostname/],
  // Unspecified, multicast, broadcast, reserved.
  ['http://0/', { allowHTTP: true, allowLoopback: true }, /unspecified address/],
  ['https://0.0.0.0/', { allowLoopback: true }, /unspecified address/],
  ['https://[::]/', { allowLoopback: true }, /unspecified address/],
  ['https://224.0.0.1/', undefined, /multicast address/],
  ['https://[ff02::1]/', undefined, /multicast address/],
  ['https://255.255.255.255/', undefined, /broadcast address/],
  ['https://240.0.0.1/', undefined, /reserved address/],
  ['https://192.0.2.1/', undefined, /reserved address/],
  ['https://[2001:db8::1]/', undefined, /reserved address/],
  // allowedHosts exempts from the address rules, not from the HTTPS rule.
  ['https://10.0.0.7/', { allowedHosts: ['10.0.0.7'] }, 'allowed'],
  ['http://10.0.0.7/', { allowedHosts: ['10.0.0.7'] }, /plain http: is refused/],
  ['https://mcp.corp.internal/', { allowedHosts: ['*.corp.internal'] }, 'allowed'],
  ['https://corp.internal/', { allowedHosts: ['*.corp.internal'] }, /private-use name/],
  ['https://[::1]/', { allowedHosts: ['::1'] }, 'allowed'],
  ['https://127.0.0.1/', { allowedHosts: ['*.0.0.1'] }, /loopback address/],
  ['https://localhost/', { allowedHosts: ['LOCALHOST.'] }, 'allowed'],
  // Protection off.
  ['http://127.0.0.1/', false, 'allowed'],
  ['http://169.254.169.254/', false, 'allowed'],
];

describe('assertURLAllowed', () => {
  it('has a table worth the name', () => {
    expect(cases.length).toBeGreaterThanOrEqual(25);
  });

  it.each(cases)('%s with %j → %s', async (url, option, expected) => {
    const outcome = await assertURLAllowed(url, option).then(
      () => 'allowed' as const,
      (error: unknown) => error,
    );
    if (expected === 'allowed') {
      expect(outcome).toBe('allowed');
      return;
    }
    expect(outcome).toBeInstanceOf(AxMCPSSRFError);
    const error = outcome as AxMCPSSRFError;
    expect(error.code).toBe('ssrf_blocked');
    expect(error.message).toMatch(expected);
  });

  it('never puts URL credentials or the query into the error', async () => {
    const error = await assertURLAllowed('https://alice:hunter2@127.0.0.1/x?api_key=sekret').catch((e) => e);
    expect(error).toBeInstanceOf(AxMCPSSRFError);
    expect(String(error.message)).not.toMatch(/hunter2|alice|sekret/);
    expect(error.url).toBe('https://127.0.0.1/x?…');
  });

  it('runs validateURL after the built-in rules and wraps what it throws', async () => {
    const seen: string[] = [];
    const policy = resolveSSRFPolicy({
      validateURL(url) {
        seen.push(url.href);
        if (url.pathname.startsWith('/admin')) throw new Error('no admin');
      },
    });
    await assertURLAllowed('https://example.com/mcp', policy);
    const error = await assertURLAllowed('https://example.com/admin', policy).catch((e) => e);
    expect(error).toBeInstanceOf(AxMCPSSRFError);
    expect(error.message).toMatch(/refused by ssrfProtection\.validateURL/);
    expect((error.cause as Error).message).toBe('no admin');
    // A URL the built-in rules refuse never reaches validateURL.
    await expect(assertURLAllowed('https://127.0.0.1/', policy)).rejects.toThrow(/loopback/);
    expect(seen).toEqual(['https://example.com/mcp', 'https://example.com/admin']);
  });

  it('passes an async validateURL rejection through as an SSRF error', async () => {
    const refusal = new AxMCPSSRFError('https://example.com/', 'tenant rule');
    const policy = resolveSSRFPolicy({ validateURL: async () => Promise.reject(refusal) });
    await expect(assertURLAllowed('https://example.com/', policy)).rejects.toBe(refusal);
  });

  it('turns an unparsable URL into invalid_argument', async () => {
    const error = await assertURLAllowed('not a url').catch((e) => e);
    expect(error).toBeInstanceOf(AxMCPError);
    expect(error.code).toBe('invalid_argument');
  });
});

describe('assertAddressAllowed', () => {
  const refused: [ip: string, host: string, reason: RegExp][] = [
    ['127.0.0.1', 'evil.test', /resolves to 127\.0\.0\.1: loopback address/],
    ['::1', 'evil.test', /loopback address/],
    ['::ffff:127.0.0.1', 'evil.test', /IPv4-mapped IPv6 address embedding 127\.0\.0\.1/],
    ['10.0.0.1', 'evil.test', /private network address/],
    ['169.254.169.254', 'evil.test', /cloud metadata address/],
    ['0.0.0.0', 'evil.test', /unspecified address/],
    ['93.184.216.34', 'localhost', /localhost name resolved to 93\.184\.216\.34/],
    ['not-an-ip', 'evil.test', /not an IP address/],
  ];

  it.each(refused)('%s for %s is refused', (ip, host, reason) => {
    expect(() => assertAddressAllowed(ip, host, true)).toThrow(AxMCPSSRFError);
    expect(() => assertAddressAllowed(ip, host, true)).toThrow(reason);
  });

  it('allows public addresses, opted-in classes and allowedHosts', () => {
    expect(() => assertAddressAllowed('93.184.216.34', 'example.com', true)).not.toThrow();
    expect(() => assertAddressAllowed('2606:4700::1111', 'example.com', undefined)).not.toThrow();
    expect(() => assertAddressAllowed('127.0.0.1', 'localhost', { allowLoopback: true })).not.toThrow();
    expect(() => assertAddressAllowed('10.0.0.1', 'x.test', { allowPrivateNetwork: true })).not.toThrow();
    expect(() =>
      assertAddressAllowed('10.0.0.1', 'db.corp.test', { allowedHosts: ['*.corp.test'] }),
    ).not.toThrow();
    expect(() => assertAddressAllowed('127.0.0.1', 'evil.test', false)).not.toThrow();
  });

  it('still refuses metadata with allowPrivateNetwork', () => {
    expect(() => assertAddressAllowed('169.254.169.254', 'x.test', { allowPrivateNetwork: true })).toThrow(
      /cloud metadata/,
    );
  });
});

describe('resolveSSRFPolicy', () => {
  it('resolves true, undefined and false', () => {
    expect(resolveSSRFPolicy(undefined)).toMatchObject({
      enabled: true,
      allowHTTP: false,
      allowLoopback: false,
    });
    expect(resolveSSRFPolicy(true).enabled).toBe(true);
    expect(resolveSSRFPolicy(false).enabled).toBe(false);
  });

  it('is idempotent and frozen', () => {
    const policy = resolveSSRFPolicy({ allowedHosts: ['Example.COM.', '*.Corp.Test', '[::1]'] });
    expect(resolveSSRFPolicy(policy)).toBe(policy);
    expect(Object.isFrozen(policy)).toBe(true);
    expect(policy.allowedHosts).toEqual(['example.com', '0:0:0:0:0:0:0:1', '*.corp.test']);
  });

  it.each(['https://example.com', 'example.com:443', '*', '*.', 'a.*.com', 'exa mple.com', ''])(
    'rejects the allowedHosts entry %j',
    (entry) => {
      expect(() => resolveSSRFPolicy({ allowedHosts: [entry] })).toThrow(
        expect.objectContaining({
          code: 'invalid_options',
          path: 'ssrfProtection.allowedHosts[0]',
          message: expect.stringMatching(/hostname, an IP literal or a "\*\.domain" wildcard/),
        }),
      );
    },
  );
});

describe('redactURL', () => {
  it('keeps scheme, host, port and path only', () => {
    expect(redactURL(new URL('https://u:p@example.com:8443/a/b?token=x#frag'))).toBe(
      'https://example.com:8443/a/b?…',
    );
    expect(redactURL(new URL('https://example.com/a'))).toBe('https://example.com/a');
  });
});

describe('what an SSRF refusal names as its remedy', () => {
  it('names the one option that would allow the URL, and none where no option would', async () => {
    const allowance = async (url: string) => {
      const error = await assertURLAllowed(url).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(AxMCPSSRFError);
      return [(error as AxMCPSSRFError).allowWith, (error as AxMCPSSRFError).message];
    };
    expect(await allowance('https://127.0.0.1/')).toEqual([
      'allowLoopback',
      'Refused https://127.0.0.1/: loopback address (allow it with ssrfProtection: { allowLoopback: true })',
    ]);
    expect((await allowance('https://10.1.2.3/'))[0]).toBe('allowPrivateNetwork');
    expect(await allowance('http://mcp.example.com/')).toEqual([
      'allowHTTP',
      'Refused http://mcp.example.com/: plain http: is refused, HTTPS is required (allow it with ssrfProtection: { allowHTTP: true })',
    ]);
    expect((await allowance('https://169.254.169.254/'))[0]).toBeUndefined();
  });
});
