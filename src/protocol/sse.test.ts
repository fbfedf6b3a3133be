import { describe, expect, it } from 'vitest';
import { AxMCPTransportError } from './errors.js';
import { readSSE } from './sse.js';

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
});
