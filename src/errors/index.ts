/** The root of every error ax-mcp throws. */
export { AxError } from './ax-error.js';
