/** Options checking shared by every layer: shapes, issues and the words of the error. */
export type { AxOptionsIssue } from './check.js';
