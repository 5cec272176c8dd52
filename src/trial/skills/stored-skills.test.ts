import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listAudit, PLATFORM_AUDIT_SCOPE } from '../../core/audit/audit-log.js';
import type { Database, Db } from '../../core/db/connect.js';
import { skillVersions, taskRuns } from '../../core/db/schema/trial.js';
import { createLogger } from '../../core/logger.js';
import { createToolRegistry } from '../../core/tools/registry.js';
import { errorOf, rejectionOf } from '../../testing/error-of.js';
import { openTestDatabase, testEngines } from '../../testing/test-database.js';
import { createTrialStore } from '../store/trial-store.js';
import { createTaskRuns } from '../sop/task-runs.js';
import { seedSkills } from './seed-skills.js';
import { createSkillStore } from './skill-store.js';
import { openStoredSkillCatalog, type StoredSkillCatalog } from './stored-skill-catalog.js';
import { withTransaction } from '../../core/db/transaction.js';

const silent = createLogger('silent');

function skillYaml(id: string, maxAge: number, extra = ''): string {
  return `# ${id}: an age check (this comment stays in the stored YAML)
id: ${id}
name: Ages
projects: [p1]
${extra}start_node: hard
nodes:
  hard:
    type: hard_rule
    rules:
      - { id: age-max, field: age, logic: { "<=": [{ var: age }, ${maxAge}] }, message: "Age above ${maxAge}" }
    on_pass: end_ok
    on_fail: end_flagged
`;
}

