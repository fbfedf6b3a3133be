/**
 * The studio's Try, revision-history and recording API over HTTP (no browser), against the
 * dual-era demo server, with one client per era: prompts, reads and completions; a tool call
 * whose progress and task statuses arrive on the SSE stream; a task's input answered from the
 * API and through the elicitation bridge; a task cancelled; the catalog's revisions after a
 * `list_changed`; recordings started, stopped and downloaded (from `ax-mcp studio` itself,
 * bearer token redacted); bad bodies refused with a 400.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { studioCommand } from '../src/cli/studio.js';
import { AxMCPDemoServer } from '../src/demo/index.js';
import {
  AxMCPClient,
  type AxMCPListening,
  AxMCPMemoryEraStore,
  AxMCPStreamableHTTPTransport,
} from '../src/index.js';
import { type AxStudio, AxStudioRecordingTransport, axStudioElicitation, startStudio } from '../src/node.js';
import { AxMCPRecordingTransport, AxMCPReplayTransport, parseAxMCPRecording } from '../src/testing.js';
import { eventually, LOOPBACK } from './helpers/clients.js';

const ERAS = ['modern', 'legacy'] as const;
type Era = (typeof ERAS)[number];
const SECRET = 'studio-secret-bearer-4242';

type Item = Record<string, unknown> & { kind: string };

/** The studio's API as the page uses it: the token in a header, `x-ax-studio: 1` on POSTs, one SSE stream. */
class StudioPage {
  readonly origin: string;
  readonly token: string;
  readonly items: Item[] = [];
  readonly #stream = new AbortController();

  constructor(url: string) {
    const parsed = new URL(url);
    this.origin = parsed.origin;
    this.token = parsed.searchParams.get('token') as string;
  }

  async get(path: string): Promise<{ status: number; body: Record<string, unknown>; headers: Headers }> {
    const response = await fetch(`${this.origin}/api/${path}`, {
      headers: { 'x-ax-studio-token': this.token },
    });
    return {
      status: response.status,
      body: (await response.json()) as Record<string, unknown>,
      headers: response.headers,
    };
  }

  async post(
    path: string,
    body?: unknown,
    raw?: string,
  ): Promise<{ status: number; body: Record<string, unknown> }> {
    const response = await fetch(`${this.origin}/api/${path}`, {
      method: 'POST',
      headers: { 'x-ax-studio-token': this.token, 'x-ax-studio': '1', 'content-type': 'application/json' },
      ...(raw !== undefined ? { body: raw } : body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  }

  /** Opens the SSE stream and collects every item into `items`. */
  async listen(): Promise<void> {
    const response = await fetch(`${this.origin}/api/events`, {
      headers: { 'x-ax-studio-token': this.token },
      signal: this.#stream.signal,
    });
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    void (async () => {
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) return;
          buffer += decoder.decode(value, { stream: true });
          let end = buffer.indexOf('\n\n');
          while (end >= 0) {
            const frame = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            if (frame.startsWith('data: '))
              this.items.push(...(JSON.parse(frame.slice(6)) as { items: Item[] }).items);
            end = buffer.indexOf('\n\n');
          }
        }
      } catch {
        // Closed.
      }
    })();
  }

  of(kind: string, where: (item: Item) => boolean = () => true): Item[] {
    return this.items.filter((item) => item.kind === kind && where(item));
  }

  close(): void {
    this.#stream.abort();
  }
}

let demo: AxMCPDemoServer;
let studio: AxStudio;
let page: StudioPage;
const clients = new Map<Era, AxMCPClient>();
const listening: AxMCPListening[] = [];
const bridge = axStudioElicitation({ timeoutMs: 15_000 });
let appRecorded: AxMCPClient;
let capped: AxMCPClient;
let capTransport: AxStudioRecordingTransport;

function transport(): AxMCPStreamableHTTPTransport {
  return new AxMCPStreamableHTTPTransport(demo.url, { ssrfProtection: LOOPBACK });
}

