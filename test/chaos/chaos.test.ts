/**
 * A chaos campaign, end to end (issue 19): an official-SDK MCP server (v1 SDK, 2025-11-25
 * sessions with an event store, resource updates and task status notifications) in its own
 * process behind the fault proxy, and a second one (v2 SDK, 2026-07-28 listen streams) behind its
 * own; two source processes on the first and one on the second, each an `AxMCPEventSource` in an
 * event runtime publishing into one `AxPostgresEventStore`; a
 * fleet of three worker processes (`ax-mcp worker`) running an idempotent and a non-idempotent
 * target per update, strict per URI. A seeded schedule restarts the server, cuts, stalls, drops
 * and fails streams at the proxy, SIGKILLs and SIGSTOPs workers, and terminates the PostgreSQL
 * backends of this campaign's own processes (by their `application_name`, unique to the run).
 * Then everything heals, the campaign waits (bounded) until it is quiet, and checks the
 * invariants of `invariants.ts`, printing them as figures.
 *
 * `AX_MCP_TEST_POSTGRES_URL` is required (else SKIPPED). `AX_MCP_CHAOS_SEED` replays a schedule
 * (the timing of processes still varies); `AX_MCP_CHAOS_MS` sets the length of the faulty phase
 * (default 60 000 ms; about 1.5 minutes in all with the build and the checks).
 */
import { randomBytes, randomInt } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { AxPostgresEventStore } from '../../src/node/postgres/event-store.js';
import { type FaultProxy, startFaultProxy } from '../fault/proxy.js';
import { freePort } from '../servers/everything.js';
import {
  type Ack,
  type CampaignData,
  checkInvariants,
  eventIdOf,
  type RunEntry,
  type SourceEntry,
} from './invariants.js';
import {
  buildLibrary,
  type Child,
  control,
  SOURCE_SCRIPT,
  spawnChild,
  startServer,
  stopChild,
  tail,
  until,
  WORKER_MODULE,
} from './processes.js';

const url = process.env.AX_MCP_TEST_POSTGRES_URL;
if (!url) {
  console.warn(
    '[chaos] SKIPPED: AX_MCP_TEST_POSTGRES_URL is not set, so the chaos campaign (MCP server restarts, ' +
      'proxy faults, worker SIGKILL/SIGSTOP, backend terminations) did not run. Set it to a database you ' +
      'can write to, e.g. postgres://postgres@127.0.0.1:5432/test',
  );
}

/**
 * An integer setting from the environment, refused when malformed rather than bent into range:
 * a seed that is not one would replay another schedule, and a length that is not a number
 * would run a campaign with no fault in it, whose invariants hold trivially.
 */
function integerSetting(name: string, fallback: () => number, min: number, max: number): number {
  const text = process.env[name];
  if (text === undefined || text === '') return fallback();
  const n = Number(text);
  if (!(text.trim() !== '' && Number.isSafeInteger(n) && n >= min && n <= max)) {
    throw new Error(`${name} must be an integer from ${min} to ${max}, not "${text}"`);
  }
  return n;
}

const SEED = integerSetting('AX_MCP_CHAOS_SEED', () => randomInt(0, 2 ** 32 - 1), 0, 2 ** 32 - 1);
const CAMPAIGN_MS = integerSetting('AX_MCP_CHAOS_MS', () => 60_000, 1000, Number.MAX_SAFE_INTEGER);
const FAULT_KINDS = [
  ['server-restart', 1],
  ['proxy-cut', 2],
  ['proxy-stall', 1.5],
  ['proxy-drop', 1],
  ['proxy-5xx', 0.7],
  ['worker-kill', 1.2],
  ['worker-stop', 1.5],
  ['pg-terminate-fleet', 1.2],
  ['pg-terminate-sources', 0.5],
] as const;
/** AX_MCP_CHAOS_FAULTS=kind,kind… narrows the schedule (to bisect a failure); default: all. */
const ONLY_FAULTS = faultFilter(process.env.AX_MCP_CHAOS_FAULTS);

