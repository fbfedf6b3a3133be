/**
 * `ax-mcp ucp inspect|call`, run as users run it (the built bin in a child process) against the
 * demo shop and the test business: help never a parser error, SSRF worded in flags, the
 * negotiated profile as tables or JSON, operations as JSON, `checkout.complete` refused without
 * `--yes` (nothing sent, nothing charged), an idempotent replay charging once, and mistakes with
 * clear messages and the CLI's exit codes (2 usage, 1 failure).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AxMCPDemoServer } from '../src/demo.js';
import { CLI_BUILT, runCLI } from './helpers/cli.js';
import { startUCPBusiness, type UCPBusiness } from './servers/ucp-business.js';

const run = runCLI;

const firstLine = (text: string) => text.split('\n')[0];
const payment = JSON.stringify({
  instruments: [
    {
      id: 'i1',
      handler_id: 'demo_tokenizer',
      type: 'card',
      credential: { type: 'token', token: 'tok_demo' },
    },
  ],
});

describe.skipIf(!CLI_BUILT)('ax-mcp ucp', () => {
  let demo: AxMCPDemoServer;
  let shop: string;
  let business: UCPBusiness;

  beforeAll(async () => {
    demo = new AxMCPDemoServer({ keepAliveMs: 0 });
    shop = new URL(await demo.start()).origin;
    business = await startUCPBusiness();
  });
  afterAll(async () => {
    await demo?.close();
    await business?.close();
  });

  it('answers --help at every level, never with a parser error', async () => {
    for (const args of [
      ['ucp', '--help'],
      ['ucp', 'help'],
      ['help', 'ucp'],
    ]) {
      const help = await run(args);
      expect(help.code, args.join(' ')).toBe(0);
      expect(firstLine(help.stdout)).toBe('ax-mcp ucp inspect <business> [--json]');
    }
    const inspect = await run(['ucp', 'inspect', '--help']);
    expect(inspect.code).toBe(0);
    expect(firstLine(inspect.stdout)).toBe('ax-mcp ucp inspect <business> [--json]');
    expect(inspect.stdout).toContain('--allow-localhost');
    const call = await run(['ucp', 'call', 'http://x.example', '--frobnicate', '-h']);
    expect(call.code).toBe(0);
    expect(firstLine(call.stdout)).toMatch(/^ax-mcp ucp call <business> <operation>/);
    expect(call.stdout).toContain('--yes');
    expect(call.stderr).toBe('');
    const global = await run(['--help']);
    expect(global.stdout).toMatch(/ax-mcp ucp\s+inspect a UCP business/);
    const bare = await run(['ucp']);
    expect(bare.code).toBe(1);
    expect(firstLine(bare.stdout)).toBe('ax-mcp ucp inspect <business> [--json]');
  });

  it('inspect refuses loopback without --allow-localhost, in flags', async () => {
    const refused = await run(['ucp', 'inspect', shop]);
    expect(refused.code).toBe(1);
    expect(firstLine(refused.stderr)).toBe(
      `ax-mcp: Refused ${shop}/.well-known/ucp: loopback address (pass --allow-localhost) [ssrf_blocked]`,
    );
    expect(refused.stderr).not.toMatch(/ssrfProtection|allowLoopback/);
  });

  it('inspect prints the negotiated profile and capabilities, or JSON', async () => {
    const shown = await run(['ucp', 'inspect', shop, '--allow-localhost']);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain(`Business   ${shop}/.well-known/ucp`);
    expect(shown.stdout).toContain('Version    2026-08-25 (offers 2026-08-25)');
    expect(shown.stdout).toContain(`REST       ${shop}/ucp/v1`);
    expect(shown.stdout).toContain('Keys       demo-shop-2026 (EC P-256)');
    expect(shown.stdout).toMatch(/Capabilities \(6\)/);
    expect(shown.stdout).toMatch(/dev\.ucp\.shopping\.discount\s+2026-08-25\s+dev\.ucp\.shopping\.checkout/);
    expect(shown.stdout).toMatch(/com\.example\.demo_tokenizer\s+demo_tokenizer\s+card/);
    expect(shown.stdout).toMatch(/checkout\.complete\s+dev\.ucp\.shopping\.checkout/);

    const json = await run(['ucp', 'inspect', `${shop}/.well-known/ucp`, '--allow-localhost', '--json']);
    expect(json.code, json.stderr).toBe(0);
    const parsed = JSON.parse(json.stdout) as {
      version: string;
      restEndpoint: string;
      capabilities: Array<{ name: string }>;
      operations: string[];
      profile: { ucp: { version: string } };
    };
    expect(parsed.version).toBe('2026-08-25');
    expect(parsed.restEndpoint).toBe(`${shop}/ucp/v1`);
    expect(parsed.capabilities.map((c) => c.name)).toContain('dev.ucp.shopping.order');
    expect(parsed.operations).toContain('order.get');
    expect(parsed.profile.ucp.version).toBe('2026-08-25');

    // The test business also offers the MCP binding.
    const other = await run(['ucp', 'inspect', business.url, '--allow-localhost']);
    expect(other.code, other.stderr).toBe(0);
    expect(other.stdout).toContain(`MCP        ${business.url}/mcp`);
    expect(other.stdout).toContain('Version    2026-08-25 (offers 2026-08-25, 2026-04-08)');
  });

  it('call prints the JSON result; checkout.complete needs --yes; a replay with the same key charges once', async () => {
    const found = await run([
      'ucp',
      'call',
      shop,
      'catalog.search',
      '{"query":"widget"}',
      '--allow-localhost',
    ]);
    expect(found.code, found.stderr).toBe(0);
    const products = (JSON.parse(found.stdout) as { products: Array<{ id: string }> }).products;
    expect(products.map((p) => p.id)).toEqual(['widget-a', 'widget-b']);

    const created = await run([
      'ucp',
      'call',
      shop,
      'checkout.create',
      '--args',
      '{"line_items":[{"item":{"id":"widget-b"},"quantity":2}],"buyer":{"email":"ada@example.com"}}',
      '--allow-localhost',
    ]);
    expect(created.code, created.stderr).toBe(0);
    const checkout = JSON.parse(created.stdout) as { id: string; status: string };
    expect(checkout.status).toBe('ready_for_complete');
    const complete = [
      'ucp',
      'call',
      shop,
      'checkout.complete',
      `{"id":"${checkout.id}","payment":${payment}}`,
    ];

    const denied = await run([...complete, '--allow-localhost']);
    expect(denied.code).toBe(1);
    expect(denied.stdout).toBe('');
    expect(firstLine(denied.stderr)).toBe(
      'ax-mcp: checkout.complete commits an order and moves money: nothing was sent [authorization_denied]',
    );
    expect(denied.stderr).toContain('hint: pass --yes to authorize it');
    expect(demo.shopState()?.charges.filter((c) => c.checkoutId === checkout.id)).toEqual([]);

    const key = crypto.randomUUID();
    const done = await run([...complete, '--allow-localhost', '--yes', '--idempotency-key', key]);
    expect(done.code, done.stderr).toBe(0);
    const completed = JSON.parse(done.stdout) as { status: string; order: { id: string } };
    expect(completed.status).toBe('completed');
    expect(JSON.stringify(completed)).not.toContain('tok_demo');
    const replay = await run([...complete, '--allow-localhost', '--yes', '--idempotency-key', key]);
    expect(replay.code, replay.stderr).toBe(0);
    expect((JSON.parse(replay.stdout) as { order: { id: string } }).order).toEqual(completed.order);
    expect(demo.shopState()?.charges.filter((c) => c.checkoutId === checkout.id)).toEqual([
      { checkoutId: checkout.id, amount: 1700, currency: 'USD' },
    ]);

    const order = await run([
      'ucp',
      'call',
      shop,
      'order.get',
      `{"id":"${completed.order.id}"}`,
      '--allow-localhost',
    ]);
    expect(order.code, order.stderr).toBe(0);
    expect((JSON.parse(order.stdout) as { checkout_id: string }).checkout_id).toBe(checkout.id);
  });

  it('refuses bad operations, bad JSON and unknown flags with exit 2 and the usage', async () => {
    const cases: Array<[string[], string]> = [
      [
        ['checkout.completee'],
        'ax-mcp: unknown UCP operation "checkout.completee" (did you mean checkout.complete?)',
      ],
      [['catalog.search', '{not json'], 'ax-mcp: the arguments are not valid JSON'],
      [['catalog.search', '[1,2]'], 'ax-mcp: the arguments must be a JSON object'],
      [['catalog.search', '--args', '{'], 'ax-mcp: --args is not valid JSON'],
      [
        ['catalog.search', '{}', '--args', '{}'],
        'ax-mcp: give the arguments once: as the JSON after the operation, or --args',
      ],
      [['catalog.search', '--yse'], 'ax-mcp: ucp call: unknown flag --yse (did you mean --yes?)'],
      [[], 'ax-mcp: ucp call needs an operation after the business URL'],
      [['catalog.search', '--timeout', 'soon'], 'ax-mcp: --timeout must be milliseconds ≥ 1, not "soon"'],
      [['catalog.search', '--profile', 'ftp://x'], 'ax-mcp: --profile must be an http(s) URL, not "ftp://x"'],
      [
        ['catalog.search', '--idempotency-key', 'a b'],
        'ax-mcp: --idempotency-key must be 1-200 visible ASCII characters',
      ],
    ];
    for (const [extra, message] of cases) {
      const result = await run(['ucp', 'call', shop, ...extra, '--allow-localhost']);
      expect(result.code, extra.join(' ')).toBe(2);
      expect(firstLine(result.stderr), extra.join(' ')).toBe(message);
      expect(result.stderr).toContain('ax-mcp ucp call <business> <operation>');
    }
    const unknown = await run(['ucp', 'call', shop, 'refund', '--allow-localhost']);
    expect(firstLine(unknown.stderr)).toMatch(
      /^ax-mcp: unknown UCP operation "refund"; operations: catalog\.search, .*order\.get$/,
    );
    const sub = await run(['ucp', 'inspekt', shop]);
    expect(sub.code).toBe(2);
    expect(firstLine(sub.stderr)).toBe('ax-mcp: unknown ucp command "inspekt" (did you mean inspect?)');
    const notURL = await run(['ucp', 'inspect', 'shop.example']);
    expect(notURL.code).toBe(2);
    expect(firstLine(notURL.stderr)).toMatch(/is not a URL/);
  });

  it("reports the business's refusals and the network's, with a hint in flags", async () => {
    const missing = await run([
      'ucp',
      'call',
      shop,
      'checkout.get',
      '{"id":"chk_nope"}',
      '--allow-localhost',
    ]);
    expect(missing.code).toBe(1);
    expect(firstLine(missing.stderr)).toBe(
      'ax-mcp: checkout.get: the business answered HTTP 404 (not_found) [http_status]',
    );
    expect(missing.stderr).toContain('  error not_found: Checkout chk_nope not found');

    // The test business fetches platform profiles: the CLI's default one resolves nowhere.
    const unreachable = await run(['ucp', 'call', business.url, 'catalog.search', '{}', '--allow-localhost']);
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toContain('[http_status]');
    expect(unreachable.stderr).toContain('hint: the business fetches platform profiles: pass --profile');

    const closed = new AxMCPDemoServer({ keepAliveMs: 0 });
    const gone = new URL(await closed.start()).origin;
    await closed.close();
    const refused = await run(['ucp', 'inspect', gone, '--allow-localhost']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(
      /\[transport_error\]\nhint: nothing accepts connections at .*: is it running\?/,
    );
  });
});