async function control(path: string): Promise<Record<string, unknown>> {
  const response = await fetch(new URL(`/control/${path}`, demo.url), { method: 'POST' });
  expect(response.status, path).toBeLessThan(300);
  return (await response.json()) as Record<string, unknown>;
}

function demoTask(taskId: string) {
  const task = demo.state().tasks.find((candidate) => candidate.taskId === taskId);
  if (!task) throw new Error(`the demo has no task ${taskId}`);
  return task;
}

/** The task statuses the stream carried for a call, in order. */
function statusesOf(callId: string): string[] {
  const statuses = page
    .of('call', (item) => item.callId === callId && item.state === 'task')
    .map((item) => (item.task as { status: string }).status);
  return statuses.filter((status, i) => status !== statuses[i - 1]);
}

async function taskIdOf(callId: string): Promise<string> {
  await eventually(() => statusesOf(callId).length > 0, 10_000, `a task status of ${callId}`);
  const first = page.of('call', (item) => item.callId === callId && item.state === 'task')[0] as Item;
  return (first.task as { taskId: string }).taskId;
}

beforeAll(async () => {
  demo = new AxMCPDemoServer({ keepAliveMs: 0, taskPollIntervalMs: 50 });
  await demo.start();
  for (const era of ERAS) {
    const client = new AxMCPClient(transport(), {
      namespace: era,
      era,
      eraStore: new AxMCPMemoryEraStore(),
      timeoutMs: 10_000,
      elicitation: bridge.handlers,
    });
    clients.set(era, client);
    listening.push(client.startListening());
  }
  appRecorded = new AxMCPClient(new AxMCPRecordingTransport(transport(), { secrets: [SECRET] }), {
    namespace: 'app_recorded',
    era: 'modern',
    eraStore: new AxMCPMemoryEraStore(),
  });
  capTransport = new AxStudioRecordingTransport(transport(), { maxSteps: 2 });
  capped = new AxMCPClient(capTransport, {
    namespace: 'capped',
    era: 'modern',
    eraStore: new AxMCPMemoryEraStore(),
  });
  await Promise.all(listening.map((listen) => listen.ready));
  studio = await startStudio({ clients: [...clients.values(), appRecorded, capped], elicitation: bridge });
  page = new StudioPage(studio.url);
  await page.listen();
}, 30_000);

afterAll(async () => {
  page?.close();
  await studio?.close();
  bridge.close();
  for (const listen of listening) listen.close();
  for (const client of [...clients.values(), appRecorded, capped]) await client?.close();
  await demo?.close();
});

