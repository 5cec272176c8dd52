import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../core/db/connect.js';
import { openTestDatabase, testEngines } from '../../testing/test-database.js';
import { identifierMask } from '../identifiers.js';
import { buildSkillDefinition, type Skill } from '../sop/load-skills.js';
import { createTrialStore, type TrialStore } from '../store/trial-store.js';
import type { TrialRecord } from '../store/types.js';
import { dryRunSkill, MAX_DRY_RUN_FINDINGS } from './dry-run.js';
import { forEachRecordBatch, RECORD_BATCH_SIZE } from './record-batches.js';

/** More subjects than two batches hold, so the last batch is a partial one. */
const SUBJECTS = 2 * RECORD_BATCH_SIZE + 3;

function skillOf(rules: unknown[]): Skill {
  const built = buildSkillDefinition({ id: 'big', name: 'Big', start_node: 'hard', nodes: { hard: { type: 'hard_rule', rules, on_pass: 'end_ok', on_fail: 'end_flagged' } } }, 'test');
  if (!built.definition) throw new Error(built.problems.join('\n'));
  return built.definition;
}

describe.each(testEngines())('dry run over a trial read in batches, on %s', (engine) => {
  let db: Db;
  let store: TrialStore;
  let close: () => Promise<void>;
  let projects = 0;

  beforeAll(async () => {
    const database = await openTestDatabase({ engine });
    db = database.db;
    store = createTrialStore(db);
    close = () => database.close();
  });

  afterAll(async () => {
    await close?.();
  });

  const trialOf = async (subjects: number) => {
    const projectId = `dry-run-${++projects}`;
    await store.ensureProject({ id: projectId, name: projectId }, 'dm.alice');
    // Two visits each; ids padded so their text order is their number order.
    const records: TrialRecord[] = Array.from({ length: subjects }, (_, i) => `S${String(i).padStart(5, '0')}`).flatMap((recordId, i): TrialRecord[] => [
      { recordId, eventName: 'v1_arm_1', site: 'site_a', data: { age: 20 + (i % 60) } },
      { recordId, eventName: 'v2_arm_1', site: 'site_a', data: { sbp: 120 + (i % 50) } },
    ]);
    await store.replaceEvents(projectId, [{ eventName: 'v1_arm_1', label: 'V1', dayOffset: 0, windowBefore: 0, windowAfter: 0 }, { eventName: 'v2_arm_1', label: 'V2', dayOffset: 28, windowBefore: 3, windowAfter: 3 }], 'dm.alice');
    await store.importRecords(projectId, records, { actor: 'dm.alice', reason: 'test' });
    return { projectId, recordIds: records.filter((r) => r.eventName === 'v1_arm_1').map((r) => r.recordId) };
  };

  it('visits every record once, in record-id order, as QC loads it, however the batches fall', async () => {
    const { projectId, recordIds } = await trialOf(7);
    const seen: string[][] = [];
    const visited = await forEachRecordBatch(db, projectId, async (batch) => void seen.push(batch.map((r) => r.recordId)), { batchSize: 3 });
    expect(visited).toBe(7);
    expect(seen).toEqual([recordIds.slice(0, 3), recordIds.slice(3, 6), recordIds.slice(6)]);
    await forEachRecordBatch(db, projectId, async ([record]) => {
      expect(record!.data).toMatchObject({ age: 20, v1_arm_1: { age: 20 }, v2_arm_1: { sbp: 120 } });
    }, { recordId: recordIds[0] });
  });

  it(`counts every finding of a large trial and lists the first ${MAX_DRY_RUN_FINDINGS}`, async () => {
    const { projectId, recordIds } = await trialOf(SUBJECTS);
    // Fires on every subject; the second rule on one subject in five (v2 SBP 160 and over).
    const skill = skillOf([
      { id: 'never', field: 'age', logic: false, message: 'Always flagged' },
      { id: 'sbp-160', field: 'v2_arm_1.sbp', logic: { '<': [{ var: 'v2_arm_1.sbp' }, 160] }, message: 'SBP 160 or over at V2' },
    ]);
    const result = await dryRunSkill(db, { projectId, skill, mask: await identifierMask(db, projectId, undefined) });
    const sbpFindings = recordIds.filter((_, i) => i % 50 >= 40).length;
    expect(result).toMatchObject({ records: SUBJECTS, fired: SUBJECTS + sbpFindings, truncated: true });
    expect(result.recordsFiring).toBe(SUBJECTS);
    expect(result.firing).toHaveLength(MAX_DRY_RUN_FINDINGS);
    expect(result.firing[0]).toMatchObject({ recordId: recordIds[0], eventName: 'v1_arm_1', ruleId: 'never', value: 20, masked: false });
    expect(result.firing.find((f) => f.ruleId === 'sbp-160')).toMatchObject({ recordId: recordIds[40], eventName: 'v2_arm_1', value: 160 });
  });
});
