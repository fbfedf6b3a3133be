/**
 * A single-consumer async queue: producers push from callbacks (stream deltas, MCP
 * progress), the consumer iterates until the queue is closed. Internal.
 */
export class AsyncChannel<T> {
  readonly #items: T[] = [];
  #wake: (() => void) | undefined;
  #closed = false;
  #error: { error: unknown } | undefined;

  push(item: T): void {
    if (this.#closed) return;
    this.#items.push(item);
    this.#notify();
  }

  /** Ends the iteration after the queued items; with an error, the iteration throws it. */
  close(error?: { error: unknown }): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#error = error;
    this.#notify();
  }

  async *drain(): AsyncGenerator<T> {
    for (;;) {
      while (this.#items.length > 0) yield this.#items.shift() as T;
      if (this.#closed) {
        if (this.#error) throw this.#error.error;
        return;
      }
      await new Promise<void>((resolve) => {
        this.#wake = resolve;
      });
    }
  }

  #notify(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }
}
