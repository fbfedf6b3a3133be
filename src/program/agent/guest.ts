/**
 * The JavaScript that builds the actor's globals inside the sandbox. It runs once per
 * session as a function expression and receives three host functions that only take and
 * return strings (`call` returns a promise of a JSON string), so no host object ever
 * enters the sandbox and every value crosses as a JSON copy. The globals it defines are
 * read-only; it returns a control object the host uses between steps.
 */

/** Names the actor cannot replace: the runtime's own globals. */
export const RESERVED_GLOBALS = Object.freeze([
  'mcp',
  'ucp',
  'agents',
  'functions',
  'discover',
  'final',
  'askClarification',
  'console',
  'inputs',
]);

/** The shape the bootstrap builds the globals from. */
export interface GuestShape {
  /** Per namespace: the tool names callable as `mcp.<namespace>.tools.<name>`. */
  namespaces: Record<string, string[]>;
  /** Per UCP namespace: the operations callable as `ucp.<namespace>.<operation>` (`checkout.complete`). */
  ucp?: Record<string, string[]>;
  agents: string[];
  functions: string[];
  /** JSON text of the `inputs` global. */
  inputs: string;
  /** Console characters sent to the host per call. */
  maxLogChars: number;
  reserved: readonly string[];
}

/** `(call, log, signal, shapeText) => control`, evaluated as a global script. */
export const GUEST_BOOTSTRAP = `(function (hostCall, hostLog, hostSignal, shapeText) {
  'use strict';
  const shape = JSON.parse(shapeText);
  const freeze = Object.freeze;
  const reserved = new Set(shape.reserved);
  const UNSAFE = new Set(['__proto__', 'constructor', 'prototype']);
  const NOT_TOOLS = new Set(['then', 'toJSON', 'valueOf', 'toString', 'inspect']);

  const format = (value) => {
    if (typeof value === 'string') return value;
    if (value instanceof Error) return value.name + ': ' + value.message;
    if (value === undefined) return 'undefined';
    if (typeof value === 'function') return '[function ' + (value.name || 'anonymous') + ']';
    if (typeof value === 'bigint') return value + 'n';
    if (typeof value === 'symbol') return String(value);
    const seen = new WeakSet();
    try {
      const text = JSON.stringify(value, (key, item) => {
        if (typeof item === 'bigint') return item + 'n';
        if (typeof item === 'function') return '[function]';
        if (typeof item === 'object' && item !== null) {
          if (seen.has(item)) return '[circular]';
          seen.add(item);
        }
        return item;
      });
      return text === undefined ? String(value) : text;
    } catch (error) {
      return String(value);
    }
  };
  const print = (level) => (...values) => {
    const text = values.map(format).join(' ');
    hostLog(level, text.length > shape.maxLogChars ? text.slice(0, shape.maxLogChars) : text);
  };

  const send = (path, args) => {
    let text;
    try {
      text = JSON.stringify(args, (key, item) => (item === undefined ? null : item));
    } catch (error) {
      return Promise.reject(new TypeError('Arguments must be JSON: ' + error.message));
    }
    return hostCall(JSON.stringify(path), text).then((result) => (result === undefined ? undefined : JSON.parse(result)));
  };

  const toolTargets = Object.create(null);
  const namespace = (name, isAttached = true) => {
    const base = ['mcp', name];
    const target = Object.create(null);
    if (isAttached) toolTargets[name] = target;
    const tools = new Proxy(target, {
      get: (object, key) => {
        if (typeof key !== 'string' || NOT_TOOLS.has(key) || UNSAFE.has(key)) return undefined;
        return Object.prototype.hasOwnProperty.call(object, key) ? object[key] : (args) => send(base.concat('tools', key), [args]);
      },
      set: () => false,
      defineProperty: () => false,
      deleteProperty: () => false,
    });
    const op = (...path) => (...args) => send(base.concat(path), args);
    return freeze({
      tools,
      prompts: freeze({ list: op('prompts', 'list'), get: op('prompts', 'get') }),
      resources: freeze({
        list: op('resources', 'list'),
        templates: op('resources', 'templates'),
        read: op('resources', 'read'),
        subscribe: op('resources', 'subscribe'),
        unsubscribe: op('resources', 'unsubscribe'),
      }),
      tasks: freeze({
        get: op('tasks', 'get'),
        cancel: op('tasks', 'cancel'),
        update: op('tasks', 'update'),
        list: op('tasks', 'list'),
        result: op('tasks', 'result'),
      }),
      complete: op('complete'),
    });
  };
  const setTools = (namespaces) => {
    for (const name of Object.keys(namespaces)) {
      const target = toolTargets[name];
      if (!target) continue;
      for (const key of Object.keys(target)) delete target[key];
      for (const tool of namespaces[name]) {
        if (!UNSAFE.has(tool)) target[tool] = (args) => send(['mcp', name, 'tools', tool], [args]);
      }
    }
  };

  const attached = Object.create(null);
  for (const name of Object.keys(shape.namespaces)) if (!UNSAFE.has(name)) attached[name] = namespace(name);
  setTools(shape.namespaces);
  // A namespace that is not attached still has the shape of one, so a call through it reaches
  // the host and fails there with the library's own error (naming the attached namespaces)
  // instead of "cannot read property 'tools' of undefined".
  const detached = Object.create(null);
  const mcp = new Proxy(freeze(attached), {
    get: (object, key) => {
      if (typeof key !== 'string' || Object.prototype.hasOwnProperty.call(object, key)) return object[key];
      if (NOT_TOOLS.has(key) || UNSAFE.has(key)) return undefined;
      if (!detached[key]) detached[key] = namespace(key, false);
      return detached[key];
    },
    set: () => false,
    defineProperty: () => false,
    deleteProperty: () => false,
  });
  // ucp.<namespace>.<group>.<name>(args): the operations offered are own properties; any other
  // path still reaches the host, which answers with an error naming what the namespace offers.
  const ucpGroup = (name, group, known) =>
    new Proxy(freeze(known || Object.create(null)), {
      get: (object, key) => {
        if (typeof key !== 'string' || Object.prototype.hasOwnProperty.call(object, key)) return object[key];
        if (NOT_TOOLS.has(key) || UNSAFE.has(key)) return undefined;
        return (args) => send(['ucp', name, group, key], [args]);
      },
      set: () => false,
      defineProperty: () => false,
      deleteProperty: () => false,
    });
  const ucpNamespace = (name, operations) => {
    const groups = Object.create(null);
    for (const operation of operations) {
      const [group, op] = operation.split('.');
      if (op === undefined || UNSAFE.has(group) || UNSAFE.has(op)) continue;
      if (!groups[group]) groups[group] = Object.create(null);
      groups[group][op] = (args) => send(['ucp', name, group, op], [args]);
    }
    const target = Object.create(null);
    for (const group of Object.keys(groups)) target[group] = ucpGroup(name, group, groups[group]);
    return new Proxy(freeze(target), {
      get: (object, key) => {
        if (typeof key !== 'string' || Object.prototype.hasOwnProperty.call(object, key)) return object[key];
        if (NOT_TOOLS.has(key) || UNSAFE.has(key)) return undefined;
        return ucpGroup(name, key, undefined);
      },
      set: () => false,
      defineProperty: () => false,
      deleteProperty: () => false,
    });
  };
  const ucpAttached = Object.create(null);
  for (const name of Object.keys(shape.ucp || {})) if (!UNSAFE.has(name)) ucpAttached[name] = ucpNamespace(name, shape.ucp[name]);
  const ucp = new Proxy(freeze(ucpAttached), {
    get: (object, key) => {
      if (typeof key !== 'string' || Object.prototype.hasOwnProperty.call(object, key)) return object[key];
      if (NOT_TOOLS.has(key) || UNSAFE.has(key)) return undefined;
      return ucpNamespace(key, []);
    },
    set: () => false,
    defineProperty: () => false,
    deleteProperty: () => false,
  });
  const callables = (kind, names) => {
    const object = Object.create(null);
    for (const name of names) if (!UNSAFE.has(name)) object[name] = (args) => send([kind, name], [args]);
    return freeze(object);
  };
  const deepFreeze = (value) => {
    if (typeof value === 'object' && value !== null) {
      for (const key of Object.keys(value)) deepFreeze(value[key]);
      freeze(value);
    }
    return value;
  };
  const globals = {
    mcp,
    ucp,
    agents: callables('agents', shape.agents),
    functions: callables('functions', shape.functions),
    discover: (query) => send(['discover'], [query]),
    final: (task, evidence) => {
      hostSignal('final', JSON.stringify({ task: task === undefined ? null : task, evidence: evidence === undefined ? null : evidence }));
    },
    askClarification: (question) => {
      hostSignal('clarification', JSON.stringify({ question: format(question) }));
    },
    console: freeze({ log: print('log'), info: print('info'), warn: print('warn'), error: print('error'), debug: print('debug') }),
    inputs: deepFreeze(JSON.parse(shape.inputs)),
  };
  for (const name of Object.keys(globals)) {
    Object.defineProperty(globalThis, name, { value: globals[name], writable: false, enumerable: false, configurable: false });
  }

  return freeze({
    keep: (exports) => {
      const kept = [];
      for (const key of Object.keys(exports)) {
        if (reserved.has(key) || UNSAFE.has(key)) continue;
        try {
          Object.defineProperty(globalThis, key, { value: exports[key], writable: true, enumerable: true, configurable: true });
          kept.push(key);
        } catch (error) {}
      }
      return JSON.stringify(kept);
    },
    setTools: (text) => setTools(JSON.parse(text)),
  });
})`;
