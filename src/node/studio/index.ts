/** The ax-mcp studio: a local web app over live clients, a runtime and a store. */
export { type AxStudio, type AxStudioOptions, startStudio } from './server.js';
