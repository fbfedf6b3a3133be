// One adapter per client under test, all with the same small face:
//   connect()                 → initialized (legacy handshake / modern discovery done)
//   call(i)                   → one `tools/call` of `echo`
//   catalog()                 → every tool over every page, as the client's own API gives them
//   subscribe(uris, onUpdate) → subscriptions plus the stream they arrive on (legacy: GET
//                               stream; modern: a listen stream), `onUpdate(uri)` per update
//   close()
// `supports` lists the scenarios an adapter can run; the others are reported as "n/a".
// Options beyond the defaults are named in `notes` and printed under the results table.

import { readFileSync } from 'node:fs';
import http from 'node:http';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const dist = resolve(process.env.AX_MCP_DIST ?? new URL('../dist', import.meta.url).pathname);
// A second build to compare against in the same interleaved run (e.g. the tree before a change,
// built with `npx tsc -p tsconfig.build.json --outDir <dir>`): adds `ax-mcp/node@baseline` and
// `ax-mcp@baseline` beside the two entries.
const baseline = process.env.AX_MCP_BASELINE_DIST ? resolve(process.env.AX_MCP_BASELINE_DIST) : undefined;
const loadFrom = (from, path) => import(pathToFileURL(join(from, path)).href);

export const MODERN_VERSION = '2026-07-28';
export const LEGACY_VERSION = '2025-11-25';
const CLIENT_INFO = { name: 'bench', version: '1.0.0' };

/** Versions of the packages compared, read from their package.json. */
export function peerVersions() {
  const version = (name) => {
    try {
      return JSON.parse(
        readFileSync(new URL(`../node_modules/${name}/package.json`, import.meta.url), 'utf8'),
      ).version;
    } catch {
      return 'not installed';
    }
  };
  return {
    '@modelcontextprotocol/client': version('@modelcontextprotocol/client'),
    '@modelcontextprotocol/sdk': version('@modelcontextprotocol/sdk'),
    '@ax-llm/ax': version('@ax-llm/ax'),
    '@modelcontextprotocol/server': version('@modelcontextprotocol/server'),
  };
}

// ---- ax-mcp -----------------------------------------------------------------------------------

async function axMcp(url, era, { node, from = dist }) {
  const loadDist = (path) => loadFrom(from, path);
  const { AxMCPClient, AxMCPStreamableHTTPTransport } = await loadDist('index.js');
  const loopback = { allowLoopback: true };
  let transport;
  let fetchToClose;
  if (node) {
    const nodeEntry = await loadDist('node.js');
    if (nodeEntry.AxMCPNodeHTTPTransport) {
      transport = new nodeEntry.AxMCPNodeHTTPTransport(url, { ssrfProtection: loopback });
    } else {
      fetchToClose = nodeEntry.createNodeFetch({ ssrfProtection: loopback });
      transport = new AxMCPStreamableHTTPTransport(url, { ssrfProtection: loopback, fetch: fetchToClose });
    }
  } else {
    transport = new AxMCPStreamableHTTPTransport(url, { ssrfProtection: loopback });
  }
  const client = new AxMCPClient(transport, { namespace: 'bench', era, maxPaginationPages: 1000 });
  let unsubscribe;
  return {
    client,
    connect: () => client.init(),
    call: (i) => client.callTool('echo', { message: `m${i}` }),
    catalog: async () => (await client.inspectCatalog()).tools,
    async subscribe(uris, onUpdate) {
      unsubscribe = client.subscribeEvents((event) => {
        if (event.type === 'resource_updated') onUpdate(event.uri);
      });
      await Promise.all(uris.map((uri) => client.subscribeResource(uri)));
    },
    async close() {
      unsubscribe?.();
      await client.close();
      fetchToClose?.close();
    },
  };
}

// ---- @modelcontextprotocol/client (SDK v2) ----------------------------------------------------

