import { describe, expect, it } from 'vitest';
import { ClientEvents } from './events.js';
import { subscribeTaskStatus } from './task-status.js';
import { type AxMCPTask, TaskWakers } from './tasks/task.js';

const where = { namespace: 'ns', endpoint: 'scripted://test' };
const task = (taskId: string, status: AxMCPTask['status']) =>
  ({ taskId, status, createdAt: '2026-01-01T00:00:00Z' }) as AxMCPTask;

describe('subscribeTaskStatus', () => {
  it('delivers only the filtered tasks, as copies, and watches the named ids until stopped', () => {
    const events = new ClientEvents(() => {});
    const wakers = new TaskWakers();
    const seen: AxMCPTask[] = [];
    const stop = subscribeTaskStatus(events, wakers, where, { taskId: ['t1'], status: 'completed' }, (t) =>
      seen.push(t),
    );
    expect(wakers.ids()).toEqual(['t1']);
    const sent = task('t1', 'completed');
    events.emit({ type: 'task_status', namespace: 'ns', task: task('t1', 'working') });
    events.emit({ type: 'task_status', namespace: 'ns', task: task('t2', 'completed') });
    events.emit({ type: 'task_status', namespace: 'ns', task: sent });
    expect(seen).toEqual([sent]);
    expect(seen[0]).not.toBe(sent);
    stop();
    stop();
    expect(wakers.ids()).toEqual([]);
    events.emit({ type: 'task_status', namespace: 'ns', task: sent });
    expect(seen).toHaveLength(1);
  });

  it('refuses a misspelt status and a missing listener with invalid_options', () => {
    const events = new ClientEvents(() => {});
    const wakers = new TaskWakers();
    expect(() =>
      subscribeTaskStatus(events, wakers, where, { status: 'complete' as 'completed' }, () => {}),
    ).toThrow(expect.objectContaining({ code: 'invalid_options' }));
    expect(() => subscribeTaskStatus(events, wakers, where, { taskId: 't1' }, undefined)).toThrow(
      expect.objectContaining({ code: 'invalid_options' }),
    );
    expect(wakers.ids()).toEqual([]);
  });
});
