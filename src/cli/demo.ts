import { AxMCPDemoServer } from '../demo.js';
import {
  AxMCPClient,
  AxMCPEventSource,
  AxMCPStreamableHTTPTransport,
  AxPushEventSource,
  ax,
  axMCPEventRoutes,
  axOpenAICompatible,
  eventInput,
  eventPath,
  eventRoute,
  eventRuntime,
  eventTarget,
  MCP_EVENT_TYPES,
  mcpTaskKey,
} from '../index.js';
import { shopTour } from './demo-shop.js';
import { style } from './style.js';

/**
 * The guided tour: a local dual-era demo server, then discovery, a subscription policy,
 * an update routed to a wake target, a catalog change reconciled, and a task whose
 * completion resumes exactly the continuation that owns it, and an order at the demo's UCP shop
 * whose shipment resumes the run that placed it. No network, no API key.
 */
export async function runDemo(out: (text: string) => void): Promise<number> {
  const step = (n: number, title: string) => out(`\n${style.bold(style.cyan(`${n}. ${title}`))}`);
  const note = (text: string) => out(`   ${text}`);
  const server = new AxMCPDemoServer({ era: 'dual' });
  const url = await server.start();
  out(style.bold('ax-mcp demo') + style.dim(` — a dual-era inventory server at ${url}`));

  const client = new AxMCPClient(
    new AxMCPStreamableHTTPTransport(url, { ssrfProtection: { allowLoopback: true } }),
    {
      namespace: 'inventory',
      elicitation: { form: () => ({ action: 'accept', content: { confirm: true } }) },
    },
  );
  const identity = { tenantId: 'demo', userId: 'operator' };
  const woken: string[] = [];
  const resumed: string[] = [];
  const done = withResolvers<void>();

  try {
    step(1, 'Discover');
    const catalog = await client.inspectCatalog();
    note(
      `era ${style.green(catalog.era)} (${catalog.protocolVersion}), server ${catalog.serverInfo?.name ?? '?'}`,
    );
    note(`tools: ${catalog.tools.map((tool) => tool.name).join(', ')}`);
    note(`resources: ${catalog.resources.map((resource) => resource.uri).join(', ')}`);
    note(`templates (never expanded): ${catalog.resourceTemplates.map((t) => t.uriTemplate).join(', ')}`);

    step(2, 'Choose a subscription policy');
    note('select every warehouse document except the aggregate view');
    const source = new AxMCPEventSource({
      client,
      identity,
      trust: 'authenticated',
      resourceSubscriptions: {
        select: (resource) =>
          resource.uri.startsWith('inventory://warehouse/') && !resource.uri.endsWith('/current'),
      },
    });
    const app = new AxPushEventSource({ id: 'app' });

    const restock = restockTarget(client, woken, note);
    const reindexOwner = eventTarget('reindex-owner')
      .waitFor('mcp.task', eventPath.data('taskKey'))
      .invoke(async (_input, context) => {
        if (context.action === 'wake') {
          note(
            style.magenta(
              `→ reindex owner is waiting for ${(context.event.data as { taskKey: string }).taskKey}`,
            ),
          );
          return { waiting: true };
        }
        const status = (context.event.data as { status?: string }).status ?? '?';
        resumed.push(status);
        note(style.magenta(`→ reindex owner resumed: the task is ${status}`));
        done.resolve();
        return { status };
      })
      .build();

    const runtime = eventRuntime({
      sources: [source, app],
      allowVolatile: true,
      onError: (error: unknown) => note(style.red(`source error: ${describe(error)}`)),
      routes: [
        ...axMCPEventRoutes({
          client,
          onCatalogInvalidated: (ingress) =>
            note(
              style.yellow(
                `catalog changed (revision ${(ingress.event.data as { revision: number }).revision})`,
              ),
            ),
        }),
        // Resource updates wake nothing by default: this route asks for it, for authenticated events only.
        eventRoute('restock-on-update')
          .types(MCP_EVENT_TYPES.resourceUpdated)
          .authenticated()
          .wake(restock)
          .build(),
        eventRoute('reindex-started').types('app.task.started').authenticated().wake(reindexOwner).build(),
      ],
    });
    await runtime.start();
    note(`subscribed as ${style.green(source.id)}: ${source.subscriptions.join(', ')}`);

    step(3, 'An update is routed to a wake target');
    const adjusted = await client.callTool('adjust_stock', {
      warehouseId: 'berlin',
      sku: 'widget-a',
      delta: -5,
    });
    if (adjusted.isError) throw new Error(`adjust_stock failed: ${JSON.stringify(adjusted.content)}`);
    note('adjust_stock took 5 widget-a out of Berlin; the server sends resources/updated');
    await until(() => woken.length > 0, 5000);
    await runtime.publish({
      event: {
        id: 'spoofed-1',
        source: 'mcp://inventory',
        type: MCP_EVENT_TYPES.resourceUpdated,
        subject: 'inventory://warehouse/berlin',
      },
    });
    await runtime.waitForIdle();
    note(
      `an anonymous look-alike event woke nothing: ${woken.length === 1 ? style.green('yes') : style.red('no')}`,
    );

    step(4, 'A catalog change is reconciled');
    server.addResource({ uri: 'inventory://warehouse/porto', name: 'porto', mimeType: 'application/json' });
    await until(() => source.subscriptions.includes('inventory://warehouse/porto'), 5000);
    note(`the source now owns: ${source.subscriptions.join(', ')}`);

    step(5, 'A task resumes exactly its owner');
    const outcome = await client.callToolOutcome('start_reindex', { scope: 'all' });
    if (outcome.kind !== 'task') throw new Error('start_reindex did not create a task');
    const taskKey = mcpTaskKey(client.namespace, outcome.task.taskId);
    note(`start_reindex created task ${outcome.task.taskId} (${outcome.task.status})`);
    await app.push({
      event: {
        id: `started-${outcome.task.taskId}`,
        source: 'app://demo',
        type: 'app.task.started',
        data: { taskKey },
      },
      identity,
      trust: 'authenticated',
    });
    await runtime.waitForIdle();
    source.watchTask(outcome.task);
    server.completeTask(outcome.task.taskId);
    note('the server completed the task');
    await Promise.race([done.promise, sleep(10_000)]);
    await runtime.close();
    await source.close();

    step(6, 'An order resumes the run that placed it when it ships');
    const shipped = await shopTour(new URL(url).origin, note);
    const ok = resumed.includes('completed') && woken.length === 1 && shipped;
    out(`\n${style.bold(ok ? style.green('Done.') : style.red('Something did not happen.'))}`);
    return ok ? 0 : 1;
  } finally {
    await client.close();
    await server.close();
  }
}

