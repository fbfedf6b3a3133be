/**
 * A connection string `pg` would take for something else, or fail on only at the first query
 * with a misleading error ("getaddrinfo ENOTFOUND base", "The server does not support SSL
 * connections"), is refused when a store is made: `invalid_options`, naming what was wrong and
 * never repeating the string (it may hold a password).
 */
import { describe, expect, it } from 'vitest';
import { AxMCPPostgresEraStore } from './era-store.js';
import { AxPostgresEventStore } from './event-store.js';
import { AxMCPPostgresTokenStore } from './token-store.js';

const KEY = { id: 'k1', key: new Uint8Array(32) };
const STORES = {
  'event store': (connectionString: string) => new AxPostgresEventStore({ connectionString }),
  'era store': (connectionString: string) => new AxMCPPostgresEraStore({ connectionString }),
  'token store': (connectionString: string) => new AxMCPPostgresTokenStore({ connectionString, key: KEY }),
};

const REFUSED: [string, string, RegExp][] = [
  ['a string that is no URL (pg read it as a path under postgres://base)', 'not a url', /not a URL/],
  ['host and port without the scheme', 'localhost:5432/app', /without postgres:\/\/ before the host/],
  [
    'a misspelt scheme (pg ignores schemes)',
    'postgress://app:s3cret@db:5432/app',
    /did you mean postgres:\/\/\?/,
  ],
  ['an http URL', 'http://app:s3cret@db:5432/app', /scheme "http:"/],
  ['a port that is not a number', 'postgres://app:s3cret@db:port/app', /not a URL/],
  [
    'an sslmode pg does not know (it tried TLS and failed at the first query)',
    'postgres://app:s3cret@db/app?sslmode=requir',
    /sslmode 'requir' \(did you mean require\?\)/,
  ],
];

const ACCEPTED = [
  'postgres://app:s3cret@db.internal:5432/app',
  'postgresql://db/app?sslmode=verify-full',
  'postgres://app@/app',
  'postgres://app:p%20w@db/app',
  'socket:/var/run/postgresql?db=app',
  '/var/run/postgresql app',
];

describe('the connection string of a PostgreSQL store', () => {
  for (const [store, make] of Object.entries(STORES)) {
    it.each(REFUSED)(`${store}: refuses %s at construction`, (_name, connectionString, message) => {
      let thrown: unknown;
      try {
        make(connectionString);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toMatchObject({ code: 'invalid_options' });
      const text = (thrown as Error).message;
      expect(text).toMatch(/connectionString/);
      expect(text).toMatch(message);
      expect(text).not.toContain('s3cret');
    });

    it(`${store}: accepts URLs, socket URLs and socket paths pg reads as meant`, async () => {
      for (const connectionString of ACCEPTED) {
        const made = make(connectionString);
        await made.close();
      }
    });
  }
});
