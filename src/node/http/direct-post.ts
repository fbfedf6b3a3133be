/**
 * The direct POST of `AxMCPNodeHTTPTransport`: a 200 JSON answer is read whole here, straight
 * from the socket (bounded by `maxBytes`); anything else comes back to be handled the usual way.
 */
import { type AxMCPSSRFPolicy, checkURL, redactURL } from '../../net/ssrf.js';
import { AxMCPTransportError } from '../../protocol/errors.js';
import type {
  AxMCPDirectAnswer,
  AxMCPDirectPost,
  AxMCPDirectSender,
} from '../../transport/http/streamable-http.js';
import type { NodeHTTPClient, ReceivedResponse } from './client.js';
import { tooLarge } from './errors.js';
import { leanResponse } from './lean-response.js';

/** Direct POSTs through `client`, the URL checked against `policy` (its addresses by the agents). */
export function directSender(client: NodeHTTPClient, policy: AxMCPSSRFPolicy): AxMCPDirectSender {
  return {
    send(post) {
      if (client.closed) return Promise.reject(new AxMCPTransportError('closed', 'The transport was closed'));
      checkURL(post.url, policy);
      if (post.signal.aborted) return Promise.reject(post.signal.reason);
      const request = {
        url: post.url,
        method: 'POST',
        headers: post.headers,
        body: post.body,
        signal: post.signal,
      };
      return client.send(request, (received) => readAnswer(received, post));
    },
  };
}

/**
 * A 200 JSON answer as text; a redirect as `undefined` (the transport sends the request the
 * full way, following it); anything else as a lean response.
 */
function readAnswer(received: ReceivedResponse<AxMCPDirectAnswer | undefined>, post: AxMCPDirectPost): void {
  const { res, status, url } = received;
  const { maxBytes } = post;
  if (status >= 300 && status < 400 && status !== 304) {
    // Followed (and checked hop by hop) on the full path.
    received.skipBody();
    received.resolve(undefined);
    return;
  }
  const type = res.headers['content-type'];
  if (status !== 200 || type === undefined || !/^application\/json/i.test(type)) {
    received.resolve({ response: leanResponse(received) as unknown as Response });
    return;
  }
  const declared = Number(res.headers['content-length']);
  if (declared > maxBytes) {
    received.fail(tooLarge(maxBytes, url));
    return;
  }
  const chunks: Buffer[] = [];
  let bytes = 0;
  res.on('data', (chunk: Buffer) => {
    bytes += chunk.byteLength;
    if (bytes > maxBytes) received.fail(tooLarge(maxBytes, url));
    else chunks.push(chunk);
  });
  res.on('end', () => {
    received.done();
    let text = (chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks)).toString('utf8');
    if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    const session = res.headers['mcp-session-id'];
    received.resolve({ text, sessionId: typeof session === 'string' ? session : null });
  });
  res.on('error', (error) =>
    received.fail(
      new AxMCPTransportError('transport_error', 'Reading the response body failed', {
        endpoint: redactURL(url),
        cause: error,
      }),
    ),
  );
  res.on('close', () => {
    if (!res.complete)
      received.fail(
        new AxMCPTransportError('transport_error', 'The connection closed before the response body ended', {
          endpoint: redactURL(url),
        }),
      );
  });
}
