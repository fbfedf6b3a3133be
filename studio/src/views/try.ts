/**
 * Try: call a tool through the client, so its `authorizeToolCall` still decides. The form
 * comes from the tool's `inputSchema` (strings, numbers, integers, booleans, enums; anything
 * else as JSON), a destructive tool asks once more, and the result is shown rendered (text,
 * images, audio, links, embedded resources, structured content as a tree) and raw.
 * `#/try/<namespace>/<tool>`.
 */

import { get, post, type StudioError, seg } from '../api.js';
import { confirmButton, h, jsonTree, replace } from '../dom.js';
import type { ViewContext } from '../main.js';

interface Tool {
  name: string;
  title?: string;
  description?: string;
  inputSchema?: { properties?: Record<string, Schema>; required?: string[] };
  annotations?: { destructiveHint?: boolean; readOnlyHint?: boolean };
}

interface Schema {
  type?: string | string[];
  enum?: unknown[];
  description?: string;
  default?: unknown;
}

type Block = Record<string, unknown> & { type?: string };
type CallReply =
  | { ok: true; result: Record<string, unknown>; ms: number }
  | { ok: false; error: StudioError; ms: number };

const str = (value: unknown): string => (typeof value === 'string' ? value : '');

export function tryView(root: HTMLElement, { params }: ViewContext): undefined {
  const [namespace, toolName] = params;
  if (namespace === undefined || toolName === undefined) {
    chooser(root, namespace);
    return undefined;
  }
  const body = h('div', null, h('p', { class: 'dim' }, 'Loading…'));
  replace(
    root,
    h('h1', null, 'Try ', h('code', null, toolName), h('span', { class: 'dim' }, ` on ${namespace}`)),
    body,
  );
  get<{ tool: Tool }>(`servers/${seg(namespace)}/tool?name=${seg(toolName)}`).then(
    ({ tool }) => replace(body, toolForm(namespace, tool)),
    (error: Error) => replace(body, h('p', { class: 'error' }, error.message)),
  );
  return undefined;
}

/** No tool chosen: a search over a client's tools. */
function chooser(root: HTMLElement, namespace: string | undefined): void {
  const results = h('div', { class: 'items' });
  const pick = h('select', { 'data-client': 'true' });
  const search = h('input', { type: 'search', placeholder: 'tool name', oninput: () => void find() });
  replace(
    root,
    h('h1', null, 'Try a tool'),
    h('p', { class: 'dim' }, 'Calls go through the client: its authorizeToolCall decides.'),
    h('div', { class: 'row' }, pick, ' ', search),
    results,
  );
  const find = async (): Promise<void> => {
    if (!pick.value) return;
    const q = new URLSearchParams({ q: search.value, limit: '50' });
    const page = await get<{ total: number; items: Tool[] }>(`servers/${seg(pick.value)}/tools?${q}`);
    replace(
      results,
      page.items.map((tool) =>
        h(
          'div',
          { class: 'item' },
          h('a', { href: `#/try/${seg(pick.value)}/${seg(tool.name)}` }, tool.name),
          ' ',
          h('span', { class: 'dim' }, str(tool.description)),
        ),
      ),
      page.total > page.items.length
        ? h('p', { class: 'dim' }, `${page.total - page.items.length} more: filter`)
        : null,
    );
  };
  pick.addEventListener('change', () => void find());
  get<{ servers: { namespace: string }[] }>('servers').then(({ servers }) => {
    replace(
      pick,
      servers.map((s) =>
        h('option', { value: s.namespace, selected: s.namespace === namespace }, s.namespace),
      ),
    );
    if (namespace) pick.value = namespace;
    void find();
  });
}

function typeOf(schema: Schema): string {
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
  return type ?? 'json';
}

