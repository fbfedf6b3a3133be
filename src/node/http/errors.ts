/** The typed errors of the node:http stack; every one names the endpoint redacted. */
import type * as http from 'node:http';
import { redactURL } from '../../net/ssrf.js';
import { AxMCPError, AxMCPTransportError } from '../../protocol/errors.js';

/** A failed node:http exchange as a typed transport error, the URL redacted. */
export function requestError(error: unknown, url: URL): AxMCPError {
  if (error instanceof AxMCPError) return error;
  const code = (error as NodeJS.ErrnoException).code;
  return new AxMCPTransportError(
    'transport_error',
    `Request to ${redactURL(url)} failed${typeof code === 'string' ? ` (${code})` : ''}`,
    { endpoint: redactURL(url), cause: error },
  );
}

/** A final status outside 200–599, which a fetch `Response` cannot carry. */
export function unexpectedStatus(status: number, url: URL): AxMCPTransportError {
  return new AxMCPTransportError('transport_error', `Unexpected HTTP status ${status}`, {
    endpoint: redactURL(url),
  });
}

/** A response body over the caller's byte limit. */
export function tooLarge(maxBytes: number, url: URL): AxMCPTransportError {
  return new AxMCPTransportError('message_too_large', `Response body exceeds ${maxBytes} bytes`, {
    endpoint: redactURL(url),
  });
}

/** Fails a response body with a typed `stream_ended` when its connection breaks or closes before the end. */
export function onBodyBreak(res: http.IncomingMessage, url: URL, fail: (error: AxMCPError) => void): void {
  res.on('error', (error) =>
    fail(
      error instanceof AxMCPError
        ? error
        : new AxMCPTransportError('stream_ended', 'The response body broke off', {
            endpoint: redactURL(url),
            cause: error,
          }),
    ),
  );
  res.on('close', () => {
    if (!res.complete) {
      fail(
        new AxMCPTransportError('stream_ended', 'The connection closed before the response body ended', {
          endpoint: redactURL(url),
        }),
      );
    }
  });
}