function faultFilter(text: string | undefined): string[] | undefined {
  if (text === undefined || text === '') return undefined;
  const kinds = text.split(',').map((k) => k.trim());
  const known = FAULT_KINDS.map(([kind]) => kind as string);
  const unknown = kinds.filter((k) => !known.includes(k));
  // An unknown kind would leave its weight out without a word (all of them: no fault at all).
  if (unknown.length > 0) {
    throw new Error(
      `AX_MCP_CHAOS_FAULTS: ${unknown.map((k) => `"${k}"`).join(', ')} not among ${known.join(', ')}`,
    );
  }
  return kinds;
}
const URIS = 4;
const SOURCES = 2; // on the legacy server; one more (m0) on the modern one
const MODERN_SOURCE = 'm0';
const WORKERS = 3;
const EMIT_MS = 50;
const LEASE_MS = 2_000;

/** mulberry32: a small seeded generator, enough for a schedule. */
function generator(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    between: (min: number, max: number) => Math.round(min + next() * (max - min)),
    pick: <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T,
  };
}

const readLines = <T>(file: string): T[] =>
  existsSync(file)
    ? readFileSync(file, 'utf8')
        .split('\n')
        .filter((line) => line.length > 0)
        .flatMap((line) => {
          try {
            return [JSON.parse(line) as T];
          } catch {
            return []; // the torn last line of a killed process
          }
        })
    : [];

const reproduce = `AX_MCP_CHAOS_SEED=${SEED} AX_MCP_CHAOS_MS=${CAMPAIGN_MS}`;

