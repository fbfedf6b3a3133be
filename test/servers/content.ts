/**
 * Fixed payloads the test peers serve: a 1×1 PNG, a tiny WAV, and the "every content block kind"
 * tool result. Plain JSON so both SDK versions can return them.
 */

/** A valid 1×1 PNG, base64. */
export const TINY_PNG_BASE64 =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

/** A valid 8 kHz, 8-bit mono PCM WAV with 8 samples of silence, base64. */
export const TINY_WAV_BASE64 = (() => {
  const samples = 8;
  const wav = Buffer.alloc(44 + samples);
  wav.write('RIFF', 0, 'ascii');
  wav.writeUInt32LE(36 + samples, 4);
  wav.write('WAVE', 8, 'ascii');
  wav.write('fmt ', 12, 'ascii');
  wav.writeUInt32LE(16, 16); // fmt chunk size
  wav.writeUInt16LE(1, 20); // PCM
  wav.writeUInt16LE(1, 22); // mono
  wav.writeUInt32LE(8_000, 24); // sample rate
  wav.writeUInt32LE(8_000, 28); // byte rate
  wav.writeUInt16LE(1, 32); // block align
  wav.writeUInt16LE(8, 34); // bits per sample
  wav.write('data', 36, 'ascii');
  wav.writeUInt32LE(samples, 40);
  wav.fill(0x80, 44);
  return wav.toString('base64');
})();

/** Bytes of the embedded blob resource in the all-content result. */
export const EMBEDDED_BLOB_BASE64 = Buffer.from([0, 1, 2, 3, 254, 255]).toString('base64');

/** The `structuredContent` of the all-content result. */
export const ALL_CONTENT_STRUCTURED = {
  kinds: ['text', 'image', 'audio', 'resource_link', 'resource', 'resource'],
  count: 6,
} as const;

/** The `_meta` of the all-content result. */
export const ALL_CONTENT_META = { 'example.com/trace-id': 'all-content-1' } as const;

/**
 * A `tools/call` result with one block of each kind: text (with annotations), image (PNG),
 * audio (WAV), resource_link, embedded text resource, embedded blob resource; plus
 * `structuredContent` and `_meta`.
 */
export function allContentResult() {
  return {
    content: [
      {
        type: 'text' as const,
        text: 'plain text block',
        annotations: { audience: ['user' as const], priority: 0.5 },
      },
      { type: 'image' as const, data: TINY_PNG_BASE64, mimeType: 'image/png' },
      { type: 'audio' as const, data: TINY_WAV_BASE64, mimeType: 'audio/wav' },
      {
        type: 'resource_link' as const,
        uri: 'res://text/hello',
        name: 'hello',
        mimeType: 'text/plain',
        description: 'A link to the hello resource',
      },
      {
        type: 'resource' as const,
        resource: { uri: 'res://embedded/text', mimeType: 'text/plain', text: 'embedded text' },
      },
      {
        type: 'resource' as const,
        resource: {
          uri: 'res://embedded/blob',
          mimeType: 'application/octet-stream',
          blob: EMBEDDED_BLOB_BASE64,
        },
      },
    ],
    structuredContent: { kinds: [...ALL_CONTENT_STRUCTURED.kinds], count: ALL_CONTENT_STRUCTURED.count },
    _meta: { ...ALL_CONTENT_META },
  };
}

/** Names offered by the prompt-argument completion (`greeting.name`). */
export const GREETING_NAMES = ['Ada', 'Alan', 'Alonzo', 'Barbara', 'Grace', 'Linus'] as const;

/** Styles offered by the prompt-argument completion (`greeting.style`). */
export const GREETING_STYLES = ['formal', 'casual', 'pirate'] as const;

/** `requestedSchema` of the `elicit` tool. */
export const ELICIT_SCHEMA = {
  type: 'object' as const,
  properties: {
    name: { type: 'string' as const, title: 'Name' },
    age: { type: 'integer' as const, title: 'Age', minimum: 0 },
  },
  required: ['name'],
};

/** `requestedSchema` of the `elicit_defaults` tool: every field has a default. */
export const ELICIT_DEFAULTS_SCHEMA = {
  type: 'object' as const,
  properties: {
    name: { type: 'string' as const, title: 'Name', default: 'Ada' },
    newsletter: { type: 'boolean' as const, title: 'Newsletter', default: true },
    color: { type: 'string' as const, title: 'Color', enum: ['red', 'green', 'blue'], default: 'green' },
    count: { type: 'integer' as const, title: 'Count', minimum: 1, maximum: 10, default: 3 },
  },
};

/** A text `tools/call` result. */
export function textResult(text: string, isError = false) {
  return isError
    ? { content: [{ type: 'text' as const, text }], isError: true }
    : { content: [{ type: 'text' as const, text }] };
}

/** Opaque cursor for offset pagination of one list kind. */
export function encodeCursor(kind: string, offset: number): string {
  return Buffer.from(`${kind}:${offset}`, 'utf8').toString('base64url');
}

/** The offset of a cursor made by `encodeCursor(kind, …)`, or `undefined` when it is not one. */
export function decodeCursor(kind: string, cursor: string): number | undefined {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const match = /^([a-z]+):(\d{1,9})$/.exec(text);
  if (match === null || match[1] !== kind) return undefined;
  return Number(match[2]);
}

/** One page of `items` starting at `cursor` (undefined → first page). Throws on a bad cursor. */
export function paginate<T>(kind: string, items: readonly T[], cursor: string | undefined, pageSize: number) {
  const offset = cursor === undefined ? 0 : decodeCursor(kind, cursor);
  if (offset === undefined || offset > items.length) throw new RangeError(`Invalid ${kind} cursor`);
  const page = items.slice(offset, offset + pageSize);
  const next = offset + pageSize;
  return { page, nextCursor: next < items.length ? encodeCursor(kind, next) : undefined };
}
