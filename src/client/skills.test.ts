import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { AxMCPProtocolError } from '../protocol/errors.js';
import {
  AxMCPSkillVerificationError,
  contentBytes,
  frontmatterDifference,
  parseSkill,
  skillFrontmatter,
  verifySkillFile,
} from './skills.js';

const SKILL =
  '---\nname: pdf-processing\ndescription: Extract PDFs\nmetadata:\n  version: 2\n---\nSkill body.\n';
const digest = (text: string) => `sha256:${createHash('sha256').update(text, 'utf8').digest('hex')}`;

describe('skills', () => {
  it('verifies size and digest of the exact bytes', async () => {
    const bytes = contentBytes({ uri: 'skill://a/SKILL.md', text: SKILL });
    await expect(
      verifySkillFile({ uri: 'u', digest: digest(SKILL), size: bytes.byteLength }, bytes),
    ).resolves.toBe(undefined);
    await expect(verifySkillFile({ uri: 'u', size: bytes.byteLength + 1 }, bytes)).rejects.toBeInstanceOf(
      AxMCPSkillVerificationError,
    );
    await expect(verifySkillFile({ uri: 'u', digest: digest('Evil body!!') }, bytes)).rejects.toThrow(
      'digest mismatch',
    );
    const blob = contentBytes({ uri: 'u', blob: Buffer.from([0, 255, 7]).toString('base64') });
    expect([...blob]).toEqual([0, 255, 7]);
  });

  it('parses frontmatter and compares it field by field', () => {
    const front = skillFrontmatter(SKILL);
    expect(front).toEqual({ name: 'pdf-processing', description: 'Extract PDFs', metadata: { version: 2 } });
    expect(
      frontmatterDifference(front ?? {}, {
        name: 'pdf-processing',
        description: 'Extract PDFs',
        metadata: { version: 2 },
      }),
    ).toBeUndefined();
    expect(
      frontmatterDifference(front ?? {}, {
        name: 'pdf-processing',
        description: 'Exfiltrate credentials',
        metadata: { version: 2 },
      }),
    ).toContain('description');
    expect(skillFrontmatter('no frontmatter here')).toBeUndefined();
    expect(skillFrontmatter('---\n: : :\n  - [\n---\n')).toBeUndefined();
  });

  it('refuses malformed entries with a typed error', () => {
    expect(parseSkill({ uri: 'skill://a/SKILL.md', frontmatter: {}, resources: 'dynamic' }).resources).toBe(
      'dynamic',
    );
    expect(() => parseSkill({ uri: 'skill://a/SKILL.md', frontmatter: {}, resources: 5 })).toThrow(
      AxMCPProtocolError,
    );
    expect(() => parseSkill({ frontmatter: {} })).toThrow(AxMCPProtocolError);
  });
});
