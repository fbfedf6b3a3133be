/**
 * State a target keeps between runs, per (target, identity scope, instance). Stateful
 * programs (`getState`/`setState`) use it automatically.
 */

import { object } from '../options/check.js';
import { assertEventOptions } from './errors.js';
import { toPersistableJson } from './json.js';

/** Where target state lives. Values are plain JSON. */
export interface AxEventStateStore {
  load(key: string): Promise<unknown>;
  save(key: string, state: unknown): Promise<void>;
}

/**
 * Options of {@link AxMemoryEventStateStore}: none yet. It is unbounded and volatile; an
 * option given anyway (a size limit it does not have) is refused rather than ignored.
 */
export type AxMemoryEventStateStoreOptions = Record<string, never>;

/** What {@link AxMemoryEventStateStore} accepts: no options. */
export const MEMORY_STATE_STORE_OPTIONS = object({}, { expected: 'no options ({})' });

/** A volatile {@link AxEventStateStore} in memory; values are copied in and out. */
export class AxMemoryEventStateStore implements AxEventStateStore {
  readonly #values = new Map<string, string>();

  constructor(options: AxMemoryEventStateStoreOptions = {}) {
    assertEventOptions(MEMORY_STATE_STORE_OPTIONS, options, 'AxMemoryEventStateStore options');
  }

  async load(key: string): Promise<unknown> {
    const text = this.#values.get(key);
    return text === undefined ? undefined : JSON.parse(text);
  }

  async save(key: string, state: unknown): Promise<void> {
    if (state === undefined) this.#values.delete(key);
    else this.#values.set(key, toPersistableJson(state).text);
  }
}

/** The state key of a (target, identity scope, instance). */
export function stateKey(targetId: string, scope: string, instanceKey: string): string {
  return JSON.stringify([targetId, scope, instanceKey]);
}
