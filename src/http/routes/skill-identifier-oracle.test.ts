import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { count } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SkillDryRunResult } from '../../contract/index.js';
import { auditLog } from '../../core/db/schema/audit.js';
import { pendingActions, skillVersions, taskRuns } from '../../core/db/schema/trial.js';
import { buildTestContext } from '../../testing/test-context.js';
import { testEngines } from '../../testing/test-database.js';
import { importRedcapCsv } from '../../trial/import/import-redcap-csv.js';
import { createTrialStore } from '../../trial/store/trial-store.js';
import { buildServer } from '../server.js';

/*
 * Issue 32 (High): the skill dry run was a guess oracle for masked identifiers. A coordinator who sees `phone: null`
 * on the record page sent `{"!": {"matches": [{"var": "phone"}, "^3"]}}` with a recordId and read `fired: 1` or
 * `0`, a digit per request; without recordId, `^1991` on `dob` listed every subject born in 1991. Whoever may not
 * see a field's value must not learn it through anything they can make the system compute.
 */
const PROJECT = 'oracle';
const DICTIONARY = [
  'Variable / Field Name,Form Name,Section Header,Field Type,Field Label,"Choices, Calculations, OR Slider Labels",Field Note,Text Validation Type OR Show Slider Number,Text Validation Min,Text Validation Max,Identifier?,Branching Logic (Show field only if...),Required Field?',
  'record_id,enrolment,,text,Subject ID,,,,,,,,',
  'phone,enrolment,,text,Phone,,,,,,y,,',
  'dob,enrolment,,text,Date of birth,,,date_ymd,,,y,,',
  'contact,enrolment,,checkbox,Contact by,"1, Phone | 2, Mail",,,,,y,,',
  'sex,enrolment,,radio,Sex,"1, Male | 2, Female",,,,,,,',
  'sbp,visit,,text,Systolic BP,,,integer,,,,,',
].join('\n');
const EVENTS = 'event_name,arm_num,day_offset,offset_min,offset_max,unique_event_name,custom_event_label\nScreening,1,0,0,0,screening_arm_1,\nWeek 4,1,28,3,3,week4_arm_1,\n';
const ARMS = 'arm_num,name\n1,Arm 1\n';
const RECORDS = [
  'record_id,redcap_event_name,phone,dob,contact___1,contact___2,sex,sbp',
  'S1,screening_arm_1,3331234567,1991-04-02,1,0,1,',
  'S1,week4_arm_1,,,,,,150',
  'S2,screening_arm_1,2125550100,1985-07-09,0,1,2,',
  'S2,week4_arm_1,,,,,,120',
  'S3,screening_arm_1,3339876543,1991-11-30,1,1,2,',
].join('\n');

const skill = (logic: unknown, options: { id?: string; field?: string; rules?: unknown[] } = {}) => ({
  id: options.id ?? 'guess',
  name: 'Guess',
  projects: [PROJECT],
  start_node: 'hard',
  nodes: { hard: { type: 'hard_rule', rules: options.rules ?? [{ id: 'r1', field: options.field ?? 'sex', logic, message: 'Flagged' }], on_pass: 'end_ok', on_fail: 'end_flagged' } },
});
const PHONE_STARTS_3 = { '!': { matches: [{ var: 'phone' }, '^3'] } };
const BORN_1991 = { '!': { matches: [{ var: 'dob' }, '^1991'] } };
const SEX_IS_1 = { '!': { '==': [{ var: 'sex' }, '1'] } };

