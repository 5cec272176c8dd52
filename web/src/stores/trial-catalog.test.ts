import { describe, expect, it } from 'vitest';
import type { QcSkill } from '../api';
import { skillsOfTrial } from './trial-catalog';

// The fields skillsOfTrial reads of a skill: its id, status and trials.
const skill = (id: string, status: string, projects: string[] | null) => ({ id, status, projects }) as unknown as QcSkill;

describe('the skills a trial lists', () => {
  it('lists those for this trial or for every trial, and invalid files, never another trial\'s', () => {
    const skills = [skill('mine', 'active', ['trial-a']), skill('theirs', 'active', ['trial-b']), skill('everyone', 'active', null), skill('broken', 'invalid', null)];
    expect(skillsOfTrial(skills, 'trial-a').map((s) => s.id)).toEqual(['mine', 'everyone', 'broken']);
  });
});
