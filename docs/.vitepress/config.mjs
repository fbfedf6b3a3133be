// @ts-check
/**
 * The documentation site: `npm run docs` builds the TypeDoc API reference into docs/public/api/
 * and then this VitePress site into docs/.vitepress/dist/ (neither is committed).
 * `npm run docs:dev` serves it with live reload.
 */
import { defineConfig } from 'vitepress';

/** The pages in reading order: from the first call to the operations of a fleet. */
const guide = [
  { text: 'Getting started', link: '/getting-started' },
  { text: 'The client', link: '/client' },
  { text: 'Protocol eras', link: '/eras' },
  { text: 'Transports', link: '/transports' },
  { text: 'Authentication and OAuth', link: '/auth' },
  { text: 'Security', link: '/security' },
  { text: 'Subscriptions and troubleshooting', link: '/MCP_SUBSCRIPTIONS' },
];
const runtime = [
  { text: 'The event runtime', link: '/event-runtime' },
  { text: 'PostgreSQL and fleets', link: '/postgres' },
];
const programs = [
  { text: 'Programs', link: '/programs' },
  { text: 'Agents', link: '/agents' },
  { text: 'Flows', link: '/flows' },
  { text: 'Commerce beside MCP (UCP)', link: '/ucp' },
  { text: 'Testing: record, replay, evaluate', link: '/testing' },
  { text: 'MCP Apps', link: '/apps' },
  { text: 'Performance', link: '/performance' },
];
const reference = [
  { text: 'The CLI', link: '/cli' },
  { text: 'The studio', link: '/studio' },
  { text: 'Errors', link: '/errors' },
  { text: 'Tracing (OpenTelemetry)', link: '/tracing' },
  { text: 'API (TypeDoc)', link: '/api/index.html', target: '_self' },
  { text: 'Architecture', link: '/architecture' },
  { text: 'Contributing', link: '/CONTRIBUTING' },
];

export default defineConfig({
  title: 'ax-mcp',
  description: 'A live Model Context Protocol client for LLM programs',
  cleanUrls: true,
  lastUpdated: false,
  // The TypeDoc output is static HTML under /api/, not a VitePress page.
  ignoreDeadLinks: [/^\/api\//],
  themeConfig: {
    nav: [
      { text: 'Guide', link: '/getting-started' },
      { text: 'API', link: '/api/index.html', target: '_self' },
    ],
    sidebar: [
      { text: 'Guide', items: guide },
      { text: 'Events', items: runtime },
      { text: 'Programs', items: programs },
      { text: 'Reference', items: reference },
    ],
    search: { provider: 'local' },
    outline: [2, 3],
  },
});
