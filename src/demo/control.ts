/**
 * The HTTP control endpoints of the demo server (`/control/*`), a thin mapping onto the
 * programmatic controls of {@link AxMCPDemoControls}. They are unauthenticated: anyone who can
 * reach the port can drive them, which is why the server binds loopback by default.
 */
import { AxMCPError } from '../protocol/errors.js';
import { jsonResponse } from './http.js';
import type { AxMCPDemoResource } from './inventory.js';
import type { AxMCPDemoState } from './server.js';
import type { AxMCPDemoTask } from './tasks.js';

/** A control request that cannot be carried out; `status` is the HTTP status the endpoint answers. */
export class AxMCPDemoError extends AxMCPError {
  /** 400 invalid input, 404 unknown resource or task, 409 nothing to act on / already terminal. */
  readonly status: 400 | 404 | 409;

  constructor(status: 400 | 404 | 409, message: string) {
    super('invalid_argument', message);
    this.status = status;
  }
}

/** The programmatic controls the HTTP endpoints mirror. */
export interface AxMCPDemoControls {
  /** `POST /control/resource?uri=`: `notifications/resources/updated` to listeners and subscribed sessions. */
  emitResourceUpdated(uri: string): Promise<{ uri: string; legacySessions: number }>;
  /** `POST /control/catalog/add?uri=&name=&mimeType=`: a new concrete resource + `resources/list_changed`. */
  addResource(input: {
    uri: string;
    name: string;
    mimeType?: string;
    description?: string;
  }): AxMCPDemoResource;
  /** `POST /control/catalog/remove?uri=`: removes a concrete resource + `resources/list_changed`. */
  removeResource(uri: string): boolean;
  /** `POST /control/task/complete?taskId=` (default: the latest task). */
  completeTask(taskId?: string): AxMCPDemoTask;
  /** `POST /control/task/fail?taskId=&message=` (default: the latest task). */
  failTask(taskId?: string, message?: string): AxMCPDemoTask;
  /** `POST /control/task/input?taskId=`: `input_required` with a form elicitation (default: the latest task). */
  requestTaskInput(taskId?: string): AxMCPDemoTask;
  /** `POST /control/drop`: ends every listen and GET stream without a final message. */
  dropStreams(): { modern: number; legacy: number };
  /** `GET /control/state`. */
  state(): AxMCPDemoState;
}

function param(url: URL, name: string): string | undefined {
  const value = url.searchParams.get(name);
  return value === null || value === '' ? undefined : value;
}

function required(url: URL, name: string): string {
  const value = param(url, name);
  if (value === undefined) throw new AxMCPDemoError(400, `Query parameter ${name} is required`);
  return value;
}

/** Answers one `/control/*` request. */
export async function handleControl(
  controls: AxMCPDemoControls,
  method: string,
  url: URL,
): Promise<Response> {
  const route = url.pathname.slice('/control/'.length);
  const post =
    (run: () => unknown | Promise<unknown>, status = 200) =>
    async () =>
      method === 'POST'
        ? jsonResponse(status, await run())
        : jsonResponse(405, { error: 'Method not allowed: use POST' });
  const routes: Record<string, () => Promise<Response>> = {
    state: async () =>
      method === 'GET' ? jsonResponse(200, controls.state()) : jsonResponse(405, { error: 'Use GET' }),
    resource: post(() => controls.emitResourceUpdated(required(url, 'uri'))),
    'catalog/add': post(() => {
      const mimeType = param(url, 'mimeType');
      const description = param(url, 'description');
      return {
        resource: controls.addResource({
          uri: required(url, 'uri'),
          name: required(url, 'name'),
          ...(mimeType === undefined ? {} : { mimeType }),
          ...(description === undefined ? {} : { description }),
        }),
      };
    }, 201),
    'catalog/remove': post(() => {
      const uri = required(url, 'uri');
      if (!controls.removeResource(uri)) throw new AxMCPDemoError(404, `No resource ${uri}`);
      return { removed: uri };
    }),
    'task/complete': post(() => ({ task: controls.completeTask(param(url, 'taskId')) })),
    'task/fail': post(() => ({ task: controls.failTask(param(url, 'taskId'), param(url, 'message')) })),
    'task/input': post(() => ({ task: controls.requestTaskInput(param(url, 'taskId')) })),
    drop: post(() => ({ dropped: controls.dropStreams() })),
  };
  const handler = Object.hasOwn(routes, route) ? routes[route] : undefined;
  if (handler === undefined)
    return jsonResponse(404, { error: `Unknown control endpoint /control/${route}` });
  try {
    return await handler();
  } catch (error) {
    if (error instanceof AxMCPDemoError) return jsonResponse(error.status, { error: error.message });
    if (error instanceof AxMCPError && error.code === 'invalid_argument') {
      return jsonResponse(400, { error: error.message });
    }
    throw error;
  }
}
