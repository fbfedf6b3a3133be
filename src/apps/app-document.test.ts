import { describe, expect, it } from 'vitest';
import { AX_MCP_APP_MIME_TYPE, appDocumentFrom, appResourceUri, appToolVisibility } from './app-document.js';

describe('app documents', () => {
  it('finds the ui:// resource of a tool (also the deprecated flat key) and its visibility', () => {
    const tool = { name: 't', inputSchema: { type: 'object' as const } };
    expect(appResourceUri({ ...tool, _meta: { ui: { resourceUri: 'ui://a/b' } } })).toBe('ui://a/b');
    expect(appResourceUri({ ...tool, _meta: { 'ui/resourceUri': 'ui://a/c' } })).toBe('ui://a/c');
    expect(appResourceUri({ ...tool, _meta: { ui: { resourceUri: 'https://a/b' } } })).toBeUndefined();
    expect(appToolVisibility(tool)).toEqual(['model', 'app']);
    expect(appToolVisibility({ ...tool, _meta: { ui: { visibility: ['app', 'other'] } } })).toEqual(['app']);
  });

  it('uses the restrictive default CSP, drops invalid sources, and puts the CSP before any script', () => {
    const app = appDocumentFrom('ui://a/b', [
      {
        uri: 'ui://a/b',
        mimeType: AX_MCP_APP_MIME_TYPE,
        text: '<html><head><script>1</script></head></html>',
        _meta: { ui: { csp: { resourceDomains: ['https://cdn.example.com', 'https://x; script-src *'] } } },
      },
    ]);
    expect(app.csp).toContain("script-src 'self' 'unsafe-inline' https://cdn.example.com");
    expect(app.csp).toContain("connect-src 'none'");
    expect(app.csp).not.toContain('script-src *');
    expect(app.refused).toHaveLength(1);
    expect(app.html.startsWith('<html><head><meta http-equiv="Content-Security-Policy"')).toBe(true);
    expect(app.permissionsPolicy).toContain('camera=()');
  });

  it('refuses a resource that is not text/html;profile=mcp-app, and decodes a base64 blob', () => {
    expect(() =>
      appDocumentFrom('ui://a/b', [{ uri: 'ui://a/b', mimeType: 'text/html', text: '<p>' }]),
    ).toThrow(/not text\/html;profile=mcp-app/);
    const blob = btoa('<p>hi</p>');
    expect(
      appDocumentFrom('ui://a/b', [{ uri: 'ui://a/b', mimeType: AX_MCP_APP_MIME_TYPE, blob }]).html,
    ).toContain('<p>hi</p>');
  });
});