describe.each(ERAS)('the Try API (%s)', (era) => {
  it('shows a prompt, gets it, reads a resource and completes an argument', async () => {
    const prompt = await page.get(`servers/${era}/prompt?name=restock_plan`);
    expect(prompt.status).toBe(200);
    expect(prompt.body.prompt).toMatchObject({ name: 'restock_plan', arguments: [{ name: 'warehouseId' }] });
    expect((await page.get(`servers/${era}/prompt?name=nope`)).status).toBe(404);

    const got = await page.post(`servers/${era}/prompt`, {
      name: 'restock_plan',
      arguments: { warehouseId: 'berlin' },
    });
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({ ok: true, result: { description: 'Restock plan for berlin' } });
    expect((got.body.result as { messages: unknown[] }).messages).toHaveLength(2);
    // A failure on the server's side is an answer, not an HTTP error.
    const unknown = await page.post(`servers/${era}/prompt`, {
      name: 'restock_plan',
      arguments: { warehouseId: 'atlantis' },
    });
    expect(unknown.status).toBe(200);
    expect(unknown.body).toMatchObject({ ok: false, error: { message: expect.stringMatching(/atlantis/) } });

    const read = await page.post(`servers/${era}/read`, { uri: 'inventory://warehouse/berlin' });
    expect(read.body).toMatchObject({
      ok: true,
      result: { contents: [{ uri: 'inventory://warehouse/berlin' }] },
    });
    expect(typeof read.body.ms).toBe('number');

    const completed = await page.post(`servers/${era}/complete`, {
      ref: { type: 'ref/prompt', name: 'restock_plan' },
      argument: { name: 'warehouseId', value: 'ber' },
    });
    expect(completed.body).toMatchObject({ ok: true, result: { completion: { values: ['berlin'] } } });
    const template = await page.post(`servers/${era}/complete`, {
      ref: { type: 'ref/resource', uri: 'inventory://warehouse/{warehouseId}' },
      argument: { name: 'warehouseId', value: 'ber' },
      context: { arguments: {} },
    });
    expect(template.body).toMatchObject({ ok: true, result: { completion: { values: ['berlin'] } } });
  });

  it("streams a tool call's progress while the call runs, then answers its result", async () => {
    const callId = `count-${era}`;
    const answer = await page.post(`servers/${era}/call`, {
      tool: 'count_stock',
      arguments: { sku: 'widget-a', delayMs: 20 },
      callId,
    });
    expect(answer.body).toMatchObject({ ok: true, result: { structuredContent: { sku: 'widget-a' } } });
    const warehouses = Object.keys(
      (answer.body.result as { structuredContent: { warehouses: Record<string, number> } }).structuredContent
        .warehouses,
    );
    await eventually(
      () => page.of('call', (item) => item.callId === callId).length >= warehouses.length,
      5_000,
      'the progress items',
    );
    const progress = page.of('call', (item) => item.callId === callId).map((item) => item.progress);
    expect(page.of('call', (item) => item.callId === callId)[0]).toMatchObject({
      namespace: era,
      state: 'progress',
    });
    expect(progress.at(-1)).toEqual({
      progress: warehouses.length,
      total: warehouses.length,
      message: `counted ${warehouses.at(-1)}`,
    });
  });

  it("streams a task's statuses; its input request is answered through the elicitation bridge", async () => {
    const callId = `bridge-${era}`;
    const call = page.post(`servers/${era}/call`, {
      tool: 'start_reindex',
      arguments: { scope: `bridge-${era}` },
      callId,
    });
    const taskId = await taskIdOf(callId);
    await control(`task/input?taskId=${taskId}`);
    await eventually(
      () => page.of('elicitation', (item) => item.taskId === taskId).length === 1,
      10_000,
      'the elicitation',
    );
    const asked = page.of('elicitation', (item) => item.taskId === taskId)[0] as Item;
    expect(asked).toMatchObject({
      namespace: era,
      message: `Confirm reindexing scope "bridge-${era}"`,
      requestedSchema: { properties: { confirm: { type: 'boolean' } } },
    });
    const pending = await page.get('elicitations');
    expect(pending.body).toMatchObject({ available: true, pending: [{ id: asked.id, taskId }] });

    expect(
      (await page.post(`elicitations/${asked.id}`, { action: 'accept', content: { confirm: true } })).body,
    ).toEqual({
      ok: true,
    });
    await eventually(() => demoTask(taskId).status === 'working', 10_000, 'the answer to reach the server');
    expect(demoTask(taskId).inputResponses).toEqual({
      'confirm-1': { action: 'accept', content: { confirm: true } },
    });
    await eventually(
      () => page.of('elicitation_settled', (item) => item.id === asked.id).length > 0,
      5_000,
      'settled',
    );
    expect(page.of('elicitation_settled', (item) => item.id === asked.id)).toMatchObject([
      { action: 'accept', by: 'page' },
    ]);
    // Answered once: a second answer finds nothing.
    expect((await page.post(`elicitations/${asked.id}`, { action: 'cancel' })).status).toBe(404);

    await control(`task/complete?taskId=${taskId}`);
    const answer = await call;
    expect(answer.body).toMatchObject({
      ok: true,
      result: { structuredContent: { scope: `bridge-${era}` } },
    });
    expect(statusesOf(callId).slice(0, 2)).toEqual(['working', 'input_required']);
    if (era === 'modern') {
      await eventually(() => statusesOf(callId).includes('completed'), 5_000, 'completed');
      expect(statusesOf(callId)).toEqual(['working', 'input_required', 'working', 'completed']);
    }
  });

  it('cancels a task from the API: the call answers task_cancelled', async () => {
    const callId = `cancel-${era}`;
    const call = page.post(`servers/${era}/call`, {
      tool: 'start_reindex',
      arguments: { scope: `cancel-${era}` },
      callId,
    });
    const taskId = await taskIdOf(callId);
    expect((await page.post(`servers/${era}/tasks/${taskId}/cancel`)).body).toMatchObject({ ok: true });
    expect(demoTask(taskId).status).toBe('cancelled');
    expect((await call).body).toMatchObject({ ok: false, error: { code: 'task_cancelled' } });
  });
});

