/**
 * The invariants of the chaos campaign, checked on what every process logged and what the store
 * holds once the campaign healed and went quiet. Each check adds figures (printed) and, when it
 * fails, violations (which fail the test with the seed).
 *
 * What the library promises, and so what is checked (docs/MCP_SUBSCRIPTIONS.md, docs/postgres.md,
 * docs/event-runtime.md):
 *
 * 1. Within one 2025-11-25 session whose server stores events (ours does), a dropped or cut GET
 *    stream resumes with `Last-Event-ID`, so between two sends of a session that reached the store
 *    none is missing (no hole), and a session alive at the end lost nothing. What a session sent
 *    before its client's GET stream first opened (the head, after a restored session re-subscribed)
 *    or after its client last heard from it (the tail of a session that ended) may be lost — the
 *    docs' contract is then a `reconnected` with `resumed: false` from the client *after* the lost
 *    send, telling the application to re-read. Each loss is checked for it.
 * 2. Each of those updates becomes one event (id `sse:<session>:<SSE id>`, deduplicated) with one
 *    delivery per route, for the URI the server sent.
 * 3. The idempotent target's effect is recorded exactly once per delivery (it may run more often).
 * 4. The non-idempotent target starts at most once per delivery; a delivery whose run was cut off
 *    ends `outcome_unknown` with a dead letter; nothing else dead-letters.
 * 5. Strict order per (target, identity scope, instance): the instance is the URI (the partition
 *    key). Runs start in publish order (the store's `seq`): once a later delivery of a key started,
 *    no attempt of an earlier one starts. Reruns of one delivery may repeat, a fenced-out run
 *    (a worker that was stopped past its lease) may still be finishing. As a consequence, per
 *    (URI, session) the server's sequence numbers increase in the order the deliveries first
 *    started. Across sessions or sources no order is promised: two sources publish one update
 *    each, in whatever order their publishes commit.
 * 6. After healing: nothing queued, failed, claimed or running; no lease held (by a dead worker or
 *    any other).
 * 7. Task notifications (2025-11-25 draft): each `notifications/tasks/status` the server sent is
 *    one more event on the session's GET stream, so 1 holds for it as for an update (no hole, lost
 *    only with a session and then signalled); stored, it is the event `task:<id>:<status>:<updated>`
 *    (`mcp.task.status`, correlation `mcp.task = chaos:<id>`) with one `tasks` delivery whose
 *    idempotent effect is recorded exactly once. So a terminal status (`completed`, `failed`) the
 *    server acknowledged reaches the route at least once, its effect once.
 * 8. The 2026-07-28 listen stream (v2 SDK server): no event ids, no resume. An update written to
 *    a listen stream is stored (once: `sse:stream:<uri>|<seq>|<listen id>`, the id the source's
 *    transport gives the copy) unless the stream broke after it — then the source's client must
 *    say so with a `reconnected` (`resumed: false`) after the write. No update reaches the
 *    application twice (two streams in an overlap pass one copy on); 2–6 hold for its deliveries.
 */

export interface Ack {
  /** Undefined: a resource update (legacy); `task`: a task status; `listen`: a 2026-07-28 update. */
  kind?: 'task' | 'listen';
  s: string;
  uri: string;
  seq: number;
  eid?: string;
  /** A task status: the task's id, its status and `lastUpdatedAt`. */
  task?: string;
  status?: string;
  updated?: string;
  pid: number;
  at: number;
}

/** The event id an acknowledged send becomes in the store. */
export function eventIdOf(a: Ack): string {
  if (a.kind === 'task') return `task:${a.task}:${a.status}:${a.updated}`;
  return `sse:${a.s}:${a.eid}`;
}
const TERMINAL = new Set(['completed', 'failed', 'cancelled']);
const label = (a: Ack) => (a.kind === 'task' ? `task ${a.task} ${a.status}` : `${a.uri} #${a.seq}`);

export interface SourceEntry {
  t: 'rx' | 'rxtask' | 'call' | 'life' | 'err' | 'started' | 'unhandled';
  task?: string;
  status?: string;
  stack?: string;
  s?: string;
  eid?: string;
  uri?: string;
  state?: string;
  resumed?: boolean;
  where?: string;
  error?: string;
  at: number;
}

