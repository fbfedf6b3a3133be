import { isObject } from '../protocol/json.js';
import { paramHeaderValues, type ToolParamHeader, toolParamHeaders } from '../protocol/mcp-headers.js';
import type { AxMCPTool } from '../protocol/messages.js';

const NONE: ReadonlyMap<string, never> = new Map<string, never>();

/** The 2026-07-28 Tasks extension identifier. */
export { TASKS_EXTENSION } from '../protocol/meta.js';

/**
 * `Mcp-Param-*` headers per tool, derived once per catalog revision from the tools'
 * `x-mcp-header` annotations. Tools whose annotations are invalid are dropped, as the
 * specification requires, with one warning per revision.
 */
export class ToolHeaderIndex {
  // Replaced whole per revision; until the first, shared empty maps (an idle client holds none).
  #byTool: ReadonlyMap<string, readonly ToolParamHeader[]> = NONE;
  #dropped: ReadonlyMap<string, string> = NONE;
  readonly #warn: (message: string) => void;

  constructor(warn: (message: string) => void) {
    this.#warn = warn;
  }

  /** Returns the tools a modern client may call; indexes their headers. */
  admit(tools: AxMCPTool[], revision: number, namespace: string): AxMCPTool[] {
    const index = new Map<string, readonly ToolParamHeader[]>();
    const droppedNow = new Map<string, string>();
    const dropped: string[] = [];
    const admitted = tools.filter((tool) => {
      if (asksForNoHeader(tool.inputSchema)) return true;
      const derived = toolParamHeaders(tool.inputSchema);
      if (!derived.ok) {
        dropped.push(`${tool.name} (${derived.reason})`);
        droppedNow.set(tool.name, derived.reason);
        return false;
      }
      if (derived.headers.length > 0) index.set(tool.name, derived.headers);
      return true;
    });
    this.#byTool = index;
    this.#dropped = droppedNow;
    if (dropped.length > 0) {
      this.#warn(
        `[ax-mcp ${namespace}] catalog revision ${revision}: dropped ${dropped.length} tool(s) with invalid x-mcp-header annotations: ${dropped.join('; ')}`,
      );
    }
    return admitted;
  }

  /** Why the current catalog dropped `tool`, if it did. */
  droppedReason(tool: string): string | undefined {
    return this.#dropped.get(tool);
  }

  /** The tools of one raw page a modern client may call (no warning, no index change). */
  callable(tools: AxMCPTool[]): AxMCPTool[] {
    return tools.filter((tool) => asksForNoHeader(tool.inputSchema) || toolParamHeaders(tool.inputSchema).ok);
  }

  valuesFor(tool: string, args: unknown): Record<string, string> | undefined {
    const headers = this.#byTool.get(tool);
    if (!headers) return undefined;
    return paramHeaderValues(headers, isObject(args) ? args : undefined);
  }
}

/**
 * A schema object in which no object, at any depth, has an own `x-mcp-header` key asks for no
 * header and is valid: the common case, decided without the full (path-building) walk of
 * {@link toolParamHeaders}. Anything else, or a very deep schema, takes the full walk.
 */
function asksForNoHeader(schema: unknown): boolean {
  if (!isObject(schema)) return false;
  const stack: unknown[] = [schema];
  for (let visited = 0; stack.length > 0; visited++) {
    if (visited > 10_000) return false;
    const value = stack.pop();
    if (typeof value !== 'object' || value === null) continue;
    if (Array.isArray(value)) {
      for (const item of value) if (typeof item === 'object' && item !== null) stack.push(item);
      continue;
    }
    if (Object.hasOwn(value, 'x-mcp-header')) return false;
    for (const key of Object.keys(value)) {
      const child = (value as Record<string, unknown>)[key];
      if (typeof child === 'object' && child !== null) stack.push(child);
    }
  }
  return true;
}
