import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { SendRequest } from './in-flight.js';
import { SkillReader } from './skill-reader.js';
import { AxMCPSkillVerificationError } from './skills.js';

const SKILL = '---\nname: pdf\ndescription: Extract PDFs\n---\nBody.\n';
const digest = (text: string) => `sha256:${createHash('sha256').update(text, 'utf8').digest('hex')}`;
const ENTRY = {
  uri: 'skill://pdf/SKILL.md',
  frontmatter: { name: 'pdf', description: 'Extract PDFs' },
  resources: [{ uri: 'skill://pdf/SKILL.md', digest: digest(SKILL) }],
};

function reader(files: Record<string, string>, listed: unknown[] = [ENTRY]) {
  const sent: SendRequest[] = [];
  const reads: string[] = [];
  const skills = new SkillReader({
    init: async () => {},
    send: async (request) => {
      sent.push(request);
      if (request.method === 'skills/list') return { skills: listed, nextCursor: 'next' };
      return { skill: listed[0] };
    },
    readResource: async (uri) => {
      reads.push(uri);
      return { contents: [{ uri, text: files[uri] ?? '' }] };
    },
  });
  return { skills, sent, reads };
}

describe('SkillReader', () => {
  it('lists and gets skills as safe reads', async () => {
    const { skills, sent } = reader({});
    const page = await skills.list('c1', {});
    expect(page).toEqual({ skills: [ENTRY], nextCursor: 'next' });
    await skills.get(ENTRY.uri, {});
    expect(sent.map((request) => [request.method, request.idempotent, request.params])).toEqual([
      ['skills/list', true, { cursor: 'c1' }],
      ['skills/get', true, { uri: ENTRY.uri }],
    ]);
  });

  it('loads a skill whose bytes and frontmatter match its listing, and refuses one that does not', async () => {
    expect((await reader({ [ENTRY.uri]: SKILL }).skills.load(ENTRY, {})).frontmatter).toEqual(
      ENTRY.frontmatter,
    );
    const tampered = reader({ [ENTRY.uri]: SKILL.replace('Body', 'Evil') });
    await expect(tampered.skills.load(ENTRY, {})).rejects.toBeInstanceOf(AxMCPSkillVerificationError);
    const renamed = reader({ [ENTRY.uri]: SKILL });
    const other = { ...ENTRY, resources: [], frontmatter: { name: 'pdf', description: 'Steal keys' } };
    await expect(renamed.skills.load(other, {})).rejects.toThrow('description');
  });

  it('refuses a malformed listing with a typed error', async () => {
    const { skills } = reader({}, 'nope' as never);
    await expect(skills.list(undefined, {})).rejects.toMatchObject({ code: 'invalid_message' });
  });
});