describe.each(testEngines())('a rule reading an identifier field is only for those who see identifiers (issue 32), on %s', (engine) => {
  let ctx: Awaited<ReturnType<typeof buildTestContext>>;
  let app: Awaited<ReturnType<typeof buildServer>>;
  let skillsDir: string;
  let coordinatorId: string;
  const auth: Record<'admin' | 'coordinator' | 'pi', { authorization: string }> = {} as never;

  beforeAll(async () => {
    skillsDir = mkdtempSync(path.join(tmpdir(), 'clinagent-oracle-'));
    ctx = await buildTestContext({ engine, env: { SKILLS_DIR: skillsDir } });
    app = await buildServer(ctx, { serveConsole: false });
    await ctx.users.createProject({ id: PROJECT, name: 'Oracle' });
    await importRedcapCsv(createTrialStore(ctx.db), PROJECT, { dictionaryCsv: DICTIONARY, eventsCsv: EVENTS, armsCsv: ARMS, recordsCsv: RECORDS }, 'dm.alice');
    for (const role of ['admin', 'coordinator', 'pi'] as const) {
      const { user, token } = await ctx.users.create({ name: `oracle-${role}`, role });
      if (role !== 'admin') await ctx.users.addMember(PROJECT, user.id);
      if (role === 'coordinator') coordinatorId = user.id;
      auth[role] = { authorization: `Bearer ${token}` };
    }
  });

  afterAll(async () => {
    await app?.close();
    await ctx?.close();
    if (skillsDir) rmSync(skillsDir, { recursive: true, force: true });
  });

  const tool = (route: 'dry-run' | 'impact' | 'import-redcap-rules', payload: object, who: keyof typeof auth = 'coordinator') =>
    app.inject({ method: 'POST', url: `/api/iit/projects/${PROJECT}/skills/${route}`, headers: auth[who], payload });
  const call = (who: keyof typeof auth, method: 'POST' | 'PUT' | 'PATCH', url: string, payload: object) => app.inject({ method, url, headers: auth[who], payload });
  const grant = (canViewIdentifiers: boolean) => call('admin', 'PATCH', `/api/projects/${PROJECT}/members/${coordinatorId}`, { canViewIdentifiers });
  const rowCounts = async () => ({
    taskRuns: (await ctx.db.select({ n: count() }).from(taskRuns))[0]!.n,
    queries: (await ctx.db.select({ n: count() }).from(pendingActions))[0]!.n,
    audit: (await ctx.db.select({ n: count() }).from(auditLog))[0]!.n,
    skillVersions: (await ctx.db.select({ n: count() }).from(skillVersions))[0]!.n,
  });
  const expectRefused = (response: Awaited<ReturnType<typeof tool>>, fields: string[]) => {
    expect(response.statusCode, response.body).toBe(403);
    const body = response.json() as { code: string; message: string; details: { fields: string[]; projectId: string } };
    expect(body.code).toBe('FORBIDDEN');
    expect(body.details).toMatchObject({ projectId: PROJECT, fields });
    for (const field of fields) expect(body.message).toContain(field);
    // How to get access, not only that it is missing.
    expect(body.message).toContain(`PATCH /api/projects/${PROJECT}/members/${coordinatorId}`);
    expect(body.message).not.toMatch(/3331234567|1991-04-02/);
    return body;
  };

  describe('the dry run, as the reporter used it', () => {
    it('refuses a coordinator without identifier access a guess at one record\'s phone, naming phone, and computes nothing', async () => {
      const before = await rowCounts();
      const response = await tool('dry-run', { definition: skill(PHONE_STARTS_3), recordId: 'S1' });
      const body = expectRefused(response, ['phone']);
      expect(body.message).toContain('dry-run');
      expect(body).not.toHaveProperty('fired');
      expect(await rowCounts()).toEqual(before);
    });

    it('refuses the whole-trial search for subjects born in 1991 (dob), as YAML too', async () => {
      expectRefused(await tool('dry-run', { definition: skill(BORN_1991) }), ['dob']);
      const yaml = `id: born\nname: Born\nprojects: [${PROJECT}]\nstart_node: hard\nnodes:\n  hard:\n    type: hard_rule\n    rules:\n      - { id: y1991, field: sex, logic: { "!": { matches: [{ var: dob }, "^1991"] } }, message: "1991" }\n    on_pass: end_ok\n    on_fail: end_flagged\n`;
      expectRefused(await tool('dry-run', { yaml }), ['dob']);
    });

    it('refuses every other way of reading an identifier: by visit, checkbox column, attached field, missing, val, get, computed names, whole objects, iterators', async () => {
      const ways: Array<[string, unknown, string[], string?]> = [
        ['an event-qualified name', { matches: [{ var: 'screening_arm_1.phone' }, '^3'] }, ['phone']],
        ['a var with a default', { matches: [{ var: ['phone', ''] }, '^3'] }, ['phone']],
        ['a checkbox column', { '==': [{ var: 'contact___1' }, '1'] }, ['contact']],
        ['missing', { missing: ['dob'] }, ['dob']],
        ['missing_some', { missing_some: [1, ['sex', 'phone']] }, ['phone']],
        ['val segments', { matches: [{ val: ['screening_arm_1', 'phone'] }, '^3'] }, ['phone']],
        ['val climbing a scope', { matches: [{ val: [['x'], 'phone'] }, '^3'] }, ['phone']],
        ['exists', { exists: 'dob' }, ['dob']],
        ['a computed name', { matches: [{ var: { cat: ['pho', 'ne'] } }, '^3'] }, ['phone', 'dob', 'contact']],
        ['a computed missing list', { missing: { merge: [['ph' + 'one']] } }, ['phone', 'dob', 'contact']],
        ['the whole record', { matches: [{ get: [{ var: '' }, 'phone'] }, '^3'] }, ['phone', 'dob', 'contact']],
        ['a whole event', { matches: [{ get: [{ var: 'screening_arm_1' }, 'phone'] }, '^3'] }, ['phone', 'dob', 'contact']],
        ['an iterator over the record', { some: [[{ var: '' }], { matches: [{ var: 'phone' }, '^3'] }] }, ['phone', 'dob', 'contact']],
        ['an outer scope from an iterator', { some: [[1], { matches: [{ var: '../phone' }, '^3'] }] }, ['phone']],
        ['the keys of the record', { in: ['phone', { keys: [{ var: '' }] }] }, ['phone', 'dob', 'contact']],
      ];
      for (const [way, logic, fields] of ways) {
        const response = await tool('dry-run', { definition: skill(logic), recordId: 'S1' });
        expect(response.statusCode, `${way}: ${response.body}`).toBe(403);
        expect((response.json() as { details: { fields: string[] } }).details.fields.sort(), way).toEqual([...fields].sort());
      }
      // The rule's own field: its value goes into the finding.
      expectRefused(await tool('dry-run', { definition: skill({ '==': [{ var: 'sex' }, '1'] }, { field: 'phone' }) }), ['phone']);
    });

    it('still tries a coordinator\'s rule that reads no identifier, nor more of a visit than whether it was entered', async () => {
      const response = await tool('dry-run', { definition: skill(SEX_IS_1) });
      expect(response.statusCode, response.body).toBe(200);
      expect((response.json() as SkillDryRunResult).firing.map((f) => f.recordId)).toEqual(['S1']);
      const visit = await tool('dry-run', { definition: skill({ '!': { missing: ['week4_arm_1'] } }, { field: 'week4_arm_1.sbp' }) });
      expect(visit.statusCode, visit.body).toBe(200);
      expect((visit.json() as SkillDryRunResult).firing.map((f) => f.recordId)).toEqual(['S3']);
    });

    it('refuses everyone a rule raising its query on a whole visit, whose value would carry its identifier fields', async () => {
      const onVisit = skill({ '==': [{ var: 'sex' }, '2'] }, { field: 'screening_arm_1' });
      const pi = await tool('dry-run', { definition: onVisit }, 'pi');
      expect(pi.statusCode, pi.body).toBe(422);
      expect(pi.json().message).toContain('raises its query on event "screening_arm_1", not on a field');
      expectRefused(await tool('dry-run', { definition: onVisit }), ['phone', 'dob', 'contact']);
    });

    it('answers the same coordinator once an admin grants identifier access, and the PI always', async () => {
      expect((await grant(true)).statusCode).toBe(200);
      try {
        const one = await tool('dry-run', { definition: skill(PHONE_STARTS_3), recordId: 'S1' });
        expect(one.statusCode, one.body).toBe(200);
        expect(one.json()).toMatchObject({ records: 1, fired: 1 });
        const all = (await tool('dry-run', { definition: skill(BORN_1991) })).json() as SkillDryRunResult;
        expect(all.firing.map((f) => f.recordId)).toEqual(['S1', 'S3']);
      } finally {
        expect((await grant(false)).statusCode).toBe(200);
      }
      expect((await tool('dry-run', { definition: skill(PHONE_STARTS_3), recordId: 'S1' })).statusCode).toBe(403);
      const pi = await tool('dry-run', { definition: skill(PHONE_STARTS_3), recordId: 'S2' }, 'pi');
      expect(pi.statusCode, pi.body).toBe(200);
      expect(pi.json()).toMatchObject({ records: 1, fired: 0 });
      const admin = (await tool('dry-run', { definition: skill(BORN_1991) }, 'admin')).json() as SkillDryRunResult;
      expect(admin.fired).toBe(2);
    });
  });

  describe('writing, changing and activating such a skill', () => {
    it('refuses a coordinator saving it (new skill or draft), and saves nothing', async () => {
      const before = await rowCounts();
      expectRefused(await call('coordinator', 'POST', '/api/iit/skills', { definition: skill(PHONE_STARTS_3, { id: 'coord-phone' }) }), ['phone']);
      expect(await rowCounts()).toEqual(before);
      const own = await call('coordinator', 'POST', '/api/iit/skills', { definition: skill(SEX_IS_1, { id: 'coord-own' }) });
      expect(own.statusCode, own.body).toBe(201);
      expectRefused(await call('coordinator', 'PUT', '/api/iit/skills/coord-own/draft', { definition: skill(BORN_1991, { id: 'coord-own' }) }), ['dob']);
    });

    it("says so when the editor checks such a skill (which computes nothing), and not to the PI", async () => {
      const notesOf = async (who: keyof typeof auth) => {
        const response = await call(who, 'POST', '/api/iit/skills/validate', { definition: skill(PHONE_STARTS_3, { id: 'checked' }) });
        expect(response.statusCode, response.body).toBe(200);
        return (response.json() as { notes: string[] }).notes;
      };
      expect(await notesOf('coordinator')).toEqual([expect.stringMatching(/You cannot save a rule that reads identifier fields of project "oracle" \(phone\)/)]);
      expect(await notesOf('pi')).toEqual([]);
    });

    it("refuses a coordinator activating, changing or removing the PI's rule on an identifier; the PI activates it", async () => {
      const rules = [
        { id: 'phone-format', field: 'sex', logic: { or: [{ missing: ['phone'] }, { matches: [{ var: 'phone' }, '^[0-9]{10}$'] }] }, message: 'Phone is not 10 digits' },
        { id: 'sex-set', field: 'sex', logic: { '!': { missing: ['sex'] } }, message: 'Sex is blank' },
      ];
      const saved = await call('pi', 'POST', '/api/iit/skills', { definition: skill(null, { id: 'pi-checks', rules }) });
      expect(saved.statusCode, saved.body).toBe(201);
      expectRefused(await call('coordinator', 'POST', '/api/iit/skills/pi-checks/activate', {}), ['phone']);
      const activated = await call('pi', 'POST', '/api/iit/skills/pi-checks/activate', {});
      expect(activated.statusCode, activated.body).toBe(200);

      const withoutPhoneRule = skill(null, { id: 'pi-checks', rules: [rules[1]] });
      const weakened = skill(null, { id: 'pi-checks', rules: [{ ...rules[0], logic: { '!': { missing: ['sex'] } } }, rules[1]] });
      for (const definition of [withoutPhoneRule, weakened]) {
        const refused = expectRefused(await call('coordinator', 'PUT', '/api/iit/skills/pi-checks/draft', { definition }), ['phone']);
        expect(refused.message).toContain('phone-format');
        // The impact of the change would evaluate the PI's rule on every record: refused too.
        expectRefused(await tool('impact', { definition }), ['phone']);
      }
      expect((await call('pi', 'PUT', '/api/iit/skills/pi-checks/draft', { definition: withoutPhoneRule })).statusCode).toBe(200);
    });

    it('refuses the impact analysis of a proposed skill reading an identifier, and answers the PI', async () => {
      expectRefused(await tool('impact', { definition: skill(BORN_1991, { id: 'impact-new' }) }), ['dob']);
      const pi = await tool('impact', { definition: skill(BORN_1991, { id: 'impact-new' }) }, 'pi');
      expect(pi.statusCode, pi.body).toBe(200);
      expect(pi.json()).toMatchObject({ isNewSkill: true, records: { affected: 2 } });
    });

    it('refuses the REDCap Data Quality rules import of a rule on an identifier, naming it', async () => {
      const rules = [{ name: 'Phone blank', logic: "[phone] = ''" }, { name: 'Sex blank', logic: "[sex] = ''" }];
      const refused = expectRefused(await tool('import-redcap-rules', { rules, skillId: 'redcap-dq', name: 'REDCap DQ' }), ['phone']);
      expect(refused.message).toContain('import');
      const onlySex = await tool('import-redcap-rules', { rules: [rules[1]], skillId: 'redcap-dq', name: 'REDCap DQ' });
      expect(onlySex.statusCode, onlySex.body).toBe(200);
      const pi = await tool('import-redcap-rules', { rules, skillId: 'redcap-dq', name: 'REDCap DQ' }, 'pi');
      expect(pi.statusCode, pi.body).toBe(200);
      expect(pi.json()).toMatchObject({ imported: 2 });
    });
  });
});