describe.each(testEngines())('skills stored with versions, on %s', (engine) => {
  let database: Database;
  let db: Db;
  let dir: string;
  const catalogs: StoredSkillCatalog[] = [];
  const open = async () => {
    const catalog = await openStoredSkillCatalog({ db, tools: createToolRegistry(), logger: silent, pollMs: 0 });
    catalogs.push(catalog);
    return catalog;
  };

  beforeAll(async () => {
    database = await openTestDatabase({ engine });
    db = database.db;
    dir = mkdtempSync(path.join(tmpdir(), 'clinagent-stored-skills-'));
    await createTrialStore(db).ensureProject({ id: 'p1', name: 'P1' }, 'test');
  });
  afterAll(async () => {
    for (const catalog of catalogs) catalog.close();
    await database?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('seeds a file once per content: unchanged does nothing, changed becomes the active version by seed:<file>', async () => {
    writeFileSync(path.join(dir, 'ages.yaml'), skillYaml('ages', 75));
    writeFileSync(path.join(dir, 'broken.yaml'), 'id: broken\nname: Broken\nstart_node: x\nnodes: {}\n');
    const first = await seedSkills(db, dir, silent);
    expect(first.seeded).toEqual([{ skillId: 'ages', version: 1 }]);
    expect(first.invalid.map((s) => s.id)).toEqual(['broken']);
    expect((await seedSkills(db, dir, silent)).seeded).toEqual([]);

    writeFileSync(path.join(dir, 'ages.yaml'), skillYaml('ages', 80));
    expect((await seedSkills(db, dir, silent)).seeded).toEqual([{ skillId: 'ages', version: 2 }]);
    const versions = await createSkillStore(db).versions('ages');
    expect(versions.map((v) => ({ version: v.version, status: v.status, by: v.createdBy, activatedBy: v.activatedBy }))).toEqual([
      { version: 2, status: 'active', by: 'seed:ages.yaml', activatedBy: 'seed:ages.yaml' },
      { version: 1, status: 'retired', by: 'seed:ages.yaml', activatedBy: 'seed:ages.yaml' },
    ]);
    const stored = await createSkillStore(db).get('ages', 2);
    expect(stored!.sourceYaml).toContain('# ages: an age check');
    // The author's key order, not the schema's.
    expect(Object.keys(stored!.definition)).toEqual(['id', 'name', 'projects', 'start_node', 'nodes']);
    const audit = await listAudit(db, 'p1', { entityType: 'skill', entityId: 'ages' });
    expect(audit.map((e) => [e.action, e.actor, e.newValue])).toEqual([
      ['seeded', 'seed:ages.yaml', expect.objectContaining({ activeVersion: 1 })],
      ['seeded', 'seed:ages.yaml', expect.objectContaining({ activeVersion: 2 })],
    ]);
  });

  it('seeds a file once when several processes start at the same moment', async () => {
    const concurrent = mkdtempSync(path.join(tmpdir(), 'clinagent-seed-race-'));
    try {
      writeFileSync(path.join(concurrent, 'race.yaml'), skillYaml('race', 70));
      const results = await Promise.all(Array.from({ length: 4 }, () => seedSkills(db, concurrent, silent)));
      expect(results.flatMap((r) => r.seeded)).toEqual([{ skillId: 'race', version: 1 }]);
      expect((await createSkillStore(db).versions('race')).map((v) => [v.version, v.status])).toEqual([[1, 'active']]);
    } finally {
      rmSync(concurrent, { recursive: true, force: true });
    }
  });

  it('keeps a version activated in the database while its file is unchanged', async () => {
    const store = createSkillStore(db);
    const draft = await store.addDraft('ages', { definition: { ...((await store.get('ages', 2))!.definition), name: 'Edited' }, sourceYaml: 'edited', createdBy: 'dm' });
    await withTransaction(db, async (tx) => void (await createSkillStore(tx).activate('ages', draft!.version, 'dm')));
    expect((await seedSkills(db, dir, silent)).seeded).toEqual([]);
    const catalog = await open();
    expect(catalog.get('ages')).toMatchObject({ name: 'Edited', version: 3 });
    expect(catalog.activeInfo('ages')).toMatchObject({ version: 3, updatedBy: 'dm' });
  });

  it('leaves exactly one active version when two versions are activated at once', async () => {
    const store = createSkillStore(db);
    const base = (await store.get('ages', 3))!.definition;
    const a = (await store.addDraft('ages', { definition: { ...base, name: 'A' }, sourceYaml: 'a', createdBy: 'a' }))!;
    const b = (await store.addDraft('ages', { definition: { ...base, name: 'B' }, sourceYaml: 'b', createdBy: 'b' }))!;
    const activate = (version: number, actor: string) => withTransaction(db, async (tx) => createSkillStore(tx).activate('ages', version, actor));
    const results = await Promise.allSettled([activate(a.version, 'a'), activate(b.version, 'b')]);
    expect(results.every((r) => r.status === 'fulfilled')).toBe(true);
    const active = await db.select().from(skillVersions).where(eq(skillVersions.status, 'active'));
    const winner = active.filter((r) => r.skillId === 'ages');
    expect(winner).toHaveLength(1);
    expect([a.version, b.version]).toContain(winner[0]!.version);
    expect(await rejectionOf(activate(99, 'x'))).toMatchObject({ code: 'NOT_FOUND', message: expect.stringContaining('has no version 99') });
    // Which of the two won depends on the lock order; activating the winner again is the conflict (the loser,
    // now retired, may be activated again as a rollback).
    expect(await rejectionOf(activate(winner[0]!.version, 'x'))).toMatchObject({ code: 'CONFLICT_STATE' });
  });

  it('serves a newly activated version after refresh, and a run pinned to an earlier version keeps its rules', async () => {
    const catalog = await open();
    const before = catalog.get('ages');
    const [run] = await createTaskRuns(db, { projectId: 'p1', skillId: 'ages', skillVersion: before.version, startNode: before.startNode, recordIds: ['R1'], actor: 'dm' });
    expect((await db.select({ v: taskRuns.skillVersion }).from(taskRuns).where(eq(taskRuns.id, run!.id)))[0]!.v).toBe(before.version);

    const store = createSkillStore(db);
    const definition = { ...((await store.get('ages', before.version!))!.definition) } as { nodes: { hard: { rules: Array<Record<string, unknown>> } } };
    definition.nodes = { hard: { ...definition.nodes.hard, rules: [{ id: 'age-max', field: 'age', logic: { '<=': [{ var: 'age' }, 60] }, message: 'Age above 60' }] } };
    const next = (await store.addDraft('ages', { definition: definition as unknown as Record<string, unknown>, sourceYaml: 'sixty', createdBy: 'dm' }))!;
    expect(await catalog.refresh()).toBe(false); // a draft serves nothing
    await withTransaction(db, async (tx) => void (await createSkillStore(tx).activate('ages', next.version, 'dm')));

    expect(await catalog.refresh()).toBe(true);
    expect(catalog.get('ages').version).toBe(next.version);
    expect(catalog.get('ages').compiled.hard!.run({ age: 70 })).toHaveLength(1);
    const pinned = catalog.get('ages', before.version);
    expect(pinned.version).toBe(before.version);
    expect(pinned.compiled.hard!.run({ age: 70 })).toHaveLength(0);
    expect(errorOf(() => catalog.get('ages', 999))).toMatchObject({ code: 'NOT_FOUND' });
    expect(errorOf(() => catalog.get('ages', 999)).message).toContain('has no version 999');
  });

  it('lists an invalid seed file as before, and audits a skill for every project in the platform trail', async () => {
    const catalog = await openStoredSkillCatalog({ db, tools: createToolRegistry(), logger: silent, pollMs: 0, invalidFiles: (await seedSkills(db, dir, silent)).invalid });
    catalogs.push(catalog);
    expect(catalog.invalid().map((s) => s.id)).toEqual(['broken']);
    writeFileSync(path.join(dir, 'all.yaml'), skillYaml('for-all', 90).replace('projects: [p1]\n', ''));
    await seedSkills(db, dir, silent);
    expect((await listAudit(db, PLATFORM_AUDIT_SCOPE, { entityType: 'skill', entityId: 'for-all' })).map((e) => e.action)).toEqual(['seeded']);
  });
});
