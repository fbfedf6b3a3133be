// The ax-mcp client under test for the official MCP conformance suite
// (`@modelcontextprotocol/conformance`). One program for every client scenario:
//
//   node conformance/client.mjs <server-url>
//
// The harness appends the server URL as the last argv word and sets
// MCP_CONFORMANCE_SCENARIO (which scenario), MCP_CONFORMANCE_PROTOCOL_VERSION (alpha
// harness only: the spec version the scenario runs at) and MCP_CONFORMANCE_CONTEXT
// (JSON: credentials or the calls to make). Everything on the wire is sent by ax-mcp's
// public API (../dist): this program only decides what a host would do, and checks what
// it got back. Exit 0 = the host did its part; non-zero with a reason on stderr otherwise.
//
// AX_CONFORMANCE_ERA=auto|legacy|modern overrides the era chosen from the scenario.

import {
  AxMCPClient,
  AxMCPError,
  AxMCPOAuthError,
  AxMCPSkillVerificationError,
  AxMCPStreamableHTTPTransport,
} from '../dist/index.js';

const MODERN = '2026-07-28';
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? '';
const serverUrl = process.argv.at(-1) ?? '';
const context = parseContext(process.env.MCP_CONFORMANCE_CONTEXT);
const specVersion = process.env.MCP_CONFORMANCE_PROTOCOL_VERSION;
const era = process.env.AX_CONFORMANCE_ERA ?? (specVersion === MODERN ? 'modern' : 'legacy');
/** Below the harness's own 30 s client timeout, so a hang is reported with the step it hung in. */
const DEADLINE_MS = Number(process.env.AX_CONFORMANCE_DEADLINE_MS ?? 25_000);

let step = 'starting';
/** The step a scenario failed in (close() runs after it and must not hide it). */
let failedStep;
const started = performance.now();

function log(message) {
  const ms = Math.round(performance.now() - started);
  process.stderr.write(`[ax-mcp-conformance ${scenario} +${ms}ms] ${message}\n`);
}

function parseContext(text) {
  if (!text) return {};
  try {
    const value = JSON.parse(text);
    return value && typeof value === 'object' ? value : {};
  } catch {
    return {};
  }
}

/** A host failure: the library did something the scenario shows to be wrong. */
class HostCheckFailed extends Error {
  name = 'HostCheckFailed';
}

function expect(condition, message) {
  if (!condition) throw new HostCheckFailed(message);
}

function textOf(result) {
  return (result?.content ?? [])
    .filter((block) => block?.type === 'text')
    .map((block) => block.text)
    .join('\n');
}

/** What a host answers when a server asks for input: accept forms, fixed sampling, one root. */
const HOST_HANDLERS = {
  elicitation: {
    // Accept with nothing filled in: ax-mcp fills the schema defaults (applyDefaults).
    form: (params) => {
      log(`elicitation/create (form): ${JSON.stringify(params.message)}`);
      return { action: 'accept', content: {} };
    },
    url: (params) => {
      log(`elicitation/create (url): ${params.url}`);
      return { action: 'accept' };
    },
  },
  sampling: (params) => {
    log(`sampling/createMessage (${params.messages.length} messages)`);
    return {
      role: 'assistant',
      content: { type: 'text', text: 'conformance sampling answer' },
      model: 'ax-mcp-conformance',
      stopReason: 'endTurn',
    };
  },
  roots: [{ uri: 'file:///tmp/ax-mcp-conformance', name: 'conformance' }],
};

// ---------------------------------------------------------------------------------------
// OAuth: what a host configures. ax-mcp does discovery, registration, PKCE, state and iss
// checks, token requests and refresh; the host only says who it is and opens the
// authorization URL. The harness's /authorize answers 302 to the redirect URI at once, so
// "opening" it is one fetch without following the redirect.

