import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';

/**
 * One JSON document in a private file (mode 0600, its directory 0700 when created): read
 * whole, rewritten atomically (a temporary file, then a rename), writes serialized in call
 * order. A failed write fails its own caller only; the next one starts afresh.
 */
export class JSONFile {
  readonly path: string;
  #writing: Promise<void> = Promise.resolve();

  constructor(path: string) {
    this.path = path;
  }

  /** The parsed document; `undefined` when there is no file yet or it does not parse. */
  async read(): Promise<unknown> {
    try {
      return JSON.parse(await readFile(this.path, 'utf8'));
    } catch {
      return undefined;
    }
  }

  /** Writes `text` (the caller's serialization, taken now) after the writes before it. */
  write(text: string): Promise<void> {
    this.#writing = this.#writing
      .catch(() => undefined)
      .then(async () => {
        await mkdir(dirname(this.path), { recursive: true, mode: 0o700 });
        const temporary = `${this.path}.${process.pid}.tmp`;
        await writeFile(temporary, text, { mode: 0o600 });
        // writeFile keeps the mode of a temporary file left by a crashed run.
        await chmod(temporary, 0o600);
        await rename(temporary, this.path);
      });
    return this.#writing;
  }
}