async function sdkV2(url, era) {
  const { Client, StreamableHTTPClientTransport } = await import('@modelcontextprotocol/client');
  const options = { listMaxPages: 1000 };
  if (era === 'modern') options.versionNegotiation = { mode: { pin: MODERN_VERSION } };
  const client = new Client(CLIENT_INFO, options);
  const transport = new StreamableHTTPClientTransport(new URL(url));
  let subscription;
  return {
    connect: () => client.connect(transport),
    call: (i) => client.callTool({ name: 'echo', arguments: { message: `m${i}` } }),
    catalog: async () => (await client.listTools()).tools,
    async subscribe(uris, onUpdate) {
      client.setNotificationHandler('notifications/resources/updated', (n) => onUpdate(n.params.uri));
      if (era === 'modern') subscription = await client.listen({ resourceSubscriptions: uris });
      else await Promise.all(uris.map((uri) => client.subscribeResource({ uri })));
    },
    async close() {
      await subscription?.close().catch(() => {});
      await transport.terminateSession?.().catch(() => {});
      await client.close();
    },
  };
}

// ---- @modelcontextprotocol/sdk (SDK v1, 2025-11-25 only) --------------------------------------

async function sdkV1(url) {
  const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
  const { StreamableHTTPClientTransport } = await import(
    '@modelcontextprotocol/sdk/client/streamableHttp.js'
  );
  const { ResourceUpdatedNotificationSchema } = await import('@modelcontextprotocol/sdk/types.js');
  const client = new Client(CLIENT_INFO);
  const transport = new StreamableHTTPClientTransport(new URL(url));
  return {
    connect: () => client.connect(transport),
    call: (i) => client.callTool({ name: 'echo', arguments: { message: `m${i}` } }),
    async catalog() {
      // v1 has no aggregate: the caller walks the cursor.
      const tools = [];
      let cursor;
      do {
        const page = await client.listTools(cursor === undefined ? undefined : { cursor });
        tools.push(...page.tools);
        cursor = page.nextCursor;
      } while (cursor);
      return tools;
    },
    async subscribe(uris, onUpdate) {
      client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => onUpdate(n.params.uri));
      await Promise.all(uris.map((uri) => client.subscribeResource({ uri })));
    },
    async close() {
      await transport.terminateSession().catch(() => {});
      await client.close();
    },
  };
}

// ---- @ax-llm/ax ---------------------------------------------------------------------------------

async function ax(url, era, { maxResponseBytes } = {}) {
  const { AxMCPClient, AxMCPStreamableHTTPTransport } = await import('@ax-llm/ax');
  const transport = new AxMCPStreamableHTTPTransport(url, {
    ssrfProtection: { allowHTTP: true, allowLoopback: true },
    ...(maxResponseBytes ? { maxResponseBytes } : {}),
  });
  let onUpdate = () => {};
  const client = new AxMCPClient(transport, {
    era,
    namespace: 'bench',
    maxPaginationPages: 1000,
    onResourceUpdated: (uri) => onUpdate(uri),
  });
  let listening;
  return {
    connect: () => client.init(),
    call: (i) => client.callTool('echo', { message: `m${i}` }),
    catalog: async () => (await client.inspectCatalog({ refresh: true })).tools,
    async subscribe(uris, handler) {
      onUpdate = handler;
      await Promise.all(uris.map((uri) => client.subscribeResource(uri)));
      // Ax delivers updates only while a listener runs (GET stream, or the listen stream).
      listening = await client.startListening();
      await listening.ready;
    },
    async close() {
      await listening?.close();
      await client.close();
    },
  };
}

// ---- raw loops: the same JSON-RPC bodies, no client library ---------------------------------

function rawHeaders(era, method, name) {
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  if (era === 'modern') {
    headers['mcp-protocol-version'] = MODERN_VERSION;
    headers['mcp-method'] = method;
    if (name) headers['mcp-name'] = name;
  }
  return headers;
}

// The bodies ax-mcp sends (its default capabilities and a progress token), so that the server
// does the same work for the raw loops as for ax-mcp.
const RAW_CAPABILITIES = {
  extensions: { 'io.modelcontextprotocol/skills': {}, 'io.modelcontextprotocol/tasks': {} },
};

function rawMeta(era, id) {
  return era === 'modern'
    ? {
        'io.modelcontextprotocol/protocolVersion': MODERN_VERSION,
        'io.modelcontextprotocol/clientCapabilities': RAW_CAPABILITIES,
        'io.modelcontextprotocol/clientInfo': CLIENT_INFO,
        progressToken: id,
      }
    : { progressToken: id };
}

