import { describe, expect, it } from 'vitest';
import { causeOf, duration, redactUrl, WorkerLog, type WorkerLogOptions } from './worker-log.js';

const TEXT_LINE = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (info|warn|error) /;

function logged(options: Partial<WorkerLogOptions> = {}) {
  const lines: { line: string; level: string }[] = [];
  let now = Date.parse('2026-12-01T23:40:12.345Z');
  const log = new WorkerLog({
    worker: 'w-1',
    write: (line, level) => lines.push({ line, level }),
    now: () => now,
    ...options,
  });
  return {
    log,
    lines,
    text: () => lines.map((l) => l.line),
    advance: (ms: number) => {
      now += ms;
    },
  };
}

/** What pg gives when the server ends a connection (pg_terminate_backend). */
function adminShutdown(): Error {
  return Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' });
}

/** The store's wrapper around a pg error, as lanes and deliveries report it. */
function storeError(cause: unknown): Error {
  return Object.assign(new Error(`PostgreSQL event store: ${(cause as Error).message}`, { cause }), {
    code: 'store_error',
  });
}

describe('WorkerLog', () => {
  it('writes text lines with an ISO-8601 time, a padded level and the worker', () => {
    const { log, text, lines } = logged();
    log.info('started: 4 lanes');
    log.warn('a warning');
    log.error('a failure\non two lines');
    expect(text()).toEqual([
      '2026-12-01T23:40:12.345Z info  worker w-1 started: 4 lanes',
      '2026-12-01T23:40:12.345Z warn  worker w-1 a warning',
      '2026-12-01T23:40:12.345Z error worker w-1 a failure on two lines',
    ]);
    for (const line of text()) expect(line).toMatch(TEXT_LINE);
    expect(lines.map((l) => l.level)).toEqual(['info', 'warn', 'error']);
  });

  it('writes one JSON object per line with time, level, msg, the worker and the fields', () => {
    const { log, text } = logged({ format: 'json' });
    log.info('started: 4 lanes', { lanes: 4, skipped: undefined, time: 'not this' });
    log.error('line\nbreak');
    const records = text().map((line) => JSON.parse(line));
    expect(records).toEqual([
      { time: '2026-12-01T23:40:12.345Z', level: 'info', msg: 'started: 4 lanes', worker: 'w-1', lanes: 4 },
      { time: '2026-12-01T23:40:12.345Z', level: 'error', msg: 'line\nbreak', worker: 'w-1' },
    ]);
    expect(text().every((line) => !line.includes('\n'))).toBe(true);
  });

  it('logs an incident once, counts its repeats, and says when and after how much it recovered', () => {
    const { log, text, advance } = logged();
    log.incident('database', adminShutdown(), { where: 'a store connection' });
    for (let i = 0; i < 11; i++) {
      advance(100);
      log.incident('database', storeError(adminShutdown()), { where: 'a lane' });
    }
    // Another way of losing the connection is the same incident.
    log.incident(
      'database',
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }),
    );
    log.incident('database', new Error('Connection terminated unexpectedly'));
    advance(2_000);
    log.recovered('database');
    log.recovered('database');
    expect(text()).toEqual([
      '2026-12-01T23:40:12.345Z error worker w-1 database unreachable: terminating connection due to administrator command (57P01 admin shutdown); seen by a store connection; repeats are counted until it recovers',
      '2026-12-01T23:40:15.445Z info  worker w-1 database recovered after 14 failures in 3.1 s (unreachable)',
    ]);
    // A new failure after the recovery (and its grace) is a new incident.
    advance(1_000);
    log.incident('database', adminShutdown());
    expect(text()).toHaveLength(3);
    expect(text()[2]).toContain('database unreachable');
  });

  it('gives another cause, or another key, its own line; recovering one key leaves the others open', () => {
    const { log, text } = logged({ format: 'json' });
    log.incident('database', storeError(adminShutdown()));
    const denied = storeError(Object.assign(new Error('permission denied for table x'), { code: '42501' }));
    log.incident('database', denied);
    log.incident('database', denied);
    log.incident('source mcp-1', new Error('stream closed'));
    log.recovered('database');
    const records = text().map((line) => JSON.parse(line));
    expect(records.map((r) => [r.level, r.incident, r.cause, r.failures])).toEqual([
      ['error', 'database', 'unreachable', undefined],
      ['error', 'database', '42501', undefined],
      ['error', 'source mcp-1', 'stream closed', undefined],
      ['info', 'database', 'unreachable', 1],
      ['info', 'database', '42501', 2],
    ]);
    expect(records[1].msg).toBe(
      'database error: permission denied for table x (42501); repeats are counted until it recovers',
    );
    log.incident('source mcp-1', new Error('stream closed'));
    expect(text()).toHaveLength(5);
  });

  it('takes failures just after a recovery for late notices of the incident, not a new one', () => {
    const { log, text, advance } = logged({ graceMs: 1000 });
    log.incident('database', adminShutdown());
    advance(16);
    log.recovered('database');
    // A connection cut with the others reports a millisecond later.
    advance(1);
    log.incident('database', adminShutdown());
    log.recovered('database');
    expect(text()).toHaveLength(2);
    advance(1000);
    log.incident('database', adminShutdown());
    expect(text()).toHaveLength(3);
    expect(text()[2]).toContain('error worker w-1 database unreachable');
  });

  it('forgets quiet incidents when many distinct ones piled up', () => {
    const { log, text, advance } = logged({ quietMs: 1000 });
    log.incident('authorize hook', new Error('bad event 0'));
    log.incident('authorize hook', new Error('bad event 0'));
    for (let i = 1; i < 300; i++) log.incident('authorize hook', new Error(`bad event ${i}`));
    advance(1000);
    log.incident('authorize hook', new Error('bad event 300'));
    log.incident('authorize hook', new Error('bad event 0'));
    expect(text()).toHaveLength(302);
    // Forgotten: logged afresh, not as the return of a counted one.
    expect(text()[301]).toMatch(/authorize hook error: bad event 0; repeats are counted/);
  });

  it('logs a failure again once its incident was quiet for quietMs, with how many were not printed', () => {
    const { log, text, advance } = logged({ quietMs: 1000 });
    log.incident('source s', new Error('boom'));
    log.incident('source s', new Error('boom'));
    log.incident('source s', new Error('boom'));
    advance(999);
    log.incident('source s', new Error('boom'));
    expect(text()).toHaveLength(1);
    advance(1000);
    log.incident('source s', new Error('boom'));
    expect(text()).toHaveLength(2);
    expect(text()[1]).toContain('source s error: boom; 3 earlier repeats were not printed');
  });

  it('never prints a secret or the credentials of a URL, in text or JSON', () => {
    for (const format of ['text', 'json'] as const) {
      const { log, text } = logged({ format, secrets: ['s3cr"et', undefined, ''] });
      log.info('store postgres://app:s3cr"et@db.internal:5432/events?sslpassword=other');
      log.error('failed', { detail: 'password s3cr"et was refused', url: 'https://u:p@example.com/' });
      log.incident('database', new Error('connect to postgresql://app:s3cr"et@db/x failed'));
      const all = text().join('\n');
      expect(all).not.toContain('s3cr');
      expect(all).not.toContain('other');
      expect(all).not.toContain('u:p@');
      expect(all).toContain('postgres://…@db.internal:5432/events');
    }
  });
});

