/**
 * How many `AbortController`s `body` makes: the global constructor is swapped for a counting
 * subclass while it runs (code that reads `AbortController` at call time is counted).
 */
export async function countAbortControllers(body: () => unknown): Promise<number> {
  const Real = globalThis.AbortController;
  let made = 0;
  globalThis.AbortController = class extends Real {
    constructor() {
      super();
      made++;
    }
  };
  try {
    await body();
  } finally {
    globalThis.AbortController = Real;
  }
  return made;
}
