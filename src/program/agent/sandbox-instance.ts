/**
 * One QuickJS instance of a sandbox session: its own WebAssembly module with capped memory,
 * a runtime and a context with the actor's globals installed. The session decides what the
 * host functions do; this file only builds and frees the instance. Internal.
 */
import * as releaseSyncModule from '@jitl/quickjs-wasmfile-release-sync';
import {
  newQuickJSWASMModuleFromVariant,
  newVariant,
  type QuickJSContext,
  type QuickJSHandle,
  type QuickJSRuntime,
  type QuickJSSyncVariant,
} from 'quickjs-emscripten-core';
import { AxProgramError } from '../errors.js';
import { GUEST_BOOTSTRAP, type GuestShape } from './guest.js';
import type { SandboxLimits } from './sandbox-limits.js';

/** The build's initial memory (its C stack and static data live there). */
const BASE_MEMORY_BYTES = 16 * 1024 * 1024;
const WASM_PAGE = 65_536;

/**
 * The build variant. Its types are CommonJS while Node and bundlers load its ES module, so
 * the default export is reached through the namespace in both worlds.
 */
const releaseSync: QuickJSSyncVariant = unwrapDefault(releaseSyncModule);

function unwrapDefault(module: unknown): QuickJSSyncVariant {
  let value = module as { default?: unknown; type?: unknown };
  while (value.type !== 'sync' && typeof value.default === 'object' && value.default !== null) {
    value = value.default as typeof value;
  }
  return value as QuickJSSyncVariant;
}

/** The host functions the guest's globals call; they take and return strings only. */
export interface InstanceHostFunctions {
  /** `call(pathJSON, argsJSON)`: returns the handle of a promise of a JSON string. */
  call(context: QuickJSContext, pathText: QuickJSHandle, argsText: QuickJSHandle): QuickJSHandle;
  log(level: string, text: string): void;
  signal(kind: string, text: string): void;
}

/** One QuickJS instance with the actor's globals installed. */
export class Instance {
  readonly runtime: QuickJSRuntime;
  readonly context: QuickJSContext;
  readonly control: QuickJSHandle;
  /** Epoch ms after which the interrupt handler stops the guest; 0 stops it now. */
  deadline = Number.POSITIVE_INFINITY;
  /** The run was aborted: stop the guest now. */
  aborting = false;

  constructor(runtime: QuickJSRuntime, context: QuickJSContext, control: QuickJSHandle) {
    this.runtime = runtime;
    this.context = context;
    this.control = control;
  }

  /** A host stack overflow unwound through the interpreter: freeing it would trip its assertions. */
  broken = false;

  dispose(): void {
    if (this.broken) return;
    try {
      this.control.dispose();
      this.context.dispose();
      this.runtime.dispose();
    } catch {
      // A runtime left inconsistent by a host stack overflow may refuse to free cleanly;
      // dropping the WebAssembly instance releases its memory either way.
    }
  }
}

/** Loads a fresh WebAssembly module and builds the guest's globals from `shape` in it. */
export async function openInstance(
  limits: SandboxLimits,
  shape: GuestShape,
  host: InstanceHostFunctions,
): Promise<Instance> {
  let module: Awaited<ReturnType<typeof newQuickJSWASMModuleFromVariant>>;
  try {
    // QuickJS's own limit only bounds single allocations in this build (its usable-size
    // accounting is 0 under emscripten), so the WebAssembly memory itself is capped: a
    // fixed maximum makes growth fail, and QuickJS reports "out of memory" to the code.
    const pages = Math.ceil((BASE_MEMORY_BYTES + limits.memoryLimitBytes) / WASM_PAGE);
    const wasmMemory = new WebAssembly.Memory({ initial: BASE_MEMORY_BYTES / WASM_PAGE, maximum: pages });
    module = await newQuickJSWASMModuleFromVariant(newVariant(releaseSync, { wasmMemory }));
  } catch (cause) {
    throw new AxProgramError('sandbox_failed', 'The QuickJS WebAssembly module could not be loaded', {
      cause,
    });
  }
  const runtime = module.newRuntime();
  runtime.setMemoryLimit(limits.memoryLimitBytes);
  runtime.setMaxStackSize(limits.maxStackBytes);
  const context = runtime.newContext();
  let instance: Instance | undefined;
  runtime.setInterruptHandler(
    () => instance !== undefined && (instance.aborting || Date.now() > instance.deadline),
  );
  const call = context.newFunction('call', (pathText, argsText) => host.call(context, pathText, argsText));
  const log = context.newFunction('log', (level, text) => {
    host.log(context.getString(level), context.getString(text));
  });
  const signal = context.newFunction('signal', (kind, text) => {
    host.signal(context.getString(kind), context.getString(text));
  });
  const shapeText = context.newString(JSON.stringify(shape));
  const bootstrap = context.unwrapResult(
    context.evalCode(GUEST_BOOTSTRAP, 'bootstrap.js', { type: 'global' }),
  );
  const control = context.unwrapResult(
    context.callFunction(bootstrap, context.undefined, call, log, signal, shapeText),
  );
  for (const handle of [bootstrap, call, log, signal, shapeText]) handle.dispose();
  instance = new Instance(runtime, context, control);
  return instance;
}