describe('causeOf, redactUrl, duration', () => {
  it('sees every way of losing the database as "unreachable", down the cause chain', () => {
    const refused = Object.assign(
      new AggregateError(
        [Object.assign(new Error('connect ECONNREFUSED ::1:5432'), { code: 'ECONNREFUSED' })],
        '',
      ),
      {
        code: 'ECONNREFUSED',
      },
    );
    expect(causeOf(storeError(refused))).toEqual({
      id: 'unreachable',
      unreachable: true,
      text: 'connect ECONNREFUSED ::1:5432',
    });
    expect(causeOf(new Error('The LISTEN connection ended')).unreachable).toBe(true);
    expect(causeOf(Object.assign(new Error('x'), { code: '08006' })).unreachable).toBe(true);
    expect(causeOf(Object.assign(new Error('x'), { code: 'constructor' })).unreachable).toBe(false);
    // Two failures the store wraps alike (store_error) are two causes when their messages differ.
    expect(causeOf(storeError(new Error('disk full'))).id).toBe('store_error: disk full');
    expect(causeOf(storeError(new Error('out of memory'))).id).toBe('store_error: out of memory');
    expect(causeOf(Object.assign(new Error('duplicate key'), { code: '23505' }))).toEqual({
      id: '23505',
      unreachable: false,
      text: 'duplicate key (23505)',
    });
  });

  it('prints a connection string without user, password or password parameters', () => {
    expect(redactUrl('postgres://app:pw@db.internal:5432/events')).toBe(
      'postgres://…@db.internal:5432/events',
    );
    expect(redactUrl('postgres://db/x?application_name=w&password=pw')).toBe(
      'postgres://db/x?application_name=w&password=…',
    );
    expect(redactUrl('postgres://[::1')).toBe('(connection string)');
  });

  it('says how long in words', () => {
    expect([duration(212), duration(3_400), duration(303_000), duration(7_500_000)]).toEqual([
      '212 ms',
      '3.4 s',
      '5 min 3 s',
      '2 h 5 min',
    ]);
  });
});
