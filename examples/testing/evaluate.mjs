// @ts-check
// openai: [{"toolCalls":[{"name":"get_stock","arguments":{"sku":"widget-a"}}]},{"content":"{\"total\":155}"},{"toolCalls":[{"name":"get_stock","arguments":{"sku":"gadget-x"}}]},{"content":"{\"total\":43}"},{"toolCalls":[{"name":"get_stock","arguments":{"sku":"widget-a"}}]},{"content":"{\"total\":155}"},{"toolCalls":[{"name":"get_stock","arguments":{"sku":"gadget-x"}}]},{"content":"{\"total\":40}"}]
// axEvaluate runs a program on every example and scores it. MCP is replayed by default: an
// evaluation runs a program many times, and against a live server every run would repeat its
// side effects. Record one live evaluation on purpose, then evaluate from the recording.
// Needs the demo server: npx ax-mcp demo --serve (AX_MCP_ENDPOINT overrides the URL).
import { AxMCPClient, AxMCPStreamableHTTPTransport, ax, axEvaluate, axOpenAICompatible } from 'ax-mcp';
import { AxMCPRecordingTransport, AxMCPReplayTransport } from 'ax-mcp/testing';

const endpoint = process.env.AX_MCP_ENDPOINT ?? 'http://127.0.0.1:3000/mcp';
const llm = axOpenAICompatible({ model: process.env.OPENAI_MODEL ?? 'gpt-4.1-mini' });

// #region setup
const stock = ax('question:string -> total:number', { instructions: 'Use get_stock.' });
const examples = [
  { input: { question: 'How many widget-a do we hold in all warehouses?' }, expected: { total: 155 } },
  { input: { question: 'How many gadget-x do we hold in all warehouses?' }, expected: { total: 43 } },
];
/** @param {{ output: { total: number }, expected?: { total?: number } }} run */
const metric = ({ output, expected }) => (output.total === expected?.total ? 1 : 0);
// #endregion setup

// #region live
const recorder = new AxMCPRecordingTransport(
  new AxMCPStreamableHTTPTransport(endpoint, { ssrfProtection: { allowLoopback: true } }),
);
const live = new AxMCPClient(recorder, { namespace: 'inventory' });
const refused = await axEvaluate(stock, llm, { mcp: live, examples, metric }).catch((error) => error);
console.log('by default:', refused.code); // live_mcp_in_evaluation, before any request
const baseline = await axEvaluate(stock, llm, { mcp: live, examples, metric, evaluationMode: 'live' });
await live.close();
const recording = recorder.recording(); // JSON: write it next to your tests
console.log('live score', baseline.score);
// #endregion live

// #region replay
const replayed = new AxMCPClient(new AxMCPReplayTransport(recording, { strict: true }), {
  namespace: 'inventory',
});
const { score, runs } = await axEvaluate(stock, llm, { mcp: replayed, examples, metric });
console.log(
  'replayed score',
  score,
  runs.map((run) => run.output?.total ?? String(run.error)),
);
await replayed.close();
// #endregion replay
