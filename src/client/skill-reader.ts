/**
 * The Skills extension (SEP-2640) on a client: listing skills, and loading a skill's files
 * only after they were verified against the listing (size, digest, frontmatter).
 */
import { AxMCPProtocolError, RPC } from '../protocol/errors.js';
import type { AxMCPReadResourceResult, AxMCPResourceContents } from '../protocol/messages.js';
import { type AxMCPCallOptions, callOptions, type SendRequest } from './in-flight.js';
import {
  type AxMCPLoadedSkill,
  type AxMCPSkill,
  AxMCPSkillVerificationError,
  contentBytes,
  frontmatterDifference,
  listedFile,
  parseSkill,
  skillFrontmatter,
  verifySkillFile,
} from './skills.js';

/** What the reader needs of its client. */
export interface SkillReaderDeps {
  init(signal?: AbortSignal): Promise<void>;
  send(request: SendRequest): Promise<Record<string, unknown>>;
  readResource(uri: string, options: AxMCPCallOptions): Promise<AxMCPReadResourceResult>;
}

export class SkillReader {
  readonly #deps: SkillReaderDeps;

  constructor(deps: SkillReaderDeps) {
    this.#deps = deps;
  }

  async list(
    cursor: string | undefined,
    options: AxMCPCallOptions,
  ): Promise<{ skills: AxMCPSkill[]; nextCursor?: string }> {
    await this.#deps.init(options.signal);
    const result = await this.#deps.send({
      method: 'skills/list',
      params: cursor === undefined ? {} : { cursor },
      idempotent: true,
      ...callOptions(options),
    });
    if (!Array.isArray(result.skills)) {
      throw new AxMCPProtocolError(
        RPC.invalidParams,
        'Server sent an invalid skills/list result',
        undefined,
        {
          code: 'invalid_message',
        },
      );
    }
    const skills = result.skills.map(parseSkill);
    return typeof result.nextCursor === 'string' && result.nextCursor !== ''
      ? { skills, nextCursor: result.nextCursor }
      : { skills };
  }

  async get(uri: string, options: AxMCPCallOptions): Promise<AxMCPSkill> {
    await this.#deps.init(options.signal);
    const result = await this.#deps.send({
      method: 'skills/get',
      params: { uri },
      idempotent: true,
      ...callOptions(options),
    });
    return parseSkill(result.skill);
  }

  async load(skill: AxMCPSkill, options: AxMCPCallOptions): Promise<AxMCPLoadedSkill> {
    const contents = await this.#contents(skill, skill.uri, options);
    if (!('text' in contents) || typeof contents.text !== 'string') {
      throw new AxMCPSkillVerificationError(skill.uri, 'SKILL.md is not text');
    }
    const frontmatter = skillFrontmatter(contents.text);
    if (!frontmatter) throw new AxMCPSkillVerificationError(skill.uri, 'SKILL.md has no YAML frontmatter');
    const difference = frontmatterDifference(frontmatter, skill.frontmatter);
    if (difference) throw new AxMCPSkillVerificationError(skill.uri, difference);
    return { skill, text: contents.text, frontmatter };
  }

  readFile(loaded: AxMCPLoadedSkill, uri: string, options: AxMCPCallOptions): Promise<AxMCPResourceContents> {
    return this.#contents(loaded.skill, uri, options);
  }

  async #contents(skill: AxMCPSkill, uri: string, options: AxMCPCallOptions): Promise<AxMCPResourceContents> {
    const read = await this.#deps.readResource(uri, options);
    const contents = read.contents.find((entry) => entry.uri === uri) ?? read.contents[0];
    if (!contents) throw new AxMCPSkillVerificationError(uri, 'the read returned no contents');
    const file = listedFile(skill, uri);
    if (file) await verifySkillFile(file, contentBytes(contents));
    return contents;
  }
}
