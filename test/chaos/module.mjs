// @ts-check
/**
 * The worker module of the chaos campaign (`ax-mcp worker --module`): two routes on every
 * `mcp.resource.updated` (of both servers), each strict per instance (the event's partition key,
 * one per URI), and one on every `mcp.task.status` (strict per task).
 *
 * - `effect` (idempotent) records its effect with `INSERT … ON CONFLICT DO NOTHING` keyed by the
 *   delivery id (the idempotency key), and one row per run in `chaos_effect_runs`.
 * - `unsafe` (retry safety unknown: never replayed) records each start in `chaos_unsafe_starts`.
 * - `task` (idempotent) records the status it was woken for in `chaos_task_effects`, keyed by the
 *   delivery id, with the task's correlation (`mcp.task = <namespace>:<taskId>`) as the event has it.
 *
 * Both log every start (before anything else) to `runs-<pid>.jsonl` in `AX_CHAOS_DIR`, appended
 * synchronously, with `process.hrtime` times (one monotonic clock for all processes), so a run
 * whose database write was cut off is still on record.
 */
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';

const env = (/** @type {string} */ name) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
};
const { eventRoute, eventTarget } = await import(
  pathToFileURL(join(env('AX_CHAOS_BUILD'), 'events', 'index.js')).href
);
const schema = env('AX_CHAOS_SCHEMA');
const runs = join(env('AX_CHAOS_DIR'), `runs-${process.pid}.jsonl`);
const now = () => Number(process.hrtime.bigint()) / 1e6;
const sleep = (/** @type {number} */ ms) => new Promise((resolve) => setTimeout(resolve, ms));

const pool = new pg.Pool({ connectionString: env('AX_CHAOS_PG'), max: 3 });
pool.on('error', () => {});

/** @param {string} target @param {any} ctx */
function started(target, ctx) {
  const start = now();
  appendFileSync(
    runs,
    `${JSON.stringify({
      t: target,
      d: ctx.deliveryId,
      e: ctx.event.id,
      k: ctx.instanceKey,
      a: ctx.attempt,
      f: ctx.fencingToken,
      pid: process.pid,
      start,
    })}\n`,
  );
  return start;
}

const effect = eventTarget('effect')
  .retrySafety('idempotent')
  .invoke(async (/** @type {unknown} */ _input, /** @type {any} */ ctx) => {
    const start = started('effect', ctx);
    await sleep(Math.random() * 20);
    await pool.query(
      `INSERT INTO "${schema}".chaos_effects (delivery_id, event_id, uri, attempt, fencing, pid)
       VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (delivery_id) DO NOTHING`,
      [ctx.idempotencyKey, ctx.event.id, ctx.event.subject, ctx.attempt, ctx.fencingToken, process.pid],
    );
    await pool.query(
      `INSERT INTO "${schema}".chaos_effect_runs (delivery_id, attempt, fencing, pid, started, ended)
       VALUES ($1, $2, $3, $4, $5, $6)`,
      [ctx.deliveryId, ctx.attempt, ctx.fencingToken, process.pid, start, now()],
    );
    return { by: process.pid };
  })
  .build();

const unsafe = eventTarget('unsafe')
  .invoke(async (/** @type {unknown} */ _input, /** @type {any} */ ctx) => {
    started('unsafe', ctx);
    await pool.query(
      `INSERT INTO "${schema}".chaos_unsafe_starts (delivery_id, attempt, fencing, pid) VALUES ($1, $2, $3, $4)`,
      [ctx.deliveryId, ctx.attempt, ctx.fencingToken, process.pid],
    );
    await sleep(Math.random() * 20);
    return { by: process.pid };
  })
  .build();

const task = eventTarget('task')
  .retrySafety('idempotent')
  .invoke(async (/** @type {unknown} */ _input, /** @type {any} */ ctx) => {
    started('task', ctx);
    await sleep(Math.random() * 20);
    const correlation = ctx.ingress.correlation?.find((/** @type {any} */ c) => c.kind === 'mcp.task')?.value;
    await pool.query(
      `INSERT INTO "${schema}".chaos_task_effects (delivery_id, event_id, task, status, pid)
       VALUES ($1, $2, $3, $4, $5) ON CONFLICT (delivery_id) DO NOTHING`,
      [ctx.idempotencyKey, ctx.event.id, correlation ?? null, ctx.event.data?.status ?? null, process.pid],
    );
    return { by: process.pid };
  })
  .build();

export const routes = [
  eventRoute('effects').types('mcp.resource.updated').authenticated().wake(effect).build(),
  eventRoute('unsafe').types('mcp.resource.updated').authenticated().wake(unsafe).build(),
  eventRoute('tasks').types('mcp.task.status').authenticated().wake(task).build(),
];
/** Retries of what may be retried go on until the campaign heals; nothing dead-letters for attempts. */
export const options = { retry: { maxAttempts: 100, baseMs: 50, maxMs: 500 } };
export async function close() {
  await pool.end();
}
