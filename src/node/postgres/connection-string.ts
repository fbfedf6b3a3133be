/**
 * The connection string of a PostgreSQL store, checked when the store is made. `pg` takes
 * nearly any string: it reads one without a scheme as a path relative to `postgres://base`
 * (and then fails to resolve the host "base"), ignores the scheme (`http://`, `postgress://`),
 * and tries TLS for an `sslmode` it does not know, to fail with "the server does not support
 * SSL connections". Each failed at the first query, in other words. Checked here, they fail at
 * construction, saying what was wrong without repeating the string (it may hold a password).
 */

import { kindOf, nearest, type Shape } from '../../options/check.js';

const SCHEMES = ['postgres', 'postgresql', 'socket'];
const SSL_MODES = ['disable', 'allow', 'prefer', 'require', 'verify-ca', 'verify-full', 'no-verify'];
const EXPECTED = 'a postgres:// or postgresql:// URL (or socket:/path, or a socket directory path)';

/** What is wrong with a connection string, as an options issue's `expected` and `received`; `null` if nothing. */
export function connectionStringProblem(value: string): { expected: string; received: string } | null {
  // A socket directory, optionally followed by a database name: pg's own form.
  if (value.startsWith('/')) return null;
  let text = value;
  // As pg does: spaces and stray percent signs are encoded before parsing.
  if (/ |%[^a-f0-9]|%[a-f0-9][^a-f0-9]/i.test(text)) text = encodeURI(text).replace(/%25(\d\d)/g, '%$1');
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    try {
      // An empty host (`postgres://user@/db`, the default socket), as pg reads it.
      url = new URL(text.replace('@/', '@___DUMMY___/'));
    } catch {
      return { expected: EXPECTED, received: 'a string that is not a URL (a port that is not a number?)' };
    }
  }
  const scheme = url.protocol.slice(0, -1);
  if (!SCHEMES.includes(scheme)) {
    // `localhost:5432/db` parses with the scheme "localhost".
    if (!value.includes('://'))
      return { expected: EXPECTED, received: 'a string without postgres:// before the host' };
    const near = nearest(scheme, SCHEMES);
    return {
      expected: EXPECTED,
      received: near ? `a ${scheme}: URL (did you mean ${near}://?)` : `a URL with the scheme "${scheme}:"`,
    };
  }
  const sslmode = url.searchParams.get('sslmode');
  if (sslmode !== null && !SSL_MODES.includes(sslmode)) {
    const near = nearest(sslmode, SSL_MODES);
    return {
      expected: `an sslmode of ${SSL_MODES.slice(0, -1).join(', ')} or ${SSL_MODES.at(-1)}`,
      received: `sslmode '${sslmode.slice(0, 40)}'${near ? ` (did you mean ${near}?)` : ''}`,
    };
  }
  return null;
}

/** The `connectionString` option of every PostgreSQL store. */
export const CONNECTION_STRING: Shape = {
  expected: EXPECTED,
  optional: true,
  check(value, path, issues) {
    if (typeof value !== 'string' || value.length === 0) {
      issues.push({ path, expected: `a non-empty string: ${EXPECTED}`, received: kindOf(value) });
      return;
    }
    const problem = connectionStringProblem(value);
    if (problem) issues.push({ path, ...problem });
  },
};
