/** The guided tour; the full demo arrives with the demo server. */
export async function runDemo(out: (text: string) => void): Promise<number> {
  out('The ax-mcp demo is being assembled; run `ax-mcp inspect <endpoint>` meanwhile.');
  return 0;
}