describe('task input from the API', () => {
  it('2026-07-28: answers the input request the task shows, and the task completes', async () => {
    const callId = 'input-modern';
    const call = page.post('servers/modern/call', {
      tool: 'start_reindex',
      arguments: { scope: 'input' },
      callId,
    });
    const taskId = await taskIdOf(callId);
    await control(`task/input?taskId=${taskId}`);
    await eventually(() => statusesOf(callId).includes('input_required'), 10_000, 'input_required');
    const waiting = page
      .of('call', (item) => item.callId === callId && item.state === 'task')
      .find((item) => (item.task as { status: string }).status === 'input_required') as Item;
    expect(waiting.task).toMatchObject({
      taskId,
      inputRequests: { 'confirm-1': { method: 'elicitation/create', params: { mode: 'form' } } },
    });
    const updates = () => demo.state().methodCounts.modern['tasks/update'] ?? 0;
    const updatesBefore = updates();
    const answered = await page.post(`servers/modern/tasks/${taskId}/input`, {
      responses: { 'confirm-1': { action: 'accept', content: { confirm: true } } },
    });
    expect(answered.body).toMatchObject({ ok: true });
    await eventually(() => demoTask(taskId).status === 'working', 10_000, 'the input to reach the server');
    // One tasks/update: the waiting call sent the page's answer, nobody sent it twice.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(updates() - updatesBefore).toBe(1);
    expect(demoTask(taskId)).toMatchObject({
      pendingInputKeys: [],
      inputResponses: { 'confirm-1': { action: 'accept', content: { confirm: true } } },
    });
    // The request the call had put to the bridge ended with it: nothing waits on the page.
    expect((await page.get('elicitations')).body.pending).toEqual([]);
    await control(`task/complete?taskId=${taskId}`);
    expect((await call).body).toMatchObject({ ok: true, result: { structuredContent: { scope: 'input' } } });
    await eventually(() => statusesOf(callId).includes('completed'), 5_000, 'completed');
    expect(statusesOf(callId)).toEqual(['working', 'input_required', 'working', 'completed']);
  });

  it('2025-11-25: tasks take input through server requests, so the API says it cannot', async () => {
    const outcome = await (clients.get('legacy') as AxMCPClient).callToolTask('start_reindex', {
      scope: 'legacy-input',
    });
    const answered = await page.post(`servers/legacy/tasks/${outcome.taskId}/input`, {
      responses: { 'confirm-1': { action: 'accept', content: { confirm: true } } },
    });
    expect(answered.status).toBe(200);
    expect(answered.body).toMatchObject({ ok: false, error: { code: 'unsupported' } });
    await control(`task/complete?taskId=${outcome.taskId}`);
  });
});

