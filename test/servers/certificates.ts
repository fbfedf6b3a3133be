/**
 * Throwaway X.509 material for the mutual-TLS tests, made with the `openssl` command line
 * (node:crypto cannot issue certificates): a CA, a server certificate for 127.0.0.1, a
 * client certificate the CA issued, and a self-signed client certificate. EC P-256, one day.
 */
import { execFileSync } from 'node:child_process';
import { createHash, X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A certificate (PEM) and its private key (PEM). */
export interface Identity {
  cert: string;
  key: string;
  /** The RFC 8705 thumbprint: SHA-256 of the DER certificate, base64url. */
  thumbprint: string;
  /** The subject DN as oidc-provider compares it (`CN=…`). */
  subject: string;
}

export interface TestCertificates {
  ca: string;
  server: Identity;
  /** Issued by the CA: for `tls_client_auth`. */
  client: Identity;
  /** Self-signed: for `self_signed_tls_client_auth`. */
  selfSigned: Identity;
}

/** Is the `openssl` command there? */
export function hasOpenSSL(): boolean {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

export function makeCertificates(): TestCertificates {
  const dir = mkdtempSync(join(tmpdir(), 'ax-mcp-mtls-'));
  const path = (name: string) => join(dir, name);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
  try {
    openssl(
      'req',
      '-x509',
      ...ec,
      '-keyout',
      'ca.key',
      '-out',
      'ca.crt',
      '-days',
      '1',
      '-subj',
      '/CN=ax-mcp test CA',
    );
    const issue = (name: string, subject: string, extensions: string) => {
      openssl('req', ...ec, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', subject);
      writeFileSync(path(`${name}.ext`), extensions);
      openssl(
        'x509',
        '-req',
        '-in',
        `${name}.csr`,
        '-CA',
        'ca.crt',
        '-CAkey',
        'ca.key',
        '-CAcreateserial',
        '-out',
        `${name}.crt`,
        '-days',
        '1',
        '-extfile',
        `${name}.ext`,
      );
    };
    issue('server', '/CN=127.0.0.1', 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n');
    issue('client', '/CN=ax-mcp-client', 'extendedKeyUsage=clientAuth\n');
    openssl(
      'req',
      '-x509',
      ...ec,
      '-keyout',
      'self.key',
      '-out',
      'self.crt',
      '-days',
      '1',
      '-subj',
      '/CN=ax-mcp-self-signed',
    );
    const identity = (name: string): Identity => {
      const cert = readFileSync(path(`${name}.crt`), 'utf8');
      const x509 = new X509Certificate(cert);
      return {
        cert,
        key: readFileSync(path(`${name}.key`), 'utf8'),
        thumbprint: thumbprintOf(x509),
        subject: x509.subject,
      };
    };
    return {
      ca: readFileSync(path('ca.crt'), 'utf8'),
      server: identity('server'),
      client: identity('client'),
      selfSigned: identity('self'),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** SHA-256 of the DER certificate, base64url (the `x5t#S256` of RFC 8705). */
export function thumbprintOf(cert: X509Certificate): string {
  return createHash('sha256').update(cert.raw).digest('base64url');
}
