/**
 * How this client describes itself to an authorization server: the metadata a host gives,
 * what it becomes in a dynamic registration or a Client ID Metadata Document, and that
 * document itself (for the host to serve at its `clientMetadataUrl`).
 */
import { array, instance, object, oneOf, required, string } from '../../options/check.js';
import { assertMCPOptions } from '../../protocol/errors.js';

/** How this client describes itself, in a metadata document or a dynamic registration. */
export interface AxMCPOAuthClientMetadata {
  /** Shown to the user on the consent screen (default `ax-mcp`). */
  clientName?: string;
  clientUri?: string;
  logoUri?: string;
  /** `native` (CLI, desktop, loopback redirect) or `web`; guessed from the redirect URI by default. */
  applicationType?: 'native' | 'web';
  softwareId?: string;
  softwareVersion?: string;
}

/** The shape of {@link AxMCPOAuthClientMetadata}. */
export const CLIENT_METADATA = object(
  {
    clientName: string(),
    clientUri: string({ nonEmpty: true }),
    logoUri: string({ nonEmpty: true }),
    applicationType: oneOf('native', 'web'),
    softwareId: string(),
    softwareVersion: string(),
  },
  {
    aliases: {
      name: 'clientName',
      client_name: 'clientName',
      clientUrl: 'clientUri',
      logoUrl: 'logoUri',
      application_type: 'applicationType',
    },
  },
);

/** The shape of a Client ID Metadata Document URL: `https:`, with a path, no fragment. */
export const CLIENT_METADATA_URL = instance('an https: URL with a path and no fragment', isClientMetadataUrl);

/** A Client ID Metadata Document URL: `https`, with a path, without a fragment. */
function isClientMetadataUrl(url: unknown): boolean {
  if (typeof url !== 'string') return false;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  return parsed.protocol === 'https:' && parsed.pathname !== '/' && parsed.hash === '';
}
/** `native` for loopback and custom-scheme redirects (CLI, desktop), `web` otherwise. */
export function applicationTypeOf(redirectUri: string | undefined): 'native' | 'web' {
  if (redirectUri === undefined) return 'native';
  try {
    const url = new URL(redirectUri);
    if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'native';
    const host = url.hostname.replace(/^\[|\]$/g, '');
    return host === 'localhost' || host === '::1' || /^127\./.test(host) || host.endsWith('.localhost')
      ? 'native'
      : 'web';
  } catch {
    return 'native';
  }
}

/** The optional descriptive fields of `metadata`, as registration and the metadata document name them. */
export function describedFields(metadata: AxMCPOAuthClientMetadata): Record<string, string> {
  const fields: Record<string, string> = {};
  if (metadata.clientUri !== undefined) fields.client_uri = metadata.clientUri;
  if (metadata.logoUri !== undefined) fields.logo_uri = metadata.logoUri;
  if (metadata.softwareId !== undefined) fields.software_id = metadata.softwareId;
  if (metadata.softwareVersion !== undefined) fields.software_version = metadata.softwareVersion;
  return fields;
}

/** Options of {@link axMCPClientMetadataDocument}. */
export interface AxMCPClientMetadataDocumentOptions {
  /** Where the document is served: the client id (`https:`, with a path). */
  clientMetadataUrl: string;
  /** The redirect URIs the client uses (at least one). */
  redirectUris: readonly string[];
  metadata?: AxMCPOAuthClientMetadata;
  /** Default `['authorization_code', 'refresh_token']`. */
  grantTypes?: readonly string[];
}

/** The shape of {@link AxMCPClientMetadataDocumentOptions}. */
const CLIENT_METADATA_DOCUMENT_OPTIONS = object(
  {
    clientMetadataUrl: required(CLIENT_METADATA_URL),
    redirectUris: required(array(string({ nonEmpty: true }), { minLength: 1 })),
    metadata: CLIENT_METADATA,
    grantTypes: array(string({ nonEmpty: true })),
  },
  { aliases: { redirectUri: 'redirectUris', redirect_uris: 'redirectUris', clientId: 'clientMetadataUrl' } },
);

/** A Client ID Metadata Document for this client, to serve at `clientMetadataUrl`. */
export function axMCPClientMetadataDocument(
  options: AxMCPClientMetadataDocumentOptions,
): Record<string, unknown> {
  assertMCPOptions(CLIENT_METADATA_DOCUMENT_OPTIONS, options, 'axMCPClientMetadataDocument options');
  const metadata = options.metadata ?? {};
  const document: Record<string, unknown> = {
    client_id: options.clientMetadataUrl,
    client_name: metadata.clientName ?? 'ax-mcp',
    redirect_uris: [...options.redirectUris],
    grant_types: [...(options.grantTypes ?? ['authorization_code', 'refresh_token'])],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
    application_type: metadata.applicationType ?? applicationTypeOf(options.redirectUris[0]),
  };
  Object.assign(document, describedFields(metadata));
  return document;
}