/** The one JSON-RPC message in a JSON or SSE body. */
function parseAnswer(text, contentType) {
  if (!contentType?.startsWith('text/event-stream')) return JSON.parse(text);
  for (const line of text.split('\n')) {
    if (line.startsWith('data: ')) {
      const message = JSON.parse(line.slice(6));
      if ('id' in message) return message;
    }
  }
  throw new Error('no answer in the SSE body');
}

/** A raw client over a `post(headers, body) → { status, headers, text }` primitive. */
function rawClient(era, post, openStream) {
  let id = 0;
  let session;
  const send = async (method, params, name) => {
    const headers = rawHeaders(era, method, name);
    if (session) {
      headers['mcp-session-id'] = session;
      headers['mcp-protocol-version'] = LEGACY_VERSION;
    }
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: ++id,
      method,
      params: method === 'initialize' ? params : { ...params, _meta: rawMeta(era, id) },
    });
    const answer = await post(headers, body);
    if (answer.status !== 200) throw new Error(`HTTP ${answer.status}: ${answer.text.slice(0, 200)}`);
    session ??= answer.session;
    const message = parseAnswer(answer.text, answer.contentType);
    if (message.error) throw new Error(message.error.message);
    return message.result;
  };
  return {
    async connect() {
      if (era === 'modern') return send('server/discover', {});
      await send('initialize', {
        protocolVersion: LEGACY_VERSION,
        capabilities: { extensions: { 'io.modelcontextprotocol/skills': {} } },
        clientInfo: CLIENT_INFO,
      });
      const headers = rawHeaders(era);
      headers['mcp-session-id'] = session;
      headers['mcp-protocol-version'] = LEGACY_VERSION;
      await post(headers, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
    },
    call: (i) => send('tools/call', { name: 'echo', arguments: { message: `m${i}` } }, 'echo'),
    async catalog() {
      const tools = [];
      let cursor;
      do {
        const page = await send('tools/list', cursor === undefined ? {} : { cursor });
        for (const tool of page.tools) tools.push(tool);
        cursor = page.nextCursor;
      } while (cursor);
      return tools;
    },
    async subscribe(uris, onUpdate) {
      if (era === 'legacy') {
        for (const uri of uris) await send('resources/subscribe', { uri });
        const headers = {
          accept: 'text/event-stream',
          'mcp-session-id': session,
          'mcp-protocol-version': LEGACY_VERSION,
        };
        await openStream('GET', headers, undefined, onUpdate);
        return;
      }
      const headers = rawHeaders(era, 'subscriptions/listen');
      const body = JSON.stringify({
        jsonrpc: '2.0',
        id: ++id,
        method: 'subscriptions/listen',
        params: { notifications: { resourceSubscriptions: uris }, _meta: rawMeta(era, id) },
      });
      await openStream('POST', headers, body, onUpdate);
    },
    close: async () => {},
  };
}

/** Reads SSE `data:` lines of resource updates from a stream of chunks. */
function sseUpdates(onUpdate) {
  let buffer = '';
  return (chunk) => {
    buffer += chunk;
    let end = buffer.indexOf('\n\n');
    while (end !== -1) {
      const event = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const at = event.indexOf('data: ');
      if (at !== -1) {
        const message = JSON.parse(event.slice(at + 6));
        if (message.method === 'notifications/resources/updated') onUpdate(message.params.uri);
      }
      end = buffer.indexOf('\n\n');
    }
  };
}

function rawFetch(url, era) {
  const streams = [];
  const post = async (headers, body) => {
    const response = await fetch(url, { method: 'POST', headers, body });
    return {
      status: response.status === 202 ? 200 : response.status,
      session: response.headers.get('mcp-session-id') ?? undefined,
      contentType: response.headers.get('content-type') ?? '',
      text: response.status === 202 ? '{"result":{}}' : await response.text(),
    };
  };
  const openStream = async (method, headers, body, onUpdate) => {
    const controller = new AbortController();
    streams.push(controller);
    const response = await fetch(url, { method, headers, body, signal: controller.signal });
    const push = sseUpdates(onUpdate);
    const decoder = new TextDecoder();
    (async () => {
      try {
        for await (const chunk of response.body) push(decoder.decode(chunk, { stream: true }));
      } catch {
        // aborted at close
      }
    })();
  };
  const client = rawClient(era, post, openStream);
  client.close = async () => {
    for (const c of streams) c.abort();
  };
  return client;
}

