/**
 * TLS settings of the node:http stack: a client certificate for mutual TLS (RFC 8705) and the
 * CAs to trust, checked once and turned into HTTPS agent options.
 */
import type * as https from 'node:https';
import * as tls from 'node:tls';
import { optionsError } from '../../net/options-error.js';
import { anyOf, array, instance, object, string } from '../../options/check.js';

/** A PEM text, or its bytes. */
export type AxMCPPEM = string | Uint8Array;

/**
 * TLS settings of HTTPS connections. `cert` and `key` come together: the client certificate
 * presented to every server that asks for one (mutual TLS, RFC 8705; OAuth then uses it for
 * `tls_client_auth` / `self_signed_tls_client_auth` and certificate-bound tokens). The key is
 * never logged, serialized or part of an error.
 */
export interface AxMCPNodeTLSOptions {
  /** The client certificate chain (PEM), leaf first. */
  cert?: AxMCPPEM;
  /** Its private key (PEM). */
  key?: AxMCPPEM;
  /** The key's passphrase, when it is encrypted. */
  passphrase?: string;
  /** The certificate authorities to trust for servers, replacing Node's default list (PEM). */
  ca?: AxMCPPEM | readonly AxMCPPEM[];
}

const PEM = instance(
  'PEM text (a string or bytes)',
  (value) => (typeof value === 'string' && value.includes('-----BEGIN ')) || value instanceof Uint8Array,
);

/** The shape of {@link AxMCPNodeTLSOptions}. */
export const TLS_OPTIONS = object(
  { cert: PEM, key: PEM, passphrase: string(), ca: anyOf(PEM, array(PEM)) },
  {
    expected: 'TLS options { cert?, key?, passphrase?, ca? }',
    aliases: {
      certificate: 'cert',
      clientCertificate: 'cert',
      privateKey: 'key',
      clientKey: 'key',
      password: 'passphrase',
      caCertificates: 'ca',
    },
  },
);

/** The TLS options of an HTTPS agent, checked; also: does it present a client certificate? */
export interface ResolvedTLS {
  agentOptions: https.AgentOptions;
  clientCertificate: boolean;
}

/**
 * Checks what shapes cannot: `cert` and `key` together, readable, and a pair (Node builds
 * the secure context once here). The error names the option, never the key.
 */
export function resolveTLS(options: AxMCPNodeTLSOptions | undefined, label: string): ResolvedTLS | undefined {
  if (options === undefined) return undefined;
  const { cert, key, passphrase, ca } = options;
  if ((cert === undefined) !== (key === undefined)) {
    throw optionsError(label, {
      path: cert === undefined ? 'tls.cert' : 'tls.key',
      expected: `the ${cert === undefined ? 'certificate' : 'private key'} that goes with tls.${cert === undefined ? 'key' : 'cert'} (PEM)`,
      received: 'nothing (required)',
    });
  }
  const agentOptions: https.AgentOptions = {};
  if (cert !== undefined) agentOptions.cert = buffer(cert);
  if (key !== undefined) agentOptions.key = buffer(key);
  if (passphrase !== undefined) agentOptions.passphrase = passphrase;
  if (ca !== undefined) agentOptions.ca = Array.isArray(ca) ? ca.map(buffer) : buffer(ca as AxMCPPEM);
  try {
    tls.createSecureContext(agentOptions);
  } catch (error) {
    // Node's messages name the PEM routine or "key values mismatch", never the key.
    const reason = (error as NodeJS.ErrnoException).code ?? 'unreadable';
    throw optionsError(label, {
      path: 'tls',
      expected:
        'a PEM certificate and its matching private key (with its passphrase if encrypted), and PEM CAs',
      received: `something Node cannot use (${reason})`,
    });
  }
  return { agentOptions, clientCertificate: cert !== undefined };
}

function buffer(pem: AxMCPPEM): string | Buffer {
  return typeof pem === 'string' ? pem : Buffer.from(pem.buffer, pem.byteOffset, pem.byteLength);
}