function toolForm(namespace: string, tool: Tool): HTMLElement {
  const properties = Object.entries(tool.inputSchema?.properties ?? {});
  const required = new Set(tool.inputSchema?.required ?? []);
  const readers: [string, () => unknown][] = [];
  const fields = properties.map(([name, schema]) => {
    const type = Array.isArray(schema.enum) ? 'enum' : typeOf(schema);
    let input: HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement;
    if (type === 'enum') {
      input = h(
        'select',
        { name },
        required.has(name) ? null : h('option', { value: '' }, '—'),
        (schema.enum ?? []).map((value) => h('option', { value: JSON.stringify(value) }, String(value))),
      );
      readers.push([name, () => (input.value === '' ? undefined : JSON.parse(input.value))]);
    } else if (type === 'boolean') {
      input = h('input', { type: 'checkbox', name, checked: schema.default === true });
      readers.push([name, () => (input as HTMLInputElement).checked]);
    } else if (type === 'number' || type === 'integer') {
      input = h('input', { type: 'number', name, step: type === 'integer' ? '1' : 'any' });
      if (typeof schema.default === 'number') input.value = String(schema.default);
      readers.push([name, () => (input.value === '' ? undefined : Number(input.value))]);
    } else if (type === 'string') {
      input = h('input', {
        type: 'text',
        name,
        value: typeof schema.default === 'string' ? schema.default : '',
      });
      readers.push([name, () => (input.value === '' && !required.has(name) ? undefined : input.value)]);
    } else {
      input = h('textarea', { name, rows: 3, placeholder: `${type} as JSON` });
      readers.push([name, () => (input.value.trim() === '' ? undefined : JSON.parse(input.value))]);
    }
    return h(
      'label',
      { class: 'field' },
      h(
        'span',
        { class: 'fname' },
        name,
        required.has(name) ? ' *' : '',
        h('span', { class: 'dim' }, ` ${type}`),
      ),
      input,
      schema.description ? h('span', { class: 'dim' }, schema.description) : null,
    );
  });
  const result = h('div', { class: 'result', 'data-result': 'none' });
  const run = async (): Promise<void> => {
    const args: Record<string, unknown> = {};
    try {
      for (const [name, read] of readers) {
        const value = read();
        if (value !== undefined) args[name] = value;
      }
    } catch (error) {
      replace(result, h('p', { class: 'error' }, `Not valid JSON: ${(error as Error).message}`));
      return;
    }
    result.setAttribute('data-result', 'pending');
    replace(result, h('p', { class: 'dim' }, 'Calling…'));
    const reply = await post<CallReply>(`servers/${seg(namespace)}/call`, {
      tool: tool.name,
      arguments: args,
    });
    showResult(result, reply);
  };
  const destructive = tool.annotations?.destructiveHint === true;
  const submit = destructive
    ? confirmButton('Call', 'This tool is marked destructive. Call it?', run)
    : h(
        'button',
        { type: 'button', class: 'primary', 'data-action': 'Call', onclick: () => void run() },
        'Call',
      );
  return h(
    'div',
    { class: 'try' },
    tool.title ? h('h2', null, tool.title) : null,
    destructive ? h('p', null, h('span', { class: 'badge danger' }, 'destructive')) : null,
    h('p', { class: 'description' }, str(tool.description)),
    h('form', { class: 'form', onsubmit: (event: Event) => event.preventDefault() }, fields, submit),
    result,
  );
}

function showResult(holder: HTMLElement, reply: CallReply): void {
  if (!reply.ok) {
    const denied = reply.error.code === 'authorization_denied';
    holder.setAttribute('data-result', denied ? 'denied' : 'error');
    replace(
      holder,
      h('h3', { class: 'error' }, denied ? 'Denied by authorizeToolCall' : 'The call failed'),
      h(
        'p',
        { class: 'error', 'data-error': reply.error.code ?? 'error' },
        `${reply.error.code ?? reply.error.name ?? 'error'}: ${reply.error.message}`,
      ),
    );
    return;
  }
  const result = reply.result;
  holder.setAttribute('data-result', result.isError === true ? 'tool-error' : 'ok');
  const content = Array.isArray(result.content) ? (result.content as Block[]) : [];
  replace(
    holder,
    h(
      'h3',
      null,
      result.isError === true ? 'The tool reported an error' : 'Result',
      h('span', { class: 'dim' }, ` ${reply.ms} ms`),
    ),
    h('div', { class: 'content' }, content.map(block)),
    result.structuredContent === undefined ? null : jsonTree(result.structuredContent, 'structuredContent'),
    h(
      'details',
      { class: 'raw' },
      h('summary', null, 'raw'),
      h('pre', null, JSON.stringify(result, null, 2)),
    ),
  );
}

function block(part: Block): HTMLElement {
  switch (part.type) {
    case 'text':
      return h('pre', { class: 'text-block' }, str(part.text));
    case 'image':
      return h('img', {
        class: 'image-block',
        alt: 'image',
        src: `data:${str(part.mimeType)};base64,${str(part.data)}`,
      });
    case 'audio':
      return h('audio', { controls: true, src: `data:${str(part.mimeType)};base64,${str(part.data)}` });
    case 'resource_link':
      return h('div', { class: 'link-block' }, '🔗 ', h('code', null, str(part.uri)), ' ', str(part.name));
    case 'resource': {
      const resource = (part.resource ?? {}) as Record<string, unknown>;
      return h(
        'div',
        { class: 'resource-block' },
        h('code', null, str(resource.uri)),
        typeof resource.text === 'string'
          ? h('pre', null, resource.text)
          : h('span', { class: 'dim' }, ` ${str(resource.mimeType)} blob`),
      );
    }
    default:
      return jsonTree(part, str(part.type) || 'content', false);
  }
}