describe.skipIf(!url)('chaos campaign: MCP server → proxy → sources → PostgreSQL → worker fleet', () => {
  let build = '';
  const children = new Set<Child>();
  let proxy: FaultProxy | undefined;
  let proxyModern: FaultProxy | undefined;
  let admin: pg.Pool | undefined;
  let schema = '';
  let dir = '';
  let failed = false;

  beforeAll(() => {
    console.log(`[chaos] seed ${SEED}, campaign ${CAMPAIGN_MS} ms (reproduce: ${reproduce})`);
    build = buildLibrary();
  }, 300_000);

  afterAll(async () => {
    for (const child of children) if (!child.exited()) child.proc.kill('SIGCONT');
    for (const child of children) if (!child.exited()) child.proc.kill('SIGKILL');
    await proxy?.close();
    await proxyModern?.close();
    if (admin && schema) await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => {});
    await admin?.end();
    if (build) rmSync(build, { recursive: true, force: true });
    if (dir && !failed) rmSync(dir, { recursive: true, force: true });
    else if (dir) console.log(`[chaos] logs kept in ${dir}`);
  }, 60_000);

  it(
    `keeps every invariant under a seeded schedule of faults (seed ${SEED})`,
    async () => {
      const rng = generator(SEED);
      const tag = randomBytes(5).toString('hex');
      schema = `ax_chaos_${tag}`;
      const appName = (role: string) => `ax_chaos_${tag}_${role}`;
      const withApp = (role: string) => {
        const u = new URL(url as string);
        u.searchParams.set('application_name', appName(role));
        return u.href;
      };
      dir = mkdtempSync(join(tmpdir(), 'ax-chaos-'));
      const serverLog = join(dir, 'server.jsonl');
      const modernLog = join(dir, 'server-modern.jsonl');
      const tasksFlag = join(dir, 'tasks.on');
      const t0 = performance.now();
      const elapsed = () => ((performance.now() - t0) / 1000).toFixed(1);
      const faults = new Map<string, number>();
      const schedule: string[] = [];
      const noteFault = (kind: string, detail = '') => {
        faults.set(kind, (faults.get(kind) ?? 0) + 1);
        schedule.push(`t+${elapsed()}s ${kind}${detail ? ` ${detail}` : ''}`);
      };
      const fail = (message: string): never => {
        failed = true;
        throw new Error(
          `[chaos] seed ${SEED} (${reproduce}): ${message}\nschedule: ${schedule.slice(-40).join('; ')}`,
        );
      };

      // The store's tables (migrated once here) and the targets' own.
      admin = new pg.Pool({ connectionString: withApp('admin'), max: 2 });
      const store = await AxPostgresEventStore.open({
        connectionString: withApp('admin'),
        schema,
        poolSize: 1,
      });
      await store.close();
      await admin.query(`CREATE TABLE "${schema}".chaos_effects (delivery_id text PRIMARY KEY, event_id text NOT NULL,
      uri text, attempt int, fencing bigint, pid int)`);
      await admin.query(`CREATE TABLE "${schema}".chaos_effect_runs (delivery_id text NOT NULL, attempt int,
      fencing bigint, pid int, started double precision, ended double precision)`);
      await admin.query(`CREATE TABLE "${schema}".chaos_task_effects (delivery_id text PRIMARY KEY, event_id text NOT NULL,
      task text, status text, pid int)`);
      await admin.query(`CREATE TABLE "${schema}".chaos_unsafe_starts (delivery_id text NOT NULL, attempt int,
      fencing bigint, pid int)`);

      // The server, the proxy in front of it.
      const port = await freePort();
      let generation = 0;
      let emitting = false;
      const serverPids: number[] = [];
      const launchServer = async () => {
        const child = await startServer({
          dir,
          port,
          log: serverLog,
          seed: SEED,
          generation: generation++,
          emit: emitting,
          uris: URIS,
          emitMs: EMIT_MS,
        });
        children.add(child);
        serverPids.push(child.proc.pid as number);
        return child;
      };
      let server = await launchServer();
      proxy = await startFaultProxy(`http://127.0.0.1:${port}/mcp`, { maxStallMs: 5_000 });
      // The 2026-07-28 server, its own proxy.
      const portModern = await freePort();
      let generationModern = 0;
      const modernPids: number[] = [];
      const launchModern = async () => {
        const child = await startServer({
          era: 'modern',
          dir,
          port: portModern,
          log: modernLog,
          seed: (SEED ^ 0x5bd1e995) >>> 0,
          generation: generationModern++,
          emit: emitting,
          uris: URIS,
          emitMs: EMIT_MS * 2,
        });
        children.add(child);
        modernPids.push(child.proc.pid as number);
        return child;
      };
      let serverModern = await launchModern();
      proxyModern = await startFaultProxy(`http://127.0.0.1:${portModern}/mcp`, { maxStallMs: 5_000 });

      // The worker fleet.
      const childEnv = (role: string) => ({
        AX_CHAOS_BUILD: build,
        AX_CHAOS_DIR: dir,
        AX_CHAOS_SCHEMA: schema,
        AX_CHAOS_PG: withApp(role),
      });
      const workers: Child[] = [];
      const workerIds = new Map<Child, string>();
      let spawned = 0;
      const launchWorker = (slot: number) => {
        const id = `chaos-w${slot}-${spawned++}`;
        const child = spawnChild(
          dir,
          id,
          join(build, 'worker.mjs'),
          [
            ...['--store', withApp(`w${slot}`), '--schema', schema, '--module', WORKER_MODULE],
            ...['--concurrency', '2', '--lease-ms', String(LEASE_MS), '--poll-ms', '500', '--worker-id', id],
          ],
          childEnv(`w${slot}`),
        );
        children.add(child);
        workers[slot] = child;
        workerIds.set(child, id);
        return child;
      };
      const workerReady = (child: Child) =>
        until(() => / info {2}worker \S+ started: /.test(child.output()) || child.exited(), 30_000, 50);
      for (let slot = 0; slot < WORKERS; slot++) launchWorker(slot);
      for (const w of workers)
        if (!(await workerReady(w)) || w.exited()) fail(`worker did not start:\n${tail(w)}`);

      // The sources.
      const sources: { name: string; child: Child; log: string; state: string }[] = [];
      for (let i = 0; i <= SOURCES; i++) {
        const modern = i === SOURCES;
        const name = modern ? MODERN_SOURCE : `s${i}`;
        const log = join(dir, `source-${name}.jsonl`);
        const state = join(dir, `source-${name}.state.json`);
        const child = spawnChild(dir, `source-${name}`, SOURCE_SCRIPT, [], {
          ...childEnv(name),
          AX_CHAOS_NAME: name,
          AX_CHAOS_LOG: log,
          AX_CHAOS_STATE: state,
          AX_CHAOS_MCP_URL: modern ? proxyModern.url : proxy.url,
          AX_CHAOS_MODULE: WORKER_MODULE,
          ...(modern ? { AX_CHAOS_ERA: 'modern' } : { AX_CHAOS_TASKS: tasksFlag }),
        });
        children.add(child);
        sources.push({ name, child, log, state });
      }
      const legacySources = sources.filter((s) => s.name !== MODERN_SOURCE);
      for (const s of sources) {
        const ok = await until(
          () => s.child.output().includes(`source ${s.name} started`) || s.child.exited(),
          30_000,
        );
        if (!ok || s.child.exited()) fail(`source ${s.name} did not start:\n${tail(s.child)}`);
      }
      const sourceState = (s: (typeof sources)[number]) =>
        existsSync(s.state)
          ? (JSON.parse(readFileSync(s.state, 'utf8')) as { session?: string; subscriptions: string[] })
          : { subscriptions: [] };
      type ServerState = {
        pid: number;
        sessions: { id: string; subscriptions: string[]; getOpen: boolean }[];
      };
      type ModernState = { pid: number; listens: { sid: number; uris: string[] }[] };
      const modernReady = async () => {
        const state = await control<ModernState>(portModern, '/control/state', 'GET').catch(() => undefined);
        return state?.listens.some((l) => l.uris.length === URIS) === true;
      };
      const sourcesReady = async () => {
        const state = await control<ServerState>(port, '/control/state', 'GET').catch(() => undefined);
        if (!state || !(await modernReady())) return false;
        return legacySources.every((s) => {
          const mine = sourceState(s).session;
          const session = state.sessions.find((x) => x.id === mine);
          return session !== undefined && session.subscriptions.length === URIS && session.getOpen;
        });
      };
      if (!(await until(sourcesReady, 30_000, 100)))
        fail('the sources did not subscribe before the campaign');
      console.log(
        `[chaos] ${WORKERS} workers, ${SOURCES}+1 sources, server on ${port}, proxy ${proxy.url}, 2026-07-28 server on ${portModern}, proxy ${proxyModern.url}; ready after ${elapsed()} s`,
      );

      // The campaign.
      emitting = true;
      writeFileSync(tasksFlag, '');
      await control(port, '/control/emit?on=1');
      await control(portModern, '/control/emit?on=1');
      const pending = new Set<Promise<unknown>>();
      const track = (work: Promise<unknown>) => {
        const p = work.catch(() => {}).finally(() => pending.delete(p));
        pending.add(p);
      };
      const resumes = new Map<Child, NodeJS.Timeout>();
      const unaskedExits: string[] = [];
      const deadWorkers = new Set<string>();
      const terminate = async (roles: string[]) => {
        const { rows } = await (admin as pg.Pool).query(
          `SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity
          WHERE datname = current_database() AND application_name = ANY($1) AND pid <> pg_backend_pid()`,
          [roles.map(appName)],
        );
        return rows.length;
      };
      const enabled = FAULT_KINDS.map(
        ([kind, w]) => [kind, !ONLY_FAULTS || ONLY_FAULTS.includes(kind) ? w : 0] as const,
      );
      const totalWeight = enabled.reduce((n, [, w]) => n + w, 0);
      const chooseFault = () => {
        let x = rng.next() * totalWeight;
        for (const [kind, w] of enabled) if ((x -= w) < 0) return kind;
        return enabled.find(([, w]) => w > 0)?.[0] ?? 'proxy-drop';
      };
      const campaignEnd = performance.now() + CAMPAIGN_MS;
      while (performance.now() < campaignEnd) {
        await sleep(rng.between(200, 1800));
        const kind = chooseFault();
        // The server faults' budget is split between the two servers (one draw per fault).
        const onModern = kind.startsWith('proxy-') || kind === 'server-restart' ? rng.next() < 0.4 : false;
        const faultProxy = (onModern ? proxyModern : proxy) as FaultProxy;
        const side = onModern ? ' [2026-07-28]' : '';
        const note = (k: string, detail = '') => noteFault(k + side, detail);
        switch (kind) {
          case 'server-restart': {
            const down = rng.between(50, 1500);
            note(kind, `down ${down} ms`);
            const old = onModern ? serverModern : server;
            old.proc.kill('SIGKILL');
            await old.untilExit();
            await sleep(down);
            if (onModern) serverModern = await launchModern();
            else server = await launchServer();
            break;
          }
          case 'proxy-cut': {
            const midEvent = rng.next() < 0.5;
            const afterBytes = rng.between(0, 600);
            note(kind, midEvent ? 'mid-event' : `after ${afterBytes} bytes`);
            // A legacy update rides the GET stream; a 2026-07-28 one a listen (POST) stream.
            const method = onModern ? 'POST' : 'GET';
            track(faultProxy.faults.cutNextStream(midEvent ? { midEvent: true, method } : { afterBytes }));
            break;
          }
          case 'proxy-stall': {
            const ms = rng.between(100, 4000);
            note(kind, `${ms} ms`);
            track(faultProxy.faults.stall(ms));
            break;
          }
          case 'proxy-drop':
            note(kind, `${faultProxy.faults.dropAllStreams()} streams`);
            break;
          case 'proxy-5xx': {
            const count = rng.between(1, 4);
            const method = rng.pick(['GET', 'POST'] as const);
            note(kind, `${count}× 503 on ${method}`);
            faultProxy.faults.failNext(count, 503, { method });
            break;
          }
          case 'worker-kill': {
            const slot = rng.between(0, WORKERS - 1);
            const victim = workers[slot] as Child;
            const back = rng.between(200, 3000);
            note(kind, `${workerIds.get(victim)}, replaced after ${back} ms`);
            if (victim.stopped) clearTimeout(resumes.get(victim));
            victim.proc.kill('SIGKILL');
            deadWorkers.add(workerIds.get(victim) as string);
            track(
              (async () => {
                await victim.untilExit();
                await sleep(back);
                if (workers[slot] === victim) launchWorker(slot);
              })(),
            );
            break;
          }
          case 'worker-stop': {
            const victim = workers[rng.between(0, WORKERS - 1)] as Child;
            const ms = rng.between(300, 3 * LEASE_MS);
            if (victim.stopped || victim.exited()) break;
            note(kind, `${workerIds.get(victim)} for ${ms} ms`);
            victim.proc.kill('SIGSTOP');
            victim.stopped = true;
            resumes.set(
              victim,
              setTimeout(() => {
                resumes.delete(victim);
                if (!victim.exited()) victim.proc.kill('SIGCONT');
                victim.stopped = false;
              }, ms),
            );
            break;
          }
          case 'pg-terminate-fleet':
          case 'pg-terminate-sources': {
            const group =
              kind === 'pg-terminate-sources'
                ? rng.pick([['s0'], ['s1'], [MODERN_SOURCE], ['s0', 's1', MODERN_SOURCE]])
                : rng.pick([['w0'], ['w1'], ['w2'], ['w0', 'w1', 'w2']]);
            noteFault(kind, `${group.join('+')}: ${await terminate(group)} backends`);
            break;
          }
        }
      }

      // Heal: no more faults, every process back, the server stops emitting.
      schedule.push(`t+${elapsed()}s heal`);
      for (const [child, timer] of resumes) {
        clearTimeout(timer);
        if (!child.exited()) child.proc.kill('SIGCONT');
        child.stopped = false;
      }
      resumes.clear();
      rmSync(tasksFlag, { force: true });
      (proxy as FaultProxy).faults.reset();
      (proxyModern as FaultProxy).faults.reset();
      await Promise.all([...pending]);
      (proxy as FaultProxy).faults.reset();
      (proxyModern as FaultProxy).faults.reset();
      if (server.exited()) server = await launchServer();
      if (serverModern.exited()) serverModern = await launchModern();
      for (let slot = 0; slot < WORKERS; slot++) {
        const w = workers[slot] as Child;
        if (w.exited() && !deadWorkers.has(workerIds.get(w) as string)) {
          unaskedExits.push(
            `${workerIds.get(w)} exit ${w.proc.exitCode ?? w.proc.signalCode}: ${tail(w, 400)}`,
          );
        }
        if (w.exited()) {
          deadWorkers.add(workerIds.get(w) as string);
          launchWorker(slot);
        }
      }
      emitting = false;
      await control(port, '/control/emit?on=0');
      await control(portModern, '/control/emit?on=0');
      for (const s of sources) if (s.child.exited()) fail(`source ${s.name} died:\n${tail(s.child)}`);
      if (!(await until(sourcesReady, 45_000, 200))) {
        const state = await control(port, '/control/state', 'GET').catch((e) => String(e));
        fail(
          `the sources did not come back to the healed server within 45 s: server ${JSON.stringify(state)}, ` +
            `sources ${JSON.stringify(sources.map(sourceState))}\n${sources.map((s) => tail(s.child, 600)).join('\n')}`,
        );
      }
      // A last update of every URI to every session: each source must deliver it.
      const probeAt = Number(process.hrtime.bigint()) / 1e6;
      await control(port, '/control/probe');
      await control(portModern, '/control/probe');
      const healedAt = performance.now();

      // Quiet: every send of the live sessions stored, nothing pending (bounded).
      const finalSessions = async () => {
        const state = await control<ServerState>(port, '/control/state', 'GET');
        const alive = new Set(state.sessions.map((s) => s.id));
        return new Set(
          legacySources.map((s) => sourceState(s).session).filter((s): s is string => !!s && alive.has(s)),
        );
      };
      const db = admin;
      const storedIds = async () =>
        new Set(
          (
            await db.query(`SELECT (ingress::json)->'event'->>'id' AS id FROM "${schema}".ax_event_events`)
          ).rows.map((r) => r.id as string),
        );
      const pendingCount = async () =>
        Number(
          (
            await db.query(
              `SELECT count(*) AS n FROM "${schema}".ax_event_deliveries
              WHERE status IN ('queued','failed','claimed','running')`,
            )
          ).rows[0].n,
        );
      const finalServerPid = () => server.proc.pid;
      const quiet = await until(
        async () => {
          const live = await finalSessions();
          const ids = await storedIds();
          const entries = readLines<Ack & { t: string }>(serverLog);
          const probes = entries.filter(
            (a) => a.t === 'ack' && a.kind === undefined && live.has(a.s) && a.at >= probeAt,
          );
          const modernProbes = readLines<Ack & { t: string }>(modernLog).filter(
            (a) => a.t === 'ack' && a.at >= probeAt,
          );
          // Every task of a live session on the final server ended. What it sent and the session's
          // client received is stored once the probes are: a source publishes in arrival order.
          const ended = new Set(
            entries
              .filter((a) => a.t === 'ack' && a.kind === 'task' && a.status !== 'working')
              .map((a) => a.task),
          );
          const openTasks = entries.filter(
            (e) => e.t === 'task' && live.has(e.s) && e.pid === finalServerPid() && !ended.has(e.task),
          );
          return (
            probes.length >= URIS * SOURCES &&
            probes.every((a) => ids.has(eventIdOf(a))) &&
            modernProbes.length >= URIS &&
            modernProbes.every((a) => ids.has(eventIdOf(a))) &&
            openTasks.length === 0 &&
            (await pendingCount()) === 0
          );
        },
        90_000,
        500,
      );
      const quietMs = performance.now() - healedAt;

      // What is left, before the fleet stops: nothing pending, no lease (least of all a dead worker's).
      const live = await finalSessions();
      const liveWorkers = new Set(workers.filter((w) => !w.exited()).map((w) => workerIds.get(w) as string));
      const deliveries = (
        await db.query(
          `SELECT d.id, d.seq, d.route_id, d.instance_key, d.status, d.attempt, d.lease_owner,
                (e.ingress::json)->'event'->>'id' AS event_id, (e.ingress::json)->'event'->>'subject' AS subject
           FROM "${schema}".ax_event_deliveries d LEFT JOIN "${schema}".ax_event_events e ON e.key = d.event_key
          WHERE d.kind = 'event'`,
        )
      ).rows.map((r) => ({
        id: r.id as string,
        seq: Number(r.seq),
        route: r.route_id as string,
        instanceKey: r.instance_key as string,
        status: r.status as string,
        attempt: Number(r.attempt),
        leaseOwner: (r.lease_owner as string | null) ?? null,
        eventId: (r.event_id as string | null) ?? null,
        subject: (r.subject as string | null) ?? null,
      }));
      const effects = (
        await db.query(`SELECT delivery_id, event_id, uri FROM "${schema}".chaos_effects`)
      ).rows.map((r) => ({
        deliveryId: r.delivery_id as string,
        eventId: r.event_id as string,
        uri: r.uri as string,
      }));
      const taskEffects = (
        await db.query(`SELECT delivery_id, event_id, task, status FROM "${schema}".chaos_task_effects`)
      ).rows.map((r) => ({
        deliveryId: r.delivery_id as string,
        eventId: r.event_id as string,
        task: (r.task as string | null) ?? null,
        status: (r.status as string | null) ?? null,
      }));
      const unsafeStarts = (
        await db.query(`SELECT delivery_id FROM "${schema}".chaos_unsafe_starts`)
      ).rows.map((r) => ({ deliveryId: r.delivery_id as string }));
      const deadLetters = (
        await db.query(`SELECT delivery_id, reason FROM "${schema}".ax_event_dead_letters`)
      ).rows.map((r) => ({ deliveryId: r.delivery_id as string, reason: r.reason as string }));

      // Stop the fleet (drains), the sources, the server.
      const stopStarted = performance.now();
      await Promise.all(workers.map((w) => stopChild(w, 'SIGTERM', 15_000)));
      const workerExits = workers.map((w) => w.proc.exitCode ?? w.proc.signalCode);
      await Promise.all(sources.map((s) => stopChild(s.child, 'SIGTERM', 10_000)));
      await stopChild(server, 'SIGTERM', 3_000);
      await stopChild(serverModern, 'SIGTERM', 3_000);
      const stopMs = performance.now() - stopStarted;

      const serverEntries = readLines<Ack & { t: string }>(serverLog);
      const modernEntries = readLines<Ack & { t: string; sid?: number }>(modernLog);
      const data: CampaignData = {
        acks: serverEntries.filter((a) => a.t === 'ack'),
        modernAcks: modernEntries.filter((a) => a.t === 'ack'),
        modernSends: modernEntries
          .filter((e) => e.t === 'send')
          .map((e) => ({ uri: e.uri, seq: e.seq, pid: e.pid })),
        modernListens: modernEntries
          .filter((e) => e.t === 'listen')
          .map((e) => ({ sid: e.sid as number, pid: e.pid })),
        modernPids: modernEntries.filter((e) => e.t === 'start').map((e) => e.pid),
        modernSource: MODERN_SOURCE,
        tasksCreated: serverEntries
          .filter((e) => e.t === 'task')
          .map((e) => ({ s: e.s, task: e.task as string, pid: e.pid })),
        taskEffects,
        serverPids,
        sources: new Map(sources.map((s) => [s.name, readLines<SourceEntry>(s.log)])),
        finalSessions: live,
        deliveries,
        effects,
        unsafeStarts,
        runs: readdirSync(dir)
          .filter((f) => f.startsWith('runs-'))
          .flatMap((f) => readLines<RunEntry>(join(dir, f))),
        deadLetters,
        liveWorkers,
        unaskedExits,
      };
      const verdict = checkInvariants(data);
      const seqs = new Map<string, number>();
      for (const a of [...data.acks, ...data.modernAcks])
        if (a.kind !== 'task') seqs.set(a.uri, Math.max(seqs.get(a.uri) ?? 0, a.seq));
      const errors = [...data.sources.values()].flat().filter((e) => e.t === 'err');
      const lifecycle = [...data.sources.values()].flat().filter((e) => e.t === 'life');
      const p = (proxy as FaultProxy).stats;
      const pm = (proxyModern as FaultProxy).stats;
      const lines = [
        `seed ${SEED}; campaign ${CAMPAIGN_MS} ms; total ${elapsed()} s; quiet ${Math.round(quietMs)} ms after healing (${quiet ? 'reached' : 'NOT reached within 90 s'}); fleet stopped in ${Math.round(stopMs)} ms, worker exit codes ${workerExits.join(', ')}`,
        `faults: ${[...faults].map(([k, n]) => `${k} ${n}`).join(', ')}`,
        `processes: ${serverPids.length} + ${modernPids.length} (2026-07-28) server generations, ${spawned} workers started (${deadWorkers.size} killed), ${SOURCES}+1 sources; proxy: ${p.cuts} cuts, ${p.dropped} streams dropped, ${p.injectedFailures} injected 5xx, ${p.totalConnections} connections; 2026-07-28 proxy: ${pm.cuts} cuts, ${pm.dropped} dropped, ${pm.injectedFailures} 5xx, ${pm.totalConnections} connections`,
        `updates emitted: ${[...seqs.values()].reduce((a, b) => a + b, 0)} over ${URIS}+${URIS} URIs (last seq ${[...seqs].map(([u, n]) => `${u}=${n}`).join(', ')})`,
        `source lifecycle events: ${lifecycle.length} (${['disconnected', 'reconnected', 'session_restored'].map((s) => `${s} ${lifecycle.filter((e) => e.state === s).length}`).join(', ')}; resumed: true ${lifecycle.filter((e) => e.resumed === true).length}, false ${lifecycle.filter((e) => e.resumed === false).length}); errors reported to the sources: ${errors.length}`,
        ...verdict.figures,
      ];
      for (const line of lines) console.log(`[chaos] ${line}`);
      if (!quiet) verdict.violations.unshift('the campaign did not become quiet within 90 s of healing');
      if (verdict.violations.length > 0) {
        console.log(`[chaos] FAILED, seed ${SEED}: ${verdict.violations.length} invariant(s)`);
        for (const v of verdict.violations) console.log(`[chaos]   ✗ ${v}`);
        const rows = await db.query(
          `SELECT d.id, d.seq, d.route_id, d.instance_key, d.status, d.attempt, d.fencing, d.lease_owner,
                  d.started_at, d.finished_at, d.error, (e.ingress::json)->'event'->>'id' AS event_id
             FROM "${schema}".ax_event_deliveries d LEFT JOIN "${schema}".ax_event_events e ON e.key = d.event_key
            ORDER BY d.seq`,
        );
        writeFileSync(
          join(dir, 'db.json'),
          JSON.stringify(
            { schema, deliveries: rows.rows, effects, unsafeStarts, deadLetters, schedule },
            null,
            1,
          ),
        );
        fail(`${verdict.violations.length} invariant(s) failed:\n- ${verdict.violations.join('\n- ')}`);
      }
      console.log(`[chaos] all invariants held (seed ${SEED})`);
    },
    CAMPAIGN_MS + 300_000,
  );
});
