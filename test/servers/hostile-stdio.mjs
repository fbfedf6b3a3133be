/**
 * A raw stdio MCP peer (newline-delimited JSON-RPC, no SDK) that answers with lines too long for
 * the client, run as a child process by test/transport-stdio-oversized.test.ts. It speaks just
 * enough 2025-11-25 (`initialize`, `tools/list`, `ping`) and has these tools:
 *
 * - `big {layout, ms = 0}`: after `ms`, answers with a line of about OVERSIZE bytes (env, default
 *   256 KiB). `layout`: `id-first` (`{"jsonrpc","id","result":…}`, the id readable from the
 *   start), `result-first` (`{"result":…,"jsonrpc","id"}`, the id only at the very end), or
 *   `notification` (an oversized `notifications/message` first, then a normal answer).
 * - `slow {ms, oversized = false}`: answers after `ms` (with `oversized`, result-first and too large).
 * - `ok`: answers at once.
 * - `log`: writes a log line to stdout (as a misconfigured server does), then answers.
 *
 * It ignores `notifications/cancelled`: a cancelled call still gets its (late) answer.
 */
const OVERSIZE = Number(process.env.OVERSIZE ?? 256 * 1024);
const write = (text) => process.stdout.write(`${text}\n`);
const send = (message) => write(JSON.stringify(message));
const padding = () => 'x'.repeat(OVERSIZE);
const text = (value) => ({ content: [{ type: 'text', text: value }] });

const TOOLS = ['big', 'slow', 'ok', 'log'].map((name) => ({
  name,
  inputSchema: { type: 'object', properties: {}, additionalProperties: true },
}));

function bigAnswer(id, layout) {
  const result = JSON.stringify({ ...text('big'), padding: padding() });
  if (layout === 'result-first')
    return write(`{"result":${result},"jsonrpc":"2.0","id":${JSON.stringify(id)}}`);
  return write(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${result}}`);
}

function call(id, name, args) {
  const ms = Number(args.ms ?? 0);
  if (name === 'ok') return send({ jsonrpc: '2.0', id, result: text('ok') });
  if (name === 'log') {
    write('[info] handling the log tool');
    return send({ jsonrpc: '2.0', id, result: text('logged') });
  }
  if (name === 'slow') {
    return setTimeout(() => {
      if (args.oversized) bigAnswer(id, 'result-first');
      else send({ jsonrpc: '2.0', id, result: text('slow done') });
    }, ms);
  }
  if (name === 'big') {
    return setTimeout(() => {
      if (args.layout === 'notification') {
        send({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: padding() } });
        return send({ jsonrpc: '2.0', id, result: text('after the notification') });
      }
      bigAnswer(id, args.layout);
    }, ms);
  }
  send({ jsonrpc: '2.0', id, error: { code: -32602, message: `Unknown tool ${name}` } });
}

function handle(message) {
  if (message.id === undefined) return; // notifications, cancellations included, are ignored
  const { id, method, params = {} } = message;
  if (method === 'initialize') {
    return send({
      jsonrpc: '2.0',
      id,
      result: {
        protocolVersion: '2025-11-25',
        capabilities: { tools: {} },
        serverInfo: { name: 'hostile-stdio', version: '1.0.0' },
      },
    });
  }
  if (method === 'tools/list') return send({ jsonrpc: '2.0', id, result: { tools: TOOLS } });
  if (method === 'ping') return send({ jsonrpc: '2.0', id, result: {} });
  if (method === 'tools/call') return call(id, params.name, params.arguments ?? {});
  send({ jsonrpc: '2.0', id, error: { code: -32601, message: `Method not found: ${method}` } });
}

let buffer = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (data) => {
  buffer += data;
  for (let i = buffer.indexOf('\n'); i >= 0; i = buffer.indexOf('\n')) {
    const line = buffer.slice(0, i);
    buffer = buffer.slice(i + 1);
    if (line.trim() !== '') handle(JSON.parse(line));
  }
});
process.stdin.on('end', () => process.exit(0));
