// @ts-check
/**
 * What both chaos servers share: their settings from the environment, a seeded random number
 * generator, the synchronous JSON-lines log, and the per-URI sequence numbers continued from
 * that log across restarts (a SIGKILLed predecessor's last line may be torn).
 */
import { appendFileSync, existsSync, readFileSync } from 'node:fs';

/** @param {string} uriPrefix the resources' URI prefix, e.g. `chaos://r/` */
export function chaosServerBasics(uriPrefix) {
  const port = Number(process.env.PORT);
  const logFile = String(process.env.CHAOS_LOG);
  const uriCount = Number(process.env.CHAOS_URIS ?? 4);
  const emitMs = Number(process.env.CHAOS_EMIT_MS ?? 40);
  let rng = Number(process.env.CHAOS_SEED ?? 1) >>> 0;
  // mulberry32: the same schedule for the same seed.
  const random = () => {
    rng = (rng + 0x6d2b79f5) >>> 0;
    let t = rng;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const now = () => Number(process.hrtime.bigint()) / 1e6;
  const log = (/** @type {Record<string, unknown>} */ entry) =>
    appendFileSync(logFile, `${JSON.stringify(entry)}\n`);
  const URIS = Array.from({ length: uriCount }, (_, i) => `${uriPrefix}${i}`);
  /** The last sequence number per URI, continued from the log across restarts. */
  const seqs = new Map(URIS.map((uri) => [uri, 0]));
  if (existsSync(logFile)) {
    for (const line of readFileSync(logFile, 'utf8').split('\n')) {
      if (!line.includes('"seq"')) continue;
      try {
        const entry = JSON.parse(line);
        if (typeof entry.seq === 'number' && entry.seq > (seqs.get(entry.uri) ?? 0))
          seqs.set(entry.uri, entry.seq);
      } catch {
        // a torn last line of a killed predecessor
      }
    }
  }
  log({ t: 'start', pid: process.pid, at: now() });
  return { port, emitMs, random, now, log, URIS, seqs };
}
