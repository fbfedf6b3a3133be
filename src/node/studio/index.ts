/** The ax-mcp studio: a local web app over live clients, a runtime and a store. */

export {
  type AxStudioElicitation,
  type AxStudioElicitationChange,
  type AxStudioElicitationEnd,
  type AxStudioElicitationOptions,
  type AxStudioPendingElicitation,
  axStudioElicitation,
} from './elicitation.js';
export {
  type AxStudioRecording,
  type AxStudioRecordingOptions,
  AxStudioRecordingTransport,
} from './recording-transport.js';
export { type AxStudio, type AxStudioOptions, startStudio } from './server.js';
