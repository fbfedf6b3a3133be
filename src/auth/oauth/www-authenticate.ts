/**
 * `WWW-Authenticate` parsing (RFC 9110 §11.6.1): one header may carry several challenges,
 * each a scheme followed by either a token68 or comma-separated `name=value` parameters
 * (value a token or a quoted string). Parameter names are case-insensitive and kept lower
 * case; values are kept in a `Map`, never as plain-object keys.
 */

/** One parsed challenge. */
export interface AxMCPAuthChallenge {
  /** The scheme, lower case (`bearer`, `dpop`, …). */
  scheme: string;
  /** The parameters by lower-case name; a repeated name keeps its first value. */
  params: ReadonlyMap<string, string>;
  token68?: string;
}

const TOKEN = /[!#$%&'*+.^_`|~0-9A-Za-z-]/;

/** Parses a `WWW-Authenticate` value; malformed tails are dropped, never thrown. */
export function parseWWWAuthenticate(header: string | null | undefined): AxMCPAuthChallenge[] {
  if (!header) return [];
  const text = header.slice(0, 16 * 1024);
  const challenges: AxMCPAuthChallenge[] = [];
  let i = 0;
  const skipSpace = () => {
    while (i < text.length && (text[i] === ' ' || text[i] === '\t')) i++;
  };
  const skipSeparators = () => {
    while (i < text.length && (text[i] === ' ' || text[i] === '\t' || text[i] === ',')) i++;
  };
  const readToken = (): string => {
    const start = i;
    while (i < text.length && TOKEN.test(text[i]!)) i++;
    return text.slice(start, i);
  };
  const readQuoted = (): string | undefined => {
    // text[i] === '"'
    i++;
    let value = '';
    while (i < text.length) {
      const c = text[i]!;
      if (c === '\\' && i + 1 < text.length) {
        value += text[i + 1];
        i += 2;
        continue;
      }
      if (c === '"') {
        i++;
        return value;
      }
      value += c;
      i++;
    }
    return undefined;
  };

  skipSeparators();
  while (i < text.length) {
    const scheme = readToken();
    if (scheme === '') break;
    const params = new Map<string, string>();
    const challenge: AxMCPAuthChallenge = { scheme: scheme.toLowerCase(), params };
    challenges.push(challenge);
    skipSpace();
    // A token68 is one run of token68 characters (only '=' padding at its end) up to a comma or the end.
    const token68 = /^([A-Za-z0-9\-._~+/]+=*)[ \t]*(?:,|$)/.exec(text.slice(i, i + 8192));
    if (token68) {
      challenge.token68 = token68[1]!;
      i += token68[0].length;
      skipSeparators();
      continue;
    }
    // Parameters until the next challenge (a token followed by a space and no '=').
    for (;;) {
      skipSeparators();
      if (i >= text.length) break;
      const start = i;
      const name = readToken();
      if (name === '') {
        i = text.length;
        break;
      }
      skipSpace();
      if (text[i] !== '=') {
        // The start of the next challenge.
        i = start;
        break;
      }
      i++;
      skipSpace();
      let value: string | undefined;
      if (text[i] === '"') value = readQuoted();
      else value = readToken();
      if (value === undefined) {
        i = text.length;
        break;
      }
      const key = name.toLowerCase();
      if (!params.has(key)) params.set(key, value);
      skipSpace();
    }
  }
  return challenges;
}

/** The first challenge with one of the given schemes (lower case), if any. */
export function findChallenge(
  challenges: readonly AxMCPAuthChallenge[],
  ...schemes: string[]
): AxMCPAuthChallenge | undefined {
  return challenges.find((challenge) => schemes.includes(challenge.scheme));
}

/** Splits a space-separated scope string into its distinct scopes, in order. */
export function splitScopes(scope: string | undefined): string[] {
  if (!scope) return [];
  return [...new Set(scope.split(/[ \t]+/).filter((s) => s !== ''))];
}
