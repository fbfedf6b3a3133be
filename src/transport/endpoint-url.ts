/**
 * The URL a transport is made with, checked when it is made. A string that is not a URL, a
 * scheme the transport cannot speak, or credentials in the URL are refused at once with
 * `invalid_argument` — not a bare `TypeError` from `new URL`, not an SSRF refusal at the first
 * request (with SSRF protection off, a `ws:` URL went to `fetch`).
 */
import { AxMCPError } from '../protocol/errors.js';

/** Where to go instead when a URL names another transport's scheme. */
const ELSEWHERE: Readonly<Record<string, string>> = {
  'ws:': 'AxMCPWebSocketTransport',
  'wss:': 'AxMCPWebSocketTransport',
  'http:': 'AxMCPStreamableHTTPTransport',
  'https:': 'AxMCPStreamableHTTPTransport',
};

/** `url` as a URL `transport` can use, whose scheme is one of `schemes` (`['http:', 'https:']`). */
export function endpointURL(url: string | URL, transport: string, schemes: readonly string[]): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch (cause) {
    const shown = String(url).slice(0, 80);
    throw new AxMCPError(
      'invalid_argument',
      `${transport} needs a URL; ${JSON.stringify(shown)} is not one`,
      {
        cause,
      },
    );
  }
  if (!schemes.includes(parsed.protocol)) {
    const instead = ELSEWHERE[parsed.protocol];
    const hint = instead ? ` (${parsed.protocol} is for ${instead})` : '';
    throw new AxMCPError(
      'invalid_argument',
      `${transport} takes ${schemes.join(' or ')} URLs, not ${parsed.protocol}${hint}`,
    );
  }
  if (parsed.username || parsed.password) {
    throw new AxMCPError(
      'invalid_argument',
      `Put credentials in \`authentication\`, not in the URL of ${transport}`,
    );
  }
  return parsed;
}
