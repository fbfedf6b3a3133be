import type { AxMCPClient } from '../index.js';
import { table } from './table.js';

/** Prints era, server, capabilities and the catalog as tables (or JSON). */
export async function inspect(
  client: AxMCPClient,
  json: boolean,
  out: (text: string) => void,
): Promise<void> {
  const catalog = await client.inspectCatalog();
  if (json) {
    out(JSON.stringify(catalog, null, 2));
    return;
  }
  const server = catalog.serverInfo ? `${catalog.serverInfo.name} ${catalog.serverInfo.version}` : 'unknown';
  out(`Server     ${server}`);
  out(`Era        ${catalog.era} (${catalog.protocolVersion})`);
  out(`Offers     ${Object.keys(catalog.capabilities).sort().join(', ') || 'nothing'}`);
  if (catalog.instructions) out(`Notes      ${catalog.instructions.replace(/\s+/g, ' ').slice(0, 200)}`);
  const section = (title: string, headers: string[], rows: string[][]) => {
    if (rows.length === 0) return;
    out(`\n${title} (${rows.length})\n${table(headers, rows)}`);
  };
  section(
    'Tools',
    ['name', 'description'],
    catalog.tools.map((tool) => [tool.name, tool.description ?? '']),
  );
  section(
    'Prompts',
    ['name', 'arguments', 'description'],
    catalog.prompts.map((prompt) => [
      prompt.name,
      (prompt.arguments ?? []).map((arg) => (arg.required ? arg.name : `${arg.name}?`)).join(', '),
      prompt.description ?? '',
    ]),
  );
  section(
    'Resources',
    ['uri', 'name', 'mime type'],
    catalog.resources.map((resource) => [resource.uri, resource.name, resource.mimeType ?? '']),
  );
  section(
    'Resource templates (never expanded)',
    ['uri template', 'name'],
    catalog.resourceTemplates.map((template) => [template.uriTemplate, template.name]),
  );
}