/** This client's Client ID Metadata Document URL (the harness knows it; it need not resolve). */
const CLIENT_METADATA_URL = 'https://conformance-test.local/client-metadata.json';
const REDIRECT_URI = 'http://localhost:3000/callback';

/** The headless "browser": GET the authorization URL, read the redirect's query. */
async function headlessAuthorize(url) {
  log(`authorize: ${url.origin}${url.pathname} scope=${url.searchParams.get('scope') ?? '(none)'}`);
  const response = await fetch(url, { redirect: 'manual' });
  await response.body?.cancel();
  const location = response.headers.get('location');
  if (response.status < 300 || response.status > 399 || !location) {
    throw new HostCheckFailed(`the authorization endpoint answered ${response.status} without a redirect`);
  }
  return new URL(location, url);
}

/** A PKCS#8 PEM private key as a WebCrypto key (for private_key_jwt). */
async function importPrivateKey(pem, algorithm) {
  const der = Buffer.from(pem.replace(/-----[^-]+-----/g, '').replace(/\s+/g, ''), 'base64');
  const params =
    algorithm === 'RS256'
      ? { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' }
      : {
          name: 'ECDSA',
          namedCurve: { ES256: 'P-256', ES384: 'P-384', ES512: 'P-521' }[algorithm ?? 'ES256'],
        };
  return crypto.subtle.importKey('pkcs8', der, params, false, ['sign']);
}

/** The transport's `oauth` option for this scenario, from MCP_CONFORMANCE_CONTEXT. */
async function oauthOptions() {
  const interactive = {
    redirectUri: REDIRECT_URI,
    onAuthCode: headlessAuthorize,
    clientMetadataUrl: CLIENT_METADATA_URL,
    clientMetadata: { clientName: 'ax-mcp-conformance-client' },
    onWarning: (message) => log(`oauth: ${message}`),
  };
  switch (scenario) {
    case 'auth/pre-registration':
      return { ...interactive, client: { clientId: context.client_id, clientSecret: context.client_secret } };
    case 'auth/client-credentials-basic':
      return {
        clientCredentials: true,
        client: { clientId: context.client_id, clientSecret: context.client_secret },
      };
    case 'auth/client-credentials-jwt':
      return {
        clientCredentials: true,
        client: {
          clientId: context.client_id,
          privateKey: await importPrivateKey(context.private_key_pem, context.signing_algorithm),
        },
      };
    case 'auth/cross-app-access-complete-flow':
    case 'auth/enterprise-managed-authorization':
      return {
        client: { clientId: context.client_id, clientSecret: context.client_secret },
        crossAppAccess: {
          idp: {
            tokenEndpoint: context.idp_token_endpoint,
            issuer: context.idp_issuer,
            clientId: context.idp_client_id,
          },
          idToken: context.idp_id_token,
        },
      };
    case 'auth/wif-jwt-bearer':
      return { client: { clientId: context.client_id }, workloadIdentity: { assertion: context.valid_jwt } };
    default:
      return interactive;
  }
}

function makeClient(options = {}, oauth = undefined) {
  const transport = new AxMCPStreamableHTTPTransport(serverUrl, {
    ssrfProtection: { allowHTTP: true, allowLoopback: true },
    onProtocolError: (error) => log(`transport skipped a protocol error: ${error.message}`),
    ...(oauth ? { oauth } : {}),
  });
  return new AxMCPClient(transport, {
    namespace: 'conformance',
    clientInfo: { name: 'ax-mcp-conformance-client', version: '0.1.0' },
    era,
    timeoutMs: 20_000,
    onWarning: (message) => log(`warning: ${message}`),
    onError: (error) => log(`background error: ${describe(error)}`),
    ...HOST_HANDLERS,
    ...options,
  });
}

async function connect(client) {
  step = 'connect';
  await client.init();
  log(`connected: era=${client.getEra()} protocolVersion=${client.protocolVersion}`);
}

// ---------------------------------------------------------------------------------------
// Scenarios. Each gets a fresh client and returns normally on success.

const SCENARIOS = {
  /** Handshake, then list tools (the server answers tools/list with an empty list). */
  async initialize(client) {
    await connect(client);
    step = 'tools/list';
    const { tools } = await client.listTools();
    log(`tools/list: ${tools.length} tools`);
  },

  /** List tools, then call add_numbers with two numbers and read the sum back. */
  async tools_call(client) {
    await connect(client);
    step = 'inspectCatalog';
    const catalog = await client.inspectCatalog();
    expect(
      catalog.tools.some((tool) => tool.name === 'add_numbers'),
      'the catalog lacks add_numbers',
    );
    step = 'tools/call add_numbers';
    const result = await client.callTool('add_numbers', { a: 5, b: 3 });
    const text = textOf(result);
    log(`add_numbers -> ${JSON.stringify(text)}`);
    expect(/\b8\b/.test(text), `add_numbers(5, 3) answered ${JSON.stringify(text)}`);
  },

  /**
   * The tool asks for a form whose fields all have defaults; the host accepts with empty
   * content and ax-mcp must fill every default in (SEP-1034).
   */
  async 'elicitation-sep1034-client-defaults'(client) {
    await connect(client);
    // The server sends elicitation/create unrelated to the call (on the standalone GET
    // stream, not the tools/call stream): a host that wants server requests listens.
    step = 'startListening';
    const listening = client.startListening({ onError: (error) => log(`listen: ${describe(error)}`) });
    await listening.ready;
    step = 'tools/call test_client_elicitation_defaults';
    const result = await client.callTool('test_client_elicitation_defaults', {});
    const text = textOf(result);
    log(`result: ${text}`);
    expect(text.startsWith('Elicitation completed'), `the tool answered ${JSON.stringify(text)}`);
    const content = JSON.parse(text.slice(text.indexOf('{')));
    for (const [field, value] of Object.entries({
      name: 'John Doe',
      age: 30,
      score: 95.5,
      status: 'active',
      verified: true,
    })) {
      expect(content[field] === value, `default of "${field}" not applied: ${JSON.stringify(content)}`);
    }
  },

  /**
   * The tool call's SSE stream is closed after a priming event with `retry: 500`; ax-mcp
   * must wait ~500 ms, resume with GET + Last-Event-ID and take the result from there.
   */
  async 'sse-retry'(client) {
    await connect(client);
    step = 'tools/call test_reconnection';
    const before = performance.now();
    const result = await client.callTool('test_reconnection', {});
    const elapsed = Math.round(performance.now() - before);
    const text = textOf(result);
    log(`test_reconnection -> ${JSON.stringify(text)} after ${elapsed} ms`);
    expect(text.includes('Reconnection test completed'), `unexpected result ${JSON.stringify(text)}`);
    expect(elapsed >= 450, `the result came after ${elapsed} ms: the retry field was not honoured`);
  },

  /**
   * Every request carries the `_meta` envelope and a matching MCP-Protocol-Version header;
   * the server rejects the very first request with -32022 and ax-mcp must retry with a
   * version from `data.supported`.
   */
  async 'request-metadata'(client) {
    await connect(client);
    step = 'tools/list';
    const { tools } = await client.listTools();
    log(`tools/list: ${tools.length} tools`);
  },

  /**
   * MRTR (SEP-2322): echo requestState exactly, never invent one, use a new JSON-RPC id
   * per round, keep input of one call out of other calls, and treat a result without
   * resultType as complete.
   */
  async 'sep-2322-client-request-state'() {
    let unrelated;
    let holder;
    const client = makeClient({
      elicitation: {
        form: async (params) => {
          log(`elicitation/create: ${JSON.stringify(params.message)}`);
          // Between the rounds of an MRTR call, an unrelated call must carry none of its state.
          if (!unrelated && holder) {
            step = 'tools/call test_mrtr_unrelated (between MRTR rounds)';
            unrelated = await holder.callTool('test_mrtr_unrelated', {});
          }
          return { action: 'accept', content: { confirmed: true } };
        },
      },
    });
    holder = client;
    try {
      await connect(client);
      step = 'tools/call test_mrtr_echo_state';
      const echo = await client.callTool('test_mrtr_echo_state', {});
      expect(textOf(echo) === 'echo-state-ok', `echo_state answered ${JSON.stringify(textOf(echo))}`);
      expect(textOf(unrelated) === 'unrelated-ok', `unrelated answered ${JSON.stringify(textOf(unrelated))}`);
      step = 'tools/call test_mrtr_no_state';
      const noState = await client.callTool('test_mrtr_no_state', {});
      expect(textOf(noState) === 'no-state-ok', `no_state answered ${JSON.stringify(textOf(noState))}`);
      step = 'tools/call test_mrtr_no_result_type';
      const plain = await client.callTool('test_mrtr_no_result_type', {});
      expect(
        textOf(plain) === 'no-result-type-test-ok',
        `no_result_type answered ${JSON.stringify(textOf(plain))}`,
      );
    } catch (error) {
      failedStep ??= step;
      throw error;
    } finally {
      await client.close();
    }
  },

  /** Mcp-Method on every POST and Mcp-Name on tools/call, resources/read, prompts/get (SEP-2243). */
  async 'http-standard-headers'(client) {
    await connect(client);
    step = 'inspectCatalog';
    const catalog = await client.inspectCatalog();
    log(
      `catalog: ${catalog.tools.length} tools, ${catalog.resources.length} resources, ${catalog.prompts.length} prompts`,
    );
    for (const tool of catalog.tools) {
      step = `tools/call ${tool.name}`;
      await client.callTool(tool.name, {});
    }
    for (const resource of catalog.resources) {
      step = `resources/read ${resource.uri}`;
      await client.readResource(resource.uri);
    }
    for (const prompt of catalog.prompts) {
      step = `prompts/get ${prompt.name}`;
      await client.getPrompt(prompt.name, {});
    }
    expect(
      catalog.tools.length > 0 && catalog.resources.length > 0 && catalog.prompts.length > 0,
      'empty catalog',
    );
  },

  /** Arguments of x-mcp-header properties are mirrored into Mcp-Param-* headers (SEP-2243). */
  async 'http-custom-headers'(client) {
    const calls = Array.isArray(context.toolCalls) ? context.toolCalls : [];
    expect(calls.length > 0, 'MCP_CONFORMANCE_CONTEXT has no toolCalls');
    await connect(client);
    for (const call of calls) {
      step = `tools/call ${call.name}`;
      const result = await client.callTool(call.name, call.arguments ?? {});
      log(`${call.name} -> ${JSON.stringify(textOf(result))}`);
    }
  },

  /**
   * Tools whose x-mcp-header annotations are invalid must be dropped: the host tries to
   * call every tool the server listed, and ax-mcp must refuse the invalid ones unsent.
   */
  async 'http-invalid-tool-headers'(client) {
    await connect(client);
    step = 'tools/list';
    const { tools: listed } = await client.listTools();
    step = 'inspectCatalog';
    const catalog = await client.inspectCatalog();
    const admitted = new Set(catalog.tools.map((tool) => tool.name));
    log(`server listed ${listed.length} tools; the catalog admits ${[...admitted].join(', ')}`);
    const called = [];
    for (const tool of listed) {
      step = `tools/call ${tool.name}`;
      try {
        await client.callTool(tool.name, sampleArguments(tool.inputSchema));
        called.push(tool.name);
      } catch (error) {
        if (!(error instanceof AxMCPError) || error.code !== 'invalid_argument') throw error;
        log(`refused ${tool.name}: ${error.message}`);
      }
    }
    expect(called.includes('valid_tool'), 'valid_tool could not be called');
    const wrong = called.filter((name) => name !== 'valid_tool');
    expect(wrong.length === 0, `ax-mcp sent calls to tools with invalid x-mcp-header: ${wrong.join(', ')}`);
  },

  /** A network `$ref` in an inputSchema must never be fetched (SEP-2106). */
  async 'json-schema-ref-no-deref'(client) {
    await connect(client);
    step = 'inspectCatalog';
    const catalog = await client.inspectCatalog();
    const tool = catalog.tools.find((candidate) => candidate.name === 'lookup_user');
    expect(tool, 'the catalog lacks lookup_user');
    expect(
      typeof tool.inputSchema?.properties?.profile?.$ref === 'string',
      `the network $ref was not kept verbatim: ${JSON.stringify(tool.inputSchema?.properties?.profile)}`,
    );
  },

  /** The focal tool's inputSchema must survive ax-mcp unchanged: echo it back through a tool. */
  async 'json-schema-2020-12-preservation'(client) {
    await connect(client);
    step = 'inspectCatalog';
    const catalog = await client.inspectCatalog();
    const focal = catalog.tools.find((tool) => tool.name === 'json_schema_2020_12_tool');
    expect(focal, 'the catalog lacks json_schema_2020_12_tool');
    step = 'tools/call json_schema_echo';
    await client.callTool('json_schema_echo', { schema: focal.inputSchema });
    for (const keyword of ['$schema', '$defs', 'additionalProperties', 'allOf', 'if', 'then', 'else']) {
      expect(keyword in focal.inputSchema, `"${keyword}" is missing from the inputSchema ax-mcp returned`);
    }
  },
};

// SEP-2640 (skills extension): the host must list skills with `skills/list` and verify
// each file it reads against the entry's digest, size and frontmatter.
for (const name of [
  'sep-2640-client-no-prefetch',
  'sep-2640-client-verify-digest',
  'sep-2640-client-verify-size',
  'sep-2640-client-verify-frontmatter',
]) {
  SCENARIOS[name] = async (client) => {
    await connect(client);
    step = 'skills/list';
    const { skills } = await client.listSkills();
    expect(skills.length > 0, 'the server listed no skills');
    // Listing must not fetch anything: a host reads a skill's files only when it loads the skill.
    if (name === 'sep-2640-client-no-prefetch') return;
    const [skill] = skills;
    step = `load ${skill.uri}`;
    let loaded;
    try {
      loaded = await client.loadSkill(skill);
    } catch (error) {
      if (error instanceof AxMCPSkillVerificationError) {
        log(`refused the skill as expected: ${error.message}`);
        return;
      }
      throw error;
    }
    // Verified: the supporting files may now be read, each verified too.
    for (const file of skill.resources === 'dynamic' ? [] : skill.resources) {
      if (file.uri === skill.uri) continue;
      step = `read ${file.uri}`;
      await client.readSkillFile(loaded, file.uri);
    }
  };
}

/**
 * Scenarios where ax-mcp must refuse, and the AxMCPOAuthError code that says why. The host
 * expects that refusal: completing the flow would be the failure.
 */
const EXPECTED_REFUSALS = {
  'auth/resource-mismatch': 'oauth_resource_mismatch',
  'auth/iss-supported-missing': 'oauth_issuer_mismatch',
  'auth/iss-wrong-issuer': 'oauth_issuer_mismatch',
  'auth/iss-unexpected': 'oauth_issuer_mismatch',
  'auth/iss-normalized': 'oauth_issuer_mismatch',
  'auth/metadata-issuer-mismatch': 'oauth_issuer_mismatch',
};

/** Connect, list tools, call the first one: what a host does (OAuth happens on the way). */
async function generic(client) {
  await connect(client);
  step = 'inspectCatalog';
  const catalog = await client.inspectCatalog();
  const [first] = catalog.tools;
  if (first) {
    step = `tools/call ${first.name}`;
    await client.callTool(first.name, sampleArguments(first.inputSchema));
  }
}

/** An auth scenario: the generic host flow, with a refusal expected where the scenario demands one. */
async function authScenario(client) {
  const refusal = EXPECTED_REFUSALS[scenario];
  try {
    await generic(client);
  } catch (error) {
    if (refusal && error instanceof AxMCPOAuthError && error.code === refusal) {
      log(`refused as expected: ${describe(error)}`);
      return;
    }
    // scope-retry-limit: the server never accepts; ax-mcp must give up (bounded) with the 403.
    if (scenario === 'auth/scope-retry-limit' && error instanceof AxMCPError && error.status === 403) {
      log(`gave up as expected: ${describe(error)}`);
      return;
    }
    throw error;
  }
  expect(!refusal, `ax-mcp completed the flow, but it had to refuse (${refusal})`);
  expect(scenario !== 'auth/scope-retry-limit', 'the server never grants the scope, yet the call succeeded');
}

/** Arguments that fit a simple object schema: one value of the declared type per property. */
function sampleArguments(schema) {
  const args = {};
  for (const [name, property] of Object.entries(schema?.properties ?? {})) {
    const type = Array.isArray(property?.type) ? property.type[0] : property?.type;
    args[name] =
      type === 'integer'
        ? 1
        : type === 'number'
          ? 1.5
          : type === 'boolean'
            ? true
            : type === 'object'
              ? {}
              : type === 'array'
                ? []
                : type === 'null'
                  ? null
                  : 'x';
  }
  return args;
}

function describe(error) {
  if (error instanceof AxMCPError) {
    const extra = [];
    if ('rpcCode' in error) extra.push(`rpcCode=${error.rpcCode}`);
    if ('status' in error) extra.push(`status=${error.status}`);
    if (error.data !== undefined) extra.push(`data=${JSON.stringify(error.data)}`);
    if (error.bodySnippet) extra.push(`body=${JSON.stringify(error.bodySnippet)}`);
    const cause = error.cause instanceof Error ? ` (cause: ${error.cause.message})` : '';
    return `${error.name} [${error.code}] ${error.message}${extra.length ? ` {${extra.join(', ')}}` : ''}${cause}`;
  }
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

async function main() {
  if (!scenario) throw new HostCheckFailed('MCP_CONFORMANCE_SCENARIO is not set');
  if (!/^https?:\/\//.test(serverUrl))
    throw new HostCheckFailed(`the last argument is not a URL: ${serverUrl}`);
  log(`server ${serverUrl}, era ${era}${specVersion ? `, spec ${specVersion}` : ''}`);
  const auth = scenario.startsWith('auth/');
  const run = SCENARIOS[scenario] ?? (auth ? authScenario : generic);
  if (run.length === 0) {
    await run();
    return;
  }
  const client = makeClient({}, auth ? await oauthOptions() : undefined);
  try {
    await run(client);
  } catch (error) {
    failedStep ??= step;
    throw error;
  } finally {
    const last = step;
    step = 'close';
    await client.close();
    step = last;
  }
}

const watchdog = setTimeout(() => {
  log(`FAILED: no outcome after ${DEADLINE_MS} ms, still in step "${step}"`);
  process.exit(3);
}, DEADLINE_MS);

main().then(
  () => {
    clearTimeout(watchdog);
    log('OK');
    process.exitCode = 0;
    // After close() nothing of ax-mcp may keep the process alive: say so if something does.
    setTimeout(() => {
      const handles = process.getActiveResourcesInfo().filter((kind) => kind !== 'TTYWrap');
      log(`warning: still alive 3 s after close(); active resources: ${handles.join(', ')}`);
      process.exit(0);
    }, 3000).unref();
  },
  (error) => {
    clearTimeout(watchdog);
    log(`FAILED in step "${failedStep ?? step}": ${describe(error)}`);
    process.exitCode = 1;
  },
);
