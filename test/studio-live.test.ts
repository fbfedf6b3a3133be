/**
 * The studio page's live state (studio/src/api.ts), without a browser: a view draws, then
 * subscribes in an effect, and the frame that announces news can land in between. The browser
 * test met this as an events view stuck at "0 shown" with the event in the page's buffer.
 */

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LiveState } from '../studio/src/api.js';

let frames: (() => void)[] = [];
const drawFrame = (): void => {
  const due = frames;
  frames = [];
  for (const callback of due) callback();
};

beforeEach(() => {
  frames = [];
  globalThis.requestAnimationFrame = (callback: FrameRequestCallback): number => {
    frames.push(() => callback(0));
    return frames.length;
  };
});

afterEach(() => {
  Reflect.deleteProperty(globalThis, 'requestAnimationFrame');
});

const event = (seq: number) => ({
  kind: 'event' as const,
  record: {
    seq,
    at: 0,
    event: { id: `e${seq}`, type: 'app.test' },
    identity: {},
    trust: 'untrusted',
    correlation: [],
    decisions: null,
  },
});

describe('LiveState.listen', () => {
  it('runs a listener at once when news was drawn between the caller drawing and subscribing', () => {
    const live = new LiveState();
    const drawnAt = live.version;
    live.take([event(1)]);
    drawFrame();
    expect(live.version).not.toBe(drawnAt);
    let calls = 0;
    const stop = live.listen(() => calls++, drawnAt);
    expect(calls).toBe(1);
    stop();
  });

  it('waits for the next frame with news when nothing came since the caller drew', () => {
    const live = new LiveState();
    live.take([event(1)]);
    drawFrame();
    let calls = 0;
    const stop = live.listen(() => calls++, live.version);
    expect(calls).toBe(0);
    live.take([event(2)]);
    live.take([event(3)]);
    expect(calls).toBe(0);
    drawFrame();
    expect(calls).toBe(1);
    expect(live.events.map((r) => r.seq)).toEqual([3, 2, 1]);
    stop();
    live.take([event(4)]);
    drawFrame();
    expect(calls).toBe(1);
  });
});