export interface DeliveryRow {
  id: string;
  seq: number;
  route: string;
  instanceKey: string;
  status: string;
  attempt: number;
  leaseOwner: string | null;
  eventId: string | null;
  subject: string | null;
}

export interface RunEntry {
  t: 'effect' | 'unsafe' | 'task';
  d: string;
  e: string;
  k: string;
  a: number;
  f: number;
  pid: number;
  start: number;
}

export interface CampaignData {
  acks: Ack[];
  /** Server process ids in start order. */
  serverPids: number[];
  sources: Map<string, SourceEntry[]>;
  /** The sessions the sources hold at the end, alive on the final server. */
  finalSessions: Set<string>;
  deliveries: DeliveryRow[];
  effects: { deliveryId: string; eventId: string; uri: string }[];
  taskEffects: { deliveryId: string; eventId: string; task: string | null; status: string | null }[];
  /** The 2026-07-28 server's acknowledged writes (`kind: 'listen'`) and the source that listened. */
  modernAcks: Ack[];
  /**
   * The 2026-07-28 server's publishes (`uri`, `seq`, by `pid`), the listen streams each process
   * opened (`sid`), and its process ids in start order: a process killed between writing a frame
   * and its write callback logged no ack for bytes the client may well have read.
   */
  modernSends: { uri: string; seq: number; pid: number }[];
  modernListens: { sid: number; pid: number }[];
  modernPids: number[];
  modernSource: string;
  /** Tasks the legacy server created: session, task id, server pid. */
  tasksCreated: { s: string; task: string; pid: number }[];
  unsafeStarts: { deliveryId: string }[];
  runs: RunEntry[];
  deadLetters: { deliveryId: string; reason: string }[];
  liveWorkers: Set<string>;
  /** Workers that exited although the schedule never killed them (id, code, last output). */
  unaskedExits: string[];
}

export interface Verdict {
  figures: string[];
  violations: string[];
}

const PENDING = new Set(['queued', 'failed', 'claimed', 'running']);
const few = <T>(items: T[], n = 5) => JSON.stringify(items.slice(0, n)) + (items.length > n ? ' …' : '');

function parseEventId(id: string | null): { s: string; eid: string } | undefined {
  const match = id === null ? null : /^sse:([^:]+):(.+)$/.exec(id);
  return match ? { s: match[1] as string, eid: match[2] as string } : undefined;
}

