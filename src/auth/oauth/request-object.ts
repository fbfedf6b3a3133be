/**
 * JWT-secured authorization requests (RFC 9101): the authorization parameters signed by the
 * client's private key into a request object, sent by value (`request`) in the browser's URL,
 * or pushed (RFC 9126) as the request object itself. Used when the authorization server
 * requires it (`require_signed_request_object`) or the caller asks for it.
 */
import * as oauth from 'oauth4webapi';
import type { ResolvedClient } from './client-identity.js';
import { AxMCPOAuthError, safeCause } from './errors.js';

const REQUEST_OBJECT_LIFETIME_S = 600;

/**
 * The request object parameters (`client_id` and `request`) in place of `request`, or
 * `undefined` to send the parameters as they are. `wanted` is the `signedRequestObject` option.
 */
export async function signRequestIfWanted(
  as: oauth.AuthorizationServer,
  client: ResolvedClient,
  request: URLSearchParams,
  wanted: boolean | undefined,
): Promise<URLSearchParams | undefined> {
  const required = as.require_signed_request_object === true;
  if (wanted === false) {
    if (required) {
      throw new AxMCPOAuthError(
        'oauth_unsupported',
        'The authorization server requires signed request objects (require_signed_request_object), which signedRequestObject: false refuses',
      );
    }
    return undefined;
  }
  if (!required && wanted !== true) return undefined;
  const key = client.signingKey;
  if (key === undefined) {
    throw new AxMCPOAuthError(
      'oauth_unsupported',
      `${required ? 'The authorization server requires signed request objects (require_signed_request_object)' : 'signedRequestObject is set'}, ` +
        'and this client has no key to sign them: give the pre-registered client a privateKey (oauth.client.privateKey) whose public key the server knows',
    );
  }
  const cryptoKey = 'key' in key ? key.key : key;
  const alg = jwsAlgorithm(cryptoKey);
  const supported = as.request_object_signing_alg_values_supported;
  // oauth4webapi names Ed25519 signatures `Ed25519`; servers of the older registry list `EdDSA`.
  const remap =
    alg === 'Ed25519' && supported !== undefined && !supported.includes(alg) && supported.includes('EdDSA');
  if (supported !== undefined && alg !== undefined && !supported.includes(alg) && !remap) {
    throw new AxMCPOAuthError(
      'oauth_unsupported',
      `The authorization server does not accept request objects signed with ${alg} ` +
        `(it lists ${supported.slice(0, 8).join(', ') || 'none'}); give the client a privateKey of an algorithm it lists`,
    );
  }
  let jwt: string;
  try {
    jwt = await oauth.issueRequestObject(as, client.client, request, key, {
      [oauth.modifyAssertion]: (header, payload) => {
        if (remap) header.alg = 'EdDSA';
        // By value, the server checks it when the browser arrives, which a person may delay:
        // ten minutes instead of oauth4webapi's one.
        if (typeof payload.iat === 'number') payload.exp = payload.iat + REQUEST_OBJECT_LIFETIME_S;
      },
    });
  } catch (error) {
    throw new AxMCPOAuthError(
      'oauth_unsupported',
      'Could not sign the request object with oauth.client.privateKey',
      {
        cause: safeCause(error),
      },
    );
  }
  // RFC 9101 §5: `client_id` also travels outside the request object.
  return new URLSearchParams({ client_id: client.client.client_id, request: jwt });
}

/** The JWS `alg` oauth4webapi signs with for `key` (`undefined` when it cannot tell). */
function jwsAlgorithm(key: CryptoKey): string | undefined {
  const algorithm = key.algorithm as { name: string; namedCurve?: string; hash?: { name?: string } };
  const bits = algorithm.hash?.name?.replace(/^SHA-/, '');
  switch (algorithm.name) {
    case 'ECDSA':
      return { 'P-256': 'ES256', 'P-384': 'ES384', 'P-521': 'ES512' }[algorithm.namedCurve ?? ''];
    case 'RSASSA-PKCS1-v1_5':
      return bits ? `RS${bits}` : undefined;
    case 'RSA-PSS':
      return bits ? `PS${bits}` : undefined;
    case 'Ed25519':
    case 'EdDSA':
      return 'Ed25519';
    default:
      return undefined;
  }
}