/**
 * The wake target for resource updates: an `ax()` program over the inventory tools when an
 * OpenAI-compatible endpoint is configured (`OPENAI_API_KEY`, `OPENAI_BASE_URL`,
 * `OPENAI_MODEL`), otherwise a plain function — the demo needs no key and no network.
 */
function restockTarget(client: AxMCPClient, woken: string[], note: (text: string) => void) {
  const apiKey = process.env.OPENAI_API_KEY;
  if (!apiKey) {
    return eventTarget('restock-agent')
      .invoke(async (_input, context) => {
        woken.push(context.event.subject ?? '');
        note(
          style.magenta(`→ restock agent woke for ${context.event.subject} (trust ${context.ingress.trust})`),
        );
        return { checked: context.event.subject };
      })
      .build();
  }
  const llm = axOpenAICompatible({
    apiKey,
    ...(process.env.OPENAI_BASE_URL ? { baseURL: process.env.OPENAI_BASE_URL } : {}),
    model: process.env.OPENAI_MODEL ?? 'gpt-4.1-mini',
  });
  const advisor = ax('"Advises on restocking a warehouse" warehouseUri:string -> advice:string', {
    mcp: client,
    instructions: 'Read the warehouse document and check stock with the tools before advising.',
  });
  return eventTarget('restock-agent')
    .program(advisor)
    .ai(llm)
    .input(eventInput().field('warehouseUri', eventPath.subject()))
    .sink({
      id: 'print',
      write: (output, { run }) => {
        woken.push(String(run.instanceKey));
        note(
          style.magenta(`→ restock agent (an ax program) advises: ${JSON.stringify(output).slice(0, 300)}`),
        );
      },
    })
    .build();
}

function withResolvers<T>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(check: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check() && Date.now() < deadline) await sleep(20);
}

function describe(report: unknown): string {
  if (report instanceof Error) return report.message;
  const error = (report as { error?: unknown }).error;
  return error instanceof Error ? error.message : String(error ?? report);
}
