/**
 * What the worker holding a delivery's lease writes to the SQLite event store: its
 * transitions, compare-and-set on the fencing token, and its continuations. Each runs inside
 * the store's transaction. Internal to `AxSQLiteEventStore`.
 */
import { AxEventError } from '../../events/errors.js';
import type { AxEventContinuation, AxEventTransition } from '../../events/store.js';
import { isTerminalRunStatus } from '../../events/store.js';
import { json, parse, type Row, type Statements, toDelivery } from './event-store-rows.js';

/** The delivery's row while `fencingToken` holds its lease. */
export function leasedRow(q: Statements, deliveryId: string, fencingToken: number): Row | undefined {
  return q("SELECT * FROM {deliveries} WHERE id = ? AND fencing = ? AND status IN ('claimed','running')").get(
    deliveryId,
    fencingToken,
  ) as Row | undefined;
}

/** A compare-and-set transition of a leased delivery, with what it brings (sinks, a dead letter, a resume). */
export function transitionLeased(q: Statements, t: AxEventTransition): boolean {
  const row = leasedRow(q, t.deliveryId, t.fencingToken);
  if (!row) return false;
  const d = toDelivery(row);
  const requeue = t.status === 'queued' || t.status === 'failed';
  const terminal = isTerminalRunStatus(t.status);
  const error = t.error !== undefined ? t.error : d.error;
  q(
    `UPDATE {deliveries} SET status = @status, target_id = @targetId, instance_key = @instanceKey,
       started_at = @startedAt, output = @output, error = @error, attempt = @attempt, due_at = @dueAt,
       lease_owner = @leaseOwner, lease_until = @leaseUntil, finished_at = @finishedAt
     WHERE id = @id`,
  ).run({
    id: d.id,
    status: t.status,
    targetId: t.targetId ?? d.targetId,
    instanceKey: t.instanceKey ?? d.instanceKey,
    startedAt: t.startedAt ?? d.startedAt,
    output: t.output !== undefined ? json(t.output) : json(d.output),
    error: json(error),
    attempt: t.attempt ?? d.attempt,
    dueAt: requeue ? (t.dueAt ?? t.now) : d.dueAt,
    leaseOwner: requeue || terminal ? null : d.leaseOwner,
    leaseUntil: requeue || terminal ? null : d.leaseUntil,
    finishedAt: terminal ? t.now : null,
  });
  if (t.status === 'dead_lettered' || t.status === 'cancelled') {
    q('DELETE FROM {continuations} WHERE delivery_id = ?').run(d.id);
  }
  for (const sink of t.sinks ?? []) {
    q(
      `INSERT INTO {deliveries} (id, run_id, kind, sink_id, event_key, route_id, action, target_id, instance_key,
         ordering_key, due_at, status, created_at)
       VALUES (?, ?, 'sink', ?, NULL, ?, ?, ?, ?, NULL, ?, 'queued', ?)`,
    ).run(
      sink.id,
      d.runId,
      sink.sinkId,
      d.routeId,
      d.action,
      t.targetId ?? d.targetId,
      d.instanceKey,
      t.now,
      t.now,
    );
  }
  if (t.consumeContinuationId) consume(q, t.consumeContinuationId, t.now);
  if (t.deadLetter) {
    q(
      `INSERT INTO {dead_letters} (id, kind, delivery_id, run_id, sink_id, reason, error, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      t.deadLetter.id,
      d.kind === 'sink' ? 'sink' : 'delivery',
      d.id,
      d.runId,
      d.sinkId,
      t.deadLetter.reason,
      json(error),
      t.now,
    );
  }
  return true;
}

function consume(q: Statements, continuationId: string, now: number): void {
  const c = q('SELECT delivery_id FROM {continuations} WHERE id = ?').get(continuationId) as Row | undefined;
  if (!c) return;
  q('DELETE FROM {continuations} WHERE id = ?').run(continuationId);
  q(
    `UPDATE {deliveries} SET status = 'succeeded', finished_at = ?
     WHERE id = ? AND status = 'waiting_event' AND NOT EXISTS (SELECT 1 FROM {continuations} WHERE delivery_id = ?)`,
  ).run(now, c.delivery_id, c.delivery_id);
}

/** Records the continuations of a leased delivery; a live one of another delivery is a conflict. */
export function putContinuations(
  q: Statements,
  input: { deliveryId: string; fencingToken: number; now: number; continuations: AxEventContinuation[] },
): boolean {
  const row = leasedRow(q, input.deliveryId, input.fencingToken);
  if (!row) return false;
  const ids = parse<string[]>(row.continuation_ids) ?? [];
  for (const c of input.continuations) {
    const existing = q('SELECT * FROM {continuations} WHERE scope = ? AND kind = ? AND value = ?').get(
      c.scope,
      c.kind,
      c.value,
    ) as Row | undefined;
    if (existing) {
      const live = existing.expires_at === null || (existing.expires_at as number) > input.now;
      if (live && existing.delivery_id !== input.deliveryId) {
        throw new AxEventError(
          'continuation_conflict',
          `A live continuation of kind "${c.kind}" already exists`,
        );
      }
      q('DELETE FROM {continuations} WHERE id = ?').run(existing.id);
    }
    q(
      `INSERT INTO {continuations} (id, scope, kind, value, target_id, instance_key, run_id, delivery_id,
         expires_at, metadata, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      c.id,
      c.scope,
      c.kind,
      c.value,
      c.targetId,
      c.instanceKey,
      c.runId,
      input.deliveryId,
      c.expiresAt,
      json(c.metadata),
      c.createdAt,
    );
    if (!ids.includes(c.id)) ids.push(c.id);
  }
  q('UPDATE {deliveries} SET continuation_ids = ? WHERE id = ?').run(JSON.stringify(ids), input.deliveryId);
  return true;
}
