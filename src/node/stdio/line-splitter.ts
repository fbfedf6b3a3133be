/** Newline-delimited framing of a child's stdout and stderr, bounded per line. */

/**
 * Splits a byte stream at `\n` without holding more than `maxBytes` of one line: a longer
 * line is dropped (the overflow callback gets its head on demand) up to its newline.
 */
export class LineSplitter {
  #parts: Buffer[] = [];
  #size = 0;
  #discarding = false;

  constructor(
    readonly maxBytes: number,
    readonly onLine: (line: Buffer) => void,
    /** `head(limit)`: at most `limit` bytes of the line's start (at most `maxBytes`), copied on demand. */
    readonly onOverflow: (head: (limit: number) => Buffer) => void,
  ) {}

  push(chunk: Buffer): void {
    let start = 0;
    while (start < chunk.length) {
      const newline = chunk.indexOf(0x0a, start);
      const piece = chunk.subarray(start, newline === -1 ? chunk.length : newline);
      start = newline === -1 ? chunk.length : newline + 1;
      if (this.#discarding) {
        // The rest of an oversized line: skip it up to the newline.
        if (newline !== -1) this.#discarding = false;
        continue;
      }
      if (this.#size + piece.length > this.maxBytes) {
        this.#overflow(piece);
        this.#discarding = newline === -1;
        continue;
      }
      if (newline === -1) {
        // Copy: a subarray would pin the whole chunk until the line completes.
        this.#parts.push(Buffer.from(piece));
        this.#size += piece.length;
        continue;
      }
      const line = this.#size === 0 ? piece : Buffer.concat([...this.#parts, piece]);
      this.#parts = [];
      this.#size = 0;
      this.onLine(stripCR(line));
    }
  }

  /** Delivers a last line that had no newline (the stream ended). */
  flush(): void {
    if (!this.#discarding && this.#size > 0) {
      const line = Buffer.concat(this.#parts);
      this.#parts = [];
      this.#size = 0;
      this.onLine(stripCR(line));
    }
    this.#discarding = false;
  }

  #overflow(piece: Buffer): void {
    const parts = this.#parts;
    const room = Math.max(0, this.maxBytes - this.#size);
    this.#parts = [];
    this.#size = 0;
    this.onOverflow((limit) => {
      const head: Buffer[] = [];
      let left = Math.min(limit, this.maxBytes);
      for (const part of [...parts, piece.subarray(0, room)]) {
        if (left <= 0) break;
        head.push(part.length > left ? part.subarray(0, left) : part);
        left -= part.length;
      }
      return Buffer.concat(head);
    });
  }
}

function stripCR(line: Buffer): Buffer {
  return line.length > 0 && line[line.length - 1] === 0x0d ? line.subarray(0, line.length - 1) : line;
}
