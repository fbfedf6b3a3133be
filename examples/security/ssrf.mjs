// @ts-check
/**
 * What SSRF protection lets through, policy by policy, checked without touching the network:
 * the guarded fetch runs the policy, and a stub stands in for the real fetch behind it. Then the
 * DNS-rebinding guard of `ax-mcp/node` and the credential stripping of a cross-origin redirect.
 * Run: `node examples/security/ssrf.mjs`.
 */
import { AxMCPSSRFError, createGuardedFetch } from 'ax-mcp';
import { createNodeFetch } from 'ax-mcp/node';

/** @type {import('ax-mcp').AxMCPFetch} */
const stub = async () => new Response('ok'); // nothing leaves this process

// #region policies
const urls = [
  'https://mcp.example.com/mcp',
  'http://mcp.example.com/mcp',
  'http://127.0.0.1:3000/mcp',
  'http://localhost:3000/mcp',
  'https://10.0.0.5/mcp',
  'http://169.254.169.254/latest/meta-data',
];
/** @type {Record<string, import('ax-mcp').AxMCPSSRFProtection>} */
const policies = {
  default: true,
  '{ allowLoopback }': { allowLoopback: true }, // what the CLI's --allow-localhost sets
  '{ allowHTTP, allowLoopback }': { allowHTTP: true, allowLoopback: true },
  '{ allowPrivateNetwork }': { allowPrivateNetwork: true },
};
for (const [name, ssrfProtection] of Object.entries(policies)) {
  const guarded = createGuardedFetch({ fetch: stub, ssrfProtection });
  const verdicts = [];
  for (const url of urls) {
    try {
      await guarded(url);
      verdicts.push(`  allowed  ${url}`);
    } catch (error) {
      if (!(error instanceof AxMCPSSRFError)) throw error;
      verdicts.push(`  refused  ${url}`);
    }
  }
  console.log(`${name}:\n${verdicts.join('\n')}`);
}
// #endregion policies

// #region rebinding
// In Node, the DNS-aware fetch checks every address a name resolves to, before connecting.
// Here a lookup that answers 127.0.0.1 for a public name stands in for a rebinding attack.
/** @type {any} */
const rebinding = (
  /** @type {string} */ _host,
  /** @type {any} */ _options,
  /** @type {Function} */ callback,
) => callback(null, [{ address: '127.0.0.1', family: 4 }]);
const nodeFetch = createNodeFetch({ lookup: rebinding });
try {
  await nodeFetch('https://innocent.example.com/mcp');
} catch (error) {
  console.log(error instanceof AxMCPSSRFError ? `rebinding: ${error.message}` : error);
} finally {
  nodeFetch.close();
}
// #endregion rebinding

// #region redirect
// A redirect to another origin drops the credentials, and every hop is checked again.
/** @type {string[]} */
const hops = [];
const guarded = createGuardedFetch({
  fetch: async (input, init) => {
    hops.push(`${input} authorization=${new Headers(init?.headers).has('authorization')}`);
    return String(input).startsWith('https://mcp.example.com')
      ? new Response(null, { status: 307, headers: { location: 'https://elsewhere.example.net/mcp' } })
      : new Response('ok');
  },
});
await guarded('https://mcp.example.com/mcp', { method: 'POST', headers: { authorization: 'Bearer t' } });
console.log(hops.join('\n'));
// #endregion redirect
