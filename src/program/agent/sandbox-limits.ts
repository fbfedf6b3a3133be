/**
 * The limits of the actor's sandbox (an agent's `limits` option): their shape and defaults.
 */
import { number, object } from '../../options/check.js';

/** Limits of the actor's runtime. */
export interface AxAgentSandboxLimits {
  /** Wall time one step may take, awaited calls included (default 30,000 ms). */
  stepTimeoutMs?: number;
  /** Heap of the runtime in bytes (default 64 MiB). */
  memoryLimitBytes?: number;
  /** Interpreter stack in bytes (default 256 KiB). */
  maxStackBytes?: number;
  /** Console characters kept per step (default 8,000). */
  maxOutputChars?: number;
}

/** The shape of {@link AxAgentSandboxLimits} (an agent's `limits`). */
export const SANDBOX_LIMITS = object(
  {
    stepTimeoutMs: number({ integer: true, min: 1 }),
    memoryLimitBytes: number({ integer: true, min: 1024 * 1024 }),
    maxStackBytes: number({ integer: true, min: 1 }),
    maxOutputChars: number({ integer: true, min: 1 }),
  },
  {
    expected: 'an object { stepTimeoutMs?, memoryLimitBytes?, maxStackBytes?, maxOutputChars? }',
    aliases: {
      timeoutMs: 'stepTimeoutMs',
      stepTimeout: 'stepTimeoutMs',
      memoryLimit: 'memoryLimitBytes',
      memoryBytes: 'memoryLimitBytes',
      stackBytes: 'maxStackBytes',
      maxOutput: 'maxOutputChars',
    },
  },
);

/** Resolved limits. */
export type SandboxLimits = Required<AxAgentSandboxLimits>;

export const DEFAULT_LIMITS: SandboxLimits = Object.freeze({
  stepTimeoutMs: 30_000,
  memoryLimitBytes: 64 * 1024 * 1024,
  maxStackBytes: 256 * 1024,
  maxOutputChars: 8_000,
});
