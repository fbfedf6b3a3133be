/**
 * Errors nobody listens for. A component whose caller gave no `onError` must still not drop
 * what went wrong without a word — a failed subscription restore, an unpublished notification
 * and a route that can never match all looked like a quiet server. The first error of each kind
 * is written as a warning; later ones of that kind are not, so a failure that repeats does not
 * flood the log.
 */
export class UnheardErrors {
  readonly #told = new Set<string>();
  readonly #who: string;
  readonly #option: string;
  readonly #warn: (message: string) => void;

  /**
   * @param who the component, as the warning names it (`client "docs" (https://…)`)
   * @param option where to listen instead (`onError to AxMCPClient`)
   * @param warn where warnings go
   */
  constructor(who: string, option: string, warn: (message: string) => void) {
    this.#who = who;
    this.#option = option;
    this.#warn = warn;
  }

  /** `onError` when one was given (a throw of its own swallowed), else {@link UnheardErrors.tell}. */
  reporter(onError: ((error: unknown) => void) | undefined): (error: unknown) => void {
    if (!onError) return (error) => this.tell(error);
    return (error) => {
      try {
        onError(error);
      } catch {
        // The error sink itself failed; there is nowhere left to report to.
      }
    };
  }

  /** Warns of `error` unless an error of its kind (`where` included) was told already. Never throws. */
  tell(error: unknown, where = ''): void {
    const kind = errorKind(error);
    const key = `${where} ${kind}`;
    if (this.#told.has(key)) return;
    this.#told.add(key);
    const text = error instanceof Error ? error.message : String(error);
    const context = where === '' ? '' : ` (${where})`;
    try {
      this.#warn(
        `ax-mcp: ${this.#who}${context}: ${text} [${kind}]. Nothing awaited this error and no onError option ` +
          `was given; later errors of this kind are not told again. Pass ${this.#option} to hear each of them.`,
      );
    } catch {
      // A warning sink that throws has nowhere left to report to.
    }
  }
}

/**
 * An error's kind, as the once-only warning counts it: its class, its stable `code`, and a
 * protocol error's JSON-RPC code (unreadable JSON and a notification without its field are two
 * kinds).
 */
function errorKind(error: unknown): string {
  if (!(error instanceof Error)) return typeof error;
  const { code, rpcCode } = error as { code?: unknown; rpcCode?: unknown };
  let kind = error.name;
  if (typeof code === 'string') kind += ` ${code}`;
  if (typeof rpcCode === 'number') kind += ` ${rpcCode}`;
  return kind;
}
