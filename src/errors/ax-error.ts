/**
 * The root of every error ax-mcp throws: `AxMCPError`, `AxEventError`, `AxProgramError` and
 * `AxAIError` all extend it, so one `catch (error) { if (error instanceof AxError) … error.code }`
 * covers the package. The class is branded with a registered symbol: `instanceof AxError` holds
 * even when two copies of the package are installed side by side (each has its own class).
 */

const BRAND = Symbol.for('ax-mcp.error');

/** What every ax-mcp error carries: a stable string `code`; match on it, not on messages. */
export class AxError extends Error {
  /** The stable code (each layer narrows its type). */
  readonly code: string;

  constructor(code: string, message: string, options: { cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    Object.defineProperty(this, BRAND, { value: true });
  }

  /** `AxError` itself recognizes the brand; its subclasses keep ordinary `instanceof`. */
  static override [Symbol.hasInstance](value: unknown): boolean {
    // biome-ignore lint/complexity/noThisInStatic: which class is asked is the point: a subclass keeps the plain check.
    if (this !== AxError) return Function.prototype[Symbol.hasInstance].call(this, value);
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[BRAND] === true;
  }
}
