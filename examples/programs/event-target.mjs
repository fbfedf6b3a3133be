// @ts-check
// openai: [{"toolCalls":[{"name":"get_stock","arguments":{"sku":"widget-b"}}]},{"content":"{\"reply\":\"Yes: 68 widget-b are in stock.\",\"priority\":\"low\"}"}]
// A program as an event target: an authenticated event wakes it, the input plan maps the
// event's data to the program's inputs, and the run record keeps the typed outputs. The
// program is told which event (and which trust level) its inputs came from.
// Needs the demo server: npx ax-mcp demo --serve (AX_MCP_ENDPOINT overrides the URL).
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

const endpoint = process.env.AX_MCP_ENDPOINT ?? 'http://127.0.0.1:3000/mcp';
const inventory = new AxMCPClient(
  new AxMCPStreamableHTTPTransport(endpoint, { ssrfProtection: { allowLoopback: true } }),
  { namespace: 'inventory' },
);
const llm = axOpenAICompatible({ model: process.env.OPENAI_MODEL ?? 'gpt-4.1-mini' });

// #region target
const triage = ax('ticket:string -> reply:string, priority:class "low, high"', { mcp: inventory });
const runtime = eventRuntime({
  routes: [
    eventRoute('new-tickets')
      .types('helpdesk.ticket.created')
      .authenticated()
      .wake(
        eventTarget('triage')
          .program(triage) // its input fields come from the signature: ticket
          .ai(llm)
          .input(eventInput().field('ticket', eventPath.data('text')))
          .build(), // retrySafety 'unknown': a run that fails after it started is never replayed
      )
      .build(),
  ],
});
await runtime.start();
const { deliveryIds } = await runtime.publish({
  event: {
    id: 't-1',
    source: 'app://helpdesk',
    type: 'helpdesk.ticket.created',
    data: { text: 'Any widget-b left?' },
  },
  identity: { tenantId: 'acme', userId: 'u-7' },
  trust: 'authenticated',
});
await runtime.waitForIdle();
const run = await runtime.getRun(deliveryIds[0] ?? '');
console.log(run?.status, JSON.stringify(run?.output));
// #endregion target
await runtime.close();
await inventory.close();
