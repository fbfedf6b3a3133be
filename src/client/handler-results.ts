/**
 * What the client's handlers of server requests may answer: the results of
 * `sampling/createMessage`, `elicitation/create` and `roots/list`, as the protocol defines
 * them. A handler in JavaScript (or one typed loosely) can return `{ acton: 'accept' }` or a
 * root with `url` for `uri`; sent as is, the server met a result it could not read and the
 * user saw nothing. Results are open (extensions may add fields), so only a field that looks
 * like a misspelt known one is refused.
 */

import {
  ANY_OBJECT,
  anyOf,
  array,
  boolean,
  findOptionsProblem,
  instance,
  matching,
  number,
  object,
  oneOf,
  record,
  required,
  type Shape,
  string,
} from '../options/check.js';
import { AxMCPHandlerResultError } from '../protocol/errors.js';

const CONTENT_BLOCK = instance(
  "a content block { type, … } (for example { type: 'text', text })",
  (value) =>
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    typeof (value as { type?: unknown }).type === 'string',
);

const OPEN = { open: 'misspellings-refused', keyNoun: 'field' } as const;

/** One root: the specification says its `uri` MUST be a `file://` URI. */
export const ROOT = object(
  {
    uri: required(matching(/^file:\/\//, 'a file:// URI', { reveal: true })),
    name: string(),
    _meta: ANY_OBJECT,
  },
  { ...OPEN, expected: 'a root { uri, name? }' },
);

const SAMPLING_RESULT = object(
  {
    role: required(oneOf('assistant', 'user')),
    content: required(anyOf(CONTENT_BLOCK, array(CONTENT_BLOCK, { minLength: 1 }))),
    model: required(string()),
    stopReason: string(),
    _meta: ANY_OBJECT,
  },
  { ...OPEN, expected: 'a result { role, content, model, stopReason? }' },
);

const ELICIT_RESULT = object(
  {
    action: required(oneOf('accept', 'decline', 'cancel')),
    content: record(anyOf(string(), number(), boolean(), array(string()))),
    _meta: ANY_OBJECT,
  },
  { ...OPEN, expected: "a result { action: 'accept' | 'decline' | 'cancel', content? }" },
);

const ROOTS_RESULT = array(ROOT, { expected: 'an array of roots { uri, name? }' });

const RESULTS: Readonly<Record<string, { shape: Shape; handler: string }>> = {
  'sampling/createMessage': { shape: SAMPLING_RESULT, handler: 'sampling handler' },
  'elicitation/create': { shape: ELICIT_RESULT, handler: 'elicitation handler' },
  'roots/list': { shape: ROOTS_RESULT, handler: 'roots' },
};

/** Throws {@link AxMCPHandlerResultError} when a handler's `result` for `method` cannot go to the server. */
export function assertHandlerResult(method: string, result: unknown): void {
  const expected = RESULTS[method];
  if (!expected) return;
  const problem = findOptionsProblem(
    expected.shape,
    result,
    `The ${expected.handler} answered ${method} with`,
  );
  if (problem) throw new AxMCPHandlerResultError(method, problem);
}
