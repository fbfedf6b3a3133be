// @ts-check
// openai: [{"toolCalls":[{"name":"get_stock","arguments":{"sku":"widget-a"}}]},{"content":"{\"answer\":\"We hold 155 widget-a.\"}"}]
// ax-mcp records spans through @opentelemetry/api: register any OpenTelemetry SDK and a routed
// run shows up as one trace, from the delivery to the model's calls and the MCP tool calls it
// made, and the MCP requests carry that trace to the server (params._meta.traceparent).
// Needs the demo server: npx ax-mcp demo --serve (AX_MCP_ENDPOINT overrides the URL).
import { InMemorySpanExporter, NodeTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-node';
import {
  AxMCPClient,
  AxMCPStreamableHTTPTransport,
  ax,
  axOpenAICompatible,
  eventInput,
  eventPath,
  eventRoute,
  eventRuntime,
  eventTarget,
} from 'ax-mcp';

// #region register
// In production: an OTLP exporter in a BatchSpanProcessor. register() also installs the async
// context manager, without which no span is the parent of the next.
const exporter = new InMemorySpanExporter();
new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).register();
// #endregion register

const endpoint = process.env.AX_MCP_ENDPOINT ?? 'http://127.0.0.1:3000/mcp';
const inventory = new AxMCPClient(
  new AxMCPStreamableHTTPTransport(endpoint, { ssrfProtection: { allowLoopback: true } }),
  { namespace: 'inventory', authorizeToolCall: ({ tool }) => tool.annotations?.readOnlyHint === true },
);
const llm = axOpenAICompatible({ model: process.env.OPENAI_MODEL ?? 'gpt-4.1-mini' });

// #region run
const stock = ax('question:string -> answer:string', { mcp: inventory });
const answerer = eventTarget('answer-stock')
  .inputFields([{ name: 'question', type: 'string' }])
  .input(eventInput().field('question', eventPath.data('question')))
  .invoke(async ({ question }) => stock.forward(llm, { question: String(question) }, { maxSteps: 3 }))
  .build();
const runtime = eventRuntime({
  routes: [eventRoute('questions').types('app.question').wake(answerer).build()],
});
await runtime.start();
await runtime.publish({
  event: { id: 'q-1', source: 'app://desk', type: 'app.question', data: { question: 'How many widget-a?' } },
});
await runtime.waitForIdle();
await runtime.close();
await inventory.close();

// One trace: the delivery, and under it the model's two turns and the tool call between them.
const spans = exporter.getFinishedSpans();
const byId = new Map(spans.map((span) => [span.spanContext().spanId, span]));
/** @type {(span: (typeof spans)[number]) => number} */
const depth = (span) => {
  const parent = span.parentSpanContext && byId.get(span.parentSpanContext.spanId);
  return parent ? depth(parent) + 1 : 0;
};
/** @param {(typeof spans)[number]} span */
const startedAt = (span) => span.startTime;
const inOrder = [...spans].sort(
  (a, b) => startedAt(a)[0] - startedAt(b)[0] || startedAt(a)[1] - startedAt(b)[1],
);
for (const span of inOrder) {
  const { 'ax.event.status': status, 'ax.tool.name': tool, 'ax.ai.model': model } = span.attributes;
  console.log(`${'  '.repeat(depth(span))}${span.name}`, status ?? tool ?? model ?? '');
}
const names = new Set(spans.map((span) => span.name));
const traces = new Set(spans.map((span) => span.spanContext().traceId));
if (
  traces.size !== 1 ||
  !['ax.event.delivery', 'ax.ai.chat', 'ax.program.tool_call'].every((n) => names.has(n))
) {
  throw new Error(`expected one trace with a delivery, chats and a tool call; got ${[...names].join(', ')}`);
}
// #endregion run
