/**
 * A user's runtime module, as `ax-mcp worker --module` and `ax-mcp watch --routes` load it: an
 * ES module exporting `routes` (and optionally `targets`, `sources`, `options`, `close`), or a
 * default function returning them, for async setup.
 */
import { isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { AxEventRouteDefinition } from '../events/route.js';
import type { AxEventRuntimeOptions } from '../events/runtime-options.js';
import type { AxEventSource } from '../events/source.js';
import type { AxEventTargetDefinition } from '../events/target.js';
import { nearest } from '../options/check.js';

/** What a worker (or routes) module provides. */
export interface AxWorkerModule {
  routes: readonly AxEventRouteDefinition[];
  targets?: readonly AxEventTargetDefinition[];
  sources?: readonly AxEventSource[];
  /** Runtime options (retries, leases, limits); the CLI flags win where both are set. */
  options?: Omit<AxEventRuntimeOptions, 'store' | 'targets' | 'sources' | 'scheduling' | 'coordination'>;
  /** Called after the worker stopped (close clients the module opened). */
  close?: () => void | Promise<void>;
}

/** A module that cannot be used as written; the CLI prints it with its usage. */
export class RuntimeModuleError extends Error {}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object';
}

const MODULE_KEYS = ['routes', 'targets', 'sources', 'options', 'close'];

/**
 * An export one letter or so from a key that is missing (`source` for `sources`, `option` for
 * `options`) would be left unread, and the worker would run without it: refused, naming the key.
 * Other exports (helpers) are the module's own business.
 */
function refuseNearMisses(path: string, made: Record<string, unknown>): void {
  for (const name of Object.keys(made)) {
    if (MODULE_KEYS.includes(name) || name === 'default') continue;
    const meant = nearest(name, MODULE_KEYS);
    if (meant === undefined || made[meant] !== undefined || Math.abs(meant.length - name.length) > 1)
      continue;
    throw new RuntimeModuleError(`${path} exports ${name}, which is not read: did you mean ${meant}?`);
  }
}

/** Imports the module at `path` (relative to the working directory) and checks what it exports. */
export async function loadRuntimeModule(
  path: string,
  context: Record<string, unknown>,
): Promise<AxWorkerModule> {
  const href = pathToFileURL(isAbsolute(path) ? path : resolve(process.cwd(), path)).href;
  let loaded: unknown;
  try {
    loaded = await import(href);
  } catch (error) {
    throw new RuntimeModuleError(
      `${path} could not be loaded: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  if (!isObject(loaded)) throw new RuntimeModuleError(`${path} is not an ES module`);
  const made: unknown = typeof loaded.default === 'function' ? await loaded.default(context) : loaded;
  if (isObject(made)) refuseNearMisses(path, made);
  if (!isObject(made) || !Array.isArray(made.routes)) {
    throw new RuntimeModuleError(
      `${path} must export routes (an array), or a default function returning { routes }`,
    );
  }
  for (const key of ['targets', 'sources'] as const) {
    if (made[key] !== undefined && !Array.isArray(made[key])) {
      throw new RuntimeModuleError(`${path}: ${key} must be an array`);
    }
  }
  if (made.options !== undefined && !isObject(made.options)) {
    throw new RuntimeModuleError(`${path}: options must be an object`);
  }
  if (made.close !== undefined && typeof made.close !== 'function') {
    throw new RuntimeModuleError(`${path}: close must be a function`);
  }
  return made as unknown as AxWorkerModule;
}
