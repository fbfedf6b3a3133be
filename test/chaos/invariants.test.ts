import { describe, expect, it } from 'vitest';
import { type CampaignData, checkInvariants } from './invariants.js';

/** A campaign that kept every promise: one terminal task status, routed once, on a live session. */
function clean(): CampaignData {
  return {
    acks: [
      {
        kind: 'task',
        s: 'S1',
        uri: '',
        seq: 1,
        eid: '1',
        task: 'T1',
        status: 'completed',
        updated: 'u1',
        pid: 1,
        at: 10,
      },
    ],
    serverPids: [1],
    sources: new Map([['l0', [{ t: 'started', s: 'S1', at: 0 }]]]),
    finalSessions: new Set(['S1']),
    deliveries: [
      {
        id: 'd1',
        seq: 1,
        route: 'tasks',
        instanceKey: 'chaos:T1',
        status: 'succeeded',
        attempt: 1,
        leaseOwner: null,
        eventId: 'task:T1:completed:u1',
        subject: 'chaos:T1',
      },
    ],
    effects: [],
    taskEffects: [
      { deliveryId: 'd1', eventId: 'task:T1:completed:u1', task: 'chaos:T1', status: 'completed' },
    ],
    modernAcks: [],
    modernSends: [],
    modernListens: [],
    modernPids: [2],
    modernSource: 'm0',
    tasksCreated: [{ s: 'S1', task: 'T1', pid: 1 }],
    unsafeStarts: [],
    runs: [{ t: 'task', d: 'd1', e: 'task:T1:completed:u1', k: 'chaos:T1', a: 1, f: 1, pid: 9, start: 20 }],
    deadLetters: [],
    liveWorkers: new Set(),
    unaskedExits: [],
  };
}

/** A 2026-07-28 update written to listen stream L1, with its delivery when `stored`. */
function listenUpdate(data: CampaignData, seq: number, listen: string, stored: boolean): void {
  const eid = `inventory://a|${seq}|${listen}`;
  data.modernAcks.push({ kind: 'listen', s: 'stream', uri: 'inventory://a', seq, eid, pid: 2, at: 30 + seq });
  if (stored)
    data.deliveries.push({
      id: `m${seq}${listen}`,
      seq: 100 + seq,
      route: 'other',
      instanceKey: 'inventory://a',
      status: 'succeeded',
      attempt: 1,
      leaseOwner: null,
      eventId: `sse:stream:${eid}`,
      subject: 'inventory://a',
    });
}

describe('chaos invariants 7 and 8 fail on what breaks them', () => {
  it('a campaign that kept its promises has no violation', () => {
    const data = clean();
    listenUpdate(data, 1, 'L1', true);
    expect(checkInvariants(data).violations).toEqual([]);
  });

  it('7: a terminal task status whose effect is missing, or records another status, is a violation', () => {
    const missing = clean();
    missing.taskEffects = [];
    expect(checkInvariants(missing).violations.join('\n')).toContain('task-status deliveries');
    const wrong = clean();
    wrong.taskEffects = [
      { deliveryId: 'd1', eventId: 'task:T1:completed:u1', task: 'chaos:T1', status: 'failed' },
    ];
    expect(checkInvariants(wrong).violations.join('\n')).toContain('task-status deliveries');
    const unrouted = clean();
    unrouted.deliveries = [];
    unrouted.taskEffects = [];
    unrouted.runs = [];
    expect(checkInvariants(unrouted).violations.join('\n')).toMatch(/never stored|no delivery/);
  });

  it('8: an update written to a listen stream and never stored is a violation unless a resumed: false followed', () => {
    const silent = clean();
    listenUpdate(silent, 1, 'L1', false);
    expect(checkInvariants(silent).violations.join('\n')).toContain('listen stream were never stored');
    const signalled = clean();
    listenUpdate(signalled, 1, 'L1', false);
    signalled.sources.set('m0', [{ t: 'life', state: 'reconnected', resumed: false, at: 99 }]);
    expect(checkInvariants(signalled).violations).toEqual([]);
  });

  it("2: a stored frame with no ack is accepted only as the dying server's publish to that stream", () => {
    const stored = (data: CampaignData) =>
      data.deliveries.push({
        id: 'mx',
        seq: 200,
        route: 'other',
        instanceKey: 'inventory://a',
        status: 'succeeded',
        attempt: 1,
        leaseOwner: null,
        eventId: 'sse:stream:inventory://a|7|5',
        subject: 'inventory://a',
      });
    const died = clean();
    died.modernPids = [2, 3];
    died.modernSends = [{ uri: 'inventory://a', seq: 7, pid: 2 }];
    died.modernListens = [{ sid: 5, pid: 2 }];
    stored(died);
    const verdict = checkInvariants(died);
    expect(verdict.violations).toEqual([]);
    expect(verdict.figures.join('\n')).toContain('died before logging the write: 1');
    // Never published, published by the process still alive, or to another process's stream.
    for (const change of [
      (d: CampaignData) => {
        d.modernSends = [];
      },
      (d: CampaignData) => {
        d.modernPids = [3, 2];
      },
      (d: CampaignData) => {
        d.modernListens = [{ sid: 5, pid: 3 }];
      },
    ]) {
      const data = clean();
      data.modernPids = [2, 3];
      data.modernSends = [{ uri: 'inventory://a', seq: 7, pid: 2 }];
      data.modernListens = [{ sid: 5, pid: 2 }];
      change(data);
      stored(data);
      expect(checkInvariants(data).violations.join('\n')).toContain('no such acknowledged send');
    }
  });

  it('8: an update that reached the application twice (two listen streams in an overlap) is a violation', () => {
    const twice = clean();
    listenUpdate(twice, 1, 'L1', true);
    listenUpdate(twice, 1, 'L2', true);
    expect(checkInvariants(twice).violations.join('\n')).toContain('more than once');
  });
});
