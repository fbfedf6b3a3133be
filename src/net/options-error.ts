/**
 * The error of a rule that goes beyond shapes (two options that exclude each other, an option
 * another one needs), in the same words and class as a shape problem: `invalid_options`.
 * Internal: shared by the layers of the MCP side (net, auth, transports, node stores).
 */
import { type AxOptionsIssue, describeIssues } from '../options/check.js';
import { type AxMCPErrorContext, AxMCPInvalidOptionsError } from '../protocol/errors.js';

/**
 * An {@link AxMCPInvalidOptionsError} for one issue: `label` names the options object
 * ("axMCPOAuth options"), `issue.path` the option as the user writes it.
 */
export function optionsError(
  label: string,
  issue: AxOptionsIssue,
  context: AxMCPErrorContext = {},
): AxMCPInvalidOptionsError {
  return new AxMCPInvalidOptionsError(
    { issues: [issue], message: `${label}: ${describeIssues([issue])}` },
    context,
  );
}

/**
 * The same problem, seen from the options object that holds the one it was found in: an
 * `axMCPOAuth` problem at `client` is `oauth.client` to the transport that built the strategy.
 */
export function nestedOptionsError(
  error: AxMCPInvalidOptionsError,
  prefix: string,
  label: string,
): AxMCPInvalidOptionsError {
  const issues = error.issues.map((issue) => ({ ...issue, path: `${prefix}.${issue.path}` }));
  return new AxMCPInvalidOptionsError(
    { issues, message: `${label}: ${describeIssues(issues)}` },
    { namespace: error.namespace, endpoint: error.endpoint, cause: error },
  );
}
