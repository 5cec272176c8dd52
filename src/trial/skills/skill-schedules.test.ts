import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../core/db/connect.js';
import { buildTestContext } from '../../testing/test-context.js';
import { testEngines } from '../../testing/test-database.js';
import { registerSkillSchedules } from './skill-schedules.js';
import { createSkillStore } from './skill-store.js';
import { withTransaction } from '../../core/db/transaction.js';

const scheduled = (cron?: string) => ({ id: 'nightly', name: 'Nightly', ...(cron ? { schedule: cron } : {}), start_node: 'hard', nodes: { hard: { type: 'hard_rule', rules: [{ id: 'a', field: 'age', logic: { '>=': [{ var: 'age' }, 0] }, message: 'Age' }], on_pass: 'end_ok', on_fail: 'end_flagged' } } });

describe.each(testEngines())('scheduled skills follow activations, on %s', (engine) => {
  let ctx: Awaited<ReturnType<typeof buildTestContext>>;
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'clinagent-skill-schedules-'));
    writeFileSync(path.join(dir, 'nightly.yaml'), 'id: nightly\nname: Nightly\nschedule: "0 2 * * *"\nstart_node: hard\nnodes:\n  hard:\n    type: hard_rule\n    rules:\n      - { id: a, field: age, logic: { ">=": [{ var: age }, 0] }, message: "Age" }\n    on_pass: end_ok\n    on_fail: end_flagged\n');
    ctx = await buildTestContext({ engine, startJobs: true, env: { SKILLS_DIR: dir } });
  });
  afterAll(async () => {
    await ctx?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const activate = async (definition: Record<string, unknown>) => {
    const draft = await createSkillStore(ctx.db).addDraft('nightly', { definition, sourceYaml: '', createdBy: 'admin' });
    await withTransaction(ctx.db, async (tx) => void (await createSkillStore(tx).activate('nightly', draft!.version, 'admin')));
    await ctx.skills.refresh();
  };
  const cronOf = async () => (await ctx.jobs!.schedules()).filter((s) => s.queue === 'qc-cron-nightly').map((s) => s.cron);

  it('registers the seeded cron, re-registers a changed one on activation, and removes a dropped one', async () => {
    await registerSkillSchedules({ db: ctx.db, jobs: ctx.jobs!, catalog: ctx.skills, logger: ctx.logger });
    expect(await cronOf()).toEqual(['0 2 * * *']);
    await activate(scheduled('30 5 * * 1'));
    expect(await cronOf()).toEqual(['30 5 * * 1']);
    await activate(scheduled());
    expect(await cronOf()).toEqual([]);
  });
});