export function checkInvariants(data: CampaignData): Verdict {
  const figures: string[] = [];
  const violations: string[] = [];
  const fig = (line: string) => figures.push(line);
  const fail = (line: string) => violations.push(line);

  const finalPid = data.serverPids.at(-1);
  const ackKey = (s: string, eid: string) => `${s} ${eid}`;
  const acksByKey = new Map<string, Ack>();
  for (const ack of [...data.acks, ...data.modernAcks])
    if (ack.eid !== undefined && ack.kind !== 'task') acksByKey.set(ackKey(ack.s, ack.eid), ack);
  const taskAcks = new Map<string, Ack>();
  for (const ack of data.acks) if (ack.kind === 'task') taskAcks.set(eventIdOf(ack), ack);
  const unstored = data.acks.filter((a) => a.eid === undefined);
  if (unstored.length > 0) fail(`${unstored.length} sends resolved without an event id: ${few(unstored)}`);

  // Who held which session, and what each client received (before the store).
  const owner = new Map<string, string>();
  const received = new Set<string>();
  const receivedTasks = new Set<string>();
  let receipts = 0;
  for (const [name, entries] of data.sources) {
    for (const e of entries) {
      if (e.s && !owner.has(e.s) && (e.t === 'rx' || e.t === 'life' || e.t === 'started'))
        owner.set(e.s, name);
      if (e.t === 'rxtask') receivedTasks.add(`${e.task}:${e.status}`);
      if (e.t === 'rx' && e.s && e.eid) {
        receipts++;
        received.add(ackKey(e.s, e.eid));
      }
    }
  }

  const byRoute = (route: string) => data.deliveries.filter((d) => d.route === route);
  const effectsDeliveries = byRoute('effects');
  const unsafeDeliveries = byRoute('unsafe');
  const taskDeliveries = byRoute('tasks');
  const stored = new Map<string, Map<string, DeliveryRow>>(); // event id → route → delivery
  for (const d of data.deliveries) {
    if (d.eventId === null) continue;
    const routes = stored.get(d.eventId) ?? new Map<string, DeliveryRow>();
    routes.set(d.route, d);
    stored.set(d.eventId, routes);
  }

  // 2. Attribution: every stored event is an acknowledged send, of the URI it names — or a
  // 2026-07-28 frame published to that very listen stream by a process killed before the
  // frame's write callback could log its ack (the bytes were on the socket already).
  const misattributed: string[] = [];
  let unackedAtDeath = 0;
  const finalModernPid = data.modernPids.at(-1);
  const modernSendPid = new Map(data.modernSends.map((send) => [`${send.uri}|${send.seq}`, send.pid]));
  const listenPid = new Map(data.modernListens.map((listen) => [String(listen.sid), listen.pid]));
  const writtenAsTheServerDied = (parsed: { s: string; eid: string }, subject: string | null | undefined) => {
    if (parsed.s !== 'stream') return false;
    const [uri, seq, sid] = parsed.eid.split('|');
    if (uri !== subject || seq === undefined || sid === undefined) return false;
    const pid = modernSendPid.get(`${uri}|${seq}`);
    return pid !== undefined && pid !== finalModernPid && listenPid.get(sid) === pid;
  };
  for (const [eventId, routes] of stored) {
    const subject = [...routes.values()][0]?.subject;
    if (eventId.startsWith('task:')) {
      const ack = taskAcks.get(eventId);
      if (!ack) misattributed.push(`${eventId} (${subject}): no such acknowledged task status`);
      else if (subject !== `chaos:${ack.task}`)
        misattributed.push(`${eventId}: task ${ack.task}, delivered as ${subject}`);
      continue;
    }
    const parsed = parseEventId(eventId);
    const ack = parsed ? acksByKey.get(ackKey(parsed.s, parsed.eid)) : undefined;
    if (!ack && parsed && writtenAsTheServerDied(parsed, subject)) {
      unackedAtDeath++;
      continue;
    }
    if (!ack) misattributed.push(`${eventId} (${subject}): no such acknowledged send`);
    else if (ack.uri !== subject)
      misattributed.push(`${eventId}: sent for ${ack.uri} #${ack.seq}, delivered as ${subject}`);
  }
  if (misattributed.length > 0)
    fail(`${misattributed.length} stored events are not the send they name: ${few(misattributed)}`);
  if (unackedAtDeath > 0)
    fig(
      `2026-07-28 frames stored though their server died before logging the write: ${unackedAtDeath} (each published to that listen stream by that process)`,
    );

  // 1. Per session: no hole between stored sends; a lost head or tail only with a later signal.
  const perSession = new Map<string, Ack[]>();
  for (const ack of data.acks)
    if (ack.eid !== undefined) perSession.set(ack.s, [...(perSession.get(ack.s) ?? []), ack]);
  // In the order of the session's SSE ids (updates and task statuses share the GET stream).
  for (const acks of perSession.values()) acks.sort((a, b) => Number(a.eid) - Number(b.eid));
  const required: Ack[] = [];
  let lostTail = 0;
  let lostHead = 0;
  let endedByRestart = 0;
  let abandoned = 0;
  const holes: string[] = [];
  const unsignalled: string[] = [];
  const liveLosses: string[] = [];
  const headExamples: string[] = [];
  /**
   * The client told its application to re-read after this send: a `reconnected` with `resumed:
   * false` (the docs' signal; `session_restored` alone is not, it may come before the loss).
   */
  const signalledAfter = (s: string, a: Ack) => {
    const name = owner.get(s);
    if (!name) return true; // a session no source ever used: nothing was promised to anyone
    return (data.sources.get(name) ?? []).some(
      (e) => e.t === 'life' && e.at > a.at && e.state === 'reconnected' && e.resumed === false,
    );
  };
  const rx = (s: string, a: Ack) =>
    a.kind === 'task' ? receivedTasks.has(`${a.task}:${a.status}`) : received.has(ackKey(s, a.eid as string));
  for (const [s, acks] of perSession) {
    const isStored = (a: Ack) => stored.has(eventIdOf(a));
    const first = acks.findIndex(isStored);
    const last = acks.findLastIndex(isStored);
    const alive = data.finalSessions.has(s);
    if (!alive) {
      if (acks[0]?.pid !== finalPid) endedByRestart++;
      else abandoned++;
    }
    const head = first < 0 ? [] : acks.slice(0, first);
    const middle = first < 0 ? [] : acks.slice(first, last + 1);
    const tail = acks.slice(last + 1);
    required.push(...middle);
    for (const a of middle) {
      if (!isStored(a)) holes.push(`${s} ${label(a)} eid ${a.eid} (client received it: ${rx(s, a)})`);
    }
    for (const a of head) {
      lostHead++;
      if (!signalledAfter(s, a))
        unsignalled.push(
          `${s} (${owner.get(s)}): ${label(a)} lost at the head of the session, no resumed: false after it`,
        );
      else if (headExamples.length < 3) headExamples.push(`${label(a)} (eid ${a.eid}, received ${rx(s, a)})`);
    }
    if (alive) {
      required.push(...tail);
      for (const a of tail) liveLosses.push(`${s} ${label(a)} eid ${a.eid} (received: ${rx(s, a)})`);
      continue;
    }
    for (const a of tail) {
      lostTail++;
      if (!signalledAfter(s, a))
        unsignalled.push(
          `${s} (${owner.get(s)}): ${label(a)} lost with the session, no resumed: false after it`,
        );
    }
  }
  fig(
    `sessions: ${perSession.size} (alive at the end ${[...perSession.keys()].filter((s) => data.finalSessions.has(s)).length}, ended by a server restart ${endedByRestart}, left by the client while the server lived ${abandoned})`,
  );
  fig(
    `acknowledged sends: ${data.acks.length}; required (no hole, nothing lost in a live session): ${required.length}; lost, each followed by a reconnected (resumed: false) of its source (allowed by the docs: re-read): ${lostTail} with a session that ended, ${lostHead} at the head of a restored session before its GET stream opened${headExamples.length > 0 ? ` (e.g. ${headExamples.join(', ')})` : ''}`,
  );
  fig(
    `client receipts: ${receipts} (${received.size} distinct: ${receipts - received.size} redelivered after a resume, deduplicated)`,
  );
  if (holes.length > 0)
    fail(
      `${holes.length} acknowledged sends missing between stored sends of their session (a hole): ${few(holes)}`,
    );
  if (liveLosses.length > 0)
    fail(
      `${liveLosses.length} acknowledged sends of a session still alive at the end were never stored: ${few(liveLosses)}`,
    );
  if (unsignalled.length > 0)
    fail(
      `${unsignalled.length} sends lost without a later reconnected (resumed: false): ${few(unsignalled)}`,
    );

  // 2/3/4 for every required send: one delivery per route; the effect exactly once.
  const effectRows = new Map<string, number>();
  for (const e of data.effects) effectRows.set(e.deliveryId, (effectRows.get(e.deliveryId) ?? 0) + 1);
  const undelivered: string[] = [];
  for (const a of required) {
    const routes = stored.get(eventIdOf(a));
    for (const route of a.kind === 'task' ? ['tasks'] : ['effects', 'unsafe']) {
      if (!routes?.has(route)) undelivered.push(`${route}: ${a.s} ${eventIdOf(a)}`);
    }
  }
  if (undelivered.length > 0)
    fail(`${undelivered.length} required sends have no delivery: ${few(undelivered)}`);

  const runsOf = (target: string) => {
    const map = new Map<string, RunEntry[]>();
    for (const r of data.runs) if (r.t === target) map.set(r.d, [...(map.get(r.d) ?? []), r]);
    return map;
  };
  const effectRuns = runsOf('effect');
  const badEffects: string[] = [];
  for (const d of effectsDeliveries) {
    const rows = effectRows.get(d.id) ?? 0;
    if (d.status !== 'succeeded' || rows !== 1) badEffects.push(`${d.id} ${d.status}, ${rows} effect rows`);
  }
  const strayEffects = data.effects.filter((e) => !effectsDeliveries.some((d) => d.id === e.deliveryId));
  if (badEffects.length > 0)
    fail(`${badEffects.length} idempotent deliveries without exactly one effect: ${few(badEffects)}`);
  if (strayEffects.length > 0)
    fail(`${strayEffects.length} effect rows of no delivery: ${few(strayEffects)}`);
  const effectRunCount = [...effectRuns.values()].reduce((n, r) => n + r.length, 0);
  fig(
    `idempotent target: ${effectsDeliveries.length} deliveries, ${data.effects.length} effect rows, ${effectRunCount} runs (${effectRunCount - effectRuns.size} reruns absorbed by ON CONFLICT DO NOTHING), max runs of one delivery ${Math.max(0, ...[...effectRuns.values()].map((r) => r.length))}`,
  );

  // 7. Task statuses: every tasks delivery's effect exactly once, for the task and status it names.
  const taskRows = new Map<string, (typeof data.taskEffects)[number][]>();
  for (const e of data.taskEffects) taskRows.set(e.deliveryId, [...(taskRows.get(e.deliveryId) ?? []), e]);
  const badTasks: string[] = [];
  for (const d of taskDeliveries) {
    const rows = taskRows.get(d.id) ?? [];
    const ack = d.eventId ? taskAcks.get(d.eventId) : undefined;
    if (d.status !== 'succeeded' || rows.length !== 1)
      badTasks.push(`${d.id} ${d.status}, ${rows.length} effect rows`);
    else if (ack && (rows[0]?.task !== `chaos:${ack.task}` || rows[0]?.status !== ack.status))
      badTasks.push(
        `${d.id}: effect for ${rows[0]?.task} ${rows[0]?.status}, sent ${ack.task} ${ack.status}`,
      );
  }
  const strayTasks = data.taskEffects.filter((e) => !taskDeliveries.some((d) => d.id === e.deliveryId));
  if (badTasks.length > 0)
    fail(`${badTasks.length} task-status deliveries without exactly one right effect: ${few(badTasks)}`);
  if (strayTasks.length > 0) fail(`${strayTasks.length} task effect rows of no delivery: ${few(strayTasks)}`);
  const allTaskAcks = [...taskAcks.values()];
  const terminalAcks = allTaskAcks.filter((a) => TERMINAL.has(a.status as string));
  const terminalStored = terminalAcks.filter((a) => stored.get(eventIdOf(a))?.has('tasks'));
  const taskRuns = runsOf('task');
  const taskRunCount = [...taskRuns.values()].reduce((n, r) => n + r.length, 0);
  const requiredTerminal = required.filter((a) => a.kind === 'task' && TERMINAL.has(a.status as string));
  fig(
    `tasks: ${data.tasksCreated.length} created by the sources' calls, ${allTaskAcks.length} status notifications acknowledged (${terminalAcks.length} terminal: ${terminalAcks.filter((a) => a.status === 'completed').length} completed, ${terminalAcks.filter((a) => a.status === 'failed').length} failed); terminal ones stored and routed ${terminalStored.length} (required ${requiredTerminal.length}, the rest lost with their session, signalled); tasks route: ${taskDeliveries.length} deliveries, ${data.taskEffects.length} effect rows, ${taskRunCount} runs`,
  );

  // 8. The 2026-07-28 listen stream.
  const modernLog = data.sources.get(data.modernSource) ?? [];
  const modernRx = new Set(modernLog.filter((e) => e.t === 'rx' && e.eid).map((e) => e.eid as string));
  const relistenAfter = (a: Ack) =>
    modernLog.some((e) => e.t === 'life' && e.at > a.at && e.state === 'reconnected' && e.resumed === false);
  const modernSilent: string[] = [];
  let modernStored = 0;
  let modernLostSignalled = 0;
  const perUpdate = new Map<string, number>();
  for (const a of data.modernAcks) {
    if (stored.has(eventIdOf(a))) {
      modernStored++;
      const key = `${a.uri} #${a.seq}`;
      perUpdate.set(key, (perUpdate.get(key) ?? 0) + 1);
    } else if (relistenAfter(a)) modernLostSignalled++;
    else
      modernSilent.push(
        `${a.uri} #${a.seq} on listen ${a.eid?.split('|')[2]} (received: ${modernRx.has(a.eid as string)})`,
      );
  }
  const twiceModern = [...perUpdate].filter(([, n]) => n > 1).map(([k, n]) => `${k} ${n}×`);
  const modernLives = modernLog.filter((e) => e.t === 'life');
  fig(
    `2026-07-28 listen: ${data.modernAcks.length} updates written to listen streams; stored ${modernStored}; lost with a broken stream, each followed by a reconnected (resumed: false): ${modernLostSignalled}; client receipts ${modernRx.size}; source lifecycle ${['disconnected', 'reconnected'].map((st) => `${st} ${modernLives.filter((e) => e.state === st).length}`).join(', ')}`,
  );
  if (modernSilent.length > 0)
    fail(
      `${modernSilent.length} updates written to a 2026-07-28 listen stream were never stored and no reconnected (resumed: false) followed: ${few(modernSilent)}`,
    );
  if (twiceModern.length > 0)
    fail(
      `${twiceModern.length} 2026-07-28 updates reached the application more than once: ${few(twiceModern)}`,
    );

  const unsafeRuns = runsOf('unsafe');
  const dbStarts = new Map<string, number>();
  for (const s of data.unsafeStarts) dbStarts.set(s.deliveryId, (dbStarts.get(s.deliveryId) ?? 0) + 1);
  const twice: string[] = [];
  const unsafeStatus = new Map<string, number>();
  let unknownStarted = 0;
  for (const d of unsafeDeliveries) {
    unsafeStatus.set(d.status, (unsafeStatus.get(d.status) ?? 0) + 1);
    const starts = unsafeRuns.get(d.id)?.length ?? 0;
    if (starts > 1 || (dbStarts.get(d.id) ?? 0) > 1)
      twice.push(`${d.id} started ${starts}× (status ${d.status})`);
    if (d.status === 'succeeded' && starts !== 1)
      twice.push(`${d.id} succeeded with ${starts} recorded starts`);
    if (d.status !== 'succeeded' && d.status !== 'outcome_unknown') twice.push(`${d.id} ended ${d.status}`);
    if (d.status === 'outcome_unknown' && starts === 1) unknownStarted++;
  }
  if (twice.length > 0)
    fail(`non-idempotent target: ${twice.length} deliveries ran twice or ended wrongly: ${few(twice)}`);
  fig(
    `non-idempotent target: ${unsafeDeliveries.length} deliveries: ${[...unsafeStatus].map(([s, n]) => `${s} ${n}`).join(', ')} (outcome_unknown after a start ${unknownStarted}, before one ${(unsafeStatus.get('outcome_unknown') ?? 0) - unknownStarted}); max starts of one delivery ${Math.max(0, ...[...unsafeRuns.values()].map((r) => r.length))}`,
  );

  // 5. Order per (target, instance).
  const seqOf = new Map(data.deliveries.map((d) => [d.id, d.seq]));
  const ackOfDelivery = new Map<string, Ack>();
  for (const d of data.deliveries) {
    const p = parseEventId(d.eventId);
    const ack = p ? acksByKey.get(ackKey(p.s, p.eid)) : undefined;
    if (ack) ackOfDelivery.set(d.id, ack);
  }
  const disorder: string[] = [];
  const appDisorder: string[] = [];
  let keys = 0;
  let pairs = 0;
  for (const target of ['effect', 'unsafe', 'task'] as const) {
    const perKey = new Map<string, RunEntry[]>();
    for (const r of data.runs) if (r.t === target) perKey.set(r.k, [...(perKey.get(r.k) ?? []), r]);
    for (const [k, runs] of perKey) {
      keys++;
      runs.sort((a, b) => a.start - b.start);
      let highest = -1;
      let highestRun: RunEntry | undefined;
      const firstStarts: string[] = [];
      for (const r of runs) {
        const seq = seqOf.get(r.d) ?? -1;
        if (seq < highest) {
          disorder.push(
            `${target} ${k}: ${r.d} (seq ${seq}, attempt ${r.a}, pid ${r.pid}) started after ${highestRun?.d} (seq ${highest}, attempt ${highestRun?.a}, pid ${highestRun?.pid}) by ${(r.start - (highestRun?.start ?? 0)).toFixed(1)} ms`,
          );
        }
        if (seq > highest) {
          highest = seq;
          highestRun = r;
          firstStarts.push(r.d);
        }
      }
      // The application's view: per (URI, session), sequence numbers rise in first-start order.
      const lastSeq = new Map<string, number>();
      for (const d of firstStarts) {
        const ack = ackOfDelivery.get(d);
        if (!ack) continue;
        pairs++;
        const before = lastSeq.get(ack.s) ?? 0;
        if (ack.seq <= before)
          appDisorder.push(`${target} ${ack.uri} session ${ack.s}: #${ack.seq} after #${before}`);
        lastSeq.set(ack.s, Math.max(before, ack.seq));
      }
    }
  }
  fig(
    `order: ${keys} (target, URI) keys, ${data.runs.length} run starts in publish order: ${disorder.length} out of order; ${pairs} first starts checked against the server's per-URI sequence per session: ${appDisorder.length} out of order`,
  );
  if (disorder.length > 0)
    fail(`${disorder.length} runs started out of publish order within their key: ${few(disorder)}`);
  if (appDisorder.length > 0)
    fail(
      `${appDisorder.length} updates ran before an older update of their URI and session: ${few(appDisorder)}`,
    );

  // 4/6. Dead letters, what is left, who holds leases.
  const reasons = new Map<string, number>();
  for (const l of data.deadLetters) reasons.set(l.reason, (reasons.get(l.reason) ?? 0) + 1);
  const routeOf = new Map(data.deliveries.map((d) => [d.id, d.route]));
  const wrongLetters = data.deadLetters.filter(
    (l) => l.reason !== 'outcome_unknown' || routeOf.get(l.deliveryId) !== 'unsafe',
  );
  if (wrongLetters.length > 0) fail(`${wrongLetters.length} unexpected dead letters: ${few(wrongLetters)}`);
  const statuses = new Map<string, number>();
  for (const d of data.deliveries) statuses.set(d.status, (statuses.get(d.status) ?? 0) + 1);
  const left = data.deliveries.filter((d) => PENDING.has(d.status));
  const leased = data.deliveries.filter((d) => d.leaseOwner !== null);
  const deadHeld = leased.filter((d) => !data.liveWorkers.has(d.leaseOwner as string));
  fig(
    `after healing: deliveries by status ${[...statuses].map(([s, n]) => `${s} ${n}`).join(', ')}; dead letters ${[...reasons].map(([r, n]) => `${r} ${n}`).join(', ') || 'none'}`,
  );
  fig(
    `left pending (queued/failed/claimed/running): ${left.length}; leases held: ${leased.length} (by dead workers: ${deadHeld.length})`,
  );
  if (left.length > 0)
    fail(
      `${left.length} deliveries still pending after healing: ${few(left.map((d) => `${d.id} ${d.status} ${d.leaseOwner}`))}`,
    );
  if (deadHeld.length > 0)
    fail(
      `${deadHeld.length} leases held by dead workers: ${few(deadHeld.map((d) => `${d.id} ${d.leaseOwner}`))}`,
    );
  else if (leased.length > 0)
    fail(
      `${leased.length} leases still held with nothing to do: ${few(leased.map((d) => `${d.id} ${d.leaseOwner}`))}`,
    );
  // Nothing a process did not handle.
  const unhandled = [...data.sources].flatMap(([name, entries]) =>
    entries
      .filter((e) => e.t === 'unhandled')
      .map((e) => `${name}: ${e.error} ${e.stack?.split('\n').slice(1, 5).join(' / ')}`),
  );
  fig(
    `unhandled rejections in the sources: ${unhandled.length}; workers that exited unasked: ${data.unaskedExits.length}`,
  );
  if (unhandled.length > 0)
    fail(
      `${unhandled.length} unhandled rejections in source processes (each would end a process with Node's default handler): ${few(unhandled, 3)}`,
    );
  if (data.unaskedExits.length > 0) fail(`workers exited without being killed: ${few(data.unaskedExits)}`);
  return { figures, violations };
}
