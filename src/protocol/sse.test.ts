import { describe, expect, it } from 'vitest';
import { AxMCPTransportError } from './errors.js';
import { readSSE, SSEDecoder } from './sse.js';

function streamOf(chunks: string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(encoder.encode(chunk));
      controller.close();
    },
  });
}

describe('readSSE', () => {
  it('parses events split across chunks, skipping comments, and reports ids and retry', async () => {
    const ids: string[] = [];
    let retry: number | undefined;
    const events = [];
    for await (const event of readSSE(
      streamOf([
        ': keep-alive\n\nid: 1\nretry: 500\ndata: {"a"',
        ':1}\n\n',
        'id: 2\nevent: message\ndata: x\n\n',
      ]),
      {
        maxEventBytes: 1000,
        onId: (id) => ids.push(id),
        onRetry: (ms) => {
          retry = ms;
        },
      },
    )) {
      events.push(event);
    }
    expect(events.map((event) => event.data)).toEqual(['{"a":1}', 'x']);
    expect(ids).toEqual(['1', '2']);
    expect(retry).toBe(500);
  });

  it('bounds one event, not the stream', async () => {
    const many = Array.from({ length: 2000 }, (_, i) => `data: ${i}\n\n`);
    let count = 0;
    for await (const _ of readSSE(streamOf(many), { maxEventBytes: 64 })) count++;
    expect(count).toBe(2000);

    const huge = `data: ${'x'.repeat(5000)}\n\n`;
    await expect(async () => {
      for await (const _ of readSSE(streamOf([huge.slice(0, 2500), huge.slice(2500)]), {
        maxEventBytes: 1000,
      })) {
        // drain
      }
    }).rejects.toThrow(AxMCPTransportError);
  });

  it('hands on what a chunk completed before an oversized event, then fails', async () => {
    const ids: string[] = [];
    const data: string[] = [];
    const chunk = `id: 1\ndata: small\n\nid: 2\ndata: ${'x'.repeat(200)}\n\nid: 3\ndata: later\n\n`;
    await expect(async () => {
      for await (const event of readSSE(streamOf([chunk]), {
        maxEventBytes: 64,
        onId: (id) => ids.push(id),
      })) {
        data.push(event.data);
      }
    }).rejects.toThrow(expect.objectContaining({ code: 'message_too_large' }));
    expect(data).toEqual(['small']);
    // The oversized event's id counts as seen (a resume must not fetch it again); the next does not.
    expect(ids).toEqual(['1', '2']);
  });
});

describe('SSEDecoder', () => {
  it('hands events, ids and retries over in stream order, priming events included', () => {
    const seen: string[] = [];
    const decoder = new SSEDecoder(1000, {
      onEvent: (event) => seen.push(`event ${event.id ?? '-'} ${event.data}`),
      onId: (id) => seen.push(`id ${id}`),
      onRetry: (ms) => seen.push(`retry ${ms}`),
    });
    const bytes = new TextEncoder().encode('id: p\ndata:\n\nretry: 20\nid: 1\ndata: a\n\nid:\ndata: b\n\n');
    // One byte at a time: every line is split somewhere.
    for (let i = 0; i < bytes.length; i++) decoder.push(bytes.subarray(i, i + 1));
    decoder.end();
    expect(seen).toEqual(['id p', 'event p ', 'retry 20', 'id 1', 'event 1 a', 'id ', 'event  b']);
  });

  it('reports the id of an event block that carries only an id (a resume point without data)', () => {
    const seen: string[] = [];
    const decoder = new SSEDecoder(1000, {
      onEvent: (event) => seen.push(`event ${event.data}`),
      onId: (id) => seen.push(`id ${id}`),
    });
    decoder.push(new TextEncoder().encode('id: only\n\ndata: x\n\n'));
    expect(seen).toEqual(['id only', 'event x']);
  });

  it('does not count keep-alive comments toward the cap of one event', () => {
    let events = 0;
    const decoder = new SSEDecoder(64, { onEvent: () => events++ });
    const encoder = new TextEncoder();
    decoder.push(encoder.encode('data: one\n\n'));
    for (let i = 0; i < 100; i++) decoder.push(encoder.encode(`: ${'k'.repeat(50)}\n`));
    decoder.push(encoder.encode('data: two\n\n'));
    expect(events).toBe(2);
  });

  it('refuses an event that outgrows its cap while it is still arriving, with a typed error', () => {
    const decoder = new SSEDecoder(64, { onEvent: () => {} });
    const encoder = new TextEncoder();
    decoder.push(encoder.encode('data: '));
    // 'data: ' and 57 characters: 63 of 64.
    for (let i = 0; i < 3; i++) decoder.push(encoder.encode('x'.repeat(19)));
    expect(() => decoder.push(encoder.encode('x'.repeat(20)))).toThrow(
      expect.objectContaining({ code: 'message_too_large' }),
    );
  });
});
