/**
 * MCP Apps (`io.modelcontextprotocol/ui`): rendering a tool's `ui://` app safely and bridging
 * the view's messages to its server. Isomorphic: no `node:` imports.
 */
export {
  AX_MCP_APP_MIME_TYPE,
  AX_MCP_APPS_EXTENSION,
  AX_MCP_APPS_PROTOCOL_VERSIONS,
  type AxMCPAppCSP,
  type AxMCPAppDocument,
  type AxMCPAppPermissions,
  type AxMCPAppToolVisibility,
  appDocumentFrom,
  appResourceUri,
  appToolVisibility,
  contentSecurityPolicy,
} from './app-document.js';
export { AxMCPAppsExtensionTransport, declaresAxMCPApps, withAxMCPAppsExtension } from './apps-extension.js';
export { AxMCPAppBridge } from './bridge.js';
export type {
  AxMCPAppBridgeOptions,
  AxMCPAppDisplayMode,
  AxMCPAppModelContent,
  AxMCPAppRequest,
  AxMCPAppSource,
} from './bridge-options.js';