function rawHTTP(url, era) {
  const agent = new http.Agent({ keepAlive: true });
  const target = new URL(url);
  const request = (method, headers, body) =>
    http.request({
      hostname: target.hostname,
      port: target.port,
      path: target.pathname,
      method,
      headers: body === undefined ? headers : { ...headers, 'content-length': Buffer.byteLength(body) },
      agent,
    });
  const post = (headers, body) =>
    new Promise((resolvePost, reject) => {
      const req = request('POST', headers, body);
      req.on('error', reject);
      req.on('response', (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => {
          text += chunk;
        });
        res.on('end', () =>
          resolvePost({
            status: res.statusCode === 202 ? 200 : res.statusCode,
            session: res.headers['mcp-session-id'],
            contentType: res.headers['content-type'] ?? '',
            text: res.statusCode === 202 ? '{"result":{}}' : text,
          }),
        );
      });
      req.end(body);
    });
  const openStream = (method, headers, body, onUpdate) =>
    new Promise((resolveOpen, reject) => {
      const req = request(method, headers, body);
      req.on('error', reject);
      req.on('response', (res) => {
        res.setEncoding('utf8');
        res.on('data', sseUpdates(onUpdate));
        res.on('error', () => {});
        resolveOpen();
      });
      req.end(body);
    });
  const client = rawClient(era, post, openStream);
  client.close = async () => agent.destroy();
  return client;
}

// ---- the registry -------------------------------------------------------------------------------

const ALL = ['call', 'catalog', 'fanin', 'idle', 'subs'];

/** name → { label, eras, supports, notes, create(url, era, scenario) } */
export const ADAPTERS = {
  'ax-mcp/node': {
    label: 'ax-mcp (node entry)',
    eras: ['modern', 'legacy'],
    supports: ALL,
    create: (url, era) => axMcp(url, era, { node: true }),
  },
  'ax-mcp': {
    label: 'ax-mcp (core, global fetch)',
    eras: ['modern', 'legacy'],
    supports: ALL,
    create: (url, era) => axMcp(url, era, { node: false }),
  },
  ...(baseline
    ? {
        'ax-mcp/node@baseline': {
          label: 'ax-mcp (node entry, baseline build)',
          eras: ['modern', 'legacy'],
          supports: ALL,
          create: (url, era) => axMcp(url, era, { node: true, from: baseline }),
        },
        'ax-mcp@baseline': {
          label: 'ax-mcp (core, global fetch, baseline build)',
          eras: ['modern', 'legacy'],
          supports: ALL,
          create: (url, era) => axMcp(url, era, { node: false, from: baseline }),
        },
      }
    : {}),
  'sdk-v2': {
    label: `@modelcontextprotocol/client`,
    eras: ['modern', 'legacy'],
    supports: ALL,
    notes: ['listMaxPages: 1000 (the default, 64 pages, cannot list a 100-page catalog)'],
    create: (url, era) => sdkV2(url, era),
  },
  'sdk-v1': {
    label: `@modelcontextprotocol/sdk`,
    eras: ['legacy'],
    supports: ALL,
    create: (url, era) => sdkV1(url, era),
  },
  ax: {
    label: `@ax-llm/ax`,
    eras: ['modern', 'legacy'],
    supports: ALL,
    notes: [],
    create: (url, era, scenario) =>
      // Ax counts every byte of a long-lived stream against maxResponseBytes (16 MiB): with the
      // default it drops the stream after ~85,000 updates. Fan-in raises the cap so it can finish.
      ax(url, era, scenario === 'fanin' ? { maxResponseBytes: 2 ** 30 } : {}),
  },
  'raw-fetch': {
    label: 'raw fetch (no library)',
    eras: ['modern', 'legacy'],
    supports: ['call', 'catalog', 'fanin'],
    create: (url, era) => rawFetch(url, era),
  },
  'raw-http': {
    label: 'raw node:http keep-alive (no library)',
    eras: ['modern', 'legacy'],
    supports: ['call', 'catalog', 'fanin'],
    create: (url, era) => rawHTTP(url, era),
  },
};
