/**
 * Soak: at least 200 000 `resources/updated` on one legacy GET stream through the fault proxy,
 * with the stream dropped, cut mid-event, cut at random byte offsets and refused with 503s over
 * and over. Every update is replayable (the peer's event store keeps the GET stream's events and
 * the emitter never runs further ahead of the client than the store holds), so every one must be
 * delivered exactly once. Opt-in (`AX_MCP_SOAK=1`) and bounded to a few minutes.
 */
import { describe, expect, it } from 'vitest';
import { type FaultProxy, startFaultProxy } from './fault/proxy.js';
import { eventually, httpClient } from './helpers/clients.js';
import { type LegacyV2Server, startLegacyV2Server } from './servers/legacy-v2.js';

const ENABLED = process.env.AX_MCP_SOAK === '1';
const UPDATES = Number(process.env.AX_MCP_SOAK_UPDATES ?? 200_000);
/** The whole run, emission and delivery, must end within this. */
const BUDGET_MS = 4 * 60_000;
/** Updates emitted per batch. */
const BATCH = 500;
/** How far the emitter may run ahead of delivery: well inside the peer's 5 000-event store. */
const WINDOW = 2_500;
/** Pause between two faults. */
const FAULT_EVERY_MS = 150;

const URIS = ['res://text/hello', 'res://item/0001', 'res://item/0002'];

if (!ENABLED) {
  console.info(
    'soak.test.ts skipped: set AX_MCP_SOAK=1 to run the 200 000-update soak (bounded to 4 minutes).',
  );
}

describe('soak: one stream, 200 000 updates, repeated disconnects', () => {
  it.skipIf(!ENABLED)(
    'delivers every replayable update exactly once',
    async () => {
      const server: LegacyV2Server = await startLegacyV2Server({ keepAliveMs: 0 });
      const proxy: FaultProxy = await startFaultProxy(server.url);
      const client = httpClient(
        proxy.url,
        { era: 'legacy', timeoutMs: 30_000 },
        // One message stays small; the stream's life carries megabytes past this limit.
        { retry: { attempts: 5, baseDelayMs: 10, maxDelayMs: 100 }, maxResponseBytes: 64 * 1024 },
      );
      const seen = new Map<string, number>();
      let delivered = 0;
      let duplicates = 0;
      let withoutId = 0;
      const perUri = new Map<string, number>();
      let reconnects = 0;
      client.subscribeEvents((event) => {
        if (event.type === 'resource_updated') {
          delivered++;
          perUri.set(event.uri, (perUri.get(event.uri) ?? 0) + 1);
          if (event.eventId === undefined) {
            withoutId++;
            return;
          }
          const times = seen.get(event.eventId) ?? 0;
          if (times > 0) duplicates++;
          seen.set(event.eventId, times + 1);
        } else if (event.type === 'lifecycle' && event.state === 'reconnected') {
          reconnects++;
        }
      });
      const started = Date.now();
      const deadline = started + BUDGET_MS;
      let emitted = 0;
      const emittedPerUri = new Map<string, number>();
      const faults = { drops: 0, midEventCuts: 0, byteCuts: 0, refusals: 0, stalls: 0 };
      let stop = false;
      try {
        const listening = client.startListening({ retryDelayMs: 20, maxRetryDelayMs: 200 });
        await listening.ready;
        for (const uri of URIS) await client.subscribeResource(uri);
        await eventually(() => server.stats.getStreams.size === 1, 5000, 'GET stream');

        const emit = async (count: number) => {
          const uris = Array.from({ length: count }, (_, i) => URIS[(emitted + i) % URIS.length] as string);
          const sessions = await Promise.all(uris.map((uri) => server.emitResourceUpdated(uri)));
          sessions.forEach((n, i) => {
            if (n !== 1) throw new Error(`an update reached ${n} sessions`);
            const uri = uris[i] as string;
            emittedPerUri.set(uri, (emittedPerUri.get(uri) ?? 0) + 1);
          });
          emitted += count;
        };
        // The first update gives the stream a resume point.
        await emit(1);
        await eventually(() => delivered === 1, 5000, 'the first update');

        const disrupter = (async () => {
          let round = 0;
          while (!stop) {
            await new Promise((resolve) => setTimeout(resolve, FAULT_EVERY_MS));
            if (stop) break;
            switch (round++ % 5) {
              case 0:
                if (proxy.faults.dropAllStreams() > 0) faults.drops++;
                break;
              case 1:
                proxy.faults.cutNextStream({ midEvent: true, method: 'GET' }).then(
                  () => faults.midEventCuts++,
                  () => {},
                );
                break;
              case 2:
                proxy.faults
                  .cutNextStream({ afterBytes: Math.floor(Math.random() * 4000), method: 'GET' })
                  .then(
                    () => faults.byteCuts++,
                    () => {},
                  );
                break;
              case 3:
                proxy.faults.failNext(2, 503, { method: 'GET' });
                if (proxy.faults.dropAllStreams() > 0) faults.refusals++;
                break;
              default:
                // What piles up during a stall arrives in one burst.
                await proxy.faults.stall(100);
                faults.stalls++;
            }
          }
        })();

        while (emitted < UPDATES) {
          if (Date.now() > deadline)
            throw new Error(`soak over budget: emitted ${emitted}, delivered ${delivered}`);
          if (emitted - delivered > WINDOW) {
            await new Promise((resolve) => setTimeout(resolve, 5));
            continue;
          }
          await emit(Math.min(BATCH, UPDATES - emitted));
          await new Promise((resolve) => setImmediate(resolve));
        }
        stop = true;
        await disrupter;
        proxy.faults.reset();
        await eventually(
          () => delivered >= emitted,
          Math.max(10_000, deadline - Date.now()),
          `delivery (${delivered}/${emitted})`,
        );
        await new Promise((resolve) => setTimeout(resolve, 500));
        const elapsed = (Date.now() - started) / 1000;
        console.info(
          `soak: emitted ${emitted}, delivered ${delivered} (distinct ${seen.size}, duplicates ${duplicates}, ` +
            `without id ${withoutId}); faults: ${faults.drops} drops, ${faults.midEventCuts} mid-event cuts, ` +
            `${faults.byteCuts} byte-offset cuts, ${faults.refusals} drops with 503s, ${faults.stalls} stalls; ` +
            `${reconnects} reconnects; ${(proxy.stats.bytesToClient / 1024 / 1024).toFixed(1)} MiB streamed; ` +
            `${elapsed.toFixed(1)} s, ${Math.round(emitted / elapsed)} updates/s`,
        );
        expect(withoutId).toBe(0);
        expect(duplicates).toBe(0);
        expect(seen.size).toBe(emitted);
        expect(delivered).toBe(emitted);
        expect(Object.fromEntries(perUri)).toEqual(Object.fromEntries(emittedPerUri));
        expect(emitted).toBeGreaterThanOrEqual(UPDATES);
        expect(reconnects).toBeGreaterThanOrEqual(10);
        expect(server.stats.methods.get('resources/subscribe')).toBe(URIS.length);
        expect(server.stats.initializeCount).toBe(1);
      } finally {
        stop = true;
        await client.close();
        await proxy.close();
        await server.close();
      }
    },
    BUDGET_MS + 60_000,
  );
});