describe('revision history', () => {
  it('starts with the whole catalog, then records what each list_changed added and removed', async () => {
    for (const era of ERAS) {
      const { body } = await page.get(`servers/${era}/revisions`);
      const revisions = body.revisions as { changes: Record<string, Record<string, string[]>> }[];
      const first = revisions.at(-1);
      expect(first?.changes.tools?.added).toEqual(
        expect.arrayContaining(['get_stock', 'count_stock', 'start_reindex']),
      );
      expect(first?.changes.prompts).toEqual({ added: ['restock_plan'], removed: [], changed: [] });
      expect(first?.changes.resourceTemplates?.added).toEqual(['inventory://warehouse/{warehouseId}']);
    }
    const uri = 'inventory://warehouse/extra';
    const newest = async (era: Era) =>
      (
        (await page.get(`servers/${era}/revisions`)).body.revisions as {
          changes: Record<string, Record<string, string[]>>;
        }[]
      )[0];
    const seen = (era: Era) => page.of('revision', (item) => item.namespace === era).length;
    const before = { modern: seen('modern'), legacy: seen('legacy') };
    await control(`catalog/add?uri=${encodeURIComponent(uri)}&name=extra`);
    for (const era of ERAS) {
      await eventually(() => seen(era) >= before[era] + 1, 10_000, `${era} revision`);
      expect((await newest(era))?.changes.resources).toEqual({ added: [uri], removed: [], changed: [] });
    }
    await control(`catalog/remove?uri=${encodeURIComponent(uri)}`);
    for (const era of ERAS) {
      await eventually(() => seen(era) >= before[era] + 2, 10_000, `${era} revision`);
      const entry = await newest(era);
      expect(entry?.changes.resources).toEqual({ added: [], removed: [uri], changed: [] });
      expect(entry?.changes.tools).toEqual({ added: [], removed: [], changed: [] });
    }
    const all = (await page.get('servers/modern/revisions')).body.revisions as {
      revision: number;
      at: number;
    }[];
    expect(all.length).toBeGreaterThanOrEqual(3);
    expect(all[0]?.revision).toBeGreaterThan(all.at(-1)?.revision ?? Infinity);
  });
});

describe.each(ERAS)('recordings from ax-mcp studio (%s)', (era) => {
  it('starts, stops and downloads a recording that parses, replays its era and carries no bearer token', async () => {
    const stop = new AbortController();
    const lines: string[] = [];
    let announced: () => void = () => {};
    const ready = new Promise<void>((resolve) => {
      announced = resolve;
    });
    const running = studioCommand(
      { era, bearer: SECRET, 'allow-localhost': true },
      [demo.url],
      (line) => {
        lines.push(line);
        if (line.includes('?token=')) announced();
      },
      stop.signal,
    );
    try {
      await Promise.race([
        ready,
        running.then(() => Promise.reject(new Error(`studio ended: ${lines.join('\n')}`))),
      ]);
      const cli = new StudioPage(
        (lines.find((line) => line.includes('?token=')) as string).replace('ax-mcp studio: ', ''),
      );
      expect((await cli.get('recordings')).body).toEqual({
        recordings: [
          {
            namespace: 'studio',
            recording: false,
            steps: 0,
            available: true,
            source: 'studio',
            maxSteps: 10_000,
          },
        ],
      });
      expect((await cli.get('recordings/studio/download')).status).toBe(404);
      expect((await cli.post('recordings/studio/start')).body).toEqual({ recording: true, steps: 0 });
      expect(
        (await cli.post('servers/studio/call', { tool: 'get_stock', arguments: { sku: 'widget-a' } })).body,
      ).toMatchObject({
        ok: true,
      });
      // The token reaches the server's answer (an error naming the argument): the recording must not keep it.
      expect(
        (await cli.post('servers/studio/read', { uri: `inventory://warehouse/${SECRET}` })).body,
      ).toMatchObject({ ok: false });
      const stopped = await cli.post('recordings/studio/stop');
      expect(stopped.body).toMatchObject({ recording: false });
      expect(stopped.body.steps).toBeGreaterThanOrEqual(4);
      // Stopped: later traffic is not recorded.
      await cli.post('servers/studio/call', { tool: 'get_stock', arguments: { sku: 'widget-b' } });

      const download = await cli.get('recordings/studio/download');
      expect(download.status).toBe(200);
      expect(download.headers.get('content-disposition')).toMatch(
        /^attachment; filename="studio-.*\.recording\.json"$/,
      );
      const text = JSON.stringify(download.body);
      expect(text).not.toContain(SECRET);
      expect(text).toContain('[REDACTED]');
      expect(text).not.toContain('widget-b');
      const recording = parseAxMCPRecording(download.body);
      expect(recording.era).toBe(era);
      expect(download.body.studio).toMatchObject({
        maxSteps: 10_000,
        droppedSteps: 0,
        handshakeSteps: expect.any(Number),
      });
      const methods = recording.steps.map((step) =>
        step.message && 'method' in step.message ? step.message.method : undefined,
      );
      if (era === 'legacy') expect(methods).toContain('initialize');
      expect(methods).toContain('tools/call');
      expect(methods).toContain('resources/read');
      expect(recording.steps.map((step) => step.index)).toEqual(recording.steps.map((_, i) => i));
      // It replays what the studio did, offline: the catalog it loaded first (at the head), then the
      // call and the read of the recording.
      const replayed = new AxMCPClient(new AxMCPReplayTransport(recording), { namespace: 'replayed' });
      try {
        await replayed.inspectCatalog();
        expect((await replayed.callTool('get_stock', { sku: 'widget-a' })).structuredContent).toMatchObject({
          sku: 'widget-a',
        });
        await expect(replayed.readResource(`inventory://warehouse/${SECRET}`)).rejects.toThrow(/REDACTED/);
      } finally {
        await replayed.close();
      }
      // The CLI wires the elicitation bridge for its clients.
      expect((await cli.get('elicitations')).body).toEqual({ pending: [], available: true });
    } finally {
      stop.abort();
      await running;
    }
  }, 30_000);
});

