// @ts-check
// trigger: { "when": "waiting for", "tool": "adjust_stock", "arguments": { "warehouseId": "berlin", "sku": "widget-a", "delta": -30 } }
// openai: [{ "toolCalls": [{ "name": "get_stock", "arguments": { "sku": "widget-a" } }] }, { "content": "{\"advice\":\"Berlin is running low on widget-a: reorder 100.\",\"reorder\":[\"widget-a\"]}" }]
import {
  AxMCPClient,
  AxMCPEventSource,
  AxMCPStreamableHTTPTransport,
  ax,
  axOpenAICompatible,
  eventInput,
  eventPath,
  eventRoute,
  eventRuntime,
  eventTarget,
  MCP_EVENT_TYPES,
} from 'ax-mcp';

const endpoint = process.env.AX_MCP_ENDPOINT ?? 'http://127.0.0.1:3000/mcp';
const warehouse = 'inventory://warehouse/berlin';

// #region client
// The agent may read, never change: every tool call passes this guard first.
const client = new AxMCPClient(
  new AxMCPStreamableHTTPTransport(endpoint, { ssrfProtection: { allowLoopback: true } }),
  {
    namespace: 'inventory',
    authorizeToolCall: ({ tool }) => tool.annotations?.readOnlyHint === true,
  },
);
// #endregion client

// #region program
// Any OpenAI-compatible endpoint: OPENAI_API_KEY and OPENAI_BASE_URL are read from the environment.
const llm = axOpenAICompatible({ model: process.env.OPENAI_MODEL ?? 'gpt-4.1-mini' });
const advisor = ax(
  '"Advises on restocking a warehouse" warehouseUri:string -> advice:string, reorder:string[]',
  {
    mcp: client, // the program calls the inventory tools through the client, guard included
    mcpContext: [{ client: 'inventory', resource: { uri: warehouse } }], // read before the first model call
    instructions: 'Check the stock of low SKUs with get_stock before advising.',
  },
);
// #endregion program

// #region route
/** @type {(runId: string) => void} */
let finished = () => {};
/** @type {Promise<string>} */
const done = new Promise((resolve) => (finished = resolve));
const restockAgent = eventTarget('restock-agent')
  .program(advisor)
  .ai(llm)
  .input(eventInput().field('warehouseUri', eventPath.subject())) // the updated resource's URI
  .sink({ id: 'done', write: (_output, { run }) => finished(run.id) })
  .build();

const runtime = eventRuntime({
  sources: [
    new AxMCPEventSource({
      client,
      resourceSubscriptions: [warehouse],
      identity: { tenantId: 'demo' }, // from your verified authentication
      trust: 'authenticated',
    }),
  ],
  allowVolatile: true,
  routes: [
    // A subscription never wakes a model by itself: this route does, for authenticated events only.
    eventRoute('restock-on-update')
      .types(MCP_EVENT_TYPES.resourceUpdated)
      .authenticated()
      .wake(restockAgent)
      .build(),
  ],
});
await runtime.start();
console.log(`waiting for updates of ${warehouse}`);
// #endregion route

// #region run
const runId = await done;
const run = await runtime.getRun(runId);
console.log(`run ${run?.id} of ${run?.targetId}: ${run?.status} after ${run?.attempt} attempt(s)`);
console.log(JSON.stringify(run?.output, null, 2));
// #endregion run

await runtime.close();
await client.close();
