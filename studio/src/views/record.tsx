/**
 * Record: per client, start and stop recording its MCP session, its step count, and the
 * recording downloaded as the file `ax-mcp replay` and the replay transport read. And any
 * recording file opened here, offline: checked to be one (`format: 'ax-mcp-recording'`,
 * version 1), then stepped through — each request, response, notification or failure raw.
 * Nothing of an opened file leaves the page.
 */

import type { VNode } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { parseAxMCPRecording } from '../../../src/testing/recording-format.js';
import { get, missingRoute, post, seg } from '../api.js';
import type { ViewProps } from '../main.js';
import { messageOf, NotOffered, Status, VirtualList } from '../ui.js';

interface RecordingState {
  namespace: string;
  recording: boolean;
  steps: number;
  /** False when the client's transport records nothing (no recording transport in it). */
  available?: boolean;
  /** `studio`: recorded on demand here; `application`: the application records the whole session. */
  source?: 'studio' | 'application';
  maxSteps?: number;
}

/** The parts of `AxMCPRecording` the page shows (src/testing/recording-format.ts). */
export interface Recording {
  format: 'ax-mcp-recording';
  version: 1;
  endpoint?: string;
  transportKind?: string;
  era?: string;
  protocolVersion?: string;
  recordedAt?: string;
  steps: Step[];
  result?: unknown;
  /** Added by a recording made on demand in the studio. */
  studio?: { startedAt?: string; stoppedAt?: string; handshakeSteps?: number; droppedSteps?: number };
}

interface Step {
  index: number;
  atMs: number;
  direction: 'send' | 'receive';
  type: 'request' | 'notification' | 'response' | 'failure';
  message?: { id?: string | number; method?: string; error?: { message?: string } } & Record<string, unknown>;
  requestId?: string | number;
  failure?: { name?: string; code?: string; message?: string; status?: number };
  via?: string;
  eventId?: string;
  probe?: boolean;
}

/** The recording in `text`, or why it is not one (the library's own check of the format). */
export function readRecording(text: string): { recording: Recording } | { problem: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { problem: `This file is not an ax-mcp recording: it is not JSON (${messageOf(error)}).` };
  }
  try {
    parseAxMCPRecording(value);
  } catch (error) {
    const why = messageOf(error).replace(/^Not an ax-mcp recording: /, '');
    return { problem: `This file is not an ax-mcp recording: ${why}.` };
  }
  return { recording: value as Recording };
}

export function RecordView(_props: ViewProps): VNode {
  return (
    <>
      <h1>Record</h1>
      <Recorders />
      <h2>Open a recording</h2>
      <OpenRecording />
    </>
  );
}

