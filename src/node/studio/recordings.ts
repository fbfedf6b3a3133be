/**
 * The studio's Recordings: per client, start, stop and download a recording of its traffic in
 * the ax-mcp recording format. A client can be recorded when its transport (or one it wraps)
 * is an {@link AxStudioRecordingTransport} (recorded on demand; the CLI wraps its clients in
 * one) or an `AxMCPRecordingTransport` (the application records the whole session: it can be
 * downloaded here, not started or stopped).
 */

import type { AxMCPClient } from '../../index.js';
import { AxMCPRecordingTransport } from '../../testing/recording.js';
import type { AxMCPTransport } from '../../transport/types.js';
import { AxMCPWrappingTransport } from '../../transport/wrapping-transport.js';
import type { StudioReply } from './api.js';
import { AxStudioRecordingTransport } from './recording-transport.js';

type Recorder =
  | { kind: 'on-demand'; transport: AxStudioRecordingTransport }
  | { kind: 'application'; transport: AxMCPRecordingTransport };

/** Wrappers are followed this deep looking for a recorder. */
const MAX_WRAPPING = 8;

function recorderOf(transport: AxMCPTransport): Recorder | undefined {
  let current: AxMCPTransport | undefined = transport;
  for (let depth = 0; current && depth < MAX_WRAPPING; depth++) {
    if (current instanceof AxStudioRecordingTransport) return { kind: 'on-demand', transport: current };
    if (current instanceof AxMCPRecordingTransport) return { kind: 'application', transport: current };
    current = current instanceof AxMCPWrappingTransport ? current.inner : undefined;
  }
  return undefined;
}

const ok = (body: unknown): StudioReply => ({ status: 200, body });
const fail = (status: number, message: string): StudioReply => ({ status, body: { error: { message } } });

/** `GET recordings`, `POST recordings/:ns/start|stop`, `GET recordings/:ns/download`. */
export class StudioRecordings {
  readonly #recorders = new Map<string, Recorder | undefined>();

  constructor(clients: ReadonlyMap<string, AxMCPClient>) {
    for (const [namespace, client] of clients) this.#recorders.set(namespace, recorderOf(client.transport));
  }

  handle(method: string, path: readonly (string | undefined)[]): StudioReply | undefined {
    const [first, namespace, action, extra] = path;
    if (first !== 'recordings') return undefined;
    if (method === 'GET' && namespace === undefined) return this.#list();
    if (namespace === undefined || extra !== undefined) return undefined;
    if (!this.#recorders.has(namespace)) return fail(404, 'no such client');
    const recorder = this.#recorders.get(namespace);
    if (method === 'POST' && (action === 'start' || action === 'stop')) {
      if (!recorder)
        return fail(
          409,
          'this client cannot be recorded: its transport is neither an AxStudioRecordingTransport nor an AxMCPRecordingTransport',
        );
      if (recorder.kind === 'application')
        return fail(
          409,
          "this client's AxMCPRecordingTransport records its whole session: download it, it cannot be started or stopped here",
        );
      if (action === 'start') recorder.transport.startRecording();
      else recorder.transport.stopRecording();
      return ok({ recording: recorder.transport.isRecording, steps: recorder.transport.recordedSteps });
    }
    if (method === 'GET' && action === 'download') {
      const recording = recorder?.transport.recording();
      if (!recording)
        return fail(404, recorder ? 'nothing recorded yet: start a recording' : 'not recordable');
      const stamp = recording.recordedAt.replace(/[:.]/g, '-');
      return {
        status: 200,
        body: recording,
        headers: {
          'content-disposition': `attachment; filename="${namespace.replace(/[^\w.-]/g, '_')}-${stamp}.recording.json"`,
        },
      };
    }
    return undefined;
  }

  #list(): StudioReply {
    const recordings = [...this.#recorders].map(([namespace, recorder]) => {
      if (!recorder) return { namespace, recording: false, steps: 0, available: false };
      if (recorder.kind === 'application')
        return {
          namespace,
          recording: true,
          steps: recorder.transport.recording().steps.length,
          available: true,
          source: 'application',
        };
      return {
        namespace,
        recording: recorder.transport.isRecording,
        steps: recorder.transport.recordedSteps,
        available: true,
        source: 'studio',
        maxSteps: recorder.transport.maxSteps,
      };
    });
    return ok({ recordings });
  }
}