describe('recordings of clients the studio did not create', () => {
  it("downloads an application's AxMCPRecordingTransport, which it cannot start or stop", async () => {
    await appRecorded.callTool('get_stock', { sku: 'widget-a' });
    const { body } = await page.get('recordings');
    const rows = body.recordings as Record<string, unknown>[];
    expect(rows.find((row) => row.namespace === 'app_recorded')).toMatchObject({
      recording: true,
      available: true,
      source: 'application',
    });
    expect(rows.find((row) => row.namespace === 'modern')).toEqual({
      namespace: 'modern',
      recording: false,
      steps: 0,
      available: false,
    });
    expect((await page.post('recordings/app_recorded/start')).status).toBe(409);
    const refused = await page.post('recordings/modern/start');
    expect(refused.status).toBe(409);
    expect((refused.body.error as { message: string }).message).toMatch(/cannot be recorded/);
    expect((await page.post('recordings/nobody/start')).status).toBe(404);
    const download = await page.get('recordings/app_recorded/download');
    const recording = parseAxMCPRecording(download.body);
    expect(
      recording.steps.some(
        (step) => step.message && 'method' in step.message && step.message.method === 'tools/call',
      ),
    ).toBe(true);
  });

  it('an AxStudioRecordingTransport keeps at most maxSteps and says how many it dropped', async () => {
    expect((await page.post('recordings/capped/start')).body).toEqual({ recording: true, steps: 0 });
    await capped.callTool('get_stock', { sku: 'widget-a' });
    await capped.callTool('get_stock', { sku: 'widget-b' });
    expect((await page.post('recordings/capped/stop')).body).toEqual({ recording: false, steps: 2 });
    const download = await page.get('recordings/capped/download');
    const recording = parseAxMCPRecording(download.body);
    const studioPart = download.body.studio as {
      handshakeSteps: number;
      droppedSteps: number;
      maxSteps: number;
    };
    expect(studioPart.maxSteps).toBe(2);
    expect(studioPart.droppedSteps).toBeGreaterThan(0);
    expect(recording.steps).toHaveLength(studioPart.handshakeSteps + 2);
    expect(capTransport.isRecording).toBe(false);
  });
});

