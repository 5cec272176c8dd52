import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { User } from '../../core/auth/users.js';
import { buildTestContext } from '../../testing/test-context.js';
import { createTrialStore } from '../store/trial-store.js';
import type { TrialField } from '../store/types.js';
import { createSkillTools } from './skill-tools.js';

const PROJECT = 'dq-many';
const field = (fieldName: string, fieldType: TrialField['fieldType']): TrialField => ({ fieldName, formName: 'enrolment', fieldType, label: fieldName, choices: [], validationMin: null, validationMax: null, required: false });

/**
 * The import's preview lists a rule reading an identifier field the actor may not see as refused, as the import
 * would refuse it. The refusal's `reads` stop at 50; a site with more such rules (date checks on a birth date)
 * was promised the ones past the 50th.
 */
describe('the REDCap rule import preview for someone who may not see identifiers', () => {
  let ctx: Awaited<ReturnType<typeof buildTestContext>>;
  let coordinator: User;

  beforeAll(async () => {
    ctx = await buildTestContext({ engine: 'pglite' });
    await ctx.users.createProject({ id: PROJECT, name: 'Many rules' });
    coordinator = (await ctx.users.create({ name: 'dq-many-crc', role: 'coordinator' })).user;
    await ctx.users.addMember(PROJECT, coordinator.id);
    const store = createTrialStore(ctx.db);
    await store.replaceDictionary(PROJECT, [field('record_id', 'text'), field('dob', 'date'), field('age', 'integer')], 'test');
    await ctx.db.execute(sql`UPDATE trial_fields SET identifier = true WHERE project_id = ${PROJECT} AND field_name = 'dob'`);
  });

  afterAll(async () => {
    await ctx?.close();
  });

  it('marks every rule reading the identifier refused, past the first 50 too', async () => {
    const tools = createSkillTools({ db: ctx.db, users: ctx.users, tools: ctx.tools, activeSkills: () => [] });
    const rules = [{ name: 'Age set', logic: "[age] = ''" }, ...Array.from({ length: 60 }, (_, i) => ({ name: `Born before ${1900 + i}`, logic: `[dob] < '${1900 + i}-01-01'` }))];
    const preview = await tools.importRedcapRules(coordinator, PROJECT, { rules, skillId: 'site-dq', name: 'Site DQ', preview: true });
    expect('rules' in preview && preview.rules.map((rule) => rule.status)).toEqual(['importable', ...Array<string>(60).fill('refused')]);
    expect(preview.imported).toBe(1);
  });
});
