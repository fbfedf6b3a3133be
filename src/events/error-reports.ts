/**
 * Where the event runtime's errors with no caller go: `onError`, or without it the console,
 * the first of each kind and place. Before, without `onError`, a source's failure, an
 * `authorize` hook that threw and a store failure in a worker loop went nowhere.
 */
import { UnheardErrors } from '../errors/unheard.js';
import type { AxEventErrorReport, AxEventRuntimeOptions } from './runtime-options.js';

/** Reports with no caller, as `who` (`event runtime`) tells them; `option` says where to listen. */
export type EventErrorReporter = (error: unknown, report: AxEventErrorReport) => void;

/** `onError` (a throw of its own swallowed); without it, the console, once per kind and place. */
export function eventErrorReporter(
  who: string,
  option: string,
  onError: AxEventRuntimeOptions['onError'],
): EventErrorReporter {
  if (onError) {
    return (error, report) => {
      try {
        onError(error, report);
      } catch {
        // An error handler that throws must not break the runtime.
      }
    };
  }
  const unheard = new UnheardErrors(who, option, (message) => console.warn(message));
  return (error, report) => {
    const place = unheardPlace(report);
    if (place !== null) unheard.tell(error, place);
  };
}

/**
 * Where a report came from, as the warning names it. A failed delivery is not written there
 * (`null`): it is on its run record and dead letter already.
 */
function unheardPlace(report: AxEventErrorReport): string | null {
  if (report.phase === 'delivery') return null;
  let place = `phase ${report.phase}`;
  if (report.sourceId !== undefined) place += `, source ${report.sourceId}`;
  if (report.routeId !== undefined) place += `, route ${report.routeId}`;
  return place;
}