describe('the elicitation bridge', () => {
  const form = (message: string) => ({
    message,
    requestedSchema: { type: 'object' as const, properties: { confirm: { type: 'boolean' as const } } },
  });

  it('answers cancel when no page shows it, when full, when nobody answers in time, and when the asker gives up', async () => {
    const small = axStudioElicitation({ timeoutMs: 150, maxPending: 1 });
    const signal = new AbortController().signal;
    const ask = (message: string, on = signal) =>
      small.handlers.form?.(form(message), { namespace: 'n', signal: on }) as Promise<unknown>;
    expect(await ask('nobody listens')).toEqual({ action: 'cancel' });
    const changes: { type: string; by?: string }[] = [];
    const stop = small.listen((change) => changes.push(change));
    const first = ask('first');
    expect(small.pending()).toMatchObject([{ namespace: 'n', message: 'first' }]);
    expect(await ask('one too many')).toEqual({ action: 'cancel' });
    expect(await first).toEqual({ action: 'cancel' });
    expect(changes.map((change) => change.by ?? change.type)).toEqual(['pending', 'timeout']);
    const giveUp = new AbortController();
    const abandoned = ask('abandoned', giveUp.signal);
    giveUp.abort();
    expect(await abandoned).toEqual({ action: 'cancel' });
    expect(changes.at(-1)).toMatchObject({ type: 'settled', by: 'abandoned' });
    const last = ask('the page goes away');
    stop();
    expect(await last).toEqual({ action: 'cancel' });
    expect(small.pending()).toEqual([]);
  });

  it('refuses misspelled options', async () => {
    expect(() => axStudioElicitation({ timeout: 5 } as never)).toThrow(/timeoutMs/);
    await expect(startStudio({ elicitation: {} } as never)).rejects.toMatchObject({
      code: 'invalid_options',
    });
    expect(() => new AxStudioRecordingTransport(transport(), { maxStep: 1 } as never)).toThrow(/maxSteps/);
  });
});

describe('bad bodies', () => {
  it('are refused with a 400 that says what is wrong', async () => {
    const cases: [string, unknown, RegExp][] = [
      ['servers/modern/call', { tool: 1 }, /tool must be a string/],
      ['servers/modern/call', { tool: 'get_stock', arguments: [] }, /arguments must be a JSON object/],
      ['servers/modern/call', { tool: 'get_stock', callId: 'x'.repeat(65) }, /callId/],
      ['servers/modern/prompt', {}, /name must be a non-empty string/],
      [
        'servers/modern/prompt',
        { name: 'restock_plan', arguments: { warehouseId: 1 } },
        /arguments.warehouseId must be a string/,
      ],
      ['servers/modern/read', { uri: '' }, /uri must be a non-empty string/],
      [
        'servers/modern/complete',
        { ref: { type: 'ref/tool', name: 'x' }, argument: { name: 'a', value: '' } },
        /ref must be/,
      ],
      [
        'servers/modern/complete',
        { ref: { type: 'ref/prompt', name: 'x' }, argument: { name: 'a' } },
        /argument must be/,
      ],
      [
        'servers/modern/complete',
        { ref: { type: 'ref/prompt', name: 'x' }, argument: { name: 'a', value: '' }, context: 1 },
        /context/,
      ],
      ['servers/modern/tasks/t-1/input', { responses: [] }, /responses must be a JSON object/],
      ['servers/modern/tasks/t-1/input', { responses: {} }, /responses is empty/],
      ['elicitations/e-1', { action: 'maybe' }, /action must be/],
      [
        'elicitations/e-1',
        { action: 'decline', content: { confirm: true } },
        /content goes only with action "accept"/,
      ],
      [
        'elicitations/e-1',
        { action: 'accept', content: { confirm: { deep: true } } },
        /content.confirm must be/,
      ],
    ];
    for (const [path, body, message] of cases) {
      const reply = await page.post(path, body);
      expect(reply.status, path).toBe(400);
      expect((reply.body.error as { message: string }).message, path).toMatch(message);
    }
    const json = await page.post('servers/modern/read', undefined, '{not json');
    expect(json.status).toBe(400);
    expect((await page.post('elicitations/unknown', { action: 'cancel' })).status).toBe(404);
  });
});