function Recorders(): VNode {
  const [states, setStates] = useState<RecordingState[] | 'missing'>();
  const [error, setError] = useState<string>();
  const load = (): void => {
    get<{ recordings: RecordingState[] }>('recordings').then(
      (body) => setStates(body.recordings),
      (failure: unknown) => (missingRoute(failure) ? setStates('missing') : setError(messageOf(failure))),
    );
  };
  useEffect(load, []);
  const recording = Array.isArray(states) && states.some((s) => s.recording && s.source !== 'application');
  // Steps grow while a client records: look again every second, only then.
  useEffect(() => {
    if (!recording) return;
    const timer = setInterval(load, 1000);
    return () => clearInterval(timer);
  }, [recording]);
  const act = async (namespace: string, action: 'start' | 'stop'): Promise<void> => {
    try {
      await post(`recordings/${seg(namespace)}/${action}`);
      load();
    } catch (failure) {
      setError(messageOf(failure));
    }
  };
  if (states === 'missing') return <NotOffered what="recording" />;
  if (!states) return <Status loading error={error} />;
  return (
    <>
      <Status error={error} />
      {states.length === 0 ? <p class="dim">No clients were given to the studio.</p> : null}
      <table data-table="recordings">
        <thead>
          <tr>
            <th>client</th>
            <th>recording</th>
            <th>steps</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {states.map((state) => (
            <tr
              key={state.namespace}
              data-recorder={state.namespace}
              data-recording={String(state.recording)}
            >
              <td>
                <code>{state.namespace}</code>
              </td>
              <td class={state.recording ? 'ok' : 'dim'}>
                {state.available === false
                  ? 'cannot be recorded'
                  : state.source === 'application'
                    ? '● recorded by the application'
                    : state.recording
                      ? '● recording'
                      : 'stopped'}
              </td>
              <td data-steps={state.steps}>
                {state.steps}
                {state.maxSteps ? <span class="dim">{` of at most ${state.maxSteps}`}</span> : null}
              </td>
              <td>
                {state.available === false ? (
                  <span class="dim">
                    Wrap its transport in an AxStudioRecordingTransport to record it here.
                  </span>
                ) : state.source === 'application' ? null : state.recording ? (
                  <button
                    type="button"
                    data-record-action="stop"
                    onClick={() => void act(state.namespace, 'stop')}
                  >
                    Stop
                  </button>
                ) : (
                  <button
                    type="button"
                    class="primary"
                    data-record-action="start"
                    onClick={() => void act(state.namespace, 'start')}
                  >
                    Start
                  </button>
                )}{' '}
                {state.steps > 0 ? (
                  <a
                    href={`/api/recordings/${seg(state.namespace)}/download`}
                    download={`${state.namespace}.recording.json`}
                    data-download={state.namespace}
                  >
                    Download
                  </a>
                ) : null}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}

function OpenRecording(): VNode {
  const [opened, setOpened] = useState<
    { name: string; recording: Recording } | { name: string; problem: string }
  >();
  const open = async (file: File): Promise<void> => {
    const read = readRecording(await file.text());
    setOpened({ name: file.name, ...read });
  };
  return (
    <>
      <p class="dim">
        A recording file (from Download above, `ax-mcp record`, or recordAxMCPSession) is read here, in the
        page.
      </p>
      <input
        type="file"
        accept=".json,application/json"
        data-open-recording="true"
        onChange={(event) => {
          const file = (event.currentTarget as HTMLInputElement).files?.[0];
          if (file) void open(file);
        }}
      />
      {opened && 'problem' in opened ? (
        <p class="error" data-recording-problem="true">
          {`${opened.name}: ${opened.problem}`}
        </p>
      ) : null}
      {opened && 'recording' in opened ? (
        <Stepper key={opened.name} name={opened.name} recording={opened.recording} />
      ) : null}
    </>
  );
}

const ROW = 26;

function stepLabel(step: Step): string {
  const message = step.message;
  if (step.type === 'failure') return `failure ${step.failure?.code ?? ''}`;
  if (step.type === 'response') return `response ${message?.id ?? ''}${message?.error ? ' (error)' : ''}`;
  return `${step.type} ${message?.method ?? ''}`;
}

function Stepper(props: { name: string; recording: Recording }): VNode {
  const { recording } = props;
  const steps = recording.steps;
  const [at, setAt] = useState(0);
  const step = steps[at];
  const move = (to: number): void => setAt(Math.max(0, Math.min(steps.length - 1, to)));
  // A response names the request it answers by id: find it.
  const answers =
    step?.type === 'response' && step.message?.id !== undefined
      ? steps.find((s) => s.type === 'request' && s.index < step.index && s.message?.id === step.message?.id)
      : undefined;
  return (
    <section class="card" data-opened-recording={props.name} data-step-count={steps.length}>
      <h3>{props.name}</h3>
      <dl class="facts">
        <dt>endpoint</dt>
        <dd>{recording.endpoint ?? '—'}</dd>
        <dt>transport</dt>
        <dd>{recording.transportKind ?? '—'}</dd>
        <dt>era</dt>
        <dd>{`${recording.era ?? '?'} ${recording.protocolVersion ?? ''}`}</dd>
        <dt>recorded</dt>
        <dd>{recording.recordedAt ?? '—'}</dd>
        <dt>steps</dt>
        <dd>
          {steps.length}
          {recording.studio?.handshakeSteps ? (
            <span class="dim">{` (the first ${recording.studio.handshakeSteps}: the handshake)`}</span>
          ) : null}
          {recording.studio?.droppedSteps ? (
            <span class="error">{` — ${recording.studio.droppedSteps} more were not kept`}</span>
          ) : null}
        </dd>
      </dl>
      {steps.length === 0 ? (
        <p class="dim">This recording has no steps.</p>
      ) : (
        <div class="split">
          <VirtualList
            label="steps"
            count={steps.length}
            rowHeight={ROW}
            height={Math.min(steps.length * ROW + 2, 420)}
            row={(i) => {
              const s = steps[i] as Step;
              return (
                <button
                  type="button"
                  class={`step-row${i === at ? ' active' : ''} dir-${s.direction}`}
                  data-step-row={i}
                  onClick={() => setAt(i)}
                >
                  <span class="dim">{`#${i}`}</span>
                  <span>{s.direction === 'send' ? '→' : '←'}</span>
                  <span>{stepLabel(s)}</span>
                  <span class="dim">{`${s.atMs} ms`}</span>
                </button>
              );
            }}
          />
          {step ? (
            <div
              class="detail"
              data-step={at}
              data-step-type={step.type}
              data-step-direction={step.direction}
            >
              <div class="row">
                <button
                  type="button"
                  data-step-nav="previous"
                  disabled={at === 0}
                  onClick={() => move(at - 1)}
                >
                  ‹ previous
                </button>{' '}
                <span data-step-position="true">{`step ${at + 1} of ${steps.length}`}</span>{' '}
                <button
                  type="button"
                  data-step-nav="next"
                  disabled={at === steps.length - 1}
                  onClick={() => move(at + 1)}
                >
                  next ›
                </button>
              </div>
              <h3>
                {step.direction === 'send' ? 'The client sent' : 'The client received'} a {step.type}{' '}
                <span class="dim">{`at ${step.atMs} ms`}</span>
              </h3>
              {answers ? (
                <p class="dim">
                  answers{' '}
                  <button type="button" class="link" onClick={() => setAt(answers.index)}>
                    {`#${answers.index} ${answers.message?.method ?? ''}`}
                  </button>
                </p>
              ) : null}
              {step.via ? (
                <p class="dim">{`via the ${step.via}${step.eventId ? `, event id ${step.eventId}` : ''}`}</p>
              ) : null}
              {step.probe ? <p class="dim">An era probe before the handshake (replay skips it).</p> : null}
              {step.failure ? (
                <p class="error">{`${step.failure.code ?? step.failure.name ?? 'failure'}: ${step.failure.message ?? ''}`}</p>
              ) : null}
              <pre data-step-message="true">
                {JSON.stringify(step.message ?? step.failure ?? step, null, 2)}
              </pre>
            </div>
          ) : null}
        </div>
      )}
    </section>
  );
}
