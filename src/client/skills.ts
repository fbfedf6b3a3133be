import { parse as parseYAML } from 'yaml';
import { AxMCPError, AxMCPProtocolError, RPC } from '../protocol/errors.js';
import { isObject } from '../protocol/json.js';
import type { AxMCPResourceContents } from '../protocol/messages.js';

/** The Skills extension (SEP-2640) identifier. */
export { SKILLS_EXTENSION } from '../protocol/meta.js';

/** One file of a skill, with what it must hash and weigh. */
export interface AxMCPSkillFile {
  uri: string;
  /** `sha256:<hex>` of the file's bytes. */
  digest?: string;
  /** The file's length in bytes. */
  size?: number;
}

/** A skill as the server lists it: where its `SKILL.md` is, its frontmatter, its files. */
export interface AxMCPSkill {
  /** `skill://<skill-path>/SKILL.md`. */
  uri: string;
  frontmatter: Record<string, unknown>;
  /** The files and their digests, or `dynamic` when the server cannot say in advance. */
  resources: AxMCPSkillFile[] | 'dynamic';
  _meta?: Record<string, unknown>;
}

/** A skill whose `SKILL.md` was fetched and verified against its listing. */
export interface AxMCPLoadedSkill {
  skill: AxMCPSkill;
  /** The verified `SKILL.md` text. */
  text: string;
  /** Its parsed frontmatter (identical in content to the listing's). */
  frontmatter: Record<string, unknown>;
}

/** Fetched skill content failed verification: it was not used. */
export class AxMCPSkillVerificationError extends AxMCPError {
  readonly uri: string;
  constructor(uri: string, reason: string) {
    super('protocol_error', `Skill file ${uri} failed verification: ${reason}`);
    this.uri = uri;
  }
}

function invalid(what: string): AxMCPProtocolError {
  return new AxMCPProtocolError(RPC.invalidParams, `Server sent an invalid skill ${what}`, undefined, {
    code: 'invalid_message',
  });
}

/** Validates one skill entry from `skills/list` or `skills/get`. */
export function parseSkill(value: unknown): AxMCPSkill {
  if (!isObject(value) || typeof value.uri !== 'string') throw invalid('entry (no uri)');
  if (!isObject(value.frontmatter)) throw invalid(`entry ${value.uri} (no frontmatter)`);
  let resources: AxMCPSkill['resources'];
  if (value.resources === 'dynamic') resources = 'dynamic';
  else if (Array.isArray(value.resources)) {
    resources = value.resources.map((file) => {
      if (!isObject(file) || typeof file.uri !== 'string') throw invalid(`file in ${value.uri}`);
      const entry: AxMCPSkillFile = { uri: file.uri };
      if (typeof file.digest === 'string') entry.digest = file.digest;
      if (typeof file.size === 'number') entry.size = file.size;
      return entry;
    });
  } else throw invalid(`entry ${value.uri} (resources must be a list or "dynamic")`);
  const skill: AxMCPSkill = { uri: value.uri, frontmatter: value.frontmatter, resources };
  if (isObject(value._meta)) skill._meta = value._meta;
  return skill;
}

/** The bytes a read returned: UTF-8 of `text`, or the decoded `blob`. */
export function contentBytes(contents: AxMCPResourceContents): Uint8Array<ArrayBuffer> {
  if ('text' in contents && typeof contents.text === 'string') return new TextEncoder().encode(contents.text);
  const binary = atob((contents as { blob: string }).blob);
  return Uint8Array.from(binary, (char) => char.charCodeAt(0));
}

/**
 * Checks fetched bytes against the listing: size first (a mismatch is a failure whether
 * or not the digest is computed), then the SHA-256 digest.
 */
export async function verifySkillFile(file: AxMCPSkillFile, bytes: Uint8Array<ArrayBuffer>): Promise<void> {
  if (file.size !== undefined && bytes.byteLength !== file.size) {
    throw new AxMCPSkillVerificationError(file.uri, `${bytes.byteLength} bytes, listed as ${file.size}`);
  }
  if (file.digest === undefined) return;
  const match = /^sha256:([0-9a-f]{64})$/i.exec(file.digest);
  if (!match)
    throw new AxMCPSkillVerificationError(file.uri, `unsupported digest "${file.digest.slice(0, 80)}"`);
  const hash = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes));
  const hex = Array.from(hash, (byte) => byte.toString(16).padStart(2, '0')).join('');
  if (hex !== match[1]?.toLowerCase()) throw new AxMCPSkillVerificationError(file.uri, 'digest mismatch');
}

/** The YAML frontmatter at the top of a `SKILL.md`, or undefined when there is none. */
export function skillFrontmatter(text: string): Record<string, unknown> | undefined {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const match = /^---\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/.exec(body);
  if (!match) return undefined;
  try {
    // YAML is data here: no custom tags, no merge keys from the server.
    const parsed: unknown = parseYAML(match[1] as string, {
      schema: 'core',
      merge: false,
      maxAliasCount: 100,
    });
    return isObject(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/** Field-by-field comparison of the file's frontmatter with the listing's; the first difference. */
export function frontmatterDifference(
  file: Record<string, unknown>,
  listed: Record<string, unknown>,
): string | undefined {
  for (const key of new Set([...Object.keys(file), ...Object.keys(listed)])) {
    if (!sameJSON(file[key] ?? null, listed[key] ?? null))
      return `frontmatter field "${key}" differs from the listing`;
  }
  return undefined;
}

function sameJSON(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a instanceof Date) return sameJSON(a.toISOString(), b);
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const keysA = Object.keys(a);
  const keysB = Object.keys(b);
  if (keysA.length !== keysB.length) return false;
  return keysA.every((key) =>
    sameJSON((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]),
  );
}

/** The listing entry of `uri` within a skill, when the server listed its files. */
export function listedFile(skill: AxMCPSkill, uri: string): AxMCPSkillFile | undefined {
  return skill.resources === 'dynamic' ? undefined : skill.resources.find((file) => file.uri === uri);
}
